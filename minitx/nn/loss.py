"""Losses as modules, as PyTorch names them: each holds its options and calls its function."""
from __future__ import annotations

import minitx.functional as F
from minitx.nn.module import Module

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self):
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """F.cross_entropy(logits [..., C], targets): class ids, or probabilities [..., C]."""

    def __init__(self, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets, self.ignore_index, self.label_smoothing, self.reduction)


class NLLLoss(_Loss):
    """F.nll_loss(log_probs [..., C], class ids), each class weighted by ``weight`` [C] (default ones)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, log_probs, targets):
        return F.nll_loss(log_probs, targets, self.ignore_index, self.reduction, weight=self.weight)


class MSELoss(_Loss):
    """(x - y)^2 elementwise, then the mean, the sum, or none of them. Composed of ops, so its
    gradient 2 (x - y) / n comes from theirs."""

    def forward(self, x, y):
        squared = (x - y) * (x - y)
        if self.reduction == "none":
            return squared
        return F.mean(squared) if self.reduction == "mean" else F.sum(squared)


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits, with pos_weight for the positive targets."""

    def __init__(self, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, logits, targets):
        return F.binary_cross_entropy_with_logits(logits, targets, self.reduction, self.pos_weight)
