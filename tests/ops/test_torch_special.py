"""minitx.special (minitx/special.py), as torch.special: each name is torch.special's, its values and
gradients PyTorch's on drawn inputs and at the edges (0, ±inf, NaN, the poles); and the functions
new with it (minitx/ops/special.py, i0 and i1 in bessel.py): polygamma, i0, i1, xlog1py, entr, ndtr,
log_ndtr, each forward against an independent reference (mpmath, where it has the function, else
NumPy), float64 gradients on hypothesis-drawn shapes, and the accuracy each docstring states on wide grids.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
import minitx.special as S
from minitx.testing import arg, check_gradients, leaf, op_case
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

SHAPES = mst.shapes(max_dims=3, max_side=4)
PAIRS = mst.broadcastable_shapes(2, max_dims=3, max_side=4)
INF, NAN = np.inf, np.nan
POLES = (0.0, -1.0, -2.0, -3.0)


def _mpmath():
    mpmath = pytest.importorskip("mpmath")  # (installed with PyTorch, which CI installs)
    mpmath.mp.dps = 40
    return mpmath


def _elementwise(fn):
    """A per-element Python function as a float64 NumPy reference."""
    return lambda *arrays: np.vectorize(fn, otypes=[np.float64])(*arrays)


# torch.special's second group (tests/ops/test_torch_special_second.py)
SECOND_GROUP = {"erfcx", "ndtri", "i0e", "i1e", "zeta", "gammainc", "gammaincc", "multigammaln"}
# torch.special's name -> minitx's function object it must be (the names minitx had before the namespace)
SAME_OBJECTS = {"erf": F.erf, "erfc": F.erfc, "erfinv": F.erfinv, "expit": F.sigmoid, "logit": F.logit,
                "xlogy": F.xlogy, "gammaln": F.lgamma, "digamma": F.digamma, "psi": F.digamma, "sinc": F.sinc,
                "log_softmax": F.log_softmax, "softmax": F.softmax, "logsumexp": F.logsumexp, "round": F.round,
                "expm1": F.expm1, "exp2": F.exp2, "log1p": F.log1p, "polygamma": F.polygamma, "i0": F.i0,
                "modified_bessel_i0": F.i0}


def test_every_name_is_torch_specials_and_the_old_ones_are_minitxs_own_functions():
    torch = import_torch()
    assert set(S.__all__) <= set(dir(torch.special))
    assert {name: getattr(S, name) for name in SAME_OBJECTS} == SAME_OBJECTS
    # (tests/ops/test_bessel.py's; I_0 and I_1, bessel.py's too, are tested here and in test_torch_special_second.py)
    bessel = {name for name in S.__all__ if S.__dict__[name].__module__ == "minitx.ops.bessel"
              and S.__dict__[name] not in (S.i0, S.i1, S.i0e, S.i1e)}
    assert minitx.special is S and set(S.__all__) - set(SAME_OBJECTS) - bessel == {
        "i1", "modified_bessel_i1", "xlog1py", "entr", "ndtr", "log_ndtr", *SECOND_GROUP}
    assert len(bessel) == 22 and S.modified_bessel_i1 is S.i1


# torch.special's name -> value options per input, each compared with torch.special's
PARITY = {
    "erf": [{}], "erfc": [{}], "erfinv": [{"min_value": -0.99, "max_value": 0.99}], "expit": [{}],
    "logit": [{"min_value": 0.05, "max_value": 0.95}], "gammaln": [{"away_from": POLES, "margin": 0.1}],
    "digamma": [{"away_from": POLES, "margin": 0.1}], "psi": [{"away_from": POLES, "margin": 0.1}],
    "sinc": [{"away_from": (0.0,), "margin": 0.01}],  # (PyTorch's gradient cancels near 0, minitx's takes a series)
    "expm1": [{}], "exp2": [{}], "log1p": [{"min_value": -0.9}], "i0": [{}], "i1": [{}],
    "entr": [{"min_value": 0.05}], "ndtr": [{}], "log_ndtr": [{}], "xlogy": [{}, {"min_value": 0.1}],
    "xlog1py": [{}, {"min_value": -0.9}], "round": [{"away_from": (-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)}],
}


@pytest.mark.parametrize("name", list(PARITY))
@given(data=st.data())
def test_values_and_gradients_are_torch_specials_on_drawn_inputs(name, data):
    torch = import_torch()
    options = PARITY[name]
    case = op_case(getattr(S, name), *(arg(**o) for o in options), torch=getattr(torch.special, name),
                   broadcast=len(options) > 1, shapes=PAIRS if len(options) > 1 else SHAPES, rtol=1e-12, atol=1e-13,
                   gradcheck=False)
    case(data)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_the_reductions_take_torch_specials_dim(name):
    torch = import_torch()
    x = np.random.default_rng(0).standard_normal((3, 4))
    parity(lambda v: getattr(S, name)(v, dim=1), lambda v: getattr(torch.special, name)(v, dim=1), leaf(x))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@given(data=st.data())
def test_polygamma_is_torchs_on_drawn_inputs(n, data):
    """To 1e-8: PyTorch's trigamma is off by about 1e-9 relative (fewer asymptotic terms; mpmath holds
    minitx's to 1e-14, test_polygamma_to_float64_rounding_against_mpmath)."""
    torch = import_torch()
    case = op_case(lambda x: S.polygamma(n, x), arg(min_value=0.2, max_value=40.0), torch=lambda x: torch.special.polygamma(n, x),
                   shapes=SHAPES, rtol=1e-8, atol=1e-13, gradcheck=False, grad_rtol=1e-8)
    case(data)


# op -> (minitx function, independent reference, value options per input)
NEW = {
    "Xlog1py": (S.xlog1py, lambda a, b: a * np.log1p(b), [{}, {"min_value": -0.9}]),
    "Entr": (S.entr, lambda x: -x * np.log(x), [{"min_value": 0.05}]),
    "ndtr": (S.ndtr, "ncdf", [{"min_value": -10.0, "max_value": 10.0}]),
    "LogNdtr": (S.log_ndtr, "log_ncdf", [{"min_value": -40.0, "max_value": 10.0}]),
    "I0": (S.i0, "i0", [{"min_value": -60.0, "max_value": 60.0}]),
    "I1": (S.i1, "i1", [{"min_value": -60.0, "max_value": 60.0}]),
    "Polygamma-2": (lambda x: S.polygamma(2, x), "polygamma2", [{"min_value": 0.1, "max_value": 50.0}]),
    "Polygamma-3": (lambda x: S.polygamma(3, x), "polygamma3", [{"min_value": -3.0, "max_value": 50.0,
                                                                 "away_from": POLES, "margin": 0.2}]),
}


def _reference(name):
    _, reference, _ = NEW[name]
    if callable(reference):
        return reference
    mp = _mpmath()
    return _elementwise({"ncdf": lambda v: float(mp.ncdf(v)), "log_ncdf": lambda v: float(mp.log(mp.ncdf(v))),
                         "i0": lambda v: float(mp.besseli(0, v)), "i1": lambda v: float(mp.besseli(1, v)),
                         "polygamma2": lambda v: float(mp.polygamma(2, v)),
                         "polygamma3": lambda v: float(mp.polygamma(3, v))}[reference])


@pytest.mark.parametrize("name", list(NEW))
@given(data=st.data())
def test_forward_matches_an_independent_reference_and_gradients_check(name, data):
    fn, _, options = NEW[name]
    case = op_case(fn, *(arg(**o) for o in options), numpy=_reference(name), broadcast=len(options) > 1,
                   shapes=PAIRS if len(options) > 1 else SHAPES, rtol=1e-13, atol=1e-300)
    case(data)


# where each formula changes hands: the Bessel series at |x| = 40 and i1 at 0, log_ndtr's at -20 and 0,
# polygamma's recurrence at 30 (and its cot(pi x) at x - round(x) = ±1/4), entr near 0
SWITCHES = {
    "i0": (S.i0, [[39.999, 40.001, -40.0, 0.0, 1e-3]]),
    "i1": (S.i1, [[39.999, 40.001, -40.0, 0.0, 1e-3, -2.0]]),
    "log_ndtr": (S.log_ndtr, [[-20.001, -19.999, -20.0, -1e-3, 1e-3, 8.0, -300.0]]),
    "ndtr": (S.ndtr, [[-30.0, -5.0, 0.0, 7.0]]),
    "polygamma-2": (lambda x: S.polygamma(2, x), [[29.999, 30.001, -0.5, -2.7, 1e-2, -3.2499, -3.2501, -0.7499]]),
    "polygamma-1": (lambda x: S.polygamma(1, x), [[9.9, 10.1, -0.5, 0.3]]),
    "entr": (S.entr, [[1e-3, 0.5, 1.0, 3.0]]),
    "xlog1py": (S.xlog1py, [[0.5, -2.0, 3.0], [-0.99, 5.0, 1e-9]]),
}


@pytest.mark.parametrize("name", list(SWITCHES))
def test_gradients_where_the_formulas_switch(name):
    fn, inputs = SWITCHES[name]
    assert check_gradients(fn, *(leaf(v) for v in inputs))


def test_polygamma_to_float64_rounding_against_mpmath():
    """polygamma(n, x) to 1e-14 relative for n = 0..10 over x in (0, 1e6); for x < 0 (n = 0 and 1 to 1e-12)
    n >= 2's reflection (-1)^n polygamma(n, 1 - x) - pi^(n+1) C_n(cot(pi x)) to 4e-15 of its two terms'
    sizes (mpmath's), relative for n odd, whose terms have one sign (the direct sum from x up is 1e-13
    relative off at x = -17.500018, cot(pi x) from tan(pi x) alone 1e-12)."""
    mp = _mpmath()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(0, 3, 60), rng.uniform(3, 100, 40), 10 ** rng.uniform(-5, 6, 40), [29.999, 30.0]])
    negative = np.concatenate([-rng.uniform(0.05, 30, 40), -rng.uniform(30, 300, 10), [-17.500018087657356, -0.75]])
    for n in range(11):
        expected = np.array([float(mp.polygamma(n, v)) for v in x])
        np.testing.assert_allclose(S.polygamma(n, leaf(x)).numpy(), expected, rtol=1e-14 if n else 4e-14, atol=0,
                                   err_msg=f"n = {n}")
        expected = np.array([float(mp.polygamma(n, v)) for v in negative])
        got = S.polygamma(n, leaf(negative)).numpy()
        if n < 2:
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=f"n = {n}")
        else:
            reflected = (-1) ** n * np.array([float(mp.polygamma(n, 1 - v)) for v in negative])
            terms = np.abs(reflected) + np.abs(reflected - expected)
            assert np.all(np.abs(got - expected) <= 4e-15 * terms), f"n = {n}"


# polygamma(n, x) far below 0 (mpmath 1.3.0's polygamma at 40 digits, rounded to float64); at the half
# integers n even's cot terms vanish and polygamma is -n! zeta(n + 1, 1 - x), tiny (PyTorch's direct sum,
# off by about eps times its largest term 2^(n+1) n!, keeps none of it: -9.99984e-11 and +5e-14)
FAR_BELOW = [(2, -100000.3, 68.83754371219696), (3, -250000.7, 769.0209144468515),
             (4, -1000000.25, 24481.574782822518), (2, -100000.5, -9.99980000274997e-11),
             (4, -100000.5, -5.99976000549991e-20)]


def test_polygamma_far_below_zero_by_the_reflection():
    """polygamma(n >= 2, x) for x far below 0 (where the recurrence alone would step x up |x| times, as PyTorch's
    direct sum does): mpmath's values to 1e-14 relative, PyTorch's to 1e-12 where its sum ends quickly enough
    (|x| <= 1e6), the poles inf (x = -1e20 and -2^60 are whole numbers), and float64 gradients at negative x
    off the poles, below -1e5 too."""
    torch = import_torch()
    for n, x, expected in FAR_BELOW:
        np.testing.assert_allclose(S.polygamma(n, leaf([x])).numpy(), [expected], rtol=1e-14, atol=0,
                                   err_msg=f"n = {n}")
    x = [-100000.3, -123456.789, -999999.9, -1e6 - 0.25, -3.1e5 + 0.4999]
    for n in (2, 3, 4, 7):
        parity(lambda v: S.polygamma(n, v), lambda v: torch.special.polygamma(n, v), leaf(x), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(S.polygamma(2, leaf([-1e20, -2.0 ** 60, -1e15 - 0.5])).numpy()[:2], [-INF, -INF])
    with minitx.backend.count_host_reads() as reads:   # a read a step of the recurrence, from 1 - x up to 30
        assert np.isfinite(S.polygamma(2, leaf([-1e15 - 0.5, -123.4, 1e-3])).numpy()).all()   # (a direct sum: 1e15)
    assert reads.count <= 31
    negative = [-0.5, -2.7, -17.500018, -40.25, -100000.3, -2.6e5 - 0.6]
    for n in (2, 3, 4):
        assert check_gradients(lambda v: S.polygamma(n, v), leaf(negative))


# polygamma(n, x) where n! (n > 170) or zeta(n + 1, 1 - x) (below 1e-304) leaves float64 though the value
# does not: mpmath 1.3.0's polygamma at 3,000 digits (which the half integers' cancellation asks for),
# rounded to float64. PyTorch's gives inf, -inf, 0 or NaN at all of these.
BEYOND_FACTORIALS = [(171, 2.0, 2.073093314165313e+257), (171, 10.0, 1.2410181644579104e+137),
                     (172, 200.0, -3.0914370658031885e-87), (200, 10.0, -7.886578711401554e+173),
                     (1000, 200.0, -1.8905027830329133e+264), (150, 200.0, -3.7942152199759047e-85),
                     (170, 100.0, -8.884119378185605e-36), (150, -100.5, -7.819868158545691e-41),
                     (200, -100.5, -4.59854740538407e-29), (172, -0.5, -7.33700365622151e+280),
                     (170, -100.5, -7.004789542314288e-37), (100, -1100.3, 6.036106976029145e+210)]


def test_polygamma_beyond_the_largest_factorial():
    """polygamma(n, x) where n! or zeta(n + 1, x) alone leaves float64 but their product does not: mpmath's
    values (BEYOND_FACTORIALS) to 1e-12 relative (n! / u^(n+1) is taken through its logarithm), no
    OverflowError for n > 170; the overflowing values ±inf with the sign of the pole nearest x, underflow 0;
    and polygamma(170)'s gradient, which is polygamma(171). Below 1e-304 and to 170! the direct sum keeps
    every bit (polygamma(3, 1e100) = 6 / (3 x^3) = 2e-300)."""
    for n, x, expected in BEYOND_FACTORIALS:
        np.testing.assert_allclose(S.polygamma(n, leaf([x])).numpy(), [expected], rtol=1e-12, atol=0,
                                   err_msg=f"polygamma({n}, {x})")
    np.testing.assert_array_equal(S.polygamma(3, leaf([1e100])).numpy(), [2e-300])
    got = {n: S.polygamma(n, leaf([-0.3, -2.7, 1.0, 0.5, 1e5, -3.0])).numpy() for n in (171, 172)}
    np.testing.assert_array_equal(got[171], [INF, INF, INF, INF, 0.0, INF])   # n odd: every term positive
    np.testing.assert_array_equal(got[172], [INF, -INF, -INF, -INF, -0.0, -INF])   # the nearest pole's side
    assert np.signbit(got[172][4]) and not np.signbit(got[171][4])
    x = leaf([10.0, 200.0])
    S.polygamma(170, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), S.polygamma(171, leaf([10.0, 200.0])).numpy())


def test_i0_and_i1_to_float64_rounding_against_mpmath():
    """I0 and I1 to 4e-15 relative from 1e-300 to 713 (where I0 is near float64's largest number),
    both signs, across the switch at 40; float32 to its rounding."""
    mp = _mpmath()
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-60, 60, 300), 10 ** rng.uniform(-300, 2.85, 100), [39.999999, 40.0, 713.0]])
    for nu, fn in ((0, S.i0), (1, S.i1)):
        expected = np.array([float(mp.besseli(nu, v)) for v in x])
        np.testing.assert_allclose(fn(leaf(x)).numpy(), expected, rtol=4e-15, atol=0, err_msg=f"I{nu}")
        x32 = np.linspace(-80, 80, 1001).astype(np.float32)
        expected32 = np.array([float(mp.besseli(nu, float(v))) for v in x32])
        got = fn(minitx.tensor(x32)).numpy()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected32, rtol=2 ** -24, atol=0)


def test_ndtr_and_log_ndtr_far_in_both_tails():
    """ndtr to 4e-13 relative down to x = -37 (Phi = 6e-300), where 1 + erf would be 0 from -8.3 on (the
    rounding of z = -x / sqrt 2 alone moves erfc(z) by 2 z^2 eps relative, 3e-13 at z = 26);
    log_ndtr to 1e-14 relative from -1e150 to 40 (its asymptotic series below -20) and its gradient,
    phi / Phi, to 1e-13 (-x itself far out, where phi and Phi underflow)."""
    mp = _mpmath()
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-37, 8, 400), [-8.3, -20.0, 0.0]])
    np.testing.assert_allclose(S.ndtr(leaf(x)).numpy(), [float(mp.ncdf(v)) for v in x], rtol=4e-13, atol=0)
    x = np.concatenate([rng.uniform(-40, 10, 400), -(10 ** rng.uniform(1, 150, 100)), [-20.0, -19.999999, 0.0, 40.0]])
    t = leaf(x)
    y = S.log_ndtr(t)
    y.backward(np.ones_like(x))
    with mp.workdps(400):  # ncdf of 40 is 1 - 4e-350: enough digits for its logarithm
        expected = np.array([float(mp.log(mp.ncdf(v))) for v in x])
        slope = np.array([float(mp.npdf(v) / mp.ncdf(v)) for v in x])
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(t.grad.numpy(), slope, rtol=1e-13, atol=0)


def test_the_new_functions_at_their_edges_as_pytorch():
    """Values and gradients at 0, -0, ±inf, NaN and the poles, as torch.special's, but where PyTorch's
    are NaN for a number: polygamma(n >= 2, inf) is 0 (PyTorch: NaN), i0(±inf) inf and i1(±inf) ±inf
    (PyTorch: NaN), log_ndtr's gradient at -inf inf (PyTorch: NaN) and at -1e10 1e10 (PyTorch: inf), and i1's gradient at NaN
    NaN (PyTorch: a number)."""
    torch = import_torch()
    edges = [0.0, -0.0, 1.0, -2.5, 1e-300, NAN, 3.7, -700.0, 700.0]
    parity(S.i0, torch.special.i0, leaf(edges))
    parity(S.i1, torch.special.i1, leaf([v for v in edges if v == v]))  # PyTorch's i1 at NaN has a finite gradient
    nan = leaf([NAN])
    S.i1(nan).backward(np.ones(1))
    assert np.isnan(nan.grad.numpy()).all()
    parity(S.entr, torch.special.entr, leaf([0.0, -0.0, -1.0, 2.0, 1e-300, NAN, INF, -INF, 0.5]))
    parity(S.ndtr, torch.special.ndtr, leaf([0.0, -0.0, INF, -INF, NAN, -30.0, 8.0, -1.0]))
    parity(S.log_ndtr, torch.special.log_ndtr, leaf([0.0, -0.0, INF, NAN, -30.0, 8.0, -1.0, -21.0]))
    a = [0.0, 0.0, 1.0, 0.0, 2.0, 0.0, -1.0, INF, 0.0, NAN]
    b = [-1.0, -2.0, -1.0, NAN, 0.5, 0.0, INF, 1.0, INF, 0.0]
    parity(S.xlog1py, torch.special.xlog1py, leaf(a), leaf(b))
    for n in range(5):
        # ±inf for n = 0 only: polygamma(n >= 2) there (n = 1's gradient too) is a departure, checked below
        at = [0.0, -1.0, -2.0, -2.5, -0.3, 1e-300, NAN, 2.0, 35.0] + ([INF, -INF] if n == 0 else [])
        # at the negative poles trigamma (polygamma(1), and digamma's gradient) is inf, where PyTorch's is
        # finite (its pi x rounded off the pole; tests/ops/test_special.py), and digamma's gradient at 0 too
        at = [v for v in at if n > 1 or not (-INF < v < 0 or (n == 0 and v == 0)) or v != round(v)]
        parity(lambda x: S.polygamma(n, x), lambda x: torch.special.polygamma(n, x), leaf(at), rtol=1e-8)
    for fn in (S.i0, S.i1, lambda x: S.polygamma(2, x), lambda x: S.polygamma(3, x)):
        np.testing.assert_array_equal(fn(leaf([INF, -INF])).numpy()[:1], [INF if fn in (S.i0, S.i1) else 0.0])
    assert S.i0(leaf([-INF])).item() == INF and S.i1(leaf([-INF])).item() == -INF
    assert S.polygamma(3, leaf([-INF])).numpy()[0] != S.polygamma(3, leaf([-INF])).numpy()[0]  # NaN
    np.testing.assert_array_equal(S.polygamma(1, leaf([-1.0, -2.0])).numpy(), [INF, INF])


def test_the_tensor_methods_and_polygammas_n_checked():
    x = leaf([0.5, 2.0])
    np.testing.assert_array_equal(x.polygamma(2).numpy(), S.polygamma(2, x).numpy())
    np.testing.assert_array_equal(x.i0().numpy(), S.i0(x).numpy())
    np.testing.assert_array_equal(S.polygamma(3, leaf([-1e20, -2.0 ** 60, -99999.5])).numpy()[:2], [INF, INF])
    for n in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=rf"polygamma: n must be an integer >= 0, got {n!r}"):
            S.polygamma(n, x)
