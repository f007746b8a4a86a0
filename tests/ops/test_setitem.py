"""x[index] = v (F.setitem, the op SetItem in minitx/ops/indexing.py): the write against NumPy's,
float64 gradients on hypothesis-drawn indices and values, PyTorch parity, the graph before and
after a write, and the errors users see."""
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import parity, torch_in_example
from test_shape import NONEMPTY, any_index


@st.composite
def setitem_case(draw):
    """(x, index, index as NumPy takes it, v): v has x[index]'s shape, or one that NumPy's
    assignment broadcasts to it (leading axes of length 1 included)."""
    x = draw(mst.tensors(NONEMPTY))
    index, as_numpy = draw(any_index(x.shape))
    target = x.numpy()[as_numpy].shape
    shape = list(target[draw(st.integers(0, len(target))):])  # leading axes dropped ...
    for axis in range(len(shape)):  # ... and some stretched from 1, ...
        if draw(st.booleans()):
            shape[axis] = 1
    shape = [1] * draw(st.integers(0, 2)) + shape  # ... or axes of length 1 put in front
    v = draw(mst.tensors(st.just(tuple(shape))))
    return x, index, as_numpy, v


def _written(index):
    """(x, v) -> a copy of x with v written at index, as a function gradcheck can call."""
    def fn(x, v):
        y = x + 0.0
        y[index] = v
        return y
    return fn


def _each_element_once(shape, index) -> bool:
    count = np.zeros(shape, dtype=np.int64)
    np.add.at(count, index, 1)
    return count.max(initial=0) <= 1


@given(case=setitem_case())
def test_setitem_writes_as_numpy_and_its_gradients_agree_with_finite_differences(case):
    """NumPy's write, and gradients; leading axes of v of length 1 are dropped first."""
    x, index, as_numpy, v = case
    expected = x.numpy().copy()
    target = expected[as_numpy].shape
    # leading axes of length 1 dropped first, as PyTorch does (NumPy takes them only for some indices)
    expected[as_numpy] = v.numpy().reshape(v.shape[max(v.ndim - len(target), 0):])
    out = _written(index)(x, v)
    if _each_element_once(x.shape, as_numpy):  # else NumPy keeps one of the writes, unsaid which
        np.testing.assert_array_equal(out.numpy(), expected)
    assert check_gradients(_written(index), x, v)


@given(case=setitem_case())
def test_setitem_matches_pytorch(case):
    """Indices that name each element once (else which write stays is left open by both) and
    without negative steps (PyTorch has none)."""
    x, index, as_numpy, v = case
    parts = as_numpy if isinstance(as_numpy, tuple) else (as_numpy,)
    if not _each_element_once(x.shape, as_numpy) or any(
            isinstance(p, slice) and (p.step or 1) < 0 for p in parts):
        return
    torch = torch_in_example()

    def theirs(tx, tv):
        y = tx + 0.0
        y[tuple(torch.as_tensor(p) if isinstance(p, np.ndarray) else p for p in parts)] = tv
        return y

    parity(_written(index), theirs, x, v)


@pytest.mark.parametrize("index", [np.array([0, 2]), np.array([True, False, True]), (slice(None), 1)],
                         ids=["integer array", "mask", "basic"])
@pytest.mark.parametrize("after, slope", [(lambda z: z.sum(axis=0) * minitx.tensor(np.arange(4.0)), np.arange(4.0)),
                                          (lambda z: z.T * 2.0, 2.0)], ids=["sum over rows", "transposed"])
def test_the_written_places_get_no_gradient_whatever_the_layout_of_dy(index, after, slope):
    """dy may arrive transposed or broadcast (a sum's backward): the places written still get 0."""
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)))
    z = x * 1.0
    z[index] = 0.0
    after(z).sum().backward()
    expected = np.ones((3, 4)) * slope
    expected[index] = 0.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_a_repeated_index_gives_the_gradient_to_the_write_that_stayed():
    """PyTorch gives every entry written to an element that element's gradient; only one stays."""
    x = leaf(np.zeros(3))
    v = leaf(np.array([1.0, 2.0, 3.0, 4.0]))
    y = _written([0, 2, 0, 0])(x, v)
    stayed = int(np.flatnonzero(v.numpy() == y.numpy()[0])[0])
    y.backward(np.array([10.0, 20.0, 30.0]))
    expected = np.zeros(4)
    expected[[stayed, 1]] = [10.0, 30.0]
    np.testing.assert_array_equal(v.grad.numpy(), expected)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 20.0, 0.0])


# ---------------------------------------------------------------------- the graph around a write
def _fill_rows(lib, clone):
    """A buffer filled row by row, each row computed from the one before, then written again."""
    torch = torch_in_example() if lib == "torch" else None
    make = (lambda a, **k: torch.tensor(a, dtype=torch.float64, **k)) if torch else \
        (lambda a, **k: minitx.tensor(a, dtype="float64", **k))
    tanh = torch.tanh if torch else F.tanh
    w = make([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7], [0.1, 0.2, 0.3]], requires_grad=True)
    out = make(np.zeros((4, 3)))
    out[0] = w[0]
    for t in range(1, 4):
        previous = out[t - 1].clone() if clone else out[t - 1]
        out[t] = tanh(previous @ w)
    before = out + 0.0  # used before the next writes: its gradient reaches the values it saw
    out[1, 2] = 7.0
    out[3] = 2 * w[1]
    (out.sum() + (before ** 2).sum()).backward()
    return w.grad.numpy(), out.detach().numpy()


def test_ops_before_a_write_send_their_gradients_to_the_values_they_saw_as_pytorch():
    torch_in_example()
    theirs, ours = _fill_rows("torch", clone=True), _fill_rows("minitx", clone=True)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_a_write_keeps_the_arrays_earlier_ops_saved():
    """The recorded write gives x a new array, so a row read without a copy (PyTorch: "modified by
    an inplace operation") still has its gradient."""
    torch_in_example()
    ours = _fill_rows("minitx", clone=False)
    np.testing.assert_allclose(ours[0], _fill_rows("torch", clone=True)[0], rtol=1e-12, atol=1e-14)


def _views_around_a_write(lib):
    """Views of a buffer and of a computed tensor, taken before recorded writes into them, then
    used after: their values and the gradient through them."""
    torch = torch_in_example() if lib == "torch" else None
    make = (lambda a, **k: torch.tensor(a, dtype=torch.float64, **k)) if torch else \
        (lambda a, **k: minitx.tensor(a, dtype="float64", **k))
    w = make([[1.0, 2.0], [-0.5, 0.25]], requires_grad=True)
    out = make(np.zeros((3, 2)))
    first, flat, detached = out[0], out.reshape(6), out.detach()
    out[0] = w[0] * 3  # a buffer that requires no grad, written with a value that does
    h = w * 2
    t, row, row_t = h.T, h[1], h[1:].T[0]  # views of views
    h.exp_()
    loss = (first * flat[:2]).sum() + (t ** 2).sum() + (row * row_t).sum() + detached.sum()
    loss.backward()
    values = [v.detach().numpy().copy() for v in (first, flat, detached, t, row, row_t)]
    return values, w.grad.numpy().copy()


def test_views_taken_before_a_recorded_write_show_it_and_pass_the_gradient_on_as_pytorch():
    """A view of x (an index, a reshape, a transpose, a view of a view, a detach) taken before a
    recorded write into x shows the new values and its gradient reaches x's new graph."""
    theirs, ours = _views_around_a_write("torch"), _views_around_a_write("minitx")
    for mine, reference in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(mine, reference, rtol=1e-14)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)


def test_an_op_that_took_a_view_before_the_write_sends_its_gradient_to_the_old_values():
    w = minitx.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    h = w * 2
    v = h[:1]
    before = v * 10  # took v while it showed 2 w[0]
    h.exp_()
    (before.sum() + v.sum()).backward()  # 10 * 2 from before; 2 exp(2 w0) from v after the write
    np.testing.assert_allclose(w.grad.numpy(), [20.0 + 2 * np.exp(2.0), 0.0], rtol=1e-15)
    assert before.tolist() == [20.0] and v.tolist() == [np.exp(2.0)]


def test_writes_chain_and_backward_runs_twice_with_retain_graph():
    a = minitx.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    y = a * 2
    y[0] = a[1] ** 2
    y[1:] = y[:2] * a[2]  # reads the written y: x's values after the first write
    assert y.tolist() == [4.0, 12.0, 12.0]
    y.sum().backward(retain_graph=True)
    first = a.grad.numpy().copy()
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), 2 * first)
    # y0 = a1^2, y1 = a1^2 a2, y2 = 2 a1 a2: d/da = [0, 2 a1 + 2 a1 a2 + 2 a2, a1^2 + 2 a1]
    np.testing.assert_array_equal(first, [0.0, 4 + 12 + 6, 4 + 4])


def test_a_write_into_an_integer_index_of_a_0d_result():
    x = leaf(np.array(1.5))
    v = leaf(np.array(4.0))

    def fn(x, v):
        y = x * 1.0
        y[()] = v * x
        return y

    assert check_gradients(fn, x, v)


def test_a_value_with_leading_axes_of_length_1_gets_its_gradient_in_its_shape_as_pytorch():
    torch = torch_in_example()
    for index in (0, [0], np.array([True, False])):
        x = minitx.zeros(2, 3, dtype="float64")
        v = leaf(np.arange(3.0).reshape(1, 1, 3))
        x[index] = v
        (x * minitx.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        tx, tv = torch.zeros(2, 3, dtype=torch.float64), torch.arange(3.0, dtype=torch.float64).reshape(1, 1, 3)
        tv.requires_grad_(True)
        tx[torch.as_tensor(index) if isinstance(index, np.ndarray) else index] = tv
        (tx * torch.arange(6.0, dtype=torch.float64).reshape(2, 3)).sum().backward()
        np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())
        np.testing.assert_array_equal(v.grad.numpy(), tv.grad.numpy())


@pytest.mark.parametrize("index", [(), Ellipsis, np.array(True)], ids=["()", "...", "0-d mask"])
def test_a_write_into_a_0d_tensor_then_used_by_another_op(index):
    """The op after the write hands backward NumPy's 0-d scalar as dy."""
    a = minitx.tensor(1.5, dtype="float64", requires_grad=True)
    v = minitx.tensor(2.0, dtype="float64", requires_grad=True)
    x = a * 1.0
    x[index] = v * a
    (x * 3).backward()
    assert x.item() == 3.0 and a.grad.item() == 6.0 and v.grad.item() == 4.5


def test_hooks_registered_before_a_write_see_the_old_values_gradient_as_pytorch():
    torch = torch_in_example()
    seen = {}

    def run(lib, make, name):
        a = make([1.0, 2.0, 3.0])
        x = a * 2
        x.register_hook(lambda g: seen.setdefault(name, []).append(np.array(g.tolist())))
        y = x * 10
        x[0] = 7.0
        (y.sum() + x.sum()).backward()
        return np.array(a.grad.tolist())

    ours = run("minitx", lambda d: minitx.tensor(d, dtype="float64", requires_grad=True), "ours")
    theirs = run("torch", lambda d: torch.tensor(d, dtype=torch.float64, requires_grad=True), "theirs")
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(seen["ours"][0], seen["theirs"][0])


@pytest.mark.parametrize("row", [lambda t: t, lambda t: np.array([t]), lambda t: np.arange(16) == t],
                         ids=["int", "integer array", "mask"])
def test_the_old_values_are_not_kept_for_each_write(row):
    """A buffer written row by row keeps no copy of itself per row: the graph needs only the old
    node's shape, nothing saved the old arrays here, and a write through an integer array or a
    mask keeps only the places it wrote. (An integer row is written into the buffer's own array:
    minitx.autograd.writes.in_place; the others into a copy, the old array dropped.)"""
    h = minitx.tensor(np.ones(8), requires_grad=True)
    out = minitx.zeros(16, 8)
    arrays = []
    for t in range(16):
        arrays.append(weakref.ref(out.data))
        out[row(t)] = h * t
    gc.collect()
    assert sum(ref() is not None and ref() is not out.data for ref in arrays) == 0
    node, kept = out, 0
    while node.grad_fn is not None and node.grad_fn.name == "set_item":
        kept += sum(a.size for a in node.grad_fn.saved if hasattr(a, "size"))
        node = node.grad_fn.inputs[0]
    assert kept <= 16 * 2 * 8  # at most the 8 places of each row and their entries of v
    out.sum().backward()
    assert h.grad.tolist() == [120.0] * 8


# ---------------------------------------------------------------------- without a gradient
def test_without_a_gradient_the_write_goes_into_the_array_views_and_wrapped_arrays_see_it():
    array = np.zeros((2, 3), dtype=np.float32)
    x = minitx.Tensor(array)
    row = x[1]
    x[1, [0, 2]] = minitx.tensor([5.0, 6.0])
    x[0] = 1  # an int into a float tensor
    assert array.tolist() == [[1.0, 1.0, 1.0], [5.0, 0.0, 6.0]] and row.tolist() == [5.0, 0.0, 6.0]
    mask = minitx.zeros(4, dtype="bool")
    mask[minitx.tensor([1, 3])] = True
    assert mask.tolist() == [False, True, False, True]
    counts = minitx.zeros(3, dtype="int64")
    counts[counts == 0] = 7
    assert counts.tolist() == [7, 7, 7] and counts.dtype == np.int64


def test_dtypes_a_write_takes_beside_numpys_rule():
    mask = minitx.zeros(3, dtype="bool")
    mask[0] = 1  # 0 and 1 into a bool tensor, as PyTorch
    half = minitx.zeros(2, dtype="float16")
    half[:] = minitx.tensor([0.5, 1.5], dtype="bfloat16")  # a float into a float, whatever ml_dtypes says
    assert mask.tolist() == [True, False, False] and half.tolist() == [0.5, 1.5]
    with pytest.raises(TypeError, match="setitem: a value of dtype int64 cannot be written into a tensor of dtype bool"):
        mask[1] = 2


def test_a_refused_write_changes_nothing_not_even_the_version_graphs_check():
    w = minitx.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    with minitx.no_grad():
        for bad in (lambda: w.__setitem__(5, 1.0), lambda: w.__setitem__(0, minitx.ones(2)),
                    lambda: w.__setitem__(np.array([True, False]), 1.0)):
            with pytest.raises((IndexError, ValueError), match="setitem: "):
                bad()
    loss.backward()
    assert w.grad.tolist() == [2.0, 4.0, 6.0]


def test_a_parameter_is_written_under_no_grad_and_graphs_that_saved_it_refuse_their_backward():
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with minitx.no_grad():
        w[0] = 10.0
    assert w.tolist() == [10.0, 2.0] and w.is_leaf
    with pytest.raises(RuntimeError, match=r"'mul' saved .* modified in place"):
        loss.backward()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_tensors_keep_their_dtype_and_take_the_value_rounded(dtype):
    x = minitx.zeros(3, dtype=dtype)
    x[1] = 0.1
    v = minitx.tensor([0.3, 0.7], requires_grad=True)  # float32 into 16 bits, recorded
    y = x * 1.0
    y[[0, 2]] = v
    assert y.dtype == x.dtype and x[1].item() == minitx.tensor(0.1, dtype=dtype).item()
    y.to(dtype="float32").sum().backward()
    assert v.grad.dtype == np.float32 and v.grad.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------- refused
def test_a_leaf_that_requires_grad_is_refused_while_recording_as_pytorch():
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="setitem: a leaf tensor that requires grad cannot be written while a "
                                           "graph is recorded.*no_grad"):
        w[0] = 3.0
    assert w.tolist() == [1.0, 2.0] and w.is_leaf


def test_a_write_into_a_view_of_another_tensor_goes_into_that_tensor_as_pytorch():
    """y[0][1] = v: the view y[0] is written, so y is, with v's gradient (WriteThroughView)."""
    torch = torch_in_example()
    results = []
    for lib in (minitx, torch):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = a * 1.0
        y[0][1] = 5.0
        y.reshape(4)[2:] = a[0] * a[1]
        buffer = lib.zeros(4, 3, dtype=lib.float64)
        buffer[0][1] = a[0, 0]
        buffer.T[2][1:3] = a[1] * 2
        ((y * y).sum() + (buffer * 3).sum()).backward()
        results.append([y.detach().numpy(), buffer.detach().numpy(), a.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


@given(st.data())
def test_write_through_view_gradients(data):
    """WriteThroughView's gradients: a write through a transpose, then an index of it."""
    shape = data.draw(mst.shapes(min_dims=2, max_dims=3, min_side=2))
    x = data.draw(mst.tensors(shape))
    row = data.draw(st.integers(0, shape[-1] - 1))
    v = data.draw(mst.tensors(shape[:-1][::-1]))

    def fn(x, v):
        y = x * 1.0
        y.T[row] = v * y.T[row]
        return y

    assert check_gradients(fn, x, v)


def test_a_write_into_memory_minitx_cannot_follow_is_refused_while_recording():
    """A view of a leaf that requires grad (as PyTorch), a broadcast, and a detached tensor."""
    a = minitx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"setitem: the tensor is a view of a leaf that requires grad, whose "
                                           r"gradient would not see the write"):
        a[0][1] = 5.0
    with pytest.raises(RuntimeError, match="setitem: several elements of the tensor share one memory location"):
        (a * 1).expand(3, 2, 2)[0] = a
    with pytest.raises(RuntimeError, match="setitem: the tensor shares its array with the tensor it was detached"):
        (a * 1).detach()[0] = a[1]
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_bad_values_are_refused_naming_the_op_and_leave_the_tensor_as_it_was():
    x = minitx.zeros(2, 3)
    ints = minitx.zeros(3, dtype="int64")
    with pytest.raises(TypeError, match="setitem: a value of dtype float32 cannot be written into a tensor of dtype "
                                        "int64 .*a float is not truncated into integers"):
        ints[0] = 2.5
    with pytest.raises(ValueError, match=r"setitem: a value of shape \(2,\) cannot be written into x\[0\], of shape "
                                         r"\(3,\) \(x has shape \(2, 3\)\): it must broadcast to it"):
        x[0] = minitx.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"setitem: a value of shape \(2, 3\) cannot be written into x\[0\]"):
        x[0] = minitx.ones(2, 3)
    v = minitx.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    with pytest.raises(ValueError, match=r"setitem: a value of shape \(2,\) cannot be written"):
        y[0] = v
    assert y.is_leaf and not y.requires_grad  # nothing recorded
    with pytest.raises(IndexError, match=r"setitem: index 5 does not fit a tensor of shape \(2, 3\)"):
        x[5] = 1.0
    with pytest.raises(IndexError, match="setitem: index .* does not fit"):
        x[np.array([True, False, True])] = 1.0
    with pytest.raises(IndexError, match=r"setitem: index array\(\[5\]\) does not fit a tensor of shape \(2, 3\)"):
        x[minitx.tensor([5])] = 1.0  # (the index tensor shown, not its placeholder None)
    with pytest.raises(ValueError, match=r"written into x\[\(array\(\[0\]\), slice\(None, None, None\)\)\]"):
        x[minitx.tensor([0]), :] = minitx.ones(2)
    with pytest.raises(TypeError, match="setitem: index arrays must be integer or boolean, got dtype float64"):
        x[np.array([0.0])] = 1.0
    assert x.tolist() == [[0.0] * 3] * 2 and ints.tolist() == [0, 0, 0]


# ---------------------------------------------------------------------- on the GPU
@pytest.mark.gpu
@pytest.mark.parametrize("index", [(1, slice(None, None, -2)), ([0, 2, 0], slice(1, None)),
                                   "mask", "tensor"], ids=["basic", "repeated", "mask", "tensor"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_setitem_on_cupy_agrees_with_numpy(index, dtype):
    """On CuPy which write to a repeated element stays is the hardware's: the value there and the
    one entry of v that gets its gradient must agree."""
    rng = np.random.default_rng(0)
    x, weights = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    results = {}
    for device in ("cpu", "cuda"):
        where = {"mask": minitx.tensor(x > 0, device=device), "tensor": minitx.tensor([2, 0], device=device)
                 }[index] if isinstance(index, str) else index
        t = minitx.tensor(x, dtype=dtype, device=device, requires_grad=True)
        y = t * 1.0
        target = x[where.numpy() if isinstance(where, minitx.Tensor) else where].shape
        v = minitx.tensor(np.arange(1.0, 1.0 + np.prod(target)).reshape(target), dtype=dtype, device=device,
                          requires_grad=True)
        y[where] = v
        (y * minitx.tensor(weights, dtype=dtype, device=device)).sum().backward()
        results[device] = [a.to(dtype="float32").numpy() for a in (y, t.grad, v.grad, v)]
    (y_cpu, dx_cpu, dv_cpu, v_rows), (y_gpu, dx_gpu, dv_gpu, _) = results["cpu"], results["cuda"]
    np.testing.assert_array_equal(dx_gpu, dx_cpu)
    if isinstance(index, tuple) and isinstance(index[0], list):  # row 0 written by v's rows 0 and 2
        np.testing.assert_array_equal(y_gpu[1:], y_cpu[1:])
        np.testing.assert_array_equal(dv_gpu[1], dv_cpu[1])
        for y, dv in ((y_cpu, dv_cpu), (y_gpu, dv_gpu)):
            stayed = [k for k in (0, 2) if np.array_equal(y[0, 1:], v_rows[k])]
            assert len(stayed) == 1 and dv[2 - stayed[0]].tolist() == [0.0] * 3 and dv[stayed[0]].any()
    else:
        np.testing.assert_array_equal(y_gpu, y_cpu)
        np.testing.assert_array_equal(dv_gpu, dv_cpu)
