"""Step 2: tensors, broadcasting, and what backward does with them.

    python examples/02_tensors_and_broadcasting.py

A layer y = relu(x @ W + b) on a batch of 4 rows. b has shape (2,) but is added to every row of
the (4, 2) product: numpy *broadcasts* it. Each element of b is used 4 times, so its gradient
is the sum of the 4 row gradients. The engine does that sum (``unbroadcast``) for every op,
so no op has to. We check every gradient against NumPy by hand, then print the backward trace:
each op, the gradient dy it received and the gradients it returned, in the engine's order.

    z = x @ W + b,  y = relu(z),  L = sum(y * t)
    dL/dz = t * (z > 0)
    dL/dW = x^T @ dL/dz,   dL/db = sum over rows of dL/dz,   dL/dx = dL/dz @ W^T
"""
import numpy as np

import minitx
import minitx.functional as F
from minitx.autograd.debug import trace_backward

rng = np.random.default_rng(0)
x = minitx.tensor(rng.normal(size=(4, 3)), requires_grad=True)
W = minitx.tensor(rng.normal(size=(3, 2)), requires_grad=True)
b = minitx.tensor([0.1, -0.2], requires_grad=True)
t = minitx.tensor(rng.normal(size=(4, 2)))  # a constant: no gradient flows to it

with trace_backward() as trace:
    z = x @ W + b
    L = (F.relu(z) * t).sum()
    L.backward()

dz = t.numpy() * (z.numpy() > 0)
for name, tensor, by_hand in [("W", W, x.numpy().T @ dz), ("b", b, dz.sum(axis=0)), ("x", x, dz @ W.numpy().T)]:
    np.testing.assert_allclose(tensor.grad.numpy(), by_hand, rtol=1e-5, atol=1e-6)
    print(f"d L/d {name}: shape {tensor.grad.shape} like {name} {tensor.shape}, equal to the NumPy formula")
print(f"t.grad is {t.grad}: t does not require a gradient\n")
print(trace)
print("\nThe 'add' row received dy of shape (4, 2) and returned two (4, 2) gradients; the engine then\n"
      "summed the second over the rows to get b's (2,) gradient.")
