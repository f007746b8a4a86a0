"""Integer math (minitx/ops/elementwise.py): floor division and the two remainders (FloorDivide,
Remainder, Fmod), the bitwise ops and shifts, isclose and allclose, with their operators.

Each is checked against an element-by-element Python computation (Python's //, % and math.fmod,
its unbounded integers cut to the result's width) on hypothesis-drawn values and broadcast
shapes, empty axes included (integers with negatives and zeros; floats with 0, -0, ±inf and
NaN), against PyTorch on the same values (dtype too), and the differentiable ones by a float64
gradcheck away from their jumps.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import parity, torch_in_example

PAIRS = mst.broadcastable_shapes(2, max_dims=3, min_side=0, max_side=4)
INTEGER_DTYPES = ("int64", "int32", "uint8", "bool")
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 2.5, -2.5, math.inf, -math.inf, math.nan)


@st.composite
def _integers(draw, shape, dtype, nonzero=False, extremes=True):
    """An integer array of ``dtype``: small negatives (where signed), zeros, and with ``extremes``
    the bounds (the lowest but one: lowest // -1 overflows)."""
    if dtype == "bool":
        array = draw(hnp.arrays(np.bool_, shape))
        return array | True if nonzero else array
    info = np.iinfo(dtype)
    values = st.integers(max(info.min, -40), min(info.max, 40))
    if extremes:
        values |= st.sampled_from([info.min + 1, info.max])
    array = draw(hnp.arrays(dtype, shape, elements=values))
    return np.where(array == 0, 1, array).astype(dtype) if nonzero else array


def _as_minitx(array):
    return minitx.tensor(array, dtype=array.dtype.name)


def _torch_tensor(torch, array):
    return torch.from_numpy(np.array(array, order="C"))


def _elementwise(fn, a, b, dtype):
    """fn on each broadcast pair of Python values, as an array of ``dtype``."""
    a, b = np.broadcast_arrays(a, b)
    values = [fn(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array(values, dtype=dtype).reshape(a.shape)


def _wrap(value, dtype):
    """A Python int cut to ``dtype``'s width, as the hardware's two's complement does."""
    if dtype == np.bool_:
        return bool(value)
    bits = np.iinfo(dtype).bits
    value %= 1 << bits
    return value - (1 << bits) if np.iinfo(dtype).min < 0 and value >= 1 << (bits - 1) else value


def _against_torch(torch_name, out, a, b):
    """PyTorch's op on the same arrays gives the same values and dtype. Where an operand is 0-d
    both go in as the result's dtype: PyTorch's 0-d tensors promote as Python numbers do (int32
    with a 0-d int64 stays int32), minitx's as NumPy's 0-d arrays."""
    torch = torch_in_example()
    if torch is None:
        return
    if not (a.ndim and b.ndim):
        a, b = a.astype(out.dtype), b.astype(out.dtype)
    theirs = getattr(torch, torch_name)(_torch_tensor(torch, a), _torch_tensor(torch, b))
    assert str(theirs.dtype).removeprefix("torch.") == out.dtype.name
    np.testing.assert_array_equal(out.numpy(), theirs.numpy())


# ---------------------------------------------------------------- floor_divide, remainder, fmod


def _c_fmod(x, y):
    """C's fmod of Python numbers: the sign of x (math.fmod is exact but turns ints into floats)."""
    if isinstance(x, float) or isinstance(y, float):
        if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
            return math.nan
        return math.fmod(x, y)
    return abs(x) % abs(y) if x >= 0 else -(abs(x) % abs(y))


def _ieee(fn):
    """fn of Python numbers, with IEEE's value where Python raises (a float divided by 0): x / 0
    for // (±inf, NaN for 0 // 0), NaN for %, as NumPy and PyTorch."""
    def value(x, y):
        try:
            return fn(x, y)
        except ZeroDivisionError:
            if fn is not _floor_divide or x == 0 or math.isnan(x):
                return math.nan
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return value


def _floor_divide(x, y):
    return x // y


# op class -> (minitx function, operator form or None, Python reference, torch name)
DIVISIONS = {
    "FloorDivide": (F.floor_divide, lambda a, b: a // b, _floor_divide, "floor_divide"),
    "Remainder": (F.remainder, lambda a, b: a % b, lambda x, y: x % y, "remainder"),
    "Fmod": (F.fmod, None, _c_fmod, "fmod"),
}


@pytest.mark.parametrize("name", list(DIVISIONS))
@given(data=st.data(), dtypes=st.tuples(st.sampled_from(INTEGER_DTYPES), st.sampled_from(INTEGER_DTYPES)),
       form=st.sampled_from(["function", "operator"]))
def test_integer_division_matches_python_and_pytorch(name, data, dtypes, form):
    """Negative operands round down (//, %) or toward zero (fmod), as Python and NumPy; the result
    takes the promoted dtype; two booleans raise (PyTorch has no kernel for them)."""
    fn, operator_form, reference, torch_name = DIVISIONS[name]
    fn = operator_form if form == "operator" and operator_form is not None else fn
    shape_a, shape_b = data.draw(PAIRS, label="shapes")
    a = data.draw(_integers(shape_a, dtypes[0]), label="a")
    b = data.draw(_integers(shape_b, dtypes[1], nonzero=True), label="b")
    if dtypes == ("bool", "bool"):
        with pytest.raises(TypeError, match=f"{torch_name}: not defined for two boolean tensors"):
            fn(_as_minitx(a), _as_minitx(b))
        return
    out = fn(_as_minitx(a), _as_minitx(b))
    dtype = np.result_type(a, b)
    assert out.dtype == dtype and not out.requires_grad
    expected = _elementwise(lambda x, y: _wrap(reference(x, y), dtype), a.astype(object), b.astype(object), dtype)
    np.testing.assert_array_equal(out.numpy(), expected)
    _against_torch(torch_name, out, a, b)


@pytest.mark.parametrize("name", list(DIVISIONS))
@given(data=st.data(), dtype=st.sampled_from(["int64", "int32", "uint8"]))
def test_integer_division_by_zero_raises_naming_the_op(name, data, dtype):
    fn, operator_form, _, torch_name = DIVISIONS[name]
    shape_a, shape_b = data.draw(mst.broadcastable_shapes(2, max_dims=3, max_side=4), label="shapes")
    a = data.draw(_integers(shape_a, dtype), label="a")
    b = data.draw(_integers(shape_b, dtype), label="b")
    b.flat[data.draw(st.integers(0, b.size - 1), label="where")] = 0
    with pytest.raises(ZeroDivisionError, match=f"^{torch_name}: integer division by zero"):
        fn(_as_minitx(a), _as_minitx(b))
    with pytest.raises(ZeroDivisionError, match=f"^{torch_name}: integer division by zero"):
        fn(_as_minitx(a), 0)


@pytest.mark.parametrize("name", list(DIVISIONS))
@given(data=st.data(), dtype=st.sampled_from(["float64", "float32"]))
def test_float_division_matches_python_and_pytorch_at_zero_inf_and_nan(name, data, dtype):
    """IEEE where Python raises: x // 0 is ±inf (NaN for 0 // 0), x % 0 and fmod(x, 0) are NaN;
    inf // b and inf % b are NaN. Zero results keep Python's sign (of b for //'s and %'s, of a
    for fmod's); PyTorch signs a zero remainder as a, which the value comparison lets pass. Python
    computes in float64: float32 values are quarters, on which float32 arithmetic is exact too."""
    fn, _, reference, torch_name = DIVISIONS[name]
    shape_a, shape_b = data.draw(PAIRS, label="shapes")
    values = st.integers(-24, 24).map(lambda k: k / 4) | st.sampled_from(FLOAT_EDGES)
    if dtype == "float64":  # normal: PyTorch's vectorized fmod and remainder give NaN for a subnormal b
        values |= st.floats(-6, 6, allow_subnormal=False)
    a = data.draw(hnp.arrays(dtype, shape_a, elements=values), label="a")
    b = data.draw(hnp.arrays(dtype, shape_b, elements=values), label="b")
    out = fn(minitx.tensor(a, dtype=dtype), minitx.tensor(b, dtype=dtype))
    assert out.dtype == dtype
    expected = _elementwise(_ieee(reference), a.astype(np.float64), b.astype(np.float64), np.float64)
    np.testing.assert_array_equal(out.numpy(), expected.astype(dtype))
    signed = ~np.isnan(expected)  # a NaN's sign bit means nothing
    np.testing.assert_array_equal(np.signbit(out.numpy())[signed], np.signbit(expected)[signed])
    _against_torch(torch_name, out, a, b)


@st.composite
def _away_from_jumps(draw):
    """(a, b), float64, broadcast, with a / b = q at least 0.05 from every integer: the quotients
    floor(a / b) and trunc(a / b) do not jump within a finite-difference step. A broadcast
    operand is drawn (away from 0), the other is q times or divided by it."""
    shape_a, shape_b = draw(PAIRS)
    shape = np.broadcast_shapes(shape_a, shape_b)
    q = draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3))) + \
        draw(mst.float_arrays(shape, min_value=0.05, max_value=0.95))
    if shape_a == shape:
        b = draw(mst.float_arrays(shape_b, min_value=-3.0, max_value=3.0, away_from=(0.0,), margin=0.5))
        return q * b, b
    a = draw(mst.float_arrays(shape_a, min_value=-3.0, max_value=3.0, away_from=(0.0,), margin=0.5))
    return a, a / q


@pytest.mark.parametrize("name", list(DIVISIONS))
@given(data=st.data(), which=st.sampled_from(["both", "a", "b"]))
def test_division_gradients_away_from_the_jumps(name, data, which):
    """Remainder: da = dy, db = -dy floor(a / b); Fmod: db = -dy trunc(a / b); FloorDivide passes
    0 to both (PyTorch raises there instead). gradcheck, backward hygiene and gradient subsets,
    and PyTorch's gradients for the remainders."""
    fn, _, _, torch_name = DIVISIONS[name]
    a, b = data.draw(_away_from_jumps(), label="a, b")
    a, b = leaf(a, requires_grad=which in ("both", "a")), leaf(b, requires_grad=which in ("both", "b"))
    check_forward(fn, getattr(np, torch_name), a, b, rtol=1e-12, atol=1e-12)
    assert check_gradients(fn, a, b)
    if name == "FloorDivide":
        a.grad = b.grad = None
        out = fn(a, b)
        out.backward(np.ones(out.shape))
        for t in (a, b):
            assert t.grad is None or not t.grad.numpy().any()
    else:
        a.grad = b.grad = None
        parity(fn, lambda x, y: getattr(x, torch_name)(y), a, b, rtol=1e-12, atol=1e-12)


def test_division_gradients_by_hand():
    a, b = leaf([7.5, -7.5, 7.5, -7.5]), leaf([2.0, 2.0, -2.0, -2.0])
    F.remainder(a, b).backward(np.ones(4))
    np.testing.assert_array_equal(a.grad.numpy(), np.ones(4))
    np.testing.assert_array_equal(b.grad.numpy(), [-3.0, 4.0, 4.0, -3.0])  # -floor(a / b)
    a.grad = b.grad = None
    F.fmod(a, b).backward(np.ones(4))
    np.testing.assert_array_equal(b.grad.numpy(), [-3.0, 3.0, 3.0, -3.0])  # -trunc(a / b)


def test_mixed_operands_and_reflected_operators():
    """An integer beside a float takes the float's dtype (PyTorch's rule); Python numbers on
    either side; a boolean beside an integer counts as 0 or 1."""
    x = minitx.tensor([7, -7])
    assert (x // 2.5).dtype == np.float32 and (x // 2.5).tolist() == [2.0, -3.0]
    assert (7.5 % x).dtype == np.float32 and (7.5 % x).tolist() == [0.5, -6.5]
    assert (17 // x).tolist() == [2, -3] and (17 % x).tolist() == [3, -4]
    assert (np.array([17, 17]) // x).tolist() == [2, -3]
    assert (minitx.tensor([True, False]) // 2).tolist() == [0, 0] and (x % minitx.tensor([True])).tolist() == [0, 0]
    assert F.fmod(-7, 2).tolist() == -1 and F.floor_divide(-7, 2).tolist() == -4
    with pytest.raises(ValueError, match=r"^remainder: shapes \(2,\) and \(3,\) do not broadcast$"):
        x % minitx.tensor([1, 2, 3])


def test_pow_takes_numpy_scalars_and_booleans_as_the_other_binary_ops_do():
    """A NumPy scalar counts as the Python number it holds (x * np.float64(2) keeps float32, and so
    does x ** np.float64(2)); a boolean tensor beside another tensor promotes as in a + b, not as
    int64 first (int32 ** bool is int32)."""
    f32, i8 = minitx.tensor([1.5, 2.0], dtype="float32"), minitx.tensor([-3, 2], dtype="int8")
    for p in (np.float64(2), np.float32(2), np.int64(2)):
        assert (f32 ** p).dtype == (f32 * p).dtype == np.float32
        assert (f32 ** p).tolist() == [2.25, 4.0]
    assert (i8 ** np.int64(2)).dtype == (i8 * np.int64(2)).dtype == np.int8 and (i8 ** np.int64(3)).tolist() == [-27, 8]
    assert (minitx.tensor([4]) ** np.float32(0.5)).dtype == np.float32  # as ** 0.5
    assert (np.float64(2) ** f32).dtype == np.float32
    flags = minitx.tensor([True, False])
    for dtype in ("int32", "uint8", "int8", "int64", "float32"):
        other = minitx.tensor([2, 3], dtype=dtype)
        for a, b in ((other, flags), (flags, other)):
            assert (a ** b).dtype == (a * b).dtype == np.dtype(dtype), (a.dtype, b.dtype)
    assert (minitx.tensor([2, 3], dtype="int32") ** flags).tolist() == [2, 1]
    assert (flags ** minitx.tensor([2, 0], dtype="uint8")).tolist() == [1, 1]
    assert (flags ** 2).dtype == np.int64 and (flags ** np.int64(2)).dtype == np.int64  # as flags + 2


@pytest.mark.parametrize("pair", ["i32 ** bool", "bool ** i32", "u8 ** bool", "bool ** u8", "i8 ** bool",
                                  "f32 ** np.float64", "i8 ** np.int64"])
def test_pow_dtypes_match_pytorch(pair):
    torch = torch_in_example()
    values = {"i32": ("int32", [2, 3, 0]), "u8": ("uint8", [2, 3, 0]), "i8": ("int8", [-2, 3, 0]),
              "f32": ("float32", [1.5, -2.0, 0.0]), "bool": ("bool", [True, False, True])}
    left, right = pair.split(" ** ")
    scalars = {"np.float64": np.float64(2), "np.int64": np.int64(2)}

    def make(lib, name):
        if name in scalars:
            return scalars[name]  # PyTorch too takes it as a number
        dtype, data = values[name]
        return minitx.tensor(np.array(data, dtype=dtype)) if lib is minitx else torch.tensor(np.array(data, dtype=dtype))

    ours, theirs = make(minitx, left) ** make(minitx, right), make(torch, left) ** make(torch, right)
    assert str(theirs.dtype) == f"torch.{ours.dtype}"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---------------------------------------------------------------- bitwise ops and shifts


def _left_shift(x, s, dtype):
    return 0 if not 0 <= s < np.iinfo(dtype).bits else _wrap(x << s, dtype)


def _right_shift(x, s, dtype):
    return (-1 if x < 0 else 0) if not 0 <= s < np.iinfo(dtype).bits else x >> s


# name -> (minitx function, operator form, Python reference of (x, y, result dtype), torch name)
BITWISE = {
    "and": (F.bitwise_and, lambda a, b: a & b, lambda x, y, d: x & y, "bitwise_and"),
    "or": (F.bitwise_or, lambda a, b: a | b, lambda x, y, d: x | y, "bitwise_or"),
    "xor": (F.bitwise_xor, lambda a, b: a ^ b, lambda x, y, d: x ^ y, "bitwise_xor"),
    "left_shift": (F.bitwise_left_shift, lambda a, b: a << b, _left_shift, "bitwise_left_shift"),
    "right_shift": (F.bitwise_right_shift, lambda a, b: a >> b, _right_shift, "bitwise_right_shift"),
}
SHIFTS = st.integers(-3, 70) | st.sampled_from([0, 1, 7, 8, 31, 32, 63, 64])


@pytest.mark.parametrize("name", list(BITWISE))
@given(data=st.data(), dtypes=st.tuples(st.sampled_from(INTEGER_DTYPES), st.sampled_from(INTEGER_DTYPES)),
       form=st.sampled_from(["function", "operator", "reflected"]))
def test_bitwise_matches_python_and_pytorch(name, data, dtypes, form):
    """Two booleans: logical and/or/xor (a boolean result); shifts of two booleans raise, as in
    PyTorch. Shifts by < 0 or >= the width give 0 (left) or the sign (right), as NumPy and PyTorch."""
    fn, operator_form, reference, torch_name = BITWISE[name]
    shape_a, shape_b = data.draw(PAIRS, label="shapes")
    a = data.draw(_integers(shape_a, dtypes[0]), label="a")
    if "shift" in name and dtypes[1] != "bool":
        shifts = SHIFTS.map(abs) if dtypes[1] == "uint8" else SHIFTS
        b = data.draw(hnp.arrays(dtypes[1], shape_b, elements=shifts), label="b")
    else:
        b = data.draw(_integers(shape_b, dtypes[1]), label="b")
    if form == "reflected":  # NumPy defers to Tensor.__rand__, ...; its array becomes a tensor as tensor() makes it
        ours, a = lambda: operator_form(a, _as_minitx(b)), minitx.tensor(a).numpy()
    else:
        ours = lambda: (fn if form == "function" else operator_form)(_as_minitx(a), _as_minitx(b))  # noqa: E731
    if "shift" in name and dtypes == ("bool", "bool"):
        with pytest.raises(TypeError, match=f"^{torch_name}: not defined for two boolean tensors"):
            ours()
        return
    out = ours()
    dtype = np.result_type(a, b)
    assert isinstance(out, minitx.Tensor) and out.dtype == dtype and not out.requires_grad
    expected = _elementwise(lambda x, y: _wrap(reference(x, y, dtype), dtype), a.astype(object), b.astype(object),
                            dtype)
    np.testing.assert_array_equal(out.numpy(), expected)
    _against_torch(torch_name, out, a, b)



# the ops PyTorch has no boolean kernel for: name -> (function, operator form)
NO_TWO_BOOLS = {"floor_divide": (F.floor_divide, lambda a, b: a // b), "remainder": (F.remainder, lambda a, b: a % b),
                "fmod": (F.fmod, None), "bitwise_left_shift": (F.bitwise_left_shift, lambda a, b: a << b),
                "bitwise_right_shift": (F.bitwise_right_shift, lambda a, b: a >> b)}


@pytest.mark.parametrize("name", list(NO_TWO_BOOLS))
@given(data=st.data(), form=st.sampled_from(["function", "operator"]))
def test_two_booleans_are_refused_by_division_and_the_shifts(name, data, form):
    """Every example tries two boolean tensors (the drawn dtype pairs above reach them in one of
    16): TypeError naming the op, where NumPy would compute in int8. A boolean beside an integer
    counts as 0 or 1, as PyTorch's."""
    fn, operator_form = NO_TWO_BOOLS[name]
    fn = operator_form if form == "operator" and operator_form is not None else fn
    shape_a, shape_b = data.draw(PAIRS, label="shapes")
    a = data.draw(_integers(shape_a, "bool"), label="a")
    b = data.draw(_integers(shape_b, "bool", nonzero=True), label="b")
    with pytest.raises(TypeError, match=f"^{name}: not defined for two boolean tensors"):
        fn(_as_minitx(a), _as_minitx(b))
    out = fn(_as_minitx(a), _as_minitx(b.astype(np.int64)))
    expected = getattr(np, name.removeprefix("bitwise_"))(a.astype(np.int64), b.astype(np.int64))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), expected)


@given(data=st.data(), dtype=st.sampled_from(INTEGER_DTYPES))
def test_bitwise_not_flips_bits_and_booleans(data, dtype):
    x = data.draw(_integers(data.draw(mst.shapes(max_dims=3, min_side=0, max_side=4)), dtype), label="x")
    for out in (F.bitwise_not(_as_minitx(x)), ~_as_minitx(x)):
        assert out.dtype == x.dtype and not out.requires_grad
        expected = [not v for v in x.ravel().tolist()] if dtype == "bool" else \
            [_wrap(-v - 1, x.dtype) for v in x.ravel().tolist()]
        np.testing.assert_array_equal(out.numpy(), np.array(expected, dtype=dtype).reshape(x.shape))
    torch = torch_in_example()
    if torch is not None:
        np.testing.assert_array_equal(out.numpy(), torch.bitwise_not(_torch_tensor(torch, x)).numpy())


def test_bitwise_with_python_numbers_takes_the_tensors_dtype():
    x, flags = minitx.tensor([6, -6], dtype="int32"), minitx.tensor([True, False])
    assert (x & 3).dtype == np.int32 and (x & 3).tolist() == [2, 2] and (3 | x).tolist() == [7, -5]
    assert (1 << minitx.tensor([0, 3])).tolist() == [1, 8] and (x >> 1).tolist() == [3, -3]
    assert (flags ^ True).tolist() == [False, True] and (flags & 1).dtype == np.int64
    assert (flags << 1).tolist() == [2, 0]


@pytest.mark.parametrize("fn, name", [(F.bitwise_and, "bitwise_and"), (F.bitwise_or, "bitwise_or"),
                                      (F.bitwise_xor, "bitwise_xor"), (F.bitwise_left_shift, "bitwise_left_shift"),
                                      (F.bitwise_right_shift, "bitwise_right_shift")])
def test_bitwise_refuses_floats_and_names_the_op(fn, name):
    with pytest.raises(TypeError, match=f"^{name}: defined for integer and boolean tensors, got float32 and int$"):
        fn(minitx.tensor([1.0]), 1)
    with pytest.raises(TypeError, match=f"^{name}: defined for integer and boolean tensors, got int64 and float$"):
        fn(minitx.tensor([1]), 2.5)
    with pytest.raises(ValueError, match=rf"^{name}: shapes \(2,\) and \(3,\) do not broadcast$"):
        fn(minitx.tensor([1, 2]), minitx.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="^bitwise_not: defined for integer and boolean tensors, got dtype float64"):
        F.bitwise_not(leaf([1.0]))


@pytest.mark.parametrize("fn, name", [(F.bitwise_and, "bitwise_and"), (F.bitwise_or, "bitwise_or"),
                                      (F.bitwise_xor, "bitwise_xor"), (F.bitwise_left_shift, "bitwise_left_shift"),
                                      (F.bitwise_right_shift, "bitwise_right_shift")])
@pytest.mark.parametrize("shapes", [((2,), (2,)), ((2,), ()), ((), (2,))])
def test_a_signed_integer_beside_uint64_is_refused_by_name(fn, name, shapes):
    """int64 with uint64 has no common integer dtype (NumPy's is float64, where bits have no
    meaning; PyTorch refuses the promotion): the error names the op, not NumPy's ufunc loop."""
    signed = minitx.tensor(np.ones(shapes[0], dtype="int64"))
    unsigned = minitx.tensor(np.ones(shapes[1], dtype="uint64"))
    for a, b in ((signed, unsigned), (unsigned, signed)):
        with pytest.raises(TypeError, match=f"^{name}: {a.dtype} and {b.dtype} have no common integer dtype"):
            fn(a, b)
    assert fn(unsigned, minitx.tensor(np.ones(shapes[0], dtype="uint8"))).dtype == np.uint64  # unsigned: kept


# ---------------------------------------------------------------- isclose, allclose


def _isclose_python(x, y, rtol, atol, equal_nan):
    if x == y:
        return True  # the same infinities, and exact equals
    if math.isnan(x) or math.isnan(y):
        return equal_nan and math.isnan(x) and math.isnan(y)
    return math.isfinite(y) and abs(x - y) <= atol + rtol * abs(y)


TOLERANCES = st.sampled_from([0.0, 1e-8, 1e-5, 0.125, 0.5, 1.0])


@st.composite
def _near_pairs(draw, dtype):
    """(a, b), broadcast. Integers: small, both drawn (PyTorch computes their tolerance in
    float32 and their difference in the integer dtype, which large values would overflow).
    Floats, with 0, ±inf and NaN among them: a (full shape) mostly b (1 + r) + e for drawn r and
    e, within or just past the tolerances, else drawn alone."""
    shape_a, shape_b = draw(PAIRS)
    if dtype in INTEGER_DTYPES:
        return draw(_integers(shape_a, dtype, extremes=False)), draw(_integers(shape_b, dtype, extremes=False))
    shape = np.broadcast_shapes(shape_a, shape_b)
    values = st.floats(-4, 4) | st.sampled_from(FLOAT_EDGES)
    b = draw(hnp.arrays(np.float64, shape_b, elements=values))
    nudge = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1e-9, -1e-6, 1e-5, 0.1, 0.5, 2.0])))
    with np.errstate(invalid="ignore"):
        a = b * (1 + nudge) + draw(st.sampled_from([0.0, 1e-9, 1e-8, 0.3]))
    a = np.where(draw(hnp.arrays(np.bool_, shape)), a, draw(hnp.arrays(np.float64, shape, elements=values)))
    return a.astype(dtype), b.astype(dtype)


@given(data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64", "int32", "bool"]), rtol=TOLERANCES,
       atol=TOLERANCES, equal_nan=st.booleans())
def test_isclose_matches_python_numpy_and_pytorch(data, dtype, rtol, atol, equal_nan):
    """|a - b| <= atol + rtol |b| for finite b, or a == b; NaN close to NaN only with equal_nan.
    Tolerances are dyadic or tiny, so PyTorch's float32 arithmetic for integers agrees."""
    a, b = data.draw(_near_pairs(dtype), label="a, b")
    out = F.isclose(_as_minitx(a), _as_minitx(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert out.dtype == np.bool_ and not out.requires_grad
    if dtype in ("float64", "int64", "int32", "bool"):  # Python computes in float64: float32 rounds otherwise
        expected = _elementwise(lambda x, y: _isclose_python(x, y, rtol, atol, equal_nan),
                                a.astype(np.float64), b.astype(np.float64), np.bool_)
        np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(out.numpy(), np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    assert F.allclose(_as_minitx(a), _as_minitx(b), rtol, atol, equal_nan) is bool(out.numpy().all())
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.isclose(_torch_tensor(torch, a), _torch_tensor(torch, b), rtol=rtol, atol=atol,
                               equal_nan=equal_nan)
        np.testing.assert_array_equal(out.numpy(), theirs.numpy())
        same = a.shape == np.broadcast_shapes(a.shape, b.shape)  # torch.allclose broadcasts b only
        if same:
            assert F.allclose(_as_minitx(a), _as_minitx(b), rtol, atol, equal_nan) == torch.allclose(
                _torch_tensor(torch, a), _torch_tensor(torch, b), rtol=rtol, atol=atol, equal_nan=equal_nan)



# rtol -> t with rtol |b| < t |b| <= rtol |a| for a = b (1 + t): close relative to a, not to b
ASYMMETRIC = {0.25: 0.3125, 0.5: 0.75, 1.0: 1.5}


@given(data=st.data(), dtype=st.sampled_from(["float64", "float32"]), rtol=st.sampled_from(sorted(ASYMMETRIC)))
def test_isclose_is_relative_to_b_not_to_a(data, dtype, rtol):
    """a = b (1 + t) with t past rtol but within rtol |a| / |b|: isclose(a, b) is False and
    isclose(b, a) True at each entry (drawn which way round), as NumPy's and PyTorch's. Dyadic
    values: a and |a - b| are exact in float32."""
    shape = data.draw(mst.shapes(max_dims=3, max_side=4), label="shape")
    b = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-64, 64).filter(bool).map(lambda k: k / 8)),
                  label="b")
    a = b * (1 + ASYMMETRIC[rtol])
    swap = data.draw(hnp.arrays(np.bool_, shape), label="swap")
    first, second = np.where(swap, b, a).astype(dtype), np.where(swap, a, b).astype(dtype)
    out = F.isclose(_as_minitx(first), _as_minitx(second), rtol=rtol, atol=0.0)
    np.testing.assert_array_equal(out.numpy(), swap)
    np.testing.assert_array_equal(out.numpy(), np.isclose(first, second, rtol=rtol, atol=0.0))
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.isclose(_torch_tensor(torch, first), _torch_tensor(torch, second), rtol=rtol, atol=0.0)
        np.testing.assert_array_equal(out.numpy(), theirs.numpy())


@given(data=st.data(), dtype=st.sampled_from(["float64", "float32"]))
def test_nan_beside_nan_is_close_only_with_equal_nan_in_isclose_and_allclose(data, dtype):
    """a and b equal but for NaN at the same drawn positions (one at least) and maybe NaN in a
    alone: isclose holds at the shared NaNs only with equal_nan, never at a lone one; allclose
    carries equal_nan through (True with it when no NaN is alone). Both values of equal_nan in
    each example."""
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, max_side=4), label="shape")
    b = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-4, 4, width=32)), label="b")
    shared = data.draw(hnp.arrays(np.bool_, shape), label="shared NaNs")
    shared.flat[data.draw(st.integers(0, b.size - 1), label="one shared NaN")] = True
    alone = data.draw(hnp.arrays(np.bool_, shape), label="NaNs in a alone") & ~shared
    a, b = np.where(shared | alone, np.nan, b).astype(dtype), np.where(shared, np.nan, b).astype(dtype)
    torch = torch_in_example()
    for equal_nan in (False, True):
        out = F.isclose(_as_minitx(a), _as_minitx(b), equal_nan=equal_nan)
        np.testing.assert_array_equal(out.numpy(), ~alone & (equal_nan | ~shared))
        close = F.allclose(_as_minitx(a), _as_minitx(b), equal_nan=equal_nan)
        assert close is (equal_nan and not alone.any())
        if torch is not None:
            assert close == torch.allclose(_torch_tensor(torch, a), _torch_tensor(torch, b), equal_nan=equal_nan)

def test_isclose_edges_by_hand():
    inf, nan = math.inf, math.nan
    a = minitx.tensor([inf, -inf, inf, nan, 1.0, 1e10, 0.0, 1.0], dtype="float64")
    b = minitx.tensor([inf, -inf, -inf, nan, inf, 1.00001e10, 1e-9, 1.0 + 2e-5], dtype="float64")
    assert F.isclose(a, b).tolist() == [True, True, False, False, False, True, True, False]
    assert F.isclose(a, b, equal_nan=True).tolist()[3] is True
    assert F.isclose(minitx.tensor([3]), 3.0).dtype == np.bool_ and F.allclose(minitx.tensor([3]), 3)
    assert F.allclose(minitx.zeros(0), minitx.ones(0)) is True
    assert F.isclose(minitx.tensor([2**53 + 1]), minitx.tensor([2**53]), rtol=0, atol=0).tolist() == [True]  # float64


@pytest.mark.parametrize("op", ["isclose", "allclose"])
@pytest.mark.parametrize("bad, error, must", [({"rtol": -1e-5}, ValueError, "a number >= 0"),
                                             ({"atol": -1.0}, ValueError, "a number >= 0"),
                                             ({"rtol": math.nan}, ValueError, "a number >= 0"),
                                             ({"atol": "0"}, TypeError, "a number"), ({"rtol": True}, TypeError, "a number")])
def test_isclose_and_allclose_refuse_negative_or_non_numeric_tolerances_naming_the_op(op, bad, error, must):
    name = next(iter(bad))
    with pytest.raises(error, match=f"^{op}: {name} must be {must}, got"):
        getattr(F, op)(minitx.tensor([1.0]), minitx.tensor([1.0]), **bad)
    with pytest.raises(ValueError, match=rf"^{op}: shapes \(0,\) and \(3,\) do not broadcast$"):
        getattr(F, op)(minitx.ones(0), minitx.ones(3))
