"""Neural-network ops with hand-written backwards.

These could be composed from primitives (softmax = exp / sum exp), but then backward would
walk many small ops and keep many intermediate arrays. Written as one Function each, the
backward is one short formula, worth reading next to the forward, and a fused CUDA kernel
can replace the forward and backward as a unit.

Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle. The dropout ops are the
exception by nature: the reference saves its mask, the kernel regenerates its mask from a
Philox (seed, offset) pair, and backward follows whichever forward ran.
"""
from __future__ import annotations

import numpy as np

from minitx import kernels
from minitx import random as mrandom
from minitx.autograd.function import Function
from minitx.backend import device_of, get_array_module, host_ints, sum_rows
from minitx.ops.elementwise import gelu_tanh, gelu_tanh_derivative, relu_derivative, relu_values
from minitx.ops.reduction import check_nonempty_axes, logsumexp_parts, normalize_axes
from minitx.ops.shape import scatter_add

__all__ = [
    "Softmax", "LogSoftmax", "LayerNorm", "Dropout", "DropoutAdd", "BiasActDropout", "Embedding",
    "Linear", "CrossEntropy",
]


def _normalized_axes(op, x, axis):
    """softmax's and log_softmax's axis, checked: in range (a 0-d x takes 0 or -1) and not empty."""
    axes = normalize_axes(axis, x.ndim, op)
    check_nonempty_axes(op, x, axes, "a distribution over no classes is not defined")
    return axes


class Softmax(Function):
    """y_i = exp(x_i) / sum_j exp(x_j) along ``axis`` (computed with max(x) subtracted).

    backward:  dx_i = y_i * (dy_i - sum_j dy_j * y_j)
    (from dy_i/dx_j = y_i * (delta_ij - y_j)). A row that is all -inf gives all zeros.

    Derivation: docs/backprop/softmax.md
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def _fused(self, *arrays):
        """The kernel works on rows of the last axis."""
        ndim = arrays[0].ndim
        return ndim > 0 and self.axis in (-1, ndim - 1) and kernels.enabled(*arrays)

    def forward(self, x):
        self.axes = _normalized_axes(self.name, x, self.axis)
        if self._fused(x):
            y = kernels.softmax_forward(x)
        else:
            e, total, _, _ = logsumexp_parts(x, self.axes)
            y = e / get_array_module(x).where(total == 0, 1, total)  # total NaN: y NaN
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        if self._fused(y, dy):
            return (kernels.softmax_backward(y, dy),)
        return (y * (dy - (dy * y).sum(axis=self.axes, keepdims=True)),)


class LogSoftmax(Function):
    """y_i = x_i - log sum_j exp(x_j) along ``axis``, computed as (x_i - m) - log sum_j exp(x_j - m),
    m = max(x): subtracting m first keeps float32 precision when |x| is large.

    backward:  dx_i = dy_i - softmax(x)_i * sum_j dy_j,   softmax(x) = exp(y)
    A row that is all -inf gives all -inf (log of the all-zero softmax).

    Derivation: docs/backprop/softmax.md
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        self.axes = _normalized_axes(self.name, x, self.axis)
        _, total, m, log_total = logsumexp_parts(x, self.axes)
        # a row that is all -inf (fully masked) stays -inf instead of becoming -inf - (-inf) = NaN
        with np.errstate(invalid="ignore"):
            y = xp.where(total == 0, -xp.inf, (x - m) - log_total)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        xp = get_array_module(y)
        return (dy - xp.exp(y) * dy.sum(axis=self.axes, keepdims=True),)


class LayerNorm(Function):
    """Normalize over the last axis, then scale and shift:

        mu = mean(x),  rstd = 1 / sqrt(var(x) + eps),  xhat = (x - mu) * rstd,  y = xhat * w + b

    backward, with g = dy * w and means over the last axis:
        dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
        dw = sum over rows of dy * xhat        db = sum over rows of dy

    Both paths save (x, w, mu, rstd), mu and rstd of shape x.shape[:-1] (what the kernel
    returns); backward rebuilds xhat from them instead of keeping a second x-sized array.

    Derivation: docs/backprop/layer-norm.md
    """

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, w, b):
        if w.shape != x.shape[-1:] or b.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: weight {w.shape} and bias {b.shape} must have shape "
                             f"({x.shape[-1]},), the last axis of the input {x.shape}")
        if kernels.enabled(x, w, b):
            y, mu, rstd = kernels.layer_norm_forward(x, w, b, self.eps)
        else:
            xp = get_array_module(x)
            mu = x.mean(axis=-1)
            centered = x - mu[..., None]
            rstd = 1 / xp.sqrt((centered * centered).mean(axis=-1) + self.eps)
            y = centered * rstd[..., None] * w + b
        self.save_for_backward(x, w, mu, rstd)
        return y

    def backward(self, dy):
        x, w, mu, rstd = self.saved
        needs_dw, needs_db = self.needs_input_grad[1], self.needs_input_grad[2]
        if kernels.enabled(dy, x, w, mu, rstd):
            dx, dw, db = kernels.layer_norm_backward(dy, x, w, mu, rstd, param_grads=needs_dw or needs_db)
            return dx, dw if needs_dw else None, db if needs_db else None
        rows = tuple(range(dy.ndim - 1))
        rstd = rstd[..., None]
        xhat = (x - mu[..., None]) * rstd
        g = dy * w
        dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
        dw = (dy * xhat).sum(axis=rows) if needs_dw else None
        db = dy.sum(axis=rows) if needs_db else None
        return dx, dw, db


def _dropout_keep_mask(shape, p, dtype, xp, device, seed):
    """Scaled keep mask: 1/(1-p) with probability 1-p, else 0 (inverted dropout).

    Where the kernels run (a GPU), the mask comes from the Philox kernel and a (seed, offset)
    pair from minitx.random, as in the fused dropout ops: checkpoints record the offsets, so a
    resumed run draws the masks the uninterrupted run would have drawn. (CuPy's own generator
    state cannot be saved.) Elsewhere it comes from minitx's generator, or from ``seed``.
    """
    if seed is None and kernels.enabled(xp.empty(0, dtype)):
        return kernels.dropout_apply(xp.ones(shape, dtype), p, *mrandom.next_philox_seed_offset(device))
    rng = mrandom.generator(device) if seed is None else xp.random.default_rng(seed)
    keep = rng.random(shape, dtype=dtype) >= p
    return keep.astype(dtype) * (1 / (1 - p))


def _check_dropout_p(op, p):
    if not 0 <= p < 1:
        raise ValueError(f"{op}: p must be in [0, 1), got {p}")


def _philox_seed_offset(seed, array):
    """The (seed, offset) pair of a fused dropout call: fixed by ``seed`` when given (so a
    repeated call draws the same mask), else the next pair from minitx.random."""
    return (seed, 0) if seed is not None else mrandom.next_philox_seed_offset(device_of(array))


class Dropout(Function):
    """Inverted dropout: y = x * m, m_i = 1/(1-p) with probability 1-p, else 0.

    backward:  dx = dy * m  (the same mask, saved from forward)
    The mask is drawn from minitx's seeded generator (``minitx.manual_seed``; on the GPU from
    the next Philox pair, see _dropout_keep_mask), or from ``seed`` when given. Outside
    training, use F.dropout(training=False): y = x.

    Derivation: docs/backprop/dropout.md
    """

    def __init__(self, p=0.5, seed=None):
        _check_dropout_p("dropout", p)
        self.p, self.seed = p, seed

    def forward(self, x):
        xp = get_array_module(x)
        mask = _dropout_keep_mask(x.shape, self.p, x.dtype, xp, device_of(x), self.seed)
        self.save_for_backward(mask)
        return x * mask

    def backward(self, dy):
        (mask,) = self.saved
        return (dy * mask,)


class DropoutAdd(Function):
    """y = residual + dropout(x) = residual + x * m, m as in Dropout (m_i = 1/(1-p) with
    probability 1-p, else 0): the residual connection around a Transformer sublayer, one pass.

    backward:  dx = dy * m        dresidual = dy

    Reference path: m is drawn as in Dropout (_dropout_keep_mask) and saved. Kernel
    path: nothing is saved; m comes from a Philox (seed, offset) pair (see
    minitx.random.next_philox_seed_offset; (seed, 0) when ``seed`` is given) and backward
    regenerates it from the pair. The two paths draw different masks with the same law.

    Derivation: docs/backprop/dropout.md
    """

    def __init__(self, p=0.5, seed=None):
        _check_dropout_p("dropout_add", p)
        self.p, self.seed = p, seed

    def forward(self, x, residual):
        if x.shape != residual.shape:
            raise ValueError(f"dropout_add: x {x.shape} and residual {residual.shape} must have one shape")
        self.philox, mask = None, None
        if kernels.enabled(x, residual):
            self.philox = _philox_seed_offset(self.seed, x)
            y = kernels.dropout_add_forward(x, residual, self.p, *self.philox)
        else:
            mask = _dropout_keep_mask(x.shape, self.p, x.dtype, get_array_module(x), device_of(x), self.seed)
            y = residual + x * mask
        self.save_for_backward(mask)
        return y

    def backward(self, dy):
        (mask,) = self.saved
        if self.philox is not None:  # the forward ran the kernel: regenerate its mask
            dx, _ = kernels.dropout_add_backward(dy, self.p, *self.philox)
        else:
            dx = dy * mask
        return dx, dy


def _identity(u):
    return u


def _one(u):
    return get_array_module(u).ones_like(u)


# activation name -> (f, f'); the kernel knows the same three by these names
_BIAS_ACTIVATIONS = {"identity": (_identity, _one), "relu": (relu_values, relu_derivative),
                     "gelu_tanh": (gelu_tanh, gelu_tanh_derivative)}


class BiasActDropout(Function):
    """y = dropout(f(u)) = f(u) * m,   u = x + b   (b [C] added along the last axis; optional)

    f is 'identity', 'relu' or 'gelu_tanh' (GELU's tanh form, see Gelu); m as in Dropout.
    It follows a Linear computed without its bias: in a feed-forward block the bias add, the
    activation and the dropout become one pass over the [rows, d_ff] activations.

    backward:  du = dy * m * f'(u)        dx = du        db = sum over rows of du
               relu'(u) = [u > 0],  identity' = 1,  gelu_tanh' as in Gelu

    Both paths save (x, b); the mask is saved (reference) or regenerated from its Philox
    (seed, offset) pair (kernel), as in DropoutAdd.

    Derivation: docs/backprop/dropout.md
    """

    def __init__(self, activation="relu", p=0.0, seed=None):
        if activation not in _BIAS_ACTIVATIONS:
            raise ValueError(f"bias_act_dropout: activation must be one of {sorted(_BIAS_ACTIVATIONS)}, "
                             f"got {activation!r}")
        _check_dropout_p("bias_act_dropout", p)
        self.activation, self.p, self.seed = activation, p, seed

    def forward(self, x, b=None):
        if b is not None and b.shape != x.shape[-1:]:
            raise ValueError(f"bias_act_dropout: bias {b.shape} must have shape ({x.shape[-1]},), "
                             f"the last axis of the input {x.shape}")
        self.philox, mask = None, None
        if kernels.enabled(x, b):
            self.philox = _philox_seed_offset(self.seed, x)
            y = kernels.bias_act_dropout_forward(x, b, self.activation, self.p, *self.philox)
        else:
            f, _ = _BIAS_ACTIVATIONS[self.activation]
            y = f(x if b is None else x + b)
            if self.p:
                mask = _dropout_keep_mask(x.shape, self.p, x.dtype, get_array_module(x), device_of(x), self.seed)
                y = y * mask
        self.save_for_backward(x, b, mask)
        return y

    def backward(self, dy):
        x, b, mask = self.saved
        if self.philox is not None:  # the forward ran the kernel: regenerate its mask
            dx, db = kernels.bias_act_dropout_backward(dy, x, b, self.activation, self.p, *self.philox)
        else:
            _, f_prime = _BIAS_ACTIVATIONS[self.activation]
            dx = dy * f_prime(x if b is None else x + b)
            if mask is not None:
                dx = dx * mask
            db = None if b is None else sum_rows(dx.reshape(-1, dx.shape[-1]))
        return (dx,) if b is None else (dx, db if self.needs_input_grad[1] else None)


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
        low, high = host_ints(ids.min(), ids.max()) if ids.size else (0, 0)
        if ids.size and (low < 0 or high >= n):
            raise IndexError(f"embedding: id {low if low < 0 else high} is out of range for a table of {n} rows")
        self.save_for_backward(ids)
        self.weight_shape = weight.shape
        return weight[ids]

    def backward(self, dy):
        (ids,) = self.saved
        if kernels.enabled(dy):  # sorted by id, summed in a fixed order; it skips padding_idx itself
            return None, kernels.embedding_backward(ids, dy, self.weight_shape[0], self.padding_idx)
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

    Derivation: docs/backprop/matmul-linear.md
    """

    def forward(self, x, w, b=None):
        self.has_bias = b is not None  # then backward returns a third gradient, db
        if x.shape[-1] != w.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} does not fit weight {w.shape}: "
                             f"{x.shape[-1]} != {w.shape[1]}")
        if b is not None and b.shape != w.shape[:1]:
            raise ValueError(f"linear: bias of shape {b.shape} does not fit weight {w.shape}: "
                             f"expected shape ({w.shape[0]},)")
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
        if not self.has_bias:
            return dx, dw
        return dx, dw, sum_rows(dy) if self.needs_input_grad[2] else None


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

    Both paths save (x, t, lse), lse of shape t.shape.

    Derivation: docs/backprop/cross-entropy.md
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
        low, high, self.count = host_ints(safe_t.min(), safe_t.max(), valid.sum()) if t.size else (0, 0, 0)
        if t.size and (low < 0 or high >= classes):
            bad = t[valid & ((t < 0) | (t >= classes))]
            raise IndexError(f"cross_entropy: target {int(bad.reshape(-1)[0])} is out of range for {classes} "
                             f"classes (ignore_index is {self.ignore_index})")
        if kernels.enabled(x):
            loss, lse = kernels.cross_entropy_forward(x, t, self.ignore_index, self.smoothing)
        else:
            _, _, m, log_total = logsumexp_parts(x, -1)
            lse = (m + log_total)[..., 0]
            logp_t = xp.take_along_axis(x, safe_t[..., None], axis=-1)[..., 0] - lse
            loss = -(1 - self.smoothing) * logp_t
            if self.smoothing:
                loss = loss + self.smoothing * (lse - x.mean(axis=-1))
            loss = xp.where(valid, loss, 0)  # not loss * valid: an ignored row's NaN must not count
        self.save_for_backward(x, t, lse)
        if self.reduction == "none":
            return loss
        total = loss.sum()
        return total / max(self.count, 1) if self.reduction == "mean" else total

    def backward(self, dy):
        x, t, lse = self.saved
        dloss = dy / max(self.count, 1) if self.reduction == "mean" else dy  # d total / d loss_row
        if kernels.enabled(x, lse, dy):
            return kernels.cross_entropy_backward(x, t, lse, dloss, self.ignore_index, self.smoothing), None
        xp = get_array_module(x)
        classes = x.shape[-1]
        valid = t != self.ignore_index
        # softmax(x), C-ordered: x may be a transposed view, and the reshape below must be a view
        grad = xp.ascontiguousarray(xp.exp(x - lse[..., None]))
        if self.smoothing:
            grad -= self.smoothing / classes
        rows = grad.reshape(-1, classes)
        rows[xp.arange(rows.shape[0]), xp.where(valid, t, 0).reshape(-1)] -= 1 - self.smoothing
        return xp.where(valid[..., None], grad * dloss[..., None], 0), None
