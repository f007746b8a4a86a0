"""Launchers of cross_entropy.cu: fused log-softmax + NLL with label smoothing."""
from __future__ import annotations

import numpy as np

from ._launch import float_dtype, launch_rows, rows_cols
from ._runtime import backend_for, compute_dtype


def _targets(xp, targets):
    return xp.ascontiguousarray(xp.asarray(targets).astype(np.int64, copy=False))


def cross_entropy_forward(logits, targets, ignore_index=-100, label_smoothing=0.0):
    """Per-row fused log-softmax + NLL (with label smoothing).

    logits: [N, C] (or [..., C]; rows = all leading dims); targets: integer
    array with logits.shape[:-1] (cast to int64).  Returns (loss_rows, lse),
    both shaped logits.shape[:-1].  Rows whose target is ignore_index get loss
    0; a target outside [0, C) that is not ignore_index gives NaN.  Reduction
    (mean over non-ignored rows, etc.) is left to the caller.

    dtypes: logits float32, float64 or bfloat16; loss_rows and lse in its compute dtype
    (float32 for bfloat16 logits: a loss and a log-sum-exp are never rounded to bfloat16).
    """
    be = backend_for(logits, targets)
    xp = be.xp
    x = xp.ascontiguousarray(logits)
    dt = float_dtype(x)
    rows, cols = rows_cols(x)
    t = _targets(xp, targets)
    if t.size != rows:
        raise ValueError(f"targets has {t.size} elements, expected {rows}")
    ct = compute_dtype(dt)
    loss = be.empty(x.shape[:-1], ct)
    lse = be.empty(x.shape[:-1], ct)
    if rows == 0:
        return loss, lse
    if cols == 0:
        raise ValueError("cross entropy over zero classes")
    launch_rows(be, "cross_entropy.cu", "cross_entropy_forward", dt, (x, t, loss, lse), rows, cols,
                (np.int64(ignore_index), ct.type(label_smoothing)))
    return loss, lse


def cross_entropy_backward(logits, targets, lse, dloss_rows, ignore_index=-100,
                           label_smoothing=0.0):
    """Gradient of the per-row losses w.r.t. the logits.

    dloss_rows: upstream gradient of each row's loss, shape logits.shape[:-1]
    or anything broadcastable to it (e.g. a scalar 1/num_valid for a mean).
    Returns dlogits = (softmax(x) - ((1-eps) onehot(t) + eps/C)) * dloss_row,
    zero on ignored rows.

    dtypes: dlogits has the logits' dtype (bfloat16: computed in float32, rounded once);
    lse and dloss_rows are taken in its compute dtype (cast if need be), as the forward
    returns them.
    """
    be = backend_for(logits, targets, lse, dloss_rows)
    xp = be.xp
    x = xp.ascontiguousarray(logits)
    dt = float_dtype(x)
    rows, cols = rows_cols(x)
    t = _targets(xp, targets)
    ct = compute_dtype(dt)
    lse = xp.ascontiguousarray(xp.asarray(lse, dtype=ct))
    g = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(dloss_rows, dtype=ct), x.shape[:-1]))
    if t.size != rows or lse.size != rows:
        raise ValueError("cross_entropy_backward: inconsistent shapes")
    dx = be.empty(x.shape, dt)
    if x.size:
        launch_rows(be, "cross_entropy.cu", "cross_entropy_backward", dt, (x, t, lse, g, dx), rows,
                    cols, (np.int64(ignore_index), ct.type(label_smoothing)))
    return dx
