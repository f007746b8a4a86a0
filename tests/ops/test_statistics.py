"""The statistics and numeric helpers PyTorch has beside var, std and cumsum: cov and corrcoef
(minitx/ops/linalg.py), var_mean and std_mean (minitx/ops/reduction.py), trapezoid and cumulative_trapezoid
(minitx/ops/scan.py), gradient (scan.py too), histogram (minitx/ops/indexing.py), renorm (minitx/ops/norm.py), frexp, isin and rsub (minitx/ops/elementwise.py), against NumPy's (weights, corrections, spacings and axes drawn), with float64 gradient
checks, PyTorch's answers where there is nothing to divide by, and errors that name the op. Their drawn
PyTorch parity (0, inf, NaN, empty axes) is in tests/test_torch_op_parity.py."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx.ops.elementwise import Frexp
from minitx.testing import arg, check_low_precision, gradcheck, op_test
from minitx.testing import strategies as mst
from _torch_kit import import_torch

torch = import_torch()

#: variables x observations, or one variable (1-d), with at least 3 observations (correction 2 leaves 1)
OBSERVED = st.one_of(st.tuples(st.integers(3, 5)), st.tuples(st.integers(1, 3), st.integers(3, 5)))


def _frequencies(x, *_):
    return hnp.arrays(np.int64, x[-1:], elements=st.integers(1, 3))


test_cov_against_numpy = op_test(
    lambda x, correction: F.cov(x, correction=correction), arg(), shapes=OBSERVED,
    kwargs={"correction": st.sampled_from([0, 1, 2])},
    numpy=lambda x, correction: np.cov(x, ddof=correction))

# weights in [0.5, 1.5] and counts 1..3 over 3 or more observations keep the divisor above 0
test_weighted_cov_against_numpy = op_test(
    lambda x, aweights, fweights, correction: F.cov(x, correction=correction, fweights=fweights, aweights=aweights),
    arg(), arg(shape=lambda x: x[-1:], min_value=0.5, max_value=1.5), arg(strategy=_frequencies), shapes=OBSERVED,
    kwargs={"correction": st.sampled_from([0, 1])},
    numpy=lambda x, aweights, fweights, correction: np.cov(x, ddof=correction, fweights=fweights, aweights=aweights))

# distinct values: a variable of (nearly) zero variance divides by (nearly) 0
test_corrcoef_against_numpy = op_test(F.corrcoef, arg(distinct=True), shapes=OBSERVED, numpy=np.corrcoef)

test_var_mean_against_numpy = op_test(
    lambda x, axis, ddof: F.stack(list(F.var_mean(x, axis, correction=ddof))), arg(),
    shapes=st.tuples(st.integers(3, 4), st.integers(3, 4)),
    kwargs={"axis": st.sampled_from([None, 0, -1, (0, 1)]), "ddof": st.sampled_from([0, 1, 2])},
    numpy=lambda x, axis, ddof: np.stack([np.var(x, axis, ddof=ddof), np.mean(x, axis)]))

test_std_mean_against_numpy = op_test(
    lambda x, axis, keepdims: F.stack(list(F.std_mean(x, axis, keepdim=keepdims))), arg(distinct=True),
    shapes=st.tuples(st.integers(2, 4), st.integers(2, 4)),
    kwargs={"axis": st.sampled_from([None, 0, 1]), "keepdims": st.booleans()},
    numpy=lambda x, axis, keepdims: np.stack([np.std(x, axis, ddof=1, keepdims=keepdims),
                                              np.mean(x, axis, keepdims=keepdims)]))


def test_var_mean_and_std_mean_default_to_pytorchs_correction_1_and_take_its_spellings():
    x = np.array([[1.0, 2.0, 4.0], [0.0, 3.0, 3.0]])
    t = minitx.tensor(x)
    for ours, theirs in ((F.var_mean, torch.var_mean), (minitx.std_mean, torch.std_mean)):
        for kwargs in ({}, {"dim": 1}, {"dim": 0, "unbiased": False}, {"dim": (0, 1), "correction": 2},
                       {"dim": 1, "keepdim": True, "correction": 0}):
            got, expected = ours(t, **kwargs), theirs(torch.from_numpy(x), **kwargs)
            for a, b in zip(got, expected):
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-14)
    with pytest.raises(TypeError, match=r"^var_mean: axis must be an integer.*got True.*unbiased="):
        F.var_mean(t, True)
    with pytest.raises(TypeError, match=r"^std_mean: PyTorch's std_mean\(dim=\(\)\) reduces every axis"):
        F.std_mean(t, dim=())


def test_the_mean_beside_an_infinity_is_means_where_pytorchs_is_nan():
    """A departure (docs/ops.md): PyTorch's var_mean and std_mean update the mean in one pass, which takes
    inf - inf; minitx's pair is var (or std) and mean, so the mean is mean's."""
    x = np.array([[-np.inf, 0.0], [1.0, 2.0]])
    for ours, theirs in ((F.var_mean, torch.var_mean), (F.std_mean, torch.std_mean)):
        spread, centre = ours(minitx.tensor(x), 1)
        assert centre.numpy().tolist() == [-np.inf, 1.5] == F.mean(minitx.tensor(x), 1).numpy().tolist()
        assert np.isnan(theirs(torch.from_numpy(x), 1)[1][0].item())
        np.testing.assert_array_equal(spread.numpy(), theirs(torch.from_numpy(x), 1)[0].numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("pair", [F.var_mean, F.std_mean])
@pytest.mark.parametrize("half", [0, 1])
def test_each_half_of_var_mean_and_std_mean_in_16_bits_follows_float32(pair, half, dtype):
    """(The parity table's 16-bit run leaves the pairs out, tests/test_low_precision_ops.py's TWO_PATHS: stacked,
    their halves' gradients are each rounded before they are added.)"""
    x = minitx.tensor(np.random.default_rng(half).uniform(-3, 3, (3, 4)), dtype="float64")
    for axis in (None, 1):
        assert check_low_precision(lambda t: pair(t, axis, correction=1)[half], x, dtype=dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_corrcoef_in_16_bits_follows_float32(dtype):
    """A fixed 3 x 6 case beside the parity table's drawn ones (tests/test_low_precision_ops.py)."""
    x = minitx.tensor(np.random.default_rng(0).uniform(-3, 3, (3, 6)), dtype="float64")
    assert check_low_precision(F.corrcoef, x, dtype=dtype)


def test_cov_of_16_bits_is_float32s_rounded_once():
    """Composed in bfloat16 the mean of [-2.578125, -2.625] rounds to -2.609375 before x is centred on it:
    6.1e-4 (PyTorch's) where float32's is 5.49e-4 (seed 126 of the dev profile drew it). In float32 and
    rounded once, it is float32's; bfloat16 aweights are taken (their dtype's kind is not 'f'), and the
    result's dtype is PyTorch's beside them."""
    values = [-2.5849, -2.6303]
    low = F.cov(minitx.tensor(values, dtype="bfloat16"), correction=0)
    single = F.cov(minitx.tensor(minitx.tensor(values, dtype="bfloat16").numpy().astype(np.float32)), correction=0)
    assert low.dtype.name == "bfloat16"
    assert float(low.numpy()) == float(single.numpy().astype(low.dtype))
    x = minitx.tensor([[1.0, 2.0, 3.0]], dtype="bfloat16")
    for weights, dtype in (("bfloat16", "bfloat16"), ("float16", "float32"), ("float64", "float64")):
        assert F.cov(x, aweights=minitx.tensor([1.0, 2.0, 3.0], dtype=weights)).dtype.name == dtype


@pytest.mark.parametrize("x", [np.zeros(0), np.zeros((2, 0)), np.array([1.5]), np.array([[1.0], [2.0]]),
                               np.array(2.0), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]),
                               np.array([[1.0, 2.0, np.inf], [1.0, 5.0, np.nan]])])
def test_cov_and_corrcoef_where_nothing_divides_are_pytorchs(x):
    """No observation, one, a variable of zero variance, infinities and NaN: PyTorch's NaN and inf, with
    a warning where no degree of freedom is left."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's UserWarning; minitx's RuntimeWarning is checked below)
        for ours, theirs in ((F.cov, torch.cov), (F.corrcoef, torch.corrcoef)):
            got, expected = ours(minitx.tensor(x)), theirs(torch.from_numpy(x))
            assert got.shape == tuple(expected.shape)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-14)  # NaN where NaN


def test_cov_without_degrees_of_freedom_warns_and_weights_count():
    with pytest.warns(RuntimeWarning, match=r"^cov: 2 observations with correction=2 leave no degrees of freedom"):
        assert F.cov(minitx.tensor([1.0, 3.0]), correction=2).item() == np.inf
    x = np.array([[1.0, 2.0, 4.0], [3.0, 0.0, 1.0]])
    # a count of 2 is the observation written twice; a count of 0 leaves it out
    np.testing.assert_allclose(F.cov(minitx.tensor(x), fweights=minitx.tensor([2, 1, 0])).numpy(),
                               np.cov(x[:, [0, 0, 1]]), rtol=1e-14)
    t = minitx.tensor(x)
    assert t.cov(correction=0).numpy().tolist() == F.cov(t, correction=0).numpy().tolist()
    np.testing.assert_allclose(t.corrcoef().numpy(), np.corrcoef(x), rtol=1e-14)


def test_cov_gradient_reaches_the_weights_as_pytorchs():
    x, a = np.array([[1.0, 2.0, 4.0, 0.5], [3.0, 0.0, 1.0, 2.0]]), np.array([0.5, 1.0, 2.0, 1.5])
    f, dy = np.array([1, 2, 1, 3]), np.array([[1.0, -2.0], [0.5, 3.0]])
    ours = [minitx.tensor(v, requires_grad=True) for v in (x, a)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, a)]
    F.cov(ours[0], fweights=minitx.tensor(f), aweights=ours[1]).backward(minitx.tensor(dy))
    torch.cov(theirs[0], fweights=torch.from_numpy(f), aweights=theirs[1]).backward(torch.from_numpy(dy))
    for mine, torchs in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), torchs.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda x: F.cov(F.reshape(x, (1, 2, 3))), r"^cov: expected a tensor of at most 2 dimensions .*got shape \(1, 2, 3\)"),
    (lambda x: F.cov(x, correction=0.5), r"^cov: correction must be an integer, got 0.5"),
    (lambda x: F.cov(x, fweights=minitx.tensor([1.0, 2.0, 3.0])), r"^cov: fweights must have an integer dtype, got float"),
    (lambda x: F.cov(x, fweights=minitx.tensor([1, -2, 3])), r"^cov: fweights must not be negative, got \[1, -2, 3\]"),
    (lambda x: F.cov(x, aweights=minitx.tensor([1, 2, 3])), r"^cov: aweights must have a floating-point dtype, got int"),
    (lambda x: F.cov(x, aweights=minitx.tensor([1.0, 2.0])),
     r"^cov: aweights must be a 1-d tensor with one entry per observation \(3\), got shape \(2,\)"),
    (lambda x: F.cov(x, aweights=minitx.tensor([1.0, -2.0, 3.0])), r"^cov: aweights must not be negative"),
    (lambda x: F.cov(x, fweights=minitx.tensor([0, 0, 0])), r"^cov: the weights sum to 0: no observation counts"),
    (lambda x: F.cov(x, fweights=minitx.tensor([1, 0, 0]), aweights=minitx.tensor([0.0, 2.0, 1.0])),
     r"^cov: the weights sum to 0"),
])
def test_cov_refuses_what_pytorch_refuses_naming_itself(call, message):
    x = minitx.tensor([[1.0, 2.0, 4.0], [0.0, 1.0, 5.0]])
    with pytest.raises((TypeError, ValueError), match=message):
        call(x)


#: y with 1 to 3 axes, and an axis of it (negative too)
SAMPLED = mst.shapes(min_dims=1, max_dims=3, max_side=4)


def _axis(y, *_):
    return st.integers(-len(y), len(y) - 1)


test_trapezoid_with_a_spacing_against_numpy = op_test(
    lambda y, dx, axis: F.trapezoid(y, dx=dx, dim=axis), arg(), shapes=SAMPLED,
    kwargs={"dx": st.sampled_from([1, 0.5, -2.0]), "axis": _axis},
    numpy=lambda y, dx, axis: np.trapezoid(y, dx=dx, axis=axis))

# x's gradient too: x of y's shape along a drawn axis, or 1-d along the first or the last
test_trapezoid_at_sample_points_against_numpy = op_test(
    lambda y, x, axis: F.trapezoid(y, x, axis=axis), arg(), arg(), shapes=SAMPLED, kwargs={"axis": _axis},
    numpy=lambda y, x, axis: np.trapezoid(y, x, axis=axis))


def _first_or_last(y, x):
    return -1 if x.shape[0] == y.shape[-1] else 0


test_trapezoid_at_1d_sample_points_against_numpy = op_test(
    lambda y, x: F.trapezoid(y, x, axis=_first_or_last(y, x)),
    arg(), arg(shape=lambda y: st.sampled_from([y[:1], y[-1:]])), shapes=SAMPLED,
    numpy=lambda y, x: np.trapezoid(y, x, axis=_first_or_last(y, x)))


def _running_trapezoid(y, x=None, dx=1.0, axis=-1):
    """Entry k: numpy.trapezoid over samples 0..k+1 (the axis moved last, and back)."""
    y = np.moveaxis(y, axis, -1)
    x = None if x is None else np.moveaxis(x, axis, -1) if x.ndim == y.ndim else x
    parts = [np.trapezoid(y[..., :k + 2], None if x is None else x[..., :k + 2], dx=dx) for k in range(y.shape[-1] - 1)]
    return np.moveaxis(np.stack(parts, -1) if parts else y[..., :0], -1, axis)


test_cumulative_trapezoid_with_a_spacing_against_numpy = op_test(
    lambda y, dx, axis: F.cumulative_trapezoid(y, dx=dx, dim=axis), arg(), shapes=SAMPLED,
    kwargs={"dx": st.sampled_from([1, 0.5, -2.0]), "axis": _axis},
    numpy=lambda y, dx, axis: _running_trapezoid(y, dx=dx, axis=axis))

test_cumulative_trapezoid_at_sample_points_against_numpy = op_test(
    lambda y, x, axis: F.cumulative_trapezoid(y, x, axis=axis), arg(), arg(), shapes=SAMPLED,
    kwargs={"axis": _axis}, numpy=lambda y, x, axis: _running_trapezoid(y, x, axis=axis))

test_cumulative_trapezoid_at_1d_sample_points_against_numpy = op_test(
    lambda y, x: F.cumulative_trapezoid(y, x, axis=_first_or_last(y, x)),
    arg(), arg(shape=lambda y: st.sampled_from([y[:1], y[-1:]])), shapes=SAMPLED,
    numpy=lambda y, x: _running_trapezoid(y, x, axis=_first_or_last(y, x)))


def test_trapezoid_of_integers_empty_axes_and_pytorchs_names():
    y = minitx.tensor([[1, 2, 4], [0, 3, 5]])
    for ours, theirs in ((F.trapezoid(y), torch.trapezoid(torch.tensor(y.numpy()))),
                         (minitx.trapz(y, minitx.tensor([0, 1, 3]), dim=-1),
                          torch.trapz(torch.tensor(y.numpy()), torch.tensor([0, 1, 3]), dim=-1)),
                         (F.cumulative_trapezoid(y, dx=2, dim=0), torch.cumulative_trapezoid(torch.tensor(y.numpy()), dx=2, dim=0)),
                         (F.trapezoid(np.zeros((2, 0))), torch.trapezoid(torch.zeros(2, 0, dtype=torch.float64))),
                         (F.trapezoid(np.array([np.inf, 1.0])), torch.trapezoid(torch.tensor([np.inf, 1.0], dtype=torch.float64))),
                         (F.cumulative_trapezoid(np.zeros((2, 1))), torch.cumulative_trapezoid(torch.zeros(2, 1, dtype=torch.float64)))):
        assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # departures (docs/ops.md): integer sample points' differences are numbers, not uint8's wrapped ones, and
    # no samples of an integer y give float zeros
    steps = minitx.tensor([3, 1, 0], dtype="uint8")
    assert F.trapezoid(minitx.tensor([1.0, 1.0, 1.0]), steps).item() == -3.0
    assert torch.trapezoid(torch.ones(3), torch.tensor([3, 1, 0], dtype=torch.uint8)).item() != -3.0
    assert F.trapezoid(minitx.tensor(np.zeros((2, 0), np.int64))).dtype.name == "float32"


@pytest.mark.parametrize("op", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize("call, error, message", [
    (lambda f: f(minitx.tensor(1.0)), ValueError, "expected y with at least one axis, got a 0-d tensor"),
    (lambda f: f(minitx.tensor([1.0, 2.0]), minitx.tensor([0.0, 1.0]), dx=2), TypeError, "give the sample points x or"),
    (lambda f: f(minitx.tensor([1.0, 2.0]), dx=minitx.tensor(2.0)), TypeError, "dx must be a number, got tensor"),
    (lambda f: f(minitx.tensor([[1.0, 2.0]]), minitx.tensor([0.0, 1.0, 2.0])), ValueError,
     r"a 1-d x needs one value per sample, 2 along axis 1 of y's shape \(1, 2\); got 3"),
    (lambda f: f(minitx.tensor([1.0, 2.0]), dim=1), IndexError, "axis 1 is out of range"),
    (lambda f: f(minitx.tensor(np.ones((2, 3))), minitx.tensor(np.ones((3, 3)))), ValueError,
     r"x of shape \(3, 3\) does not broadcast against y of shape \(2, 3\)"),
])
def test_trapezoid_errors_name_the_op(op, call, error, message):
    with pytest.raises(error, match=f"^{op}: {message}"):
        call(getattr(F, op))


def _renormed(x, p, axis, maxnorm):
    """Each slice along axis scaled to maxnorm where its p-norm is above it, slice by slice."""
    out = np.array(x, dtype=np.float64)
    for i in range(x.shape[axis]):
        piece = np.take(x, i, axis=axis)
        n = np.max(np.abs(piece)) if p == np.inf else np.sum(np.abs(piece) ** p) ** (1 / p)
        index = (slice(None),) * (axis % x.ndim) + (i,)
        out[index] = piece * (maxnorm / (n + 1e-7) if n > maxnorm else 1.0)
    return out


# norms near maxnorm kept away by its choices: small (every slice scaled), middling or large (none)
test_renorm_against_numpy = op_test(
    lambda x, p, axis, maxnorm: F.renorm(x, p, axis, maxnorm), arg(away_from=(0.0,), distinct=True),
    shapes=mst.shapes(min_dims=2, max_dims=3, max_side=3),
    kwargs={"p": st.sampled_from([1, 2, 3.5]), "axis": lambda s: st.integers(-len(s), len(s) - 1),
            "maxnorm": st.sampled_from([0.0, 0.05, 100.0])},
    numpy=_renormed)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_renorm_in_16_bits_follows_float32(dtype):
    """(Left out of the parity table's 16-bit run, tests/test_low_precision_ops.py's TWO_PATHS.) The values
    of slices scaled and not; the gradient where no slice is scaled, as along a scaled one its two paths
    cancel to 0 and the sum carries two roundings."""
    x = np.random.default_rng(0).uniform(-3, 3, (3, 4))
    assert check_low_precision(lambda t: F.renorm(t, 2, 0, 4.0), minitx.tensor(x), dtype=dtype)
    assert check_low_precision(lambda t: F.renorm(t, 2, 0, 100.0), minitx.tensor(x, requires_grad=True), dtype=dtype)


def test_renorm_method_pytorchs_keywords_and_errors():
    x = np.array([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(minitx.tensor(x).renorm(2, 0, 1.0).numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(F.renorm(x, p=np.inf, dim=1, maxnorm=1.0).numpy(),
                               torch.renorm(torch.from_numpy(x), p=np.inf, dim=1, maxnorm=1.0).numpy(), rtol=1e-15)
    for call, message in ((lambda: F.renorm(x[0], 2, 0, 1.0), r"expected a tensor with at least 2 axes .*got shape \(2,\)"),
                          (lambda: F.renorm(x, 0, 0, 1.0), "p must be a number > 0"),
                          (lambda: F.renorm(x, 2, 0, -1.0), "maxnorm must be a number >= 0, got -1.0"),
                          (lambda: F.renorm(np.zeros((2, 0)), np.inf, 0, 1.0), "axis 1 .* has length 0")):
        with pytest.raises(ValueError, match=f"^renorm: {message}"):
            call()
    for shape, axis in (((2, 0), 0), ((0, 3), 0), ((0, 3), 1)):  # empty slices, or none: PyTorch's
        empty = np.zeros(shape)
        np.testing.assert_array_equal(F.renorm(empty, 2, axis, 1.0).numpy(),
                                      torch.renorm(torch.from_numpy(empty), 2, axis, 1.0).numpy())


# the mantissa's gradient 2^-e jumps at the powers of 2: values kept away from every one in [-3, 3] (the
# smaller ones inside 0's margin; seed 213 of the dev profile drew 0.25 when only 0.5, 1 and 2 were listed)
test_frexp_mantissa_against_numpy = op_test(
    lambda x: F.frexp(x).mantissa,
    arg(away_from=(0.0,) + tuple(sign * 2.0 ** k for k in range(-6, 2) for sign in (1, -1)), margin=0.01),
    numpy=lambda x: np.frexp(x)[0])


@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                   elements=st.floats(0.05, 0.95).flatmap(lambda f: st.sampled_from([f, 3 * f, -40 * f, 1e-200 * f]))))
def test_frexp_gradient_is_2_to_the_minus_exponent_within_each_binade(x):
    """Frexp alone, between powers of 2 (where its exponent holds); tiny values (below the finite
    differences' step) by the formula alone."""
    mantissa = np.abs(np.frexp(x)[0])
    x = x * np.where((mantissa < 0.5001) | (mantissa > 0.9999), 1.01, 1.0)  # (0.05 * 40 * 4 = 8 is a power)
    t = minitx.tensor(x, dtype="float64", requires_grad=True)
    if np.all(np.abs(x) > 1e-3):
        assert gradcheck(lambda u: Frexp()(u), t)
    Frexp()(t).backward(minitx.tensor(np.ones_like(x)))
    np.testing.assert_array_equal(t.grad.numpy(), 2.0 ** -np.frexp(x)[1])


def test_frexp_exponents_edges_and_dtypes_as_pytorchs():
    x = np.array([0.0, -0.0, 1.0, -3.0, 0.75, np.inf, -np.inf, np.nan, 1e-310, 2.0 ** 1023])
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        ours = minitx.tensor(x).to(dtype).frexp()
        theirs = torch.frexp(torch.from_numpy(x).to(getattr(torch, dtype)))
        assert ours.mantissa.dtype.name == dtype and ours.exponent.dtype.name == "int32"
        np.testing.assert_array_equal(ours.mantissa.numpy().astype(np.float64), theirs.mantissa.to(torch.float64).numpy())
        np.testing.assert_array_equal(ours.exponent.numpy(), theirs.exponent.numpy())
    # a departure (docs/ops.md): the mantissa's gradient 2^-e, exact in float64 past float32's range, where
    # PyTorch's 2^e in float32 is 0 (so its gradient inf)
    tiny = minitx.tensor([1e-300], dtype="float64", requires_grad=True)
    F.frexp(tiny).mantissa.backward(minitx.tensor([1.0], dtype="float64"))
    assert tiny.grad.item() == 2.0 ** 996 == 1 / 2.0 ** -996
    theirs = torch.tensor([1e-300], dtype=torch.float64, requires_grad=True)
    torch.frexp(theirs).mantissa.backward(torch.ones(1, dtype=torch.float64))
    assert theirs.grad.item() == np.inf
    with pytest.raises(TypeError, match="^frexp: expected a floating-point tensor, got dtype int64"):
        F.frexp(minitx.tensor([1, 2]))


@given(elements=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                           elements=st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, np.inf, np.nan])),
       tests=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
                        elements=st.sampled_from([0.0, 1.0, 2.0, -3.0, np.inf, np.nan])),
       as_integers=st.booleans(), invert=st.booleans())
def test_isin_as_numpy_and_pytorch(elements, tests, as_integers, invert):
    if as_integers:  # (integers beside floats compare as numbers)
        elements = np.asarray(np.nan_to_num(elements, nan=7.0, posinf=9.0).astype(np.int64))
    got = F.isin(minitx.tensor(elements), minitx.tensor(tests), invert=invert)
    assert got.dtype.name == "bool" and got.shape == elements.shape
    np.testing.assert_array_equal(got.numpy(), np.isin(elements, tests, invert=invert))
    np.testing.assert_array_equal(got.numpy(), torch.isin(torch.from_numpy(elements), torch.from_numpy(tests),
                                                          invert=invert).numpy())


def test_isin_of_numbers_and_its_errors():
    assert F.isin(3, minitx.tensor([1, 3])).numpy().tolist() is True
    assert F.isin(minitx.tensor([1, 3]), 3, assume_unique=True).numpy().tolist() == [False, True]
    with pytest.raises(TypeError, match="^isin: invert must be True or False, got 1"):
        F.isin(minitx.tensor([1]), minitx.tensor([1]), invert=1)


def test_rsub_is_other_minus_alpha_input_as_pytorchs():
    a, b = np.array([1, 2, 250], np.uint8), np.array([5, 5, 5], np.uint8)
    for alpha in (1, 2, -1):
        ours = F.rsub(minitx.tensor(a), minitx.tensor(b), alpha=alpha)
        theirs = torch.rsub(torch.from_numpy(a), torch.from_numpy(b), alpha=alpha)
        assert ours.dtype.name == "uint8" and ours.numpy().tolist() == theirs.numpy().tolist()
    x = minitx.tensor([1.0, -2.0], requires_grad=True)
    F.rsub(x, 3.0, alpha=0.5).sum().backward()
    assert x.grad.numpy().tolist() == [-0.5, -0.5]


#: gradient's samples: 1 to 3 axes of 3 to 4 (edge_order 2 needs 3)
SAMPLES = mst.shapes(min_dims=1, max_dims=3, min_side=3, max_side=4)


def _spacing_and_axis(x, *_):
    """A number for every axis, or one per axis of a drawn axis list (negative ones too)."""
    axes = st.lists(st.integers(-len(x), len(x) - 1), min_size=1, max_size=len(x), unique_by=lambda a: a % len(x))
    return st.one_of(st.tuples(st.sampled_from([1, 0.5, -2.0]), st.none()),
                     axes.flatmap(lambda a: st.tuples(st.lists(st.sampled_from([1, 0.25, 3.0]), min_size=len(a),
                                                               max_size=len(a)), st.just(a))))


def _numpy_gradient(x, where, edge_order):
    spacing, axis = where
    steps = spacing if isinstance(spacing, list) else [spacing] * (x.ndim if axis is None else len(axis))
    out = np.gradient(x, *steps, axis=None if axis is None else tuple(axis), edge_order=edge_order)
    return np.stack(out if isinstance(out, (list, tuple)) else [out])


test_gradient_with_steps_against_numpy = op_test(
    lambda x, where, edge_order: F.stack(list(F.gradient(x, spacing=where[0], dim=where[1], edge_order=edge_order))),
    arg(), shapes=SAMPLES, kwargs={"where": _spacing_and_axis, "edge_order": st.sampled_from([1, 2])},
    numpy=_numpy_gradient)


def _coordinates(x, *_):
    """Sample points along the last axis: increasing, unevenly spaced."""
    return hnp.arrays(np.float64, x[-1], elements=st.floats(0.2, 2.0)).map(np.cumsum)


# the coordinates' gradient too: their steps enter every weight
test_gradient_at_coordinates_against_numpy = op_test(
    lambda x, t, edge_order: F.gradient(x, spacing=[t], dim=-1, edge_order=edge_order)[0],
    arg(), arg(strategy=_coordinates), shapes=SAMPLES, kwargs={"edge_order": st.sampled_from([1, 2])},
    numpy=lambda x, t, edge_order: np.gradient(x, t, axis=-1, edge_order=edge_order))


def test_gradient_of_coordinates_reaches_them_as_pytorchs():
    x, t = np.array([[1.0, 4.0, 2.0, 0.5], [0.0, 1.0, 3.0, 9.0]]), np.array([0.0, 0.5, 2.0, 2.25])
    for edge_order in (1, 2):
        ours = [minitx.tensor(v, requires_grad=True) for v in (x, t)]
        theirs = [torch.tensor(v, requires_grad=True) for v in (x, t)]
        F.gradient(ours[0], spacing=[ours[1]], dim=1, edge_order=edge_order)[0].sum().backward()
        torch.gradient(theirs[0], spacing=[theirs[1]], dim=1, edge_order=edge_order)[0].sum().backward()
        for mine, other in zip(ours, theirs):
            np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), rtol=1e-13)
    pair = minitx.gradient(minitx.tensor(x))  # (the top level's, PyTorch's: a tuple, one per axis)
    assert isinstance(pair, tuple) and len(pair) == 2


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.gradient(x, edge_order=3), ValueError, "edge_order must be 1 or 2, got 3"),
    (lambda x: F.gradient(x[:, :2], edge_order=2), ValueError,
     r"axis 1 of the input of shape \(3, 2\) has 2 samples; edge_order=2 needs at least 3"),
    (lambda x: F.gradient(x, spacing=[1.0]), ValueError, r"spacing gives 1 entries for 2 axes \(0, 1\)"),
    (lambda x: F.gradient(x, spacing=[minitx.tensor([0.0, 1.0])], dim=0), ValueError,
     r"coordinates for axis 0 must be a 1-d tensor of its 3 samples, got shape \(2,\)"),
    (lambda x: F.gradient(x, spacing="1"), TypeError, "spacing must be a number or a 1-d tensor per axis"),
    (lambda x: F.gradient(x, dim=(0, -2)), ValueError, r"repeated axis in \(0, -2\)"),
    (lambda x: F.gradient(x[0, 0]), ValueError, "expected a tensor with at least one axis"),
])
def test_gradient_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=f"^gradient: {message}"):
        call(minitx.tensor(np.arange(9.0).reshape(3, 3)))


@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64]), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6),
                    elements=st.floats(-50, 50, width=32) | st.sampled_from([0.0, 1.0, 2.5])),
       bins=st.integers(1, 9), data=st.data())
def test_histogram_as_numpy_and_pytorch(x, bins, data):
    """Counts, weights, density and the edges (PyTorch's linspace, bit for bit), with bins as a count or as edges."""
    weight = data.draw(hnp.arrays(x.dtype, x.shape, elements=st.floats(0, 2, width=32)))
    span = data.draw(st.sampled_from([None, (-1.0, 2.0), (3.0, 3.0)]))
    density = data.draw(st.booleans())
    if data.draw(st.booleans()):  # edges given: those drawn, sorted (repeats too)
        bins = np.sort(data.draw(hnp.arrays(x.dtype, bins + 1, elements=st.floats(-60, 60, width=32))))
        span = None
    spanned = {} if span is None else {"range": span}  # (PyTorch's edges form takes no range=, not even None)
    ours = F.histogram(minitx.tensor(x), minitx.tensor(bins) if isinstance(bins, np.ndarray) else bins, **spanned,
                       weight=minitx.tensor(weight), density=density)
    theirs = torch.histogram(torch.from_numpy(x), torch.from_numpy(bins) if isinstance(bins, np.ndarray) else bins,
                             **spanned, weight=torch.from_numpy(weight), density=density)
    assert ours.hist.dtype.name == ours.bin_edges.dtype.name == str(theirs.hist.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.bin_edges.numpy(), theirs.bin_edges.numpy())
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-5, atol=1e-6)
    if not isinstance(bins, np.ndarray) and not density:  # NumPy's counts, on the same edges
        counts, _ = np.histogram(x, ours.bin_edges.numpy().astype(np.float64))
        np.testing.assert_array_equal(F.histogram(minitx.tensor(x), bins, range=span).hist.numpy(), counts)


def test_histogram_of_nothing_of_nan_and_its_errors():
    empty = F.histogram(minitx.tensor(np.zeros(0, np.float32)), 2)
    assert empty.hist.numpy().tolist() == [0.0, 0.0] and empty.bin_edges.numpy().tolist() == [0.0, 0.5, 1.0]
    hist, edges = F.histogram(minitx.tensor([1.0, np.nan, 3.0]), 2, range=(0.0, 4.0))  # NaN not counted
    assert hist.numpy().tolist() == [1.0, 1.0] and edges.numpy().tolist() == [0.0, 2.0, 4.0]
    x = minitx.tensor([1.0, 2.0])
    for call, error, message in (
            (lambda: F.histogram(minitx.tensor([1, 2]), 2), TypeError, "expected a floating-point tensor, got dtype int64"),
            (lambda: F.histogram(x, 0), ValueError, "bins must be a whole number > 0 or a 1-d tensor of edges, got 0"),
            (lambda: F.histogram(minitx.tensor([1.0, np.nan]), 2), ValueError, r"the range \[nan, nan\] is not finite"),
            (lambda: F.histogram(x, 2, range=(2.0, 1.0)), ValueError, "range's minimum must not be larger"),
            (lambda: F.histogram(x, 2, range=(1.0,)), ValueError, r"range must be a pair \(min, max\), got \(1.0,\)"),
            (lambda: F.histogram(x, minitx.tensor([2.0, 1.0])), ValueError, "bin edges must increase"),
            (lambda: F.histogram(x, minitx.tensor([1, 2])), ValueError, "bins as edges must be a 1-d tensor .*int64"),
            (lambda: F.histogram(x, 2, weight=minitx.tensor([1.0])), ValueError, r"weight must have x's shape \(2,\)")):
        with pytest.raises(error, match=f"^histogram: {message}"):
            call()


@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                    hnp.array_shapes(min_dims=2, max_dims=3, min_side=0, max_side=5).filter(lambda s: 1 <= s[-1] <= 3),
                    elements=st.floats(-50, 50, width=32) | st.sampled_from([0.0, 1.0, 2.5])),
       data=st.data())
def test_histogramdd_as_numpy_and_pytorch(x, data):
    """Counts in each cell, weights, density and each axis's edges (PyTorch's, bit for bit), bins one count,
    a count per axis or edges per axis, against torch.histogramdd and NumPy's histogramdd."""
    d = x.shape[-1]
    kind = data.draw(st.sampled_from(["one", "each", "edges"]))
    if kind == "one":
        bins = data.draw(st.integers(1, 4))
    elif kind == "each":
        bins = data.draw(st.lists(st.integers(1, 4), min_size=d, max_size=d))
    else:
        bins = [np.sort(data.draw(hnp.arrays(x.dtype, data.draw(st.integers(2, 5)), elements=st.floats(-60, 60, width=32))))
                for _ in range(d)]
    span = None if kind == "edges" else data.draw(st.sampled_from([None, [-1.0, 2.0] * d, [3.0, 3.0] * d]))
    weight = data.draw(st.none() | hnp.arrays(x.dtype, x.shape[:-1], elements=st.floats(0, 2, width=32)))
    density = data.draw(st.booleans())
    spanned = {} if span is None else {"range": span}
    as_lib = lambda lib, b: [lib(e) for e in b] if kind == "edges" else b  # noqa: E731
    ours = F.histogramdd(minitx.tensor(x), as_lib(minitx.tensor, bins), **spanned,
                         weight=None if weight is None else minitx.tensor(weight), density=density)
    theirs = torch.histogramdd(torch.from_numpy(x), as_lib(torch.from_numpy, bins), **spanned,
                               weight=None if weight is None else torch.from_numpy(weight), density=density)
    assert ours.hist.dtype.name == str(theirs.hist.dtype).removeprefix("torch.") and isinstance(ours.bin_edges, tuple)
    assert len(ours.bin_edges) == len(theirs.bin_edges) == d
    for e, t in zip(ours.bin_edges, theirs.bin_edges):
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-5, atol=1e-6)
    if weight is None and not density and x.size:  # NumPy's counts, on the same edges
        counts, _ = np.histogramdd(x.reshape(-1, d).astype(np.float64), [e.numpy().astype(np.float64)
                                                                         for e in ours.bin_edges])
        np.testing.assert_array_equal(ours.hist.numpy(), counts)


def test_histogramdd_errors_and_tensor_histogram():
    x = minitx.tensor(np.array([[1.0, 2.0], [1.0, 3.0]]))
    hist, edges = x.histogram(2)
    assert hist.numpy().tolist() == [2.0, 2.0] and edges.numpy().tolist() == [1.0, 2.0, 3.0]
    for call, error, message in (
            (lambda: F.histogramdd(minitx.tensor([1.0, 2.0]), 2), ValueError,
             r"x must have at least 2 dimensions \(points along its last axis\), got shape \(2,\)"),
            (lambda: F.histogramdd(x.int(), 2), TypeError, "expected a floating-point tensor, got dtype int32"),
            (lambda: F.histogramdd(x, [2, 3, 4]), ValueError, r"bins must give one count or edges per dimension \(2\), got 3"),
            (lambda: F.histogramdd(x, 2, range=[0.0, 1.0]), ValueError, "range must be 4 numbers"),
            (lambda: F.histogramdd(x, 2, weight=minitx.tensor(np.ones(3))), ValueError,
             r"weight must have x's shape less its last axis \(2,\) and dtype float64, got \(3,\)"),
            (lambda: F.histogramdd(x, [2, 0]), ValueError, "bins must be a whole number > 0")):
        with pytest.raises(error, match=f"^histogramdd: {message}"):
            call()
