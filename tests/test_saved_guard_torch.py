"""check_saved_arrays() against writes through PyTorch's DLPack views (issue 25): PyTorch ignores
NumPy's read-only flag and bumps no minitx version, so without the checksum each of these gave
x.grad == [100, 100] instead of [3, 4]."""
import numpy as np
import pytest

import minitx
from minitx.autograd import check_saved_arrays

torch = pytest.importorskip("torch")

SAVED_W = r"'mul' saved input 1 \(shape \(2,\), float64\) .*clone before writing"


def leaves():
    return (minitx.tensor([1.0, 2.0], dtype="float64", requires_grad=True),
            minitx.tensor([3.0, 4.0], dtype="float64", requires_grad=True))


def test_a_torch_view_taken_after_the_forward_pass_writes_past_the_lock():
    x, w = leaves()
    with check_saved_arrays():
        y = (x * w).sum()
        torch.from_dlpack(w.data)[:] = 100
        with pytest.raises(RuntimeError, match=SAVED_W):
            y.backward()


def test_a_torch_view_taken_before_the_forward_pass():
    x, w = leaves()
    seen = torch.from_dlpack(w.data)
    with check_saved_arrays():
        y = (x * w).sum()
        seen[:] = 100
        with pytest.raises(RuntimeError, match=SAVED_W):
            y.backward()


def test_a_write_into_the_torch_tensor_a_from_dlpack_tensor_views():
    x = minitx.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    source = torch.tensor([3.0, 4.0], dtype=torch.float64)
    w = minitx.from_dlpack(source, requires_grad=True)
    with check_saved_arrays():
        y = (x * w).sum()
        source[:] = 100
        with pytest.raises(RuntimeError, match=SAVED_W):
            y.backward()


def test_cloning_before_writing_keeps_the_gradient_right():
    x, w = leaves()
    with check_saved_arrays():
        y = (x * w).sum()
        copy = torch.clone(torch.from_dlpack(w.data))
        copy[:] = 100  # the clone's memory is its own
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    torch.from_dlpack(w.data)[:] = 100  # after backward: allowed, and nothing checks it
    assert w.tolist() == [100.0, 100.0]
