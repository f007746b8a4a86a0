"""Shape ops (minitx/ops/shape.py) and F.split / F.permute built on them.

Each case is a hypothesis strategy that draws an input and the op's settings, and returns
``(fn, reference, inputs)``: the minitx function, an independent numpy computation, and the
tensors to call both with. Indexing gets its own tests: slices with negative steps, repeated
integer indices (whose gradients add up), boolean masks, mixed tuples and tensor indices."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.ops import indexing
from minitx.testing import check_backward_hygiene, gradcheck, leaf
from minitx.testing import strategies as mst
from _torch_kit import parity, torch_in_example

SMALL = mst.shapes(max_dims=3, max_side=4)
NONEMPTY = mst.shapes(min_dims=1, max_dims=3, max_side=4)


@st.composite
def reshape_case(draw):
    x = draw(mst.tensors(SMALL))
    target = draw(st.sampled_from([(-1,), (x.size, 1), tuple(reversed(x.shape)), (1,) + x.shape + (1,)]))
    return (lambda t: t.reshape(target)), (lambda a: np.reshape(a, target)), [x]


@st.composite
def transpose_case(draw):
    x = draw(mst.tensors(SMALL))
    perm = draw(st.none() | st.permutations(range(x.ndim)).map(tuple))
    if perm is not None and draw(st.booleans()):
        perm = tuple(a - x.ndim for a in perm)  # the same permutation with negative axes
    return (lambda t: F.transpose(t, perm)), (lambda a: np.transpose(a, perm)), [x]


@st.composite
def permute_case(draw):
    x = draw(mst.tensors(NONEMPTY))
    perm = draw(st.permutations(range(x.ndim)))
    return (lambda t: t.permute(*perm)), (lambda a: np.transpose(a, perm)), [x]


@st.composite
def swapaxes_case(draw):
    """A 0-d x takes axis 0 or -1 (y = x), as in PyTorch; NumPy has no axis there."""
    x = draw(mst.tensors(SMALL))
    ndim = max(x.ndim, 1)
    axis1, axis2 = draw(st.tuples(*[st.integers(-ndim, ndim - 1)] * 2))
    return (lambda t: F.swapaxes(t, axis1, axis2)), (lambda a: np.swapaxes(a, axis1, axis2) if a.ndim else a), [x]


@st.composite
def broadcast_to_case(draw):
    shape, other = draw(mst.broadcastable_shapes(2, max_dims=3, max_side=4))
    target = np.broadcast_shapes(shape, other)
    return (lambda t: t.broadcast_to(target)), (lambda a: np.broadcast_to(a, target)), [draw(mst.tensors(shape))]


@st.composite
def squeeze_case(draw):
    x = draw(mst.tensors(mst.shapes(max_dims=4, max_side=2)))
    ones = [i - x.ndim * draw(st.booleans()) for i, n in enumerate(x.shape) if n == 1]  # some negative
    axis = None
    if ones:
        axis = draw(st.none() | st.sampled_from(ones) | st.lists(st.sampled_from(ones), unique=True).map(tuple))
    return (lambda t: F.squeeze(t, axis)), (lambda a: np.squeeze(a, axis)), [x]


@st.composite
def unsqueeze_case(draw):
    x = draw(mst.tensors(SMALL))
    axis = draw(st.integers(-x.ndim - 1, x.ndim))
    return (lambda t: t.unsqueeze(axis)), (lambda a: np.expand_dims(a, axis)), [x]


@st.composite
def concatenate_case(draw):
    shape = draw(NONEMPTY)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    xs = [draw(mst.tensors(shape[:axis % len(shape)] + (n,) + shape[axis % len(shape) + 1:])) for n in sizes]
    return (lambda *ts: F.concatenate(ts, axis)), (lambda *arrays: np.concatenate(arrays, axis)), xs


@st.composite
def stack_case(draw):
    shape = draw(SMALL)
    axis = draw(st.integers(-len(shape) - 1, len(shape)))
    xs = [draw(mst.tensors(shape)) for _ in range(draw(st.integers(1, 3)))]
    return (lambda *ts: F.stack(ts, axis)), (lambda *arrays: np.stack(arrays, axis)), xs


def cropped_then_padded(a, widths, value):
    """The reference for pad with negative widths: cut the negative ones off, np.pad the rest."""
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, a.shape))
    return np.pad(a[crop], [(max(b, 0), max(e, 0)) for b, e in widths] or 0, constant_values=value)


@st.composite
def pad_case(draw):
    """pad in each of its forms: an int, PyTorch's flat form (pairs for the last k axes, the last
    axis first), one (before, after) pair per axis (negative ones crop); the reference is np.pad
    of the same widths, one pair per axis, the first axis first."""
    x = draw(mst.tensors(SMALL))
    pairs = st.tuples(st.integers(0, 2), st.integers(0, 2))
    form = draw(st.sampled_from(["int", "flat", "pairs", "cropping"]))
    if form == "int":
        width = draw(st.integers(0, 2))
        per_axis = [(width, width)] * x.ndim
    elif form == "flat":
        last = draw(st.lists(pairs, max_size=x.ndim))  # the last axis' pair first
        width = tuple(w for pair in last for w in pair)
        per_axis = [(0, 0)] * (x.ndim - len(last)) + last[::-1]
    elif form == "pairs":
        width = per_axis = draw(st.lists(pairs, min_size=x.ndim, max_size=x.ndim))
    else:
        width = per_axis = draw(st.tuples(*[st.tuples(st.integers(-n, 2), st.integers(-n, 2)).filter(
            lambda w, n=n: n + min(w[0], 0) + min(w[1], 0) >= 0) for n in x.shape]))
    value = draw(st.sampled_from([0.0, -1.5]))
    return (lambda t: F.pad(t, width, value=value)), (lambda a: cropped_then_padded(a, per_axis, value)), [x]


@st.composite
def split_case(draw):
    """Parts are weighted by 1, 2, 3, ... and joined again, so each part's gradient differs."""
    x = draw(mst.tensors(NONEMPTY))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    sections = draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0])
                    | st.lists(st.integers(0, n), max_size=3).map(sorted))

    def fn(t):
        return F.concatenate([part * float(i + 1) for i, part in enumerate(F.split(t, sections, axis))], axis)

    def reference(a):
        return np.concatenate([part * (i + 1) for i, part in enumerate(np.split(a, sections, axis))], axis)

    return fn, reference, [x]


@st.composite
def tensor_split_case(draw):
    """Pieces weighted by 1, 2, 3, ... and joined again. Counts past the axis's length (empty
    pieces), cut points in any order, negative or past the end (pieces that overlap, or are
    empty: as Python slices), as a list, a tuple or an integer tensor (0-d: a count)."""
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    sections = draw(st.integers(1, n + 2) | st.lists(st.integers(-n - 2, n + 2), max_size=4))
    given = draw(st.sampled_from([lambda s: s, lambda s: tuple(s) if isinstance(s, list) else s,
                                  lambda s: minitx.tensor(np.array(s, dtype=np.int64))]))(sections)

    def fn(t):
        return F.concatenate([part * float(i + 1) for i, part in enumerate(F.tensor_split(t, given, axis))], axis)

    def reference(a):
        return np.concatenate([part * (i + 1) for i, part in enumerate(np.array_split(a, sections, axis))], axis)

    return fn, reference, [x]


@st.composite
def any_index(draw, shape):
    """(index, the index as NumPy takes it): minitx.testing's getitem_indices, or an integer tensor
    (also tests/ops/test_setitem.py)."""
    if draw(st.integers(0, len(mst.INDEX_KINDS))) == 0:
        index = minitx.tensor(draw(mst.getitem_indices(shape[:1], "integer arrays")))
        return index, index.numpy()
    index = draw(mst.getitem_indices(shape))
    return index, index


@st.composite
def getitem_case(draw):
    x = draw(mst.tensors(NONEMPTY))
    index, as_numpy = draw(any_index(x.shape))
    return (lambda t: t[index]), (lambda a: a[as_numpy]), [x]


# op class -> strategy of (minitx fn, numpy reference, inputs)
CASES = {
    "Reshape": reshape_case(),
    "Transpose": transpose_case(),
    "permute": permute_case(),
    "SwapAxes": swapaxes_case(),
    "BroadcastTo": broadcast_to_case(),
    "Squeeze": squeeze_case(),
    "Unsqueeze": unsqueeze_case(),
    "GetItem": getitem_case(),
    "Concatenate": concatenate_case(),
    "Stack": stack_case(),
    "Pad": pad_case(),
    "split": split_case(),
    "tensor_split": tensor_split_case(),
}


@pytest.mark.parametrize("name", list(CASES))
@given(data=st.data())
def test_shape_op_forward(name, data):
    fn, reference, inputs = data.draw(CASES[name])
    out = fn(*inputs)
    expected = reference(*[t.numpy() for t in inputs])
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("name", list(CASES))
@given(data=st.data())
def test_shape_op_gradcheck(name, data):
    fn, _, inputs = data.draw(CASES[name])
    assert gradcheck(fn, *inputs)


@pytest.mark.parametrize("name", [n for n in CASES if "split" not in n])  # the splits end in another op
@given(data=st.data())
def test_shape_op_backward_hygiene(name, data):
    fn, _, inputs = data.draw(CASES[name])
    assert check_backward_hygiene(fn, *inputs)


# ---------------------------------------------------------------- indexing, exact gradients


@pytest.mark.parametrize("index, expected", [
    ([0, 0, 2, 0], [3.0, 0.0, 1.0, 0.0]),
    (np.array([[1, 1], [-1, 3]]), [0.0, 2.0, 0.0, 2.0]),
    (np.array([True, False, True, True]), [1.0, 0.0, 1.0, 1.0]),
    (slice(None, None, -2), [0.0, 1.0, 0.0, 1.0]),
    (minitx.tensor([3, 3, 3]), [0.0, 0.0, 0.0, 3.0]),
    (minitx.tensor(np.array([False, True, False, False])), [0.0, 1.0, 0.0, 0.0]),
], ids=["list", "2d-array", "mask", "negative-step", "int-tensor", "bool-tensor"])
def test_getitem_gradient_counts_each_pick(index, expected):
    x = minitx.tensor([10.0, 11.0, 12.0, 13.0], dtype="float64", requires_grad=True)
    y = x[index]
    picked = index.numpy() if isinstance(index, minitx.Tensor) else index
    np.testing.assert_array_equal(y.numpy(), x.numpy()[picked])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("shape, index", [
    ((0, 3), np.zeros((0, 3), dtype=bool)), ((0, 3), minitx.tensor(np.zeros((0, 3), dtype=bool))),
    ((2, 0, 3), np.zeros((2, 0), dtype=bool)), ((0, 3), np.zeros(0, dtype=bool)),
    ((), np.array(True)), ((), np.array(False)), ((), minitx.tensor(np.array(True))), ((3,), []),
], ids=["empty-2d-mask", "empty-2d-mask-tensor", "empty-leading-mask", "empty-1d-mask", "0d-true", "0d-false",
        "0d-true-tensor", "empty-list"])
def test_getitem_with_empty_and_0d_boolean_masks_matches_pytorch(shape, index):
    """A boolean mask stays a mask when empty (only [] becomes an empty integer index), and a 0-d
    mask adds an axis of length 1 (True) or 0 (False)."""
    x = leaf(np.random.default_rng(0).standard_normal(shape))
    picked = index.numpy() if isinstance(index, minitx.Tensor) else index
    assert x[index].shape == x.numpy()[picked].shape
    assert gradcheck(lambda t: t[index], x)
    torch = torch_in_example()
    parity(lambda t: t[index], lambda t: t[picked if isinstance(picked, list) else torch.as_tensor(picked)], x)


def test_getitem_repeated_rows_with_a_mixed_index_accumulate():
    x = minitx.tensor(np.arange(12.0).reshape(3, 4), dtype="float64", requires_grad=True)
    y = x[[2, 0, 2], 1:]
    np.testing.assert_array_equal(y.numpy(), np.arange(12.0).reshape(3, 4)[[2, 0, 2], 1:])
    y.backward(np.ones((3, 3)))
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 1, 1], [0, 0, 0, 0], [0, 2, 2, 2]])


def test_getitem_rejects_float_indices_and_out_of_range():
    x = minitx.ones(3, 2)
    with pytest.raises(TypeError, match="getitem: index arrays must be integer or boolean, got dtype float64"):
        x[np.array([0.0, 1.0])]
    with pytest.raises(TypeError, match="getitem: index arrays must be integer or boolean, got dtype float32"):
        x[minitx.tensor([0.0, 1.0]), 0]
    with pytest.raises(IndexError, match=r"getitem: index .* does not fit shape \(3, 2\)"):
        x[5]


# ---------------------------------------------------------------- split, concatenate, stack


def test_split_into_sections_and_at_cut_points():
    x = minitx.tensor(np.arange(12.0).reshape(2, 6), dtype="float64")
    parts = F.split(x, 3, axis=-1)
    assert [p.shape for p in parts] == [(2, 2)] * 3
    parts = F.split(x, [1, 4], axis=1)
    for part, expected in zip(parts, np.split(np.arange(12.0).reshape(2, 6), [1, 4], axis=1)):
        np.testing.assert_array_equal(part.numpy(), expected)
    with pytest.raises(ValueError, match="split: axis 1 of length 6 does not split into 4 equal parts"):
        F.split(x, 4, axis=1)
    for axis in (2, -3, 1.0):
        with pytest.raises(ValueError, match=rf"split: axis {axis} does not exist in a tensor of shape \(2, 6\); "
                                             r"expected an int in \[-2, 2\)"):
            F.split(x, 2, axis=axis)


@pytest.mark.parametrize("shape, axis", [((0,), 0), ((0, 3), 0), ((3, 0), -1), ((2, 0, 4), 1)])
@pytest.mark.parametrize("sections", [1, 2, 3, [0], [1, 1]])
def test_split_of_an_empty_axis_gives_empty_parts_as_numpy_and_pytorch(shape, axis, sections):
    x = leaf(np.zeros(shape))
    parts = F.split(x, sections, axis)
    assert [p.shape for p in parts] == [p.shape for p in np.split(x.numpy(), sections, axis)]
    F.concatenate(parts, axis).backward(np.zeros(shape))
    assert x.grad.shape == shape
    torch = torch_in_example()
    assert [p.shape for p in parts] == [tuple(p.shape) for p in torch.tensor_split(torch.zeros(shape), sections, axis)]


def test_tensor_split_gives_numpys_array_split_pieces_and_each_its_gradient():
    """Each piece's shape and values, and dy of each piece back in its own place of x's gradient
    (pieces that overlap add theirs up)."""
    a = np.arange(24.0).reshape(2, 12)
    int32 = minitx.tensor(np.array([3, 1, 14, -2], dtype=np.int32))  # (PyTorch's takes int64 only)
    assert [p.shape for p in F.tensor_split(leaf(a), int32, 1)] == \
        [p.shape for p in np.array_split(a, [3, 1, 14, -2], 1)]
    for sections in (5, [3, 1, 14, -2], (0, 12), []):
        x = leaf(a)
        parts = F.tensor_split(x, sections, 1)
        expected = np.array_split(a, sections, 1)
        assert isinstance(parts, tuple) and len(parts) == len(expected)
        for part, piece in zip(parts, expected):
            np.testing.assert_array_equal(part.numpy(), piece)
        F.concatenate([part * float(i + 1) for i, part in enumerate(parts)], 1).sum().backward()
        weights = np.zeros(12)
        for i, piece in enumerate(np.array_split(np.arange(12), sections)):
            weights[piece] += i + 1
        np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(weights, (2, 12)))


@pytest.mark.parametrize("op, shape", [("hsplit", (6,)), ("hsplit", (2, 6, 3)), ("vsplit", (6, 2)),
                                       ("dsplit", (1, 2, 6))])
@pytest.mark.parametrize("sections", [1, 2, 3, 6, [1, 4], [5, 2, 9]])
def test_hsplit_vsplit_dsplit_as_numpys_and_pytorchs(op, shape, sections):
    a = np.random.default_rng(0).standard_normal(shape)
    x = leaf(a)
    parts = getattr(F, op)(x, sections)
    expected = getattr(np, op)(a, sections)
    assert [p.shape for p in parts] == [p.shape for p in expected]
    for part, piece in zip(parts, expected):
        np.testing.assert_array_equal(part.numpy(), piece)
    assert [p.shape for p in getattr(x, op)(sections)] == [p.shape for p in expected]
    assert gradcheck(lambda t: F.concatenate([p * float(i + 1) for i, p in enumerate(getattr(F, op)(t, sections))],
                                             1 if op == "hsplit" and len(shape) > 1 else {"dsplit": 2}.get(op, 0)), x)
    torch = torch_in_example()
    if torch is not None:
        theirs = getattr(torch, op)(torch.from_numpy(a), sections)
        assert [tuple(p.shape) for p in theirs] == [p.shape for p in parts]


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.hsplit(x, 4), ValueError, r"hsplit: axis 1 of length 6 does not split into 4 equal parts"),
    (lambda x: F.hsplit(x, 0), ValueError, r"hsplit: axis 1 of length 6 does not split into 0 equal parts"),
    (lambda x: F.hsplit(x, -2), ValueError, r"hsplit: the number of pieces must be >= 1, got -2"),
    (lambda x: F.vsplit(x, 3), ValueError, r"vsplit: axis 0 of length 4 does not split into 3 equal parts"),
    (lambda x: F.vsplit(x[0, 0], 1), ValueError, r"vsplit: needs a tensor with at least 2 dimensions, got shape "
                                                 r"\(8,\)"),
    (lambda x: F.dsplit(x[0], 1), ValueError, r"dsplit: needs a tensor with at least 3 dimensions, got shape \(6, 8\)"),
    (lambda x: F.hsplit(x[0, 0, 0], 1), ValueError, r"hsplit: needs a tensor with at least 1 dimension, got shape "
                                                    r"\(\)"),
    (lambda x: F.hsplit(x, minitx.tensor(2)), TypeError, r"hsplit: indices_or_sections must be an int or a list"),
    (lambda x: F.tensor_split(x, 0), ValueError, r"tensor_split: the number of pieces must be >= 1, got 0"),
    (lambda x: F.tensor_split(x[0, 0, 0], 2), ValueError, r"tensor_split: needs a tensor with at least 1 dimension"),
    (lambda x: F.tensor_split(x, 2, 3), IndexError, r"tensor_split: axis 3 is out of range"),
    (lambda x: F.tensor_split(x, 2, None), TypeError, r"tensor_split: axis must be an int, got None"),
    (lambda x: F.tensor_split(x, True), TypeError, r"tensor_split: indices_or_sections must be an int"),
    (lambda x: F.tensor_split(x, [1.5]), TypeError, r"tensor_split: indices_or_sections must be an int"),
    (lambda x: F.tensor_split(x, minitx.tensor([[1]])), TypeError,
     r"tensor_split: a tensor of indices_or_sections must be 0-d .* got shape \(1, 1\) and dtype int64"),
    (lambda x: F.tensor_split(x, minitx.tensor([1.0])), TypeError, r"tensor_split: .* got shape \(1,\) and dtype "
                                                                   r"float32"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_splits_refuse_what_pytorch_refuses_naming_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(minitx.zeros(4, 6, 8))


def test_concatenate_and_stack_route_each_gradient_to_its_input():
    a = minitx.tensor([[1.0, 2.0]], dtype="float64", requires_grad=True)
    b = minitx.tensor([[3.0, 4.0], [5.0, 6.0]], dtype="float64", requires_grad=True)
    F.concatenate([a, b], axis=0).backward(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(a.grad.numpy(), [[0.0, 1.0]])
    np.testing.assert_array_equal(b.grad.numpy(), [[2.0, 3.0], [4.0, 5.0]])
    a.grad = None
    c = minitx.tensor([[7.0, 8.0]], dtype="float64", requires_grad=True)
    F.stack([a, c], axis=-1).backward(np.array([[[1.0, 2.0], [3.0, 4.0]]]))
    np.testing.assert_array_equal(a.grad.numpy(), [[1.0, 3.0]])
    np.testing.assert_array_equal(c.grad.numpy(), [[2.0, 4.0]])


def test_concatenate_and_stack_mismatches_name_the_shapes():
    a, b = minitx.ones(2, 3), minitx.ones(2, 4)
    with pytest.raises(ValueError, match=r"concatenate: shapes \(2, 3\), \(2, 4\) cannot be joined along axis 0"):
        F.concatenate([a, b], axis=0)
    with pytest.raises(ValueError, match=r"concatenate: shapes \(2, 3\), \(3,\) cannot be joined along axis 1"):
        F.concatenate([a, minitx.ones(3)], axis=1)
    with pytest.raises(ValueError, match="concatenate: need at least one tensor"):
        F.concatenate([])
    with pytest.raises(ValueError, match=r"stack: all inputs need the same shape, got \(2, 3\), \(2, 4\)"):
        F.stack([a, b])
    with pytest.raises(ValueError, match="stack: need at least one tensor"):
        F.stack([])


# ---------------------------------------------------------------- other errors


def test_reshape_to_an_incompatible_shape():
    with pytest.raises(ValueError, match=r"reshape: cannot reshape shape \(2, 3\) \(6 elements\) into \(4, 2\)"):
        minitx.ones(2, 3).reshape(4, 2)


@pytest.mark.parametrize("shape", [(-2, 3), (-1, -1), (2, -3)])
def test_reshape_refuses_a_negative_length_other_than_one_minus_1(shape):
    """NumPy reads any negative length as -1 ((2, 3) reshaped to (-2, 3) was (2, 3)); PyTorch refuses it."""
    with pytest.raises(ValueError, match=rf"reshape: invalid shape \({shape[0]}, {shape[1]}\) for shape \(2, 3\): "
                                         r"lengths must be >= 0, with at most one -1 \(inferred\)"):
        minitx.ones(2, 3).reshape(shape)


@pytest.mark.parametrize("repeats", [[2], np.array([0]), "tensor"])
def test_repeat_takes_one_count_in_a_list_for_every_element_as_numpy_and_pytorch(repeats):
    """np.repeat(x, [2], 1) and x.repeat_interleave(torch.tensor([2]), 1) repeat each entry twice."""
    x = leaf(np.arange(6.0).reshape(2, 3))
    repeats = minitx.tensor([3]) if isinstance(repeats, str) else repeats
    count = int(np.asarray(repeats)[0])
    y = x.repeat_interleave(repeats, dim=1)
    np.testing.assert_array_equal(y.numpy(), np.repeat(x.numpy(), count, axis=1))
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: F.repeat(t, repeats, axis=1), lambda t: t.repeat_interleave(torch.tensor([count]), 1), x)


def test_squeeze_of_an_axis_that_is_not_1():
    with pytest.raises(ValueError, match=r"squeeze: axis 1 of shape \(1, 3\) is not of size 1"):
        F.squeeze(minitx.ones(1, 3), 1)
    with pytest.raises(IndexError, match=r"squeeze: axis 2 is out of range for shape \(1, 3\)"):  # (not "of size 1")
        F.squeeze(minitx.ones(1, 3), (0, 2))


@pytest.mark.parametrize("axes", [(0, 0), (0, 2), (1,), (0, 1, 2), (-3, 1)])
def test_transpose_rejects_what_is_not_a_permutation(axes):
    with pytest.raises(ValueError, match=r"transpose: axes .* are not a permutation of the 2 axes of shape \(2, 3\)"):
        F.transpose(minitx.ones(2, 3), axes)


def test_transpose_of_two_axes_points_to_swapaxes():
    """PyTorch's x.transpose(1, 2) swaps two axes; minitx's takes a permutation, as NumPy's."""
    with pytest.raises(ValueError, match=r"transpose: axes \(1, 2\) are not a permutation of the 3 axes of shape "
                                         r"\(2, 3, 4\); transpose takes one, as NumPy's \(to swap two axes, as "
                                         r"PyTorch's transpose\(1, 2\), write swapaxes\(1, 2\)\)"):
        minitx.ones(2, 3, 4).transpose(1, 2)


def test_unsqueeze_and_broadcast_to_errors():
    with pytest.raises(ValueError, match=r"unsqueeze: axis 3 is out of range for shape \(2, 3\)"):
        minitx.ones(2, 3).unsqueeze(3)
    with pytest.raises(TypeError, match=r"unsqueeze: axis must be an int, got \(0, 1\)"):  # (not NumPy's '<=' error)
        minitx.ones(2, 3).unsqueeze((0, 1))
    with pytest.raises(ValueError, match=r"broadcast_to: shape \(2, 3\) cannot be broadcast to \(2, 4\)"):
        F.broadcast_to(minitx.ones(2, 3), (2, 4))


@pytest.mark.parametrize("width", [[(1, 1)], [(1, 2, 3), (0, 0)]])
def test_pad_with_bad_widths(width):
    with pytest.raises(ValueError, match=r"pad: pad .* must give \(before, after\) "
                                         r"for each of the 2 axes of shape \(2, 3\)"):
        F.pad(minitx.ones(2, 3), width)


def test_pad_refuses_a_tensor_value_which_would_get_no_gradient():
    with pytest.raises(TypeError, match=r"pad: value must be a number, got Tensor \(as PyTorch's F.pad\)"):
        F.pad(leaf([1.0, 2.0]), (1, 1), value=leaf(2.0))
    assert F.pad(leaf([1.0, 2.0]), (1, 1), value=np.float32(2.0)).numpy().tolist() == [2.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("width", [(1, 2, 3), (1, 1, 1, 1, 1, 1)])
def test_pad_with_a_bad_flat_width_says_how_the_flat_form_reads(width):
    with pytest.raises(ValueError, match=r"pad: the flat pad .* gives \(before, after\) pairs for the last axes, "
                                         r"the last axis first, so it needs an even number of ints, at most 4"):
        F.pad(minitx.ones(2, 3), width)


def test_pad_reads_a_flat_pad_as_pytorch_and_takes_pytorchs_argument_order():
    """(0, 2) pads the last axis only, as torch.nn.functional.pad (np.pad would pad every axis);
    the third positional argument is the mode, as PyTorch's."""
    torch = torch_in_example()
    a = np.arange(24.0).reshape(2, 3, 4)
    for pad in [(0, 2), (1, 0, 0, 2), (1, 1, 2, 0, 0, 1)]:
        np.testing.assert_array_equal(F.pad(minitx.tensor(a), pad).numpy(),
                                      torch.nn.functional.pad(torch.tensor(a), pad).numpy())
        if len(pad) <= 4:  # (PyTorch's replicate pads at most the last two axes of a 3-d input)
            np.testing.assert_array_equal(F.pad(minitx.tensor(a), pad, "replicate").numpy(),
                                          torch.nn.functional.pad(torch.tensor(a), pad, "replicate").numpy())
    np.testing.assert_array_equal(F.pad(minitx.tensor(a), (1, 1), "constant", 7.0).numpy(),
                                  torch.nn.functional.pad(torch.tensor(a), (1, 1), "constant", 7.0).numpy())
    assert F.pad(minitx.tensor(a), (1, 1), value=None).numpy()[0, 0, 0] == 0  # PyTorch's default value
    with pytest.raises(ValueError, match=r"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', "
                                         r"got 0.5"):
        F.pad(minitx.tensor(a), (1, 1), 0.5)  # minitx's older order, (x, pad, value): refused, not misread
    with pytest.raises(ValueError, match=r"pad: value 2.0 is for mode 'constant'; mode 'reflect' pads with x's own"):
        F.pad(minitx.tensor(a), (1, 1), "reflect", 2.0)


@st.composite
def _cropping_widths(draw, shape):
    """(before, after) per axis, each from -(what is left) to 2, the output never empty, and one
    drawn axis cropped at its start: where a slip in the gradient's offset shows."""
    cropped = draw(st.integers(0, len(shape) - 1))
    widths = []
    for axis, n in enumerate(shape):
        before = draw(st.integers(-(n - 1), -1 if axis == cropped else 2))
        after = draw(st.integers(-(n - 1 - max(-before, 0)), 2))
        widths.append((before, after))
    return tuple(widths)


@given(data=st.data(), value=st.sampled_from([0.0, -1.5]))
def test_pad_with_negative_widths_crops_and_sends_the_kept_part_its_gradient(data, value):
    """Negative widths crop (PyTorch's F.pad): the forward against cropping then np.pad, the
    gradient by finite differences and against PyTorch's (a cropped element gets none, a kept
    one the dy of where it landed)."""
    x = data.draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, min_side=2, max_side=4)), label="x")
    widths = data.draw(_cropping_widths(x.shape), label="widths")
    out = F.pad(x, widths, value=value)
    np.testing.assert_array_equal(out.numpy(), cropped_then_padded(x.numpy(), widths, value))
    assert gradcheck(lambda t: F.pad(t, widths, value=value), x)
    torch = torch_in_example()
    if torch is not None:
        flat = [w for pair in reversed(widths) for w in pair]  # PyTorch's order: the last axis first
        x.grad = None
        parity(lambda t: F.pad(t, widths, value=value), lambda t: torch.nn.functional.pad(t, flat, value=value), x,
               rtol=0, atol=0)

@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_negative_widths_crop_only_in_constant_and_circular_modes(mode):
    with pytest.raises(ValueError, match=r"pad: pad .* >= 0 .*negative widths crop only in modes 'constant' and "
                                         r"'circular'"):
        F.pad(minitx.ones(2, 3), (1, -1), mode=mode)


def test_cropping_more_than_an_axis_holds_names_the_axis():
    with pytest.raises(ValueError, match=r"pad: pad \(-2, -2\) crops more than the 3 elements of axis 1"):
        F.pad(minitx.ones(2, 3), [(0, 0), (-2, -2)])
    assert F.pad(minitx.ones(2, 3), [(0, 0), (-2, -1)]).shape == (2, 0)  # to nothing: allowed, as PyTorch


def test_swapaxes_out_of_range_names_the_op():
    with pytest.raises(ValueError, match=r"swapaxes: axis 3 is out of range for shape \(2, 3\)"):
        F.swapaxes(minitx.zeros(2, 3), 0, 3)
    with pytest.raises(ValueError, match=r"swapaxes: axis 1 is out of range for shape \(\)"):
        F.swapaxes(minitx.tensor(1.0), 1, 0)  # a 0-d tensor takes 0 or -1 only, as in PyTorch


@pytest.mark.parametrize("axes", [(0, 0), (0, -1), (-1, 0), (-1, -1)])
def test_swapaxes_of_a_0d_tensor_matches_pytorch(axes):
    torch = torch_in_example()
    parity(lambda t: F.swapaxes(t, *axes), lambda t: torch.swapaxes(t, *axes), leaf(np.array(2.5)))


def test_numpy_integer_axes_and_sections_are_accepted():
    assert F.squeeze(minitx.zeros(1, 3), np.int64(0)).shape == (3,)
    assert [part.shape for part in F.split(minitx.zeros(4), np.int64(2))] == [(2,), (2,)]


@given(data=st.data())
def test_index_bounds_check_agrees_with_numpy(data):
    """CuPy wraps out-of-range integer indices around instead of raising, so on CuPy arrays
    getitem checks them itself (indexing._check_index_bounds); it must raise exactly when numpy does."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    kinds = data.draw(st.lists(st.sampled_from(["int", "slice", "array", "none", "true", "ellipsis"]), min_size=1,
                               max_size=len(shape)))
    if kinds.count("ellipsis") > 1:
        kinds = [k for k in kinds if k != "ellipsis"] + ["ellipsis"]
    parts = []
    length = data.draw(st.integers(1, 3))  # index arrays of one length always broadcast together
    for kind in kinds:
        if kind == "int":
            parts.append(0)  # always in range (CuPy, like numpy, raises for a plain int itself)
        elif kind == "slice":
            parts.append(slice(None))
        elif kind == "array":
            parts.append(np.array(data.draw(st.lists(st.integers(-6, 6), min_size=length, max_size=length))))
        else:
            parts.append({"none": None, "true": True, "ellipsis": Ellipsis}[kind])
    try:
        np.zeros(shape)[tuple(parts)]
        numpy_raised = False
    except IndexError:
        numpy_raised = True
    try:
        indexing._check_index_bounds(shape, parts)
        raised = False
    except IndexError as error:
        raised = True
        assert "out of bounds for axis" in str(error)
    assert raised == numpy_raised, (shape, parts)


@given(data=st.data())
def test_pixel_shuffle_and_unshuffle(data):
    """Each undoes the other; against PyTorch's, with gradients."""
    r = data.draw(st.integers(1, 3), label="r")
    lead = data.draw(st.sampled_from([(), (2,), (1, 2)]), label="lead")
    x = data.draw(mst.tensors(lead + (2 * r * r, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))), label="x")
    shuffled = F.pixel_shuffle(x, r)
    np.testing.assert_array_equal(F.pixel_unshuffle(shuffled, r).numpy(), x.numpy())
    assert gradcheck(lambda t: F.pixel_shuffle(t, r), x)
    parity(lambda t: F.pixel_shuffle(t, r), lambda t: torch_in_example().nn.functional.pixel_shuffle(t, r),
           leaf(x.numpy()))
    with pytest.raises(ValueError, match="pixel_shuffle: the factor must be an int >= 1, got 0"):
        F.pixel_shuffle(x, 0)


@given(data=st.data())
def test_channel_shuffle(data):
    """Channel i m + j of g groups of m goes to j g + i: against that permutation in NumPy, with
    gradients, against PyTorch's (both names); the layer and the errors."""
    g, m = data.draw(st.integers(1, 3), label="g"), data.draw(st.integers(1, 3), label="m")
    rest = data.draw(st.sampled_from([(1,), (2,), (3, 2)]), label="rest")
    x = data.draw(mst.tensors((data.draw(st.integers(1, 2)), g * m) + rest), label="x")
    moved = np.empty(g * m, dtype=int)
    for i in range(g):
        for j in range(m):
            moved[j * g + i] = i * m + j  # output channel j g + i reads input channel i m + j
    np.testing.assert_array_equal(F.channel_shuffle(x, g).numpy(), x.numpy()[:, moved])
    assert gradcheck(lambda t: F.channel_shuffle(t, g), x)
    torch = torch_in_example()
    parity(lambda t: F.channel_shuffle(t, g), lambda t: torch.nn.functional.channel_shuffle(t, g), leaf(x.numpy()))
    if torch is not None:  # (PyTorch's native_channel_shuffle has no gradient)
        np.testing.assert_array_equal(F.native_channel_shuffle(x, g).numpy(),
                                      torch.nn.functional.native_channel_shuffle(torch.tensor(x.numpy()), g).numpy())
    np.testing.assert_array_equal(minitx.nn.ChannelShuffle(g)(x).numpy(), x.numpy()[:, moved])
    assert repr(minitx.nn.ChannelShuffle(g)) == f"ChannelShuffle(groups={g})"
    with pytest.raises(ValueError, match="channel_shuffle: groups must be an int >= 1, got 0"):
        F.channel_shuffle(x, 0)
    with pytest.raises(ValueError, match=rf"channel_shuffle: {g * m} channels do not divide into {g * m + 1} groups"):
        F.channel_shuffle(x, g * m + 1)
    with pytest.raises(ValueError, match=r"channel_shuffle: x must be \[N, C, \*\] with at least 3 axes, got shape"):
        F.channel_shuffle(minitx.ones(2, g * m), g)


# ---------------------------------------------------------------- meshgrid, hstack, vstack


@given(data=st.data())
def test_meshgrid_as_numpy_and_pytorch(data):
    n = data.draw(st.integers(1, 3), label="n")
    tensors = [data.draw(mst.tensors(mst.shapes(max_dims=1, min_side=0, max_side=4)), label="t") for _ in range(n)]
    indexing = data.draw(st.sampled_from(["ij", "xy"]), label="indexing")
    grids = F.meshgrid(*tensors, indexing=indexing)
    for ours, want in zip(grids, np.meshgrid(*(t.numpy() for t in tensors), indexing=indexing), strict=True):
        np.testing.assert_array_equal(ours.numpy(), want)
    assert [g.shape for g in F.meshgrid(tensors)] == [g.shape for g in F.meshgrid(*tensors, indexing="ij")]
    assert gradcheck(lambda *ts: F.stack(F.meshgrid(*ts, indexing=indexing)), *tensors)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda *ts: F.stack(F.meshgrid(*ts, indexing=indexing)),
               lambda *ts: torch.stack(torch.meshgrid(*ts, indexing=indexing)), *(leaf(t.numpy()) for t in tensors))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_of_unequal_lengths_in_each_indexing(indexing):
    """Every run: 'xy' swaps the first two axes of the grids (x along columns), 'ij' does not."""
    a, b, c = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0]), np.array([6.0, 7.0, 8.0, 9.0])
    for ours, want in zip(F.meshgrid(*map(leaf, (a, b, c)), indexing=indexing),
                          np.meshgrid(a, b, c, indexing=indexing), strict=True):
        assert ours.shape == want.shape
        np.testing.assert_array_equal(ours.numpy(), want)


def test_meshgrid_errors_name_the_op():
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'ij' or 'xy', got 'yx'"):
        F.meshgrid(leaf([1.0]), indexing="yx")
    with pytest.raises(ValueError, match="meshgrid: needs one or more 0-d or 1-d tensors"):
        F.meshgrid(leaf(np.zeros((2, 2))))
    with pytest.raises(ValueError, match="meshgrid: needs one or more"):
        F.meshgrid()


@pytest.mark.parametrize("name, shapes", [
    ("hstack", [(), (2,)]), ("hstack", [(3,), (0,)]), ("hstack", [(2, 1), (2, 3)]), ("hstack", [(2, 1, 2), (2, 2, 2)]),
    ("hstack", [(2,), (2, 1)]),  # refused: a 1-d first joins along axis 0
    ("vstack", [(), (1,)]), ("vstack", [(3,), (2, 3)]), ("vstack", [(2, 1, 2), (1, 1, 2)]), ("vstack", [(3,), (2,)])])
def test_hstack_and_vstack_as_numpy_and_pytorch(name, shapes):
    tensors = [leaf(np.random.default_rng(k).standard_normal(s)) for k, s in enumerate(shapes)]
    arrays = [t.numpy() for t in tensors]
    try:
        want = getattr(np, name)(arrays)
    except ValueError:
        with pytest.raises(ValueError, match=f"^{name}: shapes"):  # (the function called, not its concatenate)
            getattr(F, name)(tensors)
        return
    np.testing.assert_array_equal(getattr(F, name)(tensors).numpy(), want)
    assert gradcheck(lambda *ts: getattr(F, name)(ts), *tensors)
    torch = torch_in_example()
    parity(lambda *ts: getattr(F, name)(ts), lambda *ts: getattr(torch, name)(ts), *tensors)


# ---------------------------------------------------------------- atleast_kd, broadcast_tensors, block_diag, combinations


def _ref_block_diag(arrays):
    """NumPy's: each block as 2-d (0-d as (1, 1), 1-d as a row) written into a zero matrix."""
    blocks = [a.reshape(1, -1) if a.ndim < 2 else a for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _ref_combinations(a, r, with_replacement):
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = [list(c) for c in pick(a.tolist(), r)]
    return np.array(rows, dtype=a.dtype).reshape(-1, r) if r else a[:0]


JOINING = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "block_diag", "cartesian_prod", "combinations",
           "column_stack", "row_stack", "dstack"]


@st.composite
def joined_case(draw, name):
    """(minitx fn, numpy reference, torch fn, inputs) of the op ``name``, one that puts tensors together."""
    n = draw(st.integers(1, 3))
    if name == "broadcast_tensors":
        shapes = draw(mst.broadcastable_shapes(n, max_dims=3, max_side=3))
    elif name in ("cartesian_prod", "combinations"):
        shapes = [draw(mst.shapes(min_dims=1, max_dims=1, min_side=0, max_side=4)) for _ in range(n)]
    elif name in ("column_stack", "row_stack", "dstack"):  # sizes that join
        rows = draw(st.integers(1, 3))
        shapes = [draw(st.sampled_from({"column_stack": [(rows,), (rows, 2)], "row_stack": [(rows,), (2, rows)],
                                        "dstack": [(1, rows), (1, rows, 2)]}[name])) for _ in range(n)]
    else:
        shapes = [draw(mst.shapes(max_dims=2 if name == "block_diag" else 4, min_side=0, max_side=3)) for _ in range(n)]
    inputs = [draw(mst.tensors(s)) for s in shapes]
    r, repeat = draw(st.integers(0, 3)), draw(st.booleans())
    cases = {
        **{k: (lambda *ts, k=k: F.concatenate([t.reshape(-1) for t in getattr(F, k)(ts)]),
               lambda *a, k=k: np.concatenate([v.reshape(-1) for v in getattr(np, k)(*a, ())][:-1]))
           for k in ("atleast_1d", "atleast_2d", "atleast_3d")},
        "broadcast_tensors": (lambda *ts: F.stack(F.broadcast_tensors(*ts)), lambda *a: np.stack(np.broadcast_arrays(*a))),
        "block_diag": (F.block_diag, lambda *a: _ref_block_diag(a)),
        "cartesian_prod": (F.cartesian_prod,
                           lambda *a: np.array(list(itertools.product(*a))).reshape(-1, n) if n > 1 else a[0]),
        "combinations": (lambda t, *_: F.combinations(t, r=r, with_replacement=repeat),
                         lambda a, *_: _ref_combinations(a, r, repeat)),
        "column_stack": (lambda *ts: F.column_stack(ts), lambda *a: np.column_stack(a)),
        "row_stack": (lambda *ts: F.row_stack(ts), lambda *a: np.vstack(a)),
        "dstack": (lambda *ts: F.dstack(ts), lambda *a: np.dstack(a)),
    }
    torch_call = {**{k: lambda torch, *ts, k=k: torch.cat([t.reshape(-1) for t in getattr(torch, k)(ts)])
                     for k in ("atleast_1d", "atleast_2d", "atleast_3d")},
                  "broadcast_tensors": lambda torch, *ts: torch.stack(torch.broadcast_tensors(*ts)),
                  # (PyTorch's result from an empty t is no function of t: + 0 * t.sum() gives it t's zero gradient)
                  "combinations": lambda torch, t, *_: torch.combinations(t, r=r, with_replacement=repeat) + 0 * t.sum(),
                  "row_stack": lambda torch, *ts: torch.vstack(ts),
                  "column_stack": lambda torch, *ts: torch.column_stack(ts), "dstack": lambda torch, *ts: torch.dstack(ts)}
    torch_fn = torch_call.get(name, lambda torch, *ts: getattr(torch, name)(*ts))
    return *cases[name], torch_fn, inputs


@pytest.mark.parametrize("name", JOINING)
@given(data=st.data())
def test_joining_ops_as_numpy_with_gradients_as_pytorch(name, data):
    fn, reference, torch_fn, inputs = data.draw(joined_case(name), label="case")
    out = fn(*inputs)
    expected = reference(*[t.numpy() for t in inputs])
    assert out.shape == expected.shape, name
    np.testing.assert_array_equal(out.numpy(), expected)
    if name.startswith("atleast"):  # (fn joins them flat: their shapes here)
        assert [t.shape for t in getattr(F, name)(inputs)] == [a.shape for a in getattr(np, name)(*[t.numpy() for t in inputs], ())][:-1]
    assert gradcheck(fn, *inputs)
    torch = torch_in_example()
    if torch is not None and not (name == "block_diag" and any(t.shape == (0,) for t in inputs)):  # see below
        parity(fn, lambda *ts: torch_fn(torch, *ts), *[leaf(t.numpy()) for t in inputs])


def test_block_diag_after_an_empty_1d_block_sends_each_entry_its_own_gradient():
    """An empty 1-d block is one row of no columns, in PyTorch's forward as in minitx's; PyTorch's
    backward (2.13) takes it as no row, so the blocks after it get the gradient of the row above
    theirs. minitx's: each entry its own dy."""
    s = leaf(5.0)
    y = F.block_diag(leaf(np.zeros(0)), s)
    assert y.numpy().tolist() == [[0.0], [5.0]]
    y.backward(minitx.tensor([[1.0], [2.0]], dtype="float64"))
    assert float(s.grad) == 2.0


def test_atleast_kd_give_one_tensor_for_one_and_a_tuple_for_several_as_pytorch():
    a, b = minitx.tensor(1.0), minitx.tensor([1.0, 2.0])
    assert isinstance(F.atleast_1d(a), minitx.Tensor) and F.atleast_1d(a).shape == (1,)
    assert [t.shape for t in F.atleast_2d(a, b)] == [(1, 1), (1, 2)]
    assert [t.shape for t in F.atleast_3d([b])] == [(1, 2, 1)] and isinstance(F.atleast_3d((b,)), tuple)
    assert F.atleast_2d(minitx.ones(2, 3, 4)).shape == (2, 3, 4)


def test_broadcast_shapes_block_diag_and_combinations_edges_as_pytorch():
    assert F.broadcast_shapes((2, 1), (3,)) == (2, 3) and F.broadcast_shapes(2, (1,)) == (2,)
    assert F.broadcast_shapes() == () and F.broadcast_shapes((0, 1), (4,)) == (0, 4)
    assert F.block_diag().shape == (1, 0)  # PyTorch's
    mixed = F.block_diag(minitx.tensor([1, 2]), minitx.tensor([1.5]))
    assert mixed.dtype == np.float32 and mixed.numpy().tolist() == [[1, 2, 0], [0, 0, 1.5]]
    assert F.combinations(minitx.tensor([1.0, 2.0]), r=3).shape == (0, 3)
    three = minitx.tensor([1.0, 2.0, 3.0])
    assert F.combinations(three).numpy().tolist() == [[1, 2], [1, 3], [2, 3]]  # increasing positions, each pair once
    assert F.combinations(three, 2, with_replacement=True).numpy().tolist() == [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3],
                                                                               [3, 3]]
    assert F.cartesian_prod(minitx.tensor([1.0])).shape == (1,)
    assert minitx.row_stack is F.row_stack and minitx.block_diag is F.block_diag


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.broadcast_shapes((2,), (3,)), ValueError,
     r"broadcast_shapes: shapes \(2,\), \(3,\) do not broadcast: lengths 2 and 3 on axis -1"),
    (lambda: F.broadcast_tensors(minitx.ones(2), minitx.ones(3, 1, 4)), ValueError, r"^broadcast_tensors: shapes"),
    (lambda: F.block_diag(minitx.ones(1, 1), minitx.ones(2, 2, 2)), ValueError,
     r"block_diag: blocks must have 2 or fewer dimensions, got shape \(2, 2, 2\) for block 1"),
    (lambda: F.cartesian_prod(minitx.ones(2, 2)), ValueError, r"cartesian_prod: needs one or more 1-d tensors"),
    (lambda: F.cartesian_prod(), ValueError, r"cartesian_prod: needs one or more 1-d tensors, got shapes \[\]"),
    (lambda: F.cartesian_prod(minitx.ones(2), minitx.tensor([1])), TypeError,
     r"cartesian_prod: the tensors need one dtype, got float32, int64"),
    (lambda: F.combinations(minitx.ones(2, 2)), ValueError, r"combinations: needs a 1-d tensor, got shape \(2, 2\)"),
    (lambda: F.combinations(minitx.ones(2), r=-1), ValueError, r"combinations: r must be a whole number >= 0, got -1"),
    (lambda: F.combinations(minitx.ones(2), r=1.0), ValueError, r"combinations: r must be a whole number"),
])
def test_joining_ops_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call()
