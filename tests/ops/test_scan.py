"""Std, Prod and the scans Cumsum, Cumprod, Logcumsumexp (minitx/ops/scan.py), and argmin.

Forward against independent Python/NumPy computations, float64 gradients (check_gradients) on
hypothesis-drawn shapes and axes (zeros injected into the products), PyTorch parity, and the
edges: zeros (one, several), ties and NaN for argmin, -inf prefixes and huge values for
logcumsumexp, empty axes.
"""
import itertools
import warnings
import math
import operator
import re
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

SHAPES = mst.shapes(max_dims=3, max_side=4)


def _rows(a, axes):
    """a with the reduced axes moved last and flattened: ([rows...], kept shape)."""
    axes = tuple(range(a.ndim)) if axes is None else tuple(np.atleast_1d(axes) % max(a.ndim, 1))
    kept = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, kept + list(axes))
    return moved.reshape(-1, int(np.prod([a.shape[k] for k in axes], dtype=int))), [a.shape[k] for k in kept], axes


def _per_row(fn):
    """A reduction reference from a Python function of one list of numbers."""
    def reference(a, axis, keepdims):
        rows, kept, axes = _rows(a, axis)
        out = np.array([fn(list(row)) for row in rows], dtype=np.float64).reshape(kept)
        return np.expand_dims(out, axes) if keepdims and a.ndim else out
    return reference


# op class -> (minitx reduction(x, axis, keepdims), reference(a, axis, keepdims), shape options)
REDUCTIONS = {
    "Std": (lambda x, axis, keepdims: F.std(x, axis, keepdims=keepdims), _per_row(statistics.pstdev), {}),
    "Std-ddof1": (lambda x, axis, keepdims: x.std(axis, ddof=1, keepdims=keepdims), _per_row(statistics.stdev),
                  {"min_side": 2, "min_dims": 1}),
    "Prod": (F.prod, _per_row(math.prod), {}),
}


@st.composite
def _reduction_case(draw, name):
    x = draw(mst.tensors(mst.shapes(max_dims=3, max_side=4, **REDUCTIONS[name][2])))
    return x, draw(mst.axes_for(x.ndim)), draw(st.booleans())


@pytest.mark.parametrize("name", list(REDUCTIONS))
@given(data=st.data())
def test_reduction_forward_and_gradients(name, data):
    fn, reference, _ = REDUCTIONS[name]
    x, axis, keepdims = data.draw(_reduction_case(name))
    check_forward(lambda t: fn(t, axis, keepdims), lambda a: reference(a, axis, keepdims), x, rtol=1e-12, atol=1e-13)
    if name.startswith("Std"):  # s = 0 (a constant slice) is a kink of sqrt
        with np.errstate(all="ignore"):
            spread = np.ptp(x.numpy(), axis=axis) if x.size else np.ones(1)
        if np.any(spread < 1e-3):
            return
    assert check_gradients(lambda t: fn(t, axis, keepdims), x)


# away from 0: PyTorch's prod gradient is y / x where x has no zero, wrong once y underflows.
# A constant slice has std exactly 0 and gradient 0 in minitx; PyTorch's rounded mean (0.2 three
# times averages to 0.2 + 2.8e-17) gives it a std of 2.8e-17 and a gradient of -1/3: not compared.
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4), away_from=(0.0,), margin=0.01), data=st.data())
def test_std_and_prod_match_pytorch(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    keepdims, ddof = data.draw(st.booleans()), data.draw(st.sampled_from([0, 1]))
    constant = x.size and np.any(np.ptp(x.numpy(), axis=axis) == 0)  # minitx: exactly 0, see Std
    if x.shape[axis] > ddof and not constant:
        parity(lambda t: F.std(t, axis, ddof, keepdims), lambda t: t.std(axis, correction=ddof, keepdim=keepdims),
               x)
    x.grad = None
    parity(lambda t: t.prod(axis, keepdims), lambda t: t.prod(axis, keepdim=keepdims), x)


@pytest.mark.parametrize("row, expected_grad", [
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
    ([2.0, 0.0, 4.0], [0.0, 8.0, 0.0]),   # one zero: only the zero gets a gradient
    ([0.0, 3.0, 0.0], [0.0, 0.0, 0.0]),   # two zeros: none
    ([0.0], [1.0]),
])
def test_prod_gradient_with_zeros(row, expected_grad):
    x = leaf(row)
    x.prod().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)
    x.grad = None
    parity(F.prod, lambda t: t.prod(), x)


def test_std_of_a_constant_slice_has_zero_gradient_and_too_few_elements_give_nan():
    x = leaf([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    y = x.std(axis=1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], [0.0, 0.0, 0.0])
    parity(lambda t: t.std(axis=1), lambda t: t.std(1, correction=0), leaf(x.numpy()))
    with pytest.warns(RuntimeWarning, match="std: 1 elements with ddof=1 leave no degrees of freedom"):
        assert np.isnan(F.std(leaf([5.0]), ddof=1).item())


def test_std_of_equal_infinities_is_nan_as_var_is():
    """A constant slice has spread 0, but not one of infinities: inf - inf is NaN (NumPy, PyTorch)."""
    x = leaf([[np.inf, np.inf], [-np.inf, -np.inf], [3.0, 3.0]])
    y = F.std(x, axis=1)
    np.testing.assert_array_equal(np.isnan(y.numpy()), [True, True, False])
    assert np.isnan(F.var(leaf([np.inf, np.inf])).item())
    y.sum().backward()
    assert np.isnan(x.grad.numpy()[:2]).all() and (x.grad.numpy()[2] == 0).all()


# ---------------------------------------------------------------- scans


def _scan_reference(step):
    """A scan along ``axis`` done by itertools.accumulate on each row."""
    def reference(a, axis):
        moved = np.moveaxis(a.reshape(1) if a.ndim == 0 else a, axis, -1)
        out = np.array([list(itertools.accumulate(row, step)) for row in moved.reshape(-1, moved.shape[-1])])
        return np.moveaxis(out.reshape(moved.shape), -1, axis).reshape(a.shape)
    return reference


def _logaddexp(a, b):
    top = max(a, b)
    return top if top == -math.inf else top + math.log(math.exp(a - top) + math.exp(b - top))


# op class -> (minitx scan(x, axis), reference(a, axis), torch method name)
SCANS = {
    "Cumsum": (F.cumsum, _scan_reference(operator.add), "cumsum"),
    "Cumprod": (lambda x, axis: x.cumprod(axis), _scan_reference(operator.mul), "cumprod"),
    "Logcumsumexp": (F.logcumsumexp, _scan_reference(_logaddexp), "logcumsumexp"),
}


@st.composite
def _scan_case(draw, name, min_dims=0):
    # away from 0 but for exact zeros: PyTorch's cumprod gradient divides by x when there is no
    # zero, which is wrong once a product of tiny numbers underflows (minitx's never divides)
    x = draw(mst.tensors(mst.shapes(min_dims=min_dims, max_dims=3, max_side=5), away_from=(0.0,), margin=0.01))
    if name == "Cumprod":  # zeros: the products' special case, exact without division
        zeros = draw(mst.bool_masks(x.shape))
        x.data[zeros & (np.random.default_rng(0).random(x.shape) < 0.5)] = 0.0
    return x, draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))


@pytest.mark.parametrize("name", list(SCANS))
@given(data=st.data())
def test_scan_forward_and_gradients(name, data):
    fn, reference, _ = SCANS[name]
    x, axis = data.draw(_scan_case(name))
    out = check_forward(lambda t: fn(t, axis), lambda a: reference(a, axis), x, rtol=1e-12, atol=1e-13)
    assert out.shape == x.shape
    assert check_gradients(lambda t: fn(t, axis), x)


@pytest.mark.parametrize("name", list(SCANS))
@given(data=st.data())
def test_scan_matches_pytorch(name, data):
    fn, _, torch_name = SCANS[name]
    x, axis = data.draw(_scan_case(name, min_dims=1))
    parity(lambda t: fn(t, axis), lambda t: getattr(t, torch_name)(axis), x)


def test_cumprod_gradient_beside_a_nan_is_the_true_derivative():
    """x = [nan, 0, .5]: the NaN reaches y_1 and y_2 only through the 0, so dx_0 = dy_0 + dy_1 * 0 +
    dy_2 * 0 * .5 = dy_0 (PyTorch: NaN); the 0 and the .5 multiply the NaN: NaN."""
    x = leaf([np.nan, 0.0, 0.5])
    F.cumprod(x, 0).backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, np.nan, np.nan])


def test_cumprod_gradient_with_zeros_matches_pytorch():
    """Worked example: x = [1, 0, 3, 0, 2], dy = [1, 2, 3, 4, 5] gives dx = [1, 11, 0, 0, 0]."""
    x = leaf([1.0, 0.0, 3.0, 0.0, 2.0])
    F.cumprod(x, 0).backward(np.arange(1.0, 6.0))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 11.0, 0.0, 0.0, 0.0])
    parity(lambda t: F.cumprod(t, 0), lambda t: t.cumprod(0), leaf([[1.0, 0.0, 3.0, 0.0, 2.0], [0.0, 0.0, 2, 1, 1]]))


def test_logcumsumexp_is_stable_and_masks_minus_infinity_prefixes():
    x = leaf([[-1000.0, 1000.0, 999.0, -np.inf], [-np.inf, -np.inf, 1.0, 2.0]])
    y = F.logcumsumexp(x, 1)
    expected = [[-1000.0, 1000.0, 1000.0 + math.log1p(math.exp(-1.0))] * 1 + [1000.0 + math.log1p(math.exp(-1.0))],
                [-np.inf, -np.inf, 1.0, 2.0 + math.log1p(math.exp(-1.0))]]
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-15)
    y.backward(np.ones((2, 4)))
    grad = x.grad.numpy()
    np.testing.assert_array_equal(grad[1, :2], [0.0, 0.0])  # PyTorch: NaN for the all -inf prefix
    torch = import_torch()
    t = torch.tensor(x.numpy(), requires_grad=True)
    t.logcumsumexp(1).backward(torch.ones(2, 4, dtype=torch.float64))
    np.testing.assert_allclose(grad[0], t.grad.numpy()[0], rtol=1e-12)
    np.testing.assert_allclose(grad[1, 2:], t.grad.numpy()[1, 2:], rtol=1e-12)


@pytest.mark.parametrize("finite, at, infinity", [
    ([1.0, 0.5], 1, np.inf),  # dx_0 = dy_0, not NaN
    ([-0.3, 2.0, 1.0, 0.5], 2, np.inf),
    ([1.0, 2.0], 0, np.inf),  # y is +inf throughout
    ([0.5, 1.0, 2.0], 1, -np.inf),
    ([0.5, 1.0, 2.0], 3, -np.inf),
])
def test_logcumsumexp_gradient_beside_an_infinity(finite, at, infinity):
    """From a +inf on y is +inf, and a later dy reaches a finite x_j only as exp(x_j - inf) = 0: the
    entries before it keep their gradient, the finite ones after it get 0, the +inf NaN, as PyTorch;
    a -inf entry gets 0. Against PyTorch, and finite differences with the infinity held fixed
    (over the outputs before a +inf: those after it are +inf)."""
    row = np.insert(np.array(finite), at, infinity)
    parity(lambda t: F.logcumsumexp(t, 0), lambda t: t.logcumsumexp(0), leaf(row))
    before = at if infinity > 0 else len(row)

    def with_the_infinity(t):
        return F.logcumsumexp(F.concatenate([t[:at], minitx.tensor([infinity]), t[at:]]), 0)[:before]

    if before:
        assert check_gradients(with_the_infinity, leaf(finite))


def test_scans_take_nan_and_empty_axes():
    x = leaf([1.0, np.nan, 2.0])
    for fn in (F.cumsum, F.cumprod, F.logcumsumexp):
        x.grad = None
        y = fn(x, 0)
        assert np.isnan(y.numpy()[1:]).all() and y.numpy()[0] == fn(leaf([1.0]), 0).item()
        empty = leaf(np.zeros((2, 0)))
        assert fn(empty, 1).shape == (2, 0)
    parity(lambda t: F.logcumsumexp(t, 0), lambda t: t.logcumsumexp(0), leaf([1.0, np.nan, 2.0]))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"])
@pytest.mark.parametrize("shape, axis", [((0,), 0), ((0, 3), 0), ((3, 0), 1), ((3, 0), 0), ((2, 0, 4), 1),
                                         ((0, 0), -1)])
def test_scans_along_and_beside_an_empty_axis_match_pytorch(name, shape, axis):
    """Empty values (and int64 indices), and an empty gradient, as PyTorch."""
    def values(out):
        return out[0] if isinstance(out, tuple) else out

    out = parity(lambda t: values(getattr(F, name)(t, axis)), lambda t: values(getattr(t, name)(axis)),
                 leaf(np.zeros(shape)))
    assert out.shape == shape
    if name in ("cummax", "cummin"):
        indices = getattr(F, name)(leaf(np.zeros(shape)), axis)[1]
        assert indices.shape == shape and indices.dtype == np.int64


def test_scan_axis_errors_name_the_op():
    x = minitx.tensor([[1.0, 2.0]])
    with pytest.raises(ValueError, match="cumsum: axis 2 is out of range for a tensor with 2 dimensions"):
        F.cumsum(x, 2)
    with pytest.raises(TypeError, match="logcumsumexp: axis must be an integer, got None"):
        F.logcumsumexp(x, None)


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4), min_value=-2, max_value=2), data=st.data())
def test_argmin_matches_numpy_and_pytorch_with_ties(x, data):
    a = np.round(x.numpy())  # rounding makes ties common
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)), label="axis")
    t = minitx.tensor(a)
    got = F.argmin(t, axis).numpy()
    expected = np.array([int(np.flatnonzero(row == row.min())[0]) for row in _rows(a, axis)[0]])
    np.testing.assert_array_equal(got.reshape(-1), expected)
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(t.argmin(axis).numpy(), torch.from_numpy(a).argmin(axis).numpy())


def test_argmin_points_at_a_nan():
    assert F.argmin(minitx.tensor([3.0, np.nan, -1.0])).item() == 1


def test_prod_and_std_over_an_empty_axis():
    """prod over nothing is 1 (gradient: empty); std over nothing is NaN, as in NumPy and PyTorch."""
    x = leaf(np.zeros((2, 0)))
    np.testing.assert_array_equal(parity(lambda t: F.prod(t, 1), lambda t: t.prod(1), x).numpy(), [1.0, 1.0])
    assert x.grad.shape == (2, 0)
    with pytest.warns(RuntimeWarning, match="std: 0 elements with ddof=0"):
        np.testing.assert_array_equal(F.std(x, 1).numpy(), [np.nan, np.nan])
    torch = import_torch()
    with pytest.warns(UserWarning, match="degrees of freedom"):  # PyTorch warns too
        assert torch.from_numpy(x.numpy()).std(1, correction=0).isnan().all()


@pytest.mark.parametrize("shape, axis", [((0, 3), 1), ((3, 0), 0), ((2, 0, 4), 0), ((2, 0, 4), -1), ((2, 3, 0), 1),
                                         ((0, 0), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_prod_where_a_kept_axis_is_empty_matches_pytorch(shape, axis, keepdims):
    """No slices to take products of: an empty result and an empty gradient, as PyTorch."""
    y = parity(lambda t: F.prod(t, axis, keepdims), lambda t: t.prod(axis, keepdim=keepdims), leaf(np.zeros(shape)))
    assert y.shape == np.prod(np.zeros(shape), axis=axis, keepdims=keepdims).shape


@pytest.mark.parametrize("ddof", [3, 4, 7])
def test_std_without_degrees_of_freedom_is_numpys(ddof):
    """n - ddof <= 0: the divisor is taken as 0, as numpy and var do (inf, or NaN for a constant slice)."""
    for values in ([1.0, 2.0, 4.0], [2.0, 2.0, 2.0]):
        with pytest.warns(RuntimeWarning, match="no degrees of freedom"), np.errstate(all="ignore"):
            got = F.std(minitx.tensor(values, dtype="float64"), ddof=ddof).item()
            expected = np.std(values, ddof=ddof)
        assert (math.isnan(got) and math.isnan(expected)) or got == expected


# ---------------------------------------------------------------- sort, argsort, topk


def _sorted_by_python(a, axis, descending):
    """Each row along ``axis`` sorted by Python's stable sorted(), NaN counted as the largest:
    (values, indices)."""
    moved = np.moveaxis(np.atleast_1d(a), axis, -1)
    values, indices = np.empty_like(moved), np.empty(moved.shape, np.int64)
    for p in np.ndindex(*moved.shape[:-1]):
        row = list(moved[p])
        key = (lambda i: (not math.isnan(row[i]), -row[i] if not math.isnan(row[i]) else 0)) if descending else \
            (lambda i: (math.isnan(row[i]), row[i] if not math.isnan(row[i]) else 0))
        order = sorted(range(len(row)), key=key)
        indices[p], values[p] = order, [row[i] for i in order]
    return np.moveaxis(values, -1, axis).reshape(a.shape), np.moveaxis(indices, -1, axis).reshape(a.shape)


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=5), distinct=True), data=st.data())
def test_sort_and_topk(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    descending = data.draw(st.booleans(), label="descending")
    values, indices = F.sort(x, axis, descending)
    want_values, want_indices = _sorted_by_python(x.numpy(), axis, descending)
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(indices.numpy(), want_indices)
    assert isinstance(values._ctx, minitx.ops.Sort)
    assert check_gradients(lambda t: F.sort(t, axis, descending)[0], x)
    k = data.draw(st.integers(0, x.shape[axis]), label="k")
    top, top_indices = F.topk(x, k, axis, largest=descending)
    taken = [slice(None)] * x.ndim
    taken[axis] = slice(0, k)
    np.testing.assert_array_equal(top.numpy(), want_values[tuple(taken)])
    np.testing.assert_array_equal(top_indices.numpy(), want_indices[tuple(taken)])
    assert check_gradients(lambda t: F.topk(t, k, axis, largest=descending)[0], x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: F.sort(t, axis, descending)[0], lambda t: torch.sort(t, stable=True, dim=axis, descending=descending)[0],
               leaf(x.numpy()))
        parity(lambda t: F.topk(t, k, axis, descending)[0], lambda t: torch.topk(t, k, axis, descending)[0],
               leaf(x.numpy()))
        np.testing.assert_array_equal(F.argsort(x, axis, descending).numpy(),
                                      torch.sort(torch.from_numpy(x.numpy()), stable=True, dim=axis, descending=descending)[1].numpy())


@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=3, max_side=4), distinct=True), data=st.data())
def test_topk_takes_its_k_along_the_axis_asked_not_the_last(x, data):
    """topk along an axis before the last, k below that axis's size, in every example (the drawn
    axis above is often the last one, where taking the k along the last axis cannot be told):
    against Python's sort, finite differences and PyTorch."""
    axis = data.draw(st.sampled_from([a for a in range(-x.ndim, x.ndim - 1) if a != -1]), label="axis")
    largest = data.draw(st.booleans(), label="largest")
    k = data.draw(st.integers(0, x.shape[axis] - 1), label="k")
    want_values, want_indices = _sorted_by_python(x.numpy(), axis, largest)
    taken = tuple(slice(0, k) if d == axis % x.ndim else slice(None) for d in range(x.ndim))
    top, top_indices = F.topk(x, k, axis, largest)
    np.testing.assert_array_equal(top.numpy(), want_values[taken])
    np.testing.assert_array_equal(top_indices.numpy(), want_indices[taken])
    assert check_gradients(lambda t: F.topk(t, k, axis, largest)[0], x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: F.topk(t, k, axis, largest)[0], lambda t: torch.topk(t, k, axis, largest)[0], leaf(x.numpy()))

def test_sort_keeps_equal_values_in_order_and_puts_nan_last_as_pytorch():
    x = leaf([1.0, np.nan, 3.0, 1.0, np.inf, -0.0, 0.0])
    values, indices = F.sort(x)
    np.testing.assert_array_equal(indices.numpy(), [5, 6, 0, 3, 2, 4, 1])
    values, indices = F.sort(x, descending=True)
    np.testing.assert_array_equal(indices.numpy(), [1, 4, 2, 0, 3, 5, 6])
    values.backward(np.arange(7.0))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 2.0, 4.0, 1.0, 5.0, 6.0])  # each dy to its source
    with pytest.raises(ValueError, match=r"topk: k must be a whole number in \[0, 7\] for an axis of 7, got 8"):
        F.topk(x, 8)


def test_sort_argsort_and_topk_take_pytorchs_stable_and_sorted():
    """torch.sort(x, stable=True), x.argsort(stable=...) and x.topk(k, sorted=...) as written for
    PyTorch: minitx's are stable and sorted whatever they say (PyTorch's order of equal values with
    stable=False, and of the k with sorted=False, is unspecified)."""
    a = np.array([2.0, 1.0, np.nan, 2.0, 1.0, -np.inf])
    x = minitx.tensor(a)
    want = F.sort(x, descending=True)
    for stable in (True, False):
        for got in (F.sort(x, descending=True, stable=stable), x.sort(dim=-1, descending=True, stable=stable)):
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        for got in (F.argsort(x, stable=stable), x.argsort(0, stable=stable)):
            np.testing.assert_array_equal(got.numpy(), F.argsort(x).numpy())
    for order in (True, False):
        for got in (F.topk(x, 3, sorted=order), x.topk(3, dim=0, largest=False, sorted=order)):
            assert got.values.shape == (3,)
    np.testing.assert_array_equal(F.topk(x, 3, 0, True, False).indices.numpy(), [2, 0, 3])
    torch = import_torch()
    if torch is not None:
        t = torch.from_numpy(a)
        np.testing.assert_array_equal(F.sort(x, stable=True).indices.numpy(), torch.sort(t, stable=True).indices.numpy())
        np.testing.assert_array_equal(x.argsort(descending=True, stable=True).numpy(),
                                      t.argsort(descending=True, stable=True).numpy())
        np.testing.assert_array_equal(x.topk(3, sorted=True).values.numpy(), t.topk(3, sorted=True).values.numpy())


def test_topk_of_a_0d_tensor_is_0d_as_pytorch():
    """A 0-d x is one value along axis 0 or -1: k = 1 gives it and index 0, both 0-d, as PyTorch;
    k = 0 is refused (a 0-d result cannot be empty; PyTorch returns the value)."""
    for axis, largest in itertools.product((0, -1), (True, False)):
        values, indices = F.topk(leaf(2.5), 1, axis, largest)
        assert values.shape == indices.shape == () and indices.dtype == np.int64
        assert values.item() == 2.5 and indices.item() == 0
        assert check_gradients(lambda t: F.topk(t, 1, axis, largest)[0], leaf(2.5))
        parity(lambda t: F.topk(t, 1, axis, largest)[0], lambda t: t.topk(1, axis, largest)[0], leaf(2.5))
    with pytest.raises(ValueError, match="topk: a 0-d input has one value .*, so k must be 1, got 0"):
        F.topk(leaf(2.5), 0)


def _running(a, axis, better):
    """(values, indices) of the running best along ``axis`` by a Python loop: the latest of equal
    bests, a NaN beating everything, as PyTorch's cummax/cummin."""
    moved = np.moveaxis(np.atleast_1d(a), axis, -1)
    values, indices = np.empty_like(moved), np.empty(moved.shape, np.int64)
    for p in np.ndindex(*moved.shape[:-1]):
        best, where = None, 0
        for k, v in enumerate(moved[p]):
            if best is None or math.isnan(v) or (not math.isnan(best) and better(v, best)):
                best, where = v, k
            values[p + (k,)], indices[p + (k,)] = best, where
    return np.moveaxis(values, -1, axis).reshape(a.shape), np.moveaxis(indices, -1, axis).reshape(a.shape)


@pytest.mark.parametrize("name, better", [("cummax", operator.ge), ("cummin", operator.le)])
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=5)), data=st.data())
def test_cummax_and_cummin(name, better, x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    with_ties = leaf(np.round(x.numpy()))  # equal values are common: the latest one is the index
    for t in (x, with_ties):
        values, indices = getattr(F, name)(t, axis)
        want_values, want_indices = _running(t.numpy(), axis, better)
        np.testing.assert_array_equal(values.numpy(), want_values)
        np.testing.assert_array_equal(indices.numpy(), want_indices)
    op = minitx.ops.Cummax if name == "cummax" else minitx.ops.Cummin
    assert type(getattr(F, name)(x, axis)[0]._ctx) is op
    distinct = leaf(np.argsort(np.argsort(x.numpy(), axis=None)).reshape(x.shape) * 0.5)  # no ties to cross
    assert check_gradients(lambda t: getattr(F, name)(t, axis)[0], distinct)
    torch = torch_in_example()
    if torch is not None:
        for t in (x, with_ties):
            parity(lambda u: getattr(F, name)(u, axis)[0], lambda u: getattr(torch, name)(u, axis)[0], leaf(t.numpy()))
            np.testing.assert_array_equal(getattr(F, name)(t, axis)[1].numpy(),
                                          getattr(torch, name)(torch.from_numpy(t.numpy()), axis)[1].numpy())


def test_cummax_counts_nan_as_the_largest_as_pytorch():
    values, indices = F.cummax(leaf([1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan]), 0)
    np.testing.assert_array_equal(indices.numpy(), [0, 1, 2, 2, 4, 4, 6])
    assert np.isnan(values.numpy()[4:]).all()


# ---------------------------------------------------------------- median, nanmedian


def _lower_median(a, axis, keepdims, skip_nan=False):
    """NumPy's quantile 0.5 taking the lower of the two middle entries (NaN where a slice has one;
    nanquantile: NaN only where all are)."""
    if a.ndim == 0:  # (NumPy takes no axis of a 0-d array)
        return a.copy()
    quantile = np.nanquantile if skip_nan else np.quantile
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice
        return quantile(a, 0.5, axis=axis, method="lower", keepdims=keepdims)


def _torch_median(torch, name, t, axis, keepdims):
    out = getattr(torch, name)(t) if axis is None else getattr(torch, name)(t, axis, keepdim=keepdims)
    if axis is None:
        return out.reshape((1,) * t.ndim) if keepdims else out
    return out


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=5), distinct=True), data=st.data())
def test_median_forward_gradients_and_pytorch(name, x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    fn = getattr(F, name)

    def values(t):
        out = fn(t, axis, keepdims)
        return out if axis is None else out.values

    check_forward(values, lambda a: _lower_median(a, axis, keepdims), x)
    assert isinstance(values(x)._ctx, minitx.ops.Median)
    assert check_gradients(values, x)
    torch = torch_in_example()
    if torch is not None:
        parity(values, lambda t: _torch_median(torch, name, t, axis, keepdims)
               if axis is None else _torch_median(torch, name, t, axis, keepdims).values, leaf(x.numpy()))
        if axis is not None:  # distinct values: one entry is the median, the same index
            np.testing.assert_array_equal(fn(x, axis, keepdims).indices.numpy(),
                                          _torch_median(torch, name, torch.from_numpy(x.numpy()), axis,
                                                        keepdims).indices.numpy())


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=5), min_value=-2, max_value=2), data=st.data())
def test_median_with_nan_and_ties_as_pytorch(name, x, data):
    """NaN: median NaN at the slice's first NaN; nanmedian the others' (NaN where all are NaN).
    Ties: the value is NumPy's; the index holds it and alone gets the gradient."""
    a = np.round(x.numpy())
    a[data.draw(mst.bool_masks(a.shape), label="nan")] = np.nan
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    t = leaf(a)
    values, indices = getattr(F, name)(t, axis)
    np.testing.assert_array_equal(values.numpy(), _lower_median(a, axis, False, skip_nan=name == "nanmedian"))
    picked = np.take_along_axis(a, np.expand_dims(indices.numpy(), axis), axis).squeeze(axis)
    np.testing.assert_array_equal(picked, values.numpy())
    values.backward(np.ones(values.shape))
    expected = np.zeros(a.shape)
    np.put_along_axis(expected, np.expand_dims(indices.numpy(), axis), 1.0, axis)
    np.testing.assert_array_equal(t.grad.numpy(), expected)
    torch = torch_in_example()
    if torch is not None:  # where the slice holds a NaN and no tie decides, the same index too
        theirs = getattr(torch, name)(torch.from_numpy(a), axis)
        np.testing.assert_array_equal(values.numpy(), theirs.values.numpy())
        if name == "median":
            has_nan = np.isnan(a).any(axis)
            np.testing.assert_array_equal(indices.numpy()[has_nan], theirs.indices.numpy()[has_nan])


def test_median_is_the_lower_middle_and_points_at_the_first_nan():
    x = leaf([[3.0, 1.0, 2.0, 4.0], [1.0, np.nan, 0.0, np.nan]])
    values, indices = F.median(x, 1)
    np.testing.assert_array_equal(values.numpy(), [2.0, np.nan])
    np.testing.assert_array_equal(indices.numpy(), [2, 1])
    values, indices = F.nanmedian(x, dim=1, keepdim=True)  # PyTorch's keywords
    np.testing.assert_array_equal(values.numpy(), [[2.0], [0.0]])
    np.testing.assert_array_equal(indices.numpy(), [[2], [2]])
    assert F.nanmedian(leaf([np.nan, np.nan]), 0).indices.item() == 0
    y = F.median(x)  # no axis: one 0-d value, the NaN (PyTorch's)
    assert y.shape == () and np.isnan(y.item())


def test_median_of_nothing_and_of_a_0d_tensor():
    """No entries: NaN without an axis (as PyTorch), an error naming the op along an empty axis;
    an empty result beside one; a 0-d tensor is its own median, at index 0."""
    empty = leaf(np.zeros((0,)))
    y = F.median(empty)
    assert y.shape == () and np.isnan(y.item())
    y.backward()
    assert empty.grad.shape == (0,)
    with pytest.raises(ValueError, match="median: axis 1 of the input of shape \\(2, 0\\) has length 0"):
        F.median(leaf(np.zeros((2, 0))), 1)
    with pytest.raises(ValueError, match="nanmedian: axis 2 is out of range"):
        F.nanmedian(leaf(np.zeros((2, 3))), 2)
    values, indices = F.median(leaf(np.zeros((0, 3))), 1)
    assert values.shape == indices.shape == (0,)
    values, indices = F.median(leaf(2.5), 0)
    assert values.shape == indices.shape == () and values.item() == 2.5 and indices.item() == 0
    assert check_gradients(lambda t: F.median(t, -1).values, leaf(2.5))


# ---------------------------------------------------------------- diff


@st.composite
def _diff_case(draw):
    """x (at least one axis), an axis, n (past the axis' length too) and prepend/append: None, a
    number, or a tensor of x's shape but along the axis (0 to 2 entries there)."""
    x = draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    n = draw(st.integers(0, x.shape[axis] + 2), label="n")

    def beside():
        shape = st.integers(0, 2).map(lambda k: x.shape[:axis % x.ndim] + (k,) + x.shape[axis % x.ndim + 1:])
        return st.one_of(st.none(), st.floats(-3, 3), shape.flatmap(mst.tensors))

    return x, axis, n, draw(beside(), label="prepend"), draw(beside(), label="append")


def _beside(drawn, parts, full=None):
    """prepend and append from the drawn ones: the numbers as they are (or as ``full(number)``, a
    tensor for torch.diff, which takes no numbers), the tensors from ``parts``, in order."""
    given = iter(parts)
    return [next(given) if isinstance(v, minitx.Tensor) else v if v is None or full is None else full(v)
            for v in drawn]


@given(data=st.data())
def test_diff_forward_gradients_and_pytorch(data):
    x, axis, n, prepend, append = data.draw(_diff_case())
    drawn = (prepend, append)
    tensors = [t for t in drawn if isinstance(t, minitx.Tensor)]

    def fn(t, *parts):
        return F.diff(t, n, axis, *_beside(drawn, parts))

    def reference(a, *parts):
        p, q = _beside(drawn, parts)
        return np.diff(a, n, axis, **{k: v for k, v in (("prepend", p), ("append", q)) if v is not None})

    y = check_forward(fn, reference, x, *tensors)
    assert not n or isinstance(y._ctx, minitx.ops.Diff)
    assert check_gradients(fn, x, *tensors)
    torch = torch_in_example()
    if torch is not None:
        def theirs(t, *parts):
            one = t.shape[:axis % t.ndim] + (1,) + t.shape[axis % t.ndim + 1:]
            p, q = _beside(drawn, parts, full=lambda v: torch.full(one, v, dtype=torch.float64))
            return torch.diff(t, n, axis, p, q)

        parity(fn, theirs, leaf(x.numpy()), *[leaf(t.numpy()) for t in tensors])


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8"])
def test_diff_of_integers_and_booleans_as_numpy_and_pytorch(dtype):
    """Booleans give !=, PyTorch's logical_xor; uint8 wraps, as both."""
    a = np.array([[1, 5, 2, 2, 0], [3, 0, 0, 1, 1]]).astype(dtype)
    torch = import_torch()
    for n in (1, 2):
        got = F.diff(minitx.tensor(a), n)
        np.testing.assert_array_equal(got.numpy(), np.diff(a, n))
        np.testing.assert_array_equal(got.numpy(), torch.diff(torch.from_numpy(a), n).numpy())
        assert got.dtype == a.dtype


def test_diff_past_the_axis_length_and_its_errors():
    x = leaf(np.arange(6.0).reshape(2, 3))
    y = parity(lambda t: F.diff(t, 5, 1), lambda t: t.diff(5, 1), x)  # nothing left: (2, 0), zero gradient
    assert y.shape == (2, 0) and np.array_equal(x.grad.numpy(), np.zeros((2, 3)))
    for shape, axis in (((2, 0), 1), ((0, 3), 1), ((2, 0), 0)):  # empty axes, beside or along the one differenced
        assert parity(lambda t: F.diff(t, 1, axis), lambda t: t.diff(1, axis), leaf(np.zeros(shape))).shape == \
            np.diff(np.zeros(shape), 1, axis).shape
    unchanged = parity(lambda t: F.diff(t, 0, prepend=leaf([[9.0], [9.0]])), lambda t: t.diff(0, -1), leaf(x.numpy()))
    assert unchanged.numpy().tolist() == x.numpy().tolist()  # n = 0: x, nothing joined (as PyTorch and NumPy)
    assert not np.shares_memory(F.diff(x, 0).data, x.data)  # a copy, as PyTorch's
    assert x.diff(dim=0, prepend=-1.0).numpy().tolist() == [[1.0, 2.0, 3.0], [3.0, 3.0, 3.0]]
    with pytest.raises(ValueError, match="diff: expected a tensor with at least one axis, got a 0-d tensor"):
        F.diff(leaf(1.0))
    with pytest.raises(ValueError, match="diff: n must be a whole number >= 0, got -1"):
        F.diff(x, -1)
    with pytest.raises(ValueError, match=r"diff: prepend of shape \(3, 1\) does not fit the input of shape \(2, 3\): "
                                         r"expected a number, or a tensor of the input's shape but along axis 1"):
        F.diff(x, prepend=leaf(np.zeros((3, 1))))
    with pytest.raises(ValueError, match="diff: axis 2 is out of range"):
        F.diff(x, axis=2)


# ---------------------------------------------------------------- searchsorted


@st.composite
def _searchsorted_case(draw):
    """A sequence sorted along its last axis (1-d, or one per row of values' leading axes; ties
    common, infinities in it), values (NaN and infinities among them) and a side."""
    batch = draw(st.sampled_from([None, (), (2,), (2, 3)]), label="batch")
    n, m = draw(st.integers(0, 5), label="n"), draw(st.integers(0, 4), label="m")
    seq_shape = (n,) if batch is None else batch + (n,)
    values_shape = draw(mst.shapes(max_dims=2, max_side=3)) if batch is None else batch + (m,)
    edges = st.sampled_from([np.inf, -np.inf])
    raw = draw(mst.float_arrays(seq_shape, min_value=-2, max_value=2))
    raw[np.random.default_rng(draw(st.integers(0, 9))).random(raw.shape) < 0.2] = draw(edges)
    sequence = np.sort(np.round(raw * 2) / 2, axis=-1)
    values = np.asarray(np.round(draw(mst.float_arrays(values_shape, min_value=-3, max_value=3)) * 2) / 2)
    values[np.random.default_rng(draw(st.integers(0, 9))).random(values.shape) < 0.2] = draw(
        st.sampled_from([np.inf, -np.inf, np.nan]))
    return sequence, values, draw(st.sampled_from(["left", "right"]), label="side")


def _numpy_searchsorted(sequence, values, side):
    """np.searchsorted, one row at a time for an n-d sequence."""
    if sequence.ndim == 1:
        return np.searchsorted(sequence, values, side)
    found = np.empty(values.shape, np.int64)
    for row in np.ndindex(*values.shape[:-1]):
        found[row] = np.searchsorted(sequence[row], values[row], side)
    return found


@given(case=_searchsorted_case())
def test_searchsorted_as_numpy_and_pytorch(case):
    sequence, values, side = case
    got = F.searchsorted(minitx.tensor(sequence), minitx.tensor(values), side=side)
    assert got.dtype == np.int64 and got.shape == values.shape
    np.testing.assert_array_equal(got.numpy(), _numpy_searchsorted(sequence, values, side))
    right = F.searchsorted(minitx.tensor(sequence), minitx.tensor(values), right=side == "right", out_int32=True)
    assert right.dtype == np.int32 and np.array_equal(right.numpy(), got.numpy())
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.searchsorted(torch.from_numpy(sequence), torch.from_numpy(values), side=side)
        np.testing.assert_array_equal(got.numpy(), theirs.numpy())


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=2, max_side=5), min_value=-2, max_value=2), data=st.data())
def test_searchsorted_with_a_sorter_as_pytorch(x, data):
    """sorter: the argsort of an unsorted sequence, which is searched as if sorted by it."""
    a = np.round(x.numpy() * 2) / 2
    values = np.round(data.draw(mst.float_arrays(a.shape[:-1] + (3,), min_value=-3, max_value=3)) * 2) / 2
    sorter = np.argsort(a, axis=-1, kind="stable")
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    got = F.searchsorted(minitx.tensor(a), minitx.tensor(values), side=side, sorter=minitx.tensor(sorter))
    expected = F.searchsorted(minitx.tensor(np.take_along_axis(a, sorter, -1)), minitx.tensor(values), side=side)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.searchsorted(torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(values), side=side,
                                    sorter=torch.from_numpy(sorter))
        np.testing.assert_array_equal(got.numpy(), theirs.numpy())


def test_searchsorted_of_a_number_a_nan_and_its_errors():
    sequence = minitx.tensor([1.0, 2.0, 2.0, np.nan])
    assert F.searchsorted(sequence, 2.0).shape == () and F.searchsorted(sequence, 2.0).item() == 1
    assert minitx.searchsorted(sequence, 2.0, right=True).item() == 3
    # NaN is the largest value, as sort puts it (NumPy's rule; PyTorch's binary search has none here)
    np.testing.assert_array_equal(F.searchsorted(sequence, minitx.tensor([np.nan, np.inf, 5.0])).numpy(), [3, 3, 3])
    np.testing.assert_array_equal(F.searchsorted(sequence, minitx.tensor([np.nan]), side="right").numpy(), [4])
    assert F.searchsorted(minitx.tensor(np.zeros(0)), minitx.tensor([1.0])).numpy().tolist() == [0]
    no_entries = F.searchsorted(minitx.tensor(np.zeros((2, 0))), minitx.tensor(np.ones((2, 3))))
    assert no_entries.numpy().tolist() == [[0] * 3] * 2
    with pytest.raises(ValueError, match="searchsorted: side='left' and right=True ask for opposite sides"):
        F.searchsorted(sequence, 2.0, side="left", right=True)
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right', got 'up'"):
        F.searchsorted(sequence, 2.0, side="up")
    with pytest.raises(ValueError, match=r"searchsorted: expected a 1-d sorted_sequence, or one whose first axes are "
                                         r"values' \(one sequence per row\), got shapes \(2, 3\) and \(3, 3\)"):
        F.searchsorted(minitx.tensor(np.zeros((2, 3))), minitx.tensor(np.zeros((3, 3))))
    with pytest.raises(ValueError, match=r"searchsorted: expected a 1-d sorted_sequence.*got shapes \(\) and \(1,\)"):
        F.searchsorted(minitx.tensor(1.0), minitx.tensor([1.0]))
    with pytest.raises(ValueError, match=r"searchsorted: sorter must have sorted_sequence's shape \(4,\), got \(3,\)"):
        F.searchsorted(sequence, 2.0, sorter=minitx.tensor([0, 1, 2]))


def test_searchsorted_checks_its_sorter_as_pytorch():
    """A sorter holds positions in [0, n): a negative one counted from the end and gave a place
    without a word (PyTorch: "sorter index out of range"), one past the end NumPy's IndexError
    without the op's name."""
    sequence, values = minitx.tensor([3.0, 1.0, 2.0]), minitx.tensor([2.0, 2.5])
    assert F.searchsorted(sequence, values, sorter=minitx.tensor([1, 2, 0])).numpy().tolist() == [1, 2]
    for bad, value in (([1, 2, -3], -3), ([1, 2, 3], 3)):
        with pytest.raises(IndexError, match=rf"^searchsorted: sorter {value} is out of range \[0, 3\)"):
            F.searchsorted(sequence, values, sorter=minitx.tensor(bad))
    with pytest.raises(TypeError, match="^searchsorted: sorter must be an integer tensor, got dtype float32"):
        F.searchsorted(sequence, values, sorter=minitx.tensor([1.0, 2.0, 0.0]))


def test_topk_and_argsort_name_themselves_for_a_bad_axis():
    x = minitx.tensor([[1.0, 2.0], [3.0, 4.0]])
    for op, call in (("topk", lambda: F.topk(x, 1, 2)), ("argsort", lambda: F.argsort(x, 2)),
                     ("topk", lambda: x.topk(1, dim=-3)), ("argsort", lambda: x.argsort(dim=2))):
        with pytest.raises(ValueError, match=rf"^{op}: axis -?[23] is out of range for a tensor with 2 dimensions"):
            call()
    with pytest.raises(TypeError, match="^argsort: axis must be an integer, got None"):
        F.argsort(x, None)


def test_searchsorted_of_bfloat16_counts_nan_as_the_largest_as_other_floats():
    """ml_dtypes' bfloat16 comparisons put NaN nowhere, and NumPy's search, going on from one value's
    place to the next's, misplaced the values after a NaN too ([nan, 3, 0.5] gave [0, 1, 1]): bfloat16 is
    searched as float32, which holds each value exactly, as PyTorch's search finds them."""
    def bf16(values):
        return minitx.tensor(np.array(values, np.float32)).bfloat16()
    sequence, values = [0.0, 1.0, 2.0, 3.0], [np.nan, 3.0, 0.5, np.inf, -np.inf]
    for side, want in (("left", [4, 3, 1, 4, 0]), ("right", [4, 4, 1, 4, 0])):
        np.testing.assert_array_equal(F.searchsorted(bf16(sequence), bf16(values), side=side).numpy(), want)
        np.testing.assert_array_equal(F.searchsorted(minitx.tensor(sequence), minitx.tensor(values), side=side).numpy(),
                                      want)
    # a NaN in a bfloat16 sequence is last, where sort puts it, as in the other float dtypes
    np.testing.assert_array_equal(F.searchsorted(bf16([0.0, 1.0, np.nan]), bf16([np.nan, 2.0, 0.5])).numpy(), [2, 2, 1])
    torch = import_torch()
    if torch is not None:
        theirs = torch.searchsorted(torch.tensor(sequence, dtype=torch.bfloat16), torch.tensor(values, dtype=torch.bfloat16))
        np.testing.assert_array_equal(theirs.numpy(), [4, 3, 1, 4, 0])


# ---------------------------------------------------------------- bucketize


@st.composite
def _bucketize_case(draw):
    """Ascending boundaries on a 0.5 grid (ties common, infinities among them, none at all too) and x
    of any shape on the same grid (NaN and infinities among them), float64 or int64."""
    raw = np.round(draw(mst.float_arrays((draw(st.integers(0, 6), label="n"),), min_value=-2, max_value=2)) * 2) / 2
    raw[np.random.default_rng(draw(st.integers(0, 9))).random(raw.shape) < 0.2] = draw(
        st.sampled_from([np.inf, -np.inf]))
    a = np.round(draw(mst.float_arrays(draw(mst.shapes(max_dims=3, max_side=4)), min_value=-3, max_value=3)) * 2) / 2
    a = np.asarray(a)
    a[np.random.default_rng(draw(st.integers(0, 9))).random(a.shape) < 0.2] = draw(
        st.sampled_from([np.inf, -np.inf, np.nan]))
    if draw(st.booleans(), label="integers"):
        raw, a = np.round(np.clip(raw, -3, 3)).astype(np.int64), np.round(np.nan_to_num(a, posinf=3, neginf=-3))
        a = np.asarray(a, dtype=np.int64)
    return np.sort(raw), a


@given(case=_bucketize_case(), right=st.booleans())
def test_bucketize_as_numpy_and_pytorch(case, right):
    """The bucket i of v: b[i-1] < v <= b[i] (right: b[i-1] <= v < b[i]), counted directly: the
    boundaries below v (with right, at or below it); NaN above every boundary."""
    boundaries, a = case
    got = F.bucketize(minitx.tensor(a), minitx.tensor(boundaries), right=right)
    below = (boundaries <= a[..., None]) if right else (boundaries < a[..., None])
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    want = np.where(nan, boundaries.size, below.sum(axis=-1))
    assert got.dtype == np.int64 and got.shape == a.shape
    np.testing.assert_array_equal(got.numpy(), want)
    small = F.bucketize(minitx.tensor(a), minitx.tensor(boundaries), right, out_int32=True)
    assert small.dtype == np.int32 and np.array_equal(small.numpy(), want)
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.bucketize(torch.from_numpy(a), torch.from_numpy(boundaries), right=right)
        np.testing.assert_array_equal(got.numpy(), theirs.numpy())


def test_bucketize_of_a_number_booleans_and_its_errors():
    """right=False puts a value equal to a boundary in the bucket that boundary closes, as PyTorch
    (searchsorted's side="left"; NumPy's digitize names the two the other way round)."""
    boundaries = minitx.tensor([1.0, 2.0, 2.0, 3.0])
    assert F.bucketize(2.0, boundaries).shape == () and F.bucketize(2.0, boundaries).item() == 1
    assert minitx.bucketize(2.0, boundaries, right=True).item() == 3
    assert np.digitize(2.0, boundaries.numpy(), right=True) == 1  # (NumPy's right means PyTorch's right=False)
    np.testing.assert_array_equal(F.bucketize(minitx.tensor([True, False]), minitx.tensor([0, 1])).numpy(), [1, 0])
    np.testing.assert_array_equal(F.bucketize(minitx.tensor([1.5, 2.5]), minitx.tensor([1, 2, 3])).numpy(), [1, 2])
    assert F.bucketize(minitx.tensor([[5.0]]), minitx.tensor(np.zeros(0))).numpy().tolist() == [[0]]
    x = leaf([0.5, 2.5])
    assert not F.bucketize(x, boundaries).requires_grad
    for bad in (np.zeros((2, 2)), np.array(1.0)):
        with pytest.raises(ValueError, match=rf"^bucketize: boundaries must be a 1-d tensor, got shape "
                                             rf"{re.escape(str(bad.shape))}"):
            F.bucketize(x, minitx.tensor(bad))


# ---------------------------------------------------------------- kthvalue


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=5), distinct=True), data=st.data())
def test_kthvalue_forward_gradients_and_pytorch(x, data):
    axis = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1), label="axis")
    n = x.shape[axis] if x.ndim else 1
    k, keepdims = data.draw(st.integers(1, n), label="k"), data.draw(st.booleans(), label="keepdims")
    a = np.atleast_1d(x.numpy())
    along = axis % a.ndim
    values, indices = F.kthvalue(x, k, axis, keepdims)
    assert values.shape == indices.shape == np.sum(x.numpy(), axis if x.ndim else None, keepdims=keepdims).shape
    want = np.take(np.partition(a, k - 1, axis=along), [k - 1], axis=along)  # (the axis kept, of length 1)
    np.testing.assert_array_equal(values.numpy(), want.reshape(values.shape))
    at = np.take(np.argsort(a, axis=along), [k - 1], axis=along)  # (distinct values: one order)
    np.testing.assert_array_equal(indices.numpy(), at.reshape(values.shape))
    assert isinstance(values._ctx, minitx.ops.Kthvalue) and indices.dtype == np.int64
    assert check_gradients(lambda t: F.kthvalue(t, k, axis, keepdims).values, x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: t.kthvalue(k, axis, keepdims)[0], lambda t: t.kthvalue(k, axis, keepdims)[0], leaf(x.numpy()))
        theirs = torch.from_numpy(x.numpy()).kthvalue(k, axis, keepdims)
        np.testing.assert_array_equal(indices.numpy(), theirs.indices.numpy())


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=5), min_value=-2, max_value=2), data=st.data())
def test_kthvalue_with_nan_and_ties(x, data):
    """Values as NumPy's sort orders them (NaN last); among equal values the index is the one a
    stable sort puts at rank k - 1 (PyTorch's pick varies), and it alone gets the gradient."""
    a = np.round(x.numpy())
    a[data.draw(mst.bool_masks(a.shape), label="nan")] = np.nan
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    k = data.draw(st.integers(1, a.shape[axis]), label="k")
    t = leaf(a)
    values, indices = F.kthvalue(t, k, axis)
    np.testing.assert_array_equal(values.numpy(), np.take(np.sort(a, axis=axis), k - 1, axis=axis))
    stable = np.take(np.argsort(a, axis=axis, kind="stable"), k - 1, axis=axis)
    np.testing.assert_array_equal(indices.numpy(), stable)
    values.backward(np.ones(values.shape))
    expected = np.zeros(a.shape)
    np.put_along_axis(expected, np.expand_dims(stable, axis), 1.0, axis)
    np.testing.assert_array_equal(t.grad.numpy(), expected)
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(values.numpy(), torch.from_numpy(a).kthvalue(k, axis).values.numpy())


def test_kthvalue_of_a_0d_tensor_of_empty_slices_and_its_errors():
    values, indices = F.kthvalue(leaf(2.5), 1, 0, keepdims=True)
    assert values.shape == indices.shape == () and values.item() == 2.5 and indices.item() == 0
    values, indices = minitx.kthvalue(leaf(np.zeros((0, 3))), 2, dim=1)  # no slices: empty, as PyTorch
    assert values.shape == indices.shape == (0,)
    with pytest.raises(ValueError, match=r"kthvalue: axis 1 of the input of shape \(2, 0\) has length 0; an empty "
                                         r"slice has no k-th smallest value"):
        F.kthvalue(leaf(np.zeros((2, 0))), 1, 1)
    with pytest.raises(ValueError, match=r"kthvalue: k must be a whole number in \[1, 3\] for axis -1 of the input "
                                         r"of shape \(2, 3\), got 4"):
        F.kthvalue(leaf(np.zeros((2, 3))), 4)
    with pytest.raises(ValueError, match=r"kthvalue: k must be a whole number in \[1, 3\] .*got 0"):
        leaf(np.zeros((2, 3))).kthvalue(0)
    with pytest.raises(ValueError, match="kthvalue: k must be a whole number, got 1.5"):
        F.kthvalue(leaf(np.zeros(3)), 1.5)
    with pytest.raises(TypeError, match="kthvalue: axis must be an integer, got None"):
        F.kthvalue(leaf(np.zeros(3)), 1, None)
    with pytest.raises(ValueError, match="kthvalue: axis 2 is out of range"):
        F.kthvalue(leaf(np.zeros(3)), 1, 2)
    ints = F.kthvalue(minitx.tensor([[5, 1, 3]]), 2, 1)  # integers keep their dtype, as PyTorch's
    assert ints.values.dtype == np.int64 and ints.values.numpy().tolist() == [3] and ints.indices.item() == 2


# ---------------------------------------------------------------- mode


def _numpy_mode(a, axis):
    """Each slice's most frequent value (the smallest of those tied; NaNs one value, the largest,
    as np.unique counts them) and its last occurrence, slice by slice (the axis dropped)."""
    rows = np.moveaxis(np.atleast_1d(a), axis, -1)
    values, indices = np.empty(rows.shape[:-1], a.dtype), np.empty(rows.shape[:-1], np.int64)
    for at in np.ndindex(rows.shape[:-1]):
        row = rows[at]
        kinds, counts = np.unique(row, return_counts=True)  # (ascending, NaNs together at the end)
        best = kinds[np.argmax(counts)]
        same = np.isnan(row) if best != best else row == best
        indices[at] = np.flatnonzero(same)[-1]
        values[at] = row[indices[at]]
    return values, indices


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=6), min_value=-2, max_value=2), data=st.data())
def test_mode_as_numpy_with_ties_and_nan_and_its_gradient(x, data):
    """Values on a 0.5 grid, so most slices hold repeats; NaN in some. The gradient goes to the
    returned index alone. PyTorch agrees where a slice holds no NaN (its sort compares with <,
    which NaN defeats); its index among repeats is the last one for slices of up to 16 entries, as
    minitx's (further on its sort scatters equal values: only the values are compared there)."""
    a = np.asarray(np.round(x.numpy() * 2) / 2)
    if data.draw(st.booleans(), label="with nan"):
        a[data.draw(mst.bool_masks(a.shape), label="nan")] = np.nan
    axis = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    t = leaf(a)
    values, indices = F.mode(t, axis, keepdims)
    assert values.shape == indices.shape == np.sum(a, axis if a.ndim else None, keepdims=keepdims).shape
    want_values, want_indices = _numpy_mode(a, axis)
    np.testing.assert_array_equal(values.numpy().reshape(want_values.shape), want_values)
    np.testing.assert_array_equal(indices.numpy().reshape(want_indices.shape), want_indices)
    assert isinstance(values._ctx, minitx.ops.Mode) and indices.dtype == np.int64
    values.backward(np.ones(values.shape))
    expected = np.zeros(np.atleast_1d(a).shape)
    np.put_along_axis(expected, np.expand_dims(want_indices, axis), 1.0, axis)
    np.testing.assert_array_equal(t.grad.numpy(), expected.reshape(a.shape))
    torch = torch_in_example()
    if torch is not None and not np.isnan(a).any():
        theirs = torch.from_numpy(a).mode(axis, keepdims)
        np.testing.assert_array_equal(values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(indices.numpy(), theirs.indices.numpy())


@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=5), distinct=True), data=st.data())
def test_mode_gradients_of_distinct_values(x, data):
    """All counts 1: the mode is each slice's smallest value, which small steps do not change."""
    axis = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    assert check_gradients(lambda t: F.mode(t, axis, keepdims).values, x)
    assert check_gradients(lambda t: t.mode(dim=axis, keepdim=keepdims)[0], x)


def test_mode_of_long_slices_gives_pytorchs_values_and_the_last_index():
    """Past 16 entries PyTorch's sort (an introsort) scatters equal values, and which of them its
    index names varies: minitx's is the last occurrence all the same."""
    a = np.random.default_rng(0).integers(0, 3, (50, 40))
    values, indices = F.mode(minitx.tensor(a), 1)
    theirs = import_torch().from_numpy(a).mode(1)
    np.testing.assert_array_equal(values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(indices.numpy(), [np.flatnonzero(row == v)[-1] for row, v in zip(a, values.numpy())])


def test_mode_with_nan_departs_from_pytorch_where_its_sort_cannot_order_them():
    """minitx counts NaNs as one value, the largest. PyTorch's CPU sort compares with <, and a NaN
    stops it: [nan, 1, 2] stays in that order and its first run, one NaN, wins (NaN at 0); [1, nan,
    1] keeps the 1s apart (1, at 0)."""
    for a, want in (([np.nan, 1.0, 2.0], (1.0, 1)), ([1.0, np.nan, 1.0], (1.0, 2)),
                    ([np.nan, 1.0, np.nan, 2.0], (np.nan, 2)), ([np.nan, np.nan], (np.nan, 1))):
        values, indices = F.mode(minitx.tensor(a))
        np.testing.assert_array_equal([values.item(), indices.item()], want)


def test_mode_of_a_0d_tensor_of_empty_slices_integers_and_its_errors():
    values, indices = F.mode(leaf(2.5), 0, keepdims=True)
    assert values.shape == indices.shape == () and values.item() == 2.5 and indices.item() == 0
    values, indices = minitx.mode(leaf(np.zeros((0, 3))), dim=1)  # no slices: empty, as PyTorch
    assert values.shape == indices.shape == (0,)
    ints = minitx.tensor([[1, 2, 2], [3, 3, 1]]).mode(0, keepdim=True)  # integers keep their dtype, as PyTorch's
    assert ints.values.dtype == np.int64 and ints.values.numpy().tolist() == [[1, 2, 1]]
    assert ints.indices.numpy().tolist() == [[0, 0, 1]]
    flags = F.mode(minitx.tensor([True, False, True, False]))
    assert flags.values.dtype == np.bool_ and not flags.values.item() and flags.indices.item() == 3
    signed = F.mode(minitx.tensor([0.0, -0.0, 1.0]))  # 0 and -0 are one value; the last one is returned
    assert signed.indices.item() == 1 and np.signbit(signed.values.item())
    with pytest.raises(ValueError, match=r"^mode: axis 1 of the input of shape \(2, 0\) has length 0; an empty "
                                         r"slice has no mode"):
        F.mode(leaf(np.zeros((2, 0))), 1)
    with pytest.raises(TypeError, match="^mode: axis must be an integer, got None"):
        F.mode(leaf(np.zeros(3)), None)
    with pytest.raises(ValueError, match="^mode: axis 2 is out of range"):
        leaf(np.zeros(3)).mode(2)


# ---------------------------------------------------------------- quantile, nanquantile

INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]
# one number, 0 and 1 among them, or a 1-d list (empty too)
LEVELS = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5]), st.lists(st.floats(0, 1), max_size=3))


def _numpy_quantile(a, q, axis, keepdims, interpolation, skip_nan=False):
    """NumPy's quantile (nanquantile) with method=; a 0-d a as its one entry; all-NaN slices quietly."""
    if a.ndim == 0:
        a, axis, keepdims = a.reshape(1), 0, False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanquantile if skip_nan else np.quantile)(a, q, axis=axis, keepdims=keepdims, method=interpolation)


def _torch_quantile(torch, name, t, q, axis, keepdims, interpolation):
    q = torch.tensor(q, dtype=t.dtype) if isinstance(q, list) else q
    return getattr(torch, name)(t, q, axis, keepdim=keepdims, interpolation=interpolation)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@given(x=mst.tensors(mst.shapes(max_dims=3, max_side=4), distinct=True), data=st.data())
def test_quantile_forward_gradients_and_pytorch(name, x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    q, interpolation = data.draw(LEVELS, label="q"), data.draw(st.sampled_from(INTERPOLATIONS), label="interpolation")

    def fn(t):
        return getattr(F, name)(t, q, axis, keepdims, interpolation)

    y = check_forward(fn, lambda a: _numpy_quantile(a, q, axis, keepdims, interpolation, name == "nanquantile"), x)
    assert isinstance(y._ctx, minitx.ops.Quantile)
    assert check_gradients(fn, x)
    torch = torch_in_example()
    if torch is not None:
        parity(fn, lambda t: _torch_quantile(torch, name, t, q, axis, keepdims, interpolation), leaf(x.numpy()))


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4), min_value=-2, max_value=2), data=st.data())
def test_quantile_with_nan_and_infinities_as_pytorch(name, x, data):
    """NaN in a slice: quantile NaN, nanquantile the others' (NaN where all are); infinities go
    through PyTorch's lerp (inf at an exact rank is NaN). Distinct finite values, so that PyTorch's
    sort and a stable one agree: the same values and gradients."""
    a = x.numpy().copy()
    a[data.draw(mst.bool_masks(a.shape), label="edges")] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    q, interpolation = data.draw(LEVELS, label="q"), data.draw(st.sampled_from(INTERPOLATIONS), label="interpolation")

    def fn(t):
        return getattr(F, name)(t, q, axis, interpolation=interpolation)

    if not np.isinf(a).any():  # NumPy's linear reads the entry after an exact rank too: 0 * inf = NaN
        np.testing.assert_array_equal(fn(leaf(a)).numpy(), _numpy_quantile(a, q, axis, False, interpolation,
                                                                            name == "nanquantile"))
    torch = torch_in_example()
    if torch is not None:
        parity(fn, lambda t: _torch_quantile(torch, name, t, q, axis, False, interpolation), leaf(a))


def test_quantile_ties_give_the_gradient_to_the_entries_a_stable_sort_puts_at_the_ranks():
    """[2, 1, 2, 2] sorted stably is entries 1, 0, 2, 3: q = 0.5 is half way between ranks 1 and 2,
    entries 0 and 2 (PyTorch's sort agrees here; on longer slices it may pick other equal entries)."""
    x = leaf([2.0, 1.0, 2.0, 2.0])
    parity(lambda t: F.quantile(t, 0.5), lambda t: t.quantile(0.5), x)
    np.testing.assert_array_equal(x.grad.numpy() / x.grad.numpy().sum(), [0.5, 0.0, 0.5, 0.0])
    x = leaf([3.0] * 20 + [1.0])  # rank 10 of the sorted values: the tenth 3, entry 9
    F.quantile(x, 0.5, interpolation="lower").backward()
    np.testing.assert_array_equal(np.flatnonzero(x.grad.numpy()), [9])
    x = leaf([0.0, 5.0, 1.0])  # two q on one entry: both gradients add up there
    F.quantile(x, [0.5, 0.5, 1.0], interpolation="nearest").backward(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 4.0, 3.0])


def test_quantile_edges_as_pytorch():
    """q = 0 and 1 are the extremes; midpoint and lerp at the rank; an all-NaN slice of nanquantile
    is NaN, its gradient to its first entry; a 0-d tensor is its own quantile; integers become float32."""
    x = leaf([[4.0, -1.0, 2.5, 7.0], [np.nan, 3.0, np.nan, 1.0], [np.nan] * 4])
    for name in ("quantile", "nanquantile"):
        for q, interpolation in ((0.0, "linear"), (1.0, "higher"), ([0.0, 1.0, 0.3], "midpoint"), (0.7, "nearest")):
            x.grad = None
            parity(lambda t: getattr(t, name)(q, dim=1, interpolation=interpolation),
                   lambda t: _torch_quantile(import_torch(), name, t, q, 1, False, interpolation), x)
    np.testing.assert_array_equal(F.nanquantile(x, [0.0, 1.0], 1).numpy(), [[-1.0, 1.0, np.nan], [7.0, 3.0, np.nan]])
    x.grad = None
    F.nanquantile(x[2], 0.5).backward()
    np.testing.assert_array_equal(x.grad.numpy()[2], [1.0, 0.0, 0.0, 0.0])
    parity(lambda t: F.quantile(t, 1.0), lambda t: t.quantile(1.0), leaf([1.0, np.inf]))  # NaN: inf - inf
    parity(lambda t: F.quantile(t, 0.5), lambda t: t.quantile(0.5), leaf([1.0, 2.0, np.inf]))  # 2: NumPy's NaN
    y = parity(lambda t: minitx.quantile(t, [0.25, 0.5], dim=0, keepdim=True),
               lambda t: t.quantile(import_torch().tensor([0.25, 0.5], dtype=t.dtype), dim=0, keepdim=True), leaf(2.5))
    assert y.shape == (2,)
    ints = F.quantile(minitx.tensor([[1, 2, 3, 4]]), 0.5, axis=1)
    assert ints.dtype == np.float32 and ints.numpy().tolist() == [2.5]
    assert F.quantile(leaf(np.ones((2, 3))), minitx.tensor(np.zeros(0)), 1).shape == (0, 2)


def test_quantile_errors_name_the_op_what_it_got_and_what_it_expected():
    x = leaf(np.arange(6.0).reshape(2, 3))
    for bad in (1.5, -0.1, np.nan, [0.5, 2.0]):
        with pytest.raises(ValueError, match=r"quantile: q must be in \[0, 1\], got"):
            F.quantile(x, bad)
    with pytest.raises(ValueError, match=r"nanquantile: q must be a number or a 1-d tensor of numbers in \[0, 1\], "
                                         r"got shape \(1, 2\)"):
        F.nanquantile(x, minitx.tensor([[0.1, 0.2]]))
    with pytest.raises(TypeError, match=r"quantile: q must be a number or a 1-d tensor of numbers in \[0, 1\], "
                                        r"got str"):
        F.quantile(x, "median")
    with pytest.raises(ValueError, match="quantile: interpolation must be one of linear, lower, higher, midpoint, "
                                         "nearest, got 'cubic'"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(ValueError, match=r"nanquantile: expected an input with at least one entry \(as PyTorch's\), "
                                         r"got shape \(2, 0\)"):
        F.nanquantile(leaf(np.zeros((2, 0))), 0.5, 0)
    with pytest.raises(ValueError, match="quantile: axis 2 is out of range"):
        F.quantile(x, 0.5, 2)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumsum_and_cumprod_take_pytorchs_dtype(name):
    """dtype= casts x first, as PyTorch's: int32 counts summed in float64, the gradient of a float32
    x coming back in float32."""
    torch = import_torch()
    counts = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    ours = getattr(minitx.tensor(counts), name)(1, dtype=minitx.float64)
    theirs = getattr(torch.tensor(counts), name)(1, dtype=torch.float64)
    assert ours.dtype == np.float64 and ours.numpy().tolist() == theirs.tolist()
    x = minitx.tensor([0.5, 2.0, -1.5], requires_grad=True)
    y = getattr(F, name)(x, dim=0, dtype="float64")
    y.sum().backward()
    t = torch.tensor([0.5, 2.0, -1.5], requires_grad=True)
    getattr(torch, name)(t, dim=0, dtype=torch.float64).sum().backward()
    assert y.dtype == np.float64 and x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)
