"""Scaled dot-product attention: the NumPy/CuPy reference, and the fused flash-attention
kernels of ``minitx.kernels`` where ``kernels.attention_plan`` says they can compute it.
"""
from __future__ import annotations

import math

import numpy as np

from minitx import blas, kernels
from minitx.autograd.engine import unbroadcast
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module, is_floating, sum_last
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import floating
from minitx.ops.dropout import _dropout_keep_mask, _philox_seed_offset
from minitx.ops.reduction import logsumexp_parts

__all__ = ["ScaledDotProductAttention", "PackedHeadsAttention"]


def _batched_matmul(a, b, out=None):
    """a @ b over the leading (batch) axes. q, k, v arrive as strided views from the head split,
    and k^T, P^T as transposed views. NumPy hands BLAS each matrix as it lies when its rows or its
    columns are contiguous, so only a matrix with neither is copied (else NumPy would loop over
    its elements itself); CuPy gets C-contiguous operands and runs one strided-batched cuBLAS
    product. minitx.blas's call, when on, takes the views as they are.

    ``out``: an array of the product's shape to receive it (a head's view of a packed gradient);
    NumPy's BLAS writes each matrix there directly (its rows may lie apart), elsewhere it is copied."""
    if blas.enabled(a, b):
        product = blas.matmul(a, b)
    elif get_array_module(a) is np:
        return np.matmul(*(m if m.itemsize in m.strides[-2:] else np.ascontiguousarray(m) for m in (a, b)), out=out)
    else:
        xp = get_array_module(a)
        product = xp.matmul(xp.ascontiguousarray(a), xp.ascontiguousarray(b))
    if out is None:
        return product
    out[...] = product
    return out


def _kernel_layout(x):
    """x as the kernels take it: [B, H, L, d] as it is (the heads of a projection are strided
    views, which the kernels read in place), any other batch shape flattened to [BH, L, d]."""
    return x if x.ndim == 4 else x.reshape((-1,) + x.shape[-2:])


def _head_groups(q_shape, k_shape, v_shape, enable_gqa):
    """g = Hq / Hkv, the query heads that share one key/value head (1 without enable_gqa);
    a ValueError naming the heads when they do not divide."""
    if not enable_gqa or len(q_shape) < 3 or len(k_shape) < 3:
        return 1
    hq, hkv = q_shape[-3], k_shape[-3]
    if len(v_shape) < 3 or v_shape[-3] != hkv:
        raise ValueError(f"scaled_dot_product_attention: k {k_shape} and v {v_shape} must have the same "
                         "number of heads (axis -3)")
    if hkv == 0 or hq % hkv or hq < hkv:  # Hq = 0 would make g = 0
        raise ValueError(f"scaled_dot_product_attention: enable_gqa needs the query heads Hq = {hq} to be a "
                         f"multiple of the key/value heads Hkv = {hkv} (q {q_shape}, k {k_shape})")
    return hq // hkv


def _repeat_heads(x, groups):
    """[..., Hkv, L, d] -> [..., Hkv * groups, L, d], each head repeated ``groups`` times in a row
    (PyTorch's repeat_interleave): query head i reads key/value head i // groups."""
    return x if groups == 1 else get_array_module(x).repeat(x, groups, axis=-3)


def _sum_heads(dx, groups):
    """The gradient of _repeat_heads: [..., Hkv * groups, L, d] -> [..., Hkv, L, d], each group summed."""
    if groups == 1:
        return dx
    return dx.reshape(dx.shape[:-3] + (dx.shape[-3] // groups, groups) + dx.shape[-2:]).sum(axis=-3)


def _is_float_mask(mask):
    """Whether the mask is added to the scores (floating) rather than selecting them (boolean)."""
    return mask is not None and mask.dtype != np.bool_


def _check_fit(q, k, v):
    """A clear error where q, k and v do not fit [..., Lq, d], [..., Lk, d], [..., Lk, dv]."""
    if min(q.ndim, k.ndim, v.ndim) < 2 or k.shape[-1] != q.shape[-1] or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape} do not fit: "
                         "expected q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv]")


def _check_heads(q, k, v, enable_gqa):
    """A clear error where the heads (axis -3) of q, k and v neither match nor broadcast."""
    if enable_gqa or min(q.ndim, k.ndim, v.ndim) < 3:
        return
    heads = (q.shape[-3], k.shape[-3], v.shape[-3])
    try:
        np.broadcast_shapes(*((h,) for h in heads))
    except ValueError:
        hint = ", or enable_gqa=True to share each k/v head among Hq / Hkv query heads" \
            if heads[1] == heads[2] and heads[1] and heads[0] % heads[1] == 0 else ""
        raise ValueError(f"scaled_dot_product_attention: q, k, v have {heads} heads (axis -3): expected the "
                         f"same number (or 1){hint}") from None


def _check_mask_dtype(mask):
    if mask.dtype != np.bool_ and not is_floating(mask.dtype):
        raise TypeError(f"scaled_dot_product_attention: mask must be boolean (True = may attend) or floating "
                        f"(added to the scores), got dtype {mask.dtype.name}")


def _mask_rows(mask, plan, lk):
    """The key-padding mask as the kernels take it, [B', Lk] (None without a mask)."""
    return None if plan.mask_rows is None else mask.reshape(plan.mask_rows, lk)


class ScaledDotProductAttention(Function):
    """Attention of queries q [..., Lq, d] over keys k [..., Lk, d] and values v [..., Lk, dv]:

        S = scale * q @ k^T + M          (scale defaults to 1 / sqrt(d), unused at d = 0; M a float mask, or 0)
        S = -inf where not allowed       (a boolean mask False, or a future key when causal)
        P = softmax(S) over keys;   Pd = P * m  (dropout on the weights, m as in Dropout)
        o = Pd @ v

    backward, going up the same lines:
        dv = Pd^T @ do        dPd = do @ v^T        dP = dPd * m
        dS = P * (dP - sum_keys(dP * P))              (the softmax backward)
        dM = dS               dq = scale * dS @ k     dk = scale * dS^T @ q

    The mask, broadcast to [..., Lq, Lk], is boolean, True = "may attend", or floating, M
    added to the scores (PyTorch's attn_mask: -inf entries mask keys out). The causal flag
    lets query i see keys j <= i + (Lk - Lq): the queries are the last Lq positions, which
    is also what incremental decoding with a key/value cache needs. A query that may see no
    key at all (a False or -inf mask row) gets P = 0 and o = 0 (not NaN). With
    ``need_weights``, ``weights`` after forward holds P.

    Grouped-query attention (``enable_gqa``): q [..., Hq, Lq, d], k and v [..., Hkv, Lk, .]
    with Hq = g * Hkv. Everything above runs on kr and vr, k and v with each head repeated g
    times in a row (query head i reads key/value head i // g, PyTorch's repeat_interleave),
    and backward sums over each group: dk[h] = sum_{i < g} dkr[h * g + i], the same for dv.

    Both paths save (q, k, v, mask, o, lse), lse = log sum_keys exp(S) per query (-inf when it
    sees no key), plus the dropout mask m; backward recomputes P = exp(S - lse) instead of
    keeping the [Lq, Lk] matrix (and kr, vr from k, v). On NumPy the unfused path also keeps S
    (computing it again costs a product per head; the CPU's memory holds it), elsewhere backward
    computes S again. The fused kernel (flash-attention style: P never leaves the chip) runs
    where ``kernels.attention_plan`` allows it: a boolean key-padding mask (a float mask takes
    the unfused path), d = dv <= 128, no weights requested, a causal mask that fits the
    kernel's; under enable_gqa it runs on kr and vr. It draws the dropout mask m element by
    element from a Philox (seed, offset) pair and regenerates it in backward instead of saving
    it. Without ``seed`` the pair is the next from minitx.random, the pair the unfused path's
    mask would take on the GPU: both paths drop the same weights. With ``seed`` the kernels use
    (seed, 0) and the unfused path NumPy's/CuPy's generator seeded with it, so their masks
    differ (each is fixed by the seed).

    Derivation: docs/backprop/attention.md
    Kernels: minitx/kernels/attention.cu, minitx/kernels/dropout.cu
    """

    low_precision = "kernels"  # its kernels take bfloat16 storage
    fresh_gradients = True  # dq, dk, dv (and dmask): the kernels' outputs or new products; packed: new arrays

    def __init__(self, causal=False, dropout_p=0.0, scale=None, seed=None, need_weights=False, enable_gqa=False):
        if not 0 <= dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        if not isinstance(causal, (bool, np.bool_)):
            raise TypeError(f"scaled_dot_product_attention: causal must be True or False, got {causal!r} (the fifth "
                            f"argument is causal; PyTorch's is dropout_p: give it as dropout_p=)")
        self.causal, self.dropout_p, self.scale, self.seed = causal, dropout_p, scale, seed
        self.need_weights, self.enable_gqa = need_weights, enable_gqa
        self.weights = None
        self.philox = None  # (seed, offset) of the dropout mask a fused forward drew

    def _kernel_plan(self, q, k, v, mask, *others, stats=(), weights=False):
        """The kernels' plan for this attention (kernels.attention_plan), or None when they
        cannot compute it or the arrays do not suit them."""
        if _is_float_mask(mask) or not kernels.enabled(q, k, v, *others, stats=stats):
            return None
        plan = kernels.attention_plan(q.shape, k.shape, v.shape, None if mask is None else mask.shape,
                                      causal=self.causal, weights=weights)
        return None if isinstance(plan, str) else plan

    def _kernel_dropout(self):
        """The kernels' dropout arguments (dropout_p, seed, offset), or none without dropout."""
        return () if self.philox is None else (self.dropout_p, *self.philox)

    def _allowed(self, q, k, mask):
        """Which keys each query may see, broadcastable to [..., Lq, Lk]: the boolean mask and the
        causal one together, or None where every key is allowed (no mask, or a float one)."""
        xp = get_array_module(q)
        lq, lk = q.shape[-2], k.shape[-2]
        allowed = None if _is_float_mask(mask) else mask
        if self.causal:
            causal = xp.tril(xp.ones((lq, lk), dtype=bool), k=lk - lq)
            allowed = causal if allowed is None else allowed & causal
        return allowed

    def _scores(self, q, k, mask):
        """S = scale * q @ k^T (+ a float mask), -inf where a key is not allowed."""
        xp = get_array_module(q)
        scores = _batched_matmul(q, xp.swapaxes(k, -1, -2))
        scores *= self.scale_used  # (the product's own new array)
        if _is_float_mask(mask):
            scores = scores + mask.astype(scores.dtype, copy=False)
        allowed = self._allowed(q, k, mask)
        return scores if allowed is None else xp.where(allowed, scores, -xp.inf)

    def forward(self, q, k, v, mask=None):
        xp = get_array_module(q)
        _check_fit(q, k, v)
        d = q.shape[-1]
        if mask is not None:
            _check_mask_dtype(mask)
        # d = 0: every score is an empty sum, 0, whatever the scale (PyTorch scales q and k before their
        # product, so not even its default 1 / sqrt(0) = inf meets it): every key gets the same weight
        # (a Python float: a NumPy float64 would promote the scores of float32 inputs, in backward at least)
        self.scale_used = 1.0 if d == 0 else float(self.scale) if self.scale is not None else 1 / math.sqrt(d)
        self.groups = _head_groups(q.shape, k.shape, v.shape, self.enable_gqa)
        saved_k, saved_v = k, v  # backward repeats the heads again rather than keep g copies
        k, v = _repeat_heads(k, self.groups), _repeat_heads(v, self.groups)
        plan = self._kernel_plan(q, k, v, mask, weights=self.need_weights)
        dropout_mask = scores = None
        if plan is not None:
            self.philox = _philox_seed_offset(self.seed, q) if self.dropout_p else None
            o, lse = kernels.attention_forward(*map(_kernel_layout, (q, k, v)), _mask_rows(mask, plan, k.shape[-2]),
                                               plan.causal, self.scale_used, *self._kernel_dropout())
            o, lse = o.reshape(q.shape), lse.reshape(q.shape[:-1])
        else:
            scores = self._scores(q, k, mask)
            e, total, m, log_total = logsumexp_parts(scores, -1)
            # p = e / total in e's own array; a query that sees no key: total = 0 (NaN: stays NaN)
            p = xp.divide(e, xp.where(total == 0, 1, total), out=e)
            lse = (m + log_total)[..., 0]
            if self.need_weights:
                self.weights = p
            if self.dropout_p:
                dropout_mask = _dropout_keep_mask(p.shape, self.dropout_p, p.dtype, xp, device_of(p), self.seed)
                p = p * dropout_mask
            o = _batched_matmul(p, v)
            # a query that sees no key: o = 0, as the kernel writes it (its row of zeros in P times a NaN or
            # inf in v would be NaN)
            o = xp.where(total == 0, 0, o)
            if xp is not np:  # the GPU's memory is scarcer: backward computes S again there (the CPU keeps it)
                scores = None
        self.save_for_backward(q, saved_k, saved_v, mask, o, lse, dropout_mask, scores)
        return o

    def backward(self, do):
        has_mask = len(self.needs_input_grad) > 3
        dq, dk, dv, dmask = self._gradients(do, mask_grad=has_mask and self.needs_input_grad[3])
        return (dq, dk, dv) + ((dmask,) if has_mask else ())

    def _gradients(self, do, out=None, mask_grad=False):
        """(dq, dk, dv, dmask): dmask for a float mask when ``mask_grad``, else None. ``out``:
        three arrays shaped like q, k, v that receive dq, dk, dv (the fused kernels and the
        unfused path's products write them there, else they are copied), returned in their place."""
        q, k, v, mask, o, lse, dropout_mask, scores = self.saved
        k, v = _repeat_heads(k, self.groups), _repeat_heads(v, self.groups)
        # the path forward took: the unfused one saved its dropout mask
        plan = None if dropout_mask is not None else self._kernel_plan(q, k, v, mask, o, do, stats=(lse,))
        if plan is None and self.philox is not None:  # fused forward, unfused backward: redraw its mask
            dropout_mask = kernels.dropout_apply(get_array_module(q).ones(lse.shape + (k.shape[-2],), q.dtype),
                                                 self.dropout_p, *self.philox)
        dmask = None
        in_place = plan is not None and out is not None and self.groups == 1 and q.ndim == 4
        if plan is not None:
            lk = k.shape[-2]
            dq, dk, dv = kernels.attention_backward(
                *map(_kernel_layout, (q, k, v, o)), lse, _kernel_layout(do), _mask_rows(mask, plan, lk), plan.causal,
                self.scale_used, *self._kernel_dropout(), out=out if in_place else None)
            dq, dk, dv = dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape)
        else:
            xp = get_array_module(do)
            # P = exp(S - lse); a query that sees no key has lse = -inf and P = exp(-inf) = 0 (a NaN stays NaN)
            scores = self._scores(q, k, mask) if scores is None else scores
            p = xp.exp(scores - xp.where(lse == -xp.inf, 0, lse)[..., None])
            # P = 0 and dS = 0 where a query may not see a key, and in the rows of a query that sees
            # none, as in the kernels: also where the row's lse is NaN (exp(-inf - NaN) is NaN) and
            # where dP is NaN or inf (0 * NaN)
            unseen = (lse == -xp.inf)[..., None]
            allowed = self._allowed(q, k, mask)
            if allowed is not None:
                unseen = unseen | ~allowed
            p = xp.where(unseen, 0, p)
            # the products write straight into ``out`` where each has their shape (no batch of 1 to sum back)
            in_place = out is not None and self.groups == 1 and all(
                into.shape[:-2] == p.shape[:-2] and into.dtype == p.dtype for into in out)
            dq_out, dk_out, dv_out = out if in_place else (None, None, None)
            dropped = p if dropout_mask is None else p * dropout_mask
            dv = _batched_matmul(xp.swapaxes(dropped, -1, -2), do, out=dv_out)
            dp = _batched_matmul(do, xp.swapaxes(v, -1, -2))
            if dropout_mask is not None:
                dp *= dropout_mask  # (the product's own new array)
            # delta_i = sum_j P_ij dP_ij = do_i . o_i (P's dropout and all), taken as the kernels take it:
            # where do holds inf, the first is inf - inf = NaN when v's column under it has both signs,
            # the second the limit (+-inf, o's entry not 0)
            ds = xp.where(unseen, 0, p * (dp - sum_last(do, o)[..., None]))
            if _is_float_mask(mask) and mask_grad:
                dmask = ds.astype(mask.dtype, copy=False)  # the engine sums it back to the mask's shape
            ds = ds * self.scale_used
            dq, dk = _batched_matmul(ds, k, out=dq_out), _batched_matmul(xp.swapaxes(ds, -1, -2), q, out=dk_out)
        grads = (dq, _sum_heads(dk, self.groups), _sum_heads(dv, self.groups))
        if out is not None and not in_place:
            for into, grad in zip(out, grads):
                into[...] = unbroadcast(grad, into.shape, self.name)  # an input's batch of 1 served them all
            grads = tuple(out)
        return grads + (dmask,)

    def release(self):
        super().release()
        self.weights = None


def _heads_of(x, counts, head_dim):
    """[B, L, sum(counts) * head_dim] -> one [B, c, L, head_dim] view per c in ``counts``, the
    heads in that order (x seen as [B, L, heads, head_dim]: no copy)."""
    b, length, width = x.shape
    heads = x.reshape(b, length, sum(counts), head_dim).transpose(0, 2, 1, 3)
    starts = np.cumsum((0,) + tuple(counts))
    return [heads[:, start:end] for start, end in zip(starts[:-1], starts[1:])]


class PackedHeadsAttention(ScaledDotProductAttention):
    """ScaledDotProductAttention on the heads of packed projections, as nn.MultiHeadAttention
    makes them, with no head copied in or out:

        self-attention:   x [B, L, (Hq + 2 Hkv) d]:  q = its first Hq heads, k the next Hkv, v the last Hkv
        cross-attention:  xq [B, Lq, Hq d]: q;   xkv [B, Lk, 2 Hkv d]: k, then v

    (each input seen as [B, L, heads, d], each part a [B, h, L, d] view). The output is
    ScaledDotProductAttention's on (q, k, v), o [B, Hq, Lq, d]. backward writes the heads'
    gradients into one array per packed input, each head's where that head lies:
    dx[:, :, first Hq heads] = dq, and so on (the fused kernels write them there; the unfused
    path copies them in). The split's own backward (a zero-filled array per part, then their
    sum) never runs.
    """

    def __init__(self, heads, head_dim, packed=1, causal=False, dropout_p=0.0, scale=None, seed=None):
        hq, hkv = heads
        super().__init__(causal, dropout_p, scale, seed, enable_gqa=hq != hkv)
        self.head_dim, self.packed = head_dim, packed
        # how the packed inputs divide into heads: (q's, k's, v's) of one, or (q's) and (k's, v's)
        self.parts = ((hq, hkv, hkv),) if packed == 1 else ((hq,), (hkv, hkv))

    def forward(self, *arrays):
        packed, mask = arrays[:self.packed], (arrays[self.packed] if len(arrays) > self.packed else None)
        for x, counts in zip(packed, self.parts):
            if x.ndim != 3 or x.shape[-1] != sum(counts) * self.head_dim:
                raise ValueError(f"attention on packed heads: an input of shape {x.shape}, expected [B, L, "
                                 f"{sum(counts)} heads * {self.head_dim}]")
        self.packed_like = [(x.shape, x.dtype) for x in packed]
        q, k, v = [view for x, counts in zip(packed, self.parts) for view in _heads_of(x, counts, self.head_dim)]
        return super().forward(q, k, v, mask)

    def backward(self, do):
        xp = get_array_module(do)
        grads = [xp.empty(shape, dtype) for shape, dtype in self.packed_like]
        heads = [view for g, counts in zip(grads, self.parts) for view in _heads_of(g, counts, self.head_dim)]
        has_mask = len(self.needs_input_grad) > self.packed
        *_, dmask = self._gradients(do, heads, mask_grad=has_mask and self.needs_input_grad[self.packed])
        return tuple(grads) + ((dmask,) if has_mask else ())


def _scores_shape(q, k, enable_gqa):
    """The shape of the scores q @ k^T, [..., Lq, Lk]: q's and k's batch axes broadcast, k's heads
    counted as q's under enable_gqa (they are repeated to match). Where the batch axes do not
    broadcast, q's (the op's own checks name the mismatch)."""
    k_batch = k.shape[:-2]
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3:
        k_batch = k_batch[:-1] + (q.shape[-3],)
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k_batch)
    except ValueError:
        batch = q.shape[:-2]
    return batch + (q.shape[-2], k.shape[-2])


def _mask_tensor(mask, like, scores_shape):
    """The mask as a tensor on like's device, checked: boolean or floating, broadcastable to
    the scores' shape [..., Lq, Lk] without growing it. A mask of more axes, or longer ones,
    than the scores would broadcast the output to its shape (a mask [7, B, Lq, Lk] beside
    q [B, Lq, d]: seven copies of the result); PyTorch refuses it, and so does this."""
    mask = as_tensor(mask, like)
    _check_mask_dtype(mask)
    try:
        fits = np.broadcast_shapes(mask.shape, scores_shape) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"scaled_dot_product_attention: mask of shape {mask.shape} does not broadcast "
                         f"to the scores [..., Lq, Lk] = {tuple(scores_shape)}")
    return mask


def attention_on_packed_heads(packed, heads, head_dim, mask=None, causal=False, dropout_p=0.0):
    """Attention over the heads of packed projections (PackedHeadsAttention): ``packed`` is
    (x,) for self-attention, x [B, L, (Hq + 2 Hkv) * head_dim], or (xq, xkv) for
    cross-attention; ``heads`` is (Hq, Hkv). Returns o [B, Hq, Lq, head_dim], the same as
    scaled_dot_product_attention on the heads split out (enable_gqa where Hkv < Hq)."""
    packed = tuple(floating(x) for x in packed)
    if len(packed) not in (1, 2):
        raise ValueError(f"attention on packed heads: expected (x,) or (xq, xkv), got {len(packed)} inputs")
    op = PackedHeadsAttention(heads, head_dim, len(packed), causal, dropout_p)
    if mask is None:
        return op(*packed)
    (b, lq), lk = packed[0].shape[:2], packed[-1].shape[1]
    return op(*packed, _mask_tensor(mask, packed[0], (b, heads[0], lq, lk)))


@takes_torch_keywords
def scaled_dot_product_attention(q, k, v, mask=None, causal=False, dropout_p=0.0, scale=None,
                                 return_weights=False, seed=None, enable_gqa=False):
    """softmax(scale * q @ k^T, masked) @ v; see ScaledDotProductAttention.

    mask: broadcastable to [..., Lq, Lk]; boolean, True = may attend, or floating, added to
    the scores (-inf masks; it gets a gradient when it requires one). enable_gqa: q has Hq
    heads (axis -3), k and v Hkv, Hq a multiple of Hkv; each run of Hq / Hkv query heads
    shares one key/value head. With return_weights=True returns (output, weights), the
    weights P as a constant tensor (before dropout) for plotting. PyTorch's keywords query=, key=,
    value=, attn_mask= and is_causal= are taken for q=, k=, v=, mask= and causal= (a causal
    mask's alignment: docs/ops.md).
    """
    q, k, v = floating(q), floating(k), floating(v)
    op = ScaledDotProductAttention(causal, dropout_p, scale, seed, need_weights=return_weights,
                                   enable_gqa=enable_gqa)
    _check_fit(q, k, v)  # (before the mask's shape is worked out from theirs; forward checks again)
    _check_heads(q, k, v, enable_gqa)
    out = op(q, k, v) if mask is None else op(q, k, v, _mask_tensor(mask, q, _scores_shape(q, k, enable_gqa)))
    if return_weights:
        return out, Tensor(op.weights)
    return out
