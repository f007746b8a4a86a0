"""Every dtype a Tensor holds, end to end: made, computed with, indexed, saved, loaded and handed
to PyTorch without turning into another dtype on the way.

The dtypes are NumPy's (backend.dtype_names()): float16/32/64, int8 to int64, uint8 to uint64,
bool, and bfloat16 (tests/test_amp.py). Integer arithmetic wraps around as NumPy's and PyTorch's
does (int8 100 + 100 is -56); a Python integer outside the tensor's range is refused by name
(NumPy raises too, PyTorch wraps it). Sums and products accumulate as PyTorch's: integers
narrower than 64 bits in int64 (NumPy's would be uint64 for the unsigned ones), float16 in float32. Results are compared with NumPy on the same arrays, and
with PyTorch for the dtypes PyTorch computes in (it only stores uint16, uint32 and uint64).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from _torch_kit import torch_in_example

INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = INTEGERS + ["float16", "float32", "float64", "bool"]
TORCH_COMPUTES = {"int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64", "bool"}


def arrays(dtype, shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)):
    elements = None
    if dtype.startswith("float"):  # finite values: inf - inf is NaN in both, but hides wrap-around checks
        elements = st.floats(-100, 100, width=np.dtype(dtype).itemsize * 8)
    return hnp.arrays(dtype, shape, elements=elements)


@pytest.mark.parametrize("dtype", ALL)
def test_creation_keeps_the_dtype(dtype):
    source = np.arange(6).reshape(2, 3).astype(dtype)
    for t in (minitx.tensor(source), minitx.Tensor(source), minitx.tensor(source.tolist(), dtype=dtype),
              minitx.zeros((2, 3), dtype=dtype), minitx.full((2, 3), 1, dtype=dtype),
              minitx.tensor(source[0, 0]), minitx.tensor([1], dtype=getattr(minitx, dtype.replace("bool", "bool_")))):
        assert t.dtype == np.dtype(dtype), t
    np.testing.assert_array_equal(minitx.tensor(source).numpy(), source)


@pytest.mark.parametrize("dtype", INTEGERS + ["float16", "float32", "float64"])  # each dtype, every run
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_arithmetic_and_comparisons_follow_numpy(dtype, data):
    a = data.draw(arrays(dtype), label="a")
    b = data.draw(arrays(dtype, st.just(a.shape)), label="b")
    x, y = minitx.tensor(a), minitx.tensor(b)
    def accumulated(reduce):  # as PyTorch accumulates: integers in int64, float16 in float32
        if dtype == "float16":
            return reduce(axis=-1, dtype="float32").astype("float16")
        return reduce(axis=-1, dtype="int64" if dtype in INTEGERS and dtype != "uint64" else None)

    with np.errstate(all="ignore"):  # NumPy's overflow warnings (minitx's ops give none)
        expected = {"add": a + b, "sub": a - b, "mul": a * b, "max": np.maximum(a, b), "lt": a < b,
                    "eq": a == b, "neg": -a, "sum": accumulated(a.sum), "amax": a.max(axis=-1),
                    "argmax": a.argmax(axis=-1), "cumsum": accumulated(a.cumsum),
                    "prod": accumulated(a.prod)}
    got = {"add": x + y, "sub": x - y, "mul": x * y, "max": F.maximum(x, y), "lt": x < y, "eq": x == y,
           "neg": -x, "sum": x.sum(axis=-1), "amax": x.max(axis=-1), "argmax": x.argmax(axis=-1),
           "cumsum": F.cumsum(x, -1), "prod": x.prod(axis=-1)}
    for name, value in expected.items():
        assert got[name].dtype == value.dtype, (name, got[name].dtype, value.dtype)
        np.testing.assert_array_equal(got[name].numpy(), value, err_msg=name)
    torch = torch_in_example() if dtype in TORCH_COMPUTES else None
    if torch is not None:  # the same dtypes and the same wrapped-around values as PyTorch
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        for name, theirs in {"add": ta + tb, "sub": ta - tb, "mul": ta * tb, "sum": ta.sum(-1),
                              "cumsum": ta.cumsum(-1), "prod": ta.prod(-1)}.items():
            assert str(theirs.dtype) == f"torch.{got[name].dtype}", name
            if name == "prod" and dtype == "float16":
                continue  # PyTorch's CPU prod multiplies float16 in float16 (14 * 48 * 98 * 0 is inf * 0 = NaN
                # there); minitx multiplies in float32 and rounds once (0)
            if dtype.startswith("float") and name != "add" and name != "sub" and name != "mul":
                # PyTorch's CPU cumsum of float32 adds in float64, its sums in another order: a few ulps
                np.testing.assert_allclose(got[name].numpy(), theirs.numpy(), rtol=4 * np.finfo(dtype).eps,
                                           atol=4 * np.finfo(dtype).eps * np.abs(a).sum(), err_msg=name)
            else:
                np.testing.assert_array_equal(got[name].numpy(), theirs.numpy(), err_msg=name)


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(ALL), data=st.data())
def test_shape_and_indexing_ops_move_values_unchanged(dtype, data):
    a = data.draw(arrays(dtype), label="a")
    x = minitx.tensor(a)
    index = data.draw(st.lists(st.integers(0, a.shape[0] - 1), min_size=1, max_size=5), label="index")
    cases = {
        "reshape": (x.reshape(-1), a.reshape(-1)),
        "transpose": (x.transpose(), a.transpose()),
        "getitem": (x[np.array(index)], a[np.array(index)]),
        "concatenate": (F.concatenate([x, x], axis=0), np.concatenate([a, a], axis=0)),
        "flip": (F.flip(x, 0), np.flip(a, 0)),
        "roll": (F.roll(x, 1, 0), np.roll(a, 1, 0)),
        "pad": (F.pad(x, [(1, 0)] + [(0, 0)] * (a.ndim - 1)), np.pad(a, [(1, 0)] + [(0, 0)] * (a.ndim - 1))),
        "where": (F.where(minitx.tensor(a != 0), x, x[::-1]), np.where(a != 0, a, a[::-1])),
        "sort": (F.sort(x, -1)[0], np.sort(a, -1, kind="stable")),
    }
    for name, (got, expected) in cases.items():
        assert got.dtype == expected.dtype, (name, got.dtype)
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=name)


@pytest.mark.parametrize("dtype", ALL)
def test_save_load_and_dlpack_keep_dtype_and_bits(dtype, tmp_path):
    a = np.arange(-3, 3).astype(dtype)
    path = tmp_path / "t.npz"
    minitx.save({"x": minitx.tensor(a)}, path)
    back = minitx.load(path)["x"]
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back.numpy(), a)
    again = minitx.from_dlpack(np.from_dlpack(minitx.tensor(a)))
    assert again.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(again.numpy(), a)


@pytest.mark.parametrize("dtype", sorted(TORCH_COMPUTES))
def test_a_torch_tensor_comes_and_goes_in_its_dtype(dtype):
    torch = pytest.importorskip("torch")
    source = torch.from_numpy(np.arange(-2, 4).astype(dtype))
    t = minitx.Tensor(source)
    assert t.dtype == np.dtype(dtype)
    assert torch.from_dlpack(t).dtype == source.dtype


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_a_python_integer_outside_the_range_is_refused_by_name(dtype):
    x = minitx.tensor(np.array([1, 2], dtype=dtype))
    too_big = int(np.iinfo(dtype).max) + 1
    with pytest.raises(OverflowError, match=f"add: the Python integer {too_big} does not fit the tensor's {dtype}"):
        x + too_big
    np.testing.assert_array_equal((x + 1).numpy(), np.array([2, 3], dtype=dtype))  # in range: kept


def test_float16_carries_gradients_in_float16():
    """float16 is a floating dtype: gradients flow and arrive in float16, within its 2^-11 precision
    of the float64 gradient; the fused kernels take float32/float64/bfloat16, so float16 takes the
    reference path (kernels.enabled says no)."""
    from minitx import kernels

    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))

    def grads(dtype):
        x, weight = minitx.tensor(a.astype(dtype), requires_grad=True), minitx.tensor(w.astype(dtype), requires_grad=True)
        loss = F.log_softmax(x @ weight, -1).sum()
        loss.backward()
        return loss, x.grad, weight.grad

    loss16, dx16, dw16 = grads("float16")
    loss64, dx64, dw64 = grads("float64")
    assert loss16.dtype == dx16.dtype == dw16.dtype == np.float16
    np.testing.assert_allclose(dx16.numpy(), dx64.numpy(), rtol=0, atol=2e-2)
    np.testing.assert_allclose(dw16.numpy(), dw64.numpy(), rtol=0, atol=2e-2)
    with kernels.emulate_on_cpu():
        assert kernels.enabled(a.astype("float32")) and not kernels.enabled(a.astype("float16"))


INTEGER_INPUTS = {  # ops on real numbers: an integer tensor is computed in float32, PyTorch's default float
    "mean": lambda x: x.mean(), "var": lambda x: F.var(x, -1), "std": lambda x: F.std(x, -1),
    "clip with a float bound": lambda x: F.clip(x, 0.5, 2.5), "softmax": lambda x: F.softmax(x, -1),
    "cross_entropy": lambda x: F.cross_entropy(x, minitx.tensor([0, 1])), "exp": F.exp,
    "attention": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("name", sorted(INTEGER_INPUTS))
def test_an_integer_tensor_in_an_op_on_real_numbers_is_computed_in_float32(name, dtype):
    x = np.array([[1, 2], [3, 5]], dtype=dtype)
    got = INTEGER_INPUTS[name](minitx.tensor(x))
    expected = INTEGER_INPUTS[name](minitx.tensor(x.astype("float32")))
    assert got.dtype == np.float32, f"{name}: {got.dtype}"
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_integer_clip_with_integer_bounds_stays_integer():
    assert F.clip(minitx.tensor([1, 5, 9]), 2, 6).tolist() == [2, 5, 6]


@pytest.mark.parametrize("call, message", [
    (lambda: F.pad(minitx.tensor(np.array([1, 2], np.uint8)), 1, value=-1.5),
     r"pad: value -1.5 does not fit the tensor's uint8 \(whole numbers from 0 to 255\)"),
    (lambda: F.pad(minitx.tensor([1, 2]), 1, value=0.5), r"pad: value 0.5 does not fit the tensor's int64"),
    (lambda: F.masked_fill(minitx.tensor([1, 2]), minitx.tensor([True, False]), -np.inf),
     r"masked_fill: value -inf does not fit the tensor's int64"),
    (lambda: F.masked_fill(minitx.tensor(np.array([1, 2], np.int8)), minitx.tensor([True, False]), 300),
     r"masked_fill: value 300 does not fit the tensor's int8 \(whole numbers from -128 to 127\)"),
    (lambda: F.pad(minitx.tensor(np.array([1, 2], np.uint8)), 1, value=256), r"pad: value 256 does not fit the tensor's uint8"),
    (lambda: F.masked_fill(minitx.tensor(np.array([1], np.int8)), minitx.tensor([True]), -129),
     r"masked_fill: value -129 does not fit"),
])
def test_a_value_an_integer_tensor_cannot_hold_is_refused_not_truncated(call, message):
    """NumPy would write -1.5 into uint8 as 254 and 0.5 into int64 as 0, silently."""
    with pytest.raises(ValueError, match=message):
        call()
    assert F.pad(minitx.tensor(np.array([1, 2], np.uint8)), 1, value=255).tolist() == [255, 1, 2, 255]  # the ends fit
    assert F.masked_fill(minitx.tensor(np.array([1], np.int8)), minitx.tensor([True]), -128).tolist() == [-128]


@pytest.mark.parametrize("call, error, message", [
    (lambda: minitx.tensor([1, 2]) ** -1, ValueError, "pow: an integer tensor to the negative power -1"),
    (lambda: F.pow(minitx.tensor([1, 2]), minitx.tensor([1, -2])), ValueError, "pow: integer tensors to negative"),
    (lambda: -minitx.tensor([True]), TypeError, "neg: not defined for boolean tensors"),
    (lambda: abs(minitx.tensor([True])), TypeError, "abs: not defined for boolean tensors"),
    (lambda: minitx.tensor([True]) ** minitx.tensor([True]), TypeError, "pow: not defined for boolean tensors"),
    (lambda: minitx.tensor([True]) - minitx.tensor([False]), TypeError, "sub: not defined for boolean tensors"),
    (lambda: minitx.tensor([3]) - minitx.tensor([True]), TypeError, "sub: not defined for boolean tensors"),
])
def test_what_numpy_and_pytorch_refuse_is_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()
    assert (minitx.tensor([2, 3]) ** 2).tolist() == [4, 9] and (minitx.tensor([2]) ** 0.5).dtype == np.float32
    flags = minitx.tensor([True, False])  # a boolean beside a number is the integer 0 or 1, as in PyTorch
    assert (flags ** 2).dtype == np.int64 and (flags ** 0.5).dtype == np.float32 and (2 ** flags).tolist() == [2, 1]


@given(dtype=st.sampled_from(INTEGERS), data=st.data())
def test_a_python_integer_at_either_end_of_the_range_is_taken_and_one_past_it_refused(dtype, data):
    """The dtype's own minimum and maximum (and any value between, drawn) combine with the tensor,
    wrapping as NumPy's arrays of that dtype do; one past either end raises OverflowError by name."""
    info = np.iinfo(dtype)
    a = data.draw(arrays(dtype), label="a")
    x = minitx.tensor(a)
    inside = data.draw(st.integers(int(info.min), int(info.max)), label="inside")
    for value in (int(info.min), int(info.max), inside):
        with np.errstate(over="ignore"):
            expected = a + np.array(value, dtype=dtype)
        got = x + value
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), expected)
    for value in (int(info.min) - 1, int(info.max) + 1):
        message = f"^add: the Python integer {value} does not fit the tensor's {dtype}"
        with pytest.raises(OverflowError, match=message):
            x + value


@st.composite
def _float16_rows_past_2048(draw):
    """float16 rows whose running sums float16 itself cannot follow: an even first entry from 2048
    to 4094 (where float16's step is 2), then 15 to 31 small odd ones, each lost (or rounded up)
    when added in float16. Integers: float32 holds every partial sum exactly."""
    rows, n = draw(st.integers(1, 3)), draw(st.integers(16, 32))
    first = draw(hnp.arrays(np.int64, (rows, 1), elements=st.integers(1024, 2047).map(lambda k: 2 * k)))
    rest = draw(hnp.arrays(np.int64, (rows, n - 1), elements=st.sampled_from([1, 3, 5, 7])))
    return np.concatenate([first, rest], axis=1).astype(np.float16)


@given(a=_float16_rows_past_2048())
def test_float16_sums_and_running_sums_round_once_from_float32(a):
    """float16 sums and cumsums accumulate in float32, as PyTorch's: each result is the exact sum
    rounded once to float16 (accumulated in float16, the running sum stalls at its first entry)."""
    x, exact = minitx.tensor(a), a.astype(np.float64)
    for got, expected in ((x.sum(axis=-1), exact.sum(axis=-1)), (F.cumsum(x, -1), exact.cumsum(axis=-1))):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.numpy(), expected.astype(np.float16))
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(F.cumsum(x, -1).numpy(), torch.from_numpy(a).cumsum(-1).numpy())


@pytest.mark.parametrize("call", ["concatenate", "stack", "where", "add"])
def test_float16_beside_bfloat16_is_float32_as_in_pytorch(call):
    """NumPy has no common dtype for float16 and bfloat16 (its concatenate and where raised
    DTypePromotionError); PyTorch's is float32, with gradients back in each input's dtype."""
    a = minitx.tensor([1.5, -2.0, 65504.0], dtype="float16", requires_grad=True)
    b = minitx.tensor([0.3, 3e38, -1.0], dtype="bfloat16", requires_grad=True)
    y = {"concatenate": lambda: F.concatenate([a, b]), "stack": lambda: F.stack([a, b]),
         "where": lambda: F.where(minitx.tensor([True, False, True]), a, b), "add": lambda: a + b}[call]()
    assert y.dtype == np.float32
    expected = {"concatenate": np.concatenate, "stack": np.stack}.get(call)
    a32, b32 = a.numpy().astype(np.float32), b.numpy().astype(np.float32)
    if expected is not None:
        np.testing.assert_array_equal(y.numpy(), expected([a32, b32]))
    y.sum().backward()
    assert a.grad.dtype == a.dtype and b.grad.dtype == b.dtype


@pytest.mark.parametrize("name, reference", [("std", np.std), ("var", np.var)])
def test_bfloat16_std_and_var_of_values_past_the_square_root_of_float32_s_range_are_finite(name, reference):
    """bfloat16 spans float32's range: squares of 3e38 overflow float32, where the spread fits
    bfloat16 (PyTorch's CPU kernel adds in float64); float16 and float32 do not change."""
    values = ([[3.3895e38, -3.3895e38, 1.0, 2.0], [3e38, 3e38, 3e38, 3e38]] if name == "std"
              else [[1.8e19, -1.8e19, 1.0, 2.0], [3e19, 3e19, 3e19, 3e19]])
    x = minitx.tensor(values, dtype="bfloat16", requires_grad=True)
    s = getattr(F, name)(x, axis=1, ddof=1)
    x64 = x.numpy().astype(np.float64)
    expected = reference(x64, axis=1, ddof=1).astype(x.dtype)
    assert s.dtype == x.dtype
    np.testing.assert_array_equal(s.numpy().astype(np.float64), expected.astype(np.float64))
    s.sum().backward()
    assert x.grad.dtype == x.dtype and np.isfinite(x.grad.numpy().astype(np.float32)).all()
    torch = torch_in_example()
    if torch is not None:
        t = torch.tensor(x64).to(torch.bfloat16)
        np.testing.assert_array_equal(s.numpy().astype(np.float64), getattr(t, name)(1).to(torch.float64).numpy())


def test_float16_logits_beside_bfloat16_probabilities_are_float32_as_in_pytorch():
    logits, q = np.array([[1.0, 2.0, 0.5]]), np.array([[0.25, 0.5, 0.25]])
    for a, b in (("bfloat16", "float16"), ("float16", "bfloat16")):
        loss = F.cross_entropy(minitx.tensor(logits, dtype=a), minitx.tensor(q, dtype=b))
        assert loss.dtype == np.float32, (a, b)


def test_a_bfloat16_comparison_takes_a_large_python_integer():
    x = minitx.tensor([1.0, 3e38], dtype="bfloat16")
    assert (x < 2 ** 63).tolist() == [True, False] and (x > -(2 ** 100)).tolist() == [True, True]


def test_bfloat16_probability_targets_are_taken_as_float16_ones_are():
    """A bfloat16 target is floating (NumPy's kind for it is "V"): class probabilities, not a
    refused index tensor "of dtype float32"."""
    logits = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]])
    q = np.array([[0.25, 0.5, 0.25], [1.0, 0.0, 0.0]])
    for dtype in ("bfloat16", "float16"):
        x = minitx.tensor(logits, dtype=dtype, requires_grad=True)
        loss = F.cross_entropy(x, minitx.tensor(q, dtype=dtype))
        expected = F.cross_entropy(minitx.tensor(x.numpy().astype(np.float32)),
                                   minitx.tensor(minitx.tensor(q, dtype=dtype).numpy().astype(np.float32)))
        assert loss.dtype == x.dtype
        assert float(loss.numpy()) == float(np.float32(expected.numpy()).astype(x.dtype))
        loss.backward()
        assert x.grad.dtype == x.dtype


JOINED = sorted(TORCH_COMPUTES) + ["bfloat16"]


@pytest.mark.parametrize("second", JOINED)
@pytest.mark.parametrize("first", JOINED)
def test_concatenate_stack_and_where_give_pytorchs_dtype(first, second):
    """Integers beside a float take the float's dtype, as PyTorch's cat/stack/where (NumPy's
    concatenate gives float64 for int64 beside float32); the values are the inputs', cast."""
    torch = torch_in_example()
    a, b = np.array([1, 0, 1]), np.array([0, 1, 1])
    x, y = minitx.tensor(a, dtype=first), minitx.tensor(b, dtype=second)
    tx, ty = (torch.tensor(v).to(getattr(torch, d)) for v, d in ((a, first), (b, second)))
    cond = np.array([True, False, True])
    for ours, theirs in ((F.concatenate([x, y]), torch.cat([tx, ty])),
                         (F.stack([x, y], axis=1), torch.stack([tx, ty], 1)),
                         (F.where(minitx.tensor(cond), x, y), torch.where(torch.tensor(cond), tx, ty))):
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), (first, second)
        np.testing.assert_array_equal(ours.to(dtype="float64").numpy(), theirs.double().numpy())


FLOATS = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("scalar", FLOATS)
@pytest.mark.parametrize("dimensioned", FLOATS + ["int64", "int8", "bool"])
def test_a_0d_float_tensor_beside_a_tensor_with_dimensions_promotes_as_pytorchs(dimensioned, scalar):
    """A 0-d float tensor is a scalar: beside float32 or float64 with dimensions it takes their
    dtype (NumPy would widen float32 by a float64 0-d to float64), beside integers it gives its own;
    the 0-d operand's gradient comes back in its own dtype. Beside float16 or bfloat16 a wider 0-d
    float promotes as NumPy's (float32 or float64, where PyTorch rounds its float32 result to 16
    bits): rounded to 16 bits first it could lose its value (test below)."""
    torch = torch_in_example()
    a, s = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.5]]), 1.5
    if dimensioned in ("int64", "int8", "bool"):
        a = (a > 0.7).astype(dimensioned)
    t_dtype = lambda name: getattr(torch, name)  # noqa: E731
    ta, ts = torch.tensor(a).to(t_dtype(dimensioned)), torch.tensor(s, dtype=t_dtype(scalar))
    for name, ours, theirs in (("add", lambda x, y: x + y, torch.add), ("mul", lambda x, y: y * x, torch.mul),
                               ("div", lambda x, y: x / y, torch.div), ("max", F.maximum, torch.maximum),
                               ("lt", lambda x, y: x < y, torch.lt)):
        got = ours(minitx.tensor(a, dtype=dimensioned), minitx.tensor(s, dtype=scalar))
        want = theirs(ta, ts)
        wider = dimensioned in ("float16", "bfloat16") and scalar != dimensioned
        expected = (str(np.result_type(np.float32, scalar)) if scalar in ("float32", "float64") else "float32") \
            if wider else str(want.dtype).removeprefix("torch.")
        assert got.dtype.name == (expected if name != "lt" else "bool"), (name, dimensioned, scalar)
        np.testing.assert_allclose(got.to(dtype="float64").numpy(), want.double().numpy(), rtol=1e-2)
    if dimensioned in FLOATS:
        x = minitx.tensor(a, dtype=dimensioned, requires_grad=True)
        y = minitx.tensor(s, dtype=scalar, requires_grad=True)
        (x * y).sum().backward()
        assert (x.grad.dtype.name, y.grad.dtype.name, y.grad.shape) == (dimensioned, scalar, ())
        assert float(y.grad.to(dtype="float64").numpy()) == pytest.approx(a.sum(), rel=1e-2)


def test_a_wide_0d_float_beside_16_bits_keeps_its_value():
    """float16 / tensor(float32 1e5): 1e5 rounded to float16 first would be inf (and the quotient 0);
    promoted as NumPy's, the quotient is PyTorch's values (which it rounds to float16)."""
    h = minitx.tensor(np.float16([0.5, 2.0]))
    got = h / minitx.tensor(np.float32(1e5))
    np.testing.assert_allclose(got.numpy(), [5e-6, 2e-5], rtol=1e-3)
    np.testing.assert_allclose((h * minitx.tensor(np.float32(65536))).numpy(), [32768, 131072])



@pytest.mark.parametrize("dimensioned", ["float32", "float64"])
@pytest.mark.parametrize("scalar", FLOATS)
def test_where_takes_a_0d_float_as_the_binary_ops_do(dimensioned, scalar):
    """where(cond, x, s) of a 0-d float s beside float32 or float64 x with dimensions is x's dtype,
    as x + s and PyTorch's where (NumPy's would widen float32 to float64 for a float64 s); s's
    gradient comes back in its own dtype."""
    torch = torch_in_example()
    cond = np.array([True, False, True])
    x = minitx.tensor([1.0, 2.0, 3.0], dtype=dimensioned, requires_grad=True)
    s = minitx.tensor(0.1, dtype=scalar, requires_grad=True)
    for got, first in ((F.where(minitx.tensor(cond), x, s), True), (F.where(minitx.tensor(cond), s, x), False)):
        assert got.dtype == (x + s).dtype == np.dtype(dimensioned), (dimensioned, scalar)
        got.sum().backward()
        assert s.grad.dtype.name == scalar and s.grad.shape == ()
        if torch is not None:
            tx = torch.tensor([1.0, 2.0, 3.0], dtype=getattr(torch, dimensioned))
            ts = torch.tensor(float(s.to(dtype="float64").numpy()), dtype=getattr(torch, scalar))
            want = torch.where(torch.tensor(cond), tx, ts) if first else torch.where(torch.tensor(cond), ts, tx)
            assert str(want.dtype) == f"torch.{got.dtype}"
            np.testing.assert_array_equal(got.to(dtype="float64").numpy(), want.double().numpy())
