"""Losses: cross-entropy (integer or probability targets, label smoothing), negative
log-likelihood, binary cross-entropy on probabilities and on logits; the margin and ranking
losses (cosine and hinge embedding, margin ranking, soft margin, multi-class and multi-label
margin, triplet); the regression losses (mean squared and absolute error, smooth L1 and Huber),
the Poisson and Gaussian negative log-likelihoods and the Kullback-Leibler divergence.

Each computes one loss per row (per element for the binary losses), then reduces it:
'mean' divides the sum by the number of counted rows, 'sum' adds, 'none' returns them all.
Backward first turns dy into dloss, the gradient of each row's loss.
Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx import backend, kernels, sync
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module, mean_last
from minitx.ops._args import as_indices, common_16_bits, floating, number, one_dtype, promote
from minitx.ops import reduction as reduction_ops
from minitx.ops.activation import log_softmax, logsigmoid, relu, sigmoid_values, softplus_values
from minitx.ops.elementwise import broadcasts_to, clip, dy_where, exp, log, minimum, sqrt, where
from minitx.ops.indexing import _check_integer, take_along_dim
from minitx.ops.norm import pairwise_distance
from minitx.ops.shape import unsqueeze
from minitx.ops.reduction import logsumexp_parts, quiet_float_errors

__all__ = ["CrossEntropy", "SoftCrossEntropy", "NllLoss", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits",
           "MseLoss", "SmoothL1Loss", "GaussianNll", "KlDiv"]


_REDUCTIONS = ("mean", "sum", "none")


_LOG_FLOOR = -100.0  # PyTorch clamps log(p) at -100 in binary_cross_entropy: a finite loss at p = 0


_EPS = 1e-12  # and its gradient divides by max(p (1 - p), 1e-12)


def per_count(value, count):
    """value / count: the mean over ``count`` counted rows, or over their summed class weights (a
    weighted mean); 0 when nothing counted (not NaN). ``count`` is a Python number, or a device
    scalar (in a step that reads nothing back, minitx.sync; the sum of weights), cast to value's
    dtype so that the quotient has the same bits as with the number."""
    if isinstance(count, (int, float)):
        return value / (count if count else 1)
    return value / get_array_module(count).where(count == 0, 1, count).astype(value.dtype)


def _check_reduction(op, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduced(losses, reduction):
    """A composed loss's per-row (or per-element) losses: their mean (0 over none), sum, or all."""
    if reduction == "none":
        return losses
    return reduction_ops.mean(losses) if reduction == "mean" and losses.size else reduction_ops.sum(losses)


def _pointwise_operands(op, x, y):
    """A pointwise loss's input and target in one dtype: an integer input as float32 (floating),
    and an integer target in the input's float dtype, as PyTorch's promotion gives them (NumPy's
    would compute float32 beside int64 in float64)."""
    return promote(floating(x), y, op=op)


def _constant(value, x):
    """A weight (a tensor, array or list) as a constant tensor in x's dtype, on x's device."""
    data = as_tensor(value, x).data  # (data no tensor holds: a TypeError, named by the function called)
    return Tensor(backend.to_device(data, x.device).astype(x.dtype, copy=False))


def check_classes(op, x):
    """Refuse logits or log-probabilities x [..., C] with C = 0 when there are rows to score: no
    distribution has zero classes (even a row whose target is ignored has one)."""
    if x.shape[-1] == 0 and math.prod(x.shape[:-1]):
        raise ValueError(f"{op}: input of shape {x.shape} has 0 classes on its last axis; expected at least one")


class _Loss(Function):
    def __init__(self, reduction="mean"):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{self.name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def _reduce(self, loss, count):
        """Reduce the per-row losses; ``count`` rows are counted for 'mean' (0 rows: a loss of 0)."""
        self.count = count
        if self.reduction == "none":
            return loss
        total = loss.sum()
        return per_count(total, count) if self.reduction == "mean" else total

    def _row_gradient(self, dy):
        """d total / d loss_row: dy itself for 'none', dy / count for 'mean', dy for 'sum'."""
        return per_count(dy, self.count) if self.reduction == "mean" else dy

    def _check_same_shape(self, a, b, what):
        if a.shape != b.shape:
            raise ValueError(f"{self.name}: {what} of shape {b.shape} must match the input's shape {a.shape}")


def _classes_last(shape, target_shape) -> str:
    """The hint for targets laid out as PyTorch's (classes on axis 1 of (N, C, d1, ...))."""
    if len(shape) >= 3 and target_shape == shape[:1] + shape[2:]:
        order = (0, *range(2, len(shape)), 1)
        return f"; the classes are the last axis in minitx (PyTorch: axis 1): move them there, x.permute{order}"
    return ""


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
    Kernel: minitx/kernels/cross_entropy.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    float32_from_16_bits = True  # their loss and lse are float32 (under autocast the logits go in as they are)
    fresh_gradients = True  # dlogits: the kernel's output, or the one new array backward works in

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
            raise ValueError(f"cross_entropy: logits {x.shape} need targets of shape {x.shape[:-1]}, got {t.shape}"
                             + _classes_last(x.shape, t.shape))
        check_classes("cross_entropy", x)
        classes = x.shape[-1]
        valid = t != self.ignore_index
        safe_t = xp.where(valid, t, 0)
        (self.count,) = sync.check_in_range(
            safe_t, classes, lambda value: IndexError(f"cross_entropy: target {value} is out of range for {classes} "
                                                      f"classes (ignore_index is {self.ignore_index})"),
            also=(valid.sum(),))
        if sync.deferring_checks() is not None:  # a bad target was only recorded: keep the reads inside x
            t = xp.where(valid, sync.within_range(t, classes), t)
            safe_t = xp.where(valid, t, 0)
        if kernels.enabled(x):
            loss, lse = kernels.cross_entropy_forward(x, t, self.ignore_index, self.smoothing)
            if not self.keeps_float32:  # bfloat16 logits outside autocast: round as the reference path does
                loss = loss.astype(x.dtype, copy=False)
        else:
            _, _, m, log_total = logsumexp_parts(x, -1)
            lse = (m + log_total)[..., 0]
            logp_t = xp.take_along_axis(x, safe_t[..., None], axis=-1)[..., 0] - lse
            loss = -(1 - self.smoothing) * logp_t
            if self.smoothing:
                loss = loss + self.smoothing * (lse - mean_last(x))
            loss = xp.where(valid, loss, 0)  # not loss * valid: an ignored row's NaN must not count
        self.save_for_backward(x, t, lse)
        if self.reduction == "none":
            return loss
        total = loss.sum()
        return per_count(total, self.count) if self.reduction == "mean" else total

    def backward(self, dy):
        x, t, lse = self.saved
        dloss = per_count(dy, self.count) if self.reduction == "mean" else dy  # d total / d loss_row
        if kernels.enabled(x, stats=(lse,)):  # the launcher casts dloss to lse's dtype
            return kernels.cross_entropy_backward(x, t, lse, dloss, self.ignore_index, self.smoothing), None
        xp = get_array_module(x)
        classes = x.shape[-1]
        valid = t != self.ignore_index
        # softmax(x), C-ordered (x may be a transposed view, and the reshape below must be a
        # view), computed in the one new array: every step below works in place
        grad = xp.ascontiguousarray(x - lse[..., None])
        xp.exp(grad, out=grad)
        if self.smoothing:
            grad -= self.smoothing / classes
        rows = grad.reshape(-1, classes)
        rows[xp.arange(rows.shape[0]), xp.where(valid, t, 0).reshape(-1)] -= 1 - self.smoothing
        grad *= dloss[..., None]
        # an ignored row gets 0, even where its logits hold NaN
        if xp is np:  # whole rows through a boolean index: several times faster than copyto's masked loop
            grad[~valid] = 0
        else:  # (CuPy's boolean index reads its count of rows back: a synchronisation)
            xp.copyto(grad, 0, where=~valid[..., None])
        return grad, None


class SoftCrossEntropy(_Loss):
    """Cross-entropy of logits x [..., C] against probability targets q [..., C] (e.g. soft
    labels, distillation), with label smoothing s mixing q with the uniform distribution:

        q' = (1 - s) q + s / C,   logp = x - log sum_j exp(x_j),   loss = -sum_c q'_c logp_c  per row

    backward:  dx = dloss * (softmax(x) * sum_c q'_c - q')       (softmax(x) - q' when q sums to 1)
               dq = -dloss * (1 - s) * logp
    'mean' divides by the number of rows (all of x.shape[:-1]), as PyTorch does for such targets.
    """

    def __init__(self, label_smoothing=0.0, reduction="mean"):
        super().__init__(reduction)
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.smoothing = label_smoothing

    def forward(self, x, q):
        if x.ndim < 1 or q.shape != x.shape:
            raise ValueError(f"cross_entropy: float targets of shape {q.shape} are class probabilities and need "
                             f"the logits' shape {x.shape}; class indices must be an integer tensor")
        check_classes("cross_entropy", x)
        xp = get_array_module(x)
        _, total, m, log_total = logsumexp_parts(x, -1)
        with quiet_float_errors(xp):  # total == 0 (not total > 0): a NaN logit makes its row NaN
            logp = xp.where(total == 0, -xp.inf, (x - m) - log_total)
        smoothed = (1 - self.smoothing) * q + self.smoothing / max(x.shape[-1], 1)  # (0 classes: no rows)
        self.save_for_backward(logp, smoothed)
        with quiet_float_errors(xp):  # 0 * -inf where a class has probability 0 and logit -inf: counts as 0
            loss = -xp.where(smoothed == 0, 0, smoothed * logp).sum(axis=-1)
        return self._reduce(loss, loss.size)

    def backward(self, dy):
        logp, smoothed = self.saved
        xp = get_array_module(logp)
        dloss = self._row_gradient(dy)[..., None]
        dx = dloss * (xp.exp(logp) * smoothed.sum(axis=-1, keepdims=True) - smoothed) \
            if self.needs_input_grad[0] else None
        dq = -dloss * (1 - self.smoothing) * logp if self.needs_input_grad[1] else None
        return dx, dq


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0, reduction="mean", weight=None):
    """Cross-entropy of logits [..., C] against integer class targets [...], or against float
    probability targets [..., C] (SoftCrossEntropy; ignore_index does not apply there); ``weight``
    [C] weighs each class, as PyTorch's (see _weighted_cross_entropy)."""
    _check_ignore_index("cross_entropy", ignore_index)
    logits = floating(logits)
    targets = as_indices(targets, logits)
    if weight is not None:
        return _weighted_cross_entropy(logits, targets, ignore_index, label_smoothing, reduction, weight)
    if backend.is_floating(targets.dtype):  # bfloat16 too (its NumPy kind is "V", not "f")
        return SoftCrossEntropy(label_smoothing, reduction)(*common_16_bits(logits, targets))
    return CrossEntropy(ignore_index, label_smoothing, reduction)(logits, targets)


def _check_ignore_index(op, ignore_index):
    """An int: PyTorch's third argument of cross_entropy and nll_loss is the class weights, which
    read as ignore_index would drop the rows whose target equals its weight, silently."""
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, numbers.Integral):
        raise TypeError(f"{op}: ignore_index must be an int, got {type(ignore_index).__name__}; "
                        "PyTorch's third argument is the class weights: give them as weight=")


def _weighted_cross_entropy(logits, targets, ignore_index, s, reduction, weight):
    """cross_entropy with a weight w [C] per class, composed of log_softmax, nll_loss and sums.
    With class ids t, smoothing s and logp = log_softmax(logits), each counted row
    (t != ignore_index) scores

        loss = (1 - s) * w[t] * (-logp[t]) + s / C * sum_c w[c] * (-logp[c])

    and 'mean' divides the sum by sum of w[t] over the counted rows (nll_loss's weighted mean;
    0 when no row counts). With probabilities q, loss = -sum_c w[c] * q'[c] * logp[c] for
    q' = (1 - s) * q + s / C, and 'mean' divides by the number of rows."""
    _check_reduction("cross_entropy", reduction)
    logp = log_softmax(logits, -1)
    classes = logp.shape[-1]
    w = _constant(weight, logp)
    if w.shape != (classes,):
        raise ValueError(f"cross_entropy: weight has shape {w.shape}, expected ({classes},), one per class of the "
                         f"logits {logp.shape}")
    if backend.is_floating(targets.dtype):  # probabilities: a weighted sum over the classes
        if targets.shape != logp.shape:
            raise ValueError(f"cross_entropy: float targets of shape {targets.shape} are class probabilities and "
                             f"need the logits' shape {logp.shape}; class indices must be an integer tensor")
        q = targets * (1 - s) + s / classes if s else targets
        return _reduced(-reduction_ops.sum(logp * q * w, axis=-1), reduction)
    nll = nll_loss(logp, targets, ignore_index, reduction, weight=w)
    if not s:
        return nll
    xp = get_array_module(targets.data)
    counted = targets.data != ignore_index
    smooth = where(Tensor(counted), -reduction_ops.sum(logp * w, axis=-1), 0.0)
    if reduction == "none":
        return nll * (1 - s) + smooth * (s / classes)
    smooth = reduction_ops.sum(smooth)
    if reduction == "mean":  # by the counted rows' weights, as nll_loss's mean (0 rows: 0)
        row_weight = xp.where(counted, w.data[xp.clip(targets.data, 0, classes - 1)], 0).sum()
        smooth = smooth / Tensor(xp.where(row_weight == 0, 1, row_weight).astype(logp.dtype))
    return nll * (1 - s) + smooth * (s / classes)


class NllLoss(_Loss):
    """Negative log-likelihood of log-probabilities x [..., C] at integer targets t [...], each
    row weighted by its class's weight (``weight`` [C], a constant; 1 without it):

        loss = -weight[t] * x[t]   per row (rows whose target is ``ignore_index`` count for nothing)
        mean = sum of the losses / sum of weight[t] over the counted rows (PyTorch's weighted mean)

    backward:  dx[..., t] = -weight[t] * dloss_row (0 elsewhere and on ignored rows); no
    gradient for t or the weights
    """

    def __init__(self, ignore_index=-100, reduction="mean", weight=None):
        super().__init__(reduction)
        self.ignore_index, self.weight = ignore_index, weight

    def forward(self, x, t):
        xp = get_array_module(x)
        if t.dtype.kind not in "iu":
            raise TypeError(f"nll_loss: targets must be an integer tensor, got dtype {t.dtype.name}")
        if x.ndim < 1 or x.shape[:-1] != t.shape:
            raise ValueError(f"nll_loss: log-probabilities {x.shape} need targets of shape {x.shape[:-1]}, "
                             f"got {t.shape}" + _classes_last(x.shape, t.shape))
        check_classes("nll_loss", x)
        valid = t != self.ignore_index
        safe_t = xp.where(valid, t, 0)
        classes = x.shape[-1]
        (count,) = sync.check_in_range(
            safe_t, classes, lambda value: IndexError(f"nll_loss: target {value} is out of range for {classes} classes "
                                                      f"(ignore_index is {self.ignore_index})"),
            also=(valid.sum(),))
        safe_t = sync.within_range(safe_t, classes)
        self.in_shape = x.shape
        picked = xp.take_along_axis(x, safe_t[..., None], axis=-1)[..., 0]
        if self.weight is None:
            self.save_for_backward(safe_t, valid, None)
            return self._reduce(xp.where(valid, -picked, 0), count)  # not * valid: an ignored -inf is no NaN
        if tuple(self.weight.shape) != (classes,):
            raise ValueError(f"nll_loss: weight has shape {tuple(self.weight.shape)}, expected ({classes},), one per class")
        row_weight = xp.where(valid, xp.asarray(self.weight, dtype=x.dtype)[safe_t], 0)
        self.save_for_backward(safe_t, valid, row_weight)
        # the weighted mean divides by the counted rows' weights, not their number (0 rows: 0)
        return self._reduce(xp.where(valid, -picked * row_weight, 0), row_weight.sum())

    def backward(self, dy):
        safe_t, valid, row_weight = self.saved  # (row_weight None without a weight)
        xp = get_array_module(dy)
        g = -self._row_gradient(dy)
        if row_weight is not None:
            g = g * row_weight
        # the target entries of the counted rows take g, every other entry (and ignored row) 0
        picked = (xp.arange(self.in_shape[-1]) == safe_t[..., None]) & valid[..., None]
        return dy_where(picked, xp.broadcast_to(g, valid.shape)[..., None]), None


def nll_loss(log_probs, targets, ignore_index=-100, reduction="mean", weight=None):
    """-weight[target] * log_probs[..., target] per row, log_probs [..., C] (e.g. from
    log_softmax), targets [...]; weight [C] (a tensor or array, default ones) weighs each class,
    and the mean divides by the counted rows' weights, as in PyTorch."""
    _check_ignore_index("nll_loss", ignore_index)
    if weight is not None:
        weight = backend.to_device(backend.to_numpy(weight.data if isinstance(weight, Tensor) else weight),
                                   log_probs.device)
    return NllLoss(ignore_index, reduction, weight)(log_probs, as_indices(targets, log_probs))


class BinaryCrossEntropy(_Loss):
    """Binary cross-entropy of probabilities p in [0, 1] against targets y (same shape, any value
    in [0, 1]), elementwise:

        loss = -(y * max(log p, -100) + (1 - y) * max(log(1 - p), -100))

    (the floor at -100 is PyTorch's: p = 0 or 1 gives a finite loss).
    backward:  dp = dloss * (p - y) / max(p (1 - p), 1e-12)
               dy = dloss * (max(log(1 - p), -100) - max(log p, -100))
    Prefer BinaryCrossEntropyWithLogits on logits: it never needs the floor.

    Derivation: docs/backprop/losses.md
    """

    def forward(self, p, y):
        xp = get_array_module(p)
        self._check_same_shape(p, y, "targets")
        if p.size and not bool(backend.to_host(((p >= 0) & (p <= 1)).all())):
            raise ValueError("binary_cross_entropy: every input must be a probability in [0, 1]; "
                             "for logits use binary_cross_entropy_with_logits")
        with quiet_float_errors(xp):  # log 0 = -inf before the floor
            log_p = xp.maximum(xp.log(p), _LOG_FLOOR)
            log_q = xp.maximum(xp.log(1 - p), _LOG_FLOOR)
        self.save_for_backward(p, y, log_p, log_q)
        return self._reduce(-(y * log_p + (1 - y) * log_q), p.size)

    def backward(self, dy):
        p, y, log_p, log_q = self.saved
        xp = get_array_module(p)
        dloss = self._row_gradient(dy)
        dp = dloss * (p - y) / xp.maximum(p * (1 - p), _EPS) if self.needs_input_grad[0] else None
        dtarget = dloss * (log_q - log_p) if self.needs_input_grad[1] else None
        return dp, dtarget


def binary_cross_entropy(probs, targets, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) elementwise, p in [0, 1]; logs floored at -100 as in PyTorch."""
    return BinaryCrossEntropy(reduction)(*_pointwise_operands("binary_cross_entropy", probs, targets))


class BinaryCrossEntropyWithLogits(_Loss):
    """Binary cross-entropy on logits x (p = sigma(x)) against targets y, elementwise, with an
    optional positive-class weight w (a constant broadcast against x; 1 when None):

        loss = -(w y log sigma(x) + (1 - y) log(1 - sigma(x)))
             = w y softplus(-x) + (1 - y) (x + softplus(-x))
    using log sigma(x) = -softplus(-x) and log(1 - sigma(x)) = -x - softplus(-x), both without
    overflow (softplus in its stable form, see ops/activation.py).

    backward:  dx = dloss * (sigma(x) (w y + 1 - y) - w y)
               dy = dloss * ((w - 1) softplus(-x) - x)

    Derivation: docs/backprop/losses.md
    """

    def __init__(self, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, x, y):
        self._check_same_shape(x, y, "targets")
        w = 1.0 if self.pos_weight is None else self.pos_weight
        try:  # w weighs the entries of x: it may not add entries (the mean would count x's alone)
            fits = np.broadcast_shapes(np.shape(w), x.shape) == x.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"binary_cross_entropy_with_logits: pos_weight of shape {np.shape(w)} must broadcast to "
                             f"the logits' shape {x.shape}")
        sp = softplus_values(-x)
        self.save_for_backward(x, y, sp)
        return self._reduce(w * y * sp + (1 - y) * (x + sp), x.size)

    def backward(self, dy):
        x, y, sp = self.saved
        w = 1.0 if self.pos_weight is None else self.pos_weight
        dloss = self._row_gradient(dy)
        dx = dloss * (sigmoid_values(x) * (w * y + 1 - y) - w * y) if self.needs_input_grad[0] else None
        dtarget = dloss * ((w - 1) * sp - x) if self.needs_input_grad[1] else None
        return dx, dtarget


def binary_cross_entropy_with_logits(logits, targets, reduction="mean", pos_weight=None):
    """Binary cross-entropy of sigmoid(logits), computed stably from the logits; pos_weight (a
    number or a constant tensor broadcast against logits) weighs the positive targets."""
    weight = pos_weight.data if isinstance(pos_weight, Tensor) else pos_weight
    return BinaryCrossEntropyWithLogits(reduction, weight)(
        *_pointwise_operands("binary_cross_entropy_with_logits", logits, targets))



# ---------------------------------------------------------------- margin and ranking losses
# Each is composed of differentiable ops (clip, relu, where, logsigmoid, sums): their backward is
# the chain rule through those, and the formula in each docstring is the code's. A hinge max(0, h)
# is clip(h, min=0) where PyTorch's clamp_min passes dy at h = 0, and relu(h) where its kernel
# counts only h > 0 (multi_margin_loss, multilabel_margin_loss), so the ties take PyTorch's gradient.


def _operands(op, first, *others):
    """The inputs and targets of a loss as tensors of one float dtype (integers take the floats',
    float32 without one, as PyTorch's promotion gives them)."""
    first = floating(first)
    return one_dtype(first, *(as_tensor(value, first) for value in others))


def _check_shapes(op, x, *others, what=("targets",)):
    """Refuse another shape than the input's (PyTorch would broadcast it, and 'mean' would count
    the broadcast entries)."""
    for name, other in zip(what, others):
        if other.shape != x.shape:
            raise ValueError(f"{op}: {name} of shape {other.shape} must match the input's shape {x.shape}")


def _check_signs(op, y):
    """Targets that say 'similar' (1) or 'dissimilar' (-1): PyTorch scores any other value as
    neither (0, cosine_embedding_loss) or both (hinge_embedding_loss), silently."""
    if y.size and not bool(backend.to_host(((y.data == 1) | (y.data == -1)).all())):
        bad = y.data[(y.data != 1) & (y.data != -1)].reshape(-1)[0]
        raise ValueError(f"{op}: targets must be 1 or -1, got {bad.item()!r}")


def _float(op, name, value, bound=None):
    """A margin, an eps, a beta as a float (see _args.number)."""
    return float(number(op, name, value, bound))


_COSINE_EPS = 1e-12  # PyTorch's, added to each squared norm: a zero vector's cosine is 0, not 0 / 0


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):  # noqa: A002
    """Pull pairs of vectors together (y = 1) or push them below a cosine of ``margin`` (y = -1),
    x1 and x2 of shape [N, D] (or [D]) with targets y [N] (or []), composed of ops:

        cos  = sum(x1 * x2) / sqrt((sum(x1 * x1) + 1e-12) * (sum(x2 * x2) + 1e-12))   over D
        loss = 1 - cos   where y = 1,    max(0, cos - margin)   where y = -1

    as PyTorch computes it (its epsilon inside the root, not cosine_similarity's)."""
    op = "cosine_embedding_loss"
    _check_reduction(op, reduction)
    margin = _float(op, "margin", margin)
    x1, x2, y = _operands(op, input1, input2, target)
    if x1.ndim not in (1, 2) or x2.shape != x1.shape or y.shape != x1.shape[:-1]:
        raise ValueError(f"{op}: inputs of shapes {x1.shape} and {x2.shape} with targets of shape {y.shape}; "
                         "expected two inputs [N, D] with targets [N], or [D] with a 0-d target")
    _check_signs(op, y)
    dot = reduction_ops.sum(x1 * x2, axis=-1)
    cos = dot / sqrt((reduction_ops.sum(x1 * x1, axis=-1) + _COSINE_EPS)
                     * (reduction_ops.sum(x2 * x2, axis=-1) + _COSINE_EPS))
    return _reduced(where(y == 1, 1 - cos, clip(cos - margin, min=0.0)), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):  # noqa: A002
    """Rank x1 above x2 where y = 1 and below where y = -1, by at least ``margin``, elementwise
    (x1, x2, y of one shape), composed of ops:

        loss = max(0, -y * (x1 - x2) + margin)"""
    op = "margin_ranking_loss"
    _check_reduction(op, reduction)
    margin = _float(op, "margin", margin)
    x1, x2, y = _operands(op, input1, input2, target)
    _check_shapes(op, x1, x2, y, what=("input2", "targets"))
    return _reduced(clip(-y * (x1 - x2) + margin, min=0.0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):  # noqa: A002
    """For distances x (say |a - b|): small where y = 1, at least ``margin`` where y = -1,
    elementwise (x, y of one shape), composed of ops:

        loss = x   where y = 1,    max(0, margin - x)   where y = -1"""
    op = "hinge_embedding_loss"
    _check_reduction(op, reduction)
    margin = _float(op, "margin", margin)
    x, y = _operands(op, input, target)
    _check_shapes(op, x, y)
    _check_signs(op, y)
    return _reduced(where(y == 1, x, clip(margin - x, min=0.0)), reduction)


def soft_margin_loss(input, target, reduction="mean"):  # noqa: A002
    """The logistic loss of scores x against labels y (1 or -1; x, y of one shape), composed of ops:

        loss = log(1 + e^(-y x)) = -logsigmoid(y x)

    (logsigmoid's stable form: finite where PyTorch's log1p(exp(-y x)) overflows to inf)."""
    op = "soft_margin_loss"
    _check_reduction(op, reduction)
    x, y = _operands(op, input, target)
    _check_shapes(op, x, y)
    return _reduced(-logsigmoid(y * x), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):  # noqa: A002
    """One binary logistic loss per class, averaged over the classes: scores x [..., C], labels
    y in [0, 1] of x's shape, class weights w (broadcast to x's shape; a constant), composed of ops:

        loss = mean_c  w_c * -(y_c logsigmoid(x_c) + (1 - y_c) logsigmoid(-x_c))      one per row

    (the bracket is binary_cross_entropy_with_logits, elementwise)."""
    op = "multilabel_soft_margin_loss"
    _check_reduction(op, reduction)
    x, y = _operands(op, input, target)
    if x.ndim < 1:
        raise ValueError(f"{op}: input must have a class axis (last), got a 0-d tensor")
    _check_shapes(op, x, y)
    check_classes(op, x)
    losses = binary_cross_entropy_with_logits(x, y, "none")
    if weight is not None:
        w = _constant(weight, x)
        if not broadcasts_to(w.shape, x.shape):
            raise ValueError(f"{op}: weight of shape {w.shape} must broadcast to the input's shape {x.shape}")
        losses = losses * w
    return _reduced(reduction_ops.mean(losses, axis=-1), reduction)


def _class_weight(op, weight, x):
    """A class weight [C] as a constant tensor in x's dtype on x's device."""
    w = _constant(weight, x)
    if w.shape != x.shape[-1:]:
        raise ValueError(f"{op}: weight has shape {w.shape}, expected ({x.shape[-1]},), one per class of the "
                         f"input {x.shape}")
    return w


def _class_ids(op, x, target, *, allowed_low=0):
    """Integer targets checked into [allowed_low, C) for scores x [..., C] (C > 0)."""
    t = as_indices(target, x)
    _check_integer(op, "targets", t)
    if x.ndim not in (1, 2) or not x.shape[-1]:
        raise ValueError(f"{op}: input must be [N, C] or [C] with C > 0, got {x.shape}")
    classes = x.shape[-1]
    sync.check_in_range(t.data, classes, lambda value: IndexError(
        f"{op}: target {value} is out of range for {classes} classes"), low=allowed_low)
    return Tensor(sync.within_range(t.data, classes, allowed_low))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):  # noqa: A002
    """The multi-class hinge loss of scores x [N, C] (or [C]) with class ids t [N] (or []), each
    other class i scored against the target's by ``margin``, composed of ops:

        loss = sum_{i != t}  w_t * max(0, margin - x_t + x_i)^p  / C         one per row

    (p 1 or 2; w the class weights [C], a constant, 1 without them). The hinge counts where
    margin - x_t + x_i > 0 (relu), as PyTorch's: at 0 it passes no gradient."""
    op = "multi_margin_loss"
    _check_reduction(op, reduction)
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p not in (1, 2):
        raise ValueError(f"{op}: p must be 1 or 2, got {p!r}")
    margin = _float(op, "margin", margin)
    x = floating(input)
    t = _class_ids(op, x, target)
    if t.shape != x.shape[:-1]:
        raise ValueError(f"{op}: input of shape {x.shape} needs targets of shape {x.shape[:-1]}, got {t.shape}")
    picked = take_along_dim(x, unsqueeze(t, -1), axis=-1)  # x_t, [N, 1]
    hinge = relu(margin - picked + x)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * Tensor(_class_weight(op, weight, x).data[t.data][..., None])
    others = Tensor(get_array_module(t.data).arange(x.shape[-1]) != t.data[..., None])
    return _reduced(reduction_ops.mean(where(others, hinge, 0.0), axis=-1), reduction)


def multilabel_margin_loss(input, target, reduction="mean"):  # noqa: A002
    """The hinge loss of scores x [N, C] (or [C]) for several classes per row: targets [N, C]
    hold a row's class ids first, then -1 (what follows a -1 is not read). With J the ids before
    the first -1 and I the classes not among them, composed of ops:

        loss = sum_{j in J} sum_{i in I}  max(0, 1 - (x_j - x_i))  / C         one per row

    (an id listed twice counts twice, as PyTorch's). The hinge counts where 1 - x_j + x_i > 0
    (relu), as PyTorch's. Builds a [N, C, C] tensor of pairs."""
    op = "multilabel_margin_loss"
    _check_reduction(op, reduction)
    x = floating(input)
    t = _class_ids(op, x, target, allowed_low=-1)
    if t.shape != x.shape:
        raise ValueError(f"{op}: targets of shape {t.shape} must match the input's shape {x.shape}")
    xp = get_array_module(t.data)
    listed = xp.cumsum(t.data == -1, axis=-1) == 0  # the ids before the first -1
    ids = xp.where(listed, t.data, 0)
    classes = xp.arange(x.shape[-1])
    is_target = ((ids[..., :, None] == classes) & listed[..., :, None]).any(axis=-2)  # [N, C]
    picked = take_along_dim(x, Tensor(ids), axis=-1)  # x_j for each listed position j
    hinge = relu(1 - unsqueeze(picked, -1) + unsqueeze(x, -2))  # [N, j, i]
    pairs = Tensor(listed[..., :, None] & ~is_target[..., None, :])
    return _reduced(reduction_ops.sum(where(pairs, hinge, 0.0), axis=(-2, -1)) / x.shape[-1], reduction)


def _triplet(op, anchor, positive, negative, distance, margin, swap, reduction):
    """max(0, margin + d(a, p) - d(a, n)), with d(a, n) replaced by min(d(a, n), d(p, n)) when
    ``swap`` (Balntas et al.'s distance swap: the positive's distance to the negative, if it is
    nearer). ``distance`` gives one distance per row; the two must have one shape."""
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    if d_pos.shape != d_neg.shape:
        raise ValueError(f"{op}: the distances to the positive {d_pos.shape} and to the negative {d_neg.shape} "
                         "differ in shape")
    return _reduced(clip(margin + d_pos - d_neg, min=0.0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    """An anchor [N, D] (or [D]) nearer its positive than its negative by ``margin`` (> 0), with
    pairwise_distance's p-norm (eps added to the differences, as PyTorch's), composed of ops:

        loss = max(0, margin + ||a - p + eps||_p - ||a - n + eps||_p)      one per row

    (see _triplet for swap). The three of one shape."""
    op = "triplet_margin_loss"
    _check_reduction(op, reduction)
    margin = _float(op, "margin", margin, "> 0")
    a, pos, neg = _operands(op, anchor, positive, negative)
    _check_shapes(op, a, pos, neg, what=("positive", "negative"))
    if a.ndim not in (1, 2):
        raise ValueError(f"{op}: inputs must be [N, D] or [D], got {a.shape}")
    return _triplet(op, a, pos, neg, lambda u, v: pairwise_distance(u, v, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with any distance: ``distance_function(x1, x2)`` gives one distance per
    row (default pairwise_distance, p = 2), composed of it and ops:

        loss = max(0, margin + d(a, p) - d(a, n))                          one per row

    (see _triplet for swap). The three of one number of axes, as PyTorch's."""
    op = "triplet_margin_with_distance_loss"
    _check_reduction(op, reduction)
    margin = _float(op, "margin", margin, "> 0")
    a, pos, neg = (as_tensor(v) for v in (anchor, positive, negative))
    if not a.ndim == pos.ndim == neg.ndim:
        raise ValueError(f"{op}: anchor, positive and negative must have one number of axes, got shapes "
                         f"{a.shape}, {pos.shape} and {neg.shape}")
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(op, a, pos, neg, distance, margin, swap, reduction)


# ---------------------------------------------------------------- regression losses
class MseLoss(_Loss):
    """loss = (x - y)^2 elementwise (x and y of one shape).   dx = dloss * 2 (x - y),  dy = -dx

    Derivation: docs/backprop/losses.md
    """

    def forward(self, x, y):
        self._check_same_shape(x, y, "targets")
        d = x - y
        self.save_for_backward(d)
        return self._reduce(d * d, d.size)

    def backward(self, dy):
        (d,) = self.saved
        dx = self._row_gradient(dy) * 2 * d
        return dx, -dx


def mse_loss(input, target, reduction="mean"):  # noqa: A002 (PyTorch's names)
    """The squared error (input - target)^2, reduced; the shapes must match (PyTorch broadcasts
    them with a warning)."""
    return MseLoss(reduction)(*_pointwise_operands("mse_loss", input, target))


class SmoothL1Loss(_Loss):
    """With d = x - y elementwise, a quadratic near 0 and a line beyond ``beta``, times ``scale``:

        loss = scale * (d^2 / (2 beta)   where |d| < beta,   |d| - beta / 2   elsewhere)
        dx = dloss * scale * (d / beta   where |d| < beta,   sign(d)          elsewhere),  dy = -dx

    beta = 0 is the absolute error |d| (l1_loss; its gradient at d = 0 is 0, as PyTorch's);
    scale = beta = delta is the Huber loss (huber_loss). Both pieces meet at |d| = beta with
    the same value and slope.

    Derivation: docs/backprop/losses.md
    """

    def __init__(self, reduction="mean", beta=1.0, scale=1.0):
        super().__init__(reduction)
        self.beta, self.scale = beta, scale

    def forward(self, x, y):
        self._check_same_shape(x, y, "targets")
        xp = get_array_module(x)
        d = x - y
        magnitude = xp.abs(d)
        self.near = magnitude < self.beta  # (none for beta = 0)
        if self.beta:
            loss = xp.where(self.near, d * d / (2 * self.beta), magnitude - self.beta / 2)
        else:
            loss = magnitude
        self.save_for_backward(d)
        return self._reduce(self.scale * loss, d.size)

    def backward(self, dy):
        (d,) = self.saved
        xp = get_array_module(d)
        slope = xp.where(self.near, d / self.beta, xp.sign(d)) if self.beta else xp.sign(d)
        dx = self._row_gradient(dy) * self.scale * slope
        return dx, -dx


def _regression(op_name, input, target, reduction, beta, scale):  # noqa: A002
    """SmoothL1Loss(reduction, beta, scale) of input and target, beta checked (as ``op_name``'s)."""
    beta = _float(op_name, "delta" if op_name == "huber_loss" else "beta", beta, ">= 0")
    return SmoothL1Loss(reduction, beta, float(scale))(*_pointwise_operands(op_name, input, target))


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    """The absolute error |input - target|, reduced (SmoothL1Loss with beta 0)."""
    return _regression("l1_loss", input, target, reduction, 0.0, 1.0)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):  # noqa: A002
    """Quadratic below beta, absolute beyond (SmoothL1Loss), reduced."""
    return _regression("smooth_l1_loss", input, target, reduction, beta, 1.0)


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """Quadratic below delta, delta * (|d| - delta / 2) beyond: delta * smooth_l1_loss(beta=delta)."""
    delta = _float("huber_loss", "delta", delta, "> 0")
    return _regression("huber_loss", input, target, reduction, delta, delta)


# ---------------------------------------------------------------- Poisson and Gaussian likelihoods
def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):  # noqa: A002
    """The negative log-likelihood of counts y under a Poisson of rate lambda, elementwise (x, y
    of one shape), up to the constant log(y!), composed of ops:

        loss = e^x - y x                 log_input (x = log lambda)
               x - y log(x + eps)        otherwise (x = lambda)
        full:  + y log y - y + log(2 pi y) / 2   where y > 1 (Stirling's log(y!); 0 elsewhere)

    The Stirling term is computed on y with 2 in the places it does not count, so that its
    log never sees y <= 1: y's gradient is 0 there (PyTorch's is NaN at y = 0)."""
    op = "poisson_nll_loss"
    _check_reduction(op, reduction)
    eps = _float(op, "eps", eps)
    x, y = _operands(op, input, target)
    _check_shapes(op, x, y)
    losses = exp(x) - y * x if log_input else x - y * log(x + eps)
    if full:
        counted = Tensor(~(y.data <= 1))  # (a NaN count counts, and makes its loss NaN, as PyTorch's)
        safe = where(counted, y, 2.0)
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        losses = losses + where(counted, stirling, 0.0)
    return _reduced(losses, reduction)


class GaussianNll(_Loss):
    """The negative log-likelihood of y under a Gaussian of mean x and variance var, elementwise
    (var broadcast to x's shape by gaussian_nll_loss), the variance held at eps or above:

        v = max(var, eps),   d = x - y
        loss = (log v + d^2 / v) / 2       (+ log(2 pi) / 2 with ``full``)

    backward:  dx = dloss * d / v,   dy = -dx,   dvar = dloss * (1 / v - d^2 / v^2) / 2
    dvar is taken at v even where var < eps, as PyTorch's: it clamps a copy of var that autograd
    does not see, so the gradient passes the clamp as if it were not there (the engine then sums
    it over the axes var was broadcast along).
    """

    def __init__(self, reduction="mean", full=False, eps=1e-6):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, x, y, var):
        xp = get_array_module(x)
        v = xp.maximum(var, self.eps)
        d = x - y
        self.save_for_backward(d, v)
        with quiet_float_errors(xp):  # a variance of 0 with eps 0: log 0 and d^2 / 0, inf as in PyTorch
            loss = 0.5 * (xp.log(v) + d * d / v)
        if self.full:
            loss = loss + 0.5 * math.log(2 * math.pi)
        return self._reduce(loss, loss.size)

    def backward(self, dy):
        d, v = self.saved
        dloss = self._row_gradient(dy)
        with quiet_float_errors(get_array_module(d)):
            ratio = d / v
            dx = dloss * ratio
            dvar = dloss * 0.5 * (1 / v - ratio * ratio) if self.needs_input_grad[2] else None
        return dx, -dx, dvar


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    """GaussianNll of input (the means) and target (one shape) with variances ``var``: a number, a
    tensor of the input's shape, of its shape without the last axis (one variance per row), or of
    its number of axes with 1 on exactly one axis where the input's is not, as PyTorch's rules."""
    op = "gaussian_nll_loss"
    _check_reduction(op, reduction)
    eps = _float(op, "eps", eps)
    x, y = _operands(op, input, target)
    _check_shapes(op, x, y)
    given_number = isinstance(var, numbers.Real) and not isinstance(var, bool)
    x, y, var = _operands(op, x, y, var)
    if var.shape != x.shape and not given_number:
        mismatched = [n for n, m in zip(var.shape, x.shape) if n != m]
        if var.shape == x.shape[:-1]:  # one variance per row
            var = unsqueeze(var, -1)
        elif not (var.ndim == x.ndim and sum(mismatched) == 1 and broadcasts_to(var.shape, x.shape)):
            raise ValueError(f"{op}: var of shape {var.shape} does not fit the input's shape {x.shape}; expected "
                             f"{x.shape}, {x.shape[:-1]}, or {x.ndim} axes with 1 on exactly one axis where the "
                             "input's is not")
    if var.size and bool(backend.to_host((var.data < 0).any())):
        raise ValueError(f"{op}: every variance must be >= 0, got {var.data[var.data < 0].reshape(-1)[0].item()!r}")
    return GaussianNll(reduction, bool(full), eps)(x, y, var)


# ---------------------------------------------------------------- Kullback-Leibler divergence
class KlDiv(Function):
    """KL(target || model) pointwise, with the model's log-probabilities x and the target's
    probabilities y (or, with ``log_target``, their logarithms t = log y):

        loss = y (log y - x)          (0 where y = 0 and x is finite: the limit of y log y; NaN at x = -inf)
        dx = -dloss * y,    dy = dloss * (log y + 1 - x)   (-inf where y = 0, the one-sided limit;
                                                            PyTorch's is NaN there)
        log_target:  loss = e^t (t - x),  dx = -dloss * e^t,  dt = dloss * e^t (t - x + 1)

    reduction: 'batchmean' (the sum over the batch's first axis divided by its length: the
    divergence per sample, what the math means), 'sum', 'none', or 'mean' (over every element,
    PyTorch's default, which it warns is not the divergence).

    Derivation: docs/backprop/losses.md
    """

    def __init__(self, reduction="mean", log_target=False):
        if reduction not in _REDUCTIONS + ("batchmean",):
            raise ValueError(f"kl_div: reduction must be 'batchmean', 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, x, t):
        if x.shape != t.shape:
            raise ValueError(f"kl_div: targets of shape {t.shape} must match the input's shape {x.shape}")
        xp = get_array_module(x)
        if self.log_target:
            y = xp.exp(t)
            loss = y * (t - x)
        else:
            y = t
            if y.size and bool(backend.to_host((y < 0).any())):
                raise ValueError("kl_div: every target must be a probability (>= 0); for log-probabilities "
                                 "pass log_target=True")
            log_y = xp.log(xp.where(y > 0, y, 1))  # (log 1 = 0 where y = 0: that term is 0 anyway)
            loss = y * (log_y - x)
        self.save_for_backward(x, t, y)
        self.count = x.shape[0] if self.reduction == "batchmean" and x.ndim else x.size
        if self.reduction == "none":
            return loss
        total = loss.sum()
        return total if self.reduction == "sum" else per_count(total, self.count)

    def backward(self, dy):
        x, t, y = self.saved
        xp = get_array_module(x)
        dloss = dy if self.reduction in ("none", "sum") else per_count(dy, self.count)
        dx = -dloss * y
        if self.log_target:
            dt = dloss * y * (t - x + 1)
        else:
            with quiet_float_errors(xp):  # log 0 = -inf: the one-sided derivative of y log y at 0
                dt = dloss * (xp.log(y) + 1 - x)
        return dx, dt


def kl_div(input, target, reduction="mean", log_target=False):  # noqa: A002
    """The Kullback-Leibler divergence of the target from the model's log-probabilities ``input``
    (see KlDiv; reduction='batchmean' is the divergence per sample)."""
    return KlDiv(reduction, bool(log_target))(*_pointwise_operands("kl_div", input, target))
