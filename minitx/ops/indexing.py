"""Ops that move, pick, repeat or contract elements: flip, roll, tril/triu, gather,
scatter_add, repeat, tile, edge padding (reflect, replicate) and einsum.

Values are not changed, only where they go (einsum aside), so each backward sends dy back to
where each element came from, ADDING where one element was used several times (repeat, tile,
gather with a repeated index, reflect/replicate padding): a scatter-add, ``dx[index] += dy``.
"""
from __future__ import annotations

import numbers

import numpy as np

from minitx.autograd.function import Function
from minitx.backend import get_array_module, host_ints
from minitx.ops.reduction import normalize_axes
from minitx.ops.shape import pad_widths, scatter_add

__all__ = ["Flip", "Roll", "Tril", "Triu", "Gather", "ScatterAdd", "Repeat", "Tile", "PadEdges", "Einsum"]


def check_indices(op, what, index, size):
    """Raise unless ``index`` is an integer array with every value in [0, size)."""
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {index.dtype.name}")
    if index.size:
        low, high = host_ints(index.min(), index.max())
        if low < 0 or high >= size:
            raise IndexError(f"{op}: {what} {low if low < 0 else high} is out of range [0, {size})")


class Flip(Function):
    """y = x with the order of elements reversed along ``axis`` (None: all axes).
    dx = dy flipped back along the same axes"""

    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x):
        self.axes = normalize_axes(self.axis, x.ndim, "flip")
        return get_array_module(x).flip(x, axis=self.axes)

    def backward(self, dy):
        return (get_array_module(dy).flip(dy, axis=self.axes),)


class Roll(Function):
    """y = x shifted by ``shift`` places along ``axis`` (None: the flattened x), elements pushed
    off one end coming back at the other, as numpy.roll.   dx = dy rolled by -shift"""

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
        return get_array_module(x).roll(x, self.shift, self.axis)

    def backward(self, dy):
        back = tuple(-s for s in self.shift) if isinstance(self.shift, (tuple, list)) else -self.shift
        return (get_array_module(dy).roll(dy, back, self.axis),)


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


class Triu(Tril):
    """y = x on and above the k-th diagonal of the last two axes (j >= i + k), 0 below.
    dx = dy on the same entries, 0 below"""

    _lower = False


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
    axis when axis is None)."""
    if len(index_shape) != len(x_shape) or any(i > n for d, (i, n) in enumerate(zip(index_shape, x_shape))
                                                  if d != axis):
        where = "on every axis" if axis is None else f"off axis {axis}"
        raise ValueError(f"{op}: index of shape {index_shape} does not fit {what} of shape {x_shape}: "
                         f"it needs as many dimensions and sizes no larger {where}")


class Gather(Function):
    """y[p] = x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's gather): y has
    index's shape; index needs x's number of dimensions and sizes <= x's off the axis.

    dx = zeros, then dx[picked] += dy (an element picked twice gets both gradients); no
    gradient for index
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, index):
        (axis,) = normalize_axes(self.axis, max(x.ndim, 1), "gather")
        _check_along("gather", x.shape, index.shape, axis)
        check_indices("gather", "index", index, x.shape[axis])
        self.picked, self.in_shape = _along_index(index, axis), x.shape
        return x[self.picked]

    def backward(self, dy):
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        scatter_add(dx, self.picked, dy)
        return dx, None


class ScatterAdd(Function):
    """y = x, then y[p with its ``axis`` coordinate replaced by index[p]] += src[p] for every
    position p of index (PyTorch's scatter_add; src may be larger than index, the rest unused).

    dx = dy        dsrc[p] = dy[the same target as in forward] (0 where src is unused);
    no gradient for index
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, index, src):
        (axis,) = normalize_axes(self.axis, max(x.ndim, 1), "scatter_add")
        _check_along("scatter_add", x.shape, index.shape, axis)
        _check_along("scatter_add", src.shape, index.shape, None, what="src")
        check_indices("scatter_add", "index", index, x.shape[axis])
        self.target = _along_index(index, axis)
        self.used = tuple(slice(0, n) for n in index.shape)
        self.src_shape = src.shape
        y = x.copy()
        scatter_add(y, self.target, src[self.used])
        return y

    def backward(self, dy):
        dsrc = None
        if self.needs_input_grad[2]:
            dsrc = get_array_module(dy).zeros(self.src_shape, dtype=dy.dtype)
            dsrc[self.used] = dy[self.target]
        return dy, None, dsrc


class Repeat(Function):
    """numpy.repeat: each element repeated ``repeats`` times along ``axis`` (None: x flattened
    first); repeats an int or one count per element. (PyTorch: repeat_interleave.)

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
        counts = np.broadcast_to(np.asarray(self.repeats), (n,)) if np.ndim(self.repeats) == 0 else \
            np.asarray(self.repeats)
        if counts.shape != (n,) or counts.dtype.kind not in "iu" or (counts < 0).any():
            raise ValueError(f"repeat: repeats must be an int >= 0 or {n} of them (one per element), "
                             f"got {self.repeats!r}")
        self.src = xp.asarray(np.repeat(np.arange(n), counts))
        return xp.take(x, self.src, axis=self.moved_axis)

    def backward(self, dy):
        xp = get_array_module(dy)
        moved = xp.moveaxis(dy, self.moved_axis, 0)
        dx = xp.zeros((self.n,) + moved.shape[1:], dtype=dy.dtype)
        scatter_add(dx, self.src, moved)
        return (xp.moveaxis(dx, 0, self.moved_axis).reshape(self.in_shape),)


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
        if any(not isinstance(r, numbers.Integral) or r < 0 for r in self.reps):
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


def _edge_sources(mode, before, after, n, axis):
    """Source position along an axis of size n for each of the before + n + after outputs."""
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


class PadEdges(Function):
    """y = x padded with its own edge values: pad_width as in Pad; mode 'reflect' mirrors x
    without repeating the edge ([a b c] -> c b [a b c] b a), 'replicate' repeats the edge element
    ([a b c] -> a a [a b c] c c); numpy calls these 'reflect' and 'edge'.

    Written as y = x[src_0, src_1, ...] (an open grid of source positions per axis);
    dx = zeros, then dx[src grid] += dy (an edge element is copied several times)
    """

    def __init__(self, pad_width, mode):
        if mode not in ("reflect", "replicate"):
            raise ValueError(f"pad: mode must be 'constant', 'reflect' or 'replicate', got {mode!r}")
        self.pad_width, self.mode = pad_width, mode

    def forward(self, x):
        xp = get_array_module(x)
        width = pad_widths(self.pad_width, x.shape)
        sources = [xp.asarray(_edge_sources(self.mode, b, a, n, axis))
                   for axis, ((b, a), n) in enumerate(zip(width, x.shape))]
        self.grid, self.in_shape = xp.ix_(*sources), x.shape
        return x[self.grid] if x.ndim else x.copy()

    def backward(self, dy):
        if not dy.ndim:
            return (dy.copy(),)
        dx = get_array_module(dy).zeros(self.in_shape, dtype=dy.dtype)
        scatter_add(dx, self.grid, dy)
        return (dx,)


def _einsum(xp, spec, *arrays):
    """xp.einsum; NumPy's own loop is slow for products, optimize=True lets it use BLAS."""
    return xp.einsum(spec, *arrays, optimize=True) if xp is np else xp.einsum(spec, *arrays)


class Einsum(Function):
    """Einstein summation with an explicit output, e.g. 'bhqd,bhkd->bhqk' (attention scores) or
    'bti,oi->bto' (a linear layer): y[out letters] = sum over the other letters of the product of
    the operands. Supported: letters a-z/A-Z, one letter per axis, '->' always written; not
    supported: '...', a letter repeated inside one operand (diagonals) or in the output.

    backward, for operand i with letters s_i:  d operand_i = einsum(the other operands and dy,
    with their letters and the output's -> s_i). A letter of s_i that appears nowhere else was
    summed over in forward; dy does not depend on where along it, so the gradient is the same
    along that axis: computed without it, then broadcast.
    """

    def __init__(self, subscripts):
        self.subscripts = subscripts

    def _parse(self, shapes):
        spec = self.subscripts.replace(" ", "")
        if "->" not in spec:
            raise ValueError(f"einsum: {self.subscripts!r} needs an explicit output after '->', e.g. 'ij,jk->ik'")
        if "." in spec:
            raise ValueError(f"einsum: {self.subscripts!r}: '...' is not supported; name every axis with a letter")
        lhs, out = spec.split("->")
        terms = lhs.split(",")
        if len(terms) != len(shapes):
            raise ValueError(f"einsum: {self.subscripts!r} names {len(terms)} operands, got {len(shapes)}")
        sizes = {}
        for k, (term, shape) in enumerate(zip(terms, shapes)):
            if term and not (term.isascii() and term.isalpha()) or len(set(term)) != len(term):
                raise ValueError(f"einsum: operand {k} has subscripts {term!r}; use distinct letters, one per axis")
            if len(term) != len(shape):
                raise ValueError(f"einsum: operand {k} has subscripts {term!r} for shape {shape}: "
                                 f"{len(term)} letters for {len(shape)} axes")
            for letter, n in zip(term, shape):
                if sizes.setdefault(letter, n) != n:
                    raise ValueError(f"einsum: index {letter!r} has size {sizes[letter]} in one operand and "
                                     f"{n} in operand {k}")
        if (out and not out.isalpha()) or len(set(out)) != len(out) or any(c not in sizes for c in out):
            raise ValueError(f"einsum: output {out!r} must use distinct letters that appear in the operands")
        return terms, out

    def forward(self, *operands):
        self.terms, self.out = self._parse([a.shape for a in operands])
        self.save_for_backward(*operands)
        spec = ",".join(self.terms) + "->" + self.out
        return _einsum(get_array_module(operands[0]), spec, *operands)

    def backward(self, dy):
        operands = self.saved
        xp = get_array_module(dy)
        grads = []
        for i, (term, a) in enumerate(zip(self.terms, operands)):
            if not self.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(self.terms) if j != i] + [self.out]
            arrays = [b for j, b in enumerate(operands) if j != i] + [dy]
            present = set("".join(others))
            target = "".join(c for c in term if c in present)
            g = _einsum(xp, ",".join(others) + "->" + target, *arrays)
            if target != term:  # letters summed over in forward only: broadcast along them
                g = xp.broadcast_to(g.reshape([n if c in present else 1 for c, n in zip(term, a.shape)]), a.shape)
            grads.append(g)
        return tuple(grads)
