"""minitx.blas's cuBLASLt epilogues (a linear layer's bias added, and its gradient summed, inside
the product), on the CPU: the plans against NumPy through an emulation of cublasLtMatmul, and
the calls' wiring end to end through a stand-in for nvmath's cuBLASLt binding that reads the
operands and the bias from the addresses it is handed, as the library would. The library itself
needs a GPU (tests/test_blas_gpu.py)."""
import contextlib
import ctypes
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ml_dtypes import bfloat16

import minitx
import minitx.functional as F
from minitx import blas
from test_blas import fake_gpu, flat


def _elements(x):
    return tuple(s // x.itemsize for s in x.strides)


def emulated(a, b, epilogue, bias=None):
    """What matmul_bias ("bias") or matmul_row_sums ("bgradb") computes, the call emulated."""
    plan = blas.epilogue_plan(a.shape, _elements(a), b.shape, _elements(b), epilogue)
    assert plan is not None
    out = np.full((a.shape[0], b.shape[1]), np.nan, a.dtype)
    if bias is None:
        bias = np.full(a.shape[0], np.nan, a.dtype)
    blas.emulate_epilogue(plan, epilogue, flat(b), flat(a), out.reshape(-1), bias)
    return out, bias


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 9), k=st.integers(2, 9), m=st.integers(2, 9), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([np.float32, bfloat16]))
def test_the_bias_epilogue_adds_the_bias_to_every_row(n, k, m, seed, dtype):
    """Linear's forward: rows [n, k] @ w.T (w [m, k], a transposed view) + b [m]. The BIAS
    epilogue adds its vector along the column-major D's rows, which are our columns."""
    rng = np.random.default_rng(seed)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((n, k), (m, k), (m,)))
    got, _ = emulated(x, w.T, "bias", b)
    wide = x.astype(np.float32) @ w.T.astype(np.float32) + b.astype(np.float32)
    np.testing.assert_allclose(got.astype(np.float32), wide.astype(dtype).astype(np.float32), rtol=1e-6, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(2, 9), out=st.integers(2, 9), inp=st.integers(2, 9), seed=st.integers(0, 2**16))
def test_the_bgradb_epilogue_sums_our_a_over_its_rows(rows, out, inp, seed):
    """Linear's backward: dw = dy^T @ x and db = the rows of dy^T summed = dy summed over rows,
    from one call (cuBLAS's B is our A = dy^T, entering transposed)."""
    rng = np.random.default_rng(seed)
    dy, x = rng.standard_normal((rows, out)).astype(np.float32), rng.standard_normal((rows, inp)).astype(np.float32)
    dw, db = emulated(dy.T, x, "bgradb")
    np.testing.assert_allclose(dw, dy.T @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, dy.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_where_the_epilogues_do_not_apply():
    """bgradb needs our A transposed (cuBLASLt sums its B only so); no epilogue takes a batch, a
    crossed operand, shapes that do not align or a dimension of 1; an unknown epilogue is an error."""
    a, b = np.ones((4, 3), np.float32), np.ones((3, 5), np.float32)
    plan = blas.epilogue_plan
    assert plan(a.shape, _elements(a), b.shape, _elements(b), "bias") is not None
    assert plan(a.shape, _elements(a), b.shape, _elements(b), "bgradb") is None
    assert plan(a.T.T.shape, _elements(a), b.shape, _elements(b), "bgradb") is None
    t = np.ones((3, 4), np.float32).T
    assert plan(t.shape, _elements(t), b.shape, _elements(b), "bgradb") is not None
    assert plan((2, 4, 3), (12, 3, 1), b.shape, _elements(b), "bias") is None
    crossed = np.ones((4, 6), np.float32)[:, ::2]
    assert plan(crossed.shape, _elements(crossed), b.shape, _elements(b), "bias") is None
    for one in (np.ones((3, 1), np.float32).T, np.ones((1, 3), np.float32).T):  # one row or column
        assert plan(one.shape, _elements(one), (one.shape[1], 5), (5, 1), "bgradb") is None
    assert plan((1, 3), (3, 1), b.shape, _elements(b), "bias") is None
    assert plan(a.shape, _elements(a), (3, 1), (1, 1), "bias") is None
    assert plan(a.shape, _elements(a), (4, 5), (5, 1), "bias") is None
    with pytest.raises(ValueError, match="unknown epilogue 'relu'"):
        plan(a.shape, _elements(a), b.shape, _elements(b), "relu")


# ------------------------------------------------------------------ the calls' wiring, on the CPU

_TYPES = {0: np.float32, 14: bfloat16}


class FakeCublasLt:
    """nvmath.bindings.cublasLt's calls that blas makes, on host memory: descriptors are dicts,
    attributes are read from the addresses they are set from, and matmul runs emulate_epilogue
    on the operands and bias at the addresses it is handed."""
    MatmulDescAttribute = types.SimpleNamespace(TRANSA=3, TRANSB=4, EPILOGUE=7, BIAS_POINTER=8)
    MatmulPreferenceAttribute = types.SimpleNamespace(MAX_WORKSPACE_BYTES=1, MIN_ALIGNMENT_A_BYTES=5,
                                                      MIN_ALIGNMENT_B_BYTES=6, MIN_ALIGNMENT_C_BYTES=7,
                                                      MIN_ALIGNMENT_D_BYTES=8)
    Epilogue = types.SimpleNamespace(BIAS=4, BGRADB=512)

    class cuBLASLtError(Exception):
        pass

    def __init__(self, refuse=False):
        self.objects, self.calls, self.heuristics, self.refuse = {}, [], 0, refuse

    def _new(self, value):
        self.objects[len(self.objects) + 100] = value
        return len(self.objects) + 99

    def create(self):
        return self._new("handle")

    def get_matmul_desc_attribute_dtype(self, attribute):
        return np.dtype(np.uint64 if attribute == self.MatmulDescAttribute.BIAS_POINTER else np.int32)

    def get_matmul_preference_attribute_dtype(self, attribute):
        return np.dtype(np.uint64 if attribute == self.MatmulPreferenceAttribute.MAX_WORKSPACE_BYTES else np.uint32)

    def _set(self, dtype_of, handle, attribute, pointer, size):
        dtype = dtype_of(attribute)
        assert size == dtype.itemsize
        self.objects[handle][attribute] = int(np.frombuffer((ctypes.c_char * size).from_address(pointer), dtype)[0])

    def matmul_desc_create(self, compute, scale):
        assert scale == 0  # CUDA_R_32F: alpha and beta are float32
        return self._new({"compute": compute})

    def matmul_desc_set_attribute(self, desc, attribute, pointer, size):
        self._set(self.get_matmul_desc_attribute_dtype, desc, attribute, pointer, size)

    def matmul_preference_create(self):
        return self._new({})

    def matmul_preference_set_attribute(self, pref, attribute, pointer, size):
        self._set(self.get_matmul_preference_attribute_dtype, pref, attribute, pointer, size)

    def matrix_layout_create(self, kind, rows, cols, ld):
        return self._new(dict(kind=kind, rows=rows, cols=cols, ld=ld))

    def matmul_preference_destroy(self, handle):
        self.objects[handle] = "destroyed"

    matrix_layout_destroy = matmul_desc_destroy = matmul_preference_destroy

    class MatmulHeuristicResult:
        def __init__(self, size=1):
            self.ptr = 4242

    def matmul_algo_get_heuristic(self, handle, desc, a, b, c, d, pref, requested, results, count):
        """As the library: a case without a kernel is CUBLAS_STATUS_NOT_SUPPORTED, which the
        binding raises."""
        self.heuristics += 1
        self.preference = dict(self.objects[pref])
        assert requested == 1 and c == d and 0 < self.preference[1] < blas.WORKSPACE_BYTES
        assert self.objects[desc].get(8), "the bias pointer is set before the heuristic is asked"
        if self.refuse:
            raise self.cuBLASLtError("CUBLAS_STATUS_NOT_SUPPORTED")
        np.frombuffer((ctypes.c_char * 4).from_address(count), np.int32)[...] = 1

    def matmul(self, handle, desc, alpha, a, a_layout, b, b_layout, beta, c, c_layout, d, d_layout, algo, workspace,
               workspace_size, stream):
        attrs, la, lb, ld = (self.objects[h] for h in (desc, a_layout, b_layout, d_layout))
        assert c == d and c_layout == d_layout and algo == 4242 and workspace_size == blas.WORKSPACE_BYTES
        for pointer, value in ((alpha, 1), (beta, 0)):
            assert np.frombuffer((ctypes.c_char * 4).from_address(pointer), np.float32)[0] == value
        dtype = np.dtype(_TYPES[la["kind"]])
        transa, transb, epilogue = attrs[3], attrs[4], attrs[7]
        m, k = (la["rows"], la["cols"]) if transa == blas.OP_N else (la["cols"], la["rows"])
        n = lb["cols"] if transb == blas.OP_N else lb["rows"]
        plan = blas.GemmPlan(transa, transb, m, n, k, la["ld"], 0, lb["ld"], 0, ld["ld"], m * n, 1)

        def at(pointer, count):
            return np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(pointer), dtype)

        name = {4: "bias", 512: "bgradb"}[epilogue]
        bias = at(attrs[8], m if name == "bias" else n)
        blas.emulate_epilogue(plan, name, at(a, la["ld"] * la["cols"]), at(b, lb["ld"] * lb["cols"]), at(d, m * n),
                              bias)
        self.calls.append(name)


def _aligned(shape, dtype):
    """An empty array at a 256-byte boundary, as CuPy's allocations are."""
    count = int(np.prod(shape, dtype=np.int64))
    itemsize = np.dtype(dtype).itemsize
    buf = np.empty(count * itemsize + 256, np.uint8)
    start = -buf.ctypes.data % 256
    return buf[start:start + count * itemsize].view(dtype).reshape(shape)


@contextlib.contextmanager
def fake_lt(refuse=False):
    """fake_gpu() with a FakeCublasLt as nvmath's cuBLASLt binding, both switches on, no plans kept."""
    lt = FakeCublasLt(refuse)
    with fake_gpu() as (host, cublas), pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(sys.modules["cupy"], "empty", lambda shape, dtype: host(_aligned(shape, dtype)))
        monkeypatch.setattr(blas, "_cublaslt", [lt])
        monkeypatch.setattr(blas, "_lt_plans", {})
        monkeypatch.setattr(blas, "_lt_handles", {})
        with blas.use_cublas(True), blas.use_epilogues(True):
            yield host, lt


@pytest.mark.parametrize("dtype", [np.float32, bfloat16])
def test_matmul_bias_and_row_sums_hand_cublaslt_each_pointer_where_it_belongs(dtype):
    """End to end but for the GPU: matmul_bias is x @ w.T + b, matmul_row_sums (dy^T @ x, dy's
    column sums); the plan is made (and the heuristic asked) once per case."""
    rng = np.random.default_rng(0)
    x, w, b, dy = (rng.standard_normal(s).astype(dtype) for s in ((6, 5), (4, 5), (4,), (6, 4)))
    f32 = [a.astype(np.float32) for a in (x, w, b, dy)]
    with fake_lt() as (host, lt):
        y = np.asarray(blas.matmul_bias(host(x), host(w).T, host(b)))
        y_again = np.asarray(blas.matmul_bias(host(x), host(w).T, host(b)))
        dw, db = (np.asarray(r) for r in blas.matmul_row_sums(host(dy).T, host(x)))
    assert lt.calls == ["bias", "bias", "bgradb"] and lt.heuristics == 2
    assert y.dtype == dw.dtype == db.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.astype(np.float32), (f32[0] @ f32[1].T + f32[2]).astype(dtype).astype(np.float32))
    np.testing.assert_array_equal(y, y_again)
    np.testing.assert_allclose(dw.astype(np.float32), f32[3].T @ f32[0], rtol=1e-2 if dtype == bfloat16 else 1e-6)
    np.testing.assert_allclose(db.astype(np.float32), f32[3].sum(0), rtol=1e-2 if dtype == bfloat16 else 1e-6)


def test_cublaslt_is_told_how_far_each_operand_is_aligned():
    """cuBLASLt assumes 256-byte aligned operands unless the preference says less: a view that
    starts 4 bytes into its buffer must say 4, or a kernel may read it wrongly."""
    buffer = _aligned((3 * 8 + 1,), np.float32)
    x = buffer[1:].reshape(3, 8)  # contiguous, 4 bytes past a 256-byte boundary
    x[...] = 1
    w, b = np.ones((2, 8), np.float32), np.zeros(2, np.float32)
    with fake_lt() as (host, lt):
        blas.matmul_bias(host(x), host(w).T, host(b))
    aligned = FakeCublasLt.MatmulPreferenceAttribute
    assert lt.preference[aligned.MIN_ALIGNMENT_B_BYTES] == 4  # cuBLAS's B is our x
    assert lt.preference[aligned.MIN_ALIGNMENT_A_BYTES] >= 16


def test_without_a_kernel_the_product_is_left_to_the_caller_and_not_asked_again():
    """Where cuBLASLt's heuristic finds no kernel, matmul_bias returns None (Linear then
    multiplies and adds apart) and the answer is kept."""
    x, w, b = np.ones((3, 4), np.float32), np.ones((2, 4), np.float32), np.ones(2, np.float32)
    with fake_lt(refuse=True) as (host, lt):
        assert blas.matmul_bias(host(x), host(w).T, host(b)) is None
        assert blas.matmul_bias(host(x), host(w).T, host(b)) is None
    assert lt.heuristics == 1 and lt.calls == []


def test_the_epilogues_stay_off_for_numpy_and_unless_both_switches_are_on():
    a, w, b = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32), np.ones(4, np.float32)
    with blas.use_cublas(True), blas.use_epilogues(True):
        assert not blas.epilogues_enabled(a, w, b)
    with fake_gpu() as (host, _):
        with blas.use_cublas(True):
            assert not blas.epilogues_enabled(host(a), host(w), host(b))


@pytest.mark.parametrize("bias", [True, False])
def test_linear_takes_the_epilogues_and_gives_what_it_gives_without(monkeypatch, bias):
    """F.linear forward and backward, with the epilogue calls run by the stand-in (the arrays
    handed over as device arrays would be): the output and the three gradients agree with the
    path without epilogues; without a bias Linear never asks for them."""
    rng = np.random.default_rng(4)
    x, w, b, g = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 5), (4, 5), (4,), (2, 3, 4)))

    def run():
        xt, wt, bt = (minitx.tensor(a, requires_grad=True) for a in (x, w, b))
        y = F.linear(xt, wt, bt if bias else None)
        (y * minitx.tensor(g)).sum().backward()
        return [y.numpy()] + [t.grad.numpy() for t in ((xt, wt, bt) if bias else (xt, wt))]

    without = run()
    with fake_lt() as (host, lt):
        for name in ("matmul_bias", "matmul_row_sums"):
            real = getattr(blas, name)
            monkeypatch.setattr(blas, name, lambda *arrays, real=real: _as_numpy(real(*(host(a) for a in arrays))))
        monkeypatch.setattr(blas, "epilogues_enabled", lambda *arrays: True)
        with_epilogues = run()
    assert lt.calls == (["bias", "bgradb"] if bias else [])
    for got, want in zip(with_epilogues, without):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _as_numpy(result):
    """A stand-in call's result as the plain NumPy arrays the op works on."""
    if result is None:
        return None
    return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)
