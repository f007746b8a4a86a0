"""Every kernel with bfloat16 storage and float32 arithmetic inside, on the CPU emulation,
against the NumPy references (tests/kernels/_reference.py, float64) rounded to bfloat16 the
way the kernels store: through float32, to nearest even, with ml_dtypes.

The tolerance, :func:`assert_bf16_close`: 1 bfloat16 ulp, plus ``atol`` where an output
cancels.  Why 1 ulp: a kernel widens its bfloat16 inputs to float32 (exact), computes in
float32 and rounds each output once.  float32's error, about n * 2^-24 of the result over n
terms, is far below half a bfloat16 ulp (2^-9 of it), so the kernel's float32 value rounds to
the same bfloat16 number as the exact value, or, when the exact value lies that close to a
midpoint between two bfloat16 numbers, to its neighbour: never more than 1 ulp apart.  Why
``atol``: where an output is a difference of larger terms (a gradient y * (dy - sum dy y),
r + dropout(x), a sum over rows), float32's error is a fraction of the terms, not of the
result; ``ATOL_TERMS`` times the terms covers it (256 float32 ulps of the terms, still half
a bfloat16 ulp of them).  Outputs that a launcher's contract keeps in float32 (statistics,
losses, log-sum-exps, Adam's weights, the embedding gradient) are held to the float32 tests'
tolerances, or to bits.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minitx import kernels as K
from minitx.kernels import ladder

import _reference as ref

ml_dtypes = pytest.importorskip("ml_dtypes")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
ATOL_TERMS = 2.0**-16
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# lengths that hit: 1, < one warp, not a multiple of the block size, > block size
COLS = st.sampled_from([1, 7, 33, 100, 257])


def bf16(a):
    """``a`` rounded to bfloat16 (through float32, as the kernels' inputs would be)."""
    return np.asarray(a, np.float32).astype(BF16)


def wide(a):
    """A bfloat16 (or float32) array widened to float64: exact."""
    return np.asarray(a).astype(np.float64)


def assert_bf16_close(got, want, atol=0.0):
    """``got`` (bfloat16) within 1 bfloat16 ulp (+ ``atol``) of ``want`` (float64) rounded to
    bfloat16; NaN exactly where that is NaN, and an infinity only where it is that infinity."""
    assert got.dtype == BF16, got.dtype
    want_r = wide(bf16(want))
    g = wide(got)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want_r))
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite: equal, not close
        err = np.abs(g - want_r)
    bound = ref.bfloat16_ulp(want_r) + atol
    ok = np.isnan(want_r) | (g == want_r) | (err <= bound)
    if not ok.all():
        i = np.unravel_index(np.argmax(np.where(ok, -np.inf, err - bound)), ok.shape)
        raise AssertionError(f"{int((~ok).sum())} of {ok.size} elements beyond 1 bfloat16 ulp + atol; "
                             f"worst at {i}: got {g[i]}, want {want_r[i]} (exact {np.asarray(want)[i]}), "
                             f"bound {np.broadcast_to(bound, ok.shape)[i]}")


def standard_normal_bf16(rng, shape, scale=1.0):
    return bf16(rng.standard_normal(shape) * scale)


# ------------------------------------------------------------------ rounding
def test_stores_round_to_nearest_even_as_ml_dtypes_does_bit_for_bit(cpu):
    """dropout_add_forward with p = 0 stores y = bfloat16(r + x), the sum in float32: the same
    bits as NumPy's float32 sum rounded by ml_dtypes, for ties, subnormals, overflow to inf,
    signed zeros, infinities and NaN."""
    rng = np.random.default_rng(0)
    n = 20_000
    with np.errstate(over="ignore"):
        x = bf16(rng.standard_normal(n) * 2.0 ** rng.integers(-140, 128, n).astype(np.float64))
        # r a power of two 0..20 octaves below x: the float32 sums fill every pattern of the
        # 16 low bits bfloat16 drops, exact halves (ties) among them
        r = bf16(np.where(rng.random(n) < 0.5, -1, 1) * 2.0 ** (np.floor(np.log2(np.abs(wide(x)) + 2.0**-149))
                                                             - rng.integers(0, 21, n)))
    special = np.array([
        (1.0, 2.0**-8),                  # 1 + half an ulp: a tie, to even 1.0
        (1.0 + 2.0**-7, 2.0**-8),        # a tie from an odd last bit: up to 1 + 2^-6
        (-1.0, -(2.0**-8)),              # ties are symmetric
        (3.3895313892515355e38, 2.0**119),  # bfloat16's largest + half an ulp: inf
        (2.0**-133, 2.0**-140),          # subnormal bfloat16: rounded like the rest
        (0.0, -0.0), (-0.0, -0.0),       # signed zeros
        (np.inf, 1.0), (-np.inf, 1.0), (np.inf, -np.inf),
        (np.nan, 1.0), (-np.nan, 1.0),
    ])
    x = np.concatenate([x, bf16(special[:, 1])])
    r = np.concatenate([r, bf16(special[:, 0])])
    y = K.dropout_add_forward(x, r, 0.0, seed=1, offset=0)
    with np.errstate(over="ignore", invalid="ignore"):
        want = (r.astype(F32) + x.astype(F32)).astype(BF16)  # the kernel's order: r + x * 1
    np.testing.assert_array_equal(y.view(np.uint16), want.view(np.uint16))
    assert np.isposinf(wide(y[n + 3])) and wide(y[n]) == 1.0 and wide(y[n + 1]) == 1 + 2.0**-6


# ------------------------------------------------------------------ softmax, layer norm, cross-entropy
@SETTINGS
@given(rows=st.integers(1, 4), cols=COLS, seed=st.integers(0, 2**31))
def test_softmax(cpu, rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = standard_normal_bf16(rng, (rows, cols), 3)
    y = K.softmax_forward(x)
    assert_bf16_close(y, ref.softmax(wide(x)))
    dy = standard_normal_bf16(rng, (rows, cols))
    dx = K.softmax_backward(y, dy)
    yw, dyw = wide(y), wide(dy)
    terms = np.abs(yw) * (np.abs(dyw) + np.abs((yw * dyw).sum(-1, keepdims=True)))
    assert_bf16_close(dx, ref.softmax_grad(yw, dyw), atol=ATOL_TERMS * terms)


def test_softmax_masked_and_nan_rows(cpu):
    x = bf16(np.random.default_rng(4).standard_normal((3, 40)))
    x[1] = -np.inf   # fully masked: zeros
    x[2, 5] = np.nan  # a NaN logit: a NaN row
    y = K.softmax_forward(x)
    assert np.all(wide(y[1]) == 0) and np.isnan(wide(y[2])).all()
    assert_bf16_close(y[0], ref.softmax(wide(x[0])))


@SETTINGS
@given(rows=st.integers(1, 5), cols=COLS, affine=st.sampled_from(["wb", "w", "none"]), seed=st.integers(0, 2**31))
def test_layer_norm(cpu, rows, cols, affine, seed):
    rng = np.random.default_rng(seed)
    x = bf16(rng.standard_normal((rows, cols)) * 2 + 1)
    w = standard_normal_bf16(rng, cols) if affine in ("wb", "w") else None
    b = standard_normal_bf16(rng, cols) if affine == "wb" else None
    eps = 1e-5
    y, mean, rstd = K.layer_norm_forward(x, w, b, eps)
    assert mean.dtype == rstd.dtype == F32  # statistics stay float32
    y_ref, mu_ref, rstd_ref = ref.layer_norm(wide(x), None if w is None else wide(w),
                                             None if b is None else wide(b), eps)
    xhat = (wide(x) - mu_ref[:, None]) * rstd_ref[:, None]
    wv = 1.0 if w is None else wide(w)
    bv = 0.0 if b is None else wide(b)
    assert_bf16_close(y, y_ref, atol=ATOL_TERMS * (np.abs(xhat * wv) + np.abs(bv)))
    np.testing.assert_allclose(mean, mu_ref, rtol=1e-4, atol=2e-5)  # the float32 test's
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-3, atol=2e-5)
    dy = standard_normal_bf16(rng, (rows, cols))
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    dx_ref, dw_ref, db_ref = ref.layer_norm_grad(wide(dy), wide(x), None if w is None else wide(w), eps)
    # dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w: terms of rstd * |g| * (1 + |xhat|)
    g = np.abs(wide(dy) * wv).max(axis=1, keepdims=True)
    terms = rstd_ref[:, None] * g * (1 + np.abs(xhat).max(axis=1, keepdims=True))
    assert_bf16_close(dx, dx_ref, atol=ATOL_TERMS * terms)
    assert_bf16_close(dw, dw_ref, atol=ATOL_TERMS * np.abs(wide(dy) * xhat).sum(0))
    assert_bf16_close(db, db_ref, atol=ATOL_TERMS * np.abs(wide(dy)).sum(0))


@SETTINGS
@given(rows=st.integers(1, 5), cols=COLS, smoothing=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 2**31))
def test_cross_entropy(cpu, rows, cols, smoothing, seed):
    rng = np.random.default_rng(seed)
    x = standard_normal_bf16(rng, (rows, cols), 4)
    t = rng.integers(0, cols, rows)
    t[rng.random(rows) < 0.3] = -100
    loss, lse = K.cross_entropy_forward(x, t, -100, smoothing)
    assert loss.dtype == lse.dtype == F32  # a loss and a log-sum-exp stay float32
    loss_ref, lse_ref, grad_ref = ref.cross_entropy(wide(x), t, -100, smoothing)
    np.testing.assert_allclose(loss, loss_ref, rtol=1e-5, atol=1e-5)  # the float32 test's
    np.testing.assert_allclose(lse, lse_ref, rtol=1e-5, atol=1e-5)
    dl = rng.standard_normal(rows).astype(F32)
    g = K.cross_entropy_backward(x, t, lse, dl, -100, smoothing)
    # p - 1 at the target cancels: float32's error is a fraction of the terms p and 1
    assert_bf16_close(g, grad_ref * wide(dl)[:, None], atol=ATOL_TERMS * 2 * np.abs(wide(dl))[:, None])
    assert np.all(wide(g[t == -100]) == 0)


# ------------------------------------------------------------------ attention
@SETTINGS
@given(BH=st.integers(1, 3), Lq=st.sampled_from([1, 17, 40]), Lk=st.sampled_from([3, 33]),
       d=st.sampled_from([8, 32]), causal=st.booleans(), use_mask=st.booleans(),
       p=st.sampled_from([0.0, 0.5]), seed=st.integers(0, 2**31))
def test_attention(cpu, BH, Lq, Lk, d, causal, use_mask, p, seed):
    rng = np.random.default_rng(seed)
    if causal and Lq != Lk:
        Lq = Lk
    q, k, v = (standard_normal_bf16(rng, (BH, n, d)) for n in (Lq, Lk, Lk))
    kpm = None
    if use_mask:
        kpm = rng.random((BH, Lk)) < 0.7
        kpm[0] = False  # head-row 0 fully masked
    o, lse = K.attention_forward(q, k, v, key_pad_mask=kpm, causal=causal, dropout_p=p, seed=seed, offset=3)
    assert lse.dtype == F32
    keep = ref.attention_keep(BH, Lq, Lk, kpm, causal)
    z = ref.dropout_keep(BH * Lq * Lk, p, seed, 3).reshape(BH, Lq, Lk) / (1 - p) if p else None
    o_ref, lse_ref, bwd = ref.attention(wide(q), wide(k), wide(v), keep, 1 / math.sqrt(d), z)
    scale = 1 / (1 - p)  # dropout scales every term of the sums
    assert_bf16_close(o, o_ref, atol=ATOL_TERMS * scale * np.abs(wide(v)).max())
    fin = np.isfinite(lse_ref)
    np.testing.assert_array_equal(np.isfinite(lse), fin)
    np.testing.assert_allclose(lse[fin], lse_ref[fin], rtol=1e-4, atol=1e-5)  # the float32 test's
    do = standard_normal_bf16(rng, o.shape)
    grads = K.attention_backward(q, k, v, o, lse, do, key_pad_mask=kpm, causal=causal, dropout_p=p, seed=seed,
                                 offset=3)
    for got, want in zip(grads, bwd(wide(do), o_saved=wide(o))):  # delta from the rounded o
        assert_bf16_close(got, want, atol=1e-5 * scale)  # the float32 test's atol: a sum of O(1) terms


# ------------------------------------------------------------------ dropout
@SETTINGS
@given(n=st.integers(1, 600), p=st.sampled_from([0.0, 0.1, 0.5]), seed=st.integers(0, 2**64 - 1))
def test_dropout_add_and_apply(cpu, n, p, seed):
    rng = np.random.default_rng(n)
    x, r = standard_normal_bf16(rng, n), standard_normal_bf16(rng, n)
    keep = ref.dropout_keep(n, p, seed, 5)
    s = F32.type(1 / (1 - p))
    y = K.dropout_add_forward(x, r, p, seed, 5)
    terms = np.abs(wide(r)) + s * np.abs(wide(x))  # r + x * s cancels
    assert_bf16_close(y, wide(r) + np.where(keep, wide(x) * s, 0), atol=ATOL_TERMS * terms)
    dx, _ = K.dropout_add_backward(r, p, seed, 5)
    assert_bf16_close(dx, np.where(keep, wide(r) * s, 0))
    np.testing.assert_array_equal(K.dropout_apply(r, p, seed, 5).view(np.uint16), dx.view(np.uint16))


@SETTINGS
@given(rows=st.integers(1, 4), cols=st.integers(1, 70), act=st.sampled_from([None, "relu", "gelu"]),
       p=st.sampled_from([0.0, 0.25]), bias=st.booleans(), seed=st.integers(0, 2**40))
def test_bias_act_dropout(cpu, rows, cols, act, p, bias, seed):
    rng = np.random.default_rng(seed % 1000)
    x = standard_normal_bf16(rng, (rows, cols))
    b = standard_normal_bf16(rng, cols) if bias else None
    u = wide(x) + (wide(b) if bias else 0)
    f = {None: lambda a: a, "relu": lambda a: np.maximum(a, 0), "gelu": ref.gelu_tanh}[act]
    fg = {None: np.ones_like, "relu": lambda a: (a > 0).astype(float), "gelu": ref.gelu_tanh_grad}[act]
    keep = ref.dropout_keep(rows * cols, p, seed, 7).reshape(rows, cols)
    s = F32.type(1 / (1 - p))
    y = K.bias_act_dropout_forward(x, b, act, p, seed, 7)
    # x + bias cancels: float32's error is a fraction of |x| + |bias|, carried through act
    assert_bf16_close(y, np.where(keep, f(u) * s, 0), atol=ATOL_TERMS * s * (np.abs(wide(x)) + np.abs(u - wide(x))))
    dy = standard_normal_bf16(rng, (rows, cols))
    dx, db = K.bias_act_dropout_backward(dy, x, b, act, p, seed, 7)
    # gelu's derivative is a sum that cancels near u = -0.75: its terms are at most about 1
    assert_bf16_close(dx, np.where(keep, wide(dy) * s * fg(u), 0), atol=ATOL_TERMS * s * np.abs(wide(dy)) * 2)
    if bias:
        # the contract: the bfloat16 dx summed over rows in float32, rounded once
        assert_bf16_close(db, wide(dx).sum(0), atol=ATOL_TERMS * np.abs(wide(dx)).sum(0))
    else:
        assert db is None


# ------------------------------------------------------------------ Adam, gradient norm, NaN/inf count
@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_reads_bfloat16_gradients_into_float32_master_weights(cpu, decoupled):
    rng = np.random.default_rng(int(decoupled))
    shapes = [(3,), (5000,), (17, 9), (0,), (4097,)]  # > chunk, empty, odd sizes
    params = [rng.standard_normal(sh).astype(F32) for sh in shapes]
    grads = [standard_normal_bf16(rng, sh) for sh in shapes]
    grads[2] = grads[2].astype(F32)  # a float32 gradient in the same call: its own launch
    ms = [(rng.standard_normal(sh) * 0.1).astype(F32) for sh in shapes]
    vs = [(rng.random(sh) * 0.01).astype(F32) for sh in shapes]
    expect = [ref.adam(params[i], wide(grads[i]), ms[i], vs[i], 1e-2, 0.9, 0.98, 1e-8, 0.1, decoupled, 3)
              for i in range(len(shapes))]
    K.adam_step(params, grads, ms, vs, lr=1e-2, beta1=0.9, beta2=0.98, eps=1e-8, weight_decay=0.1,
                decoupled=decoupled, step=3)
    for i, (pe, me, ve) in enumerate(expect):
        assert params[i].dtype == ms[i].dtype == vs[i].dtype == F32
        for got, want in ((params[i], pe), (ms[i], me), (vs[i], ve)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # the float32 test's


def test_adam_refuses_bfloat16_weights_and_moments(cpu):
    g = bf16(np.ones(4))
    with pytest.raises(TypeError, match="adam_step: param must be float32 for bfloat16 inputs, got bfloat16"):
        K.adam_step([bf16(np.ones(4))], [g], [np.zeros(4, F32)], [np.zeros(4, F32)], lr=1e-3)
    with pytest.raises(TypeError, match="exp_avg_sq must be float32"):
        K.adam_step([np.ones(4, F32)], [g], [np.zeros(4, F32)], [np.zeros(4)], lr=1e-3)


def test_grad_norm_and_nonfinite_counts_of_bfloat16_gradients(cpu):
    rng = np.random.default_rng(5)
    grads = [standard_normal_bf16(rng, sh) for sh in [(10,), (3, 3000), (7,)]]
    norm = K.grad_norm(grads)
    assert norm.shape == () and norm.dtype == F32  # squares summed in float32
    np.testing.assert_allclose(norm, np.sqrt(sum((wide(g) ** 2).sum() for g in grads)), rtol=1e-5)
    big = float(ml_dtypes.finfo(BF16).max)  # finite: counts nothing, though its square overflows
    grads[0][[1, 4]] = bf16([np.nan, big])
    grads[1][0, [0, 2999]] = bf16([np.inf, -np.inf])
    assert K.nonfinite_counts(grads).tolist() == [1, 2, 0]


# ------------------------------------------------------------------ embedding
def test_embedding_backward_sums_bfloat16_rows_in_float32_in_one_fixed_order(cpu, any_schedule):
    """dweight is float32, bit for bit the written-out order of additions over the widened
    (exact) bfloat16 rows."""
    rng = np.random.default_rng(11)
    ids = rng.integers(-1, 7, 300)  # -1 and 6 lie outside the 6-row table: skipped
    ids[:40] = 2
    dy = standard_normal_bf16(rng, (300, 45))
    dw = K.embedding_backward(ids, dy, 6, padding_idx=3)
    assert dw.dtype == F32
    expected = ref.embedding_backward_in_kernel_order(ids, dy.astype(F32), 6, K.embedding.ROW_LANES, padding_idx=3)
    np.testing.assert_array_equal(dw, expected)


# ------------------------------------------------------------------ what the launchers refuse
def test_launchers_name_the_dtypes_they_take(cpu):
    with pytest.raises(TypeError, match="float32, float64, bfloat16 arrays, got int32"):
        K.softmax_forward(np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError, match="dtype mismatch"):
        K.softmax_backward(bf16(np.zeros((2, 3))), np.zeros((2, 3), F32))
    x = bf16(np.ones((2, 4)))
    _, mean, rstd = K.layer_norm_forward(x)
    with pytest.raises(TypeError, match="layer_norm_backward: mean must be float32 for bfloat16 inputs"):
        K.layer_norm_backward(x, x, None, mean.astype(BF16), rstd)
    _, lse = K.attention_forward(x[None], x[None], x[None])
    with pytest.raises(TypeError, match="attention_backward: lse must be float32"):
        K.attention_backward(x[None], x[None], x[None], x[None], lse.astype(np.float64), x[None])
    with pytest.raises(TypeError, match="float32, float64 arrays, got bfloat16"):  # the ladder's rungs
        ladder.softmax("softmax_v1", x)
