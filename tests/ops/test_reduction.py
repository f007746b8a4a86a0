"""Reductions (minitx/ops/reduction.py) over hypothesis-drawn axes: None, one (possibly
negative) axis or several, with and without keepdims. Max/Min ties are checked exactly."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import arg, gradcheck, leaf, op_case
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity


def _logsumexp(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


# op class -> (minitx reduction(x, axis, keepdims), numpy reference(x, axis, keepdims), options)
REDUCTIONS = {
    "Sum": (F.sum, np.sum, {}),
    "Mean": (F.mean, np.mean, {}),
    "Max": (F.max, np.max, {"distinct": True}),
    "Min": (lambda x, axis, keepdims: x.min(axis, keepdims), np.min, {"distinct": True}),
    "Var": (lambda x, axis, keepdims: F.var(x, axis, keepdims=keepdims), np.var, {}),
    "Var-ddof1": (lambda x, axis, keepdims: F.var(x, axis, ddof=1, keepdims=keepdims),
                  lambda x, axis, keepdims: np.var(x, axis=axis, ddof=1, keepdims=keepdims),
                  {"min_side": 2, "min_dims": 1}),
    "LogSumExp": (F.logsumexp, _logsumexp, {}),
    # the p-norms, against NumPy's vector_norm; kinks (|x| at 0, ties of the largest |x|) kept away
    "Norm": (lambda x, axis, keepdims: x.norm(2, axis, keepdims), np.linalg.vector_norm, {"away_from": (0.0,)}),
    **{f"Norm-p{p}": (lambda x, axis, keepdims, p=p: F.norm(x, p, axis, keepdims),
                      lambda x, axis, keepdims, p=p: np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=p),
                      {"away_from": (0.0,)} if np.isfinite(p) else {"distinct": True, "min_value": 0.5})
       for p in (1, 3, 0.5, np.inf, -np.inf)},
}


def _reduction_op_case(fn, reference, options):
    """op_case of fn(x, axis, keepdims) over drawn axes (None, one axis, several) and keepdims:
    forward against numpy, then check_gradients (gradcheck, hygiene; x may be a transposed view)."""
    options = dict(options)
    shapes = mst.shapes(min_dims=options.pop("min_dims", 0), max_dims=3, max_side=4,
                        min_side=options.pop("min_side", 1))
    return op_case(fn, arg(**options), shapes=shapes, numpy=reference,
                   kwargs={"axis": lambda shape: mst.axes_for(len(shape)), "keepdims": st.booleans()})


CASES = {name: _reduction_op_case(*entry) for name, entry in REDUCTIONS.items()}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@given(data=st.data())
def test_reduction_forward_and_gradients(name, data):
    CASES[name](data)


@pytest.mark.parametrize("name", ["Sum", "Mean", "Max", "Min", "Var", "LogSumExp"])
def test_reduction_over_no_axes_and_scalar_axis_0(name):
    """axis=() reduces nothing (numpy's rule); a 0-d tensor accepts axis 0 and -1 and is returned."""
    fn, reference = REDUCTIONS[name][:2]
    x = minitx.tensor([[1.0, 2.0], [4.0, 3.0]], dtype="float64", requires_grad=True)
    np.testing.assert_allclose(fn(x, (), False).numpy(), reference(x.numpy(), axis=(), keepdims=False))
    scalar = minitx.tensor(2.5, dtype="float64", requires_grad=True)
    for axis in (0, -1, None):
        out = fn(scalar, axis, False)
        assert out.shape == ()
        np.testing.assert_allclose(out.numpy(), reference(scalar.numpy(), axis=None, keepdims=False))
    assert gradcheck(lambda t: fn(t, 0, True), scalar)


@pytest.mark.parametrize("name, x, axis, expected", [
    ("Max", [1.0, 3.0, 3.0, 0.0], None, [0.0, 0.5, 0.5, 0.0]),
    ("Max", [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], 1, [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]),
    ("Max", [[5.0, 5.0], [5.0, 1.0]], (0, 1), [[1 / 3, 1 / 3], [1 / 3, 0.0]]),
    ("Min", [[1.0, 0.0], [0.0, 0.0]], 0, [[0.0, 0.5], [1.0, 0.5]]),
    ("Min", [-2.0, 7.0, -2.0], -1, [0.5, 0.0, 0.5]),
])
def test_max_min_ties_share_the_gradient_equally(name, x, axis, expected):
    fn = REDUCTIONS[name][0]
    t = minitx.tensor(x, dtype="float64", requires_grad=True)
    fn(t, axis, False).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=0, atol=1e-15)


def test_max_gradient_scales_by_dy():
    t = minitx.tensor([[1.0, 4.0, 4.0], [9.0, 2.0, 3.0]], dtype="float64", requires_grad=True)
    t.max(axis=1, keepdims=True).backward(np.array([[2.0], [-3.0]]))
    np.testing.assert_array_equal(t.grad.numpy(), [[0.0, 1.0, 1.0], [-3.0, 0.0, 0.0]])


def test_logsumexp_is_stable_for_large_and_infinite_values():
    x = minitx.tensor([[1000.0, 1000.0], [-1000.0, -1001.0], [-np.inf, 0.0]], dtype="float64",
                      requires_grad=True)
    y = F.logsumexp(x, axis=1)
    np.testing.assert_allclose(y.numpy(), [1000.0 + np.log(2), -1000.0 + np.log1p(np.exp(-1.0)), 0.0])
    y.sum().backward()
    softmax = np.array([[0.5, 0.5], [1 / (1 + np.exp(-1.0)), 1 / (1 + np.exp(1.0))], [0.0, 1.0]])
    np.testing.assert_allclose(x.grad.numpy(), softmax)
    all_masked = F.logsumexp(minitx.tensor([-np.inf, -np.inf], dtype="float64"))
    assert all_masked.item() == -np.inf


def test_mean_and_var_of_large_values_are_exact_enough():
    x = minitx.tensor(1e8 + np.arange(4.0), dtype="float64")
    assert F.mean(x).item() == 1e8 + 1.5
    np.testing.assert_allclose(F.var(x).item(), 1.25)


@pytest.mark.parametrize("axis, error, message", [
    (2, ValueError, "sum: axis 2 is out of range for a tensor with 2 dimensions"),
    (-3, ValueError, "sum: axis -3 is out of range for a tensor with 2 dimensions"),
    ((0, -2), ValueError, r"sum: repeated axis in \(0, -2\)"),
    (1.0, TypeError, "sum: axis 1.0 is not an integer"),  # (a TypeError, as PyTorch's)
    ((0, "1"), TypeError, "sum: axis '1' is not an integer"),
])
def test_bad_axes_are_named(axis, error, message):
    with pytest.raises(error, match=message):
        F.sum(minitx.ones(2, 3), axis)


@pytest.mark.parametrize("op, pairwise", [("max", "maximum"), ("min", "minimum")])
def test_max_of_two_tensors_points_to_maximum(op, pairwise):
    """torch.max(a, b) compares entry by entry; minitx's max(a, b) reads b as an axis."""
    a, b = minitx.tensor([1.0, 3.0]), minitx.tensor([2.0, 2.0])
    with pytest.raises(TypeError, match=rf"^{op}: axis .* is not an integer; {op}\(x, axis\) reduces x, and "
                                         rf"{pairwise}\(a, b\) compares two tensors entry by entry$"):
        getattr(F, op)(a, b)
    assert getattr(F, pairwise)(a, b).tolist() == getattr(np, pairwise)([1.0, 3.0], [2.0, 2.0]).tolist()


@pytest.mark.parametrize("shape, axis, ddof", [((3, 1), 1, 1), ((2, 2), 1, 2), ((2, 3), None, 7), ((2, 0), 1, 0)])
def test_var_without_degrees_of_freedom_is_numpys_inf_or_nan_with_a_warning(shape, axis, ddof):
    data = np.arange(float(np.prod(shape))).reshape(shape)
    data[..., :1] = data[..., -1:]  # some rows constant (0 / 0 = NaN), others not (x / 0 = inf)
    x = minitx.tensor(data, dtype="float64", requires_grad=True)
    with pytest.warns(RuntimeWarning, match=f"var: .* with ddof={ddof} leave no degrees of freedom"):
        v = F.var(x, axis, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(RuntimeWarning):
        expected = np.var(data, axis=axis, ddof=ddof)
    np.testing.assert_array_equal(v.numpy(), expected)
    v.sum().backward()
    assert not np.isfinite(x.grad.numpy()).any()


@pytest.mark.parametrize("fn, shape, axis, message", [
    (F.max, (2, 0), 1, r"max: axis 1 of the input of shape \(2, 0\) has length 0"),
    (F.min, (0, 3), None, r"min: axis 0 of the input of shape \(0, 3\) has length 0"),
    (F.argmax, (3, 0), -1, r"argmax: axis 1 of the input of shape \(3, 0\) has length 0; expected at least one "
                           r"entry \(an empty slice has no maximum\)"),
    (F.argmin, (0, 3), 0, r"argmin: axis 0 of the input of shape \(0, 3\) has length 0; expected at least one "
                          r"entry \(an empty slice has no minimum\)"),
    (F.argmax, (0,), None, r"argmax: the input of shape \(0,\) has no entries; expected at least one"),
    (F.argmin, (2, 0, 4), None, r"argmin: the input of shape \(2, 0, 4\) has no entries; expected at least one"),
])
def test_max_min_and_their_indices_over_no_entries_name_the_op(fn, shape, axis, message):
    """As PyTorch, which raises too (NumPy's own message names neither the op nor the shape)."""
    with pytest.raises(ValueError, match=message):
        fn(minitx.ones(*shape), axis=axis)


@pytest.mark.parametrize("shape, axis", [((0,), None), ((3, 0), 1), ((0, 3), 0), ((2, 0, 4), (0, 1)), ((0, 3), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_over_no_entries_is_nan_without_warnings_as_pytorch(shape, axis, keepdims):
    """0 / 0 = NaN where a mean takes no entries, as NumPy and PyTorch, without NumPy's warnings
    (an empty slice; dy / 0 in backward, for an x with no entries to take it)."""
    x = leaf(np.zeros(shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.mean(x, axis, keepdims)
        y.backward(np.ones(y.shape))
    assert x.grad.shape == shape
    parity(lambda t: F.mean(t, axis, keepdims), lambda t: t.mean(dim=axis, keepdim=keepdims), leaf(np.zeros(shape)))


def test_logsumexp_of_nothing_is_minus_infinity():
    """log sum exp over an empty axis is the log of an empty sum, -inf, as numpy and torch give."""
    np.testing.assert_array_equal(F.logsumexp(minitx.ones(2, 0), axis=1).numpy(), [-np.inf, -np.inf])
    assert F.logsumexp(minitx.ones(0, 3), axis=1).shape == (0,)


def test_logsumexp_of_a_slice_with_nan_is_nan_with_a_nan_gradient():
    x = minitx.tensor([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf]], dtype="float64",
                      requires_grad=True)
    y = F.logsumexp(x, axis=1)
    assert np.isnan(y.numpy()[0]) and y.numpy()[2] == -np.inf
    np.testing.assert_allclose(y.numpy()[1], np.log(np.exp([1.0, 2.0, 3.0]).sum()))
    y.sum().backward()
    assert np.isnan(x.grad.numpy()[0]).all()
    np.testing.assert_array_equal(x.grad.numpy()[2], 0.0)  # the fully masked row: no gradient
    assert np.isnan(F.logsumexp(x, axis=0).numpy()[1])  # the column holding the NaN


def test_argmax_and_argmin_take_lists_as_they_take_tensors():
    assert F.argmax([3, 1, 2]).item() == 0 and F.argmin([3, 1, 2]).item() == 1
    assert F.argmax([[1, 5], [7, 2]], axis=1).tolist() == [1, 0]


@pytest.mark.parametrize("call", [lambda x: F.sum(x, axis=2), lambda x: F.softmax(x, axis=-3), lambda x: F.argmax(x, 2),
                                  lambda x: F.cumsum(x, 5), lambda x: F.swapaxes(x, 0, 2),
                                  lambda x: F.unsqueeze(x, 4), lambda x: F.split(x, 2, axis=2)])
def test_a_bad_axis_raises_numpys_axis_error(call):
    """numpy.exceptions.AxisError, which is both a ValueError and an IndexError, as NumPy raises:
    code that catches either sees it."""
    from numpy.exceptions import AxisError

    x = minitx.tensor(np.zeros((2, 4)))
    with pytest.raises(AxisError):
        call(x)


def test_softmax_like_ops_called_directly_on_integers_compute_in_float():
    """The ops' classes, called without F's cast to floating, still take integer input (their
    exp cannot be taken in place in an integer array)."""
    from minitx.ops.activation import Softmax
    from minitx.ops.reduction import LogSumExp

    x = minitx.Tensor(np.array([[1, 2, 3]]))
    np.testing.assert_allclose(LogSumExp(-1)(x).numpy(), np.log(np.exp([1.0, 2.0, 3.0]).sum(keepdims=True)))
    assert Softmax(-1)(x).dtype == np.float64


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 0, np.inf, -np.inf])
def test_norm_at_zeros_and_ties_matches_pytorch(p):
    """A row of zeros (0 / 0 in the formula: 0, as PyTorch's), a zero entry beside others (for
    p < 1 an infinite |x|^(p-1): 0 there, as PyTorch's), and |x| tied between x and -x."""
    x = leaf(np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.0], [2.0, -2.0, 1.0]]))
    parity(lambda t: F.norm(t, p, 1), lambda t: t.norm(p, dim=1), x)


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.5])
def test_a_nan_or_infinite_entry_gives_norm_nan_gradients_as_pytorchs(p):
    """A NaN entry: every dx of its slice NaN (it was 0 at the NaN itself, hiding it); an inf
    entry: its own dx NaN (inf / inf), the others the limit: 0 for p > 1, inf for p < 1."""
    x = leaf(np.array([[np.nan, 1.0, 0.0], [np.inf, 1.0, 2.0]]))
    F.norm(x, p, 1).sum().backward()
    assert np.isnan(x.grad.numpy()[0]).all()
    np.testing.assert_array_equal(np.isnan(x.grad.numpy()[1]), [True, False, False])
    np.testing.assert_array_equal(x.grad.numpy()[1, 1:], [0.0, 0.0] if p > 1 else [np.inf, np.inf])
    parity(lambda t: F.norm(t, p, 1), lambda t: t.norm(p, dim=1), leaf(x.numpy()))


@pytest.mark.parametrize("p", [3.5, 3, 1.5, 0.5])
def test_norm_gradient_of_a_tiny_entry_is_its_sign(p):
    """Over one entry y = |x|, so dx = dy sign(x) (|x| / y)^(p-1) = dy sign(x), also at x = 2.35e-158, where
    |x|^(p-1) and y^(p-1) both underflow for p > 1 (PyTorch's 0 / 0: NaN, or inf). renorm, composed of
    norm, leaves such a slice (its norm below maxnorm) with the gradient dy, as PyTorch's renorm."""
    x = leaf(np.array([[2.35e-158], [-1e-200]]))
    F.norm(x, p, 1).backward(np.array([0.5, 2.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[0.5], [-2.0]])
    torch = import_torch()
    parity(lambda t: F.renorm(t, p, 0, 0.5), lambda t: torch.renorm(t, p, 0, 0.5), leaf(x.numpy()))


@pytest.mark.parametrize("p", [2, 3.5, 1.5, 0.5])
def test_norm_of_tiny_or_huge_entries_is_scaled_and_elsewhere_computed_as_written(p):
    """Where |x|^p would underflow (1e-200) or the sum overflow (1e200), the slice is scaled by its largest
    |x|: the norm and its gradient are those of x / 1e-200 times 1e-200 (PyTorch's are 0 and inf there).
    Elsewhere the scale is 1 and the norm is (sum |x|^p)^(1/p) as written, bit for bit."""
    unit = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
    for factor in (1e-200, 1e200):
        x = leaf(unit * factor)
        F.norm(x, p, 1).backward(np.array([1.0, 2.0]))
        expected = np.sum(np.abs(unit) ** p, axis=1) ** (1 / p)
        # (1e-12: where the power stays in range, unscaled, 1/p's rounding costs |ln sum| eps, 2.5e-14 at p = 1.5)
        np.testing.assert_allclose(F.norm(leaf(unit * factor), p, 1).numpy(), expected * factor, rtol=1e-12)
        with np.errstate(divide="ignore", invalid="ignore"):  # (0^(p-1) at the zero entry: its subgradient 0)
            share = np.where(unit == 0, 0.0, np.sign(unit) * (np.abs(unit) / expected[:, None]) ** (p - 1))
        np.testing.assert_allclose(x.grad.numpy(), np.array([[1.0], [2.0]]) * share, rtol=1e-12)
    x = np.random.default_rng(3).standard_normal((4, 5))
    as_written = np.sqrt((x * x).sum(axis=1)) if p == 2 else (np.abs(x) ** p).sum(axis=1) ** (1 / p)
    np.testing.assert_array_equal(F.norm(leaf(x), p, 1).numpy(), as_written)


def test_norm_refuses_what_is_no_norm():
    x = leaf(np.ones(3))
    for p in (-1, float("nan"), "fro", True):
        with pytest.raises(ValueError, match=f"norm: p must be a number >= 0, inf or -inf, got {p!r}"):
            F.norm(x, p)
    with pytest.raises(ValueError, match="norm: axis 1 of the input of shape .3, 0. has length 0"):
        F.norm(leaf(np.ones((3, 0))), np.inf, 1)
    assert F.norm(leaf(np.ones((3, 0))), 2, 1).tolist() == [0.0] * 3
