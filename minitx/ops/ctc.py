"""Connectionist temporal classification (CTC, Graves et al. 2006): the loss of per-frame class
log-probabilities against a shorter label sequence, summed over every way of aligning the labels
to the frames, as PyTorch's ``ctc_loss``. The recursions loop over the frames t only; each step
works on the whole batch and every label position at once (NumPy or CuPy arrays alike).
"""
from __future__ import annotations

import numbers

import numpy as np

from minitx import backend, sync
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor
from minitx.backend import get_array_module
from minitx.ops._args import as_indices, floating
from minitx.ops.indexing import add_at
from minitx.ops.loss import per_count

__all__ = ["CtcLoss"]


def _from_left(a, k, fill):
    """b[:, s] = a[:, s - k] along the positions, ``fill`` where s < k."""
    xp = get_array_module(a)
    edge = xp.full(a.shape[:-1] + (min(k, a.shape[-1]),), fill, dtype=a.dtype)
    return xp.concatenate([edge, a[..., :a.shape[-1] - k]], axis=-1)


def _from_right(a, k, fill):
    """b[:, s] = a[:, s + k] along the positions, ``fill`` where s + k is past the end."""
    xp = get_array_module(a)
    edge = xp.full(a.shape[:-1] + (min(k, a.shape[-1]),), fill, dtype=a.dtype)
    return xp.concatenate([a[..., k:], edge], axis=-1)


class CtcLoss(Function):
    """CTC loss of log-probabilities lp [T, N, C] (frame t, batch entry n, class c) against the
    labels of each entry n, l[n, 0 .. S_n - 1], over its first T_n frames; blank b.

    The extended labels put a blank around every label:

        ext[n] = (b, l[n, 0], b, l[n, 1], ..., b, l[n, S_n - 1], b)      positions s = 0 .. 2 S_n

    (2 S + 1 columns for the longest S = max S_n; the others' extra columns are never reached).
    An alignment visits one position s_t per frame: it starts at s_0 in {0, 1}, ends at
    s_{T_n - 1} in {2 S_n - 1, 2 S_n} (the last label or the blank after it), and each frame stays
    (s), moves on (s + 1) or skips a blank (s + 2) when skip[n, s + 2]: ext[n, s + 2] is a label
    other than ext[n, s] (two equal labels need a blank between them). With
    lpe[t, n, s] = lp[t, n, ext[n, s]], an alignment's log-probability is sum_t lpe[t, n, s_t], and

        loss[n] = -log sum over the alignments of exp(sum_t lpe[t, n, s_t])   (+inf: none exists)

    Forward, the alpha recursion: alpha[t, n, s] is the log of the summed probability of the
    alignments' first t + 1 frames that end at s, frame t included:

        alpha[0, n, s] = lpe[0, n, s] for s in {0, 1}, -inf elsewhere
        alpha[t, n, s] = lpe[t, n, s] + logsumexp(alpha[t-1, n, s], alpha[t-1, n, s-1],
                                                  alpha[t-1, n, s-2] where skip[n, s])
        loss[n] = -logsumexp(alpha[T_n - 1, n, 2 S_n], alpha[T_n - 1, n, 2 S_n - 1])
                  (T_n = 0: 0 when S_n = 0, else +inf)

    Backward, the beta recursion: beta[t, n, s] is the log of the summed probability of the
    alignments' frames after t, starting from s at t (frame t excluded):

        beta[T_n - 1, n, s] = 0 for s in {2 S_n - 1, 2 S_n}, -inf elsewhere
        beta[t, n, s] = logsumexp over s' in {s, s + 1, s + 2 where skip[n, s + 2]} of
                        lpe[t+1, n, s'] + beta[t+1, n, s']

    so exp(alpha[t, n, s] + beta[t, n, s]) sums the probabilities of the alignments at s at
    frame t, and gamma = alpha + beta + loss[n] is the log of the posterior probability of being
    there (exp(gamma) sums to 1 over s, for each t < T_n). An alignment's probability
    exp(sum_t lpe[t, n, s_t]) has the derivative itself * [ext[n, s_t] == c] with respect to
    lp[t, n, c]; summed over the alignments and divided by their total, exp(-loss[n]):

        d loss[n] / d lp[t, n, c] = -sum over s with ext[n, s] == c of exp(gamma[t, n, s])
                                    (0 for t >= T_n, and for a class not in ext[n])

    minus the expected number of alignments' visits to class c at frame t. backward multiplies it
    by dloss[n]: dy ('none'), dy ('sum'), dy / (N max(S_n, 1)) ('mean'). An infinite loss (no
    alignment) has no derivative: its gradient is NaN for t < T_n, as PyTorch's; zero_infinity
    makes that loss 0 and its gradient 0. (PyTorch's gradient adds exp(lp[t, n, c]) for t < T_n,
    the part that log_softmax's backward cancels: through log_softmax both are the same.)

    Derivation: docs/backprop/ctc.md
    """

    fresh_gradients = True

    def __init__(self, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"ctc_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.input_lengths, self.target_lengths = input_lengths, target_lengths  # T_n, S_n: host int64 [N]
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def _labels(self, targets, classes, xp):
        """l [N, S]: each entry's labels, the blank past its length; from padded targets [N, >= S]
        or concatenated ones [sum S_n]. Refuses a label out of [0, C) or equal to the blank."""
        lengths, b = self.target_lengths, self.blank
        width = int(lengths.max(initial=0))
        used = np.arange(width) < lengths[:, None]
        if targets.ndim == 2:
            labels = targets[:, :width]
        elif width:  # entry n's labels start where the earlier entries' end
            starts = np.cumsum(lengths) - lengths
            labels = targets[xp.asarray(np.minimum(starts[:, None] + np.arange(width), targets.shape[0] - 1))]
        else:
            labels = xp.zeros((lengths.size, 0), dtype=targets.dtype)
        labels = xp.where(xp.asarray(used), labels, b).astype(np.int64)
        sync.check_in_range(labels, classes, lambda value: IndexError(
            f"ctc_loss: target {value} is out of range for {classes} classes"))
        sync.check_in_range((labels == b).astype(np.int64) * xp.asarray(used), 1, lambda value: ValueError(
            f"ctc_loss: the targets hold the blank ({b}) within their lengths; a label cannot be the blank"))
        return sync.within_range(labels, classes)

    def forward(self, lp, targets):
        xp = get_array_module(lp)
        frames, batch, classes = lp.shape
        b, ninf = self.blank, -np.inf
        labels = self._labels(targets, classes, xp)
        ext = xp.full((batch, 2 * labels.shape[1] + 1), b, dtype=np.int64)
        ext[:, 1::2] = labels
        skip = xp.zeros(ext.shape, dtype=bool)
        skip[:, 2:] = (ext[:, 2:] != b) & (ext[:, 2:] != ext[:, :-2])
        lpe = xp.take_along_axis(lp, xp.broadcast_to(ext, (frames,) + ext.shape), axis=2)  # [T, N, 2S + 1]
        alpha = xp.full(lpe.shape, ninf, dtype=lp.dtype)
        if frames:
            alpha[0, :, :2] = lpe[0, :, :2]
        for t in range(1, frames):
            prev = alpha[t - 1]
            stay_or_move = xp.logaddexp(prev, _from_left(prev, 1, ninf))
            alpha[t] = lpe[t] + xp.logaddexp(stay_or_move, xp.where(skip, _from_left(prev, 2, ninf), ninf))
        T_n, S_n = self.input_lengths, self.target_lengths
        rows = xp.arange(batch)
        if frames:
            last = alpha[xp.asarray(np.maximum(T_n - 1, 0)), rows]  # [N, 2S + 1]: each entry's last frame
            on_blank = last[rows, xp.asarray(2 * S_n)]
            on_label = xp.where(xp.asarray(S_n > 0), last[rows, xp.asarray(np.maximum(2 * S_n - 1, 0))], ninf)
            loss = -xp.logaddexp(on_blank, on_label)
        else:
            loss = xp.zeros(batch, dtype=lp.dtype)
        no_frames = xp.where(xp.asarray(S_n == 0), 0.0, np.inf).astype(lp.dtype)  # an empty alignment, or none
        loss = xp.where(xp.asarray(T_n == 0), no_frames, loss)
        self.save_for_backward(lpe, alpha, ext, skip, loss)
        self.classes = classes
        if self.zero_infinity:
            loss = xp.where(xp.isinf(loss), 0, loss).astype(lp.dtype)
        if self.reduction == "none":
            return loss
        if self.reduction == "sum":
            return loss.sum()
        return per_count((loss / xp.asarray(np.maximum(S_n, 1), dtype=lp.dtype)).sum(), batch)

    def _loss_gradient(self, dy, batch):
        """dloss [N]: the gradient of each entry's loss."""
        xp = get_array_module(dy)
        if self.reduction == "none":
            return dy
        if self.reduction == "sum":
            return xp.broadcast_to(dy, (batch,))
        return dy / xp.asarray(batch * np.maximum(self.target_lengths, 1), dtype=dy.dtype)

    def backward(self, dy):
        lpe, alpha, ext, skip, loss = self.saved
        xp = get_array_module(lpe)
        frames, batch, width = lpe.shape
        ninf = -np.inf
        T_n, S_n = self.input_lengths, self.target_lengths
        s = np.arange(width)
        final = xp.asarray(np.where((s == 2 * S_n[:, None]) | (s == 2 * S_n[:, None] - 1), 0.0, ninf), dtype=lpe.dtype)
        skip_next = _from_right(skip, 2, False)  # skip_next[n, s] = skip[n, s + 2]
        ends = xp.asarray(T_n - 1)[:, None]  # each entry's last frame
        beta = xp.full(lpe.shape, ninf, dtype=lpe.dtype)
        for t in range(frames - 1, -1, -1):
            if t + 1 < frames:  # (frames past an entry's last hold -inf: nothing comes from them)
                after = lpe[t + 1] + beta[t + 1]
                stay_or_move = xp.logaddexp(after, _from_right(after, 1, ninf))
                beta[t] = xp.logaddexp(stay_or_move, xp.where(skip_next, _from_right(after, 2, ninf), ninf))
            beta[t] = xp.where(ends == t, final, beta[t])
        infinite = xp.isinf(loss)
        gamma = alpha + beta + xp.where(infinite, 0, loss)[:, None]  # (an infinite loss: every gamma is -inf)
        dlp = xp.zeros((frames, batch, self.classes), dtype=lpe.dtype)
        slots = xp.arange(frames * batch).reshape(frames, batch, 1) * self.classes + ext  # (t, n, ext[n, s]) in dlp
        add_at(dlp.reshape(-1), slots.reshape(-1), -xp.exp(gamma).reshape(-1))
        if not self.zero_infinity:
            counted = xp.asarray(np.arange(frames)[:, None] < T_n)  # [T, N]: the frames t < T_n
            dlp = xp.where((infinite & counted)[..., None], np.nan, dlp).astype(lpe.dtype)
        return dlp * self._loss_gradient(dy, batch)[:, None], None


def _lengths(what, value, batch):
    """input_lengths or target_lengths (a tensor, an array, a tuple or list of ints, or an int for
    an unbatched input) as a host int64 array of ``batch`` entries, each >= 0."""
    if isinstance(value, Tensor):
        value = backend.to_host(value.data)  # the recursions' bounds: read once, as PyTorch reads them
    array = np.asarray(value)
    if array.size == 0 and array.dtype.kind == "f":  # [] or ()
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"ctc_loss: {what} must be integers (a tensor or a tuple of ints), got dtype "
                        f"{array.dtype.name}")
    if array.ndim > 1 or array.size != batch:
        raise ValueError(f"ctc_loss: {what} must hold one length per batch entry ({batch}), got shape {array.shape}")
    array = array.reshape(batch).astype(np.int64)
    if batch and array.min() < 0:
        raise ValueError(f"ctc_loss: {what} must be >= 0, got {array.min()}")
    return array


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of log-probabilities [T, N, C] (or unbatched [T, C]; from log_softmax over C)
    against targets padded [N, S] or concatenated [sum of target_lengths], entry n using its first
    input_lengths[n] frames and target_lengths[n] labels (tensors or tuples of ints), as PyTorch's.
    'mean' divides each entry's loss by its target length (at least 1), then averages over the
    batch; zero_infinity replaces an infinite loss (no alignment) and its gradient by 0."""
    x = floating(log_probs)
    t = as_indices(targets, x)
    if x.ndim not in (2, 3):
        raise ValueError(f"ctc_loss: log_probs must be [T, N, C] or unbatched [T, C], got shape {x.shape}")
    batched = x.ndim == 3
    if not batched:  # one entry: [T, 1, C] and targets [1, S]
        x = x.reshape(x.shape[0], 1, x.shape[1])
        t = t.reshape(1, -1) if t.ndim == 1 else t
    frames, batch, classes = x.shape
    if t.dtype.kind not in "iu":
        raise TypeError(f"ctc_loss: targets must be an integer tensor, got dtype {t.dtype.name}")
    if isinstance(blank, bool) or not isinstance(blank, numbers.Integral) or not 0 <= blank < classes:
        raise ValueError(f"ctc_loss: blank {blank!r} is out of range for {classes} classes")
    T_n = _lengths("input_lengths", input_lengths, batch)
    S_n = _lengths("target_lengths", target_lengths, batch)
    if batch and T_n.max() > frames:
        raise ValueError(f"ctc_loss: input_lengths must be at most the {frames} frames of log_probs, got {T_n.max()}")
    if t.ndim == 2:
        if t.shape[0] != batch:
            raise ValueError(f"ctc_loss: padded targets {t.shape} must have one row per batch entry ({batch})")
        if batch and S_n.max() > t.shape[1]:
            raise ValueError(f"ctc_loss: target_lengths must be at most the padded targets' length {t.shape[1]}, "
                             f"got {S_n.max()}")
    elif t.ndim != 1 or not batched:
        raise ValueError(f"ctc_loss: targets must be padded [N, S] or concatenated [sum of target_lengths], "
                         f"got shape {t.shape}")
    elif t.shape[0] != S_n.sum():
        raise ValueError(f"ctc_loss: concatenated targets must hold sum(target_lengths) = {S_n.sum()} labels, "
                         f"got {t.shape[0]}")
    loss = CtcLoss(T_n, S_n, int(blank), reduction, bool(zero_infinity))(x, t)
    return loss.reshape(()) if reduction == "none" and not batched else loss
