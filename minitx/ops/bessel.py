"""Bessel functions and orthogonal polynomials, as torch.special's: the Bessel functions of the first
and second kind J_0, J_1, Y_0, Y_1, the modified ones of the first kind I_0, I_1 (i0 and i1, and e^-|x| I_0,
e^-|x| I_1: i0e and i1e; minitx.special.modified_bessel_i0 and _i1 are i0 and i1) and of the second kind
K_0, K_1 (and e^x K_0, e^x K_1), the spherical j_0, the Airy function Ai, and the classical polynomials of
degree n (Chebyshev's T, U, V, W and their shifted forms, Hermite's H and He, Laguerre's L, Legendre's P).
The other special functions (erf, lgamma, zeta, gammainc, ...) are special.py's.

All in NumPy alone (CuPy runs the same code), each in float64 whatever x's dtype, rounded once:

    J_0, J_1, Y_0, Y_1   x < 1: their power series; 1 <= x < 25: Miller's backward recurrence,
                         with Neumann's series for Y; x >= 25: Hankel's asymptotic expansion
    I_0, I_1             |x| < 40: their power series; from 40 on Hankel's asymptotic series, e^x taken
                         in two halves (finite to about x = 713.9)
    K_0, K_1             x < 1: their power series; 1 <= x < 25: the trapezoidal rule on
                         K_nu(x) = integral_0^inf exp(-x cosh t) cosh(nu t) dt; x >= 25: Hankel's
    Ai                   |x| < 1: its Maclaurin series; otherwise K_(1/3), K_(2/3) (x > 0) or J_(±1/3), J_(±2/3)
                         (x < 0) of (2/3)|x|^(3/2) as above, J by Miller's recurrence of fractional order
    polynomials          their three-term recurrences, and d/dx by the recurrence differentiated

J and Y agree with mpmath to 3e-16 absolute (1e-14 relative where |value| > 0.01, up to x = 1e20), K and
e^x K to 2e-15 relative, Ai and Ai' to 1e-14 (relative for x > 0, absolute below 0) over |x| < 12 and
5e-14 to |x| = 40, the rounding of (2/3)|x|^(3/2) (tests/ops/test_bessel.py); I_0 and I_1 to 4e-15
relative (tests/ops/test_torch_special.py). PyTorch gives none of these but I_0, I_1 and their scaled
forms a gradient; minitx gives each one.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module, to_host
from minitx.ops._args import floating
from minitx.ops.special import _in_float64

__all__ = ["AiryAi", "BesselJ0", "BesselJ1", "BesselY0", "BesselY1", "I0", "I1", "I0e", "I1e", "ModifiedBesselK0",
           "ModifiedBesselK1", "ScaledModifiedBesselK0", "ScaledModifiedBesselK1", "SphericalBesselJ0",
           "ChebyshevPolynomialT", "ChebyshevPolynomialU", "ChebyshevPolynomialV", "ChebyshevPolynomialW",
           "ShiftedChebyshevPolynomialT", "ShiftedChebyshevPolynomialU", "ShiftedChebyshevPolynomialV",
           "ShiftedChebyshevPolynomialW", "HermitePolynomialH", "HermitePolynomialHe", "LaguerrePolynomialL",
           "LegendrePolynomialP"]

_EULER = 0.57721566490153286061  # Euler's gamma = -psi(1)
# Below _NEAR each power series (its terms at most x^2/4 < 1/4 in size: no cancellation); from _FAR on
# Hankel's expansion, whose smallest term is about e^(-2x) < 2e-22 there. _SERIES_TERMS terms of the
# series leave out less than (1/4)^20 / (20!)^2; _HANKEL_TERMS terms of the expansion reach past 1e-18 at 25.
_NEAR, _FAR = 1.0, 25.0
_SERIES_TERMS, _HANKEL_TERMS = 20, 40
# Miller's recurrence starts at order _MILLER_START: J_70(25) / J_0(25) is below 1e-25, and from x >= 1 its
# values grow at most 2^70 70! / x^70 = 1e121 on the way down (no overflow).
_MILLER_START = 70
# The trapezoidal rule for K: nodes t = 0, h, ..., _K_END. Its error is about e^(-pi^2 / h) for an analytic
# integrand, and exp(-x (cosh t - 1)) is below 1e-30 of its peak past t = 5 for x >= 1.
_K_STEP, _K_END = 0.1, 5.0


def _power_series(nu, x, sign):
    """(F, G) for nu = 0 or 1 and q = sign x^2 / 4, x >= 0 (A&S 9.1.10-11 and 9.6.10-11):

        F = (x/2)^nu sum_k q^k / (k! (nu + k)!)                       J_nu for sign -1, I_nu for +1
        G = (x/2)^nu sum_k (psi(k + 1) + psi(nu + k + 1)) q^k / (k! (nu + k)!)

    with psi(k + 1) = -gamma + 1 + 1/2 + ... + 1/k. Then
        Y_nu(x) = (2/pi) log(x/2) J_nu(x) - G/pi  - (2/(pi x) for nu = 1)
        K_nu(x) = (-1)^(nu+1) log(x/2) I_nu(x) + (-1)^nu G/2  + (1/x for nu = 1)"""
    xp = get_array_module(x)
    q = sign * x * x / 4
    term = xp.full_like(x, 1.0 / math.factorial(nu))
    psi_k, psi_nu_k = -_EULER, -_EULER + (1.0 if nu else 0.0)
    plain, weighted = term, term * (psi_k + psi_nu_k)
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (nu + k))
        psi_k, psi_nu_k = psi_k + 1 / k, psi_nu_k + 1 / (nu + k)
        plain, weighted = plain + term, weighted + term * (psi_k + psi_nu_k)
    scale = (x / 2) ** nu
    return scale * plain, scale * weighted


def _hankel_terms(nu, x):
    """Hankel's terms a_k / x^k, k = 0, 1, ..., for large x (A&S 9.2.5-6 and 9.7.2):
    a_k = (4 nu^2 - 1^2)(4 nu^2 - 3^2) ... (4 nu^2 - (2k - 1)^2) / (k! 8^k)."""
    term = 1.0 + 0 * x
    yield term
    for k in range(1, _HANKEL_TERMS):
        term = term * (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * x)
        yield term


def _hankel_pq(nu, x):
    """Hankel's P = a_0 - a_2/x^2 + a_4/x^4 - ... and Q = a_1/x - a_3/x^3 + ... (_hankel_terms)."""
    p = q = 0 * x
    for k, term in enumerate(_hankel_terms(nu, x)):
        sign = 1 if k % 4 < 2 else -1
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    return p, q


def _hankel_jy(nu, x):
    """(J_nu(x), Y_nu(x)) for x >= _FAR (A&S 9.2.5-6):

        J_nu = sqrt(2/(pi x)) (P cos chi - Q sin chi),  Y_nu = sqrt(2/(pi x)) (P sin chi + Q cos chi),
        chi = x - (nu/2 + 1/4) pi,  P = a_0 - a_2/x^2 + a_4/x^4 - ...,  Q = a_1/x - a_3/x^3 + ...

    cos chi and sin chi come from cos x and sin x (chi itself would round off x - pi/4's digits for a
    large x): for nu = 0 cos chi = (cos x + sin x)/sqrt 2, sin chi = (sin x - cos x)/sqrt 2, and for
    nu = 1 chi is a quarter turn less, so cos chi is the nu = 0 sin chi and sin chi minus its cos chi."""
    xp = get_array_module(x)
    p, q = _hankel_pq(nu, x)
    c, s = xp.cos(x), xp.sin(x)
    cos_chi, sin_chi = (c + s) / math.sqrt(2), (s - c) / math.sqrt(2)
    if nu == 1:
        cos_chi, sin_chi = sin_chi, -cos_chi
    amplitude = xp.sqrt(2 / (math.pi * x))
    return amplitude * (p * cos_chi - q * sin_chi), amplitude * (p * sin_chi + q * cos_chi)


def _miller_jy(x):
    """(J_0, J_1, Y_0, Y_1) at 1 <= x < _FAR by Miller's algorithm (A&S 9.12, example 1): run
    J_(k-1) = (2k/x) J_k - J_(k+1) down from J_71 = 0, J_70 = 1 (the minimal solution, so the start's
    error dies out), and divide by the normalisation 1 = J_0 + 2 (J_2 + J_4 + ...). On the way,
    Neumann's series (A&S 9.1.88 and its derivative, with J_2k' = (J_(2k-1) - J_(2k+1))/2):

        Y_0 = (2/pi)(log(x/2) + gamma) J_0 - (4/pi) sum_k>=1 (-1)^k J_2k / k
        Y_1 = (2/pi)(log(x/2) + gamma) J_1 - 2/(pi x) J_0 + (2/pi) sum_k>=1 (-1)^k (J_(2k-1) - J_(2k+1)) / k"""
    xp = get_array_module(x)
    above, j = xp.zeros_like(x), xp.ones_like(x)  # J_(k+1), J_k, unnormalised
    norm, y0_sum, y1_sum = xp.zeros_like(x), xp.zeros_like(x), xp.zeros_like(x)
    for k in range(_MILLER_START, 0, -1):
        if k % 2 == 0:
            norm = norm + 2 * j
            y0_sum = y0_sum + (-1) ** (k // 2) * j / (k // 2)
        else:  # J_k is J_(2m-1) in the term m = (k + 1)/2 and J_(2m+1) in the term m = (k - 1)/2
            y1_sum = y1_sum + (-1) ** ((k + 1) // 2) * j / ((k + 1) // 2)
            if k > 1:
                y1_sum = y1_sum - (-1) ** ((k - 1) // 2) * j / ((k - 1) // 2)
        above, j = j, (2 * k / x) * j - above
    norm = norm + j
    j0, j1 = j / norm, above / norm
    log_term = (2 / math.pi) * (xp.log(x / 2) + _EULER)
    y0 = log_term * j0 - (4 / math.pi) * y0_sum / norm
    y1 = log_term * j1 - 2 / (math.pi * x) * j0 + (2 / math.pi) * y1_sum / norm
    return j0, j1, y0, y1


def bessel_jy_values(x):
    """(J_0(x), J_1(x), Y_0(x), Y_1(x)) in float64, each formula where it holds (the module docstring)
    on a clamped copy of |x| so the others stay finite. J_0 is even and J_1 odd; Y_0 and Y_1 are NaN
    for x < 0 and -inf at 0. At ±inf J and Y are 0, their limits (PyTorch's: NaN)."""
    xp = get_array_module(x)
    a = xp.abs(x)
    small = xp.where(a < _NEAR, a, 0.5)
    middle = xp.clip(a, _NEAR, _FAR)
    large = xp.where(xp.isfinite(a), xp.maximum(a, _FAR), _FAR)
    series = []
    for nu in (0, 1):
        j, g = _power_series(nu, small, -1)
        y = (2 / math.pi) * xp.log(small / 2) * j - g / math.pi - (2 / (math.pi * small) if nu else 0)
        series += [j, y]
    near = [series[0], series[2], series[1], series[3]]  # (J_0, J_1, Y_0, Y_1)
    (j0_far, y0_far), (j1_far, y1_far) = _hankel_jy(0, large), _hankel_jy(1, large)
    far = [j0_far, j1_far, y0_far, y1_far]
    values = [xp.where(a < _NEAR, n, xp.where(a < _FAR, m, f)) for n, m, f in zip(near, _miller_jy(middle), far)]
    values = [xp.where(xp.isinf(a), 0.0, v) for v in values]
    j0, j1, y0, y1 = values
    j1 = xp.where(xp.signbit(x), -j1, j1)
    y0 = xp.where(a == 0, -xp.inf, xp.where(x < 0, xp.nan, y0))
    y1 = xp.where(a == 0, -xp.inf, xp.where(x < 0, xp.nan, y1))
    nan = xp.isnan(x)
    return tuple(xp.where(nan, xp.nan, v) for v in (j0, j1, y0, y1))


def _trapezoid_k(nu, z):
    """e^z K_nu(z) = integral_0^inf exp(-z (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule on
    t = 0, _K_STEP, ..., _K_END (the module docstring), for 2/3 <= z <= _FAR."""
    xp = get_array_module(z)
    total = xp.zeros_like(z)
    for i in range(round(_K_END / _K_STEP) + 1):
        t = i * _K_STEP
        weight = _K_STEP / 2 if i == 0 else _K_STEP  # (the end's weight hardly matters: its term is below 1e-30)
        total = total + weight * xp.exp(-z * (math.cosh(t) - 1)) * math.cosh(nu * t)
    return total


def scaled_bessel_k_values(x):
    """(e^x K_0(x), e^x K_1(x)) in float64, each formula where it holds (the module docstring). In the
    middle the integral is taken scaled, e^x K_nu(x) = integral_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt,
    and far out Hankel's e^x K_nu(x) = sqrt(pi/(2x)) sum_k a_k / x^k: no overflow or underflow for any
    x > 0. inf at 0, 0 at +inf, NaN for x < 0 (as PyTorch's)."""
    xp = get_array_module(x)
    small = xp.where((x > 0) & (x < _NEAR), x, 0.5)
    middle = xp.where(xp.isnan(x), _NEAR, xp.clip(x, _NEAR, _FAR))
    large = xp.where(xp.isfinite(x), xp.maximum(x, _FAR), _FAR)
    i0, g0 = _power_series(0, small, 1)
    i1, g1 = _power_series(1, small, 1)
    log_half = xp.log(small / 2)
    near = [xp.exp(small) * (-log_half * i0 + g0 / 2), xp.exp(small) * (1 / small + log_half * i1 - g1 / 2)]
    middles = [_trapezoid_k(nu, middle) for nu in (0, 1)]
    fars = [xp.sqrt(math.pi / (2 * large)) * sum(_hankel_terms(nu, large)) for nu in (0, 1)]
    values = [xp.where(x < _NEAR, n, xp.where(x < _FAR, m, f)) for n, m, f in zip(near, middles, fars)]
    return tuple(xp.where(x == 0, xp.inf, xp.where(x == xp.inf, 0.0, xp.where((x < 0) | xp.isnan(x), xp.nan, v)))
                 for v in values)


def bessel_k_values(x):
    """(K_0(x), K_1(x)) in float64: e^-x times scaled_bessel_k_values (0 past x = 745, where K underflows)."""
    xp = get_array_module(x)
    scale = xp.exp(-xp.where(xp.isnan(x) | (x == 0), 0.0, x))
    return tuple(v * scale for v in scaled_bessel_k_values(x))


class _Bessel:
    """The Bessel functions' forward and backward (a base beside Function, not an op itself): y = f(x),
    forward computes f and its slope f' together in float64 (one pass of the formulas gives both), keeps
    the slope and returns y in x's dtype.   dx = dy * f'(x)"""

    def forward(self, x):
        value, slope = self.value_and_slope(x.astype(get_array_module(x).float64))
        self.save_for_backward(slope.astype(x.dtype, copy=False))
        return value.astype(x.dtype, copy=False)

    def backward(self, dy):
        (slope,) = self.saved
        return (dy * slope,)


def _over_x(v, x):
    """v / x, with x = 0 read as 1 (each caller gives the limit there)."""
    xp = get_array_module(x)
    return v / xp.where(x == 0, 1.0, x)


def _at_zero(x, slope, limit):
    """slope, but ``limit`` (the slope's limit as x -> 0+) where x = 0."""
    return get_array_module(x).where(x == 0, limit, slope)


class BesselJ0(_Bessel, Function):
    """y = J_0(x), the Bessel function of the first kind of order 0 (bessel_jy_values).   f' = -J_1(x)"""

    def value_and_slope(self, x):
        j0, j1, _, _ = bessel_jy_values(x)
        return j0, -j1


class BesselJ1(_Bessel, Function):
    """y = J_1(x) (bessel_jy_values).   f' = J_0(x) - J_1(x)/x, 1/2 at x = 0 (J_1(x)/x -> 1/2)"""

    def value_and_slope(self, x):
        j0, j1, _, _ = bessel_jy_values(x)
        return j1, _at_zero(x, j0 - _over_x(j1, x), 0.5)


class BesselY0(_Bessel, Function):
    """y = Y_0(x), the Bessel function of the second kind of order 0 (bessel_jy_values).   f' = -Y_1(x),
    +inf at x = 0"""

    def value_and_slope(self, x):
        _, _, y0, y1 = bessel_jy_values(x)
        return y0, -y1


class BesselY1(_Bessel, Function):
    """y = Y_1(x) (bessel_jy_values).   f' = Y_0(x) - Y_1(x)/x, +inf at x = 0 (Y_1(x) ~ -2/(pi x))"""

    def value_and_slope(self, x):
        _, _, y0, y1 = bessel_jy_values(x)
        return y1, _at_zero(x, y0 - _over_x(y1, x), np.inf)


class ModifiedBesselK0(_Bessel, Function):
    """y = K_0(x), the modified Bessel function of the second kind of order 0 (bessel_k_values).
    f' = -K_1(x), -inf at x = 0"""

    def value_and_slope(self, x):
        k0, k1 = bessel_k_values(x)
        return k0, -k1


class ModifiedBesselK1(_Bessel, Function):
    """y = K_1(x) (bessel_k_values).   f' = -K_0(x) - K_1(x)/x, -inf at x = 0"""

    def value_and_slope(self, x):
        k0, k1 = bessel_k_values(x)
        return k1, _at_zero(x, -k0 - _over_x(k1, x), -np.inf)


class ScaledModifiedBesselK0(_Bessel, Function):
    """y = e^x K_0(x) (scaled_bessel_k_values).   f' = e^x K_0(x) - e^x K_1(x), -inf at x = 0"""

    def value_and_slope(self, x):
        k0, k1 = scaled_bessel_k_values(x)
        return k0, _at_zero(x, k0 - k1, -np.inf)


class ScaledModifiedBesselK1(_Bessel, Function):
    """y = e^x K_1(x) (scaled_bessel_k_values).   f' = e^x K_1(x) - e^x K_0(x) - e^x K_1(x)/x, -inf at
    x = 0"""

    def value_and_slope(self, x):
        k0, k1 = scaled_bessel_k_values(x)
        return k1, _at_zero(x, k1 - k0 - _over_x(k1, x), -np.inf)


# j_1(x) = sum_k (-1)^k (2k + 2) x^(2k+1) / (2k + 3)!: its terms to k = 9 for |x| < 1, where
# sin x / x^2 - cos x / x would cancel (at x = 1e-3 it keeps 10 digits)
_J1_SERIES = [(-1) ** k * (2 * k + 2) / math.factorial(2 * k + 3) for k in range(10)]


class SphericalBesselJ0(_Bessel, Function):
    """y = j_0(x) = sin(x) / x, the spherical Bessel function of the first kind of order 0: 1 at x = 0, 0
    at ±inf.   f' = -j_1(x) = cos(x)/x - sin(x)/x^2, by its power series (_J1_SERIES) for |x| < 1"""

    def value_and_slope(self, x):
        xp = get_array_module(x)
        finite = xp.where(xp.isinf(x), 1.0, x)
        value = xp.where(x == 0, 1.0, xp.sin(finite) / xp.where(x == 0, 1.0, finite))
        near = xp.where(xp.abs(x) < 1, x, 0.0)
        series = sum(c * near ** (2 * k + 1) for k, c in enumerate(_J1_SERIES))
        j1 = xp.where(xp.abs(x) < 1, series, value / finite - xp.cos(finite) / finite)
        inf = xp.isinf(x)
        return xp.where(inf, 0.0, value), xp.where(inf, 0.0, -j1)


def bessel_j0(x): return BesselJ0()(floating(x))
def bessel_j1(x): return BesselJ1()(floating(x))
def bessel_y0(x): return BesselY0()(floating(x))
def bessel_y1(x): return BesselY1()(floating(x))
def modified_bessel_k0(x): return ModifiedBesselK0()(floating(x))
def modified_bessel_k1(x): return ModifiedBesselK1()(floating(x))
def scaled_modified_bessel_k0(x): return ScaledModifiedBesselK0()(floating(x))
def scaled_modified_bessel_k1(x): return ScaledModifiedBesselK1()(floating(x))
def spherical_bessel_j0(x): return SphericalBesselJ0()(floating(x))


# The modified Bessel functions I_0 and I_1. Below |x| = _I_SWITCH their power series,
#   I_nu(x) = (x/2)^nu sum_k (x^2/4)^k / (k! (k + nu)!),
# all terms positive (no cancellation), _I_SERIES terms (the first left out is below 1e-17 of the
# sum there); above, Hankel's asymptotic series
#   I_nu(x) = e^x / sqrt(2 pi x) sum_k a_k,  a_0 = 1,  a_k = -a_(k-1) (4 nu^2 - (2k - 1)^2) / (8 k x),
# _I_HANKEL_TERMS terms (at x >= 40 the first left out is below 1e-17). e^x is taken in two halves, so
# I_nu(x) stays finite up to about x = 713.9, where e^x alone would overflow past 709.78.
_I_SWITCH, _I_SERIES, _I_HANKEL_TERMS = 40.0, 90, 30


def bessel_i_values(nu, x, scaled=False):
    """I_nu(x) for nu = 0 or 1 (float64): even in x for nu = 0, odd for nu = 1; I_0(±inf) = inf and
    I_1(±inf) = ±inf (PyTorch's are NaN). Agrees with mpmath to 4e-15 relative (tests/ops/test_torch_special.py).
    scaled: exp(-|x|) I_nu(x) instead (i0e, i1e), the series times exp(-|x|) and Hankel's without its e^x,
    finite for every x (0 at ±inf, as PyTorch's)."""
    xp = get_array_module(x)
    a = xp.abs(x)
    near = xp.minimum(a, _I_SWITCH)   # each series only where it holds, the other branch kept finite
    q = near * near / 4
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, _I_SERIES):
        term = term * q / (k * (k + nu))
        total = total + term
    series = total * (near / 2) ** nu * (xp.exp(-near) if scaled else 1)
    far = xp.maximum(a, _I_SWITCH)
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, _I_HANKEL_TERMS):
        term = -term * (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * far)
        total = total + term
    half = xp.exp(far / 2) if not scaled else 1
    hankel = half * (half * total / xp.sqrt(2 * math.pi * far))
    y = xp.where(a < _I_SWITCH, series, hankel)
    y = xp.where(xp.isinf(a), 0.0 if scaled else xp.inf, y)
    return xp.copysign(y, x) if nu == 1 else y


class I0(Function):
    """y = I_0(x), the modified Bessel function of the first kind of order 0 (see bessel_i_values).
    dx = dy * I_1(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lambda v: bessel_i_values(0, v), x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: bessel_i_values(1, v), x),)


def i0(x): return I0()(floating(x))


class I1(Function):
    """y = I_1(x), the modified Bessel function of the first kind of order 1 (see bessel_i_values).
    dx = dy * (I_0(x) - y / x),  dy / 2 at x = 0 (the limit: y / x -> 1/2)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(1, v), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        i0_x = _in_float64(lambda v: bessel_i_values(0, v), x)
        return (dy * xp.where(x == 0, x.dtype.type(0.5), i0_x - y / xp.where(x == 0, x.dtype.type(1), x)),)


def i1(x): return I1()(floating(x))


class I0e(Function):
    """y = exp(-|x|) I_0(x) (see bessel_i_values, scaled).   dx = dy (i1e(x) - sign(x) y)
    (0 at x = 0, between the slopes -1 and 1 of its kink there, as PyTorch's)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(0, v, scaled=True), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        i1e_x = _in_float64(lambda v: bessel_i_values(1, v, scaled=True), x)
        return (dy * (i1e_x - get_array_module(x).sign(x) * y),)


def i0e(x): return I0e()(floating(x))


class I1e(Function):
    """y = exp(-|x|) I_1(x) (see bessel_i_values, scaled).   dx = dy (i0e(x) - y (sign(x) + 1 / x)),
    dy / 2 at x = 0 (the limit: y / x -> 1/2)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(1, v, scaled=True), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        i0e_x = _in_float64(lambda v: bessel_i_values(0, v, scaled=True), x)
        slope = i0e_x - y * (xp.sign(x) + 1 / xp.where(x == 0, x.dtype.type(1), x))
        return (dy * xp.where(x == 0, x.dtype.type(0.5), slope),)


def i1e(x): return I1e()(floating(x))


# Ai(0) = 1 / (3^(2/3) Gamma(2/3)) and -Ai'(0) = 1 / (3^(1/3) Gamma(1/3)), the Maclaurin series' constants
_AI0, _MINUS_AI0_SLOPE = 1 / (3 ** (2 / 3) * math.gamma(2 / 3)), 1 / (3 ** (1 / 3) * math.gamma(1 / 3))
_AIRY_SERIES_TERMS = 12  # at |x| < 1 the term k is below 1/(3k)!: 12 terms leave out less than 1e-50


def _airy_series(x):
    """(Ai(x), Ai'(x)) for |x| < 1 by the Maclaurin series (A&S 10.4.2-3):
        Ai = c1 f - c2 g,  f = sum_k a_k x^(3k),  a_k = a_(k-1) / ((3k - 1) 3k),  a_0 = 1
                           g = sum_k b_k x^(3k+1), b_k = b_(k-1) / (3k (3k + 1)),  b_0 = 1
    and Ai' = c1 f' - c2 g' term by term: with the terms s = a_(k-1) x^(3k-3), t = b_(k-1) x^(3k-2) of the
    step before, f' gains 3k a_k x^(3k-1) = x^2 s / (3k - 1) and g' gains (3k + 1) b_k x^(3k) = x^2 t / 3k
    (c1 = _AI0, c2 = _MINUS_AI0_SLOPE)."""
    square, cube = x * x, x * x * x
    s, t = 1.0 + 0 * x, x
    f, g, df, dg = s, t, 0 * x, 1.0 + 0 * x
    for k in range(1, _AIRY_SERIES_TERMS):
        df, dg = df + square * s / (3 * k - 1), dg + square * t / (3 * k)
        s, t = s * cube / ((3 * k - 1) * 3 * k), t * cube / (3 * k * (3 * k + 1))
        f, g = f + s, g + t
    return _AI0 * f - _MINUS_AI0_SLOPE * g, _AI0 * df - _MINUS_AI0_SLOPE * dg


def _scaled_k(nu, z):
    """e^z K_nu(z) for z >= 2/3: below _FAR the trapezoidal rule (_trapezoid_k), from there Hankel's."""
    xp = get_array_module(z)
    middle, large = xp.minimum(z, _FAR), xp.maximum(z, _FAR)
    return xp.where(z < _FAR, _trapezoid_k(nu, middle), xp.sqrt(math.pi / (2 * large)) * sum(_hankel_terms(nu, large)))


def _miller_fractional(nu, z):
    """(J_nu(z), J_(nu+1)(z)) for -1 < nu < 0 and 2/3 <= z <= _FAR, by Miller's algorithm as _miller_jy:
    J_(m-1) = (2m/z) J_m - J_(m+1) down from m = nu + _MILLER_START, normalised by (A&S 9.1.87)
        (z/2)^nu = sum_k (nu + 2k) Gamma(nu + k) / k! J_(nu+2k)(z)."""
    above, j = 0 * z, 1.0 + 0 * z
    # Gamma(nu + k) / k! for each k, upward from Gamma(nu)
    ratios = [math.gamma(nu)]
    for k in range(1, _MILLER_START // 2 + 1):
        ratios.append(ratios[-1] * (nu + k - 1) / k)
    norm = 0 * z
    for k in range(_MILLER_START, 0, -1):  # j is J_(nu+k)
        if k % 2 == 0:
            norm = norm + (nu + k) * ratios[k // 2] * j
        above, j = j, (2 * (nu + k) / z) * j - above
    norm = norm + nu * ratios[0] * j
    scale = (z / 2) ** nu / norm
    return j * scale, above * scale


def _hankel_j(nu, z):
    """J_nu(z) for z >= _FAR by Hankel's expansion (as _hankel_jy), chi = z - (nu/2 + 1/4) pi."""
    xp = get_array_module(z)
    p, q = _hankel_pq(nu, z)
    chi = z - (nu / 2 + 0.25) * math.pi
    return xp.sqrt(2 / (math.pi * z)) * (p * xp.cos(chi) - q * xp.sin(chi))


def airy_values(x):
    """(Ai(x), Ai'(x)) in float64. |x| < 1: the Maclaurin series. Otherwise through Bessel functions of
    zeta = (2/3) |x|^(3/2) (A&S 10.4.14-16):
        x >= 1:   Ai(x) = sqrt(x/3) K_(1/3)(zeta) / pi,          Ai'(x) = -x K_(2/3)(zeta) / (pi sqrt 3)
        x <= -1:  Ai(x) = sqrt|x| (J_(1/3) + J_(-1/3)) / 3,      Ai'(x) = |x| (J_(2/3) - J_(-2/3)) / 3
    K scaled (_scaled_k) times e^-zeta, J by Miller's recurrence below zeta = _FAR and Hankel's from there.
    0 at ±inf, their limits (PyTorch's: NaN)."""
    xp = get_array_module(x)
    a = xp.where(xp.isfinite(x), xp.abs(x), 1.0)
    small = xp.where(a < 1, x, 0.5)
    zeta = (2 / 3) * xp.maximum(a, 1.0) ** 1.5
    ai_near, slope_near = _airy_series(small)
    decay = xp.exp(-zeta)
    ai_right = xp.sqrt(a / 3) / math.pi * _scaled_k(1 / 3, zeta) * decay
    slope_right = -a / (math.pi * math.sqrt(3)) * _scaled_k(2 / 3, zeta) * decay
    middle, large = xp.minimum(zeta, _FAR), xp.maximum(zeta, _FAR)
    j_minus_third, j_two_thirds = _miller_fractional(-1 / 3, middle)
    j_minus_two_thirds, j_third = _miller_fractional(-2 / 3, middle)
    near = zeta < _FAR
    j_third, j_minus_third = (xp.where(near, j, _hankel_j(nu, large))
                              for j, nu in ((j_third, 1 / 3), (j_minus_third, -1 / 3)))
    j_two_thirds, j_minus_two_thirds = (xp.where(near, j, _hankel_j(nu, large))
                                        for j, nu in ((j_two_thirds, 2 / 3), (j_minus_two_thirds, -2 / 3)))
    ai_left = xp.sqrt(a) * (j_third + j_minus_third) / 3
    slope_left = a * (j_two_thirds - j_minus_two_thirds) / 3
    values = []
    for n, r, l in ((ai_near, ai_right, ai_left), (slope_near, slope_right, slope_left)):
        v = xp.where(a < 1, n, xp.where(x > 0, r, l))
        values.append(xp.where(xp.isinf(x), 0.0, xp.where(xp.isnan(x), xp.nan, v)))
    return tuple(values)


class AiryAi(_Bessel, Function):
    """y = Ai(x), the Airy function of the first kind, the solution of y'' = x y that decays as x -> +inf
    (airy_values).   f' = Ai'(x), which airy_values computes beside it"""

    def value_and_slope(self, x):
        return airy_values(x)


def airy_ai(x): return AiryAi()(floating(x))


class _OrthogonalPolynomial:
    """(The polynomials' forward and backward, a base beside Function.) y = P_n(x), one family's polynomial of degree n (n an integer array, broadcast with x; no gradient
    to it), by the family's three-term recurrence (``first`` and ``step``):

        P_0 = 1,  P_1 = alpha_0 x + beta_0,  P_(k+1) = (alpha_k x + beta_k) P_k - gamma_k P_(k-1),

    and 0 where n < 0, as PyTorch's. Its slope by the same recurrence differentiated:

        P_0' = 0,  P_1' = alpha_0,  P_(k+1)' = alpha_k P_k + (alpha_k x + beta_k) P_k' - gamma_k P_(k-1)'.

    dx = dy * P_n'(x). The shifted families are evaluated at u = 2x - 1, where dx = dy * 2 P_n'(u).
    In float64, max(n) steps for every element (PyTorch's takes each element's own n): max(n) is one
    counted host read (backend.to_host)."""

    shifted = False

    def forward(self, x, n):
        xp = get_array_module(x)
        u = x.astype(xp.float64)
        u = 2 * u - 1 if self.shifted else u
        alpha, beta = self.first
        previous, current = xp.ones_like(u), alpha * u + beta       # P_(k-1), P_k at k = 1
        d_previous, d_current = xp.zeros_like(u), alpha + 0 * u     # their slopes
        value = xp.where(n == 0, 1.0, xp.where(n == 1, current, 0.0))
        slope = xp.where(n == 1, d_current, 0.0)
        for k in range(1, int(to_host(n.max())) if n.size else 0):   # (a host read, counted)
            alpha, beta, gamma = self.step(k)
            factor = alpha * u + beta
            previous, current, d_previous, d_current = (current, factor * current - gamma * previous, d_current,
                                                        alpha * current + factor * d_current - gamma * d_previous)
            value = xp.where(n == k + 1, current, value)
            slope = xp.where(n == k + 1, d_current, slope)
        self.save_for_backward(((2 if self.shifted else 1) * slope).astype(x.dtype, copy=False))
        return value.astype(x.dtype, copy=False)

    def backward(self, dy):
        (slope,) = self.saved
        return dy * slope, None


class _Chebyshev(_OrthogonalPolynomial):
    """Chebyshev's four kinds differ in P_1 alone: P_(k+1) = 2x P_k - P_(k-1)."""

    @staticmethod
    def step(k): return 2.0, 0.0, 1.0


class ChebyshevPolynomialT(_Chebyshev, Function):
    """T_n(x) = cos(n arccos x): T_1 = x, T_(k+1) = 2x T_k - T_(k-1).   (T_n' = n U_(n-1))"""

    first = (1.0, 0.0)


class ChebyshevPolynomialU(_Chebyshev, Function):
    """U_n(cos t) = sin((n + 1) t) / sin t: U_1 = 2x, U_(k+1) = 2x U_k - U_(k-1)."""

    first = (2.0, 0.0)


class ChebyshevPolynomialV(_Chebyshev, Function):
    """V_n(cos t) = cos((n + 1/2) t) / cos(t/2) = U_n - U_(n-1): V_1 = 2x - 1, V_(k+1) = 2x V_k - V_(k-1)."""

    first = (2.0, -1.0)


class ChebyshevPolynomialW(_Chebyshev, Function):
    """W_n(cos t) = sin((n + 1/2) t) / sin(t/2) = U_n + U_(n-1): W_1 = 2x + 1, W_(k+1) = 2x W_k - W_(k-1)."""

    first = (2.0, 1.0)


class ShiftedChebyshevPolynomialT(ChebyshevPolynomialT):
    """T*_n(x) = T_n(2x - 1), on [0, 1]."""

    shifted = True


class ShiftedChebyshevPolynomialU(ChebyshevPolynomialU):
    """U*_n(x) = U_n(2x - 1)."""

    shifted = True


class ShiftedChebyshevPolynomialV(ChebyshevPolynomialV):
    """V*_n(x) = V_n(2x - 1)."""

    shifted = True


class ShiftedChebyshevPolynomialW(ChebyshevPolynomialW):
    """W*_n(x) = W_n(2x - 1)."""

    shifted = True


class HermitePolynomialH(_OrthogonalPolynomial, Function):
    """The physicists' H_n: H_1 = 2x, H_(k+1) = 2x H_k - 2k H_(k-1).   (H_n' = 2n H_(n-1))"""

    first = (2.0, 0.0)

    @staticmethod
    def step(k): return 2.0, 0.0, 2.0 * k


class HermitePolynomialHe(_OrthogonalPolynomial, Function):
    """The probabilists' He_n: He_1 = x, He_(k+1) = x He_k - k He_(k-1).   (He_n' = n He_(n-1))"""

    first = (1.0, 0.0)

    @staticmethod
    def step(k): return 1.0, 0.0, float(k)


class LaguerrePolynomialL(_OrthogonalPolynomial, Function):
    """L_n: L_1 = 1 - x, L_(k+1) = ((2k + 1 - x) L_k - k L_(k-1)) / (k + 1)."""

    first = (-1.0, 1.0)

    @staticmethod
    def step(k): return -1.0 / (k + 1), (2 * k + 1) / (k + 1), k / (k + 1)


class LegendrePolynomialP(_OrthogonalPolynomial, Function):
    """P_n: P_1 = x, P_(k+1) = ((2k + 1) x P_k - k P_(k-1)) / (k + 1)."""

    first = (1.0, 0.0)

    @staticmethod
    def step(k): return (2 * k + 1) / (k + 1), 0.0, k / (k + 1)


def _polynomial(op, name, x, n):
    """op()(x, n) for x a real tensor (an integer one as float32) and n an int or an integer tensor."""
    x = floating(x)
    if isinstance(n, numbers.Integral) and not isinstance(n, bool):
        n = as_tensor(get_array_module(x.data).asarray(int(n), dtype=np.int64))
    elif not (isinstance(n, Tensor) and n.dtype.kind in "iu"):
        got = n.dtype if isinstance(n, Tensor) else type(n).__name__
        raise TypeError(f"{name}: n must be an int or an integer tensor (the degree), got {got}")
    try:
        np.broadcast_shapes(x.shape, n.shape)
    except ValueError:
        raise ValueError(f"{name}: the shapes of x {x.shape} and n {n.shape} do not broadcast") from None
    return op()(x, n)


def chebyshev_polynomial_t(x, n): return _polynomial(ChebyshevPolynomialT, "chebyshev_polynomial_t", x, n)
def chebyshev_polynomial_u(x, n): return _polynomial(ChebyshevPolynomialU, "chebyshev_polynomial_u", x, n)
def chebyshev_polynomial_v(x, n): return _polynomial(ChebyshevPolynomialV, "chebyshev_polynomial_v", x, n)
def chebyshev_polynomial_w(x, n): return _polynomial(ChebyshevPolynomialW, "chebyshev_polynomial_w", x, n)
def shifted_chebyshev_polynomial_t(x, n):
    return _polynomial(ShiftedChebyshevPolynomialT, "shifted_chebyshev_polynomial_t", x, n)
def shifted_chebyshev_polynomial_u(x, n):
    return _polynomial(ShiftedChebyshevPolynomialU, "shifted_chebyshev_polynomial_u", x, n)
def shifted_chebyshev_polynomial_v(x, n):
    return _polynomial(ShiftedChebyshevPolynomialV, "shifted_chebyshev_polynomial_v", x, n)
def shifted_chebyshev_polynomial_w(x, n):
    return _polynomial(ShiftedChebyshevPolynomialW, "shifted_chebyshev_polynomial_w", x, n)
def hermite_polynomial_h(x, n): return _polynomial(HermitePolynomialH, "hermite_polynomial_h", x, n)
def hermite_polynomial_he(x, n): return _polynomial(HermitePolynomialHe, "hermite_polynomial_he", x, n)
def laguerre_polynomial_l(x, n): return _polynomial(LaguerrePolynomialL, "laguerre_polynomial_l", x, n)
def legendre_polynomial_p(x, n): return _polynomial(LegendrePolynomialP, "legendre_polynomial_p", x, n)
