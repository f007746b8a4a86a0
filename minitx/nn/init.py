"""Weight initializers, under PyTorch's names (``torch.nn.init``). Each fills a tensor in place
from minitx's seeded generator (``minitx.manual_seed``), or from ``generator=`` (a ``minitx.Generator``,
as PyTorch's take a torch.Generator) where one is given, records no graph, and returns it.

A weight has shape [fan_out, fan_in, *kernel] (as Linear and Conv store it), and each fan counts
the kernel too: fan_in = shape[1] * prod(kernel), fan_out = shape[0] * prod(kernel).

    xavier_uniform_:  U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out))
    xavier_normal_:   N(0, std),        std   = gain * sqrt(2 / (fan_in + fan_out))
    kaiming_uniform_: U(-bound, bound), bound = gain * sqrt(3 / fan)
    kaiming_normal_:  N(0, std),        std   = gain / sqrt(fan)

Xavier keeps the variance of activations and of gradients roughly constant across layers
(Glorot & Bengio, 2010); Kaiming keeps that of the activations (fan = fan_in) or of the
gradients (fan = fan_out) through ReLU-like layers (He et al., 2015), with
``gain = calculate_gain(nonlinearity, a)`` making up for what the nonlinearity shrinks.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minitx import backend
from minitx import random as mrandom
from minitx.autograd.inplace import mark_modified
from minitx.backend import to_device
from minitx.ops._args import number
from minitx.ops.special import erfinv_values

# the layers whose output is linear in their input: nothing to make up for
_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None) -> float:
    """The gain an initializer multiplies its std by for ``nonlinearity``, as PyTorch's table:

        linear, conv*d, conv_transpose*d, sigmoid:  1
        tanh:        5/3
        relu:        sqrt(2)                    (relu zeroes half the inputs: half the variance)
        leaky_relu:  sqrt(2 / (1 + param^2))    (param: the negative slope, 0.01 if None)
        selu:        3/4                        (PyTorch's choice, for self-normalizing networks)
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if not isinstance(slope, numbers.Real) or isinstance(slope, bool):
            raise ValueError(f"calculate_gain: the negative slope {param!r} of leaky_relu is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected one of "
                     f"{[*_LINEAR, 'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu']}")


def _fans(t, name):
    """(fan_in, fan_out) of a weight [fan_out, fan_in, *kernel] (see the module's docstring)."""
    if t.ndim < 2:
        raise ValueError(f"{name}: fan in and fan out need a tensor with at least 2 dimensions, got shape {t.shape}")
    receptive = math.prod(t.shape[2:])
    return t.shape[1] * receptive, t.shape[0] * receptive


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight: PyTorch's private name, which code ported from it calls (a bias
    drawn in +-1 / sqrt(fan_in), as Linear's and Conv's own are)."""
    return _fans(tensor, "_calculate_fan_in_and_fan_out")


def _floating(t, name):
    """A TypeError naming ``name`` where t holds integers or bools: the draws of a continuous
    distribution written into them would be truncated (kaiming_uniform_ into int64 gives 0s and
    -1s), so they are refused, as PyTorch refuses them."""
    if not backend.is_floating(t.dtype):
        raise TypeError(f"{name}: needs a floating-point tensor, got dtype {t.dtype}")


def _fan(t, mode, name):
    """fan_in or fan_out of a weight, as ``mode`` ('fan_in' or 'fan_out', any case) says."""
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"{name}: mode {mode!r} not supported; use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _fans(t, name)
    return fan_in if mode.lower() == "fan_in" else fan_out


def _calculate_correct_fan(tensor, mode):
    """fan_in or fan_out of a weight, as mode says: PyTorch's private name, which ported code calls
    (an initializer of its own scaled by 1 / sqrt(fan), as Kaiming's)."""
    return _fan(tensor, mode, "_calculate_correct_fan")


def _kaiming_std(t, a, mode, nonlinearity, name):
    """gain / sqrt(fan): the std of both Kaiming initializers."""
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode, name))


def _write(t, values):
    """Copy ``values`` (an array of t's shape, or a number) into t in place."""
    mark_modified(t)  # a graph that saved the old values must not use them for a gradient
    t.data[...] = to_device(np.asarray(values).astype(t.dtype), t.device)
    return t


def _fill(t, sample, generator=None):
    """Write ``sample(rng)``, drawn on the CPU generator (or ``generator``, a minitx.Generator, where
    one is given): a seed gives the same weights on every device."""
    return _write(t, sample(mrandom.drawing_from(generator, "cpu")))


def _one_of(name, value, torch_name, torch_value, default):
    """A bound given under minitx's name or PyTorch's (``low`` or ``a``), not both."""
    if value is not None and torch_value is not None:
        raise TypeError(f"uniform_: got both {name}= and {torch_name}= (PyTorch's name for it); give one")
    return next((v for v in (value, torch_value) if v is not None), default)


def uniform_(t, low=None, high=None, generator=None, *, a=None, b=None):
    """U(low, high), low = 0 and high = 1 unless given; PyTorch's names ``a=`` and ``b=`` work too."""
    _floating(t, "uniform_")
    low, high = _one_of("low", low, "a", a, 0.0), _one_of("high", high, "b", b, 1.0)
    low, high = number("uniform_", "low", low), number("uniform_", "high", high)
    if not low <= high:  # (NaN too) NumPy would refuse it without saying whose bounds, or draw from [high, low]
        raise ValueError(f"uniform_: expected low <= high, got low={low!r}, high={high!r}")
    return _fill(t, lambda rng: _kept_within(rng.uniform(low, high, t.shape).astype(t.dtype), low, high), generator)


def _kept_within(values, low, high):
    """``values``, float64 draws from [low, high) rounded to a narrower dtype, kept in [low, high):
    a draw just below high rounds to high (one U(0, 1) draw in 500 in bfloat16, one in 4,000 in
    float16), or past it where high has no exact form in the dtype (a Kaiming bound), and likewise
    below low. Those are kept at the dtype's last value inside, as minitx.rand keeps its draws below 1:

        top = the largest value < high,  bottom = the smallest value >= low,  values = clip(values, bottom, top)

    (low == high has no such values: all of them are low, as PyTorch fills them.)"""
    top, bottom = np.asarray(high, values.dtype), np.asarray(low, values.dtype)
    if float(top) >= high:
        top = np.nextafter(top, np.asarray(-np.inf, values.dtype))
    if float(bottom) < low:
        bottom = np.nextafter(bottom, np.asarray(np.inf, values.dtype))
    if bottom <= top:
        np.clip(values, bottom, top, out=values)
    return values


def normal_(t, mean=0.0, std=1.0, generator=None):
    """N(mean, std^2); std must be >= 0 (a NaN std would fill t with NaN, a negative one NumPy
    refuses without saying whose it is; PyTorch refuses both)."""
    mean, std = number("normal_", "mean", mean), number("normal_", "std", std)
    if not std >= 0:
        raise ValueError(f"normal_: std must be >= 0, got {std!r}")
    _floating(t, "normal_")
    return _fill(t, lambda rng: rng.normal(mean, std, t.shape), generator)


def _uniform_with_std(t, std, generator):
    """U(-bound, bound) of standard deviation std: bound = sqrt(3) * std (U(-1, 1) has variance 1/3)."""
    bound = math.sqrt(3.0) * std
    return uniform_(t, -bound, bound, generator=generator)


def _xavier_std(t, gain, name):
    _floating(t, name)
    fan_in, fan_out = _fans(t, name)
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


def xavier_uniform_(t, gain=1.0, generator=None):
    return _uniform_with_std(t, _xavier_std(t, gain, "xavier_uniform_"), generator)


def xavier_normal_(t, gain=1.0, generator=None):
    return normal_(t, 0.0, _xavier_std(t, gain, "xavier_normal_"), generator=generator)


def kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), bound = sqrt(3) * gain / sqrt(fan); ``a`` is leaky_relu's negative slope.
    An empty tensor is left as it is (its fan may be 0), as PyTorch leaves it."""
    _floating(t, "kaiming_uniform_")
    if t.size == 0:
        return t
    return _uniform_with_std(t, _kaiming_std(t, a, mode, nonlinearity, "kaiming_uniform_"), generator)


def kaiming_normal_(t, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, gain / sqrt(fan)); the arguments as kaiming_uniform_'s."""
    _floating(t, "kaiming_normal_")
    if t.size == 0:
        return t
    return normal_(t, 0.0, _kaiming_std(t, a, mode, nonlinearity, "kaiming_normal_"), generator=generator)


def trunc_normal_(t, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std) kept to [a, b], by inverting the CDF, as PyTorch. With the normal CDF
    Phi(x) = (1 + erf(x / sqrt(2))) / 2, so that 2 Phi(x) - 1 = erf(x / sqrt(2)):

        l = Phi((a - mean) / std),  u = Phi((b - mean) / std)
        z ~ U(2l - 1, 2u - 1)
        x = mean + std * sqrt(2) * erfinv(z)     then clipped to [a, b] (rounding can step out)

    Far from mean (l and u both near 0 or 1) z loses its digits: PyTorch warns there, so does this.
    """
    if not std > 0 or not a < b:
        raise ValueError(f"trunc_normal_: expected std > 0 and a < b, got std={std}, a={a}, b={b}")
    _floating(t, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("trunc_normal_: mean is more than 2 std from [a, b]; the values may not follow the "
                      "distribution", stacklevel=2)
    l, u = ((1 + math.erf((x - mean) / (std * math.sqrt(2.0)))) / 2 for x in (a, b))

    def draw(rng):
        z = rng.uniform(2 * l - 1, 2 * u - 1, t.shape)
        return np.clip(mean + std * math.sqrt(2.0) * erfinv_values(z), a, b)

    return _fill(t, draw, generator)


def orthogonal_(t, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix times ``gain`` (Saxe et al., 2014), drawn as PyTorch draws it.
    With rows = t.shape[0] and cols the rest of t's axes flattened:

        A ~ N(0, 1), [rows, cols] (transposed if rows < cols, so that A is tall)
        A = Q R                   Q's columns orthonormal (reduced QR)
        Q = Q * sign(diag(R))     the one Q with diag(R) > 0: uniform over orthogonal matrices
        t = gain * Q              (transposed back): W W^T = gain^2 I if rows <= cols, else W^T W
    """
    if t.ndim < 2:
        raise ValueError(f"orthogonal_: needs a tensor with at least 2 dimensions, got shape {t.shape}")
    _floating(t, "orthogonal_")
    if t.size == 0:
        return t
    rows = t.shape[0]
    cols = t.size // rows

    def draw(rng):
        a = rng.normal(0.0, 1.0, (rows, cols))
        if rows < cols:
            a = a.T
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        return gain * (q.T if rows < cols else q).reshape(t.shape)

    return _fill(t, draw, generator)


def sparse_(t, sparsity, std=0.01, generator=None):
    """A 2-D weight [rows, cols] with ceil(sparsity * rows) zeros in each column, at rows drawn at
    random, and N(0, std^2) entries elsewhere (Martens, 2010: each unit sees a few inputs), as
    PyTorch's. A column's zero rows are the first of a random order of its rows (an argsort of
    uniform draws), all from the one generator: ``generator=`` repeats the zeros too (PyTorch's
    row choice ignores it). sparsity outside [0, 1] is refused (PyTorch zeroes all rows above 1,
    and all but ceil(-sparsity * rows) below 0)."""
    if t.ndim != 2:
        raise ValueError(f"sparse_: needs a 2-D tensor, got shape {t.shape}")
    if not 0 <= sparsity <= 1:
        raise ValueError(f"sparse_: sparsity must be in [0, 1], got {sparsity!r}")
    if not std >= 0:
        raise ValueError(f"sparse_: std must be >= 0, got {std!r}")
    _floating(t, "sparse_")
    rows, cols = t.shape
    zeros = math.ceil(sparsity * rows)

    def draw(rng):
        values = rng.normal(0.0, std, (rows, cols))
        order = np.argsort(rng.random((rows, cols)), axis=0)  # each column's rows in a random order
        np.put_along_axis(values, order[:zeros], 0.0, axis=0)
        return values

    return _fill(t, draw, generator)


def constant_(t, val):
    return _write(t, val)


def zeros_(t):
    return constant_(t, 0)


def ones_(t):
    return constant_(t, 1)


def eye_(t):
    """The identity matrix (ones on the diagonal of a 2-D tensor, of any shape)."""
    if t.ndim != 2:
        raise ValueError(f"eye_: needs a 2-D tensor, got shape {t.shape}")
    return _write(t, np.eye(*t.shape))


def dirac_(t, groups=1):
    """A convolution weight [out, in, *kernel] that passes its input through: within each of
    ``groups``, output channel d takes input channel d at the kernel's centre, for
    d < min(out / groups, in); the other output channels are 0."""
    if t.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: needs a tensor with 3, 4 or 5 dimensions, got shape {t.shape}")
    if not isinstance(groups, int) or groups < 1 or t.shape[0] % groups:
        raise ValueError(f"dirac_: groups={groups!r} must be a positive integer dividing dim 0 ({t.shape[0]})")
    per_group = t.shape[0] // groups
    values = np.zeros(t.shape)
    centre = tuple(k // 2 for k in t.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, t.shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    return _write(t, values)
