"""From reference to kernel: the softmax and layer-norm ladders (docs/kernel-ladder.md).

Each rung is its own ``.cu`` file in this directory, a step from the NumPy reference
towards the kernel minitx uses (``softmax.cu`` / ``layer_norm.cu`` one directory up),
with a header comment saying what changed from the rung before and why that is faster:

    v1  one thread per row
    v2  a block per row, tree reductions in shared memory (coalesced loads)
    v3  a warp per row, warp shuffles, one pass over the row (online softmax / Welford)

The launchers below run a rung like the product launchers run theirs: on CuPy arrays on the
GPU, on NumPy arrays through the CPU emulation (tests/kernels/test_ladder.py proves every
rung against the reference there). ``benchmarks/bench_ladder.py`` times them on a GPU.
"""
from __future__ import annotations

import numpy as np

from .._launch import check_int32, contiguous, float_dtype, row_block, rows_cols
from .._runtime import backend_for

#: The rungs of each ladder, slowest first; each names its file ladder/<rung>.cu and kernel.
RUNGS = {
    "softmax": ("softmax_v1", "softmax_v2", "softmax_v3"),
    "layer_norm": ("layer_norm_v1", "layer_norm_v2", "layer_norm_v3"),
}
#: The rung files and their kernels, as _runtime.KERNELS lists the product's.
KERNELS = {f"ladder/{rung}.cu": (rung,) for rungs in RUNGS.values() for rung in rungs}

_THREADS = 128  # v1: rows per block; v3: 4 warps, so 4 rows per block
#: The rungs are instantiated for float and double only (the kernels they lead to take bfloat16 too).
_DTYPES = ("float32", "float64")


def _launch_rung(be, ladder, rung, dt, arrays, rows, cols, extra=()):
    """Launch rung ``rung`` of ``ladder`` over a [rows, cols] problem: v1 a thread per row,
    v2 a block per row (a power of two of threads covering the row, 32..256), v3 a warp per
    row.  The kernel's parameters are ``(*arrays, int rows, int cols, *extra)``."""
    if rung not in RUNGS[ladder]:
        raise ValueError(f"unknown {ladder} rung {rung!r}; expected one of {RUNGS[ladder]}")
    check_int32(rows=rows, cols=cols)
    version = rung.rsplit("_v", 1)[1]
    if version == "1":
        grid, block = -(-rows // _THREADS), _THREADS
    elif version == "2":
        grid, block = rows, 1 << (row_block(cols) - 1).bit_length()
    else:
        grid, block = -(-rows // (_THREADS // 32)), _THREADS
    be.launch(f"ladder/{rung}.cu", rung, dt, (grid,), (block,),
              (*arrays, np.int32(rows), np.int32(cols), *extra), kernels=(rung,))


def softmax(rung, x):
    """Softmax over the last axis of x computed by ``rung`` (e.g. 'softmax_v2')."""
    be = backend_for(x)
    (x,) = contiguous(be.xp, x)
    dt = float_dtype(x, allowed=_DTYPES)
    rows, cols = rows_cols(x)
    y = be.empty(x.shape, dt)
    if x.size:
        _launch_rung(be, "softmax", rung, dt, (x, y), rows, cols)
    return y


def layer_norm(rung, x, weight=None, bias=None, eps=1e-5):
    """Layer norm over the last axis by ``rung`` (e.g. 'layer_norm_v3'): (y, mean, rstd),
    as :func:`minitx.kernels.layer_norm_forward` returns them."""
    be = backend_for(x, weight, bias)
    x, w, b = contiguous(be.xp, x, weight, bias)
    dt = float_dtype(x, w, b, allowed=_DTYPES)
    rows, cols = rows_cols(x)
    y = be.empty(x.shape, dt)
    mean, rstd = be.empty(x.shape[:-1], dt), be.empty(x.shape[:-1], dt)
    if x.size:
        _launch_rung(be, "layer_norm", rung, dt, (x, w, b, y, mean, rstd), rows, cols,
                     (dt.type(eps),))
    return y, mean, rstd
