"""minitx.linalg, as torch.linalg: the norms, the matrix functions, and the products it shares
with minitx.functional.

    import minitx.linalg as LA
    LA.vector_norm(x, ord=2, dim=-1)      LA.matrix_norm(A, ord="fro")      LA.norm(A)
    LA.det(A)   LA.slogdet(A)   LA.inv(A)   LA.solve(A, B)   LA.cholesky(A)   LA.matrix_power(A, 3)
    LA.eigh(A)  LA.eigvalsh(A)  LA.svd(A, full_matrices=False)   LA.svdvals(A)
    LA.multi_dot([A, B, C])   LA.vecdot(x, y, dim=-1)
    LA.qr(A, mode="reduced")   LA.pinv(A)   LA.lstsq(A, B)   LA.solve_triangular(A, B, upper=True)
    LA.lu_factor(A)   LA.lu(A)   LA.lu_solve(LU, pivots, B)   LA.matrix_rank(A)   LA.cond(A, p="fro")
    LA.matrix_exp(A)   LA.diagonal(A)   LA.vander(x)   LA.tensorinv(A, ind=2)   LA.tensorsolve(A, B)

The norms live in minitx/ops/linalg.py, beside the products; the matrix functions in
minitx/ops/matrix.py, each with its gradient derived there. minitx has no eig or eigvals (a
non-symmetric matrix's eigenvalues are complex, and minitx has no complex dtype). Its diagonal and
vander are PyTorch's linalg ones, which differ from minitx.diagonal and minitx.vander (the axes, the
order of the powers).
"""
from minitx.ops.linalg import cross, linalg_norm as norm, matmul, matrix_norm, vector_norm
from minitx.ops.matrix import (LinAlgError, cholesky, cond, det, eigh, eigvalsh, inv, lstsq, lu, lu_factor, lu_solve,
                               matrix_exp, matrix_power, matrix_rank, multi_dot, pinv, qr, slogdet, solve,
                               solve_triangular, svd, svdvals, tensorinv, tensorsolve, vecdot)
from minitx.ops.matrix import linalg_diagonal as diagonal, linalg_vander as vander

from minitx.autograd.tensor import OP_NAMES as _OP_NAMES

# The matrix functions and the norm say linalg.<name> in their errors, as PyTorch's names for them do
# (torch.det is torch.linalg.det), whatever op they are built from (minitx.autograd.tensor.naming)
for _name, _function in list(globals().items()):
    if hasattr(_function, "called") and (_function.__module__ == "minitx.ops.matrix" or _name == "norm"):
        _function.called = f"linalg.{_name}"
        _OP_NAMES.add(_function.called)
del _name, _function

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "lu",
           "lu_factor", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
           "vander", "vecdot", "vector_norm"]
