"""minitx.blas: the cuBLAS call plans of row-major products, run by a NumPy emulation of
cublasGemmStridedBatchedEx (column-major reads with the plan's leading dimensions and batch
strides) and compared with numpy.matmul, on operands of every layout a product meets:
contiguous, transposed views, row slices, broadcast batches, reversed and crossed strides. The
call itself needs a GPU (tests/kernels/test_gpu.py)."""
import contextlib
import ctypes
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ml_dtypes import bfloat16

from minitx import blas


def flat(x):
    """x's elements from its first one on, as a 1-D array over its memory (strides >= 0)."""
    span = 1 + sum((n - 1) * s for n, s in zip(x.shape, x.strides)) // x.itemsize if x.size else 1
    return np.lib.stride_tricks.as_strided(x, shape=(span,), strides=(x.itemsize,))


def emulated_product(a, b):
    """a @ b as minitx.blas.matmul computes it, with the call emulated; and whether a and b went
    in as they were (no copy)."""
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    a2, a_layout = blas.prepared(np, a, batch)
    b2, b_layout = blas.prepared(np, b, batch)
    out = np.full(batch + (n, m), np.nan, dtype=a.dtype)
    plan = blas.gemm_plan(a_layout, b_layout, n, k, m, int(np.prod(batch, dtype=np.int64)))
    blas.emulate_gemm(plan, flat(b2), flat(a2), out.reshape(-1))
    return out, (a2 is a, b2 is b)


def layout(draw, x):
    """x, or a view of the same values in another memory layout."""
    kind = draw(st.sampled_from(["as is", "transposed", "wider rows", "reversed", "every other"]))
    if kind == "transposed":  # stored [..., c, r], seen through swapaxes
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "wider rows":  # rows of a wider matrix: leading dimension > cols
        wide = np.zeros(x.shape[:-1] + (x.shape[-1] + 3,), x.dtype)
        wide[..., :x.shape[-1]] = x
        return wide[..., :x.shape[-1]]
    if kind == "reversed":
        return np.ascontiguousarray(x[..., ::-1, :])[..., ::-1, :]
    if kind == "every other":  # crossed strides: neither rows nor columns contiguous
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


@st.composite
def operands(draw):
    n, k, m = (draw(st.integers(1, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_batch = [draw(st.sampled_from([size, 1])) for size in batch][draw(st.integers(0, len(batch))):]
    b_batch = [draw(st.sampled_from([size, 1])) for size in batch][draw(st.integers(0, len(batch))):]
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = rng.standard_normal(tuple(a_batch) + (n, k)).astype(dtype)
    b = rng.standard_normal(tuple(b_batch) + (k, m)).astype(dtype)
    return layout(draw, a), layout(draw, b)


@settings(max_examples=60, deadline=None)
@given(operands())
def test_every_plan_computes_numpy_matmul(pair):
    a, b = pair
    got, _ = emulated_product(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5 if a.dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("a, b", [
    (np.ones((4, 3)), np.ones((3, 5))),                               # contiguous
    (np.ones((3, 4)).T, np.ones((3, 5))),                             # x^T, as in dw = dy^T @ rows
    (np.ones((4, 3)), np.ones((5, 3)).T),                             # w^T, as in y = rows @ w^T
    (np.ones((2, 6, 4, 3)), np.ones((3, 5))),                         # a weight broadcast over the batch
    (np.swapaxes(np.ones((2, 3, 4)), -1, -2), np.ones((2, 3, 5))),    # batched transposed view
    (np.ones((4, 8))[:, :3], np.ones((3, 5))),                        # rows of a wider matrix
    (np.ones((1, 3)), np.ones((3, 1))),                               # vectors made matrices
    (np.ones((3, 1, 4, 3)), np.ones((1, 2, 3, 5))),                   # both broadcast, each on one axis
])
def test_the_layouts_of_the_products_of_a_step_need_no_copy(a, b):
    got, in_place = emulated_product(a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    if a.shape[:-2] != (3, 1) or b.shape[:-2] != (1, 2):
        assert in_place == (True, True)
    else:  # broadcast on one batch axis and not the other: no single batch stride walks it
        assert in_place == (False, False)


def test_a_crossed_operand_is_copied():
    a = np.arange(24.0).reshape(4, 6)[:, ::2]
    _, in_place = emulated_product(a, np.ones((3, 2)))
    assert in_place == (False, True)


def test_the_switch_leaves_numpy_products_to_numpy():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with blas.use_cublas():
        assert not blas.enabled(a, b)
        np.testing.assert_array_equal(blas.product(a, b), a @ b)
    assert not blas.enabled(a, b)


# ------------------------------------------------------------------ the call's wiring, on the CPU


class HostArray(np.ndarray):
    """A NumPy array that answers ``.data.ptr`` as a CuPy array does (its first element's address)."""

    @property
    def data(self):
        return type("Memory", (), {"ptr": self.ctypes.data})()


class FakeCublas:
    """nvmath.bindings.cublas's calls that blas.matmul makes, run on host memory: the gemm reads
    its operands from the addresses it is given, as cuBLAS would, through emulate_gemm."""
    ComputeType = type("ComputeType", (), {"COMPUTE_32F": 68, "COMPUTE_32F_FAST_TF32": 77, "COMPUTE_64F": 70})
    TYPES = {0: np.float32, 1: np.float64, 2: np.float16, 14: bfloat16}

    def __init__(self):
        self.calls = []

    def create(self):
        return 1

    def set_stream(self, handle, stream):
        pass

    def set_workspace(self, handle, pointer, size):
        pass

    def gemm_strided_batched_ex(self, handle, transa, transb, m, n, k, alpha, a, atype, lda, stride_a, b, btype, ldb,
                                stride_b, beta, c, ctype, ldc, stride_c, batch, compute, algo):

        dtype = self.TYPES[ctype]
        assert atype == btype == ctype and algo == -1
        assert compute == (70 if dtype == np.float64 else 68)

        def flat(pointer, op, rows, cols, ld, stride):
            stored_cols = cols if op == blas.OP_N else rows
            stored_rows = rows if op == blas.OP_N else cols
            count = (batch - 1) * stride + ld * (stored_cols - 1) + stored_rows
            buffer = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(pointer)
            return np.frombuffer(buffer, dtype=dtype)

        scalar = np.float64 if dtype == np.float64 else np.float32
        for pointer, value in ((alpha, 1), (beta, 0)):
            assert np.frombuffer((ctypes.c_char * np.dtype(scalar).itemsize).from_address(pointer), scalar)[0] == value
        plan = blas.GemmPlan(transa, transb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, batch)
        out = flat(c, blas.OP_N, m, n, ldc, stride_c)
        blas.emulate_gemm(plan, flat(a, transa, m, k, lda, stride_a), flat(b, transb, k, n, ldb, stride_b), out)
        self.calls.append(plan)


@contextlib.contextmanager
def fake_gpu():
    """blas.matmul as it runs on a GPU, with host memory standing for the device's: a CuPy stand-in
    whose arrays answer .data.ptr, and the cuBLAS calls run by FakeCublas. Yields (host: makes
    such an array, the FakeCublas)."""

    def host(x):
        return np.asarray(x).view(HostArray)

    cupy = types.SimpleNamespace(
        empty=lambda shape, dtype: np.empty(shape, dtype).view(HostArray),
        ascontiguousarray=lambda x: host(np.ascontiguousarray(x)),
        broadcast_to=lambda x, shape: host(np.broadcast_to(x, shape)),
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: 0),
                                   get_current_stream=lambda: types.SimpleNamespace(ptr=7)))
    cublas = FakeCublas()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        monkeypatch.setattr(blas, "_cublas", [cublas])
        monkeypatch.setattr(blas, "_handles", {})
        yield host, cublas


@settings(max_examples=30, deadline=None)
@given(operands())
def test_the_call_hands_cublas_each_operand_where_the_plan_says(pair):
    """blas.matmul itself, end to end but for the GPU: its pointers, types, scalars and plan
    reach the call in the right places (cuBLAS's A is our B), so the product is a @ b."""
    a, b = pair
    with fake_gpu() as (host, cublas):
        got = blas.matmul(host(a), host(b))
    assert len(cublas.calls) == 1
    np.testing.assert_allclose(np.asarray(got), np.matmul(a, b), rtol=1e-5 if a.dtype == np.float32 else 1e-12,
                               atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16])
def test_16_bit_products_are_computed_in_float32_and_rounded_once(dtype):
    """float16 and bfloat16 operands reach cuBLAS with their own type codes (CUDA_R_16F 2,
    CUDA_R_16BF 14), float32 scalars and compute type: the product is the float32 one rounded."""
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((3, 4, 5), (5, 6)))
    with fake_gpu() as (host, cublas):
        got = np.asarray(blas.matmul(host(a), host(b)))
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    assert got.dtype == dtype and len(cublas.calls) == 1
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_binding_to_the_stream_before_a_capture_leaves_the_capture_nothing_to_bind():
    """bind_to_current_stream binds the handle (and its workspace) once; a product on the same
    stream then binds nothing (cuBLAS's stream and workspace calls stay out of a capture)."""
    with fake_gpu() as (host, cublas):
        bound = []
        cublas.set_stream = lambda handle, stream: bound.append(stream)
        blas.bind_to_current_stream()
        blas.matmul(host(np.ones((2, 3), np.float32)), host(np.ones((3, 4), np.float32)))
    assert bound == [7]  # the stand-in's current stream, bound once


def test_a_product_asked_for_float32_stays_float32_under_tf32(monkeypatch):
    """With TF32 on, matmul hands cuBLAS the TF32 compute type, unless told tf32=False (the
    column sums of the bias gradients, which must not round their terms)."""
    import minitx.backend

    monkeypatch.setattr(minitx.backend, "tf32_allowed", lambda: True)
    computes = []
    with fake_gpu() as (host, cublas):
        cublas.gemm_strided_batched_ex = lambda *args: computes.append(args[-2])
        a, b = host(np.ones((2, 3), np.float32)), host(np.ones((3, 4), np.float32))
        blas.matmul(a, b)
        blas.matmul(a, b, tf32=False)
        blas.matmul(host(np.ones((2, 3))), host(np.ones((3, 4))))  # float64: no TF32 to speak of
    kinds = FakeCublas.ComputeType
    assert computes == [kinds.COMPUTE_32F_FAST_TF32, kinds.COMPUTE_32F, kinds.COMPUTE_64F]
