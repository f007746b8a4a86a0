"""Running (scan) ops along one axis: cumsum, cumprod, logcumsumexp, and diff (cumsum's inverse); composed of
them, the trapezoidal rules trapezoid (trapz) and cumulative_trapezoid, and gradient (central differences);
and ordering along one axis: sort and topk, searchsorted and bucketize, median, nanmedian, kthvalue,
mode, quantile and nanquantile.

y_k depends on x_0..x_k along ``axis``, so each backward gathers dy from y_k, y_k+1, ... : a
reverse scan. Cumprod never divides by x: its gradient comes from a recurrence run from the
end of the axis. Cumprod and Logcumsumexp run those recurrences as a Python loop over the
axis, one vectorised step per position (clear, exact; O(length) array operations).
"""
from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module, resolve_dtype, to_host
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import accumulate, as_indices, flag, floating, whole
from minitx.ops.elementwise import lerp_values
from minitx.ops.indexing import add_at, check_indices, getitem
from minitx.ops.reduction import normalize_axes, quiet_float_errors, sum as sum_over  # (builtins.sum stays sum)
from minitx.ops.shape import broadcast_to, concatenate

__all__ = ["Cumsum", "Cumprod", "Logcumsumexp", "Diff", "Cummax", "Cummin", "Sort", "Median", "Kthvalue", "Mode", "Quantile"]


class ValuesIndices(NamedTuple):
    """What sort, topk, cummax, cummin, median, kthvalue and mode return: a pair, ``values, indices = F.sort(x)``, whose
    parts also have PyTorch's names (``F.sort(x).indices``)."""

    values: object
    indices: object


def _scan_axis(axis, x, op):
    """The axis a scan runs along, checked (a 0-d tensor is one element along axis 0 or -1)."""
    if not isinstance(axis, numbers.Integral):
        raise TypeError(f"{op}: axis must be an integer, got {axis!r}")
    normalize_axes(axis, x.ndim, op)  # raises for an out-of-range axis
    return int(axis) % max(x.ndim, 1)


class _Scan(Function):
    def __init__(self, axis):
        self.axis = axis

    def _front(self, x):
        """x with the scan axis first (a 0-d x becomes one element), to loop over positions."""
        self.in_shape = x.shape
        self.scan_axis = _scan_axis(self.axis, x, self.name)
        x = x.reshape(1) if x.ndim == 0 else x
        return get_array_module(x).moveaxis(x, self.scan_axis, 0)

    def _back(self, y):
        """Undo _front."""
        return get_array_module(y).moveaxis(y, 0, self.scan_axis).reshape(self.in_shape)


def _reverse_recurrence(d, a):
    """g along axis 0 with g_{n-1} = d_{n-1} and g_j = d_j + a_j * g_{j+1} (a has n - 1 rows):
    the reverse scan of the cumprod and logcumsumexp backwards, one array step per position."""
    g = get_array_module(d).empty_like(d)
    n = d.shape[0]
    if n:
        g[n - 1] = d[n - 1]
    for j in range(n - 2, -1, -1):
        g[j] = d[j] + a[j] * g[j + 1]
    return g


class Cumsum(_Scan):
    """y_k = sum_{j<=k} x_j along axis.   dx_j = sum_{k>=j} dy_k (a cumulative sum from the end)

    Derivation: docs/backprop/reductions.md
    """

    def forward(self, x):
        return self._back(accumulate(self._front(x).cumsum, x.dtype, axis=0))

    def backward(self, dy):
        return (self._back(get_array_module(dy).cumsum(self._front(dy)[::-1], axis=0)[::-1]),)


@takes_torch_keywords
def cumsum(x, axis, dtype=None):
    """Cumulative sum along ``axis``; ``dtype`` (PyTorch's keyword) casts x first, so the sums run in
    it (int32 counts summed in float64, say), the gradient coming back in x's dtype."""
    return Cumsum(axis)(_cast_for_scan(x, dtype))


class Cumprod(_Scan):
    """y_k = prod_{j<=k} x_j along axis.

    dx_j = sum_{k>=j} dy_k * prod_{i<=k, i!=j} x_i = y_{j-1} * g_j    (y_{-1} = 1), where
    g_j = sum_{k>=j} dy_k * prod_{j<i<=k} x_i obeys g_{n-1} = dy_{n-1}, g_j = dy_j + x_{j+1} * g_{j+1}.
    No division by x, so zeros are exact (PyTorch treats the first zero specially; same values).
    At a NaN or inf it is still the true derivative: x = [nan, 0, .5] gives dx_0 = dy_0 (PyTorch: NaN).

    Derivation: docs/backprop/reductions.md
    """

    def forward(self, x):
        xs = self._front(x)
        y = accumulate(xs.cumprod, x.dtype, axis=0)
        self.save_for_backward(xs, y)
        return self._back(y)

    def backward(self, dy):
        xs, y = self.saved
        xp = get_array_module(dy)
        g = _reverse_recurrence(self._front(dy), xs[1:])
        before = xp.concatenate([xp.ones_like(y[:1]), y[:-1]], axis=0)  # y_{j-1}
        return (self._back(before * g),)


@takes_torch_keywords
def cumprod(x, axis, dtype=None):
    """Cumulative product along ``axis``; ``dtype`` as cumsum's."""
    return Cumprod(axis)(_cast_for_scan(x, dtype))


def _cast_for_scan(x, dtype):
    """x in ``dtype`` (a recorded cast: the gradient goes back in x's dtype), or x as it is."""
    x = as_tensor(x)
    return x if dtype is None or resolve_dtype(dtype) == x.dtype else x.astype(dtype)


class Logcumsumexp(_Scan):
    """y_k = log sum_{j<=k} exp(x_j) along axis, as y_k = logaddexp(y_{k-1}, x_k) (never overflows).

    dx_j = sum_{k>=j} dy_k * exp(x_j - y_k) = exp(x_j - y_j) * t_j, where
    t_{n-1} = dy_{n-1},  t_j = dy_j + exp(y_j - y_{j+1}) * t_{j+1}.
    y is non-decreasing, so every exponent is <= 0: no overflow. Where a prefix is all -inf
    (y_j = -inf), its gradient is taken as 0 (PyTorch gives NaN there), as for a fully masked
    softmax row. From a +inf on, y is +inf: a later dy_k reaches x_j only as exp(x_j - inf) = 0
    (NaN for an x_j = +inf, as PyTorch), so exp(y_j - y_{j+1}) is taken as 0 where y_{j+1} = +inf;
    exp(inf - inf) = NaN there would run back to the finite entries before it.
    """

    def forward(self, x):
        xp = get_array_module(x)
        xs = self._front(x)
        y = xp.empty_like(xs)
        if xs.shape[0]:
            y[0] = xs[0]
        with quiet_float_errors(xp):  # a NaN input gives NaN, quietly
            for k in range(1, xs.shape[0]):
                y[k] = xp.logaddexp(y[k - 1], xs[k])
        self.save_for_backward(xs, y)
        return self._back(y)

    def backward(self, dy):
        xs, y = self.saved
        xp = get_array_module(dy)
        dys = self._front(dy)
        finite = y != -xp.inf  # NaN counts as finite here: it must reach the gradient
        safe_y = xp.where(finite, y, 0)  # exp(-inf - (-inf)) would be NaN
        with quiet_float_errors(xp):  # inf - inf between two +inf y: discarded by the where
            step = xp.where(finite[:-1] & (y[1:] != xp.inf), xp.exp(safe_y[:-1] - safe_y[1:]), 0)
        t = _reverse_recurrence(dys, step)
        with quiet_float_errors(xp):  # exp(inf - inf) = NaN at an x_j = +inf: its gradient, as PyTorch's
            return (self._back(xp.where(finite, xp.exp(xs - safe_y) * t, 0)),)


@takes_torch_keywords
def logcumsumexp(x, axis): return Logcumsumexp(axis)(floating(x))


class Diff(Function):
    """y_k = x_{k+1} - x_k along axis (k < m - 1, m the axis' length), taken n times: the n-th
    forward difference, m - n entries along the axis (none for n >= m). Booleans give
    x_{k+1} != x_k, as NumPy's diff (PyTorch's logical_xor: the same values).

    backward: one difference has dx_j = dy_{j-1} - dy_j, with dy_{-1} = dy_{m-1} = 0, that is
    dx = -diff(dy with a 0 on each side). n of them: (-1)^n diff^n(dy with n zeros on each side)
    (the zeros that diff(dy with one 0 each side) would need around it are 0 - 0 = 0 already).
    """

    def __init__(self, n=1, axis=-1):
        self.n, self.axis = n, axis

    def forward(self, x):
        self.along = _scan_axis(self.axis, x, "diff")
        self.length = x.shape[self.along]
        return get_array_module(x).diff(x, self.n, axis=self.along)

    def backward(self, dy):
        xp = get_array_module(dy)
        if self.n > self.length:  # no output, and padding dy would not give back m entries
            shape = dy.shape[:self.along] + (self.length,) + dy.shape[self.along + 1:]
            return (xp.zeros(shape, dtype=dy.dtype),)
        width = [(0, 0)] * dy.ndim
        width[self.along] = (self.n, self.n)
        return ((-1) ** self.n * xp.diff(xp.pad(dy, width), self.n, axis=self.along),)


@takes_torch_keywords
def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The n-th forward difference along ``axis`` (PyTorch's and NumPy's diff): x[1:] - x[:-1],
    n times. ``prepend`` and ``append`` are joined to x along the axis first, and take their
    gradient: tensors of x's shape but along the axis, or numbers (one entry along it, NumPy's
    rule; PyTorch takes tensors only). n = 0 gives a copy of x, without them (as both)."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("diff: expected a tensor with at least one axis, got a 0-d tensor")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"diff: n must be a whole number >= 0, got {n!r}")
    along = _scan_axis(axis, x, "diff")
    if n == 0:
        return x.clone()
    if prepend is not None or append is not None:
        parts = [_beside_along("prepend", prepend, x, along), x, _beside_along("append", append, x, along)]
        x = concatenate([part for part in parts if part is not None], axis=along)
    return Diff(int(n), axis)(x)


def _along(y, along, part):
    """y[..., part] with ``part`` (a slice or an index) taken along axis ``along``."""
    return getitem(y, (slice(None),) * along + (part,))


def _trapezoid_parts(op, y, x, dx, axis):
    """trapezoid's and cumulative_trapezoid's arguments, checked: y (floating), the axis along it, and
    the steps between neighbouring samples: the number dx (1 when neither is given), or diff(x) laid
    along the axis (a 1-d x, one value per sample) or broadcast against y's (a tensor of y's axes)."""
    y = floating(y)
    if y.ndim == 0:
        raise ValueError(f"{op}: expected y with at least one axis, got a 0-d tensor")
    along = _scan_axis(axis, y, op)
    if x is not None and dx is not None:
        raise TypeError(f"{op}: give the sample points x or their spacing dx, not both")
    if x is None:
        if dx is None:
            dx = 1.0
        if isinstance(dx, bool) or not isinstance(dx, numbers.Real):
            raise TypeError(f"{op}: dx must be a number, got {dx!r}")
        return y, along, dx
    x = floating(x)  # (x's differences as numbers: in uint8, 0 - 1 would wrap to 255, and diff of booleans is xor)
    if x.ndim == 1:
        if x.shape[0] != y.shape[along]:
            raise ValueError(f"{op}: a 1-d x needs one value per sample, {y.shape[along]} along axis {along} of "
                             f"y's shape {y.shape}; got {x.shape[0]}")
        return y, along, diff(x).reshape((1,) * along + (-1,) + (1,) * (y.ndim - along - 1))
    step = diff(x, axis=axis)
    try:  # (checked here, where x is named: the product with y would name mul)
        np.broadcast_shapes(step.shape, y.shape[:along] + (max(y.shape[along] - 1, 0),) + y.shape[along + 1:])
    except ValueError:
        raise ValueError(f"{op}: x of shape {x.shape} does not broadcast against y of shape {y.shape} (their "
                         f"differences along axis {along})") from None
    return y, along, step


@takes_torch_keywords
def trapezoid(y, x=None, *, dx=None, axis=-1):
    """The trapezoidal rule along ``axis`` (PyTorch's and NumPy's trapezoid), composed of slicing, diff
    and sum: with sample points x, sum_k (x_{k+1} - x_k) (y_k + y_{k+1}) / 2; with a spacing dx (1 by
    default), dx (sum_k y_k - (y_0 + y_{n-1}) / 2), PyTorch's form (so y = [inf, 1] gives inf - inf = NaN
    in both). No samples along the axis: 0."""
    y, along, step = _trapezoid_parts("trapezoid", y, x, dx, axis)
    if isinstance(step, Tensor) or y.shape[along] == 0:  # (PyTorch's form below needs a first and a last sample)
        return sum_over(step * (_along(y, along, slice(1, None)) + _along(y, along, slice(None, -1))) / 2, along)
    return (sum_over(y, along) - (_along(y, along, 0) + _along(y, along, -1)) * 0.5) * step


trapz = trapezoid  # (PyTorch's older name)


@takes_torch_keywords
def cumulative_trapezoid(y, x=None, *, dx=None, axis=-1):
    """The running trapezoidal rule along ``axis`` (PyTorch's cumulative_trapezoid, scipy's without
    initial=): entry k is trapezoid over samples 0..k+1, the cumsum of step_k (y_k + y_{k+1}) / 2, so the
    axis is one shorter (none of 0 or 1 samples); step as trapezoid's."""
    y, along, step = _trapezoid_parts("cumulative_trapezoid", y, x, dx, axis)
    return cumsum(step / 2 * (_along(y, along, slice(1, None)) + _along(y, along, slice(None, -1))), along)


def _gradient_spacings(spacing, axes, shape):
    """torch.gradient's spacing, one entry per axis of ``axes``: a number (the same step on every axis), a
    list of numbers, or a list of 1-d coordinate tensors (one per sample along the axis)."""
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(axes):
            raise ValueError(f"gradient: spacing gives {len(spacing)} entries for {len(axes)} axes {axes}; "
                             "expected one per axis (or one number for all)")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(axes)
    for i, (step, axis) in enumerate(zip(spacings, axes)):
        if isinstance(step, Tensor) or hasattr(step, "shape"):
            step = spacings[i] = floating(step)
            if step.ndim != 1 or step.shape[0] != shape[axis]:
                raise ValueError(f"gradient: coordinates for axis {axis} must be a 1-d tensor of its {shape[axis]} "
                                 f"samples, got shape {step.shape}")
        elif isinstance(step, bool) or not isinstance(step, numbers.Real):
            raise TypeError(f"gradient: spacing must be a number or a 1-d tensor per axis, got {step!r}")
    return spacings


@takes_torch_keywords
def gradient(x, *, spacing=1, axis=None, edge_order=1):
    """PyTorch's gradient: the derivative of the sampled x along each of ``axis`` (every axis when None), by
    central differences inside and one-sided ones at the two ends (of first or second order, ``edge_order``),
    one tensor of x's shape per axis, as a tuple. Composed of slices and arithmetic in PyTorch's formulas;
    with a step h (a number):

        inside   (x_{k+1} - x_{k-1}) / h / 2
        ends     (x_1 - x_0) / h, (x_{n-1} - x_{n-2}) / h;   edge_order 2: (-1.5 x_0 + 2 x_1 - 0.5 x_2) / h, and mirrored

    and with coordinates t (1-d, d_k = t_{k+1} - t_k) the second-order weights of uneven steps, as numpy.gradient's:
    inside a x_{k-1} + b x_k + c x_{k+1}, a = -d_k / (d_{k-1} (d_{k-1} + d_k)), b = (d_k - d_{k-1}) / (d_{k-1} d_k),
    c = d_{k-1} / (d_k (d_{k-1} + d_k)). Each axis needs edge_order + 1 samples."""
    x = floating(x)
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if x.ndim == 0:
        raise ValueError("gradient: expected a tensor with at least one axis, got a 0-d tensor")
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        listed = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(_scan_axis(a, x, "gradient") for a in listed)
        if len(set(axes)) != len(axes):
            raise ValueError(f"gradient: repeated axis in {axis}")
    for a in axes:
        if x.shape[a] < edge_order + 1:
            raise ValueError(f"gradient: axis {a} of the input of shape {x.shape} has {x.shape[a]} samples; "
                             f"edge_order={edge_order} needs at least {edge_order + 1}")
    return tuple(_gradient_along(x, a, step, edge_order)
                 for a, step in zip(axes, _gradient_spacings(spacing, axes, x.shape)))


def _gradient_along(x, a, step, edge_order):
    """gradient's result along axis a (see gradient)."""
    def part(start, stop=None):
        return _along(x, a, slice(start, stop))

    if not isinstance(step, Tensor):
        center = (part(2) - part(0, -2)) / step / 2
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / step, (part(-1) - part(-2, -1)) / step
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / step
            last = (0.5 * part(-3, -2) - 2 * part(-2, -1) + 1.5 * part(-1)) / step
        return concatenate([first, center, last], axis=a)
    d = diff(step)
    along = (1,) * a + (-1,) + (1,) * (x.ndim - a - 1)  # the weights laid along axis a
    d1, d2 = d[:-1], d[1:]
    center = ((-d2 / (d1 * (d1 + d2))).reshape(along) * part(0, -2) + ((d2 - d1) / (d1 * d2)).reshape(along) * part(1, -1)
              + (d1 / (d2 * (d1 + d2))).reshape(along) * part(2))
    if edge_order == 1:
        first, last = (part(1, 2) - part(0, 1)) / d[0], (part(-1) - part(-2, -1)) / d[-1]
    else:
        first = (-(2.0 * d[0] + d[1]) / (d[0] * (d[0] + d[1])) * part(0, 1) + (d[0] + d[1]) / (d[0] * d[1]) * part(1, 2)
                 - d[0] / (d[1] * (d[0] + d[1])) * part(2, 3))
        last = (d[-1] / (d[-2] * (d[-1] + d[-2])) * part(-3, -2) - (d[-1] + d[-2]) / (d[-1] * d[-2]) * part(-2, -1)
                + (2 * d[-1] + d[-2]) / (d[-1] * (d[-1] + d[-2])) * part(-1))
    return concatenate([first, center, last], axis=a)


def _beside_along(what, value, x, along):
    """diff's prepend or append as a tensor to join to x along its axis ``along`` (None stays None):
    a number or a 0-d tensor becomes one entry along that axis, broadcast over the others."""
    if value is None:
        return None
    value = as_tensor(value, x)
    if value.ndim == 0:
        return broadcast_to(value, x.shape[:along] + (1,) + x.shape[along + 1:])
    if value.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(value.shape, x.shape)) if d != along):
        raise ValueError(f"diff: {what} of shape {value.shape} does not fit the input of shape {x.shape}: expected "
                         f"a number, or a tensor of the input's shape but along axis {along}")
    return value


class Cummax(_Scan):
    """y_k = max(x_0..x_k) along axis, i_k = where it is: the LATEST position holding it (ties go to
    the later one, as in PyTorch), a NaN being larger than everything (from a NaN on, y is NaN).

    backward: each dy_k goes to x at i_k: dx_j = sum of dy_k over the k with i_k = j.
    """

    later_wins = staticmethod(lambda a, b: a >= b)

    def forward(self, x):
        xp = get_array_module(x)
        front = self._front(x)
        values, self.index = xp.empty_like(front), xp.empty(front.shape, dtype=xp.int64)
        if not front.shape[0]:  # an empty axis: no running values, and no first one to start from
            return self._back(values)
        best, where = front[0], xp.zeros(front.shape[1:], dtype=xp.int64)
        for k in range(front.shape[0]):
            take = self.later_wins(front[k], best) | xp.isnan(front[k])
            best, where = xp.where(take, front[k], best), xp.where(take, k, where)
            values[k], self.index[k] = best, where
        return self._back(values)

    def backward(self, dy):
        xp = get_array_module(dy)
        front = self._front(dy)
        length, rest = front.shape[0], math.prod(front.shape[1:])  # not -1: NumPy cannot infer it beside a 0
        dx = xp.zeros((length, rest), dtype=dy.dtype)
        add_at(dx, (self.index.reshape(length, rest), xp.arange(rest)[None, :]), front.reshape(length, rest))
        return (self._back(dx.reshape(front.shape)),)


class Cummin(Cummax):
    """y_k = min(x_0..x_k) along axis and where it is, as Cummax (the latest of equal minima; NaN
    wins). backward as Cummax's."""

    later_wins = staticmethod(lambda a, b: a <= b)


@takes_torch_keywords
def cummax(x, axis):
    """(values, indices) of the running maximum along ``axis`` (PyTorch's cummax); the indices
    take no gradient."""
    return _with_index(Cummax(axis), x)


@takes_torch_keywords
def cummin(x, axis):
    """(values, indices) of the running minimum along ``axis`` (PyTorch's cummin)."""
    return _with_index(Cummin(axis), x)


def _with_index(op, x):
    values = op(x)
    return ValuesIndices(values, Tensor(op._back(op.index)))


def _sort_order(x, axis, descending):
    """The stable order of x along ``axis``, as PyTorch's sort(stable=True): NaN counts as the
    largest value, equal values (0 and -0 included) keep their order. Descending: the ascending
    order of x read backwards, whose own ties come out reversed, so it is read backwards again."""
    xp = get_array_module(x)
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    backwards = xp.argsort(xp.flip(x, axis), axis=axis, kind="stable")
    return xp.flip(n - 1 - backwards, axis)


class Sort(Function):
    """y = x reordered along ``axis`` (ascending, or descending), i = the order: y = take(x, i).

    backward: each dy goes back to where its value came from, dx[i] = dy (i a permutation along
    the axis, so no two go to one place).
    """

    def __init__(self, axis=-1, descending=False):
        self.axis, self.descending = axis, descending

    def forward(self, x):
        xp = get_array_module(x)
        self.scan_axis = _scan_axis(self.axis, x, "sort")
        x1 = x.reshape(1) if x.ndim == 0 else x
        self.order = _sort_order(x1, self.scan_axis, self.descending)
        self.in_shape = x.shape
        return xp.take_along_axis(x1, self.order, axis=self.scan_axis).reshape(x.shape)

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.zeros(self.order.shape, dtype=dy.dtype)
        xp.put_along_axis(dx, self.order, dy.reshape(self.order.shape), axis=self.scan_axis)
        return (dx.reshape(self.in_shape),)


@takes_torch_keywords
def sort(x, axis=-1, descending=False, *, stable=False):
    """(values, indices) of x sorted along ``axis``, stably (equal values keep their order; NaN
    is the largest), as PyTorch's ``sort(stable=True)``; indices are int64 and take no gradient.
    ``stable`` is taken for PyTorch's code and changes nothing: stable=False lets any order of equal
    values come out, the stable one included."""
    op = Sort(axis, descending)
    values = op(as_tensor(x))
    return ValuesIndices(values, Tensor(op.order.reshape(values.shape).astype("int64")))


def msort(x):
    """x sorted along its first axis, the values alone, as PyTorch's msort: sort(x, 0).values."""
    return sort(x, 0).values


@takes_torch_keywords
def argsort(x, axis=-1, descending=False, *, stable=False):
    """The indices that sort x along ``axis`` (stably; NaN the largest; ``stable`` as sort's)."""
    _scan_axis(axis, as_tensor(x), "argsort")  # (so that a bad axis names argsort, not sort)
    return sort(x, axis, descending)[1]


@takes_torch_keywords
def topk(x, k, axis=-1, largest=True, sorted=True):  # noqa: A002 (PyTorch's name)
    """(values, indices) of the k largest (or smallest) entries along ``axis``, in order: the
    first k of a stable sort, so among equal values the earlier comes first (PyTorch does not
    say which it picks among ties). A 0-d x is one value along axis 0 (or -1); k = 1 returns it
    and index 0, 0-d, as PyTorch (k = 0 is refused: a 0-d result cannot be empty). ``sorted`` is
    taken for PyTorch's code: the k come in order either way (with sorted=False PyTorch's order
    is unspecified)."""
    _scan_axis(axis, as_tensor(x), "topk")  # (so that a bad axis names topk, not the sort it calls)
    k = whole("topk", "k", k)
    values, indices = sort(x, axis, descending=largest)
    if not values.ndim:
        if k != 1:
            raise ValueError(f"topk: a 0-d input has one value and gives a 0-d result holding it, so k must be 1, "
                             f"got {k!r}")
        return ValuesIndices(values, indices)
    n = values.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(f"topk: k must be a whole number in [0, {n}] for an axis of {n}, got {k!r}")
    index = [slice(None)] * values.ndim
    index[axis] = slice(0, k)
    return ValuesIndices(values[tuple(index)], indices[tuple(index)])


def searchsorted(sorted_sequence, values, *, side=None, right=False, sorter=None, out_int32=False):
    """Where each of ``values`` would go in ``sorted_sequence`` (ascending along its last axis) to
    keep it sorted: the first such place (side "left": the count of entries < v) or the last
    ("right", or right=True: the count of entries <= v), as PyTorch's searchsorted. A 1-d
    sequence serves every value; an n-d one holds one sequence per row, and values' first n - 1
    axes must be its. ``sorter``: the indices that sort an unsorted sequence (argsort's).
    An int64 tensor (int32 with out_int32) of values' shape; no gradient. NaN is the largest
    value, as sort puts it (NumPy's rule; PyTorch's answer beside a NaN in the sequence is its
    binary search's path)."""
    sequence = as_tensor(sorted_sequence)
    values = as_tensor(values, sequence)
    if side not in (None, "left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    right, out_int32 = flag("searchsorted", "right", right), flag("searchsorted", "out_int32", out_int32)
    if side == "left" and right:
        raise ValueError("searchsorted: side='left' and right=True ask for opposite sides; give one of them")
    side = side or ("right" if right else "left")
    if sequence.ndim == 0 or (sequence.ndim > 1 and sequence.shape[:-1] != values.shape[:-1]):
        raise ValueError(f"searchsorted: expected a 1-d sorted_sequence, or one whose first axes are values' "
                         f"(one sequence per row), got shapes {sequence.shape} and {values.shape}")
    s, v = sequence.data, values.data
    xp = get_array_module(s)
    # bfloat16 searched as float32, which holds each value exactly: ml_dtypes' comparisons do not count
    # NaN as the largest value, and NumPy's search, going on from one value's place to the next
    # value's, then misplaces the values after a NaN too
    s, v = (a.astype(np.float32) if a.dtype.name == "bfloat16" else a for a in (s, v))
    if sorter is not None:
        sorter = as_indices(sorter, sequence)
        if sorter.shape != sequence.shape:
            raise ValueError(f"searchsorted: sorter must have sorted_sequence's shape {sequence.shape}, got "
                             f"{sorter.shape}")
        # positions in [0, n): a negative one would count from the end, giving a silently wrong place
        check_indices("searchsorted", "sorter", sorter.data, s.shape[-1])
        s = xp.take_along_axis(s, sorter.data, axis=-1)
    if s.ndim == 1:
        found = xp.searchsorted(s, v, side=side)
    else:  # one search per row (NumPy's and CuPy's searchsorted take a 1-d sequence)
        count = math.prod(s.shape[:-1])
        rows, wanted = s.reshape(count, s.shape[-1]), v.reshape(count, v.shape[-1])
        found = xp.empty(wanted.shape, dtype=np.int64)
        for k in range(count):
            found[k] = xp.searchsorted(rows[k], wanted[k], side=side)
        found = found.reshape(v.shape)
    return Tensor(xp.asarray(found, dtype=np.int32 if out_int32 else np.int64))


def bucketize(x, boundaries, right=False, out_int32=False):
    """The bucket of each entry of x among the ascending 1-d ``boundaries`` b (PyTorch's
    bucketize): i with b[i-1] < x <= b[i], or with ``right`` b[i-1] <= x < b[i]; 0 below b[0] and
    len(b) above the last. That is searchsorted(b, x, right=right): the count of boundaries < x
    (<= x with right), so ``right`` means what it means there (NumPy's digitize reads it the other
    way round). NaN is above every boundary. An int64 tensor (int32 with out_int32) of x's shape; no
    gradient."""
    boundaries = as_tensor(boundaries)
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be a 1-d tensor, got shape {boundaries.shape}")
    return searchsorted(boundaries, x, right=right, out_int32=out_int32)

class Median(Function):
    """y = the lower middle value of x along ``axis`` (PyTorch's median): with the n entries of a
    slice in the order of a stable sort, the one at rank k = (n - 1) // 2; i = where it was. Axis
    None: the median of all entries (x flattened).

    NaN: a slice holding one has median NaN, at its first NaN (NaN sorts last, so that is rank
    n - c, c the NaNs). ``skip_nan`` (nanmedian) takes the lower middle of the n - c others,
    k = (n - c - 1) // 2, and NaN where all are NaN: rank 0, the first (PyTorch's pick there varies).

        dx = 0, but dx[i] = dy    (the median is one entry of x, moved)
    """

    fresh_gradients = True  # dx: new zeros with dy laid in
    picks = "median"  # what an empty slice has none of, in its error

    def __init__(self, axis, keepdims=False, skip_nan=False):
        self.axis, self.keepdims, self.skip_nan = axis, keepdims, skip_nan

    @property
    def name(self) -> str:
        return "nan" + super().name if self.skip_nan else super().name

    def rank(self, x, n, order):
        """The rank picked in each slice of x (n entries along self.along, in the stable ``order``),
        the axis kept (length 1)."""
        xp = get_array_module(x)
        nans = xp.isnan(x).sum(axis=self.along, keepdims=True)
        return xp.maximum((n - nans - 1) // 2, 0) if self.skip_nan else xp.where(nans > 0, n - nans, (n - 1) // 2)

    def forward(self, x):
        xp = get_array_module(x)
        self.in_shape = x.shape
        if self.axis is None or x.ndim == 0:  # one axis to sort along: x flattened (a 0-d x, one entry)
            normalize_axes(self.axis, x.ndim, self.name)  # (0 or -1 for a 0-d x)
            x, self.along = x.reshape(-1), 0
        else:
            self.along = _scan_axis(self.axis, x, self.name)
        n = x.shape[self.along]
        if n == 0 and self.axis is not None:
            raise ValueError(f"{self.name}: axis {self.axis} of the input of shape {self.in_shape} has length 0; an "
                             f"empty slice has no {self.picks}")
        order = _sort_order(x, self.along, False)
        rank = self.rank(x, n, order)
        self.work_shape = x.shape
        out_shape = _reduced_shape(self.in_shape, None if self.axis is None else self.along, self.keepdims)
        if n == 0:  # no entries at all: NaN, as PyTorch, and no gradient to give
            self.index = None
            return xp.full(out_shape, xp.nan, dtype=x.dtype)
        # the entry of rank k: its position in the stable order (kept axis of length 1), then its value
        self.index = xp.take_along_axis(order, rank, axis=self.along)
        return xp.take_along_axis(x, self.index, axis=self.along).reshape(out_shape)

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.zeros(self.work_shape, dtype=dy.dtype)
        if self.index is not None:
            xp.put_along_axis(dx, self.index, dy.reshape(self.index.shape), axis=self.along)
        return (dx.reshape(self.in_shape),)


def _reduced_shape(shape, axis, keepdims):
    """``shape`` without ``axis`` (in range; None: every axis), or with it of length 1 (``keepdims``)."""
    axes = range(len(shape)) if axis is None else [axis % len(shape)] if shape else []
    if keepdims:
        return tuple(1 if d in axes else m for d, m in enumerate(shape))
    return tuple(m for d, m in enumerate(shape) if d not in axes)


@takes_torch_keywords
def median(x, axis=None, keepdims=False):
    """The lower of the two middle values (PyTorch's median; NumPy's averages them), NaN where a
    slice holds one. Axis None: a 0-d tensor, the median of all entries (NaN for none); with an
    axis, (values, indices) as PyTorch, the indices int64 and without gradient. Among equal
    values the index is the one a stable sort puts at the middle rank (PyTorch does not say which)."""
    return _picked(Median(axis, keepdims), x)


@takes_torch_keywords
def nanmedian(x, axis=None, keepdims=False):
    """median with NaN left out (PyTorch's nanmedian): NaN only where a slice is all NaN."""
    return _picked(Median(axis, keepdims, skip_nan=True), x)


class Kthvalue(Median):
    """y = the k-th smallest value of x along ``axis`` (k counted from 1), i = where it was: the
    entry of rank k - 1 in the order of a stable sort, NaN the largest value (PyTorch's kthvalue).

        dx = 0, but dx[i] = dy    (as Median's)
    """

    picks = "k-th smallest value"

    def __init__(self, k, axis=-1, keepdims=False):
        super().__init__(axis, keepdims)
        self.k = k

    def rank(self, x, n, order):
        if not 1 <= self.k <= n:
            raise ValueError(f"kthvalue: k must be a whole number in [1, {n}] for axis {self.axis} of the input "
                             f"of shape {self.in_shape}, got {self.k!r}")
        shape = tuple(1 if d == self.along else m for d, m in enumerate(x.shape))
        return get_array_module(x).full(shape, self.k - 1, dtype=np.int64)


@takes_torch_keywords
def kthvalue(x, k, axis=-1, keepdims=False):
    """(values, indices) of the k-th smallest entry along ``axis`` (k = 1: the smallest), as
    PyTorch's kthvalue; NaN is the largest value. Among equal values the index is the one a
    stable sort puts at rank k - 1 (PyTorch does not say which); indices are int64, no gradient."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"kthvalue: k must be a whole number, got {k!r}")
    if axis is None or not isinstance(axis, numbers.Integral):
        raise TypeError(f"kthvalue: axis must be an integer, got {axis!r}")
    return _picked(Kthvalue(int(k), axis, keepdims), x)


class Mode(Median):
    """y = the most frequent value of x along ``axis``, the smallest of those tied for most, and
    i = where it was: its last occurrence (PyTorch's mode; its CPU index among repeats is the last
    one for slices of up to 16 entries, and varies past that). With s a slice in the order of a
    stable sort, equal values form runs; the first of the longest runs is the smallest such value,
    and its last entry, at rank start + length - 1, is the value's last occurrence in x. NaNs
    count as one value, the largest (where sort puts them).

        dx = 0, but dx[i] = dy    (as Median's)
    """

    picks = "mode"

    def rank(self, x, n, order):
        xp = get_array_module(x)
        s = xp.moveaxis(xp.take_along_axis(x, order, axis=self.along), self.along, -1)  # slices as rows
        if not s.size:  # no slices: no ranks (CuPy's bincount below needs an entry)
            return xp.zeros(_reduced_shape(x.shape, self.along, True), dtype=np.int64)
        starts = xp.ones(s.shape, dtype=bool)  # where a run of equal values begins: each row's first entry too
        starts[..., 1:] = (s[..., 1:] != s[..., :-1]) & ~(xp.isnan(s[..., 1:]) & xp.isnan(s[..., :-1]))
        run = xp.cumsum(starts.reshape(-1)) - 1  # each entry's run, numbered through all the rows
        length = xp.bincount(run)[run].reshape(s.shape)  # each entry: the length of its run
        most = length.max(axis=-1, keepdims=True)
        start = xp.argmax(length == most, axis=-1)[..., None]  # the first longest run: the smallest value
        return xp.moveaxis(start + most - 1, -1, self.along)


@takes_torch_keywords
def mode(x, axis=-1, keepdims=False):
    """(values, indices) of the most frequent value along ``axis`` (PyTorch's mode): among values
    equally frequent the smallest, and the index of its last occurrence, which alone gets the
    gradient. NaNs count as one value, the largest. A 0-d x is its own mode, at index 0; integers
    and booleans keep their dtype; indices are int64, no gradient."""
    if axis is None or isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"mode: axis must be an integer, got {axis!r}")
    return _picked(Mode(axis, keepdims), as_tensor(x))


def _picked(op, x):
    """The values op (Median or Kthvalue) picks from x, and with an axis their indices (int64)."""
    values = op(as_tensor(x))
    if op.axis is None:
        return values
    return ValuesIndices(values, Tensor(op.index.reshape(values.shape).astype("int64")))


INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class Quantile(Function):
    """y = the q-quantile of x along ``axis`` (PyTorch's quantile, NumPy's with ``method=``), for
    one number q or each q of a 1-d ``q`` (then the output's first axis); axis None: of all
    entries. With s a slice's n entries sorted (stably, NaN last), the quantile is at rank
    r = q (n - 1), between s[lo] and s[hi], lo = floor(r) and hi = ceil(r):

        linear     y = lerp(s[lo], s[hi], w),  w = r - lo
        midpoint   y = lerp(s[lo], s[hi], w),  w = 1/2
        lower, higher, nearest: y = s[r], r rounded down, up, or to the nearer (half to even)

    lerp is PyTorch's (elementwise.lerp_values), so an infinite s[lo] = s[hi] gives NaN
    (inf - inf), as in PyTorch and NumPy. NaN: a slice holding one has quantile NaN (r = n - 1,
    where NaN sorts); ``skip_nan`` (nanquantile) takes r = q (m - 1) among the m entries that are
    not NaN (NaN where all are: r = 0).

        dx[i_lo] += (1 - w) dy,   dx[i_hi] += w dy     (i_lo, i_hi: where s[lo] and s[hi] were in x;
                                                       w = 0 for lower, higher and nearest)
    """

    fresh_gradients = True  # dx: new zeros with the dy added in

    def __init__(self, q, axis=None, keepdims=False, interpolation="linear", skip_nan=False):
        self.q, self.axis, self.keepdims = q, axis, keepdims
        self.interpolation, self.skip_nan = interpolation, skip_nan

    @property
    def name(self) -> str:
        return "nan" + super().name if self.skip_nan else super().name

    def forward(self, x):
        xp = get_array_module(x)
        if x.size == 0:
            raise ValueError(f"{self.name}: expected an input with at least one entry (as PyTorch's), got shape "
                             f"{x.shape}")
        rows = self._rows(x)  # one row per slice: (R, n)
        self.rows_shape, n = rows.shape, rows.shape[1]
        order = _sort_order(rows, 1, False)
        s = xp.take_along_axis(rows, order, axis=1)
        q = xp.asarray(self.q, dtype=x.dtype).reshape(1, -1)  # (1, Q): every q for every row
        if self.skip_nan:
            counted = (~xp.isnan(s)).sum(axis=1, keepdims=True).astype(x.dtype)  # (an int64 count would make r float64)
            r = xp.maximum(q * (counted - 1), 0)
        else:
            r = xp.where(xp.isnan(s).any(axis=1, keepdims=True), n - 1, q * (n - 1))
        # lower, higher and nearest read one entry, at r rounded (rint: half to even, as PyTorch's round)
        rounding = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.rint}.get(self.interpolation)
        r = r if rounding is None else rounding(r)
        floor = xp.floor(r)
        lo, hi = floor.astype(np.int64), xp.ceil(r).astype(np.int64)  # (R, Q)
        self.w = xp.full_like(r, 0.5) if self.interpolation == "midpoint" else r - floor  # (in x's dtype)
        below = xp.take_along_axis(s, lo, axis=1)
        y = below if rounding else lerp_values(below, xp.take_along_axis(s, hi, axis=1), self.w)
        self.lo_at, self.hi_at = xp.take_along_axis(order, lo, axis=1), xp.take_along_axis(order, hi, axis=1)
        levels = q.shape[1:] if np.ndim(self.q) == 1 else ()  # a 1-d q's axis comes first
        reduced = _reduced_shape(self.in_shape, None if self.moved is None else self.along, self.keepdims)
        return y.T.reshape(levels + reduced)

    def _rows(self, x):
        """x as (R, n): each slice along the axis a row (axis None, or a 0-d x: all entries, one row)."""
        self.in_shape = x.shape
        if self.axis is None or x.ndim == 0:
            normalize_axes(self.axis, x.ndim, self.name)  # (0 or -1 for a 0-d x)
            self.moved = None
            return x.reshape(1, -1)
        self.along = _scan_axis(self.axis, x, self.name)
        moved = get_array_module(x).moveaxis(x, self.along, -1)
        self.moved = moved.shape
        return moved.reshape(-1, moved.shape[-1])

    def backward(self, dy):
        xp = get_array_module(dy)
        R, Q = self.lo_at.shape
        dy = dy.reshape(Q, R).T  # undo forward's y.T.reshape
        dx = xp.zeros(self.rows_shape, dtype=dy.dtype)
        rows = xp.arange(R)[:, None]
        add_at(dx, (rows, self.lo_at), (1 - self.w) * dy)  # add, not put: two q may read one entry
        add_at(dx, (rows, self.hi_at), self.w * dy)
        if self.moved is None:
            return (dx.reshape(self.in_shape),)
        return (xp.moveaxis(dx.reshape(self.moved), -1, self.along),)


@takes_torch_keywords
def quantile(x, q, axis=None, keepdims=False, interpolation="linear"):
    """The q-quantiles of x along ``axis`` (all entries for None), as PyTorch's quantile: q a
    number in [0, 1] or a 1-d tensor (or list) of them, whose axis comes first in the result;
    ``interpolation`` one of linear, lower, higher, midpoint, nearest (see Quantile). NaN where a
    slice holds one. The gradient goes to the one or two entries each quantile is read from."""
    return _quantile(x, q, axis, keepdims, interpolation, skip_nan=False)


@takes_torch_keywords
def nanquantile(x, q, axis=None, keepdims=False, interpolation="linear"):
    """quantile with NaN left out (PyTorch's nanquantile): NaN only where a slice is all NaN."""
    return _quantile(x, q, axis, keepdims, interpolation, skip_nan=True)


def _quantile(x, q, axis, keepdims, interpolation, skip_nan):
    """quantile or nanquantile, their q and interpolation checked; an integer x as float32."""
    op = "nanquantile" if skip_nan else "quantile"
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
    if isinstance(q, Tensor):
        levels = to_host(q.data)  # (one read from the device, to check them)
    elif isinstance(q, (numbers.Real, list, tuple, np.ndarray)) and not isinstance(q, bool):
        levels = np.asarray(q)
    else:
        raise TypeError(f"{op}: q must be a number or a 1-d tensor of numbers in [0, 1], got {type(q).__name__}")
    if levels.ndim > 1 or levels.dtype.kind not in "iuf":
        raise ValueError(f"{op}: q must be a number or a 1-d tensor of numbers in [0, 1], got "
                         f"{'shape ' + str(levels.shape) if levels.ndim > 1 else 'dtype ' + levels.dtype.name}")
    levels = levels.astype(np.float64)
    outside = levels[~((levels >= 0) & (levels <= 1))]  # (NaN included)
    if outside.size:
        raise ValueError(f"{op}: q must be in [0, 1], got {outside[0]}")
    return Quantile(float(levels) if levels.ndim == 0 else levels, axis, keepdims, interpolation, skip_nan)(
        floating(x))
