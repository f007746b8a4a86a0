"""Launcher of embedding.cu: the embedding-table gradient as one atomic scatter-add."""
from __future__ import annotations

import numpy as np

from ._launch import check_int32, float_dtype, row_block
from ._runtime import backend_for


def embedding_backward(ids, dy, num_embeddings, padding_idx=None):
    """Scatter-add ``dy`` rows into a zeroed embedding-table gradient.

    ids: integer array of any shape S (cast to int64); dy: float [*S, dim].
    Returns dweight [num_embeddings, dim] with dweight[id] = sum of dy rows
    looked up with that id; rows whose id equals padding_idx (negative values
    are counted from the end, like torch) or is out of range are skipped.
    Accumulation uses atomicAdd (float results may differ in the last bits from
    run to run).
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
    out = be.zeros((num_embeddings, dim), dt)
    if n and dim:
        check_int32(dim=dim)
        grid = int(min(n, 65535 * 4))  # blocks grid-stride over the lookups
        be.launch("embedding.cu", "embedding_backward", dt, (grid,), (row_block(dim),),
                  (ids, dy, out, np.int64(n), np.int32(dim), np.int64(num_embeddings),
                   np.int64(pad)))
    return out
