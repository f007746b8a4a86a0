"""torch.special's second group in minitx.special (minitx/ops/special.py's block of that name, i0e and i1e in
bessel.py): erfcx, ndtri, i0e, i1e, zeta, gammainc and gammaincc (torch.igamma, igammac), multigammaln
(torch.mvlgamma).
Each: its forward against mpmath on drawn inputs with a float64 gradcheck, its accuracy on wide grids
in float64 and float32, its values and gradients at the edges beside PyTorch's (and where they depart,
the limit minitx gives), and the gradients PyTorch has none of, refused by name. PyTorch parity on
drawn inputs: tests/test_torch_op_parity.py's CASES.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
import minitx.special as S
from minitx.testing import arg, check_gradients, leaf, op_case
from _torch_kit import import_torch, parity
from test_torch_special import INF, NAN, PAIRS, SHAPES, _elementwise, _mpmath  # (the first group's shapes and mpmath)


def _references(mp):
    """name -> the function of floats mpmath computes it by."""
    return {
        "erfcx": lambda x: mp.exp(mp.mpf(x) ** 2) * mp.erfc(x),
        "ndtri": lambda p: mp.sqrt(2) * mp.erfinv(2 * mp.mpf(p) - 1),
        "i0e": lambda x: mp.exp(-abs(mp.mpf(x))) * mp.besseli(0, x),
        "i1e": lambda x: mp.exp(-abs(mp.mpf(x))) * mp.besseli(1, x),
        "zeta": lambda s, q: mp.zeta(s, q),
        "gammainc": lambda a, x: mp.gammainc(a, 0, x, regularized=True),
        "gammaincc": lambda a, x: mp.gammainc(a, x, mp.inf, regularized=True),
        "multigammaln": lambda x: 3 * mp.log(mp.pi) / 2 + sum(mp.loggamma(x - mp.mpf(i) / 2) for i in range(3)),
    }


# op -> (minitx function, value options per input, rtol); its mpmath reference under the function's name
NEW = {
    "Erfcx": (S.erfcx, [{"min_value": -5.0, "max_value": 30.0}], 3e-14),
    "Ndtri": (S.ndtri, [{"min_value": 1e-3, "max_value": 0.999}], 1e-14),
    "I0e": (S.i0e, [{"min_value": -60.0, "max_value": 60.0, "away_from": (0.0,)}], 1e-14),   # (its kink at 0)
    "I1e": (S.i1e, [{"min_value": -60.0, "max_value": 60.0}], 1e-14),
    "Zeta": (S.zeta, [{"min_value": 1.5, "max_value": 8.0, "requires_grad": False},
                      {"min_value": 0.2, "max_value": 40.0}], 1e-13),
    "GammaInc": (S.gammainc, [{"min_value": 0.2, "max_value": 20.0, "requires_grad": False},
                              {"min_value": 0.05, "max_value": 30.0}], 1e-12),
    "GammaInc-upper": (S.gammaincc, [{"min_value": 0.2, "max_value": 20.0, "requires_grad": False},
                                     {"min_value": 0.05, "max_value": 30.0}], 1e-12),
    "multigammaln": (lambda x: S.multigammaln(x, 3), [{"min_value": 1.2, "max_value": 20.0}], 1e-13),
}


@pytest.mark.parametrize("name", list(NEW))
@given(data=st.data())
def test_forward_matches_mpmath_and_gradients_check(name, data):
    fn, options, rtol = NEW[name]
    mp = _mpmath()
    reference = _references(mp)[fn.__name__ if name != "multigammaln" else name]
    case = op_case(fn, *(arg(**o) for o in options), numpy=_elementwise(lambda *v: float(reference(*v))),
                   broadcast=len(options) > 1, shapes=PAIRS if len(options) > 1 else SHAPES, rtol=rtol, atol=1e-300)
    case(data)


def _relative_error(got, expected):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    same = got == expected   # (the infinities and exact zeros)
    with np.errstate(invalid="ignore", divide="ignore"):   # (inf - inf and 0 / 0 where they are the same)
        return np.where(same, 0.0, np.abs(got - expected) / np.abs(expected)).max()


def test_erfcx_on_a_wide_grid():
    """erfcx to 3e-14 relative (to 6e-15 from 1.5 on, its continued fraction) from x = -26.5 to 1e15,
    1 / (x sqrt pi) from there to 1e300, and float32 to its rounding; where exp(x^2) erfc(x) computed as
    it reads would be inf * 0 (from 26.7) or lose 2 x^2 eps to exp's rounding."""
    mp = _mpmath()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-26.5, 30, 300), 10 ** rng.uniform(-5, 15, 100), [1.5, 1.4999999, 0.0, -1.5]])
    expected = [float(mp.exp(mp.mpf(v) ** 2) * mp.erfc(v)) for v in x]
    assert _relative_error(S.erfcx(leaf(x)).numpy(), expected) < 3e-14
    far = x >= 1.5
    assert _relative_error(S.erfcx(leaf(x[far])).numpy(), np.asarray(expected)[far]) < 6e-15
    huge = 10 ** rng.uniform(15, 300, 50)
    np.testing.assert_allclose(S.erfcx(leaf(huge)).numpy(), 1 / (huge * math.sqrt(math.pi)), rtol=1e-15)
    x32 = np.linspace(-9, 60, 1001).astype(np.float32)
    got = S.erfcx(minitx.tensor(x32)).numpy()
    assert got.dtype == np.float32
    expected32 = [float(mp.exp(mp.mpf(float(v)) ** 2) * mp.erfc(float(v))) for v in x32]
    np.testing.assert_allclose(got, expected32, rtol=2 ** -24, atol=0)


def test_erfcx_slope_without_cancellation():
    """d/dx erfcx = 2 x erfcx(x) - 2/sqrt(pi), whose terms cancel for large x (PyTorch's, computed as it
    reads, is off by 1e-6 relative at x = 1e4 and 0 or worse from 1e8): minitx's to 1e-14 from -10 to 1e12."""
    mp = _mpmath()
    x = np.concatenate([np.linspace(-10, 40, 201), 10 ** np.linspace(1.7, 12, 40)])
    t = leaf(x)
    S.erfcx(t).backward(np.ones_like(x))
    with mp.workdps(80):
        expected = [float(2 * mp.mpf(v) * mp.exp(mp.mpf(v) ** 2) * mp.erfc(v) - 2 / mp.sqrt(mp.pi)) for v in x]
    assert _relative_error(t.grad.numpy(), expected) < 1e-13


def test_ndtri_far_in_both_tails():
    """ndtri to 3e-15 relative (a few float64 roundings) from p = 1e-300 (x = -37) to 1 - 1e-16, both sides
    of p = 1/4 and 3/4 where its method changes, and float32 to its rounding."""
    mp = _mpmath()
    rng = np.random.default_rng(1)
    p = np.concatenate([rng.uniform(0, 1, 200), 10 ** rng.uniform(-300, 0, 100), 1 - 10 ** rng.uniform(-16, -1, 50),
                        [0.25, 0.75, 0.5, np.nextafter(0.25, 0), 5e-324]])
    with mp.workdps(400):   # 1 - 2p keeps p's digits down to p = 1e-300 and beyond
        expected = [float(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(v) - 1)) for v in p]
    assert _relative_error(S.ndtri(leaf(p)).numpy(), expected) < 3e-15
    p32 = np.linspace(0, 1, 1001).astype(np.float32)[1:-1]
    with mp.workdps(60):
        expected32 = [float(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(float(v)) - 1)) for v in p32]
    got = S.ndtri(minitx.tensor(p32)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected32, rtol=2 ** -24, atol=0)


def test_i0e_and_i1e_on_a_wide_grid():
    """i0e and i1e to 4e-15 relative from 1e-300 to 1e5 (both signs, across the switch at 40), 1 / sqrt(2 pi x)
    from 1e20 on, where I_0 and I_1 themselves overflow from x = 714, and float32 to its rounding."""
    mp = _mpmath()
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-60, 60, 200), 10 ** rng.uniform(-300, 5, 100), -(10 ** rng.uniform(-5, 5, 50)),
                        [39.999999, 40.0, 713.0, 800.0]])
    far = 10 ** rng.uniform(20, 300, 20)
    for nu, fn in ((0, S.i0e), (1, S.i1e)):
        expected = [float(mp.exp(-abs(mp.mpf(v))) * mp.besseli(nu, v)) for v in x]
        assert _relative_error(fn(leaf(x)).numpy(), expected) < 4e-15, f"i{nu}e"
        np.testing.assert_allclose(fn(leaf(far)).numpy(), 1 / np.sqrt(2 * np.pi * far), rtol=1e-15)
        x32 = np.linspace(-80, 80, 1001).astype(np.float32)
        expected32 = [float(mp.exp(-abs(mp.mpf(float(v)))) * mp.besseli(nu, float(v))) for v in x32]
        got = fn(minitx.tensor(x32)).numpy()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected32, rtol=2 ** -24, atol=0)


def test_zeta_on_a_wide_grid():
    """zeta(s, q) to 1e-15 relative for s from 1.001 to 1000 and q from 1e-3 to 1e4, large s included (where
    Euler-Maclaurin's series would diverge at q = 30: the direct sum stops where its terms fall below
    rounding), results near float64's smallest too (the terms as z^-s, not 1 / z^s, which is 0 once z^s
    overflows); for q < 0 with s a whole number (its terms alternate in sign for odd s: there 1e-13 of
    the largest term 1 / (q - round(q))^s); and float32 to its rounding. (mpmath's zeta needs 100 digits
    for q up to 200 and 400 for q = 1e4 to give float64's 16.)"""
    mp = _mpmath()
    rng = np.random.default_rng(4)
    s = np.concatenate([1 + 10 ** rng.uniform(-3, 1, 150), 10 ** rng.uniform(1, 3, 50)])
    q = 10 ** rng.uniform(-3, 2.3, 200)
    with mp.workdps(100):
        expected = [float(mp.zeta(a, b)) for a, b in zip(s, q)]
    assert _relative_error(S.zeta(leaf(s), leaf(q)).numpy(), expected) < 1e-15
    s, q = np.array([67.71954263774977, 2.5, 1.01, 30.0]), np.array([9142.134431684328, 1e4, 3e3, 500.0])
    with mp.workdps(400):
        expected = [float(mp.zeta(a, b)) for a, b in zip(s, q)]
    assert _relative_error(S.zeta(leaf(s), leaf(q)).numpy(), expected) < 1e-15
    s_int = rng.integers(2, 9, 40).astype(np.float64)
    q_neg = -rng.uniform(0.05, 20, 40)
    got = S.zeta(leaf(s_int), leaf(q_neg)).numpy()
    expected = np.array([float(mp.zeta(a, b)) for a, b in zip(s_int, q_neg)])
    largest = 1 / np.abs(q_neg - np.round(q_neg)) ** s_int
    assert np.all(np.abs(got - expected) <= 1e-13 * largest)
    s32, q32 = rng.uniform(1.1, 10, 300).astype(np.float32), rng.uniform(0.1, 50, 300).astype(np.float32)
    got = S.zeta(minitx.tensor(s32), minitx.tensor(q32)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [float(mp.zeta(float(a), float(b))) for a, b in zip(s32, q32)], rtol=2 ** -24)


def test_gammainc_and_gammaincc_on_a_wide_grid():
    """P(a, x) and Q(a, x) to 4e-13 relative wherever each is above 1e-300 (their factor x^a e^-x / Gamma(a)
    is the exponential of a ln x - x, up to 800 here, each rounded), a from 1e-3 to 1e4 and x from 1e-3 to
    1e5, with x near a where a is large (the hardest case: both methods take about 9 sqrt(a) steps there;
    PyTorch's, Temme's expansion, is off by up to 1e-9 there), and Q for small a and x, where P is near 1
    (by its own series: 1 - P would be off by 1e-11); and their gradient in x, x^(a-1) e^-x / Gamma(a),
    to 4e-13 too."""
    mp = _mpmath()
    rng = np.random.default_rng(5)
    a = np.concatenate([10 ** rng.uniform(-3, 4, 200), 10 ** rng.uniform(1, 4, 60), 10 ** rng.uniform(-3, -0.3, 60)])
    x = np.concatenate([10 ** rng.uniform(-3, 5, 200), a[200:260] * (1 + rng.uniform(-0.1, 0.1, 60)),
                        rng.uniform(1e-3, 1.2, 60)])
    P = np.array([float(mp.gammainc(b, 0, v, regularized=True)) for b, v in zip(a, x)])
    Q = np.array([float(mp.gammainc(b, v, mp.inf, regularized=True)) for b, v in zip(a, x)])
    for fn, expected in ((S.gammainc, P), (S.gammaincc, Q)):
        t = leaf(x)
        y = fn(leaf(a, requires_grad=False), t)
        kept = expected > 1e-300
        assert _relative_error(y.numpy()[kept], expected[kept]) < 4e-13, fn.__name__
        y.backward(np.ones_like(x))
        slope = np.array([float(mp.power(v, b - 1) * mp.exp(-mp.mpf(v)) / mp.gamma(b)) for b, v in zip(a, x)])
        kept = slope > 1e-300
        got = t.grad.numpy()[kept] * (1 if fn is S.gammainc else -1)
        assert _relative_error(got, slope[kept]) < 4e-13, fn.__name__


# where each formula changes hands: erfcx and its slope at 1.5, ndtri at 1/4 and 3/4, the Bessel series at
# 40, zeta's direct sum at q = 30 and at q = s, gammainc's series and fraction at x = a + 1, and gammaincc's
# own series below a = 1/2, x = 1.1
SWITCHES = {
    "erfcx": (S.erfcx, [[1.4999, 1.5001, -1.5, 0.0, 27.0]]),
    "ndtri": (S.ndtri, [[0.2499, 0.2501, 0.7499, 0.7501, 1e-4, 0.5]]),
    "i0e": (S.i0e, [[39.999, 40.001, -40.0, 0.3, -0.2]]),
    "i1e": (S.i1e, [[39.999, 40.001, -40.0, 0.0, 1e-3, -2.0]]),
    "zeta": (S.zeta, [[3.0, 3.0, 40.0, 40.0, 3.0]], [[29.999, 30.001, 39.999, 40.001, -1.5]]),
    "gammainc": (S.gammainc, [[2.0, 2.0, 50.0, 0.5]], [[2.999, 3.001, 50.0, 1e-3]]),
    "gammaincc": (S.gammaincc, [[2.0, 2.0, 50.0, 0.5, 0.499, 0.501, 0.2]], [[2.999, 3.001, 50.0, 1e-3, 0.5, 0.5, 1.1]]),
}


@pytest.mark.parametrize("name", list(SWITCHES))
def test_gradients_where_the_formulas_switch(name):
    fn, *inputs = SWITCHES[name]
    leaves = [leaf(v, requires_grad=i == len(inputs) - 1) for i, v in enumerate(inputs)]
    assert check_gradients(fn, *leaves)


def test_the_edges_as_pytorch():
    """Values and gradients at 0, ±inf, NaN, the poles and outside the domains, as torch.special's."""
    torch = import_torch()
    parity(S.erfcx, torch.special.erfcx, leaf([0.0, -0.0, -INF, NAN, -27.0, -26.0, 1e300, 1.5, -1.5]))
    parity(S.ndtri, torch.special.ndtri, leaf([0.0, 1.0, -0.1, 1.1, NAN, 0.5, 0.25, 0.75, 1e-300, 5e-324]))
    parity(S.i0e, torch.special.i0e, leaf([0.0, -0.0, INF, -INF, NAN, 1e300, -1e300, 40.0, -3.0]))
    parity(S.i1e, torch.special.i1e, leaf([0.0, -0.0, INF, -INF, 1e300, -1e300, 40.0, -3.0]))
    s = [1.0, 0.5, 2.0, INF, INF, 2.0, 3.0, 3.0, 2.0, 2.0, NAN, 1.0, NAN, 2.0]
    q = [1.0, 1.0, 0.0, 1.0, 0.5, -1.5, -1.5, -2.0, -INF, NAN, 1.0, NAN, 0.0, 1e100]
    parity(S.zeta, torch.special.zeta, leaf(s, requires_grad=False), leaf(q))
    a = [0.0, 0.0, 1.0, -1.0, INF, 1.0, 2.0, INF, 0.5, NAN, 2.0, 1e4]
    x = [0.0, 1.0, 0.0, 1.0, 1.0, INF, -1.0, INF, NAN, 1.0, 0.5, 1e4]
    for fn, reference in ((S.gammainc, torch.special.gammainc), (S.gammaincc, torch.special.gammaincc)):
        parity(fn, reference, leaf(a, requires_grad=False), leaf(x, requires_grad=False), rtol=1e-9)
    for p in (1, 3):
        parity(lambda v: S.multigammaln(v, p), lambda v: torch.special.multigammaln(v, p),
               leaf([1.5, 2.0, 7.25, INF, NAN, 1e10]))


def test_where_minitx_departs_from_pytorch_it_gives_the_limit():
    """zeta(s, inf) and zeta(inf, q > 1) are 0 and zeta(2, 1e300) 1e-300 (PyTorch: NaN, NaN and 0); erfcx's slope at inf -0 (PyTorch: NaN, inf * 0); i1e's gradient at
    NaN NaN (PyTorch: a number); gammainc's slope at x = 0 its limit, 1 at a = 1 (PyTorch: NaN), at x = inf
    and at a = inf 0 (PyTorch: NaN for a > 1 and for x > 1), and NaN where P is (a < 0; PyTorch: a number)."""
    np.testing.assert_allclose(S.zeta(leaf([2.0, INF, 2.0]), leaf([INF, 2.0, 1e300])).numpy(), [0.0, 0.0, 1e-300],
                               rtol=1e-15, atol=0)
    t = leaf([INF])
    S.erfcx(t).backward(np.ones(1))
    assert t.grad.item() == 0.0
    t = leaf([NAN])
    S.i1e(t).backward(np.ones(1))
    assert np.isnan(t.grad.item())
    a = leaf([1.0, 2.0, 0.5, 2.0, INF, -1.0, 0.0], requires_grad=False)
    x = leaf([0.0, 0.0, 0.0, INF, 2.0, 1.0, 2.0])
    S.gammainc(a, x).backward(np.ones(7))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, INF, 0.0, 0.0, NAN, 0.0])


def test_the_gradients_pytorch_has_none_of_are_refused_by_name():
    s, q = leaf([2.0, 3.0]), leaf([1.0, 2.0])
    with pytest.raises(NotImplementedError, match=r"zeta: no gradient with respect to s, its first argument"):
        S.zeta(s, q).sum().backward()
    for fn in (S.gammainc, S.gammaincc):
        with pytest.raises(NotImplementedError, match=rf"{fn.__name__}: no gradient with respect to a, its first"):
            fn(leaf([2.0, 3.0]), leaf([1.0, 2.0])).sum().backward()
    q = leaf([1.0, 2.0])
    S.zeta(2.0, q).sum().backward()   # s a number: q's gradient alone
    np.testing.assert_allclose(q.grad.numpy(), -2 * S.zeta(3.0, leaf([1.0, 2.0])).numpy())
    with pytest.raises(ValueError, match=r"zeta takes q >= -100000 away from the poles .*got q = -100000.5"):
        S.zeta(2.0, leaf([1.0, -100000.5]))
    # s not whole and q < 0: NaN at once, below the floor too, as PyTorch's ((q + k)^s is not real)
    assert np.isnan(S.zeta(leaf([2.5, 3.25]), leaf([-1e6 - 0.5, -1e15 - 0.5])).numpy()).all()
    for p in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match=rf"multigammaln: p must be an integer >= 1, got {p!r}"):
            S.multigammaln(q, p)


def test_torchs_other_names_and_the_tensor_methods():
    torch = import_torch()
    assert (F.igamma, F.igammac, F.mvlgamma) == (S.gammainc, S.gammaincc, S.multigammaln)
    for method in ("igamma", "igammac"):
        parity(lambda u, v: getattr(u, method)(v), lambda u, v: getattr(u, method)(v),
               leaf([0.5, 2.0, 7.0], requires_grad=False), leaf([1.0, 2.5, 3.0]))
    parity(lambda v: v.mvlgamma(2), lambda v: v.mvlgamma(2), leaf([1.0, 2.5, 30.0]))
    parity(lambda v: F.mvlgamma(v, 2), lambda v: torch.mvlgamma(v, 2), leaf([1.0, 2.5, 30.0]))


def test_a_float64_beside_a_float32_gives_float64_as_pytorch():
    """zeta, gammainc and gammaincc promote their two floats as PyTorch's binary ops do (float64 beside
    float32: float64, either way round), the gradient in the input's own dtype."""
    torch = import_torch()
    s64, q32 = np.array([1.5, 2.0, 5.0]), np.array([0.3, 1.0, 7.0], dtype=np.float32)
    for fn, reference in ((S.zeta, torch.special.zeta), (S.gammainc, torch.special.gammainc),
                          (S.gammaincc, torch.special.gammaincc)):
        for first, second in ((s64, q32), (q32, s64)):
            x = minitx.tensor(second, requires_grad=True)
            y = fn(minitx.tensor(first), x)
            assert y.dtype == np.float64, (fn.__name__, first.dtype, second.dtype)
            expected = reference(torch.tensor(first), torch.tensor(second)).numpy()
            np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)
            y.sum().backward()
            assert x.grad.dtype == second.dtype
        half = minitx.tensor(np.array([0.5, 2.0], dtype=np.float16))   # a number takes the tensor's dtype
        assert fn(2.0, half).dtype == fn(half, 2.0).dtype == np.float16
        assert fn(2, minitx.tensor([1, 2])).dtype == np.float32   # integers as float32, as PyTorch's


def test_the_series_host_reads_are_counted():
    """The series and fractions run until every entry has converged: on the GPU each test of that is a
    read of the device (a host synchronisation), so each goes through backend.to_host, which counts it."""
    from minitx.ops.special import _until_converged

    with minitx.backend.count_host_reads() as reads:   # gammainc's loop: changes 1/2, 1/4, ..., 2^-52 = eps
        _until_converged(lambda state: ((state[0] / 2,), state[0] / 2), (np.ones(3),), "test")
    assert reads.count == 52
    with minitx.backend.count_host_reads() as reads:
        S.zeta(leaf([2.0, 3.0]), leaf([0.5, 2.0]))
    assert reads.count > 0


def test_shapes_that_do_not_broadcast_are_refused_by_the_functions_name():
    for fn in (S.zeta, S.gammainc, S.gammaincc):
        with pytest.raises(ValueError, match=rf"^{fn.__name__}: shapes \(2,\) and \(3,\) do not broadcast"):
            fn(leaf([1.0, 2.0]), leaf([1.0, 2.0, 3.0]))
