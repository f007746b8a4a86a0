"""Hand-written fused CUDA kernels for minitx.

The ``.cu`` files in this directory are compiled at run time by CuPy
(``cupy.RawModule`` + ``name_expressions`` for the ``float``, ``double`` and
``mtx::bfloat16`` template instantiations), lazily and once per (file, dtype).  Each has its launchers in
the Python module beside it (``softmax.py`` next to ``softmax.cu``, ...), all
re-exported here; ``_launch.py`` holds what they share.

Gating (what autograd ops should check before calling a launcher)::

    from minitx import kernels
    if kernels.enabled(x, w):        # CuPy float32/float64/bfloat16 arrays, GPU present,
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

from minitx.backend import cuda_available as available
from ._runtime import KERNELS, STORAGE_DTYPES, compute_dtype, is_cupy_array
from .adam import adam_step, grad_norm, nonfinite_counts, nonfinite_flags, scale_in_place
from .attention import (AttentionPlan, attention_backward, attention_forward, attention_mask_supported,
                        attention_plan, one_pass_backward_runs, use_one_pass_backward)
from .attention_mma import tensor_core_attention_allowed, tensor_core_attention_runs, use_tensor_core_attention
from .cross_entropy import cross_entropy_backward, cross_entropy_forward
from .dropout import (bias_act_dropout_backward, bias_act_dropout_forward, dropout_add_backward,
                      dropout_add_forward, dropout_apply, dropout_threshold, philox_memory)
from .embedding import MAX_DIM as EMBEDDING_MAX_DIM
from .embedding import embedding_backward
from .layer_norm import layer_norm_backward, layer_norm_forward
from .softmax import softmax_backward, softmax_forward

__all__ = [
    "available", "enabled", "fused_allowed", "use_fused", "emulate_on_cpu", "KERNELS",
    "softmax_forward", "softmax_backward",
    "layer_norm_forward", "layer_norm_backward",
    "cross_entropy_forward", "cross_entropy_backward",
    "AttentionPlan", "attention_plan", "attention_mask_supported", "attention_forward", "attention_backward",
    "one_pass_backward_runs", "use_one_pass_backward",
    "tensor_core_attention_allowed", "use_tensor_core_attention", "tensor_core_attention_runs",
    "dropout_threshold", "philox_memory", "dropout_add_forward", "dropout_add_backward", "dropout_apply",
    "bias_act_dropout_forward", "bias_act_dropout_backward",
    "adam_step", "grad_norm", "nonfinite_counts", "nonfinite_flags", "scale_in_place",
    "embedding_backward", "EMBEDDING_MAX_DIM",
]

_override: contextvars.ContextVar = contextvars.ContextVar("minitx_use_fused", default=None)
_emulate: contextvars.ContextVar = contextvars.ContextVar("minitx_emulate_on_cpu", default=False)


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


def enabled(*arrays, stats=()) -> bool:
    """True when the fused path may run on these arrays: the fused path is
    allowed, and every array is a CuPy array on a present GPU (or, inside
    :func:`emulate_on_cpu`, a NumPy one) of one storage dtype the kernels take
    (float32, float64 or bfloat16).  ``stats`` are the arrays a launcher's
    contract keeps in the compute dtype of that storage dtype (layer norm's mean
    and rstd, attention's lse, a loss's gradient: float32 beside bfloat16
    arrays, the dtype itself otherwise); each must have it.  ``None`` entries
    are ignored."""
    if not fused_allowed():
        return False
    present = [a for a in arrays if a is not None]
    if not present or len({np.dtype(a.dtype) for a in present}) != 1:
        return False
    storage = np.dtype(present[0].dtype)
    if storage.name not in STORAGE_DTYPES:
        return False
    stats = [a for a in stats if a is not None]
    if any(np.dtype(a.dtype) != compute_dtype(storage) for a in stats):
        return False
    present += stats
    if all(is_cupy_array(a) for a in present):
        return available()
    if _emulate.get() and all(isinstance(a, np.ndarray) for a in present):
        from . import cpu_harness  # noqa: PLC0415 (only the tests get here)

        return cpu_harness.available()
    return False
