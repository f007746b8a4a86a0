"""Normalization: layer norm over the last axis.
Fused kernels: where ``kernels.enabled(...)`` says the arrays suit a kernel (CuPy float arrays,
fused path allowed), forward and backward call a launcher from ``minitx.kernels`` instead of the
xp reference code below it. Both branches save the same arrays, so backward does not care which
forward ran, and the reference stays the CPU path and the tests' oracle.
"""
from __future__ import annotations

from minitx import backend, kernels
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor
from minitx.backend import get_array_module
from minitx.ops._args import floating

__all__ = ["LayerNorm"]


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
        if kernels.enabled(dy, x, w, stats=(mu, rstd)):
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


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last axis; weight defaults to ones, bias to zeros."""
    x = floating(x)
    xp = backend.get_array_module(x.data)
    dim = x.shape[-1:]
    weight = weight if weight is not None else Tensor(xp.ones(dim, dtype=x.dtype))
    bias = bias if bias is not None else Tensor(xp.zeros(dim, dtype=x.dtype))
    return LayerNorm(eps)(x, weight, bias)
