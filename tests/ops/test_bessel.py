"""minitx.special's Bessel functions and orthogonal polynomials (minitx/ops/bessel.py): each forward
against an independent reference (mpmath for the Bessel functions, NumPy's polynomial module and
mpmath's Chebyshev U for the polynomials), float64 gradients on hypothesis-drawn shapes, the accuracy
the module docstring states on wide grids, torch.special's values at the edges and where minitx departs
from them, and the slopes against the derivative identities (J_0' = -J_1, T_n' = n U_(n-1), ...).
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

import minitx
import minitx.special as S
from minitx.testing import arg, check_gradients, leaf, op_case
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

SHAPES = mst.shapes(max_dims=3, max_side=4)
INF, NAN = np.inf, np.nan


def _mpmath():
    mpmath = pytest.importorskip("mpmath")  # (installed with PyTorch, which CI installs)
    mpmath.mp.dps = 40
    return mpmath


def _elementwise(fn):
    """A per-element Python function of a float as a float64 NumPy reference."""
    return lambda x: np.vectorize(lambda v: float(fn(float(v))), otypes=[np.float64])(x)


# name -> (mpmath's function of a float, the drawn range)
BESSEL = {
    "bessel_j0": (lambda mp, v: mp.besselj(0, v), (-60.0, 60.0)),
    "bessel_j1": (lambda mp, v: mp.besselj(1, v), (-60.0, 60.0)),
    "bessel_y0": (lambda mp, v: mp.bessely(0, v), (0.01, 60.0)),
    "bessel_y1": (lambda mp, v: mp.bessely(1, v), (0.01, 60.0)),
    "modified_bessel_k0": (lambda mp, v: mp.besselk(0, v), (0.01, 60.0)),
    "modified_bessel_k1": (lambda mp, v: mp.besselk(1, v), (0.01, 60.0)),
    "scaled_modified_bessel_k0": (lambda mp, v: mp.besselk(0, v) * mp.exp(v), (0.01, 60.0)),
    "scaled_modified_bessel_k1": (lambda mp, v: mp.besselk(1, v) * mp.exp(v), (0.01, 60.0)),
    "spherical_bessel_j0": (lambda mp, v: mp.sin(v) / v if v else mp.mpf(1), (-30.0, 30.0)),
    "airy_ai": (lambda mp, v: mp.airyai(v), (-12.0, 12.0)),
}


def _reference(name):
    mp = _mpmath()
    return _elementwise(lambda v: BESSEL[name][0](mp, mp.mpf(v)))


@pytest.mark.parametrize("name", list(BESSEL))
@given(data=st.data())
def test_bessel_forward_matches_mpmath_and_gradients_check(name, data):
    """To 1e-13 relative, 1e-15 absolute beside the zeros of J and Y; the gradient against finite differences."""
    low, high = BESSEL[name][1]
    case = op_case(getattr(S, name), arg(min_value=low, max_value=high), numpy=_reference(name), shapes=SHAPES,
                   rtol=1e-13, atol=1e-15)
    case(data)


# where each formula changes hands: the series below 1, Miller's recurrence or the integral below 25, Hankel
# from there; and 0 for the odd and spherical ones
SWITCHES = {name: [[0.999, 1.001, 1.0, 24.999, 25.001, 25.0, 3.7]] for name in BESSEL}
SWITCHES["bessel_j1"] = [[0.999, 1.001, -1.0, 24.999, -25.001, 0.0, 1e-3]]
SWITCHES["spherical_bessel_j0"] = [[0.999, 1.001, -1.0, 0.0, 1e-3, -4.0]]
# Ai: the series below |x| = 1, Hankel's from (2/3)|x|^(3/2) = 25, at |x| = 11.2
SWITCHES["airy_ai"] = [[0.999, 1.001, -0.999, -1.001, 0.0, 11.19, 11.21, -11.19, -11.21]]


@pytest.mark.parametrize("name", list(SWITCHES))
def test_gradients_where_the_formulas_switch(name):
    assert check_gradients(getattr(S, name), *(leaf(v) for v in SWITCHES[name]))


def test_bessel_to_float64_rounding_against_mpmath_on_wide_grids():
    """J and Y to 3e-16 absolute over |x| < 60 and 1e-14 relative where |value| > 0.01; from 1e-300 to
    1e20 to 1e-14 relative (Hankel's expansion with cos x and sin x exact, no x - pi/4 rounded);
    K and e^x K to 2e-15 relative from 1e-300 to 700; float32 to its rounding."""
    rng = np.random.default_rng(0)
    middle = np.concatenate([rng.uniform(-60, 60, 100), [0.999999, 1.0, 24.999999, 25.0]])
    wide = np.concatenate([10 ** rng.uniform(-300, 20, 30), [1e20, 800.0]])
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        x = middle if name.startswith("bessel_j") else np.abs(middle)
        expected = _reference(name)(x)
        got = getattr(S, name)(leaf(x)).numpy()
        assert np.all(np.abs(got - expected) <= 3e-16 * np.maximum(1, np.abs(expected))), name
        big = np.abs(expected) > 0.01
        np.testing.assert_allclose(got[big], expected[big], rtol=1e-14, atol=0, err_msg=name)
        expected = _reference(name)(wide)
        np.testing.assert_allclose(getattr(S, name)(leaf(wide)).numpy(), expected, rtol=1e-14, atol=1e-300,
                                   err_msg=name)
    x = np.concatenate([rng.uniform(0, 60, 40), 10 ** rng.uniform(-300, 2.845, 40), [1.0, 25.0]])
    for name in ("modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
        np.testing.assert_allclose(getattr(S, name)(leaf(x)).numpy(), _reference(name)(x), rtol=2e-15, atol=0,
                                   err_msg=name)
    x32 = np.linspace(0.05, 80, 41).astype(np.float32)
    for name in BESSEL:
        got = getattr(S, name)(minitx.tensor(x32)).numpy()
        assert got.dtype == np.float32
        expected = _reference(name)(x32.astype(np.float64))
        np.testing.assert_allclose(got, expected, rtol=2 ** -24, atol=2 ** -25 * np.abs(expected).max(), err_msg=name)


def test_slopes_are_the_derivative_identities():
    """Each gradient is its identity of torch-independent mpmath values: J_0' = -J_1, J_1' = J_0 - J_1/x,
    Y likewise, K_0' = -K_1, K_1' = -K_0 - K_1/x, (e^x K_0)' = e^x (K_0 - K_1), j_0' = -j_1."""
    mp = _mpmath()
    x = np.array([0.3, 0.999, 2.5, 7.0, 24.0, 31.0, 250.0])
    slopes = {
        "bessel_j0": lambda v: -mp.besselj(1, v), "bessel_j1": lambda v: mp.besselj(0, v) - mp.besselj(1, v) / v,
        "bessel_y0": lambda v: -mp.bessely(1, v), "bessel_y1": lambda v: mp.bessely(0, v) - mp.bessely(1, v) / v,
        "modified_bessel_k0": lambda v: -mp.besselk(1, v),
        "modified_bessel_k1": lambda v: -mp.besselk(0, v) - mp.besselk(1, v) / v,
        "scaled_modified_bessel_k0": lambda v: mp.exp(v) * (mp.besselk(0, v) - mp.besselk(1, v)),
        "scaled_modified_bessel_k1": lambda v: mp.exp(v) * (mp.besselk(1, v) - mp.besselk(0, v) - mp.besselk(1, v) / v),
        "spherical_bessel_j0": lambda v: mp.cos(v) / v - mp.sin(v) / v ** 2,
        "airy_ai": lambda v: mp.airyai(v, derivative=1),
    }
    for name, slope in slopes.items():
        t = leaf(x)
        getattr(S, name)(t).backward(np.ones_like(x))
        np.testing.assert_allclose(t.grad.numpy(), _elementwise(lambda v: slope(mp.mpf(v)))(x), rtol=1e-13, atol=1e-16,
                                   err_msg=name)


def _values_at(name, x):
    return getattr(S, name)(leaf(x)).numpy()


def test_bessel_edges_as_pytorch_and_where_minitx_departs():
    """Values at 0, -0, negative x, 1e-300, NaN and beside the switches, as torch.special's: K's and j_0's
    to 1e-14, J's and Y's to 1e-6 (PyTorch's float64 J and Y are off by up to 1e-8 below x = 5, 9e-7
    just above it and 1e-11 from 12 to 25; test_pytorchs_j_and_y_are_less_accurate_than_minitxs);
    where they differ: at ±inf J, Y and j_0 are 0, their
    limits (PyTorch: NaN for J and Y), and at x = 1e20 J_0 is 6.698e-12 (mpmath's), where PyTorch
    rounds x - pi/4 and gives 6.1e-11. PyTorch gives none of them a gradient: minitx's at 0 are the
    one-sided limits."""
    torch = import_torch()
    edges = [0.0, -0.0, 1e-300, -2.5, NAN, 1.0, 0.999, 25.0, 24.999, 3.0, 700.0, 8.0]
    for name in BESSEL:
        reference = getattr(torch.special, name)
        parity(getattr(S, name), reference, minitx.tensor(np.array(edges)),
               atol=1e-6 if name.startswith("bessel") else 3e-6 if name == "airy_ai" else 1e-14)
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0"):
        np.testing.assert_array_equal(_values_at(name, [INF]), [0.0])
        assert np.isnan(getattr(torch.special, name)(torch.tensor([INF])).numpy()).all() == (name != "spherical_bessel_j0")
    np.testing.assert_array_equal(_values_at("bessel_j0", [-INF]), [0.0])
    np.testing.assert_array_equal(_values_at("bessel_y0", [-INF, -1.0]), [NAN, NAN])
    np.testing.assert_allclose(_values_at("bessel_j0", [1e20]), [6.6980090407034243e-12], rtol=1e-14)
    assert abs(torch.special.bessel_j0(torch.tensor([1e20], dtype=torch.float64)).item() - 6.698e-12) > 1e-11
    x = leaf([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    at_zero = [S.bessel_j0, S.bessel_j1, S.bessel_y0, S.bessel_y1, S.modified_bessel_k0, S.modified_bessel_k1,
               S.scaled_modified_bessel_k0, S.scaled_modified_bessel_k1]
    grads = []
    for fn in at_zero:
        t = leaf([0.0])
        fn(t).backward(np.ones(1))
        grads.append(t.grad.numpy()[0])
    np.testing.assert_array_equal(grads, [0.0, 0.5, INF, INF, -INF, -INF, -INF, -INF])
    del x


def test_pytorchs_j_and_y_are_less_accurate_than_minitxs():
    """Against mpmath at x = 5.01 PyTorch's float64 J_0 is off by 4e-7 and Y_1 by 9e-7; minitx's by 1e-16."""
    torch = import_torch()
    x = np.array([5.010833611203735, 8.0])
    for name in ("bessel_j0", "bessel_y1"):
        expected = _reference(name)(x)
        theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
        assert np.abs(theirs - expected)[0] > 1e-7 and np.abs(theirs - expected)[1] > 1e-10
        np.testing.assert_allclose(_values_at(name, x), expected, rtol=0, atol=2e-16)


def test_airy_ai_against_mpmath_and_where_pytorch_departs():
    """Ai and its gradient Ai' to 1e-14 over |x| < 12 (relative for x > 0, absolute below) and 5e-14 to
    |x| = 40 (the rounding of (2/3)|x|^(3/2)); 0 at ±inf, their limits, where PyTorch gives NaN; PyTorch's
    float64 Ai is off by 2.5e-6 at x = -2.12."""
    mp = _mpmath()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-40, 40, 200), [0.0, -0.0, 1e-300, 0.999999, 1.0, -1.0, -1.000001, 11.2, -11.2]])
    t = leaf(x)
    got = S.airy_ai(t)
    got.backward(np.ones_like(x))
    for values, derivative in ((got.numpy(), 0), (t.grad.numpy(), 1)):
        expected = _elementwise(lambda v: mp.airyai(mp.mpf(v), derivative=derivative))(x)
        error = np.abs(values - expected) / np.where(x > 0, np.abs(expected), np.maximum(1, np.abs(expected)))
        assert error[np.abs(x) < 12].max() < 1e-14 and error.max() < 5e-14, derivative
    inf = leaf([INF, -INF])
    S.airy_ai(inf).backward(np.ones(2))
    np.testing.assert_array_equal(S.airy_ai(inf).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(inf.grad.numpy(), [0.0, 0.0])
    torch = import_torch()
    assert np.isnan(torch.special.airy_ai(torch.tensor([INF, -INF])).numpy()).all()
    theirs = torch.special.airy_ai(torch.tensor([-2.12], dtype=torch.float64)).item()
    assert abs(theirs - float(mp.airyai(-2.12))) > 1e-6
    np.testing.assert_allclose(_values_at("airy_ai", [-2.12]), [float(mp.airyai(-2.12))], rtol=1e-15)


def test_modified_bessel_i0_and_i1_are_i0_and_i1():
    assert S.modified_bessel_i0 is S.i0 and S.modified_bessel_i1 is S.i1


def _numpy_polynomial(module, shifted=False):
    """NumPy's series of the basis polynomial of degree n (its coefficients: the n-th unit vector)."""
    evaluate = {chebyshev: chebyshev.chebval, hermite: hermite.hermval, hermite_e: hermite_e.hermeval,
                laguerre: laguerre.lagval, legendre: legendre.legval}[module]
    return lambda v, n: evaluate(2 * v - 1 if shifted else v, np.eye(n + 1)[n])


def _chebyshev_u(kind, shifted=False):
    """U_n by its explicit sum, U_n(x) = sum_k (-1)^k C(n - k, k) (2x)^(n - 2k), k <= n/2, in mpmath's 40
    digits; and V_n = U_n - U_(n-1), W_n = U_n + U_(n-1)."""
    mp = _mpmath()

    def u(v, n):
        return sum((-1) ** k * math.comb(n - k, k) * (2 * v) ** (n - 2 * k) for k in range(n // 2 + 1)) if n >= 0 else 0

    def value(v, n):
        v = 2 * mp.mpf(v) - 1 if shifted else mp.mpf(v)
        return float(u(v, n) + {"u": 0, "v": -1, "w": 1}[kind] * u(v, n - 1))

    return value


# name -> (an independent reference of (x, n) for n >= 0, the x it is drawn over)
POLYNOMIALS = {
    "chebyshev_polynomial_t": (_numpy_polynomial(chebyshev), (-1.5, 1.5)),
    "chebyshev_polynomial_u": (_chebyshev_u("u"), (-1.5, 1.5)),
    "chebyshev_polynomial_v": (_chebyshev_u("v"), (-1.5, 1.5)),
    "chebyshev_polynomial_w": (_chebyshev_u("w"), (-1.5, 1.5)),
    "shifted_chebyshev_polynomial_t": (_numpy_polynomial(chebyshev, shifted=True), (-0.2, 1.2)),
    "shifted_chebyshev_polynomial_u": (_chebyshev_u("u", shifted=True), (-0.2, 1.2)),
    "shifted_chebyshev_polynomial_v": (_chebyshev_u("v", shifted=True), (-0.2, 1.2)),
    "shifted_chebyshev_polynomial_w": (_chebyshev_u("w", shifted=True), (-0.2, 1.2)),
    "hermite_polynomial_h": (_numpy_polynomial(hermite), (-3.0, 3.0)),
    "hermite_polynomial_he": (_numpy_polynomial(hermite_e), (-3.0, 3.0)),
    "laguerre_polynomial_l": (_numpy_polynomial(laguerre), (-2.0, 10.0)),
    "legendre_polynomial_p": (_numpy_polynomial(legendre), (-1.5, 1.5)),
}


def _polynomial_reference(name):
    value = POLYNOMIALS[name][0]
    return lambda x, n: np.vectorize(lambda v, k: float(value(v, int(k))) if k >= 0 else 0.0, otypes=[np.float64])(x, n)


def degrees(low=-2, high=12):
    """An int64 array of degrees of x's shape, its last axes' or none (0-d), for n broadcast with x."""
    return lambda x: hnp.arrays(np.int64, st.sampled_from([x, x[1:], ()]), elements=st.integers(low, high))


@pytest.mark.parametrize("name", list(POLYNOMIALS))
@given(data=st.data())
def test_polynomial_forward_matches_an_independent_reference_and_gradients_check(name, data):
    """x drawn over each family's range, n an integer array broadcast with it, from -2 (0, as PyTorch's) to 12.
    Finite differences of a value as large as H_12(0) = 665280 are off by about 1e-10 of it (its rounding
    over the step), so the gradient check's atol scales with the family's largest value over its range."""
    low, high = POLYNOMIALS[name][1]
    reference = _polynomial_reference(name)
    largest = np.abs(reference(np.linspace(low, high, 101)[:, None], np.arange(13))).max()
    case = op_case(getattr(S, name), arg(min_value=low, max_value=high), arg(strategy=degrees()),
                   numpy=reference, shapes=SHAPES, rtol=1e-12, atol=1e-12,
                   gradcheck_kwargs={"atol": max(1e-5, 1e-9 * largest)})
    case(data)


def test_polynomials_at_the_edges_and_where_minitx_departs():
    """n < 0 gives 0 and x = ±1 the closed forms, as PyTorch's; where they differ: NaN gives NaN (PyTorch's
    gives some other element's value), and beside x = -1 V_9 is exact where PyTorch's trigonometric form
    cos(9.5 t) / cos(t/2) loses half the digits (-19.0000001 at x = -1 + 4e-16)."""
    torch = import_torch()
    x = np.array([1.0, -1.0, 0.0, 0.5, -0.25, 2.0])
    for name in POLYNOMIALS:
        for n in (-3, 0, 1, 2, 7, 9):
            parity(lambda v, name=name, n=n: getattr(S, name)(v, n),
                   lambda v, name=name, n=n: getattr(torch.special, name)(v, n), minitx.tensor(x), rtol=1e-12)
        assert np.isnan(getattr(S, name)(minitx.tensor(np.array([NAN, 2.0])), 3).numpy()[0])
    assert not torch.special.legendre_polynomial_p(torch.tensor([NAN, 2.0], dtype=torch.float64), 3)[0].isnan()
    beside = np.array([-1 + 2 ** -52])
    np.testing.assert_allclose(S.chebyshev_polynomial_v(minitx.tensor(beside), 9).numpy(), [-19.0], rtol=1e-14)
    assert abs(torch.special.chebyshev_polynomial_v(torch.tensor(beside), 9).item() + 19) > 1e-8


def test_polynomial_slopes_are_the_derivative_identities():
    """T_n' = n U_(n-1), H_n' = 2n H_(n-1), He_n' = n He_(n-1), P_n' = n (x P_n - P_(n-1)) / (x^2 - 1), in
    minitx's own values: the differentiated recurrence agrees with the textbook forms; and T*_n'(x) = 2 T_n'(2x - 1)."""
    x = np.array([-0.7, 0.2, 0.55, 0.9])
    for n in (1, 2, 5, 11):
        identities = {
            "chebyshev_polynomial_t": n * S.chebyshev_polynomial_u(leaf(x), n - 1).numpy(),
            "hermite_polynomial_h": 2 * n * S.hermite_polynomial_h(leaf(x), n - 1).numpy(),
            "hermite_polynomial_he": n * S.hermite_polynomial_he(leaf(x), n - 1).numpy(),
            "legendre_polynomial_p": n * (x * S.legendre_polynomial_p(leaf(x), n).numpy()
                                          - S.legendre_polynomial_p(leaf(x), n - 1).numpy()) / (x * x - 1),
            "shifted_chebyshev_polynomial_t": 2 * n * S.chebyshev_polynomial_u(leaf(2 * x - 1), n - 1).numpy(),
        }
        for name, expected in identities.items():
            t = leaf(x)
            getattr(S, name)(t, n).backward(np.ones_like(x))
            np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12, atol=1e-12, err_msg=f"{name}, n = {n}")


def test_the_errors_name_the_op():
    with pytest.raises(TypeError, match=r"chebyshev_polynomial_t: n must be an int or an integer tensor \(the degree\), "
                                        r"got float64"):
        S.chebyshev_polynomial_t(leaf([0.5]), minitx.tensor(np.array([2.0])))
    with pytest.raises(TypeError, match=r"legendre_polynomial_p: n must be an int .*got float"):
        S.legendre_polynomial_p(leaf([0.5]), 2.5)
    with pytest.raises(ValueError, match=r"hermite_polynomial_h: the shapes of x \(2,\) and n \(3,\) do not broadcast"):
        S.hermite_polynomial_h(leaf([0.5, 1.0]), minitx.tensor(np.array([1, 2, 3])))


# each public function -> the Function class it applies (the drawn tests above check their gradients)
CLASSES = {"bessel_j0": "BesselJ0", "bessel_j1": "BesselJ1", "bessel_y0": "BesselY0", "bessel_y1": "BesselY1",
           "modified_bessel_k0": "ModifiedBesselK0", "modified_bessel_k1": "ModifiedBesselK1",
           "scaled_modified_bessel_k0": "ScaledModifiedBesselK0", "scaled_modified_bessel_k1": "ScaledModifiedBesselK1",
           "spherical_bessel_j0": "SphericalBesselJ0", "airy_ai": "AiryAi", "chebyshev_polynomial_t": "ChebyshevPolynomialT",
           "chebyshev_polynomial_u": "ChebyshevPolynomialU", "chebyshev_polynomial_v": "ChebyshevPolynomialV",
           "chebyshev_polynomial_w": "ChebyshevPolynomialW", "shifted_chebyshev_polynomial_t": "ShiftedChebyshevPolynomialT",
           "shifted_chebyshev_polynomial_u": "ShiftedChebyshevPolynomialU",
           "shifted_chebyshev_polynomial_v": "ShiftedChebyshevPolynomialV",
           "shifted_chebyshev_polynomial_w": "ShiftedChebyshevPolynomialW", "hermite_polynomial_h": "HermitePolynomialH",
           "hermite_polynomial_he": "HermitePolynomialHe", "laguerre_polynomial_l": "LaguerrePolynomialL",
           "legendre_polynomial_p": "LegendrePolynomialP"}


def test_each_function_applies_its_class_and_every_one_is_drawn_above():
    assert set(CLASSES) == set(BESSEL) | set(POLYNOMIALS)
    for name, cls in CLASSES.items():
        y = getattr(S, name)(leaf([0.5, 2.0]), *([3] if name in POLYNOMIALS else []))
        assert type(y._ctx).__name__ == cls


def test_the_degree_is_read_once_and_counted():
    """The recurrence runs max(n) steps: one read of the device for n's largest entry (a host
    synchronisation on the GPU), through backend.to_host, which counts it."""
    with minitx.backend.count_host_reads() as reads:
        S.legendre_polynomial_p(leaf([0.5, 0.25]), minitx.tensor(np.array([3, 5])))
    assert reads.count == 1
