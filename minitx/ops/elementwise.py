"""Elementwise ops. Each gradient is the local derivative times the incoming gradient ``dy``.

Binary ops broadcast like numpy; the engine sums their gradients back to each input's shape.
"""
from __future__ import annotations

import math

import numpy as np

from minitx.autograd.function import Function
from minitx.backend import device_of, get_array_module, to_device

__all__ = [
    "Add", "Sub", "Mul", "Div", "Neg", "Pow", "PowScalar", "Exp", "Log", "Sqrt", "Tanh",
    "Sigmoid", "Relu", "Gelu", "Abs", "Maximum", "Minimum", "Clip", "Where", "MaskedFill",
    "Astype", "ToDevice",
]


class Add(Function):
    """y = a + b.   da = dy,  db = dy"""

    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        return dy, dy


class Sub(Function):
    """y = a - b.   da = dy,  db = -dy"""

    def forward(self, a, b):
        return a - b

    def backward(self, dy):
        return dy, -dy


class Mul(Function):
    """y = a * b.   da = dy * b,  db = dy * a"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, dy):
        a, b = self.saved
        return (dy * b if self.needs_input_grad[0] else None,
                dy * a if self.needs_input_grad[1] else None)


class Div(Function):
    """y = a / b.   da = dy / b,  db = -dy * a / b^2 = -dy * y / b"""

    def forward(self, a, b):
        y = a / b
        self.save_for_backward(b, y)
        return y

    def backward(self, dy):
        b, y = self.saved
        da = dy / b
        return da, (-da * y if self.needs_input_grad[1] else None)


class Neg(Function):
    """y = -x.   dx = -dy"""

    def forward(self, x):
        return -x

    def backward(self, dy):
        return (-dy,)


class PowScalar(Function):
    """y = x^p for a constant number p.   dx = dy * p * x^(p-1)"""

    def __init__(self, p):
        self.p = p

    def forward(self, x):
        self.save_for_backward(x)
        return x ** self.p

    def backward(self, dy):
        (x,) = self.saved
        if self.p == 0:
            return (dy * 0,)
        return (dy * self.p * x ** (self.p - 1),)


class Pow(Function):
    """y = a^b for tensors a and b (a > 0 where b needs a gradient: ln a is NaN below 0).

    da = dy * b * a^(b-1)        db = dy * y * ln(a)

    At the edges the limits PyTorch takes: da = 0 where b = 0 (y = 1 for every a, even
    where a^(b-1) = 0^-1 = inf), and db = 0 where a = 0 and b >= 0 (y = 0^b is 0 or 1 on
    that side; ln 0 = -inf would give 0 * -inf = NaN). For a = 0, b < 0 both are infinite.
    """

    def forward(self, a, b):
        y = a ** b
        self.save_for_backward(a, b, y)
        return y

    def backward(self, dy):
        a, b, y = self.saved
        xp = get_array_module(a)
        da = db = None
        with np.errstate(divide="ignore", invalid="ignore"):  # the edges are replaced just below
            if self.needs_input_grad[0]:
                da = xp.where(b == 0, 0, dy * b * a ** (b - 1)).astype(dy.dtype, copy=False)
            if self.needs_input_grad[1]:
                db = xp.where((a == 0) & (b >= 0), 0, dy * y * xp.log(a)).astype(dy.dtype, copy=False)
        return da, db


class Exp(Function):
    """y = e^x.   dx = dy * y"""

    def forward(self, x):
        y = get_array_module(x).exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * y,)


class Log(Function):
    """y = ln x.   dx = dy / x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / x,)


class Sqrt(Function):
    """y = sqrt(x).   dx = dy / (2 y)"""

    def forward(self, x):
        y = get_array_module(x).sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy / (2 * y),)


class Tanh(Function):
    """y = tanh x.   dx = dy * (1 - y^2)"""

    def forward(self, x):
        y = get_array_module(x).tanh(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (1 - y * y),)


class Sigmoid(Function):
    """y = 1 / (1 + e^-x).   dx = dy * y * (1 - y)

    Computed as (1 + tanh(x/2)) / 2, which never overflows for large |x|.
    """

    def forward(self, x):
        y = 0.5 * (1 + get_array_module(x).tanh(0.5 * x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * y * (1 - y),)


def relu_values(x):
    """max(x, 0), written with where: x * (x > 0) would give -inf * 0 = NaN at x = -inf. The test
    is x <= 0, so a NaN stays NaN (as in PyTorch) instead of becoming 0."""
    return get_array_module(x).where(x <= 0, 0, x).astype(x.dtype, copy=False)


def relu_derivative(x):
    """1 where x > 0, else 0 (the subgradient 0 is taken at x = 0); 1 at NaN, as PyTorch passes dy there."""
    return (~(x <= 0)).astype(x.dtype)


class Relu(Function):
    """y = max(x, 0).   dx = dy where x > 0, else 0 (the subgradient 0 is taken at x = 0)

    A NaN gives y = NaN and passes dy, as in PyTorch.
    """

    def forward(self, x):
        self.save_for_backward(~(x <= 0))
        return relu_values(x)

    def backward(self, dy):
        (positive,) = self.saved
        return (dy * positive,)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


class Gelu(Function):
    """Gaussian error linear unit, y = x * Phi(x), Phi the standard normal CDF.

    exact ("none"):  Phi(x) = (1 + erf(x / sqrt 2)) / 2,   dx = dy * (Phi(x) + x * phi(x)),
                     phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    "tanh":          y = x/2 * (1 + tanh u),  u = sqrt(2/pi) * (x + 0.044715 x^3)
                     dx = dy * (1/2 (1 + tanh u) + x/2 * (1 - tanh^2 u) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2))
    """

    def __init__(self, approximate: str = "none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        self.save_for_backward(x)
        if self.approximate == "tanh":
            return gelu_tanh(x)
        return x * _normal_cdf(x)

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        if self.approximate == "tanh":
            return (dy * gelu_tanh_derivative(x),)
        pdf = xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return (dy * (_normal_cdf(x) + x * pdf),)


def gelu_tanh(x):
    """x/2 * (1 + tanh u),  u = sqrt(2/pi) * (x + 0.044715 x^3)  (shared with BiasActDropout)."""
    # x * x * x, not x ** 3: numpy's power is about 40x slower than two products
    t = get_array_module(x).tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    return 0.5 * x * (1 + t)


def gelu_tanh_derivative(x):
    """d gelu_tanh / dx = 1/2 (1 + tanh u) + x/2 * (1 - tanh^2 u) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2)."""
    t = get_array_module(x).tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    du = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du


def _normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2."""
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return 0.5 * (1 + special.erf(x / math.sqrt(2)))
    return 0.5 * (1 + _erf_numpy(x / math.sqrt(2)))


def _erf_numpy(z):
    """erf on numpy arrays through math.erf (numpy has none). Exact but a Python call per
    element: on the CPU the "tanh" approximation is the fast choice for big activations."""
    return np.vectorize(math.erf, otypes=[z.dtype])(z) if z.size else z.copy()


class Abs(Function):
    """y = |x|.   dx = dy * sign(x) (0 at x = 0)"""

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(xp.sign(x))
        return xp.abs(x)

    def backward(self, dy):
        (sign,) = self.saved
        return (dy * sign,)


class Maximum(Function):
    """y = max(a, b) elementwise.   The gradient goes to the larger input; on a tie
    (a == b) it is shared equally, dy/2 to each, so the two parts still add up to dy."""

    def forward(self, a, b):
        xp = get_array_module(a)
        self.save_for_backward(a, b)
        return xp.maximum(a, b)

    def backward(self, dy):
        a, b = self.saved
        share_a = (a > b) + 0.5 * (a == b)
        return dy * share_a, dy * (1 - share_a)


class Minimum(Function):
    """y = min(a, b) elementwise.   As Maximum: the smaller input takes dy; ties share it."""

    def forward(self, a, b):
        xp = get_array_module(a)
        self.save_for_backward(a, b)
        return xp.minimum(a, b)

    def backward(self, dy):
        a, b = self.saved
        share_a = (a < b) + 0.5 * (a == b)
        return dy * share_a, dy * (1 - share_a)


class Clip(Function):
    """y = min(max(x, low), high).   dx = dy where low <= x <= high, else 0

    With low > high every y is high, as NumPy (and PyTorch) define it, and dx = 0.
    """

    def __init__(self, low=None, high=None):
        if low is None and high is None:
            raise ValueError("clip: give at least one of min and max")
        self.low, self.high = low, high

    def forward(self, x):
        xp = get_array_module(x)
        inside = xp.ones(x.shape, dtype=bool)
        if self.low is not None:
            inside &= x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        self.save_for_backward(inside)
        return xp.clip(x, self.low, self.high)

    def backward(self, dy):
        (inside,) = self.saved
        return (dy * inside,)


class Where(Function):
    """y = a where cond else b (cond a boolean tensor, broadcast).
    da = dy where cond else 0,   db = dy where not cond else 0,   no gradient for cond"""

    def forward(self, cond, a, b):
        self.save_for_backward(cond)
        return get_array_module(a).where(cond, a, b)

    def backward(self, dy):
        (cond,) = self.saved
        return None, dy * cond, dy * ~cond


class MaskedFill(Function):
    """y = value where mask else x (mask True marks the entries to overwrite).
    dx = dy where not mask else 0"""

    def __init__(self, value):
        self.value = value

    def forward(self, x, mask):
        xp = get_array_module(x)
        self.save_for_backward(mask)
        return xp.where(mask, xp.asarray(self.value, dtype=x.dtype), x)

    def backward(self, dy):
        (mask,) = self.saved
        return dy * ~mask, None


class Astype(Function):
    """y = x converted to another dtype.   dx = dy converted back to x's dtype"""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.source_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, dy):
        if self.source_dtype.kind != "f":
            return (None,)
        return (dy.astype(self.source_dtype),)


class ToDevice(Function):
    """y = x copied to another device ("cpu" or "cuda").   dx = dy copied back"""

    def __init__(self, device):
        self.device = device

    def forward(self, x):
        self.source_device = device_of(x)
        return to_device(x, self.device)

    def backward(self, dy):
        return (to_device(dy, self.source_device),)
