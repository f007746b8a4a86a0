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
