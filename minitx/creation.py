"""Factories for new tensors: zeros, ones, full, empty, eye, arange, linspace, randn, rand, their
*_like forms, and from_dlpack (a tensor on another library's memory)."""
from __future__ import annotations

from minitx import backend, interop
from minitx import random as mrandom
from minitx.autograd.tensor import Tensor


def _make(fill, shape, dtype, device, requires_grad):
    device = backend.check_device(device)
    xp = backend.xp_for(device)
    dtype = backend.resolve_dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return Tensor(fill(xp, shape, dtype), requires_grad=requires_grad)


def zeros(*shape, dtype=None, device=None, requires_grad=False):
    return _make(lambda xp, s, d: xp.zeros(s, dtype=d), _flat(shape), dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False):
    return _make(lambda xp, s, d: xp.ones(s, dtype=d), _flat(shape), dtype, device, requires_grad)


def full(shape, value, dtype=None, device=None, requires_grad=False):
    return _make(lambda xp, s, d: xp.full(s, value, dtype=d), shape, dtype, device, requires_grad)


def empty(*shape, dtype=None, device=None, requires_grad=False):
    """A tensor whose values are whatever the memory held (NumPy's and PyTorch's empty): fill it
    before reading it."""
    return _make(lambda xp, s, d: xp.empty(s, dtype=d), _flat(shape), dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The n x m identity (m = n by default): ones on the diagonal."""
    return _make(lambda xp, s, d: xp.eye(n, m, dtype=d), (), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from start to end, both included (PyTorch's linspace)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace: steps must be a whole number >= 0, got {steps!r}")
    return _make(lambda xp, s, d: xp.linspace(start, end, steps, dtype=d), (), dtype, device, requires_grad)


def full_like(t, value, dtype=None):
    return full(t.shape, value, dtype=dtype or t.dtype, device=t.device)


def randn(*shape, dtype=None, device=None, requires_grad=False):
    """Standard normal samples from minitx's seeded generator."""
    device = backend.check_device(device)
    rng = mrandom.generator(device)
    return _make(lambda xp, s, d: rng.standard_normal(s).astype(d), _flat(shape), dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) from minitx's seeded generator."""
    device = backend.check_device(device)
    rng = mrandom.generator(device)
    return _make(lambda xp, s, d: rng.random(s).astype(d), _flat(shape), dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None):
    """Evenly spaced values in [start, stop); int64 for integer arguments, else float32."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = "int64" if all(isinstance(v, int) for v in (start, stop, step)) else None
    return _make(lambda xp, s, d: xp.arange(start, stop, step, dtype=d), (), dtype, device, False)


def zeros_like(t, dtype=None):
    return zeros(t.shape, dtype=dtype or t.dtype, device=t.device)


def ones_like(t, dtype=None):
    return ones(t.shape, dtype=dtype or t.dtype, device=t.device)


def from_dlpack(x, requires_grad=False) -> Tensor:
    """A Tensor on the memory of ``x``, any DLPack producer (a PyTorch, CuPy, NumPy or JAX
    array), without a copy: on 'cpu' for CPU memory, on 'cuda' for GPU memory. Writes through
    either side are seen by the other. Dtypes minitx does not compute in are converted (a
    copy): float16 to float32, int8/int16/uint16... to int64 (see minitx.interop)."""
    return Tensor(interop.array_from_dlpack(x), requires_grad=requires_grad)


def _flat(shape):
    """zeros(2, 3) and zeros((2, 3)) both mean shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)
