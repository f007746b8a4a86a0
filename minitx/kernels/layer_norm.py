"""Launchers of layer_norm.cu: layer norm over the last axis, forward and backward."""
from __future__ import annotations

import numpy as np

from ._launch import check_compute_dtype, contiguous, float_dtype, launch_rows, row_block, rows_cols
from ._runtime import backend_for, compute_dtype

_PARAM_THREADS = 128  # threads (one column each) of the dw/db kernels

#: Columns of a row each thread of layer_norm_forward and layer_norm_backward_dx holds in
#: registers (layer_norm.cu's N): a row read from global memory once, its loads issued together.
ROW_CLASSES = (1, 2, 4, 8)
#: Those kernels' compile-time sizes (_runtime.instantiations): None is the loop over columns
#: (N = 0, the kernel's default), for rows wider than ROW_CLASSES[-1] blocks of threads.
SIZES = {kernel: (None, *ROW_CLASSES) for kernel in ("layer_norm_forward", "layer_norm_backward_dx")}


def _row_class(cols: int, threads: int):
    """The smallest N of ROW_CLASSES with N * threads >= cols, or None (the loop)."""
    return next((n for n in ROW_CLASSES if n * threads >= cols), None)


def _row_size(cols: int):
    """The row class of launch_rows' block for rows of ``cols`` columns (its compile-time size)."""
    return _row_class(cols, row_block(cols))


def layer_norm_forward(x, weight=None, bias=None, eps=1e-5):
    """Layer norm over the last axis.

    x: [..., cols]; weight, bias: [cols] or None, x's dtype.  Returns (y, mean, rstd) with
    y shaped like x and mean, rstd shaped x.shape[:-1] (save them for the
    backward).  Variance is the biased (1/cols) two-pass variance.

    dtypes: x, weight, bias and y share one (float32, float64 or bfloat16); mean and rstd
    are in its compute dtype, float32 for bfloat16: statistics are never rounded to bfloat16.
    """
    be = backend_for(x, weight, bias)
    x, w, b = contiguous(be.xp, x, weight, bias)
    dt = float_dtype(x, w, b)
    rows, cols = rows_cols(x)
    if cols == 0:
        raise ValueError("layer_norm over an empty last axis")
    for name, p in (("weight", w), ("bias", b)):
        if p is not None and p.size != cols:
            raise ValueError(f"{name} must have {cols} elements, got shape {p.shape}")
    ct = compute_dtype(dt)
    y = be.empty(x.shape, dt)
    mean = be.empty(x.shape[:-1], ct)
    rstd = be.empty(x.shape[:-1], ct)
    if rows:
        launch_rows(be, "layer_norm.cu", "layer_norm_forward", dt, (x, w, b, y, mean, rstd), rows, cols,
                    (ct.type(eps),), size=_row_size(cols))
    return y, mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, param_grads=True, plus=None):
    """Backward of :func:`layer_norm_forward`.

    dy, x: [..., cols]; weight: [cols] or None (treated as ones); mean, rstd:
    the saved forward statistics (x.shape[:-1]).  Returns (dx, dweight, dbias);
    dweight = sum over rows of dy * xhat and dbias = sum over rows of dy (both
    [cols], computed deterministically with per-block partials + a second
    reduction kernel, no atomics).  With param_grads=False they are None.
    ``plus``: an array shaped like x and of its dtype, added into dx (``plus + dx``, rounded
    once: for float32 and float64 what a separate add would give; a bfloat16 dx is not rounded
    before the add): the gradient x already has from another use.

    dtypes: dy, x, weight and the returned gradients share one; mean and rstd are in its
    compute dtype (as the forward returns them).  With bfloat16 the sums over rows are
    float32 partials, and each gradient is rounded to bfloat16 once.
    """
    be = backend_for(dy, x, weight, mean, rstd, plus)
    dy, x, w, mean, rstd = contiguous(be.xp, dy, x, weight, mean, rstd)
    dt = float_dtype(x, dy, w)
    check_compute_dtype("layer_norm_backward", dt, mean=mean, rstd=rstd)
    ct = compute_dtype(dt)
    rows, cols = rows_cols(x)
    if dy.shape != x.shape or mean.size != rows or rstd.size != rows:
        raise ValueError("layer_norm_backward: inconsistent shapes")
    if plus is not None:
        if plus.shape != x.shape or plus.dtype != dt:
            raise ValueError(f"layer_norm_backward: plus must be {x.shape} {np.dtype(dt).name}, got "
                             f"{plus.shape} {plus.dtype.name}")
        (plus,) = contiguous(be.xp, plus)
    dx = be.empty(x.shape, dt)
    if rows == 0:  # nothing to launch (dx has no elements); dw and db are sums over no rows
        if not param_grads:
            return dx, None, None
        return dx, be.zeros((cols,), dt), be.zeros((cols,), dt)
    launch_rows(be, "layer_norm.cu", "layer_norm_backward_dx", dt, (dy, x, w, mean, rstd, dx, plus), rows, cols,
                size=_row_size(cols))
    if not param_grads:
        return dx, None, None
    dw = be.empty((cols,), dt)
    db = be.empty((cols,), dt)
    col_blocks = -(-cols // _PARAM_THREADS)
    parts = int(max(1, min(rows, 256, -(-512 // col_blocks))))
    part_w = be.empty((parts, cols), ct)
    part_b = be.empty((parts, cols), ct)
    be.launch("layer_norm.cu", "layer_norm_backward_dwdb_partial", dt, (col_blocks, parts),
              (_PARAM_THREADS,), (dy, x, mean, rstd, part_w, part_b, np.int32(rows), np.int32(cols)))
    be.launch("layer_norm.cu", "layer_norm_backward_dwdb_reduce", dt, (col_blocks,),
              (_PARAM_THREADS,), (part_w, part_b, dw, db, np.int32(parts), np.int32(cols)))
    return dx, dw, db
