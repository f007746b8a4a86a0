"""A Python number beside a float16 or bfloat16 tensor that the dtype cannot hold: it would round
to inf, to 0 or to a subnormal keeping few of its bits (1e6, 1e5, 1e-8, 1e-7, 3e38 beside float16;
3.4e38, 1e-42, 1e-40 beside bfloat16).

``*`` and ``/`` compute in float32 with the number itself and round the result once, as PyTorch's
mul and div kernels do (they read the original scalar): float16 0 * 1e6 is 0, not 0 * inf = NaN,
and 0 / 1e-8 is 0, not 0 / 0. The other ops take the number rounded to the tensor's dtype, as
PyTorch's do: ``+`` and ``-`` (65504 - 1e5 is -inf in float16 there too), comparisons, maximum and
minimum, a number to a tensor's power and a tensor to a number's (PyTorch refuses an exponent the dtype
cannot hold, and so does minitx); ``clip`` takes a bound rounded to the dtype, as PyTorch, and one it
would round to inf in float32, which gives the same values wherever PyTorch takes the bound (it refuses
that one); ``//`` takes a divisor the dtype cannot hold in float32, as PyTorch's kernel. The result
keeps the tensor's dtype. A number the dtype holds (2.0, 0.3) is taken rounded, bit for bit as
before (PyTorch's mul and div use it unrounded there: x * 0.3 can differ in the last bit).

Each case is checked against NumPy (the tensor in float32, the number in float32 or rounded, the
result rounded once) and, where PyTorch is installed, against PyTorch 2.13 (CPU).
"""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import backend
from minitx.autograd.tensor import Tensor, as_tensor
from _torch_kit import torch_in_example as import_torch  # outside hypothesis: skipped where PyTorch is missing

pytest.importorskip("ml_dtypes")

VALUES = [0.0, 1.0, -1.0, 65504.0]
NOT_HELD = {  # numbers the dtype rounds to inf, to 0 or to a subnormal (1e39 is inf in float32 too)
    "float16": [1e6, -1e6, 1e-8, -1e-8, 1e5, 100000, 3e38, 1e39, 1e-7, 6e-8, -3e-5],
    "bfloat16": [3.4e38, -3.4e38, 1e-42, 1e39, 1e-40],
}
HELD = {"float16": [2.0, 0.5, 1.0001, 0.3, -7.25, 1e-3, 7e-5], "bfloat16": [2.0, 0.5, 1.0001, 0.3, 1e6, 1e-8, 3e38]}

# name -> (the op, whether the number goes in unrounded: PyTorch's mul and div kernels)
OPS = {
    "x * n": (lambda x, n: x * n, True), "n * x": (lambda x, n: n * x, True),
    "x / n": (lambda x, n: x / n, True), "n / x": (lambda x, n: n / x, True),
    "x + n": (lambda x, n: x + n, False), "x - n": (lambda x, n: x - n, False), "n - x": (lambda x, n: n - x, False),
    "x < n": (lambda x, n: x < n, False), "x <= n": (lambda x, n: x <= n, False),
    "x > n": (lambda x, n: x > n, False), "x >= n": (lambda x, n: x >= n, False),
    "x == n": (lambda x, n: x == n, False), "x != n": (lambda x, n: x != n, False),
    "n ** x": (lambda x, n: n ** x, False),
}
COMPARISONS = {"x < n", "x <= n", "x > n", "x >= n", "x == n", "x != n"}
TWO_TENSORS = {"maximum": (F.maximum, np.maximum, "maximum"), "minimum": (F.minimum, np.minimum, "minimum")}
CLIPS = {"clip(min=n)": "min", "clip(max=n)": "max"}


def _rounded(number, dtype):
    """The number in the 16-bit dtype, as float32."""
    with np.errstate(all="ignore"):
        return np.full((), number, dtype=backend.resolve_dtype(dtype)).astype(np.float32)


def _expected(fn, dtype, number, exact):
    """fn on the tensor in float32 and the number (in float32, or rounded to dtype), rounded once."""
    x32 = np.array(VALUES, dtype=backend.resolve_dtype(dtype)).astype(np.float32)
    with np.errstate(all="ignore"):
        y = fn(x32, np.float32(number) if exact else _rounded(number, dtype))
        return y if y.dtype == np.bool_ else y.astype(backend.resolve_dtype(dtype))


def _same(got, expected, what, ulps=0, zero_signs=True):
    """Equal values, NaN where NaN, the same sign of zero unless told (maximum(0, -0.0) may be
    either), within ``ulps`` units where asked."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if ulps:
        np.testing.assert_allclose(got, expected, rtol=ulps * 2.0 ** -10, atol=0, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)
    if zero_signs:
        assert (np.signbit(got) == np.signbit(expected))[~np.isnan(got)].all(), what


def _cases(numbers):
    return [(dtype, number) for dtype in ("float16", "bfloat16") for number in numbers[dtype]]


@pytest.mark.parametrize("dtype, number", _cases(NOT_HELD))
@pytest.mark.parametrize("name", sorted(OPS))
def test_an_op_with_a_number_the_dtype_cannot_hold(name, dtype, number):
    fn, exact = OPS[name]
    got = fn(minitx.tensor(VALUES, dtype=dtype), number)
    expected = _expected(fn, dtype, number, exact)
    assert got.dtype == expected.dtype, name  # the tensor's dtype (bool for comparisons)
    _same(got.numpy(), expected, f"{dtype} {name} with n = {number}")


@pytest.mark.parametrize("dtype, number", _cases(NOT_HELD))
@pytest.mark.parametrize("name", sorted(TWO_TENSORS) + sorted(CLIPS))
def test_maximum_minimum_and_clip_with_a_number_the_dtype_cannot_hold(name, dtype, number):
    x = minitx.tensor(VALUES, dtype=dtype)
    if name in CLIPS:
        got, fn = F.clip(x, **{CLIPS[name]: number}), (np.maximum if CLIPS[name] == "min" else np.minimum)
    else:
        got, fn = TWO_TENSORS[name][0](x, number), TWO_TENSORS[name][1]
    assert got.dtype == x.dtype
    for exact in (True, False):  # the value is the number's or x's, rounded once: the same either way
        _same(got.numpy(), _expected(fn, dtype, number, exact), f"{dtype} {name} with n = {number}",
              zero_signs=False)


@pytest.mark.parametrize("dtype, number", _cases(NOT_HELD))
@pytest.mark.parametrize("name", sorted(OPS) + sorted(TWO_TENSORS) + sorted(CLIPS))
def test_the_same_values_as_pytorch(name, dtype, number):
    torch = import_torch()
    x, t = minitx.tensor(VALUES, dtype=dtype), torch.tensor(VALUES, dtype=getattr(torch, dtype))
    if name in CLIPS:
        try:
            theirs = t.clamp(**{CLIPS[name]: number})
        except RuntimeError as error:  # a bound float16 or bfloat16 cannot hold: PyTorch refuses it
            assert "without overflow" in str(error)
            return
        ours = F.clip(x, **{CLIPS[name]: number})
    elif name in TWO_TENSORS:
        ours, theirs = TWO_TENSORS[name][0](x, number), getattr(torch, TWO_TENSORS[name][2])(t, torch.tensor(number))
    else:
        ours, theirs = OPS[name][0](x, number), OPS[name][0](t, number)
    assert str(theirs.dtype) == f"torch.{ours.dtype.name}"
    # n / x: PyTorch multiplies by x's reciprocal, rounded to x's dtype first (1e6 / 65504 is
    # 15.2578125 in float16, where the quotient rounded once is 15.265625): within a unit
    ulps = 1 if name == "n / x" else 0
    _same(ours.numpy(), theirs.to(torch.float64).numpy() if theirs.is_floating_point() else theirs.numpy(),
          f"{dtype} {name} with n = {number}", ulps, zero_signs=name in OPS)


GRADIENT_CASES = [("float16", "x * n", 1e6), ("float16", "x / n", 1e-8), ("float16", "n / x", 1e-8),
                  ("bfloat16", "x * n", 3.4e38), ("bfloat16", "x / n", 1e-42)]
DY = [0.0, 1e-5, 6e-8, -2e-3]


def _gradient(fn, dtype, number, dy_dtype=None):
    """x's gradient of fn(x, number) in ``dtype`` for dy = DY rounded to ``dy_dtype`` (or dtype)."""
    x = minitx.tensor([0.5, 1.0, -1.0, 2.0], dtype=dtype, requires_grad=True)
    fn(x, number).backward(minitx.tensor(minitx.tensor(DY, dtype=dy_dtype or dtype).numpy(), dtype=dtype))
    return x.grad


@pytest.mark.parametrize("dtype, name, number", GRADIENT_CASES)
def test_the_gradient_is_float32_s_rounded_once(dtype, name, number):
    """dx = dy * n or dy / n in float32, rounded once: not dy * inf (NaN at dy = 0) or dy / 0."""
    got, in_float32 = _gradient(OPS[name][0], dtype, number), _gradient(OPS[name][0], "float32", number, dtype)
    assert got.dtype == backend.resolve_dtype(dtype)
    with np.errstate(all="ignore"):
        _same(got.numpy(), in_float32.numpy().astype(got.dtype), f"{dtype} d({name})/dx with n = {number}")


@pytest.mark.parametrize("dtype, name, number", GRADIENT_CASES)
def test_the_gradient_is_pytorch_s(dtype, name, number):
    torch = import_torch()
    t = torch.tensor([0.5, 1.0, -1.0, 2.0], dtype=getattr(torch, dtype), requires_grad=True)
    OPS[name][0](t, number).backward(torch.tensor(DY, dtype=getattr(torch, dtype)))
    _same(_gradient(OPS[name][0], dtype, number).numpy(), t.grad.to(torch.float64).numpy(),
          f"{dtype} d({name})/dx with n = {number}", ulps=1 if name == "n / x" else 0)


@pytest.mark.parametrize("dtype, number", _cases(HELD))
@pytest.mark.parametrize("name", ["x * n", "n * x", "x / n", "n / x", "x + n", "x - n"])
def test_a_number_the_dtype_holds_is_taken_rounded_bit_for_bit(name, dtype, number):
    """The computation with the number as a 0-d tensor of the dtype (rounded), bit for bit: the
    numbers of bfloat16 training runs (and what the fused kernels see) do not change."""
    x = minitx.tensor(np.linspace(-3, 70, 23), dtype=dtype)
    assert type(as_tensor(number, like=x)) is Tensor
    fn = OPS[name][0]
    got, rounded = fn(x, number), fn(x, minitx.tensor(number, dtype=dtype))
    assert got.dtype == rounded.dtype == x.dtype
    np.testing.assert_array_equal(got.numpy().view(np.uint16), rounded.numpy().view(np.uint16))


@pytest.mark.parametrize("dtype, number", _cases(NOT_HELD))
def test_the_number_s_tensor_holds_the_rounded_value_and_the_number_in_float32(dtype, number):
    """What every op but * and / reads (the fused kernels' 16-bit arrays included) is the rounded
    number in the tensor's dtype, as before; the number itself is beside it."""
    x = minitx.tensor(VALUES, dtype=dtype)
    n = as_tensor(number, like=x)
    assert n.dtype == x.dtype and n.shape == () and not n.requires_grad
    _same(n.numpy(), _rounded(number, dtype), "the rounded number")
    with np.errstate(over="ignore"):  # 1e39 is float32's inf too
        assert n.exact.dtype == np.float32 and n.exact == np.float32(number)


def test_in_place_products_take_the_number_too():
    x = minitx.tensor(VALUES, dtype="float16")
    x *= 1e6
    _same(x.numpy(), [0.0, np.inf, -np.inf, np.inf], "x *= 1e6")
    x = minitx.tensor(VALUES, dtype="float16")
    x /= 1e-8
    _same(x.numpy(), [0.0, np.inf, -np.inf, np.inf], "x /= 1e-8")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_a_comparison_takes_the_number_as_the_dtype_rounds_it(name, dtype):
    """bfloat16 0.3 == 0.3 (the number rounded to bfloat16 first, as PyTorch and as NumPy does for
    float16), and 257 beside bfloat16 is 256."""
    fn = OPS[name][0]
    held = [0.3, 257, 1.0001, -7.25, 1e-3]
    x = minitx.tensor(held, dtype=dtype)
    for number in held:
        expected = fn(np.array(held, dtype=backend.resolve_dtype(dtype)).astype(np.float32), _rounded(number, dtype))
        np.testing.assert_array_equal(fn(x, number).numpy(), expected, err_msg=f"{dtype} {name} {number}")
    torch = import_torch()
    t = torch.tensor(held, dtype=getattr(torch, dtype))
    for number in held:
        np.testing.assert_array_equal(fn(x, number).numpy(), fn(t, number).numpy(), err_msg=f"{dtype} {name} {number}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_power_takes_the_exponent_as_the_dtype_rounds_it(dtype):
    """x ** 0.3 is x ** float16(0.3) (0.30005), computed in float32 and rounded once, as PyTorch's;
    x ** 1e-8 is x ** 0 in float16 (0 ** 1e-8 = 1, (-1) ** 1e-8 = 1); an exponent the dtype
    cannot hold is refused, as by PyTorch."""
    values = np.concatenate([np.linspace(0.1, 60, 200), [0.0, -1.0, -2.5]])
    x = minitx.tensor(values, dtype=dtype)
    x32 = x.numpy().astype(np.float32)
    for p in (0.3, 1.7, -1.3, 1e-8, 2):
        with np.errstate(all="ignore"):
            expected = (x32 ** _rounded(p, dtype)).astype(backend.resolve_dtype(dtype))
        _same((x ** p).numpy(), expected, f"{dtype} x ** {p}")
    with pytest.raises(OverflowError, match=rf"pow: the exponent 1e\+39 does not fit the tensor's {dtype}"):
        x ** 1e39
    torch = import_torch()
    t = torch.tensor(x32).to(getattr(torch, dtype))
    for p in (0.3, 1.7, -1.3, 1e-8):
        _same((x ** p).numpy(), (t ** p).to(torch.float64).numpy(), f"{dtype} x ** {p} against PyTorch")


@pytest.mark.parametrize("dtype, number", [("float16", 1e-8), ("bfloat16", 1e-42)])
def test_floor_division_by_a_number_the_dtype_cannot_hold_takes_it_in_float32(dtype, number):
    """x // 1e-8 beside float16 divides by 1e-8, as PyTorch's kernel (6e-8 // 1e-8 is 5), not by
    the 0 it rounds to (NaN and inf); a number divided (1e6 // x) is rounded, as there."""
    values = [0.0, -0.0, 6e-8, -6e-8, 1e-4, 1.0]
    x = minitx.tensor(values, dtype=dtype)
    x32 = x.numpy().astype(np.float32)
    with np.errstate(all="ignore"):
        expected = np.floor_divide(x32, np.float32(number)).astype(x.dtype)
    got = x // number
    assert got.dtype == x.dtype
    _same(got.numpy(), expected, f"{dtype} x // {number}", zero_signs=False)
    torch = import_torch()
    t = torch.tensor(x32).to(getattr(torch, dtype))
    _same(got.numpy(), (t // number).to(torch.float64).numpy(), f"{dtype} x // {number} against PyTorch",
          zero_signs=False)
    big = NOT_HELD[dtype][0]
    y = minitx.tensor([1.0, 2.0, -3.0], dtype=dtype)
    _same((big // y).numpy(), (big // torch.tensor([1.0, 2.0, -3.0], dtype=getattr(torch, dtype)))
          .to(torch.float64).numpy(), f"{dtype} {big} // x against PyTorch")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_clip_takes_a_bound_as_the_dtype_rounds_it(dtype):
    """0.3 is 0.30005 in float16 and 0.30078 in bfloat16: an x holding that value is at the bound,
    inside, and takes dy, as in PyTorch (the exact 0.3 would put it outside, with gradient 0);
    1e-8 is 0 in float16, so x = 0 takes dy too. The values do not change. A bound the dtype would
    round to inf (PyTorch refuses it) stays a float32 bound."""
    torch = import_torch()
    values = [0.3, 1.0, 0.1, -0.5, -1.0]
    x = minitx.tensor(values, dtype=dtype, requires_grad=True)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    for low, high in ((-0.5, 0.3), ({"float16": 1e-8, "bfloat16": 1e-42}[dtype], None)):  # rounded to 0
        x.grad = t.grad = None
        y, ty = F.clip(x, low, high), t.clamp(low, high)
        _same(y.numpy(), ty.detach().to(torch.float64).numpy(), f"{dtype} clip({low}, {high}) values")
        y.backward(minitx.ones(5, dtype=dtype))
        ty.backward(torch.ones(5, dtype=getattr(torch, dtype)))
        _same(x.grad.numpy(), t.grad.to(torch.float64).numpy(), f"{dtype} clip({low}, {high}) gradient")
    values[0] = 0.0
    assert F.clip(minitx.tensor(values, dtype=dtype), NOT_HELD[dtype][0]).numpy()[0] == np.inf  # 1e6: float32
