"""minitx.linalg, as torch.linalg: the norms, and the products it shares with minitx.functional.

    import minitx.linalg as LA
    LA.vector_norm(x, ord=2, dim=-1)      LA.matrix_norm(A, ord="fro")      LA.norm(A)

The functions live in minitx/ops/linalg.py, beside the products. minitx has no matrix
decompositions (SVD, QR, eigenvalues, solve): matrix_norm's 'nuc', 2 and -2 are refused by name.
"""
from minitx.ops.linalg import cross, linalg_norm as norm, matmul, matrix_norm, vector_norm

__all__ = ["cross", "matmul", "matrix_norm", "norm", "vector_norm"]
