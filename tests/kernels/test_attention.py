"""Fused attention forward/backward on the CPU harness vs a NumPy reference."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from minitx import kernels as K

import _reference as ref

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def tol(dtype, scale=1.0):
    """Tolerances for values of about ``scale``: dropout multiplies the kept weights by 1/(1 - p),
    and so every term of the gradients' sums and their rounding. A result that cancels to 0 keeps
    an error of a few ulps of those terms, which atol must cover (p = 0.9: ten times 1e-5)."""
    return dict(rtol=1e-4, atol=1e-5 * scale) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11 * scale)


def _check(q, k, v, kpm, causal, scale, rng, dtype, dropout=(0.0, 0, 0)):
    """Forward and backward against ref.attention; dropout = (p, seed, offset) drops the
    weights ref.dropout_keep drops over the flat [BH, Lq, Lk]."""
    BH, Lq, d = q.shape
    Lk = k.shape[1]
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=causal, scale=scale, dropout_p=dropout[0],
                                 seed=dropout[1], offset=dropout[2])
    keep = ref.attention_keep(BH, Lq, Lk, kpm, causal)
    s = scale if scale is not None else 1 / math.sqrt(d)
    z = None
    if dropout[0]:
        z = ref.dropout_keep(BH * Lq * Lk, *dropout).reshape(BH, Lq, Lk) * dtype(1 / (1 - dropout[0]))
    o_ref, lse_ref, bwd = ref.attention(q, k, v, keep, s, z)
    t = tol(dtype, scale=1 / (1 - dropout[0]))
    np.testing.assert_allclose(o, o_ref, **t)
    np.testing.assert_array_equal(np.isinf(lse), np.isinf(lse_ref))
    fin = np.isfinite(lse_ref)
    np.testing.assert_allclose(lse[fin], lse_ref[fin], **t)
    do = rng.standard_normal(o.shape).astype(dtype)
    dq, dk, dv = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm, causal=causal,
                                      scale=scale, dropout_p=dropout[0], seed=dropout[1], offset=dropout[2])
    dq_r, dk_r, dv_r = bwd(do)
    for got, want in ((dq, dq_r), (dk, dk_r), (dv, dv_r)):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, **t)
    return o, lse


@SETTINGS
@given(B=st.integers(1, 2), H=st.integers(1, 2), Lq=st.sampled_from([1, 5, 16, 17, 40]),
       Lk=st.sampled_from([1, 3, 16, 33, 40]), d=st.sampled_from([1, 8, 13, 32, 64]),
       causal=st.booleans(), use_mask=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2**31))
def test_attention_random(cpu, B, H, Lq, Lk, d, causal, use_mask, dtype, seed):
    rng = np.random.default_rng(seed)
    BH = B * H
    q = rng.standard_normal((BH, Lq, d)).astype(dtype)
    k = rng.standard_normal((BH, Lk, d)).astype(dtype)
    v = rng.standard_normal((BH, Lk, d)).astype(dtype)
    kpm = None
    if use_mask:
        kpm = rng.random((B, Lk)) < 0.7
        kpm[0, :] = False  # batch 0: every query row fully masked
    _check(q, k, v, kpm, causal, None, rng, dtype)


@SETTINGS
@given(B=st.integers(1, 2), H=st.integers(1, 2), Lq=st.sampled_from([1, 5, 17, 40]),
       Lk=st.sampled_from([1, 3, 33, 40]), d=st.sampled_from([1, 8, 32]), causal=st.booleans(),
       use_mask=st.booleans(), p=st.sampled_from([0.1, 0.5, 0.9]), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2**64 - 1), offset=st.integers(0, 2**64 - 1))
def test_attention_dropout_drops_the_weights_dropout_would(cpu, B, H, Lq, Lk, d, causal, use_mask, p, dtype, seed,
                                                           offset):
    """With dropout on the weights the kernels drop exactly the elements of P that the Philox
    mask of dropout.cu drops over a stored P, forward and backward."""
    rng = np.random.default_rng(seed % 2**32)
    BH = B * H
    q, k, v = (rng.standard_normal((BH, n, d)).astype(dtype) for n in (Lq, Lk, Lk))
    kpm = (rng.random((B, Lk)) < 0.7) if use_mask else None
    _check(q, k, v, kpm, causal, None, rng, dtype, dropout=(p, seed, offset))


@pytest.mark.parametrize("d", [64, 128])
def test_attention_long_and_wide(cpu, d):
    # L = 128 (several tiles in both directions), head dim up to 128
    rng = np.random.default_rng(d)
    q = rng.standard_normal((1, 128, d)).astype(np.float32)
    k = rng.standard_normal((1, 128, d)).astype(np.float32)
    v = rng.standard_normal((1, 128, d)).astype(np.float32)
    _check(q, k, v, None, True, 0.1, rng, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 31, 32, 33, 63, 64, 65, 127, 128])
def test_each_head_dim_class_at_its_edges(cpu, d, dtype):
    """A head of d columns runs the kernels of the smallest D of HEAD_DIMS (32, 64, 128) with
    d <= D, whose tiles are zero past column d: at both edges of each class, with a key-padding
    mask, the causal mask and dropout, every output equals the reference."""
    from minitx.kernels.attention import HEAD_DIMS, _head_dim_class
    assert _head_dim_class(d) == min(D for D in HEAD_DIMS if d <= D)
    rng = np.random.default_rng(d)
    B, H, L = 2, 2, 21
    q, k, v = (rng.standard_normal((B * H, L, d)).astype(dtype) for _ in range(3))
    kpm = rng.random((B, L)) < 0.8
    _check(q, k, v, kpm, True, None, rng, dtype, dropout=(0.25, 5, 7))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bfloat16"])
def test_every_head_dim_class_that_fits_gives_the_same_bits(cpu, dtype, monkeypatch):
    """The columns past d are zeros that add nothing, and each output element is summed by one
    thread in one order whatever the class's groups of threads: d = 20 through D = 32, 64 and
    128 gives bit-identical outputs and gradients."""
    from minitx import backend
    from minitx.kernels import attention
    dtype = backend.resolve_dtype(dtype)
    rng = np.random.default_rng(3)
    B, H, L, d = 2, 3, 37, 20
    q, k, v, do = (rng.standard_normal((B * H, L, d)).astype(dtype) for _ in range(4))
    kpm = rng.random((B, L)) < 0.8
    results = []
    for D in attention.HEAD_DIMS:
        monkeypatch.setattr(attention, "_head_dim_class", lambda d, D=D: D)
        o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=True, dropout_p=0.25, seed=1, offset=2)
        grads = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm, causal=True, dropout_p=0.25, seed=1,
                                     offset=2)
        results.append([x.view(np.uint8) for x in (o, lse, *grads)])  # bytes: -0 is not +0
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            np.testing.assert_array_equal(got, want)


def test_a_sized_kernel_is_launched_with_one_of_its_sizes(cpu):
    """A kernel compiled per head-dim class names its class at launch; one without sizes takes none."""
    with pytest.raises(ValueError, match=r"attention_forward takes size= one of \(32, 64, 128\), got size=None"):
        cpu.launch("attention.cu", "attention_forward", np.float32, (1,), (128,), ())
    with pytest.raises(ValueError, match="attention_forward takes size= one of .* got size=48"):
        cpu.launch("attention.cu", "attention_forward", np.float32, (1,), (128,), (), size=48)
    with pytest.raises(ValueError, match="attention_backward_delta takes no size=, got size=64"):
        cpu.launch("attention.cu", "attention_backward_delta", np.float32, (1,), (128,), (), size=64)


@pytest.mark.parametrize("d", [24, 40])
def test_attention_schedules(cpu, any_schedule, d):
    rng = np.random.default_rng(7)
    B, H, L = 2, 2, 19  # d: four groups of 32 threads (D = 32), two of 64 (D = 64)
    q = rng.standard_normal((B * H, L, d))
    k = rng.standard_normal((B * H, L + 3, d))
    v = rng.standard_normal((B * H, L + 3, d))
    kpm = rng.random((B, 1, 1, L + 3)) < 0.8  # the Transformer's [B, 1, 1, Lk] is accepted as is
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=False)
    assert o.shape == q.shape and lse.shape == (B * H, L)
    do = rng.standard_normal(q.shape)
    dq, dk, dv = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm)
    keep = ref.attention_keep(B * H, L, L + 3, kpm[:, 0, 0], False)
    o_ref, _, bwd = ref.attention(q, k, v, keep, 1 / math.sqrt(d))
    np.testing.assert_allclose(o, o_ref, rtol=1e-10, atol=1e-11)
    for got, want in zip((dq, dk, dv), bwd(do)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-11)


def test_attention_fully_masked_rows(cpu):
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 6, 8)).astype(np.float32)
    v = rng.standard_normal((2, 6, 8)).astype(np.float32)
    kpm = np.array([[False] * 6, [True, False, True, False, False, False]])
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm)
    assert np.all(o[0] == 0) and np.all(np.isneginf(lse[0]))
    assert np.isfinite(lse[1]).all()
    dq, dk, dv = K.attention_backward(q, k, v, o, lse, np.ones_like(o), key_pad_mask=kpm)
    assert np.all(dq[0] == 0) and np.all(dk[0] == 0) and np.all(dv[0] == 0)
    assert np.all(dk[1, ~kpm[1]] == 0) and np.all(dv[1, ~kpm[1]] == 0)


def test_attention_finite_difference(cpu):
    rng = np.random.default_rng(11)
    q = rng.standard_normal((1, 5, 4))
    k = rng.standard_normal((1, 7, 4))
    v = rng.standard_normal((1, 7, 4))
    kpm = np.array([[True, True, False, True, True, True, False]])
    do = rng.standard_normal((1, 5, 4))
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=True)
    grads = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm, causal=True)

    def f(q_, k_, v_):
        return (K.attention_forward(q_, k_, v_, key_pad_mask=kpm, causal=True)[0] * do).sum()

    h = 1e-6
    for which, g in zip(range(3), grads):
        for idx in [(0, 0, 0), (0, 3, 2), (0, 4, 3)]:
            args = [q.copy(), k.copy(), v.copy()]
            args[which][idx] += h
            fp = f(*args)
            args[which][idx] -= 2 * h
            fm = f(*args)
            assert abs((fp - fm) / (2 * h) - g[idx]) < 1e-6, (which, idx)


def test_attention_mask_shapes():
    assert K.attention_mask_supported((2, 10), 8, 10)
    assert K.attention_mask_supported((2, 1, 1, 10), 8, 10)
    assert not K.attention_mask_supported((2, 5, 10), 8, 10)  # per-query mask
    assert not K.attention_mask_supported((5, 10), 8, 10)
    assert not K.attention_mask_supported((10,), 8, 10)
    q = np.zeros((8, 5, 4), np.float32)
    with pytest.raises(ValueError, match="unsupported attention mask"):
        K.attention_forward(q, q, q, key_pad_mask=np.ones((8, 5, 5), bool))
    with pytest.raises(ValueError, match="head dim"):
        z = np.zeros((1, 2, 129), np.float32)
        K.attention_forward(z, z, z)


def test_attention_plan_answers_for_the_op():
    q, k = (2, 4, 5, 8), (2, 4, 7, 8)
    assert K.attention_plan(q, k, k, (2, 1, 1, 7)) == K.AttentionPlan(8, 2, False)
    assert K.attention_plan(q, k, k, (7,)) == K.AttentionPlan(8, 1, False)
    assert K.attention_plan((5, 8), (5, 8), (5, 8), causal=True) == K.AttentionPlan(1, None, True)
    assert K.attention_plan((1, 8), (5, 8), (5, 8), causal=True).causal is False  # sees every key
    refused = {
        "not a key-padding mask": ((q, k, k, (2, 1, 5, 7)), {}),  # one row per query
        "head dims differ": ((q, k, (2, 4, 7, 9)), {}),
        "head dim 129": (((1, 5, 129), (1, 7, 129), (1, 7, 129)), {}),
        "batch axes": ((q, (1, 4, 7, 8), (1, 4, 7, 8)), {}),
        "causal with Lq = 5 != Lk = 7": ((q, k, k), dict(causal=True)),
        "weights": ((q, k, k), dict(weights=True)),
    }
    for why, (args, flags) in refused.items():
        assert why in K.attention_plan(*args, **flags)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_nan_score_gives_a_nan_row(cpu, dtype):
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, L, 8)).astype(dtype) for L in (5, 40, 40))
    q[0, 2, 3] = np.nan  # every score of query 2 in head 0 is NaN
    kpm = np.ones((2, 40), bool)
    kpm[1] = False        # head 1 fully masked: still zeros, not NaN
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm)
    s = q[0] @ k[0].T / np.sqrt(8)  # plain NumPy for head 0
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True)) @ v[0]
    assert np.isnan(want[2]).all() and np.isnan(o[0, 2]).all() and np.isnan(lse[0, 2])
    rest = [0, 1, 3, 4]
    np.testing.assert_allclose(o[0, rest], want[rest], **tol(dtype))
    assert np.all(o[1] == 0) and np.all(np.isneginf(lse[1]))
    dq, dk, dv = K.attention_backward(q, k, v, o, lse, np.ones_like(o), key_pad_mask=kpm)
    assert np.isnan(dq[0, 2]).all() and np.isnan(dk[0]).all() and np.isnan(dv[0]).all()
    assert np.all(dq[1] == 0) and np.all(dk[1] == 0) and np.all(dv[1] == 0)


@pytest.mark.parametrize("causal, dropout", [(False, 0.0), (True, 0.3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_heads_read_in_place_give_the_contiguous_results_bit_for_bit(cpu, causal, dropout, dtype):
    """q, k, v as the heads of one [B, L, 3H, d] projection, seen as [B, H, L, d] views (rows 3H*d
    apart), go in as they are; o and the gradients come out as [B, H, L, d] views of [B, L, H, d]
    arrays (merging the heads copies nothing); and every number equals the [BH, L, d] contiguous
    path's, bit for bit (the same arithmetic, read from other addresses)."""
    rng = np.random.default_rng(11)
    B, H, L, d = 2, 3, 7, 5
    qkv = rng.standard_normal((B, L, 3 * H, d)).astype(dtype).transpose(0, 2, 1, 3)  # [B, 3H, L, d] view
    q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
    kpm = rng.random((B, L)) > 0.2
    kpm[:, 0] = True
    do = rng.standard_normal((B, L, H, d)).astype(dtype).transpose(0, 2, 1, 3)
    flat = [np.ascontiguousarray(x).reshape(B * H, L, d) for x in (q, k, v, do)]
    options = dict(key_pad_mask=kpm, causal=causal, dropout_p=dropout, seed=4, offset=9)
    o, lse = K.attention_forward(q, k, v, **options)
    o_flat, lse_flat = K.attention_forward(*flat[:3], **options)
    assert o.shape == (B, H, L, d) and o.transpose(0, 2, 1, 3).flags.c_contiguous and lse.shape == (B, H, L)
    np.testing.assert_array_equal(o.reshape(B * H, L, d), o_flat)
    np.testing.assert_array_equal(lse.reshape(B * H, L), lse_flat)
    grads = K.attention_backward(q, k, v, o, lse, do, **options)
    flat_grads = K.attention_backward(*flat[:3], o_flat, lse_flat, flat[3], **options)
    for got, want in zip(grads, flat_grads):
        assert got.shape == (B, H, L, d) and got.transpose(0, 2, 1, 3).flags.c_contiguous
        np.testing.assert_array_equal(got.reshape(B * H, L, d), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bfloat16"])
@pytest.mark.parametrize("tensor_cores", [False, True])
def test_rows_read_a_pack_at_a_time_or_one_element_at_a_time_give_the_same_bits(cpu, tf32, dtype, tensor_cores):
    """The kernels load a tile's rows 16 bytes at a time where every row starts 16-byte aligned
    (AttnTileFetch), else element by element: heads that start one element past an aligned
    address take the second path and give the first path's bits, forward and backward, on both
    kinds of cores."""
    import ml_dtypes
    from minitx.kernels.attention_mma import use_tensor_core_attention
    if tensor_cores and dtype == np.float64:
        pytest.skip("no float64 tensor-core kernel")
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(13)
    B, H, L, d = 2, 2, 9, 32

    def heads(shift):
        """[B, H, L, d] heads of a [B, L, H, d + shift] array, starting `shift` elements in."""
        x = rng.standard_normal((B, L, H, d)).astype(np.float32).astype(dt)
        wide = np.zeros((B, L, H, d + shift), dt)
        wide[..., shift:] = x
        return wide[..., shift:].transpose(0, 2, 1, 3), np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    (q, q0), (k, k0), (v, v0), (do, do0) = (heads(1) for _ in range(4))
    assert all(x.ctypes.data % 16 for x in (q, k, v, do))  # no head starts 16-byte aligned
    kpm = rng.random((B, L)) > 0.2
    kpm[:, 0] = True
    options = dict(key_pad_mask=kpm, causal=True, dropout_p=0.3, seed=2, offset=5)
    launched, launch = [], cpu.launch
    cpu.launch = lambda file, kernel, *a, **kw: (launched.append(kernel), launch(file, kernel, *a, **kw))[1]
    try:
        with use_tensor_core_attention(tensor_cores):
            o, lse = K.attention_forward(q, k, v, **options)
            o0, lse0 = K.attention_forward(q0, k0, v0, **options)
            grads = K.attention_backward(q, k, v, o, lse, do, **options)
            grads0 = K.attention_backward(q0, k0, v0, o0, lse0, do0, **options)
    finally:
        del cpu.launch  # the instance attribute goes; the method is back
    assert any("mma" in name for name in launched) == tensor_cores
    for got, want in zip((o, lse, *grads), (o0, lse0, *grads0)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


def test_the_blocks_per_multiprocessor_setting_is_checked():
    from minitx.kernels.attention import THREADS, _min_blocks as min_blocks
    assert min_blocks("0") == 0 and min_blocks(" 4 ") == 4 and min_blocks(str(2048 // THREADS)) == 2048 // THREADS
    for bad in ("", "-1", "2.5", "many", str(2048 // THREADS + 1)):
        with pytest.raises(ValueError, match="MINITX_ATTENTION_MIN_BLOCKS"):
            min_blocks(bad)


def test_a_layout_the_kernels_cannot_read_is_copied_first(cpu):
    """A head dim that is not contiguous (every other element) is made contiguous, not misread."""
    rng = np.random.default_rng(12)
    wide = rng.standard_normal((4, 6, 10))
    q = wide[..., ::2]
    o, _ = K.attention_forward(q, q, q)
    want, _ = K.attention_forward(*(np.ascontiguousarray(q),) * 3)
    np.testing.assert_array_equal(o, want)


def _backward_launching(cpu, one_pass, *args, **kwargs):
    """attention_backward's gradients with the one-pass kernel allowed or not, and the kernels it launched."""
    from minitx.kernels.attention import use_one_pass_backward
    names, launch = [], cpu.launch
    cpu.launch = lambda file, kernel, *a, **k: (names.append(kernel), launch(file, kernel, *a, **k))[1]
    try:
        with use_one_pass_backward(one_pass):
            return K.attention_backward(*args, **kwargs), names
    finally:
        del cpu.launch  # the instance attribute goes; the method is back


def _gradient_buffers(B, H, Lq, Lk, d, dtype, packed):
    """Where attention_backward writes dq, dk, dv: new arrays (None), or views of wider buffers, each
    with strides of its own (dq among 2H heads a row, dk and dv two of 3H: a packed projection's)."""
    if not packed:
        return None
    dq = np.full((B, Lq, 2 * H, d), np.nan, dtype)[:, :, H:].transpose(0, 2, 1, 3)
    dkv = np.full((B, Lk, 3 * H, d), np.nan, dtype).transpose(0, 2, 1, 3)
    return dq, dkv[:, H:2 * H], dkv[:, 2 * H:]


@SETTINGS
@given(data=st.data(), B=st.integers(1, 2), H=st.integers(1, 3), Lq=st.sampled_from([1, 5, 16, 17, 40]),
       d=st.sampled_from([1, 8, 20, 32, 33, 64]), causal=st.booleans(), use_mask=st.booleans(),
       p=st.sampled_from([0.0, 0.3]), layout=st.sampled_from(["contiguous", "heads in place", "written packed"]),
       dtype=st.sampled_from([np.float32, np.float64, "bfloat16"]), seed=st.integers(0, 2**31))
def test_the_one_pass_backward_gives_the_two_kernels_bits(cpu, data, B, H, Lq, d, causal, use_mask, p, layout, dtype,
                                                          seed):
    """Where one block's key tile holds all of a head's keys (Lk <= bk1, D <= 64), dk, dv and dq
    come from one kernel and one recompute of P; each is summed in the two kernels' order, so
    the bytes are theirs (finite inputs), with masks, causal, dropout, heads read in place and
    gradients written into the heads of wider buffers alike."""
    from minitx import backend
    from minitx.kernels.attention import TILES, one_pass_backward_runs
    dtype = backend.resolve_dtype(dtype)
    Lk = data.draw(st.integers(1, TILES[np.dtype(np.float64 if dtype == np.float64 else np.float32)].bk1), label="Lk")
    rng = np.random.default_rng(seed)
    if layout == "contiguous":
        q, do = (rng.standard_normal((B * H, Lq, d)).astype(dtype) for _ in range(2))
        k, v = (rng.standard_normal((B * H, Lk, d)).astype(dtype) for _ in range(2))
    else:  # [B, H, L, d] views of [B, L, H, d] arrays
        q, do = (rng.standard_normal((B, Lq, H, d)).astype(dtype).transpose(0, 2, 1, 3) for _ in range(2))
        k, v = (rng.standard_normal((B, Lk, H, d)).astype(dtype).transpose(0, 2, 1, 3) for _ in range(2))
    kpm = rng.random((B, Lk)) < 0.7 if use_mask else None
    options = dict(key_pad_mask=kpm, causal=causal, dropout_p=p, seed=seed, offset=3)
    o, lse = K.attention_forward(q, k, v, **options)
    assert one_pass_backward_runs(dtype, d, Lk)
    written = layout == "written packed"
    one, one_names = _backward_launching(cpu, True, q, k, v, o, lse, do,
                                         out=_gradient_buffers(B, H, Lq, Lk, d, dtype, written), **options)
    two, two_names = _backward_launching(cpu, False, q, k, v, o, lse, do,
                                         out=_gradient_buffers(B, H, Lq, Lk, d, dtype, written), **options)
    assert one_names == ["attention_backward_delta", "attention_backward_onepass"]
    assert two_names == ["attention_backward_delta", "attention_backward_dkdv", "attention_backward_dq"]
    for got, want in zip(one, two):
        assert got.shape == want.shape and got.strides == want.strides and not np.isnan(got).any()
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))  # bytes: -0 is not +0
    if written:  # the heads around the gradients are untouched
        dq, dk, dv = one
        assert np.isnan(dq.base).sum() == dq.base.size - dq.size
        assert dk.base is dv.base and np.isnan(dk.base).sum() == dk.base.size - dk.size - dv.size


@pytest.mark.parametrize("dtype, d, lk, one_pass", [
    (np.float32, 64, 32, True), (np.float32, 64, 33, False), (np.float32, 65, 8, False),
    (np.float64, 64, 16, True), (np.float64, 64, 17, False), ("bfloat16", 32, 32, True)])
def test_the_one_pass_backward_runs_where_a_tile_holds_every_key(dtype, d, lk, one_pass):
    from minitx import backend
    from minitx.kernels.attention import one_pass_backward_runs, use_one_pass_backward
    dtype = backend.resolve_dtype(dtype)
    assert one_pass_backward_runs(dtype, d, lk) == one_pass
    with use_one_pass_backward(False):
        assert not one_pass_backward_runs(dtype, d, lk)


@pytest.mark.parametrize("d", [24, 40])
def test_the_one_pass_backward_under_every_thread_order(cpu, any_schedule, d):
    """The emulator's thread orders (a missing barrier shows as a changed result under one of
    them): the one-pass kernel's bytes are the two kernels' under each."""
    rng = np.random.default_rng(8)
    B, H, L = 2, 2, 19
    q, k, v, do = (rng.standard_normal((B * H, L, d)).astype(np.float32) for _ in range(4))
    options = dict(key_pad_mask=rng.random((B, L)) < 0.8, causal=True, dropout_p=0.2, seed=5, offset=6)
    o, lse = K.attention_forward(q, k, v, **options)
    (one, names), (two, _) = (_backward_launching(cpu, on, q, k, v, o, lse, do, **options) for on in (True, False))
    assert "attention_backward_onepass" in names
    for got, want in zip(one, two):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_causal_kernel_reads_no_key_tile_above_the_diagonal(cpu):
    """docs/ops.md: a NaN in a value v_j reaches the queries that cannot see it (0 · NaN, as in
    PyTorch and the Python path) only where their query tile reads j's key tile; the queries of
    earlier tiles never read it and keep the reference's values."""
    from minitx.kernels.attention import TILES
    tiles = TILES[np.dtype(np.float32)]
    L, d, j = 3 * tiles.bk, 8, 2 * tiles.bk + 3  # j in the third key tile
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, L, d)).astype(np.float32) for _ in range(3))
    v[0, j] = np.nan
    o, _ = K.attention_forward(q, k, v, causal=True)
    o_ref, _, _ = ref.attention(q, k, np.nan_to_num(v), ref.attention_keep(1, L, L, None, True), 1 / math.sqrt(d))
    earlier = 2 * tiles.bk  # the queries whose tiles end before j's key tile starts
    np.testing.assert_allclose(o[0, :earlier], o_ref[0, :earlier], **tol(np.float32))
    assert np.isnan(o[0, earlier:j]).all()  # their tiles read j's key tile: 0 * NaN
    assert np.isnan(o[0, j:]).all()  # they see v_j
