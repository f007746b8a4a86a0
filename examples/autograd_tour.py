"""A tour of minitx's autograd in a few seconds: gradients by hand, by backward, by finite differences.

    python examples/autograd_tour.py
"""
import numpy as np

import minitx
import minitx.functional as F
from minitx.testing import gradcheck

# 1. A small expression and its gradient.
x = minitx.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
w = minitx.tensor([0.3, -0.7], requires_grad=True)
y = F.tanh(x @ w).sum()          # y = sum_i tanh(sum_j x_ij w_j)
y.backward()

# The same gradient by hand: dy/dx_ij = (1 - tanh(z_i)^2) * w_j, z = x @ w.
z = x.numpy() @ w.numpy()
by_hand = (1 - np.tanh(z) ** 2)[:, None] * w.numpy()[None, :]
print("backward:", np.round(x.grad.numpy().astype(float), 4).tolist())
print("by hand: ", np.round(by_hand.astype(float), 4).tolist())

# 2. The graph that backward walked, newest op first.
from minitx.autograd import topological_order

print("graph:", " <- ".join(t._ctx.name for t in topological_order(y) if t._ctx is not None))

# 3. gradcheck compares backward with central finite differences in float64.
a = minitx.tensor(np.random.default_rng(0).normal(size=(3, 5)), dtype="float64", requires_grad=True)
print("softmax gradcheck:", gradcheck(lambda t: F.softmax(t, axis=-1) * t, a))

# 4. A hand-written op: the backward is one formula next to the forward.
class Cube(minitx.Function):
    """y = x^3.   dx = dy * 3 x^2"""

    def forward(self, x):
        self.save_for_backward(x)
        return x ** 3

    def backward(self, dy):
        (x,) = self.saved
        return (dy * 3 * x ** 2,)


print("Cube gradcheck:", gradcheck(lambda t: Cube()(t), a))
