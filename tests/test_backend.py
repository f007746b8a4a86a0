"""minitx/backend.py: numpy vs cupy, device names, MINITX_DEVICE, device-mismatch errors, row sums.

These tests run where CuPy is absent or sees no GPU; the GPU itself is covered by tests marked `gpu`.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx import backend, ops

without_gpu = pytest.mark.skipif(backend.cuda_available(), reason="checks the behaviour without a GPU")


@pytest.fixture
def fresh_device(monkeypatch):
    """Forget the resolved default device (and restore it afterwards)."""
    monkeypatch.setattr(backend, "_default_device", None)
    monkeypatch.delenv("MINITX_DEVICE", raising=False)
    return monkeypatch


@pytest.mark.parametrize("code", [
    # importing and computing on the CPU never touches cupy
    "import sys, minitx; minitx.tensor([1.0]) * 2; assert 'cupy' not in sys.modules, 'cupy imported'",
    # with cupy impossible to import (None in sys.modules makes `import cupy` raise ImportError)
    "import sys; sys.modules['cupy'] = None; import minitx; assert not minitx.cuda.is_available(); "
    "minitx.set_default_device('auto'); assert minitx.zeros(1).device == 'cpu'",
], ids=["cupy-not-imported", "cupy-unimportable"])
def test_import_minitx_without_cupy(code):
    env = {k: v for k, v in os.environ.items() if k != "MINITX_DEVICE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@without_gpu
def test_cuda_is_not_available():
    assert minitx.cuda.is_available() is False
    assert backend.get_array_module(np.ones(2)) is np and backend.get_array_module(3.0) is np
    assert backend.device_of(np.ones(2)) == "cpu"


@without_gpu
@pytest.mark.parametrize("value", [None, "cpu", "auto", " CPU ", ""])
def test_minitx_device_resolving_to_cpu(fresh_device, value):
    if value is not None:
        fresh_device.setenv("MINITX_DEVICE", value)
    assert backend.default_device() == "cpu"
    assert minitx.tensor([1.0]).device == "cpu"


@without_gpu
@pytest.mark.parametrize("value, error, message", [
    ("cuda", RuntimeError, "device 'cuda' requested but CuPy with a GPU is not available"),
    ("tpu", ValueError, "unknown device 'tpu'; expected 'cpu' or 'cuda'"),
])
def test_minitx_device_errors(fresh_device, value, error, message):
    fresh_device.setenv("MINITX_DEVICE", value)
    with pytest.raises(error, match=message):
        minitx.tensor([1.0])


@without_gpu
@pytest.mark.parametrize("device, error, message", [
    ("cuda", RuntimeError, "CuPy with a GPU is not available"),
    ("cuda:0", RuntimeError, "device 'cuda:0' requested but CuPy with a GPU is not available"),
    ("gpu", ValueError, "unknown device 'gpu'"),
])
def test_set_default_device(fresh_device, device, error, message):
    minitx.set_default_device("auto")
    assert backend.default_device() == "cpu"
    minitx.set_default_device("cpu")
    assert minitx.zeros(1).device == "cpu"
    with pytest.raises(error, match=message):
        minitx.set_default_device(device)
    assert backend.default_device() == "cpu"  # a failed call changes nothing


@pytest.mark.parametrize("make", [
    lambda: minitx.tensor([1.0], device="gpu"),
    lambda: minitx.zeros(2, device="metal"),
    lambda: minitx.tensor([1.0]).to("npu"),
])
def test_unknown_device_names(make):
    with pytest.raises(ValueError, match="unknown device"):
        make()


@without_gpu
@pytest.mark.parametrize("make", [lambda: minitx.tensor([1.0], device="cuda"), lambda: minitx.tensor([1.0]).cuda()])
def test_moving_to_cuda_without_a_gpu(make):
    with pytest.raises(RuntimeError, match="install minitx\\[cuda12\\]"):
        make()


def test_resolve_dtype():
    assert backend.resolve_dtype(None) == np.float32
    assert backend.resolve_dtype(np.float64) == np.float64 and backend.resolve_dtype("int32") == np.int32
    with pytest.raises(TypeError, match="unknown dtype"):
        backend.resolve_dtype("float128")


def test_to_device_on_the_cpu_is_free():
    a = np.ones(3)
    assert backend.to_device(a, "cpu") is a and backend.to_numpy(a) is a
    assert backend.xp_for("cpu") is np


class PretendCudaTensor(minitx.Tensor):
    """A CPU tensor that reports device 'cuda', to reach the device checks without a GPU."""

    @property
    def device(self):
        return "cuda"


@pytest.mark.parametrize("call, op", [
    (lambda a, b: a + b, "add"),
    (lambda a, b: F.matmul(a, b), "matmul"),
    (lambda a, b: ops.ScaledDotProductAttention()(a, b, a), "scaled_dot_product_attention"),
    (lambda a, b: F.linear(b, a), "linear"),
])
def test_device_mismatch_names_the_op_and_both_devices(call, op):
    cpu = minitx.tensor(np.ones((2, 2)))
    gpu = PretendCudaTensor(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=f"^{op}: inputs are on different devices: cpu and cuda; "
                                           "move them with .to\\(device\\) first"):
        call(cpu, gpu)


def test_a_pretend_cuda_tensor_shows_its_device():
    assert "device='cuda'" in repr(PretendCudaTensor(np.ones(1, np.float32)))


def test_allow_tf32_sets_cupys_switch(tf32_switch):
    tf32_switch(False)
    assert os.environ["CUPY_TF32"] == "0" and not backend.tf32_allowed()
    tf32_switch(True)
    assert os.environ["CUPY_TF32"] == "1" and backend.tf32_allowed()


def test_only_the_first_gpu_index_is_accepted():
    with pytest.raises(ValueError, match="'cuda:1'"):
        backend.check_device("cuda:1")


def test_sum_rows_is_the_column_sum():
    a = np.random.default_rng(3).standard_normal((7, 5))
    np.testing.assert_array_equal(backend.sum_rows(a), a.sum(axis=0))
    np.testing.assert_array_equal(backend.sum_rows(np.zeros((0, 4), np.float32)), np.zeros(4, np.float32))


def test_sum_rows_of_bfloat16_adds_in_float32_and_rounds_once():
    """1,000 ones: in bfloat16 (8 mantissa bits) a running sum stops at 256, where adding 1 rounds
    back down; in float32 it reaches 1,000, which bfloat16 holds exactly."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    ones = np.ones((1000, 3), bf16)
    total = backend.sum_rows(ones)
    assert total.dtype == bf16
    np.testing.assert_array_equal(total.astype(np.float32), [1000, 1000, 1000])
    rng = np.random.default_rng(4)
    a = rng.standard_normal((300, 7)).astype(bf16)
    np.testing.assert_array_equal(backend.sum_rows(a), a.astype(np.float32).sum(axis=0).astype(bf16))


_ROW_SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9)


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@settings(max_examples=60, deadline=None)
@given(shape=_ROW_SHAPES, dtype=st.sampled_from(["float32", "float64", "float16"]), data=st.data())
def test_row_sums_agree_with_numpys_expressions(shape, dtype, data):
    """sum_last, mean_last and sum_dot against the expressions they replace, on any shape (empty
    axes included) and with inf and NaN among the values: the same dtype and shape, the same
    value up to the order of the additions, and a NaN or inf where the expression has one."""
    values = hnp.arrays(dtype, shape, elements=st.floats(-100, 100, width=16) | st.sampled_from(
        [0.0, -0.0, np.inf, -np.inf, np.nan]))
    a, b = data.draw(values), data.draw(values)
    rows = tuple(range(a.ndim - 1))
    tol = dict(rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-3)
    with np.errstate(all="ignore"):
        pairs = [(backend.sum_last(a), a.sum(axis=-1)), (backend.sum_last(a, b), (a * b).sum(axis=-1)),
                 (backend.mean_last(a), a.mean(axis=-1)), (backend.mean_last(a, b), (a * b).mean(axis=-1)),
                 (backend.sum_dot(a, b, rows), (a * b).sum(axis=rows))]
    for got, want in pairs:
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, equal_nan=True, **tol)


def test_row_sums_take_blas_and_einsum_only_where_they_can():
    """float32/float64 arrays of one dtype and shape, on NumPy, their last axis not empty: the
    one-pass path; anything else (16 bits, mixed dtypes, broadcasting b) the expression."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert backend._one_pass(a, None) and backend._one_pass(a, a.copy())
    assert not backend._one_pass(a.astype(np.float16), None)
    assert not backend._one_pass(a, a.astype(np.float64))
    assert not backend._one_pass(a, a[:1])
    assert not backend._one_pass(a[:, :0], None)
    np.testing.assert_array_equal(backend.sum_last(a, a[:1]), (a * a[:1]).sum(axis=-1))  # b broadcast
    np.testing.assert_array_equal(backend.sum_dot(a, a, ()), a * a)  # no axes: nothing summed
