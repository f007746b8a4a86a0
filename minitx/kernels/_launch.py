"""What every launcher shares: the dtype, int32 and shape checks, and the row launch.

The contract of every launcher (softmax.py, layer_norm.py, ... beside their ``.cu``):

* Array arguments are CuPy arrays (real GPU launch) or NumPy arrays (the CPU
  emulation of the same .cu source -- used by the tests, slow).  The float
  arrays of one call share one storage dtype: float32, float64, or ml_dtypes'
  bfloat16.  Computation and accumulation happen in its compute dtype
  (:func:`~minitx.kernels._runtime.compute_dtype`: float32 for bfloat16, the
  dtype itself otherwise); a bfloat16 result is rounded once, to nearest even.
  What a launcher's contract keeps unrounded (statistics such as layer norm's
  mean and rstd, losses, log-sum-exps, sums over many elements) is in the
  compute dtype; each launcher's docstring says which.
* Inputs are made C-contiguous (a copy only when needed); outputs are freshly
  allocated, C-contiguous, and written completely with ``=`` by the kernels
  (exceptions are stated per launcher: the Adam step updates in place,
  ``embedding_backward`` writes the rows it touches into a zeroed array, or adds them into
  a given one (``out=``: a tied table's gradient), the attention
  kernels read strided heads and return [B, H, L, d] views of [B, L, H, d] arrays).
* Scalars reach the kernels as explicit ``numpy.int32/int64/uint32/uint64/
  float32/float64`` values matching the kernel signature (float scalars in the
  compute dtype).
* Copies between host and device: ``nonfinite_counts`` is the one launcher
  that copies to the host (its counts; the host waits for the device there).
  The multi-tensor launchers of adam.py copy host-built arrays to the device:
  the work table once per list of tensor sizes (then kept), the tensors'
  addresses once per list of addresses (then kept), and ``adam_step`` its lr
  and step counts when given as host numbers (an optimizer keeps both on the
  device; the kernel reads them from memory).  The attention launchers copy
  their layouts, once per layout (then kept).  ``cross_entropy_backward`` given
  a Python number as ``dloss_rows`` copies that number.  No other launcher
  copies either way.
"""
from __future__ import annotations

import numpy as np

from ._runtime import STORAGE_DTYPES, compute_dtype

_INT32_MAX = 2**31 - 1


KEPT: dict = {}  # (kind, backend, device, key) -> what kept() made: work tables, index arrays, layouts, Philox words
_KEPT_MOST = 4096  # more than a training run asks for (a few per batch shape): start over


def kept(be, kind, key, make):
    """``make()`` (arrays built on the host and copied to the device), made once per (kind, key,
    device) and kept: a copy from the host at every step would make the step wait for it, and a
    captured graph would replay a stale one (a graph keeps what it read: train/graphs.py)."""
    device = be.xp.cuda.runtime.getDevice() if be.name == "cupy" else None
    full_key = (kind, be.name, device, key)
    value = KEPT.get(full_key)
    if value is None:
        if len(KEPT) >= _KEPT_MOST:
            KEPT.clear()
        value = KEPT[full_key] = make()
    return value


def float_dtype(*arrays, allowed=STORAGE_DTYPES):
    """The one storage dtype of ``arrays`` (None entries skipped), one of ``allowed`` (names);
    TypeError otherwise."""
    dt = np.dtype(arrays[0].dtype)
    if dt.name not in allowed:
        raise TypeError(f"fused kernels need {', '.join(allowed)} arrays, got {dt}")
    for a in arrays[1:]:
        if a is not None and np.dtype(a.dtype) != dt:
            raise TypeError(f"dtype mismatch: {np.dtype(a.dtype)} vs {dt}")
    return dt


def check_compute_dtype(op, dt, **arrays):
    """Arrays that the contract of ``op`` keeps in the compute dtype of storage dtype ``dt``
    (layer norm's saved mean and rstd, ...): TypeError naming one that is not."""
    want = compute_dtype(dt)
    for name, a in arrays.items():
        if np.dtype(a.dtype) != want:
            raise TypeError(f"{op}: {name} must be {want} for {dt} inputs, got {np.dtype(a.dtype)}")


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


def launch_rows(be, filename, kernel, dt, arrays, rows, cols, extra=(), size=None):
    """Launch a row kernel: one block per row of a [rows, cols] problem, a multiple of 32
    threads striding over the columns (row_block(cols)).  Its parameters are ``(*arrays, int
    rows, int cols, *extra)``, the extras already typed NumPy scalars; ``size``: the
    compile-time size of a kernel compiled per size (``kernel<T, size>``)."""
    check_int32(rows=rows, cols=cols)
    be.launch(filename, kernel, dt, (rows,), (row_block(cols),),
              (*arrays, np.int32(rows), np.int32(cols), *extra), size=size)
