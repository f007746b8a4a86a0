"""Launcher of embedding.cu: the embedding-table gradient, summed in a fixed order (sorted by
id), so that it is bit-identical from run to run."""
from __future__ import annotations

import numpy as np

from ._launch import check_int32, float_dtype
from ._runtime import backend_for, compute_dtype

#: warps per block; each takes every ROW_LANES-th lookup of an id's run (embedding.cu)
ROW_LANES = 8
#: lookups a warp loads at once before adding them in order (embedding.cu)
UNROLL = 8
#: most blocks along the sorted positions; each strides over n / POSITION_BLOCKS of them
POSITION_BLOCKS = 1024
#: the widest rows the grid covers: grid.y, at most 65,535 on CUDA, counts tiles of 32 columns
MAX_DIM = 65535 * 32
#: -D defines embedding.cu is compiled with (see _runtime.compile_defines).
DEFINES = {"EMB_ROW_LANES": ROW_LANES, "EMB_UNROLL": UNROLL}


def embedding_backward(ids, dy, num_embeddings, padding_idx=None, out=None):
    """Sum ``dy`` rows into a zeroed embedding-table gradient, deterministically; or, given
    ``out`` (a contiguous [num_embeddings, dim] array of the compute dtype), add each row's sum
    into it (out[id] + sum: what adding the zeroed table's result would give) and return it.

    ids: integer array of any shape S (cast to int64); dy: float [*S, dim].
    Returns dweight [num_embeddings, dim] with dweight[id] = sum of dy rows
    looked up with that id; rows whose id equals padding_idx (negative values
    are counted from the end, like torch) or is out of range are skipped.
    The lookups are sorted by id first and each id's rows are added in one fixed
    order, so the same inputs give the same bits on every run (no atomics).

    dtypes: dy float32, float64 or bfloat16; dweight in its compute dtype (float32 for
    bfloat16: the sums are never rounded to bfloat16, and the table is a float32 master
    weight).
    """
    be = backend_for(ids, dy)
    xp = be.xp
    dy = xp.ascontiguousarray(dy)
    dt = float_dtype(dy)
    ids = xp.ascontiguousarray(xp.asarray(ids).astype(np.int64, copy=False)).reshape(-1)
    n = int(ids.size)
    dim = int(dy.shape[-1]) if dy.ndim else 1
    if dy.size != n * dim:
        raise ValueError(f"dy shape {dy.shape} does not match {n} ids")
    num_embeddings = int(num_embeddings)
    if padding_idx is None:
        pad = -1
    else:
        pad = int(padding_idx)
        if pad < 0:
            pad += num_embeddings
        if not 0 <= pad < num_embeddings:
            raise ValueError(f"padding_idx {padding_idx} out of range")
    accumulate = out is not None
    if not accumulate:
        out = be.zeros((num_embeddings, dim), compute_dtype(dt))
    elif (not isinstance(out, be.xp.ndarray) or out.shape != (num_embeddings, dim) or out.dtype != compute_dtype(dt)
          or not out.flags.c_contiguous):
        raise ValueError(f"embedding_backward: out must be a contiguous {be.xp.__name__} array of shape "
                         f"{(num_embeddings, dim)} and dtype {np.dtype(compute_dtype(dt)).name}, got "
                         f"{type(out).__name__} {out.shape} {out.dtype}")
    if n and dim:
        check_int32(dim=dim)
        if dim > MAX_DIM:
            raise ValueError(f"embedding_backward: rows of {dim} columns need {-(-dim // 32)} tiles of 32 along "
                             f"grid.y, which takes at most 65535 (dim <= {MAX_DIM}); use the reference path")
        # a stable sort keeps each id's lookups in their original order (CuPy's sort always is)
        order = xp.argsort(ids, kind="stable") if xp is np else xp.argsort(ids)
        order = xp.ascontiguousarray(order.astype(np.int64, copy=False))
        sorted_ids = xp.ascontiguousarray(ids[order])
        grid = (min(n, POSITION_BLOCKS), -(-dim // 32))  # x strides over sorted positions, y over 32-column tiles
        be.launch("embedding.cu", "embedding_backward", dt, grid, (32 * ROW_LANES,),
                  (sorted_ids, order, dy, out, np.int64(n), np.int32(dim), np.int64(num_embeddings),
                   np.int64(pad), np.int32(accumulate)))
    return out
