"""attention_mma.cu (attention's forward and backward on the tensor cores) on the CPU build,
against the float64 NumPy reference within the error its roundings allow, and against
attention.cu's contract (masks, fully masked and NaN rows, dropout, layouts, switch).

Forward bounds, per output row i (P the reference weights, z the dropout factors, E_i below):
- bfloat16: products of bfloat16 operands are exact and sums are in float; P is rounded to
  bfloat16 for P V (8 significant bits: relative 2^-8 per weight) and o is stored in bfloat16
  (1 ulp): |o - o_ref| <= 2^-8 sum_j P_ij z_ij |v_j| + ulp(o_ref).
- TF32: q, k, v and P are rounded to TF32 (11 significant bits: relative 2^-11 each). A score is then off by at most
  E_ij = scale sum_c |q_ic k_jc| 2^-10 (+ float's sums), E_i its largest over the row's keys; a
  normalised weight by a factor of at most exp(2 E_i); so |o - o_ref| <= (2.1 E_i + 2^-10)
  sum_j P_ij z_ij |v_j|, and |lse - lse_ref| <= E_i.
Both add float's rounding of the sums: a score of d products off by at most
(d + m) 2^-23 scale sum_c |q_ic k_jc|, which E_i includes, and the P V sums by
(Lk + m') 2^-23 of sum_j P_ij z_ij |v_j|. The CPU build adds each mma's products exactly and
rounds once; a GPU's tensor cores align an mma's addends to the largest and round toward zero
(Fasi et al., "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021), one more rounding
per mma: m = D / 8 (at most D / K mma steps over the head-dim class D) and m' = Lk / 8 + 1
count those. The same bounds hold the GPU's results (the tests marked gpu).

Backward bounds, per element. The reference (ref.attention's backward) is given the o and lse
the forward returned, as the kernels are: P_ij = exp(s_ij - lse_i), dP_ij = z_ij do_i . v_j,
delta_i = do_i . o_i, dS_ij = P_ij (dP_ij - delta_i), all exact. u is the rounding of P z and
dS to operands where they enter a product: 2^-8 (bfloat16), 2^-11 (TF32); w that of q, k, v
and do: 0 for bfloat16 (operands already) and for float32 inputs whose low 13 bits are zero
(TF32 operands already), else 2^-11; f = 2^-23 covers one float rounding (2^-24) or one step
of a float sum (the convention above: n terms, n f, plus one per mma on a GPU: m, m' above). For an allowed (i, j) of a row with
lse_i > -inf (elsewhere both sides are exactly 0):
- the kernel's scale * s - lse_i is off by at most eps_ij = scale sum_c |q_ic k_jc| (2 w + w^2
  + (d + m + 2) f) + f |lse_i| + 2^-20 (the last: exp's 2 ulps, z's and P z's roundings), so P and
  P z are off by a factor within rho_ij = exp(eps_ij) - 1, and by 2^-126 more where they underflow;
- dP by F_ij = z_ij sum_c |do_ic v_jc| (2 w + w^2 + (d + m + 2) f); delta by
  G_i = (d + 6) f sum_c |do_ic o_ic| (attention.cu's float sum over d columns and a warp);
- dS = P (z dp - delta) then by A_ij = rho P |dP - delta| + 2^-126 (|dP - delta| + 1)
  + (1 + rho) P (F + G + 2 f (|dP| + |delta| + F + G)), and by B_ij = A_ij + u (|dS_ij| + A_ij)
  once rounded to an operand; P z rounded to an operand by C_ij = (rho + u (1 + rho)) P z + 2^-126 z.
The products then sum n = Lq (dk, dv) or Lk (dq) such terms in float:
  |dv_j - dv_ref| <= sum_i [C (1 + w) + w P z + n f (P z + C)(1 + w)] |do_i|
  |dk_j - dk_ref| <= scale sum_i [B (1 + w) + w |dS| + n f (|dS| + B)(1 + w)] |q_i|
  |dq_i - dq_ref| <= scale sum_j [B (1 + w) + w |dS| + n f (|dS| + B)(1 + w)] |k_j|
each + n 2^-126 (products that underflow), then the rounding of the result: scale times it,
f (|ref| + bound), and for bfloat16 the store, ulp(|ref| + bound). So bfloat16's bounds are
about 2^-8 of the terms' magnitudes (P z and dS in bfloat16, as FlashAttention's), TF32's about
2^-11 for TF32 inputs, and for other float32 inputs rho dominates: the scores' error through exp.
"""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from minitx import kernels as K

import _reference as ref

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BF16 = np.dtype(ml_dtypes.bfloat16)


def _inputs(rng, dtype, BH, Lq, Lk, d, spread=1.0):
    return tuple((spread * rng.standard_normal((BH, n, d))).astype(dtype) for n in (Lq, Lk, Lk))


def check_against_reference(q, k, v, kpm=None, causal=False, scale=None, dropout=(0.0, 0, 0), cp=None):
    """o and lse of the tensor-core forward within the bounds of the module docstring; on the
    GPU when ``cp`` (CuPy) is given, else on the CPU build."""
    BH, Lq, d = q.shape
    Lk = k.shape[1]
    there = (lambda x: x) if cp is None else (lambda x: None if x is None else cp.asarray(x))
    o, lse = K.attention_forward(there(q), there(k), there(v), key_pad_mask=there(kpm), causal=causal, scale=scale,
                                 dropout_p=dropout[0], seed=dropout[1], offset=dropout[2], tensor_cores=True)
    if cp is not None:
        o, lse = cp.asnumpy(o), cp.asnumpy(lse)
    assert o.dtype == q.dtype and lse.dtype == np.float32
    keep = ref.attention_keep(BH, Lq, Lk, kpm, causal)
    s = 1 / math.sqrt(d) if scale is None else scale
    z = _dropout_factors(BH, Lq, Lk, dropout)
    o_ref, lse_ref, _ = ref.attention(q, k, v, keep, s, z)
    weights = _weights(q, k, keep, s)
    pv_abs = (weights * z) @ np.abs(v.astype(np.float64))
    operands = 0.0 if q.dtype == BF16 else 2.0**-10  # a score's relative error from rounding q and k
    qk_abs = s * np.einsum("bid,bjd->bij", np.abs(q.astype(np.float64)), np.abs(k.astype(np.float64)))
    e_row = np.where(keep, qk_abs * (operands + (d + _mma_steps(d)) * 2.0**-23), 0).max(-1)[..., None]  # E_i
    sums = (Lk + _mma_steps(Lk)) * 2.0**-23
    if q.dtype == BF16:
        bound = (2.1 * e_row + 2.0**-8 + sums) * pv_abs + ref.bfloat16_ulp(o_ref)
    else:
        bound = (2.1 * e_row + 2.0**-10 + sums) * pv_abs + 1e-7
    lse_bound = e_row[..., 0] * 1.01 + 1e-6 * (1 + np.abs(np.where(np.isfinite(lse_ref), lse_ref, 0)))
    got = o.astype(np.float64)
    over = np.abs(got - o_ref) > bound
    assert not over.any(), (f"{int(over.sum())} of {over.size} outputs beyond the bound; worst "
                            f"{np.max(np.abs(got - o_ref) - bound):.3g} over")
    np.testing.assert_array_equal(np.isneginf(lse), np.isneginf(lse_ref))
    fin = np.isfinite(lse_ref)
    assert np.all(np.abs(lse[fin] - lse_ref[fin]) <= lse_bound[fin])
    return o, lse


def _dropout_factors(BH, Lq, Lk, dropout):
    """z [BH, Lq, Lk]: 1 / (1 - p) where the Philox draw of (p, seed, offset) keeps a weight, else 0."""
    if not dropout[0]:
        return np.ones((BH, Lq, Lk))
    return ref.dropout_keep(BH * Lq * Lk, *dropout).reshape(BH, Lq, Lk) / (1 - dropout[0])


def _mma_steps(n):
    """A bound on the mma steps of a sum over n terms (head-dim columns, keys or queries): a GPU's
    tensor cores round once more per step (module docstring: m, m')."""
    from minitx.kernels.attention import _head_dim_class

    return (_head_dim_class(n) if n <= 128 else n) // 8 + 1


def _weights(q, k, keep, scale):
    """The reference's normalised weights P [BH, Lq, Lk] (0 on fully masked rows)."""
    s = np.where(keep, scale * np.einsum("bid,bjd->bij", q.astype(np.float64), k.astype(np.float64)), -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(m == -np.inf, 0, m)), 0)
    total = e.sum(-1, keepdims=True)
    return e / np.where(total == 0, 1, total)


@SETTINGS
@given(B=st.integers(1, 2), H=st.integers(1, 2), Lq=st.sampled_from([1, 5, 16, 17, 33, 40]),
       Lk=st.sampled_from([1, 3, 16, 33, 40]), d=st.sampled_from([1, 8, 13, 32, 33, 64, 100, 128]),
       causal=st.booleans(), use_mask=st.booleans(), p=st.sampled_from([0.0, 0.0, 0.1, 0.5]),
       dtype=st.sampled_from(["bfloat16", "float32"]), seed=st.integers(0, 2**31))
def test_tensor_core_forward_within_its_rounding(cpu, tf32, B, H, Lq, Lk, d, causal, use_mask, p, dtype, seed):
    rng = np.random.default_rng(seed)
    BH = B * H
    q, k, v = _inputs(rng, np.dtype(dtype), BH, Lq, Lk, d)
    kpm = None
    if use_mask:
        kpm = rng.random((B, Lk)) < 0.7
        kpm[0, :] = False  # batch 0: every query row fully masked
    if causal and Lq != Lk:
        Lq = Lk
        q = _inputs(rng, np.dtype(dtype), BH, Lq, Lk, d)[0]
    o, lse = check_against_reference(q, k, v, kpm, causal, None, (p, seed, seed // 3))
    if use_mask:
        assert np.all(o[:H] == 0) and np.all(np.isneginf(lse[:H]))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("d", [32, 64, 128])
def test_several_tiles_of_keys_and_queries_in_every_class(cpu, tf32, dtype, d):
    """Lq, Lk past one block's query rows and one tile's keys (TF32 at D = 128 takes 16 keys a
    tile), scores spread wide (a sharp softmax), causal and not."""
    rng = np.random.default_rng(d)
    q, k, v = _inputs(rng, np.dtype(dtype), 2, 70, 70, d, spread=2.0)
    check_against_reference(q, k, v, causal=True, scale=0.3)
    check_against_reference(q, k[:, :45], v[:, :45], scale=0.3)


def test_a_nan_score_gives_a_nan_row_and_masked_rows_stay_zero(cpu):
    rng = np.random.default_rng(8)
    q, k, v = _inputs(rng, BF16, 2, 5, 40, 8)
    q[0, 2, 3] = np.nan
    kpm = np.ones((2, 40), bool)
    kpm[1] = False
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, tensor_cores=True)
    assert np.isnan(o[0, 2].astype(np.float32)).all() and np.isnan(lse[0, 2])
    assert np.isfinite(o[0, [0, 1, 3, 4]].astype(np.float32)).all()
    assert np.all(o[1] == 0) and np.all(np.isneginf(lse[1]))


@pytest.mark.parametrize("d", [24, 40])
def test_every_thread_order(cpu, any_schedule, d):
    """The emulator's orders, drift among them, find a missing barrier between the warps."""
    rng = np.random.default_rng(d)
    q, k, v = _inputs(rng, BF16, 2, 37, 37, d)
    check_against_reference(q, k, v, rng.random((1, 37)) < 0.8, True)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_heads_read_in_place_give_the_contiguous_bits(cpu, tf32, dtype):
    rng = np.random.default_rng(11)
    B, H, L, d = 2, 3, 21, 40
    qkv = rng.standard_normal((B, L, 3 * H, d)).astype(dtype).transpose(0, 2, 1, 3)
    q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
    options = dict(key_pad_mask=rng.random((B, L)) > 0.2, causal=True, dropout_p=0.2, seed=4, offset=9,
                   tensor_cores=True)
    o, lse = K.attention_forward(q, k, v, **options)
    flat = [np.ascontiguousarray(x).reshape(B * H, L, d) for x in (q, k, v)]
    o_flat, lse_flat = K.attention_forward(*flat, **options)
    assert o.shape == (B, H, L, d) and o.transpose(0, 2, 1, 3).flags.c_contiguous
    np.testing.assert_array_equal(o.reshape(B * H, L, d).view(np.uint16 if dtype == "bfloat16" else np.uint32),
                                  o_flat.view(np.uint16 if dtype == "bfloat16" else np.uint32))
    np.testing.assert_array_equal(lse.reshape(B * H, L), lse_flat)


def test_the_switch_and_what_it_refuses(cpu, monkeypatch, tf32_switch):
    rng = np.random.default_rng(2)
    q, k, v = _inputs(rng, BF16, 2, 9, 9, 16)
    simt = K.attention_forward(q, k, v)[0].view(np.uint16)
    mma = K.attention_forward(q, k, v, tensor_cores=True)[0].view(np.uint16)
    assert not np.array_equal(simt, mma)  # P rounded to bfloat16 moves some outputs by an ulp
    np.testing.assert_array_equal(K.attention_forward(q, k, v, tensor_cores=False)[0].view(np.uint16), simt)
    with K.use_tensor_core_attention():
        np.testing.assert_array_equal(K.attention_forward(q, k, v)[0].view(np.uint16), mma)
    monkeypatch.setenv("MINITX_ATTENTION_MMA", "1")
    np.testing.assert_array_equal(K.attention_forward(q, k, v)[0].view(np.uint16), mma)
    with K.use_tensor_core_attention(False):
        np.testing.assert_array_equal(K.attention_forward(q, k, v)[0].view(np.uint16), simt)
    # float32 takes the tensor cores only under TF32; float64 never
    tf32_switch(False)
    q32 = q.astype(np.float32)
    np.testing.assert_array_equal(K.attention_forward(q32, q32, q32)[0],
                                  K.attention_forward(q32, q32, q32, tensor_cores=False)[0])
    for x, why in ((q32, "float32"), (q.astype(np.float64), "float64"), (q32[:0], "float32")):  # empty too
        with pytest.raises(ValueError, match=f"tensor_cores=True needs bfloat16, or float32 with TF32.*got {why}"):
            K.attention_forward(x, x, x, tensor_cores=True)


# ---- the backward: attention_mma_backward_dkdv and attention_mma_backward_dq ----

def check_backward(q, k, v, do, kpm=None, causal=False, scale=None, dropout=(0.0, 0, 0), forward_on_tensor_cores=True,
                   cp=None):
    """dq, dk, dv of the tensor-core backward within the bounds of the module docstring, given
    the o and lse of a forward of either file (``forward_on_tensor_cores``); on the GPU when
    ``cp`` (CuPy) is given, else on the CPU build."""
    BH, Lq, d = q.shape
    Lk = k.shape[1]
    there = (lambda x: x) if cp is None else (lambda x: None if x is None else cp.asarray(x))
    back = (lambda x: x) if cp is None else cp.asnumpy
    options = dict(key_pad_mask=there(kpm), causal=causal, scale=scale, dropout_p=dropout[0], seed=dropout[1],
                   offset=dropout[2])
    o, lse = K.attention_forward(there(q), there(k), there(v), tensor_cores=forward_on_tensor_cores, **options)
    grads = K.attention_backward(there(q), there(k), there(v), o, lse, there(do), tensor_cores=True, **options)
    o, lse, grads = back(o), back(lse), [back(g) for g in grads]
    keep = ref.attention_keep(BH, Lq, Lk, kpm, causal)
    s = 1 / math.sqrt(d) if scale is None else scale
    z = _dropout_factors(BH, Lq, Lk, dropout)
    *want, terms = ref.attention(q, k, v, keep, s, z)[2](do, o_saved=o, lse_saved=lse, terms=True)
    bounds = _gradient_bounds(q, k, v, o, lse, do, keep, s, z, terms)
    for name, got, wanted, bound in zip(("dq", "dk", "dv"), grads, want, bounds):
        assert got.dtype == q.dtype and got.shape == wanted.shape
        got = got.astype(np.float64)
        assert np.isfinite(got).all(), name
        bound = bound + 2.0**-23 * (np.abs(wanted) + bound)  # scale * acc
        if q.dtype == BF16:
            bound = bound + ref.bfloat16_ulp(np.abs(wanted) + bound)  # the store
        over = np.abs(got - wanted) > bound
        assert not over.any(), (f"{name}: {int(over.sum())} of {over.size} beyond the bound; worst "
                                f"{np.max(np.abs(got - wanted) - bound):.3g} over")
    return grads


def _gradient_bounds(q, k, v, o, lse, do, keep, scale, z, terms):
    """Elementwise bounds of |dq - dq_ref|, |dk - dk_ref|, |dv - dv_ref| before the results are
    rounded (module docstring, same symbols); terms: the reference's P, dP, delta and dS."""
    u = 2.0**-8 if q.dtype == BF16 else 2.0**-11
    w = 0.0 if q.dtype == BF16 or _tf32_already(q, k, v, do) else 2.0**-11
    f, tiny = 2.0**-23, 2.0**-126
    q, k, v, o, do = (np.abs(x.astype(np.float64)) for x in (q, k, v, o, do))
    d, Lq, Lk = q.shape[2], q.shape[1], k.shape[1]
    lse = np.asarray(lse, np.float64)[..., None]
    live = keep & ~np.isneginf(lse)  # elsewhere the kernel's P z and dS are 0, as the reference's
    p, dp, delta, ds = (terms[name] for name in ("p", "dp", "delta", "ds"))
    pz = p * z
    dot = 2 * w + w * w + (d + _mma_steps(d) + 2) * f  # a dot product's: two operands rounded, a float sum
    eps = scale * np.einsum("bid,bjd->bij", q, k) * dot + f * np.abs(np.where(live, lse, 0)) + 2.0**-20
    rho = np.where(live, np.expm1(eps), 0)
    F = z * np.einsum("bid,bjd->bij", do, v) * dot
    G = (d + 6) * f * (do * o).sum(-1, keepdims=True)
    A = np.where(live, rho * p * np.abs(dp - delta) + tiny * (np.abs(dp - delta) + 1)
                 + (1 + rho) * p * (F + G + 2 * f * (np.abs(dp) + np.abs(delta) + F + G)), 0)
    B = A + u * (np.abs(ds) + A)  # dS rounded to an operand
    C = np.where(live, (rho + u * (1 + rho)) * pz + tiny * z, 0)  # P z rounded to an operand
    # each term's weight in the bound of a sum of n terms: its operands' errors, the sum's
    nq, nk = Lq + _mma_steps(Lq), Lk + _mma_steps(Lk)
    wv = C * (1 + w) + w * pz + nq * f * (pz + C) * (1 + w)
    wk = B * (1 + w) + w * np.abs(ds) + nq * f * (np.abs(ds) + B) * (1 + w)
    wq = B * (1 + w) + w * np.abs(ds) + nk * f * (np.abs(ds) + B) * (1 + w)
    dq = scale * wq @ k + Lk * tiny
    dk = scale * wk.transpose(0, 2, 1) @ q + Lq * tiny
    dv = wv.transpose(0, 2, 1) @ do + Lq * tiny
    return dq, dk, dv


def _tf32_already(*arrays):
    """Whether float32 arrays are TF32 operands already (their low 13 mantissa bits zero): then
    nothing rounds them, and w = 0 in the bounds, which then hold P and dS to 2^-11."""
    return all(x.dtype == np.float32 and not np.any(x.view(np.uint32) & 0x1FFF) for x in arrays)


def _as_tf32(x):
    """float32 x with its low 13 mantissa bits cleared: a TF32 operand as it is."""
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _masked_inputs(rng, dtype, B, H, Lq, Lk, d, causal, use_mask, spread=1.0):
    """q, k, v, do and a key-padding mask (batch 0 fully masked) or None; Lq = Lk when causal."""
    Lq = Lk if causal else Lq
    q, k, v = _inputs(rng, dtype, B * H, Lq, Lk, d, spread)
    do = rng.standard_normal(q.shape).astype(dtype)
    kpm = None
    if use_mask:
        kpm = rng.random((B, Lk)) < 0.7
        kpm[0, :] = False  # batch 0: every query row fully masked
    return q, k, v, do, kpm


@SETTINGS
@given(B=st.integers(1, 2), H=st.integers(1, 2), Lq=st.sampled_from([1, 5, 16, 17, 33, 40]),
       Lk=st.sampled_from([1, 3, 16, 33, 40]), d=st.sampled_from([1, 8, 13, 32, 33, 64, 65, 100, 128]),
       causal=st.booleans(), use_mask=st.booleans(), p=st.sampled_from([0.0, 0.0, 0.1, 0.5]),
       dtype=st.sampled_from(["bfloat16", "float32", "tf32"]), forward_on_tensor_cores=st.booleans(),
       seed=st.integers(0, 2**31))
def test_tensor_core_backward_within_its_rounding(cpu, tf32, B, H, Lq, Lk, d, causal, use_mask, p, dtype,
                                                  forward_on_tensor_cores, seed):
    """After a forward of either file (each chooses on its own), dq, dk, dv within the bounds;
    "tf32": float32 inputs that are TF32 operands already, held to the tighter bounds (w = 0)."""
    rng = np.random.default_rng(seed)
    q, k, v, do, kpm = _masked_inputs(rng, np.dtype("float32" if dtype == "tf32" else dtype), B, H, Lq, Lk, d,
                                      causal, use_mask)
    if dtype == "tf32":
        q, k, v, do = (_as_tf32(x) for x in (q, k, v, do))
    dq, dk, dv = check_backward(q, k, v, do, kpm, causal, None, (p, seed, seed // 3), forward_on_tensor_cores)
    if use_mask:  # no query of batch 0 sees a key: nothing flows back
        assert not np.any(dq[:H]) and not np.any(dk[:H]) and not np.any(dv[:H])


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "tf32"])
@pytest.mark.parametrize("d", [32, 64, 128])
def test_backward_over_several_tiles_in_every_class(cpu, tf32, dtype, d):
    """Lq, Lk past one block's rows and several streamed tiles (TF32 at D = 128 streams 8 rows a
    tile), scores spread wide (a sharp softmax, weights that underflow), causal and not, dropout;
    "tf32": float32 inputs that are TF32 operands already (the tighter bounds)."""
    rng = np.random.default_rng(d)
    q, k, v = _inputs(rng, np.dtype("float32" if dtype == "tf32" else dtype), 2, 70, 70, d, spread=2.0)
    do = rng.standard_normal(q.shape).astype(q.dtype)
    if dtype == "tf32":
        q, k, v, do = (_as_tf32(x) for x in (q, k, v, do))
    check_backward(q, k, v, do, causal=True, scale=0.3)
    check_backward(q, k[:, :45], v[:, :45], do, scale=0.3, dropout=(0.1, 7, 1))
    check_backward(q[:, :45], k, v, do[:, :45], rng.random((2, 70)) < 0.8, scale=0.3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_backward_of_a_nan_row_and_of_fully_masked_rows(cpu, tf32, dtype):
    """A NaN score makes its row's dq NaN, and every dk, dv of its head (each sums over that
    row); fully masked rows and keys give zero gradients, not NaN."""
    rng = np.random.default_rng(8)
    q, k, v = _inputs(rng, np.dtype(dtype), 3, 5, 40, 8)
    do = np.ones_like(q)
    q[0, 2, 3] = np.nan
    kpm = np.ones((3, 40), bool)
    kpm[1] = False            # head 1: every row fully masked
    kpm[2, ::3] = False       # head 2: some keys masked
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, tensor_cores=True)
    dq, dk, dv = (g.astype(np.float32) for g in K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm,
                                                                     tensor_cores=True))
    assert np.isnan(dq[0, 2]).all() and np.isnan(dk[0]).all() and np.isnan(dv[0]).all()
    assert np.isfinite(dq[0, [0, 1, 3, 4]]).all()
    assert not np.any(dq[1]) and not np.any(dk[1]) and not np.any(dv[1])
    assert not np.any(dk[2, ::3]) and not np.any(dv[2, ::3]) and np.all(np.isfinite(dq[2]))
    assert np.any(dk[2, 1::3]) and np.any(dv[2, 1::3])


@pytest.mark.parametrize("d", [24, 40])
def test_backward_in_every_thread_order(cpu, any_schedule, d):
    """The emulator's orders, drift among them, find a missing barrier between the warps."""
    rng = np.random.default_rng(d)
    q, k, v = _inputs(rng, BF16, 2, 37, 45, d)
    do = rng.standard_normal(q.shape).astype(BF16)
    check_backward(q, k, v, do, rng.random((1, 45)) < 0.8, dropout=(0.2, 3, 4))
    check_backward(q, k[:, :37], v[:, :37], do, None, True)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_backward_heads_read_in_place_and_written_to_out_give_the_contiguous_bits(cpu, tf32, dtype):
    """q, k, v, do as [B, H, L, d] views of [B, L, nH, d] arrays go in where they lie, the
    gradients come out as such views or into ``out`` (the heads of one packed gradient), and
    every bit equals the [BH, L, d] contiguous path's."""
    rng = np.random.default_rng(11)
    B, H, L, d = 2, 3, 21, 40
    qkv = rng.standard_normal((B, L, 3 * H, d)).astype(dtype).transpose(0, 2, 1, 3)
    q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
    do = rng.standard_normal((B, L, H, d)).astype(dtype).transpose(0, 2, 1, 3)
    options = dict(key_pad_mask=rng.random((B, L)) > 0.2, causal=True, dropout_p=0.2, seed=4, offset=9,
                   tensor_cores=True)
    o, lse = K.attention_forward(q, k, v, **options)
    grads = K.attention_backward(q, k, v, o, lse, do, **options)
    flat = [np.ascontiguousarray(x).reshape(B * H, L, d) for x in (q, k, v, o, do)]
    flat_grads = K.attention_backward(*flat[:4], lse.reshape(B * H, L), flat[4], **options)
    packed = np.full((B, L, 3 * H, d), np.nan, dtype).transpose(0, 2, 1, 3)
    out = (packed[:, :H], packed[:, H:2 * H], packed[:, 2 * H:])
    written = K.attention_backward(q, k, v, o, lse, do, out=out, **options)
    bits = np.uint16 if dtype == "bfloat16" else np.uint32
    for got, into, out_array, want in zip(grads, written, out, flat_grads):
        assert got.shape == (B, H, L, d) and got.transpose(0, 2, 1, 3).flags.c_contiguous
        assert into is out_array
        np.testing.assert_array_equal(got.reshape(B * H, L, d).view(bits), want.view(bits))
        np.testing.assert_array_equal(into.reshape(B * H, L, d).view(bits), want.view(bits))


def test_the_backward_switch_and_what_it_refuses(cpu, monkeypatch, tf32_switch):
    """tensor_cores=True/False, use_tensor_core_attention and MINITX_ATTENTION_MMA pick the
    backward's kernels, whichever forward gave o and lse."""
    rng = np.random.default_rng(2)
    q, k, v = _inputs(rng, BF16, 2, 9, 9, 16)
    do = rng.standard_normal(q.shape).astype(BF16)

    def backward(o_lse, **options):
        return np.stack([g.view(np.uint16) for g in K.attention_backward(q, k, v, *o_lse, do, **options)])

    for forward in (K.attention_forward(q, k, v, tensor_cores=False), K.attention_forward(q, k, v, tensor_cores=True)):
        simt, mma = backward(forward), backward(forward, tensor_cores=True)
        assert not np.array_equal(simt, mma)  # dS rounded to bfloat16 moves some gradients
        np.testing.assert_array_equal(backward(forward, tensor_cores=False), simt)
        with K.use_tensor_core_attention():
            np.testing.assert_array_equal(backward(forward), mma)
            np.testing.assert_array_equal(backward(forward, tensor_cores=False), simt)
        with monkeypatch.context() as env:
            env.setenv("MINITX_ATTENTION_MMA", "1")
            np.testing.assert_array_equal(backward(forward), mma)
            with K.use_tensor_core_attention(False):
                np.testing.assert_array_equal(backward(forward), simt)
    # float32 takes the tensor cores only under TF32; float64 never
    tf32_switch(False)
    q32, do32 = q.astype(np.float32), do.astype(np.float32)
    o, lse = K.attention_forward(q32, q32, q32)
    with K.use_tensor_core_attention():
        for got, want in zip(K.attention_backward(q32, q32, q32, o, lse, do32),
                             K.attention_backward(q32, q32, q32, o, lse, do32, tensor_cores=False)):
            np.testing.assert_array_equal(got, want)
    for x, why in ((q32, "float32"), (q.astype(np.float64), "float64")):
        o, lse = K.attention_forward(x, x, x)
        with pytest.raises(ValueError, match=f"attention_backward: tensor_cores=True needs bfloat16, or float32 "
                                             f"with TF32.*got {why}"):
            K.attention_backward(x, x, x, o, lse, x, tensor_cores=True)


@pytest.fixture
def tensor_core_gpu(tf32):
    """CuPy, on a GPU whose tensor cores take bfloat16 and TF32 operands (compute capability 8.0
    and above), with TF32 allowed."""
    import cupy as cp

    if int(cp.cuda.Device().compute_capability) < 80:
        pytest.skip("tensor-core attention needs compute capability 8.0")
    return cp


def _gpu_case(dtype, shape, d):
    """q, k, v [B H, L, d] drawn on the host and a key-padding mask whose batch 0 sees no key."""
    B, H, Lq, Lk = shape
    rng = np.random.default_rng(d)
    q, k, v = _inputs(rng, np.dtype(dtype), B * H, Lq, Lk, d)
    kpm = rng.random((B, Lk)) < 0.8
    kpm[0] = False
    return q, k, v, kpm, rng


@pytest.mark.gpu
@pytest.mark.skipif(not K.available(), reason="needs CuPy and a CUDA GPU")
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape, d", [((2, 3, 5, 7), 20), ((4, 8, 32, 32), 64), ((2, 2, 70, 45), 128),
                                      ((192, 8, 32, 32), 64)])
def test_tensor_cores_on_the_gpu_within_the_same_bounds(tensor_core_gpu, dtype, shape, d):
    """mma.sync on hardware: the bounds the CPU build is held to, with masks, causal and dropout;
    skipped on GPUs below compute capability 8.0 (no bfloat16 or TF32 mma)."""
    q, k, v, kpm, _ = _gpu_case(dtype, shape, d)
    check_against_reference(q, k, v, kpm, False, None, (0.1, 3, 5), cp=tensor_core_gpu)
    if shape[2] == shape[3]:
        check_against_reference(q, k, v, None, True, 0.2, cp=tensor_core_gpu)


@pytest.mark.gpu
@pytest.mark.skipif(not K.available(), reason="needs CuPy and a CUDA GPU")
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape, d", [((2, 3, 5, 7), 20), ((4, 8, 32, 32), 64), ((2, 2, 70, 45), 128),
                                      ((2, 2, 45, 70), 128), ((64, 8, 32, 32), 64)])
def test_tensor_core_backward_on_the_gpu_within_the_same_bounds(tensor_core_gpu, dtype, shape, d):
    """The backward's mma.sync on hardware, held to the CPU build's bounds, after a forward of
    either file, with masks, causal and dropout."""
    q, k, v, kpm, rng = _gpu_case(dtype, shape, d)
    do = rng.standard_normal(q.shape).astype(dtype)
    check_backward(q, k, v, do, kpm, False, None, (0.1, 3, 5), cp=tensor_core_gpu)
    if shape[2] == shape[3]:
        check_backward(q, k, v, do, None, True, 0.2, forward_on_tensor_cores=False, cp=tensor_core_gpu)
