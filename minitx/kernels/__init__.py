"""Hand-written fused CUDA kernels for minitx.

The ``.cu`` files in this directory are compiled at run time by CuPy
(``cupy.RawModule`` + ``name_expressions`` for the ``float``/``double`` template
instantiations), lazily and once per (file, dtype).  The launchers in
:mod:`minitx.kernels.launchers` are re-exported here.

Gating (what autograd ops should check before calling a launcher)::

    from minitx import kernels
    if kernels.enabled(x, w):        # CuPy float32/float64 arrays, GPU present,
        y = kernels.softmax_forward(x)  # fused path allowed
    else:
        ...                          # reference xp implementation

The fused path is disabled by ``MINITX_FUSED=0`` in the environment (read at
call time, always wins) or inside ``with kernels.use_fused(False):``.

Testing the ops' fused branches without a GPU: inside ``with
kernels.emulate_on_cpu():`` ``enabled()`` also accepts NumPy float arrays, so
an op's kernel branch runs the same ``.cu`` source through the CPU emulation
(exact, but slow: tiny shapes only).

Importing this package does not import CuPy.  Given NumPy arrays, the
launchers run the same kernel source through the CPU emulation in
:mod:`minitx.kernels.cpu_harness` (needs g++; slow; meant for tests).
"""
from __future__ import annotations

import contextlib
import contextvars
import os

import numpy as np

from ._runtime import KERNELS, is_cupy_array
from .launchers import *  # noqa: F401,F403
from .launchers import __all__ as _launcher_names

__all__ = ["available", "enabled", "fused_allowed", "use_fused", "emulate_on_cpu", "KERNELS",
           *_launcher_names]

_override: contextvars.ContextVar = contextvars.ContextVar("minitx_use_fused", default=None)
_emulate: contextvars.ContextVar = contextvars.ContextVar("minitx_emulate_on_cpu", default=False)
_available: bool | None = None
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def available() -> bool:
    """True when CuPy imports and at least one CUDA device is visible (cached)."""
    global _available
    if _available is None:
        try:
            import cupy  # noqa: PLC0415

            _available = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:  # ImportError, CUDARuntimeError, missing driver...
            _available = False
    return _available


def fused_allowed() -> bool:
    """False under MINITX_FUSED=0 or inside ``use_fused(False)``."""
    if os.environ.get("MINITX_FUSED", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    flag = _override.get()
    return True if flag is None else bool(flag)


@contextlib.contextmanager
def use_fused(flag: bool = True):
    """Context manager enabling/disabling the fused kernels (nestable,
    thread/async-local).  MINITX_FUSED=0 still forces them off."""
    token = _override.set(bool(flag))
    try:
        yield
    finally:
        _override.reset(token)


@contextlib.contextmanager
def emulate_on_cpu(flag: bool = True):
    """Context manager under which :func:`enabled` also accepts NumPy arrays,
    so the ops take their kernel branches through the CPU emulation (tests
    only: every launch compiles/loads the g++ build and runs CUDA threads as
    fibers).  Nestable, thread/async-local; ``use_fused(False)`` and
    ``MINITX_FUSED=0`` still win."""
    token = _emulate.set(bool(flag))
    try:
        yield
    finally:
        _emulate.reset(token)


def enabled(*arrays) -> bool:
    """True when the fused path may run on these arrays: the fused path is
    allowed, and every array is a CuPy float32/float64 array on a present GPU
    (or, inside :func:`emulate_on_cpu`, a NumPy one), all of one dtype (the
    launchers compute in a single dtype).  ``None`` entries are ignored."""
    if not fused_allowed():
        return False
    present = [a for a in arrays if a is not None]
    if not present or len({np.dtype(a.dtype) for a in present}) != 1:
        return False
    if np.dtype(present[0].dtype) not in _FLOAT_DTYPES:
        return False
    if all(is_cupy_array(a) for a in present):
        return available()
    if _emulate.get() and all(isinstance(a, np.ndarray) for a in present):
        from . import cpu_harness  # noqa: PLC0415 (only the tests get here)

        return cpu_harness.available()
    return False
