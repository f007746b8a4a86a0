"""Hypothesis strategies for testing ops: shapes, arrays, masks and targets.

Import them in your own tests::

    from hypothesis import given
    from minitx.testing import strategies as mst, gradcheck

    @given(mst.float_arrays(mst.shapes(max_dims=3)))
    def test_my_op(x):
        gradcheck(my_op, minitx.tensor(x, requires_grad=True))

Finite differences are only meaningful where the function is smooth, so the array strategy
can keep values away from kinks (``away_from=(0.0,)`` for relu or abs) and make all values
distinct (``distinct=True`` for max, min, sorting: no ties).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "shapes", "broadcastable_shapes", "float_arrays", "tensors", "attention_masks",
    "class_targets", "axes_for",
]


def shapes(min_dims=0, max_dims=4, min_side=1, max_side=5):
    """Array shapes, size-1 axes included."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=1, max_side=5):
    """A tuple of ``num_shapes`` shapes that broadcast together (numpy rules)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(lambda b: b.input_shapes)


@st.composite
def float_arrays(draw, shape, dtype=np.float64, min_value=-3.0, max_value=3.0, away_from=(), margin=0.05,
                 distinct=False):
    """Float arrays of ``shape`` (a tuple or a strategy of shapes) with values in [min, max].

    away_from: points to stay at least ``margin`` from (e.g. 0.0 for relu, abs).
    distinct: every value differs from every other by at least (max-min)/2000, so max/min
    have no ties that a finite-difference step could cross.
    """
    if not isinstance(shape, tuple):
        shape = draw(shape)
    size = int(np.prod(shape))
    if distinct:
        grid = 2000
        if size > grid:
            raise ValueError(f"float_arrays: distinct=True supports at most {grid} elements, got {size}")
        points = min_value + (np.arange(grid) + 0.5) * (max_value - min_value) / grid
        for point in away_from:  # only grid points far from the kinks: no nudging, so no new ties
            points = points[np.abs(points - point) >= margin]
        if size > len(points):
            raise ValueError(f"float_arrays: cannot draw {size} distinct values away from {away_from}")
        ticks = draw(st.lists(st.integers(0, len(points) - 1), min_size=size, max_size=size, unique=True))
        return points[np.array(ticks, dtype=np.int64)].reshape(shape).astype(dtype)
    else:
        elements = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, width=64)
        array = draw(hnp.arrays(np.float64, shape, elements=elements))
    for point in away_from:
        near = np.abs(array - point) < margin
        array = np.where(near, point + np.where(array >= point, margin, -margin), array)
    return array.astype(dtype)


@st.composite
def tensors(draw, shape, dtype=np.float64, requires_grad=True, transposed=None, **array_kwargs):
    """minitx Tensors from float_arrays; ``transposed`` (drawn when None) makes the data a
    non-contiguous view (the transpose of a contiguous array), as real layers produce."""
    import minitx

    if not isinstance(shape, tuple):
        shape = draw(shape)
    if transposed is None:
        transposed = len(shape) >= 2 and draw(st.booleans())
    if transposed and len(shape) >= 2:
        array = draw(float_arrays(tuple(reversed(shape)), dtype, **array_kwargs)).T
    else:
        array = draw(float_arrays(shape, dtype, **array_kwargs))
    t = minitx.Tensor(array)  # keeps the view (minitx.tensor would copy into a contiguous array)
    return t.requires_grad_(True) if requires_grad else t


@st.composite
def attention_masks(draw, batch_shape, lq, lk):
    """Boolean masks [*batch_shape, lq, lk], True = may attend, at least one True per row."""
    shape = tuple(batch_shape) + (lq, lk)
    mask = draw(hnp.arrays(np.bool_, shape))
    keep = draw(hnp.arrays(np.int64, tuple(batch_shape) + (lq,), elements=st.integers(0, lk - 1)))
    np.put_along_axis(mask, keep[..., None], True, axis=-1)  # one guaranteed True per row
    return mask


@st.composite
def class_targets(draw, shape, num_classes, ignore_index=None, ignore_probability=0.2):
    """Integer targets in [0, num_classes), some set to ``ignore_index`` when it is given."""
    if not isinstance(shape, tuple):
        shape = draw(shape)
    targets = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, num_classes - 1)))
    if ignore_index is not None and targets.size:
        ignored = draw(hnp.arrays(np.bool_, shape, elements=st.floats(0, 1).map(lambda u: u < ignore_probability)))
        targets = np.where(ignored, ignore_index, targets)
    return targets


def axes_for(ndim: int):
    """None, a single axis (possibly negative), or a tuple of distinct axes of an ndim array."""
    if ndim == 0:
        return st.none()
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)
    return st.one_of(st.none(), single, several)
