"""The matrix functions of minitx.linalg (torch.linalg's): det, slogdet, inv, solve, cholesky,
matrix_power, multi_dot, vecdot, eigh, eigvalsh, svd, svdvals, qr, pinv and lstsq.

Each takes matrices in the last two axes and is batched over the leading ones; the
factorizations are NumPy's or CuPy's (``xp.linalg`` of get_array_module). ^T below swaps the
last two axes, products are batched matrix products, and ∘ is the entrywise product.
A symmetric input (cholesky, eigh, eigvalsh) is read from its lower triangle, and its gradient
is the symmetric one, as PyTorch's: the derivative along symmetric changes of A.
"""
from __future__ import annotations

import contextlib
import numbers
from typing import NamedTuple

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import broadcast_batches, floating
from minitx.ops.elementwise import masked_fill, maximum, where
from minitx.ops.reduction import normalize_axes
from minitx.ops.shape import concatenate

__all__ = ["Det", "LogAbsDet", "Inv", "Solve", "Cholesky", "Eigh", "Eigvalsh", "SVD", "Svdvals", "QR"]


class LinAlgError(RuntimeError):
    """A matrix the function cannot take: a singular one for inv and solve, one that is not
    positive-definite for cholesky (PyTorch's torch.linalg.LinAlgError, also a RuntimeError)."""


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _square(op, A, keep_dtype=False):
    """A as a floating tensor of square matrices [..., n, n] (an integer A becomes float32; with
    keep_dtype, it stays), or a ValueError naming ``op``."""
    A = as_tensor(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        got = f"{A.shape[-2]} by {A.shape[-1]} matrices" if A.ndim >= 2 else f"shape {A.shape}"
        raise ValueError(f"{op}: A must be batches of square matrices [..., n, n], but got {got}")
    return A if keep_dtype else floating(A)


def _mT(a):
    return get_array_module(a).swapaxes(a, -1, -2)


def _raising(xp):
    """A context in which xp.linalg raises LinAlgError on a singular or not positive-definite
    matrix: NumPy's always does, CuPy's only under cupyx.errstate(linalg='raise') (by default it
    returns NaN, sparing the device a synchronization)."""
    if xp is np:
        return contextlib.nullcontext()
    import cupyx  # noqa: PLC0415 (only here, on CuPy arrays)
    return cupyx.errstate(linalg="raise")


def _solved(op, A, B=None):
    """A^-1 B (A^-1 when B is None), or a LinAlgError naming ``op`` where a pivot of A's LU
    factorization is exactly 0 (PyTorch's test of a singular matrix)."""
    xp = get_array_module(A)
    try:
        with _raising(xp):
            return xp.linalg.inv(A) if B is None else xp.linalg.solve(A, B)
    except np.linalg.LinAlgError:  # (CuPy raises NumPy's too)
        raise LinAlgError(f"{op}: the input matrix is singular (a zero pivot in its LU factorization), the "
                          f"{'inversion' if B is None else 'system'} could not be completed") from None


def _divided(numerator, denominator):
    """numerator / denominator, 0 where the numerator is 0: a term the gradient does not have
    (an output without a gradient) stays 0 at a zero denominator (repeated eigenvalues)."""
    xp = get_array_module(numerator)
    with np.errstate(divide="ignore", invalid="ignore"):
        return numerator / xp.where(numerator == 0, 1, denominator)


def _differences(values):
    """E [..., k, k] with E_ij = values_j - values_i, 1 on the diagonal (which is never divided)."""
    E = values[..., None, :] - values[..., :, None]
    k = values.shape[-1]
    E[..., range(k), range(k)] = 1
    return E


def _products_of_the_others(s):
    """p [..., n] with p_i = prod_{j != i} s_j, without dividing (an s_i may be 0): the products
    of the entries before i times those after it."""
    xp = get_array_module(s)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), -1), axis=-1), -1)
    return before * after


# ---------------------------------------------------------------- determinants, inverses, solving


class Det(Function):
    """y = det(A), A [..., n, n] -> [...].

    Jacobi's formula, d det = det * tr(A^-1 dA) = <det A^-T, dA>, so
        dA = dy * cof(A),        cof(A) = det(A) A^-T, the cofactor matrix
    cof(A) is defined for every A (a singular A of rank n - 1 has cofactors that are not all 0),
    and is computed from the SVD A = U diag(s) Vh, so a singular A has its gradient too:
        cof(A) = det(U) det(Vh) U diag(p) Vh,        p_i = prod_{j != i} s_j
    (the cofactors of a product are the product of the cofactors, cof(diag(s)) = diag(p), and an
    orthogonal Q has cof(Q) = det(Q) Q).
    """

    def forward(self, A):
        self.save_for_backward(A)
        return get_array_module(A).linalg.det(A)

    def backward(self, dy):
        (A,) = self.saved
        xp = get_array_module(A)
        U, s, Vh = xp.linalg.svd(A)
        sign = xp.linalg.det(U) * xp.linalg.det(Vh)
        cof = (U * _products_of_the_others(s)[..., None, :]) @ Vh
        return ((dy * sign)[..., None, None] * cof,)


def det(A):
    """det(A) of each matrix A [..., n, n] (PyTorch's linalg.det and det): 0 for a singular A, 1
    for a 0 x 0 one; its gradient, the cofactor matrix, is finite for a singular A too (Det)."""
    return Det()(_square("linalg.det", A))


class LogAbsDet(Function):
    """y = log|det A|, A [..., n, n] -> [...]; det's sign, which has no gradient, is left on the
    op as ``self.sign`` (linalg.slogdet returns both).

    d log|det A| = d det / det = tr(A^-1 dA), so
        dA = dy * A^-T,        A^-T = U diag(1 / s) Vh  (from the SVD A = U diag(s) Vh)
    A singular A has log|det A| = -inf and no gradient: through 1 / s it comes out inf, or huge
    where rounding left an s tiny rather than 0 (PyTorch's, through an LU, is ±inf).
    """

    def forward(self, A):
        self.sign, y = get_array_module(A).linalg.slogdet(A)
        self.save_for_backward(A)
        return y

    def backward(self, dy):
        (A,) = self.saved
        U, s, Vh = get_array_module(A).linalg.svd(A)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (dy[..., None, None] * ((U / s[..., None, :]) @ Vh),)


def slogdet(A):
    """(sign, logabsdet) of det(A), A [..., n, n] (PyTorch's linalg.slogdet): det = sign *
    exp(logabsdet) without det's overflow or underflow for large n; a singular A has sign 0 and
    logabsdet -inf. The gradient flows through logabsdet (LogAbsDet); sign is a constant."""
    op = LogAbsDet()
    logabsdet = op(_square("linalg.slogdet", A))
    return SlogdetResult(Tensor(op.sign), logabsdet)


def logdet(A):
    """log(det A) (PyTorch's logdet): slogdet's logabsdet, -inf where det = 0, and NaN where
    det < 0, a NaN without a gradient (masked_fill's 0), as PyTorch's."""
    sign, logabsdet = slogdet(A)
    return masked_fill(logabsdet, sign < 0, float("nan"))


class Inv(Function):
    """Y = A^-1, A [..., n, n].

    d(A^-1) = -A^-1 dA A^-1, so <dy, dY> = <-Y^T dy Y^T, dA>:
        dA = -Y^T dy Y^T
    """

    def forward(self, A):
        Y = _solved("linalg.inv", A)
        self.save_for_backward(Y)
        return Y

    def backward(self, dy):
        (Y,) = self.saved
        return (-(_mT(Y) @ dy @ _mT(Y)),)


def inv(A):
    """A^-1 of each matrix A [..., n, n] (PyTorch's linalg.inv, and inverse): a singular A (a zero
    pivot in its LU factorization) raises minitx.linalg.LinAlgError naming linalg.inv."""
    return Inv()(_square("linalg.inv", A))


inverse = inv


class Solve(Function):
    """X = A^-1 B, the solution of A X = B: A [..., n, n], B [..., n, k], batch axes broadcast.

    Differentiating A X = B: dA X + A dX = dB, so dX = A^-1 (dB - dA X), and for dy, X's gradient,
        dB = A^-T dy        (the adjoint system A^T dB = dy, solved)
        dA = -dB X^T
    (the engine sums both over the batch axes their input was broadcast along).
    """

    def forward(self, A, B):
        xp = get_array_module(A)
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        A = xp.broadcast_to(A, batch + A.shape[-2:])
        X = _solved("linalg.solve", A, xp.broadcast_to(B, batch + B.shape[-2:]))
        self.save_for_backward(A, X)
        return X

    def backward(self, dy):
        A, X = self.saved
        dB = _solved("linalg.solve", _mT(A), dy)
        return (-(dB @ _mT(X)) if self.needs_input_grad[0] else None), (dB if self.needs_input_grad[1] else None)


def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B (left=False), A [..., n, n] (PyTorch's linalg.solve),
    without forming A^-1 (Solve). B is [..., n, k], or a batch of vectors [..., n] when it is 1-d
    or has A's shape less its last axis (PyTorch's rule); batch axes broadcast. X A = B is
    A^T X^T = B^T, solved as that (a vector B is refused there, as PyTorch refuses it). A singular A raises minitx.linalg.LinAlgError."""
    A = _square("linalg.solve", A)
    B = as_tensor(B)
    if B.dtype != A.dtype:
        raise TypeError(f"linalg.solve: A and B need one dtype, got {A.dtype} and {B.dtype}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector and not left:
        raise ValueError(f"linalg.solve: a vector B (shape {B.shape}) with left=False is refused, as PyTorch refuses "
                         "it; write B as rows [..., 1, n]")
    if vector:
        B = B.unsqueeze(-1)
    n = A.shape[-1]
    if B.ndim < 2 or B.shape[-2 if left else -1] != n:
        raise ValueError(f"linalg.solve: incompatible shapes of A {A.shape} and B {B.shape} for the equation "
                         f"{'AX' if left else 'XA'} = B")
    broadcast_batches("linalg.solve", "A", A, "B", B)
    X = Solve()(A, B) if left else Solve()(A.mT, B.mT).mT
    return X.squeeze(-1) if vector else X


class Cholesky(Function):
    """L, lower triangular with positive diagonal and A = L L^T, of a symmetric positive-definite
    A [..., n, n] (read from its lower triangle).

    dA = dL L^T + L dL^T, so L^-1 dA L^-T = L^-1 dL + (L^-1 dL)^T, whose lower triangle gives
    L^-1 dL (lower triangular) back. The adjoint (Murray 2016; PyTorch's cholesky_backward):
        P  = tril(L^T dy)
        Sym = (P + tril(P, -1)^T) / 2        (symmetric: P's diagonal, and its strict lower triangle
                                              in both triangles, every entry halved)
        dA = L^-T Sym L^-1
    a symmetric gradient.
    """

    def forward(self, A):
        xp = get_array_module(A)
        try:
            with _raising(xp):
                L = xp.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: the factorization could not be completed because the input is "
                              "not positive-definite") from None
        self.save_for_backward(L)
        return L

    def backward(self, dy):
        (L,) = self.saved
        xp = get_array_module(L)
        P = xp.tril(_mT(L) @ dy)
        Sym = (P + _mT(xp.tril(P, -1))) / 2
        right = xp.linalg.solve(_mT(L), Sym)                 # L^-T Sym
        return (_mT(xp.linalg.solve(_mT(L), _mT(right))),)  # (L^-T (L^-T Sym)^T)^T = L^-T Sym L^-1


def cholesky(A, *, upper=False):
    """The Cholesky factor of each symmetric positive-definite A [..., n, n] (PyTorch's
    linalg.cholesky): L lower triangular with A = L L^T, or with upper=True U = L^T, A = U^T U.
    Read from A's lower triangle; an A that is not positive-definite raises
    minitx.linalg.LinAlgError."""
    L = Cholesky()(_square("linalg.cholesky", A))
    return L.mT if upper else L


def matrix_power(A, n):
    """A^n for an integer n (PyTorch's linalg.matrix_power): by repeated squaring, composed of
    matmuls (their gradients; an integer A stays in its dtype, as in matmul and PyTorch); n < 0 is
    inv(A)^-n (an integer A in float32, as inv takes it), n = 0 the identity (a constant, as
    PyTorch's gradient there is 0)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an integer, got {n!r}")
    A = given = _square("linalg.matrix_power", A, keep_dtype=True)  # (a product of integers is exact in their dtype)
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    if result is None:
        xp = get_array_module(A.data)
        return Tensor(xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape).copy())
    return result.clone() if result is given else result  # (n = 1: a new tensor, as PyTorch's)


def multi_dot(tensors):
    """The product of a chain of matrices (PyTorch's linalg.multi_dot), multiplied in the order
    that costs the fewest scalar products (the matrix-chain dynamic program, as NumPy and PyTorch);
    composed of matmuls. The first may be a 1-d row and the last a 1-d column, whose axes the
    result then drops; the others are 2-d."""
    tensors = [as_tensor(t) for t in tensors]
    if len(tensors) < 2:
        raise ValueError(f"linalg.multi_dot: expected at least 2 tensors, got {len(tensors)}")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    chain = [t.reshape(1, -1) if k == 0 and first else t.reshape(-1, 1) if k == len(tensors) - 1 and last else t
             for k, t in enumerate(tensors)]
    for k, (a, b) in enumerate(zip(chain, chain[1:])):
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"linalg.multi_dot: tensors other than the first and last must be 2-d (those "
                             f"may be 1-d), got shapes {[t.shape for t in tensors]}")
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"linalg.multi_dot: tensors {k} and {k + 1} do not chain: shapes "
                             f"{tensors[k].shape} and {tensors[k + 1].shape}")
    sides = [m.shape[0] for m in chain] + [chain[-1].shape[1]]  # matrix k is sides[k] x sides[k + 1]
    count = len(chain)
    cost, split = {}, {}
    for k in range(count):
        cost[k, k] = 0
    for length in range(2, count + 1):
        for i in range(count - length + 1):
            j = i + length - 1
            cost[i, j], split[i, j] = min((cost[i, s] + cost[s + 1, j] + sides[i] * sides[s + 1] * sides[j + 1], s)
                                          for s in range(i, j))

    def product(i, j):
        return chain[i] if i == j else product(i, split[i, j]) @ product(split[i, j] + 1, j)

    y = product(0, count - 1)
    return y.reshape(y.shape[int(first):y.ndim - int(last)]) if first or last else y


@takes_torch_keywords
def vecdot(x, y, *, axis=-1):
    """sum_k x[.., k] y[.., k] along ``axis`` (PyTorch's linalg.vecdot, whose conjugate of x
    changes nothing: minitx has no complex dtypes), x and y broadcast: composed, (x * y).sum."""
    x, y_shape = as_tensor(x), tuple(getattr(y, "shape", np.shape(y)))  # (y as x * y takes it: a number stays one)
    try:
        shape = np.broadcast_shapes(x.shape, y_shape)
    except ValueError:
        raise ValueError(f"linalg.vecdot: x of shape {x.shape} and y of shape {y_shape} do not broadcast") from None
    normalize_axes(axis, len(shape), "linalg.vecdot")  # (an int in range, checked by this op's name)
    return (x * y).sum(axis=axis)


# ---------------------------------------------------------------- symmetric eigenvalues and SVD


def _check_uplo(op, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"{op}: UPLO must be 'L' or 'U', got {UPLO!r}")


class Eigh(Function):
    """The eigendecomposition A = V diag(w) V^T of a symmetric A [..., n, n] (read from the
    triangle UPLO names): w ascending, V orthogonal. One op with two outputs, so it returns them as
    one array [..., n + 1, n], w in row 0 and V below, which linalg.eigh slices apart.

    With dA symmetric, A V = V diag(w) and V^T V = I give
        dw_i = v_i^T dA v_i        dV = V (F ∘ (V^T dA V)),    F_ij = 1 / (w_j - w_i), F_ii = 0
    so for the gradients dw, dV of the two outputs, with X = V^T dV (F is antisymmetric, so the
    symmetric part of F ∘ X is F ∘ (X - X^T) / 2):
        dA = V (diag(dw) + F ∘ (X - X^T) / 2) V^T
    At repeated eigenvalues F is infinite and the eigenvectors are not unique: a gradient through V
    is then inf or NaN, as PyTorch's (its docs: finite only for distinct eigenvalues); one through
    w alone stays finite (a term whose X - X^T is 0 is 0, see _divided).
    """

    def __init__(self, UPLO="L"):
        self.UPLO = UPLO

    def forward(self, A):
        xp = get_array_module(A)
        w, V = xp.linalg.eigh(A, UPLO=self.UPLO)
        self.save_for_backward(w, V)
        return xp.concatenate([w[..., None, :], V], axis=-2)

    def backward(self, dy):
        w, V = self.saved
        dw, dV = dy[..., 0, :], dy[..., 1:, :]
        X = _mT(V) @ dV
        inner = _divided((X - _mT(X)) / 2, _differences(w))
        n = w.shape[-1]
        inner[..., range(n), range(n)] = dw
        return (V @ inner @ _mT(V),)


def eigh(A, UPLO="L"):
    """(eigenvalues, eigenvectors) of each symmetric A [..., n, n] (PyTorch's linalg.eigh), read
    from its lower triangle (UPLO='L') or its upper one ('U'): eigenvalues ascending, eigenvector i
    in column i. Each eigenvector's sign is arbitrary, so a loss should not depend on it (on v_i v_i^T,
    or v_i ∘ v_i, yes; on v_i alone, no); at repeated eigenvalues the eigenvectors' gradient is not
    finite (Eigh)."""
    _check_uplo("linalg.eigh", UPLO)
    both = Eigh(UPLO)(_square("linalg.eigh", A))
    return EighResult(both[..., 0, :], both[..., 1:, :])


class Eigvalsh(Function):
    """w, the eigenvalues (ascending) of a symmetric A [..., n, n] = V diag(w) V^T.

    dw_i = v_i^T dA v_i, so
        dA = V diag(dy) V^T
    finite at repeated eigenvalues too (their sum of v_i v_i^T is unique).
    """

    def __init__(self, UPLO="L"):
        self.UPLO = UPLO

    def forward(self, A):
        w, V = get_array_module(A).linalg.eigh(A, UPLO=self.UPLO)
        self.save_for_backward(V)
        return w

    def backward(self, dy):
        (V,) = self.saved
        return ((V * dy[..., None, :]) @ _mT(V),)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues, ascending, of each symmetric A [..., n, n] (PyTorch's linalg.eigvalsh),
    read from the triangle UPLO names (Eigvalsh)."""
    _check_uplo("linalg.eigvalsh", UPLO)
    return Eigvalsh(UPLO)(_square("linalg.eigvalsh", A))


class SVD(Function):
    """The thin SVD A = U diag(S) V^T of A [..., m, n], k = min(m, n): U [..., m, k] and V [..., n, k]
    with orthonormal columns, S [..., k] descending. One op with three outputs, so it returns them
    as one array [..., m + 1 + n, k]: U's rows, S, then V's rows (linalg.svd slices them apart).

    For dU, dS, dV, the gradients of the three, with J = U^T dU, K = V^T dV and
    F_ij = 1 / (S_j^2 - S_i^2) (i != j) from differentiating A = U diag(S) V^T (Townsend 2016;
    PyTorch's svd_backward):
        inner = F ∘ ((J - J^T) diag(S) + diag(S) (K - K^T)) + diag(dS)
        dA = U inner V^T
             + (I - U U^T) dU diag(1 / S) V^T        (m > k: U's columns span only part of R^m)
             + U diag(1 / S) dV^T (I - V V^T)        (n > k: the same of V)
    Defined for distinct, nonzero singular values; U's and V's columns are only fixed up to a joint
    sign, so a loss must not depend on it (U diag(c) V^T, U ∘ U or S: yes). As in Eigh, a term
    whose numerator is 0 is 0 (_divided), so S alone has a finite gradient at ties.
    """

    def forward(self, A):
        xp = get_array_module(A)
        U, S, Vh = xp.linalg.svd(A, full_matrices=False)
        V = _mT(Vh)
        self.save_for_backward(U, S, V)
        return xp.concatenate([U, S[..., None, :], V], axis=-2)

    def backward(self, dy):
        U, S, V = self.saved
        m, k = U.shape[-2], S.shape[-1]
        dU, dS, dV = dy[..., :m, :], dy[..., m, :], dy[..., m + 1:, :]
        J, K = _mT(U) @ dU, _mT(V) @ dV
        inner = _divided((J - _mT(J)) * S[..., None, :] + S[..., :, None] * (K - _mT(K)), _differences(S * S))
        inner[..., range(k), range(k)] = dS
        dA = U @ inner @ _mT(V)
        if m > k:
            dA += _divided(dU - U @ J, S[..., None, :]) @ _mT(V)
        if V.shape[-2] > k:
            dA += U @ _divided(_mT(dV - V @ K), S[..., :, None])
        return (dA,)


def svd(A, full_matrices=True):
    """(U, S, Vh) with A = U diag(S) Vh for each A [..., m, n] (PyTorch's linalg.svd), S descending.
    full_matrices=False: U [..., m, k], Vh [..., k, n], k = min(m, n) (SVD). True, PyTorch's default:
    U [..., m, m] and Vh [..., n, n]; the columns beyond k are a basis of the rest of the space, as
    arbitrary as PyTorch says they are, and take no gradient, as there (a second, full SVD gives
    them). Signs are arbitrary: a loss must not depend on them (see SVD)."""
    A = floating(as_tensor(A))
    if A.ndim < 2:
        raise ValueError(f"linalg.svd: A must be batches of matrices [..., m, n], got shape {A.shape}")
    m, n = A.shape[-2:]
    packed = SVD()(A)
    U, S, Vh = packed[..., :m, :], packed[..., m, :], packed[..., m + 1:, :].mT
    if full_matrices and m != n:
        xp = get_array_module(A.data)
        U_full, _, Vh_full = xp.linalg.svd(A.data if A.dtype.itemsize > 2 else A.data.astype(np.float32))
        k = min(m, n)
        if m > n:
            U = concatenate([U, Tensor(U_full[..., :, k:].astype(U.dtype))], axis=-1)
        else:
            Vh = concatenate([Vh, Tensor(Vh_full[..., k:, :].astype(Vh.dtype))], axis=-2)
    return SVDResult(U, S, Vh)


class Svdvals(Function):
    """S, the singular values (descending) of A [..., m, n] = U diag(S) V^T.

    dS_i = u_i^T dA v_i, so
        dA = U diag(dy) V^T
    """

    def forward(self, A):
        U, S, Vh = get_array_module(A).linalg.svd(A, full_matrices=False)
        self.save_for_backward(U, Vh)
        return S

    def backward(self, dy):
        U, Vh = self.saved
        return ((U * dy[..., None, :]) @ Vh,)


def svdvals(A):
    """The singular values, descending, of each A [..., m, n] (PyTorch's linalg.svdvals; Svdvals)."""
    A = floating(as_tensor(A))
    if A.ndim < 2:
        raise ValueError(f"linalg.svdvals: A must be batches of matrices [..., m, n], got shape {A.shape}")
    return Svdvals()(A)


# ---------------------------------------------------------------- QR, pseudo-inverse, least squares


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def _matrices(op, A):
    """A as a floating tensor of matrices [..., m, n], or a ValueError naming ``op``."""
    A = floating(as_tensor(A))
    if A.ndim < 2:
        raise ValueError(f"{op}: A must be batches of matrices [..., m, n], got shape {A.shape}")
    return A


def _square_qr_backward(Q, R, dQ, dR):
    """dA of A = Q R for a square R [..., k, k] (the m >= n case of QR's docstring)."""
    xp = get_array_module(Q)
    M = R @ _mT(dR) - _mT(dQ) @ Q
    copyltu = xp.tril(M) + _mT(xp.tril(M, -1))
    right = dQ + Q @ copyltu                           # [dQ + Q copyltu(M)]
    return _mT(xp.linalg.solve(R, _mT(right)))         # right R^-T = (R^-1 right^T)^T


class QR(Function):
    """The QR factorization A = Q R of A [..., m, n]: Q with orthonormal columns, R upper triangular,
    as LAPACK's geqrf gives them (NumPy's, CuPy's and PyTorch's: R's diagonal may be negative).
    mode 'reduced': Q [..., m, k], R [..., k, n], k = min(m, n); 'complete': Q [..., m, m],
    R [..., m, n]; 'r': R alone (the caller drops Q). One op with two outputs, so it returns them as
    one array [..., m + n, q] (q = Q's columns): Q's rows, then R^T's rows (linalg.qr slices them apart).

    m >= n (Q [m, n], R [n, n] invertible): Q^T Q = I makes C = Q^T dQ antisymmetric, and dR R^-1 is
    upper triangular, so X = Q^T dA R^-1 = C + dR R^-1 gives C from X's strict lower triangle, and
    dR = (X - C) R, dQ = (I - Q Q^T) dA R^-1 + Q C. For dQ, dR, the gradients of Q and R
    (Walter & Lehmann 2018; PyTorch's linalg_qr_backward):
        M  = R dR^T - dQ^T Q
        copyltu(M) = tril(M) + tril(M, -1)^T        (the symmetric matrix of M's lower triangle)
        dA = [dQ + Q copyltu(M)] R^-T
    m < n: A = [X | Y] with X [m, m] = Q R_X and R = [R_X | R_Y], R_Y = Q^T Y, so Q and R_X are X's
    square QR and dR_Y gives Y the gradient Q dR_Y and Q the extra gradient Y dR_Y^T:
        dX = the square case with dQ + Y dR_Y^T and dR_X
        dY = Q dR_Y
    Defined where R's diagonal has no 0 (A of full rank). Refused, as PyTorch refuses them: mode 'r'
    (the gradient needs Q) and 'complete' with m > n (Q's last m - n columns are any basis of the
    rest of R^m, not a function of A).
    """

    def __init__(self, mode="reduced"):
        self.mode = mode

    def forward(self, A):
        xp = get_array_module(A)
        Q, R = xp.linalg.qr(A, mode="complete" if self.mode == "complete" else "reduced")
        self.save_for_backward(Q, R)
        return xp.concatenate([Q, _mT(R)], axis=-2)

    def backward(self, dy):
        Q, R = self.saved
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "r":
            raise RuntimeError("linalg.qr: the gradient needs Q, which mode='r' does not compute; use "
                               "mode='reduced' to differentiate through linalg.qr (as PyTorch)")
        if self.mode == "complete" and m > n:
            raise RuntimeError(f"linalg.qr: mode='complete' with more rows than columns ({m} > {n}) has no "
                               "gradient: Q's last columns are any basis of the rest of the space (as PyTorch)")
        dQ, dR = dy[..., :m, :], _mT(dy[..., m:, :])
        if m >= n:
            return (_square_qr_backward(Q, R, dQ, dR),)
        xp = get_array_module(Q)
        Y, dR_Y = Q @ R[..., m:], dR[..., m:]  # (Y = Q R_Y, A's last n - m columns)
        return (xp.concatenate([_square_qr_backward(Q, R[..., :m], dQ + Y @ _mT(dR_Y), dR[..., :m]), Q @ dR_Y],
                               axis=-1),)


def qr(A, mode="reduced"):
    """(Q, R) with A = Q R for each A [..., m, n] (PyTorch's linalg.qr; QR): Q orthonormal columns, R
    upper triangular, signs as LAPACK's (R's diagonal may be negative, as NumPy's and PyTorch's).
    mode 'reduced' (Q [..., m, k], R [..., k, n], k = min(m, n)), 'complete' (Q [..., m, m]) or 'r'
    (Q empty, as PyTorch's). Differentiable where A has full rank, except mode 'r' and 'complete'
    with m > n, whose backward raises, as PyTorch's."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    A = _matrices("linalg.qr", A)
    m = A.shape[-2]
    packed = QR(mode)(A)
    Q, R = packed[..., :m, :], packed[..., m:, :].mT
    if mode == "r":
        return QRResult(Tensor(get_array_module(A.data).zeros((0,), dtype=A.dtype)), R)
    return QRResult(Q, R)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse A^+ [..., n, m] of each A [..., m, n] (PyTorch's linalg.pinv),
    composed of svd (or of eigh with hermitian=True, A symmetric, read from its lower triangle):
        A = U diag(S) V^T,        A^+ = V diag(S^+) U^T,        S^+_i = 1 / S_i where S_i > cutoff, else 0
        cutoff = max(atol, rtol * max_i S_i)
    rtol defaults to max(m, n) * eps of A's dtype when atol is None too, else to 0 (PyTorch's rule);
    with hermitian, S are the eigenvalues' magnitudes. The gradient is svd's (eigh's), finite where the
    singular values kept are distinct (PyTorch's own formula is finite at ties too); where a
    nonzero singular value is dropped it is the truncated sum's derivative (PyTorch's takes that value as 0)."""
    op = "linalg.pinv"
    A = _square(op, A) if hermitian else _matrices(op, A)
    if rtol is None:
        rtol = max(A.shape[-2:]) * np.finfo(A.dtype).eps if atol is None else 0.0
    if hermitian:
        w, V = eigh(A)
        size, U, Vh = w.abs(), V * w.sign().unsqueeze(-2), V.mT  # A = (V diag(sign w)) diag(|w|) V^T
    else:
        U, size, Vh = svd(A, full_matrices=False)
    largest = size.amax(axis=-1, keepdims=True) if size.shape[-1] else size
    keep = size > maximum(largest * rtol, atol or 0.0).detach()
    inverse_sizes = where(keep, 1 / where(keep, size, 1.0), 0.0)  # (1 / 0 never formed: its gradient would be NaN)
    return (Vh.mT * inverse_sizes.unsqueeze(-2)) @ U.mT


def pinverse(A, rcond=1e-15):
    """PyTorch's pinverse, the older name: pinv with rtol=rcond."""
    return pinv(A, rtol=rcond)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of A X = B, min ||A X - B||, for each A [..., m, n] of full column
    rank with m >= n (PyTorch's linalg.lstsq): through the QR factorization A = Q R (QR),
        X = R^-1 Q^T B        (A^T A X = A^T B is R^T R X = R^T Q^T B)
    composed of qr, a matmul and solve (their gradients). B is [..., m, k], or [..., m] when it has one
    axis fewer than A (PyTorch's rule); batch axes broadcast. The result is PyTorch's named tuple with
    the fields its CPU default driver 'gelsy' fills: residuals and singular_values empty, rank A's rank
    (the singular values above rcond * the largest, rcond defaulting to max(m, n) * eps). A wide or
    rank-deficient A, which 'gelsy' also takes (its minimum-norm solution), raises LinAlgError here."""
    op = "linalg.lstsq"
    if driver not in (None, "gelsy"):
        raise ValueError(f"{op}: minitx has only the driver 'gelsy' (PyTorch's CPU default), got {driver!r}")
    A, B = _matrices(op, A), as_tensor(B)
    if B.dtype != A.dtype:
        raise TypeError(f"{op}: A and B need one dtype, got {A.dtype} and {B.dtype}")
    vector = B.ndim == A.ndim - 1
    if vector:
        B = B.unsqueeze(-1)
    m, n = A.shape[-2:]
    if B.ndim < 2 or B.shape[-2] != m:
        raise ValueError(f"{op}: incompatible shapes of A {A.shape} and B {B.shape}: B needs A's {m} rows")
    batch = broadcast_batches(op, "A", A, "B", B)
    if m < n:
        raise LinAlgError(f"{op}: A must have at least as many rows as columns (full column rank), got {m} by {n} "
                          "matrices; minitx does not compute the minimum-norm solution")
    xp = get_array_module(A.data)
    if rcond is None:
        rcond = max(m, n) * np.finfo(A.dtype).eps
    S = xp.linalg.svd(A.data, compute_uv=False)
    rank = (S > rcond * S[..., :1]).sum(axis=-1) if n else xp.zeros(A.shape[:-2], dtype=np.int64)
    if (rank < n).any():
        raise LinAlgError(f"{op}: A is rank-deficient (rank {int(rank.min())} of {n} columns, rcond {rcond:g}); "
                          "minitx solves only full-rank A")
    Q, R = qr(A)
    X = solve(R, Q.mT @ B)
    empty = Tensor(xp.zeros((0,), dtype=A.dtype))
    return LstsqResult(X.squeeze(-1) if vector else X, empty, Tensor(xp.broadcast_to(rank, batch).astype(np.int64)),
                       Tensor(xp.zeros((0,), dtype=A.dtype)))
