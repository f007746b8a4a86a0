"""Sizes and switch of attention_mma.cu: the fused attention's forward and backward on the
tensor cores, for bfloat16, and for float32 under TF32 (``backend.allow_tf32``); float64 and
exact float32 stay on attention.cu. :func:`minitx.kernels.attention_forward` and
:func:`minitx.kernels.attention_backward` launch it (``tensor_cores=``), each choosing on its own:
a forward of either file may be followed by a backward of either (the backward recomputes P
from the lse it is given; after a TF32 forward, that lse is of scores of rounded operands, so
P's rows sum to 1 within TF32's rounding). The backward's delta = rowsum(do * o) stays
attention.cu's (attention_backward_delta), and dk, dv and dq are attention_mma.cu's.

It is off unless asked for (``MINITX_ATTENTION_MMA=1``, or :func:`use_tensor_core_attention`): at
Multi30k's sizes (32 tokens, head dim 32 or 64) a head's products are too small for the tensor
cores to pay, and attention.cu's kernels are as fast or faster (benchmarks/bench_kernels.py's
``mma`` rows; results/README.md has the figures). The CPU build checks it against the NumPy reference.
"""
from __future__ import annotations

import contextlib
import contextvars
import os

import numpy as np

from .attention import HEAD_DIMS

#: Warps per block; each computes 16 rows: queries in the forward and dq, keys in dk and dv
#: (attention_mma.cu's header).
WARPS = 2
#: -D defines attention_mma.cu is compiled with (see _runtime.compile_defines).
DEFINES = {"ATT_MMA_WARPS": WARPS}
#: The kernels are templated on attention.py's head-dim classes D.
SIZES = {kernel: HEAD_DIMS for kernel in ("attention_mma_forward", "attention_mma_backward_dkdv",
                                         "attention_mma_backward_dq")}
#: Tensor cores take bfloat16 and TF32 operands: no float64 kernel (_runtime.instantiated_ctypes).
CTYPES = ("float", "mtx::bfloat16")

_override: contextvars.ContextVar = contextvars.ContextVar("minitx_attention_mma", default=None)


def tensor_core_attention_allowed() -> bool:
    """Whether attention's forward and backward may run on the tensor cores:
    ``use_tensor_core_attention``'s flag where one is set, else MINITX_ATTENTION_MMA (off unless
    1/true/yes/on)."""
    flag = _override.get()
    if flag is not None:
        return flag
    return os.environ.get("MINITX_ATTENTION_MMA", "0").strip().lower() in ("1", "true", "yes", "on")


@contextlib.contextmanager
def use_tensor_core_attention(flag: bool = True):
    """Context manager choosing attention.cu's forward and backward (False) or attention_mma.cu's
    (True) where the dtype allows it (nestable, thread/async-local)."""
    token = _override.set(bool(flag))
    try:
        yield
    finally:
        _override.reset(token)


def tensor_core_attention_runs(be, dt) -> bool:
    """Whether attention_mma.cu can compute attention of storage dtype ``dt`` here: bfloat16, or
    float32 while TF32 is allowed, on the CPU build or a GPU of compute capability >= 8.0."""
    from minitx.backend import tf32_allowed

    dt = np.dtype(dt)
    if not (dt.name == "bfloat16" or (dt == np.float32 and tf32_allowed())):
        return False
    if be.name != "cupy":
        return True
    return int(be.xp.cuda.Device().compute_capability) >= 80
