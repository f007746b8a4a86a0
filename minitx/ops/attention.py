"""Scaled dot-product attention: the NumPy/CuPy reference, and the fused flash-attention
kernels of ``minitx.kernels`` where ``kernels.attention_plan`` says they can compute it.
"""
from __future__ import annotations

import math

import numpy as np

from minitx import kernels
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module
from minitx.ops._args import check_bool
from minitx.ops.dropout import _dropout_keep_mask, _philox_seed_offset
from minitx.ops.reduction import logsumexp_parts

__all__ = ["ScaledDotProductAttention"]


def _batched_matmul(a, b):
    """a @ b over the leading (batch) axes, with both operands C-contiguous: CuPy then runs one
    strided-batched cuBLAS product, and NumPy its BLAS path instead of a loop over strided
    batches. (q, k, v arrive as permuted views from the head split.)"""
    xp = get_array_module(a)
    return xp.matmul(xp.ascontiguousarray(a), xp.ascontiguousarray(b))


def _mask_rows(mask, plan, lk):
    """The key-padding mask as the kernels take it, [B', Lk] (None without a mask)."""
    return None if plan.mask_rows is None else mask.reshape(plan.mask_rows, lk)


class ScaledDotProductAttention(Function):
    """Attention of queries q [..., Lq, d] over keys k [..., Lk, d] and values v [..., Lk, dv]:

        S = scale * q @ k^T              (scale defaults to 1 / sqrt(d))
        S = -inf where not allowed       (mask False, or a future key when causal)
        P = softmax(S) over keys;   Pd = P * m  (dropout on the weights, m as in Dropout)
        o = Pd @ v

    backward, going up the same lines:
        dv = Pd^T @ do        dPd = do @ v^T        dP = dPd * m
        dS = P * (dP - sum_keys(dP * P))              (the softmax backward)
        dq = scale * dS @ k   dk = scale * dS^T @ q

    The mask is boolean, True = "may attend", broadcast to [..., Lq, Lk]. The causal flag
    lets query i see keys j <= i + (Lk - Lq): the queries are the last Lq positions, which
    is also what incremental decoding with a key/value cache needs. A query that may see no
    key at all gets P = 0 and o = 0 (not NaN). With ``need_weights``, ``weights`` after
    forward holds P.

    Both paths save (q, k, v, mask, o, lse), lse = log sum_keys exp(S) per query (-inf when it
    sees no key), plus the dropout mask m; backward recomputes P = exp(S - lse) instead of
    keeping the [Lq, Lk] matrix. The fused kernel (flash-attention style: P never leaves the
    chip) runs where ``kernels.attention_plan`` allows it: a key-padding mask, d = dv <= 128,
    no weights requested, a causal mask that fits the kernel's. It draws the dropout mask m
    element by element from a Philox (seed, offset) pair and regenerates it in backward instead
    of saving it. Without ``seed`` the pair is the next from minitx.random, the pair the unfused
    path's mask would take on the GPU: both paths drop the same weights. With ``seed`` the
    kernels use (seed, 0) and the unfused path NumPy's/CuPy's generator seeded with it, so their
    masks differ (each is fixed by the seed).

    Derivation: docs/backprop/attention.md
    Kernels: minitx/kernels/attention.cu, minitx/kernels/dropout.cu
    """

    def __init__(self, causal=False, dropout_p=0.0, scale=None, seed=None, need_weights=False):
        if not 0 <= dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        self.causal, self.dropout_p, self.scale, self.seed = causal, dropout_p, scale, seed
        self.need_weights = need_weights
        self.weights = None
        self.philox = None  # (seed, offset) of the dropout mask a fused forward drew

    def _kernel_plan(self, q, k, v, mask, *others, stats=(), weights=False):
        """The kernels' plan for this attention (kernels.attention_plan), or None when they
        cannot compute it or the arrays do not suit them."""
        if not kernels.enabled(q, k, v, *others, stats=stats):
            return None
        plan = kernels.attention_plan(q.shape, k.shape, v.shape, None if mask is None else mask.shape,
                                      causal=self.causal, weights=weights)
        return None if isinstance(plan, str) else plan

    def _kernel_dropout(self):
        """The kernels' dropout arguments (dropout_p, seed, offset), or none without dropout."""
        return () if self.philox is None else (self.dropout_p, *self.philox)

    def _scores(self, q, k, mask):
        """S = scale * q @ k^T, -inf where a key is not allowed."""
        xp = get_array_module(q)
        lq, lk = q.shape[-2], k.shape[-2]
        scores = _batched_matmul(q, xp.swapaxes(k, -1, -2)) * self.scale_used
        allowed = mask
        if self.causal:
            causal = xp.tril(xp.ones((lq, lk), dtype=bool), k=lk - lq)
            allowed = causal if allowed is None else allowed & causal
        return scores if allowed is None else xp.where(allowed, scores, -xp.inf)

    def forward(self, q, k, v, mask=None):
        xp = get_array_module(q)
        d, lq, lk = q.shape[-1], q.shape[-2], k.shape[-2]
        if k.shape[-1] != d or v.shape[-2] != lk:
            raise ValueError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape} do not fit: "
                             "expected q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv]")
        if mask is not None and mask.dtype != np.bool_:
            raise TypeError(f"scaled_dot_product_attention: mask must be boolean (True = may attend), "
                            f"got dtype {mask.dtype.name}")
        self.scale_used = self.scale if self.scale is not None else 1 / math.sqrt(d)
        plan = self._kernel_plan(q, k, v, mask, weights=self.need_weights)
        dropout_mask = None
        if plan is not None:
            self.philox = _philox_seed_offset(self.seed, q) if self.dropout_p else None
            o, lse = kernels.attention_forward(q.reshape(-1, lq, d), k.reshape(-1, lk, d), v.reshape(-1, lk, d),
                                               _mask_rows(mask, plan, lk), plan.causal, self.scale_used,
                                               *self._kernel_dropout())
            o, lse = o.reshape(q.shape), lse.reshape(q.shape[:-1])
        else:
            scores = self._scores(q, k, mask)
            e, total, m, log_total = logsumexp_parts(scores, -1)
            p = e / xp.where(total == 0, 1, total)  # a query that sees no key: total = 0 (NaN: stays NaN)
            lse = (m + log_total)[..., 0]
            if self.need_weights:
                self.weights = p
            if self.dropout_p:
                dropout_mask = _dropout_keep_mask(p.shape, self.dropout_p, p.dtype, xp, device_of(p), self.seed)
                p = p * dropout_mask
            o = _batched_matmul(p, v)
        self.save_for_backward(q, k, v, mask, o, lse, dropout_mask)
        return o

    def backward(self, do):
        q, k, v, mask, o, lse, dropout_mask = self.saved
        # the path forward took: the unfused one saved its dropout mask
        plan = None if dropout_mask is not None else self._kernel_plan(q, k, v, mask, o, do, stats=(lse,))
        if plan is None and self.philox is not None:  # fused forward, unfused backward: redraw its mask
            dropout_mask = kernels.dropout_apply(get_array_module(q).ones(lse.shape + (k.shape[-2],), q.dtype),
                                                 self.dropout_p, *self.philox)
        if plan is not None:
            lq, lk, d = q.shape[-2], k.shape[-2], q.shape[-1]
            dq, dk, dv = kernels.attention_backward(
                q.reshape(-1, lq, d), k.reshape(-1, lk, d), v.reshape(-1, lk, d), o.reshape(-1, lq, d),
                lse.reshape(-1, lq), do.reshape(-1, lq, d), _mask_rows(mask, plan, lk), plan.causal,
                self.scale_used, *self._kernel_dropout())
            grads = (dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape))
        else:
            xp = get_array_module(do)
            # P = exp(S - lse); a query that sees no key has lse = -inf and P = exp(-inf) = 0 (a NaN stays NaN)
            p = xp.exp(self._scores(q, k, mask) - xp.where(lse == -xp.inf, 0, lse)[..., None])
            dropped = p if dropout_mask is None else p * dropout_mask
            dv = _batched_matmul(xp.swapaxes(dropped, -1, -2), do)
            dp = _batched_matmul(do, xp.swapaxes(v, -1, -2))
            if dropout_mask is not None:
                dp = dp * dropout_mask
            ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * self.scale_used
            grads = (_batched_matmul(ds, k), _batched_matmul(xp.swapaxes(ds, -1, -2), q), dv)
        return grads + (None,) * (len(self.needs_input_grad) - 3)  # none for the mask

    def release(self):
        super().release()
        self.weights = None


def scaled_dot_product_attention(q, k, v, mask=None, causal=False, dropout_p=0.0, scale=None,
                                 return_weights=False, seed=None):
    """softmax(scale * q @ k^T, masked) @ v; see ScaledDotProductAttention.

    mask: boolean, True = may attend, broadcastable to [..., Lq, Lk]. With
    return_weights=True returns (output, weights), the weights P as a constant tensor
    (before dropout) for plotting.
    """
    op = ScaledDotProductAttention(causal, dropout_p, scale, seed, need_weights=return_weights)
    if mask is None:
        out = op(q, k, v)
    else:
        mask = as_tensor(mask, q)
        check_bool("scaled_dot_product_attention", "mask", mask)
        try:
            np.broadcast_shapes(mask.shape, q.shape[:-1] + (k.shape[-2],))
        except ValueError:
            raise ValueError(f"scaled_dot_product_attention: mask of shape {mask.shape} does not broadcast "
                             f"to [..., Lq, Lk] = {q.shape[:-1] + (k.shape[-2],)}") from None
        out = op(q, k, v, mask)
    if return_weights:
        return out, Tensor(op.weights)
    return out
