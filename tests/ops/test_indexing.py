"""Flip, Roll, Tril, Triu, Diagonal (and trace), Gather, ScatterAdd, ScatterReduce, Repeat, Tile, PadEdges
(reflect, replicate, circular), Einsum, one_hot, and the composites index_fill, index_copy,
masked_scatter, slice_scatter, select_scatter, diagonal_scatter, index_put and index_reduce (minitx/ops/indexing.py): forward against independent NumPy computations, float64 gradients
(check_gradients) on hypothesis-drawn shapes, PyTorch parity, and the errors users see."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

SHAPES = mst.shapes(min_dims=1, max_dims=3, max_side=4)


def _torch():
    return torch_in_example()


# ---------------------------------------------------------------- flip, roll, tril, triu


def _np_flip(a, axes):
    index = [slice(None)] * a.ndim
    for axis in range(a.ndim) if axes is None else np.atleast_1d(axes):
        index[axis] = slice(None, None, -1)
    return a[tuple(index)]


@given(x=mst.tensors(SHAPES), data=st.data())
def test_flip(x, data):
    axis = data.draw(mst.axes_for(x.ndim), label="axis")
    check_forward(lambda t: F.flip(t, axis), lambda a: _np_flip(a, axis), x)
    assert check_gradients(lambda t: t.flip(axis), x)
    dims = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis).tolist())
    parity(lambda t: F.flip(t, axis), lambda t: t.flip(dims), leaf(x.numpy()))


def test_flip_is_a_copy_as_pytorchs():
    """An in-place write into flip's result leaves its input as it was (NumPy's flip is a view)."""
    x = minitx.tensor([1.0, 2.0, 3.0])
    y = F.flip(x, 0)
    y += 10
    assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [13.0, 12.0, 11.0]


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=4)), data=st.data())
def test_roll(x, data):
    """A 0-d x takes axis 0 or -1, as in minitx's other ops (PyTorch refuses an axis there)."""
    shift = data.draw(st.integers(-6, 6), label="shift")
    ndim = max(x.ndim, 1)
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)), label="axis")

    def reference(a):  # y[i] = x[(i - shift) mod n]
        flat = a.reshape(-1) if axis is None or not a.ndim else a
        along = 0 if axis is None or not a.ndim else axis
        n = flat.shape[along]
        return np.take(flat, (np.arange(n) - shift) % n, axis=along).reshape(a.shape)

    check_forward(lambda t: F.roll(t, shift, axis), reference, x)
    assert check_gradients(lambda t: t.roll(shift, axis), x)
    if x.ndim or axis is None:
        parity(lambda t: F.roll(t, shift, axis), lambda t: t.roll(shift, axis), leaf(x.numpy()))


def test_roll_several_axes_and_one_shift_on_an_axis_it_does_not_halve():
    """(test_roll's drawn shapes are often of length 1 or 2, where rolling by s and by -s agree: a
    backward rolling dy forward again passed them)"""
    x = leaf(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(F.roll(x, (1, -1), (0, 1)).numpy(), np.roll(x.numpy(), (1, -1), (0, 1)))
    assert check_gradients(lambda t: F.roll(t, (1, -1), (0, 1)), x)
    assert check_gradients(lambda t: F.roll(t, 1, 0), x)
    assert check_gradients(lambda t: F.roll(t, -3), x)
    with pytest.raises(ValueError, match="roll: 2 shifts for 1 axes"):
        F.roll(x, (1, 2), 0)
    # integer shifts only, as PyTorch's (NumPy's roll would take 1.5 as 1); an integer tensor is its ints
    for refused, axis in ((1.5, 0), (2.0, 0), (True, 0), ((1, 2.0), (0, 1)), (minitx.tensor(1.0), 0),
                          (minitx.tensor([1.0, 2.0]), (0, 1))):
        with pytest.raises(TypeError, match="roll: shift must be an int or ints"):
            F.roll(x, refused, axis)
    for shift, axis in ((minitx.tensor(1), 0), (minitx.tensor([1, -1]), (0, 1)), (np.int64(2), 1)):
        np.testing.assert_array_equal(F.roll(x, shift, axis).numpy(), np.roll(x.numpy(), np.asarray(shift), axis))


@pytest.mark.parametrize("name", ["Tril", "Triu"])
@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=4, max_side=4)), k=st.integers(-3, 3))
def test_tril_triu(name, x, k):
    lower = name == "Tril"
    fn = (lambda t: F.tril(t, k)) if lower else (lambda t: t.triu(k))

    def reference(a):
        i, j = np.indices(a.shape[-2:])
        return a * ((j <= i + k) if lower else (j >= i + k))

    check_forward(fn, reference, x)
    assert check_gradients(fn, x)
    parity(fn, lambda t: t.tril(k) if lower else t.triu(k), leaf(x.numpy()))


def test_tril_zeroes_nan_above_the_diagonal_and_needs_a_matrix():
    x = leaf([[1.0, np.nan], [np.inf, 2.0]])
    np.testing.assert_array_equal(F.tril(x).numpy(), [[1.0, 0.0], [np.inf, 2.0]])
    with pytest.raises(ValueError, match=r"triu: needs at least 2 dimensions, got shape \(3,\)"):
        F.triu(leaf([1.0, 2.0, 3.0]))


@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=4, max_side=4)), offset=st.integers(-5, 5), data=st.data())
def test_diagonal(x, offset, data):
    """Diagonal: any two axes (either order, counted from either end), offsets past the edge included."""
    axis1, axis2 = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=2, max_size=2,
                                      unique_by=lambda a: a % x.ndim), label="axes")

    def reference(a):  # pairs (row, column) walked one by one along the moved-to-the-end axes
        moved = np.moveaxis(a, (axis1, axis2), (-2, -1))
        pairs = zip(range(max(-offset, 0), moved.shape[-2]), range(max(offset, 0), moved.shape[-1]))
        picked = [moved[..., i, j] for i, j in pairs]
        return np.stack(picked, axis=-1) if picked else np.zeros(moved.shape[:-2] + (0,))

    fn = lambda t: t.diagonal(offset, axis1, axis2)  # noqa: E731
    check_forward(fn, reference, x)
    assert check_gradients(fn, x)
    parity(fn, lambda t: t.diagonal(offset, axis1, axis2), leaf(x.numpy()))


@st.composite
def _scatter_into_case(draw, name):
    """(its arguments past x and src, x, src, NumPy's x with src written) of the *_scatter op ``name``."""
    x = draw(mst.tensors(mst.shapes(min_dims=2 if name == "diagonal_scatter" else 1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    a = x.numpy()
    if name == "slice_scatter":
        start, end = draw(st.none() | st.integers(-5, 5)), draw(st.none() | st.integers(-5, 5))
        args = (axis, start, end, draw(st.integers(1, 3)))
        index = (slice(None),) * (axis % x.ndim) + (slice(start, end, args[-1]),)
    elif name == "select_scatter":
        args = (axis, draw(st.integers(-x.shape[axis], x.shape[axis] - 1)))
        index = (slice(None),) * (axis % x.ndim) + (args[1],)
    else:
        axis2 = draw(st.integers(-x.ndim, x.ndim - 1).filter(lambda b: b % x.ndim != axis % x.ndim))
        offset = draw(st.integers(-5, 5))
        args = (offset, axis, axis2)
        moved = np.moveaxis(np.arange(a.size).reshape(a.shape), (axis, axis2), (-2, -1))  # each entry's flat position
        pairs = list(zip(range(max(-offset, 0), moved.shape[-2]), range(max(offset, 0), moved.shape[-1])))
        flat = np.stack([moved[..., i, j] for i, j in pairs], -1) if pairs else np.zeros(moved.shape[:-2] + (0,), int)
        index = np.unravel_index(flat, a.shape)
    src = draw(mst.tensors(a[index].shape))
    expected = a.copy()
    expected[index] = src.numpy()
    return args, x, src, expected


@pytest.mark.parametrize("name", ["slice_scatter", "select_scatter", "diagonal_scatter"])
@given(data=st.data())
def test_slice_select_and_diagonal_scatter_write_src_into_a_copy_of_x(name, data):
    """x itself is unchanged; dx is dy where src did not go, dsrc is dy where it went (both gradchecked)."""
    args, x, src, expected = data.draw(_scatter_into_case(name), label="case")
    before = x.numpy().copy()
    fn = lambda t, s: getattr(F, name)(t, s, *args)  # noqa: E731
    np.testing.assert_array_equal(fn(x, src).numpy(), expected)
    np.testing.assert_array_equal(x.numpy(), before)
    assert check_gradients(fn, x, src)
    parity(lambda t, s: getattr(t, name)(s, *args), lambda t, s: getattr(t, name)(s, *args),
           leaf(x.numpy()), leaf(src.numpy()))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.slice_scatter(x, minitx.ones(3, 3), 1, 1, 3), ValueError,
     r"slice_scatter: src of shape \(3, 3\) does not fit the part of x \(shape \(3, 4\)\) it replaces: expected shape \(3, 2\)"),
    (lambda x: F.slice_scatter(x, minitx.ones(3, 4), 1, step=0), ValueError, "slice_scatter: step must be a whole number >= 1"),
    (lambda x: F.slice_scatter(x, minitx.ones(3, 4), 2), np.exceptions.AxisError, "slice_scatter: axis 2 is out of range"),
    (lambda x: F.select_scatter(x, minitx.ones(3), 0, 0), ValueError, r"select_scatter: src of shape \(3,\) does not fit"),
    (lambda x: F.select_scatter(x, minitx.ones(4), 0, 3), IndexError,
     r"select_scatter: index 3 is out of range for axis 0 of length 3; expected an int in \[-3, 3\)"),
    (lambda x: F.select_scatter(x, minitx.ones(4), 0, 1.0), TypeError, "select_scatter: index must be an int, got 1.0"),
    (lambda x: F.diagonal_scatter(x, minitx.ones(4)), ValueError, r"diagonal_scatter: src of shape \(4,\) does not fit"),
    (lambda x: F.diagonal_scatter(x, minitx.ones(3), 0, 1, -1), ValueError,
     "diagonal_scatter: axis1 and axis2 must differ, got 1 and -1"),
    (lambda x: F.diagonal_scatter(x[0], minitx.ones(1)), ValueError, r"diagonal_scatter: needs at least 2 dimensions"),
])
def test_slice_select_and_diagonal_scatter_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(minitx.zeros(3, 4))


# ---------------------------------------------------------------- index_put, index_reduce


@given(data=st.data())
def test_index_put_as_numpys_writes_and_add_at(data):
    """accumulate: every value added at its place (NumPy's add.at), repeats adding up; without it a
    write (indices drawn without repeats there: PyTorch does not say which of two writes stays)."""
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    accumulate = data.draw(st.booleans(), label="accumulate")
    k = data.draw(st.integers(1, len(shape)), label="k")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    m = data.draw(st.integers(0, 5), label="m")
    if accumulate:
        indices = [rng.integers(-n, n, size=m) for n in shape[:k]]
    else:
        flat = rng.permutation(int(np.prod(shape[:k])))[:m]
        m = flat.size
        indices = [i - n * rng.integers(0, 2, size=i.shape) for i, n in zip(np.unravel_index(flat, shape[:k]), shape)]
    values_shape = data.draw(st.sampled_from([(m,) + shape[k:], shape[k:], ()]), label="values")
    x, values = leaf(rng.standard_normal(shape)), leaf(rng.standard_normal(values_shape))
    expected = x.numpy().copy()
    where = tuple(indices)
    if accumulate:
        np.add.at(expected, where, np.broadcast_to(values.numpy(), (m,) + shape[k:]))
    else:
        expected[where] = values.numpy()
    fn = lambda t, v: F.index_put(t, tuple(minitx.tensor(i) for i in indices), v, accumulate)  # noqa: E731
    np.testing.assert_allclose(fn(x, values).numpy(), expected, rtol=1e-15, atol=1e-15)
    assert check_gradients(fn, x, values)
    parity(lambda t, v: t.index_put(tuple(minitx.tensor(i) for i in indices), v, accumulate),
           lambda t, v: t.index_put(tuple(_torch().from_numpy(i) for i in indices), v, accumulate),
           leaf(x.numpy()), leaf(values.numpy()))


def test_index_put_takes_a_boolean_index_and_writes_in_place_as_pytorch():
    x = minitx.zeros(3)
    assert F.index_put(x, (minitx.tensor([True, False, True]),), minitx.tensor(2.0), accumulate=True).numpy().tolist() \
        == [2.0, 0.0, 2.0]
    assert x.index_put_((minitx.tensor([1, 1]),), minitx.tensor([1.0, 4.0]), accumulate=True) is x
    assert x.numpy().tolist() == [0.0, 5.0, 0.0]
    with pytest.raises(TypeError, match="index_put: values must have x's dtype float32, got float64"):
        x.index_put((minitx.tensor([0]),), minitx.tensor([1.0], dtype="float64"))
    with pytest.raises(TypeError, match="index_put: indices must be a tuple of tensors, got Tensor"):
        x.index_put(minitx.tensor([0]), minitx.tensor(1.0))
    with pytest.raises(IndexError, match=r"index_put: index 3 is out of range for axis 0 of length 3; expected \[-3, 3\)"):
        x.index_put((minitx.tensor([3]),), minitx.tensor(1.0), accumulate=True)
    with pytest.raises(ValueError, match=r"index_put: values of shape \(2,\) do not broadcast to x\[indices\]'s shape"):
        x.index_put((minitx.tensor([0, 1, 2]),), minitx.tensor([1.0, 2.0]), accumulate=True)
    with pytest.raises(TypeError, match="index_put: indices must be integer or boolean tensors"):
        x.index_put((minitx.tensor([0.0]),), minitx.tensor(1.0), accumulate=True)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_refuses_what_does_not_fit_by_its_own_name(accumulate):
    """With or without accumulate, the same checks, each naming index_put; a boolean index of
    another shape than the axes it covers is refused, as by PyTorch (accumulate wrote its True
    positions into x's first rows and columns)."""
    x = minitx.zeros(3, 4)
    with pytest.raises(IndexError, match=r"index_put: a boolean index of shape \(2, 4\) covers axes 0 to 1 of x, "
                                         r"of lengths \(3, 4\); expected that shape"):
        x.index_put((minitx.ones(2, 4, dtype="bool"),), minitx.tensor(1.0), accumulate=accumulate)
    with pytest.raises(IndexError, match=r"index_put: a boolean index of shape \(2,\) covers axes 1 to 1"):
        x.index_put((minitx.tensor([0]), minitx.tensor([True, False])), minitx.tensor(1.0), accumulate=accumulate)
    with pytest.raises(IndexError, match=r"index_put: index 3 is out of range for axis 0 of length 3"):
        x.index_put((minitx.tensor([3]),), minitx.tensor(1.0), accumulate=accumulate)
    with pytest.raises(IndexError, match=r"index_put: 3 index axes for x of shape \(3, 4\)"):
        x.index_put((minitx.tensor([0]),) * 3, minitx.tensor(1.0), accumulate=accumulate)
    with pytest.raises(ValueError, match=r"index_put: values of shape \(2,\) do not broadcast to x\[indices\]'s shape"):
        x.index_put((minitx.tensor([0, 1, 2]),), minitx.tensor([1.0, 2.0]), accumulate=accumulate)
    with pytest.raises(TypeError, match="index_put: indices must be integer or boolean tensors"):
        x.index_put((minitx.tensor([0.0]),), minitx.tensor(1.0), accumulate=accumulate)
    assert not x.numpy().any()
    mask = minitx.tensor([True, False, True])
    assert x.index_put((mask,), minitx.tensor(2.0), accumulate=accumulate).numpy()[:, 0].tolist() == [2.0, 0.0, 2.0]


def _np_index_reduce(a, axis, index, source, reduce, include_self):
    out = np.moveaxis(a.copy(), axis, 0)
    src = np.moveaxis(source, axis, 0)
    for row in set(index.tolist()):
        picked = [src[i] for i in range(len(index)) if index[i] == row] + ([out[row]] if include_self else [])
        out[row] = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](np.stack(picked), 0)
    return np.moveaxis(out, 0, axis)


@pytest.mark.filterwarnings(r"ignore:index_reduce\(\) is in beta")  # (PyTorch's)
@given(data=st.data())
def test_index_reduce_as_numpy_with_gradients_as_pytorch(data):
    """Distinct values (no ties for amax, amin; no zeros for prod's quotient): the gradient is defined."""
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    index = np.array(data.draw(st.lists(st.integers(0, shape[axis] - 1), max_size=5), label="index"), dtype=np.int64)
    reduce = data.draw(st.sampled_from(["prod", "mean", "amax", "amin"]), label="reduce")
    include_self = data.draw(st.booleans(), label="include_self")
    source_shape = shape[:axis % len(shape)] + index.shape + shape[axis % len(shape) + 1:]
    n = int(np.prod(shape)) + int(np.prod(source_shape))
    values = (np.random.default_rng(n).permutation(n) + 1.0) / n * np.where(np.arange(n) % 2, 1, -1) + 0.5
    x, source = leaf(values[:int(np.prod(shape))].reshape(shape)), leaf(values[int(np.prod(shape)):].reshape(source_shape))
    fn = lambda t, s: t.index_reduce(axis, minitx.tensor(index), s, reduce, include_self=include_self)  # noqa: E731
    np.testing.assert_allclose(fn(x, source).numpy(), _np_index_reduce(x.numpy(), axis % len(shape), index,
                                                                        source.numpy(), reduce, include_self), rtol=1e-13,
                               atol=1e-15)  # (values in [-0.5, 1.5]: a mean that cancels to 0 keeps their rounding)
    assert check_gradients(fn, x, source)
    torch = _torch()
    if torch is not None:
        parity(fn, lambda t, s: t.index_reduce(axis, torch.from_numpy(index), s, reduce, include_self=include_self),
               leaf(x.numpy()), leaf(source.numpy()))


def test_index_reduce_in_place_and_its_errors():
    x = minitx.ones(2, 3)
    assert x.index_reduce_(1, minitx.tensor([2]), minitx.full((2, 1), 4.0), "prod") is x
    assert x.numpy().tolist() == [[1.0, 1.0, 4.0]] * 2
    with pytest.raises(ValueError, match="index_reduce: reduce must be one of 'prod', 'mean', 'amax', 'amin', got 'sum'"):
        x.index_reduce(1, minitx.tensor([0]), minitx.ones(2, 1), "sum")
    with pytest.raises(ValueError, match=r"index_reduce: source of shape \(2, 2\) does not fit x of shape \(2, 3\)"):
        x.index_reduce(1, minitx.tensor([0]), minitx.ones(2, 2), "mean")
    with pytest.raises(IndexError, match=r"index_reduce: index 3 is out of range \[0, 3\)"):
        x.index_reduce(1, minitx.tensor([3]), minitx.ones(2, 1), "amax")


def test_index_reduce_of_a_0d_tensor_as_pytorchs():
    """A 0-d x is one entry along axis 0 (or -1) with a 0-d source, as PyTorch's; another axis, or a source
    with an axis, refused as there (they had been read as a 1-d x)."""
    torch = import_torch()
    for index in ([0], 0):
        for include_self in (True, False):
            ours = minitx.tensor(3.0).index_reduce(-1, minitx.tensor(index), minitx.tensor(2.0), "prod",
                                                   include_self=include_self)
            theirs = torch.tensor(3.0).index_reduce(-1, torch.tensor(index), torch.tensor(2.0), "prod",
                                                    include_self=include_self)
            assert ours.shape == () and ours.item() == theirs.item()
    with pytest.raises(IndexError, match=r"index_reduce: axis 1 is out of range for a 0-d x \(0 or -1\)"):
        minitx.tensor(3.0).index_reduce(1, minitx.tensor([0]), minitx.tensor(2.0), "prod")
    with pytest.raises(ValueError, match=r"index_reduce: a 0-d x takes a 0-d source, got shape \(1,\)"):
        minitx.tensor(3.0).index_reduce(0, minitx.tensor([0]), minitx.tensor([2.0]), "prod")
    for dim, source in ((1, torch.tensor(2.0)), (0, torch.tensor([2.0]))):
        with pytest.raises((IndexError, RuntimeError)):
            torch.tensor(3.0).index_reduce(dim, torch.tensor([0]), source, "prod")


@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=2, max_side=4)))
def test_trace(x):
    check_forward(F.trace, lambda a: sum(a[k, k] for k in range(min(a.shape))), x)
    assert check_gradients(F.trace, x)
    parity(F.trace, lambda t: t.trace(), leaf(x.numpy()))


def test_diagonal_and_trace_errors_name_the_op():
    with pytest.raises(ValueError, match=r"diagonal: needs at least 2 dimensions, got shape \(3,\)"):
        F.diagonal(leaf(np.ones(3)))
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 must be two different axes, got 1 and -1"):
        F.diagonal(leaf(np.ones((2, 3))), 0, 1, -1)
    with pytest.raises(ValueError, match=r"trace: needs a matrix \(2 dimensions\), got shape \(2, 2, 2\)"):
        F.trace(leaf(np.ones((2, 2, 2))))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_diagonal_and_einsums_diagonals_on_cupy_agree_with_numpy(dtype):
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((2, 4, 3, 4)), rng.standard_normal((2, 3, 3))
    results = {}
    for device in ("cpu", "cuda"):
        t = minitx.tensor(x, dtype=dtype, device=device, requires_grad=True)
        y = t.diagonal(-1, 1, 3) + F.einsum("bjij->bij", t)[..., :3]  # [2, 3, 3] both
        y.backward(minitx.tensor(dy, dtype=dtype, device=device))
        results[device] = [a.to(dtype="float32").numpy() for a in (y, t.grad)]
    for ours, cpu in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(ours, cpu, rtol=1e-6 if dtype == "float32" else 1e-2, atol=1e-6)


# ---------------------------------------------------------------- gather, scatter_add


@st.composite
def _along_case(draw):
    """(x, axis, index): index has x's dimensions, sizes <= x's off the axis, any size on it; the
    axis counted from either end. Repeated and out-of-order indices, where gradient bugs hide,
    are common: up to 6 indices along an axis of at most 4, drawn, sorted descending, or
    counting down around the axis (3 indices on an axis of 2: 0, 1, 0)."""
    arrangement = draw(st.sampled_from(["drawn", "descending", "counting down"]))
    shape = list(draw(SHAPES))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    along = axis % len(shape)
    if arrangement != "drawn":  # room for two different indices
        shape[along] = max(shape[along], 2)
    index_shape = tuple(draw(st.integers(0 if arrangement == "drawn" else 2, 6) if d == along else st.integers(1, n))
                        for d, n in enumerate(shape))
    index = draw(mst.index_arrays(index_shape, shape[axis]))  # (shape[-1] is the last axis's size)
    if arrangement == "descending":
        index = np.flip(np.sort(index, axis=axis), axis=axis).copy()
    elif arrangement == "counting down":
        down = np.arange(index_shape[along] - 1, -1, -1) % shape[axis]
        index = np.broadcast_to(np.expand_dims(down, tuple(d for d in range(len(shape)) if d != along)),
                                index_shape).copy()
    return draw(mst.tensors(tuple(shape))), axis, minitx.tensor(index)


def _np_gather(a, axis, index):
    out = np.empty(index.shape)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = index[p]
        out[p] = a[tuple(q)]
    return out


@given(case=_along_case())
def test_gather(case):
    x, axis, index = case
    check_forward(lambda t: F.gather(t, axis, index), lambda a: _np_gather(a, axis, index.numpy()), x)
    assert check_gradients(lambda t: t.gather(axis, index), x)
    parity(lambda t: F.gather(t, axis, index), lambda t: t.gather(axis, _torch().from_numpy(index.numpy())),
           leaf(x.numpy()))


@given(case=_along_case(), data=st.data())
def test_scatter_add(case, data):
    x, axis, index = case
    src_shape = tuple(n + data.draw(st.integers(0, 1)) for n in index.shape)  # src may be larger
    src = data.draw(mst.tensors(src_shape), label="src")

    def reference(a, s):
        out = a.copy()
        for p in np.ndindex(*index.shape):
            q = list(p)
            q[axis] = index.numpy()[p]
            out[tuple(q)] += s[p]
        return out

    check_forward(lambda t, s: F.scatter_add(t, axis, index, s), reference, x, src)
    assert check_gradients(lambda t, s: t.scatter_add(axis, index, s), x, src)
    torch = _torch()
    if torch is not None:
        torch_index = torch.from_numpy(index.numpy())
        used = src.numpy()[tuple(slice(0, n) for n in index.shape)]  # PyTorch's backward needs src shaped as index
        parity(lambda t, s: F.scatter_add(t, axis, index, s), lambda t, s: t.scatter_add(axis, torch_index, s),
               leaf(x.numpy()), leaf(used))


ZERO_D = [((), (), ()), ((), (2,), (2,)), ((3,), (), ())]  # x, index and src shapes: 0-d counts as 1-d of one


def _along_op(op, axis, index):
    """The minitx op named in ZERO_D's tests, on (x, src), and its PyTorch counterpart."""
    if op == "gather":
        return (lambda t, u: F.gather(t, axis, index),
                lambda t, u: t.gather(axis, _torch().from_numpy(index.numpy())))
    if op == "scatter_add":
        return (lambda t, u: F.scatter_add(t, axis, index, u),
                lambda t, u: t.scatter_add(axis, _torch().from_numpy(index.numpy()), u))
    _, reduce, include_self = op.split()
    include_self = include_self == "True"
    return (lambda t, u: F.scatter_reduce(t, axis, index, u, reduce, include_self),
            lambda t, u: t.scatter_reduce(axis, _torch().from_numpy(index.numpy()), u, reduce,
                                          include_self=include_self))


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("shapes", ZERO_D, ids=str)
@pytest.mark.parametrize("op", ["gather", "scatter_add"] + [f"scatter_reduce {r} {s}" for r in
                                                             ("sum", "prod", "mean", "amax", "amin")
                                                             for s in (True, False)])
def test_gather_and_scatters_take_0d_tensors_as_pytorch(op, shapes, axis):
    """A 0-d x, index or src counts as 1-d of one element, as in PyTorch: the same values and
    gradients as the op on those 1-d views, the output keeping index's (gather) or x's shape."""
    x_shape, index_shape, src_shape = shapes
    rng = np.random.default_rng(1)
    a, s = rng.standard_normal(x_shape), rng.standard_normal(src_shape)
    index = minitx.tensor(np.full(index_shape, 2 if x_shape else 0, dtype=np.int64))  # (2,): one target twice
    fn, torch_fn = _along_op(op, axis, index)
    out = fn(leaf(a), leaf(s))
    one_d = _along_op(op, axis, minitx.tensor(index.numpy().reshape(index_shape or (1,))))[0]
    expected = one_d(leaf(a.reshape(x_shape or (1,))), leaf(s.reshape(src_shape or (1,))))
    assert out.shape == (index_shape if op == "gather" else x_shape)
    np.testing.assert_array_equal(out.numpy(), expected.numpy().reshape(out.shape))
    assert check_gradients(fn, leaf(a), leaf(s))
    parity(fn, torch_fn, leaf(a), leaf(s))


def test_gather_and_scatter_add_errors_name_the_op():
    x = leaf(np.zeros((2, 3)))
    with pytest.raises(IndexError, match=r"gather: index 3 is out of range \[0, 3\)"):
        F.gather(x, 1, [[0, 3]])
    with pytest.raises(ValueError, match=r"gather: index of shape \(3, 1\) does not fit input of shape \(2, 3\)"):
        F.gather(x, 1, [[0], [1], [2]])
    with pytest.raises(TypeError, match="scatter_add: index must be an integer tensor, got dtype float32"):
        F.scatter_add(x, 0, minitx.tensor([[0.0]]), leaf([[1.0]]))
    with pytest.raises(ValueError, match=r"gather: index of shape \(\) does not fit input of shape \(2, 3\)"):
        F.gather(x, 0, minitx.tensor(np.array(0)))  # 0-d counts as 1-d: not 2-d, as in PyTorch
    with pytest.raises(IndexError, match=r"gather: index 1 is out of range \[0, 1\)"):
        F.gather(leaf(np.array(2.0)), 0, minitx.tensor(np.array(1)))


# ---------------------------------------------------------------- take_along_dim


@st.composite
def _take_along_case(draw):
    """(x, index, axis): along an axis, x and index share a drawn shape off it, where either of
    them may have 1 instead (broadcast), and have their own lengths on it (index's may be 0);
    index values in [-n, n), repeats common. Or axis None: any x (0-d too), any index shape,
    values in [0, x.size)."""
    if draw(st.booleans()):
        x = draw(mst.tensors(mst.shapes(max_dims=3, max_side=4)))
        index = draw(mst.index_arrays(mst.shapes(max_dims=2, min_side=0, max_side=5), x.size))
        return x, minitx.tensor(index), None
    common = draw(mst.shapes(min_dims=1, max_dims=3, max_side=3))
    axis = draw(st.integers(-len(common), len(common) - 1))
    n, m = draw(st.integers(1, 4)), draw(st.integers(0, 5))
    x_shape, index_shape = [], []
    for d, c in enumerate(common):
        sides = (n, m) if d == axis % len(common) else draw(st.sampled_from([(c, c), (1, c), (c, 1)]))
        x_shape.append(sides[0])
        index_shape.append(sides[1])
    index = draw(mst.index_arrays(tuple(index_shape), n, allow_negative=True))
    return draw(mst.tensors(tuple(x_shape))), minitx.tensor(index), axis


def _np_take_along(a, index, axis):
    """Independent of minitx's: the flat pick, or a and index broadcast off the axis, then gathered
    entry by entry (a negative index counts from the end, as Python's)."""
    if axis is None:
        return a.reshape(-1)[index.reshape(-1)]
    axis %= a.ndim
    off = np.broadcast_shapes(a.shape[:axis] + (1,) + a.shape[axis + 1:],
                              index.shape[:axis] + (1,) + index.shape[axis + 1:])
    a_b = np.broadcast_to(a, off[:axis] + (a.shape[axis],) + off[axis + 1:])
    return _np_gather(a_b, axis, np.broadcast_to(index, off[:axis] + (index.shape[axis],) + off[axis + 1:]))


@given(case=_take_along_case())
def test_take_along_dim(case):
    x, index, axis = case
    y = check_forward(lambda t: F.take_along_dim(t, index, axis), lambda a: _np_take_along(a, index.numpy(), axis), x)
    assert isinstance(y._ctx, minitx.ops.TakeAlongDim)
    assert check_gradients(lambda t: t.take_along_dim(index, dim=axis), x)
    torch = _torch()
    if torch is not None:  # (PyTorch views x as 1-d without a dim: a transposed one must be contiguous)
        parity(lambda t: F.take_along_dim(t, index, axis),
               lambda t: torch.take_along_dim(t.contiguous(), torch.tensor(index.numpy()), axis), leaf(x.numpy()))


def test_take_along_dim_adds_the_gradients_of_repeated_and_broadcast_picks():
    """x[0] picked twice (once as -3), and x's one row broadcast to four rows of index: each pick adds."""
    x = leaf([[1.0, 2.0, 3.0]])
    y = F.take_along_dim(x, minitx.tensor([[0], [0], [-3], [2]]), 1)
    np.testing.assert_array_equal(y.numpy(), [[1.0], [1.0], [1.0], [3.0]])
    int32 = minitx.tensor(np.array([[0], [0], [-3], [2]], dtype=np.int32))  # (PyTorch's takes int64 only)
    np.testing.assert_array_equal(F.take_along_dim(x, int32, 1).numpy(), y.numpy())
    y.backward(np.array([[1.0], [10.0], [100.0], [1000.0]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[111.0, 0.0, 1000.0]])


def test_take_along_dim_of_empty_and_0d_tensors_as_pytorch():
    torch = _torch()
    for x_shape, index_shape, axis in [((2, 0), (2, 0), 1), ((0, 3), (0, 2), 1), ((), (2,), None), ((), (), None),
                                       ((2, 0), (0,), None), ((3,), (), None)]:
        a = np.random.default_rng(0).standard_normal(x_shape)
        index = minitx.tensor(np.zeros(index_shape, dtype=np.int64))
        y = F.take_along_dim(leaf(a), index, axis)
        assert y.shape == (index.size,) if axis is None else index_shape
        if torch is not None:
            parity(lambda t: F.take_along_dim(t, index, axis),
                   lambda t: torch.take_along_dim(t, torch.tensor(index.numpy()), axis), leaf(a))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.take_along_dim(x, [[-1]]), IndexError, r"take_along_dim: index -1 is out of range \[0, 12\)"),
    (lambda x: F.take_along_dim(x, [[12]]), IndexError, r"take_along_dim: index 12 is out of range \[0, 12\)"),
    (lambda x: F.take_along_dim(x, [[4]], 1), IndexError,
     r"take_along_dim: index 4 is out of range \[-4, 4\) for axis 1 of shape \(3, 4\)"),
    (lambda x: F.take_along_dim(x, [[-5]], -1), IndexError, r"take_along_dim: index -5 is out of range \[-4, 4\)"),
    (lambda x: F.take_along_dim(x[:, :0], [[0]], 1), IndexError, r"take_along_dim: index 0 is out of range \[0, 0\)"),
    (lambda x: F.take_along_dim(x, [0, 1], 1), ValueError,
     r"take_along_dim: index of shape \(2,\) needs the input's 2 dimensions \(shape \(3, 4\)\)"),
    (lambda x: F.take_along_dim(x, [[0], [1]], 1), ValueError,
     r"take_along_dim: index of shape \(2, 1\) and input of shape \(3, 4\) do not broadcast off axis 1"),
    (lambda x: F.take_along_dim(x, minitx.tensor([[0.0]]), 1), TypeError,
     r"take_along_dim: index must be an integer tensor, got dtype float32"),
    (lambda x: F.take_along_dim(x, [[True]], 1), TypeError, r"take_along_dim: index must be an integer tensor, got "
                                                             r"dtype bool"),
    (lambda x: F.take_along_dim(x, [[0]], 2), IndexError, r"take_along_dim: axis 2 is out of range"),
    (lambda x: F.take_along_dim(x[0, 0], minitx.tensor(0), 0), ValueError,
     r"take_along_dim: axis must be None or an int naming an axis of the input, got 0 for shape \(\)"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_take_along_dim_refuses_naming_the_op(call, error, message):
    """PyTorch refuses all of these too, but an index out of [-n, n) along an axis, which it wraps
    around (index mod n: 4 reads entry 0 of 4), and a negative index without an axis, which its
    flat gather refuses while its per-axis one counts it from the end (minitx's does both too)."""
    with pytest.raises(error, match=message):
        call(leaf(np.arange(12.0).reshape(3, 4)))


# ---------------------------------------------------------------- scatter_reduce

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]
HALVES = [v / 2 for v in range(-4, 5)]  # multiples of 0.5: zeros and ties between x and src are common
EDGES = [0.0, 1.0, -1.5, np.inf, -np.inf, np.nan]


def _np_scatter_reduce(x, axis, index, src, reduce, include_self, dy):
    """(y, dx, dsrc) by listing each position's contributors: x's value (include_self) and the
    src[p] whose target is that position; the gradient share of each contributor from its
    definition (the product of the others, the ties of a max), not from minitx's formulas."""
    members = {q: [("x", q, x[q])] if include_self else [] for q in np.ndindex(*x.shape)}
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = index[p]
        members[tuple(q)].append(("src", p, src[p]))
    y, dx, dsrc = x.copy(), np.zeros(x.shape), np.zeros(src.shape)
    for q, group in members.items():
        if not any(kind == "src" for kind, _, _ in group):
            dx[q] = dy[q]  # nothing points here: y keeps x
            continue
        v = np.array([value for _, _, value in group])
        if reduce in ("sum", "mean"):
            n = len(v) if reduce == "mean" else 1
            y[q] = v.sum() // n if x.dtype.kind == "i" else v.sum() / n
            shares = np.full(len(v), 1 / n)
        elif reduce == "prod":
            with np.errstate(invalid="ignore"):  # inf times 0 is NaN, as it should be
                y[q] = v.prod()
                shares = np.array([np.delete(v, k).prod() for k in range(len(v))])
        else:
            y[q] = v.max() if reduce == "amax" else v.min()
            with np.errstate(invalid="ignore"):  # a NaN result: no contributor equals it
                shares = (v == y[q]) / (v == y[q]).sum()
        for (kind, where, _), share in zip(group, shares):
            (dx if kind == "x" else dsrc)[where] += dy[q] * share
    return y, dx, dsrc


@st.composite
def _scatter_values(draw, x_shape, src_shape):
    """(x, src, kind): distinct floats (no ties: every reduction has finite differences), halves
    (zeros and ties), edges (inf and NaN in src) or integers."""
    kind = draw(st.sampled_from(["distinct", "halves", "edges", "integers"]))
    n = int(np.prod(x_shape))
    if kind == "distinct":  # distinct across x and src together
        both = draw(mst.float_arrays((n + int(np.prod(src_shape)),), distinct=True))
        return both[:n].reshape(x_shape), both[n:].reshape(src_shape), kind
    if kind == "integers":
        ints = st.integers(-3, 3)
        return draw(hnp.arrays(np.int64, x_shape, elements=ints)), draw(hnp.arrays(np.int64, src_shape, elements=ints)), kind
    x = draw(hnp.arrays(np.float64, x_shape, elements=st.sampled_from(HALVES)))
    return x, draw(hnp.arrays(np.float64, src_shape, elements=st.sampled_from(HALVES if kind == "halves" else EDGES))), kind


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@given(case=_along_case(), data=st.data())
def test_scatter_reduce(case, reduce, include_self, data):
    """Each reduction with and without include_self in every run (drawn, the ten pairs left some
    out of a short run: mean's count without x went unnoticed)."""
    x, axis, index = case
    src_shape = tuple(n + data.draw(st.integers(0, 1)) for n in index.shape)  # src may be larger
    a, s, kind = data.draw(_scatter_values(x.shape, src_shape), label="x, src")
    dy = np.random.default_rng(0).standard_normal(x.shape)
    y, dx, dsrc = _np_scatter_reduce(a, axis % x.ndim, index.numpy(), s, reduce, include_self, dy)
    floats = kind != "integers"
    x, src = minitx.tensor(a, requires_grad=floats), minitx.tensor(s, requires_grad=floats)
    fn = lambda t, u: F.scatter_reduce(t, axis, index, u, reduce, include_self)  # noqa: E731
    out = check_forward(fn, lambda *_: y, x, src)
    assert out.dtype == a.dtype
    if kind in ("distinct", "halves"):
        out.backward(dy)
        np.testing.assert_allclose(x.grad.numpy(), dx, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(src.grad.numpy(), dsrc, rtol=1e-12, atol=1e-12)
    if kind == "distinct" or (kind == "halves" and reduce not in ("amax", "amin")):  # ties have no derivative
        assert check_gradients(fn, leaf(a), leaf(s))
    torch = _torch()
    # PyTorch counts x among a max's ties even with include_self=False: compared where that cannot matter
    quirk = reduce in ("amax", "amin") and not include_self and (a == y).any()
    if torch is not None and not quirk:
        used = s[tuple(slice(0, n) for n in index.shape)]  # PyTorch's backward needs src shaped as index
        theirs = torch.from_numpy(index.numpy())
        # an inf factor beside a zero: the product of the others here, NaN (its division) in PyTorch
        grads = floats and not (kind == "edges" and reduce == "prod")
        parity(fn, lambda t, u: t.scatter_reduce(axis, theirs, u, reduce, include_self=include_self),
               *((leaf(a, grads), leaf(used, grads)) if floats else (x, minitx.tensor(used))))


def test_scatter_reduce_prod_gradient_with_zeros():
    """One zero among a position's factors gets the product of the others; with two zeros every
    factor gets 0; x is a factor only with include_self (position 1: x's 0 is the second zero)."""
    index = minitx.tensor([0, 0, 1, 1, 1])
    for include_self, x_grad, src_grad in [(True, [0.0, 0.0], [6.0, 0.0, 0.0, 0.0, 0.0]),
                                           (False, [0.0, 0.0], [2.0, 0.0, 35.0, 0.0, 0.0])]:
        x, src = leaf([3.0, 0.0]), leaf([0.0, 2.0, 0.0, 5.0, 7.0])
        F.scatter_reduce(x, 0, index, src, "prod", include_self).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), x_grad)
        np.testing.assert_array_equal(src.grad.numpy(), src_grad)
    x, src = leaf([0.0]), leaf([2.0, 5.0])  # the zero is x's: x gets the product of src
    F.scatter_reduce(x, 0, [0, 0], src, "prod").sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10.0])
    np.testing.assert_array_equal(src.grad.numpy(), [0.0, 0.0])


def test_scatter_reduce_amax_ties_and_include_self():
    """Ties share dy evenly, x among them with include_self. Without it x is no contributor
    even when it equals the maximum (PyTorch would give src 0.5 there)."""
    for include_self, x_grad, src_grad in [(True, [0.5, 1.0], [0.5, 0.0]), (False, [0.0, 1.0], [1.0, 0.0])]:
        x, src = leaf([7.0, 2.0]), leaf([7.0, 1.0])
        y = F.scatter_reduce(x, 0, [0, 0], src, "amax", include_self)
        y.sum().backward()
        np.testing.assert_array_equal(y.numpy(), [7.0, 2.0])
        np.testing.assert_array_equal(x.grad.numpy(), x_grad)
        np.testing.assert_array_equal(src.grad.numpy(), src_grad)


def test_scatter_reduce_nan_inf_and_untouched_positions():
    """A NaN result propagates and gives its contributors NaN gradients (as PyTorch); a
    position nothing points at keeps x and passes dy, even where x is NaN or inf."""
    x, src = leaf([1.0, np.nan, np.inf]), leaf([np.nan, 2.0])
    for reduce in REDUCTIONS:
        x.grad = src.grad = None
        y = F.scatter_reduce(x, 0, [0, 0], src, reduce)
        y.sum().backward()
        np.testing.assert_array_equal(y.numpy(), [np.nan, np.nan, np.inf])
        np.testing.assert_array_equal(x.grad.numpy()[1:], [1.0, 1.0])
        assert np.isnan(x.grad.numpy()[0]) == (reduce not in ("sum", "mean"))
    np.testing.assert_array_equal(F.scatter_reduce(leaf([5.0]), 0, [0, 0], leaf([-np.inf, 2.0]), "amin").numpy(),
                                  [-np.inf])


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_keeps_the_dtype(reduce):
    """float32 in, float32 out and float32 gradients; an integer mean is floored, as PyTorch's."""
    x = minitx.tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    src = minitx.tensor(np.array([4.0, 5.0, 6.0], dtype=np.float32), requires_grad=True)
    out = F.scatter_reduce(x, 0, [0, 0, 2], src, reduce)
    out.sum().backward()
    assert out.dtype == x.grad.dtype == src.grad.dtype == np.float32
    ints = F.scatter_reduce(minitx.tensor([1, 2, -7]), 0, [0, 0, 1, 1, 2], minitx.tensor([2, 3, -4, 4, 0]), reduce)
    assert ints.dtype == np.int64
    if reduce == "mean":
        np.testing.assert_array_equal(ints.numpy(), [2, 0, -4])  # 6 // 3, 2 // 3, -7 // 2


@pytest.mark.parametrize("ufunc, dtype", [("multiply", "float64"), ("maximum", "int64"), ("minimum", "int64"),
                                          ("add", "int8")])
def test_ufunc_at_by_steps_matches_numpy(ufunc, dtype):
    """The CuPy branch of ufunc_at for what its scatter kernels lack, run on NumPy arrays."""
    from minitx.ops.indexing import _along_index, ufunc_at_by_steps

    index = np.array([[1, 0, 1], [2, 2, 2]])
    values = np.array([[1, -2, 3], [100, 5, -6]]).astype(dtype)
    for axis in (0, 1):
        target = _along_index(index if axis else index.T[:, :2] % 2, axis)
        vals = values if axis else values.T[:, :2]
        expected, got = np.full((3, 3), 3, dtype), np.full((3, 3), 3, dtype)
        getattr(np, ufunc).at(expected, target, vals)
        ufunc_at_by_steps(getattr(np, ufunc), got, target, vals, axis)
        np.testing.assert_array_equal(got, expected)


def test_scatter_reduce_errors_name_the_op():
    x, src = leaf(np.zeros((2, 3))), leaf(np.ones((2, 3)))
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be one of 'sum', 'prod', 'mean', 'amax', "
                                         "'amin', got 'max'"):
        F.scatter_reduce(x, 0, [[0]], src, "max")
    with pytest.raises(TypeError, match="scatter_reduce: include_self must be a bool, got 1"):
        F.scatter_reduce(x, 0, [[0]], src, "sum", include_self=1)
    with pytest.raises(TypeError, match="scatter_reduce: x and src must have one float or integer dtype, got "
                                        "float64 and int64"):
        F.scatter_reduce(x, 0, [[0]], minitx.tensor([[1]]), "sum")
    with pytest.raises(IndexError, match=r"scatter_reduce: index 2 is out of range \[0, 2\)"):
        F.scatter_reduce(x, 0, [[2]], src, "amax")
    with pytest.raises(IndexError, match=r"scatter_reduce: index -1 is out of range \[0, 3\)"):
        F.scatter_reduce(x, -1, [[-1]], src, "amax")
    with pytest.raises(np.exceptions.AxisError, match="scatter_reduce: axis 2 is out of range"):
        F.scatter_reduce(x, 2, [[0]], src, "sum")
    with pytest.raises(ValueError, match=r"scatter_reduce: index of shape \(3, 1\) does not fit input"):
        F.scatter_reduce(x, 1, [[0], [1], [0]], src, "sum")
    with pytest.raises(ValueError, match=r"scatter_reduce: index of shape \(1, 4\) does not fit src"):
        F.scatter_reduce(x, 1, [[0, 1, 0, 1]], src, "sum")
    with pytest.raises(TypeError, match="scatter_reduce: index must be an integer tensor, got dtype float32"):
        F.scatter_reduce(x, 0, minitx.tensor([[0.0]]), src, "sum")


# ---------------------------------------------------------------- repeat, tile


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=4)), data=st.data())
def test_repeat(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)), label="axis")
    n = x.size if axis is None else (x.shape[axis] if x.ndim else 1)
    repeats = data.draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n, max_size=n)))

    def reference(a):  # each element's copies, one after the other
        moved = np.moveaxis(a.reshape(-1) if axis is None else a.reshape(a.shape or (1,)), axis or 0, 0)
        counts = [repeats] * moved.shape[0] if isinstance(repeats, int) else repeats
        parts = [moved[i:i + 1] for i, c in enumerate(counts) for _ in range(c)]
        out = np.concatenate(parts) if parts else moved[:0]
        return np.moveaxis(out, 0, axis or 0)

    check_forward(lambda t: F.repeat(t, repeats, axis), reference, x)
    assert check_gradients(lambda t: t.repeat(repeats, axis), x)
    torch = _torch()
    if x.ndim and torch is not None:
        torch_repeats = torch.tensor(repeats) if isinstance(repeats, list) else repeats
        parity(lambda t: F.repeat(t, repeats, axis), lambda t: t.repeat_interleave(torch_repeats, axis),
               leaf(x.numpy()))


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=3)),
       reps=st.lists(st.integers(1, 3), min_size=0, max_size=4).map(tuple))
def test_tile(x, reps):
    d = max(x.ndim, len(reps))
    full = (1,) * (d - len(reps)) + reps

    def reference(a):  # concatenate copies along each axis in turn
        a = a.reshape((1,) * (d - a.ndim) + a.shape)
        for axis, r in enumerate(full):
            a = np.concatenate([a] * r, axis=axis)
        return a

    check_forward(lambda t: F.tile(t, reps), reference, x)
    assert check_gradients(lambda t: t.tile(reps), x)
    parity(lambda t: F.tile(t, reps), lambda t: t.repeat(full), leaf(x.numpy()))


def test_repeat_and_tile_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(ValueError, match=r"repeat: repeats must be an int >= 0 or 2 of them .*got \[1, 2, 3\]"):
        F.repeat(x, [1, 2, 3], 0)
    with pytest.raises(ValueError, match=r"tile: reps must be ints >= 0, got \(-1,\)"):
        F.tile(x, -1)


# ---------------------------------------------------------------- padding


@st.composite
def _edge_pad_case(draw, mode, spatial):
    """x [N, C, *spatial sizes] and (before, after) per spatial axis; reflect needs < size."""
    sizes = [draw(st.integers(1 if mode == "replicate" else 2, 4)) for _ in range(spatial)]
    x = draw(mst.tensors((draw(st.integers(1, 2)), draw(st.integers(1, 2)), *sizes)))
    limit = (lambda n: n - 1) if mode == "reflect" else (lambda n: 3)
    pads = [(draw(st.integers(0, limit(n))), draw(st.integers(0, limit(n)))) for n in sizes]
    return x, pads


@pytest.mark.parametrize("mode, numpy_mode", [("reflect", "reflect"), ("replicate", "edge")])
@pytest.mark.parametrize("spatial", [1, 2])
@given(data=st.data())
def test_pad_reflect_and_replicate(mode, numpy_mode, spatial, data):
    x, pads = data.draw(_edge_pad_case(mode, spatial))
    width = [(0, 0), (0, 0)] + pads
    fn = lambda t: F.pad(t, width, mode=mode)  # noqa: E731
    check_forward(fn, lambda a: np.pad(a, width, mode=numpy_mode), x)
    assert check_gradients(fn, x)
    torch_pad = tuple(p for pair in reversed(pads) for p in pair)  # PyTorch: last axis first
    parity(fn, lambda t: _torch().nn.functional.pad(t, torch_pad, mode=mode), leaf(x.numpy()))


def test_pad_modes_and_errors():
    x = leaf([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="reflect").numpy(), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0])
    np.testing.assert_array_equal(F.pad(x, 2, mode="replicate").numpy(), [1, 1, 1, 2, 3, 3, 3])
    np.testing.assert_array_equal(F.pad(x, 1, value=9.0).numpy(), [9, 1, 2, 3, 9])
    with pytest.raises(ValueError, match=r"pad: reflect padding \(3, 0\) of axis 0 must be smaller than its size 3"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got "
                                         "'wrap'"):
        F.pad(x, 1, mode="wrap")


@st.composite
def _circular_pad_case(draw, dtype=np.float64):
    """x [N, C, *spatial] (1-3 spatial axes) and (before, after) per spatial axis: a negative side
    crops (down to nothing), a positive one wraps at most the k elements the axis keeps."""
    spatial = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 4 if spatial < 3 else 3)) for _ in range(spatial)]
    x = draw(mst.tensors((draw(st.integers(1, 2)), draw(st.integers(1, 2)), *sizes), dtype=dtype))
    pads = []
    for n in sizes:
        before = draw(st.integers(-n, n))
        kept = n - max(-before, 0)
        after = draw(st.integers(-kept, kept))
        kept -= max(-after, 0)
        before = min(before, kept) if before > 0 else before  # (a positive side wraps at most what is kept)
        pads.append((before, after if after <= 0 else min(after, kept)))
    return x, pads


def _np_circular(a, pads):
    """NumPy's own: the spatial axes cropped by the negative widths, then np.pad's 'wrap' by the positive."""
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(pads, a.shape[2:]))
    kept = a[(slice(None), slice(None)) + crop]
    return np.pad(kept, [(0, 0), (0, 0)] + [(max(b, 0), max(e, 0)) for b, e in pads], mode="wrap")


@given(case=_circular_pad_case())
def test_pad_circular(case):
    """Wrap-around padding, cropping included: the forward against NumPy's 'wrap', the gradient
    (each entry gets the dy of every output that copies it) by finite differences and against
    PyTorch's, which takes the flat form."""
    x, pads = case
    fn = lambda t: F.pad(t, [(0, 0), (0, 0)] + pads, mode="circular")  # noqa: E731
    check_forward(fn, lambda a: _np_circular(a, pads), x)
    assert check_gradients(fn, x)
    flat = tuple(p for pair in reversed(pads) for p in pair)  # PyTorch: last axis first
    parity(lambda t: F.pad(t, flat, mode="circular"), lambda t: _torch().nn.functional.pad(t, flat, mode="circular"),
           leaf(x.numpy()))


@given(case=_circular_pad_case(dtype=np.float32))
def test_pad_circular_in_float32_as_pytorch(case):
    """float32: the values copied as they are; each entry's gradient sums the dy of its copies in
    another order than PyTorch's, so the two sums differ by up to a float32 rounding per term of each
    (a fixed atol of 1e-7 failed for a sum of 0.027 from terms near 1)."""
    torch = _torch()
    if torch is None:
        return
    x, pads = case
    flat = tuple(p for pair in reversed(pads) for p in pair)
    ours = minitx.tensor(x.numpy(), requires_grad=True)
    theirs = torch.tensor(x.numpy(), requires_grad=True)
    y, their_y = F.pad(ours, flat, mode="circular"), torch.nn.functional.pad(theirs, flat, mode="circular")
    np.testing.assert_array_equal(y.numpy(), their_y.detach().numpy())
    dy = np.random.default_rng(0).standard_normal(y.shape).astype(np.float32)
    y.backward(dy)
    their_y.backward(torch.from_numpy(dy))
    magnitude = leaf(np.zeros(x.shape))  # per entry: the sum of |dy| over its copies, and their count
    F.pad(magnitude, flat, mode="circular").backward(np.abs(dy).astype(np.float64))
    copies = leaf(np.zeros(x.shape))
    F.pad(copies, flat, mode="circular").backward(np.ones(y.shape))
    bound = 2 * np.finfo(np.float32).eps * copies.grad.numpy() * magnitude.grad.numpy()
    assert np.all(np.abs(ours.grad.numpy() - theirs.grad.numpy()) <= bound)


def test_pad_circular_wraps_and_hands_each_entry_the_gradients_of_its_copies():
    """[a b c d] by (2, 1): c d [a b c d] a; a is copied twice, b once, c and d twice. (2, -1)
    crops d first, then wraps what is left: b c [a b c], as PyTorch."""
    x = leaf([[[1.0, 2.0, 3.0, 4.0]]])
    y = F.pad(x, (2, 1), mode="circular")
    np.testing.assert_array_equal(y.numpy(), [[[3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 1.0]]])
    y.backward(np.array([[[1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[1000100.0, 1000.0, 10001.0, 100010.0]]])
    x.grad = None
    y = F.pad(x, (2, -1), mode="circular")
    np.testing.assert_array_equal(y.numpy(), [[[2.0, 3.0, 1.0, 2.0, 3.0]]])
    y.backward(np.ones((1, 1, 5)))
    np.testing.assert_array_equal(x.grad.numpy(), [[[1.0, 2.0, 2.0, 0.0]]])


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_pad_circular_keeps_integer_and_boolean_inputs(dtype):
    a = (np.arange(12).reshape(1, 2, 6) % 5).astype(dtype)
    got = F.pad(minitx.tensor(a, dtype=dtype), (3, 2), mode="circular")
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got.numpy(), _np_circular(a, [(3, 2)]))
    torch = _torch()
    np.testing.assert_array_equal(got.numpy(), torch.nn.functional.pad(torch.tensor(a), (3, 2), mode="circular"))


def test_pad_circular_errors_name_the_op_and_the_sizes():
    """PyTorch allows a side up to the axis's size (wrapping once); past it, or past what a
    negative width leaves (where PyTorch reads memory it has not written), minitx refuses."""
    x = leaf(np.zeros((1, 2, 3)))
    assert F.pad(x, (3, 3), mode="circular").shape == (1, 2, 9)
    with pytest.raises(ValueError, match=r"pad: circular padding \(4, 0\) of axis 2 can wrap around once at most: "
                                         r"each side must not exceed its size 3"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(ValueError, match=r"pad: circular padding \(3, -1\) of axis 2 can wrap around once at most: "
                                         r"each side must not exceed the 2 of its 3 elements that the negative width "
                                         r"leaves"):
        F.pad(x, (3, -1), mode="circular")
    with pytest.raises(ValueError, match=r"pad: pad \(-2, -2\) crops more than the 3 elements of axis 2"):
        F.pad(x, (-2, -2), mode="circular")
    with pytest.raises(ValueError, match=r"pad: value 1.0 is for mode 'constant'; mode 'circular' pads with x's own "
                                         r"values"):
        F.pad(x, (1, 1), mode="circular", value=1.0)


# ---------------------------------------------------------------- einsum

EINSUMS = ["ij,jk->ik", "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bti,oi->bto", "ij->i", "ij->", "i,i->", "i,j->ij",
           "ijk->kji", "ij,j->i", "abc,cd,de->abe", "ij,ij->ij", "ij->ji",
           # a letter repeated in an operand: its diagonal (einsum takes it with F.diagonal first)
           "ii->i", "ii->", "bii->b", "bii->ib", "iji->j", "ii,ij->j", "ijij->ij", "iii->"]


def _np_einsum(spec, *arrays):
    """The sum of products over every letter: each operand indexed by a grid of all the letters
    (a repeated letter picks its diagonal), multiplied, summed over the letters not kept."""
    lhs, out = spec.split("->")
    terms = lhs.split(",")
    letters = sorted(set("".join(terms)))
    sizes = {c: a.shape[term.index(c)] for term, a in zip(terms, arrays) for c in term}
    grid = np.indices([sizes[c] for c in letters], sparse=True)
    product = np.ones([sizes[c] for c in letters])
    for term, a in zip(terms, arrays):
        product = product * a[tuple(grid[letters.index(c)] for c in term)]
    summed = product.sum(axis=tuple(k for k, c in enumerate(letters) if c not in out))
    kept = [c for c in letters if c in out]
    return np.transpose(summed, [kept.index(c) for c in out]) if out else summed


@pytest.mark.parametrize("spec", EINSUMS)
@given(data=st.data())
def test_einsum(spec, data):
    terms = spec.split("->")[0].split(",")
    sizes = {c: data.draw(st.integers(1, 3), label=c) for c in sorted(set("".join(terms)))}
    operands = [data.draw(mst.tensors(tuple(sizes[c] for c in term)), label=term) for term in terms]
    check_forward(lambda *ts: F.einsum(spec, *ts), lambda *arrays: _np_einsum(spec, *arrays), *operands,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(lambda *ts: F.einsum(spec, *ts), *operands)
    torch = _torch()
    if torch is not None:
        parity(lambda *ts: F.einsum(spec, *ts), lambda *ts: torch.einsum(spec, *ts),
               *(leaf(o.numpy()) for o in operands))


ELLIPSES = ["...ij,jk->...ik", "...ij,...jk->...ik", "i...->...", "...->...", "b...d,b...d->b...", "...ii->...i",
            "...,...->...", "...ij,jk->ik", "i->...i"]


@pytest.mark.parametrize("spec", ELLIPSES)
@given(data=st.data())
def test_einsum_with_an_ellipsis(spec, data):
    """'...' stands for the axes the letters leave, broadcast between operands (lengths 1 drawn
    among them); left out of the output they are summed, as PyTorch's (NumPy refuses that)."""
    terms = spec.split("->")[0].split(",")
    sizes = {c: data.draw(st.integers(1, 3), label=c) for c in sorted(set("".join(terms)) - {"."})}
    dots = data.draw(mst.shapes(max_dims=3, max_side=3), label="...")
    operands = []
    for term in terms:
        own = dots[data.draw(st.integers(0, len(dots)), label="dropped"):] if "..." in term else ()
        own = tuple(1 if data.draw(st.booleans()) else n for n in own)
        shape = [sizes[c] for c in term.split("...")[0]] + list(own) + [sizes[c] for c in term.split("...")[-1]]
        operands.append(data.draw(mst.tensors(tuple(shape) if "..." in term else tuple(sizes[c] for c in term))))
    assert check_gradients(lambda *ts: F.einsum(spec, *ts), *operands)
    if spec.endswith("..."):  # NumPy's einsum, an independent computation, where it agrees with PyTorch
        check_forward(lambda *ts: F.einsum(spec, *ts), lambda *arrays: np.einsum(spec, *arrays), *operands,
                      rtol=1e-12, atol=1e-14)
    torch = _torch()
    if torch is not None:
        parity(lambda *ts: F.einsum(spec, *ts), lambda *ts: torch.einsum(spec, *ts),
               *(leaf(o.numpy()) for o in operands))


@pytest.mark.parametrize("spec", [s for s in EINSUMS if all(len(set(t)) == len(t) for t in s.split("->")[0].split(","))]
                         + ["...ij,j->...i"])
@given(data=st.data())
def test_einsum_broadcasts_a_letter_of_length_1_as_numpy_and_pytorch(spec, data):
    """An axis of length 1 takes its letter's length in the other operands, as in NumPy's and
    PyTorch's einsum ('ij,ij->ij' of [1, 3] and [4, 3]), and its gradient is summed back to length 1."""
    terms = spec.split("->")[0].split(",")
    sizes = {c: data.draw(st.integers(0, 3), label=c) for c in sorted(set("".join(terms)) - {"."})}
    shapes = [tuple(1 if data.draw(st.booleans()) else sizes[c] for c in term.replace("...", "")) for term in terms]
    shapes[0] = (2, 1)[:data.draw(st.integers(0, 2))] + shapes[0] if "..." in terms[0] else shapes[0]
    operands = [data.draw(mst.tensors(shape), label=term) for term, shape in zip(terms, shapes)]
    check_forward(lambda *ts: F.einsum(spec, *ts), lambda *arrays: np.einsum(spec, *arrays), *operands,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(lambda *ts: F.einsum(spec, *ts), *operands)
    torch = _torch()
    if torch is not None:
        parity(lambda *ts: F.einsum(spec, *ts), lambda *ts: torch.einsum(spec, *ts),
               *(leaf(o.numpy()) for o in operands))


@pytest.mark.parametrize("implicit, explicit", [("ij,jk", "ij,jk->ik"), ("ba", "ba->ab"), ("ii", "ii->"),
                                                ("ab,bC", "ab,bC->Ca"), ("...ij,jk", "...ij,jk->...ik"), ("i", "i->i")])
def test_einsum_without_an_output_gives_the_letters_used_once_in_ascii_order(implicit, explicit):
    """As NumPy and PyTorch: '...' first, then the letters that appear once (capitals first)."""
    rng = np.random.default_rng(0)
    sizes = {"i": 3, "j": 2, "k": 4, "a": 2, "b": 3, "C": 4}
    operands = [leaf(rng.standard_normal((4,) * ("..." in term) + tuple(sizes[c] for c in term.replace(".", ""))))
                for term in implicit.split(",")]
    np.testing.assert_array_equal(F.einsum(implicit, *operands).numpy(), F.einsum(explicit, *operands).numpy())
    assert check_gradients(lambda *ts: F.einsum(implicit, *ts), *operands)
    torch = _torch()
    if torch is not None:
        parity(lambda *ts: F.einsum(implicit, *ts), lambda *ts: torch.einsum(implicit, *ts), *operands)


def test_einsum_errors_name_what_is_wrong():
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4, 5)))
    cases = [("..ij,jk->ik", "operand 0 has subscripts '..ij': '...' may appear once, as three dots"),
             ("ij->ij", "names 1 operands, got 2"), ("ij,jk->ik", "index 'j' has size 3 in one operand and 4"),
             ("ii,jk->ik", r"operand 0 repeats 'i' \('ii'\) on axes of sizes 2 and 3"),
             ("iij,jk->ik", r"operand 0 has subscripts 'iij' for shape \(2, 3\): 3 letters for 2 axes"),
             ("ijk,kl->il", r"operand 0 has subscripts 'ijk' for shape \(2, 3\)"),
             ("ij,kl->iz", "output 'iz' must use distinct letters that appear in the operands"),
             ("ij,jk->->ik", r"'ij,jk->->ik' has more than one '->'")]  # (was NumPy's "too many values to unpack")
    for spec, message in cases:
        with pytest.raises(ValueError, match=f"einsum: .*{message}"):
            F.einsum(spec, a, b) if spec != "ij->ij" else F.einsum(spec, a, a)


def test_einsum_takes_its_operands_as_one_list_as_pytorchs():
    """torch.einsum('ij,jk', [a, b]): the list was read as one array (NumPy's inhomogeneous-shape error)."""
    rng = np.random.default_rng(0)
    arrays = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    torch = _torch()
    for listed in (list, tuple):
        a, b = leaf(arrays[0]), leaf(arrays[1])
        parity(lambda x, y: F.einsum("ij,jk", listed((x, y))), lambda x, y: torch.einsum("ij,jk", [x, y]), a, b)


# ---------------------------------------------------------------- embedding (more in test_nn_ops.py)


@pytest.mark.parametrize("ids_shape, rows, dim, padding_idx", [
    ((3,), 4, 0, None), ((2,), 4, 0, 0), ((0,), 0, 3, None), ((2, 0), 4, 3, -1), ((2, 3), 4, 2, -4)])
def test_embedding_of_empty_tables_and_ids_matches_pytorch(ids_shape, rows, dim, padding_idx):
    """Rows of 0 columns, tables of 0 rows and empty ids: y and dweight of the right (empty) shapes."""
    ids = minitx.tensor(np.arange(int(np.prod(ids_shape)), dtype=np.int64).reshape(ids_shape) % max(rows, 1))
    weight = leaf(np.random.default_rng(0).standard_normal((rows, dim)))
    fn = lambda w: F.embedding(ids, w, padding_idx=padding_idx)  # noqa: E731
    assert fn(weight).shape == ids_shape + (dim,)
    assert check_gradients(lambda w: F.embedding(ids, w), weight)
    torch = _torch()
    if torch is not None:
        theirs = torch.from_numpy(ids.numpy())
        parity(fn, lambda w: torch.nn.functional.embedding(theirs, w, padding_idx=padding_idx), weight)


@pytest.mark.parametrize("rows, padding_idx", [(4, 4), (4, -5), (0, 0), (0, -1), (4, 1.0), (4, True)])
def test_embedding_padding_idx_must_be_a_row_of_the_table(rows, padding_idx):
    """Checked up front (PyTorch too, except padding_idx 0 of a table of 0 rows, which it takes)."""
    with pytest.raises(ValueError, match=rf"^embedding: padding_idx {padding_idx!r} is not a row of a table of "
                                         rf"{rows} rows; expected None"):
        F.embedding(minitx.tensor(np.zeros(0, np.int64)), leaf(np.zeros((rows, 3))), padding_idx=padding_idx)


# ---------------------------------------------------------------- embedding_bag


def _np_embedding_bag(table, ids, starts, ends, mode, w, padding_idx):
    """Each bag ids[starts[b]:ends[b]], its padding entries left out, reduced by a loop."""
    out = np.zeros((len(starts), table.shape[1]))
    for b, (start, end) in enumerate(zip(starts, ends)):
        entries = [i for i in range(start, end) if ids[i] != padding_idx]
        if not entries:
            continue
        rows = np.array([table[ids[i]] * (1.0 if w is None else w[i]) for i in entries])
        out[b] = rows.sum(axis=0) if mode == "sum" else rows.mean(axis=0) if mode == "mean" else rows.max(axis=0)
    return out


@st.composite
def _bag_case(draw):
    """table [num, dim] (distinct: max's winners stay put under finite differences), ids 1-D with
    offsets (empty bags and include_last_offset's last offset, the input's length, included) or
    2-D, mode, per_sample_weights (mode 'sum'), padding_idx (None, a row, or -1)."""
    num, dim = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    table = draw(mst.tensors((num, dim), distinct=True))
    two_d = draw(st.booleans())
    shape = (draw(st.integers(0, 3)), draw(st.integers(1, 3))) if two_d else (draw(st.integers(0, 7)),)
    ids = np.asarray(draw(hnp.arrays(np.int64, shape, elements=st.integers(0, num - 1))))
    last = not two_d and draw(st.booleans())
    offsets = None
    if not two_d:
        inner = sorted(draw(st.lists(st.integers(0, len(ids)), max_size=3)))
        offsets = np.array([0] + inner + ([len(ids)] if last else []), dtype=np.int64)
    mode = draw(st.sampled_from(["sum", "mean", "max"]))
    weighted = mode == "sum" and draw(st.booleans())
    w = draw(mst.tensors(shape)) if weighted else None
    return table, ids, offsets, last, mode, w, draw(st.sampled_from([None, 0, -1]))


@given(case=_bag_case())
def test_embedding_bag(case):
    """Forward against the loop above, gradients of the table (and of per_sample_weights), PyTorch
    parity: values, the table's gradient (max's to each column's first maximum) and the weights'."""
    table, ids, offsets, last, mode, w, padding_idx = case
    if offsets is None:
        starts = np.arange(0, ids.size, ids.shape[1]) if ids.size else np.zeros(ids.shape[0], np.int64)
        ends = starts + ids.shape[1]
    else:
        starts, ends = (offsets[:-1], offsets[1:]) if last else (offsets, np.append(offsets[1:], len(ids)))
    pad = None if padding_idx is None else padding_idx % table.shape[0]
    expected = _np_embedding_bag(table.numpy(), ids.reshape(-1), starts, ends, mode,
                                 None if w is None else w.numpy().reshape(-1), pad)
    ours_offsets = None if offsets is None else minitx.tensor(offsets)

    def fn(t, *weights):
        return F.embedding_bag(minitx.tensor(ids), t, ours_offsets, mode=mode, include_last_offset=last,
                               padding_idx=padding_idx, per_sample_weights=weights[0] if weights else None)

    inputs = (table,) if w is None else (table, w)
    y = check_forward(fn, lambda *a: expected, *inputs, rtol=1e-12)
    assert isinstance(y._ctx, minitx.ops.EmbeddingBag)
    assert check_gradients(fn, *inputs)
    torch = _torch()
    if torch is not None:
        theirs_offsets = None if offsets is None else torch.from_numpy(offsets)

        def torch_fn(t, *weights):
            return torch.nn.functional.embedding_bag(torch.from_numpy(ids), t, theirs_offsets, mode=mode,
                                                     include_last_offset=last, padding_idx=padding_idx,
                                                     per_sample_weights=weights[0] if weights else None)

        parity(fn, torch_fn, *(leaf(a.numpy()) for a in inputs))


def test_embedding_bag_max_gives_a_tie_to_the_first_and_an_empty_bag_zeros_as_pytorch():
    table = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 0.0], [-1.0, -2.0]])
    # bag 0 (rows 0, 1, 2) ties in both columns: row 1 takes column 0, row 0 column 1; bag 1 is empty; bag 2
    # (rows 1, 3): row 1 takes both
    ids, offsets = np.array([0, 1, 2, 1, 3]), np.array([0, 3, 3])
    torch = _torch()
    parity(lambda t: F.embedding_bag(minitx.tensor(ids), t, minitx.tensor(offsets), mode="max"),
           lambda t: torch.nn.functional.embedding_bag(torch.from_numpy(ids), t, torch.from_numpy(offsets),
                                                       mode="max"), leaf(table))
    t = leaf(table)
    F.embedding_bag(minitx.tensor(ids), t, minitx.tensor(offsets), mode="max").sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[0.0, 1.0], [2.0, 1.0], [0.0, 0.0], [0.0, 0.0]])


def test_embedding_bag_names_what_is_wrong():
    table, ids = leaf(np.zeros((4, 2))), minitx.tensor([0, 1, 2])
    for offsets, why in (([1, 2], r"\[1, 2\]"), ([0, 2, 1], r"\[0, 2, 1\]"), ([0, 4], r"\[0, 4\]")):
        with pytest.raises(ValueError, match=rf"embedding_bag: offsets must start at 0 and ascend to at most the "
                                             rf"input's length 3, got {why}"):
            F.embedding_bag(ids, table, minitx.tensor(offsets))
    with pytest.raises(ValueError, match="embedding_bag: 1-D input needs offsets"):
        F.embedding_bag(ids, table)
    with pytest.raises(ValueError, match="embedding_bag: offsets must be None when input is 2-D"):
        F.embedding_bag(minitx.tensor([[0, 1]]), table, minitx.tensor([0]))
    with pytest.raises(ValueError, match=r"embedding_bag: input must be 1-D \(with offsets\) or 2-D \[bags, length\], "
                                         r"got shape \(1, 1, 1\)"):
        F.embedding_bag(minitx.tensor([[[0]]]), table)
    with pytest.raises(ValueError, match="embedding_bag: mode must be 'sum', 'mean' or 'max', got 'min'"):
        F.embedding_bag(ids, table, minitx.tensor([0]), mode="min")
    with pytest.raises(ValueError, match="embedding_bag: per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(ids, table, minitx.tensor([0]), per_sample_weights=minitx.ones(3))
    with pytest.raises(ValueError, match=r"embedding_bag: per_sample_weights \(2,\) must have the input's shape"):
        F.embedding_bag(ids, table, minitx.tensor([0]), mode="sum", per_sample_weights=minitx.ones(2))
    with pytest.raises(IndexError, match=r"embedding_bag: input 4 is out of range \[0, 4\)"):
        F.embedding_bag(minitx.tensor([0, 4]), table, minitx.tensor([0]))
    with pytest.raises(TypeError, match="embedding_bag: input must be an integer tensor, got dtype float32"):
        F.embedding_bag(minitx.tensor([0.0]), table, minitx.tensor([0]))
    with pytest.raises(ValueError, match="embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported"):
        F.embedding_bag(ids, table, minitx.tensor([0]), max_norm=1.0)
    with pytest.raises(ValueError, match="embedding_bag: padding_idx 4 is not a row of a table of 4 rows"):
        F.embedding_bag(ids, table, minitx.tensor([0]), padding_idx=4)
    for mode in ("sum", "mean", "max"):  # (PyTorch's refuses them too; mean and max have no integer result)
        with pytest.raises(TypeError, match="embedding_bag: weight must be a floating-point tensor, got dtype int64"):
            F.embedding_bag(minitx.tensor([[0, 1]]), minitx.tensor(np.arange(8).reshape(4, 2)), mode=mode)


# ---------------------------------------------------------------- one_hot


@given(index=mst.index_arrays(mst.shapes(max_dims=3, max_side=4), 5), extra=st.integers(0, 2))
def test_one_hot_matches_numpy_and_pytorch(index, extra):
    classes = 5 + extra
    out = F.one_hot(minitx.tensor(index), classes)
    assert out.dtype == np.int64 and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.eye(classes, dtype=np.int64)[index])
    torch = _torch()
    if torch is not None:
        np.testing.assert_array_equal(out.numpy(),
                                      torch.nn.functional.one_hot(torch.from_numpy(index), classes).numpy())


def test_one_hot_infers_classes_and_checks_range():
    np.testing.assert_array_equal(F.one_hot([2, 0]).numpy(), [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(IndexError, match=r"one_hot: indices 3 is out of range \[0, 3\)"):
        F.one_hot([3], 3)
    with pytest.raises(ValueError, match="one_hot: cannot infer num_classes from empty indices"):
        F.one_hot(minitx.tensor(np.zeros(0, dtype=np.int64)))
    for inferred in (-1, 3):   # float indices refused before num_classes is inferred from them (a NaN's max)
        with warnings.catch_warnings(), pytest.raises(TypeError, match="one_hot: indices must be an integer tensor"):
            warnings.simplefilter("error")
            F.one_hot(minitx.tensor([0.0, np.nan]), inferred)


# ---------------------------------------------------------------- diag, index_add, scatter, bincount, unique


@given(data=st.data())
def test_diag_builds_and_reads_diagonals(data):
    k = data.draw(st.integers(-3, 3), label="diagonal")
    v = data.draw(mst.tensors(mst.shapes(min_dims=1, max_dims=1, min_side=0, max_side=4)), label="v")
    m = data.draw(mst.tensors(mst.shapes(min_dims=2, max_dims=2, max_side=4)), label="m")
    y = check_forward(lambda t: F.diag(t, k), lambda a: np.diag(a, k), v)
    assert isinstance(y._ctx, minitx.ops.DiagEmbed) or v.size == 0
    check_forward(lambda t: F.diag(t, k), lambda a: np.diag(a, k), m)
    assert check_gradients(lambda t: F.diag(t, k), v)
    assert check_gradients(lambda t: F.diag(t, k), m)
    torch = torch_in_example()
    if torch is not None:
        for t in (v, m):
            parity(lambda u: F.diag(u, diagonal=k), lambda u: torch.diag(u, k), leaf(t.numpy()))


def test_diag_refuses_other_ranks():
    for shape in ((), (2, 2, 2)):
        with pytest.raises(ValueError, match=r"diag: needs a 1-d or 2-d tensor, got shape"):
            F.diag(leaf(np.zeros(shape)))


def _np_diag_embed(a, offset, axis1, axis2):
    """Entry by entry: y[..., i, i + offset] (axes axis1 and axis2 of y last) = a[..., i]."""
    ndim = a.ndim + 1
    first, second = axis1 % ndim, axis2 % ndim
    m = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (m, m))
    for p in np.ndindex(*a.shape):
        i = p[-1]
        out[p[:-1] + (i + max(-offset, 0), i + max(offset, 0))] = a[p]
    return np.moveaxis(out, (-2, -1), (first, second))


@given(data=st.data())
def test_diag_embed(data):
    x = data.draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)), label="x")
    offset = data.draw(st.integers(-3, 3), label="offset")
    ndim = x.ndim + 1
    axis1, axis2 = data.draw(st.tuples(*[st.integers(-ndim, ndim - 1)] * 2).filter(
        lambda pair: pair[0] % ndim != pair[1] % ndim), label="axes")
    y = check_forward(lambda t: F.diag_embed(t, offset, axis1, axis2),
                      lambda a: _np_diag_embed(a, offset, axis1, axis2), x)
    np.testing.assert_array_equal(F.diagonal(y, offset, axis1, axis2).numpy(), x.numpy())  # diagonal undone
    assert check_gradients(lambda t: t.diag_embed(offset, dim1=axis1, dim2=axis2), x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: F.diag_embed(t, offset, axis1, axis2), lambda t: torch.diag_embed(t, offset, axis1, axis2),
               leaf(x.numpy()))


def test_diag_embed_keeps_integer_and_boolean_dtypes_as_pytorch():
    torch = torch_in_example()
    for values in ([1, -2, 3], [True, False]):
        y = F.diag_embed(minitx.tensor(values), 1)
        assert y.dtype == minitx.tensor(values).dtype
        if torch is not None:
            expected = torch.diag_embed(torch.tensor(values), 1)
            assert str(expected.dtype) == f"torch.{y.dtype}"
            np.testing.assert_array_equal(y.numpy(), expected.numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.diag_embed(x[0], 0, 0, 0), ValueError, r"diag_embed: axis1 and axis2 must be two different axes"),
    (lambda x: F.diag_embed(x, 0, -1, 2), ValueError, r"diag_embed: axis1 and axis2 must be two different axes of "
                                                      r"the result, got -1 and 2 for 3 dimensions"),
    (lambda x: F.diag_embed(x, 0, 0, 3), IndexError, r"diag_embed: axis 3 is out of range for a tensor with 3 "
                                                     r"dimensions"),
    (lambda x: F.diag_embed(x[0, 0]), ValueError, r"diag_embed: needs a tensor with at least 1 dimension, got a 0-d"),
    (lambda x: F.diag_embed(x, 1.5), TypeError, r"diag_embed: offset must be an int, got 1.5"),
    (lambda x: F.diag_embed(x, 0, None), TypeError, r"diag_embed: axis1 and axis2 must be ints, got None"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_diag_embed_refuses_naming_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(leaf(np.zeros((2, 3))))


@st.composite
def _index_add_case(draw):
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    index = draw(mst.index_arrays((draw(st.integers(0, 5)),), x.shape[axis]))  # repeats common
    shape = list(x.shape)
    shape[axis] = index.shape[0]
    source = draw(mst.tensors(tuple(shape)))
    return x, axis, index, source, draw(st.sampled_from([1, -0.5, 2.0]), label="alpha")


def _index_add_reference(a, axis, index, source, alpha):
    out = np.array(a, copy=True)
    moved, src = np.moveaxis(out, axis, 0), np.moveaxis(source, axis, 0)
    for i, target in enumerate(index):  # one entry at a time: a repeated index adds each
        moved[target] += alpha * src[i]
    return out


@given(case=_index_add_case())
def test_index_add(case):
    x, axis, index, source, alpha = case
    op = lambda t, s: F.index_add(t, axis, minitx.tensor(index), s, alpha=alpha)  # noqa: E731
    y = check_forward(op, lambda a, s: _index_add_reference(a, axis, index, s, alpha), x, source)
    assert isinstance(y._ctx, minitx.ops.IndexAdd)
    assert check_gradients(op, x, source)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, s: F.index_add(t, dim=axis, index=index.tolist(), source=s, alpha=alpha),
               lambda t, s: t.index_add(axis, torch.from_numpy(index), s, alpha=alpha), leaf(x.numpy()),
               leaf(source.numpy()))


def test_index_add_errors_name_the_op():
    x = minitx.zeros(3, 2)
    with pytest.raises(TypeError, match="index_add: source must have x's dtype float32, got float64"):
        F.index_add(x, 0, [0], minitx.tensor(np.ones((1, 2))))
    with pytest.raises(ValueError, match=r"index_add: source of shape \(1, 2\) does not fit x of shape \(3, 2\) "
                                         r"and 2 indices along axis 0: expected \(2, 2\)"):
        F.index_add(x, 0, [0, 1], minitx.ones(1, 2))
    with pytest.raises(IndexError, match=r"index_add: index 3 is out of range \[0, 3\)"):
        F.index_add(x, 0, [3], minitx.ones(1, 2))
    with pytest.raises(ValueError, match="index_add: index must be 1-d"):
        F.index_add(x, 0, [[0]], minitx.ones(1, 2))
    with pytest.raises(ValueError, match="index_add: alpha 2.5 does not fit"):
        F.index_add(minitx.tensor([1, 2]), 0, [0], minitx.tensor([1]), alpha=2.5)
    np.testing.assert_array_equal(F.index_add(minitx.tensor(1.0), 0, [0], minitx.tensor(2.0)).numpy(), 3.0)


@st.composite
def _scatter_case(draw, distinct=True):
    """x, an axis, an index whose targets are distinct (a permutation's first entries along the
    axis) unless ``distinct`` is False, and a src at least index's size."""
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis") % x.ndim
    shape = [draw(st.integers(0, n), label="index side") for n in x.shape]
    if distinct:
        rows = draw(st.permutations(range(x.shape[axis])), label="targets")[:shape[axis]]
        shape[axis] = len(rows)
        index = np.broadcast_to(np.array(rows, dtype=np.int64).reshape([-1 if d == axis else 1 for d in range(x.ndim)]),
                                shape).copy()
    else:
        index = draw(mst.index_arrays(tuple(shape), x.shape[axis]))
    src = draw(mst.tensors(tuple(n + draw(st.integers(0, 1)) for n in shape)))
    return x, axis, index, src


def _scatter_reference(a, axis, index, src, combine=lambda old, new: new):
    """Each write in turn, row-major: the last one at a place stays (or each is combined with what
    is there: scatter's reduce=)."""
    out = np.array(a, copy=True)
    for p in np.ndindex(*index.shape):
        target = list(p)
        target[axis] = index[p]
        target = tuple(target)
        out[target] = combine(out[target], src[p] if np.ndim(src) else src)
    return out


@given(case=_scatter_case(), data=st.data())
def test_scatter_with_distinct_targets_matches_numpy_and_pytorch(case, data):
    x, axis, index, src = case
    op = lambda t, s: F.scatter(t, axis, minitx.tensor(index), s)  # noqa: E731
    y = check_forward(op, lambda a, s: _scatter_reference(a, axis, index, s), x, src)
    assert isinstance(y._ctx, minitx.ops.Scatter)
    assert check_gradients(op, x, src)
    value = data.draw(st.sampled_from([0.0, -1.5, 2.0]), label="value")
    check_forward(lambda t: F.scatter(t, axis, minitx.tensor(index), value),
                  lambda a: _scatter_reference(a, axis, index, value), x)
    assert check_gradients(lambda t: F.scatter(t, axis, minitx.tensor(index), value), x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, s: F.scatter(t, dim=axis, index=minitx.tensor(index), src=s),
               lambda t, s: t.scatter(axis, torch.from_numpy(index), s[tuple(slice(0, n) for n in index.shape)]),
               leaf(x.numpy()), leaf(src.numpy()))
        parity(lambda t: F.scatter(t, axis, minitx.tensor(index), value),
               lambda t: t.scatter(axis, torch.from_numpy(index), value), leaf(x.numpy()))


@given(case=_scatter_case(distinct=False))
def test_scatter_at_repeated_targets_keeps_the_last_write(case):
    """The last write in index's row-major order stays, and only it gets src's gradient (finite
    differences agree: the overwritten ones change nothing)."""
    x, axis, index, src = case
    op = lambda t, s: F.scatter(t, axis, minitx.tensor(index), s)  # noqa: E731
    check_forward(op, lambda a, s: _scatter_reference(a, axis, index, s), x, src)
    assert check_gradients(op, x, src)


def test_scatter_errors_name_the_op():
    x = minitx.zeros(2, 3)
    with pytest.raises(TypeError, match="scatter: src must have x's dtype float32, got float64"):
        F.scatter(x, 1, [[2, 0]], minitx.tensor(np.ones((2, 3))))
    with pytest.raises(ValueError, match="scatter: the value 2.5 does not fit the tensor's int64"):
        F.scatter(minitx.tensor([[1, 2]]), 1, [[0]], 2.5)
    with pytest.raises(IndexError, match=r"scatter: index 3 is out of range \[0, 3\)"):
        F.scatter(x, 1, [[3]], 1.0)
    with pytest.raises(ValueError, match="scatter: index of shape"):
        F.scatter(x, 1, [0], 1.0)
    np.testing.assert_array_equal(F.scatter(minitx.tensor(1.0), 0, minitx.tensor(0), minitx.tensor(3.0)).numpy(), 3.0)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@given(case=_scatter_case(distinct=False), reduce=st.sampled_from(["add", "multiply"]))
def test_scatter_with_reduce_adds_or_multiplies_as_pytorch(case, reduce):
    """scatter's reduce= (PyTorch's older scatter_reduce): src[p] added into x, or multiplying it,
    at each target. PyTorch has no gradient there; minitx's is scatter_reduce's ("sum", "prod")."""
    x, axis, index, src = case
    op = lambda t, s: F.scatter(t, axis, minitx.tensor(index), s, reduce=reduce)  # noqa: E731
    combine = np.add if reduce == "add" else np.multiply
    y = check_forward(op, lambda a, s: _scatter_reference(a, axis, index, s, combine), x, src)
    assert isinstance(y._ctx, minitx.ops.ScatterReduce)
    assert check_gradients(op, x, src)
    check_forward(lambda t: F.scatter(t, axis, minitx.tensor(index), value=1.5, reduce=reduce),
                  lambda a: _scatter_reference(a, axis, index, 1.5, combine), x)
    torch = torch_in_example()
    if torch is not None:  # (the values: PyTorch's has no gradient)
        parity(op, lambda t, s: t.scatter(axis, torch.from_numpy(index), s, reduce=reduce),
               leaf(x.numpy(), requires_grad=False), leaf(src.numpy(), requires_grad=False))


@st.composite
def _index_fill_case(draw):
    """x, an axis, a 1-d index along it (repeats common), and the value: a number or a 0-d tensor."""
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    index = draw(mst.index_arrays((draw(st.integers(0, 5)),), x.shape[axis]))
    value = draw(st.one_of(st.sampled_from([0.0, -2.5]), mst.tensors(())), label="value")
    return x, axis, index, value


@given(case=_index_fill_case())
def test_index_fill(case):
    x, axis, index, value = case

    def reference(a, v):
        out = np.array(a, copy=True)
        np.moveaxis(out, axis, 0)[index] = v
        return out

    op = lambda t, v: F.index_fill(t, axis, minitx.tensor(index), v)  # noqa: E731
    check_forward(op, reference, x, value)
    assert check_gradients(op, x, value) if isinstance(value, minitx.Tensor) else check_gradients(
        lambda t: op(t, value), x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, *v: t.index_fill(dim=axis, index=minitx.tensor(index), value=v[0] if v else value),
               lambda t, *v: t.index_fill(axis, torch.from_numpy(index), v[0] if v else value), leaf(x.numpy()),
               *([leaf(value.numpy())] if isinstance(value, minitx.Tensor) else []))


@st.composite
def _index_copy_case(draw, distinct=True):
    """x, an axis, a 1-d index along it (distinct targets unless ``distinct`` is False) and the
    source: x's shape with len(index) along the axis."""
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    if distinct:
        index = np.array(draw(st.permutations(range(x.shape[axis])), label="targets")[:draw(st.integers(0, 4))],
                         dtype=np.int64)
    else:
        index = draw(mst.index_arrays((draw(st.integers(0, 5)),), x.shape[axis]))
    shape = list(x.shape)
    shape[axis] = len(index)
    return x, axis, index, draw(mst.tensors(tuple(shape)))


def _index_copy_reference(a, axis, index, source):
    """Each slice in turn: where index repeats a target, the last one stays."""
    out = np.array(a, copy=True)
    for i, target in enumerate(index):
        np.moveaxis(out, axis, 0)[target] = np.moveaxis(source, axis, 0)[i]
    return out


@given(case=_index_copy_case())
def test_index_copy(case):
    x, axis, index, source = case
    op = lambda t, s: F.index_copy(t, axis, minitx.tensor(index), s)  # noqa: E731
    check_forward(op, lambda a, s: _index_copy_reference(a, axis, index, s), x, source)
    assert check_gradients(op, x, source)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, s: t.index_copy(dim=axis, index=index.tolist(), source=s),
               lambda t, s: t.index_copy(axis, torch.from_numpy(index), s), leaf(x.numpy()), leaf(source.numpy()))


@given(case=_index_copy_case(distinct=False))
def test_index_copy_at_repeated_targets_keeps_the_last_slice(case):
    """As PyTorch's CPU kernel does; only that slice gets the gradient (finite differences agree)."""
    x, axis, index, source = case
    op = lambda t, s: F.index_copy(t, axis, minitx.tensor(index), s)  # noqa: E731
    check_forward(op, lambda a, s: _index_copy_reference(a, axis, index, s), x, source)
    assert check_gradients(op, x, source)


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)), data=st.data())
def test_masked_scatter(x, data):
    """The k-th True takes source's k-th entry (row-major); a mask may broadcast to x, and source
    may have more entries than needed (the rest get no gradient)."""
    mask = data.draw(mst.bool_masks(tuple(n if data.draw(st.booleans(), label="full axis") else 1
                                          for n in x.shape)), label="mask")
    trues = int(np.broadcast_to(mask, x.shape).sum())
    source = data.draw(mst.tensors((trues + data.draw(st.integers(0, 2), label="spare"),)), label="source")

    def reference(a, s):
        out = np.array(a, copy=True)
        out[np.broadcast_to(mask, x.shape)] = s[:trues]
        return out

    op = lambda t, s: F.masked_scatter(t, minitx.tensor(mask), s)  # noqa: E731
    check_forward(op, reference, x, source)
    assert check_gradients(op, x, source)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, s: t.masked_scatter(minitx.tensor(mask), s),
               lambda t, s: t.masked_scatter(torch.from_numpy(mask), s), leaf(x.numpy()), leaf(source.numpy()))


def test_index_fill_counts_a_negative_index_from_the_end_as_pytorchs():
    x = leaf(np.zeros((2, 4)))
    y = F.index_fill(x, 1, [-1, 0], 1.0)
    np.testing.assert_array_equal(y.numpy(), [[1.0, 0.0, 0.0, 1.0]] * 2)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 1.0, 0.0]] * 2)


def test_index_fill_index_copy_and_masked_scatter_errors_name_the_op():
    x = minitx.zeros(2, 3)
    with pytest.raises(IndexError, match=r"index_fill: index 3 is out of range \[-3, 3\)"):
        F.index_fill(x, 1, [3], 1.0)
    with pytest.raises(IndexError, match=r"index_fill: index -4 is out of range \[-3, 3\)"):
        F.index_fill(x, 1, [-4], 1.0)
    with pytest.raises(IndexError, match=r"index_copy: index -1 is out of range \[0, 3\)"):
        F.index_copy(x, 1, [-1], minitx.ones(2, 1))
    with pytest.raises(ValueError, match="index_fill: index must be 0-d or 1-d, got shape"):
        F.index_fill(x, 1, [[0]], 1.0)
    with pytest.raises(ValueError, match=r"index_fill: value must be a number or a 0-d tensor, got shape \(2,\)"):
        F.index_fill(x, 1, [0], minitx.ones(2))
    with pytest.raises(ValueError, match="index_fill: value 2.5 does not fit the tensor's int64"):
        F.index_fill(minitx.tensor([[1, 2]]), 1, [0], 2.5)
    with pytest.raises(ValueError, match=r"index_copy: source of shape \(2, 1\) does not fit x of shape \(2, 3\) "
                                         r"and 2 indices along axis 1: expected \(2, 2\)"):
        F.index_copy(x, 1, [0, 2], minitx.ones(2, 1))
    with pytest.raises(TypeError, match="index_copy: source must have x's dtype float32, got float64"):
        F.index_copy(x, 1, [0], minitx.tensor(np.ones((2, 1))))
    with pytest.raises(ValueError, match="masked_scatter: mask has 4 True entries and source only 3 entries"):
        F.masked_scatter(x, minitx.tensor([True, False, True]), minitx.ones(3))  # (the mask broadcast: 2 rows)
    with pytest.raises(ValueError, match=r"masked_scatter: mask of shape \(4,\) does not broadcast to \(2, 3\)"):
        F.masked_scatter(x, minitx.tensor([True] * 4), minitx.ones(8))
    with pytest.raises(TypeError, match="masked_scatter: mask must be a boolean tensor, got dtype int64"):
        F.masked_scatter(x, minitx.tensor([1, 0, 1]), minitx.ones(2))
    with pytest.raises(ValueError, match=r"scatter: reduce must be None, 'add' or 'multiply', got 'sum'"):
        F.scatter(x, 1, [[0]], 1.0, reduce="sum")
    with pytest.raises(TypeError, match="scatter: give src .* or value=.*, one of them"):
        F.scatter(x, 1, [[0]], 1.0, value=2.0)
    np.testing.assert_array_equal(F.index_copy(minitx.tensor(1.0), 0, [0], minitx.tensor(2.0)).numpy(), 2.0)
    np.testing.assert_array_equal(F.masked_scatter(x, minitx.tensor(False), minitx.ones(0)).numpy(), x.numpy())


@given(ids=hnp.arrays(np.int64, st.integers(0, 8), elements=st.integers(0, 6)), minlength=st.integers(0, 9),
       data=st.data())
def test_bincount_as_numpy_and_pytorch(ids, minlength, data):
    weights = data.draw(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64]), ids.shape,
                                   elements=st.integers(-3, 3)), label="weights")
    expected = [int((ids == v).sum()) for v in range(max(minlength, ids.max(initial=-1) + 1))]
    counts = F.bincount(minitx.tensor(ids), minlength=minlength)
    np.testing.assert_array_equal(counts.numpy(), expected)
    assert counts.dtype == np.int64
    sums = F.bincount(minitx.tensor(ids), minitx.tensor(weights), minlength)
    np.testing.assert_array_equal(sums.numpy(), [weights[ids == v].sum() for v in range(len(expected))])
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.bincount(torch.from_numpy(ids), torch.from_numpy(weights), minlength)
        assert str(theirs.dtype) == f"torch.{sums.dtype}" or not ids.size  # PyTorch's empty x: int64 sums
        np.testing.assert_array_equal(sums.numpy(), theirs.numpy())


def test_bincount_refuses_what_pytorch_refuses():
    for bad in (minitx.tensor([-1, 2]), minitx.tensor([[1, 2]]), minitx.tensor([1.0, 2.0]), minitx.tensor([True])):
        with pytest.raises(ValueError, match="bincount: x must be"):
            F.bincount(bad)
    with pytest.raises(ValueError, match="bincount: weights must have x's shape"):
        F.bincount(minitx.tensor([0, 1]), minitx.tensor([1.0]))
    with pytest.raises(ValueError, match="bincount: minlength must be a whole number >= 0, got -1"):
        F.bincount(minitx.tensor([0, 1]), minlength=-1)


@st.composite
def _histc_case(draw):
    """x on a 1/16 grid, bins a power of two and [min, max] integers or x's own range: every bin edge is
    then a multiple of 1/16 / 2^k, and (v - min) * bins / (max - min) lands on a whole number exactly
    where v is on an edge, in float32 and float64, so the bins are NumPy's histogram's. An explicit
    range leaves some entries outside, and NaN and infinities among them."""
    dtype = draw(st.sampled_from([np.float64, np.float32]), label="dtype")
    a = np.round(draw(mst.float_arrays(draw(mst.shapes(max_dims=2, max_side=6)), min_value=-4, max_value=4)) * 16) / 16
    a = np.asarray(a, dtype=dtype)
    bins = draw(st.sampled_from([1, 2, 4, 8, 16]), label="bins")
    if draw(st.booleans(), label="own range"):
        if draw(st.booleans(), label="all equal"):
            a[...] = a.flat[0]
        return a, bins, 0, 0
    low = draw(st.integers(-4, 3), label="min")
    high = draw(st.integers(low, 4), label="max")  # (max == min: x's own range)
    if high > low:
        a[draw(mst.bool_masks(a.shape), label="edge values")] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return a, bins, low, high


@given(case=_histc_case())
def test_histc_as_numpy_and_pytorch(case):
    a, bins, low, high = case
    got = F.histc(minitx.tensor(a), bins, low, high)
    lo, hi = (low, high) if low != high else (a.min(), a.max())  # min == max: x's own range
    lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)  # one value v: [v - 1, v + 1]
    want, _ = np.histogram(a[np.isfinite(a)], bins, range=(float(lo), float(hi)))
    assert got.dtype == a.dtype and got.shape == (bins,) and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), want)
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(got.numpy(), torch.histc(torch.from_numpy(a), bins, low, high).numpy())


@given(x=mst.tensors(mst.shapes(max_dims=2, max_side=8), min_value=-3, max_value=3), bins=st.integers(1, 12),
       dtype=st.sampled_from(["float64", "float32", "float16", "bfloat16"]), data=st.data())
def test_histc_places_entries_as_pytorch_in_each_float_dtype(x, bins, dtype, data):
    """Any values and ranges: the bin is computed in x's dtype, step by step as PyTorch's, so
    entries near an edge fall on its side; 16-bit dtypes too."""
    low = data.draw(st.sampled_from([0.0, -1.0, -2.7, 0.3]), label="min")
    high = data.draw(st.sampled_from([0.0, 1.0, 2.5, 0.3]).filter(lambda h: h >= low or h == 0.0), label="max")
    low, high = (low, high) if high >= low else (0.0, 0.0)
    a = x.numpy()
    ours = F.histc(minitx.tensor(a).to(dtype), bins, low, high)
    assert ours.dtype.name == dtype and ours.numpy().astype(np.float64).sum() <= a.size
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.histc(torch.from_numpy(np.asarray(a)).to(getattr(torch, dtype)), bins, low, high)
        np.testing.assert_array_equal(ours.numpy().astype(np.float64), theirs.double().numpy())


def test_histc_of_empty_and_0d_tensors_and_its_errors():
    assert F.histc(minitx.tensor(np.zeros(0, np.float32)), 4).numpy().tolist() == [0.0] * 4  # range [-1, 1]
    assert minitx.tensor(1.5).histc(bins=4).numpy().tolist() == [0, 0, 1, 0]  # [0.5, 2.5]: 1.5 in bin 2
    assert F.histc(minitx.tensor([1.0, 2.0]), 4, 5, 5).numpy().tolist() == [1, 0, 0, 1]  # min == max, not 0: x's range
    assert F.histc(minitx.tensor([1.0, 2.0, np.nan]), 2, 0, 2).numpy().tolist() == [0, 2]  # NaN not counted
    assert F.histc(minitx.tensor([1.0, 2.0]), 2).numpy().tolist() == [1, 1]  # the defaults, PyTorch's bins=100
    assert F.histc(minitx.tensor([1.0, 2.0])).shape == (100,)
    for bad, message in ((np.array([1.0, np.nan]), r"^histc: the range \[nan, nan\] is not finite; give a finite "
                          r"min and max \(x holds NaN or inf\)"),
                         (np.array([1.0, np.inf]), r"^histc: the range \[1.0, inf\] is not finite")):
        with pytest.raises(ValueError, match=message):
            F.histc(minitx.tensor(bad), 4)
    with pytest.raises(ValueError, match=r"^histc: the range \[0.0, inf\] is not finite; give a finite min and "
                                         r"max$"):
        F.histc(minitx.tensor([1.0]), 4, 0, np.inf)
    with pytest.raises(ValueError, match="^histc: min must not be larger than max, got min=3 and max=1"):
        F.histc(minitx.tensor([1.0]), 4, 3, 1)
    for bins in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=rf"^histc: bins must be a whole number > 0, got {bins!r}"):
            F.histc(minitx.tensor([1.0]), bins)
    for x in (minitx.tensor([1, 2]), minitx.tensor([True])):
        with pytest.raises(TypeError, match=rf"^histc: expected a floating-point tensor, got dtype {x.dtype.name} "):
            F.histc(x)
    with pytest.raises(TypeError, match="^histc: max must be a number, got None"):
        F.histc(minitx.tensor([1.0]), 4, 0, None)


def _numpy_unique_consecutive(a, axis):
    """Runs of equal consecutive entries (slices along axis; NaN equal to nothing), walked one by one."""
    items = list(a.reshape(-1)) if axis is None else list(np.moveaxis(a, axis, 0))
    kept, inverse, counts = [], [], []
    for k, item in enumerate(items):
        if k == 0 or not np.array_equal(item, items[k - 1]):
            kept.append(item)
            counts.append(0)
        counts[-1] += 1
        inverse.append(len(kept) - 1)
    if axis is None:
        values = np.array(kept, dtype=a.dtype)
        return values, np.array(inverse, dtype=np.int64).reshape(a.shape), np.array(counts, dtype=np.int64)
    values = np.moveaxis(np.array(kept, dtype=a.dtype).reshape((len(kept),) + np.moveaxis(a, axis, 0).shape[1:]), 0,
                         axis)
    return values, np.array(inverse, dtype=np.int64), np.array(counts, dtype=np.int64)


@given(a=hnp.arrays(np.int64, mst.shapes(max_dims=3, max_side=4), elements=st.integers(0, 1)),
       dtype=st.sampled_from([np.float64, np.int64, np.bool_, np.float32]), data=st.data())
def test_unique_consecutive_as_numpy_and_pytorch(a, dtype, data):
    a = a.astype(dtype)
    if a.dtype.kind == "f":
        a[data.draw(mst.bool_masks(a.shape), label="nan")] = np.nan  # each NaN kept: it equals nothing
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)) if a.ndim else st.none(), label="axis")
    values, inverse, counts = F.unique_consecutive(minitx.tensor(a), True, True, axis)
    for ours, want in zip((values, inverse, counts), _numpy_unique_consecutive(a, axis), strict=True):
        assert ours.dtype == want.dtype and ours.shape == want.shape
        np.testing.assert_array_equal(ours.numpy(), want)
    np.testing.assert_array_equal(F.unique_consecutive(minitx.tensor(a), dim=axis).numpy(), values.numpy())
    assert [v.shape for v in minitx.tensor(a).unique_consecutive(return_counts=True, dim=axis)] == [values.shape,
                                                                                                    counts.shape]
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.unique_consecutive(torch.from_numpy(np.asarray(a)), True, True, axis)
        for ours, their in zip((values, inverse, counts), theirs, strict=True):
            assert str(their.dtype) == f"torch.{ours.dtype}" and tuple(their.shape) == ours.shape
            np.testing.assert_array_equal(ours.numpy(), their.numpy())


def test_unique_consecutive_of_empty_and_0d_tensors_and_its_errors():
    values, inverse, counts = F.unique_consecutive(minitx.tensor(np.zeros((0, 3))), True, True, dim=0)
    assert values.shape == (0, 3) and inverse.shape == counts.shape == (0,)
    values, inverse, counts = minitx.tensor(5).unique_consecutive(True, True)
    assert values.numpy().tolist() == [5] and inverse.shape == () and counts.numpy().tolist() == [1]
    signed = F.unique_consecutive(minitx.tensor([-0.0, 0.0, 1.0]))  # 0 and -0 equal: the first is kept
    assert signed.numpy().tolist() == [0.0, 1.0] and np.signbit(signed.numpy()[0])
    assert not F.unique_consecutive(leaf([1.0, 1.0])).requires_grad
    with pytest.raises(ValueError, match=r"^unique_consecutive: the input of shape \(2, 0\) has an empty axis "
                                         r"other than axis 0"):
        F.unique_consecutive(minitx.tensor(np.zeros((2, 0))), axis=0)
    with pytest.raises(ValueError, match="^unique_consecutive: a 0-d tensor has no axis 0; give axis=None"):
        F.unique_consecutive(minitx.tensor(5.0), dim=0)
    with pytest.raises(ValueError, match="^unique_consecutive: axis 2 is out of range"):
        F.unique_consecutive(minitx.tensor([[1, 2]]), axis=2)


@given(a=hnp.arrays(np.int64, mst.shapes(max_dims=3, min_side=0), elements=st.integers(-2, 2)),
       dtype=st.sampled_from([np.float64, np.int64, np.bool_]), data=st.data())
def test_unique_as_numpy_and_pytorch(a, dtype, data):
    a = a.astype(dtype)
    if a.dtype == np.float64 and a.size:
        a[data.draw(mst.bool_masks(a.shape), label="nan")] = np.nan  # each NaN its own value
    values, inverse, counts = F.unique(minitx.tensor(a), return_inverse=True, return_counts=True)
    want_values, want_inverse, want_counts = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(values.numpy(), want_values)
    _same_inverse(inverse.numpy(), want_inverse.reshape(a.shape), a)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(F.unique(minitx.tensor(a), sorted=False).numpy(), want_values)
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.unique(torch.from_numpy(a), return_inverse=True, return_counts=True)
        for ours, their in zip((values, inverse, counts), theirs, strict=True):
            assert str(their.dtype) == f"torch.{ours.dtype}"
        np.testing.assert_array_equal(values.numpy(), theirs[0].numpy())
        _same_inverse(inverse.numpy(), theirs[1].numpy(), a)
        np.testing.assert_array_equal(counts.numpy(), theirs[2].numpy())


def _same_inverse(ours, theirs, a):
    """Each NaN is its own value, and which NaN takes which of their places is arbitrary (NumPy's
    sort is not stable): the inverses agree off the NaNs, and send the NaNs to one set of places."""
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    assert sorted(ours[nan].tolist()) == sorted(theirs[nan].tolist())


def test_unique_of_bfloat16_with_nan_is_sorted_as_float32():
    """ml_dtypes' bfloat16 sort leaves NaN where it was, and the equal values around it apart: unique
    orders bfloat16 as float32, which holds each value exactly (PyTorch: [1, 2, nan, nan], [1, 2, 1, 1],
    inverse [1, 2, 0, 3, 1])."""
    x = minitx.tensor(np.array([2.0, np.nan, 1.0, np.nan, 2.0], np.float32)).bfloat16()
    values, inverse, counts = F.unique(x, return_inverse=True, return_counts=True)
    assert values.dtype.name == "bfloat16"
    np.testing.assert_array_equal(values.numpy().astype(np.float32), [1.0, 2.0, np.nan, np.nan])
    np.testing.assert_array_equal(inverse.numpy(), [1, 2, 0, 3, 1])
    np.testing.assert_array_equal(counts.numpy(), [1, 2, 1, 1])


def test_unique_refuses_dim():
    with pytest.raises(NotImplementedError, match="unique: dim is not supported"):
        F.unique(minitx.tensor([[1, 2]]), dim=0)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_scatter_reduce_mean_of_integers_keeps_their_dtype_as_pytorch(dtype):
    """The floored mean of integers is of x's dtype (it was int32 for 8- and 16-bit ones: their
    floor division by the int32 count)."""
    x = minitx.tensor([4, 6], dtype=dtype)
    y = F.scatter_reduce(x, 0, minitx.tensor([0, 0]), minitx.tensor([2, 3], dtype=dtype), "mean")
    assert y.dtype == np.dtype(dtype) and y.numpy().tolist() == [3, 6]
    assert F.index_reduce(x, 0, minitx.tensor([1]), minitx.tensor([3], dtype=dtype), "mean").dtype == np.dtype(dtype)
