"""Hypothesis strategies for testing ops: shapes, arrays, tensors, indices, masks and targets.

Import them in your own tests::

    from hypothesis import given
    from minitx.testing import strategies as mst, check_gradients

    @given(mst.tensors(mst.shapes(max_dims=3)))
    def test_my_op(x):
        check_gradients(my_op, x)

Finite differences are only meaningful where the function is smooth, so the array strategy
can keep values away from kinks (``away_from=(0.0,)`` for relu or abs) and make all values
distinct (``distinct=True`` for max, min, sorting: no ties).

Every ``shape`` argument may be a tuple, a list, an int (a 1-d shape) or a strategy that draws
shapes. Arguments are checked when the strategy is built: a bad one raises ValueError naming
the strategy, not an error from inside hypothesis at draw time.

Needs hypothesis: ``pip install "minitx[test]"``.
"""
from __future__ import annotations

import operator

import numpy as np

from minitx import backend

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    from hypothesis.strategies import SearchStrategy
except ImportError as error:
    if (error.name or "").split(".")[0] != "hypothesis":
        raise
    raise ImportError('minitx.testing.strategies needs hypothesis; install it with: pip install "minitx[test]"',
                      name=error.name) from error

__all__ = [
    "shapes", "broadcastable_shapes", "float_arrays", "tensors", "broadcastable_tensors",
    "index_arrays", "getitem_indices", "INDEX_KINDS", "ids", "bool_masks", "attention_masks", "class_targets",
    "axes_for", "axes_and_keepdims",
]


# ---------------------------------------------------------------- argument checks


def _int(value, name, where, minimum=None):
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{where}: {name} must be an int, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value}")
    return value


def _shape(shape, where, name="shape"):
    """A tuple of non-negative ints, or the strategy as it is (drawn later)."""
    if isinstance(shape, SearchStrategy):
        return shape
    if isinstance(shape, (list, tuple)):
        try:
            dims = tuple(operator.index(n) for n in shape)
        except TypeError:
            dims = None
        if dims is not None and all(n >= 0 for n in dims):
            return dims
    else:
        try:
            n = operator.index(shape)
        except TypeError:
            n = -1
        if n >= 0:
            return (n,)
    raise ValueError(f"{where}: {name} must be a tuple or list of non-negative ints, an int, or a strategy "
                     f"of shapes; got {shape!r}")


def _draw_shape(draw, shape):
    return tuple(draw(shape)) if isinstance(shape, SearchStrategy) else shape


def _check_dims(where, min_dims, max_dims, min_side, max_side):
    min_dims = _int(min_dims, "min_dims", where, 0)
    max_dims = _int(max_dims, "max_dims", where, min_dims)
    min_side = _int(min_side, "min_side", where, 0)
    max_side = _int(max_side, "max_side", where, min_side)
    return min_dims, max_dims, min_side, max_side


def _probability(p, name, where):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{where}: {name} must be in [0, 1], got {p!r}")
    return float(p)


def _seeded_mask(draw, shape, probability):
    """Each element True with probability ``probability``, independently. NumPy draws the mask
    from a hypothesis-drawn seed: hypothesis does not draw floats uniformly (it favours edge
    values), so comparing drawn floats with the probability would not honour it."""
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).random(shape) < probability


# ---------------------------------------------------------------- shapes


def shapes(min_dims=0, max_dims=4, min_side=1, max_side=5):
    """Array shapes (tuples) with min_dims..max_dims axes of min_side..max_side each, size-1 axes included."""
    min_dims, max_dims, min_side, max_side = _check_dims("shapes", min_dims, max_dims, min_side, max_side)
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=1, max_side=5):
    """A tuple of ``num_shapes`` shapes that broadcast together (numpy rules)."""
    num_shapes = _int(num_shapes, "num_shapes", "broadcastable_shapes", 1)
    min_dims, max_dims, min_side, max_side = _check_dims("broadcastable_shapes", min_dims, max_dims, min_side,
                                                         max_side)
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(lambda b: b.input_shapes)


# ---------------------------------------------------------------- floats and tensors


def _outward(point, margin, sign):
    """point + sign * margin, moved by ulps until it is truly at least margin from point."""
    value = point + sign * margin
    while abs(value - point) < margin:
        value = np.nextafter(value, sign * np.inf)
    return value


def _far_enough(values, min_value, max_value, away_from, margin):
    ok = (values >= min_value) & (values <= max_value)
    for point in away_from:
        ok &= np.abs(values - point) >= margin
    return ok


def _number(where, name, value) -> float:
    """A number argument as a float, or a ValueError naming the strategy (float("x") names nothing)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{where}: {name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {name} must be a number, got {value!r}") from None


def _float_plan(where, min_value, max_value, away_from, margin, distinct):
    """Check float_arrays' arguments; return the values to move near points to (or the grid)."""
    min_value, max_value, margin = (_number(where, name, v) for name, v in
                                    (("min_value", min_value), ("max_value", max_value), ("margin", margin)))
    if not isinstance(away_from, (tuple, list)):  # (away_from=0.0, for (0.0,), would fail in a loop over it)
        raise ValueError(f"{where}: away_from must be a tuple of points, got {away_from!r}"
                         + (f"; for one point write ({away_from!r},)" if isinstance(away_from, (int, float)) else ""))
    away_from = tuple(_number(where, "a point of away_from", p) for p in away_from)
    if not (np.isfinite(min_value) and np.isfinite(max_value) and min_value <= max_value):
        raise ValueError(f"{where}: need finite min_value <= max_value, got [{min_value}, {max_value}]")
    if not margin >= 0:
        raise ValueError(f"{where}: margin must be >= 0, got {margin}")
    if distinct:
        if min_value == max_value:
            raise ValueError(f"{where}: distinct=True needs min_value < max_value")
        grid = min_value + (np.arange(_GRID) + 0.5) * (max_value - min_value) / _GRID
        grid = grid[_far_enough(grid, min_value, max_value, away_from, margin)]  # no nudging, so no new ties
        if not len(grid):
            raise ValueError(f"{where}: no value in [{min_value}, {max_value}] is {margin} away from {away_from}")
        return grid
    # The nearest allowed value to a point that is not allowed is one of these edges.
    edges = [_outward(p, margin, sign) for p in away_from for sign in (1, -1)] + [min_value, max_value]
    edges = np.array(edges, dtype=np.float64)
    edges = edges[_far_enough(edges, min_value, max_value, away_from, margin)]
    if not len(edges):
        raise ValueError(f"{where}: no value in [{min_value}, {max_value}] is at least {margin} away from "
                         f"{away_from}: the margins cover the whole range")
    return edges


_GRID = 2000


def float_arrays(shape, dtype=np.float64, min_value=-3.0, max_value=3.0, away_from=(), margin=0.05,
                 distinct=False):
    """Float arrays of ``shape`` with every value in [min_value, max_value].

    away_from: points every value stays at least ``margin`` from (e.g. 0.0 for relu, abs). A value
    drawn too near is moved to the nearest value in range that is far enough from all points, so
    a point near a bound pushes values to its other side. ValueError when no such value exists.
    distinct: every value differs from every other by at least (max-min)/2000, so max/min
    have no ties that a finite-difference step could cross (at most 2000 elements); shrinking
    packs them one such step apart.
    dtype: a floating dtype (ValueError otherwise). The promises hold in float64; a float32,
    float16 or bfloat16 ``dtype`` rounds the values
    afterwards (keep ``margin`` and the range wide enough for its rounding: bfloat16 keeps about two
    decimal digits).
    """
    return _make_float_arrays("float_arrays", shape, dtype, min_value, max_value, away_from, margin, distinct)


def _make_float_arrays(where, shape, dtype=np.float64, min_value=-3.0, max_value=3.0, away_from=(), margin=0.05,
                       distinct=False):
    shape = _shape(shape, where)
    plan = _float_plan(where, min_value, max_value, away_from, margin, distinct)
    if distinct and isinstance(shape, tuple):
        _check_distinct_size(where, shape, plan, away_from)
    try:
        dtype = backend.resolve_dtype(dtype)
    except TypeError as error:
        raise TypeError(f"{where}: {error}") from None
    if not backend.is_floating(dtype):  # a cast to int or bool would break every promise about the values
        raise ValueError(f"{where}: dtype must be a floating dtype (float16, bfloat16, float32, float64), got "
                         f"{dtype.name}")
    if distinct:
        _check_distinct_in(where, dtype, float(min_value), float(max_value))
    return _float_arrays(shape, dtype, float(min_value), float(max_value),
                         tuple(float(p) for p in away_from), float(margin), distinct, plan)


def _check_distinct_in(where, dtype, min_value, max_value):
    """distinct=True's spacing, (max - min) / _GRID, must outlast the dtype's rounding (a step of
    it at the largest |value|), or rounded neighbours would tie."""
    step = 2.0 ** -7 if dtype.name == "bfloat16" else float(np.finfo(dtype).eps)  # bfloat16: 8 significant bits
    if (max_value - min_value) / _GRID <= step * max(abs(min_value), abs(max_value)):
        raise ValueError(f"{where}: distinct=True spaces values (max - min) / {_GRID} apart, which {dtype.name} "
                         f"cannot keep apart near {max(abs(min_value), abs(max_value))} (its rounding step there is "
                         "larger: rounded neighbours would tie); draw distinct values in float32 or float64")


def _check_distinct_size(where, shape, grid, away_from):
    size = int(np.prod(shape))
    if size > _GRID:
        raise ValueError(f"{where}: distinct=True supports at most {_GRID} elements, got {size}")
    if size > len(grid):
        raise ValueError(f"{where}: cannot draw {size} distinct values away from {away_from}")


@st.composite
def _float_arrays(draw, shape, dtype, min_value, max_value, away_from, margin, distinct, plan):
    shape = _draw_shape(draw, shape)
    size = int(np.prod(shape))
    if distinct:
        _check_distinct_size("float_arrays", shape, plan, away_from)  # a drawn shape: checked now
        # size grid points out of a drawn window of them, picked and ordered by NumPy from a drawn
        # seed: a unique list of 2000 drawn ints is more than hypothesis will draw. The window
        # shrinks towards size: neighbours one grid step apart, the closest distinct values come.
        window = draw(st.integers(size, len(plan)))
        start = draw(st.integers(0, len(plan) - window))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        ticks = start + rng.choice(window, size, replace=False)
        return plan[ticks].reshape(shape).astype(dtype)
    # no subnormals: BLAS kernels may flush them to zero, so two correct products differ by 20%
    elements = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, allow_subnormal=False,
                         width=64)
    array = draw(hnp.arrays(np.float64, shape, elements=elements))
    bad = ~_far_enough(array, min_value, max_value, away_from, margin)
    if bad.any():  # argmin picks the first of two equally near edges: point + margin before point - margin
        array[bad] = plan[np.abs(array[bad][:, None] - plan[None, :]).argmin(axis=1)]
    return array.astype(dtype)


def tensors(shape, dtype=np.float64, requires_grad=True, transposed=None, **array_kwargs):
    """minitx Tensors holding float_arrays(shape, dtype, **array_kwargs).

    ``transposed`` (drawn when None) makes the data a non-contiguous view (the transpose of a
    contiguous array), as real layers produce; it needs at least 2 dimensions.
    """
    shape = _shape(shape, "tensors")
    _make_float_arrays("tensors", shape, dtype, **array_kwargs)  # checks the array arguments now, not at draw time
    return _tensors(shape, dtype, requires_grad, transposed, array_kwargs)


@st.composite
def _tensors(draw, shape, dtype, requires_grad, transposed, array_kwargs):
    import minitx

    shape = _draw_shape(draw, shape)
    if transposed is None:
        transposed = len(shape) >= 2 and draw(st.booleans())
    if transposed and len(shape) >= 2:
        array = draw(float_arrays(tuple(reversed(shape)), dtype, **array_kwargs)).T
    else:
        array = draw(float_arrays(shape, dtype, **array_kwargs))
    t = minitx.Tensor(array)  # keeps the view (minitx.tensor would copy into a contiguous array)
    return t.requires_grad_(True) if requires_grad else t


def broadcastable_tensors(num=2, min_dims=0, max_dims=4, min_side=1, max_side=5, **tensor_kwargs):
    """A tuple of ``num`` tensors whose shapes broadcast together; ``tensor_kwargs`` go to tensors()."""
    shapes_strategy = broadcastable_shapes(num, min_dims, max_dims, min_side, max_side)
    tensors((), **tensor_kwargs)  # checks the keyword arguments now
    return shapes_strategy.flatmap(lambda drawn: st.tuples(*(tensors(s, **tensor_kwargs) for s in drawn)))


# ---------------------------------------------------------------- integers, masks, targets


def index_arrays(shape, size, allow_negative=False):
    """int64 arrays of ``shape`` that index an axis of length ``size``: values in [0, size),
    or in [-size, size) with ``allow_negative`` (numpy's negative indices count from the end)."""
    shape = _shape(shape, "index_arrays")
    size = _int(size, "size", "index_arrays", 1)
    low = -size if allow_negative else 0
    return _draw_shape_then(shape, lambda s: hnp.arrays(np.int64, s, elements=st.integers(low, size - 1)))


#: the kinds of index getitem_indices draws
INDEX_KINDS = ("basic", "integer arrays", "mask", "last-axis mask")


def getitem_indices(shape, kinds=INDEX_KINDS):
    """Indices ``x[index]`` takes for an x of ``shape`` (at least one axis, every side at least 1:
    draw it with ``shapes(min_dims=1)``), of the ``kinds``:

    * "basic": per axis an int (negative ones too), a slice of any step (negative ones too, bounds
      past the ends included) or the whole axis; sometimes an Ellipsis and a None among them;
    * "integer arrays": an int64 array (repeats and negative values) on the first axis, alone,
      then a reversed slice, or with a second array on the third axis;
    * "mask": a boolean array of x's shape;
    * "last-axis mask": ``(Ellipsis, mask)`` with a boolean mask of the last axis.

    Repeated integer indices pick one element several times: a getitem's gradient adds there, and
    which write stays in x[index] = v is not said. Draw them for NumPy: wrap a part in
    minitx.tensor for a tensor index."""
    shape = _shape(shape, "getitem_indices")
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    unknown = [k for k in kinds if k not in INDEX_KINDS]
    if not kinds or unknown:
        raise ValueError(f"getitem_indices: kinds must be some of {INDEX_KINDS}, got {kinds!r}")
    if isinstance(shape, tuple):
        _check_indexable(shape)
    return _getitem_indices(shape, kinds)


def _check_indexable(shape):
    if not shape or 0 in shape:
        raise ValueError(f"getitem_indices: needs a shape of at least one axis, each of length 1 or more, "
                         f"got {shape}")


@st.composite
def _getitem_indices(draw, shape, kinds):
    shape = _draw_shape(draw, shape)
    _check_indexable(shape)
    kind = draw(st.sampled_from(kinds))
    if kind == "basic":
        return draw(_basic_index(shape))
    if kind == "integer arrays":
        return draw(_integer_array_index(shape))
    if kind == "mask":
        return draw(hnp.arrays(np.bool_, shape))
    return Ellipsis, draw(hnp.arrays(np.bool_, shape[-1]))


@st.composite
def _basic_index(draw, shape):
    parts = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "all"]))
        if kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 1, n + 1)
            parts.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2, -3]))))
        else:
            parts.append(slice(None))
    if draw(st.booleans()):
        parts[draw(st.integers(0, len(parts) - 1))] = Ellipsis
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


@st.composite
def _integer_array_index(draw, shape):
    first = draw(hnp.arrays(np.int64, draw(st.integers(1, 5)), elements=st.integers(-shape[0], shape[0] - 1)))
    kind = draw(st.sampled_from(["alone", "then slice", "two arrays apart"][:min(len(shape), 3)]))
    if kind == "alone":
        return first
    if kind == "then slice":
        return first, slice(None, None, -1)
    second = draw(hnp.arrays(np.int64, first.shape, elements=st.integers(-shape[2], shape[2] - 1)))
    return first, slice(1, None), second


def ids(shape, num_embeddings, padding_idx=None, padding_probability=0.2):
    """int64 token ids of ``shape`` in [0, num_embeddings), for embedding lookups.

    With ``padding_idx``, each id independently becomes padding_idx with probability
    ``padding_probability`` (besides being drawn as an ordinary id).
    """
    shape = _shape(shape, "ids")
    num_embeddings = _int(num_embeddings, "num_embeddings", "ids", 1)
    if padding_idx is not None and not 0 <= _int(padding_idx, "padding_idx", "ids") < num_embeddings:
        raise ValueError(f"ids: padding_idx must be in [0, {num_embeddings}), got {padding_idx}")
    probability = _probability(padding_probability, "padding_probability", "ids")
    return _replaced_some(index_arrays(shape, num_embeddings), padding_idx, probability)


@st.composite
def _replaced_some(draw, arrays, value, probability):
    array = draw(arrays)
    if value is None or not array.size:
        return array
    return np.where(_seeded_mask(draw, array.shape, probability), value, array)


def bool_masks(shape, at_least_one_true=False):
    """Boolean arrays of ``shape``; ``at_least_one_true`` sets at least one element True."""
    shape = _shape(shape, "bool_masks")
    if at_least_one_true and isinstance(shape, tuple) and int(np.prod(shape)) == 0:
        raise ValueError(f"bool_masks: a mask of shape {shape} has no element to set True")
    return _bool_masks(shape, at_least_one_true)


@st.composite
def _bool_masks(draw, shape, at_least_one_true):
    shape = _draw_shape(draw, shape)
    mask = draw(hnp.arrays(np.bool_, shape))
    if at_least_one_true:
        if not mask.size:
            raise ValueError(f"bool_masks: the drawn shape {shape} has no element to set True")
        mask.reshape(-1)[draw(st.integers(0, mask.size - 1))] = True
    return mask


def attention_masks(batch_shape, lq, lk):
    """Boolean masks [*batch_shape, lq, lk], True = may attend, at least one True per row."""
    batch_shape = _shape(batch_shape, "attention_masks", "batch_shape")
    lq = _int(lq, "lq", "attention_masks", 0)
    lk = _int(lk, "lk", "attention_masks", 1)  # a row needs a key it may attend to
    return _attention_masks(batch_shape, lq, lk)


@st.composite
def _attention_masks(draw, batch_shape, lq, lk):
    shape = _draw_shape(draw, batch_shape) + (lq, lk)
    mask = draw(hnp.arrays(np.bool_, shape))
    keep = draw(hnp.arrays(np.int64, shape[:-1], elements=st.integers(0, lk - 1)))
    np.put_along_axis(mask, keep[..., None], True, axis=-1)  # one guaranteed True per row
    return mask


def class_targets(shape, num_classes, ignore_index=None, ignore_probability=0.2):
    """int64 targets of ``shape`` in [0, num_classes).

    With ``ignore_index``, each target independently becomes ignore_index with probability
    ``ignore_probability`` (so on average that fraction of the targets is ignored, whatever
    hypothesis draws; an ignore_index inside [0, num_classes) can also be drawn as a class).
    """
    shape = _shape(shape, "class_targets")
    num_classes = _int(num_classes, "num_classes", "class_targets", 1)
    probability = _probability(ignore_probability, "ignore_probability", "class_targets")
    if ignore_index is not None:
        ignore_index = _int(ignore_index, "ignore_index", "class_targets")
    return _replaced_some(index_arrays(shape, num_classes), ignore_index, probability)


def _draw_shape_then(shape, make):
    """make(shape) for a fixed shape; for a strategy of shapes, draw one and then make(it)."""
    return shape.flatmap(lambda s: make(tuple(s))) if isinstance(shape, SearchStrategy) else make(shape)


# ---------------------------------------------------------------- axes


def axes_for(ndim: int):
    """None, a single axis (possibly negative), or a tuple of distinct axes of an ndim array."""
    ndim = _int(ndim, "ndim", "axes_for", 0)
    if ndim == 0:
        return st.none()
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)
    return st.one_of(st.none(), single, several)


def axes_and_keepdims(ndim: int):
    """(axis, keepdims) pairs for reductions: axis from axes_for(ndim), keepdims True or False."""
    return st.tuples(axes_for(ndim), st.booleans())
