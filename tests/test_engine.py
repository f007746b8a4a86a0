"""The backward engine (minitx/autograd): accumulation, broadcasting, grad modes, graph freeing."""
import time

import numpy as np
import pytest
from hypothesis import given

import minitx
import minitx.functional as F
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
    start = time.perf_counter()
    for _ in range(n):
        y = F.neg(y)
    y.backward()
    assert x.grad.item() == 1.0  # (-1) ** 100000
    assert len(topological_order(y)) == n + 1
    del y  # dropping a 100,000-deep graph must not overflow the C stack either
    assert time.perf_counter() - start < 10


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
