"""DLPack both ways and __array__ objects: memory shared without copies, dtypes kept or converted
as Tensor converts arrays, clear errors; against NumPy always, PyTorch and CuPy where present."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
from minitx import backend, interop

SHARED_DTYPES = ["float32", "float64", "int32", "int64", "bool", "uint8"]  # the dtypes minitx computes in
without_gpu = pytest.mark.skipif(backend.cuda_available(), reason="checks the behaviour without a GPU")


class Producer:
    """A DLPack producer that is not a NumPy array (as a third library's array would be)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


class ArrayLike:
    """Only __array__, like a pandas Series or a PIL image."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array


shared_arrays = st.sampled_from(SHARED_DTYPES).flatmap(
    lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))


# ---------------------------------------------------------------------- out of minitx
@given(array=shared_arrays)
def test_numpy_from_dlpack_shares_the_tensors_memory(array):
    t = minitx.Tensor(array.copy())
    view = np.from_dlpack(t)
    assert t.__dlpack_device__() == (1, 0)
    assert view.dtype == t.dtype and view.shape == t.shape
    assert np.shares_memory(view, t.data) or t.size == 0
    np.testing.assert_array_equal(view, array)


def test_a_write_through_the_export_is_seen_by_the_tensor():
    w = minitx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    np.from_dlpack(w)[0, 1] = -5.0
    assert w.tolist() == [[1.0, -5.0], [3.0, 4.0]]


def test_export_passes_on_only_the_keywords_the_consumer_gave():
    calls = []

    class Recorder:
        def __dlpack__(self, **kwargs):
            calls.append(kwargs)
            return "capsule"

    assert interop.export_dlpack(Recorder()) == "capsule"
    assert interop.export_dlpack(Recorder(), max_version=(1, 0), copy=False) == "capsule"
    assert calls == [{}, {"max_version": (1, 0), "copy": False}]


# ---------------------------------------------------------------------- into minitx
@given(array=shared_arrays)
def test_from_dlpack_wraps_the_producers_memory(array):
    t = minitx.from_dlpack(Producer(array))
    assert t.device == "cpu" and t.dtype == array.dtype and t.shape == array.shape
    assert np.shares_memory(t.data, array) or array.size == 0
    same = minitx.Tensor(Producer(array))
    assert np.shares_memory(same.data, array) or array.size == 0


@pytest.mark.parametrize("dtype", ["float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64"])
def test_every_dtype_minitx_holds_is_taken_without_a_copy(dtype):
    array = np.arange(6, dtype=dtype).reshape(2, 3)
    t = minitx.from_dlpack(Producer(array))
    assert t.dtype == np.dtype(dtype) and np.shares_memory(t.data, array)
    np.testing.assert_array_equal(t.numpy(), array)


def test_a_dtype_minitx_lacks_is_refused_by_name():
    with pytest.raises(TypeError, match="cannot hold an array of dtype complex64"):
        minitx.from_dlpack(Producer(np.ones(3, np.complex64)))


def test_tensor_copies_and_infers_dtypes_as_for_numpy_arrays():
    for source in (np.arange(4.0), np.arange(4.0, dtype=np.float32), np.arange(4), np.array([True])):
        for wrapped in (Producer(source), ArrayLike(source)):
            t = minitx.tensor(wrapped)
            assert t.dtype == minitx.tensor(source).dtype
            assert not np.shares_memory(t.data, source)
            np.testing.assert_array_equal(t.numpy(), source)
    kept = np.arange(3.0)
    assert np.shares_memory(minitx.Tensor(ArrayLike(kept)).data, kept)


def test_numpy_scalars_and_python_data_are_unchanged():
    assert interop.as_array([1.0, 2.0]) == [1.0, 2.0]
    scalar = np.float64(1.5)
    assert interop.as_array(scalar) is scalar
    assert minitx.tensor(scalar).dtype == minitx.tensor(np.asarray(scalar)).dtype == np.float64


def test_errors_name_what_was_given():
    with pytest.raises(TypeError, match=r"from_dlpack: builtins\.list has no __dlpack__"):
        minitx.from_dlpack([1.0, 2.0])
    with pytest.raises(ValueError, match=r"lives on DLPack device type 4 \(id 0\); minitx reads CPU"):
        minitx.from_dlpack(Producer(np.ones(2), device=(4, 0)))

    class Refuses(Producer):
        def __dlpack__(self, **kwargs):
            raise BufferError("no export today")

    with pytest.raises(TypeError, match=r"Tensor: cannot take the memory of .*Refuses through DLPack: "
                                        r"BufferError: no export today"):
        minitx.Tensor(Refuses(np.ones(2)))


@without_gpu
def test_gpu_memory_without_a_gpu_is_a_clear_error():
    with pytest.raises(RuntimeError, match="device 'cuda' requested but CuPy with a GPU is not available"):
        minitx.from_dlpack(Producer(np.ones(2), device=(2, 0)))


def test_gradients_flow_into_an_imported_tensor():
    source = np.array([1.0, -2.0, 3.0])
    x = minitx.from_dlpack(Producer(source), requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * source)


# ---------------------------------------------------------------------- PyTorch
def test_torch_round_trips_without_copies():
    torch = pytest.importorskip("torch")
    t = minitx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    seen = torch.from_dlpack(t)
    seen[1, 2] = 100.0
    assert t.data[1, 2] == 100.0 and seen.dtype == torch.float32
    back = minitx.from_dlpack(seen.T)  # non-contiguous strides too
    assert np.shares_memory(back.data, t.data)
    np.testing.assert_array_equal(back.numpy(), t.numpy().T)


@pytest.mark.parametrize("torch_dtype, dtype", [("float32", "float32"), ("float64", "float64"),
                                                ("int32", "int32"), ("int64", "int64"), ("bool", "bool"),
                                                ("float16", "float16"), ("int8", "int8"), ("uint8", "uint8"),
                                                ("int16", "int16")])
def test_tensor_of_a_torch_tensor(torch_dtype, dtype):
    torch = pytest.importorskip("torch")
    source = (torch.arange(6) % 2 == 0) if torch_dtype == "bool" else torch.arange(6).to(getattr(torch, torch_dtype))
    copied, wrapped = minitx.tensor(source), minitx.Tensor(source)
    assert copied.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(copied.numpy(), source.numpy().astype(dtype))
    assert not np.shares_memory(copied.data, source.numpy())
    assert np.shares_memory(wrapped.data, source.numpy())


def test_a_list_holding_a_tensor_that_requires_grad_warns_that_its_gradient_is_lost():
    """A list operand is copied as numbers: ``x @ [[w], [w]]`` sent w no gradient, silently. Now a
    warning (at the user's line) says so and names minitx.stack; a PyTorch tensor that requires grad
    in a list, which NumPy cannot read, is refused naming what to do (torch.tensor([p]) warns)."""
    w = minitx.tensor(2.0, requires_grad=True)
    x = minitx.ones(1, 2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"^tensor: a list holding a Tensor that requires grad is copied as "
                                         r"numbers: .*minitx\.stack") as caught:
        warnings.simplefilter("always")  # (as python -W always: still one warning for the list)
        y = x @ [[w], [w]]
    assert caught[0].filename == __file__ and len(caught) == 1
    y.sum().backward()
    assert w.grad is None and x.grad.tolist() == [[2.0, 2.0]]  # as warned
    with pytest.warns(UserWarning, match=r"^tensor: a list holding"):
        assert minitx.tensor([w, 3.0]).tolist() == [2.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minitx.tensor([w.detach(), minitx.tensor(3.0), 4.0]).tolist() == [2.0, 3.0, 4.0]  # no graph: silent
        assert np.asarray(w) == 2.0  # outside a list: as before
    torch = pytest.importorskip("torch")
    p = torch.tensor(1.5, requires_grad=True)
    for op, make in (("tensor", lambda: minitx.tensor([p, p])), ("add", lambda: minitx.ones(2) + [p, p])):
        with pytest.raises(TypeError, match=rf"^{op}: the list holds a PyTorch tensor that requires grad.*"
                                            r"\[t\.detach\(\) for t in \.\.\.\]"):
            make()
    assert minitx.tensor([p.detach(), p.detach()]).tolist() == [1.5, 1.5]


def test_tensor_copies_a_torch_tensor_that_requires_grad_detached_with_a_warning():
    """minitx.tensor(p) of a PyTorch parameter copies its values, as torch.tensor(p) does, and warns
    as PyTorch does: the copy leaves p's graph. Sharing p's memory stays refused (PyTorch's DLPack
    export refuses it too): a write through minitx would change what PyTorch's autograd saved."""
    torch = pytest.importorskip("torch")
    param = torch.nn.Parameter(torch.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=torch.float64))
    with pytest.warns(UserWarning, match=r"^tensor: copying a torch\.nn\.parameter\.Parameter that requires grad: "
                                         r"the copy is detached") as caught:
        copied = minitx.tensor(param)
    assert caught[0].filename == __file__  # the warning points at the user's line, not into minitx
    with pytest.warns(UserWarning, match=r"recommended to use sourceTensor\.detach\(\)\.clone\(\)"):
        torch.tensor(param)  # (PyTorch warns too)
    assert copied.dtype == np.float64 and copied.tolist() == param.tolist()
    assert not copied.requires_grad and not np.shares_memory(copied.data, param.detach().numpy())
    copied.data[0, 0] = 7.0
    assert param[0, 0].item() == 1.5
    with pytest.warns(UserWarning):
        leaf = minitx.tensor(param, dtype="float32", requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.dtype == np.float32
    with pytest.warns(UserWarning, match=r"^tensor: copying"):
        assert (minitx.ones(2, 2) + param).tolist() == [[2.5, -1.0], [1.25, 4.0]]  # an operand is copied so too
    with pytest.warns(UserWarning, match=r"^tensor: copying"):
        assert (minitx.tensor(np.ones((2, 2))) @ param).dtype == np.float64  # (through a product's operands too)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minitx.tensor(param.detach()).tolist() == param.tolist()  # said so: no warning
    for share in (minitx.Tensor, minitx.from_dlpack, minitx.as_tensor):
        with pytest.raises(TypeError, match=r"cannot take the memory of torch\.nn\.parameter\.Parameter .*"
                                            r"use tensor\.detach\(\)"):
            share(param)


@pytest.mark.parametrize("consumer", ["from_dlpack", "utils.dlpack (unversioned capsule)", "tensor (a copy)"])
def test_a_bfloat16_tensor_goes_to_torch_as_bfloat16(consumer):
    """NumPy refuses to export ml_dtypes' bfloat16: the uint16 bits go, the capsule says bfloat16."""
    torch = pytest.importorskip("torch")
    values = np.array([[1.5, -2.0, 0.0], [-0.0, np.inf, 3.140625]], np.float32)
    t = minitx.tensor(values, dtype="bfloat16", requires_grad=True)
    take = {"from_dlpack": torch.from_dlpack, "tensor (a copy)": torch.tensor,
            "utils.dlpack (unversioned capsule)": lambda x: torch.utils.dlpack.from_dlpack(x.__dlpack__())}[consumer]
    seen = take(t)
    assert seen.dtype == torch.bfloat16 and tuple(seen.shape) == t.shape
    np.testing.assert_array_equal(seen.view(torch.int16).numpy().view(np.uint16), t.data.view(np.uint16))
    seen[0, 1] = 7.0
    t.data[1, 2] = -3.0
    shared = consumer != "tensor (a copy)"
    assert (t.data[0, 1] == 7.0) == shared and (seen[1, 2].item() == -3.0) == shared


def test_a_bfloat16_export_shares_strided_0d_and_empty_tensors_and_outlives_the_tensor():
    torch = pytest.importorskip("torch")
    base = np.arange(12, dtype=np.float32).reshape(3, 4).astype(minitx.backend.bfloat16())
    t = minitx.Tensor(base.T[1:, ::2])  # non-contiguous: the strides go as they are
    seen = torch.from_dlpack(t)
    assert tuple(seen.stride()) == tuple(s // 2 for s in t.data.strides)
    np.testing.assert_array_equal(seen.float().numpy(), t.numpy().astype(np.float32))
    seen[0, 0] = -1.0
    assert base[0, 1] == -1.0
    del t, base  # the capsule keeps the memory alive
    assert seen.float().sum().item() == -1.0 + 9 + 2 + 10 + 3 + 11  # [[1, 9], [2, 10], [3, 11]], 1 set to -1
    assert torch.from_dlpack(minitx.tensor(2.5, dtype="bfloat16")).item() == 2.5
    assert tuple(torch.from_dlpack(minitx.zeros(0, 3, dtype="bfloat16")).shape) == (0, 3)


def test_numpy_refuses_a_bfloat16_tensors_capsule():
    """NumPy has no bfloat16 to read DLPack's into (the interop docstring says so)."""
    t = minitx.tensor([1.0, 2.0], dtype="bfloat16")
    with pytest.raises((BufferError, RuntimeError, TypeError)):
        np.from_dlpack(t)
    assert np.shares_memory(t.numpy(), t.data)  # the NumPy view there is


# ---------------------------------------------------------------------- CuPy
@pytest.mark.gpu
def test_cupy_round_trips_without_copies():
    import cupy

    t = minitx.tensor(np.arange(4.0), device="cuda")
    seen = cupy.from_dlpack(t)
    seen[0] = 7.0
    assert float(t.data[0]) == 7.0
    back = minitx.from_dlpack(seen)
    assert back.device == "cuda" and back.data.data.ptr == t.data.data.ptr
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        assert minitx.from_dlpack(torch.ones(3, device="cuda")).device == "cuda"


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_an_ndarray_subclass_is_wrapped_as_a_plain_array_as_pytorch():
    """A masked array's own methods answered some ops (its sum skipped what it masks, 2 * x
    listed the masked entry as 2) and not others (tensor() copies it whole); np.matrix's keep two
    axes. Its memory is wrapped as a plain array, the mask ignored, as PyTorch's from_numpy."""
    torch = pytest.importorskip("torch")
    masked = np.ma.array([1.0, 2.0], mask=[False, True])
    for wrap in (minitx.from_numpy, minitx.Tensor, minitx.as_tensor):
        t = wrap(masked)
        assert type(t.data) is np.ndarray and np.shares_memory(t.data, masked.data)
        assert t.sum().item() == torch.from_numpy(masked).sum().item() == 3.0
        assert (t * 2).tolist() == [2.0, 4.0]
    rows = minitx.from_numpy(np.asmatrix(np.ones((2, 3))))
    assert rows.sum(0).shape == (3,) and rows[0].shape == (3,)
