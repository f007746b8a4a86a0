"""minitx.linalg, as torch.linalg: the norms, the matrix functions, and the products it shares
with minitx.functional.

    import minitx.linalg as LA
    LA.vector_norm(x, ord=2, dim=-1)      LA.matrix_norm(A, ord="fro")      LA.norm(A)
    LA.det(A)   LA.slogdet(A)   LA.inv(A)   LA.solve(A, B)   LA.cholesky(A)   LA.matrix_power(A, 3)
    LA.eigh(A)  LA.eigvalsh(A)  LA.svd(A, full_matrices=False)   LA.svdvals(A)
    LA.multi_dot([A, B, C])   LA.vecdot(x, y, dim=-1)
    LA.qr(A, mode="reduced")   LA.pinv(A)   LA.lstsq(A, B)

The norms live in minitx/ops/linalg.py, beside the products; the matrix functions in
minitx/ops/matrix.py, each with its gradient derived there. minitx has no LU or eig
(non-symmetric); its lstsq takes only full-rank A with m >= n.
"""
from minitx.ops.linalg import cross, linalg_norm as norm, matmul, matrix_norm, vector_norm
from minitx.ops.matrix import (LinAlgError, cholesky, det, eigh, eigvalsh, inv, lstsq, matrix_power, multi_dot, pinv,
                               qr, slogdet, solve, svd, svdvals, vecdot)

__all__ = ["LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm",
           "matrix_power", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vecdot", "vector_norm"]
