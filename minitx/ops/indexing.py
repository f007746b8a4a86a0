"""Ops that pick elements by index: getitem (x[index]), gather, take_along_dim, scatter, scatter_add,
scatter_reduce, index_add, index_put, index_reduce, slice_scatter, select_scatter, diagonal_scatter, tril/triu,
diagonal (diag, diag_embed, trace), embedding lookups and bags, one_hot, the selections nonzero, argwhere and
masked_select, unravel_index, and the counts bincount, histc, histogram, histogramdd, unique and
unique_consecutive; and getitem's write, setitem (x[index] = v).

Values are not changed, only where they go, so each backward sends dy back to where each
element came from, ADDING where one element was picked several times (a repeated index, an id
used twice): a scatter-add, ``dx[index] += dy`` (``add_at``).
Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

import builtins
import fractions
import math
import numbers
from typing import NamedTuple

import numpy as np

from minitx import backend, kernels, sync
from minitx.autograd.function import Function
from minitx.autograd.grad_mode import is_grad_enabled
from minitx.autograd.inplace import write_unseen
from minitx.autograd.tensor import Tensor, _method_axis, as_tensor
from minitx.autograd.writes import base_of, in_place, record_write, refusal
from minitx.backend import get_array_module
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import as_indices, check_bool, check_fits, flag, whole
from minitx.ops.elementwise import broadcasts_to, dy_where, filled, masked_fill, where
from minitx.ops.reduction import normalize_axes, quiet_float_errors

__all__ = ["GetItem", "SetItem", "WriteThroughView", "Gather", "TakeAlongDim", "Scatter", "ScatterAdd", "ScatterReduce",
           "IndexAdd", "Tril", "Triu", "Diagonal", "DiagEmbed", "Embedding", "EmbeddingBag", "MaskedSelect"]


def check_integer(op, what, index):
    """Raise unless ``index`` is an integer array."""
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {index.dtype.name}")


def check_indices(op, what, index, size):
    """Raise unless ``index`` is an integer array with every value in [0, size)."""
    check_integer(op, what, index)
    sync.check_in_range(index, size, lambda value: IndexError(f"{op}: {what} {value} is out of range [0, {size})"))


def _is_basic_index(index) -> bool:
    """Slices, ints, None and Ellipsis select each element at most once (a view in numpy)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def add_at(target, index, values):
    """target[index] += values, adding (not overwriting) where an index repeats."""
    ufunc_at("add", target, index, values)


#: the dtypes CuPy's scatter kernels (cupyx.scatter_add/max/min) take; others are widened
_CUPY_SCATTER = {"add": ("int32", "uint32", "uint64", "float16", "float32", "float64"),
                 "maximum": ("int32", "uint32", "float32", "float64"), "minimum": ("int32", "uint32", "float32", "float64")}


def ufunc_at(ufunc, target, index, values, axis=None):
    """target[index] = ufunc(target[index], values) entry by entry, so that every entry of a
    repeated index counts (NumPy's ufunc.at) for ufunc "add", "multiply", "maximum", "minimum".

    On CuPy: its scatter kernels, for the dtypes they take (_CUPY_SCATTER); an integer add in
    another dtype is done in uint64 and wrapped back (the same sum modulo 2^bits); a maximum or
    minimum of narrower integers, booleans or float16 in int32 or float32 (exact); what is left
    (multiply, and int64 maxima), one step per position along ``axis`` (ufunc_at_by_steps).
    """
    xp = get_array_module(target)
    if xp.__name__ != "cupy":
        getattr(np, ufunc).at(target, index, values)
        return
    import cupyx

    if not hasattr(values, "astype"):  # a Python number (a count): one value per indexed entry
        values = xp.full(xp.broadcast(*index).shape, values, dtype=target.dtype)
    scatter = {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max, "minimum": cupyx.scatter_min}.get(ufunc)
    supported = _CUPY_SCATTER.get(ufunc, ())
    wide = None if scatter is None or target.dtype.name in supported else (
        "uint64" if ufunc == "add" and target.dtype.kind in "biu" else
        "int32" if target.dtype.kind in "biu" and target.dtype.itemsize < 4 else
        "float32" if target.dtype == np.float16 else None)
    if target.dtype.name in supported:
        if ufunc == "add" and backend.is_floating(target.dtype):  # (integers sum alike in any order)
            backend.check_deterministic("a floating-point scatter-add on the GPU (cupyx.scatter_add, by atomics)")
        scatter(target, index, values.astype(target.dtype, copy=False))
    elif wide is not None:
        widened = target.astype(wide)
        scatter(widened, index, values.astype(target.dtype, copy=False).astype(wide))
        target[...] = widened.astype(target.dtype)  # an integer sum wraps as it would have in its dtype
    else:
        ufunc_at_by_steps(getattr(xp, ufunc), target, index, values, axis)


def ufunc_at_by_steps(ufunc, target, index, values, axis):
    """target[index] = ufunc(target[index], values) for an index made by _along_index(...,
    axis), one step per position along ``axis``: within a step the targets never repeat, so a
    plain assignment counts each entry (CuPy has no scatter-multiply)."""
    if axis is None:
        raise TypeError(f"{ufunc.__name__} at repeated indices of {target.dtype} on the GPU needs the index's axis")
    index = get_array_module(target).broadcast_arrays(*index)
    for k in range(values.shape[axis]):
        step = (slice(None),) * axis + (k,)
        picked = tuple(i[step] for i in index)
        target[picked] = ufunc(target[picked], values[step])


class GetItem(Function):
    """y = x[index]: numpy indexing with slices, integers, integer arrays and boolean masks.

    dx = zeros like x, then dx[index] += dy. With integer arrays an element may be picked
    several times (x[[0, 0]]); its gradient is then the sum over the picks, hence a
    scatter-add rather than an assignment. No gradient for the index arrays.

    The index arrays that tensors gave come in as inputs after x, at the positions ``slots``
    of ``index`` (None there): saved for backward, they are guarded as any saved array is
    (minitx.autograd.inplace), so a write into the index tensor before backward cannot
    silently move the gradient.

    Derivation: docs/backprop/indexing.md
    """

    def __init__(self, index, slots=()):
        self.index, self.slots = index, tuple(slots)
        # a basic index only picks values (a view); an advanced one may pick an element twice, whose
        # gradients then add up in float32 for a 16-bit x, as any op's
        self.moves_values = not self.slots and _is_basic_index(index)

    def forward(self, x, *arrays):
        if self.slots:
            self.index = _with_arrays(self.index, self.slots, arrays)
            self.save_for_backward(*arrays)
        self.in_shape, self.in_dtype = x.shape, x.dtype
        try:
            y = x[self.index]
        except IndexError as error:
            raise IndexError(f"getitem: index {self.index!r} does not fit shape {x.shape}: {error}") from None
        if isinstance(y, np.generic):  # integers only: NumPy gives a copied scalar; a 0-d view, as CuPy and PyTorch
            y = x[(*self.index, ...) if isinstance(self.index, tuple) else (self.index, ...)]
        return y

    fresh_gradients = True  # dx: new zeros with dy laid in

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        if _is_basic_index(self.index):
            dx[self.index] = dy
        else:
            add_at(dx, self.index, dy)
        return (dx,) + (None,) * len(self.slots)

    def backward_into(self, dy, grad):
        """dy added into the places it came from in ``grad``, x's running gradient: a tensor read
        a piece at a time (x[t] for each step t of a recurrent layer) then costs one table of
        zeros, not one per piece, with the plain sum's bits. Only for a basic index (each place
        once: an integer array's repeats would be added one by one, not summed first as the engine
        does), where dy has grad's dtype (the engine would round a 16-bit x's float32 dy first)
        and grad is an array (a 0-d sum can be NumPy's scalar)."""
        if not _is_basic_index(self.index) or grad.dtype != dy.dtype or isinstance(grad, np.generic):
            return False
        grad[self.index] += dy
        return True


def _with_arrays(index, slots, arrays):
    """``index`` with the index tensors' arrays put back at their positions ``slots``."""
    if not slots:
        return index
    parts = list(index) if isinstance(index, tuple) else [index]
    for slot, array in zip(slots, arrays):
        parts[slot] = array
    return tuple(parts) if isinstance(index, tuple) else parts[0]


def _convert_index(x: Tensor, index, op="getitem"):
    """(index, tensors, slots): the index with tensors and lists inside replaced by arrays on
    x's device, their dtype checked; the index tensors themselves, and their positions among
    the index's parts (GetItem takes them as inputs, so its saved arrays are guarded). A NumPy
    array is copied: the caller may write into it before backward, and no guard sees it.

    On CuPy arrays, integer index arrays are also checked against their axis (CuPy would wrap
    an out-of-range index around silently; numpy raises): before the upload for host arrays
    and lists, with one device sync for arrays already on the GPU.
    """
    parts = index if isinstance(index, tuple) else (index,)
    xp = backend.get_array_module(x.data)
    host, tensors, slots = [], [], []
    for position, part in enumerate(parts):
        if isinstance(part, Tensor):
            if part.device != x.device:
                raise RuntimeError(f"{op}: index on {part.device} for a tensor on {x.device}")
            tensors.append(part)
            slots.append(position)
            part = part.data
        elif isinstance(part, (list, np.ndarray)):
            part = np.array(part) if xp is np else np.asarray(part)  # (the upload below copies too)
            if part.size == 0 and part.dtype.kind not in "iub":  # [] (float64 to NumPy): an empty integer index
                part = part.astype(np.int64)
        if hasattr(part, "dtype") and part.dtype.kind not in "iub":
            raise TypeError(f"{op}: index arrays must be integer or boolean, got dtype {part.dtype.name}")
        host.append(part)
    if xp is not np:
        _check_index_bounds(x.shape, host, op)
    converted = [None if position in slots else xp.asarray(part) if isinstance(part, np.ndarray) else part
                 for position, part in enumerate(host)]
    return (tuple(converted) if isinstance(index, tuple) else converted[0]), tensors, slots


def _check_index_bounds(shape, parts, op="getitem"):
    """Raise IndexError, as numpy would, when an integer index array points outside its axis.

    Each part of an index consumes axes: an int, slice or integer array one, a boolean array
    as many as it has dimensions, None and True/False none, and ``...`` what the others leave.
    """
    def consumed(part):
        if part is None or part is Ellipsis or isinstance(part, (bool, np.bool_)):
            return 0
        return part.ndim if getattr(part, "dtype", None) is not None and part.dtype.kind == "b" else 1

    axis = 0
    for part in parts:
        if part is Ellipsis:
            axis += len(shape) - sum(consumed(q) for q in parts)
            continue
        if getattr(part, "dtype", None) is not None and part.dtype.kind in "iu" and part.ndim and part.size \
                and axis < len(shape):
            size = shape[axis]
            sync.check_in_range(part, size, lambda value, axis=axis, size=size: IndexError(
                f"{op}: index {value} is out of bounds for axis {axis} with size {size}"), low=-size)
        axis += consumed(part)


def getitem(x, index):
    index, tensors, slots = _convert_index(x, index)
    return GetItem(index, slots)(x, *tensors)


class SetItem(Function):
    """x[index] = v while a gradient is recorded: y is a copy of x with v written where the index
    points, and becomes x's array (``setitem`` below).

        dx = dy, but dx[index] = 0     (the values the write replaced reach nothing)
        dv = dy[index]                 (the engine sums it to v's shape where v was broadcast)

    An integer array may name one element several times; one write stays there (NumPy and CuPy
    do not say which), so only that entry of v gets the element's gradient, as finite
    differences agree (PyTorch gives it to every entry written there). To know which one, the
    entries' positions in v are written first (``landed``: -1 where nothing was written), and
    the values are placed from them; backward keeps only the written places and their entries.

    Derivation: docs/backprop/indexing.md
    """

    moves_values = True  # (16-bit arrays go in as they are: a write rounds nothing)
    fresh_gradients = True
    was = None  # in place: the region's values before, until the write is recorded (settle)

    def __init__(self, index, slots=(), in_place=False):
        self.index, self.slots, self.in_place = index, tuple(slots), in_place

    def forward(self, x, v, *arrays):
        self.index = _with_arrays(self.index, self.slots, arrays)
        y = x if self.in_place else x.copy()  # (in place: nothing reads the region's old values, writes.in_place)
        target = y[self.index].shape  # (a view for a basic index; a copy for an advanced one)
        self.leading = max(v.ndim - len(target), 0)  # v may have more axes, of length 1, in front
        v = v.reshape(v.shape[self.leading:])
        if _is_basic_index(self.index):  # each element named at most once
            if self.in_place:
                self.was = y[self.index].copy()  # (put back if the write is not recorded after all: settle)
                write_unseen(y, self.index, v)
            else:
                y[self.index] = v
            return y
        xp = get_array_module(x)
        landed = xp.full(x.shape, -1, dtype=np.int64)
        landed[self.index] = xp.arange(int(np.prod(target)), dtype=np.int64).reshape(target)
        places = xp.flatnonzero(landed >= 0)  # the written elements of x, flat, and the entries of v there
        entries = landed.reshape(-1)[places]
        y.reshape(-1)[places] = xp.broadcast_to(v, target).reshape(-1)[entries]
        self.target = target
        self.save_for_backward(places, entries)
        return y

    def settle(self, x) -> None:
        """After a write in place: forget the region's old values, or, where x did not take this
        op's result (an error on the way, such as detect_anomaly's), put them back."""
        was, self.was = self.was, None
        if was is not None and x._ctx is not self:
            write_unseen(x.data, self.index, was)

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.array(dy, copy=True, order="C")  # (C order: reshape(-1) below is then a view to write through)
        if not self.saved:
            dx[self.index] = 0
            dv = xp.array(dy[self.index], copy=True)
        else:
            places, entries = self.saved
            dx.reshape(-1)[places] = 0
            dv = xp.zeros(int(np.prod(self.target)), dtype=dy.dtype)
            dv[entries] = dy.reshape(-1)[places]
            dv = dv.reshape(self.target)
        return (dx, dv.reshape((1,) * self.leading + dv.shape)) + (None,) * len(self.slots)


def _is_its_own_part(x, index, value) -> bool:
    """Whether ``value`` is the view x[index] itself (x[index] = x[index]: nothing to write)."""
    viewed = base_of(value) if isinstance(value, Tensor) else None
    return (viewed is not None and viewed[0] is x and isinstance(viewed[1], GetItem)
            and _same_index(viewed[1].index, index))


def _same_index(a, b) -> bool:
    """Whether two basic indices are the same, part for part and type for type (True is not 1)."""
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return len(a) == len(b) and all(type(p) is type(q) and (p is q or p == q) for p, q in zip(a, b))


class WriteThroughView(Function):
    """y = x with the part that a view op shows replaced by v: a recorded write into a view of x
    (``u = x[1:]; u.exp_()``, ``x.T[0] = v``) as a write into x (minitx.autograd.writes), as
    PyTorch's CopySlices. ``view`` is the view op (a Function that moves no values: an index, a
    reshape, a transpose); view(y), the part, is y's memory, so writing it writes y.

        dx = dy, but view(dx) = 0     (the values the write replaced reach nothing)
        dv = view(dy)
    """

    moves_values = True  # (16-bit arrays go in as they are: a write rounds nothing)
    fresh_gradients = True

    def __init__(self, view: Function):
        self.view = view

    def forward(self, x, v):
        y = x.copy()  # (C order: a reshape of it is a view, whose write lands in y)
        self.view.forward(y)[...] = v
        return y

    def backward(self, dy):
        dx = get_array_module(dy).array(dy, copy=True, order="C")
        self.view.forward(dx)[...] = 0
        return dx, self.view.forward(dy).copy()


def fill_diagonal_(x, fill_value, wrap=False):
    """Tensor.fill_diagonal_: ``fill_value`` written on x's main diagonal, x[i, i, ...] (PyTorch's,
    NumPy's fill_diagonal), of a 2-d tensor or one whose axes are all of one length. In a matrix
    taller than wide, ``wrap=True`` starts again one row below the end of each N x N block (N
    columns), as PyTorch's and NumPy's. Written as x.masked_fill(diagonal, fill_value): the
    entries it fills get gradient 0."""
    if x.ndim < 2 or (x.ndim > 2 and len(set(x.shape)) > 1):
        raise ValueError(f"fill_diagonal_: expected a tensor of 2 dimensions, or more all of one length, got "
                         f"shape {x.shape}")
    if isinstance(fill_value, Tensor) or not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_: fill_value must be a number, got {type(fill_value).__name__}")
    if not isinstance(wrap, bool):
        raise TypeError(f"fill_diagonal_: wrap must be True or False, got {wrap!r}")
    check_fits("fill_diagonal_", "fill_value", fill_value, x.dtype)  # (2.7 into integers: refused, not cut)
    diagonal = np.zeros(x.shape, dtype=bool)
    np.fill_diagonal(diagonal, True, wrap=wrap)
    return x._in_place("fill_diagonal_", masked_fill, Tensor(backend.to_device(diagonal, x.device)), fill_value)


def setitem(x, index, value):
    """``x[index] = value`` (Tensor.__setitem__): ``value`` (a number, an array, a tensor on x's
    device) broadcast to x[index]'s shape and written into x, as NumPy and PyTorch do.

    The value must cast to x's dtype by NumPy's 'same_kind' rule: a float is not truncated into
    an integer tensor (a bool tensor takes the numbers 0 and 1 too). An index or a value that
    does not fit is refused before anything is written.

    Where no gradient is recorded the write goes into x's own array: the arrays and views that
    share it see it, and graphs that saved it refuse their backward (minitx.autograd.inplace).

    While a gradient is recorded (x or the value requires grad), it is the op SetItem: x gets a
    new array, a copy with the value written, and x's gradient reaches the value where it
    landed and x's old values elsewhere. Ops that used x before keep its old values and send
    their gradients there, and so do the hooks registered on x before, as PyTorch's; views of x
    taken before are made again from its new array, so they show the write; and a write into a
    view of another tensor (``y[0][1] = v``) goes into that tensor (minitx.autograd.writes).
    Refused, as in PyTorch: a leaf that requires grad; and memory minitx cannot write through
    (a view of such a leaf, of an array from outside, a broadcast: writes.refusal).
    """
    op = "setitem"
    index, tensors, slots = _convert_index(x, index, op)
    if isinstance(value, Tensor):
        if value.device != x.device:
            raise RuntimeError(f"{op}: the value is on {value.device} and the tensor on {x.device}; move it "
                               "with .to(device) first")
    elif x.dtype.kind == "b" and isinstance(value, numbers.Integral) and value in (0, 1):
        value = as_tensor(bool(value), like=x)
    else:
        value = as_tensor(value, like=x).to(x.device)
    if not backend.can_cast(value.dtype, x.dtype):
        what = "only 0 and 1 are booleans" if x.dtype.kind == "b" else "a float is not truncated into integers"
        raise TypeError(f"{op}: a value of dtype {value.dtype.name} cannot be written into a tensor of dtype "
                        f"{x.dtype.name} (same-kind casting: {what}); convert one of them first")
    if _is_its_own_part(x, index, value):
        return  # x[i] += v: Python's x[i] = (x[i] += v), whose write went into x already through the view
    full_index = _with_arrays(index, slots, [t.data for t in tensors])
    leading = _check_fits(op, x, full_index, value)
    recorded = is_grad_enabled() and (x.requires_grad or value.requires_grad)
    if not recorded:
        x._writable(op)[full_index] = value.data.reshape(value.shape[leading:])  # (a mask takes no extra axes)
        return
    if x.is_leaf and x.requires_grad:
        raise RuntimeError(f"{op}: a leaf tensor that requires grad cannot be written while a graph is recorded "
                           "(its gradient would not see the write); write under minitx.no_grad(), as the "
                           "optimizers do, or build a new tensor: F.where(mask, v, x), x.masked_fill(mask, v)")
    why = refusal(x)
    if why is not None:
        raise RuntimeError(f"{op}: {why}")
    # (SetItem's apply, not its call through autocast: x's dtype is kept)
    op = SetItem(index, slots, in_place=not tensors and _is_basic_index(full_index) and in_place(x, full_index))
    try:
        record_write(x, lambda old: op.apply(old, value, *tensors))
    finally:
        if op.in_place:
            op.settle(x)


def _check_fits(op, x, full_index, value):
    """Raise, naming op and the shapes, unless the index fits x and value broadcasts to
    x[index] by NumPy's rule for assignment (extra leading axes of length 1 allowed); return
    how many such axes value has."""
    try:
        target = x.data[full_index].shape
    except IndexError as error:
        raise IndexError(f"{op}: index {full_index!r} does not fit a tensor of shape {x.shape}: {error}") from None
    leading = len(value.shape) - len(target)
    core = value.shape[max(leading, 0):]
    try:
        fits = all(n == 1 for n in value.shape[:max(leading, 0)]) and np.broadcast_shapes(core, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: a value of shape {value.shape} cannot be written into x[{full_index!r}], of shape "
                         f"{target} (x has shape {x.shape}): it must broadcast to it")
    return max(leading, 0)


def _along_index(index, axis):
    """The full numpy index that picks, at each position p of ``index``, the element whose
    coordinate on ``axis`` is index[p] and whose other coordinates are p's own."""
    xp = get_array_module(index)
    grids = []
    for d, n in enumerate(index.shape):
        if d == axis:
            grids.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            grids.append(xp.arange(n).reshape(shape))
    return tuple(grids)


def _check_along(op, x_shape, index_shape, axis, what="input"):
    """index needs x's number of dimensions and sizes no larger than x's off ``axis`` (on every
    axis when axis is None); a 0-d shape counts as (1,), as in PyTorch (see _one_d)."""
    xs, ix = x_shape or (1,), index_shape or (1,)
    if len(ix) != len(xs) or any(i > n for d, (i, n) in enumerate(zip(ix, xs)) if d != axis):
        where = "on every axis" if axis is None else f"off axis {axis}"
        raise ValueError(f"{op}: index of shape {index_shape} does not fit {what} of shape {x_shape}: "
                         f"it needs as many dimensions and sizes no larger {where}")


def _one_d(a):
    """a, or a 0-d a as 1-d of one element: gather and the scatters take 0-d tensors so, as
    PyTorch's (their outputs keep the index's or x's own shape)."""
    return a.reshape(1) if a.ndim == 0 else a


def _scatter_operands(op, axis, x, index, src):
    """The scatters' axis and x, index, src (each 1-d where 0-d, see _one_d), checked: index fits
    x off the axis and src on every axis, and its values are in range along the axis."""
    (axis,) = normalize_axes(axis, max(x.ndim, 1), op)
    _check_along(op, x.shape, index.shape, axis)
    _check_along(op, src.shape, index.shape, None, what="src")
    x, index, src = _one_d(x), _one_d(index), _one_d(src)
    check_indices(op, "index", index, x.shape[axis])
    return axis, x, index, src


class Gather(Function):
    """y[p] = x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's gather): y has
    index's shape; index needs x's number of dimensions and sizes <= x's off the axis.

    dx = zeros, then dx[picked] += dy (an element picked twice gets both gradients); no
    gradient for index (saved with picked, so a write into it before backward is caught)

    Derivation: docs/backprop/indexing.md
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, index):
        (axis,) = normalize_axes(self.axis, max(x.ndim, 1), "gather")
        _check_along("gather", x.shape, index.shape, axis)
        x1, index1 = _one_d(x), _one_d(index)
        check_indices("gather", "index", index1, x1.shape[axis])
        picked, self.in_shape = _along_index(index1, axis), x.shape
        self.save_for_backward(*picked)
        return x1[picked].reshape(index.shape)

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.in_shape or (1,), dtype=dy.dtype)
        add_at(dx, self.saved, _one_d(dy))
        return dx.reshape(self.in_shape), None


@takes_torch_keywords
def gather(x, axis, index):
    """y[p] = x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's gather)."""
    if axis is None:  # (normalize_axes would take it as every axis)
        raise TypeError("gather: axis must be an integer, got None")
    return Gather(axis)(x, as_indices(index, x))


class TakeAlongDim(Function):
    """PyTorch's take_along_dim (NumPy's take_along_axis). With an axis: x and index, of as many
    dimensions, are broadcast together off the axis (x_b, index_b; on it each keeps its own
    length n and m), and

        y[p] = x_b[p with its ``axis`` coordinate replaced by index_b[p]]

    a gather of x_b, index_b in [-n, n) (a negative one counts from the end). Without an axis
    (None): y = x.flat[index.flat], 1-d, index in [0, x.size) (as PyTorch's, which counts a
    negative index from the end only along an axis).

        dx_b = zeros, then dx_b[picked] += dy (an element picked twice gets both gradients); the
        engine sums dx_b over the axes x was broadcast along. No gradient for index.
    """

    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x, index):
        xp = get_array_module(x)
        self.in_shape = x.shape
        if self.axis is None:
            check_indices("take_along_dim", "index", index, x.size)
            picked = (sync.within_range(index.reshape(-1), x.size),)
            self.shape = (x.size,)
            self.save_for_backward(*picked)  # (index's own array: a write into it before backward is caught)
            return x.reshape(-1)[picked]
        axis, n = self.axis, x.shape[self.axis]
        sync.check_in_range(index, n, lambda value: IndexError(
            f"take_along_dim: index {value} is out of range [{-n}, {n}) for axis {axis} of shape {x.shape}"), low=-n)
        index = sync.within_range(index, n, low=-n)
        self.shape = _broadcast_off_axis(x.shape, index.shape, axis)
        index_b = xp.broadcast_to(index, self.shape[:axis] + (index.shape[axis],) + self.shape[axis + 1:])
        picked = _along_index(xp.where(index_b < 0, index_b + n, index_b), axis)
        self.save_for_backward(*picked)
        return xp.broadcast_to(x, self.shape)[picked]

    fresh_gradients = True  # dx: new zeros with dy added in

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.shape, dtype=dy.dtype)
        add_at(dx, self.saved, dy.reshape(-1) if self.axis is None else dy)
        return dx.reshape(self.in_shape) if self.axis is None else dx, None


def _broadcast_off_axis(x_shape, index_shape, axis):
    """x's shape broadcast with index's on every axis but ``axis``, where x keeps its length."""
    try:
        return tuple(n if d == axis else np.broadcast_shapes((n,), (i,))[0]
                     for d, (n, i) in enumerate(zip(x_shape, index_shape)))
    except ValueError:
        raise ValueError(f"take_along_dim: index of shape {index_shape} and input of shape {x_shape} do not "
                         f"broadcast off axis {axis}: their lengths there must be equal, or one of them 1") from None


@takes_torch_keywords
def take_along_dim(x, index, axis=None):
    """The entries of x at ``index`` along ``axis`` (PyTorch's take_along_dim; see TakeAlongDim):
    index has x's number of dimensions, the two broadcast off the axis; without an axis, the
    entries of the flattened x at the flattened index (a 1-d result). PyTorch's keyword for index
    is indices= (minitx.keywords)."""
    x = as_tensor(x)
    index = as_indices(index, x)
    _check_integer("take_along_dim", "index", index)
    if axis is not None:
        not_an_int = isinstance(axis, bool) or not isinstance(axis, numbers.Integral)
        if not_an_int or not x.ndim:
            raise (TypeError if not_an_int else ValueError)(
                f"take_along_dim: axis must be None or an int naming an axis of the input, got {axis!r} for shape "
                f"{x.shape}")
        (axis,) = normalize_axes(axis, x.ndim, "take_along_dim")
        if index.ndim != x.ndim:
            raise ValueError(f"take_along_dim: index of shape {index.shape} needs the input's {x.ndim} dimensions "
                             f"(shape {x.shape})")
    return TakeAlongDim(axis)(x, index)



def take(x, index):
    """The entries of the flattened x at ``index``, in index's shape, as PyTorch's take (NumPy's
    without an axis): an index in [-n, n) of x's n entries, a negative one counted from the end.
    Composed of take_along_dim (its gradient: each entry's dy added where index names it)."""
    x = as_tensor(x)
    index = as_indices(index, x)
    _check_integer("take", "index", index)
    n = x.size
    sync.check_in_range(index.data, n, lambda value: IndexError(f"take: index {value} is out of range for the "
                                                                f"{n} entries of x; expected [{-n}, {n})"), low=-n)
    wrapped = Tensor(get_array_module(index.data).where(index.data < 0, index.data + n, index.data))
    return take_along_dim(x, wrapped.reshape(-1)).reshape(index.shape)


@takes_torch_keywords
def select(x, axis, index):
    """x at position ``index`` along ``axis``, that axis dropped, as PyTorch's select: x[..., index]
    with ``axis`` axes before it (a getitem; index in [-n, n), counted from the end when < 0)."""
    x = as_tensor(x)
    axis, index = _position("select", x, axis, index)
    return getitem(x, (slice(None),) * axis + (index,))


def _position(op, x, axis, index):
    """select's and select_scatter's axis (counted from 0) and index, checked: an int in [-n, n)."""
    axis = _method_axis(op, axis, x.shape)
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{op}: index must be an int, got {index!r}")
    n, index = x.shape[axis], int(index)
    if not -n <= index < n:
        raise IndexError(f"{op}: index {index} is out of range for axis {axis} of length {n}; expected an int "
                         f"in [{-n}, {n})")
    return axis, index

class Scatter(Function):
    """y = x, then y[t(p)] = src[p] for every position p of index, t(p) being p with its ``axis``
    coordinate replaced by index[p] (PyTorch's scatter without reduce; src may be larger than
    index, the rest unused).

    Where index names one place several times, the last write stays (row-major order of index;
    PyTorch leaves it undefined): ``landed[q]`` is the last p written at q, the largest flat
    position, by a scatter-maximum, so that NumPy and CuPy agree.

        dx = dy, but 0 where something was written (the old value reaches nothing)
        dsrc[p] = dy[t(p)] for the p that landed; 0 for those overwritten, and where src is unused
    No gradient for index.

    Derivation: docs/backprop/indexing.md
    """

    fresh_gradients = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, index, src):
        axis, x1, index1, src1 = _scatter_operands("scatter", self.axis, x, index, src)
        xp = get_array_module(x)
        used = tuple(slice(0, n) for n in index1.shape)
        landed = xp.full(x1.shape, -1, dtype=np.int32)  # int32: a type CuPy's scatter-maximum takes
        ufunc_at("maximum", landed, _along_index(index1, axis), xp.arange(index1.size, dtype=np.int32).reshape(
            index1.shape), axis)
        places = xp.flatnonzero(landed >= 0)  # the written entries of x, flat, and the p written there
        entries = landed.reshape(-1)[places]
        y = x1.copy()
        y.reshape(-1)[places] = xp.ascontiguousarray(src1[used]).reshape(-1)[entries]
        self.x_shape, self.src_shape, self.used = x.shape, src.shape, used
        self.save_for_backward(places, entries)
        return y.reshape(x.shape)

    def backward(self, dy):
        places, entries = self.saved
        xp = get_array_module(dy)
        dx = xp.array(_one_d(dy), copy=True, order="C")  # (C order: reshape(-1) is then a view to write through)
        dx.reshape(-1)[places] = 0
        dsrc = None
        if self.needs_input_grad[2]:
            dsrc = xp.zeros(self.src_shape or (1,), dtype=dy.dtype)
            taken = xp.zeros(tuple(s.stop for s in self.used), dtype=dy.dtype)
            taken.reshape(-1)[entries] = _one_d(dy).reshape(-1)[places]
            dsrc[self.used] = taken
            dsrc = dsrc.reshape(self.src_shape)
        return dx.reshape(self.x_shape), None, dsrc


_SCATTER_REDUCTIONS = {"add": "sum", "multiply": "prod"}  # scatter's reduce=: scatter_reduce's name for it


@takes_torch_keywords
def scatter(x, axis, index, src=None, *, value=None, reduce=None):
    """x with src[p] written at x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's
    scatter); src a tensor of x's dtype, or a number (or ``value=``) written at every such place.
    At a place index names twice the last write stays (PyTorch does not say which), and only it
    gets a gradient. With ``reduce`` ("add" or "multiply", PyTorch's older form of scatter_reduce)
    src[p] is added there, or multiplies what is there: scatter_reduce's "sum" or "prod" with x's
    own values included (PyTorch's has no gradient there; minitx's is scatter_reduce's)."""
    if (src is None) == (value is None):
        raise TypeError(f"scatter: give src (a tensor or a number) or value= (a number), one of them; got "
                        f"src={src!r:.40} and value={value!r:.40}")
    x = as_tensor(x)
    index = as_indices(index, x)
    src = value if src is None else src
    if isinstance(src, Tensor):
        if src.dtype != x.dtype:
            raise TypeError(f"scatter: src must have x's dtype {x.dtype.name}, got {src.dtype.name}")
    else:
        check_fits("scatter", "the value", src, x.dtype)
        src = Tensor(backend.get_array_module(x.data).full(index.shape, src, dtype=x.dtype))
    if reduce is None:
        return Scatter(axis)(x, index, src)
    if reduce not in _SCATTER_REDUCTIONS:
        raise ValueError(f"scatter: reduce must be None, 'add' or 'multiply', got {reduce!r} (scatter_reduce "
                         "takes 'sum', 'prod', 'mean', 'amax' and 'amin')")
    return scatter_reduce(x, axis, index, src, _SCATTER_REDUCTIONS[reduce])


class ScatterAdd(Function):
    """y = x, then y[p with its ``axis`` coordinate replaced by index[p]] += src[p] for every
    position p of index (PyTorch's scatter_add; src may be larger than index, the rest unused).

    dx = dy        dsrc[p] = dy[the same target as in forward] (0 where src is unused);
    no gradient for index (saved with the target when src needs a gradient, as PyTorch saves
    it, so a write into it before backward is caught)

    Derivation: docs/backprop/indexing.md
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, index, src):
        axis, x1, index1, src1 = _scatter_operands("scatter_add", self.axis, x, index, src)
        target = _along_index(index1, axis)
        self.used = tuple(slice(0, n) for n in index1.shape)
        self.src_shape = src.shape
        if self.needs_input_grad[2:] == (True,):  # only dsrc reads the target
            self.save_for_backward(*target)
        y = x1.copy()
        add_at(y, target, src1[self.used])
        return y.reshape(x.shape)

    def backward(self, dy):
        dsrc = None
        if self.needs_input_grad[2]:
            dsrc = get_array_module(dy).zeros(self.src_shape or (1,), dtype=dy.dtype)
            dsrc[self.used] = _one_d(dy)[self.saved]
            dsrc = dsrc.reshape(self.src_shape)
        return dy, None, dsrc


@takes_torch_keywords
def scatter_add(x, axis, index, src):
    """x with src[p] added at x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's scatter_add)."""
    return ScatterAdd(axis)(x, as_indices(index, x), src)


class IndexAdd(Function):
    """y = x, then y[..., index[i], ...] += alpha * source[..., i, ...] along ``axis`` for each i
    (PyTorch's index_add; index 1-d, source x's shape with len(index) along the axis; a repeated
    index adds each).

        dx = dy        dsource[..., i, ...] = alpha * dy[..., index[i], ...]    (no gradient for index)

    Derivation: docs/backprop/indexing.md
    """

    def __init__(self, axis, alpha=1):
        self.axis, self.alpha = axis, alpha

    def forward(self, x, index, source):
        (axis,) = normalize_axes(self.axis, max(x.ndim, 1), "index_add")
        x1, source1 = _one_d(x), _one_d(source)
        if index.ndim != 1:
            raise ValueError(f"index_add: index must be 1-d, got shape {index.shape}")
        expected = x1.shape[:axis] + index.shape + x1.shape[axis + 1:]
        if source1.shape != expected:
            raise ValueError(f"index_add: source of shape {source.shape} does not fit x of shape {x.shape} and "
                             f"{index.size} indices along axis {axis}: expected {expected}")
        check_indices("index_add", "index", index, x1.shape[axis])
        self.picked = (slice(None),) * axis + (index,)
        self.save_for_backward(index)
        y = x1.copy()
        add_at(y, self.picked, source1 * self.alpha if self.alpha != 1 else source1)
        self.source_shape = source.shape
        return y.reshape(x.shape)

    def backward(self, dy):
        dsource = None
        if self.needs_input_grad[2]:
            dsource = _one_d(dy)[self.picked] * self.alpha
            dsource = dsource.reshape(self.source_shape).astype(dy.dtype, copy=False)
        return dy, None, dsource


@takes_torch_keywords
def index_add(x, axis, index, source, alpha=1):
    """x with alpha * source[..., i, ...] added at x[..., index[i], ...] along ``axis`` (PyTorch's
    index_add); source has x's dtype."""
    x, source = as_tensor(x), as_tensor(source)
    if source.dtype != x.dtype:
        raise TypeError(f"index_add: source must have x's dtype {x.dtype.name}, got {source.dtype.name}")
    check_fits("index_add", "alpha", alpha, x.dtype)
    return IndexAdd(axis, alpha)(x, as_indices(index, x), source)


def index_put(x, indices, values, accumulate=False):
    """x with values written at x[indices] (PyTorch's index_put; ``indices`` a tuple of index
    tensors, integer or boolean, for x's leading axes; values of x's dtype, broadcast to x[indices]'s
    shape; a boolean index of the shape of the axes it covers). Without accumulate, a copy of x then
    setitem: where indices name one place twice the last write stays (PyTorch does not say which).
    With accumulate, every value is added at its place, repeats adding up: an index_add over x's
    leading axes flattened (a boolean index taken as its True positions), so dx = dy and dvalues =
    dy at each value's place, summed over its broadcast. Both check the indices and values alike."""
    x, values = as_tensor(x), as_tensor(values, x)
    if not isinstance(indices, (tuple, list)) or not all(isinstance(i, Tensor) for i in indices):
        raise TypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    if values.dtype != x.dtype:
        raise TypeError(f"index_put: values must have x's dtype {x.dtype.name}, got {values.dtype.name}")
    if any(i.dtype.kind not in "biu" for i in indices):
        raise TypeError("index_put: indices must be integer or boolean tensors, got dtypes "
                        f"{', '.join(i.dtype.name for i in indices)}")
    k = sum(i.ndim if i.dtype.kind == "b" else 1 for i in indices)  # the axes of x the indices cover
    if k > x.ndim:
        raise IndexError(f"index_put: {k} index axes for x of shape {x.shape}")
    xp = get_array_module(x.data)
    arrays, lead = [], x.shape[:k]
    for i in indices:  # each as integer arrays, one per axis it covers
        if i.dtype.kind != "b":
            arrays.append(i.data)
            continue
        axis = len(arrays)
        if i.shape != x.shape[axis:axis + i.ndim]:  # (its True positions would land elsewhere in x)
            raise IndexError(f"index_put: a boolean index of shape {i.shape} covers axes {axis} to {axis + i.ndim - 1} "
                             f"of x, of lengths {x.shape[axis:axis + i.ndim]}; expected that shape")
        arrays += list(xp.nonzero(i.data))
    for axis, (a, n) in enumerate(zip(arrays, lead)):
        sync.check_in_range(a, n, lambda value, axis=axis, n=n: IndexError(
            f"index_put: index {value} is out of range for axis {axis} of length {n}; expected [{-n}, {n})"), low=-n)
    try:
        arrays = xp.broadcast_arrays(*arrays)
    except ValueError:
        raise IndexError(f"index_put: index shapes {[a.shape for a in arrays]} do not broadcast together") from None
    flat = xp.ravel_multi_index(tuple(a % n for a, n in zip(arrays, lead)), lead) if k else xp.zeros((), np.int64)
    target = flat.shape + x.shape[k:]
    if not broadcasts_to(values.shape, target):
        raise ValueError(f"index_put: values of shape {values.shape} do not broadcast to x[indices]'s shape {target}")
    if not accumulate:
        y = x.clone()
        y[tuple(indices)] = values
        return y
    rows = x.reshape((math.prod(lead),) + x.shape[k:])
    spread = values.broadcast_to(target).reshape((flat.size,) + x.shape[k:])
    return index_add(rows, 0, Tensor(flat.reshape(-1)), spread).reshape(x.shape)


def _one_axis(op, x, axis, index, negative=False):
    """The axis (counted from 0) and the 1-d index of index_fill and index_copy, checked: index
    holds whole numbers in range along the axis (a 0-d tensor counts as one of length 1); with
    ``negative``, in [-size, size), counted from the end below 0 (index_fill's, as PyTorch's)."""
    (axis,) = normalize_axes(axis, max(x.ndim, 1), op)
    if index.ndim > 1:
        raise ValueError(f"{op}: index must be 0-d or 1-d, got shape {index.shape}")
    index, size = _one_d(index.data), (x.shape or (1,))[axis]
    if negative and index.dtype.kind == "i":
        sync.check_in_range(index + size, 2 * size, lambda value: IndexError(
            f"{op}: index {value - size} is out of range [-{size}, {size})"))
        return axis, index % max(size, 1)
    check_indices(op, "index", index, size)
    return axis, index


@takes_torch_keywords
def index_fill(x, axis, index, value):
    """x with ``value`` written at x[..., index[i], ...] along ``axis`` (PyTorch's index_fill;
    a negative index counts from the end, as PyTorch's): masked_fill with the mask of those
    slices. value is a number, or a 0-d tensor, which gets the sum of dy over the entries it fills."""
    x = as_tensor(x)
    axis, index = _one_axis("index_fill", x, axis, as_indices(index, x), negative=True)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ValueError(f"index_fill: value must be a number or a 0-d tensor, got shape {value.shape}")
    picked = get_array_module(x.data).zeros((x.shape or (1,))[axis], dtype=bool)
    picked[index] = True
    along = tuple(-1 if d == axis else 1 for d in range(x.ndim))  # the mask lies along the axis
    return filled("index_fill", x, Tensor(picked.reshape(along)), value)


@takes_torch_keywords
def index_copy(x, axis, index, source):
    """x with source[..., i, ...] written at x[..., index[i], ...] along ``axis`` (PyTorch's
    index_copy; source of x's dtype, and x's shape but len(index) along the axis): a scatter
    whose index is index[i] all over source's slice i. Where index names a slice twice the last
    write stays, as in PyTorch's, and alone gets the gradient (see Scatter)."""
    x, source = as_tensor(x), as_tensor(source)
    if x.ndim == 0:
        return index_copy(x.reshape(1), 0, index, source.reshape(-1)).reshape(())
    axis, index = _one_axis("index_copy", x, axis, as_indices(index, x))
    expected = x.shape[:axis] + index.shape + x.shape[axis + 1:]
    if source.shape != expected:
        raise ValueError(f"index_copy: source of shape {source.shape} does not fit x of shape {x.shape} and "
                         f"{index.size} indices along axis {axis}: expected {expected}")
    if source.dtype != x.dtype:
        raise TypeError(f"index_copy: source must have x's dtype {x.dtype.name}, got {source.dtype.name}")
    return Scatter(axis)(x, _spread(index, axis, expected), source)


def _spread(index, axis, shape):
    """index_copy's and index_reduce's 1-d index as a scatter's: index[i] all over slice i of
    ``shape`` along ``axis``."""
    along = tuple(-1 if d == axis else 1 for d in range(len(shape)))
    return Tensor(get_array_module(index).broadcast_to(index.reshape(along), shape))


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@takes_torch_keywords
def index_reduce(x, axis, index, source, reduce, include_self=True):
    """x with source[..., i, ...] reduced into x[..., index[i], ...] along ``axis`` by ``reduce``
    ("prod", "mean", "amax", "amin"), x's own value among them when include_self (PyTorch's
    index_reduce): scatter_reduce with index[i] all over source's slice i (its gradient, ties
    sharing dy in amax and amin)."""
    if reduce not in _INDEX_REDUCTIONS:
        raise ValueError(f"index_reduce: reduce must be one of {', '.join(map(repr, _INDEX_REDUCTIONS))}, got "
                         f"{reduce!r} (index_add adds)")
    x, source = as_tensor(x), as_tensor(source, x)
    if x.ndim == 0:  # one entry along axis 0 (or -1), its source 0-d too, as PyTorch's
        if axis not in (0, -1):
            raise IndexError(f"index_reduce: axis {axis} is out of range for a 0-d x (0 or -1)")
        if source.ndim:
            raise ValueError(f"index_reduce: a 0-d x takes a 0-d source, got shape {source.shape}")
        return index_reduce(x.reshape(1), 0, index, source.reshape(1), reduce, include_self).reshape(())
    axis, index = _one_axis("index_reduce", x, axis, as_indices(index, x))
    expected = x.shape[:axis] + index.shape + x.shape[axis + 1:]
    if source.shape != expected:
        raise ValueError(f"index_reduce: source of shape {source.shape} does not fit x of shape {x.shape} and "
                         f"{index.size} indices along axis {axis}: expected {expected}")
    return scatter_reduce(x, axis, _spread(index, axis, expected), source, reduce, include_self)


def masked_scatter(x, mask, source):
    """x with source's entries, in row-major order, written where mask is True (PyTorch's
    masked_scatter): the k-th True of mask (broadcast to x's shape) takes source.flat[k]. source
    has x's dtype and at least as many entries as mask has Trues. Built of ops with gradients: the
    entries are picked from source (a getitem), then placed (where), so

        dx = dy where not mask,   dsource.flat[k] = dy at the k-th True (0 past the last used)
    """
    x, source = as_tensor(x), as_tensor(source)
    mask = as_tensor(mask, x)
    check_bool("masked_scatter", "mask", mask)
    if not broadcasts_to(mask.shape, x.shape):
        raise ValueError(f"masked_scatter: mask of shape {mask.shape} does not broadcast to {x.shape}")
    if source.dtype != x.dtype:
        raise TypeError(f"masked_scatter: source must have x's dtype {x.dtype.name}, got {source.dtype.name}")
    xp = get_array_module(x.data)
    kth = xp.cumsum(xp.broadcast_to(mask.data, x.shape).reshape(-1)) - 1  # at each True, which one it is
    (trues,) = backend.host_ints(kth[-1] + 1 if kth.size else 0)
    if trues > source.size:
        raise ValueError(f"masked_scatter: mask has {trues} True entries and source only {source.size} entries; "
                         "source needs one for each True")
    if trues == 0:
        return x.clone()
    taken = source.reshape(-1)[Tensor(xp.maximum(kth, 0).reshape(x.shape))]  # (before the first True: entry 0, unused)
    return where(mask, taken, x)


_SCATTER_UFUNCS = {"sum": "add", "prod": "multiply", "mean": "add", "amax": "maximum", "amin": "minimum"}


class ScatterReduce(Function):
    """PyTorch's scatter_reduce: at each position q of x, y[q] reduces the src[p] of every index
    position p whose target t(p) (p with its ``axis`` coordinate replaced by index[p]) is q,
    with x[q] among them when include_self; c[q] counts those p, and a q with c[q] = 0 keeps
    x[q]. reduce: "sum", "prod", "mean" (divided by n[q] = c[q] + include_self; floored for
    integers), "amax" or "amin".

    Backward, w(v) being the derivative of y[q] in one of its contributors v:
        dx[q] = dy[q] * w(x[q]) where x counts (include_self), else 0; dy[q] where c[q] = 0
        dsrc[p] = dy[t(p)] * w(src[p]); 0 where src is unused
        sum: w = 1     mean: w = 1 / n[q]
        prod: w = the product of the other contributors. With z[q] zero contributors and P[q]
              the product of the nonzero ones: P[q] / v when z[q] = 0; P[q] when v = 0 and
              z[q] = 1; else 0 (a zero among the others).
        amax, amin: w = [v == y[q]] / T[q], T[q] the contributors equal to y[q]: ties share dy
              evenly. A NaN y[q] equals none (T[q] = 0): its contributors get NaN, as in PyTorch.
    No gradient for index (saved with the targets, so a write into it before backward is caught).

    Derivation: docs/backprop/indexing.md
    """

    def __init__(self, axis, reduce, include_self=True):
        self.axis, self.reduce, self.include_self = axis, reduce, include_self

    def forward(self, x, index, src):
        self.x_shape, self.src_shape = x.shape, src.shape
        axis, x, index, src = _scatter_operands("scatter_reduce", self.axis, x, index, src)  # y, all saved, 1-d
        xp = get_array_module(x)
        self.along, self.target = axis, _along_index(index, axis)
        self.used = tuple(slice(0, n) for n in index.shape)
        s = src[self.used]
        count = xp.zeros(x.shape, dtype=np.int32)  # int32: the dtype CuPy's scatter-add takes
        add_at(count, self.target, 1)
        y = x.copy()
        if not self.include_self:  # seeded with the identity, or any contributor for a max or min
            y[self.target] = s if self.reduce in ("amax", "amin") else int(self.reduce == "prod")
        with quiet_float_errors(xp):  # NaN propagates through a max or min
            ufunc_at(_SCATTER_UFUNCS[self.reduce], y, self.target, s, axis)
        if self.reduce == "mean":
            n = xp.maximum(count + self.include_self, 1)
            y = (y // n).astype(x.dtype) if x.dtype.kind in "iu" else y / n.astype(x.dtype)  # (n is int32)
        self.save_for_backward(x, s, y, count, *self.target)
        return y.reshape(self.x_shape)

    def backward(self, dy):
        x, s, y, count = self.saved[:4]
        xp = get_array_module(dy)
        dy = _one_d(dy)
        counts = (count == 0) | self.include_self  # x is one of y's contributors
        with quiet_float_errors(xp):  # a NaN result's 0 / 0 (see above)
            gx, gs = getattr(self, f"_{self.reduce}_shares")(xp, dy, x, s, y, count, counts)
        dsrc = None
        if self.needs_input_grad[2]:
            dsrc = xp.zeros(self.src_shape or (1,), dtype=dy.dtype)
            dsrc[self.used] = gs
            dsrc = dsrc.reshape(self.src_shape)
        return xp.where(count == 0, dy, xp.where(counts, gx, 0)).reshape(self.x_shape), None, dsrc

    def _sum_shares(self, xp, dy, x, s, y, count, counts):
        """(dy * w(x), dy[t] * w(src)), each reduction's w as in the docstring."""
        g = dy / xp.maximum(count + self.include_self, 1).astype(dy.dtype) if self.reduce == "mean" else dy
        return g, g[self.target]

    _mean_shares = _sum_shares

    def _prod_shares(self, xp, dy, x, s, y, count, counts):
        zeros = (counts & (x == 0)).astype(np.int32)
        add_at(zeros, self.target, (s == 0).astype(np.int64))
        nonzero_product = xp.where(counts & (x != 0), x, 1).astype(dy.dtype)
        ufunc_at("multiply", nonzero_product, self.target, xp.where(s == 0, 1, s), self.along)

        def others(v, z, p):
            return xp.where(v == 0, xp.where(z == 1, p, 0), xp.where(z == 0, p / xp.where(v == 0, 1, v), 0))

        return dy * others(x, zeros, nonzero_product), dy[self.target] * others(
            s, zeros[self.target], nonzero_product[self.target])

    def _amax_shares(self, xp, dy, x, s, y, count, counts):
        tie_x, tie_s = counts & (x == y), s == y[self.target]
        ties = tie_x.astype(dy.dtype)
        add_at(ties, self.target, tie_s.astype(dy.dtype))
        g = dy / ties
        return tie_x * g, tie_s * g[self.target]

    _amin_shares = _amax_shares


@takes_torch_keywords
def scatter_reduce(x, axis, index, src, reduce, include_self=True):
    """x with src[p] reduced into x[p with its ``axis`` coordinate replaced by index[p]] by
    ``reduce`` ("sum", "prod", "mean", "amax", "amin"), with x's own value among them when
    include_self (PyTorch's scatter_reduce)."""
    if reduce not in _SCATTER_UFUNCS:
        raise ValueError(f"scatter_reduce: reduce must be one of {', '.join(map(repr, _SCATTER_UFUNCS))}, "
                         f"got {reduce!r}")
    if not isinstance(include_self, bool):
        raise TypeError(f"scatter_reduce: include_self must be a bool, got {include_self!r}")
    x = as_tensor(x)
    src = as_tensor(src, x)
    if src.dtype != x.dtype or not (backend.is_floating(x.dtype) or x.dtype.kind in "iu"):
        raise TypeError(f"scatter_reduce: x and src must have one float or integer dtype, got {x.dtype.name} "
                        f"and {src.dtype.name}")
    return ScatterReduce(axis, reduce, include_self)(x, as_indices(index, x), src)


class Tril(Function):
    """y = x on and below the k-th diagonal of the last two axes (y[..., i, j] = x[..., i, j] for
    j <= i + k), 0 above.   dx = dy on the same entries, 0 above"""

    _lower = True

    def __init__(self, k=0):
        self.k = k

    def forward(self, x):
        if x.ndim < 2:
            raise ValueError(f"{self.name}: needs at least 2 dimensions, got shape {x.shape}")
        xp = get_array_module(x)
        rows, cols = x.shape[-2:]
        keep = xp.tri(rows, cols, self.k, dtype=bool) if self._lower else ~xp.tri(rows, cols, self.k - 1, dtype=bool)
        self.save_for_backward(keep)
        return xp.where(keep, x, 0).astype(x.dtype, copy=False)

    def backward(self, dy):
        (keep,) = self.saved
        return (get_array_module(dy).where(keep, dy, 0).astype(dy.dtype, copy=False),)


@takes_torch_keywords
def tril(x, k=0): return Tril(whole("tril", "the diagonal k", k))(as_tensor(x))


class Triu(Tril):
    """y = x on and above the k-th diagonal of the last two axes (j >= i + k), 0 below.
    dx = dy on the same entries, 0 below"""

    _lower = False


@takes_torch_keywords
def triu(x, k=0): return Triu(whole("triu", "the diagonal k", k))(as_tensor(x))


class Diagonal(Function):
    """y[..., k] = x[..., i + k, j + k] along two axes (axis1, axis2) of x, the offset-th diagonal
    (above the main one for offset > 0: i = 0, j = offset; below for offset < 0), laid along a
    new last axis, as NumPy's and PyTorch's diagonal. The entries are copied (NumPy's diagonal
    is a read-only view).

        dx = 0, with dx[..., i + k, j + k] = dy[..., k]
    """

    moves_values = True  # (16-bit arrays go in as they are: nothing to round)

    def __init__(self, offset=0, axis1=0, axis2=1):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def forward(self, x):
        if x.ndim < 2:
            raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {x.shape}")
        first, second = (normalize_axes(axis, x.ndim, "diagonal")[0] for axis in (self.axis1, self.axis2))
        if first == second:
            raise ValueError(f"diagonal: axis1 and axis2 must be two different axes, got {self.axis1} and "
                             f"{self.axis2} for shape {x.shape}")
        self.axes = (first, second)
        self.in_shape = x.shape
        return get_array_module(x).diagonal(x, self.offset, *self.axes).copy()

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.zeros(self.in_shape, dtype=dy.dtype)
        k = xp.arange(dy.shape[-1])
        rows, cols = k + max(-self.offset, 0), k + max(self.offset, 0)
        xp.moveaxis(dx, self.axes, (-2, -1))[..., rows, cols] = dy  # (a view of dx: the write lands there)
        return (dx,)


@takes_torch_keywords
def diagonal(x, offset=0, axis1=0, axis2=1):
    """The offset-th diagonal of x along axis1 and axis2, as a new last axis (see Diagonal)."""
    return Diagonal(whole("diagonal", "offset", offset), axis1, axis2)(as_tensor(x))


def _written(op, x, src, index, part):
    """x with src written at x[index] (PyTorch's *_scatter ops): a copy of x, then setitem, so
    dx = dy but 0 where src went, and dsrc = dy[index]. src needs ``part``, the shape of x[index]."""
    src = as_tensor(src, x)
    if src.shape != part:
        raise ValueError(f"{op}: src of shape {src.shape} does not fit the part of x (shape {x.shape}) it replaces: "
                         f"expected shape {part}")
    y = x.clone()
    y[index] = src
    return y


@takes_torch_keywords
def slice_scatter(x, src, axis=0, start=None, end=None, step=1):
    """x with src written at x[..., start:end:step] along ``axis`` (PyTorch's slice_scatter; step >= 1)."""
    x = as_tensor(x)
    axis = _method_axis("slice_scatter", axis, x.shape)
    if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 1:
        raise ValueError(f"slice_scatter: step must be a whole number >= 1, got {step!r}")
    index = (slice(None),) * axis + (slice(start, end, step),)
    return _written("slice_scatter", x, src, index, x.shape[:axis] + (len(range(*index[-1].indices(x.shape[axis]))),)
                    + x.shape[axis + 1:])


@takes_torch_keywords
def select_scatter(x, src, axis, index):
    """x with src written at x[..., index] along ``axis``, src x's shape less that axis (PyTorch's
    select_scatter, select's adjoint; index in [-n, n), counted from the end when < 0)."""
    x = as_tensor(x)
    axis, index = _position("select_scatter", x, axis, index)
    return _written("select_scatter", x, src, (slice(None),) * axis + (index,), x.shape[:axis] + x.shape[axis + 1:])


@takes_torch_keywords
def diagonal_scatter(x, src, offset=0, axis1=0, axis2=1):
    """x with src written on its offset-th diagonal along axis1 and axis2, src shaped as diagonal(x,
    offset, axis1, axis2) (that diagonal a last axis; PyTorch's diagonal_scatter). Written through one
    index array per axis, broadcast to src's shape: the other axes' positions in their order, then
    the diagonal's rows (on axis1) and columns (on axis2)."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal_scatter: needs at least 2 dimensions, got shape {x.shape}")
    a1, a2 = (_method_axis("diagonal_scatter", a, x.shape) for a in (axis1, axis2))
    if a1 == a2:
        raise ValueError(f"diagonal_scatter: axis1 and axis2 must differ, got {axis1} and {axis2}")
    offset = whole("diagonal_scatter", "offset", offset)
    row0, col0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(x.shape[a1] - row0, x.shape[a2] - col0))
    others = [d for d in range(x.ndim) if d not in (a1, a2)]
    xp = get_array_module(x.data)
    index = [None] * x.ndim
    for k, d in enumerate(others):
        index[d] = xp.arange(x.shape[d]).reshape((1,) * k + (-1,) + (1,) * (len(others) - k))
    index[a1] = xp.arange(row0, row0 + length)
    index[a2] = xp.arange(col0, col0 + length)
    part = tuple(x.shape[d] for d in others) + (length,)
    return _written("diagonal_scatter", x, src, tuple(index), part)


class DiagEmbed(Function):
    """Diagonal undone (PyTorch's diag_embed): v's last axis, of length n, laid on the k-th
    diagonal (k = offset) of new [n + |k|, n + |k|] matrices on axes (axis1, axis2) of y, which
    has v's other axes in their order around them; 0 elsewhere. With y's two axes moved last:

        y[..., i, i + k] = v[..., i] (k >= 0)  or  y[..., i - k, i] = v[..., i] (k < 0)
        dv[..., i] = dy at the same place

    so that diagonal(y, offset, axis1, axis2) is v again."""

    fresh_gradients = True

    def __init__(self, offset=0, axis1=-2, axis2=-1):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def forward(self, v):
        if v.ndim == 0:
            raise ValueError("diag_embed: needs a tensor with at least 1 dimension, got a 0-d tensor")
        ndim = v.ndim + 1  # the result's: the axes name two of its axes
        first, second = (normalize_axes(axis, ndim, "diag_embed")[0] for axis in (self.axis1, self.axis2))
        if first == second:
            raise ValueError(f"diag_embed: axis1 and axis2 must be two different axes of the result, got "
                             f"{self.axis1} and {self.axis2} for {ndim} dimensions")
        xp = get_array_module(v)
        n, k = v.shape[-1], self.offset
        shape = list(v.shape[:-1])
        for axis in sorted((first, second)):
            shape.insert(axis, n + abs(k))
        self.axes = (first, second)
        self.rows, self.cols = xp.arange(n) + max(-k, 0), xp.arange(n) + max(k, 0)
        y = xp.zeros(shape, dtype=v.dtype)
        xp.moveaxis(y, self.axes, (-2, -1))[..., self.rows, self.cols] = v  # (a view of y: the write lands there)
        return y

    def backward(self, dy):
        return (get_array_module(dy).moveaxis(dy, self.axes, (-2, -1))[..., self.rows, self.cols],)


def diag(x, diagonal=0):
    """PyTorch's diag: a 1-d x becomes the square matrix with x on its ``diagonal``-th diagonal
    (DiagEmbed); a 2-d x gives that diagonal, 1-d (diagonal(x, offset)). 0 is the main diagonal,
    > 0 above it, < 0 below."""
    x, diagonal = as_tensor(x), whole("diag", "diagonal", diagonal)
    if x.ndim == 1:
        return DiagEmbed(diagonal)(x)
    if x.ndim == 2:
        return Diagonal(diagonal)(x)
    raise ValueError(f"diag: needs a 1-d or 2-d tensor, got shape {x.shape}")


def diagflat(x, offset=0):
    """The square matrix with the flattened x on its ``offset``-th diagonal, as PyTorch's and NumPy's
    diagflat: diag of x reshaped to 1-d."""
    return diag(as_tensor(x).reshape(-1), whole("diagflat", "offset", offset))


@takes_torch_keywords
def diag_embed(x, offset=0, axis1=-2, axis2=-1):
    """Tensors of matrices with x's last axis on their ``offset``-th diagonal, on axes axis1 and
    axis2 of the result (PyTorch's diag_embed; see DiagEmbed): diagonal undone."""
    for axis in (axis1, axis2):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"diag_embed: axis1 and axis2 must be ints, got {axis!r}")
    return DiagEmbed(whole("diag_embed", "offset", offset), axis1, axis2)(as_tensor(x))


def trace(x):
    """The sum of a matrix's main diagonal (2-D only, as PyTorch's trace)."""
    x = as_tensor(x)
    if x.ndim != 2:
        raise ValueError(f"trace: needs a matrix (2 dimensions), got shape {x.shape}; for a batch, "
                         "diagonal(x, 0, -2, -1).sum(-1)")
    return diagonal(x).sum()


def _check_integer(op, what, array):
    if array.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {array.dtype.name}")


class Embedding(Function):
    """y[..., :] = weight[ids[...], :]  (gather rows of a [num_embeddings, dim] table).

    backward:  dweight[r] = sum of dy[...] over the positions where ids == r  (a scatter-add,
    since a row is often used many times); dweight[padding_idx] = 0, so the padding row
    never learns. No gradient for ids.

    Derivation: docs/backprop/embedding.md
    Kernel: minitx/kernels/embedding.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True

    def __init__(self, padding_idx=None):
        self.padding_idx = padding_idx

    def forward(self, ids, weight):
        _check_integer("embedding", "ids", ids)
        n = weight.shape[0]
        sync.check_in_range(ids, n, lambda value: IndexError(f"embedding: id {value} is out of range for a table "
                                                             f"of {n} rows"))
        ids = sync.within_range(ids, n)
        self.save_for_backward(ids)
        self.weight_shape = weight.shape
        return weight[ids]

    def backward(self, dy):
        (ids,) = self.saved
        # sorted by id, summed in a fixed order; it skips padding_idx itself (rows wider than its grid: below)
        if kernels.enabled(dy) and dy.shape[-1] <= kernels.EMBEDDING_MAX_DIM:
            dweight = kernels.embedding_backward(ids, dy, self.weight_shape[0], self.padding_idx)
            return None, dweight.astype(dy.dtype, copy=False)  # summed in float32 for bfloat16 rows
        xp = get_array_module(dy)
        dweight = xp.zeros(self.weight_shape, dtype=dy.dtype)
        dim = self.weight_shape[1]
        if xp is np:  # as one flat run of entries, which NumPy's add.at adds ~5x faster, each in the same order
            entries = (ids.reshape(ids.size, 1).astype(np.intp) * dim + np.arange(dim)).reshape(-1)
            np.add.at(dweight.reshape(-1), entries, dy.reshape(-1))
        else:
            add_at(dweight, ids.reshape(ids.size), dy.reshape(ids.size, dim))  # (not -1: 0 columns)
        if self.padding_idx is not None:
            dweight[self.padding_idx] = 0
        return None, dweight

    def backward_into(self, dy, grad):
        """The kernel adds each row's sum into ``grad`` (grad[r] + sum, as the engine's add
        would), where the table's other uses already put their gradient (a tied output layer)."""
        if not (kernels.enabled(dy) and grad.dtype == dy.dtype and dy.dtype.name in ("float32", "float64")
                and grad.flags.c_contiguous and dy.shape[-1] <= kernels.EMBEDDING_MAX_DIM):
            return False  # (a bfloat16 dy: backward rounds its float32 sums to bfloat16 first)
        kernels.embedding_backward(self.saved[0], dy, self.weight_shape[0], self.padding_idx, out=grad)
        return True


def padding_row(owner: str, padding_idx, n: int):
    """padding_idx as the row of a table of ``n`` rows it names (negative counts from the end), or
    None; a ValueError naming ``owner`` when it names no row (a float, a bool, out of range)."""
    if padding_idx is None:
        return None
    if not isinstance(padding_idx, (int, np.integer)) or isinstance(padding_idx, bool) or not -n <= padding_idx < n:
        expected = f"None or an int in [{-n}, {n})" if n else "None (the table has no rows)"
        raise ValueError(f"{owner}: padding_idx {padding_idx!r} is not a row of a table of {n} rows; "
                         f"expected {expected}")
    return int(padding_idx) % n


def embedding(ids, weight, padding_idx=None):
    """Rows of ``weight`` picked by integer ``ids``: result shape ids.shape + (dim,). padding_idx
    (a row, negative counted from the end) gets no gradient."""
    weight = as_tensor(weight)
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D [num_embeddings, dim], got shape {weight.shape}")
    ids = as_indices(ids, weight)
    return Embedding(padding_row("embedding", padding_idx, weight.shape[0]))(ids, weight)


class EmbeddingBag(Function):
    """Each bag b, a run of the entries ids[i] (those equal to padding_idx left out), reduced to one
    row of the table weight [num_embeddings, dim] (PyTorch's embedding_bag); bag[i] is entry i's:

        sum:   y[b] = sum_{i in b} w[i] * weight[ids[i]]     (w: per_sample_weights, else 1)
        mean:  y[b] = sum_{i in b} weight[ids[i]] / |b|
        max:   y[b, d] = max_{i in b} weight[ids[i], d]

    A bag with no entries gives zeros. backward, dy [bags, dim]:

        sum:   dweight[ids[i]] += w[i] * dy[bag[i]]          dw[i] = dy[bag[i]] . weight[ids[i]]
        mean:  dweight[ids[i]] += dy[bag[i]] / |bag[i]|
        max:   dweight[ids[i], d] += dy[b, d] for the first i of b holding y[b, d] (PyTorch's)

    No gradient for ids; the padding row gets none (its entries are in no bag), nor does w there.
    """

    def __init__(self, mode, bag, bags, padding_idx=None):
        """bag: each entry's bag (-1: in none, past include_last_offset's last offset), ascending;
        bags: how many there are."""
        self.mode, self.bag, self.bags, self.padding_idx = mode, bag, bags, padding_idx

    def forward(self, ids, weight, w=None):
        xp = get_array_module(weight)
        kept = (self.bag >= 0) if self.padding_idx is None else (self.bag >= 0) & (ids != self.padding_idx)
        ids, bag = ids[kept], self.bag[kept]  # (bag stays ascending: bags are runs of entries)
        rows = weight[ids]
        y = xp.zeros((self.bags, weight.shape[1]), dtype=weight.dtype)
        count = xp.bincount(bag, minlength=self.bags)
        if self.mode == "max":
            y[...] = -xp.inf
            ufunc_at("maximum", y, bag, rows)
            y[count == 0] = 0
            # the first entry of its bag equal to the bag's maximum, per column: its running count of hits is 1
            hits = (rows == y[bag]).cumsum(axis=0)
            start = xp.searchsorted(bag, bag)  # the first kept entry of each entry's bag
            before = xp.where((start > 0)[:, None], hits[start - 1], 0)
            self.first = (rows == y[bag]) & (hits - before == 1)
        else:
            add_at(y, bag, rows if w is None else rows * w[kept][:, None])
            if self.mode == "mean":
                y /= xp.maximum(count, 1)[:, None].astype(y.dtype)
        self.kept, self.ids, self.bag_kept, self.count = kept, ids, bag, count
        self.weight_shape, self.has_w = weight.shape, w is not None
        if w is not None:
            self.save_for_backward(weight, w)
        return y

    def backward(self, dy):
        xp = get_array_module(dy)
        ids, bag = self.ids, self.bag_kept
        per_entry = dy[bag]  # [kept entries, dim]
        if self.mode == "max":
            per_entry = dy_where(self.first, per_entry)
        elif self.mode == "mean":
            per_entry = per_entry / self.count[bag][:, None].astype(dy.dtype)
        dweight = dw = None
        if self.has_w:
            weight, w = self.saved
            if self.needs_input_grad[2]:
                dw = xp.zeros(w.shape, dtype=dy.dtype)
                dw[self.kept] = (per_entry * weight[ids]).sum(axis=-1)
            per_entry = per_entry * w[self.kept][:, None]
        if self.needs_input_grad[1]:
            dweight = xp.zeros(self.weight_shape, dtype=dy.dtype)
            add_at(dweight, ids, per_entry)
        return (None, dweight) if not self.has_w else (None, dweight, dw)


def _bags(op, ids, offsets, include_last_offset):
    """(ids as one run [entries], each entry's bag (-1: none), the number of bags) from 2-D ids
    [bags, length] (each row a bag) or 1-D ids and offsets (where each bag starts)."""
    xp = backend.get_array_module(ids.data)
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: offsets must be None when input is 2-D [bags, length] (each row is a bag), "
                             f"got {type(offsets).__name__}")
        bags, length = ids.shape
        return ids.data.reshape(-1), xp.repeat(xp.arange(bags), length), bags
    if ids.ndim != 1:
        raise ValueError(f"{op}: input must be 1-D (with offsets) or 2-D [bags, length], got shape {ids.shape}")
    if offsets is None:
        raise ValueError(f"{op}: 1-D input needs offsets, a 1-D integer tensor of where each bag starts")
    offsets = as_indices(offsets, ids)
    _check_integer(op, "offsets", offsets.data)
    starts = backend.to_numpy(offsets.data).astype(np.int64)
    n = ids.shape[0]
    if starts.ndim != 1 or (include_last_offset and not starts.size):
        raise ValueError(f"{op}: offsets must be 1-D{' with at least one entry' * include_last_offset}, got shape "
                         f"{offsets.shape}")
    if starts.size and (starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] > n):
        raise ValueError(f"{op}: offsets must start at 0 and ascend to at most the input's length {n}, got "
                         f"{starts.tolist()}")
    end = starts[-1] if include_last_offset else n  # (entries past it belong to no bag)
    starts = starts[:-1] if include_last_offset else starts
    bag = np.searchsorted(starts, np.arange(n), side="right") - 1  # the last bag starting at or before i
    bag[np.arange(n) >= end] = -1
    return ids.data, xp.asarray(bag), len(starts)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,  # noqa: A002
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Bags of rows of ``weight`` [num, dim], each reduced to one row by ``mode`` ('sum', 'mean' or
    'max'), as PyTorch's F.embedding_bag (see EmbeddingBag): ``input`` is 2-D [bags, length] (each
    row a bag) or 1-D with ``offsets`` (where each bag starts; with include_last_offset, a last
    offset where the last bag ends). per_sample_weights (input's shape, mode 'sum' only) scale each
    entry's row; entries equal to padding_idx are left out of their bag (and out of its mean).
    max_norm, scale_grad_by_freq and sparse are not supported."""
    op = "embedding_bag"
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError(f"{op}: max_norm, scale_grad_by_freq and sparse are not supported, got max_norm={max_norm!r}, "
                         f"scale_grad_by_freq={scale_grad_by_freq!r}, sparse={sparse!r}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{op}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(f"{op}: weight must be a 2-D tensor [num_embeddings, dim], got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if not backend.is_floating(weight.dtype):  # (a mean or max of integer rows has no integer result; PyTorch refuses)
        raise TypeError(f"{op}: weight must be a floating-point tensor, got dtype {weight.dtype.name}")
    ids = as_indices(input, weight)
    _check_integer(op, "input", ids.data)
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{op}: per_sample_weights is only supported for mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != ids.shape:
            raise ValueError(f"{op}: per_sample_weights {tuple(per_sample_weights.shape)} must have the input's "
                             f"shape {ids.shape}")
    flat, bag, bags = _bags(op, ids, offsets, include_last_offset and ids.ndim == 1)
    n = weight.shape[0]
    check_indices(op, "input", Tensor(flat), n)
    bagged = EmbeddingBag(mode, bag, bags, padding_row(op, padding_idx, n))
    if per_sample_weights is None:
        return bagged(Tensor(flat), weight)
    w = as_tensor(per_sample_weights).reshape(-1)
    return bagged(Tensor(flat), weight, w if w.dtype == weight.dtype else w.astype(weight.dtype))


def one_hot(indices, num_classes=-1):
    """int64 tensor indices.shape + (num_classes,): 1 at each index, 0 elsewhere (PyTorch's
    one_hot; no gradient). num_classes -1 means max(indices) + 1."""
    indices = as_indices(indices, indices if isinstance(indices, Tensor) else Tensor(np.zeros(0)))
    data = indices.data
    xp = backend.get_array_module(data)
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot: num_classes must be an int (or -1 to infer it), got {num_classes!r}")
    if num_classes < 0:
        if not data.size:
            raise ValueError("one_hot: cannot infer num_classes from empty indices; pass num_classes")
        check_integer("one_hot", "indices", data)   # (before max() reads a float)
        num_classes = backend.host_ints(data.max())[0] + 1
    check_indices("one_hot", "indices", data, num_classes)
    return Tensor((data[..., None] == xp.arange(num_classes)).astype(np.int64))


def bincount(x, weights=None, minlength=0):
    """out[v] = the number of entries of x equal to v (or the sum of their ``weights``), for v in
    [0, max(max(x) + 1, minlength)): PyTorch's bincount. x: 1-d non-negative integers; int64 counts,
    or float32 sums for float32 weights and float64 for others, as PyTorch. No gradient (PyTorch
    has none for the weights either)."""
    x = as_tensor(x)
    xp = backend.get_array_module(x.data)
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise ValueError(f"bincount: x must be a 1-d integer tensor, got shape {x.shape} and dtype {x.dtype.name}")
    if not isinstance(minlength, numbers.Integral) or isinstance(minlength, bool) or minlength < 0:
        raise ValueError(f"bincount: minlength must be a whole number >= 0, got {minlength!r}")
    if x.size and backend.host_ints(x.data.min())[0] < 0:
        raise ValueError("bincount: x must be non-negative")
    if not x.size:  # (CuPy's bincount reads max(x), which an empty x has not)
        dtype = np.int64 if weights is None else np.float32 if as_tensor(weights, x).dtype == np.float32 else np.float64
        return Tensor(xp.zeros(minlength, dtype=dtype))
    if weights is None:
        return Tensor(xp.bincount(x.data.astype(np.int64, copy=False), minlength=minlength).astype(np.int64))
    weights = as_tensor(weights, x)
    if weights.shape != x.shape:
        raise ValueError(f"bincount: weights must have x's shape {x.shape}, got {weights.shape}")
    dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return Tensor(xp.bincount(x.data.astype(np.int64, copy=False), weights.data.astype(dtype), minlength=minlength)
                  .astype(dtype))


def histc(x, bins=100, min=0, max=0):  # noqa: A002 (PyTorch's names)
    """How many entries of x fall in each of ``bins`` equal bins spanning [min, max] (PyTorch's
    histc): a 1-d tensor of x's floating dtype. Entries outside [min, max] (NaN among them) are not
    counted; max itself is in the last bin. min == max (0 and 0 by default) means x's own smallest
    and largest entries, and a range of one value [v, v] is widened to [v - 1, v + 1]. No gradient.

    The bin of an entry v, computed in x's dtype as PyTorch's, is k = floor((v - min) * bins /
    (max - min)), and bins - 1 for v = max."""
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"histc: expected a floating-point tensor, got dtype {x.dtype.name} (PyTorch's histc "
                        f"refuses integers and booleans too)")
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins <= 0:
        raise ValueError(f"histc: bins must be a whole number > 0, got {bins!r}")
    for name, value in (("min", min), ("max", max)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"histc: {name} must be a number, got {value!r}")
    xp = backend.get_array_module(x.data)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:  # x's own range (NaN if x holds one: refused below, as PyTorch)
        with np.errstate(invalid="ignore"):  # (ml_dtypes' bfloat16 min and max warn at a NaN)
            lo, hi = backend.to_host(xp.stack([x.data.min(), x.data.max()])).astype(np.float64).tolist()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"histc: the range [{lo}, {hi}] is not finite; give a finite min and max"
                         + (" (x holds NaN or inf)" if min == max else ""))
    if lo > hi:
        raise ValueError(f"histc: min must not be larger than max, got min={min!r} and max={max!r}")
    if not x.size:
        return Tensor(xp.zeros(bins, dtype=x.dtype))
    lo, hi = xp.asarray(lo, dtype=x.dtype), xp.asarray(hi, dtype=x.dtype)  # the edges in x's dtype
    # (quietly: ml_dtypes' bfloat16 warns comparing NaN, and float16's (v - lo) * bins may round to inf)
    with np.errstate(invalid="ignore", over="ignore"):
        inside = ((x.data >= lo) & (x.data <= hi)).reshape(-1)
        v = xp.where(inside, x.data.reshape(-1), lo)  # (outside and NaN entries: any value, then bin `bins`)
        k = xp.minimum((v - lo) * bins / (hi - lo), bins - 1).astype(np.int64)  # (inf: the last bin)
    # the entries outside counted in one more bin, then dropped
    return Tensor(xp.bincount(xp.where(inside, k, bins), minlength=bins + 1)[:bins].astype(x.dtype))


def _linspace_edges(lo, hi, bins, dtype):
    """bins + 1 edges from lo to hi as PyTorch's linspace makes them in ``dtype``: the step h = (hi - lo) / bins
    in dtype, then lo + i h up to halfway and hi - (bins - i) h after it, each edge rounded once (PyTorch's
    fused multiply-add; exact here, in fractions, then rounded). On the host: a few edges."""
    lo, hi = np.asarray(lo).astype(dtype), np.asarray(hi).astype(dtype)
    step = fractions.Fraction(float((hi - lo) / np.asarray(bins).astype(dtype)))
    lo, hi = fractions.Fraction(float(lo)), fractions.Fraction(float(hi))
    exact = [lo + i * step if i < (bins + 1) // 2 else hi - (bins - i) * step for i in range(bins + 1)]
    return np.array([float(e) for e in exact]).astype(dtype)  # (float32's edges are exact in float64 first)


class HistogramBins(NamedTuple):
    """What histogram returns: a pair, ``hist, bin_edges = F.histogram(x, 4)``, with PyTorch's names."""

    hist: object
    bin_edges: object


def _histogram_edges(name, x, values, bins, range):  # noqa: A002 (PyTorch's name)
    """One axis's bin edges for histogram and histogramdd, an xp array of x's dtype: ``bins`` a 1-d tensor
    of increasing edges, or a count of equal bins over ``range`` (``values``' smallest and largest when
    None; a range of one value v widened to [v - 0.5, v + 0.5], as NumPy's), spaced as PyTorch's linspace."""
    xp = backend.get_array_module(x.data)
    if isinstance(bins, Tensor) or hasattr(bins, "shape"):
        edges = as_tensor(bins)
        if edges.ndim != 1 or edges.shape[0] < 1 or edges.dtype != x.dtype:
            raise ValueError(f"{name}: bins as edges must be a 1-d tensor of at least one edge in x's dtype "
                             f"({x.dtype.name}), got shape {edges.shape} of {edges.dtype.name}")
        edges = edges.data
        if edges.size > 1 and bool(backend.to_host((edges[1:] < edges[:-1]).any())):
            raise ValueError(f"{name}: bin edges must increase")
        return edges
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins <= 0:
        raise ValueError(f"{name}: bins must be a whole number > 0 or a 1-d tensor of edges, got {bins!r}")
    if range is not None:
        if len(range) != 2:
            raise ValueError(f"{name}: range must be a pair (min, max), got {range!r}")
        lo, hi = (float(v) for v in range)
    elif values.size:
        with np.errstate(invalid="ignore"):
            lo, hi = backend.to_host(xp.stack([values.min(), values.max()])).astype(np.float64).tolist()
    else:
        lo, hi = 0.0, 1.0  # (nothing to span: PyTorch's and NumPy's unit range)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name}: the range [{lo}, {hi}] is not finite" + ("" if range else " (x holds NaN "
                                                                                              "or inf): give range="))
    if lo > hi:
        raise ValueError(f"{name}: range's minimum must not be larger than its maximum, got {range!r}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return xp.asarray(_linspace_edges(lo, hi, bins, x.dtype))


def _bin_of(values, edges):
    """Each value's bin (edge_k <= v < edge_(k+1), the last bin closed on the right) and whether it is
    inside the edges at all (NaN is not)."""
    xp = backend.get_array_module(values)
    with np.errstate(invalid="ignore"):  # (NaN compares false: outside)
        inside = (values >= edges[0]) & (values <= edges[-1]) & (edges.size > 1)  # (one edge: no bin at all)
        k = xp.minimum(xp.searchsorted(edges, values, side="right") - 1, edges.size - 2)  # the last edge: the last bin
    return k, inside


def histogram(x, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's names)
    """PyTorch's histogram of the flattened x: (hist, bin_edges), both of x's floating dtype. ``bins`` is a
    count of equal bins over ``range`` (x's smallest and largest entries when None; a range of one value v
    widened to [v - 0.5, v + 0.5], as NumPy's), their edges spaced as PyTorch's linspace, or a 1-d tensor
    of increasing edges. An entry v is in bin k where edge_k <= v < edge_(k+1), the last bin closed on the
    right; entries outside the edges (NaN among them) are not counted. ``weight`` (x's shape and dtype)
    counts each entry as its weight; ``density`` divides by the total and by each bin's width. No gradient.
    """
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"histogram: expected a floating-point tensor, got dtype {x.dtype.name}")
    values = x.data.reshape(-1)
    hist, (edges,) = _histogram_nd("histogram", x, values[:, None], [bins], None if range is None else [range],
                                   weight, x.shape, density)  # (each entry a point in one dimension)
    return HistogramBins(hist, edges)


class HistogramddBins(NamedTuple):
    """What histogramdd returns: ``hist, bin_edges = F.histogramdd(x, 4)``, bin_edges a tuple of one 1-d
    tensor per axis, with PyTorch's names."""

    hist: object
    bin_edges: object


def histogramdd(x, bins=10, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's names)
    """PyTorch's histogramdd: x of shape (..., D) read as points in D dimensions, counted in the cells of a
    D-dimensional grid: (hist of shape (n_1, ..., n_D), bin_edges a tuple of D edge tensors). ``bins`` is
    one count for every axis, a list of D counts, or a list of D 1-d tensors of edges; ``range`` a flat
    list (min_1, max_1, ..., min_D, max_D); each axis's edges and bins as histogram's. ``weight`` (x's
    shape less its last axis) counts each point as its weight; ``density`` divides by the total and by
    each cell's volume. No gradient."""
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"histogramdd: expected a floating-point tensor, got dtype {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"histogramdd: x must have at least 2 dimensions (points along its last axis), got shape "
                         f"{x.shape}")
    d = x.shape[-1]
    if not isinstance(bins, (numbers.Integral, list, tuple)):
        raise TypeError(f"histogramdd: bins must be an int or a list of counts or edges, one per dimension, got "
                        f"{type(bins).__name__}")
    axes_bins = [bins] * d if isinstance(bins, numbers.Integral) else list(bins)
    if len(axes_bins) != d:
        raise ValueError(f"histogramdd: bins must give one count or edges per dimension ({d}), got {len(axes_bins)}")
    if range is not None:
        if len(range) != 2 * d:
            raise ValueError(f"histogramdd: range must be {2 * d} numbers (min, max for each of {d} dimensions), "
                             f"got {len(range)}")
        range = [range[2 * i:2 * i + 2] for i in builtins.range(d)]  # noqa: A001 (PyTorch's name)
    hist, edges = _histogram_nd("histogramdd", x, x.data.reshape(-1, d), axes_bins, range, weight, x.shape[:-1],
                                density)
    return HistogramddBins(hist, tuple(edges))


def _histogram_nd(name, x, points, bins, ranges, weight, weight_shape, density):
    """histogram's and histogramdd's count: ``points`` (n, D) of x's array, one entry of ``bins`` (and of
    ``ranges`` unless None) per axis; (hist of shape (n_1, ..., n_D), [edges of each axis])."""
    xp = backend.get_array_module(points)
    d = points.shape[1]
    edges = [_histogram_edges(name, x, points[:, i], bins[i], None if ranges is None else ranges[i])
             for i in builtins.range(d)]
    shape = tuple(e.size - 1 for e in edges)
    if weight is not None:
        weight = as_tensor(weight)
        if weight.shape != tuple(weight_shape) or weight.dtype != x.dtype:
            raise ValueError(f"{name}: weight must have x's shape{'' if x.ndim == len(weight_shape) else ' less its last axis'} "
                             f"{tuple(weight_shape)} and dtype {x.dtype.name}, got {weight.shape} of {weight.dtype.name}")
    cell = xp.zeros(points.shape[0], dtype=np.int64)
    inside = xp.ones(points.shape[0], dtype=bool)
    for i, e in enumerate(edges):  # the cell's flat index, row-major over the axes
        k, inside_i = _bin_of(points[:, i], e)
        cell, inside = cell * shape[i] + xp.where(inside_i, k, 0), inside & inside_i
    size = math.prod(shape)
    w = None if weight is None else weight.data.reshape(-1).astype(np.float64)
    # (the points outside counted in one more cell, then dropped)
    hist = xp.bincount(xp.where(inside, cell, size), weights=w, minlength=size + 1)[:size].astype(x.dtype)
    hist = hist.reshape(shape)
    if density:
        volume = 1
        for i, e in enumerate(edges):
            volume = volume * xp.diff(e).reshape([-1 if j == i else 1 for j in builtins.range(d)])
        with np.errstate(invalid="ignore", divide="ignore"):  # (nothing counted: 0 / 0, NaN, as PyTorch's)
            hist = hist / hist.sum() / volume
    return Tensor(hist.astype(x.dtype, copy=False)), [Tensor(xp.asarray(e)) for e in edges]


def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of x, ascending, as a 1-d tensor (PyTorch's unique; each NaN is its
    own value, as there), and with ``return_inverse`` where each entry of x is among them (x's
    shape), with ``return_counts`` how often each occurs: a tuple then, as PyTorch. No gradient.
    The values come sorted whatever ``sorted`` says (PyTorch's order is then unspecified); dim is
    not supported: the values of the flattened x only.

    How: sort the flat x; the sorted entries are runs of equal values (_runs), one per value."""
    if dim is not None:
        raise NotImplementedError("unique: dim is not supported (unique slices along an axis); minitx gives the "
                                  "unique values of the flattened tensor, dim=None")
    for what, value in (("sorted", sorted), ("return_inverse", return_inverse), ("return_counts", return_counts)):
        flag("unique", what, value)
    x = as_tensor(x)
    xp = backend.get_array_module(x.data)
    flat = x.data.reshape(-1)
    # bfloat16 ordered as float32, which holds each value exactly: ml_dtypes' sort does not put NaN last
    # (it leaves the array unsorted around one, and the equal values apart)
    order = xp.argsort(_comparable(flat), kind="stable")
    starts, place = _runs(flat[order])
    inverse = xp.empty(flat.shape, dtype=np.int64)
    inverse[order] = place
    return _with_inverse_and_counts(Tensor(flat[order][starts]), inverse.reshape(x.shape), starts, return_inverse,
                                    return_counts)


def _comparable(a):
    """a, or as float32 for bfloat16 (which float32 holds exactly): ml_dtypes' bfloat16 sort and
    comparisons do not treat NaN as NumPy's floats do."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def _runs(rows):
    """The runs of equal entries of a 1-d ``rows`` (of equal rows, for a 2-d one): (starts, place),
    starts True where one begins (the first entry, and each that differs from the one before; NaN
    differs from everything, itself too), place each entry's run, numbered from 0 (the running count
    of starts, less one)."""
    xp = backend.get_array_module(rows)
    keys = _comparable(rows)
    starts = xp.ones(rows.shape[:1], dtype=bool)
    differs = keys[1:] != keys[:-1]
    starts[1:] = differs if rows.ndim == 1 else differs.any(axis=1)
    return starts, xp.cumsum(starts) - 1


def _with_inverse_and_counts(values, inverse, starts, return_inverse, return_counts):
    """unique's and unique_consecutive's result: ``values`` alone, or a tuple adding the inverse and
    each run's length (the distance from its start to the next run's), as asked."""
    if not (return_inverse or return_counts):
        return values
    out = (values,)
    if return_inverse:
        out += (Tensor(inverse),)
    if return_counts:
        xp = backend.get_array_module(starts)
        out += (Tensor(xp.diff(xp.append(xp.flatnonzero(starts), starts.size)).astype(np.int64)),)
    return out


@takes_torch_keywords
def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None):
    """x with each run of equal consecutive entries kept once (PyTorch's unique_consecutive), as a
    1-d tensor of the flattened x; with ``axis``, each run of equal consecutive slices along it
    kept once (x's other axes stay). NaN equals nothing, so each NaN is kept. With
    ``return_inverse`` each entry's (each slice's) place among the kept ones, x's shape (axis:
    its length), and with ``return_counts`` each run's length: a tuple then, as PyTorch. No
    gradient."""
    for what, value in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        flag("unique_consecutive", what, value)
    x = as_tensor(x)
    xp = backend.get_array_module(x.data)
    if axis is None:
        flat = x.data.reshape(-1)
        starts, place = _runs(flat)
        return _with_inverse_and_counts(Tensor(flat[starts]), place.reshape(x.shape), starts, return_inverse,
                                        return_counts)
    if not x.ndim:
        raise ValueError(f"unique_consecutive: a 0-d tensor has no axis {axis!r}; give axis=None")
    (along,) = normalize_axes(axis, x.ndim, "unique_consecutive")
    if 0 in x.shape and x.shape[along]:
        raise ValueError(f"unique_consecutive: the input of shape {x.shape} has an empty axis other than axis "
                         f"{axis}, so its slices along axis {axis} cannot be told apart (PyTorch refuses it too)")
    moved = xp.moveaxis(x.data, along, 0)
    starts, place = _runs(moved.reshape(moved.shape[0], math.prod(moved.shape[1:])))  # one row per slice
    return _with_inverse_and_counts(Tensor(xp.moveaxis(moved[starts], 0, along)), place, starts, return_inverse,
                                    return_counts)


# ---------------------------------------------------------------- selections: data-dependent shapes


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of each flat (row-major) position in ``indices``, a tuple of one
    int64 tensor per axis, each of indices' shape (PyTorch's and NumPy's unravel_index); a position
    in [-n, n) of the n entries, counted from the end below 0. Integers, no gradient."""
    indices = as_tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got dtype {indices.dtype.name}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0 for n in shape):
        raise ValueError(f"unravel_index: shape must hold whole numbers >= 0, got {shape}")
    n = math.prod(shape)
    flat = indices.data.astype(np.int64)
    sync.check_in_range(flat, n, lambda value: IndexError(
        f"unravel_index: index {value} is out of range for shape {shape} of {n} entries; expected [{-n}, {n})"), low=-n)
    flat = flat % max(n, 1)
    coordinates = []
    for size in reversed(shape):  # the last axis varies fastest
        coordinates.append(flat % size)
        flat = flat // size
    return tuple(Tensor(c) for c in reversed(coordinates))


def _true_positions(mask):
    """Row-major flat positions of mask's True entries, int64, with ONE counted host read (the
    count, which the output's shape needs). The j-th True entry is the first position where the
    running count reaches j; CuPy's own nonzero would read the count uncounted."""
    xp = get_array_module(mask)
    flat = mask.reshape(-1)
    (count,) = backend.host_ints(flat.sum())
    return xp.searchsorted(xp.cumsum(flat), xp.arange(1, count + 1)).astype(np.int64, copy=False)


def nonzero(x, as_tuple=False):
    """Indices of x's nonzero entries (NaN counts as nonzero) in row-major order, no gradient:
    an int64 tensor [K, ndim] (PyTorch's nonzero), or with ``as_tuple`` one int64 tensor of K
    indices per axis (NumPy's nonzero; a 0-d x counts as 1-d, as PyTorch's)."""
    if not isinstance(as_tuple, bool):
        raise TypeError(f"nonzero: as_tuple must be a bool, got {as_tuple!r}")
    x = as_tensor(x)
    xp = backend.get_array_module(x.data)
    positions = _true_positions(x.data != 0)
    if as_tuple:
        return tuple(Tensor(i) for i in xp.unravel_index(positions, x.shape or (1,)))
    if not x.ndim:
        return Tensor(xp.zeros((positions.size, 0), dtype=np.int64))
    return Tensor(xp.stack(xp.unravel_index(positions, x.shape), axis=1))


def argwhere(x):
    """nonzero(x): the [K, ndim] int64 indices of x's nonzero entries, row-major (NumPy's and
    PyTorch's argwhere)."""
    return nonzero(x)


class MaskedSelect(Function):
    """y = the entries of x where mask is True, x and mask broadcast to one shape, as a 1-D
    tensor in row-major order: y[j] = x_b.flat[positions[j]].

    dx_b = zeros, then dx_b.flat[positions] = dy (each position once: an assignment); the
    engine sums dx_b back to x's shape. No gradient for mask.

    Derivation: docs/backprop/indexing.md
    """

    def forward(self, x, mask):
        self.shape = np.broadcast_shapes(x.shape, mask.shape)
        xp = get_array_module(x)
        self.positions = _true_positions(xp.broadcast_to(mask, self.shape))
        return xp.broadcast_to(x, self.shape).reshape(-1)[self.positions]

    def backward(self, dy):
        dx = get_array_module(dy).zeros(int(np.prod(self.shape)), dtype=dy.dtype)
        dx[self.positions] = dy
        return dx.reshape(self.shape), None


def masked_select(x, mask):
    """The entries of x where the boolean mask is True, x and mask broadcast together, as a
    1-D tensor in row-major order (PyTorch's masked_select)."""
    x = as_tensor(x)
    mask = as_tensor(mask, x)
    check_bool("masked_select", "mask", mask)
    try:
        np.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise ValueError(f"masked_select: mask of shape {mask.shape} and x of shape {x.shape} do not "
                         "broadcast") from None
    return MaskedSelect()(x, mask)
