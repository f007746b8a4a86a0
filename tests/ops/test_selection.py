"""nonzero, argwhere, MaskedSelect and unravel_index (minitx/ops/indexing.py), whose shapes depend on the data:
forward against independent NumPy computations, float64 gradients (check_gradients) on
hypothesis-drawn shapes and values, PyTorch parity, the one host read each costs, and the
errors users see."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx import backend
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import parity, torch_in_example

SPECIAL = {np.float64: [0.0, -0.0, 1.5, -2.0, np.nan, np.inf], np.int64: [0, 3, -1], np.bool_: [False, True]}


@st.composite
def _sparse_arrays(draw):
    """Arrays of every kind nonzero takes, many zeros among them: 0-d, empty, float with -0.0,
    NaN and inf, integer and boolean."""
    dtype = draw(st.sampled_from(list(SPECIAL)))
    shape = draw(mst.shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    return draw(hnp.arrays(dtype, shape, elements=st.sampled_from(SPECIAL[dtype])))


def _np_nonzero_rows(a):
    """[K, ndim]: the index of each entry that is not 0 (NaN is not), in row-major order."""
    rows = [p for p in np.ndindex(*a.shape) if a[p] != 0]
    return np.array(rows, dtype=np.int64).reshape(len(rows), a.ndim)


@given(a=_sparse_arrays())
# every run: entries off the diagonal in 2 and 3 axes (columns in the wrong order, or counted wrong, show)
@example(a=np.array([[0.0, 1.5, 0.0], [0.0, 0.0, -2.0]]))
@example(a=np.arange(24).reshape(2, 3, 4) % 5)
def test_nonzero_and_argwhere(a):
    expected = _np_nonzero_rows(a)
    with backend.count_host_reads() as reads:
        out = F.nonzero(minitx.tensor(a))
    assert reads.count == 1  # the count of nonzero entries, which the shape needs
    assert out.dtype == np.int64 and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(F.argwhere(minitx.tensor(a)).numpy(), np.argwhere(a))
    columns = F.nonzero(minitx.tensor(a), as_tuple=True)
    assert len(columns) == max(a.ndim, 1)  # a 0-d tensor counts as 1-d, as in PyTorch
    for k, column in enumerate(columns):
        np.testing.assert_array_equal(column.numpy(), expected[:, k] if a.ndim else np.zeros(len(expected)))
    if a.ndim:
        for ours, theirs in zip(columns, np.nonzero(a)):
            np.testing.assert_array_equal(ours.numpy(), theirs)
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(out.numpy(), torch.nonzero(torch.from_numpy(a)).numpy())
        np.testing.assert_array_equal(F.argwhere(minitx.tensor(a)).numpy(), torch.argwhere(torch.from_numpy(a)))
        for ours, theirs in zip(columns, torch.nonzero(torch.from_numpy(a), as_tuple=True)):
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_nonzero_checks_as_tuple():
    with pytest.raises(TypeError, match="nonzero: as_tuple must be a bool, got 1"):
        F.nonzero(minitx.tensor([1.0]), as_tuple=1)


@st.composite
def _masked_case(draw):
    """x (float64, or int64 without a gradient) and a boolean mask of shapes that broadcast
    either way, sides of 0 included."""
    x_shape, mask_shape = draw(mst.broadcastable_shapes(2, max_dims=3, min_side=0, max_side=4))
    integer = draw(st.booleans())
    x = minitx.tensor(draw(hnp.arrays(np.int64, x_shape, elements=st.integers(-5, 5)))) if integer \
        else draw(mst.tensors(x_shape))
    return x, minitx.tensor(draw(hnp.arrays(np.bool_, mask_shape)))


@given(case=_masked_case())
def test_masked_select(case):
    x, mask = case

    def reference(a, m):  # every entry of the broadcast pair whose mask is True, row-major
        a, m = np.broadcast_arrays(a, m)
        return np.array([a[p] for p in np.ndindex(*a.shape) if m[p]], dtype=a.dtype)

    with backend.count_host_reads() as reads:
        out = check_forward(lambda t, m: F.masked_select(t, m), reference, x, mask)
    assert reads.count == 1 and out.dtype == x.dtype
    if x.dtype == np.float64:
        assert check_gradients(lambda t: F.masked_select(t, mask), x)
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.from_numpy(mask.numpy())
        parity(lambda t: F.masked_select(t, mask), lambda t: torch.masked_select(t, theirs),
               leaf(x.numpy()) if x.dtype == np.float64 else x)


@st.composite
def _gradient_case(draw):
    """x, float64, of the broadcast shape, and a mask broadcasting to it whose own entries hold a
    False before a True (so the selected positions are not the first ones of x): a gradient laid
    at x's first entries, not at the selected ones, differs."""
    shape, mask_shape = draw(mst.broadcastable_shapes(2, min_dims=1, max_dims=3, max_side=4)
                             .filter(lambda shapes: np.prod(shapes[1]) >= 2))
    x = draw(mst.tensors(np.broadcast_shapes(shape, mask_shape)))
    mask = draw(hnp.arrays(np.bool_, mask_shape))
    mask.flat[0], mask.flat[draw(st.integers(1, mask.size - 1))] = False, True
    return x, mask


@given(case=_gradient_case())
def test_masked_select_sends_each_gradient_to_the_entry_it_selected(case):
    """dx = dy at the mask's True entries of x, in row-major order, 0 elsewhere: against NumPy's
    x[mask] = dy, finite differences and PyTorch."""
    x, mask = case
    out = F.masked_select(x, minitx.tensor(mask))
    dy = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(dy)
    expected = np.zeros(x.shape)
    expected[np.broadcast_to(mask, x.shape)] = dy
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    x.grad = None
    assert check_gradients(lambda t: F.masked_select(t, minitx.tensor(mask)), x)
    torch = torch_in_example()
    if torch is not None:
        x.grad = None
        parity(lambda t: F.masked_select(t, minitx.tensor(mask)),
               lambda t: torch.masked_select(t, torch.from_numpy(mask)), x)

def test_masked_select_errors_name_the_op():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="masked_select: mask must be a boolean tensor, got dtype int64"):
        F.masked_select(x, minitx.tensor([1, 0, 1]))
    with pytest.raises(ValueError, match=r"masked_select: mask of shape \(2,\) and x of shape \(3,\) do not "):
        F.masked_select(x, [True, False])


def test_a_gradient_that_does_not_reach_an_input_is_0_there_even_where_dy_is_inf_or_nan():
    """where, masked_fill and masked_scatter select dy (as PyTorch): dy * mask made an inf or NaN dy
    at a position an input does not reach NaN in that input's gradient."""
    keep = np.array([True, False, True])
    a = leaf(np.ones(3))
    F.where(keep, a, 0.0).backward(np.array([1.0, np.inf, 1.0]))
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0, 1.0])
    a.grad = None
    F.masked_fill(a, keep, 0.0).backward(np.array([np.inf, 1.0, np.nan]))
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 1.0, 0.0])
    x, source = leaf(np.zeros(4)), leaf([1.0, 2.0, 3.0])
    F.masked_scatter(x, np.array([False, True, False, True]), source).backward(np.array([np.inf, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(source.grad.numpy(), [1.0, 3.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [np.inf, 0.0, 2.0, 0.0])


# ---------------------------------------------------------------- unravel_index


@given(data=st.data())
def test_unravel_index_as_numpys_and_pytorchs(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), label="shape")
    n = int(np.prod(shape))
    flat = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=5), label="flat"), dtype=np.int64)
    ours = F.unravel_index(minitx.tensor(flat), shape)
    want = np.unravel_index(flat % n, shape)
    assert len(ours) == len(shape)
    for got, expected in zip(ours, want, strict=True):
        assert got.dtype == np.int64 and got.shape == flat.shape
        np.testing.assert_array_equal(got.numpy(), expected)
    torch = torch_in_example()
    if torch is not None:
        for got, theirs in zip(ours, torch.unravel_index(torch.from_numpy(flat), shape), strict=True):
            np.testing.assert_array_equal(got.numpy(), theirs.numpy())


def test_unravel_index_of_a_0d_index_and_its_errors():
    assert [int(c) for c in F.unravel_index(minitx.tensor(5), (2, 4))] == [1, 1]
    assert F.unravel_index(minitx.tensor([[7]]), 8)[0].shape == (1, 1)
    with pytest.raises(IndexError, match=r"unravel_index: index 8 is out of range for shape \(2, 4\) of 8 entries; "
                                         r"expected \[-8, 8\)"):
        F.unravel_index(minitx.tensor([1, 8]), (2, 4))  # PyTorch's wraps it around to (0, 0)
    with pytest.raises(TypeError, match="unravel_index: indices must be integers, got dtype float32"):
        F.unravel_index(minitx.tensor([1.0]), (2,))
    with pytest.raises(ValueError, match=r"unravel_index: shape must hold whole numbers >= 0, got \(2, -1\)"):
        F.unravel_index(minitx.tensor([1]), (2, -1))
