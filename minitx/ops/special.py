"""Special functions, as torch.special's: the error functions erf, erfc (exact where it is tiny), erfinv
and erfcx = exp(x^2) erfc(x); the gamma function's logarithm lgamma, its derivatives digamma and
polygamma, Hurwitz's zeta, the regularized incomplete gamma functions gammainc and gammaincc (PyTorch's
igamma and igammac) and multigammaln (mvlgamma); the standard normal distribution's ndtr, log_ndtr and
its inverse ndtri; xlogy, xlog1py and entr (a ln b, a ln(1 + b) and -p ln p, 0 where a or p is 0); and
sinc. The Bessel functions, I_0 and I_1 included, are bessel.py's; exp, log, trigonometry and the rest of
the elementwise math elementwise.py's; minitx.special (minitx/special.py) gathers them all under
torch.special's names.

In NumPy alone, no SciPy; those below in float64 whatever x's dtype, rounded once (on CuPy erf, erfc,
erfinv, erfcx and ndtri take cupyx's, the others run this code; ndtr and multigammaln are composed of
erfc and lgamma, and their gradients are those):

    erf, erfc         |x| < 1.5: erf's series; from 1.5 on erfc's continued fraction (_erf_and_erfc)
    erfinv            Giles's approximation, then four Newton steps on erf or log erfc
    erfcx             from 1.5 on erfc's continued fraction without its exp(-x^2)
    lgamma, digamma   their asymptotic series from z = 10 on, the recurrence Gamma(x + 1) = x Gamma(x)
                      below, the reflection for x < 0
    polygamma, zeta   (polygamma's n >= 2) the recurrence up to z = max(30, s), then Euler-Maclaurin's
                      series (_zeta_sum); polygamma's reflection for x < 0
    ndtr, log_ndtr    ndtr = erfc(-x / sqrt 2) / 2; log_ndtr by its asymptotic series below x = -20
    ndtri             sqrt(2) erfinv(2q - 1) for q = min(p, 1 - p) >= 1/4, below Newton's steps on log_ndtr
    gammainc(c)       the series for x < a + 1, the continued fraction from there on (Lentz's method)

Each gradient is the local derivative times ``dy``; zeta, gammainc and gammaincc refuse one in their
first argument, by name (PyTorch has none either). The tests: tests/ops/test_special.py,
test_torch_special.py and test_torch_special_second.py (erf's in test_unary.py).
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from minitx import backend
from minitx.autograd.function import Function
from minitx.backend import get_array_module
from minitx.ops._args import binary, common_16_bits, floating, promote
from minitx.ops.elementwise import dy_where

__all__ = ["Erf", "Erfc", "Erfinv", "Lgamma", "Digamma", "Polygamma", "Xlogy", "Xlog1py", "Entr", "LogNdtr",
           "Erfcx", "Ndtri", "Zeta", "GammaInc", "Sinc"]


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT1_2 = math.sqrt(0.5)


_ERF_SWITCH = 1.5  # |x| below it: erf's series; from it on: erfc's continued fraction
_ERFC_LEVELS = 100  # the fraction's depth: exact to float64 rounding from |x| = 1.5 on


def _erf_and_erfc(x):
    """(erf(a), erfc(a)) for a = |x|, in float64. Below a = 1.5

        erf(a)  = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (1 * 3 * ... * (2n+1))

    (only positive terms, no cancellation; 60 of them reach float64 rounding), and elsewhere

        erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + ...)))))

    (100 levels, evaluated from the innermost out). 1 - erfc(a) is erf(a) there, and 1 - erf(a)
    is erfc(a) below 1.5 (erfc(1.5) = 0.034: the subtraction loses about 5 bits). Computed in
    float64 whatever x's dtype: in float32 those 5 bits would be 5 of its 24.
    """
    xp = get_array_module(x)
    a = xp.abs(x).astype(xp.float64)
    small = a < _ERF_SWITCH
    s = xp.where(small, a, 0.0)
    term, total = s, s
    for n in range(1, 60):
        term = term * (2 * s * s / (2 * n + 1))
        total = total + term
    series = _TWO_OVER_SQRT_PI * xp.exp(-s * s) * total
    # 1.5 keeps the unused entries finite; past 30 erfc is 0 in float64 (below 1e-323 from 27.3 on)
    b = xp.minimum(xp.where(small, _ERF_SWITCH, a), 30.0)
    erfc = _exp_minus_square(b) / math.sqrt(math.pi) / _erfc_fraction(b)[0]
    return xp.where(small, series, 1 - erfc), xp.where(small, 1 - series, erfc)


def _erfc_fraction(b):
    """(F, G) for b >= 1.5: erfc(b) = exp(-b^2) / (sqrt(pi) F), the continued fraction above,
    F = b + (1/2) / G,  G = b + 1/(b + (3/2)/(b + 2/(b + ...))), _ERFC_LEVELS levels from the innermost out."""
    inner = b
    for k in range(_ERFC_LEVELS, 1, -1):
        inner = b + (k / 2) / inner
    return b + 0.5 / inner, inner


def _exp_minus_square(b, sign=-1):
    """exp(-b^2) (exp(b^2) for sign = 1) for 0 <= b <= 30 without the rounding of b^2 (an error of 7e-14
    at b = 26): with h = b cut to a multiple of 1/16, h^2 is exact and b^2 = h^2 + (b - h)(b + h)."""
    xp = get_array_module(b)
    h = xp.trunc(b * 16) / 16
    return xp.exp(sign * h * h) * xp.exp(sign * (b - h) * (b + h))


def erf_values(x):
    """erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt, vectorised (NumPy has no erf; CuPy's comes
    from cupyx): erf(a) by its series below |x| = 1.5, 1 - erfc(a) from there on (_erf_and_erfc),
    and erf(-a) = -erf(a). Agrees with math.erf to about 2e-15 relative (tests/ops/test_unary.py).
    """
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erf(x)
    return (xp.sign(x) * _erf_and_erfc(x)[0]).astype(x.dtype, copy=False)


def erfc_values(x):
    """erfc(x) = 1 - erf(x), exact where erfc is tiny (not 1 - erf(x), which is 0 from x = 6 on
    and loses digits long before): erfc(a) by its continued fraction from |x| = 1.5 on, 1 - erf(a)
    below (_erf_and_erfc), and erfc(-a) = 2 - erfc(a). Agrees with math.erfc to about 1e-14 relative
    up to x = 26, where erfc is 5e-296, and to float32's rounding in float32 (tests/ops/test_special.py)."""
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfc(x)
    upper = _erf_and_erfc(x)[1]  # erfc(|x|)
    return xp.where(x < 0, 2 - upper, upper).astype(x.dtype, copy=False)


def _erf_numpy(z):
    """erf on numpy arrays through math.erf (numpy has none). Exact but a Python call per
    element: on the CPU the "tanh" approximation is the fast choice for big activations."""
    return np.vectorize(math.erf, otypes=[z.dtype])(z) if z.size else z.copy()


class Erf(Function):
    """y = erf x (see erf_values).   dx = dy * 2/sqrt(pi) * exp(-x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return erf_values(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _TWO_OVER_SQRT_PI * get_array_module(x).exp(-x * x),)


def erf(x): return Erf()(floating(x))


class Erfc(Function):
    """y = erfc x = 1 - erf x (see erfc_values: exact where it is tiny).   dx = -dy * 2/sqrt(pi) * exp(-x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return erfc_values(x)

    def backward(self, dy):
        (x,) = self.saved
        return (-dy * _TWO_OVER_SQRT_PI * get_array_module(x).exp(-x * x),)


def erfc(x): return Erfc()(floating(x))


# Giles's polynomials in w = -log(1 - z^2), highest power first ("Approximating the erfinv function", 2010)
_ERFINV_CENTRE = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941]
_ERFINV_TAIL = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682]


def _horner(coefficients, w):
    """sum_k c_k w^(n-k) for coefficients c_0 .. c_n, highest power first (NumPy's polyval, on either device)."""
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * w + c
    return total


def erfinv_values(z):
    """erfinv(z), the x with erf(x) = z, for z in [-1, 1] (±inf at ±1, NaN outside). With a = |z|
    and erfinv(-a) = -erfinv(a), Giles's approximation first (relative error below 4e-7 for
    1 - a > 6e-8, a few percent nearer 1):

        w = -log(1 - a^2);   x = a * (centre(w - 2.5) if w < 5, else tail(sqrt(w) - 3))

    then four Newton steps, which square the error each time. For a < 1/2 on erf(x) = a,

        x <- x - (erf(x) - a) / (2/sqrt(pi) * exp(-x^2)),

    and from 1/2 on, on log erfc(x) = log(1 - a): 1 - a is exact there, where erf(x) - a would
    lose what erf's flat tail and a's rounding leave (erf(5.8) = 1 - 1e-16), and the log makes
    the step as good from afar as near (erfc falls as exp(-x^2)):

        x <- x + (log erfc(x) - log(1 - a)) * erfc(x) / (2/sqrt(pi) * exp(-x^2)).

    Agrees with mpmath's erfinv to about 1e-15 relative in float64 up to 1 - a = 1e-16 (tests/ops/test_special.py).
    """
    xp = get_array_module(z)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfinv(z)
    with np.errstate(all="ignore"):  # z = ±1 (inf) and |z| > 1 (NaN): set at the end
        a = xp.abs(z).astype(xp.float64)
        inside = a < 1
        a = xp.where(inside, a, 0.5)
        w = -xp.log1p(-a * a)
        x = a * xp.where(w < 5, _horner(_ERFINV_CENTRE, w - 2.5), _horner(_ERFINV_TAIL, xp.sqrt(w) - 3))
        near_one, log_rest = a >= 0.5, xp.log1p(-a)
        for _ in range(4):
            slope = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
            erf, rest = _erf_and_erfc(x)
            x = xp.where(near_one, x + (xp.log(rest) - log_rest) * rest / slope, x - (erf - a) / slope)
        x = xp.where(inside, x, xp.where(xp.abs(z) == 1, xp.inf, xp.nan))
        return xp.copysign(x, z).astype(z.dtype, copy=False)


class Erfinv(Function):
    """y = erfinv x, the inverse of erf on [-1, 1] (see erfinv_values).   dx = dy * sqrt(pi)/2 * exp(y^2)
    (1 / erf'(y); inf at x = ±1)"""

    def forward(self, x):
        y = erfinv_values(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (math.sqrt(math.pi) / 2) * get_array_module(y).exp(y * y),)


def erfinv(x): return Erfinv()(floating(x))


# The gamma function's logarithm and its derivatives, for z >= 10 by their asymptotic series (exact
# there to float64 rounding with these terms), below by the recurrence Gamma(x + 1) = x Gamma(x),
# which steps x up to z = x + n >= 10, and for x < 0 by the reflection Gamma(x) Gamma(1 - x) =
# pi / sin(pi x). Coefficients in powers of w = 1 / z^2, highest first; B_2k are Bernoulli's numbers.
_SHIFT = 10
# lgamma(z) = (z - 1/2) log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k-1)),  over z
_LGAMMA_SERIES = [1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12]
# digamma(z) = log z - 1 / (2z) - sum_k B_2k / (2k z^2k),  the sum over w
_DIGAMMA_SERIES = [1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12]
# trigamma(z) = 1/z + 1 / (2 z^2) + sum_k B_2k / z^(2k+1),  the sum over z
_TRIGAMMA_SERIES = [7 / 6, -691 / 2730, 5 / 66, -1 / 30, 1 / 42, -1 / 30, 1 / 6]
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def _stepped_up(x, term):
    """(z, total): z = x + n, stepped up by ones until z >= 10 (for x > 0, at most 10 steps), and
    total = term(x) + term(x + 1) + ... + term(x + n - 1), what the recurrence leaves behind."""
    xp = get_array_module(x)
    z, total = x, xp.zeros_like(x)
    for _ in range(_SHIFT):
        below = z < _SHIFT
        total = total + xp.where(below, term(z), 0.0)
        z = xp.where(below, z + 1, z)
    return z, total


def _reflected(x):
    """(reflect, u, r): where x < 0, u = 1 - x > 1 (else u = x), and r = x - round(x) in [-1/2,
    1/2], exact, for sin(pi x) = ±sin(pi r) and tan(pi x) = tan(pi r) (pi x itself would round
    away the fraction of a large x); r = 0 at the poles x = 0, -1, -2, ..."""
    xp = get_array_module(x)
    reflect = x < 0
    return reflect, xp.where(reflect, 1 - x, x), x - xp.round(x)


def lgamma_values(x):
    """lgamma(x) = log |Gamma(x)| (float64 in, float64 out): inf at 0, the negative integers and
    ±inf. With lgamma(x) = lgamma(x + n) - log(x (x + 1) ... (x + n - 1)) (_stepped_up), and for
    x < 0 lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x). Near its zeros x = 1 and 2 the
    recurrence leaves an absolute error of about 4e-15 (lgamma(11) = 15.1 less about as much)."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, logs = _stepped_up(u, xp.log)
    w = 1 / (z * z)
    y = (z - 0.5) * (xp.log(z) - 1) - 0.5 + _HALF_LOG_TWO_PI + _horner(_LGAMMA_SERIES, w) / z - logs
    y = xp.where(reflect, xp.log(math.pi / xp.abs(xp.sin(math.pi * r))) - y, y)
    return xp.where(xp.isinf(x), xp.inf, y)


def digamma_values(x):
    """digamma(x) = d/dx lgamma(x) (float64): with digamma(x) = digamma(x + n) - sum_k 1 / (x + k)
    (_stepped_up), and for x < 0 digamma(x) = digamma(1 - x) - pi / tan(pi x). At x = ±0: ∓inf,
    at the negative integers and -inf: NaN, as PyTorch's."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, reciprocals = _stepped_up(u, lambda v: 1 / v)
    w = 1 / (z * z)
    y = xp.log(z) - 0.5 / z - w * _horner(_DIGAMMA_SERIES, w) - reciprocals
    y = xp.where(reflect, y - math.pi / xp.tan(math.pi * r), y)
    y = xp.where(reflect & (r == 0), xp.nan, y)  # the poles below 0, whose sign depends on the side
    return xp.where(x == 0, xp.copysign(xp.inf, -x), y)


def trigamma_values(x):
    """trigamma(x) = d/dx digamma(x) (float64): with trigamma(x) = trigamma(x + n) + sum_k 1 / (x + k)^2
    (_stepped_up), and for x < 0 trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x): +inf at 0 and
    the negative integers (PyTorch's is finite there, its pi x rounded off the pole), NaN at -inf."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, squares = _stepped_up(u, lambda v: 1 / (v * v))
    w = 1 / (z * z)
    y = 1 / z + 0.5 * w + _horner(_TRIGAMMA_SERIES, w) * w / z + squares
    return xp.where(reflect, (math.pi / xp.sin(math.pi * r)) ** 2 - y, y)


def _in_float64(values, x):
    """values(x) computed in float64 and returned in x's dtype: the recurrences' sums keep their
    digits, and float16 would overflow in them (x (x + 1) ... (x + 9) past 65504)."""
    return values(x.astype(get_array_module(x).float64)).astype(x.dtype, copy=False)


class Lgamma(Function):
    """y = log |Gamma(x)| (see lgamma_values).   dx = dy * digamma(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lgamma_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(digamma_values, x),)


def lgamma(x): return Lgamma()(floating(x))


class Digamma(Function):
    """y = digamma(x) = Gamma'(x) / Gamma(x) (see digamma_values).   dx = dy * trigamma(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(digamma_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(trigamma_values, x),)


def digamma(x): return Digamma()(floating(x))


# polygamma(n, x) for n >= 2 = (-1)^(n+1) n! zeta(n + 1, x), Hurwitz's zeta(s, x) = sum_k>=0 1 / (x + k)^s:
# the terms below z = x + m >= _ZETA_SHIFT summed directly (the recurrence), the rest by Euler-Maclaurin,
# zeta(s, z) = z^(1-s) / (s-1) + z^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) z^(1-s-2j),  j = 1.._ZETA_TERMS
_ZETA_SHIFT, _ZETA_TERMS, _ZETA_FLOOR = 30, 12, -1e5
_LARGEST_FACTORIAL = 170   # 171! > float64's largest
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
              854513 / 138, -236364091 / 2730]  # B_2 .. B_24


def _zeta_tail(s, z, unit=1.0):
    """unit^s zeta(s, z) for z >= max(_ZETA_SHIFT, s) by Euler-Maclaurin's series (above), its terms built
    one from the last (s a number or an array), each z^-p unit^s taken as (z / unit)^-p unit^(s-p), so that
    neither factor leaves float64's range (see _zeta_sum)."""
    xp = get_array_module(z)
    w = z / unit
    total = w ** (1 - s) * unit / (s - 1) + 0.5 * w ** -s
    rising, factorial, power = s, 2, w ** (-s - 1) / unit   # s (s+1)...(s+2j-2), (2j)!, unit^s z^(1-s-2j) at j = 1
    for j, b in enumerate(_BERNOULLI[:_ZETA_TERMS], start=1):
        total = total + b / factorial * rising * power
        rising = rising * ((s + 2 * j - 1) * (s + 2 * j))   # (not *=: s may be the caller's array)
        factorial *= (2 * j + 1) * (2 * j + 2)
        power = power / (z * z)
    return xp.asarray(total)


def _zeta_sum(s, z, unit=1.0):
    """unit^s zeta(s, z) = sum_k>=0 (unit / (z + k))^s (float64) for s > 1 (a number or an array) and finite
    z off the poles 0, -1, -2, ...: the terms summed directly (the recurrence) until z + m >= max(_ZETA_SHIFT, s),
    from where the tail's series (_zeta_tail) shrinks by at least (s + 2j)^2 / (2 pi z)^2 a term, or until
    a term (z + m > 0) falls below 1e-17 of the sum, past which the rest is smaller still. A z below 0
    takes |z| steps more: zeta_values refuses q below _ZETA_FLOOR; polygamma reflects x < 0 to 1 - x > 1.
    unit = z keeps a sum whose terms z^-s underflow in range (its first term 1); unit = 1 is zeta itself,
    to the bit."""
    xp = get_array_module(z)
    level = xp.maximum(_ZETA_SHIFT, s)
    z, level = xp.broadcast_arrays(z, level)
    head = xp.zeros_like(z)
    going = z < level
    while bool(backend.to_host(going.any())):   # (a host read a step, counted)
        term = xp.where(going, xp.where(going, z / unit, 1) ** -s, 0.0)   # (not 1 / z^s: 0 once z^s overflows)
        head = head + term
        z = xp.where(going, z + 1, z)
        negligible = (z > 0) & ((xp.abs(term) <= 1e-17 * xp.abs(head)) | xp.isinf(head))
        going = going & (z < level) & ~negligible
    stopped = z < level   # the rest below rounding
    return head + xp.where(stopped, 0.0, _zeta_tail(s, xp.where(stopped, level, z), unit))


@functools.cache
def _cot_derivative(n):
    """pi^(n+1) C_n(c) / n! as coefficients in c, highest power first (for _horner), where
    d^n/dx^n pi cot(pi x) = pi^(n+1) C_n(cot(pi x)): C_0(c) = c and, as d/dx cot(pi x) = -pi (1 + cot^2(pi x)),
    C_(k+1)(c) = -(1 + c^2) C_k'(c); so C_1 = -(1 + c^2), C_2 = 2c + 2c^3, C_3 = -(2 + 8c^2 + 6c^4), each
    coefficient of one sign. Built in integers (exact) and divided by n! once, which keeps them within
    float64's range as long as n! is."""
    C = [0, 1]   # C_0, lowest power first
    for _ in range(n):
        slope = [k * a for k, a in enumerate(C)][1:]   # C_k'
        C = [-(a + b) for a, b in zip(slope + [0, 0], [0, 0] + slope)]   # -(1 + c^2) C_k'
    return [a / math.factorial(n) * math.pi ** (n + 1) for a in reversed(C)]


def _cot_pi(r):
    """cot(pi r) for r = x - round(x) in [-1/2, 1/2] (_reflected's, exact): 1 / tan(pi r) for |r| <= 1/4,
    and beyond tan(pi (1/2 - |r|)) with r's sign (1/2 - |r| exact): near r = ±1/2, where cot is near 0,
    1 / tan(pi r) keeps only pi r's absolute rounding, 2e-12 relative of polygamma(4, -17.500018)."""
    xp = get_array_module(r)
    a = xp.abs(r)
    with np.errstate(divide="ignore"):   # (r = 0: the poles, answered by the caller)
        return xp.where(a <= 0.25, 1 / xp.tan(math.pi * r), xp.copysign(xp.tan(math.pi * (0.5 - a)), r))


def polygamma_values(n, x):
    """polygamma(n, x), the n-th derivative of digamma (float64): digamma_values and trigamma_values for
    n = 0 and 1, and for n >= 2 (-1)^(n+1) n! zeta(n + 1, x) (above) for x > 0. For x < 0 the reflection
    digamma(1 - x) - digamma(x) = pi cot(pi x), differentiated n times,
        polygamma(n, x) = (-1)^n polygamma(n, 1 - x) - pi^(n+1) C_n(cot(pi x))     (C_n: _cot_derivative)
                        = -n! (zeta(n + 1, 1 - x) + pi^(n+1) C_n(cot(pi x)) / n!),
    cot(pi x) = cot(pi r) from r = x - round(x) (_cot_pi), so a large |x| loses nothing and the recurrence
    takes at most max(_ZETA_SHIFT, n + 1) steps. Its error is about 2e-15 of its two terms' sizes: relative
    for n odd (C_n's terms and zeta's of one sign) and for n even but near polygamma's zeros (the direct
    sum from x up is 1e-13 relative off at x = -17.500018). Where n! or zeta(n + 1, u) alone leaves
    float64 (n > 170, or zeta below 1e-304), n! zeta(n + 1, u) is taken as n! / u^(n+1) (through its
    logarithm, about log(n!) eps relative) times the sum u^(n+1) zeta(n + 1, u) (_zeta_sum's unit = u);
    for n > 170 and x < 0 the pole nearest x makes polygamma overflow but at the half integers, n even.
    At 0 and the negative integers (-1)^(n+1) inf, as PyTorch's; at +inf 0 and at -inf NaN (PyTorch's
    gives NaN at +inf)."""
    if n == 0:
        return digamma_values(x)
    if n == 1:
        return trigamma_values(x)
    xp = get_array_module(x)
    finite = xp.isfinite(x)
    pole = (x <= 0) & (x == xp.round(x))
    reflect, u, r = _reflected(xp.where(finite & ~pole, x, _ZETA_SHIFT))   # (the others are answered below)
    s, sign = n + 1, (-1) ** (n + 1)
    # zeta(s, u) is within a factor 2 of u^-s (1 + u / n): where it or n! would leave float64 (below
    # 1e-304 or above 170!), n! zeta(s, u) = (n! / size) (u^s zeta(s, u) / (1 + u / n)), size = u^s / (1 + u / n)
    bulk = 1 + u / n
    log_size = s * xp.log(u) - xp.log(bulk)
    scaled = (n > _LARGEST_FACTORIAL) | (log_size > 700)
    zeta = _zeta_sum(s, u, xp.where(scaled, u, 1.0))   # u^s zeta(s, u) where scaled, else zeta(s, u)
    with np.errstate(over="ignore", under="ignore"):   # (beyond float64's range: polygamma is too)
        outer = xp.exp(xp.where(scaled, math.lgamma(s) - log_size, 0.0)) * (zeta / bulk)   # n! zeta where scaled
    if n > _LARGEST_FACTORIAL:
        # x < 0: n! 2^(n+1) > float64's largest, so the pole nearest x alone overflows, but at a half
        # integer for n even, where C_n(cot(pi x)) = C_n(0) = 0 (C_n odd) leaves -n! zeta(n + 1, 1 - x)
        beside = xp.inf if n % 2 else -xp.copysign(xp.inf, r)
        y = xp.where(reflect, xp.where((xp.abs(r) == 0.5) & (n % 2 == 0), -outer, beside), sign * outer)
    else:
        factorial = float(math.factorial(n))   # (a Python int past int64 would not reach a CuPy array)
        cot_terms = _horner(_cot_derivative(n), _cot_pi(r))
        y = factorial * xp.where(reflect, -(zeta + cot_terms), sign * zeta)
        y = xp.where(scaled, xp.where(reflect, -(outer + factorial * cot_terms), sign * outer), y)
    y = xp.where(pole, sign * xp.inf, y)
    return xp.where(finite, y, xp.where(x > 0, 0.0, xp.nan))


class Polygamma(Function):
    """y = polygamma(n, x), the n-th derivative of digamma (see polygamma_values).
    dx = dy * polygamma(n + 1, x)"""

    def __init__(self, n):
        self.n = n

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lambda v: polygamma_values(self.n, v), x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: polygamma_values(self.n + 1, v), x),)


def polygamma(n, x):
    """The n-th derivative of digamma (n = 0: digamma itself), as torch.polygamma(n, x)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"polygamma: n must be an integer >= 0, got {n!r}")
    return Polygamma(int(n))(floating(x))


def _xlogy_values(a, b):
    """a ln b, but 0 where a = 0 unless b is NaN (PyTorch's xlogy)."""
    xp = get_array_module(a)
    return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), a * xp.log(b))


class Xlogy(Function):
    """y = a ln b, but 0 where a = 0 (even where ln b is -inf or NaN) unless b is NaN (PyTorch's
    xlogy: 0 ln 0 = 0, the limit of a ln a that entropies need).

        da = xlogy(dy, b) = dy ln b,  but 0 where a = 0 and b <= 0 (PyTorch's rule: a ln b has
             no value to change there) and where dy = 0
        db = dy a / b   (0 / 0 = NaN at a = b = 0, as PyTorch's)
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return _xlogy_values(a, b)

    def backward(self, dy):
        a, b = self.saved
        da = dy_where(~((a == 0) & (b <= 0)), _xlogy_values(dy, b)) if self.needs_input_grad[0] else None
        return da, (dy * a / b if self.needs_input_grad[1] else None)


def xlogy(a, b): return binary(Xlogy(), *_one_float("xlogy", a, b))


def _xlog1py_values(a, b):
    """a ln(1 + b), but 0 where a = 0 unless b is NaN (PyTorch's xlog1py)."""
    xp = get_array_module(a)
    return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), a * xp.log1p(b))


class Xlog1py(Function):
    """y = a ln(1 + b), but 0 where a = 0 unless b is NaN, as Xlogy with ln(1 + b) for ln b
    (torch.special.xlog1py; ln(1 + b) by log1p, exact for small b).

        da = xlog1py(dy, b) = dy ln(1 + b),  but 0 where a = 0 and b <= -1 (as PyTorch's)
        db = dy a / (1 + b)
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return _xlog1py_values(a, b)

    def backward(self, dy):
        a, b = self.saved
        da = dy_where(~((a == 0) & (b <= -1)), _xlog1py_values(dy, b)) if self.needs_input_grad[0] else None
        return da, (dy * a / (1 + b) if self.needs_input_grad[1] else None)


def xlog1py(a, b): return binary(Xlog1py(), *_one_float("xlog1py", a, b))


class Entr(Function):
    """y = -x ln x, the entropy of one probability: 0 at x = 0 (the limit), -inf below 0, as
    torch.special.entr.   dx = -dy (1 + ln x)   (inf at 0, NaN below 0, as PyTorch's)"""

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        inside = xp.where(x > 0, x, x.dtype.type(1))   # keeps log off 0 and the negatives
        rest = xp.where(x < 0, -xp.inf, x * 0)   # x * 0: 0 at 0, NaN kept
        return xp.where(x > 0, -x * xp.log(inside), rest).astype(x.dtype, copy=False)

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (-dy * (1 + xp.log(x)),)


def entr(x): return Entr()(floating(x))


def ndtr(x):
    """The standard normal distribution function Phi(x) = (1 + erf(x / sqrt 2)) / 2, composed as
    erfc(-x / sqrt 2) / 2: the same number, without 1 + erf losing the lower tail (erfc(-x / sqrt 2)
    keeps its digits down to x = -37.5, where 1 + erf(x / sqrt 2) is 0 from x = -8.3 on). Its
    gradient, exp(-x^2 / 2) / sqrt(2 pi), comes from erfc's."""
    x = floating(x)
    return erfc(x * -_SQRT1_2) * 0.5


# Below x = _TAIL, Phi(x) = phi(x) / (-x) S(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), with the asymptotic
# series S(x) = sum_k (-1)^k (2k - 1)!! / x^2k  (its first left out, at x <= -20, below 1e-17)
_TAIL, _TAIL_TERMS = -20.0, 12


def _tail_series(x):
    """S(x) above, for x <= _TAIL."""
    xp = get_array_module(x)
    w = 1 / (x * x)
    term, total = xp.ones_like(x), xp.ones_like(x)
    for k in range(1, _TAIL_TERMS):
        term = -term * (2 * k - 1) * w
        total = total + term
    return total


def log_ndtr_values(x):
    """ln Phi(x), the logarithm of the standard normal distribution function (float64): ln(erfc(-x / sqrt 2)
    / 2) for _TAIL <= x < 0, log1p(-erfc(x / sqrt 2) / 2) for x >= 0 (1 - Phi(-x), without rounding Phi
    near 1), and below _TAIL, where erfc underflows, -x^2 / 2 - ln(-x) - ln sqrt(2 pi) + ln S(x)."""
    xp = get_array_module(x)
    far = xp.minimum(x, _TAIL)
    tail = -0.5 * far * far - xp.log(-far) - _HALF_LOG_TWO_PI + xp.log(_tail_series(far))
    with np.errstate(divide="ignore"):  # each branch's log of 0 lies where the other is taken
        y = xp.where(x < 0, xp.log(erfc_values(-x * _SQRT1_2) / 2), xp.log1p(-erfc_values(x * _SQRT1_2) / 2))
    return xp.where(x < _TAIL, tail, y)


def _log_ndtr_slope(x):
    """d/dx ln Phi(x) = phi(x) / Phi(x) (float64), Phi(x) = erfc(-x / sqrt 2) / 2, and below _TAIL
    -x / S(x), where phi and Phi underflow."""
    xp = get_array_module(x)
    far, near = xp.minimum(x, _TAIL), xp.maximum(x, _TAIL)
    near = xp.exp(-0.5 * near * near - _HALF_LOG_TWO_PI) / (erfc_values(-near * _SQRT1_2) / 2)
    return xp.where(x < _TAIL, -far / _tail_series(far), near)


class LogNdtr(Function):
    """y = ln Phi(x) (see log_ndtr_values).   dx = dy phi(x) / Phi(x) (see _log_ndtr_slope)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(log_ndtr_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(_log_ndtr_slope, x),)


def log_ndtr(x): return LogNdtr()(floating(x))


# ---------------------------------------------------------------- torch.special's second group: erfcx, ndtri,
# zeta, gammainc and gammaincc (torch.igamma, igammac), multigammaln (torch.mvlgamma); i0e and i1e are bessel.py's


def erfcx_values(x):
    """erfcx(x) = exp(x^2) erfc(x), the scaled complementary error function (float64), without exp(x^2),
    which overflows from x = 26.7, and erfc, which underflows from 27.3, though erfcx(x) ~ 1 / (x sqrt pi):
    with a = |x|, from a = 1.5 on erfcx(a) = 1 / (sqrt(pi) F(a)), erfc's continued fraction without its
    exp(-a^2) (_erfc_fraction); below, exp(a^2) (1 - erf(a)), erf by its series (_erf_and_erfc), where
    exp(a^2) < 9.5; and for x < 0, erfcx(x) = 2 exp(a^2) - erfcx(a), inf from x = -26.7 on. Agrees with
    mpmath to 3e-14 relative, 6e-15 from x = 1.5 on (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfcx(x)
    with np.errstate(over="ignore"):   # exp(a^2) for x < -26.7: inf, as erfcx there
        a = xp.abs(x)
        near = xp.minimum(a, _ERF_SWITCH)
        grown = _exp_minus_square(near, sign=1)
        upper = xp.where(a < _ERF_SWITCH, grown * _erf_and_erfc(near)[1],
                         1 / (math.sqrt(math.pi) * _erfc_fraction(xp.maximum(a, _ERF_SWITCH))[0]))
        lower = 2 * _exp_minus_square(xp.where(a < xp.inf, a, 0.0), sign=1) - upper
        return xp.where(x < 0, xp.where(a < xp.inf, lower, xp.inf), upper)


def _erfcx_slope(x, y):
    """d/dx erfcx(x) = 2 x erfcx(x) - 2/sqrt(pi) (float64, y = erfcx(x)), whose two terms cancel as x grows
    (2 x erfcx(x) -> 2/sqrt(pi)): from x = 1.5 on, with erfcx(x) = 1 / (sqrt(pi) F) and F - x = (1/2) / G
    (_erfc_fraction), it is -1 / (sqrt(pi) F G) instead."""
    xp = get_array_module(x)
    F, G = _erfc_fraction(xp.maximum(x, _ERF_SWITCH))
    return xp.where(x >= _ERF_SWITCH, -1 / (math.sqrt(math.pi) * F * G), 2 * x * y - _TWO_OVER_SQRT_PI)


class Erfcx(Function):
    """y = erfcx(x) = exp(x^2) erfc(x) (see erfcx_values).   dx = dy (2 x y - 2/sqrt(pi)) (see _erfcx_slope)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(erfcx_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: _erfcx_slope(v, erfcx_values(v)), x),)


def erfcx(x): return Erfcx()(floating(x))


# Abramowitz and Stegun 26.2.23: for q <= 1/2 and t = sqrt(-2 ln q), ndtri(q) = -(t - (c0 + c1 t + c2 t^2) /
# (1 + d1 t + d2 t^2 + d3 t^3)) to 4.5e-4; the coefficients highest power first
_NDTRI_NUMERATOR = [0.010328, 0.802853, 2.515517]
_NDTRI_DENOMINATOR = [0.001308, 0.189269, 1.432788, 1.0]
_NDTRI_NEWTON = 4   # Newton's steps from that guess (its error squares each step)


def ndtri_values(p):
    """ndtri(p), the x with Phi(x) = p, the inverse of the standard normal distribution function (float64):
    -inf at 0, inf at 1, NaN outside [0, 1]. With q = min(p, 1 - p) (1 - p is exact for p >= 1/2) and
    ndtri(1 - q) = -ndtri(q): for q >= 1/4, sqrt(2) erfinv(2q - 1) (2q - 1 exact, and erfinv keeps its
    relative digits near 0, where ndtri is small); below 1/4 the guess above, then Newton's steps on
    ln Phi(x) = ln q, exact far into the tail (log_ndtr_values and its slope phi / Phi, _log_ndtr_slope),

        x <- x - (ln Phi(x) - ln q) / (phi(x) / Phi(x)).

    Agrees with mpmath to 3e-15 relative from p = 1e-300 to 1 - 1e-16 (tests/ops/test_torch_special_second.py).
    """
    xp = get_array_module(p)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.ndtri(p)
    with np.errstate(all="ignore"):   # p outside (0, 1): set at the end
        q = xp.minimum(p, 1 - p)
        tail = (q > 0) & (q < 0.25)
        q_tail = xp.where(tail, q, 0.125)
        t = xp.sqrt(-2 * xp.log(q_tail))
        x = -(t - _horner(_NDTRI_NUMERATOR, t) / _horner(_NDTRI_DENOMINATOR, t))
        for _ in range(_NDTRI_NEWTON):
            x = x - (log_ndtr_values(x) - xp.log(q_tail)) / _log_ndtr_slope(x)
        centre = math.sqrt(2) * erfinv_values(2 * xp.where(tail, 0.5, q) - 1)
        x = xp.where(tail, x, centre)
        x = xp.where(q == 0, -xp.inf, xp.where((p >= 0) & (p <= 1), x, xp.nan))
        return xp.where(p > 0.5, -x, x)


class Ndtri(Function):
    """y = ndtri(p), the x with Phi(x) = p (see ndtri_values).   dp = dy / Phi'(y) = dy sqrt(2 pi) exp(y^2 / 2)"""

    def forward(self, p):
        y = _in_float64(ndtri_values, p)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        with np.errstate(over="ignore"):   # inf at p = 0 and 1, and where Phi'(y) is below float64's range
            return (dy * math.sqrt(2 * math.pi) * get_array_module(y).exp(y * y / 2),)


def ndtri(p): return Ndtri()(floating(p))


def zeta_values(s, q):
    """Hurwitz's zeta(s, q) = sum_k>=0 1 / (q + k)^s (float64), by _zeta_sum; where it does not converge,
    PyTorch's (Cephes's) answers, tried in Cephes's order (the first that holds wins, a NaN in the other
    argument or not): inf at s = 1; NaN for s < 1; inf at the poles q = 0, -1, -2, ... (-inf one of them);
    NaN for q < 0 and s not a whole number ((q + k)^s is not real). At s = inf 1 / q^s alone (0, 1 or inf);
    at q = inf 0, the limit (PyTorch: NaN). Agrees with mpmath to 1e-15 relative for s up to 1000 and q up to
    1e4 (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(q)
    s, q = xp.broadcast_arrays(s, q)
    pole = (q <= 0) & (q == xp.floor(q))
    real = (q > 0) | (s == xp.floor(s))   # else NaN, without the sum's |q| steps
    inside = (s > 1) & xp.isfinite(s) & xp.isfinite(q) & ~pole & real
    q_inside = xp.where(inside, q, 1.0)
    if bool(backend.to_host((q_inside < _ZETA_FLOOR).any())):
        raise ValueError(f"zeta takes q >= {_ZETA_FLOOR:g} away from the poles (its recurrence steps q up one at a "
                         f"time, without reflection), got q = {float(backend.to_host(q_inside.min()))!r}")
    with np.errstate(all="ignore"):   # 1 / z^s beyond float64's range: 0 or inf, as the sum is
        y = _zeta_sum(xp.where(inside, s, 2.0), q_inside)
        at_infinite_s = xp.where(q > 1, 0.0, xp.where(q == 1, 1.0, xp.inf))   # the first term 1 / q^s alone
    y = xp.where(inside, y, xp.where(s == xp.inf, at_infinite_s, xp.where(q == xp.inf, 0.0, xp.nan)))
    y = xp.where(pole, xp.inf, y)
    return xp.where(s == 1, xp.inf, xp.where(s < 1, xp.nan, y))


class Zeta(Function):
    """y = zeta(s, q) = sum_k>=0 1 / (q + k)^s, Hurwitz's zeta function (see zeta_values).
    dq = -dy s zeta(s + 1, q); ds none: PyTorch has none either (backward refuses it, by name)"""

    def forward(self, s, q):
        self.save_for_backward(s, q)
        return zeta_values(s.astype(get_array_module(q).float64), q.astype(get_array_module(q).float64)).astype(
            q.dtype, copy=False)

    def backward(self, dy):
        s, q = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError("zeta: no gradient with respect to s, its first argument (PyTorch has none "
                                      "either); detach s, or pass it as a number")
        xp = get_array_module(q)
        return None, -dy * s * zeta_values(s.astype(xp.float64) + 1, q.astype(xp.float64)).astype(q.dtype, copy=False)


def _one_float(op, a, b):
    """a and b in one floating dtype, for the ops of two real arguments (xlogy, zeta, gammainc, ...): promoted
    as binary promotes them (a number takes the other's dtype: 2.0 beside float16 is float16), integers then
    as float32, and two floats in their result's dtype (float64 beside float32 is float64, as PyTorch's)."""
    a, b = common_16_bits(*(floating(t) for t in promote(a, b, op=op)))
    dtype = np.result_type(a.dtype, b.dtype)
    return [t if t.dtype == dtype else t.astype(dtype) for t in (a, b)]


def zeta(s, q):
    """Hurwitz's zeta(s, q), as torch.special.zeta(x, q): q's gradient only (s's none, as PyTorch's)."""
    return binary(Zeta(), *_one_float("zeta", s, q))


# the regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a) and Q(a, x) = 1 - P(a, x)
_GAMMAINC_EPS, _GAMMAINC_STEPS = np.finfo(np.float64).eps, 100_000


def _log_gamma_prefactor(a, x):
    """ln(x^a e^-x / Gamma(a)) (float64, a > 0, x > 0). From a = 10 on, with lgamma's asymptotic series
    (_LGAMMA_SERIES) and t = (x - a) / a, it is a (ln(1 + t) - t) + ln(a) / 2 - ln sqrt(2 pi) - R(a), R that
    series' sum: a ln x - x and lgamma(a) are each about a ln a, and their difference would keep only
    what their rounding leaves (Cephes's igam_fac does the same with Lanczos's series). ln(1 + t) is
    log1p(t) for |t| < 1/2 and ln(x / a) beyond (1 + t, rounded, would lose x's digits where x << a)."""
    xp = get_array_module(x)
    big = xp.maximum(a, 10.0)
    t = (x - big) / big
    with np.errstate(divide="ignore"):   # (x = 0 is the callers' to answer)
        log_ratio = xp.where(xp.abs(t) < 0.5, xp.log1p(t), xp.log(x / big))
    stirling = (big * (log_ratio - t) + 0.5 * xp.log(big) - _HALF_LOG_TWO_PI
                - _horner(_LGAMMA_SERIES, 1 / (big * big)) / big)
    return xp.where(a >= 10, stirling, a * xp.log(x) - x - lgamma_values(a))


def _until_converged(step, state, op):
    """Applies step(state) -> (state, change) until every |change| <= _GAMMAINC_EPS (at most _GAMMAINC_STEPS)."""
    xp = get_array_module(state[-1])
    for _ in range(_GAMMAINC_STEPS):
        state, change = step(state)
        if not bool(backend.to_host((xp.abs(change) > _GAMMAINC_EPS).any())):   # (a host read a step, counted)
            return state
    raise ValueError(f"{op}: its series did not converge in {_GAMMAINC_STEPS} steps")


_EULER_GAMMA = 0.5772156649015329   # -digamma(1)
_LGAMMA1P_TERMS = 60   # lgamma(1 + a)'s Taylor series: its first left out below 1e-17 for |a| <= 1/2
_UPPER_NEAR_ZERO_TERMS = 30   # Q's series for x < 1.1: its first left out below 1e-31


@functools.cache
def _lgamma1p_coefficients():
    """(-1)^k zeta(k) / k for k = _LGAMMA1P_TERMS - 1 down to 2, highest power first (_lgamma1p's): computed
    once, on the host, where they are constants."""
    k = np.arange(2, _LGAMMA1P_TERMS, dtype=np.float64)
    return tuple(((-1) ** k * _zeta_sum(k, np.ones_like(k)) / k)[::-1].tolist())


def _lgamma1p(a):
    """lgamma(1 + a) for |a| <= 1/2 by its Taylor series, -gamma a + sum_k>=2 (-1)^k zeta(k) a^k / k (Euler's
    gamma and Riemann's zeta(k) = zeta(k, 1), by _zeta_sum): exact where lgamma_values(1 + a), near its zero
    at 1, leaves an absolute error of 4e-15."""
    return a * (-_EULER_GAMMA + a * _horner(list(_lgamma1p_coefficients()), a))


def _upper_near_zero(a, x):
    """Q(a, x) for a < 1/2 and x < 1.1, where P is near 1 and 1 - P would keep only its rounding, as Cephes's
    igamc_series: with the series of gamma(a, x) = sum_n>=0 (-1)^n x^(a+n) / (n! (a + n)),

        Q(a, x) = -expm1(a ln x - lgamma(1 + a)) - x^a / Gamma(a) sum_n>=1 (-x)^n / (n! (a + n)),

    lgamma(1 + a) by _lgamma1p and lgamma(a) = lgamma(1 + a) - ln a."""
    xp = get_array_module(x)
    term, total = xp.ones_like(x), xp.zeros_like(x)
    for n in range(1, _UPPER_NEAR_ZERO_TERMS):
        term = term * -x / n   # (-x)^n / n!
        total = total + term / (a + n)
    log_x, log_gamma_1p = xp.log(x), _lgamma1p(a)
    return -xp.expm1(a * log_x - log_gamma_1p) - xp.exp(a * log_x - log_gamma_1p + xp.log(a)) * total


def _gammainc_nan(a, x):
    """Where P(a, x) and Q(a, x) are NaN, as PyTorch's: a < 0 or x < 0, a = x = 0, a = x = inf, or a NaN."""
    xp = get_array_module(x)
    return (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ((a == xp.inf) & (x == xp.inf)) | xp.isnan(a) | xp.isnan(x)


def gammainc_values(a, x, op="gammainc"):
    """(P(a, x), Q(a, x)), the regularized lower and upper incomplete gamma functions (float64), as Numerical
    Recipes's gser and gcf (section 6.2) and Cephes's igam and igamc: for x < a + 1 the series

        P(a, x) = x^a e^-x / Gamma(a + 1) sum_n>=0 x^n / ((a + 1) (a + 2) ... (a + n)),

    and from x = a + 1 on the continued fraction, by Lentz's method,

        Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),

    each the smaller of the two (1 minus it gives the other), each run until its last term or factor is
    within float64's eps of 0 or 1 (about 9 sqrt(a) steps where x is near a large a). Where it does not converge,
    PyTorch's answers: NaN for a < 0 or x < 0, at a = x = 0 and at a = x = inf; P = 1 at a = 0 < x and at
    x = inf, P = 0 at x = 0 < a and at a = inf. For a < 1/2 and x < 1.1, where P is near 1, Q by a series of
    its own (_upper_near_zero). Agrees with mpmath to 4e-13 relative for a up to 1e4 (the factor's exponent
    a ln x - x is rounded) (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(x)
    a, x = xp.broadcast_arrays(a, x)
    inside = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    lower = inside & (x < a + 1)
    b, y = xp.where(inside, a, 1.0), xp.where(inside, x, 1.0)
    factor = xp.exp(_log_gamma_prefactor(b, y))
    bs, ys = xp.where(lower, b, 1.0), xp.where(lower, y, 0.0)   # each method only where it is taken:
    bf, yf = xp.where(lower, 1.0, b), xp.where(lower, 2.0, y)   # elsewhere inputs it finishes at once

    def series(state):   # term_n = term_(n-1) ys / (bs + n)
        n, term, total = state
        term = term * ys / (bs + n)
        return (n + 1, term, total + term), term / total

    total = _until_converged(series, (1, xp.ones_like(y), xp.ones_like(y)), op)[2]
    tiny = 1e-300   # Lentz's stand-in for a 0 denominator

    def fraction(state):   # Lentz: f = f d c, d and c the ratios of the convergents' denominators and numerators
        i, B, c, d, f = state
        an, B = -i * (i - bf), B + 2
        d = B + an * d
        d = 1 / xp.where(xp.abs(d) < tiny, tiny, d)
        c = B + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        return (i + 1, B, c, d, f * (d * c)), d * c - 1

    B = yf + 1 - bf
    f = _until_converged(fraction, (1, B, xp.full_like(y, 1 / tiny), 1 / B, 1 / B), op)[4]
    p = xp.where(lower, factor * total / b, 1 - factor * f)
    p = xp.where(inside, p, xp.where((x == xp.inf) | ((a == 0) & (x > 0)), 1.0, 0.0))
    nan = _gammainc_nan(a, x)
    q = xp.where(lower, 1 - factor * total / b, xp.where(inside, factor * f, 1 - p))
    near_zero = inside & (a < 0.5) & (x < 1.1)   # P near 1 for a small: Q by its own series
    q = xp.where(near_zero, _upper_near_zero(xp.where(near_zero, a, 0.25), xp.where(near_zero, x, 0.5)), q)
    return xp.where(nan, xp.nan, p), xp.where(nan, xp.nan, q)


def _gammainc_slope(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = exp(ln(x^a e^-x / Gamma(a))) / x (float64), and its limits
    where that is not a number: at x = 0, 0 for a > 1, 1 for a = 1 and inf for 0 < a < 1; 0 at a = 0 < x
    (P is 1 there), at x = inf and at a = inf (PyTorch: NaN at a = 1, x = 0, at x = inf for a > 1 and at
    a = inf for x > 1). NaN where P is."""
    xp = get_array_module(x)
    a, x = xp.broadcast_arrays(a, x)
    inside = (a > 0) & (x > 0) & (a < xp.inf) & (x < xp.inf)
    with np.errstate(all="ignore"):
        y = xp.exp(_log_gamma_prefactor(xp.where(inside, a, 1.0), xp.where(inside, x, 1.0))) / x
    at_zero = xp.where(a > 1, 0.0, xp.where(a == 1, 1.0, xp.inf))
    y = xp.where(inside, y, xp.where(x == 0, at_zero, 0.0))
    nan = _gammainc_nan(a, x)
    return xp.where(nan, xp.nan, y)


class GammaInc(Function):
    """y = P(a, x) (upper=False) or Q(a, x) = 1 - P(a, x) (upper=True), the regularized incomplete gamma
    functions (see gammainc_values).   dx = ±dy x^(a-1) e^-x / Gamma(a) (see _gammainc_slope: + for P, - for Q);
    da none: PyTorch has none either (backward refuses it, by name)"""

    def __init__(self, upper):
        self.upper = upper

    @property
    def name(self) -> str:
        """gammaincc or gammainc, the function's name in errors (not the class's, gamma_inc)."""
        return "gammaincc" if self.upper else "gammainc"

    def forward(self, a, x):
        self.save_for_backward(a, x)
        xp = get_array_module(x)
        return gammainc_values(a.astype(xp.float64), x.astype(xp.float64), self.name)[int(self.upper)].astype(
            x.dtype, copy=False)

    def backward(self, dy):
        a, x = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError(f"{self.name}: no gradient with respect to a, its first argument (PyTorch has "
                                      "none either); detach a, or pass it as a number")
        xp = get_array_module(x)
        slope = _gammainc_slope(a.astype(xp.float64), x.astype(xp.float64)).astype(x.dtype, copy=False)
        return None, (-dy * slope if self.upper else dy * slope)


def gammainc(a, x):
    """P(a, x), the regularized lower incomplete gamma function, as torch.special.gammainc and torch.igamma."""
    return binary(GammaInc(upper=False), *_one_float("gammainc", a, x))


def gammaincc(a, x):
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function, as torch.special.gammaincc and
    torch.igammac."""
    return binary(GammaInc(upper=True), *_one_float("gammaincc", a, x))


def multigammaln(x, p):
    """ln Gamma_p(x) = p (p - 1) / 4 ln pi + sum_i=0..p-1 lgamma(x - i / 2), the multivariate gamma function's
    logarithm (torch.special.multigammaln, torch.mvlgamma), composed of lgamma (its gradient is theirs).
    Like PyTorch's, it does not check x > (p - 1) / 2, where Gamma_p is defined."""
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"multigammaln: p must be an integer >= 1, got {p!r}")
    x = floating(x)
    total = lgamma(x)
    for i in range(1, p):
        total = total + lgamma(x - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


# (cos t - sin(t) / t) / t = -t/3 + t^3/30 - t^5/840 + t^7/45360 - ..., in powers of t^2, highest first
_SINC_SLOPE = [1 / 45360, -1 / 840, 1 / 30, -1 / 3]


class Sinc(Function):
    """y = sin(pi x) / (pi x), 1 at x = 0 (the normalized sinc, NumPy's and PyTorch's).

        dx = dy (cos(pi x) - y) / x,  0 at x = 0

    Near 0 that difference cancels (cos and y both near 1): where |t| < 0.1, with t = pi x, it is
    pi (cos t - sin(t) / t) / t, the series _SINC_SLOPE (its next term, t^9 / 3991680, is below
    float64's rounding there).
    """

    def forward(self, x):
        xp = get_array_module(x)
        t = math.pi * x
        y = xp.where(x == 0, x.dtype.type(1), xp.sin(t) / t)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        t = math.pi * x
        slope = xp.where(xp.abs(t) < 0.1, math.pi * t * _horner(_SINC_SLOPE, t * t), (xp.cos(t) - y) / x)
        return (dy * slope,)


def sinc(x): return Sinc()(floating(x))


# ---------------------------------------------------------------- PyTorch's other names
# torch.igamma is torch.special.gammainc, igammac gammaincc, mvlgamma multigammaln (as elementwise.py's last lines)
igamma, igammac, mvlgamma = gammainc, gammaincc, multigammaln
