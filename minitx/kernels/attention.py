"""Launchers of attention.cu: fused scaled-dot-product attention, forward and backward."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._launch import check_int32, contiguous, float_dtype
from ._runtime import backend_for

#: Largest head dimension d: thread c of a block owns output column c (ATT_DMAX in the .cu).
MAX_HEAD_DIM = 128
#: Threads per block of every attention kernel (>= MAX_HEAD_DIM).
THREADS = 128


class Tiles(NamedTuple):
    """Rows per shared-memory tile: forward query/key tiles, backward query/key tiles
    (AttnTiles in the .cu)."""
    bq: int
    bk: int
    bqb: int
    bkb: int


TILES = {np.dtype(np.float32): Tiles(bq=16, bk=32, bqb=16, bkb=16),
         np.dtype(np.float64): Tiles(bq=8, bk=16, bqb=8, bkb=8)}


def attention_mask_supported(mask_shape, batch_heads, lk) -> bool:
    """True if ``attention_forward/backward`` accept a key-padding mask of this shape:
    ``[B, Lk]`` or ``[B, 1, ..., 1, Lk]`` with ``batch_heads % B == 0`` (row b of the mask
    serves the ``batch_heads / B`` consecutive head-rows of batch b)."""
    shape = tuple(int(s) for s in mask_shape)
    if len(shape) < 2 or shape[-1] != lk or any(s != 1 for s in shape[1:-1]):
        return False
    return shape[0] > 0 and batch_heads % shape[0] == 0


def _attention_prepare(be, q, k, v, key_pad_mask, scale):
    """Contiguous q, k, v, the uint8 mask [B, Lk] or None, and the kernels' sizes; a
    ValueError naming what does not fit."""
    xp = be.xp
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ValueError("attention expects q, k, v of shape [BH, L, d]")
    q, k, v = contiguous(xp, q, k, v)
    dt = float_dtype(q, k, v)
    BH, Lq, d = (int(s) for s in q.shape)
    Lk = int(k.shape[1])
    if k.shape != (BH, Lk, d) or v.shape != (BH, Lk, d):
        raise ValueError(f"k and v must be [{BH}, Lk, {d}], got {k.shape} and {v.shape}")
    if not 1 <= d <= MAX_HEAD_DIM:
        raise ValueError(f"head dim {d} not in [1, {MAX_HEAD_DIM}]")
    check_int32(elements=max(BH * Lq * d, BH * Lk * d))
    B, m = 1, None
    if key_pad_mask is not None:
        km = xp.asarray(key_pad_mask)
        if not attention_mask_supported(km.shape, BH, Lk):
            raise ValueError(
                f"unsupported attention mask shape {tuple(km.shape)}: only key-padding masks "
                f"[B, Lk] / [B, 1, .., 1, Lk] with BH % B == 0 are fused")
        B = int(km.shape[0])
        if km.dtype != np.bool_ and km.dtype != np.uint8:
            km = km != 0
        m = xp.ascontiguousarray(km.reshape(B, Lk)).view(np.uint8)
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    heads = BH // B
    return q, k, v, m, dt, BH, Lq, Lk, d, heads, dt.type(scale)


def attention_forward(q, k, v, key_pad_mask=None, causal=False, scale=None):
    """Fused ``o = softmax(scale * q k^T + mask) v`` with online softmax.

    q: [BH, Lq, d]; k, v: [BH, Lk, d]; d <= MAX_HEAD_DIM, any Lq, Lk.  key_pad_mask: None or
    a key-padding mask (see :func:`attention_mask_supported`; True = attend).  causal: key j
    is visible to query i iff j <= i (top-left aligned).  scale defaults to 1/sqrt(d).
    Returns (o, lse): o like q, lse [BH, Lq] = logsumexp of the scaled, masked scores.  A
    fully masked query row gives o = 0, lse = -inf.
    """
    be = backend_for(q, k, v, key_pad_mask)
    q, k, v, m, dt, BH, Lq, Lk, d, heads, scale = _attention_prepare(be, q, k, v, key_pad_mask, scale)
    o = be.empty((BH, Lq, d), dt)
    lse = be.empty((BH, Lq), dt)
    if BH and Lq:
        if Lk == 0:
            o[...] = 0
            lse[...] = -np.inf
        else:
            grid = BH * (-(-Lq // TILES[dt].bq))
            be.launch("attention.cu", "attention_forward", dt, (grid,), (THREADS,),
                      (q, k, v, m, o, lse, np.int32(BH), np.int32(heads), np.int32(Lq),
                       np.int32(Lk), np.int32(d), np.int32(bool(causal)), scale))
    return o, lse


def attention_backward(q, k, v, o, lse, do, key_pad_mask=None, causal=False, scale=None):
    """Backward of :func:`attention_forward` (P recomputed from q, k, lse).

    Same shapes/mask/causal/scale as the forward; o and lse are the forward's
    outputs and do the gradient of o.  Returns (dq, dk, dv) shaped like q, k, v.
    Fully masked query rows (lse == -inf) contribute nothing (no NaN).
    """
    be = backend_for(q, k, v, o, lse, do, key_pad_mask)
    xp = be.xp
    q, k, v, m, dt, BH, Lq, Lk, d, heads, scale = _attention_prepare(be, q, k, v, key_pad_mask, scale)
    o, do, lse = contiguous(xp, o.reshape(BH, Lq, d), do.reshape(BH, Lq, d), lse.reshape(BH, Lq))
    float_dtype(q, o, do, lse)
    dq = be.empty((BH, Lq, d), dt)
    dk = be.empty((BH, Lk, d), dt)
    dv = be.empty((BH, Lk, d), dt)
    if BH and (Lq == 0 or Lk == 0):
        dq[...] = 0
        dk[...] = 0
        dv[...] = 0
    elif BH:
        tiles = TILES[dt]
        delta = be.empty((BH, Lq), dt)
        rows = BH * Lq
        warps = THREADS // 32
        be.launch("attention.cu", "attention_backward_delta", dt, (-(-rows // warps),),
                  (THREADS,), (o, do, delta, np.int32(rows), np.int32(d)))
        common = (np.int32(BH), np.int32(heads), np.int32(Lq), np.int32(Lk), np.int32(d),
                  np.int32(bool(causal)), scale)
        be.launch("attention.cu", "attention_backward_dkdv", dt, (BH * (-(-Lk // tiles.bkb)),),
                  (THREADS,), (q, k, v, m, do, lse, delta, dk, dv) + common)
        be.launch("attention.cu", "attention_backward_dq", dt, (BH * (-(-Lq // tiles.bqb)),),
                  (THREADS,), (q, k, v, m, do, lse, delta, dq) + common)
    return dq, dk, dv
