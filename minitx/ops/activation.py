"""Activation functions beyond relu/gelu/sigmoid/tanh, each in a form that neither overflows
nor loses precision for large |x|. Each gradient is the local derivative times ``dy``.

The stable pieces, with e = e^-|x| <= 1 (never overflows):

    sigma(x)     = 1 / (1 + e) for x >= 0,   e / (1 + e) for x < 0   (relatively exact on both sides)
    log(1 + e^x) = max(x, 0) + log1p(e)
    log sigma(x) = -log(1 + e^-x) = min(x, 0) - log1p(e)

NaN inputs give NaN outputs; where PyTorch's backward tests "x <= 0" (elu) or "x outside the
bounds" (hardtanh) the same tests are used here, so NaN gets the same gradient as in PyTorch.
"""
from __future__ import annotations

from minitx.autograd.function import Function
from minitx.backend import get_array_module

__all__ = ["Silu", "LeakyRelu", "Elu", "Softplus", "LogSigmoid", "Hardtanh"]


def sigmoid_values(x):
    """sigma(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, e = e^-|x|: no overflow, and
    sigma(-50) = 1.9e-22 keeps its digits (the tanh form (1 + tanh(x/2)) / 2 rounds it to 0)."""
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def softplus_values(x):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|)."""
    xp = get_array_module(x)
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class Silu(Function):
    """SiLU (swish): y = x * sigma(x).   dx = dy * (sigma(x) + x * sigma(x) * (1 - sigma(x)))"""

    def forward(self, x):
        s = sigmoid_values(x)
        self.save_for_backward(x, s)
        return x * s

    def backward(self, dy):
        x, s = self.saved
        return (dy * (s + x * s * (1 - s)),)


class LeakyRelu(Function):
    """y = x for x > 0, a * x otherwise (a = negative_slope).   dx = dy for x > 0, a * dy otherwise
    (the slope a is taken at x = 0, as in PyTorch)"""

    def __init__(self, negative_slope=0.01):
        self.slope = negative_slope

    def forward(self, x):
        positive = x > 0
        self.save_for_backward(positive)
        return get_array_module(x).where(positive, x, self.slope * x)

    def backward(self, dy):
        (positive,) = self.saved
        return (get_array_module(dy).where(positive, dy, self.slope * dy),)


class Elu(Function):
    """y = x for x > 0, alpha * (e^x - 1) otherwise (e^x - 1 as expm1: exact near 0).

    dx = dy for x > 0, dy * alpha * e^x otherwise (not dy * (y + alpha): y + alpha cancels to 0
    for x < -37, where alpha * e^x is still a float64 number)
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def forward(self, x):
        xp = get_array_module(x)
        negative = x <= 0
        self.save_for_backward(x, negative)
        # expm1 of min(x, 0): the unused branch of where never overflows
        return xp.where(negative, self.alpha * xp.expm1(xp.minimum(x, 0)), x)

    def backward(self, dy):
        x, negative = self.saved
        xp = get_array_module(dy)
        return (xp.where(negative, dy * self.alpha * xp.exp(xp.minimum(x, 0)), dy),)


class Softplus(Function):
    """y = log(1 + e^(beta x)) / beta, and y = x where beta * x > threshold (as PyTorch: there
    the two differ by less than e^-threshold / beta).

    With u = beta * x:   y = (max(u, 0) + log1p(e^-|u|)) / beta
    dx = dy * sigma(u) where u <= threshold, dy where u > threshold
    """

    def __init__(self, beta=1.0, threshold=20.0):
        if beta <= 0:
            raise ValueError(f"softplus: beta must be positive, got {beta}")
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        xp = get_array_module(x)
        u = self.beta * x
        linear = u > self.threshold
        self.save_for_backward(u, linear)
        return xp.where(linear, x, softplus_values(u) / self.beta)

    def backward(self, dy):
        u, linear = self.saved
        return (get_array_module(dy).where(linear, dy, dy * sigmoid_values(u)),)


class LogSigmoid(Function):
    """y = log sigma(x) = min(x, 0) - log1p(e^-|x|).   dx = dy * (1 - sigma(x)) = dy * sigma(-x)"""

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, dy):
        (x,) = self.saved
        return (dy * sigmoid_values(-x),)


class Hardtanh(Function):
    """y = min(max(x, min_val), max_val).   dx = dy where min_val < x < max_val, else 0
    (0 at the bounds themselves, as PyTorch; Clip passes dy there)"""

    def __init__(self, min_val=-1.0, max_val=1.0):
        if min_val > max_val:
            raise ValueError(f"hardtanh: min_val {min_val} is greater than max_val {max_val}")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x):
        self.save_for_backward((x <= self.min_val) | (x >= self.max_val))
        return get_array_module(x).clip(x, self.min_val, self.max_val)

    def backward(self, dy):
        (outside,) = self.saved
        return (dy * ~outside,)
