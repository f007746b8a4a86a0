"""Gradient clipping: by the global norm (clip_grad_norm_) or value by value (clip_grad_value_)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx import backend, kernels
from minitx.autograd.inplace import mark_modified
from minitx.autograd.tensor import Tensor


def clip_grad_norm_(params, max_norm, norm_type=2.0, error_if_nonfinite=False) -> float:
    """Scale all gradients together so that their joint norm is at most ``max_norm``.

    The joint norm treats every gradient as one long vector:

        total_norm = (sum over params of sum |g| ** norm_type) ** (1 / norm_type)
        total_norm = max over params of max |g|                (norm_type = inf)

    and when ``total_norm > max_norm`` every gradient is scaled in place by

        clip_coef = max_norm / (total_norm + 1e-6)

    (the 1e-6 keeps the division safe). Below max_norm the gradients are left alone. Each
    gradient's squares are summed in float64, a 16-bit gradient's squared in float32 (float16's
    overflow past 256).
    Parameters whose grad is None are ignored. Returns ``total_norm`` as a Python float,
    measured *before* clipping (useful to log).

    Non-finite norm: if some gradient holds NaN or inf, the total norm is NaN or inf. Then the
    gradients are left unscaled (scaling would turn every gradient into NaN) and the norm is
    returned so the caller can see it; an optimizer with ``check_finite=True`` (the default)
    then refuses to step. With ``error_if_nonfinite=True`` this function raises
    FloatingPointError instead.

    Fused path (2-norm, gradients that suit the kernels): the norm is reduced on the device
    (``kernels.grad_norm``) and the gradients are scaled there by
    clip_coef = min(1, max_norm / (total_norm + 1e-6)), or 1 for a non-finite norm (a multiply
    by 1 changes nothing), so no host round trip sits between the two; the one sync left is
    reading total_norm back to return it.
    """
    if isinstance(params, Tensor):
        params = [params]
    grads = [p.grad.data for p in params if p.grad is not None]
    if isinstance(norm_type, str) and norm_type.lower() == "inf":
        norm_type = math.inf
    if not isinstance(norm_type, numbers.Real) or isinstance(norm_type, bool) \
            or math.isnan(norm_type) or norm_type <= 0:
        raise ValueError(f"clip_grad_norm_: invalid norm_type {norm_type!r}; expected a "
                         "positive number or inf")
    if not isinstance(max_norm, numbers.Real) or isinstance(max_norm, bool) \
            or math.isnan(max_norm) or max_norm < 0:
        raise ValueError(f"clip_grad_norm_: invalid max_norm {max_norm!r}; expected a number >= 0")
    if not grads:
        return 0.0
    if norm_type == 2 and kernels.enabled(*grads):
        total_norm = float(backend.to_host(clip_grads_on_device(grads, max_norm)))
        _finite(total_norm, error_if_nonfinite)
        return total_norm

    # one small array per gradient, combined at the end: one device sync per device
    norms = [_norm(g, norm_type) for g in grads]
    by_module: dict = {}
    for n in norms:
        by_module.setdefault(backend.get_array_module(n), []).append(n)
    per_param = np.concatenate([backend.to_numpy(xp.stack(ns)).astype(np.float64)
                                for xp, ns in by_module.items()])
    if math.isinf(norm_type):
        total_norm = float(per_param.max())
    else:
        total_norm = float(np.sum(per_param ** norm_type) ** (1.0 / norm_type))

    if not _finite(total_norm, error_if_nonfinite):
        return total_norm
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:
        mark_modified(*grads)  # scaled in place: a graph that saved one must not use it unawares
        for g in grads:
            g *= clip_coef
    return total_norm


def clip_grad_value_(params, clip_value) -> None:
    """Clamp every gradient, in place, into [-clip_value, clip_value], as PyTorch's does.

        g = min(max(g, -clip_value), clip_value)        for every entry of every gradient

    NaN stays NaN. Parameters whose grad is None are ignored. One clamp per gradient, on its
    device: nothing is read back to the host. A clip_value past a 16-bit gradient's range
    clips nothing there (PyTorch refuses it).
    """
    if isinstance(params, Tensor):
        params = [params]
    if not isinstance(clip_value, numbers.Real) or isinstance(clip_value, bool) \
            or math.isnan(clip_value) or clip_value < 0:
        raise ValueError(f"clip_grad_value_: invalid clip_value {clip_value!r}; expected a number >= 0")
    grads = [p.grad.data for p in params if p.grad is not None]
    mark_modified(*grads)  # clamped in place: a graph that saved one must not use it unawares
    with np.errstate(over="ignore"):  # the bound cast to float16 past 65504: inf, clipping nothing
        for g in grads:
            backend.get_array_module(g).clip(g, -clip_value, clip_value, out=g)


def clip_grads_on_device(grads, max_norm):
    """clip_grad_norm_'s 2-norm without a host read: the norm and the clip factor stay on the
    device, and the norm is returned there (a 0-d array). A non-finite norm gives a factor of 1
    (the gradients are left alone; the optimizer's check then skips or refuses the step).

    On the kernel path the norm is one reduction over every gradient (``kernels.grad_norm``);
    otherwise it is reduced as clip_grad_norm_ reduces it, in float64 gradient by gradient,
    with the same operations, so a training step gives the same bits with or without a host
    read in the middle.
    """
    xp = backend.get_array_module(grads[0])
    if kernels.enabled(*grads):
        total = kernels.grad_norm(grads)
        clip_coef = xp.minimum(1.0, max_norm / (total + 1e-6))
    else:
        per_param = xp.stack([_norm(g, 2) for g in grads])
        total = xp.sum(per_param ** 2.0) ** (1.0 / 2.0)
        clip_coef = max_norm / (total + 1e-6)
        clip_coef = xp.where(clip_coef < 1, clip_coef, 1.0)
    clip_coef = xp.where(xp.isfinite(total), clip_coef, 1.0)
    mark_modified(*grads)  # the factor stays on the device, so whether it is 1 is not known here
    scale_all(grads, clip_coef)
    return total


def _norm(g, norm_type):
    """The norm of one gradient, summed in float64 (a 0-d array on its device). A 16-bit gradient
    is read in float32: float16 squares overflow their own dtype past 256 (65504 is its largest),
    so [300, 300, 300] would have an infinite norm and never be clipped."""
    xp = backend.get_array_module(g)
    g = g if g.dtype.itemsize > 2 else g.astype(np.float32)
    if norm_type == 2:
        with np.errstate(all="ignore"):  # squares past the dtype's range: an infinite norm, silently as the ops
            return xp.sqrt(xp.sum(g * g, dtype=np.float64))  # (g * g is |g| * |g|, bit for bit: no abs needed)
    a = xp.abs(g)
    if math.isinf(norm_type):
        return a.max() if a.size else xp.zeros((), dtype=a.dtype)
    with np.errstate(all="ignore"):
        return xp.sum(a ** norm_type, dtype=np.float64) ** (1.0 / norm_type)


def scale_all(grads, factor) -> None:
    """``g *= factor`` for every gradient array, in place; ``factor`` a 0-d array on the device.
    It is cast once per gradient dtype, and where the kernels take the gradients, every
    contiguous one is scaled in one launch (a multiply per gradient launches a kernel each):
    the same bits either way."""
    factors = {}
    if kernels.enabled(*grads) and len({id(g) for g in grads}) == len(grads):  # (one array twice: twice scaled)
        factors[grads[0].dtype] = factor.astype(grads[0].dtype)
        kernels.scale_in_place([g for g in grads if g.flags.c_contiguous], factors[grads[0].dtype])
        grads = [g for g in grads if not g.flags.c_contiguous]
    for g in grads:
        if g.dtype not in factors:
            factors[g.dtype] = factor.astype(g.dtype)
        g *= factors[g.dtype]


def _finite(total_norm, error_if_nonfinite) -> bool:
    """Whether the norm is finite; raises instead of returning False when asked to."""
    if math.isfinite(total_norm):
        return True
    if error_if_nonfinite:
        raise FloatingPointError(f"clip_grad_norm_: the total gradient norm is {total_norm}; "
                                 "some gradient holds NaN or inf")
    return False
