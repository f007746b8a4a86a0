"""Matrix products."""
from __future__ import annotations

from minitx.autograd.function import Function
from minitx.backend import get_array_module

__all__ = ["Matmul"]


class Matmul(Function):
    """y = a @ b, as numpy.matmul: a [..., n, k] @ b [..., k, m] -> [..., n, m], batch axes broadcast.

    da = dy @ b^T        db = a^T @ dy        (^T swaps the last two axes)

    A 1-D operand is a row vector on the left (k -> 1 x k) and a column vector on the right
    (k -> k x 1); that axis is removed from the result, and put back in dy for backward.
    Gradients over broadcast batch axes are summed by the engine.

    Derivation: docs/backprop/matmul-linear.md
    """

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes {a.shape} and {b.shape}")
        k_a = a.shape[-1]
        k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
        if k_a != k_b:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align: {k_a} != {k_b}")
        self.a_vector, self.b_vector = a.ndim == 1, b.ndim == 1
        a2 = a[None, :] if self.a_vector else a
        b2 = b[:, None] if self.b_vector else b
        try:
            y = a2 @ b2
        except ValueError:
            raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} do not broadcast") from None
        self.save_for_backward(a2, b2)
        if self.b_vector:
            y = y[..., 0]
        if self.a_vector:
            y = y[..., 0, :] if not self.b_vector else y[..., 0]
        return y

    def backward(self, dy):
        a2, b2 = self.saved
        xp = get_array_module(dy)
        # restore the removed axes so dy is [..., n, m]
        if self.b_vector:
            dy = dy[..., None]
        if self.a_vector:
            dy = xp.expand_dims(dy, -2)
        da = db = None
        if self.needs_input_grad[0]:
            da = dy @ xp.swapaxes(b2, -1, -2)
            if self.a_vector:
                da = da.reshape(da.shape[:-2] + (da.shape[-1],)) if da.ndim > 2 else da[0]
        if self.needs_input_grad[1]:
            db = xp.swapaxes(a2, -1, -2) @ dy
            if self.b_vector:
                db = db[..., 0]
        return da, db
