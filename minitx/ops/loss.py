"""Losses beside CrossEntropy (ops/nn.py): negative log-likelihood, binary cross-entropy on
probabilities and on logits, and cross-entropy against probability targets.

Each computes one loss per row (per element for the binary losses), then reduces it:
'mean' divides the sum by the number of counted rows, 'sum' adds, 'none' returns them all.
Backward first turns dy into dloss, the gradient of each row's loss (_row_gradient).
"""
from __future__ import annotations

from minitx.autograd.function import Function
from minitx.backend import get_array_module, host_ints
from minitx.ops.activation import sigmoid_values, softplus_values
from minitx.ops.reduction import logsumexp_parts
from minitx.ops.scan import quiet_float_errors

__all__ = ["NllLoss", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "SoftCrossEntropy"]

_REDUCTIONS = ("mean", "sum", "none")
_LOG_FLOOR = -100.0  # PyTorch clamps log(p) at -100 in binary_cross_entropy: a finite loss at p = 0
_EPS = 1e-12  # and its gradient divides by max(p (1 - p), 1e-12)


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
        return total / max(count, 1) if self.reduction == "mean" else total

    def _row_gradient(self, dy):
        """d total / d loss_row: dy itself for 'none', dy / count for 'mean', dy for 'sum'."""
        return dy / max(self.count, 1) if self.reduction == "mean" else dy

    def _check_same_shape(self, a, b, what):
        if a.shape != b.shape:
            raise ValueError(f"{self.name}: {what} of shape {b.shape} must match the input's shape {a.shape}")


class NllLoss(_Loss):
    """Negative log-likelihood of log-probabilities x [..., C] at integer targets t [...]:

        loss = -x[t]   per row (rows whose target is ``ignore_index`` count for nothing)

    backward:  dx[..., t] = -dloss_row (0 elsewhere and on ignored rows); no gradient for t
    """

    def __init__(self, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, x, t):
        xp = get_array_module(x)
        if t.dtype.kind not in "iu":
            raise TypeError(f"nll_loss: targets must be an integer tensor, got dtype {t.dtype.name}")
        if x.ndim < 1 or x.shape[:-1] != t.shape:
            raise ValueError(f"nll_loss: log-probabilities {x.shape} need targets of shape {x.shape[:-1]}, "
                             f"got {t.shape}")
        valid = t != self.ignore_index
        safe_t = xp.where(valid, t, 0)
        classes = x.shape[-1]
        low, high, count = host_ints(safe_t.min(), safe_t.max(), valid.sum()) if t.size else (0, 0, 0)
        if t.size and (low < 0 or high >= classes):
            raise IndexError(f"nll_loss: target {low if low < 0 else high} is out of range for {classes} classes "
                             f"(ignore_index is {self.ignore_index})")
        self.save_for_backward(safe_t, valid)
        self.in_shape = x.shape
        picked = xp.take_along_axis(x, safe_t[..., None], axis=-1)[..., 0]
        return self._reduce(xp.where(valid, -picked, 0), count)  # not * valid: an ignored -inf is no NaN

    def backward(self, dy):
        safe_t, valid = self.saved
        xp = get_array_module(dy)
        picked = xp.arange(self.in_shape[-1]) == safe_t[..., None]  # one-hot rows
        return picked * (-self._row_gradient(dy) * valid)[..., None], None


class BinaryCrossEntropy(_Loss):
    """Binary cross-entropy of probabilities p in [0, 1] against targets y (same shape, any value
    in [0, 1]), elementwise:

        loss = -(y * max(log p, -100) + (1 - y) * max(log(1 - p), -100))

    (the floor at -100 is PyTorch's: p = 0 or 1 gives a finite loss).
    backward:  dp = dloss * (p - y) / max(p (1 - p), 1e-12)
               dy = dloss * (max(log(1 - p), -100) - max(log p, -100))
    Prefer BinaryCrossEntropyWithLogits on logits: it never needs the floor.
    """

    def forward(self, p, y):
        xp = get_array_module(p)
        self._check_same_shape(p, y, "targets")
        if p.size and not bool(((p >= 0) & (p <= 1)).all()):
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


class BinaryCrossEntropyWithLogits(_Loss):
    """Binary cross-entropy on logits x (p = sigma(x)) against targets y, elementwise, with an
    optional positive-class weight w (a constant broadcast against x; 1 when None):

        loss = -(w y log sigma(x) + (1 - y) log(1 - sigma(x)))
             = w y softplus(-x) + (1 - y) (x + softplus(-x))
    using log sigma(x) = -softplus(-x) and log(1 - sigma(x)) = -x - softplus(-x), both without
    overflow (softplus in its stable form, see ops/activation.py).

    backward:  dx = dloss * (sigma(x) (w y + 1 - y) - w y)
               dy = dloss * ((w - 1) softplus(-x) - x)
    """

    def __init__(self, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, x, y):
        self._check_same_shape(x, y, "targets")
        w = 1.0 if self.pos_weight is None else self.pos_weight
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
        xp = get_array_module(x)
        _, total, m, log_total = logsumexp_parts(x, -1)
        with quiet_float_errors(xp):  # total == 0 (not total > 0): a NaN logit makes its row NaN
            logp = xp.where(total == 0, -xp.inf, (x - m) - log_total)
        smoothed = (1 - self.smoothing) * q + self.smoothing / x.shape[-1]
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
