"""Matmul (minitx/ops/linalg.py): numpy.matmul semantics, 1-D operands on either side,
broadcast batch dimensions, transposed (non-contiguous) operands, and shape errors that name
the op and both shapes; outer, cross, tensordot, inner, vdot, kron and minitx.linalg's norms against
NumPy and PyTorch."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import nn
from minitx.testing import check_backward_hygiene, check_forward, check_gradients, gradcheck, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

SIDE = st.integers(1, 4)


@st.composite
def matmul_operands(draw):
    """a [*batch_a, n, k] or [k], b [*batch_b, k, m] or [k], batch shapes broadcastable."""
    batch_a, batch_b = draw(mst.broadcastable_shapes(2, max_dims=2, max_side=3))
    n, k, m = draw(SIDE), draw(SIDE), draw(SIDE)
    a_shape = (k,) if draw(st.booleans()) else batch_a + (n, k)
    b_shape = (k,) if draw(st.booleans()) else batch_b + (k, m)
    return draw(mst.tensors(a_shape)), draw(mst.tensors(b_shape))


# name -> (shape of a, shape of b, shape of a @ b)
EXPLICIT = {
    "Matmul-vector-vector": ((4,), (4,), ()),
    "Matmul-vector-matrix": ((3,), (3, 2), (2,)),
    "Matmul-matrix-vector": ((2, 3), (3,), (2,)),
    "Matmul-vector-batched": ((4,), (2, 4, 3), (2, 3)),
    "Matmul-batched-vector": ((2, 3, 4), (4,), (2, 3)),
    "Matmul-broadcast-batch": ((2, 1, 3, 4), (5, 4, 2), (2, 5, 3, 2)),
    "Matmul-batched-matrix": ((3, 2, 4), (4, 1), (3, 2, 1)),
}


@given(matmul_operands())
def test_matmul_forward_matches_numpy(operands):
    a, b = operands
    out = a @ b
    expected = _products_summed(a.numpy(), b.numpy())
    assert out.shape == expected.shape == np.matmul(a.numpy(), b.numpy()).shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@given(matmul_operands(), st.sampled_from([(True, True), (True, False), (False, True)]))
def test_matmul_gradcheck(operands, needs_grad):
    a, b = operands
    a.requires_grad_(needs_grad[0])
    b.requires_grad_(needs_grad[1])
    assert gradcheck(F.matmul, a, b)


@given(matmul_operands())
def test_matmul_backward_hygiene(operands):
    assert check_backward_hygiene(F.matmul, *operands)


@pytest.mark.parametrize("name", list(EXPLICIT))
@given(data=st.data())
def test_matmul_explicit_shapes(name, data):
    a_shape, b_shape, out_shape = EXPLICIT[name]
    a = data.draw(mst.tensors(a_shape, transposed=True), label="a")
    b = data.draw(mst.tensors(b_shape, transposed=True), label="b")
    y = F.matmul(a, b)
    assert y.shape == out_shape
    # two ways of adding the same products round differently: the difference is bounded by the
    # size of the terms, sum |a||b|, not of their sum (which may cancel to 0, where rtol fails)
    error = np.abs(y.numpy() - _products_summed(a.numpy(), b.numpy()))
    assert np.all(error <= 1e-12 * _products_summed(np.abs(a.numpy()), np.abs(b.numpy())))
    assert gradcheck(F.matmul, a, b)


def _products_summed(a, b):
    """y[..., i, j] = sum_k a[..., i, k] b[..., k, j] by broadcasting, without np.matmul;
    a vector is a row on the left and a column on the right, and that axis is dropped."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    y = (a2[..., :, :, None] * b2[..., None, :, :]).sum(axis=-2)
    if b.ndim == 1:
        y = y[..., 0]
    if a.ndim == 1:
        y = y[..., 0] if b.ndim == 1 else y[..., 0, :]
    return y


def test_matmul_gradients_by_hand():
    """da = dy @ b^T, db = a^T @ dy, with the broadcast batch axis summed for b."""
    a = minitx.tensor(np.arange(12.0).reshape(2, 2, 3), dtype="float64", requires_grad=True)
    b = minitx.tensor(np.arange(6.0).reshape(3, 2) - 2, dtype="float64", requires_grad=True)
    dy = np.ones((2, 2, 2))
    (a @ b).backward(dy)
    np.testing.assert_array_equal(a.grad.numpy(), dy @ b.numpy().T)
    np.testing.assert_array_equal(b.grad.numpy(), np.einsum("bnk,bnm->km", a.numpy(), dy))


def test_vector_dot_vector_is_a_scalar():
    a = minitx.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    b = minitx.tensor([4.0, 5.0, 6.0], dtype="float64", requires_grad=True)
    y = a @ b
    assert y.shape == () and y.item() == 32.0
    y.backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), a.numpy())


@pytest.mark.parametrize("a_shape, b_shape, message", [
    ((32, 64), (32, 64), r"matmul: shapes \(32, 64\) and \(32, 64\) do not align: 64 != 32"),
    ((3,), (4,), r"matmul: shapes \(3,\) and \(4,\) do not align: 3 != 4"),
    ((2, 2, 3), (4, 3, 1), r"matmul: batch dimensions of shapes \(2, 2, 3\) and \(4, 3, 1\) do not broadcast"),
    ((), (3,), r"matmul: both operands need at least 1 dimension, got shapes \(\) and \(3,\)"),
], ids=["Matmul-align", "Matmul-vectors", "Matmul-batch", "Matmul-scalar"])
def test_matmul_shape_errors_name_op_and_shapes(a_shape, b_shape, message):
    a, b = minitx.ones(a_shape), minitx.ones(b_shape)
    with pytest.raises(ValueError, match=f"^{message}$"):
        a @ b


def test_bmm_refuses_batches_of_two_sizes_as_pytorchs():
    """bmm (1, 2, 3) by (4, 3, 5) gave matmul's broadcast (4, 2, 5); PyTorch's bmm refuses it."""
    a, b = minitx.ones(1, 2, 3), minitx.ones(4, 3, 5)
    with pytest.raises(ValueError, match=r"bmm: batch sizes differ, got shapes \(1, 2, 3\) and \(4, 3, 5\); "
                                         r"matmul broadcasts them"):
        a.bmm(b)
    assert minitx.bmm(minitx.ones(4, 2, 3), b).shape == (4, 2, 5)


def test_matmul_with_an_array_on_the_left_uses_rmatmul():
    b = minitx.tensor([[1.0], [2.0]])
    y = np.array([[3.0, 4.0]], dtype=np.float32) @ b
    assert isinstance(y, minitx.Tensor)
    np.testing.assert_array_equal(y.numpy(), [[11.0]])


def test_products_refuse_two_floating_dtypes_as_pytorchs():
    """A float64 input into float32 weights would run the layer in float64 (NumPy promotes),
    silently; PyTorch refuses, and so does minitx, saying what to cast. Integers still meet floats
    as in a * b, and under autocast the op casts its inputs itself."""
    x64, w32 = minitx.tensor(np.ones((2, 3))), minitx.ones(4, 3)
    with pytest.raises(TypeError, match=r"^linear: operands of dtypes float32 and float64; a product takes one "
                                        r"floating dtype, as PyTorch's: cast one"):
        F.linear(x64, w32)
    with pytest.raises(TypeError, match=r"^matmul: operands of dtypes float32 and float64"):
        x64 @ w32.T
    with pytest.raises(TypeError, match=r"^conv2d: operands of dtypes float32 and float64"):
        minitx.nn.Conv2d(3, 2, 1)(minitx.tensor(np.ones((1, 3, 2, 2))))
    with pytest.raises(TypeError, match=r"^linear: .*bfloat16 and float32"):
        F.linear(w32.to(dtype="bfloat16"), w32)
    assert F.linear(x64.to(dtype="float32"), w32).dtype.name == "float32"
    assert (minitx.tensor([[1, 2, 3]]) @ w32.T).dtype.name == "float32"
    for layer, x in ((minitx.nn.Linear(3, 2), [[1, 0, 2]]), (minitx.nn.Conv1d(1, 2, 2), [[[1, 2, 3]]])):
        out = layer(minitx.tensor(x))  # integers take the weights' dtype, as in x * w (NumPy: float64)
        assert out.dtype.name == "float32"
        np.testing.assert_allclose(out.numpy(), layer(minitx.tensor(x, dtype="float32")).numpy(), rtol=0)
    with minitx.autocast("bfloat16"):
        assert F.linear(w32.to(dtype="bfloat16"), w32).dtype.name == "bfloat16"
        with pytest.raises(TypeError, match=r"^linear: operands of dtypes float32 and float64"):
            F.linear(x64, w32)  # autocast leaves float64 as it is: still a mix
        with pytest.raises(TypeError, match=r"^conv2d: operands of dtypes float32 and float64"):
            minitx.nn.Conv2d(3, 2, 1)(minitx.tensor(np.ones((1, 3, 2, 2))))
    torch = torch_in_example()
    with pytest.raises(RuntimeError):
        torch.nn.functional.linear(torch.ones(2, 3, dtype=torch.float64), torch.ones(4, 3))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_list_operand_of_a_product_promotes_as_in_elementwise_ops(dtype):
    """A list has no dtype its writer chose: beside a tensor it becomes one as in x + list (floats
    in float32), and the two promote as PyTorch's x + torch.tensor(list) does, on either side of
    @, mm and dot, where a float64 tensor @ a list was refused with a message naming float32."""
    torch = torch_in_example()
    x = minitx.tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), dtype=dtype, requires_grad=True)
    rows = [[1.0, 2.0], [3.0, 4.0]]
    expected = str(torch.result_type(torch.ones(1, dtype=getattr(torch, dtype)), torch.tensor(rows))).split(".")[1]
    assert (x + rows).dtype.name == expected  # the rule of the elementwise ops, which matmul now shares
    values, list_values = x.detach().numpy(), np.float32(rows)
    for got, want in ((x @ rows, values @ list_values), (rows @ x, list_values @ values),
                      (x.mm(rows), values @ list_values), (minitx.matmul(rows[0], x), list_values[0] @ values)):
        assert got.dtype.name == expected
        np.testing.assert_allclose(got.numpy(), want.astype(expected), rtol=1e-3 if dtype == "float16" else 1e-6)
    (rows @ x).sum().backward()
    assert x.grad.dtype.name == dtype  # the gradient comes back through the cast, in x's dtype
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, 4.0], [6.0, 6.0]])  # rows^T @ ones: its column sums
    assert x[0].dot([1.0, 2.0]).dtype.name == expected
    assert (minitx.tensor([[1, 2]]) @ [[0.5], [1.0]]).dtype.name == "float32"  # integers meet floats as in a * b
    with pytest.raises(TypeError, match=r"^matmul: operands of dtypes float32 and float64"):
        minitx.tensor(np.ones((2, 2))) @ minitx.ones(2, 2)  # two tensors' dtypes were chosen: still refused
    with pytest.raises(TypeError, match=r"^mm: operands of dtypes float32 and float64"):
        minitx.tensor(np.ones((2, 2))).mm(minitx.ones(2, 2))
    with pytest.raises(TypeError, match=r"^matmul: operands of dtypes float32 and float64"):
        minitx.tensor(np.ones((2, 2))) @ np.ones((2, 2), np.float32)  # an array's dtype is chosen too


def test_a_list_of_floats_beside_float64_keeps_its_numbers_exact():
    """Beside a float64 tensor a list of Python floats is made in float64 from its numbers: made
    in float32 first (a list's dtype alone), 0.1 would be 0.10000000149 in a float64 computation."""
    x = minitx.tensor(np.zeros((1, 2)))
    tenth = [[0.1, 1e-50]]  # 1e-50 is 0 in float32
    np.testing.assert_array_equal((x + tenth).numpy(), np.float64(tenth))
    np.testing.assert_array_equal((tenth - x).numpy(), np.float64(tenth))
    np.testing.assert_array_equal((minitx.tensor(np.ones((1, 1))) @ [[0.1, 1e-50]]).numpy(), np.float64(tenth))
    assert (minitx.zeros(1, 2) + tenth).dtype.name == "float32"  # beside float32: float32, as before
    assert (x + [[1, 2]]).dtype.name == "float64"  # integers as before
    # beside a float64 NumPy array too: its dtype was chosen, as a tensor's
    np.testing.assert_array_equal(F.matmul(np.ones((1, 1)), [[0.1, 1e-50]]).numpy(), np.float64(tenth))
    np.testing.assert_array_equal(F.add(np.zeros((1, 2)), tenth).numpy(), np.float64(tenth))


def test_linear_names_a_list_bias_rather_than_its_dtype():
    """linear takes tensors (PyTorch's too): a list bias is refused as a list, not as float32."""
    x, w = minitx.tensor(np.ones((2, 3))), minitx.tensor(np.ones((4, 3)))
    with pytest.raises(TypeError, match=r"^linear: input 2 is list, expected a Tensor"):
        F.linear(x, w, [0.0] * 4)


@given(a=mst.tensors(mst.shapes(min_dims=1, max_dims=1, min_side=0)), b=mst.tensors(mst.shapes(min_dims=1, max_dims=1)))
def test_outer_as_numpy_and_pytorch(a, b):
    np.testing.assert_allclose(F.outer(a, b).numpy(), np.outer(a.numpy(), b.numpy()), rtol=1e-15)
    assert gradcheck(F.outer, a, b)
    check_backward_hygiene(F.outer, a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(F.outer, torch.outer, leaf(a.numpy()), leaf(b.numpy()))


def test_outer_takes_1d_tensors_only():
    with pytest.raises(ValueError, match=r"outer: needs two 1-d tensors, got shapes \(2, 2\) and \(1,\)"):
        F.outer(minitx.tensor(np.zeros((2, 2))), minitx.tensor([1.0]))
    assert F.outer(minitx.tensor([1, 2]), minitx.tensor([0.5])).dtype == np.float32  # as PyTorch's


@st.composite
def cross_operands(draw):
    """Two tensors with the same number of axes that broadcast, length 3 along a drawn axis; the axis."""
    shape_a, shape_b = draw(mst.broadcastable_shapes(2, min_dims=1, max_dims=3, max_side=3))
    ndim = max(len(shape_a), len(shape_b))
    shape_a, shape_b = ((1,) * (ndim - len(s)) + tuple(s) for s in (shape_a, shape_b))  # one number of axes
    axis = draw(st.integers(-ndim, ndim - 1), label="axis")
    shape_a, shape_b = ([3 if d == axis % ndim else n for d, n in enumerate(s)] for s in (shape_a, shape_b))
    return draw(mst.tensors(shape_a)), draw(mst.tensors(shape_b)), axis


@given(operands=cross_operands())
def test_cross_as_numpy_and_pytorch(operands):
    a, b, axis = operands
    y = F.cross(a, b, axis)
    np.testing.assert_allclose(y.numpy(), np.cross(a.numpy(), b.numpy(), axis=axis), rtol=1e-13, atol=1e-14)
    assert isinstance(y._ctx, minitx.ops.Cross)
    assert check_gradients(lambda s, t: F.cross(s, t, axis), a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda s, t: s.cross(t, dim=axis), lambda s, t: torch.linalg.cross(s, t, dim=axis), leaf(a.numpy()),
               leaf(b.numpy()))


def test_cross_by_hand_with_infinities_integers_and_its_errors():
    """e_x x e_y = e_z along the last axis by default (torch.linalg.cross's; torch.cross's deprecated
    default is the first axis of length 3); NaN and inf as PyTorch's; integers keep their dtype."""
    eye = minitx.tensor(np.eye(3))
    np.testing.assert_array_equal(minitx.cross(eye, eye[[1, 2, 0]]).numpy(), np.eye(3)[[2, 0, 1]])
    edges = np.array([[np.inf, 1.0, 0.0], [np.nan, 2.0, -1.0], [1.0, -np.inf, 3.0]])
    parity(lambda s, t: F.cross(s, t), lambda s, t: import_torch().linalg.cross(s, t), leaf(edges),
           leaf(edges[::-1].copy()))
    assert parity(F.cross, import_torch().linalg.cross, leaf(np.zeros((0, 3))), leaf(np.zeros((0, 3)))).shape == (0, 3)
    ints = F.cross(minitx.tensor([1, 2, 3]), minitx.tensor([4, 5, 6]))
    assert ints.dtype == np.int64 and ints.numpy().tolist() == [-3, 6, -3]
    assert F.cross(minitx.tensor([1, 2, 3]), minitx.tensor([4.0, 5, 6])).dtype == np.float32  # (PyTorch refuses)
    with pytest.raises(ValueError, match=r"cross: expected two tensors with the same number of axes \(at least one\), "
                                         r"got shapes \(2, 3\) and \(3,\)"):
        F.cross(minitx.ones(2, 3), minitx.ones(3))
    with pytest.raises(ValueError, match=r"cross: axis 0 must have length 3 in both tensors, got shapes \(2, 3\) and "
                                         r"\(2, 3\)"):
        F.cross(minitx.ones(2, 3), minitx.ones(2, 3), dim=0)
    with pytest.raises(ValueError, match=r"cross: shapes \(2, 3\) and \(4, 3\) do not broadcast"):
        F.cross(minitx.ones(2, 3), minitx.ones(4, 3))
    with pytest.raises(ValueError, match="cross: axis 2 is out of range"):
        F.cross(minitx.ones(2, 3), minitx.ones(2, 3), 2)
    with pytest.raises(TypeError, match="cross: not defined for boolean tensors"):
        F.cross(minitx.tensor([True, False, True]), minitx.tensor([True, True, False]))



# ---------------------------------------------------------------- tensordot, inner, vdot, kron

EMPTY_SIDES = mst.shapes(max_dims=3, min_side=0, max_side=3)


@st.composite
def tensordot_operands(draw):
    """a, b and dims: an int n (a's last n axes with b's first n) or a pair of lists of axes,
    paired in a drawn order, possibly negative; the paired lengths equal, some 0."""
    a_shape = draw(EMPTY_SIDES, label="a")
    n = draw(st.integers(0, len(a_shape)), label="paired")
    own = draw(mst.shapes(max_dims=3 - n, min_side=0, max_side=3), label="b's own axes")
    if draw(st.booleans()):
        a_axes, b_shape = list(range(len(a_shape) - n, len(a_shape))), a_shape[len(a_shape) - n:] + own
        dims = n
    else:
        a_axes = draw(st.permutations(range(len(a_shape))), label="a's order")[:n]
        b_axes = draw(st.permutations(range(n + len(own))), label="b's order")[:n]
        b_shape = [None] * (n + len(own))
        for i, j in zip(a_axes, b_axes):
            b_shape[j] = a_shape[i]
        rest = iter(own)
        b_shape = tuple(next(rest) if m is None else m for m in b_shape)
        negative = draw(st.booleans(), label="negative axes")
        dims = ([i - len(a_shape) * negative for i in a_axes], [j - len(b_shape) * negative for j in b_axes])
    return draw(mst.tensors(a_shape)), draw(mst.tensors(b_shape)), dims


@given(tensordot_operands())
def test_tensordot_as_numpy_and_pytorch(operands):
    a, b, dims = operands
    axes = dims if isinstance(dims, int) else tuple(dims)  # (NumPy's axes: an int or a pair)
    y = F.tensordot(a, b, dims)
    np.testing.assert_allclose(y.numpy(), np.tensordot(a.numpy(), b.numpy(), axes), rtol=1e-12, atol=1e-14)
    assert check_gradients(lambda s, t: F.tensordot(s, t, dims), a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda s, t: F.tensordot(s, t, dims), lambda s, t: torch.tensordot(s, t, dims), leaf(a.numpy()),
               leaf(b.numpy()))


def test_tensordot_pairs_as_last_axes_of_a_with_the_first_of_b_at_a_fixed_shape():
    """dims=n pairs a's last n axes with b's first n, whatever the drawn shapes above happen to allow."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))
    y = F.tensordot(leaf(a), leaf(b), 2)
    np.testing.assert_allclose(y.numpy(), np.tensordot(a, b, 2), rtol=1e-12)
    assert check_gradients(lambda s, t: F.tensordot(s, t, 2), leaf(a), leaf(b))


@given(data=st.data())
def test_inner_as_numpy_and_pytorch(data):
    """The products over the last axis of each; a 0-d operand multiplies the other."""
    a_shape = data.draw(EMPTY_SIDES, label="a")
    b_shape = data.draw(mst.shapes(max_dims=2, min_side=0, max_side=3), label="b's other axes")
    b_shape = b_shape + a_shape[-1:] if a_shape and data.draw(st.booleans()) else b_shape
    a, b = data.draw(mst.tensors(a_shape), label="a"), data.draw(mst.tensors(b_shape), label="b")
    if a.ndim and b.ndim and a.shape[-1] != b.shape[-1]:
        with pytest.raises(ValueError, match=r"^inner: axis \d of a \(length \d\) is paired with axis \d of b"):
            F.inner(a, b)
        return
    np.testing.assert_allclose(a.inner(b).numpy(), np.inner(a.numpy(), b.numpy()), rtol=1e-12, atol=1e-14)
    assert check_gradients(F.inner, a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(F.inner, torch.inner, leaf(a.numpy()), leaf(b.numpy()))


@given(a=mst.tensors(mst.shapes(min_dims=1, max_dims=1, min_side=0, max_side=5)), data=st.data())
def test_vdot_as_numpy_and_pytorch(a, data):
    b = data.draw(mst.tensors(a.shape), label="b")
    np.testing.assert_allclose(a.vdot(b).numpy(), np.vdot(a.numpy(), b.numpy()), rtol=1e-12, atol=1e-14)
    assert check_gradients(F.vdot, a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(F.vdot, torch.vdot, leaf(a.numpy()), leaf(b.numpy()))


@given(a=mst.tensors(EMPTY_SIDES), b=mst.tensors(EMPTY_SIDES))
def test_kron_as_numpy_and_pytorch(a, b):
    """Shapes of different lengths (the shorter padded with leading 1s), empty axes and 0-d ones."""
    np.testing.assert_allclose(a.kron(b).numpy(), np.kron(a.numpy(), b.numpy()), rtol=1e-15)
    assert check_gradients(F.kron, a, b)
    torch = torch_in_example()
    if torch is not None:
        parity(F.kron, torch.kron, leaf(a.numpy()), leaf(b.numpy()))


def test_products_on_integers_and_their_errors():
    """Integers stay integers, as PyTorch's; an integer beside a float takes the float's dtype (as
    matmul's: PyTorch's tensordot, inner and vdot refuse the mix); errors name the op."""
    ints = minitx.tensor([[1, 2], [3, 4]])
    for ours, theirs in ((F.tensordot(ints, ints), 30), (F.inner(ints, ints).tolist(), [[5, 11], [11, 25]]),
                         (F.vdot(ints[0], ints[1]), 11), (F.kron(ints[0], ints[1]).tolist(), [3, 4, 6, 8])):
        assert ours == theirs
    assert F.tensordot(ints, ints).dtype == F.kron(ints, ints).dtype == np.int64
    assert F.tensordot(ints, minitx.ones(2, 2)).dtype == F.vdot(ints[0], minitx.ones(2)).dtype == np.float32
    a, b = minitx.ones(2, 3), minitx.ones(3, 4)
    for call, error, message in [
        (lambda: F.tensordot(a, b, 3), ValueError, r"tensordot: dims=3 pairs a's last 3 axes with b's first 3; "
                                                   r"shapes \(2, 3\) and \(3, 4\) take 0 to 2"),
        (lambda: F.tensordot(a, b), ValueError, r"tensordot: axis 0 of a \(length 2\) is paired with axis 0 of b "
                                                r"\(length 3\); paired axes need one length"),
        (lambda: F.tensordot(a, b, (1, 0)), TypeError, r"tensordot: dims must be an int or a pair of lists of axes"),
        (lambda: F.tensordot(a, b, ([1], [0, 1])), TypeError, r"tensordot: dims must be an int or a pair"),
        (lambda: F.tensordot(a, b, ([1, 1], [0, 0])), ValueError, r"tensordot: repeated axis"),
        (lambda: F.tensordot(a, b, ([2], [0])), IndexError, r"tensordot: axis 2 is out of range"),
        (lambda: F.tensordot(a, minitx.ones(3, 1), ([1], [1])), ValueError, r"tensordot: axis 1 of a \(length 3\)"),
        (lambda: F.vdot(a, a), ValueError, r"vdot: expects two 1-d tensors of one length, got shapes \(2, 3\)"),
        (lambda: F.vdot(a[0], b[0]), ValueError, r"vdot: expects two 1-d tensors of one length"),
        (lambda: F.inner(a, b), ValueError, r"inner: axis 1 of a \(length 3\) is paired with axis 1 of b \(length 4\)"),
        (lambda: F.inner(a, minitx.tensor(np.ones(3))), TypeError, r"inner: operands of dtypes float32 and float64"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()


# ---------------------------------------------------------------- bilinear and nn.Bilinear


@given(data=st.data())
def test_bilinear_as_its_sum_and_pytorch(data):
    """y[..., o] = sum_{i, j} x1[..., i] A[o, i, j] x2[..., j] + b[o] by a loop over o; gradients
    of all four; PyTorch parity (leading axes: none, one or two)."""
    lead = data.draw(mst.shapes(max_dims=2, max_side=3), label="lead")
    in1, in2, out = (data.draw(st.integers(1, 3), label=name) for name in ("in1", "in2", "out"))
    x1, x2 = data.draw(mst.tensors(lead + (in1,)), label="x1"), data.draw(mst.tensors(lead + (in2,)), label="x2")
    weight = data.draw(mst.tensors((out, in1, in2)), label="weight")
    bias = data.draw(st.none() | mst.tensors((out,)), label="bias")

    def reference(a, b, w, *c):
        y = np.stack([(a[..., :, None] * w[o] * b[..., None, :]).sum(axis=(-2, -1)) for o in range(out)], axis=-1)
        return y + c[0] if c else y

    inputs = (x1, x2, weight) + (() if bias is None else (bias,))
    # rounding is relative to the terms x1_i A_oij x2_j, not to their sum, which may cancel to far less
    terms = reference(*(np.abs(t.numpy()) for t in (x1, x2, weight)))
    check_forward(F.bilinear, reference, *inputs, rtol=1e-12, atol=1e-12 * terms)
    assert check_gradients(F.bilinear, *inputs)
    parity(F.bilinear, lambda *t: torch_in_example().nn.functional.bilinear(*t), *(leaf(t.numpy()) for t in inputs))


def test_bilinear_layer_matches_pytorch_and_loads_its_state_dict():
    torch = import_torch()
    minitx.manual_seed(0)
    ours, theirs = nn.Bilinear(3, 4, 5, dtype="float64"), torch.nn.Bilinear(3, 4, 5, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(4)
    parity(ours, theirs, leaf(rng.standard_normal((2, 6, 3))), leaf(rng.standard_normal((2, 6, 4))))
    for name, parameter in theirs.named_parameters():  # (parity compared the inputs' gradients)
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), parameter.grad.numpy(), rtol=1e-10, err_msg=name)
    for layer in (nn.Bilinear(3, 4, 5), nn.Bilinear(9, 2, 700, bias=False)):  # U(-1/sqrt(in1), 1/sqrt(in1)), as PyTorch's
        bound = 1 / np.sqrt(layer.in1_features)
        for parameter in layer.parameters():
            assert np.abs(parameter.numpy()).max() <= bound
        assert np.abs(layer.weight.numpy()).max() > 0.9 * bound
    assert nn.Bilinear(3, 4, 5, bias=False).bias is None


def test_bilinear_names_what_does_not_fit():
    x1, x2, weight = minitx.ones(2, 3), minitx.ones(2, 4), minitx.ones(5, 3, 4)
    with pytest.raises(ValueError, match=r"bilinear: expected x1 \[..., in1\], x2 \[..., in2\] with the same leading "
                                         r"axes and weight \[out, in1, in2\], got shapes \(2, 3\), \(3, 4\) and "
                                         r"\(5, 3, 4\)"):
        F.bilinear(x1, minitx.ones(3, 4), weight)
    with pytest.raises(ValueError, match=r"bilinear: expected .* got shapes \(2, 3\), \(2, 5\) and \(5, 3, 4\)"):
        F.bilinear(x1, minitx.ones(2, 5), weight)
    with pytest.raises(ValueError, match=r"bilinear: bias of shape \(4,\) does not fit weight \(5, 3, 4\)"):
        F.bilinear(x1, x2, weight, minitx.ones(4))
    with pytest.raises(TypeError, match="bilinear: operands of dtypes float32 and float64"):
        F.bilinear(x1.double(), x2.double(), weight)
    assert F.bilinear(minitx.tensor([1, 2, 3]), x2[0], weight).dtype == np.float32  # integers take the weight's dtype


# ---------------------------------------------------------------- minitx.linalg's norms

LA = minitx.linalg
ORDERS = [0, 0.5, 1, 1.5, 2, 3, np.inf, -np.inf]


def _norm_by_definition(x, ord, axis, keepdims):
    """||x||_ord over the axes: the number of nonzero entries, the largest or smallest |x|, or
    (sum |x|^ord)^(1/ord)."""
    magnitude = np.abs(x)
    if ord == 0:
        return (x != 0).sum(axis=axis, keepdims=keepdims).astype(x.dtype)
    if ord in (np.inf, -np.inf):
        return (magnitude.max if ord > 0 else magnitude.min)(axis=axis, keepdims=keepdims)
    return (magnitude ** ord).sum(axis=axis, keepdims=keepdims) ** (1 / ord)


@given(data=st.data())
def test_vector_norm_as_its_definition_and_pytorch(data):
    """Entries away from 0 and distinct: the gradient checks step across no kink (|x| at 0, ties of ±inf)."""
    x = data.draw(mst.tensors(mst.shapes(max_dims=3, max_side=4), away_from=(0.0,), distinct=True), label="x")
    ord = data.draw(st.sampled_from(ORDERS), label="ord")
    axis, keepdims = data.draw(mst.axes_for(x.ndim), label="dim"), data.draw(st.booleans(), label="keepdim")
    y = LA.vector_norm(x, ord, dim=axis, keepdim=keepdims)
    np.testing.assert_allclose(y.numpy(), _norm_by_definition(x.numpy(), ord, axis, keepdims), rtol=1e-12)
    assert check_gradients(lambda t: LA.vector_norm(t, ord, axis, keepdims), x)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: LA.vector_norm(t, ord, axis, keepdims),
               lambda t: torch.linalg.vector_norm(t, ord, dim=axis, keepdim=keepdims), leaf(x.numpy()))


@st.composite
def two_axes(draw, ndim):
    """Two different axes of an ndim tensor, each possibly negative, in a drawn order."""
    first, second = draw(st.permutations(range(ndim)))[:2]
    return tuple(k - ndim * draw(st.booleans()) for k in (first, second))


def _sums_nearly_tie(A, ord, axes):
    """Whether, in some matrix of A, the largest (ord 1, inf) or smallest (-1, -inf) of its column (ord ±1) or
    row (±inf) sums of |A| lies within 1e-3 of the next: the norm's kink, which a finite difference would
    step across (and where the two libraries' sums, added in other orders, may pick different ones)."""
    if ord == "fro":
        return False
    sums = np.abs(np.moveaxis(A, axes, (-2, -1))).sum(axis=-2 if abs(ord) == 1 else -1)
    if sums.shape[-1] < 2 or sums.size == 0:
        return False
    ordered = np.sort(sums, axis=-1)
    gaps = ordered[..., -1] - ordered[..., -2] if ord > 0 else ordered[..., 1] - ordered[..., 0]
    return bool((gaps < 1e-3).any())


@given(data=st.data())
def test_matrix_norm_as_numpy_and_pytorch(data):
    """Entries away from 0 and distinct; where two sums the max or min picks among nearly tie, the gradients
    are left to the fixed tie tests below (the forward is still checked)."""
    A = data.draw(mst.tensors(mst.shapes(min_dims=2, max_dims=4, max_side=3), away_from=(0.0,), distinct=True),
                  label="A")
    ord = data.draw(st.sampled_from(["fro", 1, -1, np.inf, -np.inf]), label="ord")
    axes, keepdims = data.draw(two_axes(A.ndim), label="dim"), data.draw(st.booleans(), label="keepdim")
    y = LA.matrix_norm(A, ord, dim=axes, keepdim=keepdims)
    np.testing.assert_allclose(y.numpy(), np.linalg.norm(A.numpy(), ord, axis=axes, keepdims=keepdims), rtol=1e-12)
    kink = _sums_nearly_tie(A.numpy(), ord, axes)
    if not kink:
        assert check_gradients(lambda t: LA.matrix_norm(t, ord, axes, keepdims), A)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t: LA.matrix_norm(t, ord, axes, keepdims),
               lambda t: torch.linalg.matrix_norm(t, ord, dim=axes, keepdim=keepdims),
               minitx.tensor(A.numpy()) if kink else leaf(A.numpy()))


@pytest.mark.parametrize("ord", ORDERS)
def test_vector_norm_at_zeros_ties_nan_and_empty_axes(ord):
    """A zero row has gradient 0 (PyTorch's subgradient), ties as PyTorch's; a NaN as PyTorch's but
    at ord 1 and ±inf, where its gradient is NaN (docs/ops.md: as abs's); an empty axis gives 0 but
    at ±inf, refused as PyTorch refuses it."""
    torch = import_torch()
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.0], [2.0, -2.0, 1.0], [np.inf, 1.0, -1.0]])
    parity(lambda t: LA.vector_norm(t, ord, dim=1), lambda t: torch.linalg.vector_norm(t, ord, dim=1), leaf(x))
    nan = leaf(np.array([[np.nan, 1.0, 0.0]]))
    if ord in (1, np.inf, -np.inf):
        LA.vector_norm(nan, ord, dim=1).sum().backward()
        assert np.isnan(nan.grad.numpy()).any()
    else:
        parity(lambda t: LA.vector_norm(t, ord, dim=1), lambda t: torch.linalg.vector_norm(t, ord, dim=1), nan)
    empty = leaf(np.ones((2, 0)))
    if ord in (np.inf, -np.inf):
        with pytest.raises(ValueError, match=r"^vector_norm: axis 1 of the input of shape \(2, 0\) has length 0"):
            LA.vector_norm(empty, ord, dim=1)
    else:
        parity(lambda t: LA.vector_norm(t, ord, dim=1), lambda t: torch.linalg.vector_norm(t, ord, dim=1), empty)


@pytest.mark.parametrize("ord", [2, 3, 0.5, 1.5])
def test_vector_norm_of_one_entry_is_its_magnitude_as_pytorchs(ord):
    """Over a single entry the norm is |x| itself, as PyTorch's, where (sum |x|^p)^(1/p) would underflow
    to 0 (|x| = 6e-170) or overflow to inf (3e200); its gradient sign(x) (|x| / y)^(p-1) is sign(x) there
    too (PyTorch's |x|^(p-1) / y^(p-1) is 0 / 0 or inf / inf at p = 3: NaN)."""
    torch = import_torch()
    x = np.array([[6.4571e-170], [-2.0], [0.0], [3e200]])
    parity(lambda t: LA.vector_norm(t, ord, dim=1), lambda t: torch.linalg.vector_norm(t, ord, dim=1), leaf(x[1:3]))
    parity(lambda t: LA.vector_norm(t, ord, dim=1), lambda t: torch.linalg.vector_norm(t, ord, dim=1),
           minitx.tensor(x))
    t = leaf(x)
    LA.vector_norm(t, ord, dim=1).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.sign(x))
    parity(lambda t: F.renorm(t, 2, 0, 0.0), lambda t: torch.renorm(t, 2, 0, 0.0), leaf(x[:1]))


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm_at_zeros_ties_nan_inf_and_empty_matrices(ord):
    torch = import_torch()
    for A in (np.zeros((2, 3)), np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([[np.nan, 1.0], [2.0, 0.0]]),
              np.array([[np.inf, 1.0], [2.0, -3.0]]), np.array([[1.0, 2.0], [3.0, 0.0]])):
        parity(lambda t: LA.matrix_norm(t, ord), lambda t: torch.linalg.matrix_norm(t, ord), leaf(A))
    for shape in ((0, 3), (3, 0), (2, 0, 0)):
        try:
            expected = torch.linalg.matrix_norm(torch.zeros(shape), ord)
        except IndexError:  # the smallest of no sums: PyTorch refuses, and so does minitx
            with pytest.raises(ValueError, match=r"^matrix_norm: ord=-\w+ is the smallest (row|column) sum, and A "):
                LA.matrix_norm(leaf(np.zeros(shape)), ord)
            continue
        y = LA.matrix_norm(leaf(np.zeros(shape)), ord)
        np.testing.assert_array_equal(y.numpy(), expected.numpy())
        y.sum().backward()


def test_linalg_norm_is_a_vector_or_a_matrix_norm_as_pytorchs():
    torch = import_torch()
    A = np.random.default_rng(0).standard_normal((2, 3, 4))
    for call in (lambda m, t: m.linalg.norm(t), lambda m, t: m.linalg.norm(t[0], 1),
                 lambda m, t: m.linalg.norm(t[0, 0], 0.5), lambda m, t: m.linalg.norm(t, np.inf, dim=(0, 2)),
                 lambda m, t: m.linalg.norm(t, 3, dim=1, keepdim=True), lambda m, t: m.linalg.norm(t, dim=(2, 1)),
                 lambda m, t: m.linalg.norm(t[0], -np.inf)):
        parity(lambda t: call(minitx, t), lambda t: call(torch, t), leaf(A))
    with pytest.raises(ValueError, match=r"^linalg.norm: with ord and no axis, expects a 1-d or 2-d tensor"):
        LA.norm(leaf(A), 2)
    with pytest.raises(ValueError, match=r"^linalg.norm: axis must be one axis or two, got \(0, 1, 2\)"):
        LA.norm(leaf(A), dim=(0, 1, 2))


def test_the_norms_refuse_by_name_what_they_cannot_compute():
    """Negative vector orders other than -inf are refused, as F.norm refuses them (docs/ops.md); the
    matrix orders are PyTorch's ('nuc', 2 and -2: tests/ops/test_matrix.py)."""
    A = leaf(np.ones((2, 2)))
    for ord in (3, "abc", True, float("nan")):
        with pytest.raises(ValueError, match=r"^matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"):
            LA.matrix_norm(A, ord)
    for ord in (-1, float("nan"), "fro", True):
        with pytest.raises(ValueError, match=rf"^vector_norm: ord must be a number >= 0, inf or -inf, got {ord!r}"):
            LA.vector_norm(A, ord)
    for axes, message in (((1, -1), r"repeated axis"), (1, r"axis must be a pair of axes \(rows, columns\), got 1"),
                          ((0, 2), r"axis 2 is out of range")):
        with pytest.raises(ValueError, match=f"^matrix_norm: {message}"):
            LA.matrix_norm(A, dim=axes)
    with pytest.raises(ValueError, match=r"^matrix_norm: expects a tensor of at least 2 axes, got shape \(2,\)"):
        LA.matrix_norm(A[0])
    with pytest.raises(ValueError, match=r"^vector_norm: dtype must be a floating dtype, got 'int64'"):
        LA.vector_norm(A, dtype="int64")
    with pytest.raises(TypeError, match=r"^vector_norm: PyTorch's vector_norm\(dim=\(\)\) reduces every axis"):
        LA.vector_norm(A, dim=())  # (NumPy's axis=() reduces none: said, not guessed)
    # an integer tensor is computed in float32 (PyTorch refuses it); dtype= casts first, as PyTorch's
    assert LA.vector_norm(minitx.tensor([3, 4])).item() == 5.0 and LA.vector_norm(minitx.tensor([3, 4])).dtype == np.float32
    y = LA.matrix_norm(minitx.ones(2, 2, dtype="float16", requires_grad=True), dtype="float32")
    assert y.dtype == np.float32 and y.item() == 2.0
