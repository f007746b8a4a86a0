"""Activation functions: relu, gelu, tanh, sigmoid, silu, leaky_relu, elu, softplus, logsigmoid,
hardtanh, hardsigmoid, hardswish, hardshrink, softshrink, tanhshrink, rrelu, and softmax and
log_softmax, each in a form that neither overflows nor loses precision for large |x|; and those
composed of them (relu6, selu, celu, softsign, mish, glu, prelu, threshold, softmin,
gumbel_softmax), whose gradients are their parts'. Each gradient is the local derivative times ``dy`` (softmax's is the
Jacobian-vector product, see docs/backprop/softmax.md).

The stable pieces, with e = e^-|x| <= 1 (never overflows):

    sigma(x)     = 1 / (1 + e) for x >= 0,   e / (1 + e) for x < 0   (relatively exact on both sides)
    log(1 + e^x) = max(x, 0) + log1p(e)
    log sigma(x) = -log(1 + e^-x) = min(x, 0) - log1p(e)

NaN inputs give NaN outputs; where PyTorch's backward tests "x <= 0" (elu) or "x outside the
bounds" (hardtanh) the same tests are used here, so NaN gets the same gradient as in PyTorch.

Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

import math

import numpy as np

from minitx import kernels
from minitx import random as mrandom
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import flag, floating, in_place_function, number, takes_inplace
from minitx.ops.elementwise import expm1, where
from minitx.ops.reduction import check_nonempty_axes, logsumexp_parts, normalize_axes
from minitx.ops.shape import split
from minitx.ops.special import _erf_numpy

__all__ = ["Relu", "Gelu", "Tanh", "Sigmoid", "Silu", "LeakyRelu", "Elu", "Softplus", "LogSigmoid", "Hardtanh", "Softmax",
           "LogSoftmax", "Hardsigmoid", "Hardswish", "Hardshrink", "Softshrink", "Tanhshrink", "Rrelu"]


def relu_values(x):
    """max(x, 0) elementwise: x * (x > 0) would give -inf * 0 = NaN at x = -inf. maximum keeps
    a NaN a NaN, as PyTorch does (and -0 may stay -0, as in PyTorch); it is one vectorised
    pass, where where() branches on every element (ten times slower on NumPy when the signs
    are random)."""
    return get_array_module(x).maximum(x, x.dtype.type(0))


def relu_derivative(x):
    """1 where x > 0, else 0 (the subgradient 0 is taken at x = 0); 1 at NaN, as PyTorch passes dy there."""
    return (~(x <= 0)).astype(x.dtype)


class Relu(Function):
    """y = max(x, 0).   dx = dy where x > 0, else 0 (the subgradient 0 is taken at x = 0)

    A NaN gives y = NaN and passes dy, as in PyTorch.

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        self.save_for_backward(~(x <= 0))
        return relu_values(x)

    def backward(self, dy):
        (positive,) = self.saved
        return (dy * positive,)


@takes_inplace
def relu(x): return Relu()(as_tensor(x))


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


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


class Gelu(Function):
    """Gaussian error linear unit, y = x * Phi(x), Phi the standard normal CDF.

    exact ("none"):  Phi(x) = (1 + erf(x / sqrt 2)) / 2,   dx = dy * (Phi(x) + x * phi(x)),
                     phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    "tanh":          y = x/2 * (1 + tanh u),  u = sqrt(2/pi) * (x + 0.044715 x^3)
                     dx = dy * (1/2 (1 + tanh u) + x/2 * (1 - tanh^2 u) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2))

    Derivation: docs/backprop/activations.md
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


def gelu(x, approximate: str = "none"):
    """GELU; approximate='tanh' for the tanh formula (GPT/BERT), 'none' for the exact erf form."""
    return Gelu(approximate)(floating(x))


class Tanh(Function):
    """y = tanh x.   dx = dy * (1 - y^2)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        y = get_array_module(x).tanh(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (1 - y * y),)


def tanh(x): return Tanh()(floating(x))


def sigmoid_values(x):
    """sigma(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, e = e^-|x|: no overflow, and
    sigma(-50) = 1.9e-22 keeps its digits (the tanh form (1 + tanh(x/2)) / 2 rounds it to 0)."""
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


class Sigmoid(Function):
    """y = 1 / (1 + e^-x).   dx = dy * y * (1 - y)

    Computed by ``sigmoid_values``, which never overflows and keeps the digits of tiny values
    (sigmoid(-50) = 1.9e-22 in float64, where the tanh form gives 0).

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        y = sigmoid_values(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * y * (1 - y),)


def sigmoid(x): return Sigmoid()(floating(x))


def softplus_values(x):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|)."""
    xp = get_array_module(x)
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class Silu(Function):
    """SiLU (swish): y = x * sigma(x).   dx = dy * (sigma(x) + x * sigma(x) * (1 - sigma(x)))

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        s = sigmoid_values(x)
        self.save_for_backward(x, s)
        return x * s

    def backward(self, dy):
        x, s = self.saved
        return (dy * (s + x * s * (1 - s)),)


@takes_inplace
def silu(x): return Silu()(floating(x))


class LeakyRelu(Function):
    """y = x for x > 0, a * x otherwise (a = negative_slope).   dx = dy for x > 0, a * dy otherwise
    (the slope a is taken at x = 0, as in PyTorch)

    Derivation: docs/backprop/activations.md
    """

    def __init__(self, negative_slope=0.01):
        self.slope = negative_slope

    def forward(self, x):
        positive = x > 0
        self.save_for_backward(positive)
        return get_array_module(x).where(positive, x, self.slope * x)

    def backward(self, dy):
        (positive,) = self.saved
        return (get_array_module(dy).where(positive, dy, self.slope * dy),)


@takes_inplace
def leaky_relu(x, negative_slope=0.01):
    """x, its negative part scaled by negative_slope; integers compute in float32 (PyTorch refuses them)."""
    return LeakyRelu(number("leaky_relu", "negative_slope", negative_slope))(floating(x))


class Rrelu(Function):
    """Randomized leaky ReLU while training: y = x for x > 0, a * x elsewhere, with a slope a
    drawn per element uniformly from [lower, upper] (x = 0 draws one too, as PyTorch's).
    dx = dy for x > 0, a * dy elsewhere: the drawn slopes, saved as one array with 1 where x > 0
    (and at a NaN, which is not <= 0: it passes dy, as PyTorch's).

    The slopes come from minitx's seeded generator (``minitx.manual_seed``; on a GPU its Philox
    pairs, minitx.random.uniform), or from ``seed`` when given. Outside training rrelu is leaky_relu with the mean slope (lower + upper) / 2.

    Derivation: docs/backprop/activations.md
    """

    def __init__(self, lower, upper, seed=None):
        self.lower, self.upper, self.seed = lower, upper, seed

    def forward(self, x):
        u = mrandom.uniform(x.shape, x.dtype, device_of(x), self.seed)
        drawn = (self.lower + (self.upper - self.lower) * u).astype(x.dtype, copy=False)
        slope = get_array_module(x).where(x <= 0, drawn, x.dtype.type(1))
        self.save_for_backward(slope)
        return x * slope

    def backward(self, dy):
        (slope,) = self.saved
        return (dy * slope,)


@takes_inplace
def rrelu(x, lower=1 / 8, upper=1 / 3, training=False, seed=None):
    """Randomized leaky ReLU (Xu et al. 2015): while training, x's negative part scaled by a slope
    drawn per element from U[lower, upper] (see Rrelu); otherwise by the mean slope
    (lower + upper) / 2, leaky_relu. ``training`` is False by default, as in PyTorch's F.rrelu."""
    lower, upper = number("rrelu", "lower", lower), number("rrelu", "upper", upper)
    if not lower <= upper:
        raise ValueError(f"rrelu: lower must be at most upper, got lower={lower} and upper={upper}")
    x = floating(x)
    if not flag("rrelu", "training", training):
        return leaky_relu(x, (lower + upper) / 2)
    return Rrelu(lower, upper, seed)(x)


class Elu(Function):
    """y = x for x > 0, alpha * (e^x - 1) otherwise (e^x - 1 as expm1: exact near 0).

    dx = dy for x > 0, dy * alpha * e^x otherwise (not dy * (y + alpha): y + alpha cancels to 0
    below about x = -37.4, where alpha * e^x is still a float64 number)

    Derivation: docs/backprop/activations.md
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


@takes_inplace
def elu(x, alpha=1.0): return Elu(number("elu", "alpha", alpha))(floating(x))


class Softplus(Function):
    """y = log(1 + e^(beta x)) / beta, and y = x where beta * x > threshold (as PyTorch: there
    the two differ by less than e^-threshold / beta).

    With u = beta * x:   y = (max(u, 0) + log1p(e^-|u|)) / beta
    dx = dy * sigma(u) where u <= threshold, dy where u > threshold

    Derivation: docs/backprop/activations.md
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


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, computed without overflow; x itself where beta * x > threshold."""
    return Softplus(number("softplus", "beta", beta), number("softplus", "threshold", threshold))(floating(x))


class LogSigmoid(Function):
    """y = log sigma(x) = min(x, 0) - log1p(e^-|x|).   dx = dy * (1 - sigma(x)) = dy * sigma(-x)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, dy):
        (x,) = self.saved
        return (dy * sigmoid_values(-x),)


def logsigmoid(x): return LogSigmoid()(floating(x))


class Hardtanh(Function):
    """y = min(max(x, min_val), max_val).   dx = 0 where x <= min_val or x >= max_val, else dy
    (0 at the bounds themselves, as PyTorch; Clip passes dy there). A NaN x is on neither side of
    a bound, so it passes dy: PyTorch's CPU kernel gives dy or 0 there depending on the NaN's position.

    Derivation: docs/backprop/activations.md
    """

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


@takes_inplace
def hardtanh(x, min_val=-1.0, max_val=1.0):
    """x limited to [min_val, max_val]; integers compute in float32, as in every op on real numbers
    (PyTorch keeps int64 here; minitx's clip keeps integers with integer bounds)."""
    return Hardtanh(number("hardtanh", "min_val", min_val), number("hardtanh", "max_val", max_val))(floating(x))


def _normalized_axes(op, x, axis):
    """softmax's and log_softmax's axis, checked: in range (a 0-d x takes 0 or -1) and not empty."""
    axes = normalize_axes(axis, x.ndim, op)
    check_nonempty_axes(op, x, axes, "a distribution over no classes is not defined")
    return axes


class Softmax(Function):
    """y_i = exp(x_i) / sum_j exp(x_j) along ``axis`` (computed with max(x) subtracted).

    backward:  dx_i = y_i * (dy_i - sum_j dy_j * y_j)
    (from dy_i/dx_j = y_i * (delta_ij - y_j)). A row that is all -inf gives all zeros.

    Derivation: docs/backprop/softmax.md
    Kernel: minitx/kernels/softmax.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True  # dx: the kernel's output, or y times a new difference

    def __init__(self, axis=-1):
        self.axis = axis

    def _fused(self, *arrays):
        """The kernel works on rows of the last axis."""
        ndim = arrays[0].ndim
        return ndim > 0 and self.axis in (-1, ndim - 1) and kernels.enabled(*arrays)

    def forward(self, x):
        self.axes = _normalized_axes(self.name, x, self.axis)
        if self._fused(x):
            y = kernels.softmax_forward(x)
        else:
            e, total, _, _ = logsumexp_parts(x, self.axes)
            y = e / get_array_module(x).where(total == 0, 1, total)  # total NaN: y NaN
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        if self._fused(y, dy):
            return (kernels.softmax_backward(y, dy),)
        return (y * (dy - (dy * y).sum(axis=self.axes, keepdims=True)),)


@takes_torch_keywords
def softmax(x, axis=-1): return Softmax(axis)(floating(x))


class LogSoftmax(Function):
    """y_i = x_i - log sum_j exp(x_j) along ``axis``, computed as (x_i - m) - log sum_j exp(x_j - m),
    m = max(x): subtracting m first keeps float32 precision when |x| is large.

    backward:  dx_i = dy_i - softmax(x)_i * sum_j dy_j,   softmax(x) = exp(y)
    A row that is all -inf gives all -inf (log of the all-zero softmax).

    Derivation: docs/backprop/softmax.md
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True  # dx: a new difference

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        self.axes = _normalized_axes(self.name, x, self.axis)
        _, total, m, log_total = logsumexp_parts(x, self.axes)
        # a row that is all -inf (fully masked) stays -inf instead of becoming -inf - (-inf) = NaN
        with np.errstate(invalid="ignore"):
            y = xp.where(total == 0, -xp.inf, (x - m) - log_total)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        xp = get_array_module(y)
        return (dy - xp.exp(y) * dy.sum(axis=self.axes, keepdims=True),)


@takes_torch_keywords
def log_softmax(x, axis=-1): return LogSoftmax(axis)(floating(x))



# ---------------------------------------------------------------- the hard and composed activations
class Hardsigmoid(Function):
    """y = min(max(x + 3, 0), 6) / 6: 0 below -3, 1 above 3, a line between.
    dx = dy / 6 for -3 < x < 3, 0 elsewhere (at the kinks too, as PyTorch)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward((x > -3) & (x < 3))
        return xp.clip(x + 3, 0, 6) / 6

    def backward(self, dy):
        (inside,) = self.saved
        return (dy * inside / 6,)


@takes_inplace
def hardsigmoid(x): return Hardsigmoid()(floating(x))


class Hardswish(Function):
    """y = x * hardsigmoid(x): 0 below -3, x above 3, x (x + 3) / 6 between.
    dx = 0 for x <= -3, dy for x >= 3, dy (2x + 3) / 6 between (at the kinks, where the two
    sides' slopes differ, the outer side's, as PyTorch)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        return x * xp.clip(x + 3, 0, 6) / 6

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        # (the tests in PyTorch's order: a NaN x is neither <= -3 nor < 3, and passes dy, as there)
        return (xp.where(x <= -3, 0, xp.where(x < 3, dy * (2 * x + 3) / 6, dy)).astype(dy.dtype, copy=False),)


@takes_inplace
def hardswish(x): return Hardswish()(floating(x))


class _Shrink(Function):
    """The shrinks' lambd and backward: dx = dy outside the band -lambd <= x <= lambd, 0 inside it
    (0 at +-lambd themselves, as PyTorch). A NaN is inside no band: it stays NaN and passes dy
    (PyTorch's CPU kernels give dy or 0 there, by the NaN's position in the array, as for hardtanh).
    """

    def __init__(self, lambd=0.5):
        if not lambd >= 0:  # (NaN too)
            raise ValueError(f"{self.name}: lambd must be >= 0, got {lambd}")
        self.lambd = lambd

    def _inside(self, x):
        """Where -lambd <= x <= lambd, the band the shrinks zero (its bounds included); saves the
        rest, where backward passes dy."""
        inside = (x >= -self.lambd) & (x <= self.lambd)
        self.save_for_backward(~inside)
        return inside

    def backward(self, dy):
        (outside,) = self.saved
        return (dy * outside,)


class Hardshrink(_Shrink):
    """y = x where |x| > lambd, 0 where -lambd <= x <= lambd.
    dx = dy outside the band, 0 inside it (see _Shrink)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        return get_array_module(x).where(self._inside(x), x.dtype.type(0), x)


def hardshrink(x, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return Hardshrink(number("hardshrink", "lambd", lambd))(floating(x))


class Softshrink(_Shrink):
    """y = x - lambd for x > lambd, x + lambd for x < -lambd, 0 between: y = x - clip(x, -lambd, lambd)
    dx = dy outside the band, 0 inside it (see _Shrink)

    Inside the band y is 0 * x, a zero of x's sign as PyTorch's.

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        xp = get_array_module(x)
        return xp.where(self._inside(x), 0 * x, x - xp.clip(x, -self.lambd, self.lambd))


def softshrink(x, lambd=0.5):
    """x moved lambd towards 0, and 0 where |x| <= lambd (soft thresholding, the proximal step of
    lambd * |x|)."""
    return Softshrink(number("softshrink", "lambd", lambd))(floating(x))


class Tanhshrink(Function):
    """y = x - tanh x.   dx = dy * (1 - (1 - tanh^2 x)) = dy * tanh^2 x

    (tanh^2 x itself: 1 - tanh'(x) would round to 0 for small x, where tanh^2 x ~ x^2 is not.)

    Derivation: docs/backprop/activations.md
    """

    def forward(self, x):
        t = get_array_module(x).tanh(x)
        self.save_for_backward(t)
        return x - t

    def backward(self, dy):
        (t,) = self.saved
        return (dy * (t * t),)


def tanhshrink(x): return Tanhshrink()(floating(x))


@takes_inplace
def relu6(x):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as PyTorch's."""
    return hardtanh(x, 0.0, 6.0)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@takes_inplace
def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants of Klambauer et al. 2017."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@takes_inplace
def celu(x, alpha=1.0):
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1)): for alpha > 0, alpha * elu(x / alpha), elu
    whose slope at 0 is 1 from both sides whatever alpha; a negative alpha (PyTorch takes one)
    follows the formula as written."""
    alpha = number("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides x)")
    x = floating(x)
    if alpha > 0:
        return alpha * elu(x / alpha)
    # x above 0, alpha (e^(x / alpha) - 1) at and below (slope 1 at 0, as PyTorch's); the inner
    # where keeps the branch not taken finite, so its zero gradient stays 0, not 0 * inf
    positive = x > 0
    return where(positive, x, alpha * expm1(where(positive, 0.0, x) / alpha))


def softsign(x):
    """x / (1 + |x|): a tanh-like curve approaching +-1 polynomially."""
    x = floating(x)
    return x / (1 + abs(x))


@takes_inplace
def mish(x):
    """x * tanh(softplus(x)) (Misra 2019)."""
    x = floating(x)
    return x * tanh(softplus(x))


@takes_torch_keywords
def glu(x, axis=-1):
    """a * sigmoid(b), with a and b the two halves of x along ``axis`` (its length must be even):
    the gated linear unit."""
    x = floating(x)
    n = x.shape[normalize_axes(axis, x.ndim, "glu")[0]] if x.ndim else 0
    if x.ndim == 0 or n % 2:
        raise ValueError(f"glu: the axis {axis} of x {x.shape} must have an even length (it is halved)")
    a, b = split(x, 2, axis)
    return a * sigmoid(b)


def prelu(x, weight):
    """x where x > 0, weight * x elsewhere, weight learned: one value, or one per channel (axis 1
    of x, PyTorch's layout)."""
    x, weight = floating(x), as_tensor(weight)
    if weight.size == 1:
        weight = weight.reshape(())  # (a 0-d x stays 0-d)
    else:
        if x.ndim < 2 or x.shape[1] != weight.size:
            raise ValueError(f"prelu: weight of {weight.size} values needs one per channel (axis 1) of x, got x "
                             f"of shape {x.shape}")
        weight = weight.reshape((weight.size,) + (1,) * (x.ndim - 2))
    return where(x > 0, x, weight * x)


@takes_inplace
def threshold(x, threshold, value):  # noqa: A002 (PyTorch's name)
    """x where x > threshold, ``value`` elsewhere (no gradient there); a NaN stays NaN, as PyTorch's."""
    x = floating(x)
    return where(x <= number("threshold", "threshold", threshold), value, x)


@takes_torch_keywords
def softmin(x, axis=-1):
    """softmax(-x) along ``axis``: the smallest entries weigh most."""
    x = floating(x)
    _normalized_axes("softmin", x, axis)   # (a bad axis named softmin, not the softmax it calls)
    return softmax(-x, axis)


@takes_torch_keywords
def gumbel_softmax(logits, tau=1.0, hard=False, axis=-1, seed=None):
    """A sample of the Gumbel-softmax (concrete) distribution (Jang et al. 2017; Maddison et al. 2017):

        y_soft = softmax((logits + g) / tau)  along ``axis``,   g_i = -log E_i,  E_i ~ Exponential(1)

    composed of minitx's ops, so its gradient is softmax's (the noise g is a constant). With
    ``hard=True`` the forward is the one-hot of y_soft's argmax and the backward y_soft's, the
    straight-through estimator as PyTorch writes it: y_hard - y_soft.detach() + y_soft.
    E = -log(1 - U), U drawn from minitx's seeded generator (minitx.random.uniform: on a GPU its
    Philox pairs, which a checkpoint resumes; or from ``seed`` when given), is kept
    at least the dtype's tiny (U = 0 would make g infinite). PyTorch's ``eps`` (deprecated, unused
    there) is not taken; tau must be positive (PyTorch gives NaN at 0)."""
    tau = number("gumbel_softmax", "tau", tau)
    if not tau > 0:
        raise ValueError(f"gumbel_softmax: tau must be positive, got {tau}")
    logits = floating(logits)
    _normalized_axes("gumbel_softmax", logits, axis)   # (before a draw, and named)
    xp = get_array_module(logits.data)
    u = mrandom.uniform(logits.shape, logits.dtype, logits.device, seed)
    e = xp.maximum(-xp.log1p(-u), xp.finfo(u.dtype).tiny)
    y_soft = softmax((logits + Tensor((-xp.log(e)).astype(logits.dtype, copy=False))) / tau, axis)
    if not hard:
        return y_soft
    soft = y_soft.data.reshape(y_soft.shape or (1,))  # (a 0-d sample: of one class)
    along = normalize_axes(axis, soft.ndim, "gumbel_softmax")[0]
    classes = xp.arange(soft.shape[along]).reshape((-1,) + (1,) * (soft.ndim - 1 - along))
    one_hot = (classes == xp.argmax(soft, axis=along, keepdims=True)).astype(soft.dtype)
    y_hard = Tensor(one_hot.reshape(y_soft.shape))
    return y_hard - y_soft.detach() + y_soft


# PyTorch's F.relu_(x) ...: F.relu(x, inplace=True), the result written into x
relu_, elu_, leaky_relu_, hardtanh_, threshold_, celu_, selu_, rrelu_ = (
    in_place_function(op) for op in (relu, elu, leaky_relu, hardtanh, threshold, celu, selu, rrelu))
