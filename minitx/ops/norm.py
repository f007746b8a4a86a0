"""Normalization: layer norm and RMS norm over the last axis, group norm over groups of
channels, batch norm over the batch, instance norm over each channel; and scaling to unit p-norm
(normalize, cosine_similarity, renorm), distances (pairwise_distance, cdist, pdist, dist) and local response norm.

All of them standardize a set of values: xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps), and
their backwards share one formula (docs/backprop/layer-norm.md derives it for a row; batch norm and
group norm only take the mean over other axes): with g = dL/dxhat,

    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))

Fused kernels (layer norm): where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx import backend, kernels
from minitx.autograd.function import Function
from minitx.autograd.inplace import mark_modified
from minitx.autograd.tensor import Tensor, lengths
from minitx.backend import get_array_module, mean_last, sum_dot
from minitx.keywords import takes_torch_keywords
from minitx.ops import reduction
from minitx.ops._args import broadcast_batches, flag, floating, number, promote
from minitx.ops.elementwise import clip, div, sub, where
from minitx.ops.indexing import add_at
from minitx.ops.shape import broadcast_to, pad, sliding_windows

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm", "Cdist", "Pdist"]


def _mean(a, axes):
    """a.mean(axis=axes, keepdims=True). Over no values (a length-0 axis among ``axes``) it is
    0 / 0 = NaN, as NumPy's, but without NumPy's warning about an empty slice: the statistics of
    a set of no values standardize nothing, so the NaN reaches no output and no gradient."""
    if all(a.shape[k] for k in (axes if isinstance(axes, tuple) else (axes,))):
        return a.mean(axis=axes, keepdims=True)
    return get_array_module(a).full_like(a.sum(axis=axes, keepdims=True), np.nan)


def _check_last_axis(op, x):
    """Refuse a 0-d x, as PyTorch does: it has no last axis to normalize over."""
    if x.ndim == 0:
        raise ValueError(f"{op}: a 0-d input has no last axis to normalize over; expected at least 1 dimension, "
                         "got shape ()")


def standardize(x, axes, eps):
    """(xhat, rstd): x - its mean over ``axes``, times rstd = 1 / sqrt(var + eps) (the biased
    variance, over the same axes); rstd keeps ``axes`` as size-1 axes."""
    xp = get_array_module(x)
    centered = x - _mean(x, axes)
    rstd = 1 / xp.sqrt(_mean(centered * centered, axes) + eps)
    return centered * rstd, rstd


def standardize_backward(g, xhat, rstd, axes):
    """dx of xhat = standardize(x) over ``axes``, given g = dL/dxhat."""
    return rstd * (g - _mean(g, axes) - xhat * _mean(g * xhat, axes))


def _per_channel(v, ndim):
    """A [C] weight or bias shaped to multiply [N, C, *spatial] (channels on axis 1)."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


class LayerNorm(Function):
    """Normalize over the last axis, then scale and shift:

        mu = mean(x),  rstd = 1 / sqrt(var(x) + eps),  xhat = (x - mu) * rstd,  y = xhat * w + b

    backward, with g = dy * w and means over the last axis:
        dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
        dw = sum over rows of dy * xhat        db = sum over rows of dy

    Both paths save (x, w, mu, rstd), mu and rstd of shape x.shape[:-1] (what the kernel
    returns); backward rebuilds xhat from them instead of keeping a second x-sized array.

    Derivation: docs/backprop/layer-norm.md
    Kernel: minitx/kernels/layer_norm.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True  # dx, dw, db: the kernels' outputs, or new arrays of the expressions below

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, w, b):
        _check_last_axis("layer_norm", x)
        if w.shape != x.shape[-1:] or b.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: weight {w.shape} and bias {b.shape} must have shape "
                             f"({x.shape[-1]},), the last axis of the input {x.shape}")
        if x.shape[-1] and kernels.enabled(x, w, b):  # (empty rows: nothing to launch, the expressions' empties)
            y, mu, rstd = kernels.layer_norm_forward(x, w, b, self.eps)
        else:
            xp = get_array_module(x)
            mu = mean_last(x)
            centered = x - mu[..., None]
            rstd = 1 / xp.sqrt(mean_last(centered, centered) + self.eps)
            y = centered * rstd[..., None] * w + b
        self.save_for_backward(x, w, mu, rstd)
        return y

    def backward(self, dy, plus=None):
        x, w, mu, rstd = self.saved
        needs_dw, needs_db = self.needs_input_grad[1], self.needs_input_grad[2]
        if x.shape[-1] and kernels.enabled(dy, x, w, stats=(mu, rstd)):
            dx, dw, db = kernels.layer_norm_backward(dy, x, w, mu, rstd, param_grads=needs_dw or needs_db, plus=plus)
            return dx, dw if needs_dw else None, db if needs_db else None
        rows = tuple(range(dy.ndim - 1))
        rstd = rstd[..., None]
        xhat = (x - mu[..., None]) * rstd
        g = dy * w
        dx = rstd * (g - mean_last(g)[..., None] - xhat * mean_last(g, xhat)[..., None])
        if plus is not None:  # plus + dx, in the engine's order (of two NaNs, the first's is kept)
            get_array_module(dx).add(plus, dx, out=dx)  # dx is this expression's own new array
        dw = sum_dot(dy, xhat, rows) if needs_dw else None
        db = dy.sum(axis=rows) if needs_db else None
        return dx, dw, db

    def backward_adding(self, dy, index, pending):
        """x's gradient with the one it already has (a residual stream's) added in: by the
        kernel as it writes dx, so no separate add runs. Float32 and float64 only: a 16-bit dx
        is rounded before the engine adds it, and the kernel would round the sum once."""
        x, w = self.saved[:2]
        one_dtype = pending.dtype == dy.dtype == w.dtype == x.dtype  # else dx is computed wider than x, then cast
        if index != 0 or pending.shape != x.shape or not one_dtype or x.dtype.name not in ("float32", "float64"):
            return None
        return self.backward(dy, plus=pending)


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last axis; weight defaults to ones, bias to zeros."""
    if isinstance(weight, (numbers.Integral, tuple, list)) and all(
            isinstance(n, numbers.Integral) for n in np.ravel(weight)):
        raise TypeError(f"layer_norm: the arguments are (x, weight, bias, eps), normalizing over the last axis; "
                        f"{weight!r} reads as PyTorch's normalized_shape (its order is (x, normalized_shape, weight, "
                        f"bias, eps)): leave it out")
    x = floating(x)
    xp = backend.get_array_module(x.data)
    dim = x.shape[-1:]
    weight = floating(weight) if weight is not None else Tensor(xp.ones(dim, dtype=x.dtype))
    bias = floating(bias) if bias is not None else Tensor(xp.zeros(dim, dtype=x.dtype))
    return LayerNorm(eps)(x, weight, bias)


class RMSNorm(Function):
    """Root-mean-square norm over the last axis (Zhang & Sennrich, 2019): no mean is taken out.

        rrms = 1 / sqrt(mean(x^2) + eps),  xhat = x * rrms,  y = xhat * w

    backward, with g = dy * w and means over the last axis (layer norm's, without the mean term:
    d rrms / dx_j = -rrms^3 x_j / n):
        dx = rrms * (g - xhat * mean(g * xhat))        dw = sum over rows of dy * xhat

    Derivation: docs/backprop/group-norm.md
    """

    def __init__(self, eps):
        self.eps = eps

    def forward(self, x, w):
        _check_last_axis("rms_norm", x)
        if w.shape != x.shape[-1:]:
            raise ValueError(f"rms_norm: weight {w.shape} must have shape ({x.shape[-1]},), the last axis of the "
                             f"input {x.shape}")
        xp = get_array_module(x)
        rrms = 1 / xp.sqrt(mean_last(x, x)[..., None] + self.eps)
        self.save_for_backward(x, w, rrms)
        return x * rrms * w

    def backward(self, dy):
        x, w, rrms = self.saved
        xhat = x * rrms
        g = dy * w
        dx = rrms * (g - xhat * mean_last(g, xhat)[..., None])
        dw = (dy * xhat).sum(axis=tuple(range(dy.ndim - 1))) if self.needs_input_grad[1] else None
        return dx, dw


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """RMS norm over the last axis (``normalized_shape``: its length, or a 1-tuple of it, as
    PyTorch's; more trailing axes are not supported). eps=None takes the machine epsilon of the
    dtype it computes in, as PyTorch does: float32's for bfloat16 and float16 (16-bit ops compute in
    float32); weight defaults to ones."""
    x = floating(x)
    _check_last_axis("rms_norm", x)
    if lengths("rms_norm", normalized_shape) != x.shape[-1:]:
        raise ValueError(f"rms_norm: normalized_shape {normalized_shape!r} must be the last axis of the input "
                         f"{x.shape} (normalizing over several trailing axes is not supported)")
    xp = backend.get_array_module(x.data)
    weight = weight if weight is not None else Tensor(xp.ones(x.shape[-1:], dtype=x.dtype))
    if eps is None:
        eps = float(np.finfo(np.float32 if x.dtype.itemsize == 2 else x.dtype).eps)
    return RMSNorm(eps)(x, weight)


class GroupNorm(Function):
    """Group norm (Wu & He, 2018): x [N, C, *] is split into G groups of C/G channels, and each
    (sample, group) is standardized over its channels and positions; then a per-channel w, b:

        xhat = standardize(x as [N, G, C/G * positions], over the last axis),  y = xhat * w[c] + b[c]

    backward, with g = dy * w[c] and means over each (sample, group):
        dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
        dw[c] = sum over samples and positions of dy * xhat        db[c] = the same of dy

    Derivation: docs/backprop/group-norm.md
    """

    def __init__(self, num_groups, eps=1e-5):
        self.num_groups, self.eps = num_groups, eps

    def forward(self, x, w, b):
        if x.ndim < 2 or x.shape[1] % self.num_groups:
            raise ValueError(f"group_norm: the input's channels (axis 1 of {x.shape}) must split into "
                             f"{self.num_groups} groups")
        if w.shape != x.shape[1:2] or b.shape != x.shape[1:2]:
            raise ValueError(f"group_norm: weight {w.shape} and bias {b.shape} must have shape ({x.shape[1]},)")
        # [N, G, values per group], counted (NumPy cannot infer a -1 beside a 0)
        self.grouped = (x.shape[0], self.num_groups, x.shape[1] // self.num_groups * math.prod(x.shape[2:]))
        if x.shape[0] * self.grouped[2] == 1:  # as PyTorch: one value per group in the whole batch
            raise ValueError(f"group_norm: expected more than one value per group over the batch, got input "
                             f"{x.shape} in {self.num_groups} groups")
        xhat, rstd = standardize(x.reshape(self.grouped), 2, self.eps)
        xhat = xhat.reshape(x.shape)
        self.save_for_backward(xhat, w, rstd)
        return xhat * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)

    def backward(self, dy):
        xhat, w, rstd = self.saved
        g = (dy * _per_channel(w, dy.ndim)).reshape(self.grouped)
        dx = standardize_backward(g, xhat.reshape(g.shape), rstd, 2).reshape(dy.shape)
        channel_sums = (0,) + tuple(range(2, dy.ndim))
        dw = (dy * xhat).sum(axis=channel_sums) if self.needs_input_grad[1] else None
        db = dy.sum(axis=channel_sums) if self.needs_input_grad[2] else None
        return dx, dw, db


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    """Group norm of x [N, C, *] in ``num_groups`` groups of channels; weight ones, bias zeros by default."""
    x = floating(x)
    if not isinstance(num_groups, int) or isinstance(num_groups, bool) or num_groups < 1:
        raise ValueError(f"group_norm: num_groups must be a whole number >= 1, got {num_groups!r}")
    xp = backend.get_array_module(x.data)
    channels = x.shape[1:2]
    weight = weight if weight is not None else Tensor(xp.ones(channels, dtype=x.dtype))
    bias = bias if bias is not None else Tensor(xp.zeros(channels, dtype=x.dtype))
    return GroupNorm(num_groups, eps)(x, weight, bias)


class BatchNorm(Function):
    """Batch norm while training (Ioffe & Szegedy, 2015): each channel c of x [N, C, *] is
    standardized over the batch and the positions, with the batch's own mean and (biased)
    variance; then a per-channel w, b:

        xhat = standardize(x, over every axis but 1),  y = xhat * w[c] + b[c]

    backward: layer norm's formula over those axes, with g = dy * w[c]:
        dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
        dw[c] = sum of dy * xhat over the batch and positions        db[c] = the same of dy

    ``batch_mean`` and ``batch_var`` (unbiased) are kept for the running statistics; outside
    training, batch_norm uses those instead and is an affine map, made of ordinary ops.

    Derivation: docs/backprop/batch-norm.md
    """

    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x, w, b):
        axes = (0,) + tuple(range(2, x.ndim))
        count = x.size // max(x.shape[1], 1)
        if count < 2:
            raise ValueError(f"batch_norm: training needs more than one value per channel, got input {x.shape}")
        xhat, rstd = standardize(x, axes, self.eps)
        self.batch_mean = x.mean(axis=axes)
        self.batch_var = x.var(axis=axes) * (count / (count - 1))
        self.save_for_backward(xhat, w, rstd)
        return xhat * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)

    def backward(self, dy):
        xhat, w, rstd = self.saved
        axes = (0,) + tuple(range(2, dy.ndim))
        dx = standardize_backward(dy * _per_channel(w, dy.ndim), xhat, rstd, axes)
        dw = (dy * xhat).sum(axis=axes) if self.needs_input_grad[1] else None
        db = dy.sum(axis=axes) if self.needs_input_grad[2] else None
        return dx, dw, db


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Batch norm of x [N, C] or [N, C, *], as PyTorch's F.batch_norm: while ``training``, with
    the batch's statistics, and the running ones (when given) move toward them,
    running = (1 - momentum) * running + momentum * batch (the unbiased variance); otherwise with
    the running statistics. weight ones and bias zeros by default."""
    x = floating(x)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected an input [N, C] or [N, C, *], got shape {x.shape}")
    xp = backend.get_array_module(x.data)
    channels = x.shape[1:2]
    weight = weight if weight is not None else Tensor(xp.ones(channels, dtype=x.dtype))
    bias = bias if bias is not None else Tensor(xp.zeros(channels, dtype=x.dtype))
    _check_running("batch_norm", channels, running_mean, running_var)
    if flag("batch_norm", "training", training):
        op = BatchNorm(eps)
        y = op(x, weight, bias)
        _update_running(running_mean, running_var, op.batch_mean, op.batch_var, momentum)
        return y
    return _with_running("batch_norm", "outside training", x, running_mean, running_var, weight, bias, eps)


def _check_running(op, channels, running_mean, running_var):
    """An error naming ``op`` unless each running statistic given is a tensor (updated in place while
    training) with one entry per channel."""
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and not isinstance(stat, Tensor):
            raise TypeError(f"{op}: {name} must be a tensor (or None), got {type(stat).__name__}")
        if stat is not None and tuple(stat.shape) != channels:
            raise ValueError(f"{op}: {name} has shape {tuple(stat.shape)}, expected {channels}")


def _update_running(running_mean, running_var, batch_mean, batch_var, momentum):
    """running = (1 - momentum) * running + momentum * batch for each running statistic given
    (batch_var unbiased), batch_norm's and instance_norm's update."""
    for stat, batch in ((running_mean, batch_mean), (running_var, batch_var)):
        if stat is not None:  # a buffer, written in place: graphs that saved it must know
            mark_modified(stat)
            with np.errstate(all="ignore"):  # past float16's range: its inf, silently as the ops
                stat.data[...] = (1 - momentum) * stat.data + momentum * batch.astype(stat.dtype)


def _with_running(op, when, x, running_mean, running_var, weight, bias, eps):
    """x [N, C, *] standardized per channel with the running statistics (batch_norm outside
    training, instance_norm without the input's statistics), then scaled and shifted: an affine
    map of ordinary ops, its gradient theirs (none to the running statistics). No weight is
    ones, no bias zeros."""
    if running_mean is None or running_var is None:
        raise ValueError(f"{op}: {when} it needs running_mean and running_var")
    shape = (1, -1) + (1,) * (x.ndim - 2)
    std = ((running_var.detach() + eps) ** 0.5).reshape(shape)
    scale = 1 / std if weight is None else weight.reshape(shape) / std
    y = (x - running_mean.detach().reshape(shape)) * scale
    return y if bias is None else y + bias.reshape(shape)

@takes_torch_keywords
def normalize(x, p=2.0, axis=1, eps=1e-12):
    """x / max(||x||_p, eps) along ``axis`` (PyTorch's F.normalize): each slice scaled to unit
    p-norm; a slice of norm below eps is divided by eps instead (all zeros stay zeros). Built
    from norm, clip and a division, so its gradient is theirs.

    Derivation: docs/backprop/distances.md
    """
    x = floating(x)
    return div(x, clip(reduction.norm(x, p, axis, keepdims=True), min=eps))


@takes_torch_keywords
def renorm(x, p, axis, maxnorm):
    """PyTorch's renorm: each slice x.select(axis, i) whose p-norm n_i exceeds maxnorm scaled down to it,
    the others left as they are, composed of norm and where:

        y = x * f,   f_i = maxnorm / (n_i + 1e-7) where n_i > maxnorm, else 1

    (PyTorch's 1e-7 keeps the scaled slice's norm just below maxnorm). Its gradient is the composition's,
    f's through n included, as PyTorch's. p > 0 (inf too), maxnorm >= 0; x has 2 axes or more, as PyTorch's."""
    x = floating(x)
    if x.ndim < 2:
        raise ValueError(f"renorm: expected a tensor with at least 2 axes (slices along one), got shape {x.shape}")
    p, maxnorm = number("renorm", "p", p, "> 0"), number("renorm", "maxnorm", maxnorm, ">= 0")  # (p inf too)
    along = reduction.normalize_axes(axis, x.ndim, "renorm")[0]
    others = tuple(a for a in range(x.ndim) if a != along)
    n = reduction.Norm(reduction.norm_order("renorm", p), others, keepdims=True, op="renorm")(x)
    return x * where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)


@takes_torch_keywords
def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``axis`` of x1 and x2 broadcast
    together, PyTorch's F.cosine_similarity: the cosine of the angle between the slices, each
    scaled first so that a slice of (near) zero norm gives 0, not 0 / 0.

    Derivation: docs/backprop/distances.md
    """
    x1, x2 = promote(x1, x2, op="cosine_similarity")
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError(f"cosine_similarity: shapes {x1.shape} and {x2.shape} do not broadcast") from None
    x1, x2 = (t if t.shape == shape else broadcast_to(t, shape) for t in (x1, x2))
    return reduction.sum(normalize(x1, 2.0, axis, eps) * normalize(x2, 2.0, axis, eps), axis=axis)


def instance_norm(x, weight=None, bias=None, eps=1e-5, *, running_mean=None, running_var=None,
                  use_input_stats=True, momentum=0.1):
    """Each sample's each channel standardized over its own positions (x [N, C, *]), then scaled
    and shifted per channel: group_norm with one channel a group, as PyTorch's instance_norm.

    running_mean and running_var [C], where given, move toward the input's statistics averaged
    over the batch (PyTorch's): with m_nc and v_nc (unbiased) the mean and variance of sample n's
    channel c, running = (1 - momentum) * running + momentum * (1/N) sum_n m_nc (v_nc for the
    variance). use_input_stats=False standardizes with the running statistics instead, as
    batch_norm outside training. (PyTorch's takes running_mean and running_var second and third;
    here they are keywords, after the weight, bias and eps that minitx's callers pass in order.)"""
    op = "instance_norm"
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):  # PyTorch's order: weight would be third
        raise TypeError(f"{op}: eps must be a number, got {type(eps).__name__}; PyTorch's instance_norm(x, running_mean, "
                        "running_var, weight, bias, ...) is written instance_norm(x, weight, bias, "
                        "running_mean=..., running_var=...) here")
    x = floating(x)
    if x.ndim < 3:
        raise ValueError(f"{op}: x must be [N, C, ...] with at least one position axis, got {x.shape}")
    channels = x.shape[1:2]
    _check_running(op, channels, running_mean, running_var)
    if not use_input_stats:
        return _with_running(op, "with use_input_stats=False", x, running_mean, running_var, weight, bias, eps)
    count = math.prod(x.shape[2:])
    if count == 1:  # (a channel's one value standardizes to 0: no statistics, as PyTorch says)
        raise ValueError(f"{op}: each channel needs more than one position to standardize, got {x.shape}")
    y = group_norm(x, x.shape[1], weight, bias, eps)
    if running_mean is not None or running_var is not None:
        positions = tuple(range(2, x.ndim))
        data = x.data if x.dtype.itemsize >= 4 else x.data.astype(np.float32)  # (16 bits: statistics in float32)
        _update_running(running_mean, running_var, data.mean(axis=positions).mean(axis=0),
                        data.var(axis=positions).mean(axis=0) * (count / (count - 1)), momentum)
    return y


def local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels (Krizhevsky et al. 2012), as PyTorch's: each
    entry of x [N, C, *] divided by a power of the mean square of its ``size`` neighbouring channels,

        y[n, c] = x[n, c] / (k + alpha / size * sum_{c' = c - size // 2}^{c + (size - 1) // 2} x[n, c']^2)^beta

    channels past either end counting as zeros. Composed of pad, sliding_windows (the channel
    windows) and elementwise ops, whose gradients are its."""
    x = floating(x)
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: x must be [N, C, *] with at least 3 axes, got shape {x.shape}")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"local_response_norm: size must be an int >= 1, got {size!r}")
    if x.shape[1] == 0:
        return x.clone()  # no channels, no windows (the padded axis is shorter than one)
    widths = ((0, 0), (size // 2, (size - 1) // 2)) + ((0, 0),) * (x.ndim - 2)
    squares = pad(x * x, widths)  # [N, C + size - 1, *]: window c covers padded channels c .. c + size - 1
    window_sums = sliding_windows(squares, 1, size, 1).sum(axis=-1)
    return x / (k + alpha / size * window_sums) ** beta


@takes_torch_keywords
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdims=False):
    """||x1 - x2 + eps||_p along the last axis (x1, x2 broadcast together), PyTorch's
    pairwise_distance: eps moves the norm's kink from x1 = x2 to x1 - x2 = -eps (so the op is
    not symmetric in x1 and x2, as PyTorch's is not); at the kink the gradient is 0.

    Derivation: docs/backprop/distances.md
    """
    return reduction.norm(x1 - x2 + eps, p, -1, keepdims)



class Cdist(Function):
    """y[..., i, j] = ||d[..., i, j, :]||_p, the differences d[..., i, j, :] = x1[..., i, :] - x2[..., j, :]
    (PyTorch's cdist): Norm over d's last axis, whose gradient g = dL/dd is 0 where two rows
    coincide (y = 0), as PyTorch's, not 0 / 0; for p = inf, entries tied for the largest |d| share
    dy (PyTorch's cdist gives each all of it).

        dx1[..., i, :] = sum_j g[..., i, j, :]        dx2[..., j, :] = -sum_i g[..., i, j, :]

    One op, not a subtraction and a norm: 16-bit inputs are computed in float32 and rounded once
    (two ops would round each g before the sums). d holds P * M * D entries at once (PyTorch's
    p = 2 on large inputs takes a matrix product instead, with its rounding).

    Derivation: docs/backprop/distances.md
    """

    def __init__(self, p):
        self.norm = reduction.Norm(p, axis=-1)

    def forward(self, x1, x2):
        return self.norm.forward(x1[..., :, None, :] - x2[..., None, :, :])

    def backward(self, dy):
        (g,) = self.norm.backward(dy)
        return g.sum(axis=-2), -g.sum(axis=-3)  # (the engine sums over batch axes x1 or x2 was broadcast along)


def cdist(x1, x2, p=2.0):
    """The p-norm distance of every row of x1 [..., P, D] to every row of x2 [..., M, D], [..., P, M]
    (leading axes broadcast), as PyTorch's cdist (see Cdist). p: a number >= 0 or inf."""
    x1, x2 = promote(floating(x1), floating(x2), op="cdist")  # (integers would wrap in the differences)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist: needs x1 [..., P, D] and x2 [..., M, D] with one D, got shapes {x1.shape} and "
                         f"{x2.shape}")
    broadcast_batches("cdist", "x1", x1, "x2", x2)
    return Cdist(_distance_order("cdist", p))(x1, x2)


def _distance_order(op, p) -> float:
    """A distance's p as a float: a number >= 0 or inf, as PyTorch's cdist and pdist take."""
    return float(number(op, "p", p, ">= 0"))


class Pdist(Function):
    """y[k] = ||x[i_k] - x[j_k]||_p for every pair of rows i_k < j_k of x [N, D], the pairs in
    row-major order of the upper triangle (PyTorch's pdist): Norm over the differences
    d[k] = x[i_k] - x[j_k], whose gradient g = dL/dd is 0 where two rows are equal (y = 0), as
    PyTorch's; for p = inf, entries tied for the largest |d| share dy (as cdist's, and norm's).

        dx[r] = sum over pairs k with i_k = r of g[k]  -  sum over pairs k with j_k = r of g[k]

    Derivation: docs/backprop/distances.md
    """

    def __init__(self, p):
        self.norm = reduction.Norm(p, axis=-1)

    def forward(self, x):
        xp = get_array_module(x)
        self.first, self.second = (xp.asarray(i) for i in np.triu_indices(x.shape[0], 1))
        self.rows = x.shape[0]
        return self.norm.forward(x[self.first] - x[self.second])

    def backward(self, dy):
        (g,) = self.norm.backward(dy)
        dx = get_array_module(g).zeros((self.rows, g.shape[-1]), dtype=g.dtype)
        add_at(dx, self.first, g)
        add_at(dx, self.second, -g)
        return (dx,)


def pdist(x, p=2.0):
    """The p-norm distance between every pair of rows of x [N, D]: [N (N - 1) / 2], the upper
    triangle of cdist(x, x) row by row without its diagonal, as PyTorch's pdist (see Pdist)."""
    x = floating(x)
    if x.ndim != 2:
        raise ValueError(f"pdist: x must be 2-D [N, D] (N rows of D entries), got shape {x.shape}")
    p = _distance_order("pdist", p)
    return Pdist(0.0 if x.shape[1] == 0 else p)(x)  # rows of no entries: all at distance 0 (inf's max has none)


def dist(x, other, p=2):
    """The p-norm of x - other (the two broadcast), as PyTorch's dist: Norm of sub, composed.
    p: a number >= 0 or +-inf. Integers are subtracted as floats (their differences would wrap)."""
    x, other = promote(floating(x), floating(other), op="dist")
    return reduction.Norm(reduction.norm_order("dist", p), None, False)(sub(x, other))
