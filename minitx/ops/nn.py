"""Neural-network ops with hand-written backwards.

These could be composed from primitives (softmax = exp / sum exp), but then backward would
walk many small ops and keep many intermediate arrays. Written as one Function each, the
backward is one short formula, worth reading next to the forward, and a fused CUDA kernel
can replace the forward and backward as a unit.
"""
from __future__ import annotations

import math

import numpy as np

from minitx import random as mrandom
from minitx.autograd.function import Function
from minitx.backend import device_of, get_array_module
from minitx.ops.shape import scatter_add

__all__ = [
    "Softmax", "LogSoftmax", "LayerNorm", "Dropout", "Embedding", "Linear", "CrossEntropy",
    "ScaledDotProductAttention",
]


def _stable_exp(x, axis):
    """exp(x - max x) along axis, and that max (a -inf max, a fully masked row, becomes 0)."""
    xp = get_array_module(x)
    m = x.max(axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    return xp.exp(x - m), m


class Softmax(Function):
    """y_i = exp(x_i) / sum_j exp(x_j) along ``axis`` (computed with max(x) subtracted).

    backward:  dx_i = y_i * (dy_i - sum_j dy_j * y_j)
    (from dy_i/dx_j = y_i * (delta_ij - y_j)). A row that is all -inf gives all zeros.
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        e, _ = _stable_exp(x, self.axis)
        total = e.sum(axis=self.axis, keepdims=True)
        y = e / get_array_module(x).where(total > 0, total, 1)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (y * (dy - (dy * y).sum(axis=self.axis, keepdims=True)),)


class LogSoftmax(Function):
    """y_i = x_i - log sum_j exp(x_j) along ``axis``, computed as (x_i - m) - log sum_j exp(x_j - m),
    m = max(x): subtracting m first keeps float32 precision when |x| is large.

    backward:  dx_i = dy_i - softmax(x)_i * sum_j dy_j,   softmax(x) = exp(y)
    A row that is all -inf gives all -inf (log of the all-zero softmax).
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        e, m = _stable_exp(x, self.axis)
        total = e.sum(axis=self.axis, keepdims=True)
        # a row that is all -inf (fully masked) stays -inf instead of becoming -inf - (-inf) = NaN
        y = xp.where(total > 0, (x - m) - xp.log(xp.where(total > 0, total, 1)), -xp.inf)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        xp = get_array_module(y)
        return (dy - xp.exp(y) * dy.sum(axis=self.axis, keepdims=True),)


class LayerNorm(Function):
    """Normalize over the last axis, then scale and shift:

        mu = mean(x),  rstd = 1 / sqrt(var(x) + eps),  xhat = (x - mu) * rstd,  y = xhat * w + b

    backward, with g = dy * w and means over the last axis:
        dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
        dw = sum over rows of dy * xhat        db = sum over rows of dy
    """

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, w, b):
        xp = get_array_module(x)
        if w.shape != x.shape[-1:] or b.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: weight {w.shape} and bias {b.shape} must have shape "
                             f"({x.shape[-1]},), the last axis of the input {x.shape}")
        mu = x.mean(axis=-1, keepdims=True)
        centered = x - mu
        rstd = 1 / xp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + self.eps)
        xhat = centered * rstd
        self.save_for_backward(xhat, w, rstd)
        return xhat * w + b

    def backward(self, dy):
        xhat, w, rstd = self.saved
        rows = tuple(range(dy.ndim - 1))
        g = dy * w
        dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
        dw = (dy * xhat).sum(axis=rows) if self.needs_input_grad[1] else None
        db = dy.sum(axis=rows) if self.needs_input_grad[2] else None
        return dx, dw, db


def _dropout_keep_mask(shape, p, dtype, xp, device, seed):
    """Scaled keep mask: 1/(1-p) with probability 1-p, else 0 (inverted dropout)."""
    rng = mrandom.generator(device) if seed is None else xp.random.default_rng(seed)
    keep = rng.random(shape, dtype=dtype) >= p
    return keep.astype(dtype) * (1 / (1 - p))


class Dropout(Function):
    """Inverted dropout: y = x * m, m_i = 1/(1-p) with probability 1-p, else 0.

    backward:  dx = dy * m  (the same mask, saved from forward)
    The mask is drawn from minitx's seeded generator (``minitx.manual_seed``), or from
    ``seed`` when given. Outside training, use F.dropout(training=False): y = x.
    """

    def __init__(self, p=0.5, seed=None):
        if not 0 <= p < 1:
            raise ValueError(f"dropout: p must be in [0, 1), got {p}")
        self.p, self.seed = p, seed

    def forward(self, x):
        xp = get_array_module(x)
        mask = _dropout_keep_mask(x.shape, self.p, x.dtype, xp, device_of(x), self.seed)
        self.save_for_backward(mask)
        return x * mask

    def backward(self, dy):
        (mask,) = self.saved
        return (dy * mask,)


def _check_integer(op, what, array):
    if array.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be an integer tensor, got dtype {array.dtype.name}")


class Embedding(Function):
    """y[..., :] = weight[ids[...], :]  (gather rows of a [num_embeddings, dim] table).

    backward:  dweight[r] = sum of dy[...] over the positions where ids == r  (a scatter-add,
    since a row is often used many times); dweight[padding_idx] = 0, so the padding row
    never learns. No gradient for ids.
    """

    def __init__(self, padding_idx=None):
        self.padding_idx = padding_idx

    def forward(self, ids, weight):
        _check_integer("embedding", "ids", ids)
        n = weight.shape[0]
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
            bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
            raise IndexError(f"embedding: id {bad} is out of range for a table of {n} rows")
        self.save_for_backward(ids)
        self.weight_shape = weight.shape
        return weight[ids]

    def backward(self, dy):
        (ids,) = self.saved
        xp = get_array_module(dy)
        dweight = xp.zeros(self.weight_shape, dtype=dy.dtype)
        scatter_add(dweight, ids.reshape(-1), dy.reshape(-1, self.weight_shape[1]))
        if self.padding_idx is not None:
            dweight[self.padding_idx] = 0
        return None, dweight


class Linear(Function):
    """y = x @ w^T + b, with w of shape [out_features, in_features] (as PyTorch stores it).

    backward, with rows = all leading axes of x flattened:
        dx = dy @ w        dw = dy^T @ x  (summed over rows)        db = sum over rows of dy
    """

    def forward(self, x, w, b=None):
        if x.shape[-1] != w.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} does not fit weight {w.shape}: "
                             f"{x.shape[-1]} != {w.shape[1]}")
        rows = _rows(x)
        self.save_for_backward(rows, w)
        self.in_shape = x.shape
        y = rows @ w.T
        if b is not None:
            y += b
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward(self, dy):
        rows, w = self.saved
        dy = _rows(dy)
        dx = (dy @ w).reshape(self.in_shape) if self.needs_input_grad[0] else None
        dw = dy.T @ rows if self.needs_input_grad[1] else None
        grads = (dx, dw)
        if len(self.needs_input_grad) == 3:
            grads += (dy.sum(axis=0) if self.needs_input_grad[2] else None,)
        return grads


def _rows(a):
    """a as a C-contiguous 2-D array [rows, last axis]: matrix products on it always take
    the fast BLAS path (numpy falls back to a slow loop for some strided N-D operands)."""
    return get_array_module(a).ascontiguousarray(a.reshape(-1, a.shape[-1]))


class CrossEntropy(Function):
    """Cross-entropy of logits x [..., C] against integer targets t [...], with label smoothing.

    With lse = log sum_j exp(x_j) and log-probabilities logp_j = x_j - lse, each row's loss is

        loss = (1 - s) * (-logp_t) + s * mean_j(-logp_j)        (s = label_smoothing)

    i.e. the cross-entropy against the target distribution q = (1 - s) * onehot(t) + s / C.
    Rows whose target is ``ignore_index`` contribute nothing. reduction: 'mean' divides by
    the number of counted rows (0 rows gives a loss of 0, not NaN), 'sum' adds, 'none'
    returns the per-row losses.

    backward:  dx = (softmax(x) - q) * dloss_row   (0 for ignored rows)
    """

    def __init__(self, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.ignore_index, self.smoothing, self.reduction = ignore_index, label_smoothing, reduction

    def forward(self, x, t):
        xp = get_array_module(x)
        _check_integer("cross_entropy", "targets", t)
        if x.shape[:-1] != t.shape:
            raise ValueError(f"cross_entropy: logits {x.shape} need targets of shape {x.shape[:-1]}, got {t.shape}")
        classes = x.shape[-1]
        valid = t != self.ignore_index
        safe_t = xp.where(valid, t, 0)
        if t.size and (int(safe_t.min()) < 0 or int(safe_t.max()) >= classes):
            bad = t[valid & ((t < 0) | (t >= classes))]
            raise IndexError(f"cross_entropy: target {int(bad.reshape(-1)[0])} is out of range for {classes} "
                             f"classes (ignore_index is {self.ignore_index})")
        e, m = _stable_exp(x, -1)
        lse = m + xp.log(e.sum(axis=-1, keepdims=True))
        logp_t = xp.take_along_axis(x, safe_t[..., None], axis=-1) - lse
        loss = -(1 - self.smoothing) * logp_t[..., 0]
        if self.smoothing:
            loss = loss + self.smoothing * (lse[..., 0] - x.mean(axis=-1))
        loss = loss * valid
        self.count = int(valid.sum())
        self.save_for_backward(x, lse, safe_t, valid)
        if self.reduction == "none":
            return loss
        total = loss.sum()
        return total / max(self.count, 1) if self.reduction == "mean" else total

    def backward(self, dy):
        x, lse, safe_t, valid = self.saved
        xp = get_array_module(x)
        classes = x.shape[-1]
        # softmax(x), C-ordered: x may be a transposed view, and the reshape below must be a view
        grad = xp.ascontiguousarray(xp.exp(x - lse))
        if self.smoothing:
            grad -= self.smoothing / classes
        rows = grad.reshape(-1, classes)
        rows[xp.arange(rows.shape[0]), safe_t.reshape(-1)] -= 1 - self.smoothing
        if self.reduction == "none":
            scale = dy * valid
        else:
            scale = valid * (dy / max(self.count, 1) if self.reduction == "mean" else dy)
        return grad * scale[..., None], None


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
    key at all gets P = 0 and o = 0 (not NaN). ``weights`` after forward holds P.
    """

    def __init__(self, causal=False, dropout_p=0.0, scale=None, seed=None):
        if not 0 <= dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        self.causal, self.dropout_p, self.scale, self.seed = causal, dropout_p, scale, seed

    def forward(self, q, k, v, mask=None):
        xp = get_array_module(q)
        d, lq, lk = q.shape[-1], q.shape[-2], k.shape[-2]
        if k.shape[-1] != d or v.shape[-2] != lk:
            raise ValueError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape} do not fit: "
                             "expected q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv]")
        scale = self.scale if self.scale is not None else 1 / math.sqrt(d)
        allowed = None
        if mask is not None:
            if mask.dtype != np.bool_:
                raise TypeError(f"scaled_dot_product_attention: mask must be boolean (True = may attend), "
                                f"got dtype {mask.dtype.name}")
            allowed = mask
        if self.causal:
            causal = xp.tril(xp.ones((lq, lk), dtype=bool), k=lk - lq)
            allowed = causal if allowed is None else allowed & causal
        scores = (q @ xp.swapaxes(k, -1, -2)) * scale
        if allowed is not None:
            scores = xp.where(allowed, scores, -xp.inf)
        e, _ = _stable_exp(scores, -1)
        total = e.sum(axis=-1, keepdims=True)
        p = e / xp.where(total > 0, total, 1)
        self.weights = p
        dropped = p
        dropout_mask = None
        if self.dropout_p:
            dropout_mask = _dropout_keep_mask(p.shape, self.dropout_p, p.dtype, xp, device_of(p), self.seed)
            dropped = p * dropout_mask
        self.save_for_backward(q, k, v, p, dropout_mask)
        self.scale_used = scale
        return dropped @ v

    def backward(self, do):
        q, k, v, p, dropout_mask = self.saved
        xp = get_array_module(do)
        dropped = p if dropout_mask is None else p * dropout_mask
        dv = xp.swapaxes(dropped, -1, -2) @ do
        dp = do @ xp.swapaxes(v, -1, -2)
        if dropout_mask is not None:
            dp = dp * dropout_mask
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * self.scale_used
        dq = ds @ k
        dk = xp.swapaxes(ds, -1, -2) @ q
        grads = (dq, dk, dv)
        return grads + (None,) * (len(self.needs_input_grad) - 3)  # none for the mask

    def release(self):
        super().release()
        self.weights = None
