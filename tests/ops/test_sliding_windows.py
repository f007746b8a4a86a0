"""sliding_windows (minitx/ops/shape.py: SlidingWindows), PyTorch's Tensor.unfold(dimension, size, step).

Forward against a NumPy loop (one window entry at a time) and float64 gradients on
hypothesis-drawn shapes, axes, sizes and steps: steps below the size (overlapping windows, whose
gradients add), equal to it, and above it (entries no window reads, whose gradient is 0); PyTorch
parity on the same draws is tests/test_torch_op_parity.py's "sliding_windows" case (which
tests/test_integer_inputs.py and tests/test_low_precision_ops.py run in other dtypes too). Then
PyTorch's edges (a 0-d input, size 0, empty axes, negative dimensions), the errors, integer and
boolean inputs, and the copy: a write into x or into a window reaches nothing else.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import arg, check_gradients, leaf, op_test
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity
from test_torch_op_parity import windows  # (the drawn windows of its PyTorch case, for the checks here too)


def np_windows(a, axis, size, step):
    """The windows one entry at a time: out[..., w, ..., k] = a[..., w * step + k, ...], the
    window axis in the axis's place and k last; a 0-d a is one entry, its windows (size,)."""
    if a.ndim == 0:
        return np.array([a[()]] * size, dtype=a.dtype)
    moved = np.moveaxis(a, axis, -1)
    count = (a.shape[axis] - size) // step + 1
    out = np.zeros(moved.shape[:-1] + (count, size), dtype=a.dtype)
    for w in range(count):
        for k in range(size):
            out[..., w, k] = moved[..., w * step + k]
    return np.moveaxis(out, -2, axis % a.ndim)


test_sliding_windows = op_test(
    lambda x, window: F.sliding_windows(x, *window), arg(edges=(0.0, np.inf, -np.inf, np.nan)),
    shapes=mst.shapes(max_dims=3, min_side=0, max_side=5), kwargs={"window": windows},
    numpy=lambda a, window: np_windows(a, *window))


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=6)), data=st.data())
def test_overlapping_windows_add_their_gradients_and_skipped_entries_get_none(x, data):
    """dx[i] = dy summed over the windows' entries that read x[i]: with dy = 1 everywhere, the
    number of windows that read x[i], which is 0 for an entry a step past the size skips."""
    axis, size, step = data.draw(windows(x.shape).filter(lambda w: w[1] > 0))
    y = x.unfold(axis, size, step)
    assert check_gradients(lambda t: t.unfold(axis, size, step), x)
    x.grad = None
    y.sum().backward()
    n = x.shape[axis]
    reads = np.zeros(n)
    for w in range((n - size) // step + 1):
        reads[w * step:w * step + size] += 1
    expected = np.broadcast_to(np.moveaxis(reads.reshape((-1,) + (1,) * (x.ndim - 1)), 0, axis % x.ndim), x.shape)
    np.testing.assert_array_equal(x.grad.numpy(), expected)



@given(data=st.data())
def test_the_gradient_is_a_loop_over_k_bit_for_bit(data):
    """dx from one gather (SlidingWindows.backward) is what a loop over the window's entries k adds,
    bit for bit, in float32 where the order shows: up to 24 windows overlap an entry."""
    n = data.draw(st.integers(1, 40))
    size = data.draw(st.integers(0, min(n, 24)))
    step = data.draw(st.integers(1, 30))
    rows = data.draw(st.integers(0, 3))
    x = minitx.tensor(np.zeros((rows, n), np.float32), requires_grad=True)
    y = x.unfold(1, size, step)
    dy = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1))).normal(size=y.shape).astype(np.float32)
    y.backward(minitx.tensor(dy))
    expected = np.zeros((rows, n), np.float32)
    for k in range(size):
        for w in range(y.shape[1]):
            expected[:, w * step + k] += dy[:, w, k]
    np.testing.assert_array_equal(x.grad.numpy(), expected)

def test_windows_of_a_range_as_pytorch_documents_them():
    x = minitx.arange(6.0)
    np.testing.assert_array_equal(x.unfold(0, 3, 1).numpy(), [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]])
    np.testing.assert_array_equal(x.unfold(0, 2, 3).numpy(), [[0, 1], [3, 4]])
    np.testing.assert_array_equal(F.sliding_windows(x, dim=0, size=2, step=2).numpy(), [[0, 1], [2, 3], [4, 5]])


@pytest.mark.parametrize("shape, dimension, size, step", [
    ((), 0, 1, 1), ((), -1, 1, 3), ((), 0, 0, 1),  # a 0-d tensor: (size,), without a window axis
    ((6,), 0, 0, 1), ((6,), 0, 0, 4), ((6,), 0, 6, 1), ((6,), -1, 6, 100),  # empty windows; one whole window
    ((0, 3), 0, 0, 1), ((0, 3), 1, 2, 1), ((2, 0, 3), 1, 0, 2),  # empty axes
    ((2, 5, 3), -2, 2, 2), ((2, 5, 3), -3, 1, 1), ((2, 5, 3), 2, 3, 2),  # negative dimensions, a last-axis window
])
def test_edges_as_pytorch(shape, dimension, size, step):
    x = leaf(np.arange(float(np.prod(shape))).reshape(shape) * 0.5 - 1)
    y = parity(lambda t: t.unfold(dimension, size, step), lambda t: t.unfold(dimension, size, step), x)
    assert y.dtype == np.float64


def test_errors_name_the_op_and_what_it_expected():
    x, scalar = minitx.arange(6.0), minitx.tensor(5.0)
    op = r"sliding_windows \(Tensor.unfold\): "
    cases = [
        (lambda: x.unfold(0, 7, 1), ValueError, op + r"size 7 is larger than axis 0's length 6 \(shape \(6,\)\); "
                                                      r"a window needs 0 <= size <= 6"),
        (lambda: scalar.unfold(0, 2, 1), ValueError, op + r"size 2 is larger than axis 0's length 1 \(shape \(\)\)"),
        (lambda: x.unfold(0, 3, 0), ValueError, op + "step must be >= 1, got 0"),
        (lambda: x.unfold(0, 3, -1), ValueError, op + "step must be >= 1, got -1"),
        (lambda: x.unfold(0, -1, 1), ValueError, op + "size must be >= 0, got -1"),
        (lambda: x.unfold(1, 1, 1), IndexError, op + r"axis 1 is out of range for shape \(6,\); expected an int in "
                                                     r"\[-1, 1\)"),
        (lambda: scalar.unfold(-2, 1, 1), IndexError, op + r"axis -2 is out of range for shape \(\)"),
        (lambda: x.unfold(0, 2.0, 1), TypeError, op + "size must be an int, got 2.0"),
        (lambda: x.unfold(0, True, 1), TypeError, op + "size must be an int, got True"),
        (lambda: F.sliding_windows(x, None, 2, 1), TypeError, op + "axis must be an int, got None"),
    ]
    torch = import_torch()
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    for dimension, size, step in ((0, 7, 1), (0, 3, 0), (0, 3, -1), (0, -1, 1), (1, 1, 1)):
        with pytest.raises((RuntimeError, IndexError)):  # PyTorch refuses each of them too
            torch.arange(6.0).unfold(dimension, size, step)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integers_and_booleans_keep_their_dtype_as_pytorch(dtype):
    torch = import_torch()
    a = (np.arange(24).reshape(2, 6, 2) * 7 % 5).astype(dtype)
    for dimension, size, step in ((1, 3, 1), (1, 2, 3), (-1, 2, 1), (0, 1, 2)):
        ours, theirs = minitx.tensor(a).unfold(dimension, size, step), torch.from_numpy(a).unfold(dimension, size, step)
        assert ours.dtype == np.dtype(dtype) and str(theirs.dtype) == f"torch.{ours.dtype}"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_the_windows_are_a_copy_that_no_write_corrupts():
    """Overlapping windows as a view of x would show one entry in several places: a write into one
    window would change its neighbours and x (PyTorch's x.unfold(0, 3, 1).add_(1) adds 1, 2 or 3
    to the entries of x). minitx's windows are a copy: writes into x or into the windows, recorded or
    not, change what was written alone."""
    x = minitx.arange(6.0)
    y = x.unfold(0, 3, 1)
    y += 1
    y[0, 1] = 100.0
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0))
    expected = np_windows(np.arange(6.0), 0, 3, 1) + 1
    expected[0, 1] = 100.0
    np.testing.assert_array_equal(y.numpy(), expected)
    x[2] = -1.0
    np.testing.assert_array_equal(y.numpy(), expected)
    # while a graph is recorded: each write's gradient reaches what was written, and x's the windows it made
    w = leaf(np.arange(6.0))
    h = w * 1.0
    z = h.unfold(0, 2, 1)
    z[1, 0] = 0.0
    h[0] = 5.0
    (z * minitx.tensor(np.arange(10.0).reshape(5, 2))).sum().backward()
    np.testing.assert_array_equal(z.numpy(), [[0, 1], [0, 2], [2, 3], [3, 4], [4, 5]])
    # dw[i]: the weights of the windows' entries that read h[i], less the one the write replaced (2)
    np.testing.assert_array_equal(w.grad.numpy(), [0, 1 + 2 - 2, 3 + 4, 5 + 6, 7 + 8, 9])
