"""Losses as modules, as PyTorch names them: each holds its options and calls its function.

The arguments follow PyTorch's signatures: a weight first (the losses that take one), then the
options, keyword-only (PyTorch's deprecated size_average and reduce sit between, so a positional
call written for PyTorch is refused here rather than read as other options). A weight is kept
as a buffer: it moves with ``to()`` and is saved in ``state_dict()``, as PyTorch's is.
"""
from __future__ import annotations

import numpy as np

import minitx.functional as F
from minitx import backend
from minitx.autograd.tensor import Tensor, tensor
from minitx.nn.module import Module

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    def __init__(self, *, reduction="mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def _set_weight(self, name, value, per_class=False):
        """``value`` (a tensor, array or list of numbers; None for none) as the buffer ``name``:
        a copy, on the device it was on, floating (integers become float32). ``per_class``: one
        weight per class, a 1-d tensor."""
        if value is None:
            setattr(self, name, None)
            return
        what = f"{type(self).__name__}: {name} must be a tensor of numbers"
        try:
            value = tensor(value, device=value.device if isinstance(value, Tensor) else None)
        except (TypeError, ValueError) as error:
            hint = " (the options after it are keyword-only: reduction=..., say)" if isinstance(value, str) else ""
            raise TypeError(f"{what}, got {value!r:.80}{hint}") from error
        if value.dtype.kind not in "fiu":
            raise TypeError(f"{what}, got one of dtype {value.dtype.name}")
        if value.dtype.kind != "f":
            value = value.astype(backend.DEFAULT_FLOAT)
        if per_class and value.ndim != 1:
            raise ValueError(f"{type(self).__name__}: {name} must hold one weight per class (shape (C,)), "
                             f"got shape {value.shape}")
        self.register_buffer(name, value)

    def _reduced(self, losses):
        """The per-row (or per-element) losses, reduced: their mean (0 over none, as F's losses),
        their sum, or none of them."""
        if self.reduction == "none":
            return losses
        return F.mean(losses) if self.reduction == "mean" and losses.size else F.sum(losses)

    def extra_repr(self):
        return f"reduction={self.reduction!r}"


def _weighted(owner, losses, weight):
    """Each element's loss times ``weight``, which must broadcast to the losses' shape, as
    PyTorch's: one that broadcasts only together with them ([3, 1] beside [3]) would grow the
    losses to [3, 3] and average over 9 entries without a word."""
    shape = tuple(losses.shape)
    try:
        fits = np.broadcast_shapes(tuple(weight.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{owner}: weight of shape {tuple(weight.shape)} must broadcast to the input's shape {shape}")
    return losses * _like(weight, losses)


def _like(weight, x):
    """A weight buffer as a constant tensor in x's dtype, on x's device."""
    return Tensor(backend.to_device(weight.data, x.device).astype(x.dtype, copy=False))


class CrossEntropyLoss(_Loss):
    """F.cross_entropy(logits [..., C], targets): class ids, or probabilities [..., C];
    ``weight`` [C] (default ones) weighs each class, as in PyTorch (the math: the weighted form
    beside F.cross_entropy, minitx/ops/loss.py)."""

    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction=reduction)
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing!r}")
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self._set_weight("weight", weight, per_class=True)

    def forward(self, logits, targets):
        if self.weight is not None and tuple(self.weight.shape) != (logits.shape[-1],):
            raise ValueError(f"CrossEntropyLoss: weight has shape {tuple(self.weight.shape)}, expected "
                             f"({logits.shape[-1]},), one per class of the logits {logits.shape}")
        return F.cross_entropy(logits, targets, self.ignore_index, self.label_smoothing, self.reduction,
                               weight=self.weight)

    def extra_repr(self):
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class NLLLoss(_Loss):
    """F.nll_loss(log_probs [..., C], class ids), each class weighted by ``weight`` [C] (default ones)."""

    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean"):
        super().__init__(reduction=reduction)
        self.ignore_index = ignore_index
        self._set_weight("weight", weight, per_class=True)

    def forward(self, log_probs, targets):
        return F.nll_loss(log_probs, targets, self.ignore_index, self.reduction, weight=self.weight)


class MSELoss(_Loss):
    """F.mse_loss: (x - y)^2 elementwise (x and y of one shape), then the mean, the sum, or none."""

    def __init__(self, *, reduction="mean"):  # (its own: a positional call's error names MSELoss)
        super().__init__(reduction=reduction)

    def forward(self, x, y):
        return F.mse_loss(x, y, self.reduction)


class L1Loss(_Loss):
    """F.l1_loss: |x - y| elementwise, reduced."""

    def __init__(self, *, reduction="mean"):
        super().__init__(reduction=reduction)

    def forward(self, x, y):
        return F.l1_loss(x, y, self.reduction)


class SmoothL1Loss(_Loss):
    """F.smooth_l1_loss: quadratic where |x - y| < beta, absolute beyond, reduced."""

    def __init__(self, *, reduction="mean", beta=1.0):
        super().__init__(reduction=reduction)
        self.beta = beta

    def forward(self, x, y):
        return F.smooth_l1_loss(x, y, self.reduction, self.beta)

    def extra_repr(self):
        return f"reduction={self.reduction!r}, beta={self.beta}"


class HuberLoss(_Loss):
    """F.huber_loss: quadratic where |x - y| <= delta, delta * (|x - y| - delta / 2) beyond, reduced."""

    def __init__(self, *, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, x, y):
        return F.huber_loss(x, y, self.reduction, self.delta)

    def extra_repr(self):
        return f"reduction={self.reduction!r}, delta={self.delta}"


class _MarginLoss(_Loss):
    """A loss whose one option beside the reduction is its margin."""

    def __init__(self, margin, reduction):
        super().__init__(reduction=reduction)
        self.margin = margin

    def extra_repr(self):
        return f"margin={self.margin}, reduction={self.reduction!r}"


class CosineEmbeddingLoss(_MarginLoss):
    """F.cosine_embedding_loss: 1 - cos(x1, x2) where y = 1, max(0, cos - margin) where y = -1."""

    def __init__(self, margin=0.0, *, reduction="mean"):
        super().__init__(margin, reduction)

    def forward(self, x1, x2, targets):
        return F.cosine_embedding_loss(x1, x2, targets, self.margin, self.reduction)


class MarginRankingLoss(_MarginLoss):
    """F.margin_ranking_loss: max(0, -y (x1 - x2) + margin) elementwise."""

    def __init__(self, margin=0.0, *, reduction="mean"):
        super().__init__(margin, reduction)

    def forward(self, x1, x2, targets):
        return F.margin_ranking_loss(x1, x2, targets, self.margin, self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """F.hinge_embedding_loss: x where y = 1, max(0, margin - x) where y = -1."""

    def __init__(self, margin=1.0, *, reduction="mean"):
        super().__init__(margin, reduction)

    def forward(self, x, targets):
        return F.hinge_embedding_loss(x, targets, self.margin, self.reduction)


class SoftMarginLoss(_Loss):
    """F.soft_margin_loss: log(1 + e^(-y x)) elementwise, reduced."""

    def __init__(self, *, reduction="mean"):
        super().__init__(reduction=reduction)

    def forward(self, x, targets):
        return F.soft_margin_loss(x, targets, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """F.multilabel_soft_margin_loss: each class's logistic loss, times ``weight`` (broadcast
    against the input), averaged over the classes."""

    def __init__(self, weight=None, *, reduction="mean"):
        super().__init__(reduction=reduction)
        self._set_weight("weight", weight)

    def forward(self, x, targets):
        return F.multilabel_soft_margin_loss(x, targets, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """F.multi_margin_loss: the multi-class hinge loss (p 1 or 2), each row weighted by its target
    class's ``weight`` [C] (default ones)."""

    def __init__(self, p=1, margin=1.0, weight=None, *, reduction="mean"):
        super().__init__(reduction=reduction)
        if p not in (1, 2) or isinstance(p, bool):
            raise ValueError(f"MultiMarginLoss: p must be 1 or 2, got {p!r}")
        self.p, self.margin = p, margin
        self._set_weight("weight", weight, per_class=True)

    def forward(self, x, targets):
        return F.multi_margin_loss(x, targets, self.p, self.margin, self.weight, self.reduction)

    def extra_repr(self):
        return f"p={self.p}, margin={self.margin}, reduction={self.reduction!r}"


class MultiLabelMarginLoss(_Loss):
    """F.multilabel_margin_loss: each listed class against each class not listed, by a margin of 1."""

    def __init__(self, *, reduction="mean"):
        super().__init__(reduction=reduction)

    def forward(self, x, targets):
        return F.multilabel_margin_loss(x, targets, self.reduction)


class TripletMarginLoss(_Loss):
    """F.triplet_margin_loss: max(0, margin + d(a, p) - d(a, n)) with pairwise_distance's p-norm."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, *, reduction="mean"):
        super().__init__(reduction=reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     self.reduction)

    def extra_repr(self):
        return f"margin={self.margin}, p={self.p}, eps={self.eps}, swap={self.swap}, reduction={self.reduction!r}"


class TripletMarginWithDistanceLoss(_Loss):
    """F.triplet_margin_with_distance_loss: the triplet loss with ``distance_function`` (default
    pairwise_distance)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)

    def extra_repr(self):
        return f"margin={self.margin}, swap={self.swap}, reduction={self.reduction!r}"


class PoissonNLLLoss(_Loss):
    """F.poisson_nll_loss: e^x - y x (log_input) or x - y log(x + eps), with Stirling's term (full)."""

    def __init__(self, log_input=True, full=False, *, eps=1e-8, reduction="mean"):
        super().__init__(reduction=reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, x, targets):
        return F.poisson_nll_loss(x, targets, self.log_input, self.full, self.eps, self.reduction)

    def extra_repr(self):
        return f"log_input={self.log_input}, full={self.full}, eps={self.eps}, reduction={self.reduction!r}"


class GaussianNLLLoss(_Loss):
    """F.gaussian_nll_loss(means, targets, var): (log v + (x - y)^2 / v) / 2, v = max(var, eps)."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, x, targets, var):
        return F.gaussian_nll_loss(x, targets, var, self.full, self.eps, self.reduction)

    def extra_repr(self):
        return f"full={self.full}, eps={self.eps}, reduction={self.reduction!r}"


class KLDivLoss(Module):
    """F.kl_div(log-probabilities, target probabilities, or their logarithms with log_target);
    reduction 'batchmean' is the divergence per sample ('mean', PyTorch's default, averages over
    every element)."""

    def __init__(self, *, reduction="mean", log_target=False):
        super().__init__()
        if reduction not in _REDUCTIONS + ("batchmean",):
            raise ValueError(f"KLDivLoss: reduction must be 'batchmean', 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, log_probs, targets):
        return F.kl_div(log_probs, targets, self.reduction, self.log_target)

    def extra_repr(self):
        return f"reduction={self.reduction!r}, log_target={self.log_target}"


class BCELoss(_Loss):
    """F.binary_cross_entropy of probabilities, each element's loss then multiplied by ``weight``
    (broadcast against the probabilities; 'mean' divides by the number of elements, as PyTorch's)."""

    def __init__(self, weight=None, *, reduction="mean"):
        super().__init__(reduction=reduction)
        self._set_weight("weight", weight)

    def forward(self, probs, targets):
        if self.weight is None:
            return F.binary_cross_entropy(probs, targets, self.reduction)
        losses = F.binary_cross_entropy(probs, targets, "none")
        return self._reduced(_weighted("BCELoss", losses, self.weight))


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits, with pos_weight for the positive targets, each
    element's loss then multiplied by ``weight`` (broadcast against the logits; 'mean' divides
    by the number of elements, not by the weights, as PyTorch's)."""

    def __init__(self, weight=None, *, reduction="mean", pos_weight=None):
        super().__init__(reduction=reduction)
        self._set_weight("weight", weight)
        self._set_weight("pos_weight", pos_weight)

    def forward(self, logits, targets):
        pos_weight = None if self.pos_weight is None else _like(self.pos_weight, logits)
        if self.weight is None:
            return F.binary_cross_entropy_with_logits(logits, targets, self.reduction, pos_weight)
        losses = F.binary_cross_entropy_with_logits(logits, targets, "none", pos_weight)
        return self._reduced(_weighted("BCEWithLogitsLoss", losses, self.weight))


class CTCLoss(_Loss):
    """F.ctc_loss(log_probs [T, N, C] or [T, C], targets, input_lengths, target_lengths): the CTC
    loss summed over every alignment of the targets to the frames, with its ``blank`` class; 'mean'
    divides each entry's loss by its target length, then averages, as PyTorch's."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):  # (positional, as PyTorch's)
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)

    def extra_repr(self):
        return f"blank={self.blank}, reduction={self.reduction!r}, zero_infinity={self.zero_infinity}"
