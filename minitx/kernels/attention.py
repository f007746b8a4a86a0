"""Launchers of attention.cu, and the one rule for when the fused kernels can compute an
attention (:func:`attention_plan`, asked by ``ops.ScaledDotProductAttention`` and by the
launchers alike).

The kernels' sizes live here and reach attention.cu as ``-D`` defines (``DEFINES``, passed
by every build: CuPy's NVRTC, the CPU g++ build, the nvcc test), so the grid a launcher
computes and the tiles the kernel uses come from the same numbers.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
from typing import NamedTuple

import numpy as np

from ._launch import check_compute_dtype, check_int32, float_dtype, kept
from ._runtime import CTYPE, backend_for, compute_dtype
from .dropout import dropout_threshold, _philox_args

#: The head-dim classes D the kernels are compiled for: a head of d columns runs the kernels of
#: the smallest D >= d, whose shared tiles hold D columns (zeros past d, and a 16-byte pad) and
#: whose loops over the head dim run D steps known to the compiler (attention.cu says more).
HEAD_DIMS = (32, 64, 128)
#: Largest head dimension d.
MAX_HEAD_DIM = HEAD_DIMS[-1]
#: Threads per block of every attention kernel: where output rows are summed, groups of D / V
#: threads each own V adjacent columns (V = 4 floats or 2 doubles, one 16-byte load); the
#: kernel's static_asserts say which thread counts split every tile evenly.
THREADS = 128


def _min_blocks(text: str) -> int:
    """MIN_BLOCKS from the text of MINITX_ATTENTION_MIN_BLOCKS, checked."""
    text = text.strip()
    if not (text.isdigit() and int(text) <= 2048 // THREADS):
        raise ValueError(f"MINITX_ATTENTION_MIN_BLOCKS={text!r}: expected a whole number of blocks of "
                         f"{THREADS} threads per multiprocessor, 0 (the compiler's choice) to {2048 // THREADS}")
    return int(text)


#: Blocks of THREADS a multiprocessor must be able to hold at once (``__launch_bounds__``' second
#: argument: the compiler keeps each thread's registers under 65,536 / (THREADS * MIN_BLOCKS)), or
#: 0 to leave the registers to the compiler. More blocks hide more latency, fewer registers can
#: mean spills; which is faster is for a GPU to say: ``MINITX_ATTENTION_MIN_BLOCKS=n`` compiles
#: the kernels with n instead, for benchmarks to compare.
MIN_BLOCKS = _min_blocks(os.environ.get("MINITX_ATTENTION_MIN_BLOCKS", "0"))

#: The kernels taking the head-dim class D as their second template argument, and the D they
#: are compiled for (_runtime.instantiations).
SIZES = {**{kernel: HEAD_DIMS for kernel in ("attention_forward", "attention_backward_dkdv", "attention_backward_dq")},
         "attention_backward_onepass": HEAD_DIMS[:2]}  # (a tile of all the keys at D = 128 passes 48 KB)


class Tiles(NamedTuple):
    """Rows per shared-memory tile: forward query/key tiles, backward query/key tiles, and the
    one-pass backward's key tile (all of a head's keys, up to bk1). Sized so that static shared
    memory stays under 48 KB; bk <= 32 (one warp lane per score). The tiles hold the compute
    dtype (bfloat16 inputs are staged as float32: float32's tiles)."""
    bq: int
    bk: int
    bqb: int
    bkb: int
    bk1: int


TILES = {np.dtype(np.float32): Tiles(bq=16, bk=32, bqb=16, bkb=16, bk1=32),
         np.dtype(np.float64): Tiles(bq=8, bk=16, bqb=8, bkb=8, bk1=16)}

#: -D defines attention.cu is compiled with (see _runtime.compile_defines).
DEFINES = {"ATT_THREADS": THREADS, "ATT_MIN_BLOCKS": MIN_BLOCKS,
           **{f"ATT_{CTYPE[dt.name].upper()}_{name.upper()}": size
              for dt, tiles in TILES.items() for name, size in tiles._asdict().items()}}


def _head_dim_class(d: int) -> int:
    """The D of HEAD_DIMS whose kernels compute heads of d columns: the smallest D >= d."""
    return next(D for D in HEAD_DIMS if d <= D)


class AttentionPlan(NamedTuple):
    """How the kernels compute an attention: over ``batch_heads`` rows of [L, d] matrices,
    with the mask (if any) reshaped to [mask_rows, Lk], and the kernel's causal flag."""
    batch_heads: int
    mask_rows: int | None
    causal: bool


def _key_padding_rows(mask_shape, q_shape, lk):
    """B' when a mask of this shape, broadcast against the scores [..., Lq, Lk], is a
    key-padding mask: it varies only along the first axis of q and the keys, so it can be
    reshaped to [B', Lk] (B' = q_shape[0], or 1 for all). None for any other mask (per query,
    per head, ...)."""
    ndim = len(q_shape)
    if len(mask_shape) > ndim:
        return None
    shape = (1,) * (ndim - len(mask_shape)) + tuple(mask_shape)
    first = shape[0] if ndim > 2 else 1  # with no batch axes, axis 0 is the queries
    if shape[-1] != lk or any(n != 1 for n in shape[1 if ndim > 2 else 0:-1]):
        return None
    if first not in (1, q_shape[0]):
        return None
    return first


def attention_plan(q_shape, k_shape, v_shape, mask_shape=None, *, causal=False, weights=False):
    """Whether the fused kernels can compute this attention: an :class:`AttentionPlan`, or a
    str saying why not.

    The shapes and flags mean what they mean to ``ops.ScaledDotProductAttention``: q [..., Lq,
    d], k [..., Lk, d], v [..., Lk, dv]; a mask broadcast to [..., Lq, Lk]; causal lets query
    i see keys j <= i + Lk - Lq. The kernels need one set of batch axes, d = dv <= 128 (the
    ``MAX_HEAD_DIM``), a key-padding mask, no weights returned (they never form P; dropout on
    the weights they can do), and a causal mask that fits theirs, j <= i: Lq == Lk, or Lq == 1
    (the one query sees every key, so the kernel runs without its causal flag).
    """
    lq, d = q_shape[-2:]
    lk, dv = k_shape[-2], v_shape[-1]
    if weights:
        return "the attention weights were requested (the kernels never form them)"
    if not tuple(q_shape[:-2]) == tuple(k_shape[:-2]) == tuple(v_shape[:-2]):
        return f"the batch axes of q {tuple(q_shape)}, k {tuple(k_shape)}, v {tuple(v_shape)} differ"
    if k_shape[-1] != d or dv != d:
        return f"head dims differ: q {d}, k {k_shape[-1]}, v {dv}"
    if not 1 <= d <= MAX_HEAD_DIM:
        return f"head dim {d} not in [1, {MAX_HEAD_DIM}]"
    if causal and lq not in (lk, 1):
        return f"causal with Lq = {lq} != Lk = {lk} (the kernels' causal mask is j <= i)"
    rows = None
    if mask_shape is not None:
        rows = _key_padding_rows(mask_shape, q_shape, lk)
        if rows is None:
            return f"mask of shape {tuple(mask_shape)} is not a key-padding mask"
    return AttentionPlan(math.prod(q_shape[:-2]), rows, bool(causal) and lq != 1)


def attention_mask_supported(mask_shape, batch_heads, lk) -> bool:
    """True if ``attention_forward/backward`` accept a key-padding mask of this shape:
    ``[B, Lk]`` or ``[B, 1, ..., 1, Lk]`` with ``batch_heads % B == 0`` (row b of the mask
    serves the ``batch_heads / B`` consecutive head-rows of batch b)."""
    shape = tuple(int(s) for s in mask_shape)
    if len(shape) < 2 or shape[-1] != lk or any(s != 1 for s in shape[1:-1]):
        return False
    return shape[0] > 0 and batch_heads % shape[0] == 0


def _kernel_strides(x) -> bool:
    """Whether the kernels can read or write x where it is: its last axis contiguous and its
    other strides whole elements, >= 0 (a view of the heads of a [B, L, H, d] array is one)."""
    return (x.strides[-1] == x.itemsize or x.shape[-1] == 1) and all(s >= 0 and s % x.itemsize == 0
                                                                     for s in x.strides)


def _strided(xp, x):
    """x as the kernels read it: itself where _kernel_strides allows, else a contiguous copy."""
    return x if _kernel_strides(x) else xp.ascontiguousarray(x)


def _rows(x):
    """An operand's (sb, sh, sr) in elements (AttnRows in attention.cu): [BH, L, d] is one head
    per batch row, (stride of BH, 0, stride of L); [B, H, L, d] has all three."""
    strides = [s // x.itemsize for s in x.strides]
    return (strides[0], 0, strides[1]) if x.ndim == 3 else tuple(strides[:3])


def _layout(be, heads, *arrays):
    """A kernel's ``layout`` argument: [H, then (sb, sh, sr) of each operand in argument order],
    int64 on the device, made once per layout and kept (_launch.kept)."""
    values = (heads,) + tuple(v for a in arrays for v in _rows(a))
    return kept(be, "attention layout", values, lambda: be.to_device(np.asarray(values, dtype=np.int64)))


def _output(be, shape, dt):
    """A new result of shape [BH, L, d] (contiguous), or [B, H, L, d] laid out as [B, L, H, d]:
    merging the heads of that view back into [B, L, H * d] copies nothing."""
    if len(shape) == 3:
        return be.empty(shape, dt)
    b, h, length, d = shape
    return be.empty((b, length, h, d), dt).transpose(0, 2, 1, 3)


def _attention_prepare(be, q, k, v, key_pad_mask, scale):
    """q, k, v as the kernels read them (_strided), the uint8 mask [B, Lk] or None, and the
    kernels' sizes: BH, Lq, Lk, d, the mask's heads (head-rows per mask row) and the layout's
    H (heads per batch of a 4-d q, else 1); a ValueError naming what does not fit."""
    xp = be.xp
    if q.ndim not in (3, 4) or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ValueError("attention expects q, k, v of shape [BH, L, d] or [B, H, L, d]")
    q, k, v = (_strided(xp, x) for x in (q, k, v))
    dt = float_dtype(q, k, v)
    lead = tuple(int(s) for s in q.shape[:-2])
    Lq, d = (int(s) for s in q.shape[-2:])
    Lk = int(k.shape[-2])
    if k.shape != lead + (Lk, d) or v.shape != lead + (Lk, d):
        raise ValueError(f"k and v must be [{', '.join(map(str, lead))}, Lk, {d}], got {k.shape} and {v.shape}")
    BH, H = math.prod(lead), (lead[1] if len(lead) == 2 else 1)
    check_int32(elements=max(BH * Lq * d, BH * Lk * d))
    B, m = 1, None
    if key_pad_mask is not None:
        km = xp.asarray(key_pad_mask)
        if not attention_mask_supported(km.shape, BH, Lk):
            raise ValueError(
                f"unsupported attention mask shape {tuple(km.shape)}: only key-padding masks "
                f"[B, Lk] / [B, 1, .., 1, Lk] with BH % B == 0 are fused")
        B = int(km.shape[0])
        if km.dtype != np.bool_ and km.dtype != np.uint8:
            km = km != 0
        m = xp.ascontiguousarray(km.reshape(B, Lk)).view(np.uint8)
    # the same rule as the op's, seen as B batches of BH / B heads (the causal flag here is
    # the kernels' own, j <= i, so it is not the op's to judge)
    plan = attention_plan((B, BH // B, Lq, d), (B, BH // B, Lk, d), (B, BH // B, Lk, d),
                          None if m is None else (B, 1, 1, Lk))
    if isinstance(plan, str):
        raise ValueError(f"attention: {plan}")
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    return q, k, v, m, dt, BH, Lq, Lk, d, BH // B, H, compute_dtype(dt).type(scale)


def _dropout_args(be, dt, dropout_p, seed, offset):
    """The kernels' last four arguments: the Philox memory and offset (_philox_args), threshold
    (0: no dropout) and keep scale (see dropout.cu)."""
    threshold, keep_scale = dropout_threshold(dropout_p)
    if dropout_p >= 1:
        raise ValueError(f"attention: dropout_p must be in [0, 1), got {dropout_p}")
    return (*_philox_args(be, seed, offset), threshold, compute_dtype(dt).type(keep_scale))


def attention_forward(q, k, v, key_pad_mask=None, causal=False, scale=None, dropout_p=0.0, seed=0, offset=0,
                      tensor_cores=None):
    """Fused ``o = dropout(softmax(scale * q k^T + mask)) v`` with online softmax.

    q: [BH, Lq, d]; k, v: [BH, Lk, d], or all [B, H, L, d]; d <= MAX_HEAD_DIM, any Lq, Lk. The
    head dim must be contiguous; rows and heads may lie at any stride (the heads of a [B, L,
    H, d] projection are read where they are: no copy). key_pad_mask: None or a key-padding
    mask (see :func:`attention_mask_supported`; True = attend), over the BH head-rows in order.
    causal: key j is visible to query i iff j <= i (top-left aligned).  scale defaults to
    1/sqrt(d). dropout_p, seed, offset: dropout on the weights P [BH, Lq, Lk], element for
    element the mask ``dropout_apply`` would draw over a stored P with the same (seed,
    offset); the backward takes the same three.
    Returns (o, lse): o shaped like q (for [B, H, Lq, d], a view of a [B, Lq, H, d] array, so
    the heads merge without a copy), lse q.shape[:-1] = logsumexp of the scaled, masked scores
    (before dropout).  A fully masked query row gives o = 0, lse = -inf.

    dtypes: q, k, v and o share one (float32, float64 or bfloat16); lse is in its compute
    dtype (float32 for bfloat16, as are the scores and every sum inside: o is rounded once).

    tensor_cores: compute it with attention_mma.cu (True), attention.cu (False), or as
    ``attention_mma.tensor_core_attention_allowed()`` says (None); attention_mma.cu runs only where it
    can (``attention_mma.tensor_core_attention_runs``: bfloat16, or float32 under TF32), and True elsewhere is an
    error.
    """
    be = backend_for(q, k, v, key_pad_mask)
    q, k, v, m, dt, BH, Lq, Lk, d, heads, H, scale = _attention_prepare(be, q, k, v, key_pad_mask, scale)
    dropout = _dropout_args(be, dt, dropout_p, seed, offset)
    tensor_cores = _on_tensor_cores(be, dt, tensor_cores, "attention_forward")  # (refused even when empty)
    o = _output(be, q.shape, dt)
    lse = be.empty(q.shape[:-1], compute_dtype(dt))
    if BH and Lq:
        if Lk == 0:
            o[...] = 0
            lse[...] = -np.inf
        else:
            args = (q, k, v, m, o, lse, np.int32(BH), np.int32(heads), np.int32(Lq), np.int32(Lk), np.int32(d),
                    np.int32(bool(causal)), scale, _layout(be, H, q, k, v, o), *dropout)
            if tensor_cores:
                from . import attention_mma  # noqa: PLC0415 (it reads this module's sizes)

                grid = BH * (-(-Lq // (16 * attention_mma.WARPS)))
                be.launch("attention_mma.cu", "attention_mma_forward", dt, (grid,), (32 * attention_mma.WARPS,),
                          args, strided=True, size=_head_dim_class(d))
            else:
                grid = BH * (-(-Lq // TILES[compute_dtype(dt)].bq))
                be.launch("attention.cu", "attention_forward", dt, (grid,), (THREADS,), args, strided=True,
                          size=_head_dim_class(d))
    return o, lse


_one_pass = contextvars.ContextVar("attention_one_pass_backward", default=True)


@contextlib.contextmanager
def use_one_pass_backward(on: bool = True):
    """Within the block, attention_backward takes attention_backward_onepass where it can (on,
    the default) or always the two kernels dkdv and dq (off: to time or test one against the
    other; both give the same bits for finite inputs)."""
    token = _one_pass.set(bool(on))
    try:
        yield
    finally:
        _one_pass.reset(token)


def one_pass_backward_runs(dt, d, lk) -> bool:
    """Whether attention_backward computes dk, dv and dq in one kernel for a head of d columns
    and lk keys in dtype dt (on CUDA cores): when one block's key tile holds all lk keys, and
    the tile fits shared memory (D <= 64)."""
    return (_one_pass.get() and _head_dim_class(d) in SIZES["attention_backward_onepass"]
            and lk <= TILES[compute_dtype(dt)].bk1)


def _on_tensor_cores(be, dt, tensor_cores, launcher) -> bool:
    """Whether ``launcher`` (attention_forward or attention_backward) launches attention_mma.cu's
    kernels, as its ``tensor_cores`` argument says."""
    from . import attention_mma  # noqa: PLC0415 (it reads this module's sizes)

    if tensor_cores is None:
        return attention_mma.tensor_core_attention_allowed() and attention_mma.tensor_core_attention_runs(be, dt)
    if tensor_cores and not attention_mma.tensor_core_attention_runs(be, dt):
        raise ValueError(f"{launcher}: tensor_cores=True needs bfloat16, or float32 with TF32 allowed, on a "
                         f"GPU of compute capability 8.0 or above; got {np.dtype(dt).name}")
    return bool(tensor_cores)


def _outputs_given(out, q, k, v, dt):
    """attention_backward's ``out``, checked: three arrays shaped like q, k, v, in their dtype,
    each laid out as the kernels write (head dim contiguous, other strides >= 0)."""
    if len(out) != 3:
        raise ValueError(f"attention_backward: out must be three arrays (dq, dk, dv), got {len(out)}")
    for name, given, like in zip(("dq", "dk", "dv"), out, (q, k, v)):
        if given.shape != like.shape or given.dtype != dt or not _kernel_strides(given):
            raise ValueError(f"attention_backward: out's {name} must be {like.shape} {np.dtype(dt).name} with its "
                             f"last axis contiguous, got {given.shape} {given.dtype.name} strides {given.strides}")
    return out


def attention_backward(q, k, v, o, lse, do, key_pad_mask=None, causal=False, scale=None, dropout_p=0.0, seed=0,
                       offset=0, out=None, tensor_cores=None):
    """Backward of :func:`attention_forward` (P recomputed from q, k, lse; the dropout mask
    regenerated from seed and offset).

    Same shapes/mask/causal/scale/dropout as the forward; o and lse are the forward's
    outputs and do the gradient of o (any strides, head dim contiguous, as q).  Returns (dq,
    dk, dv) shaped like q, k, v (for 4-d inputs, views of [B, L, H, d] arrays, as the forward's
    o). Fully masked query rows (lse == -inf) contribute nothing (no NaN). ``out``: three
    arrays (dq, dk, dv) to write instead, any strides with the head dim contiguous: the heads
    of one packed [B, L, 3H, d] gradient, say, so the gradient of a q, k, v projection is
    written where it belongs.

    dtypes: q, k, v, o, do and the gradients share one; lse is in its compute dtype (as the
    forward returns it), and so is delta = rowsum(do * o) inside.

    tensor_cores: as attention_forward's, chosen for this call alone (o and lse may come from
    either forward): dq, dk and dv by attention_mma.cu (True) or attention.cu (False); delta is
    attention.cu's either way. On the CUDA cores dk, dv and dq come from one kernel where one
    tile holds all the keys (:func:`one_pass_backward_runs`), else from two.
    """
    be = backend_for(q, k, v, o, lse, do, key_pad_mask)
    xp = be.xp
    q, k, v, m, dt, BH, Lq, Lk, d, heads, H, scale = _attention_prepare(be, q, k, v, key_pad_mask, scale)
    dropout = _dropout_args(be, dt, dropout_p, seed, offset)
    tensor_cores = _on_tensor_cores(be, dt, tensor_cores, "attention_backward")  # (refused even when empty)
    if o.shape != q.shape or do.shape != q.shape:
        raise ValueError(f"attention_backward: o and do must be shaped like q {q.shape}, got {o.shape} and {do.shape}")
    o, do = (_strided(xp, x) for x in (o, do))
    lse = xp.ascontiguousarray(lse.reshape(BH, Lq))
    float_dtype(q, o, do)
    check_compute_dtype("attention_backward", dt, lse=lse)
    dq, dk, dv = (_output(be, x.shape, dt) for x in (q, k, v)) if out is None else _outputs_given(out, q, k, v, dt)
    if BH and (Lq == 0 or Lk == 0):
        dq[...] = 0
        dk[...] = 0
        dv[...] = 0
    elif BH:
        if tensor_cores:
            from . import attention_mma  # noqa: PLC0415 (it reads this module's sizes)

            # a block owns 16 rows a warp: keys for dk and dv, queries for dq
            file, threads, keys_per_block = "attention_mma.cu", 32 * attention_mma.WARPS, 16 * attention_mma.WARPS
            queries_per_block = keys_per_block
            dkdv_kernel, dq_kernel = "attention_mma_backward_dkdv", "attention_mma_backward_dq"
        else:
            tiles = TILES[compute_dtype(dt)]
            file, threads, keys_per_block, queries_per_block = "attention.cu", THREADS, tiles.bkb, tiles.bqb
            dkdv_kernel, dq_kernel = "attention_backward_dkdv", "attention_backward_dq"
        delta = be.empty((BH, Lq), compute_dtype(dt))
        warps = THREADS // 32
        be.launch("attention.cu", "attention_backward_delta", dt, (-(-(BH * Lq) // warps),),
                  (THREADS,), (o, do, delta, np.int32(BH), np.int32(Lq), np.int32(d), _layout(be, H, o, do)), strided=True)
        sizes = (np.int32(BH), np.int32(heads), np.int32(Lq), np.int32(Lk), np.int32(d), np.int32(bool(causal)),
                 scale)
        D = _head_dim_class(d)
        if not tensor_cores and one_pass_backward_runs(dt, d, Lk):  # a block per head: dk, dv and dq at once
            be.launch(file, "attention_backward_onepass", dt, (BH,), (threads,),
                      (q, k, v, m, do, lse, delta, dk, dv, dq) + sizes
                      + (_layout(be, H, q, k, v, do, dk, dv, dq), *dropout), strided=True, size=D)
            return dq, dk, dv
        be.launch(file, dkdv_kernel, dt, (BH * (-(-Lk // keys_per_block)),), (threads,),
                  (q, k, v, m, do, lse, delta, dk, dv) + sizes + (_layout(be, H, q, k, v, do, dk, dv), *dropout),
                  strided=True, size=D)
        be.launch(file, dq_kernel, dt, (BH * (-(-Lq // queries_per_block)),), (threads,),
                  (q, k, v, m, do, lse, delta, dq) + sizes + (_layout(be, H, q, k, v, do, dq), *dropout),
                  strided=True, size=D)
    return dq, dk, dv
