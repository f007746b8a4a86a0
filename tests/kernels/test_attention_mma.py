"""attention_mma.cu (attention's forward on the tensor cores) on the CPU build, against the
float64 NumPy reference within the error its roundings allow, and against attention.cu's
contract (masks, fully masked and NaN rows, dropout, layouts, switch).

The bounds, per output row i (P the reference weights, z the dropout factors, E_i below):
- bfloat16: products of bfloat16 operands are exact and sums are in float; P is rounded to
  bfloat16 for P V (8 significant bits: relative 2^-8 per weight) and o is stored in bfloat16
  (1 ulp): |o - o_ref| <= 2^-8 sum_j P_ij z_ij |v_j| + ulp(o_ref).
- TF32: q, k, v and P are rounded to TF32 (11 significant bits: relative 2^-11 each). A score is then off by at most
  E_ij = scale sum_c |q_ic k_jc| 2^-10 (+ float's sums), E_i its largest over the row's keys; a
  normalised weight by a factor of at most exp(2 E_i); so |o - o_ref| <= (2.1 E_i + 2^-10)
  sum_j P_ij z_ij |v_j|, and |lse - lse_ref| <= E_i.
Both add float's rounding of the sums: a score of D products off by at most
D 2^-23 scale sum_c |q_ic k_jc| (the CPU build adds the products exactly and rounds once; a
GPU's tensor cores add them in float, in an order of their own), which E_i includes, and the
P V sums, by Lk 2^-23 of sum_j P_ij z_ij |v_j|. The same bounds hold the GPU's results (the
tests marked gpu).
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


@pytest.fixture
def tf32(monkeypatch):
    """TF32 allowed (as --precision tf32 sets it): float32 attention may take the tensor cores."""
    monkeypatch.setenv("CUPY_TF32", "1")


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
    z = np.ones((BH, Lq, Lk))
    if dropout[0]:
        z = ref.dropout_keep(BH * Lq * Lk, *dropout).reshape(BH, Lq, Lk) / (1 - dropout[0])
    o_ref, lse_ref, _ = ref.attention(q, k, v, keep, s, z)
    weights = _weights(q, k, keep, s)
    pv_abs = (weights * z) @ np.abs(v.astype(np.float64))
    operands = 0.0 if q.dtype == BF16 else 2.0**-10  # a score's relative error from rounding q and k
    qk_abs = s * np.einsum("bid,bjd->bij", np.abs(q.astype(np.float64)), np.abs(k.astype(np.float64)))
    e_row = np.where(keep, qk_abs * (operands + d * 2.0**-23), 0).max(-1)[..., None]  # E_i
    sums = Lk * 2.0**-23
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


def _weights(q, k, keep, scale):
    """The reference's normalised weights P [BH, Lq, Lk] (0 on fully masked rows)."""
    s = np.where(keep, scale * np.einsum("bid,bjd->bij", q.astype(np.float64), k.astype(np.float64)), -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.where(keep, np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
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


def test_the_switch_and_what_it_refuses(cpu, monkeypatch):
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
    monkeypatch.setenv("CUPY_TF32", "0")
    q32 = q.astype(np.float32)
    np.testing.assert_array_equal(K.attention_forward(q32, q32, q32)[0],
                                  K.attention_forward(q32, q32, q32, tensor_cores=False)[0])
    for x, why in ((q32, "float32"), (q.astype(np.float64), "float64")):
        with pytest.raises(ValueError, match=f"tensor_cores=True needs bfloat16, or float32 with TF32.*got {why}"):
            K.attention_forward(x, x, x, tensor_cores=True)


@pytest.mark.gpu
@pytest.mark.skipif(not K.available(), reason="needs CuPy and a CUDA GPU")
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape, d", [((2, 3, 5, 7), 20), ((4, 8, 32, 32), 64), ((2, 2, 70, 45), 128),
                                      ((192, 8, 32, 32), 64)])
def test_tensor_cores_on_the_gpu_within_the_same_bounds(tf32, dtype, shape, d):
    """mma.sync on hardware: the bounds the CPU build is held to, with masks, causal and dropout;
    skipped on GPUs below compute capability 8.0 (no bfloat16 or TF32 mma)."""
    import cupy as cp

    from minitx.backend import allow_tf32, tf32_allowed

    if int(cp.cuda.Device().compute_capability) < 80:
        pytest.skip("tensor-core attention needs compute capability 8.0")
    before = tf32_allowed()
    allow_tf32(True)
    try:
        B, H, Lq, Lk = shape
        rng = np.random.default_rng(d)
        q, k, v = _inputs(rng, np.dtype(dtype), B * H, Lq, Lk, d)
        kpm = rng.random((B, Lk)) < 0.8
        kpm[0] = False
        check_against_reference(q, k, v, kpm, False, None, (0.1, 3, 5), cp=cp)
        if Lq == Lk:
            check_against_reference(q, k, v, None, True, 0.2, cp=cp)
    finally:
        allow_tf32(before)
