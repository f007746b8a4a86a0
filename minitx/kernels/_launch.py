"""What every launcher shares: the dtype, int32 and shape checks, and the row launch.

The contract of every launcher (softmax.py, layer_norm.py, ... beside their ``.cu``):

* Array arguments are CuPy arrays (real GPU launch) or NumPy arrays (the CPU
  emulation of the same .cu source -- used by the tests, slow).  All float
  arrays of one call share one dtype, float32 or float64; computation and
  accumulation happen in that dtype.
* Inputs are made C-contiguous (a copy only when needed); outputs are freshly
  allocated, C-contiguous, and written completely with ``=`` by the kernels
  (exceptions are stated per launcher: the Adam step updates in place,
  ``embedding_backward`` accumulates with ``+=`` into a zeroed array).
* Scalars reach the kernels as explicit ``numpy.int32/int64/uint32/uint64/
  float32/float64`` values matching the kernel signature.
* Nothing synchronises the device or copies data to the host, except
  ``nonfinite_counts``, which returns its counts on the host (one copy). The
  multi-tensor launchers' work tables are built once per list of tensors and
  kept on the device.
"""
from __future__ import annotations

import numpy as np

from ._runtime import FLOAT_DTYPES

_INT32_MAX = 2**31 - 1


def float_dtype(*arrays):
    """The one float dtype of ``arrays`` (None entries skipped); TypeError otherwise."""
    dt = np.dtype(arrays[0].dtype)
    if dt not in FLOAT_DTYPES:
        raise TypeError(f"fused kernels need float32/float64 arrays, got {dt}")
    for a in arrays[1:]:
        if a is not None and np.dtype(a.dtype) != dt:
            raise TypeError(f"dtype mismatch: {np.dtype(a.dtype)} vs {dt}")
    return dt


def check_int32(**sizes):
    """The kernels index with int: every size must fit."""
    for name, v in sizes.items():
        if v > _INT32_MAX:
            raise ValueError(f"{name}={v} exceeds the int32 range of the kernels")


def contiguous(xp, *arrays):
    """C-contiguous versions of ``arrays`` (None stays None)."""
    return tuple(None if a is None else xp.ascontiguousarray(a) for a in arrays)


def same_shape_inputs(xp, *arrays):
    """C-contiguous versions of ``arrays``, which must share one shape and one
    float dtype.  Returns ``(*arrays, dtype)``."""
    arrays = contiguous(xp, *arrays)
    dt = float_dtype(*arrays)
    for a in arrays[1:]:
        if a.shape != arrays[0].shape:
            raise ValueError(f"shape mismatch {arrays[0].shape} vs {a.shape}")
    return (*arrays, dt)


def rows_cols(x):
    """x seen as [rows, cols] over its last axis."""
    if x.ndim == 0:
        raise ValueError("expected at least 1-D input")
    cols = int(x.shape[-1])
    rows = int(x.size // cols) if cols else 0
    return rows, cols


def row_block(cols: int, max_threads: int = 256) -> int:
    """Threads per row-block: a multiple of 32 covering cols, capped."""
    return int(min(max_threads, max(32, -(-cols // 32) * 32)))


def launch_rows(be, filename, kernel, dt, arrays, rows, cols, extra=()):
    """Launch a row kernel: one block per row of a [rows, cols] problem, a multiple of 32
    threads striding over the columns.  Its parameters are ``(*arrays, int rows, int cols,
    *extra)``, the extras already typed NumPy scalars."""
    check_int32(rows=rows, cols=cols)
    be.launch(filename, kernel, dt, (rows,), (row_block(cols),),
              (*arrays, np.int32(rows), np.int32(cols), *extra))
