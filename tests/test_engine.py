"""The backward engine (minitx/autograd): accumulation, broadcasting, grad modes, graph freeing."""

import numpy as np
import pytest
from hypothesis import given

from torch_reference import import_torch

import minitx
import minitx.functional as F
import minitx.optim
from minitx.autograd import topological_order, unbroadcast
from minitx.testing import strategies as mst


def leaf(values, dtype="float64"):
    return minitx.tensor(values, dtype=dtype, requires_grad=True)


def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    for expected in ([2.0, 4.0], [4.0, 8.0]):
        (x * x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_a_tensor_used_several_times_gets_the_sum():
    x = leaf([1.0, -2.0, 3.0])
    y = x * 3.0 + x * x + F.exp(x) - x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 + 2 * x.numpy() + np.exp(x.numpy()) - 1)


@given(shapes=mst.broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_broadcasting_is_undone_in_the_gradients(shapes):
    a, b = (leaf(np.ones(s)) for s in shapes)
    (a * b * 2.0).sum().backward()
    out_size = int(np.prod(np.broadcast_shapes(*shapes)))
    for t in (a, b):
        assert t.grad.shape == t.shape
        np.testing.assert_allclose(t.grad.numpy().sum(), 2.0 * out_size)


def test_unbroadcast_rejects_impossible_shapes():
    with pytest.raises(RuntimeError, match="cannot be reduced"):
        unbroadcast(np.ones(3), (2, 3))
    with pytest.raises(RuntimeError, match="does not match"):
        unbroadcast(np.ones((2, 3)), (4,))


def test_no_grad_context_manager_records_nothing():
    x = leaf([1.0, 2.0])
    with minitx.no_grad():
        assert not minitx.is_grad_enabled()
        y = x * 2.0
        with minitx.enable_grad():
            z = x * 2.0
    assert minitx.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    assert z.requires_grad and not z.is_leaf


def test_no_grad_as_decorator_restores_the_mode():
    x = leaf([1.0])

    @minitx.no_grad()
    def evaluate(t):
        inner = minitx.enable_grad()(lambda: t * 2.0)()
        return t * 2.0, inner

    y, inner = evaluate(x)
    assert not y.requires_grad and inner.requires_grad
    assert evaluate.__name__ == "evaluate"
    assert (x * 2.0).requires_grad


@pytest.mark.parametrize("mode", [minitx.no_grad, minitx.inference_mode, lambda: minitx.set_grad_enabled(False)])
def test_a_decorated_generator_runs_each_step_in_the_mode_as_pytorch(mode):
    # its body runs at each next(), after the decorator's call has returned: PyTorch wraps each step
    x = leaf([1.0])
    records = False

    @mode()
    def steps():
        for _ in range(2):
            received = yield (x * 2.0).requires_grad, minitx.is_grad_enabled()
            assert received == "sent"

    made = steps()
    assert minitx.is_grad_enabled()
    assert next(made) == (records, records)
    assert minitx.is_grad_enabled()  # (between steps, the caller's mode)
    assert made.send("sent") == (records, records)
    with pytest.raises(StopIteration):
        made.send("sent")
    assert minitx.is_grad_enabled() and steps.__name__ == "steps"


def test_enable_grad_decorates_a_generator_inside_no_grad():
    x = leaf([1.0])

    @minitx.enable_grad()
    def steps():
        yield (x * 2.0).requires_grad

    with minitx.no_grad():
        assert list(steps()) == [True]
        assert not minitx.is_grad_enabled()


def test_inference_mode_takes_pytorchs_mode_argument():
    x = leaf([1.0])
    with minitx.no_grad():
        with minitx.inference_mode(False):  # as PyTorch's: inference mode off, the gradient recorded
            assert (x * 2.0).requires_grad
        with minitx.inference_mode(mode=True):
            assert not (x * 2.0).requires_grad
    assert not minitx.inference_mode(True)(lambda: (x * 2.0).requires_grad)()
    assert minitx.inference_mode()(lambda: minitx.is_grad_enabled())() is False


def test_no_grad_restores_the_mode_after_an_exception():
    with pytest.raises(KeyError):
        with minitx.no_grad():
            raise KeyError("x")
    assert minitx.is_grad_enabled()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match=r"graph through '\w+' was already freed.*retain_graph=True"):
        y.backward()


def test_saved_arrays_are_freed_after_backward():
    x = leaf([[1.0, 2.0], [3.0, 0.5]])
    y = F.softmax(x)
    op = y._ctx
    assert len(op.saved) == 1
    (y * y).sum().backward()
    assert op.saved == ()
    assert op._released


def test_long_chain_backpropagates_without_recursion():
    x = leaf(1.0)
    y = x
    n = 100_000
    for _ in range(n):
        y = F.neg(y)
    y.backward()  # a recursive walk would raise RecursionError (or crash) long before this depth
    assert x.grad.item() == 1.0  # (-1) ** 100000
    assert len(topological_order(y)) == n + 1  # each op visited once: linear in the graph
    del y  # dropping a 100,000-deep graph must not overflow the C stack either
    # (no wall-clock limit: the property is no recursion and one visit per op, which the lines above
    # check; a time limit only measured how busy the machine was)


@pytest.mark.parametrize("call, error, message", [
    (lambda x: (x * 2.0).backward(), RuntimeError, r"output has shape \(3,\).*single-element.*grad="),
    (lambda x: minitx.tensor([1.0, 2.0]).sum().backward(), RuntimeError, "does not require grad"),
    (lambda x: (x * 2.0).backward(np.ones(2)), ValueError, r"grad has shape \(2,\), expected .* \(3,\)"),
    (lambda x: x.detach().sum().backward(), RuntimeError, "does not require grad"),
])
def test_backward_misuse_raises_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(leaf([1.0, 2.0, 3.0]))


class BadBackward(minitx.Function):
    """y = x + 0, with a backward chosen by the test."""

    def __init__(self, backward):
        self.backward = backward

    def forward(self, x):
        return x + 0


@pytest.mark.parametrize("backward, message", [
    (lambda dy: (dy, dy), r"bad_backward.backward returned 2 gradients for 1 inputs"),
    (lambda dy: (dy[:1],), r"bad_backward.backward: gradient of shape \(1,\) does not match input shape \(3,\)"),
    (lambda dy: (dy.sum(),), r"bad_backward.backward: gradient of shape \(\) cannot be reduced to \(3,\)"),
])
def test_a_backward_returning_the_wrong_gradients_is_named(backward, message):
    with pytest.raises(RuntimeError, match=message):
        BadBackward(backward)(leaf([1.0, 2.0, 3.0])).sum().backward()


class Pair(minitx.Function):
    """y = x * w, with a backward chosen by the test."""

    def __init__(self, backward):
        self.backward = backward

    def forward(self, x, w):
        return x * w


@pytest.mark.parametrize("backward, error, message", [
    (lambda dy: (1.0, dy), TypeError, r"pair.backward returned a float for input 0; expected an array"),
    (lambda dy: (dy, [1.0, 1.0, 1.0]), TypeError, r"pair.backward returned a list for input 1"),
])
def test_a_backward_returning_something_other_than_arrays_is_named(backward, error, message):
    with pytest.raises(error, match=message):
        Pair(backward)(leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])).sum().backward()


def test_a_custom_op_may_return_tensors_and_a_list_of_gradients_as_pytorchs():
    class Scale(minitx.Function):
        def forward(self, x, w):
            return minitx.tensor(x * w)  # a PyTorch user's habit: a Tensor, not an array

        def backward(self, dy):
            return [minitx.tensor(dy * 3.0), None]

    x, w = leaf([1.0, 2.0]), minitx.tensor([3.0, 3.0], dtype="float64")
    y = Scale()(x, w)
    assert type(y.data) is np.ndarray  # not a Tensor inside a Tensor
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [18.0, 36.0])
    assert type(x.grad.data) is np.ndarray


def test_a_forward_returning_several_values_is_named():
    class Two(minitx.Function):
        def forward(self, x):
            return x, 2 * x

    with pytest.raises(TypeError, match=r"two.forward returned a tuple; expected one array"):
        Two()(leaf([1.0]))


def test_pytorchs_static_function_style_is_refused_naming_minitxs():
    with pytest.raises(TypeError, match=r"Static.forward is a staticmethod.*self.save_for_backward"):
        class Static(minitx.Function):  # noqa: F841 (defining it raises)
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, dy):
                return dy

    class Method(minitx.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    with pytest.raises(TypeError, match=r"called on the class, as in PyTorch .*; call an instance, MyOp\(\)\(x\)"):
        Method.apply(leaf([1.0]))


def test_a_hook_returning_something_other_than_a_tensor_is_named():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: 3.0)
    with pytest.raises(TypeError, match=r"a gradient hook returned a float; expected a Tensor"):
        (x * 2.0).sum().backward()


@pytest.mark.parametrize("returned, change", [
    (lambda g: g.astype("float32"), r"changed the dtype of the gradient \(was float64, got float32\)"),
    (lambda g: g.astype("int64"), r"changed the dtype of the gradient \(was float64, got int64\)"),
    (lambda g: g.reshape(1, 2), r"changed the shape of the gradient \(was \(2,\), got \(1, 2\)\)"),
    (lambda g: g.numpy()[:1], r"changed the shape of the gradient \(was \(2,\), got \(1,\)\)"),
], ids=["float32", "int64", "reshaped", "array"])
@pytest.mark.parametrize("where", ["leaf", "intermediate"])
def test_a_hook_that_changes_the_gradients_dtype_or_shape_is_refused_naming_it(returned, change, where):
    """As PyTorch's "hook 'name' has changed the type of value": a cast would hide that the hook
    computed something else than was meant (a float32 sum of a float64 gradient, say)."""
    x = leaf([1.0, 2.0])
    hooked = x if where == "leaf" else x * 1.0

    def clip(g):
        return returned(g)

    hooked.register_hook(clip)
    with pytest.raises(RuntimeError, match=rf"^the gradient hook 'clip' {change}"):
        (hooked * 2.0).sum().backward()


def test_a_backward_may_return_a_single_array():
    x = leaf([1.0, 2.0])
    BadBackward(lambda dy: 2 * dy)(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_backward_with_an_explicit_gradient():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).backward(minitx.tensor([1.0, 0.0, 2.0], dtype="float64"))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 12.0])


def test_retain_grad_keeps_the_gradient_of_an_intermediate():
    x = leaf([1.0, 2.0])
    h = (x * 3.0).retain_grad()
    other = x * 5.0
    (h * h).sum().backward()
    np.testing.assert_array_equal(h.grad.numpy(), 2 * h.numpy())
    assert other.grad is None and (x * 1.0).grad is None
    np.testing.assert_array_equal(x.grad.numpy(), 18 * x.numpy())


def test_retain_grad_on_a_tensor_that_does_not_require_grad_is_refused_as_pytorch():
    """No gradient reaches it, so nothing would be kept; PyTorch raises too. A leaf that
    requires grad keeps its .grad anyway, and retain_grad() on it changes nothing."""
    with pytest.raises(RuntimeError, match=r"^retain_grad: this tensor does not require grad"):
        minitx.tensor([1.0, 2.0]).retain_grad()
    with minitx.no_grad():
        made = leaf([1.0]) * 2.0
    with pytest.raises(RuntimeError, match=r"^retain_grad: this tensor does not require grad"):
        made.retain_grad()
    x = leaf([1.0, 2.0])
    assert x.retain_grad() is x


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_assigning_requires_grad_checks_what_requires_grad_checks(dtype):
    """t.requires_grad = True is requires_grad_(True), as PyTorch's: an integer tensor refuses it
    (its gradient would be cast to integers)."""
    t = minitx.tensor([1, 0], dtype=dtype)
    with pytest.raises(TypeError, match=f"only floating-point tensors can require gradients, got dtype {dtype}"):
        t.requires_grad = True
    assert not t.requires_grad
    t.requires_grad = False


def test_the_requires_grad_of_a_computed_tensor_is_not_assigned_as_pytorch():
    """Switching it off would cut the graph behind the tensor's back (PyTorch raises "you can only
    change requires_grad flags of leaf variables"); a leaf's flag is assigned, a bool only."""
    x = leaf([1.0, 2.0])
    y = x * 2.0
    for flag in (False, True):
        with pytest.raises(RuntimeError, match=r"^requires_grad: only a leaf's flag is assigned; this tensor was "
                                               r"computed by the recorded op 'mul'"):
            y.requires_grad = flag
    assert y.requires_grad and y.requires_grad_(True) is y
    t = minitx.tensor([1.0, 2.0])
    t.requires_grad = True
    assert t.requires_grad
    t.requires_grad = np.bool_(False)
    assert t.requires_grad is False
    with pytest.raises(TypeError, match=r"^requires_grad must be True or False, got 1"):
        t.requires_grad = 1


@pytest.mark.parametrize("flag", [1, 0, "yes", None, np.bool_(True)])
def test_requires_grad_takes_a_bool_alone_as_pytorchs(flag):
    t = minitx.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=rf"^requires_grad_: requires_grad must be True or False, got {flag!r}"):
        t.requires_grad_(flag)
    assert not t.requires_grad
    with pytest.raises(TypeError, match="must be bool"):
        import_torch().zeros(2).requires_grad_(flag)


def test_detach_cuts_the_graph_and_shares_memory():
    x = leaf([1.0, 2.0])
    d = (x * 2.0).detach()
    assert not d.requires_grad and d.is_leaf
    (x * d).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), d.numpy())
    assert np.shares_memory(x.detach().data, x.data)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_requires_grad_needs_a_float_tensor(dtype):
    with pytest.raises(TypeError, match=f"only floating-point tensors can require gradients, got dtype {dtype}"):
        minitx.tensor([1, 0], dtype=dtype, requires_grad=True)


def test_requires_grad_false_on_an_op_output_points_to_detach():
    with pytest.raises(RuntimeError, match="detach"):
        (leaf([1.0]) * 2.0).requires_grad_(False)


def test_only_inputs_that_require_grad_receive_gradients():
    x, c = leaf([1.0, 2.0]), minitx.tensor([3.0, 4.0], dtype="float64")
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


def test_gradient_takes_the_dtype_of_its_input():
    x = leaf([1.0, 2.0], dtype="float32")
    (x.astype("float64") * minitx.tensor([1.0, 2.0], dtype="float64")).sum().backward()
    assert x.grad.dtype == np.float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_0d_leaf_gets_a_gradient_of_its_own_dtype(dtype):
    """numpy returns scalars (np.float64) from ops on 0-d arrays; the gradient still has the
    leaf's dtype, and a second backward adds into it in place."""
    x = minitx.tensor(3.0, dtype=dtype, requires_grad=True)
    (10.0 / x).backward()
    assert x.grad.dtype == dtype and x.grad.shape == () and isinstance(x.grad.data, np.ndarray)
    first = x.grad
    (x * x).backward()
    assert x.grad is first and x.grad.dtype == dtype
    np.testing.assert_allclose(x.grad.numpy(), -10.0 / 9.0 + 6.0, rtol=1e-6)


def test_an_explicit_gradient_of_another_dtype_is_stored_in_the_leaf_dtype():
    x = leaf([1.0, 2.0])
    x.backward(np.array([0.5, 0.25], dtype=np.float32))
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.25])


def test_a_function_instance_records_one_call():
    # ops keep inputs and saved arrays on the instance: a second recorded call would overwrite them
    from minitx import ops

    a = minitx.tensor([3.0, 4.0], requires_grad=True)
    square = ops.PowScalar(2)
    square(a)
    with pytest.raises(RuntimeError, match="pow_scalar: this Function instance already recorded a call"):
        square(a)
    with minitx.no_grad():  # nothing recorded: reuse is harmless
        reusable = ops.PowScalar(2)
        reusable(a), reusable(a)


# ---------------------------------------------------------------- in-place writes into saved arrays
# (issue 16) y = (x * w).sum(); w.data[...] = 100.; y.backward() used to give x.grad = [100, 100].

def test_a_raw_write_into_a_saved_array_raises_and_the_gradient_stays_right():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        w.data[...] = 100.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    w.data[...] = 100.0  # backward released the graph: writable again


@pytest.mark.parametrize("make", [
    lambda p: minitx.optim.SGD([p], lr=0.1),
    lambda p: minitx.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1),
    lambda p: minitx.optim.Adam([p], lr=0.1),
    lambda p: minitx.optim.AdamW([p], lr=0.1),
])
def test_an_optimizer_step_between_forward_and_backward_is_refused(make):
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    opt = make(w)
    (x * w).sum().backward()
    y = (x * w).sum()  # recorded with the current w ...
    opt.step()         # ... which the step then changes in place
    with pytest.raises(RuntimeError, match=r"'mul' saved input 1 \(shape \(2,\), float64\).*modified in place"):
        y.backward()


def test_training_steps_run_once_backward_has_released_the_graph():
    x, w = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([[0.5], [-1.0]])
    opt = minitx.optim.SGD([w], lr=0.1)
    for _ in range(3):
        loss = F.tanh(x @ w).sum()
        opt.zero_grad()
        loss.backward()
        minitx.optim.clip_grad_norm_([w], 1.0)
        opt.step()
        assert w.data.flags.writeable


def test_the_guard_follows_views_and_aliases_of_the_array():
    x, w = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([[1.0, 0.0], [0.0, 1.0]])
    y = (x @ w.T).sum()   # matmul saved a transposed view of w's array
    with pytest.raises(ValueError, match="read-only"):
        w.data[0, 0] = 5.0
    alias = w.detach()
    z = (x * alias).sum()  # the same memory through a detached tensor
    w.grad = minitx.tensor([[1.0, 1.0], [1.0, 1.0]], dtype="float64")
    minitx.optim.SGD([w], lr=1.0).step()
    for out in (y, z):
        with pytest.raises(RuntimeError, match="modified in place"):
            out.backward()


def test_an_op_that_saved_its_output_guards_it():
    x = leaf([0.0, 1.0])
    y = F.exp(x)
    with pytest.raises(ValueError, match="read-only"):
        y.data[...] = 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))


def test_the_lock_lasts_while_any_graph_holds_the_array():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    first, second = (x * w).sum(), (x * w * 2.0).sum()
    first.backward()
    assert not w.data.flags.writeable  # the second graph still holds it
    del second                         # dropped without backward: its op is collected
    assert w.data.flags.writeable


def test_retain_graph_keeps_the_lock_until_the_last_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * w).sum()
    y.backward(retain_graph=True)
    assert not w.data.flags.writeable
    y.backward()
    assert w.data.flags.writeable
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 8.0])


def test_mark_modified_lets_a_write_through_and_names_the_op_at_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = F.log(w * x).sum()
    minitx.autograd.mark_modified(w)
    w.data[...] = 100.0
    with pytest.raises(RuntimeError, match=r"'mul' saved input 0 \(shape \(2,\), float64\).*version 0 -> 1"):
        y.backward()


@pytest.mark.parametrize("given", ["tensor", "array", "view of the array"])
def test_mark_modified_takes_the_tensor_or_its_raw_array(given):
    """Optimizers and gradient clipping pass raw arrays (a gradient's .data); a NumPy array's own
    .data is its memory buffer, which must not be taken for the array."""
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = F.log(w * x).sum()
    minitx.autograd.mark_modified({"tensor": w, "array": w.data, "view of the array": w.data[:1]}[given])
    w.data[...] = 100.0  # the lock is lifted
    with pytest.raises(RuntimeError, match=r"'mul' saved input 0 .*version 0 -> 1"):
        y.backward()


def test_arrays_no_op_saved_are_never_locked():
    x = leaf([1.0, 2.0])
    with minitx.no_grad():
        y = x * x
    assert x.data.flags.writeable and y.data.flags.writeable
    c = minitx.tensor([1.0, 2.0], dtype="float64")
    y = (x + c).sum()  # add saves nothing: nothing to lock
    assert c.data.flags.writeable and x.data.flags.writeable


def test_the_gradient_of_a_0d_float64_leaf_stays_float64():
    # numpy arithmetic on 0-d arrays returns numpy scalars; .grad once turned them into float32
    x = leaf(0.5)
    F.tanh(x).backward()
    assert x.grad.dtype == np.float64 and x.grad.shape == ()
    assert x.grad.item() == 1 - np.tanh(0.5) ** 2


def test_a_backward_hook_keeps_the_gradients_it_was_shown_unchanged(monkeypatch):
    """The engine adds into gradient sums it owns in place (a Linear's weight gradient is new, so
    the next use's is added into it); with a hook watching every op it owns none, so what the
    hook kept is still what it was shown."""
    from minitx.autograd import engine

    kept = []
    monkeypatch.setattr(engine, "backward_hooks",
                        [lambda fn, dy, grads: kept.extend((g, g.copy()) for g in grads if g is not None)])
    rng = np.random.default_rng(0)
    w = minitx.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    xs = [minitx.tensor(rng.standard_normal((2, 4))) for _ in range(3)]
    sum(F.linear(x, w).sum() for x in xs).backward()
    assert len(kept) >= 3
    for shown, snapshot in kept:
        np.testing.assert_array_equal(shown, snapshot)


def test_an_op_that_adds_the_pending_gradient_is_not_added_again(monkeypatch):
    """Function.backward_adding: y = x + double(x); when double's backward runs, x already has
    the add's gradient pending, and the op hands back pending + its own (the engine adds
    nothing). A debugging hook, which must see each op's own gradient, turns it off: the same
    gradient either way."""
    from minitx.autograd import engine
    from minitx.autograd.function import Function

    calls = []

    class Double(Function):
        def forward(self, x):
            return 2 * x

        def backward(self, dy):
            return (2 * dy,)

        def backward_adding(self, dy, index, pending):
            calls.append(index)
            return (pending + 2 * dy,)

    def x_grad():
        x = minitx.tensor(np.arange(4.0), requires_grad=True)
        (x + Double()(x)).sum().backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(x_grad(), np.full(4, 3.0))
    assert calls == [0]
    monkeypatch.setattr(engine, "backward_hooks", [lambda fn, dy, grads: None])
    np.testing.assert_array_equal(x_grad(), np.full(4, 3.0))
    assert calls == [0]


class Twice(minitx.Function):
    """y = 2x; backward's gradient is kept on the op for the test to find (``made``), and comes in
    the layout ``layout`` gives it."""

    def __init__(self, fresh, layout=lambda g: g):
        self.fresh_gradients, self.layout = fresh, layout

    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        self.made = self.layout(2 * dy)
        return (self.made,)


def test_a_leaf_keeps_a_new_gradient_as_its_grad_without_a_copy():
    """An op that returns a new array (fresh_gradients) hands it to a leaf's .grad as it is, as
    PyTorch's AccumulateGrad does; the next backward adds into it."""
    x, op = leaf([1.0, 2.0]), Twice(fresh=True)
    op(x).sum().backward()
    assert x.grad.data is op.made
    Twice(fresh=True)(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


@pytest.mark.parametrize("case", ["not new", "strided", "a hook saw it", "a backward hook"])
def test_a_gradient_that_may_be_held_elsewhere_is_copied_into_grad(case, monkeypatch):
    """The gradient is copied where something else may hold it: an op that does not promise new
    arrays, a tensor hook that was shown it, a debugging hook watching every op; and where it is
    not row-major (a view of a larger array, say). The next backward adds into .grad alone."""
    from minitx.autograd import engine

    x, kept = leaf(np.arange(6.0).reshape(2, 3)), []
    op = Twice(fresh=case != "not new", layout=np.asfortranarray if case == "strided" else (lambda g: g))
    if case == "a hook saw it":
        x.register_hook(kept.append)
    if case == "a backward hook":
        monkeypatch.setattr(engine, "backward_hooks", [lambda fn, dy, grads: None])
    op(x).sum().backward()
    assert not np.shares_memory(x.grad.data, op.made)
    Twice(fresh=True)(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 4.0))
    np.testing.assert_array_equal(op.made, np.full((2, 3), 2.0))  # what the op returned (and a hook kept) unchanged
    assert not kept or np.shares_memory(kept[0].data, op.made)  # the hook was shown the op's own array


def test_an_intermediate_copies_its_gradient_into_grad():
    """retain_grad: the intermediate's op goes on to read the gradient in its backward, so .grad
    gets a copy of it even when it is new."""
    x = leaf([1.0, 2.0])
    y, outer = Twice(fresh=True)(x), Twice(fresh=True)
    y.retain_grad()
    outer(y).sum().backward()
    assert not np.shares_memory(y.grad.data, outer.made)
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


@pytest.mark.parametrize("use, derivative", [(lambda s: s * s * s, lambda s: 3 * s ** 2),
                                             (lambda s: s * 1.0 + s * 2.0 + s * 3.0, lambda s: 6.0)],
                         ids=["cubed", "three products"])
def test_a_0d_value_used_three_times_gets_every_gradient(use, derivative):
    """NumPy's arithmetic on 0-d arrays returns scalars, so the engine's in-place running sum of a
    0-d gradient is a new object after each +=: the sum must still be the one kept."""
    w = leaf(np.arange(3.0))
    s = (w * w).sum()  # 5
    use(s).backward()
    np.testing.assert_allclose(w.grad.numpy(), derivative(5.0) * 2 * np.arange(3.0))
    a = leaf(1.5)  # a 0-d leaf used three times
    use(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), derivative(1.5))


# ---------------------------------------------------------------------- autograd.grad
def _graph(lib, values):
    """x -> h = 2 tanh(x) -> (y = sum(h^2), z = h * x): the same graph in minitx and in PyTorch."""
    torch = pytest.importorskip("torch") if lib == "torch" else None
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True) if torch else leaf(values)
    h = (torch.tanh(x) if torch else F.tanh(x)) * 2
    return x, h, (h * h).sum(), h * x


def test_grad_of_leaves_and_intermediates_matches_pytorch_and_leaves_grad_alone():
    torch = pytest.importorskip("torch")
    x, h, y, z = _graph("minitx", [1.0, -2.0, 0.5])
    tx, th, ty, tz = _graph("torch", [1.0, -2.0, 0.5])
    dz = np.array([0.3, -1.0, 2.0])
    ours = minitx.autograd.grad([y, z], [x, h, x], grad_outputs=[None, minitx.tensor(dz, dtype="float64")])
    theirs = torch.autograd.grad([ty, tz], [tx, th, tx], grad_outputs=[None, torch.from_numpy(dz)])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-14)
    assert not np.shares_memory(ours[0].numpy(), ours[2].numpy())  # one input asked twice: two arrays
    assert x.grad is None and h.grad is None
    with pytest.raises(RuntimeError, match="already freed"):  # retain_graph=False freed the walked graph
        y.backward()


def test_grad_runs_tensor_hooks_and_takes_retain_graph_and_unused_inputs():
    x, h, y, _ = _graph("minitx", [1.0, 2.0])
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    (gx,) = minitx.autograd.grad(y, x, retain_graph=True)
    y.backward()
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-15)
    assert len(seen) == 2
    other = leaf([5.0, 6.0])
    x2, _, y2, _ = _graph("minitx", [1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad: input 1 is not used by the outputs .*allow_unused=True"):
        minitx.autograd.grad(y2, [x2, other], retain_graph=True)
    assert minitx.autograd.grad(y2, [x2, other], allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="grad: input 0 does not require grad"):
        minitx.autograd.grad(y2, [minitx.tensor([1.0])])
    with pytest.raises(ValueError, match="grad: 1 grad_outputs for 2 outputs"):
        minitx.autograd.grad([y2, y2], [x2], grad_outputs=[None])


def test_grad_stops_at_an_intermediate_input_as_pytorch():
    """grad(y, h) runs only the ops between y and h: the graph behind h is neither walked (a hook
    on x does not fire) nor freed (h's own backward still runs), as PyTorch's."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in ("minitx", "torch"):
        x, h, y, _ = _graph(lib, [1.0, -2.0, 0.5])
        fired = []
        x.register_hook(lambda g: fired.append(1))
        grad = minitx.autograd.grad if lib == "minitx" else torch.autograd.grad
        (gh,) = grad(y, h)
        h.sum().backward()  # through tanh, which grad(y, h) neither ran nor freed
        results.append((np.asarray(gh.detach().numpy()), np.asarray(x.grad.numpy()), len(fired)))
    (ours_gh, ours_gx, ours_fired), (their_gh, their_gx, their_fired) = results
    np.testing.assert_allclose(ours_gh, their_gh, rtol=1e-14)
    np.testing.assert_allclose(ours_gx, their_gx, rtol=1e-14)
    assert ours_fired == their_fired == 1  # (the hook fired in h's backward only)


def test_backward_takes_pytorchs_arguments_and_fills_only_the_inputs_given():
    """backward(gradient=, inputs=): only the inputs' .grad are filled (an intermediate's too, a
    tensor given twice once), the walk stops at them; empty, grad-less inputs and create_graph are
    refused, as PyTorch refuses the first two."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (minitx, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        h = x * w
        y = (h * h).sum()
        y.backward(inputs=[w], retain_graph=True)
        filled = [x.grad is None, w.grad.numpy().copy()]
        y.backward(inputs=h, retain_graph=True)
        filled += [h.grad.detach().numpy().copy(), x.grad is None]
        y.backward(inputs=[w, w], retain_graph=True)
        (h * 2).backward(gradient=lib.tensor([1.0, -1.0], dtype=lib.float64))
        filled += [w.grad.numpy().copy(), x.grad.numpy().copy()]
        results.append(filled)
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    results = []
    for lib in (minitx, torch):  # an input's hooks run before its .grad is filled; retain_grad() on the way too
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        h = x * 2
        m = h * 3
        m.retain_grad()
        h.register_hook(lambda g: g * 10)
        (m * m).sum().backward(inputs=[h, x], retain_graph=True)
        results.append([h.grad.detach().numpy().copy(), m.grad.detach().numpy().copy(), x.grad.numpy().copy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    y = (leaf([1.0]) * 2).sum()
    with pytest.raises(ValueError, match="backward: inputs is empty"):
        y.backward(inputs=[])
    with pytest.raises(RuntimeError, match="backward: input 0 does not require grad"):
        y.backward(inputs=[minitx.tensor([1.0])])
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        y.backward(create_graph=True)
    with pytest.raises(TypeError, match="both gradient and grad"):
        y.backward(1.0, grad=1.0)


def test_grad_of_several_outputs_walks_once_so_hooks_see_the_total_as_pytorch():
    """A hook that is not linear (a clip) gives PyTorch's answer only if it runs once, on the sum."""
    torch = pytest.importorskip("torch")
    x, tx = leaf([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    h, th = x * 1.0, tx * 1.0
    h.register_hook(lambda g: F.clip(g, -1.0, 1.0))
    th.register_hook(lambda g: g.clamp(-1.0, 1.0))
    (ours,) = minitx.autograd.grad([h.sum(), (h * 3).sum()], x)
    (theirs,) = torch.autograd.grad([th.sum(), (th * 3).sum()], tx)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_grad_of_an_intermediate_is_taken_before_its_hooks_as_pytorch():
    torch = pytest.importorskip("torch")
    x, tx = leaf([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    h, th = x * 2, tx * 2
    h.register_hook(lambda g: g * 10)
    th.register_hook(lambda g: g * 10)
    ours = minitx.autograd.grad((h * h).sum(), [h, x])
    theirs = torch.autograd.grad((th * th).sum(), [th, tx])
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_grad_names_its_own_arguments_in_its_errors_and_refuses_create_graph_by_name():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"grad: output 0 has shape \(2,\); without grad_outputs"):
        minitx.autograd.grad(x * x, x)
    with pytest.raises(ValueError, match=r"grad: grad_outputs\[0\] has shape \(3,\), expected output 0's shape \(2,\)"):
        minitx.autograd.grad(x * x, x, grad_outputs=minitx.ones(3))
    with pytest.raises(NotImplementedError, match="create_graph=True"):  # as Tensor.backward's
        minitx.autograd.grad((x * x).sum(), x, create_graph=True)
    # PyTorch's deprecated only_inputs, ignored there, is taken
    (g,) = minitx.autograd.grad((x * x).sum(), x, only_inputs=True, create_graph=False)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_grad_takes_grad_outputs_as_numbers_and_arrays():
    x = leaf([1.0, 2.0])
    assert minitx.autograd.grad((x * x).sum(), x, grad_outputs=2.0)[0].tolist() == [4.0, 8.0]
    assert minitx.autograd.grad(x * x, x, grad_outputs=np.ones(2))[0].tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="grad: needs at least one output and one input, got 1 and 0"):
        minitx.autograd.grad((x * x).sum(), [])


def test_a_tensor_read_a_piece_at_a_time_gets_its_gradient_added_in_place():
    """GetItem.backward_into: after the first piece's table of zeros, each piece adds into it (no
    table per piece); the gradient is the plain sum's, bit for bit."""
    a = np.random.default_rng(0).standard_normal((50, 3))
    x = leaf(a)
    pieces = [x[t] * (t + 1) for t in range(50)] + [x[[0, 0, 2]] * 0.5]
    F.stack(pieces[:-1]).sum().backward(retain_graph=True)
    pieces[-1].sum().backward()
    expected = np.repeat(np.arange(1.0, 51.0)[:, None], 3, axis=1)
    expected[0] += 1.0
    expected[2] += 0.5
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    calls = []
    original = minitx.ops.indexing.GetItem.backward

    def counted(self, dy):
        calls.append(1)
        return original(self, dy)

    minitx.ops.indexing.GetItem.backward = counted
    try:
        y = leaf(a)
        F.stack([y[t] for t in range(50)]).sum().backward()
    finally:
        minitx.ops.indexing.GetItem.backward = original
    assert len(calls) == 1 and y.grad.tolist() == np.ones((50, 3)).tolist()



def test_pieces_of_a_0d_tensor_and_repeated_integer_picks_keep_the_plain_sums_bits():
    """backward_into takes the basic indices only: a 0-d running sum is NumPy's scalar, and an
    integer array's repeats must be summed before they meet the pending gradient."""
    x = leaf(1.5)
    (x * x + x[None].sum() + x[()] * 2).backward()
    assert x.grad.item() == 6.0
    y = minitx.tensor(np.zeros(2, np.float32), requires_grad=True)
    half, w = minitx.tensor(np.full(2, 0.5, np.float32)), minitx.tensor(np.full(4, 3e-8, np.float32))
    ((y * half).sum() + (y * half).sum() + (y[[0, 0, 0, 0]] * w).sum()).backward()
    assert y.grad.numpy()[0] == np.float32(1.0) + np.float32(4 * 3e-8).astype(np.float32)
