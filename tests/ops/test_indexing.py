"""Flip, Roll, Tril, Triu, Gather, ScatterAdd, Repeat, Tile, PadEdges, Einsum and one_hot
(minitx/ops/indexing.py): forward against independent NumPy computations, float64 gradients
(check_gradients) on hypothesis-drawn shapes, PyTorch parity, and the errors users see."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import parity, torch_in_example

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


@given(x=mst.tensors(SHAPES), data=st.data())
def test_roll(x, data):
    shift = data.draw(st.integers(-6, 6), label="shift")
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")

    def reference(a):  # y[i] = x[(i - shift) mod n]
        flat = a.reshape(-1) if axis is None else a
        n = flat.shape[0 if axis is None else axis]
        return np.take(flat, (np.arange(n) - shift) % n, axis=0 if axis is None else axis).reshape(a.shape)

    check_forward(lambda t: F.roll(t, shift, axis), reference, x)
    assert check_gradients(lambda t: t.roll(shift, axis), x)
    parity(lambda t: F.roll(t, shift, axis), lambda t: t.roll(shift, axis), leaf(x.numpy()))


def test_roll_several_axes():
    x = leaf(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(F.roll(x, (1, -1), (0, 1)).numpy(), np.roll(x.numpy(), (1, -1), (0, 1)))
    assert check_gradients(lambda t: F.roll(t, (1, -1), (0, 1)), x)
    with pytest.raises(ValueError, match="roll: 2 shifts for 1 axes"):
        F.roll(x, (1, 2), 0)


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


# ---------------------------------------------------------------- gather, scatter_add


@st.composite
def _along_case(draw):
    """(x, axis, index): index has x's dimensions, sizes <= x's off the axis, any size on it; the
    axis counted from either end."""
    shape = draw(SHAPES)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = tuple(draw(st.integers(0 if d == axis % len(shape) else 1, 4 if d == axis % len(shape) else n))
                        for d, n in enumerate(shape))
    index = draw(mst.index_arrays(index_shape, shape[axis]))  # (shape[-1] is the last axis's size)
    return draw(mst.tensors(shape)), axis, minitx.tensor(index)


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


def test_gather_and_scatter_add_errors_name_the_op():
    x = leaf(np.zeros((2, 3)))
    with pytest.raises(IndexError, match=r"gather: index 3 is out of range \[0, 3\)"):
        F.gather(x, 1, [[0, 3]])
    with pytest.raises(ValueError, match=r"gather: index of shape \(3, 1\) does not fit input of shape \(2, 3\)"):
        F.gather(x, 1, [[0], [1], [2]])
    with pytest.raises(TypeError, match="scatter_add: index must be an integer tensor, got dtype float32"):
        F.scatter_add(x, 0, minitx.tensor([[0.0]]), leaf([[1.0]]))


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
    with pytest.raises(ValueError, match="pad: mode must be 'constant', 'reflect' or 'replicate', got 'wrap'"):
        F.pad(x, 1, mode="wrap")


# ---------------------------------------------------------------- einsum

EINSUMS = ["ij,jk->ik", "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bti,oi->bto", "ij->i", "ij->", "i,i->", "i,j->ij",
           "ijk->kji", "ij,j->i", "abc,cd,de->abe", "ij,ij->ij", "ij->ji"]


def _np_einsum(spec, *arrays):
    """The sum of products over every letter, by broadcasting each operand to all letters."""
    lhs, out = spec.split("->")
    terms = lhs.split(",")
    letters = sorted(set("".join(terms)))
    product = 1.0
    for term, a in zip(terms, arrays):
        order = sorted(range(len(term)), key=lambda k: letters.index(term[k]))
        shape = [a.shape[term.index(c)] if c in term else 1 for c in letters]
        product = product * np.transpose(a, order).reshape(shape)
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


def test_einsum_errors_name_what_is_wrong():
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4, 5)))
    cases = [("ij,jk", "needs an explicit output after '->'"), ("...ij,jk->ik", "'...' is not supported"),
             ("ij->ij", "names 1 operands, got 2"), ("ij,jk->ik", "index 'j' has size 3 in one operand and 4"),
             ("ii,jk->ik", "operand 0 has subscripts 'ii'; use distinct letters"),
             ("ijk,kl->il", r"operand 0 has subscripts 'ijk' for shape \(2, 3\)"),
             ("ij,kl->iz", "output 'iz' must use distinct letters that appear in the operands")]
    for spec, message in cases:
        with pytest.raises(ValueError, match=f"einsum: .*{message}"):
            F.einsum(spec, a, b) if spec != "ij->ij" else F.einsum(spec, a, a)


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
