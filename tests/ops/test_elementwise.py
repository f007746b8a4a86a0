"""Elementwise ops (minitx/ops/elementwise.py): forward against numpy, float64 gradcheck on
hypothesis-drawn shapes (broadcasting, size-1 axes, transposed inputs), backward hygiene and
gradient subsets (op_case / check_gradients), exact gradients at ties and edges, and the error
messages users see."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx.testing import (GradcheckError, arg, check_backward_hygiene, check_forward, check_gradients, gradcheck,
                            leaf, op_case)
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

SHAPES = mst.shapes(max_dims=3, max_side=4)
PAIRS = mst.broadcastable_shapes(2, max_dims=3, max_side=4)
TRIPLES = mst.broadcastable_shapes(3, max_dims=3, max_side=3)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_erf = np.vectorize(math.erf, otypes=[np.float64])

# op class -> (minitx function, independent numpy reference, value options for the input)
UNARY = {
    "Neg": (F.neg, np.negative, {}),
    "Exp": (F.exp, np.exp, {}),
    "Log": (F.log, np.log, {"min_value": 0.2}),
    "Sqrt": (F.sqrt, np.sqrt, {"min_value": 0.2}),
    "Tanh": (F.tanh, np.tanh, {}),
    "Sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), {"min_value": -8.0, "max_value": 8.0}),
    "Relu": (F.relu, lambda x: np.where(x > 0, x, 0.0), {"away_from": (0.0,)}),
    "Gelu-none": (F.gelu, lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2))), {}),
    "Gelu-tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))), {}),
    "Abs": (F.abs, np.abs, {"away_from": (0.0,)}),
    "PowScalar": (lambda x: x ** 3, lambda x: x * x * x, {}),
    "PowScalar-negative-fraction": (lambda x: F.pow(x, -1.5), lambda x: 1 / (x * np.sqrt(x)), {"min_value": 0.3}),
    "PowScalar-zero": (lambda x: x ** 0, np.ones_like, {}),
    "Clip": (lambda x: F.clip(x, -1.0, 0.5), lambda x: np.minimum(np.maximum(x, -1.0), 0.5),
             {"away_from": (-1.0, 0.5)}),
    "Clip-min-only": (lambda x: x.clip(min=0.25), lambda x: np.where(x < 0.25, 0.25, x), {"away_from": (0.25,)}),
    "Clip-max-only": (lambda x: F.clip(x, max=-0.5), lambda x: np.where(x > -0.5, -0.5, x), {"away_from": (-0.5,)}),
    "Astype": (lambda x: F.astype(x, "float64"), lambda x: np.array(x, dtype=np.float64), {}),
    "ToDevice": (lambda x: F.to_device(x, "cpu"), lambda x: x, {}),
}

# op class -> (minitx function, numpy reference, options for a, options for b)
DISTINCT = {"distinct": True}
BINARY = {
    "Add": (lambda a, b: a + b, np.add, {}, {}),
    "Sub": (F.sub, np.subtract, {}, {}),
    "Mul": (lambda a, b: a * b, np.multiply, {}, {}),
    "Div": (F.div, np.divide, {}, {"away_from": (0.0,), "margin": 0.5}),
    "Pow": (lambda a, b: a ** b, np.power, {"min_value": 0.3}, {"min_value": -2.0, "max_value": 2.0}),
    "Maximum": (F.maximum, np.maximum, DISTINCT, DISTINCT),
    "Minimum": (F.minimum, np.minimum, DISTINCT, DISTINCT),
    # away from the origin, where atan2 and hypot have no derivative, and from a = 0 and b = 0,
    # where copysign's jumps are
    "Atan2": (F.atan2, lambda a, b: np.angle(b + 1j * a), {"away_from": (0.0,), "margin": 0.3}, {}),
    "Hypot": (F.hypot, lambda a, b: np.abs(a + 1j * b), {"away_from": (0.0,), "margin": 0.3}, {}),
    "Copysign": (F.copysign, lambda a, b: np.where(b < 0, -np.abs(a), np.abs(a)),
                 {"away_from": (0.0,), "margin": 0.1}, {"away_from": (0.0,), "margin": 0.1}),
}


# the checks of each op (op_case, minitx.testing's op-test factory): forward against the numpy
# reference (values and float64 dtype), then check_gradients: finite differences, backward
# hygiene, and each input alone requiring grad (backward may skip the other)
UNARY_CASES = {name: op_case(fn, arg(**options), numpy=reference, shapes=SHAPES)
               for name, (fn, reference, options) in UNARY.items()}
BINARY_CASES = {name: op_case(fn, arg(**options_a), arg(**options_b), numpy=reference, broadcast=True, shapes=PAIRS)
                for name, (fn, reference, options_a, options_b) in BINARY.items()}


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary_forward_and_gradients(name, data):
    UNARY_CASES[name](data)


def test_relu_abs_clip_subgradients_at_the_kink():
    """The documented subgradients: relu 0 and abs 0 at x = 0; clip passes dy at its bounds."""
    x = minitx.tensor([-1.0, 0.0, 2.0], dtype="float64", requires_grad=True)
    for fn, expected in [(F.relu, [0, 0, 1]), (F.abs, [-1, 0, 1]), (lambda t: F.clip(t, 0.0, 2.0), [0, 1, 1])]:
        x.grad = None
        fn(x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_pow_scalar_zero_has_zero_gradient_even_at_zero():
    x = minitx.tensor([0.0, 2.0], dtype="float64", requires_grad=True)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_pow_at_base_zero_takes_pytorchs_limits():
    """da = 0 where b = 0 (y = 1 for every a); db = 0 where a = 0 and b >= 0; a = 0, b < 0 is
    infinite both ways. tests/test_torch_op_parity.py checks the same against torch."""
    a = minitx.tensor([0.0, 0.0, 0.0, 0.0, 2.0], dtype="float64", requires_grad=True)
    b = minitx.tensor([0.0, 1.0, 2.0, -1.0, 0.0], dtype="float64", requires_grad=True)
    (a ** b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 1.0, 0.0, -np.inf, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0, 0.0, -np.inf, np.log(2.0)])
    x = minitx.tensor([0.0, 1.0, 0.5, -1.0], dtype="float64", requires_grad=True)
    F.pow(0.0, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, -np.inf])


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh', got 'erf'"):
        F.gelu(minitx.tensor([1.0]), approximate="erf")


# ---------------------------------------------------------------- binary ops


@pytest.mark.parametrize("name", list(BINARY))
@given(data=st.data())
def test_binary_forward_and_gradients_broadcast(name, data):
    BINARY_CASES[name](data)


@pytest.mark.parametrize("op, fn", [("add", F.add), ("mul", F.mul), ("sub", F.sub), ("div", F.div),
                                    ("maximum", F.maximum), ("minimum", F.minimum), ("pow", F.pow),
                                    *((name, getattr(F, name)) for name in ("equal", "not_equal", "less", "less_equal",
                                                                            "greater", "greater_equal"))],
                         ids=["Add", "Mul", "Sub", "Div", "Maximum", "Minimum", "Pow", "equal", "not_equal", "less",
                              "less_equal", "greater", "greater_equal"])
def test_binary_shape_mismatch_names_op_and_shapes(op, fn):
    a, b = minitx.ones(2, 3), minitx.ones(4, 3)
    with pytest.raises(ValueError, match=rf"^{op}: shapes \(2, 3\) and \(4, 3\) do not broadcast$"):
        fn(a, b)


def test_python_numbers_keep_the_tensor_dtype():
    x = minitx.tensor([1.0, 2.0])
    assert (x * 2).dtype == np.float32 and (2 - x).dtype == np.float32 and (1 / x).dtype == np.float32
    np.testing.assert_allclose((2 - x).numpy(), [1.0, 0.0])


@pytest.mark.parametrize("name, fn, a_share", [("Maximum", F.maximum, [0.0, 0.5, 1.0]),
                                               ("Minimum", F.minimum, [1.0, 0.5, 0.0])])
def test_maximum_minimum_ties_share_the_gradient(name, fn, a_share):
    a = minitx.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    b = minitx.tensor([2.0, 2.0, 2.0], dtype="float64", requires_grad=True)
    dy = np.array([4.0, 6.0, 8.0])
    fn(a, b).backward(dy)
    np.testing.assert_array_equal(a.grad.numpy(), dy * a_share)
    np.testing.assert_array_equal(b.grad.numpy(), dy * (1 - np.array(a_share)))


def test_maximum_tie_with_a_broadcast_operand():
    a = minitx.tensor([[1.0, 5.0, 5.0]], dtype="float64", requires_grad=True)
    b = minitx.tensor([[5.0]], dtype="float64", requires_grad=True)
    F.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0.0, 0.5, 0.5]])
    np.testing.assert_array_equal(b.grad.numpy(), [[2.0]])


# ---------------------------------------------------------------- where, masked_fill


@st.composite
def _where_inputs(draw):
    shape_c, shape_a, shape_b = draw(TRIPLES)
    cond = minitx.tensor(draw(hnp.arrays(np.bool_, shape_c)))
    return cond, draw(mst.tensors(shape_a)), draw(mst.tensors(shape_b))


@st.composite
def _masked_fill_inputs(draw):
    shape_mask, shape_other = draw(PAIRS)
    x = draw(mst.tensors(np.broadcast_shapes(shape_mask, shape_other)))
    return x, minitx.tensor(draw(hnp.arrays(np.bool_, shape_mask)))


@st.composite
def _masked_fill_tensor_value_inputs(draw):
    """x, a mask and a value tensor (0-d, as PyTorch takes, or any shape) that broadcast to x's shape."""
    shape_mask, shape_value, shape_other = draw(TRIPLES)
    x = draw(mst.tensors(np.broadcast_shapes(shape_mask, shape_value, shape_other)))
    return x, minitx.tensor(draw(hnp.arrays(np.bool_, shape_mask))), draw(mst.tensors(shape_value))


# op class -> (strategy of (x or a, b, mask...) inputs, minitx function, numpy reference)
MASKED = {
    "Where": (_where_inputs(), F.where, np.where),
    "MaskedFill": (_masked_fill_inputs(), lambda x, mask: x.masked_fill(mask, -1.5),
                   lambda x, mask: np.where(mask, -1.5, x)),
    "MaskedFill-tensor-value": (_masked_fill_tensor_value_inputs(), F.masked_fill,
                                lambda x, mask, value: np.where(mask, value, x)),
}


@pytest.mark.parametrize("name", list(MASKED))
@given(data=st.data())
def test_masked_forward_gradcheck_and_hygiene(name, data):
    inputs, fn, reference = MASKED[name]
    inputs = data.draw(inputs)
    assert check_forward(fn, reference, *inputs, rtol=1e-10, atol=1e-12).dtype == np.float64
    assert check_gradients(fn, *inputs)


@given(_masked_fill_inputs(), st.sampled_from([-1e9, -np.inf]))
def test_masked_fill_writes_huge_and_infinite_values(inputs, value):
    x, mask = inputs
    expected = x.numpy().copy()
    expected[np.broadcast_to(mask.numpy(), x.shape)] = value
    out = F.masked_fill(x, mask, value)
    np.testing.assert_array_equal(out.numpy(), expected)
    out.backward(np.ones(x.shape))
    np.testing.assert_array_equal(x.grad.numpy(), expected != value)


@given(_masked_fill_inputs())
def test_masked_fill_with_a_0d_tensor_value_matches_pytorch(inputs):
    x, mask = inputs
    value = minitx.tensor(np.array(2.5), requires_grad=True)
    parity(F.masked_fill, lambda x, mask, value: x.masked_fill(mask, value), x, mask, value)


def test_masked_fill_value_gets_the_sum_of_dy_over_the_masked_entries_in_its_own_dtype():
    x = minitx.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)  # float32
    mask = minitx.tensor([[True, False, True], [False, False, True]])
    value, row = minitx.tensor(np.array(9.0), requires_grad=True), minitx.tensor([7.0, 8.0, 9.0], requires_grad=True)
    y = F.masked_fill(x, mask, value)
    assert y.dtype == np.float32 and y.tolist() == [[9.0, 2.0, 9.0], [4.0, 5.0, 9.0]]
    y.backward(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    assert value.grad.dtype == np.float64 and value.grad.tolist() == 1.0 + 3.0 + 6.0
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 2.0, 0.0], [4.0, 5.0, 0.0]])
    F.masked_fill(x, mask, row).backward(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(row.grad.numpy(), [1.0, 0.0, 2.0])  # summed over the broadcast rows


def test_where_accepts_numbers_and_passes_no_gradient_to_the_masked_side():
    x = minitx.tensor([1.0, -2.0, 3.0], dtype="float64", requires_grad=True)
    y = F.where(x > 0, x, 0.0)
    np.testing.assert_array_equal(y.numpy(), [1.0, 0.0, 3.0])
    y.backward(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])


def test_where_and_masked_fill_need_boolean_masks():
    x = minitx.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="where: cond must be a boolean tensor, got dtype int64"):
        F.where(minitx.tensor([1, 0]), x, x)
    with pytest.raises(TypeError, match="masked_fill: mask must be a boolean tensor, got dtype float32"):
        F.masked_fill(x, x, 0.0)


def test_where_and_masked_fill_shape_errors():
    x = minitx.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"where: shapes \(3,\), \(2,\) and \(2,\) do not broadcast"):
        F.where(minitx.tensor([True, False, True]), x, x)
    with pytest.raises(ValueError, match=r"masked_fill: mask of shape \(2, 2\) does not broadcast to \(2,\)"):
        F.masked_fill(x, minitx.tensor([[True, False], [False, True]]), 0.0)
    with pytest.raises(ValueError, match=r"masked_fill: mask of shape \(3,\) does not broadcast to \(2,\)"):
        F.masked_fill(x, minitx.tensor([True, False, True]), 0.0)
    with pytest.raises(ValueError, match=r"masked_fill: value of shape \(3, 2\) does not broadcast to \(2,\)"):
        F.masked_fill(x, minitx.tensor([True, False]), minitx.ones(3, 2))


@pytest.mark.parametrize("x_dtype, value_dtype", [("int64", "float32"), ("int8", "float64"), ("bool", "int64"),
                                                  ("uint8", "bfloat16")])
def test_masked_fill_refuses_a_value_tensor_its_integers_would_truncate(x_dtype, value_dtype):
    """As a number that does not fit (0.5 into int64) is refused, so is a value tensor of a kind
    the tensor cannot hold, where NumPy and PyTorch would cast it silently."""
    x, mask = minitx.zeros(3, dtype=x_dtype), minitx.tensor([True, False, True])
    with pytest.raises(TypeError, match=rf"masked_fill: a value tensor of dtype {value_dtype} would be truncated "
                                        rf"into the tensor's {x_dtype}"):
        F.masked_fill(x, mask, minitx.tensor(0.5, dtype=value_dtype))
    np.testing.assert_array_equal(F.masked_fill(x, mask, minitx.tensor(1, dtype=x_dtype)).numpy(), [1, 0, 1])


# ---------------------------------------------------------------- clip, astype, to_device


def test_clip_with_min_above_max_is_max_as_numpy_and_needs_a_bound():
    x = minitx.tensor([-1.0, 1.5, 4.0], dtype="float64", requires_grad=True)
    y = F.clip(x, 2.0, 1.0)
    np.testing.assert_array_equal(y.numpy(), np.clip(x.numpy(), 2.0, 1.0))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])  # y is constant
    with pytest.raises(ValueError, match="clip: give at least one of min and max"):
        F.clip(x)


QUARTERS = tuple(np.arange(-16, 17) / 4)  # low is drawn on the halves, high on the quarters between


def _np_clip(x, low, high):
    return np.minimum(np.maximum(x, low), high)


@given(data=st.data())
def test_clip_with_tensor_bounds_gradients_and_pytorch(data):
    """ClipTensor: x, low and high broadcast together, each a float64 leaf; x stays 0.05 from
    every quarter and low (halves) never meets high (odd quarters), so finite differences hold,
    low > high included. PyTorch's clamp gives the same output and gradients."""
    shapes = data.draw(TRIPLES, label="shapes")
    x = data.draw(mst.tensors(shapes[0], away_from=QUARTERS), label="x")
    draws = [data.draw(mst.float_arrays(shape), label=name) for shape, name in zip(shapes[1:], ("low", "high"))]
    low, high = leaf(np.round(draws[0] * 2) / 2), leaf(np.round(draws[1] * 2) / 2 + 0.25)
    check_forward(lambda *ts: F.clip(*ts), _np_clip, x, low, high)
    check_gradients(lambda a, b, c: F.clip(a, b, c), x, low, high)
    check_gradients(lambda a, b: a.clip(b), x, low)
    check_gradients(lambda a, c: a.clip(max=c), x, high)
    if x.shape == np.broadcast_shapes(*shapes):  # else PyTorch's backward of two bounds fails: an in-place
        parity(lambda a, b, c: a.clip(b, c), lambda a, b, c: a.clamp(b, c), x, low, high)  # and of unequal masks


def test_clip_with_tensor_bounds_at_ties_and_min_above_max_as_pytorch():
    """x takes dy at x == low and x == high; low takes it where x < low < high, high where
    x > high or high < low (then y is high everywhere): they add up to dy, as in PyTorch."""
    x = leaf([0.0, 1.0, 2.0, 3.0, 5.0, -1.0, 4.0])
    low = leaf([0.0, 2.0, 2.0, 4.0, 5.0, 0.0, 0.0])
    high = leaf([1.0, 1.0, 3.0, 3.0, 5.0, 1.0, 1.0])
    parity(lambda a, b, c: F.clip(a, b, c), lambda a, b, c: a.clamp(b, c), x, low, high)
    x.grad = low.grad = high.grad = None
    y = F.clip(x, low, high)
    np.testing.assert_array_equal(y.numpy(), np.clip(x.numpy(), low.numpy(), high.numpy()))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 1, 0, 1, 0, 0])
    np.testing.assert_array_equal(low.grad.numpy(), [0, 0, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(high.grad.numpy(), [0, 1, 0, 1, 0, 0, 1])
    for one in ("low", "high"):  # one bound: ties still go to x
        a, b = leaf([-1.0, 0.0, 1.0]), leaf([0.0, 0.0, 0.0])
        parity(lambda a, b: a.clip(b) if one == "low" else a.clip(max=b),
               lambda a, b: a.clamp(b) if one == "low" else a.clamp(max=b), a, b)


def test_clip_bounds_that_alone_require_grad_or_grow_x_get_their_gradient():
    x = minitx.tensor([-2.0, 0.0, 2.0], dtype="float64")
    low = leaf([-1.0, 1.0, 1.0])
    y = x.clip(low, None)
    assert y.requires_grad
    y.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(low.grad.numpy(), [1.0, 2.0, 0.0])
    x, low = leaf([0.5, 2.0]), leaf(np.full((3, 2), 1.0))
    y = parity(lambda a, b: a.clip(b), lambda a, b: a.clamp(b), x, low)
    assert y.shape == (3, 2)


def test_clip_with_tensor_bounds_dtypes_and_errors():
    """Tensor bounds promote with x as in x + bound; a number beside a tensor bound takes x's
    dtype (PyTorch refuses the mix); NumPy scalars count as the numbers they hold."""
    ints, f32 = minitx.tensor([1, 2, 3]), minitx.tensor([1.0, 2.0, 3.0], dtype="float32")
    assert ints.clip(minitx.tensor([1.5], dtype="float32")).dtype == np.float32
    assert ints.clip(minitx.tensor([2], dtype="int32")).dtype == np.int64
    assert f32.clip(minitx.tensor([2], dtype="int64"), 2.5).tolist() == [2.0, 2.0, 2.5]
    assert f32.clip(minitx.tensor([0.0], dtype="float64")).dtype == np.float64
    assert f32.clip(np.float64(1.5)).dtype == np.float32 and ints.clip(np.float32(1.5)).dtype == np.float32
    assert f32.clip([2.0, 0.0, 0.0]).tolist() == [2.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"^clip: shapes \(3,\) and \(2,\) do not broadcast"):
        f32.clip(minitx.zeros(2))


@given(mst.tensors(SHAPES))
def test_astype_to_float32_and_back_gives_float64_gradients(x):
    y = F.astype(x, "float32")
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), x.numpy().astype(np.float32))
    dy = np.arange(y.size, dtype=np.float32).reshape(y.shape)
    y.backward(dy)
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), dy.astype(np.float64))
    assert check_backward_hygiene(lambda t: t.astype(minitx.float32), x)


def test_astype_to_integers_truncates_like_numpy():
    x = minitx.tensor([-1.5, 0.5, 2.7])
    np.testing.assert_array_equal(F.astype(x, "int64").numpy(), np.array([-1.5, 0.5, 2.7]).astype(np.int64))
    assert F.astype(minitx.tensor([0, 3]), np.bool_).tolist() == [False, True]


@pytest.mark.parametrize("dtype", ["complex64", "banana", object, np.longdouble])
def test_astype_unknown_dtype_lists_the_valid_ones(dtype):
    with pytest.raises(TypeError, match=r"unknown dtype .*; expected one of float16, float32, float64, int8"):
        F.astype(minitx.tensor([1.0]), dtype)


@given(mst.tensors(SHAPES))
def test_to_device_cpu_to_cpu_is_a_no_op_move(x):
    y = F.to_device(x, "cpu")
    assert y.device == "cpu" and y.dtype == x.dtype
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert x.to("cpu") is x  # Tensor.to skips the op when nothing changes
    dy = np.ones(y.shape)
    y.backward(dy)
    np.testing.assert_array_equal(x.grad.numpy(), dy)


def test_to_device_rejects_unknown_devices():
    with pytest.raises(ValueError, match="unknown device 'tpu'; expected 'cpu' or 'cuda'"):
        F.to_device(minitx.tensor([1.0]), "tpu")


# ---------------------------------------------------------------- nan_to_num, lerp

EDGES = (np.nan, np.inf, -np.inf)
REPLACEMENTS = {"nan": st.sampled_from([0.0, -1.5, 1e300]), "posinf": st.sampled_from([None, 1e3, -2.0]),
                "neginf": st.sampled_from([None, -1e3, 0.5])}
# x with NaN and infinities: forward against NumPy and PyTorch, gradients against PyTorch (dy where
# x is finite, 0 where it was replaced); without them also finite differences
NAN_TO_NUM = op_case(lambda x, nan, posinf, neginf: F.nan_to_num(x, nan, posinf, neginf), arg(edges=EDGES),
                     numpy=lambda a, nan, posinf, neginf: np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf),
                     torch="torch.nan_to_num", kwargs=REPLACEMENTS, shapes=SHAPES)
# a + w (b - a), broadcast, w drawn past [0, 1] too (an extrapolation), and as a number
LERP = op_case(F.lerp, arg(), arg(), arg(min_value=-0.5, max_value=1.5), numpy=lambda a, b, w: a + w * (b - a),
               torch="torch.lerp", broadcast=True, shapes=TRIPLES)
LERP_NUMBER = op_case(lambda a, b, w: a.lerp(b, w), arg(), arg(), numpy=lambda a, b, w: a + w * (b - a),
                      torch=lambda a, b, w: a.lerp(b, w), kwargs={"w": st.sampled_from([0.0, 0.3, 0.5, 1.0, 2.5])},
                      broadcast=True, shapes=PAIRS)
# infinities and NaN through PyTorch's two-sided formula: the same NaN, inf and gradients
LERP_EDGES = op_case(F.lerp, arg(edges=EDGES), arg(edges=EDGES), arg(min_value=-0.5, max_value=1.5, edges=(0.5,)),
                     torch="torch.lerp", gradcheck=False, broadcast=True, shapes=TRIPLES)


@pytest.mark.parametrize("case", [NAN_TO_NUM, LERP, LERP_NUMBER, LERP_EDGES],
                         ids=["NanToNum", "Lerp", "Lerp-number", "Lerp-edges"])
@given(data=st.data())
def test_nan_to_num_and_lerp(case, data):
    case(data)


@given(x=mst.tensors(SHAPES), data=st.data())
def test_nan_to_num_gradient_where_values_were_replaced(x, data):
    """Finite differences see replaced entries as constant: 0 there, dy elsewhere."""
    a = x.numpy().copy()
    a[data.draw(mst.bool_masks(a.shape), label="replaced")] = data.draw(st.sampled_from(EDGES), label="edge")
    assert check_gradients(lambda t: F.nan_to_num(t, 2.0, posinf=10.0), leaf(a))
    t = leaf(a)
    t.nan_to_num(neginf=-1.0).backward(np.full(a.shape, np.inf))  # an infinite dy: 0 where replaced (PyTorch: NaN)
    np.testing.assert_array_equal(t.grad.numpy(), np.where(np.isfinite(a), np.inf, 0.0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_nan_to_num_takes_the_dtypes_largest_values_and_rounds_replacements_as_pytorch(dtype):
    torch = import_torch()
    a = np.array([np.nan, np.inf, -np.inf, 1.5], dtype=np.float32)
    for kwargs in ({}, {"nan": 0.1, "posinf": 1e6, "neginf": -1e-9}):
        ours = F.nan_to_num(minitx.tensor(a).to(dtype=dtype), **kwargs)
        theirs = torch.nan_to_num(torch.from_numpy(a).to(getattr(torch, dtype)), **kwargs)
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.to(dtype="float32").numpy(), theirs.float().numpy())


def test_nan_to_num_of_integers_is_a_copy_and_its_errors():
    x = minitx.tensor([1, 2])
    y = minitx.nan_to_num(x, nan=0.5)
    assert y.dtype == np.int64 and y.numpy().tolist() == [1, 2] and y.data is not x.data
    with pytest.raises(TypeError, match="nan_to_num: posinf must be a number, got 'big'"):
        F.nan_to_num(minitx.tensor([1.0]), posinf="big")


# x + value * t1 * t2 and x + value * t1 / t2, broadcast (t2 kept from 0 for the quotient)
VALUES = {"value": st.sampled_from([1, -0.5, 2.0])}
ADDCMUL = op_case(lambda x, a, b, value: F.addcmul(x, a, b, value=value), arg(), arg(), arg(),
                  numpy=lambda x, a, b, value: x + value * a * b,
                  torch=lambda x, a, b, value: x.addcmul(a, b, value=value), kwargs=VALUES, broadcast=True,
                  shapes=TRIPLES)
ADDCDIV = op_case(lambda x, a, b, value: x.addcdiv(a, b, value=value), arg(), arg(), arg(min_value=0.5),
                  numpy=lambda x, a, b, value: x + value * a / b,
                  torch=lambda x, a, b, value: x.addcdiv(a, b, value=value), kwargs=VALUES, broadcast=True,
                  shapes=TRIPLES)


@pytest.mark.parametrize("case", [ADDCMUL, ADDCDIV], ids=["addcmul", "addcdiv"])
@given(data=st.data())
def test_addcmul_and_addcdiv(case, data):
    case(data)


def test_lerp_reaches_b_exactly_and_promotes_as_pytorch_cannot():
    """w = 1 gives b itself (a + (b - a) may not); a float32 a beside float64 b and w is float64,
    integers become float32 (PyTorch refuses both); shapes that do not broadcast name all three."""
    a, b = minitx.tensor([0.1, -3.7], dtype="float64"), minitx.tensor([0.7, 1e-17], dtype="float64")
    np.testing.assert_array_equal(F.lerp(a, b, 1.0).numpy(), b.numpy())
    assert F.lerp(a.to(dtype="float32"), b, 0.5).dtype == np.float64
    assert F.lerp(minitx.tensor([1, 2]), 5, minitx.tensor(0.25)).numpy().tolist() == [2.0, 2.75]
    assert F.lerp(minitx.tensor([1, 2]), 5, 0.25).dtype == np.float32
    torch, empty = import_torch(), np.zeros((0, 3))  # no entries: an empty result and gradient, as PyTorch's
    assert parity(lambda s, t: F.lerp(s, t, 0.5), lambda s, t: torch.lerp(s, t, 0.5), leaf(empty), leaf(empty)).shape \
        == parity(F.nan_to_num, torch.nan_to_num, leaf(empty)).shape == (0, 3)
    with pytest.raises(ValueError, match=r"lerp: shapes \(2,\), \(2, 1\), \(3,\) of a, b and weight do not broadcast"):
        F.lerp(a, minitx.ones(2, 1), minitx.ones(3))


# ---------------------------------------------------------------- gradcheck as a user would use it


class _WrongSquare(minitx.Function):
    """y = x^2 with a wrong backward (x instead of 2 x), which gradcheck must catch."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, dy):
        (x,) = self.saved
        return (dy * x,)


class _InPlaceNeg(minitx.Function):
    """y = -x with a backward that overwrites dy, which check_backward_hygiene must catch."""

    def forward(self, x):
        return -x

    def backward(self, dy):
        dy *= -1
        return (dy,)


@pytest.mark.parametrize("shape", [(3,), (40, 40)])  # full Jacobian and random directions
def test_gradcheck_catches_a_wrong_backward(shape):
    x = minitx.tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape), dtype="float64",
                      requires_grad=True)
    with pytest.raises(GradcheckError, match="gradcheck: gradient of input 0 is wrong"):
        gradcheck(lambda t: _WrongSquare()(t), x)  # a fresh op per call, as F.* functions do
    with pytest.raises(GradcheckError, match="modified an input, a saved array or dy in place"):
        check_backward_hygiene(lambda t: _InPlaceNeg()(t), x)


def test_gradcheck_needs_float64_inputs_that_require_grad():
    with pytest.raises(TypeError, match="gradcheck: input 0 has dtype float32"):
        gradcheck(F.exp, minitx.tensor([1.0], requires_grad=True))
    with pytest.raises(ValueError, match="gradcheck: no input requires grad"):
        gradcheck(F.exp, minitx.tensor([1.0], dtype="float64"))


def test_relu_of_minus_infinity_is_zero_not_nan_and_nan_stays_nan():
    x = minitx.tensor([-np.inf, -1.0, 0.0, 2.0, np.inf, np.nan], requires_grad=True)
    for y in (F.relu(x), F.bias_act_dropout(x, activation="relu")):
        np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 0.0, 2.0, np.inf, np.nan])
        x.grad = None
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 1.0, 1.0, 1.0])  # PyTorch passes dy at NaN


def test_division_fmod_and_clip_gradients_at_their_edges():
    """db = -dy * (y / b): a true 0 where dy / b would overflow; fmod(1, 0.1) = 1 - 9 * 0.1 has the
    divisor slope -9 (remainder's), not -10 from the rounded 1 / 0.1; a clip's infinite dy outside
    the bounds gives 0, not inf * 0."""
    a, b = leaf([0.0, 1e-300]), leaf([1e-310, 1e-5])
    F.div(a, b).backward(np.array([1.0, 1e306]))
    assert b.grad.numpy()[0] == 0 and np.isclose(b.grad.numpy()[1], -1e16, rtol=1e-15, atol=0)
    a, b = leaf([1.0, 3.0]), leaf([0.1, 0.1])
    F.fmod(a, b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [-9.0, -29.0])
    np.testing.assert_array_equal(b.grad.numpy(), -np.round((a.numpy() - np.fmod(a.numpy(), 0.1)) / 0.1))
    x = leaf([-1.0, 0.5, 2.0])
    F.clip(x, 0.0, 1.0).backward(np.array([np.inf, 1.0, np.inf]))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])


def test_sign_of_booleans_is_the_booleans_as_in_pytorch():
    """sign(True) is True and sign(False) False (PyTorch's bool result); NumPy has no boolean
    sign loop, so minitx once raised its bare UFuncTypeError."""
    torch = torch_in_example()
    flags = minitx.tensor([True, False, True])
    got = F.sign(flags)
    assert got.dtype == np.bool_ and got.tolist() == [True, False, True]
    assert flags.sign().tolist() == [True, False, True] and F.sign(minitx.tensor(False)).tolist() is False
    if torch is not None:
        assert torch.sign(torch.tensor([True, False, True])).tolist() == got.tolist()
