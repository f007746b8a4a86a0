"""minitx.special, as torch.special: the special functions under torch.special's names, the same
function objects minitx.functional has where it has them (special.expit is F.sigmoid, gammaln is
F.lgamma, psi and digamma are F.digamma), and those PyTorch keeps only here.

    import minitx.special as S
    S.erf(x)  S.erfc(x)  S.erfinv(x)  S.ndtr(x)  S.log_ndtr(x)     the normal distribution's
    S.gammaln(x)  S.digamma(x)  S.polygamma(2, x)                  the gamma function's logarithm and derivatives
    S.i0(x)  S.i1(x)  S.i0e(x)  S.i1e(x)                           modified Bessel functions (e: times exp(-|x|))
    S.bessel_j0(x)  S.bessel_y1(x)  S.modified_bessel_k0(x) ...      J_0, J_1, Y_0, Y_1, K_0, K_1, e^x K, sin(x)/x
    S.airy_ai(x)                                                   Ai(x), the Airy function of the first kind
    S.chebyshev_polynomial_t(x, n) ... S.legendre_polynomial_p(x, n)    orthogonal polynomials of degree n
    S.erfcx(x)  S.ndtri(p)                                         exp(x^2) erfc(x); the inverse of ndtr
    S.zeta(s, q)  S.multigammaln(x, p)                             Hurwitz's zeta; the multivariate lgamma
    S.gammainc(a, x)  S.gammaincc(a, x)                            the regularized incomplete gamma functions
    S.xlogy(a, b)  S.xlog1py(a, b)  S.entr(p)                      a ln b, a ln(1 + b), -p ln p, 0 where a, p = 0
    S.expit(x)  S.logit(p)  S.softmax(x, dim)  S.log_softmax(x, dim)  S.logsumexp(x, dim)

Each lives in its family file, minitx/ops/special.py (exp2, expm1, log1p, round and logit in
elementwise.py, the activations and logsumexp in activation.py and reduction.py), the Bessel functions,
i0, i1, i0e and i1e among them, and the orthogonal polynomials in bessel.py.
"""
from minitx.ops.activation import log_softmax, sigmoid as expit, softmax
# (the Bessel functions and orthogonal polynomials: minitx/ops/bessel.py)
from minitx.ops.bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t,
                               chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
                               hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e, laguerre_polynomial_l,
                               legendre_polynomial_p, modified_bessel_k0, modified_bessel_k1,
                               scaled_modified_bessel_k0, scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t,
                               shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                               shifted_chebyshev_polynomial_w, spherical_bessel_j0)
from minitx.ops.elementwise import exp2, expm1, log1p, logit, round
from minitx.ops.reduction import logsumexp
from minitx.ops.special import (digamma, entr, erf, erfc, erfinv, lgamma as gammaln, log_ndtr, ndtr, polygamma, sinc,
                                xlog1py, xlogy)
# torch.special's second group (minitx/ops/special.py's block of that name; its i0e and i1e: bessel.py, above)
from minitx.ops.special import erfcx, gammainc, gammaincc, multigammaln, ndtri, zeta

psi = digamma
modified_bessel_i0, modified_bessel_i1 = i0, i1  # PyTorch's second names for I_0 and I_1

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i1", "log1p",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "ndtr", "polygamma", "psi", "round", "sinc", "softmax",
           "xlog1py", "xlogy",
           "erfcx", "gammainc", "gammaincc", "i0e", "i1e", "multigammaln", "ndtri", "zeta",
           # the Bessel functions and orthogonal polynomials
           "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
