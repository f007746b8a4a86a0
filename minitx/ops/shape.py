"""Shape ops: they move or select elements without changing values, so each backward puts
``dy`` back where the elements came from (and adds where one element was used twice)."""
from __future__ import annotations

import numbers

from minitx.autograd.engine import unbroadcast
from minitx.autograd.function import Function
from minitx.backend import get_array_module

__all__ = [
    "Reshape", "Transpose", "SwapAxes", "BroadcastTo", "Squeeze", "Unsqueeze", "GetItem",
    "Concatenate", "Stack", "Pad", "scatter_add",
]


class Reshape(Function):
    """y = x with a new shape (same elements, row-major order).   dx = dy reshaped back"""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        self.in_shape = x.shape
        try:
            return x.reshape(self.shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape shape {x.shape} ({x.size} elements) "
                             f"into {self.shape}") from None

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


class Transpose(Function):
    """y = x with axes permuted: y.shape[i] = x.shape[axes[i]] (None reverses all axes).
    dx = dy permuted by the inverse permutation"""

    def __init__(self, axes=None):
        self.axes = None if axes is None else tuple(axes)

    def forward(self, x):
        axes = tuple(reversed(range(x.ndim))) if self.axes is None else self.axes
        in_range = all(-x.ndim <= a < x.ndim for a in axes)  # before % : (0, 3) is not (0, 1)
        if not in_range or sorted(a % x.ndim for a in axes) != list(range(x.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} axes of shape {x.shape}")
        self.perm = tuple(a % x.ndim for a in axes)
        return x.transpose(self.perm)

    def backward(self, dy):
        inverse = [0] * len(self.perm)
        for i, a in enumerate(self.perm):
            inverse[a] = i
        return (dy.transpose(inverse),)


class SwapAxes(Function):
    """y = x with two axes exchanged.   dx = dy with the same two axes exchanged back"""

    def __init__(self, axis1, axis2):
        self.axis1, self.axis2 = axis1, axis2

    def forward(self, x):
        for axis in (self.axis1, self.axis2):
            if not -x.ndim <= axis < max(x.ndim, 1):
                raise ValueError(f"swapaxes: axis {axis} is out of range for shape {x.shape}")
        return get_array_module(x).swapaxes(x, self.axis1, self.axis2)

    def backward(self, dy):
        return (get_array_module(dy).swapaxes(dy, self.axis1, self.axis2),)


class BroadcastTo(Function):
    """y = x repeated along new leading axes and size-1 axes to ``shape``.
    dx = dy summed over those axes (each x element was copied into each of them)"""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        self.in_shape = x.shape
        try:
            return get_array_module(x).broadcast_to(x, self.shape)
        except ValueError:
            raise ValueError(f"broadcast_to: shape {x.shape} cannot be broadcast to {self.shape}") from None

    def backward(self, dy):
        return (unbroadcast(dy, self.in_shape),)


class Squeeze(Function):
    """y = x without size-1 axes (all of them, or the given ones).   dx = dy reshaped back"""

    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x):
        self.in_shape = x.shape
        axes = (self.axis,) if isinstance(self.axis, numbers.Integral) else self.axis
        if axes is not None:
            for a in axes:
                if not -x.ndim <= a < x.ndim or x.shape[a] != 1:
                    raise ValueError(f"squeeze: axis {a} of shape {x.shape} is not of size 1")
        return x.squeeze(axis=axes)

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


class Unsqueeze(Function):
    """y = x with a new size-1 axis at position ``axis``.   dx = dy without it"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        if not -(x.ndim + 1) <= self.axis <= x.ndim:
            raise ValueError(f"unsqueeze: axis {self.axis} is out of range for shape {x.shape}")
        self.in_shape = x.shape
        return get_array_module(x).expand_dims(x, self.axis)

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


def _is_basic_index(index) -> bool:
    """Slices, ints, None and Ellipsis select each element at most once (a view in numpy)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def scatter_add(target, index, values):
    """target[index] += values, adding (not overwriting) where an index repeats."""
    xp = get_array_module(target)
    if xp.__name__ == "cupy":
        import cupyx

        cupyx.scatter_add(target, index, values)
    else:
        xp.add.at(target, index, values)


class GetItem(Function):
    """y = x[index]: numpy indexing with slices, integers, integer arrays and boolean masks.

    dx = zeros like x, then dx[index] += dy. With integer arrays an element may be picked
    several times (x[[0, 0]]); its gradient is then the sum over the picks, hence a
    scatter-add rather than an assignment.
    """

    def __init__(self, index):
        self.index = index

    def forward(self, x):
        self.in_shape, self.in_dtype = x.shape, x.dtype
        try:
            return x[self.index]
        except IndexError as error:
            raise IndexError(f"getitem: index {self.index!r} does not fit shape {x.shape}: {error}") from None

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        if _is_basic_index(self.index):
            dx[self.index] = dy
        else:
            scatter_add(dx, self.index, dy)
        return (dx,)


class Concatenate(Function):
    """y = the inputs joined along ``axis``.   Each input's gradient is its slice of dy."""

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, *xs):
        xp = get_array_module(xs[0])
        try:
            y = xp.concatenate(xs, axis=self.axis)
        except (ValueError, IndexError):  # numpy's AxisError is both
            shapes = ", ".join(str(x.shape) for x in xs)
            raise ValueError(f"concatenate: shapes {shapes} cannot be joined along axis {self.axis}: they need "
                             "the same number of dimensions and the same sizes outside that axis") from None
        self.sizes = [x.shape[self.axis] for x in xs]
        return y

    def backward(self, dy):
        xp = get_array_module(dy)
        cuts = list(_cumsum(self.sizes)[:-1])
        return tuple(xp.split(dy, cuts, axis=self.axis))


def _cumsum(values):
    total, out = 0, []
    for v in values:
        total += v
        out.append(total)
    return out


class Stack(Function):
    """y = the inputs stacked along a new axis.   Input i's gradient is dy taken at i on it."""

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, *xs):
        shapes = {x.shape for x in xs}
        if len(shapes) > 1:
            raise ValueError(f"stack: all inputs need the same shape, got {', '.join(str(x.shape) for x in xs)}")
        return get_array_module(xs[0]).stack(xs, axis=self.axis)

    def backward(self, dy):
        xp = get_array_module(dy)
        return tuple(xp.take(dy, i, axis=self.axis) for i in range(dy.shape[self.axis]))


def pad_widths(pad_width, shape) -> list:
    """pad_width as numpy takes it (an int, one (before, after) pair, or a pair per axis) as a
    list of (before, after) pairs, one per axis of ``shape``; checked (all >= 0)."""
    width = pad_width
    if isinstance(width, numbers.Integral):
        width = [(int(width), int(width))] * len(shape)
    elif len(width) == 2 and all(isinstance(w, numbers.Integral) for w in width):
        width = [tuple(width)] * len(shape)  # as numpy: one (before, after) pair for every axis
    width = [tuple(w) if isinstance(w, (tuple, list)) else (w,) for w in width]
    if len(width) != len(shape) or any(len(w) != 2 or min(w) < 0 for w in width):
        raise ValueError(f"pad: pad_width {pad_width} must give (before, after) >= 0 "
                         f"for each of the {len(shape)} axes of shape {shape}")
    return width


class Pad(Function):
    """y = x surrounded by ``value``: pad_width[i] = (before, after) elements on axis i.
    dx = the middle of dy, where x was"""

    def __init__(self, pad_width, value=0.0):
        self.pad_width, self.value = pad_width, value

    def forward(self, x):
        xp = get_array_module(x)
        width = pad_widths(self.pad_width, x.shape)
        self.middle = tuple(slice(b, b + n) for (b, _), n in zip(width, x.shape))
        # a 0-d x has no axes to pad; numpy rejects the empty list but takes 0
        return xp.pad(x, width or 0, mode="constant", constant_values=self.value)

    def backward(self, dy):
        return (dy[self.middle],)
