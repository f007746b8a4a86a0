"""PyTorch's further elementwise math (minitx/ops/elementwise.py; erfc, erfinv, lgamma, digamma, xlogy
and sinc in minitx/ops/special.py): erfc, erfinv, lgamma, digamma, logaddexp, logaddexp2, xlogy, sinc,
logit, heaviside, fmax, fmin, frac, float_power, ldexp, deg2rad, rad2deg (differentiable), and gcd,
lcm, nextafter, signbit, isposinf, isneginf, isreal, sgn. Each forward against an independent computation (Python's math, mpmath where it has the
function, NumPy's own ufuncs for the others) at a stated accuracy in float64 and float32, float64
gradients on hypothesis-drawn shapes (check_gradients), and PyTorch at the edges: 0, -0, ±inf,
NaN, the poles of lgamma and digamma, erfinv's ±1, integer and boolean inputs (drawn PyTorch
parity: tests/test_torch_op_parity.py, tests/test_integer_inputs.py).

The op classes: Erfc, Erfinv, Lgamma, Digamma, LogAddExp, LogAddExp2, Xlogy, Sinc, Logit,
Heaviside, Fmax, Fmin, Frac, Ldexp.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import arg, check_gradients, leaf, op_case
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

SHAPES = mst.shapes(max_dims=3, max_side=4)
PAIRS = mst.broadcastable_shapes(2, max_dims=3, max_side=4)
INF, NAN = np.inf, np.nan
POLES = (0.0, -1.0, -2.0, -3.0)


def _elementwise(fn):
    """A per-element Python function as a float64 NumPy reference."""
    return lambda *arrays: np.vectorize(fn, otypes=[np.float64])(*arrays)


def _mpmath():
    return pytest.importorskip("mpmath")  # (installed with PyTorch, which CI installs)


# op class -> (minitx function, independent reference, value options per input)
DIFFERENTIABLE = {
    "Erfc": (F.erfc, _elementwise(math.erfc), [{}]),
    "Erfinv": (F.erfinv, None, [{"min_value": -0.99, "max_value": 0.99}]),  # reference: mpmath, below
    "Lgamma": (F.lgamma, _elementwise(math.lgamma), [{"away_from": POLES, "margin": 0.1}]),
    "Digamma": (F.digamma, None, [{"away_from": POLES, "margin": 0.1}]),
    "LogAddExp": (F.logaddexp, lambda a, b: np.log(np.exp(a) + np.exp(b)), [{}, {}]),
    "LogAddExp2": (F.logaddexp2, lambda a, b: np.log2(2.0 ** a + 2.0 ** b), [{}, {}]),
    "Xlogy": (F.xlogy, lambda a, b: a * np.log(b), [{}, {"min_value": 0.1}]),
    "Sinc": (F.sinc, _elementwise(lambda v: math.sin(math.pi * v) / (math.pi * v) if v else 1.0), [{}]),
    "Logit": (F.logit, lambda x: np.log(x) - np.log1p(-x), [{"min_value": 0.05, "max_value": 0.95}]),
    "Logit-eps": (lambda x: F.logit(x, eps=0.2), lambda x: np.log(np.clip(x, 0.2, 0.8) / (1 - np.clip(x, 0.2, 0.8))),
                  [{"min_value": 0.05, "max_value": 0.95, "away_from": (0.2, 0.8)}]),
    "Heaviside": (F.heaviside, np.heaviside, [{"away_from": (0.0,)}, {}]),
    "Fmax": (F.fmax, _elementwise(max), [{"ties": True}, {"ties": True}]),
    "Fmin": (F.fmin, _elementwise(min), [{"ties": True}, {"ties": True}]),
    "Frac": (F.frac, lambda x: np.modf(x)[0], [{"away_from": tuple(float(k) for k in range(-3, 4))}]),
    "float_power": (F.float_power, lambda a, b: a ** b, [{"min_value": 0.1}, {}]),
    "Ldexp": (F.ldexp, lambda x, e: x * 2.0 ** e, [{}, {}]),
    "deg2rad": (F.deg2rad, np.deg2rad, [{"min_value": -400.0, "max_value": 400.0}]),
    "rad2deg": (F.rad2deg, np.rad2deg, [{}]),
}


def _reference(name):
    """The independent reference of ``name``: mpmath's for erfinv and digamma (skipped without it)."""
    fn, reference, _ = DIFFERENTIABLE[name]
    if reference is not None:
        return reference
    mpmath = _mpmath()
    return _elementwise({"Erfinv": lambda v: float(mpmath.erfinv(v)), "Digamma": lambda v: float(mpmath.digamma(v))}
                        [name])


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
@given(data=st.data())
def test_forward_matches_an_independent_reference_and_gradients_check(name, data):
    fn, _, options = DIFFERENTIABLE[name]
    case = op_case(fn, *(arg(**o) for o in options), numpy=_reference(name), broadcast=len(options) > 1,
                   shapes=PAIRS if len(options) > 1 else SHAPES, rtol=1e-13, atol=1e-14)
    case(data)


# where each formula changes hands (sinc's series at |pi x| = 0.1, erf's and erfc's at 1.5, erfinv's
# Newton steps at 1/2, the gamma functions' recurrence at 10 and reflection at 0) and near the poles
SWITCHES = {
    "Sinc": (F.sinc, [[1e-3, 0.0318, -0.0319, 0.05, 2.5]]),
    "Erfc": (F.erfc, [[1.49, 1.51, -1.5, 5.0, 10.0]]),
    "Erfinv": (F.erfinv, [[0.49, 0.51, -0.999, 0.9999, 1e-3]]),
    "Lgamma": (F.lgamma, [[-0.5, -2.9, 0.01, 9.9, 10.1, 25.0]]),
    "Digamma": (F.digamma, [[-0.5, -2.9, 0.01, 9.9, 10.1, 25.0]]),
    "Logit": (lambda x: F.logit(x, 1e-3), [[0.01, 0.99, 0.5]]),
    "LogAddExp": (F.logaddexp, [[-30.0, 0.0, 30.0], [30.0, 0.1, -30.0]]),
    "LogAddExp2": (F.logaddexp2, [[-30.0, 0.0, 30.0], [30.0, 0.1, -30.0]]),
    "Xlogy": (F.xlogy, [[0.5, -2.0, 3.0], [0.01, 5.0, 1e3]]),
    "Heaviside": (F.heaviside, [[-1.0, 2.0, 0.5], [0.3, 0.3, 0.3]]),
    "Fmax": (F.fmax, [[1.0, 2.0, -3.0], [2.0, 1.0, -4.0]]),
    "Fmin": (F.fmin, [[1.0, 2.0, -3.0], [2.0, 1.0, -4.0]]),
    "Frac": (F.frac, [[0.3, -1.7, 5.5]]),
}


@pytest.mark.parametrize("name", list(SWITCHES))
def test_gradients_where_the_formulas_switch(name):
    fn, inputs = SWITCHES[name]
    assert check_gradients(fn, *(leaf(v) for v in inputs))


def test_erfc_is_exact_where_erfc_is_tiny_and_one_minus_erf_would_be_zero():
    """erfc to 2e-14 relative from -6 to 26 (erfc(26) = 5.7e-296) in float64, to float32's
    rounding in float32 (there to its smallest normal number), and across the switch at 1.5."""
    x = np.concatenate([np.linspace(-6, 26, 20001), [1.4999999999, 1.5, -1.5, 0.0, 1e-300]])
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(F.erfc(leaf(x)).numpy(), expected, rtol=2e-14, atol=0)
    x32 = np.linspace(-10, 9, 20001).astype(np.float32)
    expected32 = np.array([math.erfc(v) for v in x32.astype(np.float64)])
    got = F.erfc(minitx.tensor(x32)).numpy()
    assert got.dtype == np.float32
    normal = expected32 > np.finfo(np.float32).tiny
    np.testing.assert_allclose(got[normal], expected32[normal], rtol=2 ** -23, atol=0)
    assert F.erfc(leaf(np.array([30.0, INF, -INF, NAN]))).numpy().tolist()[:3] == [0.0, 0.0, 2.0]
    np.testing.assert_allclose(F.erf(leaf(x)).numpy(), [math.erf(v) for v in x], rtol=4e-15, atol=1e-300)


def test_erfinv_is_exact_up_to_one_and_inverts_erf():
    """erfinv to 1e-14 relative in float64 against mpmath, from 1e-300 to 1 - 1.1e-16 (where erf is
    too flat for a Newton step on erf), and erfc of it gives back 1 - z; float32 to 2 of its units."""
    mpmath = _mpmath()
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.uniform(-1, 1, 400), 1 - 10 ** rng.uniform(-16, -1, 300), [1 - 2 ** -53, 0.5, 1e-300]])
    expected = np.array([float(mpmath.erfinv(v)) for v in z])
    got = F.erfinv(leaf(z)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    far = z > 0.5
    np.testing.assert_allclose([math.erfc(v) for v in got[far]], 1 - z[far], rtol=1e-13)
    z32 = z.astype(np.float32)
    z32 = z32[np.abs(z32) < 1]
    expected32 = np.array([float(mpmath.erfinv(float(v))) for v in z32])
    np.testing.assert_allclose(F.erfinv(minitx.tensor(z32)).numpy(), expected32, rtol=2 * 2 ** -24)


def test_lgamma_digamma_and_digammas_gradient_against_math_and_mpmath():
    """lgamma to 1e-14 of max(1, |lgamma|) (near its zeros 1 and 2 the recurrence leaves an absolute
    error), digamma likewise, and trigamma (digamma's gradient) to 1e-14 relative, in float64 over
    negative, small and huge arguments; in float32 to about a unit of float32."""
    mpmath = _mpmath()
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-30, 30, 400), rng.uniform(0, 3, 200), 10 ** rng.uniform(-300, 4, 60),
                        -(10 ** rng.uniform(-5, 4, 60)), [1.0, 2.0, 0.5, 1.4616321449683622]])
    x = x[(x > 0) | (x != np.round(x))]
    scale = lambda v: np.maximum(np.abs(v), 1.0)  # noqa: E731
    lg = np.array([math.lgamma(v) for v in x])
    assert np.all(np.abs(F.lgamma(leaf(x)).numpy() - lg) <= 1e-14 * scale(lg))
    t = leaf(x)
    dg = F.digamma(t)
    expected = np.array([float(mpmath.digamma(v)) for v in x])
    assert np.all(np.abs(dg.numpy() - expected) <= 1e-14 * scale(expected))
    dg.backward(np.ones_like(x))
    moderate = np.abs(x) > 1e-150  # (trigamma of 1e-300 is past float64's range: inf)
    trigamma = np.array([float(mpmath.psi(1, v)) for v in x[moderate]])
    np.testing.assert_allclose(t.grad.numpy()[moderate], trigamma, rtol=1e-14)
    x32 = x[np.abs(x) < 30].astype(np.float32)
    x32 = x32[(x32 > 0) | (x32 != np.round(x32))]  # (rounded to float32, some are poles)
    lg32 = np.array([math.lgamma(v) for v in x32.astype(np.float64)])
    assert np.all(np.abs(F.lgamma(minitx.tensor(x32)).numpy() - lg32) <= 2 ** -23 * scale(lg32))


def test_the_special_functions_at_their_edges_as_pytorch():
    """Values and gradients at 0, -0, the poles, ±inf, NaN and erfinv's ±1, as PyTorch's; but
    digamma's gradient at its poles (the negative integers) is inf, where PyTorch's is a large
    finite number (its pi x rounded off the pole), and its trigamma is off by 1e-9 relative near
    the positive root of digamma (fewer asymptotic terms), so gradients compare to 1e-8 there."""
    torch = import_torch()
    edges = [0.0, -0.0, -1.0, -2.0, -2.5, 1.0, 2.0, INF, -INF, NAN, 0.5, 1e-300, -1e-300, 1e308, -1e20, 171.6, 3.7]
    parity(F.lgamma, torch.lgamma, leaf(edges))
    parity(F.erfc, torch.erfc, leaf([0.0, -0.0, INF, -INF, NAN, 10.0, 26.0, -3.0, 1.5, 0.3]))
    parity(F.erfinv, torch.erfinv, leaf([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, NAN, 0.5, -0.999999, 1 - 2 ** -53, 1e-300]))
    off_poles = [v for v in edges if not (-INF < v < 0 and v == round(v))]
    parity(F.digamma, torch.digamma, leaf(off_poles), rtol=1e-8)
    poles = leaf([-1.0, -2.0, -1e20, -INF])
    F.digamma(poles).backward(np.ones(4))
    np.testing.assert_array_equal(F.digamma(poles).numpy(), torch.digamma(torch.tensor(poles.numpy())).numpy())
    np.testing.assert_array_equal(poles.grad.numpy(), [INF, INF, INF, NAN])


def test_the_other_ops_at_their_edges_as_pytorch():
    torch = import_torch()
    a = [INF, -INF, INF, -INF, NAN, 1.0, 0.0, 2.5, -700.0, 0.0, 0.0, -0.0]
    b = [INF, -INF, -INF, 1.0, 1.0, NAN, 0.0, -1.0, 700.0, -1.0, INF, 2.0]
    for ours, theirs in ((F.logaddexp, torch.logaddexp), (F.logaddexp2, torch.logaddexp2), (F.xlogy, torch.xlogy),
                         (F.fmax, torch.fmax), (F.fmin, torch.fmin), (F.float_power, torch.float_power)):
        parity(ours, theirs, leaf(a), leaf(b))
    parity(F.sinc, torch.sinc, leaf([0.0, -0.0, 1.0, 0.5, -2.7, INF, -INF, NAN, 3.0]))
    parity(F.frac, torch.frac, leaf([1.5, -1.5, INF, -INF, NAN, 0.0, -0.0, 1e300, 2.75]))
    unit = [0.0, -0.0, 1.0, 0.5, -0.1, 1.2, NAN, 0.1, 0.9, 0.05, INF]  # (-0.0: the slope +inf, as at 0)
    parity(F.logit, torch.logit, leaf(unit))
    parity(lambda x: F.logit(x, 0.1), lambda x: torch.logit(x, 0.1), leaf(unit))
    for ours, theirs in ((F.deg2rad, torch.deg2rad), (F.rad2deg, torch.rad2deg)):
        parity(ours, theirs, leaf([180.0, -45.0, INF, NAN, 0.0]))
    parity(F.ldexp, torch.ldexp, leaf([1.5, 2.0, -3.0, INF]), leaf([3.0, -1.0, 0.5, 1.0]))


def test_ldexp_exponent_gradient_keeps_a_tiny_x_lifted_in_float16():
    """de = dy * y * ln 2 from the output: taken as (dy * x) * 2^e ln 2 (PyTorch's chain, and ldexp's
    as the product x * exp2(e)), dy * x underflows float16 at x = 2^-23 though y = 2^-18 does not."""
    x, e = (minitx.tensor(np.array([v], np.float16), requires_grad=True) for v in (2.0 ** -23, 5.0))
    F.ldexp(x, e).backward(np.array([0.135], np.float16))
    assert e.grad.dtype == np.float16
    np.testing.assert_allclose(e.grad.numpy(), [0.135 * 2.0 ** -18 * math.log(2)], rtol=0.1)
    np.testing.assert_array_equal(x.grad.numpy(), np.array([0.135 * 32], np.float16))


def test_sinc_gradient_is_exact_near_zero():
    """(cos(pi x) - y) / x cancels near 0 (PyTorch's gives 0 at 1e-10, the slope being -3.3e-10):
    the series keeps it exact, and continuous across |pi x| = 0.1."""
    x = leaf([1e-10, -1e-5, 0.1 / math.pi * (1 - 1e-12), 0.1 / math.pi * (1 + 1e-12), 1e-300, 0.0])
    F.sinc(x).backward(np.ones(6))
    t = math.pi * x.numpy()
    exact = [math.pi * (math.cos(v) - math.sin(v) / v) / v if abs(v) > 0.05 else
             math.pi * (-v / 3 + v ** 3 / 30) for v in t[:5]]
    np.testing.assert_allclose(x.grad.numpy()[:5], exact, rtol=1e-14)
    assert x.grad.numpy()[5] == 0


def test_xlogy_is_zero_times_log_zero_and_its_gradient_as_pytorchs():
    """0 ln 0 = 0, 0 ln(-1) = 0, 0 ln NaN = NaN; dx is 0 where x = 0 and y <= 0, ln y elsewhere."""
    torch = import_torch()
    a, b = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0], [0.0, -1.0, NAN, INF, 3.0, 0.0, 0.5]
    y = parity(F.xlogy, torch.xlogy, leaf(a), leaf(b))
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, NAN, 0.0, 0.0, -INF, 2 * math.log(0.5)])
    parity(lambda v: F.xlogy(2.0, v), lambda v: torch.xlogy(2.0, v), leaf([0.5, 3.0]))


@pytest.mark.parametrize("fn", [F.fmax, F.fmin])
def test_fmax_and_fmin_ignore_nan_and_give_a_tie_to_the_first(fn):
    x, y = leaf([1.0, NAN, NAN, 2.0, -0.0]), leaf([NAN, 1.0, NAN, 2.0, 0.0])
    out = fn(x, y)
    np.testing.assert_array_equal(out.numpy(), [1.0, 1.0, NAN, 2.0, 0.0])
    out.backward(np.ones(5))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 1.0, 0.0, 0.0, 0.0])


def test_heaviside_takes_values_at_zero_keeps_nan_and_gives_values_its_gradient():
    """values where x = 0 (its gradient there: PyTorch has none); NaN stays NaN (PyTorch: 0)."""
    torch = import_torch()
    x, values = leaf([-1.0, 0.0, -0.0, 2.0, INF, -INF]), leaf([0.5, 0.25, 0.7, 3.0, 1.0, 4.0])
    y = F.heaviside(x, values)
    np.testing.assert_array_equal(y.numpy(), torch.heaviside(torch.tensor(x.numpy()), torch.tensor(values.numpy())))
    y.backward(np.arange(6.0))
    np.testing.assert_array_equal(values.grad.numpy(), [0, 1, 2, 0, 0, 0])
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(6))
    np.testing.assert_array_equal(F.heaviside(leaf([NAN, 0.0]), 0.5).numpy(), [NAN, 0.5])
    assert F.heaviside(minitx.tensor([-2, 0, 3]), minitx.tensor([7])).numpy().tolist() == [0, 7, 1]


def test_integer_ops_gcd_lcm_and_their_refusals():
    torch = import_torch()
    rng = np.random.default_rng(2)
    a, b = rng.integers(-60, 60, (3, 5)), rng.integers(-60, 60, (5,))
    for ours, theirs, exact in ((F.gcd, torch.gcd, math.gcd), (F.lcm, torch.lcm, math.lcm)):
        got = ours(minitx.tensor(a), minitx.tensor(b))
        assert got.dtype == np.int64 and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), np.vectorize(exact)(a, b))
        np.testing.assert_array_equal(got.numpy(), theirs(torch.tensor(a), torch.tensor(b)).numpy())
        assert ours(minitx.tensor(a, dtype="int32"), 6).dtype == np.int32
        for bad in (minitx.tensor([1.0]), minitx.tensor([True])):
            with pytest.raises(TypeError, match=rf"^{ours.__name__}: defined for integer tensors"):
                ours(bad, minitx.tensor([2]))
    x = minitx.tensor([12])
    x.gcd_(minitx.tensor([18]))
    assert x.numpy().tolist() == [6]


def test_nextafter_and_the_value_tests_as_pytorchs():
    torch = import_torch()
    values = np.array([1.0, 0.0, -0.0, INF, -INF, NAN, -2.5, 1e-45])
    for dtype in ("float64", "float32"):
        a, b = values.astype(dtype), np.array([2.0, -1.0, 1.0, 0.0, 0.0, 1.0, -3.0, 0.0], dtype)
        got = F.nextafter(minitx.tensor(a), minitx.tensor(b))
        if dtype == "float64":  # (Python's nextafter is float64's)
            np.testing.assert_array_equal(got.numpy(), [math.nextafter(u, v) for u, v in zip(a, b)])
        np.testing.assert_array_equal(got.numpy(), torch.nextafter(torch.tensor(a), torch.tensor(b)).numpy())
        assert got.dtype == dtype
    with pytest.raises(TypeError, match="^nextafter: defined for floating tensors"):
        F.nextafter(minitx.tensor([1]), 2)
    signed = np.array([-0.0, 0.0, -NAN, NAN, -INF, INF, -1.0, 3.0])
    for name in ("signbit", "isposinf", "isneginf", "isreal"):
        for data in (signed, np.array([-3, 0, 5]), np.array([True, False]), np.array([0, 7], np.uint8)):
            got = getattr(minitx.tensor(data), name)()
            assert got.dtype == np.bool_ and not got.requires_grad
            np.testing.assert_array_equal(got.numpy(), getattr(torch, name)(torch.tensor(data)).numpy(), err_msg=name)


def test_sgn_is_sign_for_real_tensors():
    x = leaf([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(F.sgn(x).numpy(), F.sign(x).numpy())
    assert F.sgn(minitx.tensor([True, False])).numpy().tolist() == [True, False]


def test_frac_refuses_integers_naming_the_op_and_logit_eps_must_be_a_number():
    with pytest.raises(TypeError, match="^frac: defined for floating tensors"):
        F.frac(minitx.tensor([1, 2]))
    with pytest.raises(TypeError, match="^logit: eps must be a number"):
        F.logit(minitx.tensor([0.5]), eps="0.1")


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32", "float16", "bfloat16"])
def test_float_power_is_float64_and_its_gradient_comes_back_in_the_inputs_dtype(dtype):
    torch = import_torch()
    base = minitx.tensor([1, 2, 3]).to(dtype=dtype)
    out = F.float_power(base, -1)
    expected = torch.float_power(torch.tensor([1, 2, 3]).to(getattr(torch, dtype)), -1)
    assert out.dtype == np.float64 and str(expected.dtype) == "torch.float64"
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    if dtype.startswith(("float", "bfloat")):
        x, tx = base.detach().requires_grad_(True), expected.new_tensor([1, 2, 3], dtype=getattr(torch, dtype)).requires_grad_()
        F.float_power(x, 2.5).sum().backward()
        torch.float_power(tx, 2.5).sum().backward()
        assert x.grad.dtype.name == dtype
        np.testing.assert_array_equal(x.grad.numpy().astype(np.float64), tx.grad.double().numpy())


# (method, arguments besides the tensor): each against PyTorch's method, values and gradients, and
# its in-place form where PyTorch has one
METHODS = [("erfc", ()), ("erfinv", ()), ("lgamma", ()), ("digamma", ()), ("sinc", ()), ("logit", ()),
           ("logit", (0.2,)), ("frac", ()), ("sgn", ()), ("deg2rad", ()), ("rad2deg", ()), ("logaddexp", ("other",)),
           ("logaddexp2", ("other",)), ("xlogy", ("other",)), ("fmax", ("other",)), ("fmin", ("other",)),
           ("float_power", (1.5,)), ("ldexp", ("other",))]
IN_PLACE = {"erfc", "erfinv", "lgamma", "digamma", "sinc", "logit", "frac", "sgn", "deg2rad", "rad2deg", "xlogy",
            "ldexp"}


@pytest.mark.parametrize("name, args", METHODS, ids=[f"{n}{a}" for n, a in METHODS])
def test_methods_and_in_place_forms_as_pytorchs(name, args):
    torch = import_torch()
    rng = np.random.default_rng(3)
    values, other = rng.uniform(0.05, 0.95, (2, 3)), rng.uniform(0.1, 2.0, (3,))

    def call(x, library, method):
        given = [library.tensor(other) if a == "other" else a for a in args]
        return getattr(x, method)(*given)

    # (sgn's gradient is 0, which PyTorch holds as a ZeroTensor that has no array to compare)
    parity(lambda x: call(x, minitx, name), lambda x: call(x, torch, name), leaf(values, requires_grad=name != "sgn"),
           rtol=1e-8)
    if name in IN_PLACE:
        ours, theirs = minitx.tensor(values), torch.tensor(values)
        assert call(ours, minitx, name + "_") is ours
        call(theirs, torch, name + "_")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_and_xlog1py_take_pytorchs_dtype_for_every_pair(name):
    """Every pair of dtypes and Python numbers gives PyTorch's result dtype: a number beside a 16-bit
    tensor keeps the tensor's (it had become float32), integers as float32, float64 beside float32 float64."""
    torch = import_torch()
    kinds = ["float16", "bfloat16", "float32", "float64", "int64", "uint8", "bool", 2.0, 2]
    ours, theirs = getattr(minitx.special, name), getattr(torch.special, name)

    def make(kind, library):
        if not isinstance(kind, str):
            return kind
        return minitx.ones(3, dtype=kind) if library is minitx else torch.ones(3, dtype=getattr(torch, kind))

    for a in kinds:
        for b in kinds:
            if isinstance(a, str) or isinstance(b, str):
                got = ours(make(a, minitx), make(b, minitx)).dtype.name
                expected = str(theirs(make(a, torch), make(b, torch)).dtype).removeprefix("torch.")
                assert got == expected, (name, a, b, got, expected)
