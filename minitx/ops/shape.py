"""Shape ops: reshape, transpose, squeeze, broadcast (broadcast_tensors, broadcast_shapes), atleast_1d/2d/3d,
concatenate, stack (hstack, vstack, row_stack, column_stack, dstack), block_diag, cartesian_prod, combinations,
split and tensor_split (hsplit, vsplit, dsplit), flip, roll, repeat, tile, sliding windows
(Tensor.unfold), meshgrid, and padding (constant, reflect, replicate).

They move or select elements without changing values, so each backward puts ``dy`` back where
the elements came from, ADDING where one element was used several times (repeat, tile,
overlapping windows, reflect/replicate padding).
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np
from numpy.exceptions import AxisError

from minitx.autograd.engine import unbroadcast
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, _method_axis, as_tensor, lengths, named
from minitx.backend import get_array_module, host_ints, to_host
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import check_fits, one_dtype, type_name, whole
from minitx.ops.indexing import add_at, getitem
from minitx.ops.reduction import normalize_axes

__all__ = ["Reshape", "Transpose", "SwapAxes", "BroadcastTo", "Squeeze", "Unsqueeze", "Concatenate", "Stack", "Flip", "Roll", "Repeat", "Tile", "SlidingWindows", "Pad", "PadEdges"]


class Reshape(Function):
    """y = x with a new shape (same elements, row-major order).   dx = dy reshaped back"""

    moves_values = True

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        self.in_shape = x.shape
        if any(n < -1 for n in self.shape) or self.shape.count(-1) > 1:  # (NumPy reads any negative length as -1)
            raise ValueError(f"reshape: invalid shape {self.shape} for shape {x.shape}: lengths must be >= 0, "
                             f"with at most one -1 (inferred)")
        try:
            return x.reshape(self.shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape shape {x.shape} ({x.size} elements) "
                             f"into {self.shape}") from None

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


def reshape(x, shape): return Reshape(lengths("reshape", shape))(as_tensor(x))


def ravel(x):
    """x as one axis, as PyTorch's ravel and NumPy's: reshape(x, (-1,))."""
    return reshape(x, (-1,))


class Transpose(Function):
    """y = x with axes permuted: y.shape[i] = x.shape[axes[i]] (None reverses all axes).
    dx = dy permuted by the inverse permutation"""

    moves_values = True

    def __init__(self, axes=None, called="transpose"):
        self.axes = None if axes is None else tuple(axes) if _many(axes) else (axes,)  # (one int: a 1-d x's)
        self.called = called   # (transpose or permute, for the errors)

    def forward(self, x):
        op = self.called
        axes = (tuple(reversed(range(x.ndim))) if self.axes is None
                else tuple(whole(op, "an axis", a) for a in self.axes))
        in_range = all(-x.ndim <= a < x.ndim for a in axes)  # before % : (0, 3) is not (0, 1)
        if not in_range or sorted(a % x.ndim for a in axes) != list(range(x.ndim)):
            swap = (f" (to swap two axes, as PyTorch's transpose({axes[0]}, {axes[1]}), write swapaxes({axes[0]}, "
                    f"{axes[1]}))") if len(axes) == 2 and op == "transpose" else ""
            raise ValueError(f"{op}: axes {axes} are not a permutation of the {x.ndim} axes of shape {x.shape}; "
                             f"{op} takes one, as {'NumPy' if op == 'transpose' else 'PyTorch'}'s{swap}")
        self.perm = tuple(a % x.ndim for a in axes)
        return x.transpose(self.perm)

    def backward(self, dy):
        inverse = [0] * len(self.perm)
        for i, a in enumerate(self.perm):
            inverse[a] = i
        return (dy.transpose(inverse),)


def transpose(x, axes=None): return Transpose(axes)(as_tensor(x))


@takes_torch_keywords
def permute(x, axes): return Transpose(axes, "permute")(x)


class SwapAxes(Function):
    """y = x with two axes exchanged (a 0-d x takes axis 0 or -1, as in PyTorch: y = x).
    dx = dy with the same two axes exchanged back"""

    moves_values = True

    def __init__(self, axis1, axis2):
        self.axis1, self.axis2 = axis1, axis2

    def forward(self, x):
        for axis in (self.axis1, self.axis2):
            if not isinstance(axis, numbers.Integral) or not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
                raise AxisError(f"swapaxes: axis {axis!r} is out of range for shape {x.shape}")
        return self._swap(x)

    def backward(self, dy):
        return (self._swap(dy),)

    def _swap(self, a):
        return get_array_module(a).swapaxes(a, self.axis1, self.axis2) if a.ndim else a.reshape(())


def swapaxes(x, axis1, axis2): return SwapAxes(axis1, axis2)(x)


def swapdims(x, dim0, dim1):
    """PyTorch's swapdims (and transpose(x, dim0, dim1)): swapaxes under PyTorch's names."""
    return swapaxes(x, dim0, dim1)


def movedim(x, source, destination):
    """Axes ``source`` moved to ``destination`` (ints or sequences of them), the others kept in
    their order, as NumPy's moveaxis and PyTorch's movedim: a transpose."""
    x = as_tensor(x)

    def axes(a, which):
        given = a if isinstance(a, (tuple, list)) else (a,)
        out = [_method_axis("movedim", k, x.shape, takes_0d=True) for k in given]
        if len(set(out)) != len(out):
            raise ValueError(f"movedim: repeated axis in {which} {tuple(given)}")
        return out

    source, destination = axes(source, "source"), axes(destination, "destination")
    if len(source) != len(destination):
        raise ValueError(f"movedim: source {source} and destination {destination} need as many axes")
    if not x.ndim:  # (axis 0 or -1 of a 0-d tensor: nothing moves)
        return reshape(x, ())
    order = [k for k in range(x.ndim) if k not in source]
    for to, k in sorted(zip(destination, source)):
        order.insert(to, k)
    return transpose(x, tuple(order))


moveaxis = movedim  # (NumPy's name, and PyTorch's second one)


class BroadcastTo(Function):
    """y = x repeated along new leading axes and size-1 axes to ``shape``.
    dx = dy summed over those axes (each x element was copied into each of them)"""

    moves_values = True

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


def broadcast_to(x, shape):
    return BroadcastTo(lengths("broadcast_to", shape))(x)


class Squeeze(Function):
    """y = x without size-1 axes (all of them, or the given ones).   dx = dy reshaped back"""

    moves_values = True

    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x):
        self.in_shape = x.shape
        axes = None if self.axis is None else self.axis if isinstance(self.axis, (tuple, list)) else (self.axis,)
        if axes is not None:
            axes = tuple(whole("squeeze", "axis", a) for a in axes)
            for a in axes:
                if not -x.ndim <= a < x.ndim:
                    raise AxisError(f"squeeze: axis {a} is out of range for shape {x.shape}")
                if x.shape[a] != 1:
                    raise ValueError(f"squeeze: axis {a} of shape {x.shape} is not of size 1")
        return x.squeeze(axis=axes)

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


@takes_torch_keywords
def squeeze(x, axis=None): return Squeeze(axis)(as_tensor(x))


class Unsqueeze(Function):
    """y = x with a new size-1 axis at position ``axis``.   dx = dy without it"""

    moves_values = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        if isinstance(self.axis, bool) or not isinstance(self.axis, numbers.Integral):  # (one new axis, as PyTorch's)
            raise TypeError(f"unsqueeze: axis must be an int, got {self.axis!r}")
        if not -(x.ndim + 1) <= self.axis <= x.ndim:
            raise AxisError(f"unsqueeze: axis {self.axis} is out of range for shape {x.shape}")
        self.in_shape = x.shape
        return get_array_module(x).expand_dims(x, self.axis)

    def backward(self, dy):
        return (dy.reshape(self.in_shape),)


@takes_torch_keywords
def unsqueeze(x, axis): return Unsqueeze(axis)(x)


class Concatenate(Function):
    """y = the inputs joined along ``axis``.   Each input's gradient is its slice of dy."""

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, *xs):
        xp, self.axis = get_array_module(xs[0]), whole("concatenate", "axis", self.axis)
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


@takes_torch_keywords
def concatenate(tensors, axis=0):
    tensors = _sequence("concatenate", tensors)
    if not tensors:
        raise ValueError("concatenate: need at least one tensor")
    return Concatenate(axis)(*one_dtype(*tensors))


def _many(value) -> bool:
    """Whether ``value`` holds several things to take one by one (a list, a tuple, a range, an array or a
    tensor of them), not one (a number) nor text."""
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes)) and getattr(value, "ndim", 1) != 0


def _sequence(op, tensors) -> list:
    """``tensors`` (a list, a tuple or another iterable of tensors) as a list of tensors. One tensor or
    array (minitx's, NumPy's, CuPy's, PyTorch's: what has __array__ or __dlpack__) is refused, as PyTorch
    refuses it (NumPy would take its rows for the tensors), and so is what holds no tensors to iterate."""
    if isinstance(tensors, (Tensor, str)) or not hasattr(tensors, "__iter__") \
            or hasattr(tensors, "__array__") or hasattr(tensors, "__dlpack__"):
        raise TypeError(f"{op}: expected a list or tuple of tensors, got {type_name(tensors)}")
    return [as_tensor(t) for t in tensors]


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
        ndim, self.axis = xs[0].ndim + 1, whole("stack", "axis", self.axis)  # (the result's: the new axis may be any)
        if not -ndim <= self.axis < ndim:
            raise AxisError(f"stack: axis {self.axis!r} is out of range for stacking tensors of shape "
                            f"{xs[0].shape}; expected an int in [{-ndim}, {ndim})")
        return get_array_module(xs[0]).stack(xs, axis=self.axis)

    def backward(self, dy):
        xp = get_array_module(dy)
        return tuple(xp.take(dy, i, axis=self.axis) for i in range(dy.shape[self.axis]))


@takes_torch_keywords
def stack(tensors, axis=0):
    tensors = _sequence("stack", tensors)
    if not tensors:
        raise ValueError("stack: need at least one tensor")
    return Stack(axis)(*one_dtype(*tensors))


def hstack(tensors):
    """Joined along axis 1, or along axis 0 where they are 1-d (0-d ones taken as 1-d): PyTorch's and NumPy's."""
    tensors = [reshape(t, (1,)) if t.ndim == 0 else t for t in _sequence("hstack", tensors)]
    return concatenate(tensors, axis=0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Joined along axis 0, a 0-d or 1-d one taken as one row (PyTorch's and NumPy's)."""
    return concatenate([reshape(t, (1, -1)) if t.ndim < 2 else t for t in _sequence("vstack", tensors)], axis=0)


row_stack = vstack  # PyTorch's second name for it


def column_stack(tensors):
    """Joined along axis 1, a 0-d or 1-d one taken as one column (PyTorch's and NumPy's column_stack)."""
    return concatenate([reshape(t, (-1, 1)) if t.ndim < 2 else t for t in _sequence("column_stack", tensors)], axis=1)


def dstack(tensors):
    """Joined along axis 2, each taken as at least 3-d first (atleast_3d; PyTorch's and NumPy's dstack)."""
    return concatenate(atleast_3d(_sequence("dstack", tensors)), axis=2)


def _at_least(op, shape_of, tensors):
    """atleast_kd's rule (``op``): one tensor in, one out; several (or one list or tuple) in, a tuple out."""
    one = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    if len(tensors) == 1 and not one:
        tensors = tensors[0]
    with named(op):
        tensors = [as_tensor(t) for t in tensors]
    out = tuple(reshape(t, shape_of(t.shape)) for t in tensors)
    return out[0] if one else out


def atleast_1d(*tensors):
    """Each tensor with at least one axis: a 0-d one as shape (1,), the rest as they are (PyTorch's and NumPy's)."""
    return _at_least("atleast_1d", lambda s: s or (1,), tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two axes: 0-d as (1, 1), 1-d (n,) as one row (1, n)."""
    return _at_least("atleast_2d", lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three axes: 0-d as (1, 1, 1), 1-d (n,) as (1, n, 1), 2-d (m, n) as
    (m, n, 1) (PyTorch's and NumPy's, which put a 1-d one in the middle, not in front)."""
    return _at_least("atleast_3d", lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s), tensors)


def broadcast_shapes(*shapes):
    """The shape that all ``shapes`` broadcast to (PyTorch's broadcast_shapes; an int n counts as
    (n,)): aligned at their last axes, each axis the one length other than 1 among them."""
    shapes = [lengths("broadcast_shapes", s) for s in shapes]
    if any(n < 0 for shape in shapes for n in shape):
        raise ValueError(f"broadcast_shapes: a shape's lengths must be >= 0, got {', '.join(map(str, shapes))}")
    out = [1] * max(map(len, shapes), default=0)
    for shape in shapes:
        for k, n in enumerate(shape, start=len(out) - len(shape)):
            if n != out[k] and 1 not in (n, out[k]):
                raise ValueError(f"broadcast_shapes: shapes {', '.join(map(str, shapes))} do not broadcast: "
                                 f"lengths {out[k]} and {n} on axis {k - len(out)}")
            out[k] = n if out[k] == 1 else out[k]
    return tuple(out)


def broadcast_tensors(*tensors):
    """The tensors broadcast to one shape (broadcast_shapes), each a broadcast_to (its gradient dy
    summed over the axes it was broadcast along); PyTorch's and NumPy's broadcast_tensors."""
    tensors = [as_tensor(t) for t in tensors]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)


def block_diag(*tensors):
    """The tensors along the diagonal of one matrix, zeros elsewhere (PyTorch's block_diag): a 0-d
    one as (1, 1), a 1-d one as one row; dtypes as concatenate's. Each block padded with zeros to
    the full width (pad), then the rows joined: each block's gradient is its own part of dy."""
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        return Tensor(np.zeros((1, 0), dtype=np.float32))  # (PyTorch's, for no blocks)
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise ValueError(f"block_diag: blocks must have 2 or fewer dimensions, got shape {t.shape} for block {k}")
    blocks = atleast_2d(tensors)
    width, left, rows = sum(b.shape[1] for b in blocks), 0, []
    for b in one_dtype(*blocks):
        rows.append(pad(b, ((0, 0), (left, width - left - b.shape[1]))))
        left += b.shape[1]
    return concatenate(rows, axis=0)


def cartesian_prod(*tensors):
    """Every combination of one entry of each 1-d tensor, one per row, the last tensor varying
    fastest (PyTorch's cartesian_prod; one tensor is returned as it is): meshgrid, each grid
    flattened, stacked as columns."""
    tensors = [as_tensor(t) for t in tensors]
    if not tensors or any(t.ndim != 1 for t in tensors):
        raise ValueError(f"cartesian_prod: needs one or more 1-d tensors, got shapes {[t.shape for t in tensors]}")
    if len(set(t.dtype for t in tensors)) > 1:
        raise TypeError(f"cartesian_prod: the tensors need one dtype, got {', '.join(t.dtype.name for t in tensors)} "
                        "(as PyTorch's)")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], axis=1)


def combinations(x, r=2, with_replacement=False):
    """Every r entries of the 1-d x in increasing positions (with_replacement: positions that may
    repeat), one per row, as Python's itertools.combinations and PyTorch's combinations; r = 0
    gives an empty 1-d tensor. A getitem of x at the rows of positions (its gradient: dy added at
    each position picked)."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"combinations: needs a 1-d tensor, got shape {x.shape}")
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 0:
        raise ValueError(f"combinations: r must be a whole number >= 0, got {r!r}")
    if r == 0:
        return getitem(x, slice(0, 0))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(x.size), r)), dtype=np.int64).reshape(-1, r)
    return getitem(x, Tensor(get_array_module(x.data).asarray(rows)))


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids of n 1-d (or 0-d) tensors: each broadcast to the shape (len_1, ..., len_n),
    varying along its own axis (PyTorch's meshgrid). indexing "ij" (the default, PyTorch's, and
    without its warning) or "xy" (NumPy's default: the first two axes swapped, for images' x, y).
    A list of tensors is taken too, as PyTorch's ``meshgrid([a, b])``. Broadcast views: each
    grid's gradient is dy summed over the axes it was broadcast along."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = [as_tensor(t) for t in tensors]
    if not tensors or any(t.ndim > 1 for t in tensors):
        raise ValueError("meshgrid: needs one or more 0-d or 1-d tensors, got shapes "
                         f"{[t.shape for t in tensors]}")
    lengths = [t.size for t in tensors]
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0  # x varies along the columns, y along the rows
    shape = tuple(lengths[axes.index(a)] for a in range(len(tensors)))
    return tuple(broadcast_to(reshape(t, tuple(-1 if a == axis else 1 for a in range(len(shape)))), shape)
                 for t, axis in zip(tensors, axes))


@takes_torch_keywords
def split(x, indices_or_sections, axis=0):
    """Split along ``axis`` like numpy.split: a number of equal parts or a list of cut points.

    Each part is a slice (GetItem), so its gradient lands in the right place of x's.
    """
    x = as_tensor(x)
    if not isinstance(axis, numbers.Integral) or not -x.ndim <= axis < x.ndim:
        raise AxisError(f"split: axis {axis!r} does not exist in a tensor of shape {x.shape}; expected an "
                         f"int in [{-x.ndim}, {x.ndim})")
    n = x.shape[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError(f"split: axis {axis} of length {n} does not split into {indices_or_sections} equal parts")
        step = n // indices_or_sections  # 0 for an empty axis: as many empty parts
        cuts = [step * k for k in range(1, indices_or_sections)]
    elif _many(indices_or_sections):
        cuts = [whole("split", "a cut point", cut) for cut in indices_or_sections]
    else:
        raise TypeError(f"split: indices_or_sections must be an int (a number of equal parts) or a list of cut "
                        f"points, got {indices_or_sections!r}")
    bounds = [0] + cuts + [n]
    prefix = (slice(None),) * (axis % x.ndim)
    return [getitem(x, prefix + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


@takes_torch_keywords
def tensor_split(x, indices_or_sections, axis=0):
    """PyTorch's tensor_split (NumPy's array_split): pieces of x along ``axis``, each a slice
    (GetItem), so its gradient lands in its place of x's.

    An int s gives s pieces as equal as can be: the first n % s of them hold n // s + 1 entries,
    the rest n // s (n the axis's length). A list or tuple of ints, or a 1-d integer tensor, gives
    cut points c_1, c_2, ...: the pieces x[0:c_1], x[c_1:c_2], ..., x[c_last:], each read as a
    Python slice (a negative cut counts from the end; a cut past the end, or one below the cut
    before it, gives an empty piece). A 0-d integer tensor is a number of pieces."""
    return _tensor_split("tensor_split", as_tensor(x), indices_or_sections, axis)


def _tensor_split(op, x, indices_or_sections, axis):
    """tensor_split, its errors naming ``op`` (hsplit, vsplit and dsplit call it too)."""
    if not x.ndim:
        raise ValueError(f"{op}: needs a tensor with at least 1 dimension, got a 0-d tensor")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    (axis,) = normalize_axes(axis, x.ndim, op)
    n = x.shape[axis]
    given = indices_or_sections
    if isinstance(given, Tensor):
        if given.dtype.kind not in "iu" or given.ndim > 1:
            raise TypeError(f"{op}: a tensor of indices_or_sections must be 0-d (a number of pieces) or 1-d (cut "
                            f"points) and of an integer dtype, got shape {given.shape} and dtype {given.dtype.name}")
        (given,) = host_ints(given.data)  # its values, read once from the device: an int, or a list of them
    if isinstance(given, numbers.Integral) and not isinstance(given, bool):
        if given < 1:
            raise ValueError(f"{op}: the number of pieces must be >= 1, got {given}")
        size, larger = divmod(n, int(given))
        cuts = [k * size + min(k, larger) for k in range(1, int(given))]
    elif isinstance(given, (list, tuple)) and all(isinstance(c, numbers.Integral) and not isinstance(c, bool)
                                                  for c in given):
        cuts = [int(c) for c in given]
    else:
        raise TypeError(f"{op}: indices_or_sections must be an int (a number of pieces), a list or tuple of ints or "
                        f"a 1-d integer tensor (cut points), got {indices_or_sections!r}")
    bounds = [0] + cuts + [None]  # (None: to the end, as x[c_last:])
    prefix = (slice(None),) * axis
    return tuple(getitem(x, prefix + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:]))


def _split_at(op, x, indices_or_sections, axis, least_ndim):
    """hsplit, vsplit and dsplit: tensor_split along ``axis``, but an int must divide the axis's
    length (PyTorch's and NumPy's rule), and x needs ``least_ndim`` dimensions."""
    x = as_tensor(x)
    if isinstance(indices_or_sections, Tensor):  # (a 0-d one would be a count that escapes the check below)
        raise TypeError(f"{op}: indices_or_sections must be an int or a list or tuple of ints, as PyTorch's; "
                        "tensor_split takes a tensor")
    if x.ndim < least_ndim:
        raise ValueError(f"{op}: needs a tensor with at least {least_ndim} dimension{'s' * (least_ndim > 1)}, "
                         f"got shape {x.shape}")
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(indices_or_sections, bool):
        n = x.shape[axis]
        if indices_or_sections == 0 or n % indices_or_sections:
            raise ValueError(f"{op}: axis {axis} of length {n} does not split into {indices_or_sections} equal "
                             "parts; give a number of parts that divides it, or cut points")
    return _tensor_split(op, x, indices_or_sections, axis)


def hsplit(x, indices_or_sections):
    """tensor_split along axis 1, or axis 0 of a 1-d x; an int must divide the axis (PyTorch's)."""
    return _split_at("hsplit", x, indices_or_sections, 1 if as_tensor(x).ndim > 1 else 0, 1)


def vsplit(x, indices_or_sections):
    """tensor_split along axis 0 of an x with 2 dimensions or more; an int must divide the axis."""
    return _split_at("vsplit", x, indices_or_sections, 0, 2)


def dsplit(x, indices_or_sections):
    """tensor_split along axis 2 of an x with 3 dimensions or more; an int must divide the axis."""
    return _split_at("dsplit", x, indices_or_sections, 2, 3)


class Flip(Function):
    """y = x with the order of elements reversed along ``axis`` (None: all axes).
    dx = dy flipped back along the same axes"""

    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x):
        self.axes = normalize_axes(self.axis, x.ndim, "flip")
        return get_array_module(x).flip(x, axis=self.axes).copy()  # a copy, as PyTorch's: x += 1 leaves x's input

    def backward(self, dy):
        return (get_array_module(dy).flip(dy, axis=self.axes),)


@takes_torch_keywords
def flip(x, axis=None): return Flip(axis)(as_tensor(x))


def fliplr(x):
    """x with axis 1 reversed (left to right), as PyTorch's and NumPy's fliplr: flip(x, 1), for 2 or more axes."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"fliplr: needs a tensor with at least 2 axes, got shape {x.shape}")
    return flip(x, 1)


def flipud(x):
    """x with axis 0 reversed (upside down), as PyTorch's and NumPy's flipud: flip(x, 0), for 1 or more axes."""
    x = as_tensor(x)
    if x.ndim < 1:
        raise ValueError("flipud: needs a tensor with at least 1 axis, got a 0-d tensor")
    return flip(x, 0)


@takes_torch_keywords
def rot90(x, k=1, axes=(0, 1)):
    """x turned k quarter turns in the plane of ``axes``, from the first axis toward the second (k < 0
    the other way), as NumPy's rot90 and PyTorch's (dims=). Composed of flip and swapaxes: one turn
    is the second axis reversed, then the two swapped; two turns both reversed; three, the first
    reversed, then swapped."""
    x = as_tensor(x)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"rot90: k must be an int, got {k!r}")
    axes = tuple(axes)
    if len(axes) != 2 or x.ndim < 2:
        raise ValueError(f"rot90: needs two axes of a tensor with at least 2 axes, got axes {axes} of shape {x.shape}")
    first, second = (_method_axis("rot90", a, x.shape) for a in axes)
    if first == second:
        raise ValueError(f"rot90: the two axes must differ, got {axes}")
    turns = k % 4
    if turns == 1:
        return swapaxes(flip(x, second), first, second)
    if turns == 2:
        return flip(x, (first, second))
    if turns == 3:
        return swapaxes(flip(x, first), first, second)
    return x.clone()


class Roll(Function):
    """y = x shifted by ``shift`` places along ``axis`` (None: the flattened x), elements pushed
    off one end coming back at the other, as numpy.roll (a 0-d x takes axis 0 or -1, as minitx's
    other ops do: y = x).   dx = dy rolled by -shift"""

    def __init__(self, shift, axis=None):
        self.shift, self.axis = shift, axis

    def forward(self, x):
        shifts = self.shift if isinstance(self.shift, (tuple, list)) else (self.shift,)
        axes = self.axis if isinstance(self.axis, (tuple, list)) else (self.axis,)
        if self.axis is not None:
            normalize_axes(axes, x.ndim, "roll")
            if len(shifts) != len(axes):
                raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes; give one shift per axis")
        elif len(shifts) != 1:
            raise ValueError(f"roll: without an axis, shift must be one int, got {self.shift}")
        return self._roll(x, self.shift)

    def backward(self, dy):
        back = tuple(-s for s in self.shift) if isinstance(self.shift, (tuple, list)) else -self.shift
        return (self._roll(dy, back),)

    def _roll(self, a, shift):
        if not a.ndim:  # one element stays where it is, whatever the shift (numpy has no axis to give it)
            return a.reshape(())
        return get_array_module(a).roll(a, shift, self.axis)


def _roll_shift(shift):
    """shift as an int or a tuple of ints: ints, or integer tensors of one axis or none (read to the host
    once); a float or a bool refused by name, as PyTorch's roll refuses them (NumPy's would roll by
    1.5 as by 1)."""
    if isinstance(shift, Tensor) and shift.ndim == 1:
        if shift.dtype.kind not in "iu":
            raise TypeError(f"roll: shift must be an int or ints, got a tensor of dtype {shift.dtype.name}")
        shift = tuple(to_host(shift.data).tolist())
    parts = shift if isinstance(shift, (tuple, list)) else (shift,)
    try:
        ints = tuple(whole("roll", "shift", p) for p in parts)
    except TypeError:
        raise TypeError(f"roll: shift must be an int or ints, got {shift!r}") from None
    return ints if isinstance(shift, (tuple, list)) else ints[0]


@takes_torch_keywords
def roll(x, shift, axis=None): return Roll(_roll_shift(shift), axis)(x)


class Repeat(Function):
    """numpy.repeat: each element repeated ``repeats`` times along ``axis`` (None: x flattened
    first); repeats an int (or [k]) or one count per element. (PyTorch: repeat_interleave.)

    Written as y = x[src] along the axis, src = the source position of each output element;
    dx = zeros, then dx[src] += dy
    """

    def __init__(self, repeats, axis=None):
        self.repeats, self.axis = repeats, axis

    def forward(self, x):
        xp = get_array_module(x)
        self.in_shape = x.shape
        if self.axis is None:
            x, self.moved_axis = x.reshape(-1), 0
        else:
            (self.moved_axis,) = normalize_axes(self.axis, max(x.ndim, 1), "repeat")
            x = x.reshape(1) if x.ndim == 0 else x
        n = self.n = x.shape[self.moved_axis]
        counts = np.asarray(self.repeats)
        if counts.shape in ((), (1,)):  # one count for every element, as NumPy's and PyTorch's take [k]
            counts = np.broadcast_to(counts.reshape(()), (n,))
        if counts.shape != (n,) or counts.dtype.kind not in "iu" or (counts < 0).any():
            raise ValueError(f"repeat: repeats must be an int >= 0 or {n} of them (one per element), "
                             f"got {self.repeats!r}")
        self.src = xp.asarray(np.repeat(np.arange(n), counts))
        return xp.take(x, self.src, axis=self.moved_axis)

    def backward(self, dy):
        xp = get_array_module(dy)
        moved = xp.moveaxis(dy, self.moved_axis, 0)
        dx = xp.zeros((self.n,) + moved.shape[1:], dtype=dy.dtype)
        add_at(dx, self.src, moved)
        return (xp.moveaxis(dx, 0, self.moved_axis).reshape(self.in_shape),)


@takes_torch_keywords
def repeat(x, repeats, axis=None):
    """numpy.repeat: each element ``repeats`` times along axis (PyTorch: repeat_interleave)."""
    return Repeat(repeats, axis)(x)


class Tile(Function):
    """numpy.tile: x repeated reps[i] times along axis i as a whole block (PyTorch:
    Tensor.repeat). reps shorter than x.ndim is padded with leading 1s; longer, x gets leading
    size-1 axes.

    With x seen as shape s and y reshaped to (r_0, s_0, r_1, s_1, ...):
    dx = dy summed over the r axes (each block holds one copy of x)
    """

    def __init__(self, reps):
        self.reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)

    def forward(self, x):
        if any(isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 0 for r in self.reps):
            raise ValueError(f"tile: reps must be ints >= 0, got {self.reps}")
        d = max(x.ndim, len(self.reps))
        self.shape = (1,) * (d - x.ndim) + x.shape
        self.full_reps = (1,) * (d - len(self.reps)) + self.reps
        self.in_shape = x.shape
        return get_array_module(x).tile(x, self.reps)

    def backward(self, dy):
        interleaved = [n for pair in zip(self.full_reps, self.shape) for n in pair]
        blocks = dy.reshape(interleaved).sum(axis=tuple(range(0, len(interleaved), 2)))
        return (blocks.reshape(self.in_shape),)


def tile(x, reps):
    """numpy.tile: the whole of x repeated reps[i] times along axis i (PyTorch: Tensor.repeat)."""
    return Tile(reps)(x)


class SlidingWindows(Function):
    """Windows of ``size`` consecutive entries along ``axis``, one starting every ``step`` entries
    (PyTorch's Tensor.unfold; NumPy's sliding_window_view, which has no step). Along an axis of
    length n there are m = (n - size) // step + 1 windows; y has m in the axis's place and the
    window's entries on a new last axis:

        y[..., w, ..., k] = x[..., w * step + k, ...]      for w < m, k < size

    (A 0-d x is one entry along axis 0, and y is (size,) without a window axis, as PyTorch's.)
    y is a copy, not a view of x: where step < size the windows overlap, so a write into one
    window would show in its neighbours too.

    An entry x[i] lands in every window position (w, k) with w * step + k = i: several where
    the windows overlap (step < size), none where step > size skips it. So

        dx[..., i, ...] = sum of dy[..., w, ..., k] over w * step + k = i

    With k = i % step + q * step and w = i // step - q, the pairs of i are q = 0, 1, ..., Q - 1,
    Q = ceil(size / step), those with 0 <= w < m and k < size: one gather of dy (flattened to
    w * size + k, a 0 after it for the pairs outside) by a (Q, n) index, summed over q in that
    order (k ascending, as a loop over k would add them): a few array calls however large Q.
    """

    fresh_gradients = True  # dx: new entries, a sum of dy's

    def __init__(self, axis, size, step):
        self.axis, self.size, self.step = axis, size, step

    def forward(self, x):
        self.in_shape = x.shape
        x = x.reshape(1) if x.ndim == 0 else x
        self.shape = x.shape  # (1-d where x is 0-d: the shape dx is built in)
        self.count = (x.shape[self.axis] - self.size) // self.step + 1
        stride = x.strides[self.axis]
        # a strided view of x's memory (window w starts step entries after window w - 1), copied
        shape = self._in_axis(x.shape, self.count) + (self.size,)
        strides = self._in_axis(x.strides, stride * self.step) + (stride,)
        y = get_array_module(x).lib.stride_tricks.as_strided(x, shape, strides).copy()
        return y.reshape(self.size) if not self.in_shape else y

    def backward(self, dy):
        xp = get_array_module(dy)
        n, m, size, step = self.shape[self.axis], self.count, self.size, self.step
        dy = dy.reshape(self._in_axis(self.shape, m) + (size,))
        flat = xp.moveaxis(dy, self.axis, -2).reshape(dy.shape[:self.axis] + dy.shape[self.axis + 1:-1] + (m * size,))
        flat = xp.concatenate([flat, xp.zeros(flat.shape[:-1] + (1,), dtype=dy.dtype)], axis=-1)
        i, q = xp.arange(n), xp.arange(-(-size // step))[:, None]
        w, k = i // step - q, i % step + q * step
        index = xp.where((w >= 0) & (w < m) & (k < size), w * size + k, m * size)  # (Q, n)
        dx = xp.take(flat, index, axis=-1).sum(axis=-2)  # (..., Q, n) summed over q
        return (xp.moveaxis(dx, -1, self.axis).reshape(self.in_shape),)

    def _in_axis(self, values, value):
        """The tuple ``values`` (one per axis of x) with ``value`` in the windowed axis's place."""
        return tuple(values[:self.axis]) + (value,) + tuple(values[self.axis + 1:])


@takes_torch_keywords
def sliding_windows(x, axis, size, step):
    """Windows of ``size`` entries along ``axis``, one every ``step`` entries, on a new last axis:
    PyTorch's Tensor.unfold(dimension, size, step) (x.unfold calls this), NumPy's
    sliding_window_view with a step. [0, 1, 2, 3, 4, 5] by size 3, step 1 is [[0, 1, 2], [1, 2, 3],
    [2, 3, 4], [3, 4, 5]]; by size 2, step 3, [[0, 1], [3, 4]]. A copy (see SlidingWindows). Not
    F.unfold, which is PyTorch's F.unfold: im2col, the blocks of a convolution (minitx/ops/conv.py)."""
    op = "sliding_windows (Tensor.unfold)"
    x = as_tensor(x)
    for name, value in (("axis", axis), ("size", size), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{op}: {name} must be an int, got {value!r}")
    ndim = max(x.ndim, 1)  # (a 0-d x is one entry along axis 0 or -1, as in PyTorch)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{op}: axis {axis} is out of range for shape {x.shape}; expected an int in [{-ndim}, {ndim})")
    axis = int(axis) % ndim
    n = x.shape[axis] if x.ndim else 1
    if size < 0:
        raise ValueError(f"{op}: size must be >= 0, got {size}")
    if size > n:
        raise ValueError(f"{op}: size {size} is larger than axis {axis}'s length {n} (shape {x.shape}); a window "
                         f"needs 0 <= size <= {n}")
    if step <= 0:
        raise ValueError(f"{op}: step must be >= 1, got {step}")
    return SlidingWindows(axis, int(size), int(step))(x)


def pad_widths(pad, shape, cropping=False) -> list:
    """``pad`` as a list of (before, after) pairs, one per axis of ``shape``. Given as PyTorch's
    F.pad takes it, a flat sequence of 2k ints for the last k axes, the last axis first
    ((left, right) of the last axis, then (top, bottom) of the one before, ...), or as NumPy's
    np.pad: an int for every side of every axis, or one (before, after) pair per axis, the first
    axis first. Checked: all >= 0, or with ``cropping`` negative widths too (they cut elements
    off), as long as an axis keeps >= 0."""
    width = pad
    if isinstance(width, bool) or not (isinstance(width, numbers.Integral) or hasattr(width, "__iter__")):
        raise TypeError(f"pad: the widths must be ints, got {pad!r}")
    if isinstance(width, numbers.Integral):
        width = [(int(width), int(width))] * len(shape)
    elif all(isinstance(w, numbers.Integral) for w in width):  # PyTorch's flat form
        if len(width) % 2 or len(width) > 2 * len(shape):
            raise ValueError(f"pad: the flat pad {tuple(pad)} gives (before, after) pairs for the last axes, the "
                             f"last axis first, so it needs an even number of ints, at most {2 * len(shape)} for "
                             f"shape {shape}; or give one (before, after) pair per axis, the first axis first")
        pairs = [tuple(width[k:k + 2]) for k in range(0, len(width), 2)]
        width = [(0, 0)] * (len(shape) - len(pairs)) + pairs[::-1]
    width = [tuple(w) if isinstance(w, (tuple, list)) else (w,) for w in width]
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for w in width for v in w):
        raise TypeError(f"pad: the widths must be ints, got {pad!r}")
    if len(width) != len(shape) or any(len(w) != 2 or (min(w) < 0 and not cropping) for w in width):
        least = "" if cropping else " >= 0"
        raise ValueError(f"pad: pad {pad} must give (before, after){least} "
                         f"for each of the {len(shape)} axes of shape {shape}"
                         + ("" if cropping else " (negative widths crop only in modes 'constant' and 'circular')"))
    for axis, ((before, after), n) in enumerate(zip(width, shape)):
        if n + min(before, 0) + min(after, 0) < 0:
            raise ValueError(f"pad: pad ({before}, {after}) crops more than the {n} elements of axis {axis}")
    return width


class Pad(Function):
    """y = x surrounded by ``value``: pad_width[i] = (before, after) elements on axis i; a
    negative width crops that many elements instead (PyTorch's F.pad does both).

    Per axis of size n, the kept part of x, x[max(-before, 0) : n - max(-after, 0)], lands in y
    at max(before, 0); everything else in y is ``value``.
    dx = zeros, with the kept part set to dy there (a cropped element gets no gradient)

    Derivation: docs/backprop/padding-and-resampling.md
    """

    def __init__(self, pad_width, value=0.0):
        self.pad_width, self.value = pad_width, value

    def forward(self, x):
        xp = get_array_module(x)
        width = pad_widths(self.pad_width, x.shape, cropping=True)
        self.kept, self.placed, out_shape = [], [], []
        for (before, after), n in zip(width, x.shape):
            start, stop = max(-before, 0), n - max(-after, 0)
            self.kept.append(slice(start, stop))
            self.placed.append(slice(max(before, 0), max(before, 0) + stop - start))
            out_shape.append(n + before + after)
        self.kept, self.placed, self.in_shape = tuple(self.kept), tuple(self.placed), x.shape
        y = xp.full(out_shape, self.value, dtype=x.dtype)
        y[self.placed] = x[self.kept]
        return y

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        dx[self.kept] = dy[self.placed]
        return (dx,)


def _edge_sources(mode, before, after, n, axis):
    """Source position along an axis of size n for each of the before + n + after outputs."""
    if mode == "circular":
        return _circular_sources(before, after, n, axis)
    p = np.arange(-before, n + after)
    if mode == "replicate":
        if n == 0 and before + after:
            raise ValueError(f"pad: replicate padding of axis {axis} needs a non-empty axis")
        return np.clip(p, 0, max(n - 1, 0))
    if before >= max(n, 1) or after >= max(n, 1):
        raise ValueError(f"pad: reflect padding ({before}, {after}) of axis {axis} must be smaller than its "
                         f"size {n} (the mirror excludes the edge element)")
    p = np.abs(p)
    return np.where(p > n - 1, 2 * (n - 1) - p, p)


def _circular_sources(before, after, n, axis):
    """Circular padding's sources, PyTorch's: negative widths crop first, leaving the k elements
    kept = x[start : start + k], start = max(-before, 0); the positive widths b = max(before, 0)
    and a = max(after, 0) then wrap around kept: output i reads kept[(i - b) mod k], i.e. x at
    start + (i - b) mod k, for i in [0, b + k + a). Wrapping at most once: b and a <= k."""
    start, k = max(-before, 0), n - max(-before, 0) - max(-after, 0)
    b, a = max(before, 0), max(after, 0)
    if b > k or a > k:
        kept = f"its size {n}" if k == n else f"the {k} of its {n} elements that the negative width leaves"
        raise ValueError(f"pad: circular padding ({before}, {after}) of axis {axis} can wrap around once at most: "
                         f"each side must not exceed {kept}")
    return start + np.arange(-b, k + a) % max(k, 1)


class PadEdges(Function):
    """y = x padded with its own values: pad_width as in Pad; mode 'reflect' mirrors x without
    repeating the edge ([a b c] -> c b [a b c] b a), 'replicate' repeats the edge element
    ([a b c] -> a a [a b c] c c), 'circular' wraps around to the other end ([a b c] -> b c
    [a b c] a b; negative widths crop first, see _circular_sources); numpy calls these 'reflect',
    'edge' and 'wrap'.

    Written as y = x[src_0, src_1, ...] (an open grid of source positions per axis);
    dx = zeros, then dx[src grid] += dy: each entry of x gets the sum of dy over the outputs
    that copy it (an edge element, or a wrapped one, is copied several times; a cropped one,
    never: 0)

    Derivation: docs/backprop/padding-and-resampling.md
    """

    def __init__(self, pad_width, mode):
        if mode not in ("reflect", "replicate", "circular"):
            raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
        self.pad_width, self.mode = pad_width, mode

    def forward(self, x):
        xp = get_array_module(x)
        width = pad_widths(self.pad_width, x.shape, cropping=self.mode == "circular")
        sources = [xp.asarray(_edge_sources(self.mode, b, a, n, axis))
                   for axis, ((b, a), n) in enumerate(zip(width, x.shape))]
        self.grid, self.in_shape = xp.ix_(*sources), x.shape
        return x[self.grid] if x.ndim else x.copy()

    def backward(self, dy):
        if not dy.ndim:
            return (dy.copy(),)
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        add_at(dx, self.grid, dy)
        return (dx,)


def pad(x, pad, mode="constant", value=0.0):
    """Pad with ``value`` (mode 'constant', where a negative width crops), or with x's own values:
    'reflect' (mirror, edge not repeated), 'replicate' (edge repeated) or 'circular' (wrapped
    around from the other end, at most once; a negative width crops), see PadEdges. The
    arguments are PyTorch's F.pad's, in its order; ``pad`` is read by pad_widths: PyTorch's flat
    form, (left, right) of the last axis first ((0, 2): two more entries at the end of the last
    axis), or NumPy's (an int, or one (before, after) pair per axis, the first axis first)."""
    if mode == "constant":
        x = as_tensor(x)
        value = 0.0 if value is None else value  # (PyTorch's default: None, meaning 0)
        if not isinstance(value, (numbers.Number, np.generic)):  # a tensor would get no gradient, silently
            raise TypeError(f"pad: value must be a number, got {type(value).__name__} (as PyTorch's F.pad)")
        check_fits("pad", "value", value, x.dtype)
        return Pad(pad, value)(x)
    if value not in (None, 0, 0.0):
        raise ValueError(f"pad: value {value!r} is for mode 'constant'; mode {mode!r} pads with x's own values")
    return PadEdges(pad, mode)(x)


def pixel_shuffle(x, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r]: each group of r^2 channels laid out as an r x r block of
    pixels (Shi et al. 2016), a reshape and a transpose, as PyTorch's."""
    r = _factor("pixel_shuffle", upscale_factor)
    if x.ndim < 3:
        raise ValueError(f"pixel_shuffle: x must be [*, C, H, W] with at least 3 axes, got shape {x.shape}")
    *lead, channels, height, width = x.shape
    if channels % (r * r):
        raise ValueError(f"pixel_shuffle: {channels} channels do not divide into groups of {r}^2")
    c = channels // (r * r)
    y = reshape(x, (*lead, c, r, r, height, width))
    n = len(lead)
    y = transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return reshape(y, (*lead, c, height * r, width * r))


def pixel_unshuffle(x, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W]: pixel_shuffle undone."""
    r = _factor("pixel_unshuffle", downscale_factor)
    if x.ndim < 3:
        raise ValueError(f"pixel_unshuffle: x must be [*, C, H, W] with at least 3 axes, got shape {x.shape}")
    *lead, c, height, width = x.shape
    if height % r or width % r:
        raise ValueError(f"pixel_unshuffle: height {height} and width {width} must be multiples of {r}")
    y = reshape(x, (*lead, c, height // r, r, width // r, r))
    n = len(lead)
    y = transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return reshape(y, (*lead, c * r * r, height // r, width // r))


def channel_shuffle(x, groups):
    """[N, C, *] with C = g m channels read as a g x m grid, transposed: channel i m + j moves to
    j g + i, so that the next grouped convolution's groups each see every group's channels
    (ShuffleNet, Zhang et al. 2018), as PyTorch's; a reshape and a transpose."""
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"channel_shuffle: groups must be an int >= 1, got {groups!r}")
    g = int(groups)
    if x.ndim < 3:
        raise ValueError(f"channel_shuffle: x must be [N, C, *] with at least 3 axes, got shape {x.shape}")
    n, channels, *rest = x.shape
    if channels % g:
        raise ValueError(f"channel_shuffle: {channels} channels do not divide into {g} groups")
    y = reshape(x, (n, g, channels // g, *rest))
    return reshape(swapaxes(y, 1, 2), x.shape)


def native_channel_shuffle(x, groups):
    """channel_shuffle under PyTorch's other name for it (its kernel's)."""
    return channel_shuffle(x, groups)


def _factor(op, r):
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 1:
        raise ValueError(f"{op}: the factor must be an int >= 1, got {r!r}")
    return int(r)
