"""Thin Python launchers for the fused CUDA kernels.

Common contract for every launcher:

* Array arguments are CuPy arrays (real GPU launch) or NumPy arrays (the CPU
  emulation of the same .cu source -- used by the tests, slow).  All float
  arrays of one call must share one dtype, float32 or float64; computation and
  accumulation happen in that dtype.
* Inputs are made C-contiguous with ``ascontiguousarray`` (a copy only when
  needed); outputs are freshly allocated, C-contiguous, and written completely
  with ``=`` by the kernels (exceptions are stated per launcher: the Adam
  step updates in place, ``embedding_backward`` accumulates with ``+=``).
* Scalars reach the kernels as explicit ``numpy.int32/int64/uint32/uint64/
  float32/float64`` values matching the kernel signature.
* Nothing here synchronises the device or copies data to the host (except
  ``adam_step``/``grad_norm``, which upload a small work table).
"""
from __future__ import annotations

import math

import numpy as np

from ._runtime import backend_for

__all__ = [
    "softmax_forward",
    "softmax_backward",
    "layer_norm_forward",
    "layer_norm_backward",
    "cross_entropy_forward",
    "cross_entropy_backward",
    "attention_mask_supported",
    "attention_forward",
    "attention_backward",
    "dropout_threshold",
    "dropout_add_forward",
    "dropout_add_backward",
    "dropout_apply",
    "bias_act_dropout_forward",
    "bias_act_dropout_backward",
    "adam_step",
    "grad_norm",
    "embedding_backward",
]

_INT32_MAX = 2**31 - 1
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(*arrays):
    dt = np.dtype(arrays[0].dtype)
    if dt not in _FLOATS:
        raise TypeError(f"fused kernels need float32/float64 arrays, got {dt}")
    for a in arrays[1:]:
        if a is not None and np.dtype(a.dtype) != dt:
            raise TypeError(f"dtype mismatch: {np.dtype(a.dtype)} vs {dt}")
    return dt


def _scalar(dt, value):
    return dt.type(value)


def _check_int32(**sizes):
    for name, v in sizes.items():
        if v > _INT32_MAX:
            raise ValueError(f"{name}={v} exceeds the int32 range of the kernels")


def _same_shape_inputs(xp, *arrays):
    """C-contiguous versions of ``arrays``, which must share one shape and one
    float dtype.  Returns ``(*arrays, dtype)``."""
    arrays = tuple(xp.ascontiguousarray(a) for a in arrays)
    dt = _float_dtype(*arrays)
    for a in arrays[1:]:
        if a.shape != arrays[0].shape:
            raise ValueError(f"shape mismatch {arrays[0].shape} vs {a.shape}")
    return (*arrays, dt)


def _row_block(cols: int, max_threads: int = 256) -> int:
    """Threads per row-block: a multiple of 32 covering cols, capped."""
    return int(min(max_threads, max(32, -(-cols // 32) * 32)))


def _rows_cols(x):
    if x.ndim == 0:
        raise ValueError("expected at least 1-D input")
    cols = int(x.shape[-1])
    rows = int(x.size // cols) if cols else 0
    return rows, cols


# ===================================================================== softmax
def softmax_forward(x):
    """``y = softmax(x)`` over the last axis of x (float [..., cols], any row length).

    A row that is all -inf gives all zeros.  Returns y with x's shape and dtype.
    """
    be = backend_for(x)
    x = be.xp.ascontiguousarray(x)
    dt = _float_dtype(x)
    rows, cols = _rows_cols(x)
    y = be.empty(x.shape, dt)
    if x.size == 0:
        return y
    _check_int32(rows=rows, cols=cols)
    be.launch("softmax.cu", "softmax_forward", dt, (rows,), (_row_block(cols),),
              (x, y, np.int32(rows), np.int32(cols)))
    return y


def softmax_backward(y, dy):
    """Gradient of :func:`softmax_forward`: ``dx = y * (dy - sum(dy * y))``.

    y: the forward output; dy: upstream gradient, same shape.  Returns dx.
    """
    be = backend_for(y, dy)
    y, dy, dt = _same_shape_inputs(be.xp, y, dy)
    rows, cols = _rows_cols(y)
    dx = be.empty(y.shape, dt)
    if y.size == 0:
        return dx
    _check_int32(rows=rows, cols=cols)
    be.launch("softmax.cu", "softmax_backward", dt, (rows,), (_row_block(cols),),
              (y, dy, dx, np.int32(rows), np.int32(cols)))
    return dx


# ================================================================== layer norm
def layer_norm_forward(x, weight=None, bias=None, eps=1e-5):
    """Layer norm over the last axis.

    x: [..., cols]; weight, bias: [cols] or None.  Returns (y, mean, rstd) with
    y shaped like x and mean, rstd shaped x.shape[:-1] (save them for the
    backward).  Variance is the biased (1/cols) two-pass variance.
    """
    be = backend_for(x, weight, bias)
    xp = be.xp
    x = xp.ascontiguousarray(x)
    w = None if weight is None else xp.ascontiguousarray(weight)
    b = None if bias is None else xp.ascontiguousarray(bias)
    dt = _float_dtype(x, w, b)
    rows, cols = _rows_cols(x)
    if cols == 0:
        raise ValueError("layer_norm over an empty last axis")
    for name, p in (("weight", w), ("bias", b)):
        if p is not None and p.size != cols:
            raise ValueError(f"{name} must have {cols} elements, got shape {p.shape}")
    y = be.empty(x.shape, dt)
    mean = be.empty(x.shape[:-1], dt)
    rstd = be.empty(x.shape[:-1], dt)
    if rows == 0:
        return y, mean, rstd
    _check_int32(rows=rows, cols=cols)
    be.launch("layer_norm.cu", "layer_norm_forward", dt, (rows,), (_row_block(cols),),
              (x, w, b, y, mean, rstd, np.int32(rows), np.int32(cols), _scalar(dt, eps)))
    return y, mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, param_grads=True):
    """Backward of :func:`layer_norm_forward`.

    dy, x: [..., cols]; weight: [cols] or None (treated as ones); mean, rstd:
    the saved forward statistics (x.shape[:-1]).  Returns (dx, dweight, dbias);
    dweight = sum over rows of dy * xhat and dbias = sum over rows of dy (both
    [cols], computed deterministically with per-block partials + a second
    reduction kernel, no atomics).  With param_grads=False they are None.
    """
    be = backend_for(dy, x, weight, mean, rstd)
    xp = be.xp
    dy = xp.ascontiguousarray(dy)
    x = xp.ascontiguousarray(x)
    w = None if weight is None else xp.ascontiguousarray(weight)
    mean = xp.ascontiguousarray(mean)
    rstd = xp.ascontiguousarray(rstd)
    dt = _float_dtype(x, dy, w, mean, rstd)
    rows, cols = _rows_cols(x)
    if dy.shape != x.shape or mean.size != rows or rstd.size != rows:
        raise ValueError("layer_norm_backward: inconsistent shapes")
    dx = be.empty(x.shape, dt)
    dw = db = None
    if param_grads:
        if rows == 0:
            return dx, be.zeros((cols,), dt), be.zeros((cols,), dt)
        dw = be.empty((cols,), dt)
        db = be.empty((cols,), dt)
    if rows == 0:
        return dx, dw, db
    _check_int32(rows=rows, cols=cols)
    be.launch("layer_norm.cu", "layer_norm_backward_dx", dt, (rows,), (_row_block(cols),),
              (dy, x, w, mean, rstd, dx, np.int32(rows), np.int32(cols)))
    if param_grads:
        threads = 128
        col_blocks = -(-cols // threads)
        parts = int(max(1, min(rows, 256, -(-512 // col_blocks))))
        part_w = be.empty((parts, cols), dt)
        part_b = be.empty((parts, cols), dt)
        be.launch("layer_norm.cu", "layer_norm_backward_dwdb_partial", dt, (col_blocks, parts),
                  (threads,), (dy, x, mean, rstd, part_w, part_b, np.int32(rows), np.int32(cols)))
        be.launch("layer_norm.cu", "layer_norm_backward_dwdb_reduce", dt, (col_blocks,),
                  (threads,), (part_w, part_b, dw, db, np.int32(parts), np.int32(cols)))
    return dx, dw, db


# =============================================================== cross entropy
def cross_entropy_forward(logits, targets, ignore_index=-100, label_smoothing=0.0):
    """Per-row fused log-softmax + NLL (with label smoothing).

    logits: [N, C] (or [..., C]; rows = all leading dims); targets: integer
    array with logits.shape[:-1] (cast to int64).  Returns (loss_rows, lse),
    both shaped logits.shape[:-1].  Rows whose target is ignore_index get loss
    0; a target outside [0, C) that is not ignore_index gives NaN.  Reduction
    (mean over non-ignored rows, etc.) is left to the caller.
    """
    be = backend_for(logits, targets)
    xp = be.xp
    x = xp.ascontiguousarray(logits)
    dt = _float_dtype(x)
    rows, cols = _rows_cols(x)
    t = xp.ascontiguousarray(xp.asarray(targets).astype(np.int64, copy=False))
    if t.size != rows:
        raise ValueError(f"targets has {t.size} elements, expected {rows}")
    loss = be.empty(x.shape[:-1], dt)
    lse = be.empty(x.shape[:-1], dt)
    if rows == 0:
        return loss, lse
    if cols == 0:
        raise ValueError("cross entropy over zero classes")
    _check_int32(rows=rows, cols=cols)
    be.launch("cross_entropy.cu", "cross_entropy_forward", dt, (rows,), (_row_block(cols),),
              (x, t, loss, lse, np.int32(rows), np.int32(cols), np.int64(ignore_index),
               _scalar(dt, label_smoothing)))
    return loss, lse


def cross_entropy_backward(logits, targets, lse, dloss_rows, ignore_index=-100,
                           label_smoothing=0.0):
    """Gradient of the per-row losses w.r.t. the logits.

    dloss_rows: upstream gradient of each row's loss, shape logits.shape[:-1]
    or anything broadcastable to it (e.g. a scalar 1/num_valid for a mean).
    Returns dlogits = (softmax(x) - ((1-eps) onehot(t) + eps/C)) * dloss_row,
    zero on ignored rows.
    """
    be = backend_for(logits, targets, lse, dloss_rows)
    xp = be.xp
    x = xp.ascontiguousarray(logits)
    dt = _float_dtype(x)
    rows, cols = _rows_cols(x)
    t = xp.ascontiguousarray(xp.asarray(targets).astype(np.int64, copy=False))
    lse = xp.ascontiguousarray(xp.asarray(lse, dtype=dt))
    g = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(dloss_rows, dtype=dt), x.shape[:-1]))
    if t.size != rows or lse.size != rows:
        raise ValueError("cross_entropy_backward: inconsistent shapes")
    dx = be.empty(x.shape, dt)
    if x.size == 0:
        return dx
    _check_int32(rows=rows, cols=cols)
    be.launch("cross_entropy.cu", "cross_entropy_backward", dt, (rows,), (_row_block(cols),),
              (x, t, lse, g, dx, np.int32(rows), np.int32(cols), np.int64(ignore_index),
               _scalar(dt, label_smoothing)))
    return dx


# =================================================================== attention
ATTENTION_MAX_HEAD_DIM = 128
_ATT_THREADS = 128
_ATT_TILES = {np.dtype(np.float32): (16, 16, 16), np.dtype(np.float64): (8, 8, 8)}  # BQ, BQB, BKB


def attention_mask_supported(mask_shape, batch_heads, lk) -> bool:
    """True if ``attention_forward/backward`` accept a mask of this shape.

    Accepted: a key-padding mask whose shape is ``[B, Lk]`` or ``[B, 1, ..., 1,
    Lk]`` (e.g. ``[B, 1, 1, Lk]``) with ``batch_heads % B == 0``.  Anything else
    (per-query masks, [Lq, Lk] masks, ...) is not supported: use the reference
    path for those.
    """
    shape = tuple(int(s) for s in mask_shape)
    if len(shape) < 2 or shape[-1] != lk or any(s != 1 for s in shape[1:-1]):
        return False
    b = shape[0]
    return b > 0 and batch_heads % b == 0


def _attention_prepare(be, q, k, v, key_pad_mask, scale):
    xp = be.xp
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ValueError("attention expects q, k, v of shape [BH, L, d]")
    q = xp.ascontiguousarray(q)
    k = xp.ascontiguousarray(k)
    v = xp.ascontiguousarray(v)
    dt = _float_dtype(q, k, v)
    BH, Lq, d = (int(s) for s in q.shape)
    Lk = int(k.shape[1])
    if k.shape != (BH, Lk, d) or v.shape != (BH, Lk, d):
        raise ValueError(f"k and v must be [{BH}, Lk, {d}], got {k.shape} and {v.shape}")
    if d > ATTENTION_MAX_HEAD_DIM or d < 1:
        raise ValueError(f"head dim {d} not in [1, {ATTENTION_MAX_HEAD_DIM}]")
    _check_int32(elements=max(BH * Lq * d, BH * Lk * d))
    heads = 1
    m = None
    if key_pad_mask is not None:
        km = xp.asarray(key_pad_mask)
        if not attention_mask_supported(km.shape, BH, Lk):
            raise ValueError(
                f"unsupported attention mask shape {tuple(km.shape)}: only key-padding masks "
                f"[B, Lk] / [B, 1, .., 1, Lk] with BH % B == 0 are fused")
        B = int(km.shape[0])
        heads = BH // B
        if km.dtype != np.bool_ and km.dtype != np.uint8:
            km = km != 0
        m = xp.ascontiguousarray(km.reshape(B, Lk)).view(np.uint8)
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    return q, k, v, m, dt, BH, Lq, Lk, d, heads, scale


def attention_forward(q, k, v, key_pad_mask=None, causal=False, scale=None):
    """Fused ``o = softmax(scale * q k^T + mask) v`` with online softmax.

    q: [BH, Lq, d]; k, v: [BH, Lk, d]; d <= 128, any Lq, Lk.  key_pad_mask:
    None or a key-padding mask (see :func:`attention_mask_supported`; True =
    attend).  causal: key j is visible to query i iff j <= i (top-left
    aligned).  scale defaults to 1/sqrt(d).  Returns (o, lse): o like q, lse
    [BH, Lq] = logsumexp of the scaled, masked scores.  A fully masked query
    row gives o = 0, lse = -inf.
    """
    be = backend_for(q, k, v, key_pad_mask)
    q, k, v, m, dt, BH, Lq, Lk, d, heads, scale = _attention_prepare(
        be, q, k, v, key_pad_mask, scale)
    o = be.empty((BH, Lq, d), dt)
    lse = be.empty((BH, Lq), dt)
    if BH and Lq:
        if Lk == 0:
            o[...] = 0
            lse[...] = -np.inf
        else:
            bq = _ATT_TILES[dt][0]
            grid = BH * (-(-Lq // bq))
            be.launch("attention.cu", "attention_forward", dt, (grid,), (_ATT_THREADS,),
                      (q, k, v, m, o, lse, np.int32(BH), np.int32(heads), np.int32(Lq),
                       np.int32(Lk), np.int32(d), np.int32(bool(causal)), _scalar(dt, scale)))
    return o, lse


def attention_backward(q, k, v, o, lse, do, key_pad_mask=None, causal=False, scale=None):
    """Backward of :func:`attention_forward` (P recomputed from q, k, lse).

    Same shapes/mask/causal/scale as the forward; o and lse are the forward's
    outputs and do the gradient of o.  Returns (dq, dk, dv) shaped like q, k, v.
    Fully masked query rows (lse == -inf) contribute nothing (no NaN).
    """
    be = backend_for(q, k, v, o, lse, do, key_pad_mask)
    xp = be.xp
    q, k, v, m, dt, BH, Lq, Lk, d, heads, scale = _attention_prepare(
        be, q, k, v, key_pad_mask, scale)
    o = xp.ascontiguousarray(o.reshape(BH, Lq, d))
    do = xp.ascontiguousarray(do.reshape(BH, Lq, d))
    lse = xp.ascontiguousarray(lse.reshape(BH, Lq))
    _float_dtype(q, o, do, lse)
    dq = be.empty((BH, Lq, d), dt)
    dk = be.empty((BH, Lk, d), dt)
    dv = be.empty((BH, Lk, d), dt)
    if BH and (Lq == 0 or Lk == 0):
        dq[...] = 0
        dk[...] = 0
        dv[...] = 0
    elif BH:
        _, bqb, bkb = _ATT_TILES[dt]
        delta = be.empty((BH, Lq), dt)
        rows = BH * Lq
        warps = _ATT_THREADS // 32
        be.launch("attention.cu", "attention_backward_delta", dt, (-(-rows // warps),),
                  (_ATT_THREADS,), (o, do, delta, np.int32(rows), np.int32(d)))
        common = (np.int32(BH), np.int32(heads), np.int32(Lq), np.int32(Lk), np.int32(d),
                  np.int32(bool(causal)), _scalar(dt, scale))
        be.launch("attention.cu", "attention_backward_dkdv", dt, (BH * (-(-Lk // bkb)),),
                  (_ATT_THREADS,), (q, k, v, m, do, lse, delta, dk, dv) + common)
        be.launch("attention.cu", "attention_backward_dq", dt, (BH * (-(-Lq // bqb)),),
                  (_ATT_THREADS,), (q, k, v, m, do, lse, delta, dq) + common)
    return dq, dk, dv


# ===================================================================== dropout
_ACTS = {None: 0, "identity": 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 2}


def dropout_threshold(p: float) -> tuple[np.uint32, float]:
    """(threshold, keep_scale) for drop probability p in [0, 1].

    An element is kept iff its 24-bit random draw (Philox word >> 8) is
    >= threshold = ceil(p * 2^24); kept values are scaled by 1 / (1 - p).
    """
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    thr = min(2**24, int(math.ceil(p * 2**24)))
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return np.uint32(thr), scale


def _dropout_grid(n: int, threads: int = 256):
    groups = -(-n // 4)
    return (int(max(1, min(-(-groups // threads), 65535))),), (threads,)


def _seed_offset(seed, offset):
    return np.uint64(int(seed) & (2**64 - 1)), np.uint64(int(offset) & (2**64 - 1))


def _dropout_launch(be, kernel, dt, arrays, n, extra, p, seed, offset):
    """Launch ``kernel`` of dropout.cu over n elements with the mask of (p, seed, offset).

    Every dropout kernel takes ``(*arrays, n, *extra, seed, offset, threshold,
    keep_scale)``.  p is validated even when n == 0 (then nothing is launched).
    """
    thr, keep_scale = dropout_threshold(p)
    if n:
        s, o = _seed_offset(seed, offset)
        grid, block = _dropout_grid(n)
        be.launch("dropout.cu", kernel, dt, grid, block,
                  (*arrays, np.int64(n), *extra, s, o, thr, _scalar(dt, keep_scale)))


def dropout_add_forward(x, residual, p, seed, offset=0):
    """``y = residual + dropout(x, p)`` with the mask drawn from (seed, offset).

    x, residual: same shape, float.  seed, offset: Python ints (64-bit); use a
    new offset (e.g. +1) per call for a fresh mask, and pass the same pair to
    the backward.  Returns y.
    """
    be = backend_for(x, residual)
    x, residual, dt = _same_shape_inputs(be.xp, x, residual)
    y = be.empty(x.shape, dt)
    _dropout_launch(be, "dropout_add_forward", dt, (x, residual, y), x.size, (), p, seed, offset)
    return y


def dropout_apply(x, p, seed, offset=0):
    """``dropout(x, p)`` with the mask drawn from (seed, offset): x * m, m_i = 1/(1-p) or 0.

    The mask is the one :func:`dropout_add_forward` draws for the same pair and size.
    """
    be = backend_for(x)
    x_c = be.xp.ascontiguousarray(x)
    dt = _float_dtype(x_c)
    y = be.empty(x_c.shape, dt)
    _dropout_launch(be, "dropout_mask_apply", dt, (x_c, y), x_c.size, (), p, seed, offset)
    return y


def dropout_add_backward(dy, p, seed, offset=0):
    """Backward of :func:`dropout_add_forward`: returns (dx, dresidual).

    dx = dropout(dy) with the forward's mask (regenerated, not stored);
    dresidual is ``dy`` itself (same object, no copy).
    """
    return dropout_apply(dy, p, seed, offset), dy


def _bias_act_prepare(be, x, bias, act):
    xp = be.xp
    x = xp.ascontiguousarray(x)
    b = None if bias is None else xp.ascontiguousarray(bias)
    dt = _float_dtype(x, b)
    if act not in _ACTS:
        raise ValueError(f"unknown activation {act!r}; expected one of {sorted(map(str, _ACTS))}")
    cols = int(x.shape[-1]) if x.ndim else 1
    if b is not None and b.size != cols:
        raise ValueError(f"bias must have {cols} elements (last axis of x), got {b.shape}")
    if x.size:
        _check_int32(cols=cols)
    return x, b, dt, cols


def bias_act_dropout_forward(x, bias, act, p, seed, offset=0):
    """``y = dropout(act(x + bias), p)``.

    x: [..., cols]; bias: [cols] or None; act: None/'identity', 'relu' or
    'gelu' (= 'gelu_tanh', the tanh approximation).  Returns y.  The backward
    needs x and bias again (nothing else is saved).
    """
    be = backend_for(x, bias)
    x, b, dt, cols = _bias_act_prepare(be, x, bias, act)
    y = be.empty(x.shape, dt)
    _dropout_launch(be, "bias_act_dropout_forward", dt, (x, b, y), x.size,
                    (np.int32(cols), np.int32(_ACTS[act])), p, seed, offset)
    return y


def bias_act_dropout_backward(dy, x, bias, act, p, seed, offset=0):
    """Backward of :func:`bias_act_dropout_forward`: returns (dx, dbias).

    dx = dropout(dy) * act'(x + bias) (same regenerated mask); dbias is the
    sum of dx over all leading axes ([cols]) or None when bias is None.
    """
    be = backend_for(dy, x, bias)
    x, b, dt, cols = _bias_act_prepare(be, x, bias, act)
    dy, x, _ = _same_shape_inputs(be.xp, dy, x)
    dx = be.empty(x.shape, dt)
    _dropout_launch(be, "bias_act_dropout_backward", dt, (dy, x, b, dx), x.size,
                    (np.int32(cols), np.int32(_ACTS[act])), p, seed, offset)
    db = None
    if b is not None:
        db = dx.reshape(-1, cols).sum(axis=0) if x.size else be.zeros((cols,), dt)
    return dx, db


# ======================================================================== adam
_ADAM_CHUNK = 4096
_ADAM_THREADS = 256


def _work_table(be, sizes, chunk):
    tensor_idx, starts = [], []
    for t, n in enumerate(sizes):
        for s in range(0, n, chunk):
            tensor_idx.append(t)
            starts.append(s)
    return (be.to_device(np.asarray(tensor_idx, dtype=np.int32)),
            be.to_device(np.asarray(starts, dtype=np.int64)), len(starts))


def adam_step(params, grads, exp_avgs, exp_avg_sqs, lr, beta1=0.9, beta2=0.999, eps=1e-8,
              weight_decay=0.0, decoupled=False, step=1):
    """One Adam (decoupled=False, L2 weight decay) or AdamW (decoupled=True) step
    over many tensors in a single launch per dtype.

    params, grads, exp_avgs, exp_avg_sqs: equal-length lists of C-contiguous
    float arrays, matching shapes per index; params, exp_avgs and exp_avg_sqs
    are updated IN PLACE (so they must already be contiguous -- a ValueError is
    raised otherwise).  step: the 1-based step count after incrementing (used
    for bias correction).  Returns None.
    """
    n = len(params)
    if not (len(grads) == len(exp_avgs) == len(exp_avg_sqs) == n):
        raise ValueError("adam_step: list lengths differ")
    if n == 0:
        return None
    if step < 1:
        raise ValueError("step must be >= 1")
    be = backend_for(*params, *grads, *exp_avgs, *exp_avg_sqs)
    groups: dict = {}
    for i in range(n):
        p, g, m, v = params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]
        for a in (p, m, v):
            if not a.flags.c_contiguous:
                raise ValueError("adam_step updates in place: params/states must be contiguous")
        if not (p.shape == g.shape == m.shape == v.shape):
            raise ValueError(f"adam_step: shape mismatch at index {i}")
        dt = _float_dtype(p, g, m, v)
        groups.setdefault(dt, []).append(i)
    bc1 = 1.0 - beta1 ** step
    bc2 = 1.0 - beta2 ** step
    for dt, idx in groups.items():
        idx = [i for i in idx if params[i].size]
        if not idx:
            continue
        gr = [be.xp.ascontiguousarray(grads[i]) for i in idx]
        sizes = [int(params[i].size) for i in idx]
        bt, bs, nb = _work_table(be, sizes, _ADAM_CHUNK)
        sizes_dev = be.to_device(np.asarray(sizes, dtype=np.int64))
        be.launch("adam.cu", "adam_step", dt, (nb,), (_ADAM_THREADS,),
                  (be.pointer_array([params[i] for i in idx]), be.pointer_array(gr),
                   be.pointer_array([exp_avgs[i] for i in idx]),
                   be.pointer_array([exp_avg_sqs[i] for i in idx]), sizes_dev, bt, bs,
                   np.int32(nb), np.int32(_ADAM_CHUNK), _scalar(dt, lr), _scalar(dt, beta1),
                   _scalar(dt, beta2), _scalar(dt, eps), _scalar(dt, weight_decay),
                   np.int32(bool(decoupled)), _scalar(dt, bc1), _scalar(dt, bc2)))
    return None


def grad_norm(grads):
    """Global L2 norm of a list of float arrays (one dtype), reduced on the device.

    Returns a 0-d array (on the device for CuPy input) -- no host sync.  The clip
    factor ``min(1, max_norm / (norm + 1e-6))`` can then be computed with xp.
    """
    grads = [g for g in grads]
    if not grads:
        raise ValueError("grad_norm of an empty list")
    be = backend_for(*grads)
    xp = be.xp
    dt = _float_dtype(*grads)
    gs = [xp.ascontiguousarray(g) for g in grads if g.size]
    out = be.empty((1,), dt)
    if not gs:
        out[...] = 0
        return out.reshape(())
    sizes = [int(g.size) for g in gs]
    bt, bs, nb = _work_table(be, sizes, _ADAM_CHUNK)
    partial = be.empty((nb,), dt)
    be.launch("adam.cu", "sumsq_partial", dt, (nb,), (_ADAM_THREADS,),
              (be.pointer_array(gs), be.to_device(np.asarray(sizes, dtype=np.int64)), bt, bs,
               np.int32(nb), np.int32(_ADAM_CHUNK), partial))
    be.launch("adam.cu", "sumsq_finalize", dt, (1,), (_ADAM_THREADS,),
              (partial, np.int32(nb), out))
    return out.reshape(())


# =================================================================== embedding
def embedding_backward(ids, dy, num_embeddings, padding_idx=None):
    """Scatter-add ``dy`` rows into a zeroed embedding-table gradient.

    ids: integer array of any shape S (cast to int64); dy: float [*S, dim].
    Returns dweight [num_embeddings, dim] with dweight[id] = sum of dy rows
    looked up with that id; rows whose id equals padding_idx (negative values
    are counted from the end, like torch) or is out of range are skipped.
    Accumulation uses atomicAdd (float results may differ in the last bits from
    run to run).
    """
    be = backend_for(ids, dy)
    xp = be.xp
    dy = xp.ascontiguousarray(dy)
    dt = _float_dtype(dy)
    ids = xp.ascontiguousarray(xp.asarray(ids).astype(np.int64, copy=False)).reshape(-1)
    n = int(ids.size)
    dim = int(dy.shape[-1]) if dy.ndim else 1
    if dy.size != n * dim:
        raise ValueError(f"dy shape {dy.shape} does not match {n} ids")
    num_embeddings = int(num_embeddings)
    if padding_idx is None:
        pad = -1
    else:
        pad = int(padding_idx)
        if pad < 0:
            pad += num_embeddings
        if not 0 <= pad < num_embeddings:
            raise ValueError(f"padding_idx {padding_idx} out of range")
    out = be.zeros((num_embeddings, dim), dt)
    if n and dim:
        _check_int32(dim=dim)
        threads = _row_block(dim, 256)
        grid = int(min(n, 65535 * 4))
        be.launch("embedding.cu", "embedding_backward", dt, (grid,), (threads,),
                  (ids, dy, out, np.int64(n), np.int32(dim), np.int64(num_embeddings),
                   np.int64(pad)))
    return out
