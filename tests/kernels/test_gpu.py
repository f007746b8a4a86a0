"""GPU tests: every launcher through CuPy vs a reference computed with CuPy.

Skipped unless CuPy imports and a CUDA device is present.  Also checks that
the GPU and the CPU emulation agree (bit-exactly for the dropout masks), and
that the ops dispatch to the kernels on CuPy arrays: fused ops vs the same ops
under ``use_fused(False)``, at Multi30k-like shapes.
"""
import math

import numpy as np
import pytest

import minitx.kernels as K

import _dispatch as dispatch
import _reference as ref
import minitx
import minitx.functional as F
from minitx import backend, optim

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not K.available(), reason="needs CuPy and a CUDA GPU"),
]

DTYPES = [np.float32, np.float64]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def _tol(dtype, loose=1.0):
    if dtype == np.float32:
        return dict(rtol=1e-4 * loose, atol=1e-5 * loose)
    return dict(rtol=1e-10 * loose, atol=1e-11 * loose)


def _close(cp, got, want, dtype, loose=1.0):
    np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), **_tol(dtype, loose))


# ----------------------------------------------------------------- softmax
def _softmax_xp(cp, x):
    s = x.astype(cp.float64)
    m = s.max(-1, keepdims=True)
    dead = m == -cp.inf
    e = cp.exp(s - cp.where(dead, 0, m))
    return cp.where(dead, 0, e / cp.where(dead, 1, e.sum(-1, keepdims=True)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 1), (3, 7, 33), (64, 1000), (8, 4096)])
def test_softmax(cp, dtype, shape):
    rng = cp.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    y = K.softmax_forward(x)
    _close(cp, y, _softmax_xp(cp, x), dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    dx = K.softmax_backward(y, dy)
    yy = y.astype(cp.float64)
    _close(cp, dx, yy * (dy - (dy * yy).sum(-1, keepdims=True)), dtype)


# -------------------------------------------------------------- layer norm
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 1), (7, 33), (4, 50, 512), (300, 1024)])
def test_layer_norm(cp, dtype, shape):
    rng = cp.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    n = shape[-1]
    w = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    y, mean, rstd = K.layer_norm_forward(x, w, b, 1e-5)
    x64 = x.astype(cp.float64)
    mu = x64.mean(-1, keepdims=True)
    rs = 1 / cp.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rs
    _close(cp, y, xhat * w + b, dtype, 3)
    _close(cp, mean, mu[..., 0], dtype, 3)
    _close(cp, rstd, rs[..., 0], dtype, 10)
    dy = rng.standard_normal(shape).astype(dtype)
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    g = dy * w
    dx_ref = rs * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    _close(cp, dx, dx_ref, dtype, 5)
    _close(cp, dw, (dy * xhat).sum(lead), dtype, 20)
    _close(cp, db, dy.astype(cp.float64).sum(lead), dtype, 20)


# ----------------------------------------------------------- cross entropy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(1, 1), (17, 33), (256, 10000)])
def test_cross_entropy(cp, dtype, rows, cols):
    rng = cp.random.default_rng(2)
    x = (rng.standard_normal((rows, cols)) * 3).astype(dtype)
    t = rng.integers(0, cols, rows)
    t[::3] = -100
    eps = 0.1
    loss, lse = K.cross_entropy_forward(x, t, -100, eps)
    x64 = x.astype(cp.float64)
    lse_ref = cp.log(cp.exp(x64 - x64.max(-1, keepdims=True)).sum(-1)) + x64.max(-1)
    logp = x64 - lse_ref[:, None]
    valid = t != -100
    tt = cp.where(valid, t, 0)
    nll = -logp[cp.arange(rows), tt]
    loss_ref = cp.where(valid, (1 - eps) * nll - eps * logp.mean(-1), 0)
    _close(cp, loss, loss_ref, dtype, 10)
    _close(cp, lse, lse_ref, dtype, 10)
    dl = rng.standard_normal(rows).astype(dtype)
    g = K.cross_entropy_backward(x, t, lse, dl, -100, eps)
    onehot = cp.zeros((rows, cols))
    onehot[cp.arange(rows), tt] = 1
    g_ref = cp.where(valid[:, None], (cp.exp(logp) - (1 - eps) * onehot - eps / cols) * dl[:, None], 0)
    _close(cp, g, g_ref, dtype, 10)


# --------------------------------------------------------------- attention
def _attention_xp(cp, q, k, v, keep, scale, do):
    q, k, v, do = (a.astype(cp.float64) for a in (q, k, v, do))
    s = cp.where(keep, scale * q @ k.transpose(0, 2, 1), -cp.inf)
    m = s.max(-1, keepdims=True)
    dead = m == -cp.inf
    e = cp.where(keep, cp.exp(s - cp.where(dead, 0, m)), 0)
    z = e.sum(-1, keepdims=True)
    p = cp.where(dead, 0, e / cp.where(dead, 1, z))
    o = p @ v
    lse = cp.where(dead, -cp.inf, cp.where(dead, 0, m) + cp.log(cp.where(dead, 1, z)))[..., 0]
    dp = do @ v.transpose(0, 2, 1)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return o, lse, (scale * ds @ k, scale * ds.transpose(0, 2, 1) @ q, p.transpose(0, 2, 1) @ do)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B,H,Lq,Lk,d,causal,masked", [
    (2, 4, 128, 128, 64, True, True),
    (1, 2, 128, 128, 128, False, False),
    (3, 2, 37, 200, 32, False, True),
    (2, 1, 5, 1, 8, True, False),
    (2, 8, 256, 256, 64, True, False),
    (2, 3, 45, 45, 40, True, True),  # heads between the classes: D = 64 and D = 128 with d < D
    (1, 2, 33, 70, 100, False, True),
])
def test_attention(cp, dtype, B, H, Lq, Lk, d, causal, masked):
    rng = cp.random.default_rng(3)
    BH = B * H
    q = rng.standard_normal((BH, Lq, d)).astype(dtype)
    k = rng.standard_normal((BH, Lk, d)).astype(dtype)
    v = rng.standard_normal((BH, Lk, d)).astype(dtype)
    kpm = None
    if masked:
        kpm = rng.random((B, Lk)) < 0.8
        kpm[0] = False
    keep = cp.asarray(ref.attention_keep(BH, Lq, Lk, None if kpm is None else cp.asnumpy(kpm),
                                         causal))
    scale = 1 / math.sqrt(d)
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=causal)
    do = rng.standard_normal(o.shape).astype(dtype)
    o_ref, lse_ref, grads_ref = _attention_xp(cp, q, k, v, keep, scale, do)
    _close(cp, o, o_ref, dtype, 3)
    fin = cp.isfinite(lse_ref)
    assert bool(cp.all(cp.isfinite(lse) == fin))
    _close(cp, lse[fin], lse_ref[fin], dtype, 3)
    grads = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm, causal=causal)
    for got, want in zip(grads, grads_ref):
        assert bool(cp.isfinite(got).all())
        _close(cp, got, want, dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bfloat16"])
def test_every_head_dim_class_that_fits_gives_the_same_bits_on_cupy(cp, dtype, monkeypatch):
    """d = 20 through the kernels of D = 32, 64 and 128 (as tests/kernels/test_attention.py on the
    CPU build): the zero columns add nothing and each element is summed in one order, so the
    GPU's compiled instantiations give the same bits too."""
    from minitx.kernels import attention
    dt = backend.resolve_dtype(dtype)
    rng = cp.random.default_rng(5)
    B, H, L, d = 2, 3, 37, 20
    q, k, v, do = (rng.standard_normal((B * H, L, d)).astype(np.float32).astype(dt) for _ in range(4))
    kpm = rng.random((B, L)) < 0.8
    results = []
    for D in attention.HEAD_DIMS:
        monkeypatch.setattr(attention, "_head_dim_class", lambda d, D=D: D)
        options = dict(key_pad_mask=kpm, causal=True, dropout_p=0.25, seed=1, offset=2)
        o, lse = K.attention_forward(q, k, v, **options)
        results.append([cp.asnumpy(x).view(np.uint8) for x in (o, lse, *K.attention_backward(q, k, v, o, lse, do,
                                                                                              **options))])
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype, Lq, Lk, d", [(np.float32, 32, 32, 64), (np.float64, 16, 16, 64), ("bfloat16", 32, 32, 64),
                                              (np.float32, 40, 7, 20), ("bfloat16", 5, 32, 33)])
@pytest.mark.parametrize("causal, p", [(False, 0.0), (True, 0.3)])
def test_the_one_pass_backward_gives_the_two_kernels_bits_on_cupy(cp, dtype, Lq, Lk, d, causal, p):
    """Where one tile holds all of a head's keys: attention_backward_onepass's dq, dk and dv are
    the two kernels' bytes, as on the CPU build, written into the heads of wider buffers (a
    packed projection's gradient), and follow the reference."""
    from minitx.kernels.attention import one_pass_backward_runs, use_one_pass_backward
    dt = backend.resolve_dtype(dtype)
    B, H = 4, 8
    rng = cp.random.default_rng(6)
    q, do = (rng.standard_normal((B * H, Lq, d)).astype(np.float32).astype(dt) for _ in range(2))
    k, v = (rng.standard_normal((B * H, Lk, d)).astype(np.float32).astype(dt) for _ in range(2))
    kpm = rng.random((B, Lk)) < 0.8
    options = dict(key_pad_mask=kpm, causal=causal, dropout_p=p, seed=8, offset=1)
    o, lse = K.attention_forward(q, k, v, **options)
    assert one_pass_backward_runs(dt, d, Lk)
    grads = {}
    for one_pass in (True, False):
        dq = cp.full((B * H, Lq, 2, d), cp.nan, np.float32).astype(dt)[:, :, 1]  # rows 2d apart
        dkv = cp.full((B * H, Lk, 3, d), cp.nan, np.float32).astype(dt)
        with use_one_pass_backward(one_pass):
            grads[one_pass] = K.attention_backward(q, k, v, o, lse, do, out=(dq, dkv[:, :, 1], dkv[:, :, 2]),
                                                   **options)
    for got, want in zip(grads[True], grads[False]):
        assert not bool(cp.isnan(got).any())
        np.testing.assert_array_equal(cp.asnumpy(got).view(np.uint8), cp.asnumpy(want).view(np.uint8))
    if dt in (np.float32, np.float64):
        z = None if not p else ref.dropout_keep(B * H * Lq * Lk, p, 8, 1).reshape(B * H, Lq, Lk) / (1 - p)
        _, _, backward = ref.attention(*(cp.asnumpy(x) for x in (q, k, v)),
                                       ref.attention_keep(B * H, Lq, Lk, cp.asnumpy(kpm), causal), 1 / math.sqrt(d), z)
        for got, want in zip(grads[True], backward(cp.asnumpy(do))):
            np.testing.assert_allclose(cp.asnumpy(got), want, **_tol(dt, 10))


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_with_dropout(cp, dtype):
    """Dropout on the weights inside the kernels: the elements of P that dropout.cu's Philox
    mask drops over a stored P, forward and backward, at a Multi30k-like shape."""
    B, H, L, d, p, seed, offset = 2, 8, 40, 64, 0.3, 1234, 7
    rng = np.random.default_rng(4)
    q, k, v, do = (rng.standard_normal((B * H, L, d)).astype(dtype) for _ in range(4))
    kpm = rng.random((B, L)) < 0.8
    o, lse = K.attention_forward(*map(cp.asarray, (q, k, v)), key_pad_mask=cp.asarray(kpm), causal=True,
                                 dropout_p=p, seed=seed, offset=offset)
    grads = K.attention_backward(*map(cp.asarray, (q, k, v)), o, lse, cp.asarray(do), key_pad_mask=cp.asarray(kpm),
                                 causal=True, dropout_p=p, seed=seed, offset=offset)
    z = ref.dropout_keep(B * H * L * L, p, seed, offset).reshape(B * H, L, L) / (1 - p)
    o_ref, _, backward = ref.attention(q, k, v, ref.attention_keep(B * H, L, L, kpm, True), 1 / math.sqrt(d), z)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(cp.asnumpy(o), o_ref, **tol)
    for got, want in zip(grads, backward(do)):
        np.testing.assert_allclose(cp.asnumpy(got), want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_reads_heads_in_place_on_cupy(cp, dtype):
    """The heads of one [B, L, 3H, d] projection, as strided [B, H, L, d] views: the outputs and
    gradients (views of [B, L, H, d] arrays) equal the contiguous [BH, L, d] path's bit for bit."""
    B, H, L, d = 2, 8, 40, 64
    rng = cp.random.default_rng(9)
    qkv = rng.standard_normal((B, L, 3 * H, d)).astype(dtype).transpose(0, 2, 1, 3)
    q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
    do = rng.standard_normal((B, L, H, d)).astype(dtype).transpose(0, 2, 1, 3)
    kpm = rng.random((B, L)) < 0.8
    options = dict(key_pad_mask=kpm, causal=True, dropout_p=0.1, seed=3, offset=5)
    flat = [cp.ascontiguousarray(x).reshape(B * H, L, d) for x in (q, k, v, do)]
    o, lse = K.attention_forward(q, k, v, **options)
    o_flat, lse_flat = K.attention_forward(*flat[:3], **options)
    assert o.transpose(0, 2, 1, 3).flags.c_contiguous
    assert cp.array_equal(o.reshape(B * H, L, d), o_flat) and cp.array_equal(lse.reshape(B * H, L), lse_flat)
    grads = K.attention_backward(q, k, v, o, lse, do, **options)
    for got, want in zip(grads, K.attention_backward(*flat[:3], o_flat, lse_flat, flat[3], **options)):
        assert cp.array_equal(got.reshape(B * H, L, d), want)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_dropout_is_the_same_fused_and_unfused_on_cupy(cp, causal):
    dispatch.attention_dropout_both_ways(causal, device="cuda")


# ----------------------------------------------------------------- dropout
@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_matches_host_philox_and_cpu(cp, cpu, dtype):
    n = 1_000_003
    x = cp.ones(n, dtype)
    zero = cp.zeros(n, dtype)
    seed, offset, p = 0xDEADBEEF12345, 42, 0.1
    y = K.dropout_add_forward(x, zero, p, seed, offset)
    keep = ref.dropout_keep(n, p, seed, offset)
    np.testing.assert_array_equal(cp.asnumpy(y) != 0, keep)
    assert abs(keep.mean() - 0.9) < 0.002
    dx, dres = K.dropout_add_backward(x, p, seed, offset)
    assert dres is x
    np.testing.assert_array_equal(cp.asnumpy(dx) != 0, keep)
    # same source on the CPU emulation gives the identical mask
    y_cpu = K.dropout_add_forward(np.ones(1000, dtype), np.zeros(1000, dtype), p, seed, offset)
    np.testing.assert_array_equal(y_cpu, cp.asnumpy(y[:1000]))


@pytest.mark.parametrize("act", [None, "relu", "gelu"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_act_dropout(cp, act, dtype):
    rng = cp.random.default_rng(4)
    x = rng.standard_normal((64, 3072)).astype(dtype)
    b = rng.standard_normal(3072).astype(dtype)
    p, seed = 0.2, 99
    y = K.bias_act_dropout_forward(x, b, act, p, seed, 5)
    keep = cp.asarray(ref.dropout_keep(x.size, p, seed, 5).reshape(x.shape))
    u = x.astype(cp.float64) + b
    k_ = math.sqrt(2 / math.pi)
    t = cp.tanh(k_ * (u + 0.044715 * u**3))
    f = {None: u, "relu": cp.maximum(u, 0), "gelu": 0.5 * u * (1 + t)}[act]
    fg = {None: cp.ones_like(u), "relu": (u > 0).astype(cp.float64),
          "gelu": 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * k_ * (1 + 3 * 0.044715 * u * u)}[act]
    _close(cp, y, cp.where(keep, f / (1 - p), 0), dtype, 3)
    dy = rng.standard_normal(x.shape).astype(dtype)
    dx, db = K.bias_act_dropout_backward(dy, x, b, act, p, seed, 5)
    dx_ref = cp.where(keep, dy * fg / (1 - p), 0)
    _close(cp, dx, dx_ref, dtype, 3)
    _close(cp, db, dx_ref.sum(0), dtype, 100)


# -------------------------------------------------------------------- adam
@pytest.mark.parametrize("decoupled", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_adam_and_grad_norm(cp, decoupled, dtype):
    rng = cp.random.default_rng(5)
    shapes = [(3,), (70000,), (513, 129), (1,), (4096,)]
    ps = [rng.standard_normal(s).astype(dtype) for s in shapes]
    gs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ms = [rng.standard_normal(s).astype(dtype) * 0.1 for s in shapes]
    vs = [rng.random(s).astype(dtype) * 0.01 for s in shapes]
    norm = K.grad_norm(gs)
    norm_ref = cp.sqrt(sum((g.astype(cp.float64) ** 2).sum() for g in gs))
    _close(cp, norm, norm_ref, dtype, 10)
    lr, b1, b2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 0.01, 7
    expect = [ref.adam(p, g, m, v, lr, b1, b2, eps, wd, decoupled, step)
              for p, g, m, v in zip(ps, gs, ms, vs)]
    K.adam_step(ps, gs, ms, vs, lr, b1, b2, eps, wd, decoupled, step)
    for (pe, me, ve), p, m, v in zip(expect, ps, ms, vs):
        _close(cp, p, pe, dtype, 10)
        _close(cp, m, me, dtype, 10)
        _close(cp, v, ve, dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scale_in_place_is_cupys_product_bit_for_bit(cp, dtype):
    rng = cp.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(3,), (70000,), (0,), (513, 129)]]
    factor = cp.full(1, 0.37, dtype)
    expected = [a * factor for a in arrays]
    K.scale_in_place(arrays, factor)
    for got, want in zip(arrays, expected):
        assert cp.array_equal(got, want)


# --------------------------------------------------------------- embedding
@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding_backward(cp, dtype):
    rng = cp.random.default_rng(6)
    ids = rng.integers(0, 50, (32, 40))
    ids[0, :5] = 3  # repeats
    dy = rng.standard_normal((32, 40, 96)).astype(dtype)
    dw = K.embedding_backward(ids, dy, 50, padding_idx=3)
    ref_w = np.zeros((50, 96))
    np.add.at(ref_w, cp.asnumpy(ids).reshape(-1), cp.asnumpy(dy).reshape(-1, 96))
    ref_w[3] = 0
    np.testing.assert_allclose(cp.asnumpy(dw), ref_w, **_tol(dtype, 10))


def test_embedding_backward_is_the_same_bits_on_every_run(cp):
    """Sorted, then summed in one fixed order (embedding.cu): two runs give the same bits, and
    those of the order written out in NumPy (additions alone round the same on both)."""
    rng = np.random.default_rng(12)
    ids = rng.integers(0, 40, 6144)
    ids[: 2000] = 0  # a long run, like the padding of a Multi30k batch
    dy = rng.standard_normal((6144, 512)).astype(np.float32)
    runs = [cp.asnumpy(K.embedding_backward(cp.asarray(ids), cp.asarray(dy), 40)) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], ref.embedding_backward_in_kernel_order(ids, dy, 40, K.embedding.ROW_LANES))


def test_a_training_step_on_cupy_is_the_same_bits_when_repeated():
    """One seed, one float32 step with dropout, twice, on a batch where every id comes back
    some 25 times: the updated weights are identical to the last bit (a run on the GPU must
    give one model per seed, and resume to it exactly)."""
    from minitx.nn import Transformer

    rng = np.random.default_rng(13)
    src, tgt = rng.integers(1, 50, (64, 20)), rng.integers(1, 50, (64, 21))

    def one_step():
        minitx.manual_seed(0)
        model = Transformer(50, 50, d_model=64, num_heads=4, num_encoder_layers=1, num_decoder_layers=1,
                            d_ff=128, dropout=0.1, max_len=32, device="cuda")
        opt = optim.Adam(model.parameters(), lr=1e-3)
        loss = F.cross_entropy(model(src, tgt[:, :-1]), minitx.tensor(tgt[:, 1:], device="cuda"),
                               label_smoothing=0.1)
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return [p.numpy() for p in model.parameters()]

    for first, second in zip(one_step(), one_step()):
        np.testing.assert_array_equal(first, second)


def test_embedding_backward_grid_strides_and_skips_what_it_must(cp):
    """More lookups than one grid row of blocks (65,535), ids out of range on both sides and
    the padding id: skipped, the rest summed in the kernel's order."""
    rng = np.random.default_rng(14)
    ids = rng.integers(-1, 31, 70000)  # -1 and 30 are outside a 30-row table
    dy = rng.standard_normal((70000, 40)).astype(np.float32)
    got = cp.asnumpy(K.embedding_backward(cp.asarray(ids), cp.asarray(dy), 30, padding_idx=4))
    np.testing.assert_array_equal(got, ref.embedding_backward_in_kernel_order(ids, dy, 30, K.embedding.ROW_LANES,
                                                                              padding_idx=4))


def test_gpu_and_cpu_emulation_agree(cp, cpu):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 77)).astype(np.float32)
    y_cpu = K.softmax_forward(x)
    y_gpu = K.softmax_forward(cp.asarray(x))
    np.testing.assert_allclose(cp.asnumpy(y_gpu), y_cpu, rtol=1e-6, atol=1e-7)
    q = rng.standard_normal((2, 20, 16))
    o_cpu, lse_cpu = K.attention_forward(q, q, q, causal=True)
    o_gpu, lse_gpu = K.attention_forward(cp.asarray(q), cp.asarray(q), cp.asarray(q), causal=True)
    np.testing.assert_allclose(cp.asnumpy(o_gpu), o_cpu, rtol=1e-12, atol=1e-13)


def test_bfloat16_launchers_on_the_gpu_agree_with_the_cpu_emulation(cp, cpu):
    """Every launcher on bfloat16 CuPy arrays gives what the CPU emulation gives on the same
    arrays (the emulation is proven against the references in test_bfloat16.py): bfloat16
    results within 1 bfloat16 ulp + 1e-5 (the GPU's expf, logf and tanhf differ from glibc's in
    float32's last bits, which can carry a result across a rounding midpoint, and sums of O(1)
    terms that cancel keep float32's error of the terms), float32 results to float32's
    tolerance, the embedding gradient (float32 sums in one fixed order) bit for bit."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(12)

    def host(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32).astype(bf)

    def to_gpu(a):
        if isinstance(a, list):
            return [to_gpu(e) for e in a]
        return cp.asarray(a) if isinstance(a, np.ndarray) else a

    def both(launcher, *args, **kwargs):
        """(GPU result, CPU result) of launcher on args and kwargs (NumPy arrays, alone or in
        lists, copied to the GPU)."""
        return launcher(*map(to_gpu, args), **{k: to_gpu(a) for k, a in kwargs.items()}), launcher(*args, **kwargs)

    def agree(gpu, cpu_result):
        got = cp.asnumpy(gpu)
        assert got.dtype == cpu_result.dtype, (got.dtype, cpu_result.dtype)
        g, c = got.astype(np.float64), cpu_result.astype(np.float64)
        if got.dtype == bf:
            np.testing.assert_array_equal(np.isnan(g), np.isnan(c))
            ok = np.isnan(c) | (g == c) | (np.abs(g - c) <= ref.bfloat16_ulp(c) + 1e-5)
            assert ok.all(), f"{int((~ok).sum())} elements beyond 1 bfloat16 ulp"
        else:
            np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)

    x, dy = host(64, 1000, scale=3), host(64, 1000)
    y = both(K.softmax_forward, x)
    agree(*y)
    agree(*both(K.softmax_backward, y[1], dy))
    w, b = host(1000), host(1000)
    for gpu_out, cpu_out in zip(*both(K.layer_norm_forward, x, w, b, 1e-5)):
        agree(gpu_out, cpu_out)
    _, mean, rstd = K.layer_norm_forward(x, w, b, 1e-5)
    for gpu_out, cpu_out in zip(*both(K.layer_norm_backward, dy, x, w, mean, rstd)):
        agree(gpu_out, cpu_out)
    t = rng.integers(0, 1000, 64)
    t[3] = -100
    for gpu_out, cpu_out in zip(*both(K.cross_entropy_forward, x, t, -100, 0.1)):
        agree(gpu_out, cpu_out)
    _, lse = K.cross_entropy_forward(x, t, -100, 0.1)
    agree(*both(K.cross_entropy_backward, x, t, lse, rng.standard_normal(64).astype(np.float32), -100, 0.1))
    q, k, v, do = host(8, 40, 64), host(8, 33, 64), host(8, 33, 64), host(8, 40, 64)
    kpm = rng.random((2, 33)) < 0.8
    drop = dict(key_pad_mask=kpm, dropout_p=0.1, seed=5, offset=9)
    for gpu_out, cpu_out in zip(*both(K.attention_forward, q, k, v, **drop)):
        agree(gpu_out, cpu_out)
    o, lse = K.attention_forward(q, k, v, **drop)
    for gpu_out, cpu_out in zip(*both(K.attention_backward, q, k, v, o, lse, do, **drop)):
        agree(gpu_out, cpu_out)
    agree(*both(K.dropout_add_forward, x, dy, 0.1, 3, 4))
    agree(*both(K.dropout_apply, x, 0.1, 3, 4))
    agree(*both(K.bias_act_dropout_forward, x, w, "gelu", 0.1, 3, 4))
    for gpu_out, cpu_out in zip(*both(K.bias_act_dropout_backward, dy, x, w, "gelu", 0.1, 3, 4)):
        agree(gpu_out, cpu_out)
    grads = [host(3), host(70000), host(513, 129)]
    agree(*both(K.grad_norm, grads))
    gpu_counts, cpu_counts = both(K.nonfinite_counts, grads)
    np.testing.assert_array_equal(gpu_counts, cpu_counts)
    gpu_flags, cpu_flags = both(K.nonfinite_flags, grads)
    np.testing.assert_array_equal(cp.asnumpy(gpu_flags), cpu_flags)
    params = [rng.standard_normal(g.shape).astype(np.float32) for g in grads]
    ms, vs = [np.zeros_like(p) for p in params], [np.full_like(p, 1e-3) for p in params]
    dev = [to_gpu(arrays) for arrays in (params, grads, ms, vs)]
    K.adam_step(*dev, lr=1e-3, weight_decay=0.01, decoupled=True, step=2)
    K.adam_step(params, grads, ms, vs, lr=1e-3, weight_decay=0.01, decoupled=True, step=2)
    for gpu_arrays, cpu_arrays in ((dev[0], params), (dev[2], ms), (dev[3], vs)):
        for gpu_out, cpu_out in zip(gpu_arrays, cpu_arrays):
            agree(gpu_out, cpu_out)
    ids = rng.integers(0, 50, (16, 40))
    g_emb, c_emb = both(K.embedding_backward, ids, host(16, 40, 96), 50, 3)
    np.testing.assert_array_equal(cp.asnumpy(g_emb), c_emb)


# ------------------------------------------------ ops on CuPy arrays: fused vs use_fused(False)
OP_CASES = {
    "softmax": lambda dt: dispatch.softmax_case((64, 37, 33), dt),
    "layer_norm": lambda dt: dispatch.layer_norm_case((8, 50, 512), dt),
    "cross_entropy": lambda dt: dispatch.cross_entropy_case(300, 10000, dt),
    "cross_entropy_none": lambda dt: dispatch.cross_entropy_case(77, 1000, dt, reduction="none"),
    "self_attention_causal": lambda dt: dispatch.attention_case(4, 8, 32, 32, 64, dt, causal=True),
    "cross_attention": lambda dt: dispatch.attention_case(4, 8, 29, 35, 32, dt),
    "incremental_decoding": lambda dt: dispatch.attention_case(4, 8, 1, 17, 64, dt, causal=True),
    "embedding": lambda dt: dispatch.embedding_case(1000, (16, 30), 256, dt, padding_idx=0),
    "bias_relu": lambda dt: dispatch.bias_act_case((64, 2048), "relu", dt),
    "bias_gelu": lambda dt: dispatch.bias_act_case((3, 70, 513), "gelu_tanh", dt),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_ops_take_the_kernels_on_cupy(name, dtype):
    dispatch.assert_paths_agree(OP_CASES[name](dtype), device="cuda")


@pytest.mark.parametrize("name", sorted(set(OP_CASES) - {"softmax"}))
def test_ops_take_the_bfloat16_kernels_on_cupy(name):
    pytest.importorskip("ml_dtypes")
    dispatch.assert_bfloat16_follows_float32(OP_CASES[name](np.float32), device="cuda")


def test_bfloat16_softmax_stays_within_its_rounding_bound_on_cupy():
    """Softmax in bfloat16 is checked element by element (its sharp rows defeat a tolerance
    relative to the largest gradient: see the helper)."""
    pytest.importorskip("ml_dtypes")
    dispatch.assert_softmax_bfloat16_within_rounding((64, 37, 33), device="cuda")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_a_tied_table_takes_its_embedding_gradients_into_the_output_layers_on_cupy(cp, dtype, monkeypatch):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    dispatch.assert_tied_table_adds_into_the_output_layers(dtype, "cuda", monkeypatch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_layer_norm_adds_the_residual_gradient_as_it_writes_dx_on_cupy(cp, dtype, monkeypatch):
    """The kernel's add (never fused with the multiply before it) gives the engine's add's bits."""
    dispatch.assert_layer_norm_adds_the_residual_gradient(dtype, "cuda", True, monkeypatch)


def test_cupy_rounds_bfloat16_arithmetic_as_ml_dtypes_does(cp):
    """The ops' bfloat16 arithmetic outside the kernels (a scale, a cast) is CuPy's: it must
    round to nearest even as ml_dtypes does on the host, or the GPU's bfloat16 steps drift
    from the CPU's."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    x = np.random.default_rng(3).standard_normal(100_000).astype(np.float32)
    np.testing.assert_array_equal(cp.asarray(x).astype(bf).get().view(np.uint16), x.astype(bf).view(np.uint16))
    low, three = x.astype(bf), np.full((), 3.0, bf)  # minitx makes a Python number a full array of the dtype
    got = cp.asarray(low) * cp.asarray(three)
    assert got.dtype == bf
    np.testing.assert_array_equal(got.get().view(np.uint16), (low * three).view(np.uint16))


def test_attention_fallbacks_on_cupy(cp):
    rng = np.random.default_rng(8)
    q = minitx.tensor(rng.standard_normal((2, 4, 6, 32)), device="cuda", requires_grad=True)
    full = minitx.tensor(rng.random((2, 1, 6, 6)) < 0.8, device="cuda")
    with dispatch.kernel_launches() as names:
        F.scaled_dot_product_attention(q, q, q, mask=full).sum().backward()
        F.scaled_dot_product_attention(q[:, :, :3], q, q, causal=True).sum().backward()
    assert not [n for n in names if n.startswith("attention")]


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_dropout_ops_on_cupy(cp, dtype):
    dispatch.check_fused_dropout_ops(dtype, "cuda", shape=(64, 300))
    x, r = dispatch.leaves([np.ones((64, 300), dtype), np.zeros((64, 300), dtype)], "cuda")
    minitx.manual_seed(5)
    a = F.dropout_add(x, r, 0.5).numpy()
    assert not np.array_equal(a, F.dropout_add(x, r, 0.5).numpy())  # the next Philox offset
    minitx.manual_seed(5)
    np.testing.assert_array_equal(F.dropout_add(x, r, 0.5).numpy(), a)


@pytest.mark.parametrize("opt_class", [optim.Adam, optim.AdamW])
def test_adam_dispatch_on_cupy(opt_class):
    params, states, names = dispatch.optimizer_run(opt_class, fused=True, device="cuda")
    ref_params, ref_states, _ = dispatch.optimizer_run(opt_class, fused=False, device="cuda")
    assert names.count("adam_step") == 3
    for got, want in zip(params + states, ref_params + ref_states):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("scale, max_norm", [(1.0, 100.0), (3.0, 1.0), (np.inf, 1.0)])
def test_clip_dispatch_on_cupy(scale, max_norm):
    norm, grads, names = dispatch.clip_run(scale, max_norm, fused=True, device="cuda")
    ref_norm, ref_grads, _ = dispatch.clip_run(scale, max_norm, fused=False, device="cuda")
    assert "sumsq_partial" in names
    assert norm == pytest.approx(ref_norm, rel=1e-10)
    for got, want in zip(grads, ref_grads):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_transformer_training_step_on_cupy():
    sizes = dict(d_model=64, num_heads=4, d_ff=128)
    loss, norm, grads, params, names = dispatch.training_step(True, "cuda", **sizes)
    ref_loss, ref_norm, ref_grads, ref_params, ref_names = dispatch.training_step(False, "cuda", **sizes)
    assert dispatch.TRAINING_STEP_KERNELS <= names and not ref_names
    assert loss == pytest.approx(ref_loss, rel=1e-9)
    assert norm == pytest.approx(ref_norm, rel=1e-9)
    for got, want in zip(grads + params, ref_grads + ref_params):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fused", [True, False], ids=["kernels", "reference"])
def test_transformer_step_on_cupy_matches_numpy(fused):
    """Weights are drawn on the CPU, so one seed gives one model on both devices: a float64
    training step on CuPy (kernels, or CuPy running the reference path) reproduces NumPy's."""
    sizes = dict(d_model=64, num_heads=4, d_ff=128)
    loss, norm, grads, params, _ = dispatch.training_step(fused, "cuda", **sizes)
    cpu_loss, cpu_norm, cpu_grads, cpu_params, _ = dispatch.training_step(False, "cpu", **sizes)
    assert loss == pytest.approx(cpu_loss, rel=1e-9)
    assert norm == pytest.approx(cpu_norm, rel=1e-9)
    for got, want in zip(grads + params, cpu_grads + cpu_params):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_allow_tf32_switches_cupy_matmul(cp, tf32_switch):
    a = cp.asarray(np.random.default_rng(10).standard_normal((512, 512)), dtype=cp.float32)
    exact = cp.asnumpy(a.astype(cp.float64) @ a.astype(cp.float64))
    tf32_switch(True)
    assert backend.tf32_allowed()
    fast = cp.asnumpy(a @ a)
    tf32_switch(False)
    assert not backend.tf32_allowed()
    strict = cp.asnumpy(a @ a)
    err = lambda y: float(np.abs(y - exact).max() / np.abs(exact).max())  # noqa: E731
    assert err(strict) < 1e-5
    if int(cp.cuda.Device().compute_capability) >= 80:
        assert 1e-5 < err(fast) < 1e-2  # TF32: 10-bit mantissa inputs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tf32", [False, True])
def test_sum_rows_on_cupy(cp, dtype, tf32, tf32_switch):
    """The bias gradient's column sum (a cuBLAS product, or CuPy's sum under TF32 without
    minitx.blas): close to the float64 sum, the same bits when repeated and inside a captured
    step's switch, zeros for no rows; with minitx.blas, the same float32 product whether TF32 is
    on or not (no term rounded)."""
    from minitx import blas

    a = np.random.default_rng(11).standard_normal((6144, 2048)).astype(dtype)
    tf32_switch(tf32)
    got = backend.sum_rows(cp.asarray(a))
    again = backend.sum_rows(cp.asarray(a))
    empty = backend.sum_rows(cp.zeros((0, 3), dtype))
    with blas.use_cublas(True):  # as inside a captured step: the same call, so the same bits
        captured = backend.sum_rows(cp.asarray(a))
    tf32_switch(False)
    strict = backend.sum_rows(cp.asarray(a))
    np.testing.assert_allclose(cp.asnumpy(got), a.astype(np.float64).sum(axis=0), **_tol(dtype, 10))
    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(again))
    np.testing.assert_array_equal(cp.asnumpy(empty), np.zeros(3, dtype))
    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(captured))
    if blas.available():
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(strict))


def test_sum_rows_of_bfloat16_on_cupy_adds_in_float32(cp):
    """A bfloat16 column sum (a bias gradient under autocast) accumulates in float32 and rounds
    once, through cuBLAS's product or a float32 copy: 6,144 ones sum to 6,144 (a bfloat16 running
    sum would stop at 256), and random columns within one rounding of the float64 sum."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    ones = backend.sum_rows(cp.asarray(np.ones((6144, 64), bf16)))
    assert ones.dtype == bf16
    np.testing.assert_array_equal(cp.asnumpy(ones).astype(np.float32), np.full(64, 6144, np.float32))
    a = np.random.default_rng(12).standard_normal((6144, 512)).astype(bf16)
    exact = a.astype(np.float64).sum(axis=0)
    got = cp.asnumpy(backend.sum_rows(cp.asarray(a))).astype(np.float64)
    # one rounding to bfloat16 (2^-8 relative, generously), and float32 sums far inside their worst case
    assert np.all(np.abs(got - exact) <= 2.0 ** -8 * np.abs(exact) + 2.0 ** -20 * np.abs(a.astype(np.float64)).sum(axis=0))


def test_a_sync_free_training_step_on_cupy_never_synchronises_and_gives_the_eager_bits(cp):
    """train_step with DeferredChecks on the GPU: CuPy refuses any synchronisation inside
    (cupyx.allow_synchronize(False) raises on one), and the parameters are the eager step's."""
    import cupyx

    from minitx import sync
    from minitx.nn import Transformer
    from minitx.train import train_step

    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])

    def step(sync_free):
        minitx.manual_seed(0)
        model = Transformer(9, 11, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                            max_len=8, dropout=0.1, positional="learned", device="cuda")
        opt = optim.Adam(model.parameters(), lr=1e-2)
        src_t, tgt_in = minitx.tensor(src, device="cuda"), minitx.tensor(tgt[:, :-1], device="cuda")
        tgt_out = minitx.tensor(tgt[:, 1:], device="cuda")

        def loss_fn(model, batch):
            return F.cross_entropy(model(src_t, tgt_in), tgt_out, ignore_index=0, label_smoothing=0.1), 7

        checks = sync.DeferredChecks("cuda") if sync_free else None
        train_step(model, None, loss_fn, opt, clip_norm=0.5)  # warm-up: compiles, builds Adam's table
        if sync_free:
            cp.cuda.Device().synchronize()
            with cupyx.allow_synchronize(False):
                train_step(model, None, loss_fn, opt, clip_norm=0.5, checks=checks)
            checks.raise_first()
        else:
            train_step(model, None, loss_fn, opt, clip_norm=0.5)
        return [p.numpy() for p in model.parameters()]

    for a, b in zip(step(False), step(True)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "float16"])
def test_scatter_reduce_and_its_gradient_on_cupy_as_on_numpy(cp, reduce, dtype):
    """CuPy's scatter kernels take only some dtypes (int64 and int8 adds, float16 and int64 maxima
    are widened or stepped, see indexing.ufunc_at): the same values and gradients as NumPy's."""
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (4, 5)).astype(dtype)
    src = rng.integers(-3, 4, (6, 5)).astype(dtype)
    index = rng.integers(0, 4, (6, 5))
    outs = []
    for device in ("cpu", "cuda"):
        floating = np.dtype(dtype).kind == "f"
        xs = minitx.tensor(x, device=device, requires_grad=floating)
        ss = minitx.tensor(src, device=device, requires_grad=floating)
        y = F.scatter_reduce(xs, 0, minitx.tensor(index, device=device), ss, reduce)
        if floating:
            y.backward(minitx.tensor(np.ones(y.shape, dtype), device=device))
        outs.append([y.numpy()] + ([xs.grad.numpy(), ss.grad.numpy()] if floating else []))
    for cpu, gpu in zip(*outs):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-6)


def test_quantile_kthvalue_searchsorted_nan_to_num_lerp_diff_and_cross_on_cupy_as_on_numpy(cp):
    """The porting ops (array-API calls CuPy has): the same values, indices and gradients on CuPy
    arrays as on NumPy ones, a NaN and an inf among the values."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    a[0, 1], a[2, 3] = np.nan, np.inf
    calls = {
        "quantile": lambda x, y: F.quantile(x, [0.1, 0.5, 0.9], 1, interpolation="midpoint"),
        "quantile nearest": lambda x, y: F.quantile(y, 0.5, None, keepdims=True, interpolation="nearest"),
        "nanquantile": lambda x, y: F.nanquantile(x, 0.3, 0, keepdims=True),
        "kthvalue": lambda x, y: F.kthvalue(x, 2, 1).values,
        "kthvalue indices": lambda x, y: F.kthvalue(x, 4, 0).indices,
        "searchsorted": lambda x, y: F.searchsorted(y.sort(1).values, x[:, :2], side="right"),
        "searchsorted 1-d": lambda x, y: F.searchsorted(y[0].sort().values, x),
        "nan_to_num": lambda x, y: F.nan_to_num(x, 0.5),
        "lerp": lambda x, y: F.lerp(x[:, :3], y, y.sigmoid()),
        "diff": lambda x, y: F.diff(x, 2, 0, prepend=1.0),
        "cross": lambda x, y: F.cross(y, y.flip(0)),
    }
    for name, call in calls.items():
        results = []
        for device in ("cpu", "cuda"):
            x, y = (minitx.tensor(v, device=device, requires_grad=True) for v in (a, b))
            out = call(x, y)
            if out.requires_grad:
                out.backward(minitx.tensor(np.ones(out.shape), device=device))
            results.append([out.numpy()] + [np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in (x, y)])
        for cpu, gpu in zip(*results):
            np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)


def test_circular_pad_bicubic_and_area_on_cupy_as_on_numpy(cp):
    """The vision ops' new modes (array calls CuPy has: take, add_at, ix_): the same values and
    gradients on CuPy arrays as on NumPy ones, in float32 and float64."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 5, 7))
    calls = {
        "pad circular": lambda x: F.pad(x, (3, -1, 2, 5), mode="circular"),
        "bicubic up": lambda x: F.interpolate(x, size=(9, 11), mode="bicubic"),
        "bicubic down, align_corners": lambda x: F.interpolate(x, scale_factor=0.6, mode="bicubic", align_corners=True),
        "area": lambda x: F.interpolate(x, size=(3, 4), mode="area"),
    }
    for dtype in DTYPES:
        for name, call in calls.items():
            results = []
            for device in ("cpu", "cuda"):
                x = minitx.tensor(a.astype(dtype), device=device, requires_grad=True)
                out = call(x)
                out.backward(minitx.tensor(np.linspace(-1, 1, out.size).reshape(out.shape).astype(dtype),
                                           device=device))
                results.append((out.numpy(), x.grad.numpy()))
            for cpu, gpu in zip(*results):
                np.testing.assert_allclose(gpu, cpu, **_tol(dtype), err_msg=f"{name} {np.dtype(dtype).name}")
