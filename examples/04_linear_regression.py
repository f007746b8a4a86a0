"""Step 4: fit a line by gradient descent, first by hand, then with an optimizer.

    python examples/04_linear_regression.py

Data: y = 3 x - 1 + noise. The model y_hat = w x + b; the loss is the mean squared error

    L = mean((w x + b - y)^2),   dL/dw = mean(2 (y_hat - y) x),   dL/db = mean(2 (y_hat - y))

A step moves each parameter against its gradient: w <- w - lr * dL/dw. We write that update by
hand (under no_grad: an update is not part of the model), then let ``optim.SGD`` do the same,
and compare both with the exact least-squares answer.
"""
import os

import numpy as np

import minitx
from minitx import optim

STEPS = 40 if os.environ.get("MINITX_EXAMPLES_FAST") == "1" else 100
rng = np.random.default_rng(0)
xs = rng.uniform(-1, 1, 100)
ys = 3 * xs - 1 + 0.1 * rng.normal(size=100)
x, y = minitx.tensor(xs), minitx.tensor(ys)

# 1. by hand
w = minitx.tensor(0.0, requires_grad=True)
b = minitx.tensor(0.0, requires_grad=True)
lr = 0.3
for step in range(STEPS):
    loss = ((w * x + b - y) ** 2).mean()
    w.grad = b.grad = None  # gradients accumulate: clear them first
    loss.backward()
    with minitx.no_grad():
        w.data -= lr * w.grad.data  # backward has released the graph: writing in place is safe
        b.data -= lr * b.grad.data
    if step % (STEPS // 5) == 0:
        print(f"step {step:3d}  loss {loss.item():.5f}  w {w.item():+.4f}  b {b.item():+.4f}")

# 2. the same with an optimizer (it does the zeroing and the update)
w2 = minitx.tensor(0.0, requires_grad=True)
b2 = minitx.tensor(0.0, requires_grad=True)
opt = optim.SGD([w2, b2], lr=lr)
for step in range(STEPS):
    loss = ((w2 * x + b2 - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

exact_w, exact_b = np.linalg.lstsq(np.stack([xs, np.ones_like(xs)], axis=1), ys, rcond=None)[0]
print(f"\nby hand:   w {w.item():+.4f}  b {b.item():+.4f}")
print(f"optim.SGD: w {w2.item():+.4f}  b {b2.item():+.4f}")
print(f"exact:     w {exact_w:+.4f}  b {exact_b:+.4f}   (least squares; the data came from w = 3, b = -1)")
assert abs(w.item() - w2.item()) < 1e-5 and abs(w.item() - exact_w) < 0.05
