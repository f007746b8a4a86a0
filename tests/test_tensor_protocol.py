"""Tensor and Python's protocols: augmented assignment in place, iteration, item assignment,
``.grad`` assignment, comparisons with what is no tensor, ``+t``, ``__index__``, ``__format__``,
and ``@no_grad`` without parentheses; with PyTorch's behaviour where it has one."""
import operator

import numpy as np
import pytest

import minitx
from minitx import nn
from torch_reference import import_torch

# (operator symbol, in-place operator, out-of-place operator) for float tensors and integer ones
FLOAT_OPS = [("+=", operator.iadd, operator.add), ("-=", operator.isub, operator.sub),
             ("*=", operator.imul, operator.mul), ("/=", operator.itruediv, operator.truediv),
             ("//=", operator.ifloordiv, operator.floordiv), ("%=", operator.imod, operator.mod),
             ("**=", operator.ipow, operator.pow)]
INT_OPS = [("&=", operator.iand, operator.and_), ("|=", operator.ior, operator.or_),
           ("^=", operator.ixor, operator.xor), ("<<=", operator.ilshift, operator.lshift),
           (">>=", operator.irshift, operator.rshift)]


def _float_operands():
    rng = np.random.default_rng(0)
    return rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (2, 3))


# ---------------------------------------------------------------------- augmented assignment
def test_a_hand_written_sgd_step_updates_the_parameters_in_place():
    """``p -= lr * p.grad`` under no_grad, over model.parameters(): the parameters the model
    holds change, as optim.SGD changes them (and as the same loop does in PyTorch)."""
    def trained(step):
        minitx.manual_seed(0)
        model = nn.Linear(3, 2)
        x = minitx.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
        for _ in range(3):
            model.zero_grad()
            (model(x) ** 2).mean().backward()
            step(model)
        return [p.numpy() for p in model.parameters()], model

    def by_hand(model):
        with minitx.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad

    optimizers = {}

    def by_sgd(model):
        optimizers.setdefault("sgd", minitx.optim.SGD(model.parameters(), lr=0.1)).step()

    hand, model = trained(by_hand)
    sgd, _ = trained(by_sgd)
    minitx.manual_seed(0)
    untouched = [p.numpy() for p in nn.Linear(3, 2).parameters()]
    for h, s, u in zip(hand, sgd, untouched):
        np.testing.assert_allclose(h, s, rtol=1e-6)
        assert not np.allclose(h, u)
    assert all(p.is_leaf and p.requires_grad for p in model.parameters())


def test_a_hand_written_sgd_step_matches_pytorchs():
    torch = import_torch()
    w0 = np.array([[1.0, -2.0], [0.5, 3.0]])
    x0 = np.array([[1.0, 2.0], [-1.0, 0.5]])
    w, tw = minitx.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    alias, t_alias = w, tw
    for _ in range(2):
        ((minitx.tensor(x0) @ w) ** 2).sum().backward()
        ((torch.tensor(x0) @ tw) ** 2).sum().backward()
        with minitx.no_grad():
            w -= 0.01 * w.grad
        with torch.no_grad():
            tw -= 0.01 * tw.grad
        w.grad, tw.grad = None, None
    assert w is alias and tw is t_alias
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("symbol, iop, op", FLOAT_OPS)
def test_augmented_assignment_writes_into_the_tensor_as_pytorch(symbol, iop, op):
    torch = import_torch()
    a, b = _float_operands()
    x, tx = minitx.tensor(a), torch.tensor(a)
    alias, t_alias = x, tx
    expected = op(x, minitx.tensor(b)).numpy()
    x = iop(x, minitx.tensor(b))
    tx = iop(tx, torch.tensor(b))
    assert x is alias and tx is t_alias  # the same tensor, so every other reference sees the update
    np.testing.assert_array_equal(alias.numpy(), expected)
    np.testing.assert_allclose(alias.numpy(), t_alias.numpy(), rtol=1e-12)
    x = iop(x, 0.5)  # a Python number as the other operand
    tx = iop(tx, 0.5)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-12)


@pytest.mark.parametrize("symbol, iop, op", INT_OPS)
def test_bitwise_augmented_assignment_writes_into_integer_tensors_as_pytorch(symbol, iop, op):
    torch = import_torch()
    a, b = np.array([5, -3, 12, 7]), np.array([3, 1, 2, 0])
    x, tx = minitx.tensor(a), torch.tensor(a)
    alias = x
    x = iop(x, minitx.tensor(b))
    tx = iop(tx, torch.tensor(b))
    assert x is alias and x.dtype == np.int64
    np.testing.assert_array_equal(alias.numpy(), tx.numpy())
    mask = minitx.tensor([True, False, True])
    kept = mask
    mask = iop(mask, minitx.tensor([False, False, True])) if symbol in ("&=", "|=", "^=") else mask
    assert mask is kept


def test_matmul_in_place_needs_a_result_of_the_tensors_shape():
    torch = import_torch()
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    x, tx = minitx.tensor(a), torch.tensor(a)
    alias = x
    x @= minitx.tensor(b)
    tx @= torch.tensor(b)
    assert x is alias
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    with pytest.raises(ValueError, match=r"@=: the result has shape \(2, 3\), and an in-place op keeps the "
                                         r"tensor's shape \(2, 2\)"):
        x @= minitx.ones(2, 3, dtype="float64")


def test_in_place_keeps_the_tensors_dtype_by_same_kind_casting_as_pytorch():
    torch = import_torch()
    x, tx = minitx.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    x += minitx.tensor(np.array([0.1, 0.2]))  # float64 into float32: stays float32
    tx += torch.tensor(np.array([0.1, 0.2]))
    assert x.dtype == np.float32 and tx.dtype == torch.float32
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    small, t_small = minitx.tensor([100], dtype="int8"), torch.tensor([100], dtype=torch.int8)
    small += minitx.tensor([100])  # int64 into int8: wraps, as PyTorch
    t_small += torch.tensor([100])
    assert small.dtype == np.int8 and small.tolist() == t_small.tolist()
    n, tn = minitx.tensor([1, 2]), torch.tensor([1, 2])
    with pytest.raises(TypeError, match=r"\+=: the result has dtype float32, which cannot be stored in the "
                                        r"tensor's dtype int64"):
        n += 0.5
    with pytest.raises(TypeError, match="/=: the result has dtype float32"):
        n /= 2
    with pytest.raises(RuntimeError):  # PyTorch refuses too
        tn += 0.5
    assert n.tolist() == [1, 2]  # nothing written


def test_in_place_refuses_to_broadcast_the_tensor_itself_as_pytorch():
    torch = import_torch()
    x = minitx.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"\+=: the result has shape \(2, 3\), and an in-place op keeps the "
                                         r"tensor's shape \(3,\) \(the tensor is not broadcast\); write x = x \+ y"):
        x += minitx.ones(2, 3)
    with pytest.raises(RuntimeError):
        tx = torch.tensor([1.0, 2.0, 3.0])
        tx += torch.ones(2, 3)
    x += minitx.ones(1, 3)[0]  # the other operand may broadcast
    assert x.tolist() == [2.0, 3.0, 4.0]


def test_in_place_on_a_leaf_that_requires_grad_is_refused_while_recording_as_pytorch():
    """Under no_grad the write happens, and the tensor stays a leaf that requires grad."""
    torch = import_torch()
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\+=: a leaf tensor that requires grad cannot be changed in place "
                                           r"while a graph is recorded .*write x = x \+ y.*minitx.no_grad\(\)"):
        w += 1
    tw = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        tw += 1
    assert w.tolist() == [1.0, 2.0]
    c = minitx.tensor([1.0, 1.0])
    with minitx.no_grad():
        w += 1
        c -= w
    assert w.tolist() == [2.0, 3.0] and c.tolist() == [-1.0, -2.0]
    assert w.is_leaf and w.requires_grad and not c.requires_grad
    (w * w).sum().backward()  # still a working leaf
    assert w.grad.tolist() == [4.0, 6.0]


def test_accumulating_with_gradients_gives_a_new_tensor_with_pytorchs_gradients():
    """While recording, x += y with a gradient involved (x an intermediate, or y requiring grad)
    is x = x + y: loss += part accumulates, and the gradients are PyTorch's."""
    torch = import_torch()
    w, tw = minitx.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    loss, tloss = 0, 0
    for i in range(1, 4):
        loss += (w * i).sum()
        tloss += (tw * i).sum()
    h, th = w * 2, tw * 2
    h *= w
    th *= tw
    acc, tacc = minitx.zeros(2, dtype="float64"), torch.zeros(2, dtype=torch.float64)
    acc -= w
    tacc -= tw
    assert acc.requires_grad and not acc.is_leaf
    (loss + h.sum() + acc.sum()).backward()
    (tloss + th.sum() + tacc.sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    f32 = minitx.tensor([1.0, 2.0], dtype="float32") * minitx.tensor(1.0, requires_grad=True, dtype="float32")
    f32 += minitx.tensor([1.0, 1.0], dtype="float64")
    assert f32.dtype == np.float32  # the dtype the write would have kept


def test_in_place_through_a_view_reaches_the_tensor_it_views_as_pytorch():
    torch = import_torch()
    a = np.arange(12.0).reshape(3, 4)
    y, ty = minitx.tensor(a), torch.tensor(a)
    for pick in (lambda t: t[0], lambda t: t[:, 1], lambda t: t[1:, ::2], lambda t: t[..., -1], lambda t: t[2, 3],
                 lambda t: t[-1][0]):  # integers only: a 0-d view (NumPy alone would give a copied scalar)
        v, tv = pick(y), pick(ty)
        v += 10
        tv += 10
        v *= 2
        tv *= 2
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
    assert not np.array_equal(y.numpy(), a)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_16_bit_view_is_a_view_too(dtype):
    """Reshapes, transposes and basic indices only move values: 16-bit arrays go in as they are (no
    float32 round trip, which made a copy), so a write through the view reaches the tensor, while
    recording too, as in float32."""
    torch = import_torch()
    y, ty = minitx.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dtype), torch.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                                               dtype=getattr(torch, dtype))
    for pick in (lambda t: t[1], lambda t: t[0, 1], lambda t: t.reshape(4), lambda t: t.T):
        v, tv = pick(y), pick(ty)
        v += 10
        tv += 10
        assert y.numpy().astype(np.float64).tolist() == ty.double().numpy().tolist()
    w = minitx.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    y = w * 2.0
    v = y[0]
    v += 1
    assert y.dtype == dtype and y.numpy().astype(np.float64).tolist() == [3.0, 4.0]


def test_in_place_through_a_view_while_recording_writes_the_tensor_viewed_as_pytorch():
    """PyTorch records a write through a view and the tensor viewed changes, with its gradient; so
    does minitx (WriteThroughView)."""
    torch = import_torch()
    w, tw = minitx.tensor(np.ones((2, 3)), requires_grad=True), torch.ones(2, 3, dtype=torch.float64,
                                                                            requires_grad=True)
    for pick in (lambda t: t[0], lambda t: t[1, 2], lambda t: t.reshape(6),
                 lambda t: t.transpose(1, 0) if isinstance(t, minitx.Tensor) else t.t()):
        y, ty = w * 1.0, tw * 1.0
        v, tv = pick(y), pick(ty)
        v += w[0, 0] * 10
        tv += tw[0, 0] * 10
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
        np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
        w.grad, tw.grad = None, None
    fresh = w * 2.0  # an op result of its own memory still accumulates as x = x + y
    fresh += w
    fresh.sum().backward()
    assert w.grad.tolist() == np.full((2, 3), 3.0).tolist()


def test_in_place_counts_a_version_so_a_graph_that_saved_the_tensor_refuses_backward():
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    x = minitx.tensor([3.0, 4.0])
    y = (x * w).sum()  # mul saved x for w's gradient
    x += 1  # x needs no grad: allowed, but the gradient would now be wrong
    with pytest.raises(RuntimeError, match="modified in place after the forward pass"):
        y.backward()
    z = (x * w).sum()
    v = x[1:]  # a view made while mul holds x's array read-only
    with minitx.no_grad():
        v += 1
    assert x.tolist() == [4.0, 6.0]
    with pytest.raises(RuntimeError, match="modified in place after the forward pass"):
        z.backward()


def test_in_place_is_refused_where_elements_share_memory_or_the_array_is_read_only():
    b = minitx.ones(3).broadcast_to((2, 3))
    with pytest.raises(RuntimeError, match=r"\+=: several elements of the tensor share one memory location"):
        b += 1
    frozen = np.ones(3)
    frozen.setflags(write=False)
    t = minitx.Tensor(frozen)
    with pytest.raises(RuntimeError, match=r"\*=: the tensor's array is read-only"):
        t *= 2
    assert not frozen.flags.writeable and frozen.tolist() == [1.0, 1.0, 1.0]


def test_a_0d_tensor_is_updated_in_place():
    loss_sum = minitx.tensor(0.0)
    alias = loss_sum
    for value in (1.5, 2.0):
        loss_sum += minitx.tensor(value)
    assert alias is loss_sum and loss_sum.item() == 3.5 and loss_sum.shape == ()


# ---------------------------------------------------------------------- iteration and item assignment
def test_iterating_a_0d_tensor_raises_as_pytorch():
    torch = import_torch()
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(minitx.tensor(3.0))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(torch.tensor(3.0))


def test_iterating_gives_the_rows_with_gradients_flowing():
    torch = import_torch()
    a = np.arange(6.0).reshape(3, 2)
    x, tx = minitx.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    rows, t_rows = list(x), list(tx)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    for k, (r, tr) in enumerate(zip(rows, t_rows)):
        np.testing.assert_array_equal(r.numpy(), tr.detach().numpy())
    sum((k + 1) * r.sum() for k, r in enumerate(rows)).backward()
    sum((k + 1) * r.sum() for k, r in enumerate(t_rows)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert list(minitx.zeros(0, 2)) == []


@pytest.mark.parametrize("index", [0, slice(None), (Ellipsis, 1), np.array([True, False]),
                                   minitx.tensor([0, 1])])
def test_item_assignment_writes_as_numpy(index):
    """The op itself, its gradients and its edges: tests/ops/test_setitem.py."""
    y = minitx.zeros(2, 3)
    expected = np.zeros((2, 3), dtype=np.float32)
    expected[index.numpy() if isinstance(index, minitx.Tensor) else index] = 1.0
    y[index] = 1.0
    np.testing.assert_array_equal(y.numpy(), expected)


# ---------------------------------------------------------------------- .grad assignment
def test_grad_assignment_takes_a_floating_tensor_of_the_shape():
    torch = import_torch()
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    w.grad = minitx.tensor([0.5, 0.5])
    (w * w).sum().backward()  # adds into the assigned gradient
    assert w.grad.tolist() == [2.5, 4.5]
    w.grad = minitx.tensor(np.array([1.0, 1.0]))  # another floating dtype is kept
    assert w.grad.dtype == np.float64
    del w.grad
    assert w.grad is None
    w.grad = None
    low = minitx.tensor([1.0, 2.0], dtype="bfloat16", requires_grad=True)
    low.grad = minitx.tensor([1.0, 1.0], dtype="bfloat16")
    tw = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):  # PyTorch refuses a wrong shape too
        tw.grad = torch.ones(3)


@pytest.mark.parametrize("value, error, message", [
    (minitx.ones(3), ValueError, r"\.grad: expected None or a floating-point Tensor of shape \(2,\) on cpu, "
                                 r"got shape \(3,\)"),
    (minitx.ones(2, 1), ValueError, r"got shape \(2, 1\)"),
    (minitx.tensor([1, 2]), TypeError, r"\.grad: expected .*, got dtype int64"),
    (np.ones(2), TypeError, r"\.grad: expected .*, got ndarray \(wrap an array with minitx.tensor\)"),
    ([1.0, 2.0], TypeError, r"\.grad: expected .*, got list"),
])
def test_grad_assignment_refuses_what_backward_could_not_add_into(value, error, message):
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(error, match=message):
        w.grad = value
    assert w.grad is None
    with pytest.raises(RuntimeError, match=r"\.grad: a tensor cannot be its own gradient"):
        w.grad = w


# ---------------------------------------------------------------------- comparisons, +t, __index__, __format__
def test_comparing_with_none_or_a_string_is_pythons_as_pytorch():
    torch = import_torch()
    t, tt = minitx.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    for other in (None, "a", object()):
        assert (t == other) is False and (tt == other) is False
        assert (t != other) is True and (tt != other) is True
        with pytest.raises(TypeError, match="not supported between instances of 'Tensor'"):
            t < other  # noqa: B015
        with pytest.raises(TypeError):
            tt < other  # noqa: B015
    assert t not in [None, "a"]
    # numbers, NumPy scalars, arrays and lists still compare element by element
    assert (t == np.float64(2.0)).tolist() == [False, True]
    assert (t >= np.bool_(True)).tolist() == [True, True]
    assert (t == np.array([1.0, 0.0])).tolist() == [True, False]
    assert (t < [2.0, 2.0]).tolist() == [True, False]


def test_unary_plus_is_the_tensor_itself_as_pytorch():
    torch = import_torch()
    x, tx = minitx.tensor([1.0, np.nan, -np.inf], requires_grad=True), torch.tensor([1.0, np.nan, -np.inf])
    assert (+x) is x and (+tx) is tx
    (+x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert (+minitx.tensor([3], dtype="uint8")).tolist() == [3]
    with pytest.raises(TypeError, match=r"\+ \(positive\): not defined for boolean tensors"):
        +minitx.tensor([True])
    with pytest.raises(RuntimeError):
        +torch.tensor([True])


def test_a_0d_integer_tensor_is_an_index_as_pytorch():
    torch = import_torch()
    start, stop, t_start, t_stop = minitx.tensor(1), minitx.tensor(3), torch.tensor(1), torch.tensor(3)
    a = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(minitx.tensor(a)[start:stop].numpy(), torch.tensor(a)[t_start:t_stop].numpy())
    assert operator.index(stop) == operator.index(t_stop) == 3
    assert list(range(stop)) == list(range(t_stop)) == [0, 1, 2]
    assert ["a", "b", "c"][start] == "b"
    assert operator.index(minitx.tensor(5, dtype="uint8")) == 5
    for bad in (minitx.tensor(3.0), minitx.tensor([3]), minitx.tensor(True)):
        with pytest.raises(TypeError, match="__index__: only a 0-d integer tensor converts to an index"):
            operator.index(bad)


def test_format_of_a_0d_tensor_formats_its_number_as_pytorch():
    torch = import_torch()
    loss = (minitx.tensor([1.0, 2.0], requires_grad=True) ** 2).sum() / 3
    t_loss = (torch.tensor([1.0, 2.0], requires_grad=True) ** 2).sum() / 3
    for spec in (".4f", ".2e", "8.3g", ""):
        assert format(loss, spec) == format(t_loss, spec) == format(loss.item(), spec)
    assert f"{minitx.tensor(7):>4d}" == "   7"
    v = minitx.ones(2)
    assert format(v) == f"{v}" == str(v)
    with pytest.raises(TypeError, match=r"format: the spec '.2f' applies to 0-d tensors .* got shape \(2,\)"):
        f"{v:.2f}"
    with pytest.raises(TypeError):
        f"{torch.ones(2):.2f}"


# ---------------------------------------------------------------------- no_grad as a bare decorator
def test_no_grad_and_enable_grad_decorate_without_parentheses_as_pytorch():
    torch = import_torch()

    @minitx.no_grad
    def bare(x):
        """Doubles x."""
        return x * 2, minitx.is_grad_enabled()

    @minitx.no_grad()
    def called(x):
        return x * 2, minitx.is_grad_enabled()

    @torch.no_grad
    def t_bare(x):
        return x * 2

    x = minitx.tensor([1.0], requires_grad=True)
    for fn in (bare, called):
        y, enabled = fn(x)
        assert not enabled and not y.requires_grad
    assert bare.__name__ == "bare" and bare.__doc__ == "Doubles x."
    assert minitx.is_grad_enabled()
    assert not t_bare(torch.ones(1, requires_grad=True)).requires_grad

    @minitx.enable_grad
    def recording(x):
        return x * 2

    with minitx.no_grad():
        assert recording(x).requires_grad
    with pytest.raises(TypeError, match=r"no_grad: takes no arguments .*got int"):
        minitx.no_grad(3)
    with minitx.no_grad() as mode:
        assert isinstance(mode, minitx.no_grad) and not minitx.is_grad_enabled()


# ---------------------------------------------------------------------- Tensor(array) shares
def test_Tensor_wraps_the_array_without_copying_and_tensor_copies():
    """As the class docstring says: an optimizer step on Tensor(a) changes a; tensor(a) does not."""
    a, b = np.ones(3, np.float32), np.ones(3, np.float32)
    shared, copied = minitx.Tensor(a, requires_grad=True), minitx.tensor(b, requires_grad=True)
    assert shared.data is a and copied.data is not b
    (shared.sum() + copied.sum()).backward()
    minitx.optim.SGD([shared, copied], lr=0.5).step()
    assert a.tolist() == [0.5] * 3 and b.tolist() == [1.0] * 3
    assert "without copying" in minitx.Tensor.__doc__


@pytest.mark.parametrize("dtype", ["float32", np.float64, np.dtype("int32")])
def test_to_takes_a_dtype_in_the_devices_place_as_pytorch(dtype):
    x = minitx.tensor([1.5, -2.0], dtype="float64")
    assert x.to(dtype).dtype == np.dtype(dtype) == x.to(dtype=dtype).dtype
    assert x.to("cpu") is x and x.to("float64") is x  # nothing to change: the tensor itself
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        x.to(device="gpu")


# ---------------------------------------------------------------------- NumPy's copy contract
@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # (PyTorch's __array__ has no copy)
def test_np_array_copies_and_np_asarray_shares_as_numpy_asks_and_as_pytorch():
    """np.array(t) is a snapshot (NumPy's copy=True, PyTorch's answer), np.asarray(t) the tensor's
    memory; copy=False where a cast is needed is NumPy's ValueError."""
    torch = import_torch()
    w, t_w = minitx.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    for snapshot in (np.array(w), np.array(w, copy=True), np.array(w, dtype=np.float32)):
        snapshot[0] = 9.0
    t_snapshot = np.array(t_w)
    t_snapshot[0] = 9.0
    assert w.tolist() == t_w.tolist() == [1.0, 2.0]
    np.asarray(w)[1] = 5.0
    np.asarray(t_w)[1] = 5.0
    assert w.tolist() == t_w.tolist() == [1.0, 5.0]
    assert np.shares_memory(np.array(w, copy=False), w.numpy())
    with pytest.raises(ValueError, match="without a copy"):
        np.array(w, dtype=np.float64, copy=False)
    assert np.array(w, dtype=np.float64).dtype == np.float64


def test_in_asks_whether_an_entry_equals_as_pytorch():
    """``v in t`` is ``(t == v).any()``, as PyTorch's: a row of a matrix, a number in a 0-d tensor."""
    torch = import_torch()
    rows = [[1.0, 2.0], [3.0, 4.0]]
    m, t_m = minitx.tensor(rows), torch.tensor(rows)
    for v in ([1.0, 2.0], [1.0, 4.0], [5.0, 6.0]):
        assert (minitx.tensor(v) in m) == (torch.tensor(v) in t_m)
    assert (minitx.tensor([1.0, 2.0]) in m) and minitx.tensor([5.0, 6.0]) not in m
    for v in (3.0, 3, 7):
        assert (v in m) == (v in t_m) == (v in minitx.tensor(3.0)) == (v in torch.tensor(3.0))
    assert None not in m and "a" not in m


def test_to_takes_pytorchs_dtype_first_and_tensor_first_forms_with_non_blocking_and_copy():
    """to(dtype, non_blocking, copy) and to(other, non_blocking, copy), by position as PyTorch's
    (True in the second place was read as a dtype); to(other) takes its device with its dtype."""
    torch = import_torch()
    x, t_x = minitx.tensor([1.5, -2.0]), torch.tensor([1.5, -2.0])
    other, t_other = minitx.tensor([1], dtype="int32"), torch.tensor([1], dtype=torch.int32)
    assert x.to(minitx.float64, True).dtype == "float64" and t_x.to(torch.float64, True).dtype == torch.float64
    assert x.to(minitx.float32, False) is x and t_x.to(torch.float32, False) is t_x
    assert (x.to(minitx.float32, False, True) is x) == (t_x.to(torch.float32, False, True) is t_x) is False
    assert (x.to(minitx.float32, False, copy=True) is x) == (t_x.to(torch.float32, False, copy=True) is t_x)
    assert x.to(other, True).dtype == "int32" and t_x.to(t_other, True).dtype == torch.int32
    assert (x.to(x, False, True) is x) == (t_x.to(t_x, False, True) is t_x) is False
    assert x.to(x) is x and x.to(other).device == other.device
    with pytest.raises(TypeError, match="as a second dtype; after a dtype or a tensor come non_blocking and copy"):
        x.to("float32", "float64")
