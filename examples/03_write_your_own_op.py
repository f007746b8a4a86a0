"""Step 3: write your own differentiable op, and test it the way minitx tests its own.

    python examples/03_write_your_own_op.py

An op is a ``minitx.Function`` with a ``forward`` and a ``backward`` on raw arrays. forward
keeps what backward needs (``save_for_backward``); backward receives dy = dL/dy and returns
dL/dx. Softplus, a smooth ReLU:

    y = log(1 + exp(x))            computed as max(x, 0) + log(1 + exp(-|x|)), which never overflows
    dy/dx = exp(x) / (1 + exp(x)) = sigmoid(x),    so   dx = dy * sigmoid(x)

``gradcheck`` compares backward with finite differences (in float64); ``check_backward_hygiene``
checks that backward leaves its inputs, saved arrays and dy alone.
"""
import numpy as np

import minitx
import minitx.functional as F
from minitx.backend import get_array_module
from minitx.testing import check_backward_hygiene, gradcheck


class Softplus(minitx.Function):
    """y = log(1 + exp(x)).   dx = dy * sigmoid(x)"""

    def forward(self, x):
        xp = get_array_module(x)  # numpy on the CPU, cupy on the GPU: the same code runs on both
        self.save_for_backward(x)
        return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        return (dy / (1 + xp.exp(-x)),)


def softplus(x):
    return Softplus()(x)  # a new instance per call: it keeps that call's saved arrays


def show(values):
    return "  ".join(f"{v:9.4g}" for v in values)


x = minitx.tensor([-1000.0, -10.0, 0.0, 10.0, 1000.0], dtype="float64", requires_grad=True)
y = softplus(x)
with np.errstate(over="ignore"):
    naive = np.log(1 + np.exp(x.numpy()))  # exp overflows past x = 709.78 (float64's max is 1.8e308)
print("x                    ", show(x.numpy()))
print("softplus(x)          ", show(y.numpy()))
print("naive log(1 + exp(x))", show(naive), "  (exp(1000) is inf)")
assert np.isinf(naive[-1]) and y.numpy()[-1] == 1000.0 and y.numpy()[0] == 0.0
y.sum().backward()
print("gradient             ", show(x.grad.numpy()), "  = sigmoid(x)")

small = minitx.tensor(np.random.default_rng(0).normal(size=(3, 4)), dtype="float64", requires_grad=True)
print("gradcheck against finite differences:", gradcheck(softplus, small))
print("backward leaves its inputs alone:   ", check_backward_hygiene(softplus, small))
# composed with built-in ops, the engine chains it like any other op
print("gradcheck of tanh(softplus(x) @ x^T):",
      gradcheck(lambda t: F.tanh(softplus(t) @ t.T), small))
