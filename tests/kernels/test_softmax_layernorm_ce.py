"""softmax, layer_norm and cross_entropy kernels on the CPU harness vs NumPy."""
import numpy as np
import pytest
from hypothesis import example, given, settings, HealthCheck
from hypothesis import strategies as st

from minitx import kernels as K
from minitx.kernels._launch import row_block
from minitx.kernels._runtime import compute_dtype

import _reference as ref

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = st.sampled_from([np.float32, np.float64])
# lengths that hit: 1, < one warp, not a multiple of the block size, > block size
COLS = st.sampled_from([1, 2, 7, 31, 32, 33, 100, 255, 257, 300, 513])


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)


@SETTINGS
@given(rows=st.integers(1, 5), cols=COLS, dtype=DTYPES, seed=st.integers(0, 2**31))
def test_softmax_forward_backward(cpu, rows, cols, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 3).astype(dtype)
    y = K.softmax_forward(x)
    assert y.dtype == dtype and y.shape == x.shape
    y_ref = ref.softmax(x)
    np.testing.assert_allclose(y, y_ref, **tol(dtype))
    dy = rng.standard_normal((rows, cols)).astype(dtype)
    dx = K.softmax_backward(y, dy)
    np.testing.assert_allclose(dx, ref.softmax_grad(y.astype(np.float64), dy), **tol(dtype))


def test_softmax_nd(cpu, any_schedule):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 40)).astype(np.float32)
    y = K.softmax_forward(x)
    np.testing.assert_allclose(y, ref.softmax(x), rtol=2e-5, atol=2e-6)
    # non-contiguous input is accepted
    xt = np.swapaxes(x, 2, 3)
    np.testing.assert_allclose(K.softmax_forward(xt), ref.softmax(xt), rtol=2e-5, atol=2e-6)


def test_softmax_large_values_and_empty(cpu):
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 0.0]], np.float32)
    y = K.softmax_forward(x)
    np.testing.assert_allclose(y, [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]], atol=1e-7)
    assert K.softmax_forward(np.zeros((0, 4), np.float32)).shape == (0, 4)


def _rows_with_nan(dtype, cols=70):
    """Logits [5, cols]: a plain row, one NaN, all NaN, a NaN among -inf, all -inf."""
    x = np.random.default_rng(4).standard_normal((5, cols)).astype(dtype)
    x[1, 3] = np.nan
    x[2] = np.nan
    x[3] = -np.inf
    x[3, cols - 1] = np.nan
    x[4] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_nan_gives_a_nan_row(cpu, dtype):
    x = _rows_with_nan(dtype)
    y = K.softmax_forward(x)
    with np.errstate(invalid="ignore"):  # plain NumPy: the max of a row with a NaN is NaN
        e = np.exp(x - x.max(-1, keepdims=True))
        want = e / e.sum(-1, keepdims=True)
    assert np.isnan(want[1:4]).all() and np.isnan(y[1:4]).all()
    np.testing.assert_allclose(y[0], want[0], **tol(dtype))
    np.testing.assert_array_equal(y[4], 0)  # all -inf (fully masked): zeros, not NaN


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_nan_logit_gives_nan_loss(cpu, dtype):
    x = _rows_with_nan(dtype)[:4]
    t = np.array([5, 5, 5, 5])
    loss, lse = K.cross_entropy_forward(x, t)
    with np.errstate(invalid="ignore"):  # plain NumPy log-sum-exp
        m = x.max(-1)
        want_lse = m + np.log(np.exp(x - m[:, None]).sum(-1))
    assert np.isnan(want_lse[1:]).all() and np.isnan(lse[1:]).all() and np.isnan(loss[1:]).all()
    np.testing.assert_allclose(lse[0], want_lse[0], **tol(dtype))
    np.testing.assert_allclose(loss[0], want_lse[0] - x[0, 5], **tol(dtype))
    dx = K.cross_entropy_backward(x, t, lse, np.ones(4, dtype))
    assert np.isnan(dx[1:]).all() and np.isfinite(dx[0]).all()


@SETTINGS
@given(rows=st.integers(1, 6), cols=COLS, dtype=DTYPES, affine=st.sampled_from(["wb", "w", "none"]),
       seed=st.integers(0, 2**31))
@example(rows=4, cols=2, dtype=np.float32, affine="none", seed=13442)  # a row of two values 4e-4 apart
def test_layer_norm(cpu, rows, cols, dtype, affine, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 2 + 1).astype(dtype)
    w = rng.standard_normal(cols).astype(dtype) if affine in ("wb", "w") else None
    b = rng.standard_normal(cols).astype(dtype) if affine == "wb" else None
    eps = 1e-5
    y, mean, rstd = K.layer_norm_forward(x, w, b, eps)
    y_ref, mu_ref, rstd_ref = ref.layer_norm(x, w, b, eps)
    t = tol(dtype)
    if dtype == np.float32:
        t = dict(rtol=1e-4, atol=2e-5)
    # y = (x - mean) * rstd * w: the mean, rounded to the dtype (half an ulp of the row's largest
    # |x|), is off by that much, and rstd (up to 1 / sqrt(eps) on a row of near-equal values)
    # multiplies it; per row, as the dx check below
    rounding = np.finfo(dtype).eps * np.abs(x).max(axis=1, keepdims=True) * rstd_ref[:, None]
    rounding = rounding * (np.abs(w) if w is not None else 1)
    assert np.all(np.abs(y - y_ref) <= t["rtol"] * np.abs(y_ref) + t["atol"] + rounding)
    np.testing.assert_allclose(mean, mu_ref, **t)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=t["rtol"] * 10, atol=t["atol"])
    dy = rng.standard_normal((rows, cols)).astype(dtype)
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    dx_ref, dw_ref, db_ref = ref.layer_norm_grad(dy, x, w, eps)
    # dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w, is a difference of terms
    # of size rstd * |g|: with few columns it nearly cancels (for 2 columns LN(x) is almost
    # sign(x - mean) and dx almost 0), so the error bound scales with those terms, per row
    g = dy * (w if w is not None else 1)
    terms = rstd_ref[:, None] * np.abs(g).max(axis=1, keepdims=True)
    assert np.all(np.abs(dx - dx_ref) <= t["rtol"] * np.abs(dx_ref) + t["atol"] * np.maximum(terms, 1))
    np.testing.assert_allclose(dw, dw_ref, **t)
    np.testing.assert_allclose(db, db_ref, **t)


def test_layer_norm_many_rows_partials(cpu, any_schedule):
    # more rows than the partial-sum split and 3-D input
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 100, 20))
    w, b = rng.standard_normal(20), rng.standard_normal(20)
    y, mean, rstd = K.layer_norm_forward(x, w, b, 1e-6)
    assert mean.shape == (3, 100)
    dy = rng.standard_normal(x.shape)
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    dx_ref, dw_ref, db_ref = ref.layer_norm_grad(dy, x, w, 1e-6)
    np.testing.assert_allclose(y, ref.layer_norm(x, w, b, 1e-6)[0], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(dw, dw_ref, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(db, db_ref, rtol=1e-10, atol=1e-11)
    _, dw2, db2 = K.layer_norm_backward(dy, x, w, mean, rstd, param_grads=False)
    assert dw2 is None and db2 is None



def test_layer_norm_row_class_is_the_smallest_that_covers_the_row():
    from minitx.kernels import layer_norm as L
    assert L.SIZES["layer_norm_forward"] == L.SIZES["layer_norm_backward_dx"] == (None, *L.ROW_CLASSES)
    for cols, threads, n in [(1, 32, 1), (256, 256, 1), (257, 256, 2), (512, 256, 2), (513, 256, 4),
                             (2048, 256, 8), (2049, 256, None), (10000, 256, None)]:
        assert L._row_class(cols, threads) == n, cols


# widths of each row class and of the loop at the launcher's threads (min(256, cols rounded up to a
# warp)): 1, a warp and one past it (N = 1), just past a block (2), not a multiple of the block
# (4), the largest class's last (8), one past it (the loop)
ROW_CLASS_COLS = [1, 33, 256, 257, 300, 513, 1000, 2048, 2049]
BACKENDS = ["numpy", pytest.param("cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not K.available(), reason="needs CuPy and a CUDA GPU")])]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("cols", ROW_CLASS_COLS)
def test_layer_norm_row_classes_give_the_loops_bits(request, monkeypatch, backend, dtype, cols):
    """layer_norm_forward and layer_norm_backward_dx hold a row in registers (N columns a thread,
    N of ROW_CLASSES) where N blocks of threads cover it, else loop over it: every class that
    covers the row, and the loop, give the same bytes (y, mean, rstd, dx), with and without w,
    b and plus. On the CPU build the order of a thread's adds is what can differ (the rows of
    wide magnitudes show it); on a GPU also which multiplies and adds are fused."""
    from minitx.kernels import layer_norm as L
    if backend == "numpy":
        request.getfixturevalue("cpu")
        xp = np
    else:
        xp = pytest.importorskip("cupy")
    dt = pytest.importorskip("ml_dtypes").bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(cols)

    def draw(*shape, scale=1.0, shift=0.0):
        return (rng.standard_normal(shape) * scale + shift).astype(np.float32).astype(dt)

    threads = row_block(cols)
    # rows: typical; a large mean next to the spread; magnitudes 2^-20 to 2^20; a thread's first
    # two columns +-big, cancelling, then small ones (its sum keeps the small ones only if it
    # adds in column order); constant (variance 0); a NaN
    big = 2.0 / np.finfo(compute_dtype(dt)).eps  # 2 units in the last place of big: 1 is lost
    x = draw(6, cols, scale=2, shift=1)
    x[1] = draw(cols, shift=300)
    wide = np.exp2(rng.uniform(-20, 20, (2, cols)))
    x[2] *= wide[0].astype(dt)
    step = np.arange(cols) // threads
    cancel = np.where(step == 0, big, np.where(step == 1, -big, 1.0))
    x[3] = np.where(step < 2, cancel, x[3]).astype(dt)
    x[4] = x[4, 0]
    x[5, cols // 2] = np.nan
    w, b, dy, plus = draw(cols), draw(cols), draw(6, cols), draw(6, cols)
    dy[2] *= wide[1].astype(dt)
    dy[3] = np.where(step < 2, cancel, dy[3]).astype(dt)
    x, w, b, dy, plus = (xp.asarray(a) for a in (x, w, b, dy, plus))

    classes = [n for n in L.ROW_CLASSES if n * threads >= cols] + [None]
    launched, original = [], L._row_class

    def forced(c, t):  # the class of this round, in place of the launcher's own choice
        launched.append(original(c, t))
        return chosen

    monkeypatch.setattr(L, "_row_class", forced)
    results = {}
    for chosen in classes:
        got = []
        for ww, bb in [(w, b), (w, None), (None, b), (None, None)]:
            y, mean, rstd = K.layer_norm_forward(x, ww, bb, 1e-5)
            got += [y, mean, rstd]
            for pl in (None, plus):
                got.append(K.layer_norm_backward(dy, x, ww, mean, rstd, param_grads=False, plus=pl)[0])
        results[chosen] = [np.asarray(a.get() if xp is not np else a).view(np.uint8) for a in got]
    assert set(launched) == {original(cols, threads)}  # what the launcher would pick by itself
    for chosen in classes[:-1]:
        for i, (got, want) in enumerate(zip(results[chosen], results[None])):
            np.testing.assert_array_equal(got, want, err_msg=f"N={chosen}, output {i}")


def test_layer_norm_finite_difference(cpu):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 9))
    w, b = rng.standard_normal(9), rng.standard_normal(9)
    dy = rng.standard_normal((2, 9))
    y, mean, rstd = K.layer_norm_forward(x, w, b, 1e-5)
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    h = 1e-6
    for idx in [(0, 0), (1, 4), (1, 8)]:
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        num = ((K.layer_norm_forward(xp, w, b, 1e-5)[0] - K.layer_norm_forward(xm, w, b, 1e-5)[0])
               * dy).sum() / (2 * h)
        assert abs(num - dx[idx]) < 1e-6
    wp = w.copy()
    wp[3] += h
    wm = w.copy()
    wm[3] -= h
    num = ((K.layer_norm_forward(x, wp, b, 1e-5)[0] - K.layer_norm_forward(x, wm, b, 1e-5)[0])
           * dy).sum() / (2 * h)
    assert abs(num - dw[3]) < 1e-6


@SETTINGS
@given(rows=st.integers(1, 6), cols=COLS, dtype=DTYPES, eps=st.sampled_from([0.0, 0.1]),
       ignore_index=st.sampled_from([-100, 0]), seed=st.integers(0, 2**31))
def test_cross_entropy(cpu, rows, cols, dtype, eps, ignore_index, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 4).astype(dtype)
    t = rng.integers(0, cols, rows)
    t[rng.random(rows) < 0.3] = ignore_index
    if rows > 1:
        t[1] = ignore_index
    loss, lse = K.cross_entropy_forward(x, t, ignore_index, eps)
    loss_ref, lse_ref, grad_ref = ref.cross_entropy(x, t, ignore_index, eps)
    t_ = tol(dtype) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loss, loss_ref, **t_)
    np.testing.assert_allclose(lse, lse_ref, **t_)
    assert np.all(loss[t == ignore_index] == 0)
    dl = rng.standard_normal(rows).astype(dtype)
    g = K.cross_entropy_backward(x, t, lse, dl, ignore_index, eps)
    np.testing.assert_allclose(g, grad_ref * dl[:, None], **t_)
    assert np.all(g[t == ignore_index] == 0)
    # scalar upstream gradient broadcast (mean reduction)
    g2 = K.cross_entropy_backward(x, t, lse, 0.5, ignore_index, eps)
    np.testing.assert_allclose(g2, grad_ref * 0.5, **t_)


def _misaligned(a):
    """A copy of ``a`` one element past a 16-byte boundary (C-contiguous, so the launcher takes
    it as it is)."""
    buf = np.empty(a.nbytes + 32, np.uint8)
    start = -buf.ctypes.data % 16 + a.itemsize
    out = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


@SETTINGS
@given(rows=st.integers(1, 5), packs=st.integers(1, 40), dtype=st.sampled_from(["float32", "float64", "bfloat16"]),
       eps=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 2**31))
def test_cross_entropy_backward_packs_and_single_elements_give_the_same_bits(cpu, rows, packs, dtype, eps, seed):
    """Rows a whole number of 16-byte packs long, 16-byte aligned, take the packed loads and
    stores (mtx::map_row); the same logits one element off alignment take single elements: the
    gradient's bytes are the same, ignored rows (zeros) and a NaN logit included."""
    if dtype == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    dtype = np.dtype(dtype)
    cols = packs * (16 // dtype.itemsize)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 4).astype(dtype)
    x[0, rng.integers(cols)] = np.nan if rng.random() < 0.3 else x[0, 0]
    t = rng.integers(0, cols, rows)
    t[rng.random(rows) < 0.3] = -100
    loss, lse = K.cross_entropy_forward(x, t, -100, eps)
    dl = rng.standard_normal(rows).astype(lse.dtype)
    packed = K.cross_entropy_backward(x, t, lse, dl, -100, eps)
    single = K.cross_entropy_backward(_misaligned(x), t, lse, dl, -100, eps)
    assert x.ctypes.data % 16 == 0 and packed.ctypes.data % 16 == 0
    np.testing.assert_array_equal(packed.view(np.uint8), single.view(np.uint8))
    assert np.all(packed[t == -100].astype(np.float32) == 0)


def test_cross_entropy_bad_target_is_nan(cpu):
    x = np.zeros((2, 3), np.float32)
    loss, lse = K.cross_entropy_forward(x, np.array([5, 1]), -100, 0.0)
    assert np.isnan(loss[0]) and np.isfinite(loss[1])
    g = K.cross_entropy_backward(x, np.array([5, 1]), lse, np.ones(2, np.float32))
    assert np.isnan(g[0]).all() and np.isfinite(g[1]).all()


def test_cross_entropy_3d_and_schedules(cpu, any_schedule):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 37)).astype(np.float32)
    t = rng.integers(0, 37, (2, 3))
    t[0, 1] = -100
    loss, lse = K.cross_entropy_forward(x, t, -100, 0.05)
    loss_ref, lse_ref, grad_ref = ref.cross_entropy(x.reshape(6, 37), t.reshape(6), -100, 0.05)
    np.testing.assert_allclose(loss.reshape(6), loss_ref, rtol=1e-5, atol=1e-5)
    g = K.cross_entropy_backward(x, t, lse, np.ones((2, 3), np.float32), -100, 0.05)
    np.testing.assert_allclose(g.reshape(6, 37), grad_ref, rtol=1e-5, atol=1e-6)


def test_cross_entropy_kernel_takes_a_minus_inf_logit_without_smoothing(cpu):
    """Without smoothing the mean term is left out: smoothing * (l - sx / C) would be 0 * inf = NaN
    where a logit is -inf (a masked class); the loss is the reference's (inf at the target)."""
    x = np.array([[0.0, -np.inf, 1.0], [0.0, -np.inf, 1.0]], np.float32)
    loss, _ = K.cross_entropy_forward(x, np.array([2, 1]))
    expected = np.logaddexp(0.0, 1.0) - 1.0
    assert np.isclose(loss[0], expected, rtol=1e-6) and loss[1] == np.inf
