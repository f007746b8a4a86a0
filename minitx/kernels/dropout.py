"""Launchers of dropout.cu: Philox dropout masks, alone or fused with a residual add or with
bias + activation.  A mask is drawn from a (seed, offset) pair and regenerated, not stored.
The kernels read the seed, and a base offset added to each call's, from device memory
(:func:`philox_memory`).

dtypes: every array of a call, and every result, has one dtype: float32, float64 or
bfloat16 (computed in float32, each result element rounded once).  The mask is the same for
every dtype."""
from __future__ import annotations

import math

import numpy as np

from minitx.backend import sum_rows

from ._launch import check_int32, contiguous, float_dtype, kept, same_shape_inputs
from ._runtime import backend_for, compute_dtype

_ACTS = {None: 0, "identity": 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 2}
_THREADS = 256


def dropout_threshold(p: float) -> tuple[np.uint32, float]:
    """(threshold, keep_scale) for drop probability p in [0, 1].

    An element is kept iff its 24-bit random draw (Philox word >> 8) is
    >= threshold = ceil(p * 2^24); kept values are scaled by 1 / (1 - p).
    """
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    thr = min(2**24, int(math.ceil(p * 2**24)))
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return np.uint32(thr), scale


def philox_memory(be, seed):
    """The device memory a dropout kernel reads its Philox seed and base offset from: the uint64
    array ``[seed, base]``, base 0, made once per seed and device and kept, so every launch
    with that seed reads the same memory and draws from (seed, base + its own offset).

    Why memory and not two more kernel arguments: a captured CUDA graph replays its launches
    with the arguments of the capture, but reads memory afresh. Moving ``base`` on between
    replays gives each replay fresh masks (whoever keeps a graph keeps this array alive)."""
    seed = int(seed) & (2**64 - 1)
    return kept(be, "philox", seed, lambda: be.to_device(np.array([seed, 0], dtype=np.uint64)))


def _philox_args(be, seed, offset):
    """A dropout kernel's (philox, offset) arguments for the mask of (seed, offset)."""
    return philox_memory(be, seed), np.uint64(int(offset) & (2**64 - 1))


def _dropout_launch(be, kernel, dt, arrays, n, extra, p, seed, offset):
    """Launch ``kernel`` of dropout.cu over n elements with the mask of (p, seed, offset).

    Every dropout kernel takes ``(*arrays, n, *extra, philox, offset, threshold,
    keep_scale)``; a thread handles groups of 4 elements (one Philox draw), grid-striding.
    p is validated even when n == 0 (then nothing is launched).
    """
    thr, keep_scale = dropout_threshold(p)
    if n:
        groups = -(-n // 4)
        grid = int(max(1, min(-(-groups // _THREADS), 65535)))
        be.launch("dropout.cu", kernel, dt, (grid,), (_THREADS,),
                  (*arrays, np.int64(n), *extra, *_philox_args(be, seed, offset), thr,
                   compute_dtype(dt).type(keep_scale)))


def dropout_add_forward(x, residual, p, seed, offset=0):
    """``y = residual + dropout(x, p)`` with the mask drawn from (seed, offset).

    x, residual: same shape, float.  seed, offset: Python ints (64-bit); use a
    new offset (e.g. +1) per call for a fresh mask, and pass the same pair to
    the backward.  Returns y.
    """
    be = backend_for(x, residual)
    x, residual, dt = same_shape_inputs(be.xp, x, residual)
    y = be.empty(x.shape, dt)
    _dropout_launch(be, "dropout_add_forward", dt, (x, residual, y), x.size, (), p, seed, offset)
    return y


def dropout_apply(x, p, seed, offset=0):
    """``dropout(x, p)`` with the mask drawn from (seed, offset): x * m, m_i = 1/(1-p) or 0.

    The mask is the one :func:`dropout_add_forward` draws for the same pair and size.
    """
    be = backend_for(x)
    x, dt = same_shape_inputs(be.xp, x)
    y = be.empty(x.shape, dt)
    _dropout_launch(be, "dropout_mask_apply", dt, (x, y), x.size, (), p, seed, offset)
    return y


def dropout_add_backward(dy, p, seed, offset=0):
    """Backward of :func:`dropout_add_forward`: returns (dx, dresidual).

    dx = dropout(dy) with the forward's mask (regenerated, not stored);
    dresidual is ``dy`` itself (same object, no copy).
    """
    return dropout_apply(dy, p, seed, offset), dy


def _bias_act_prepare(be, x, bias, act):
    x, b = contiguous(be.xp, x, bias)
    dt = float_dtype(x, b)
    if act not in _ACTS:
        raise ValueError(f"unknown activation {act!r}; expected one of {sorted(map(str, _ACTS))}")
    cols = int(x.shape[-1]) if x.ndim else 1
    if b is not None and b.size != cols:
        raise ValueError(f"bias must have {cols} elements (last axis of x), got {b.shape}")
    if x.size:
        check_int32(cols=cols)
    return x, b, dt, cols


def bias_act_dropout_forward(x, bias, act, p, seed, offset=0):
    """``y = dropout(act(x + bias), p)``.

    x: [..., cols]; bias: [cols] or None; act: None/'identity', 'relu' or
    'gelu' (= 'gelu_tanh', the tanh approximation).  Returns y.  The backward
    needs x and bias again (nothing else is saved).
    """
    be = backend_for(x, bias)
    x, b, dt, cols = _bias_act_prepare(be, x, bias, act)
    y = be.empty(x.shape, dt)
    _dropout_launch(be, "bias_act_dropout_forward", dt, (x, b, y), x.size,
                    (np.int32(cols), np.int32(_ACTS[act])), p, seed, offset)
    return y


def bias_act_dropout_backward(dy, x, bias, act, p, seed, offset=0):
    """Backward of :func:`bias_act_dropout_forward`: returns (dx, dbias).

    dx = dropout(dy) * act'(x + bias) (same regenerated mask); dbias is the
    sum of dx over all leading axes ([cols]) or None when bias is None (for bfloat16 summed
    in float32, then rounded once).
    """
    be = backend_for(dy, x, bias)
    x, b, dt, cols = _bias_act_prepare(be, x, bias, act)
    dy, x, _ = same_shape_inputs(be.xp, dy, x)
    dx = be.empty(x.shape, dt)
    _dropout_launch(be, "bias_act_dropout_backward", dt, (dy, x, b, dx), x.size,
                    (np.int32(cols), np.int32(_ACTS[act])), p, seed, offset)
    if b is None:
        return dx, None
    if not x.size:
        return dx, be.zeros((cols,), dt)
    return dx, sum_rows(dx.reshape(-1, cols))
