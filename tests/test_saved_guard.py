"""check_saved_arrays(): a checksum of each saved array that a tensor shows, taken at forward and
compared before the op's backward, catches writes the read-only lock and the version miss
(issue 25): here NumPy aliases and DLPack with NumPy alone; tests/test_saved_guard_torch.py
repeats the DLPack cases with PyTorch."""
import os
import subprocess
import sys

import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import optim
from minitx.autograd import check_saved_arrays, inplace
from minitx.nn import Transformer

UNSEEN = r"memory was written after the forward pass by something minitx does not see"


def leaf(values, dtype="float64"):
    return minitx.tensor(values, dtype=dtype, requires_grad=True)


class Producer:
    """A DLPack producer that is not a NumPy array (as a third library's array would be)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


# ---------------------------------------------------------------- writes the lock cannot see
def test_a_view_taken_before_the_forward_pass_and_written_after_it_raises():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = w.data.reshape(2)  # made before the lock: it stays writable
    with check_saved_arrays():
        y = (x * w).sum()
        alias[:] = 100.0
        with pytest.raises(RuntimeError, match=r"'mul' saved input 1 \(shape \(2,\), float64\)"):
            y.backward()
    assert x.grad is None  # nothing was accumulated from the wrong values


def test_a_numpy_dlpack_view_taken_before_the_forward_pass_raises():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = np.from_dlpack(w)
    with check_saved_arrays():
        y = (x * w).sum()
        alias[0] = -1.0
        with pytest.raises(RuntimeError, match=UNSEEN):
            y.backward()


def test_a_write_into_the_producer_of_a_from_dlpack_tensor_raises():
    # minitx does not own this memory, so it cannot lock it: only the checksum sees the write
    source = np.array([3.0, 4.0])
    x, w = leaf([1.0, 2.0]), minitx.from_dlpack(Producer(source), requires_grad=True)
    with check_saved_arrays():
        y = (x * w).sum()
        source[:] = 100.0
        with pytest.raises(RuntimeError, match=r"'mul' saved input 1 \(shape \(2,\), float64\)"):
            y.backward()


def test_a_saved_transposed_view_is_checked_through_its_bytes():
    x, w = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([[1.0, 0.0], [0.0, 1.0]])
    alias = w.data.reshape(4)
    with check_saved_arrays():
        y = (x @ w.T).sum()  # matmul saved a non-contiguous view of w's memory
        alias[1] = 7.0
        with pytest.raises(RuntimeError, match=r"'matmul' saved input 1 \(shape \(2, 2\), float64\)"):
            y.backward()


def test_an_op_that_saved_its_output_names_it():
    x = leaf([0.0, 1.0])
    with check_saved_arrays():
        y = F.exp(x)  # saves its output, which y shows
        z = y.sum()
        y.data.setflags(write=True)  # a writer that ignores the lock, as a DLPack consumer does
        y.data[0] = 5.0
        with pytest.raises(RuntimeError, match=r"'exp' saved its output \(shape \(2,\), float64\)"):
            z.backward()


def test_the_message_says_what_to_do():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = w.data.reshape(2)
    with check_saved_arrays():
        y = (x * w).sum()
    alias[0] = 0.0  # the op was recorded under the switch: its backward checks, switch or not
    with pytest.raises(RuntimeError) as caught:
        y.backward()
    message = str(caught.value)
    for part in ("'mul'", "input 1", "shape (2,)", "float64", "torch.from_dlpack",
                 "clone before writing", "array.copy()", "torch.clone", "run backward first"):
        assert part in message


# ---------------------------------------------------------------- what stays allowed
def test_a_write_after_backward_or_into_a_dropped_graph_is_allowed():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = w.data.reshape(2)
    with check_saved_arrays():
        (x * w).sum().backward()
        alias[:] = 10.0  # no backward pending: nothing to protect
        dropped = (x * w).sum()
        del dropped
        alias[:] = 20.0  # its graph is gone: nothing will read the old values
        x.grad = None
        (x * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 20.0])


def test_retain_graph_checks_again_on_the_second_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = w.data.reshape(2)
    with check_saved_arrays():
        y = (x * w).sum()
        y.backward(retain_graph=True)
        alias[0] = 0.0
        with pytest.raises(RuntimeError, match=UNSEEN):
            y.backward()


def test_minitx_s_own_writes_still_report_the_version():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with check_saved_arrays():
        y = (x * w).sum()
        minitx.autograd.mark_modified(w)
        w.data[...] = 100.0
        with pytest.raises(RuntimeError, match=r"'mul' saved input 1 .*version 0 -> 1"):
            y.backward()


def test_ops_recorded_with_the_switch_off_are_not_checked():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    alias = w.data.reshape(2)
    with check_saved_arrays(), check_saved_arrays(False):
        y = (x * w).sum()
    assert not any(fn._prints for fn in (y._ctx, y._ctx.inputs[0]._ctx))
    alias[:] = 100.0
    y.backward()  # the limit the switch lifts: the write goes unseen
    np.testing.assert_array_equal(x.grad.numpy(), [100.0, 100.0])


def test_training_steps_under_the_check_raise_nothing_and_match_steps_without_it():
    def losses(check):
        minitx.manual_seed(0)
        model = Transformer(11, 11, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                            d_ff=12, max_len=8, dropout=0.1, positional="learned").to(dtype="float64")
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
        tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])
        out = []
        with check_saved_arrays(check):
            for _ in range(3):
                logits = model(src, tgt[:, :-1])
                loss = F.cross_entropy(logits, minitx.tensor(tgt[:, 1:]), ignore_index=0, label_smoothing=0.1)
                opt.zero_grad()
                loss.backward()
                optim.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                out.append(loss.item())
        return out

    checked = losses(True)
    assert checked == losses(False)
    assert checked[-1] < checked[0]


# ---------------------------------------------------------------- index arrays
def _table():
    return leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


# op name -> (the index tensor, a forward that reads it, the name in messages, the index's input position)
INDEXED = {
    "getitem (int)": (lambda: minitx.tensor([0, 2]), lambda x, i: x[i], "get_item", 1),
    "getitem (mask)": (lambda: minitx.tensor([True, False, True]), lambda x, i: x[i], "get_item", 1),
    "getitem (tuple)": (lambda: minitx.tensor([0, 2]), lambda x, i: x[i, 1:], "get_item", 1),
    "gather": (lambda: minitx.tensor([[0, 1], [2, 0]]), lambda x, i: x.gather(0, i), "gather", 1),
    "take_along_dim (flat)": (lambda: minitx.tensor([[0, 1], [2, 0]]), lambda x, i: F.take_along_dim(x, i),
                              "take_along_dim", 1),
    "scatter_add": (lambda: minitx.tensor([[0, 1], [2, 0]]),
                    lambda x, i: F.scatter_add(minitx.zeros((3, 2), dtype="float64"), 0, i, x), "scatter_add", 1),
    "scatter_reduce": (lambda: minitx.tensor([[0, 1], [2, 0]]),
                       lambda x, i: F.scatter_reduce(minitx.zeros((3, 2), dtype="float64"), 0, i, x[:2], "amax"),
                       "scatter_reduce", 1),
    "embedding": (lambda: minitx.tensor([[2, 0], [0, 1]]), lambda x, i: F.embedding(i, x), "embedding", 0),
    "max_unpool1d": (lambda: minitx.tensor([[[0, 1], [1, 0], [0, 0]]]),
                     lambda x, i: F.max_unpool1d(x.reshape(1, 3, 2), i, 2), "max_unpool", 1),
}


def _moved(index):
    """Other values of the index's dtype and shape: the gradient would go elsewhere."""
    return ~index.data if index.dtype == np.bool_ else (index.data + 1) % 2


@pytest.mark.parametrize("name", list(INDEXED))
def test_a_write_into_an_index_before_backward_raises_naming_the_op(name):
    """The index arrays an op keeps for backward are guarded as saved arrays (issue: a write
    into them moved the gradient silently; PyTorch raises its version error)."""
    make, forward, op, position = INDEXED[name]
    x, index = _table(), make()
    y = forward(x, index).sum()
    with pytest.raises(ValueError, match="read-only"):  # the lock: a raw write fails at once
        index.data[...] = _moved(index)
    minitx.autograd.mark_modified(index)  # minitx's own writers lift the lock and count a version
    index.data[...] = _moved(index)
    with pytest.raises(RuntimeError, match=rf"'{op}' saved input {position} .*version 0 -> 1"):
        y.backward()
    assert x.grad is None


@pytest.mark.parametrize("name", list(INDEXED))
def test_a_write_into_an_index_past_the_lock_raises_under_the_check(name):
    make, forward, op, position = INDEXED[name]
    x, index = _table(), make()
    with check_saved_arrays():
        y = forward(x, index).sum()
        index.data.setflags(write=True)  # a writer that ignores the lock, as a DLPack consumer does
        index.data[...] = _moved(index)
        with pytest.raises(RuntimeError, match=rf"'{op}' saved input {position} "):
            y.backward()


def test_an_index_is_writable_again_after_backward():
    for make, forward, _, _ in INDEXED.values():
        x, index = _table(), make()
        forward(x, index).sum().backward()
        index.data[...] = _moved(index)  # no backward pending: nothing to protect


def test_a_mask_or_numpy_index_written_before_backward_leaves_the_gradient_as_it_was():
    """masked_select keeps the positions it computed, and getitem copies a NumPy index: a later
    write into the caller's mask or array changes nothing, so neither needs a guard."""
    x, mask = leaf([1.0, 2.0, 3.0]), minitx.tensor([True, False, True])
    y = F.masked_select(x, mask).sum()
    mask.data[...] = [False, True, False]
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])
    for array in (np.array([0, 2]), np.array([True, False, True])):
        x.grad = None
        y = x[array].sum()
        array[...] = [1, 1] if array.dtype != np.bool_ else [False, True, False]
        y.backward()
        np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])


def test_scatter_add_guards_its_index_only_when_src_needs_a_gradient():
    index = minitx.tensor([0, 2])
    y = F.scatter_add(leaf([0.0, 0.0, 0.0]), 0, index, minitx.tensor([1.0, 1.0], dtype="float64")).sum()
    index.data[0] = 1  # dx = dy does not read the index: allowed, as in PyTorch
    y.backward()


def test_pytorch_also_refuses_an_index_written_before_backward():
    torch = pytest.importorskip("torch")
    x, index = torch.zeros(3, requires_grad=True), torch.tensor([0, 2])
    y = x[index].sum()
    index[0] = 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# ---------------------------------------------------------------- the checksum itself
@pytest.mark.parametrize("make", [
    lambda: np.ones(()),                                  # 0-d
    lambda: np.arange(12.0).reshape(3, 4).T,              # non-contiguous
    lambda: np.array([np.nan, 1.0]),                      # NaN equals itself as bytes
    lambda: np.array([True, False]),
    lambda: np.ones(3, dtype=minitx.backend.resolve_dtype("bfloat16")),
])
def test_the_digest_sees_a_change_of_one_element(make):
    array = make()
    digest = inplace._digest(array)
    assert inplace._unchanged(array, digest)
    array.flat[0] = not array.flat[0] if array.dtype == bool else 7
    assert not inplace._unchanged(array, digest)


def test_the_environment_variable_switches_it_on_for_the_process():
    code = "import minitx.autograd.inplace as i; print(i.checking)"
    for value, expected in (("1", "True"), ("0", "False"), ("", "False")):
        env = dict(os.environ, MINITX_CHECK_SAVED=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected


def test_a_product_keeps_only_what_its_wanted_gradients_read_as_pytorch():
    """y = x * c keeps c (for x's gradient), not x: a write into x after it leaves backward as it is,
    and a write into c is refused at backward, as in PyTorch."""
    torch = pytest.importorskip("torch")
    for lib in (minitx, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0])
        x = w * 1
        y = x * c
        with lib.no_grad():
            x.add_(10.0)
        y.sum().backward()
        assert w.grad.tolist() == [3.0, 4.0]
        w.grad = None
        y = (w * 1) * c
        with lib.no_grad():
            c.add_(1.0)
        with pytest.raises(RuntimeError):
            y.sum().backward()
