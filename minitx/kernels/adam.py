"""Launchers of adam.cu: one multi-tensor Adam/AdamW step, a gradient norm reduced on the
device (for clip_grad_norm_), a count of NaN/inf elements (for the optimizer's check), and an
in-place scale of many arrays (clipping's factor)."""
from __future__ import annotations

import numpy as np

from ._launch import check_compute_dtype, float_dtype, kept
from ._runtime import backend_for, compute_dtype

_CHUNK = 4096  # elements per block
_THREADS = 256


def _chunk_counts(sizes):
    """ceil(n / chunk) chunks for a tensor of n > 0 elements."""
    return [-(-n // _CHUNK) for n in sizes]


def _work_table(be, sizes):
    """The work table of tensors of these sizes, on the device: (sizes, tensor index of every
    chunk, start of every chunk, number of chunks); block b of a launch works on chunk b.

    A training step asks for the same table three times (the clip norm, the NaN/inf check,
    Adam) for the same parameters: it is built and uploaded once and kept (built in Python on
    every call, it cost more host time than the Adam kernel takes on the GPU)."""
    def make():
        chunks = _chunk_counts(sizes)
        tensor_idx = np.repeat(np.arange(len(sizes), dtype=np.int32), chunks)
        first_chunk = np.repeat(np.cumsum([0] + chunks[:-1]), chunks)
        starts = (np.arange(len(tensor_idx)) - first_chunk).astype(np.int64) * _CHUNK
        return (be.to_device(np.asarray(sizes, dtype=np.int64)), be.to_device(tensor_idx), be.to_device(starts),
                len(starts))
    return kept(be, "work table", tuple(sizes), make)


def adam_step(params, grads, exp_avgs, exp_avg_sqs, lr, beta1=0.9, beta2=0.999, eps=1e-8,
              weight_decay=0.0, decoupled=False, step=1, *, skip=None):
    """One Adam (decoupled=False, L2 weight decay) or AdamW (decoupled=True) step
    over many tensors in a single launch per dtype.

    params, grads, exp_avgs, exp_avg_sqs: equal-length lists of C-contiguous
    float arrays, matching shapes per index; params, exp_avgs and exp_avg_sqs
    are updated IN PLACE (so they must already be contiguous -- a ValueError is
    raised otherwise).  skip: None, or a boolean array of one element on the
    device: where it is True the kernel leaves every array as it is, so a step
    decided against on the device (a NaN or inf gradient) needs no host read and
    no copies.  Returns None.

    What changes from step to step, the kernel reads from device memory (a captured graph
    replays with whatever that memory then holds):

    * lr: a number (copied to the device on this call), or a float64 array of one element on
      the device (an optimizer's, written before each step);
    * step: each tensor's step count t after incrementing, for the bias corrections
      ``1 - beta**t``: one int >= 1 for every tensor (copied), or an int64 array on the device
      with one count per tensor (an optimizer's, advanced on the device).

    dtypes: a gradient is float32, float64 or bfloat16; its parameter and moments are in the
    gradient's compute dtype: float32 master weights for a bfloat16 gradient (mixed
    precision), the gradient's own dtype otherwise.  The step is computed in that dtype.
    One launch per gradient dtype.
    """
    n = len(params)
    if not (len(grads) == len(exp_avgs) == len(exp_avg_sqs) == n):
        raise ValueError("adam_step: list lengths differ")
    if n == 0:
        return None
    be = backend_for(*params, *grads, *exp_avgs, *exp_avg_sqs, skip)
    steps, lr = _step_inputs(be, n, step, lr)
    if skip is not None:
        if skip.dtype != np.bool_ or skip.size != 1:
            raise TypeError(f"adam_step: skip must be a boolean array of one element, got {skip.dtype} {skip.shape}")
        skip = be.xp.ascontiguousarray(skip.reshape(1))
    groups: dict = {}
    for i in range(n):
        p, g, m, v = params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]
        for a in (p, m, v):
            if not a.flags.c_contiguous:
                raise ValueError("adam_step updates in place: params/states must be contiguous")
        if not (p.shape == g.shape == m.shape == v.shape):
            raise ValueError(f"adam_step: shape mismatch at index {i}")
        dt = float_dtype(g)
        check_compute_dtype("adam_step", dt, param=p, exp_avg=m, exp_avg_sq=v)
        groups.setdefault(dt, []).append(i)
    for dt, idx in groups.items():
        idx = [i for i in idx if params[i].size]
        if not idx:
            continue
        gr = [be.xp.ascontiguousarray(grads[i]) for i in idx]
        sizes_dev, bt, bs, nb = _work_table(be, [int(params[i].size) for i in idx])
        launch_steps = steps if len(idx) == n else steps[_kept_indices(be, idx)]
        ct = compute_dtype(dt)
        be.launch("adam.cu", "adam_step", dt, (nb,), (_THREADS,),
                  (be.pointer_array([params[i] for i in idx]), be.pointer_array(gr),
                   be.pointer_array([exp_avgs[i] for i in idx]),
                   be.pointer_array([exp_avg_sqs[i] for i in idx]),
                   sizes_dev, bt, bs, np.int32(nb), np.int32(_CHUNK), lr, launch_steps, skip,
                   np.float64(beta1), np.float64(beta2), ct.type(eps), ct.type(weight_decay),
                   np.int32(bool(decoupled))))
    return None


def _step_inputs(be, n, step, lr):
    """adam_step's ``step`` and ``lr`` as the kernel reads them: a contiguous int64 array of n
    counts and a float64 array of one element, on the device (host values are copied there)."""
    if hasattr(step, "dtype"):
        if step.dtype != np.int64 or step.shape != (n,):
            raise TypeError(f"adam_step: step must be an int64 array of one count per tensor ({n}), "
                            f"got {step.dtype} {step.shape}")
        steps = be.xp.ascontiguousarray(step)
    else:
        if step < 1:
            raise ValueError(f"adam_step: step must be >= 1, got {step}")
        steps = be.to_device(np.full(n, step, dtype=np.int64))
    if hasattr(lr, "dtype"):
        if lr.dtype != np.float64 or lr.size != 1:
            raise TypeError(f"adam_step: lr must be a number or a float64 array of one element, got {lr.dtype} "
                            f"{lr.shape}")
        return steps, be.xp.ascontiguousarray(lr.reshape(1))
    return steps, be.to_device(np.array([lr], dtype=np.float64))


def grad_norm(grads):
    """Global L2 norm of a list of float arrays (one dtype), reduced on the device.

    Returns a 0-d array (on the device for CuPy input) -- no host sync -- in the arrays'
    compute dtype (float32 for bfloat16 gradients: squares are summed in float32).  The clip
    factor ``min(1, max_norm / (norm + 1e-6))`` can then be computed with xp.
    """
    grads = list(grads)
    if not grads:
        raise ValueError("grad_norm of an empty list")
    be = backend_for(*grads)
    dt = float_dtype(*grads)
    gs = [be.xp.ascontiguousarray(g) for g in grads if g.size]
    out = be.empty((1,), compute_dtype(dt))
    if not gs:
        out[...] = 0
        return out.reshape(())
    sizes_dev, bt, bs, nb = _work_table(be, [int(g.size) for g in gs])
    partial = be.empty((nb,), compute_dtype(dt))
    be.launch("adam.cu", "sumsq_partial", dt, (nb,), (_THREADS,),
              (be.pointer_array(gs), sizes_dev, bt, bs, np.int32(nb), np.int32(_CHUNK), partial))
    be.launch("adam.cu", "sumsq_finalize", dt, (1,), (_THREADS,), (partial, np.int32(nb), out))
    return out.reshape(())


def scale_in_place(arrays, factor):
    """``x *= factor`` for every array of ``arrays`` (one dtype, each C-contiguous), in one
    launch: what clipping does to every gradient, where an elementwise multiply per gradient
    would launch a kernel each. ``factor``: an array of one element in the arrays' dtype, read on
    the device (no host read; a captured step scales by each step's factor). The product is
    computed in the compute dtype and rounded once, as ``x * factor`` elementwise is."""
    arrays = list(arrays)
    if not arrays:
        return None
    be = backend_for(*arrays, factor)
    dt = float_dtype(*arrays)
    if factor.dtype != dt or factor.size != 1:
        raise TypeError(f"scale_in_place: factor must be one element of the arrays' dtype {np.dtype(dt).name}, "
                        f"got {factor.dtype} {factor.shape}")
    for i, a in enumerate(arrays):
        if not a.flags.c_contiguous:
            raise ValueError(f"scale_in_place scales in place: array {i} of shape {a.shape} is not contiguous")
    xs = [a for a in arrays if a.size]
    if xs:
        sizes_dev, bt, bs, nb = _work_table(be, [int(x.size) for x in xs])
        be.launch("adam.cu", "scale_inplace", dt, (nb,), (_THREADS,),
                  (be.pointer_array(xs), sizes_dev, bt, bs, np.int32(nb), np.int32(_CHUNK),
                   be.xp.ascontiguousarray(factor.reshape(1))))
    return None


def _nonfinite_per_tensor(be, arrays):
    """On the device, int64: how many NaN or inf elements each non-empty array of ``arrays``
    holds, from one launch (nonfinite_partial: a count per chunk of the work table) and a running
    sum over the chunks read at each tensor's last chunk (whole numbers: exact, and no host
    read). Returns (indices of the non-empty arrays, their counts)."""
    dt = float_dtype(*arrays)
    nonempty = [i for i, a in enumerate(arrays) if a.size]
    if not nonempty:
        return nonempty, None
    xs = [be.xp.ascontiguousarray(arrays[i]) for i in nonempty]
    sizes = [int(x.size) for x in xs]
    sizes_dev, bt, bs, nb = _work_table(be, sizes)
    partial = be.empty((nb,), compute_dtype(dt))
    be.launch("adam.cu", "nonfinite_partial", dt, (nb,), (_THREADS,),
              (be.pointer_array(xs), sizes_dev, bt, bs, np.int32(nb), np.int32(_CHUNK), partial))
    running = partial.astype(np.int64).cumsum()[_last_chunks(be, sizes)]
    counts = running.copy()
    counts[1:] -= running[:-1]  # diff(prepend=0) without the host's 0, which CuPy would copy to the device
    return nonempty, counts


def _kept_indices(be, indices):
    """``indices`` as an int64 device array (kept)."""
    return kept(be, "indices", tuple(indices), lambda: be.to_device(np.asarray(indices, dtype=np.int64)))


def _last_chunks(be, sizes):
    """On the device, the index of each tensor's last chunk in the work table (kept)."""
    return kept(be, "last chunks", tuple(sizes), lambda: be.to_device(np.cumsum(_chunk_counts(sizes)) - 1))


def nonfinite_counts(arrays):
    """How many NaN or inf elements each float array of ``arrays`` (one dtype, bfloat16 too)
    holds, as a host int64 array: one launch over all of them and one device-to-host copy (the
    optimizer's eager check that no gradient is NaN or inf, which one reduction per gradient made
    hundreds of launches)."""
    arrays = list(arrays)
    counts = np.zeros(len(arrays), dtype=np.int64)
    if not arrays:
        return counts
    be = backend_for(*arrays)
    nonempty, per_tensor = _nonfinite_per_tensor(be, arrays)
    if nonempty:
        counts[nonempty] = be.xp.asnumpy(per_tensor) if be.name == "cupy" else per_tensor  # the one sync
    return counts


def nonfinite_flags(arrays):
    """Whether each float array of ``arrays`` (one dtype, bfloat16 too) holds no NaN and no inf,
    as a boolean array on the device: the same launch as nonfinite_counts and no host read (the
    deferred check of a sync-free step, and GradScaler's overflow check)."""
    arrays = list(arrays)
    be = backend_for(*arrays)
    nonempty, per_tensor = _nonfinite_per_tensor(be, arrays)
    if len(nonempty) == len(arrays):
        return per_tensor == 0
    finite = be.xp.ones(len(arrays), dtype=bool)
    if nonempty:
        finite[_kept_indices(be, nonempty)] = per_tensor == 0
    return finite