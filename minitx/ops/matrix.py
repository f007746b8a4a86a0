"""The matrix functions of minitx.linalg (torch.linalg's): det, slogdet, inv, solve, cholesky,
matrix_power, multi_dot, vecdot, eigh, eigvalsh, svd, svdvals, qr, pinv and lstsq; solve_triangular,
lu_factor, lu, lu_unpack, lu_solve, cholesky_solve, cholesky_inverse, matrix_rank and cond.

Each takes matrices in the last two axes and is batched over the leading ones; the
factorizations are NumPy's or CuPy's (``xp.linalg`` of get_array_module), but for LU and the
triangular solves, which xp.linalg lacks: written here by their steps (_lu_factored, _substituted). ^T below swaps the
last two axes, products are batched matrix products, and ∘ is the entrywise product.
A symmetric input (cholesky, eigh, eigvalsh) is read from its lower triangle, and its gradient
is the symmetric one, as PyTorch's: the derivative along symmetric changes of A.
"""
from __future__ import annotations

import contextlib
import math
import numbers
from typing import NamedTuple

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, _method_axis, as_tensor
from minitx.backend import get_array_module, to_host
from minitx.dtypes import numpy_finfo
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import broadcast_batches, flag, floating
from minitx.ops.elementwise import masked_fill, where
from minitx.ops.indexing import diagonal, tril, triu
from minitx.ops.reduction import normalize_axes
from minitx.ops.shape import concatenate, movedim, stack

__all__ = ["Det", "LogAbsDet", "Inv", "Solve", "Cholesky", "Eigh", "Eigvalsh", "SVD", "Svdvals", "QR",
           "SolveTriangular", "LUFactor", "CholeskySolve"]


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


def _square(op, A, keep_dtype=False, name="A"):
    """A as a floating tensor of square matrices [..., n, n] (an integer A becomes float32; with
    keep_dtype, it stays), or a ValueError naming ``op``, which calls A ``name``."""
    A = as_tensor(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        got = f"{A.shape[-2]} by {A.shape[-1]} matrices" if A.ndim >= 2 else f"shape {A.shape}"
        raise ValueError(f"{op}: {name} must be batches of square matrices [..., n, n], but got {got}")
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


def _divided(numerator, denominator, vectors_used):
    """numerator / denominator for the matrices whose singular vectors (eigenvectors) received a
    gradient (vectors_used [..., 1, 1]), 0 for the others: their terms come from the vectors alone, so
    the values alone have a finite gradient at repeated values. Through the vectors a repeated value
    divides by 0, inf or NaN, as PyTorch's: 0 / 0 is not 0 there (pinv of I, through svd, would
    otherwise get a finite wrong gradient)."""
    xp = get_array_module(numerator)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(vectors_used, numerator / denominator, 0)


def _received(*gradients):
    """[..., 1, 1]: whether each matrix's part of any of these gradients [..., r, c] is not all 0."""
    xp = get_array_module(gradients[0])
    return xp.any(xp.stack([(g != 0).any(axis=(-2, -1)) for g in gradients]), axis=0)[..., None, None]


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
    is then inf or NaN, as PyTorch's (its docs: finite only for distinct eigenvalues), even where
    the loss does not depend on the choice of V (a 0 / 0 whose limit the tie has lost); one through
    w alone stays finite (_divided).

    Derivation: docs/backprop/decompositions.md
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
        inner = _divided((X - _mT(X)) / 2, _differences(w), _received(dV))
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
    sign, so a loss must not depend on it (U diag(c) V^T, U ∘ U or S: yes). As in Eigh, a gradient
    through U or V is inf or NaN at ties and zero singular values, as PyTorch's; S alone has a finite
    one (_divided). pinv has its own backward, finite at ties (Pinv).

    Derivation: docs/backprop/decompositions.md
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
        J, K, used = _mT(U) @ dU, _mT(V) @ dV, _received(dU, dV)
        inner = _divided((J - _mT(J)) * S[..., None, :] + S[..., :, None] * (K - _mT(K)), _differences(S * S), used)
        inner[..., range(k), range(k)] = dS
        dA = U @ inner @ _mT(V)
        if m > k:
            dA += _divided(dU - U @ J, S[..., None, :], used) @ _mT(V)
        if V.shape[-2] > k:
            dA += U @ _divided(_mT(dV - V @ K), S[..., :, None], used)
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
    if flag("linalg.svd", "full_matrices", full_matrices) and m != n:
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


def _tolerances(op, A, atol, rtol):
    """atol and rtol as float64 arrays on A's device that broadcast against A's batch (numbers or
    tensors given, or None): atol None is 0; rtol None is max(m, n) * eps of A's dtype where atol is
    not above 0, else 0 (PyTorch's rule, matrix by matrix)."""
    xp = get_array_module(A.data)
    given = {}
    for name, value in (("atol", atol), ("rtol", rtol)):
        if value is not None:
            try:
                value = xp.asarray(value.data if isinstance(value, Tensor) else value, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"{op}: {name} must be a number or a tensor, got {value!r}") from None
            try:
                np.broadcast_shapes(value.shape, A.shape[:-2])
            except ValueError:
                raise ValueError(f"{op}: {name} of shape {value.shape} does not broadcast against the batch of A's "
                                 f"shape {A.shape}") from None
            given[name] = value
    atol = given.get("atol", xp.zeros(()))
    eps_rtol = max(A.shape[-2:]) * float(numpy_finfo(A.dtype).eps)
    return atol, given["rtol"] if rtol is not None else xp.where(atol > 0, 0.0, eps_rtol)


def _kept(S, atol, rtol):
    """S_i > max(atol, rtol * max_i S_i) for each matrix's values S [..., k] (descending or not): the
    singular values (eigenvalue magnitudes) that count; the batch broadcasts against atol's and rtol's."""
    xp = get_array_module(S)
    largest = S.max(axis=-1) if S.shape[-1] else xp.zeros(S.shape[:-1], dtype=S.dtype)
    return S > xp.maximum(rtol * largest, atol)[..., None]


def _values_for_rank(A, hermitian=False):
    """The singular values of A's raw array (hermitian: its eigenvalues' magnitudes, from the lower
    triangle), 16 bits computed in float32 as Function.apply computes them: what a rank reads (no gradient)."""
    a = A.data.astype(np.float32) if A.dtype.itemsize == 2 else A.data
    xp = get_array_module(a)
    return xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)


def _deprecated_tolerance(op, old_name, old, atol, rtol):
    """PyTorch's older spelling (pinv's rcond, matrix_rank's tol) as (atol, rtol): rcond is rtol with atol
    0, tol is atol with rtol 0; refused beside atol= or rtol=, as by PyTorch."""
    if old is None:
        return atol, rtol
    if atol is not None or rtol is not None:
        raise TypeError(f"{op}: {old_name}= is PyTorch's older spelling of "
                        f"{'rtol' if old_name == 'rcond' else 'atol'}=; give it or atol=/rtol=, not both")
    return (0.0, old) if old_name == "rcond" else (old, 0.0)


class Pinv(Function):
    """X = A^+ [..., n, m], the Moore-Penrose pseudo-inverse of A [..., m, n]:
        A = U diag(S) V^T,        X = V diag(S^+) U^T,        S^+_i = 1 / S_i where S_i is kept, else 0
    (svd; with hermitian, A = V diag(w) V^T from eigh, read from its lower triangle, and X = V diag(w^+) V^T,
    kept by |w_i|); kept: above max(atol, rtol * max_i S_i) (_kept).

    Where the rank is the same around A, differentiating A X A = A, X A X = X and the symmetry of A X and
    X A gives (Golub & Pereyra 1973; PyTorch's pinv_backward)
        dX(dA) = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X
    so for the gradient G = dy of X, its adjoint:
        dA = -X^T G X^T + (I_m - A X) G^T X X^T + X^T X G^T (I_n - X A)
    It divides by no difference of singular values, so it is finite where they are tied (A = I), where
    svd's backward is not; where a nonzero singular value is dropped it is this formula at the X computed,
    as PyTorch's (the truncation's own derivative would differ by terms in the dropped values).

    Derivation: docs/backprop/decompositions.md
    """

    def __init__(self, atol, rtol, hermitian):
        self.atol, self.rtol, self.hermitian = atol, rtol, hermitian

    def forward(self, A):
        xp = get_array_module(A)
        if self.hermitian:
            A = xp.tril(A) + _mT(xp.tril(A, -1))   # (the matrix inverted: its backward is this one's)
            w, V = xp.linalg.eigh(A)
            inverse = xp.where(_kept(xp.abs(w), self.atol, self.rtol), 1 / xp.where(w == 0, 1, w), 0)
            X = (V * inverse[..., None, :]) @ _mT(V)
        else:
            U, S, Vh = xp.linalg.svd(A, full_matrices=False)
            inverse = xp.where(_kept(S, self.atol, self.rtol), 1 / xp.where(S == 0, 1, S), 0)
            X = (_mT(Vh) * inverse[..., None, :]) @ _mT(U)
        self.save_for_backward(A, X)
        return X

    def backward(self, dy):
        A, X = self.saved
        XT, GT = _mT(X), _mT(dy)
        dA = -XT @ dy @ XT
        dA += (GT - A @ (X @ GT)) @ (X @ XT)          # (I_m - A X) G^T X X^T
        dA += (XT @ X) @ (GT - (GT @ X) @ A)          # X^T X G^T (I_n - X A)
        return (dA,)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse A^+ [..., n, m] of each A [..., m, n] (PyTorch's linalg.pinv; Pinv):
    the singular values (with hermitian=True, A symmetric read from its lower triangle: the eigenvalues'
    magnitudes) above max(atol, rtol * the largest) inverted, the others dropped. rtol defaults to
    max(m, n) * eps of A's dtype unless atol > 0 is given, then to 0 (PyTorch's rule); atol and rtol are
    numbers or tensors that broadcast against A's batch (the result then has the broadcast batch).
    rcond, PyTorch's older spelling, is rtol with atol 0. The gradient is finite at tied singular values
    (Pinv)."""
    op = "linalg.pinv"
    A = _square(op, A) if hermitian else _matrices(op, A)
    atol, rtol = _tolerances(op, A, *_deprecated_tolerance(op, "rcond", rcond, atol, rtol))
    batch = np.broadcast_shapes(A.shape[:-2], atol.shape, rtol.shape)
    if batch != A.shape[:-2]:
        A = A.expand(*batch, *A.shape[-2:])
    return Pinv(atol, rtol, hermitian)(A)


def pinverse(A, rcond=1e-15):
    """PyTorch's pinverse, the older name: pinv with rtol=rcond."""
    return pinv(A, rtol=rcond)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of A X = B, min ||A X - B||, of least norm ||X|| among those, for each
    A [..., m, n] (PyTorch's linalg.lstsq). Where every A has full column rank (m >= n): through the QR
    factorization A = Q R (QR),
        X = R^-1 Q^T B        (A^T A X = A^T B is R^T R X = R^T Q^T B)
    composed of qr, a matmul and solve (their gradients). Where an A is wide or rank-deficient: the
    minimum-norm solution X = A^+ B, A^+ pinv's with the singular values at or below rcond * the largest
    dropped (Pinv's gradient). B is [..., m, k], or [..., m] when it has one axis fewer than A
    (PyTorch's rule); batch axes broadcast. The result is PyTorch's named tuple with the fields its CPU
    default driver 'gelsy' fills: residuals and singular_values empty, rank A's rank (the singular values
    above rcond * the largest, rcond defaulting to max(m, n) * eps). 'gelsy' decides the rank by a QR
    with column pivoting, not the SVD: the two agree unless a singular value lies near the cutoff. Which
    way is one counted host read (backend.to_host)."""
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
    xp = get_array_module(A.data)
    if rcond is None:
        rcond = max(m, n) * float(numpy_finfo(A.dtype).eps)
    S = _values_for_rank(A)
    rank = _kept(S, 0.0, rcond).sum(axis=-1)
    if m >= n and not to_host((rank < n).any()):
        Q, R = qr(A)
        X = solve(R, Q.mT @ B)
    else:
        X = pinv(A, rtol=rcond) @ B
    empty = Tensor(xp.zeros((0,), dtype=A.dtype))
    return LstsqResult(X.squeeze(-1) if vector else X, empty, Tensor(xp.broadcast_to(rank, batch).astype(np.int64)),
                       Tensor(xp.zeros((0,), dtype=A.dtype)))


# ---------------------------------------------------------------- triangular systems, LU


class TriangularSolveResult(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LUWithInfoResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


def _substituted(T, B, upper, unit=False):
    """T^-1 B for T [..., n, n] triangular (its lower triangle, or its upper one when ``upper``; 1 on
    its diagonal when ``unit``), B [..., n, k], batch axes broadcast: forward substitution (back
    substitution when upper), one row of X at a time,
        X_i = (B_i - sum_j T_ij X_j) / T_ii        (j < i; j > i when upper; no division when unit)
    which reads T's triangle only. A zero T_ii gives inf or NaN, as LAPACK's trtrs (it does not check)."""
    xp = get_array_module(T)
    n = T.shape[-1]
    X = xp.zeros(np.broadcast_shapes(T.shape[:-2], B.shape[:-2]) + B.shape[-2:], dtype=np.result_type(T, B))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in reversed(range(n)) if upper else range(n):
            done = slice(i + 1, n) if upper else slice(0, i)
            row = B[..., i, :] - (T[..., i:i + 1, done] @ X[..., done, :])[..., 0, :]
            X[..., i, :] = row if unit else row / T[..., i, i, None]
    return X


def _triangle(a, upper, strict=False):
    """a's upper triangle (or lower), without the diagonal when ``strict``."""
    xp = get_array_module(a)
    return xp.triu(a, int(strict)) if upper else xp.tril(a, -int(strict))


def _system(op, name, A, B, left):
    """(A, B) of the equation A X = B (X A = B when not left), checked for ``op``, which calls A ``name``:
    A square matrices, B matrices [..., n, k] ([..., k, n]) in A's dtype, batch axes that broadcast."""
    A, B = _square(op, A), as_tensor(B)
    if B.dtype != A.dtype:
        raise TypeError(f"{op}: {name} and B need one dtype, got {A.dtype} and {B.dtype}")
    if B.ndim < 2 or B.shape[-2 if left else -1] != A.shape[-1]:
        raise ValueError(f"{op}: incompatible shapes of {name} {A.shape} and B {B.shape} for the equation "
                         f"{'AX' if left else 'XA'} = B (B is a matrix, [..., n, k] or [..., k, n])")
    broadcast_batches(op, name, A, "B", B)
    return A, B


class SolveTriangular(Function):
    """X = T^-1 B, the solution of T X = B, T the lower triangle of A [..., n, n] (upper=True: its
    upper one; unitriangular=True: with 1 on the diagonal, A's diagonal unread), B [..., n, k], batch
    axes broadcast; by substitution (_substituted).

    As in Solve, dX = T^-1 (dB - dT X), so for dy, X's gradient,
        dB = T^-T dy              (T^T is triangular the other way: substitution again)
        dA = tri(-dB X^T)         (tri: T's triangle, the one A is read from; without the diagonal
                                   when unitriangular)
    """

    def __init__(self, upper, unitriangular=False):
        self.upper, self.unitriangular = upper, unitriangular

    def forward(self, A, B):
        X = _substituted(A, B, self.upper, self.unitriangular)
        self.save_for_backward(A, X)
        return X

    def backward(self, dy):
        A, X = self.saved
        dB = _substituted(_mT(A), dy, not self.upper, self.unitriangular)
        dA = _triangle(-(dB @ _mT(X)), self.upper, self.unitriangular) if self.needs_input_grad[0] else None
        return dA, (dB if self.needs_input_grad[1] else None)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with T X = B (left=True) or X T = B (left=False), T the upper (upper=True) or lower triangle of
    A [..., n, n], with 1 on its diagonal when unitriangular (PyTorch's linalg.solve_triangular;
    SolveTriangular). B is [..., n, k] ([..., k, n] when not left), a matrix always (a vector is
    [..., n, 1]), as PyTorch's; batch axes broadcast. X T = B is T^T X^T = B^T, solved as that. A zero
    on T's diagonal gives inf or NaN, as PyTorch's (no error)."""
    A, B = _system("linalg.solve_triangular", "A", A, B, left)
    if left:
        return SolveTriangular(upper, unitriangular)(A, B)
    return SolveTriangular(not upper, unitriangular)(A.mT, B.mT).mT


def triangular_solve(B, A, upper=True, transpose=False, unitriangular=False):
    """PyTorch's older triangular_solve (torch.triangular_solve and Tensor.triangular_solve): note B
    first; (solution, cloned_coefficient), the X of T X = B (T^T X = B with transpose) and a copy of A;
    solve_triangular with upper=True by default."""
    A = as_tensor(A)
    X = solve_triangular(A.mT if transpose else A, B, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(X, A.clone())


def _swapped_rows(a, i, p):
    """a [..., m, q] with its rows i and p [...] (one per matrix) swapped."""
    xp = get_array_module(a)
    row_p = xp.take_along_axis(a, xp.broadcast_to(p[..., None, None], p.shape + (1, a.shape[-1])), axis=-2)
    a = xp.where(xp.arange(a.shape[-2])[:, None] == p[..., None, None], a[..., i:i + 1, :], a)
    a[..., i:i + 1, :] = row_p
    return a


def _lu_factored(A):
    """(LU, pivots) of A [..., m, n], LAPACK's getrf by its unblocked steps: for i < k = min(m, n),
    swap row i with the row p >= i of the largest |A_pi| (the first of ties, as LAPACK's), record
    pivots_i = p + 1 (1-based int32, as LAPACK's and PyTorch's), and eliminate below the pivot,
        LU_ji = A_ji / A_ii,        A_jc -= LU_ji A_ic        (j, c > i)
    A zero pivot (its column already 0 below i) eliminates nothing, as LAPACK's."""
    xp = get_array_module(A)
    m, n = A.shape[-2:]
    k = min(m, n)
    LU = A.copy()
    pivots = xp.zeros(A.shape[:-2] + (k,), dtype=np.int32)
    for i in range(k):
        p = i + xp.argmax(xp.abs(LU[..., i:, i]), axis=-1)
        pivots[..., i] = p + 1
        LU = _swapped_rows(LU, i, p)
        pivot = LU[..., i, i, None]
        below = LU[..., i + 1:, i]
        LU[..., i + 1:, i] = below = xp.where(pivot == 0, below, below / xp.where(pivot == 0, 1, pivot))
        LU[..., i + 1:, i + 1:] -= below[..., :, None] * LU[..., i, None, i + 1:]
    return LU, pivots


def _permutation(pivots, m):
    """perm [..., m] of the row swaps ``pivots`` [..., k] (1-based, in order) on m rows: A = P L U with
    P's column i the unit vector e_perm_i, so that P^T A = A[perm] (row i of L U is row perm_i of A)."""
    xp = get_array_module(pivots)
    perm = xp.broadcast_to(xp.arange(m)[:, None], pivots.shape[:-1] + (m, 1)).copy()
    for i in range(pivots.shape[-1]):
        perm = _swapped_rows(perm, i, pivots[..., i].astype(np.int64) - 1)
    return perm[..., 0]


def _unpacked(LU):
    """(L, U) of LU [..., m, n] packed as getrf's: L [..., m, k] unit lower triangular, U [..., k, n]
    upper triangular, k = min(m, n)."""
    xp = get_array_module(LU)
    m, n = LU.shape[-2:]
    k = min(m, n)
    return xp.tril(LU[..., :, :k], -1) + xp.eye(m, k, dtype=LU.dtype), xp.triu(LU[..., :k, :])


def _square_lu_backward(L, U, dL, dU):
    """P^T dA of A = P L U for square L, U [..., k, k] (the m = n case of LUFactor's docstring)."""
    inner = _triangle(_mT(L) @ dL, upper=False, strict=True) + _triangle(dU @ _mT(U), upper=True)
    left = _substituted(_mT(L), inner, upper=True, unit=True)            # L^-T inner
    return _mT(_substituted(U, _mT(left), upper=True))                   # (L^-T inner) U^-T


class LUFactor(Function):
    """The LU factorization with partial pivoting A = P L U of A [..., m, n], k = min(m, n): P a
    permutation, L [..., m, k] unit lower triangular, U [..., k, n] upper triangular, returned packed
    as LAPACK's getrf (and PyTorch's lu_factor) packs them, LU [..., m, n]: L below the diagonal, U on
    and above it (_lu_factored). The row swaps, ``pivots``, have no gradient: left on the op as
    ``self.pivots``.

    The packed gradient dy splits as dL = tril(dy, -1) and dU = triu(dy). m = n: P is constant
    where the factorization is differentiable (no tie in a pivot's column), so dA = P (dL' U + L dU')
    (' for the changes, here), and
        X = L^-1 P^T dA U^-1 = L^-1 dL' + dU' U^-1
    splits into a strictly lower part, L^-1 dL' (L has a fixed unit diagonal), and an upper one,
    dU' U^-1: dL' = L tril(X, -1), dU' = triu(X) U. So <dL, dL'> + <dU, dU'> = <tril(L^T dL, -1)
    + triu(dU U^T), X>, and (PyTorch's linalg_lu_backward)
        dA = P L^-T [tril(L^T dL, -1) + triu(dU U^T)] U^-T
    m > n: P^T A = [A1; A2] with A1 = L1 U square and A2 = L2 U, so L2 = A2 U^-1 (L = [L1; L2]):
        d(A2) = dL2 U^-T,   and U takes the extra gradient -L2^T dL2 U^-T:
        d(A1) = the square case with L1, dL1 and dU - L2^T d(A2)
    m < n: A = P L [U1 | U2], U2 = L^-1 P^T A2, the mirror image:
        d(A2) = P L^-T dU2,   and L takes the extra gradient -L^-T dU2 U2^T:
        d(A1) = the square case with dL - L^-T dU2 U2^T, U1 and dU1
    Finite where U's diagonal has no 0 (inf or NaN there, as PyTorch's).
    """

    def forward(self, A):
        LU, self.pivots = _lu_factored(A)
        self.save_for_backward(LU)
        return LU

    def backward(self, dy):
        (LU,) = self.saved
        xp = get_array_module(LU)
        m, n = LU.shape[-2:]
        k = min(m, n)
        L, U = _unpacked(LU)
        dL, dU = xp.tril(dy[..., :, :k], -1), xp.triu(dy[..., :k, :])
        if m > n:
            L1, L2, dL1, dL2 = L[..., :k, :], L[..., k:, :], dL[..., :k, :], dL[..., k:, :]
            dA2 = _mT(_substituted(U, _mT(dL2), upper=True))                   # dL2 U^-T
            dPA = xp.concatenate([_square_lu_backward(L1, U, dL1, dU - _mT(L2) @ dA2), dA2], axis=-2)
        elif m < n:
            U1, U2, dU1, dU2 = U[..., :, :k], U[..., :, k:], dU[..., :, :k], dU[..., :, k:]
            dA2 = _substituted(_mT(L), dU2, upper=True, unit=True)            # L^-T dU2
            dPA = xp.concatenate([_square_lu_backward(L, U1, dL - dA2 @ _mT(U2), dU1), dA2], axis=-1)
        else:
            dPA = _square_lu_backward(L, U, dL, dU)
        # dA = P dPA: row i of dPA is row perm_i of dA
        perm = _permutation(self.pivots, m)
        return (xp.take_along_axis(dPA, xp.argsort(perm, axis=-1)[..., None], axis=-2),)


def lu_factor(A, *, pivot=True):
    """(LU, pivots) of A = P L U for each A [..., m, n] (PyTorch's linalg.lu_factor; LUFactor): L and
    U packed in LU, pivots [..., min(m, n)] the row swaps, 1-based int32, as LAPACK's getrf. A zero on
    U's diagonal (A singular, or of rank < min(m, n)) raises LinAlgError naming it, as PyTorch's: that
    check is one counted host read (backend.to_host); linalg.lu does not check. pivot=False (LU
    without row swaps) is refused, as PyTorch refuses it on the CPU."""
    op = "linalg.lu_factor"
    LU, pivots = _lu(op, A, pivot)
    zero = to_host(get_array_module(LU.data).diagonal(LU.data, axis1=-2, axis2=-1) == 0)
    if zero.any():
        batch, i = (int(j) for j in np.argwhere(zero.reshape(-1, zero.shape[-1]))[0])
        raise LinAlgError(f"{op}: {f'(batch element {batch}): ' if LU.ndim > 2 else ''}U[{i}, {i}] is zero: "
                          f"A is singular, and lu_solve would divide by it; linalg.lu factors it")
    return LUFactorResult(LU, pivots)


def _lu(op, A, pivot):
    """(LU, pivots) of lu_factor, without its check of U's diagonal."""
    if not flag(op, "pivot", pivot):
        raise ValueError(f"{op}: LU without pivoting (pivot=False) is not implemented, as in PyTorch on the CPU")
    factor = LUFactor()
    LU = factor(_matrices(op, A))
    return LU, Tensor(factor.pivots)


def _check_pivots(op, LU_name, LU, name, pivots):
    """A ValueError naming ``op`` unless ``pivots`` (called ``name``) are lu_factor's of LU [..., m, n]:
    int32 [..., min(m, n)], each row swap from 1 to m (PyTorch's check; one read of the device)."""
    m, n = LU.shape[-2:]
    shape = LU.shape[:-2] + (min(m, n),)
    if pivots.dtype != np.int32 or pivots.shape != shape:
        raise ValueError(f"{op}: {name} must be int32 of shape {shape} ({LU_name}'s batch and min(m, n)), got "
                         f"{pivots.dtype} of shape {pivots.shape}")
    if pivots.size:
        xp = get_array_module(pivots.data)
        low, high = to_host(xp.stack([pivots.data.min(), pivots.data.max()])).tolist()
        if low < 1 or high > m:
            raise ValueError(f"{op}: {name} must be from 1 to {m} ({LU_name}'s rows), got values from {low} to "
                             f"{high}; pass lu_factor's pivots")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's (LU, pivots) (PyTorch's lu_unpack): P [..., m, m] the permutation
    matrix (a constant), L = tril(LU, -1) + I [..., m, k] and U = triu(LU) [..., k, n], composed of
    tril and triu (their gradients). unpack_data=False leaves L and U empty, unpack_pivots=False P."""
    LU, pivots = as_tensor(LU_data), as_tensor(LU_pivots)
    op = "lu_unpack"
    if LU.ndim < 2:
        raise ValueError(f"{op}: LU_data must be batches of matrices [..., m, n], got shape {LU.shape}")
    _check_pivots(op, "LU_data", LU, "LU_pivots", pivots)
    return _unpack(LU, pivots, unpack_data, unpack_pivots)


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    """lu_unpack of a checked (LU, pivots)."""
    m, k = LU.shape[-2], min(LU.shape[-2:])
    xp = get_array_module(LU.data)
    empty = Tensor(xp.zeros((0,), dtype=LU.dtype))
    P = empty
    if unpack_pivots:
        perm = _permutation(pivots.data, m)
        P = Tensor((perm[..., None, :] == xp.arange(m)[:, None]).astype(LU.dtype))  # P[perm_i, i] = 1
    if not unpack_data:
        return LUResult(P, empty, empty)
    eye = Tensor(xp.eye(m, k, dtype=LU.dtype))
    return LUResult(P, tril(LU[..., :, :k], -1) + eye, triu(LU[..., :k, :]))


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U for each A [..., m, n] (PyTorch's linalg.lu): lu_factor (without its
    check for a zero on U's diagonal, as PyTorch's lu) then lu_unpack; differentiable through both."""
    return _unpack(*_lu("linalg.lu", A, pivot))  # (its pivots are lu_factor's: no check, no device read)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B for A = P L U given as lu_factor's (LU, pivots), A [..., n, n] (PyTorch's
    linalg.lu_solve): X = U^-1 L^-1 P^T B, two triangular solves (solve_triangular, their
    gradients, with respect to LU and B, as PyTorch's). adjoint=True solves A^T X = B,
    X = P L^-T U^-T B; left=False X A = B (or X A^T = B), the transposed system. B is [..., n, k]
    ([..., k, n] when not left); batch axes broadcast."""
    op = "linalg.lu_solve"
    LU, B = _system(op, "LU", LU, B, left)
    if not left:  # X A = B is A^T X^T = B^T; X A^T = B is A X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    pivots = as_tensor(pivots)
    _check_pivots(op, "LU", LU, "pivots", pivots)
    P, L, U = _unpack(LU, pivots)
    if adjoint:
        return P @ solve_triangular(L.mT, solve_triangular(U.mT, B, upper=False), upper=True, unitriangular=True)
    return solve_triangular(U, solve_triangular(L, P.mT @ B, upper=False, unitriangular=True), upper=True)


def lu_with_info(A, pivot=True, get_infos=False):
    """PyTorch's older torch.lu (minitx.lu and Tensor.lu): lu_factor's (LU, pivots), without its check of
    U's diagonal, as PyTorch's; with get_infos=True a third, info [...] int32: 0 for each matrix whose U
    has no zero on its diagonal, else i, the first such U[i - 1, i - 1] (1-based, LAPACK's getrf)."""
    LU, pivots = _lu("lu", A, pivot)
    if not flag("lu", "get_infos", get_infos):
        return LU, pivots
    xp = get_array_module(LU.data)
    zero = xp.diagonal(LU.data, axis1=-2, axis2=-1) == 0
    first = xp.where(zero.any(axis=-1), xp.argmax(zero, axis=-1) + 1, 0)  # (argmax: the first True)
    return LUWithInfoResult(LU, pivots, Tensor(first.astype(np.int32)))


def lu_solve_b_first(b, LU_data, LU_pivots):
    """PyTorch's older torch.lu_solve (minitx.lu_solve and Tensor.lu_solve, b the tensor): note b first;
    linalg.lu_solve(LU_data, LU_pivots, b)."""
    return lu_solve(LU_data, LU_pivots, b)


class CholeskySolve(Function):
    """X = A^-1 B with A = L L^T, L [..., n, n] lower triangular (its lower triangle read), B [..., n, k],
    batch axes broadcast: two substitutions, X = L^-T (L^-1 B).

    dy, X's gradient, gives B's as in Solve (A symmetric): dB = A^-1 dy = G. A's is -G X^T, and through
    A = L L^T (every entry of L counted, as PyTorch's cholesky_solve_backward counts them: the gradient
    is not restricted to L's triangle),
        dL = (dA + dA^T) L = -(G X^T + X G^T) L
    """

    def forward(self, B, L):
        X = _substituted(_mT(L), _substituted(L, B, upper=False), upper=True)
        self.save_for_backward(L, X)
        return X

    def backward(self, dy):
        L, X = self.saved
        G = _substituted(_mT(L), _substituted(L, dy, upper=False), upper=True)
        dL = -((G @ _mT(X) + X @ _mT(G)) @ L) if self.needs_input_grad[1] else None
        return (G if self.needs_input_grad[0] else None), dL


def cholesky_solve(B, L, upper=False):
    """X with A X = B for A = L L^T given by its Cholesky factor L [..., n, n] (PyTorch's
    cholesky_solve, B first; CholeskySolve), or A = U^T U with upper=True (solved as L = U^T). B is
    [..., n, k]; batch axes broadcast."""
    op = "cholesky_solve"
    L, B = _square(op, L, name="L"), as_tensor(B)
    if B.dtype != L.dtype:
        raise TypeError(f"{op}: B and L need one dtype, got {B.dtype} and {L.dtype}")
    if B.ndim < 2 or B.shape[-2] != L.shape[-1]:
        raise ValueError(f"{op}: incompatible shapes of B {B.shape} and L {L.shape}: B must be [..., n, k] "
                         f"for L [..., n, n]")
    broadcast_batches(op, "B", B, "L", L)
    return CholeskySolve()(B, L.mT if upper else L)


def cholesky_inverse(L, upper=False):
    """A^-1 for A = L L^T (A = U^T U with upper=True) given its Cholesky factor (PyTorch's
    cholesky_inverse): cholesky_solve(I, L), whose gradient is PyTorch's cholesky_inverse one."""
    L = _square("cholesky_inverse", L, name="L")
    xp = get_array_module(L.data)
    return cholesky_solve(Tensor(xp.eye(L.shape[-1], dtype=L.dtype)), L, upper)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The rank of each A [..., m, n] (PyTorch's linalg.matrix_rank), int64: the count of its singular
    values (the eigenvalues' magnitudes with hermitian=True, A symmetric, read from its lower triangle)
    above max(atol, rtol * the largest) (pinv's rule: _tolerances, _kept). atol and rtol are numbers or
    tensors that broadcast against A's batch (the result then has the broadcast shape). tol, PyTorch's
    older spelling, is atol with rtol 0. No gradient (an integer)."""
    op = "linalg.matrix_rank"
    A = _square(op, A) if hermitian else _matrices(op, A)
    atol, rtol = _tolerances(op, A, *_deprecated_tolerance(op, "tol", tol, atol, rtol))
    return Tensor(_kept(_values_for_rank(A, hermitian), atol, rtol).sum(axis=-1).astype(np.int64))


def cond(A, p=None):
    """The condition number of each A [..., m, n] (PyTorch's linalg.cond), composed of differentiable
    ops: p None or 2, S_max / S_min (svdvals; any m, n); -2, S_min / S_max; 'nuc', sum(S) sum(1 / S)
    (square A; these three through the SVD, as PyTorch's, huge rather than inf where rounding leaves a
    tiny S); 'fro', inf, -inf, 1 or -1, ||A||_p ||A^-1||_p (matrix_norm, inv; square A), inf where A is
    singular (a zero pivot of its LU factorization, PyTorch's test), as PyTorch's, its gradient 0 there.
    An empty matrix (NumPy defines no cond for it) gives 0, as PyTorch's, which checks only 'fro' and
    'nuc' for square matrices first."""
    op = "linalg.cond"
    if not (p is None or isinstance(p, (str, numbers.Real)) and not isinstance(p, bool)) \
            or p not in (None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1):
        raise ValueError(f"{op}: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got {p!r}")
    A = _square(op, A) if p in ("fro", "nuc") else _matrices(op, A)
    if 0 in A.shape[-2:]:  # (an empty batch of matrices goes on: its result empty, with a gradient)
        return Tensor(get_array_module(A.data).zeros(A.shape[:-2], dtype=A.dtype))
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    A = _square(op, A)
    if p == "nuc":
        S = svdvals(A)
        return S.sum(axis=-1) * (1 / S).sum(axis=-1)
    from minitx.ops.linalg import matrix_norm  # noqa: PLC0415 (linalg imports this module's svdvals)
    xp = get_array_module(A.data)
    LU, _ = _lu_factored(A.data)
    singular = Tensor((xp.diagonal(LU, axis1=-2, axis2=-1) == 0).any(axis=-1))[..., None, None]
    invertible = where(singular, Tensor(xp.eye(A.shape[-1], dtype=A.dtype)), A)  # (inv of a singular A raises)
    return where(singular[..., 0, 0], float("inf"), matrix_norm(A, p) * matrix_norm(inv(invertible), p))


# ---------------------------------------------------------------- matrix_exp, and the reshaping and building ones


#: Higham's (2005) degree-13 Padé approximant of exp: its coefficients b_0 ... b_13, and theta_13, the
#: largest ||A||_1 at which it is exp to float64's rounding
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(A):
    """exp(A) of A [..., n, n] by scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), with s the
    least that brings ||A / 2^s||_1 (the largest column sum) within theta_13, and exp(A / 2^s) the
    Padé approximant r = (V - U)^-1 (V + U), U the odd terms of b_0 + b_1 A + ... + b_13 A^13 and V the
    even ones (Horner's form in A^2, A^4, A^6). Each matrix has its own s; the squarings run to the
    largest, the others' results kept once theirs are done; that count is one counted host read."""
    xp = get_array_module(A)
    b, n = _PADE13, A.shape[-1]
    norm = xp.abs(A).sum(axis=-2).max(axis=-1) if n else xp.zeros(A.shape[:-2], dtype=A.dtype)
    with np.errstate(divide="ignore"):
        s = xp.maximum(xp.ceil(xp.log2(norm / _THETA13)), 0)
    s = xp.where(xp.isfinite(s), s, 0)  # (a 0 or NaN norm: no scaling)
    A = A / (2.0 ** s)[..., None, None]
    I = xp.broadcast_to(xp.eye(n, dtype=A.dtype), A.shape)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * I)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * I
    r = xp.linalg.solve(V - U, V + U)
    squarings = int(to_host(s.max())) if s.size else 0
    for k in range(squarings):
        r = xp.where((k < s)[..., None, None], r @ r, r)
    return r


class MatrixExp(Function):
    """Y = exp(A) = sum_k A^k / k! of A [..., n, n] (_expm).

    d exp(A) = integral_0^1 exp(t A) dA exp((1 - t) A) dt, so for dy, Y's gradient,
        dA = integral_0^1 exp(t A^T) dy exp((1 - t) A^T) dt
    which is the upper right block of the exponential of a block triangular matrix (Van Loan 1978;
    PyTorch's matrix_exp backward):
        exp([[A^T, dy], [0, A^T]]) = [[exp(A^T), dA], [0, exp(A^T)]]
    """

    def forward(self, A):
        self.save_for_backward(A)
        return _expm(A)

    def backward(self, dy):
        (A,) = self.saved
        xp = get_array_module(A)
        n = A.shape[-1]
        AT = xp.broadcast_to(_mT(A), dy.shape)
        block = xp.concatenate([xp.concatenate([AT, dy], axis=-1),
                                xp.concatenate([xp.zeros_like(AT), AT], axis=-1)], axis=-2)
        return (_expm(block)[..., :n, n:],)


def matrix_exp(A):
    """exp(A) = I + A + A^2 / 2 + ... of each A [..., n, n] (PyTorch's linalg.matrix_exp and
    matrix_exp; MatrixExp), by scaling and squaring a Padé approximant."""
    return MatrixExp()(_square("linalg.matrix_exp", A))


@takes_torch_keywords
def linalg_diagonal(A, *, offset=0, axis1=-2, axis2=-1):
    """PyTorch's linalg.diagonal: diagonal with the last two axes by default (minitx.diagonal's are
    the first two), keyword-only."""
    return diagonal(A, offset, axis1, axis2)


def vander(x, N=None, increasing=False):
    """PyTorch's vander: the Vandermonde matrix of a 1-d x [n], [n, N] (N = n by default), its columns
    the powers x^(N-1), ..., x, 1, or 1, x, ..., x^(N-1) when increasing (_powers); integers and
    booleans in int64, as PyTorch's."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-d, got shape {x.shape}")
    N = x.shape[0] if N is None else N
    if not isinstance(N, numbers.Integral) or isinstance(N, bool) or N < 0:
        raise ValueError(f"vander: N must be a non-negative integer, got {N!r}")
    columns = _powers(x.astype(np.int64) if x.dtype.kind in "biu" else x, N)
    return columns if increasing else columns.flip(-1)


def linalg_vander(x, *, N=None):
    """PyTorch's linalg.vander: x [..., n] -> [..., n, N], N > 1 (n by default), the powers 1, x, ...,
    x^(N-1), increasing (torch.vander's opposite order by default), batched (_powers); integers in int64,
    booleans refused, as PyTorch's."""
    op = "linalg.vander"
    x = as_tensor(x)
    if x.ndim < 1 or x.dtype == np.bool_:
        raise TypeError(f"{op}: x must be a tensor of numbers with at least 1 dimension, got {x.dtype} of "
                        f"shape {x.shape}")
    N = x.shape[-1] if N is None else N
    if not isinstance(N, numbers.Integral) or isinstance(N, bool) or N <= 1:
        raise ValueError(f"{op}: N must be an integer greater than 1, got {N!r}")
    return _powers(x.astype(np.int64) if x.dtype.kind in "iu" else x, N)


def _powers(x, N):
    """[..., n, N]: x^0, ..., x^(N - 1) of x [..., n] along a new last axis, each the one before times x
    (no pow, whose gradient at x = 0 would be 0 * x^-1)."""
    xp = get_array_module(x.data)
    if N == 0:
        return Tensor(xp.zeros(x.shape + (0,), dtype=x.dtype))
    columns = [Tensor(xp.ones_like(x.data))]
    while len(columns) < N:
        columns.append(columns[-1] * x)
    return stack(columns, axis=-1)


def tensorinv(A, ind=2):
    """PyTorch's linalg.tensorinv: the inverse of A [*I, *J] (I its first ``ind`` axes) under
    tensordot(., ., ind): inv of A as a prod(I) x prod(J) matrix, which must be square, reshaped to
    [*J, *I]; composed of reshape and inv (its gradient, and its error for a singular A)."""
    op = "linalg.tensorinv"
    A = as_tensor(A)
    if not isinstance(ind, numbers.Integral) or isinstance(ind, bool) or not 0 < ind <= A.ndim:
        raise ValueError(f"{op}: ind must be an integer from 1 to A's {A.ndim} dimensions, got {ind!r}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ValueError(f"{op}: A's first {ind} axes {rows} and the others {cols} must have as many entries, "
                         f"got {math.prod(rows)} and {math.prod(cols)}")
    return inv(A.reshape(math.prod(rows), -1)).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """PyTorch's linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B, A [*B.shape, *X.shape] (after
    the axes ``dims`` of A are moved to its end): solve with A as a prod(B.shape) x prod(X.shape) matrix,
    which must be square; composed of movedim, reshape and solve (their gradients)."""
    op = "linalg.tensorsolve"
    A, B = as_tensor(A), as_tensor(B)
    if dims is not None:
        dims = tuple(_method_axis(op, d, A.shape, takes_0d=True) for d in dims)  # (checked here, named)
        A = movedim(A, dims, tuple(range(A.ndim - len(dims), A.ndim)))
    if A.shape[:B.ndim] != B.shape or math.prod(A.shape[B.ndim:]) != B.size:
        raise ValueError(f"{op}: A {A.shape} must start with B's shape {B.shape} and its other axes have as many "
                         f"entries as B")
    return solve(A.reshape(B.size, B.size), B.reshape(B.size)).reshape(A.shape[B.ndim:])
