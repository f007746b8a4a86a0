"""Dropout: plain dropout, dropout fused with a residual add, bias + activation + dropout
fused in one op, and alpha dropout (SELU's).

The reference saves its mask; a fused kernel regenerates its mask from a Philox (seed, offset)
pair (``minitx.random.next_philox_seed_offset``), and backward follows whichever forward ran.
On the GPU the reference paths draw their masks from the same Philox pairs, so a checkpoint
can hold the random state and ``--resume`` is exact.
Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

import math

from minitx import kernels
from minitx import random as mrandom
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module, sum_rows
from minitx.ops._args import flag, floating, number, takes_inplace
from minitx.ops.activation import gelu_tanh, gelu_tanh_derivative, relu_derivative, relu_values
from minitx.ops.elementwise import add

__all__ = ["Dropout", "DropoutAdd", "BiasActDropout", "AlphaDropout"]


def _check_dropout_p(op, p) -> float:
    """p, a dropout's probability, as a number in [0, 1), or an error naming ``op``."""
    p = number(op, "p", p)
    if not 0 <= p < 1:
        raise ValueError(f"{op}: p must be in [0, 1), got {p}")
    return p


def _dropout_keep_mask(shape, p, dtype, xp, device, seed):
    """Scaled keep mask: 1/(1-p) with probability 1-p, else 0 (inverted dropout).

    Where the kernels run (a GPU), the mask comes from the Philox kernel and a (seed, offset)
    pair from minitx.random, as in the fused dropout ops: checkpoints record the offsets, so a
    resumed run draws the masks the uninterrupted run would have drawn. (CuPy's own generator
    state cannot be saved.) Elsewhere it comes from minitx's generator, or from ``seed``.
    """
    if seed is None and kernels.enabled(xp.empty(0, dtype)):
        return kernels.dropout_apply(xp.ones(shape, dtype), p, *mrandom.next_philox_seed_offset(device))
    u = mrandom.uniform(shape, dtype, device, seed)  # (bfloat16: drawn as float32)
    mask = (u >= p).astype(u.dtype)
    mask *= 1 / (1 - p)  # (in its own array: keep * 1/(1-p) without another)
    return mask.astype(dtype, copy=False)


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
    Kernel: minitx/kernels/dropout.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage

    def __init__(self, p=0.5, seed=None):
        self.p, self.seed = _check_dropout_p("dropout", p), seed

    def forward(self, x):
        xp = get_array_module(x)
        mask = _dropout_keep_mask(x.shape, self.p, x.dtype, xp, device_of(x), self.seed)
        self.save_for_backward(mask)
        return x * mask

    def backward(self, dy):
        (mask,) = self.saved
        return (dy * mask,)


@takes_inplace
def dropout(x, p=0.5, training=True, seed=None):
    """Inverted dropout while training; the identity when not training or p == 0. An integer or
    boolean x is dropped in float32, as the other ops on real numbers take it: in its own dtype
    the scale 1/(1-p) would be truncated (p = 0.3 kept values unscaled)."""
    p, x = _check_dropout_p("dropout", p), as_tensor(x)  # (x as it is when not training: a tensor, not a list)
    if not flag("dropout", "training", training) or p == 0:
        return x
    return Dropout(p, seed)(floating(x))


def _channel_dropout(op, spatial, x, p, training):
    """Whole channels zeroed: x [N, C, *S] (or one sample [C, *S]) times a mask of one value per
    channel, 1/(1-p) or 0, drawn as dropout's (a dropout of ones), so its gradient is the mask's."""
    p, x = _check_dropout_p(op, p), as_tensor(x)
    if not flag(op, "training", training) or p == 0:
        return x
    if x.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(f"{op}: input must be [N, C] and {spatial} spatial axes, or one sample [C, ...], got "
                         f"shape {x.shape}")
    x = floating(x)  # (as dropout: an integer mask would truncate 1/(1-p))
    shape = x.shape[:x.ndim - spatial] + (1,) * spatial
    mask = dropout(Tensor(get_array_module(x.data).ones(shape, dtype=x.dtype)), p)
    return x * mask


@takes_inplace
def dropout1d(x, p=0.5, training=True):
    """Each channel of x [N, C, L] (or [C, L]) zeroed with probability p, the others scaled by 1/(1-p)."""
    return _channel_dropout("dropout1d", 1, x, p, training)


@takes_inplace
def dropout2d(x, p=0.5, training=True):
    """Each channel of x [N, C, H, W] (or [C, H, W]) zeroed with probability p, the others scaled."""
    return _channel_dropout("dropout2d", 2, x, p, training)


@takes_inplace
def dropout3d(x, p=0.5, training=True):
    """Each channel of x [N, C, D, H, W] (or [C, D, H, W]) zeroed with probability p, the others scaled."""
    return _channel_dropout("dropout3d", 3, x, p, training)


# -alpha' of SELU (scale * alpha): the value SELU approaches for x -> -inf, which a dropped unit takes
_SELU_SATURATION = 1.7580993408473766


class AlphaDropout(Function):
    """Alpha dropout (Klambauer et al. 2017): dropped units take SELU's saturation value instead
    of 0, then an affine map a, b restores the mean 0 and variance 1 of SELU's normalized output.
    With m_i = 1 (kept, probability 1-p) or 0 and alpha = 1.7580993408473766 (PyTorch's constants):

        a = 1 / sqrt((alpha^2 p + 1)(1 - p))
        y = a * m * x + a * alpha * (m - 1 + p)     (kept: a x + a alpha p;  dropped: -a alpha (1 - p))

    backward:  dx = dy * a * m

    ``feature``: one m per channel, m [N, C, 1, ...] broadcast over x [N, C, ...] (the first two
    axes are N and C, as in PyTorch's F.feature_alpha_dropout). The keep draw is dropout's
    (_dropout_keep_mask, Philox on the GPU).

    Derivation: docs/backprop/dropout.md
    """

    def __init__(self, p=0.5, feature=False, seed=None):
        self.p, self.feature, self.seed = p, feature, seed

    def forward(self, x):
        shape = x.shape[:2] + (1,) * (x.ndim - 2) if self.feature else x.shape
        # dropout's scaled mask, 1/(1-p) or 0: its draw, without its scale
        m = (_dropout_keep_mask(shape, self.p, x.dtype, get_array_module(x), device_of(x), self.seed) != 0)
        m = m.astype(x.dtype)
        alpha = _SELU_SATURATION
        a = 1 / math.sqrt((alpha * alpha * self.p + 1) * (1 - self.p))
        self.save_for_backward(a * m)
        return x * (a * m) + (m - 1) * (alpha * a) + alpha * a * self.p

    def backward(self, dy):
        (scale,) = self.saved
        return (dy * scale,)


def _alpha_dropout(op, feature, x, p, training, seed):
    p = number(op, "p", p)
    if not 0 <= p <= 1:
        raise ValueError(f"{op}: p must be in [0, 1], got {p}")
    x = as_tensor(x)
    if not flag(op, "training", training) or p == 0:
        return x
    x = floating(x)
    if feature and x.ndim < 2:
        raise ValueError(f"{op}: input must have at least 2 axes [N, C, ...] (one mask value per sample and "
                         f"channel), got shape {x.shape}")
    if p == 1:
        return x * 0.0  # every unit dropped: 0, as PyTorch's (its a would be 1/0)
    return AlphaDropout(p, feature, seed)(x)


@takes_inplace
def alpha_dropout(x, p=0.5, training=False, seed=None):
    """Alpha dropout while training (see AlphaDropout): it keeps the mean 0 and variance 1 of
    SELU's outputs; the identity when not training or p == 0, and 0 at p == 1. ``training`` is
    False by default, as in PyTorch's F.alpha_dropout."""
    return _alpha_dropout("alpha_dropout", False, x, p, training, seed)


@takes_inplace
def feature_alpha_dropout(x, p=0.5, training=False, seed=None):
    """Alpha dropout of whole channels: each (sample, channel) of x [N, C, ...] kept or dropped as
    one (see AlphaDropout); the identity when not training or p == 0, 0 at p == 1."""
    return _alpha_dropout("feature_alpha_dropout", True, x, p, training, seed)


class DropoutAdd(Function):
    """y = residual + dropout(x) = residual + x * m, m as in Dropout (m_i = 1/(1-p) with
    probability 1-p, else 0): the residual connection around a Transformer sublayer, one pass.

    backward:  dx = dy * m        dresidual = dy

    Reference path: m is drawn as in Dropout (_dropout_keep_mask) and saved. Kernel
    path: nothing is saved; m comes from a Philox (seed, offset) pair (see
    minitx.random.next_philox_seed_offset; (seed, 0) when ``seed`` is given) and backward
    regenerates it from the pair. The two paths draw different masks with the same law.

    Derivation: docs/backprop/dropout.md
    Kernel: minitx/kernels/dropout.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage

    def __init__(self, p=0.5, seed=None):
        self.p, self.seed = _check_dropout_p("dropout_add", p), seed

    def forward(self, x, residual):
        _check_one_shape(x, residual)
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


def dropout_add(x, residual, p=0.5, training=True, seed=None):
    """residual + dropout(x) as one op (a residual connection); residual + x when not training
    or p == 0. x and residual must have one shape. See DropoutAdd. An integer x is dropped in
    float32, as by dropout (and an integer residual beside it)."""
    p, x, residual = _check_dropout_p("dropout_add", p), as_tensor(x), as_tensor(residual)
    if not flag("dropout_add", "training", training) or p == 0:
        _check_one_shape(x, residual)  # (add would broadcast them)
        return add(residual, x)
    return DropoutAdd(p, seed)(floating(x), floating(residual))


def _check_one_shape(x, residual):
    if x.shape != residual.shape:
        raise ValueError(f"dropout_add: x {x.shape} and residual {residual.shape} must have one shape")


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
    Kernel: minitx/kernels/dropout.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True  # dx and db: the kernel's outputs, or new arrays of the expressions in backward

    def __init__(self, activation="relu", p=0.0, seed=None):
        if activation not in _BIAS_ACTIVATIONS:
            raise ValueError(f"bias_act_dropout: activation must be one of {sorted(_BIAS_ACTIVATIONS)}, "
                             f"got {activation!r}")
        self.activation, self.p, self.seed = activation, _check_dropout_p("bias_act_dropout", p), seed

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
            # the rows counted, not -1: NumPy cannot infer it when the last axis is 0
            db = None if b is None else sum_rows(dx.reshape(math.prod(dx.shape[:-1]), dx.shape[-1]))
        return (dx,) if b is None else (dx, db if self.needs_input_grad[1] else None)


def bias_act_dropout(x, bias=None, activation="relu", p=0.0, training=True, seed=None):
    """dropout(activation(x + bias)) as one op, bias [C] along the last axis (or None);
    activation 'identity', 'relu' or 'gelu_tanh'. No dropout when not training. See
    BiasActDropout."""
    op = BiasActDropout(activation, p if training else 0.0, seed)
    x = floating(x)
    return op(x) if bias is None else op(x, floating(bias))
