"""Launchers of adam.cu: one multi-tensor Adam/AdamW step, and a gradient norm reduced on
the device (for clip_grad_norm_)."""
from __future__ import annotations

import numpy as np

from ._launch import float_dtype
from ._runtime import backend_for

_CHUNK = 4096  # elements per block
_THREADS = 256


def _work_table(be, sizes):
    """(tensor index, start) of every chunk of every tensor, on the device, and their count:
    block b of a launch works on chunk b."""
    tensor_idx, starts = [], []
    for t, n in enumerate(sizes):
        for s in range(0, n, _CHUNK):
            tensor_idx.append(t)
            starts.append(s)
    return (be.to_device(np.asarray(tensor_idx, dtype=np.int32)),
            be.to_device(np.asarray(starts, dtype=np.int64)), len(starts))


def adam_step(params, grads, exp_avgs, exp_avg_sqs, lr, beta1=0.9, beta2=0.999, eps=1e-8,
              weight_decay=0.0, decoupled=False, step=1):
    """One Adam (decoupled=False, L2 weight decay) or AdamW (decoupled=True) step
    over many tensors in a single launch per dtype.

    params, grads, exp_avgs, exp_avg_sqs: equal-length lists of C-contiguous
    float arrays, matching shapes per index; params, exp_avgs and exp_avg_sqs
    are updated IN PLACE (so they must already be contiguous -- a ValueError is
    raised otherwise).  step: the 1-based step count after incrementing (used
    for bias correction).  Returns None.
    """
    n = len(params)
    if not (len(grads) == len(exp_avgs) == len(exp_avg_sqs) == n):
        raise ValueError("adam_step: list lengths differ")
    if n == 0:
        return None
    if step < 1:
        raise ValueError("step must be >= 1")
    be = backend_for(*params, *grads, *exp_avgs, *exp_avg_sqs)
    groups: dict = {}
    for i in range(n):
        p, g, m, v = params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]
        for a in (p, m, v):
            if not a.flags.c_contiguous:
                raise ValueError("adam_step updates in place: params/states must be contiguous")
        if not (p.shape == g.shape == m.shape == v.shape):
            raise ValueError(f"adam_step: shape mismatch at index {i}")
        groups.setdefault(float_dtype(p, g, m, v), []).append(i)
    bc1 = 1.0 - beta1 ** step
    bc2 = 1.0 - beta2 ** step
    for dt, idx in groups.items():
        idx = [i for i in idx if params[i].size]
        if not idx:
            continue
        gr = [be.xp.ascontiguousarray(grads[i]) for i in idx]
        sizes = [int(params[i].size) for i in idx]
        bt, bs, nb = _work_table(be, sizes)
        be.launch("adam.cu", "adam_step", dt, (nb,), (_THREADS,),
                  (be.pointer_array([params[i] for i in idx]), be.pointer_array(gr),
                   be.pointer_array([exp_avgs[i] for i in idx]),
                   be.pointer_array([exp_avg_sqs[i] for i in idx]),
                   be.to_device(np.asarray(sizes, dtype=np.int64)), bt, bs, np.int32(nb),
                   np.int32(_CHUNK), *(dt.type(a) for a in (lr, beta1, beta2, eps, weight_decay)),
                   np.int32(bool(decoupled)), dt.type(bc1), dt.type(bc2)))
    return None


def grad_norm(grads):
    """Global L2 norm of a list of float arrays (one dtype), reduced on the device.

    Returns a 0-d array (on the device for CuPy input) -- no host sync.  The clip
    factor ``min(1, max_norm / (norm + 1e-6))`` can then be computed with xp.
    """
    grads = list(grads)
    if not grads:
        raise ValueError("grad_norm of an empty list")
    be = backend_for(*grads)
    dt = float_dtype(*grads)
    gs = [be.xp.ascontiguousarray(g) for g in grads if g.size]
    out = be.empty((1,), dt)
    if not gs:
        out[...] = 0
        return out.reshape(())
    sizes = [int(g.size) for g in gs]
    bt, bs, nb = _work_table(be, sizes)
    partial = be.empty((nb,), dt)
    be.launch("adam.cu", "sumsq_partial", dt, (nb,), (_THREADS,),
              (be.pointer_array(gs), be.to_device(np.asarray(sizes, dtype=np.int64)), bt, bs,
               np.int32(nb), np.int32(_CHUNK), partial))
    be.launch("adam.cu", "sumsq_finalize", dt, (1,), (_THREADS,), (partial, np.int32(nb), out))
    return out.reshape(())
