"""Step 1 of the ladder (docs/learn.md): autograd on plain numbers.

    python examples/01_scalar_autograd.py

Three numbers, three ops. backward() applies the chain rule from the output back to the
inputs; we check its answer against the derivative worked out by hand and against finite
differences, and print the graph it walked.

    c = a * b,   d = c + a^2,   f = tanh(d)
    df/dd = 1 - tanh(d)^2
    df/da = df/dd * (b + 2a)      (a reaches d twice: through c and through a^2)
    df/db = df/dd * a
"""
import math

import minitx
import minitx.functional as F
from minitx.autograd.graph import to_tree


def f_of(a, b):
    return math.tanh(a * b + a ** 2)


a = minitx.tensor(0.5, dtype="float64", requires_grad=True)
b = minitx.tensor(-0.3, dtype="float64", requires_grad=True)
c = a * b
d = c + a ** 2
f = F.tanh(d)
f.backward()  # fills a.grad and b.grad: they are leaves that require a gradient

print("the graph backward walked (the output on top, each op under the tensor it made):")
print(to_tree(f, names={"a": a, "b": b, "c": c, "d": d, "f": f}))

A, B = a.item(), b.item()
dfdd = 1 - math.tanh(A * B + A ** 2) ** 2
eps = 1e-6
rows = [("df/da", a.grad.item(), dfdd * (B + 2 * A), (f_of(A + eps, B) - f_of(A - eps, B)) / (2 * eps)),
        ("df/db", b.grad.item(), dfdd * A, (f_of(A, B + eps) - f_of(A, B - eps)) / (2 * eps))]
print(f"\n{'':6s} {'backward':>12s} {'by hand':>12s} {'finite diff':>12s}")
for name, autograd, by_hand, numeric in rows:
    print(f"{name:6s} {autograd:12.8f} {by_hand:12.8f} {numeric:12.8f}")
    assert abs(autograd - by_hand) < 1e-12 and abs(autograd - numeric) < 1e-8

# Gradients add up across backward calls until you reset them (optimizers do it with zero_grad).
F.tanh(a * b + a ** 2).backward()
print(f"\nafter a second backward a.grad = {a.grad.item():.8f} (twice the first: gradients accumulate)")
