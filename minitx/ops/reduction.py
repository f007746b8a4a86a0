"""Reductions over axes: sum, mean, max, min, var, std, logsumexp, prod, norm; argmax and argmin;
composed of them: var_mean, std_mean, aminmax, nansum, nanmean and sum_to_size. Each backward spreads ``dy`` back over the reduced axes.

Helper: ``expand(dy)`` puts the reduced axes back (size 1) when keepdims was False, so
``dy`` broadcasts against the input. Products never divide by x (so zeros need no special
case): the gradient of a product is the product of the OTHER factors, built from prefix and
suffix products.

This module defines the ops ``sum``, ``max`` and ``min``: Python's own are ``builtins.max`` here.
"""
from __future__ import annotations

import builtins
import contextlib
import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np
from numpy.exceptions import AxisError

from minitx import interop
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor, lengths
from minitx.backend import get_array_module, is_floating
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import accumulate, floating
from minitx.ops.elementwise import div, isnan, logical_not, where

__all__ = ["Sum", "Mean", "Max", "Min", "Var", "Std", "LogSumExp", "Prod", "Norm"]


def normalize_axes(axis, ndim: int, op: str = "reduce") -> tuple:
    """axis None -> all axes; an int or tuple -> sorted non-negative axes (checked; a bool is no axis, as
    PyTorch's rule: sum(x, True) would sum axis 1). An axis out of range raises numpy's AxisError, which
    is a ValueError and an IndexError both, as NumPy's."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            pairwise = {"max": "maximum", "min": "minimum"}.get(op)
            hint = (f"; {op}(x, axis) reduces x, and {pairwise}(a, b) compares two tensors entry by entry"
                    if pairwise and hasattr(a, "shape") else "")
            raise TypeError(f"{op}: axis {a!r} is not an integer{hint}")
        a = int(a)
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):  # a 0-d tensor takes axis 0 or -1, as in PyTorch
            raise AxisError(f"{op}: axis {a} is out of range for a tensor with {ndim} dimensions")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {axis}")
    if ndim == 0:
        return ()  # axis 0 or -1 of a 0-d tensor: nothing to reduce (numpy would reject the axis)
    return tuple(sorted(out))


def check_nonempty_axes(op, x, axes, why):
    """Raise ValueError naming op when one of ``axes`` (normalized) of x has length 0."""
    empty = [a for a in axes if x.shape[a] == 0]
    if empty:
        raise ValueError(f"{op}: axis {empty[0]} of the input of shape {tuple(x.shape)} has length 0; "
                         f"expected at least one entry ({why})")


def logsumexp_parts(x, axis):
    """The stable pieces of every softmax-like op (softmax, log_softmax, logsumexp,
    cross-entropy, attention), along ``axis`` (an int or a tuple):

        m = max x,   e = exp(x - m),   total = sum e,   log sum exp(x) = m + log(total)

    Subtracting m keeps exp from overflowing (every e <= 1, the largest is 1). Where m is
    -inf it is taken as 0 instead, so an all -inf slice (a fully masked row) has total 0 and
    log(total) = -inf, quietly, rather than exp(-inf - (-inf)) = NaN. A NaN in x makes m NaN,
    and with it e, total and log_total of the whole slice: NaN in, NaN out, never hidden; so
    does a +inf (e = exp(inf - inf) = NaN there), as PyTorch's softmax and the CUDA kernels
    give it (logsumexp itself answers +inf there, as PyTorch's: LogSumExp).
    Callers test ``total == 0`` (False for NaN) for the masked case, not ``total > 0``.
    Returns (e, total, m, log_total); all but e keep the reduced axes (size 1). Callers add
    m + log_total themselves: log_softmax needs (x - m) - log_total, which keeps the small
    log_total exact when |m| is large.
    """
    xp = get_array_module(x)
    # no entries: m = 0 (a sum of nothing), so total = 0 and log_total = -inf, the log of an empty sum
    m = x.max(axis=axis, keepdims=True) if x.size else x.sum(axis=axis, keepdims=True)
    m = xp.where(m == -xp.inf, 0, m)  # not isfinite: a NaN max must stay NaN
    e = xp.asarray(x - m)  # (a 0-d x makes a NumPy scalar)
    e = xp.exp(e, out=e if is_floating(e.dtype) else None)  # in place where it can: one array the size of x
    total = e.sum(axis=axis, keepdims=True)
    masked = total == 0
    log_total = xp.where(masked, -xp.inf, xp.log(xp.where(masked, 1, total)))
    return e, total, m, log_total


class _Reduction(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis, self.keepdims = axis, keepdims

    def _setup(self, x):
        self.axes = normalize_axes(self.axis, x.ndim, self.name)
        self.in_shape = x.shape
        return self.axes

    def expand(self, dy):
        """dy with the reduced axes restored as size-1 axes."""
        if self.keepdims or not self.axes:
            return dy
        return get_array_module(dy).expand_dims(dy, self.axes)


class Sum(_Reduction):
    """y = sum of x over axes.   dx = dy, repeated along the summed axes

    Derivation: docs/backprop/reductions.md
    """

    def forward(self, x):
        return accumulate(x.sum, x.dtype, axis=self._setup(x), keepdims=self.keepdims)

    def backward(self, dy):
        xp = get_array_module(dy)
        return (xp.broadcast_to(self.expand(dy), self.in_shape),)


@takes_torch_keywords
def sum(x, axis=None, keepdims=False): return Sum(axis, keepdims)(as_tensor(x))  # noqa: A001


class Mean(_Reduction):
    """y = (1/n) sum of x over axes (n = number of elements reduced).   dx = dy / n, repeated

    Over no entries (n = 0) y is 0 / 0 = NaN, as in NumPy and PyTorch, and x has no gradient to take.

    Derivation: docs/backprop/reductions.md
    """

    def forward(self, x):
        axes = self._setup(x)
        self.count = 1
        for a in axes:
            self.count *= x.shape[a]
        if not self.count:  # 0 / 0: the NaN is the answer, without NumPy's warnings about an empty slice
            with quiet_float_errors(get_array_module(x)):
                return x.sum(axis=axes, keepdims=self.keepdims) / self.count
        return x.mean(axis=axes, keepdims=self.keepdims)

    def backward(self, dy):
        xp = get_array_module(dy)
        if not self.count:  # x is empty: so is dx, and dy / 0 is never needed
            return (xp.zeros(self.in_shape, dtype=dy.dtype),)
        return (xp.broadcast_to(self.expand(dy) / self.count, self.in_shape),)


@takes_torch_keywords
def mean(x, axis=None, keepdims=False): return Mean(axis, keepdims)(floating(x))


class Max(_Reduction):
    """y = max of x over axes.

    dx = dy at the position of the maximum, 0 elsewhere. When several entries tie for the
    maximum, they share dy equally (each gets dy / number of ties), so the gradient still
    sums to dy and does not depend on which tie numpy would pick.

    Derivation: docs/backprop/max-and-ties.md
    """

    _pick = "max"

    def forward(self, x):
        axes = self._setup(x)
        check_nonempty_axes(self.name, x, axes, f"a {self._pick} has no value over no entries")
        y = getattr(x, self._pick)(axis=axes, keepdims=True)
        winners = (x == y).astype(x.dtype)
        self.save_for_backward(winners / winners.sum(axis=axes, keepdims=True))
        return y if self.keepdims else y.squeeze(axis=axes)

    def backward(self, dy):
        (share,) = self.saved
        return (self.expand(dy) * share,)


@takes_torch_keywords
def max(x, axis=None, keepdims=False): return Max(axis, keepdims)(as_tensor(x))  # noqa: A001


class Min(Max):
    """y = min of x over axes.   As Max: the minimum takes dy; ties share it equally."""

    _pick = "min"


@takes_torch_keywords
def min(x, axis=None, keepdims=False): return Min(axis, keepdims)(as_tensor(x))  # noqa: A001


class Var(_Reduction):
    """v = sum((x - mean)^2) / (n - ddof) over axes.   dx = dy * 2 (x - mean) / (n - ddof)

    With n - ddof <= 0 there are no degrees of freedom left: as NumPy, the divisor is taken
    as 0 (so v is inf, or NaN where all values are equal) and a RuntimeWarning says why.

    Derivation: docs/backprop/reductions.md
    """

    def __init__(self, axis=None, ddof=0, keepdims=False):
        super().__init__(axis, keepdims)
        self.ddof = ddof

    def forward(self, x):
        axes = self._setup(x)
        n = 1
        for a in axes:
            n *= x.shape[a]
        if n - self.ddof <= 0:
            warnings.warn(f"var: {n} elements with ddof={self.ddof} leave no degrees of freedom; "
                          "the result is inf or NaN, as in NumPy", RuntimeWarning,
                          stacklevel=interop._user_stacklevel())
        self.divisor = builtins.max(n - self.ddof, 0)
        if self.computed_in is not None:  # 16-bit x, as std's: squares past float32's range, in float64
            x = x.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # warned above
            centered = x - x.mean(axis=axes, keepdims=True) if n else x
            self.save_for_backward(centered)
            return (centered * centered).sum(axis=axes, keepdims=self.keepdims) / self.divisor

    def backward(self, dy):
        (centered,) = self.saved
        with np.errstate(divide="ignore", invalid="ignore"):
            return ((self.expand(dy) * (2 / self.divisor if self.divisor else np.inf) * centered).astype(dy.dtype,
                                                                                                   copy=False),)


@takes_torch_keywords
def var(x, axis=None, ddof=0, keepdims=False): return Var(axis, ddof, keepdims)(floating(x))


class Std(_Reduction):
    """s = sqrt(v), v = sum((x - mean)^2) / (n - ddof) over axes (ddof=0 by default, as NumPy;
    PyTorch's default is ddof=1).

    ds/dx = dv/dx / (2 s), dv/dx = 2 (x - mean) / (n - ddof), so
    dx = dy * (x - mean) / ((n - ddof) * s), and 0 where s = 0 (as PyTorch: a constant slice
    has no direction to move in; its x - mean is set to exactly 0, not left to rounding).
    With n - ddof <= 0 the divisor is taken as 0, as in NumPy and var: s is inf, or NaN where all
    values are equal, with a RuntimeWarning.

    Derivation: docs/backprop/reductions.md
    """

    def __init__(self, axis=None, ddof=0, keepdims=False):
        super().__init__(axis, keepdims)
        self.ddof = ddof

    def forward(self, x):
        xp = get_array_module(x)
        axes = self._setup(x)
        n = 1
        for a in axes:
            n *= x.shape[a]
        self.divisor = builtins.max(n - self.ddof, 0)
        if self.divisor == 0:
            warnings.warn(f"std: {n} elements with ddof={self.ddof} leave no degrees of freedom; the result is "
                          "inf or NaN, as in NumPy", RuntimeWarning,
                          stacklevel=interop._user_stacklevel())
        if self.computed_in is not None:  # float16 or bfloat16 x, here in float32: bfloat16 spans float32's
            x = x.astype(np.float64)  # range, where a sum or square overflows though the spread fits (PyTorch: float64)
        centered = x - x.mean(axis=axes, keepdims=True) if n else x
        if n:  # a constant slice: its mean may round off x, but its spread is exactly 0 (not of infinities: NaN)
            high = x.max(axis=axes, keepdims=True)
            centered = xp.where((high == x.min(axis=axes, keepdims=True)) & xp.isfinite(high), 0, centered)
        with quiet_float_errors(xp):  # divisor 0: NaN, as announced
            s = xp.sqrt((centered * centered).sum(axis=axes, keepdims=True) / self.divisor)
        self.save_for_backward(centered, s)
        return s if self.keepdims else s.squeeze(axis=axes)

    def backward(self, dy):
        centered, s = self.saved
        xp = get_array_module(dy)
        with quiet_float_errors(xp):
            scale = xp.where(s == 0, 0, 1 / (self.divisor * xp.where(s == 0, 1, s)))
        return ((self.expand(dy) * scale * centered).astype(dy.dtype, copy=False),)


@takes_torch_keywords
def std(x, axis=None, ddof=0, keepdims=False): return Std(axis, ddof, keepdims)(floating(x))


def _checked_statistic_axis(op, axis, ndim):
    """axis for var_mean and std_mean (``op``) of a tensor of ``ndim`` axes, checked by name here,
    before var or std would name themselves: a bool is refused (PyTorch's var_mean(x, unbiased)
    would read as axis 1 here)."""
    if isinstance(axis, bool) or (isinstance(axis, (tuple, list)) and builtins.any(isinstance(a, bool) for a in axis)):
        raise TypeError(f"{op}: axis must be an integer, a tuple of them or None, got {axis!r} (PyTorch's "
                        f"{op}(x, unbiased) is written {op}(x, unbiased=...) or correction=)")
    normalize_axes(axis, ndim, op)
    return axis


@takes_torch_keywords
def var_mean(x, axis=None, ddof=1, keepdims=False):
    """PyTorch's var_mean: the pair (var(x, axis, ddof, keepdims), mean(x, axis, keepdims)), var and
    mean composed. ddof (PyTorch's correction=, or unbiased=True for 1, False for 0) is 1 by default,
    PyTorch's, where var's is NumPy's 0: the name is PyTorch's, and so is its answer (docs/ops.md)."""
    x = floating(x)
    axis = _checked_statistic_axis("var_mean", axis, x.ndim)
    return var(x, axis, ddof, keepdims), mean(x, axis, keepdims)


@takes_torch_keywords
def std_mean(x, axis=None, ddof=1, keepdims=False):
    """PyTorch's std_mean: the pair (std(x, axis, ddof, keepdims), mean(x, axis, keepdims)), std and
    mean composed, with PyTorch's default ddof (correction=) of 1, as var_mean's."""
    x = floating(x)
    axis = _checked_statistic_axis("std_mean", axis, x.ndim)
    return std(x, axis, ddof, keepdims), mean(x, axis, keepdims)


class LogSumExp(_Reduction):
    """y = log sum exp(x) over axes, computed as m + log sum exp(x - m), m = max x; y = +inf
    where m is (the sum is infinite; the parts say NaN there, as softmax must).

    dx = dy * exp(x - y) = dy * softmax(x) over the axes

    Derivation: docs/backprop/softmax.md
    """

    def forward(self, x):
        axes = self._setup(x)
        _, _, m, log_total = logsumexp_parts(x, axes)
        y = get_array_module(x).where(m == float("inf"), m, m + log_total)
        self.save_for_backward(x, y)
        return y if self.keepdims else y.squeeze(axis=axes)

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        # an all -inf slice has y = -inf: its softmax is taken as 0 there (not exp(-inf + inf) = NaN);
        # a NaN y keeps the gradient NaN (y keeps the reduced axes)
        return (self.expand(dy) * xp.exp(x - xp.where(y == -xp.inf, 0, y)),)


@takes_torch_keywords
def logsumexp(x, axis=None, keepdims=False): return LogSumExp(axis, keepdims)(floating(x))


def quiet_float_errors(xp):
    """Silence NumPy's divide/invalid warnings where a NaN or inf is the documented answer."""
    return xp.errstate(divide="ignore", invalid="ignore") if hasattr(xp, "errstate") else contextlib.nullcontext()


def _exclusive_products(x, xp):
    """Along the last axis: left[k] = prod_{j<k} x_j, right[k] = prod_{j>k} x_j (1 when empty)."""
    if x.shape[-1] == 0:  # an empty product: no factors, no gradients
        return x, x
    ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    left = xp.concatenate([ones, xp.cumprod(x[..., :-1], axis=-1)], axis=-1)
    right = xp.concatenate([xp.cumprod(x[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    return left, right


class Prod(_Reduction):
    """y = product of x over axes.

    dx_i = dy * prod_{j != i} x_j = dy * left_i * right_i, with left_i and right_i the products of
    the factors before and after x_i (the reduced axes taken as one row-major axis). No division
    by x_i, so zeros are exact: one zero gives a gradient only at the zero (the product of the
    others); two or more zeros give all zeros.

    Derivation: docs/backprop/reductions.md
    """

    def forward(self, x):
        axes = self._setup(x)
        self.save_for_backward(x)
        return accumulate(x.prod, x.dtype, axis=axes, keepdims=self.keepdims)

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        kept = [a for a in range(x.ndim) if a not in self.axes]
        moved = xp.transpose(x, kept + list(self.axes))  # reduced axes last ...
        length = math.prod(moved.shape[len(kept):])  # ... flattened into one (not -1: NumPy cannot infer it beside a 0)
        rows = moved.reshape(moved.shape[:len(kept)] + (length,))
        left, right = _exclusive_products(rows, xp)
        others = (left * right).reshape(moved.shape)
        inverse = [0] * x.ndim
        for i, a in enumerate(kept + list(self.axes)):
            inverse[a] = i
        return (self.expand(dy) * others.transpose(inverse),)


@takes_torch_keywords
def prod(x, axis=None, keepdims=False): return Prod(axis, keepdims)(as_tensor(x))


def _norm_scale(magnitude, axes, count, p):
    """s for y = s (sum (|x| / s)^p)^(1/p): 1 (so y is computed as written, bit for bit) unless the slice's
    largest |x|, m, is so small that m^p underflows past the dtype's normal numbers, or so large that the
    sum of its count of m^p overflows; there s is the power of 2 just above m (frexp's: dividing by it changes
    exponents only, exactly), as LAPACK's nrm2 scales, so no power leaves the range: ||(1e-200, 1e-200)||_2
    = 1.4e-200, not 0, and ||(1e200, 1e200)||_2 = 1.4e200, not inf. (0, inf and NaN slices keep s = 1:
    their norms are 0, inf and NaN as written.) count: the entries of a slice."""
    if count == 0:
        return 1.0   # (no entries: no largest, and a norm of 0)
    xp = get_array_module(magnitude)
    info = np.finfo(magnitude.dtype)
    m = magnitude.max(axis=axes, keepdims=True)
    with quiet_float_errors(xp):
        power = m ** p
        extreme = (power < info.tiny) | (power > float(info.max) / count)
    power_of_two = xp.ldexp(xp.ones((), magnitude.dtype), xp.frexp(m)[1])
    return xp.where(extreme & (m > 0) & xp.isfinite(m), power_of_two, xp.ones((), magnitude.dtype))


class Norm(_Reduction):
    """y = ||x||_p over axes (PyTorch's vector_norm): (sum |x|^p)^(1/p) for p > 0, the largest |x|
    for p = inf, the smallest for p = -inf, the number of nonzero entries for p = 0. A slice whose
    |x|^p would underflow or overflow is scaled by a power of 2 near its largest |x| first (_norm_scale), where
    PyTorch's norm is 0 or inf; over one entry y is |x| itself.

        p = 2:           dx = dy * x / y
        0 < p < inf:     dx = dy * sign(x) * (|x| / y)^(p-1)
        p = +-inf:       dx = dy * sign(x) where |x| = y, 0 elsewhere (ties share dy equally, as max)
        p = 0:           dx = 0 (a count)

    Where y = 0 (x is all zeros) the formulas give 0 / 0: dx = 0 there, a subgradient, as
    PyTorch's. For p < 1, |x|^(p-1) is infinite at a zero entry: that entry gets 0, as in PyTorch.
    A NaN entry makes every entry's dx NaN, and an infinite one its own (inf / inf), as PyTorch's.

    Derivation: docs/backprop/reductions.md
    """

    def __init__(self, p=2, axis=None, keepdims=False, op="norm"):
        super().__init__(axis, keepdims)
        self.p, self.op = p, op

    @property
    def name(self) -> str:
        return self.op  # the function called, in its messages: norm, or vector_norm (minitx.linalg)

    def forward(self, x):
        axes, p, xp = self._setup(x), self.p, get_array_module(x)
        magnitude = xp.abs(x)
        count = math.prod(x.shape[a] for a in axes)   # (the entries of a slice)
        if p in (math.inf, -math.inf):
            check_nonempty_axes(self.name, x, axes, f"a {'largest' if p > 0 else 'smallest'} |x| needs entries")
            y = magnitude.max(axis=axes, keepdims=True) if p > 0 else magnitude.min(axis=axes, keepdims=True)
        elif p == 0:
            y = (x != 0).sum(axis=axes, keepdims=True).astype(x.dtype)
        elif p == 1 or count == 1:
            # (over one entry: |x| itself, as PyTorch's, where |x|^p could underflow or overflow)
            y = magnitude.sum(axis=axes, keepdims=True)
        else:
            s = _norm_scale(magnitude, axes, count, p)
            if p == 2:
                scaled = x / s
                y = s * xp.sqrt((scaled * scaled).sum(axis=axes, keepdims=True))
            else:
                y = s * ((magnitude / s) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
        self.save_for_backward(x, y)
        return y if self.keepdims else y.squeeze(axis=axes)

    def backward(self, dy):
        x, y = self.saved
        xp, p = get_array_module(x), self.p
        if p == 0:
            return (xp.zeros_like(x),)
        if p in (math.inf, -math.inf):
            winners = (xp.abs(x) == y).astype(x.dtype)
            share = xp.sign(x) * winners / winners.sum(axis=self.axes, keepdims=True)
        elif p == 1:
            share = xp.sign(x)
        else:
            # 0 at a zero entry (a subgradient; |x|^(p-1) is inf there for p < 1) and where the norm is 0;
            # NaN throughout a slice whose norm is NaN, and at an infinite entry (inf / inf); for p < 1 an
            # infinite norm makes the finite entries' dx inf (the limit), as PyTorch's
            counted = (y != 0) & ((x != 0) | (y != y))
            with quiet_float_errors(xp):
                if p == 2:
                    share = xp.divide(x, y, out=xp.zeros_like(x), where=counted)
                else:  # (|x| / y)^(p-1), not |x|^(p-1) / y^(p-1), whose powers both underflow at a tiny x
                    share = xp.where(counted, xp.sign(x) * (xp.abs(x) / xp.where(counted, y, 1)) ** (p - 1), 0)
        return (self.expand(dy) * share,)


def norm_order(op, p, name="p"):
    """A p-norm's order p as a float for Norm: a number >= 0, or +-inf; else a ValueError naming op
    and the argument (PyTorch's negative orders other than -inf are refused: docs/ops.md)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or math.isnan(p) or (p < 0 and p != -math.inf):
        raise ValueError(f"{op}: {name} must be a number >= 0, inf or -inf, got {p!r}")
    return float(p)


@takes_torch_keywords
def norm(x, p=2, axis=None, keepdims=False):
    """The p-norm of x over ``axis`` (all axes when None): see Norm (PyTorch's vector_norm, and
    Tensor.norm). p: a number >= 0, or +-inf."""
    return Norm(norm_order("norm", p), axis, keepdims)(floating(x))


def _arg_axis(op, x, axis):
    """argmax's and argmin's axis, checked: None (x flattened) or one axis in range (a 0-d x takes
    0 or -1), along which x has entries; the axis to hand NumPy (None for a 0-d x)."""
    if axis is not None and not isinstance(axis, numbers.Integral):
        raise TypeError(f"{op}: axis must be an integer or None, got {axis!r}")
    extreme = "maximum" if op == "argmax" else "minimum"
    if axis is None and x.size == 0:
        raise ValueError(f"{op}: the input of shape {tuple(x.shape)} has no entries; expected at least one "
                         f"(an empty tensor has no {extreme})")
    axes = normalize_axes(axis, x.ndim, op)
    check_nonempty_axes(op, x, axes, f"an empty slice has no {extreme}")
    return axis if x.ndim else None


@takes_torch_keywords
def argmax(x, axis=None, keepdims=False):
    """Index of the maximum (an integer tensor; no gradient); with ``keepdims`` the reduced axes
    stay, of length 1 (all of them when ``axis`` is None)."""
    data = as_tensor(x).data
    return Tensor(data.argmax(axis=_arg_axis("argmax", data, axis), keepdims=bool(keepdims)))


@takes_torch_keywords
def argmin(x, axis=None, keepdims=False):
    """Index of the minimum (an integer tensor; no gradient); the first one on ties, a NaN if any;
    ``keepdims`` as argmax's."""
    data = as_tensor(x).data
    return Tensor(data.argmin(axis=_arg_axis("argmin", data, axis), keepdims=bool(keepdims)))


class MinMax(NamedTuple):
    """What aminmax returns: a pair, ``low, high = F.aminmax(x)``, whose parts also have PyTorch's
    names (``F.aminmax(x).max``)."""

    min: object
    max: object


@takes_torch_keywords
def aminmax(x, *, axis=None, keepdims=False):
    """The minimum and the maximum of x over ``axis`` (every axis when None), as PyTorch's aminmax:
    min and max composed, so ties share dy as in PyTorch's amin and amax. An empty slice has neither."""
    x = as_tensor(x)
    check_nonempty_axes("aminmax", x, normalize_axes(axis, x.ndim, "aminmax"), "an empty slice has no minimum")
    return MinMax(min(x, axis, keepdims), max(x, axis, keepdims))


@takes_torch_keywords
def nansum(x, axis=None, keepdims=False):
    """The sum over ``axis`` of x's entries that are not NaN, as NumPy's and PyTorch's nansum:
    sum(where(isnan(x), 0, x)), so a NaN entry gets gradient 0 and the others dy."""
    x = as_tensor(x)
    return sum(where(isnan(x), 0, x), axis, keepdims)


@takes_torch_keywords
def nanmean(x, axis=None, keepdims=False):
    """The mean over ``axis`` of x's entries that are not NaN, as NumPy's and PyTorch's nanmean:
    nansum(x) / their count (0 / 0 = NaN where every entry is NaN); floating x only, as PyTorch's."""
    x = as_tensor(x)
    if not is_floating(x.dtype):
        raise TypeError(f"nanmean: expects a floating tensor, got dtype {x.dtype.name} (an integer holds no NaN: "
                        "use mean)")
    return div(nansum(x, axis, keepdims), sum(logical_not(isnan(x)), axis, keepdims))


def sum_to_size(x, *shape, size=None):
    """x summed down to ``shape`` (PyTorch's Tensor.sum_to_size; ``size=`` or ``*shape``), a shape
    that broadcasts to x's: x summed over the leading axes the shape lacks and over those where it
    has 1, the adjoint of broadcast_to (sum composed: the gradient is dy broadcast back)."""
    x = as_tensor(x)
    if size is None:
        size = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    size = lengths("sum_to_size", size)
    lead = x.ndim - len(size)
    if lead < 0 or builtins.any(n not in (1, m) for n, m in zip(size, x.shape[lead:])):
        raise ValueError(f"sum_to_size: size {size} does not broadcast to the input's shape {x.shape}; expected "
                         "at most its axes, each of its length or 1")
    ones = tuple(a for a, n in enumerate(size) if n == 1 and x.shape[lead + a] != 1)
    if lead or not size:  # (size () sums even a 0-d x, widening its integers, as PyTorch's)
        x = sum(x, tuple(range(lead)))
    return sum(x, ones, keepdims=True) if ones else x
