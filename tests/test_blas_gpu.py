"""minitx.blas on a GPU: its cuBLAS call equals CuPy's product on every layout of tests/test_blas.py,
and it can be captured in a CUDA graph and replayed on new inputs, where CuPy's product
cannot (the reason minitx.blas exists). Skipped without CuPy, a GPU and nvmath-python."""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import blas

pytestmark = pytest.mark.gpu


@pytest.fixture
def cp(cublas_gpu):
    return cublas_gpu


LAYOUTS = [
    ((4, 3), (3, 5), None),
    ((3, 4), (3, 5), "a^T"),
    ((4, 3), (5, 3), "b^T"),
    ((2, 6, 4, 3), (3, 5), None),
    ((2, 3, 4), (2, 3, 5), "a^T"),
    ((3, 1, 4, 3), (1, 2, 3, 5), None),
    ((64, 512), (512, 2048), None),
    ((512, 64), (512, 2048), "a^T"),
]


def _operands(cp, a_shape, b_shape, which, dtype):
    rng = cp.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    if which == "a^T":
        a = cp.swapaxes(a, -1, -2)
    if which == "b^T":
        b = cp.swapaxes(b, -1, -2)
    return a, b


@pytest.mark.parametrize("a_shape, b_shape, which", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_cublas_call_equals_cupys_product(cp, a_shape, b_shape, which, dtype):
    a, b = _operands(cp, a_shape, b_shape, which, dtype)
    got, want = blas.matmul(a, b), cp.matmul(a, b)
    assert got.shape == want.shape and got.flags.c_contiguous
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), **tol)


def test_a_captured_product_replays_on_new_inputs(cp):
    a, b = _operands(cp, (8, 64, 32), (32, 48), None, np.float32)
    cp.cuda.get_current_stream().synchronize()  # a non-blocking stream does not wait for the default one
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        blas.matmul(a, b)  # binds the handle to this stream (and compiles nothing inside the capture)
        stream.begin_capture()
        c = blas.matmul(a, b)
        graph = stream.end_capture()
        for scale in (1.0, -2.5):
            a[...] = a * scale + 1
            graph.launch(stream)
            stream.synchronize()
            np.testing.assert_allclose(cp.asnumpy(c), cp.asnumpy(cp.matmul(a, b)), rtol=1e-4, atol=1e-4)


def test_ops_take_the_call_when_switched_on(cp):
    """A Linear layer's forward and backward through minitx.blas equal CuPy's products."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((16, 32)), rng.standard_normal((24, 32))
    results = []
    for on in (False, True):
        xt = minitx.tensor(x, device="cuda", requires_grad=True)
        wt = minitx.tensor(w, device="cuda", requires_grad=True)
        with blas.use_cublas(on):
            F.linear(xt, wt).sum().backward()
        results.append([t.numpy() for t in (xt.grad, wt.grad)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- cuBLASLt's epilogues (a bias in the product)

EPILOGUE_SHAPES = [(4567, 512, 1536), (4567, 2048, 512), (4567, 512, 10000), (7, 5, 3)]  # rows, in, out


def _linear_operands(cp, rows, inp, out, dtype, seed=0):
    rng = cp.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=cp.float32).astype(dtype) for s in ((rows, inp), (out, inp), (out,), (rows, out))]


def _tolerance(dtype, k):
    # bfloat16 results are rounded once (2^-9 of themselves); float32 sums of k terms differ by order
    return dict(rtol=2.0 ** -7, atol=2.0 ** -7 * k ** 0.5) if dtype != np.float32 else dict(rtol=1e-4, atol=1e-4 * k ** 0.5)


@pytest.mark.parametrize("rows, inp, out", EPILOGUE_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_epilogues_equal_the_product_and_the_separate_pass(cp, rows, inp, out, dtype):
    """matmul_bias = x @ w^T + b and matmul_row_sums = (dy^T @ x, dy summed over rows), each one
    cublasLtMatmul, at gpu-best's Linear shapes: cuBLASLt has a kernel for each (not None), and
    the epilogues put the bias where the separate add and sum put it."""
    if dtype == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    x, w, b, dy = _linear_operands(cp, rows, inp, out, dtype)
    y = blas.matmul_bias(x, w.T, b)
    both = blas.matmul_row_sums(dy.T, x)
    if rows < 4096 and (y is None or both is None):  # odd leading dimensions: cuBLASLt may have no kernel
        pytest.skip("cuBLASLt has no epilogue kernel for this small odd case (Linear multiplies and adds apart)")
    assert y is not None and both is not None
    f32 = [a.astype(cp.float32) for a in (x, w, b, dy)]
    want_y = f32[0] @ f32[1].T + f32[2]
    np.testing.assert_allclose(cp.asnumpy(y.astype(cp.float32)), cp.asnumpy(want_y), **_tolerance(dtype, inp))
    np.testing.assert_allclose(cp.asnumpy(both[0].astype(cp.float32)), cp.asnumpy(f32[3].T @ f32[0]),
                               **_tolerance(dtype, rows))
    np.testing.assert_allclose(cp.asnumpy(both[1].astype(cp.float32)), cp.asnumpy(f32[3].sum(axis=0)),
                               **_tolerance(dtype, rows))


def test_the_bias_gradient_is_an_exact_float32_sum_under_tf32(cp, tf32_switch):
    """Under TF32 the product's inputs are rounded to 10 mantissa bits; the bias gradient summed in
    its epilogue must not be (backend.sum_rows keeps it exact for the same reason). Every dy is
    1 + 2^-11 - 2^-16, which TF32 rounds (or truncates) to 1: a sum of rounded terms would be off
    by 2^-11 of itself, five times the tolerance; float32's own sum is far inside it."""
    x, _, _, dy = _linear_operands(cp, 1024, 512, 1536, np.float32, seed=5)
    dy[...] = np.float32(1 + 2.0 ** -11 - 2.0 ** -16)
    tf32_switch(True)
    both = blas.matmul_row_sums(dy.T, x)
    assert both is not None
    np.testing.assert_allclose(cp.asnumpy(both[1]), 1024 * (1 + 2.0 ** -11 - 2.0 ** -16), rtol=1e-4)


def test_the_epilogues_replay_from_a_graph_with_their_eager_bits(cp):
    """Captured, the two calls give on replay what they gave eagerly on the same inputs (the plans,
    heuristic included, are made before the capture, in the eager call)."""
    x, w, b, dy = _linear_operands(cp, 640, 256, 384, np.float32)
    eager = (blas.matmul_bias(x, w.T, b), *blas.matmul_row_sums(dy.T, x))
    cp.cuda.get_current_stream().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        blas.bind_to_current_stream()
        stream.begin_capture()
        captured = (blas.matmul_bias(x, w.T, b), *blas.matmul_row_sums(dy.T, x))
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
    for got, want in zip(captured, eager):
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))


@pytest.mark.parametrize("tf32", [False, True])
def test_linear_with_the_epilogues_follows_linear_without(cp, tf32, tf32_switch):
    """F.linear's output and gradients with use_epilogues on equal those with it off (the same
    cuBLAS switch), to float32's rounding (TF32's where on)."""
    rng = np.random.default_rng(3)
    x, w, b, g = (rng.standard_normal(s).astype(np.float32) for s in ((8, 40, 96), (64, 96), (64,), (8, 40, 64)))
    results = []
    tf32_switch(tf32)
    for on in (False, True):
        xt, wt, bt = (minitx.tensor(a, device="cuda", requires_grad=True) for a in (x, w, b))
        with blas.use_cublas(True), blas.use_epilogues(on):
            y = F.linear(xt, wt, bt)
            (y * minitx.tensor(g, device="cuda")).sum().backward()
        results.append([t.numpy() for t in (y, xt.grad, wt.grad, bt.grad)])
    tol = dict(rtol=2e-2, atol=2e-2) if tf32 else dict(rtol=1e-4, atol=1e-3)
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, **tol)
