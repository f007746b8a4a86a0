"""Elementwise math: arithmetic, floor division and the two remainders, powers, exp and log,
absolute value, maximum and minimum, clipping, where and masked_fill, nan_to_num, lerp, dtype
and device changes, trigonometry, erf, rounding, base-2 and accurate-near-zero logs and
exponentials, reciprocals; and the comparisons, isclose, tests of values and bitwise ops
(integer or boolean results, no gradient).

Each gradient is the local derivative times the incoming gradient ``dy``. Binary ops
broadcast like numpy; the engine sums their gradients back to each input's shape.

Rounding ops (sign, floor, ceil, round, trunc) are flat between their jumps: their derivative
is 0 wherever it exists, and 0 is the gradient they pass back everywhere, as in PyTorch.
"""
from __future__ import annotations

import functools
import math
import numbers
from typing import NamedTuple

import numpy as np

from minitx import backend
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module
from minitx.dtypes import finfo
from minitx.ops._args import alpha_times, binary, check_alpha, check_bool, check_fits, common_16_bits, floating, integer_scale, one_dtype, operands, promote

__all__ = ["Frexp", "Add", "Sub", "Mul", "Div", "Neg", "PowScalar", "Pow", "Exp", "Log", "Sqrt", "Abs", "Maximum", "Minimum", "Clip", "ClipTensor", "Where", "MaskedFill", "Astype", "ToDevice", "Sin", "Cos", "Erf", "Sign", "Floor", "Ceil", "Round", "Trunc", "Log2", "Exp2", "Log1p", "Expm1", "Rsqrt", "Reciprocal", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Log10", "Atan2", "Hypot", "Copysign", "FloorDivide",
           "Remainder", "Fmod", "NanToNum", "Lerp", "Erfc", "Erfinv", "Lgamma", "Digamma", "LogAddExp", "LogAddExp2",
           "Xlogy", "Sinc", "Logit", "Heaviside", "Fmax", "Fmin", "Frac", "Polygamma", "I0", "I1",
           "Xlog1py", "Entr", "LogNdtr",
           "Erfcx", "Ndtri", "I0e", "I1e", "Zeta", "GammaInc"]


def _not_boolean(op, x):
    """x, unless it is a boolean tensor: negating or subtracting booleans has no meaning (NumPy and
    PyTorch refuse too)."""
    x = as_tensor(x)
    if x.dtype.kind == "b":
        raise TypeError(f"{op}: not defined for boolean tensors (NumPy and PyTorch refuse them too); convert to "
                        f"an integer dtype first, or use ~ and ^ for logic")
    return x


class Add(Function):
    """y = a + b.   da = dy,  db = dy"""

    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        return dy, dy


def add(a, b, *, alpha=1):
    """a + b; with ``alpha``, a + alpha * b, as PyTorch's add (alpha_times)."""
    if not (type(alpha) is int and alpha == 1):  # (1.0 and True are checked: PyTorch refuses them for some dtypes)
        b = alpha_times("add", a, b, alpha)
    return binary(Add(), a, b)


class Sub(Function):
    """y = a - b.   da = dy,  db = -dy"""

    def forward(self, a, b):
        return a - b

    def backward(self, dy):
        return dy, -dy


def sub(a, b, *, alpha=1):
    """a - b; with ``alpha``, a - alpha * b, as PyTorch's sub (alpha_times)."""
    return _difference("sub", a, b, alpha)


def _difference(op, a, b, alpha=1, wide=False):
    """a - alpha * b for sub, subtract, rsub and sub_ (``wide``: alpha_times), their errors naming
    ``op``: booleans refused (a Python bool too, as PyTorch refuses x - True)."""
    for operand in (a, b):
        if isinstance(operand, (Tensor, bool, np.bool_)):
            _not_boolean(op, operand)
    if not (type(alpha) is int and alpha == 1):
        b = alpha_times(op, a, b, alpha, wide=wide)
    return binary(Sub(), a, b)


class Mul(Function):
    """y = a * b.   da = dy * b,  db = dy * a"""

    exact_numbers = True  # 1e6 beside float16 is 1e6 here, as in PyTorch's kernel

    def forward(self, a, b):
        # only what a wanted gradient reads: b for da, a for db (x * 5 keeps no x, which a later
        # write may then change, as PyTorch's)
        wants_da, wants_db = self.needs_input_grad or (True, True)
        self.save_for_backward(b if wants_da else None, a if wants_db else None)
        return a * b

    def backward(self, dy):
        b, a = self.saved
        return (dy * b if self.needs_input_grad[0] else None,
                dy * a if self.needs_input_grad[1] else None)


def mul(a, b): return binary(Mul(), a, b)


class Div(Function):
    """y = a / b.   da = dy / b,  db = -dy * a / b^2 = -dy * (y / b)  (y / b first: where dy / b
    overflows and y is 0, (dy / b) * y would be inf * 0 = NaN for a true 0)

    Derivation: docs/backprop/elementwise.md
    """

    exact_numbers = True  # 1e6 beside float16 is 1e6 here, as in PyTorch's kernel

    def forward(self, a, b):
        y = a / b
        self.save_for_backward(b, y)
        return y

    def backward(self, dy):
        b, y = self.saved
        return dy / b, (-dy * (y / b) if self.needs_input_grad[1] else None)


def div(a, b): return binary(Div(), a, b, true_division=True)


class Neg(Function):
    """y = -x.   dx = -dy"""

    def forward(self, x):
        return -x

    def backward(self, dy):
        return (-dy,)


def neg(x): return Neg()(_not_boolean("neg", x))


class PowScalar(Function):
    """y = x^p for a constant number p.   dx = dy * p * x^(p-1)

    Derivation: docs/backprop/elementwise.md
    """

    def __init__(self, p):
        self.p = p

    def forward(self, x):
        self.save_for_backward(x)
        return x ** self.p

    def backward(self, dy):
        (x,) = self.saved
        if self.p == 0:
            return (dy * 0,)
        return (dy * self.p * x ** (self.p - 1),)


class Pow(Function):
    """y = a^b for tensors a and b (a > 0 where b needs a gradient: ln a is NaN below 0).

    da = dy * b * a^(b-1)        db = dy * y * ln(a)

    At the edges the limits PyTorch takes: da = 0 where b = 0 (y = 1 for every a, even
    where a^(b-1) = 0^-1 = inf), and db = 0 where a = 0 and b >= 0 (y = 0^b is 0 or 1 on
    that side; ln 0 = -inf would give 0 * -inf = NaN). For a = 0, b < 0 both are infinite.

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        y = a ** b
        self.save_for_backward(a, b, y)
        return y

    def backward(self, dy):
        a, b, y = self.saved
        xp = get_array_module(a)
        da = db = None
        with np.errstate(divide="ignore", invalid="ignore"):  # the edges are replaced just below
            if self.needs_input_grad[0]:
                da = xp.where(b == 0, 0, dy * b * a ** (b - 1))
            if self.needs_input_grad[1]:
                db = xp.where((a == 0) & (b >= 0), 0, dy * y * xp.log(a))
        return da, db


def _python_number(value):
    """A NumPy scalar (np.float64(2)) as the Python number it holds, anything else as it is: NumPy
    would let its dtype promote (float32 ** np.float64(2) is float64), where a number beside a
    tensor takes the tensor's dtype, as in x + np.float64(2) (see as_tensor)."""
    return value.item() if isinstance(value, np.generic) and isinstance(value, numbers.Number) else value


def _exponent_in(dtype, p):
    """The exponent of a float16 or bfloat16 tensor as that dtype rounds it, as PyTorch takes it
    (x ** 0.3 is x ** 0.30005 in float16; x ** 1e-8 is x ** 0, so 0 ** 1e-8 is 1); refused where
    it would round to inf, as by PyTorch."""
    rounded = backend.rounded(p, dtype)
    if math.isinf(rounded) and not math.isinf(p):
        raise OverflowError(f"pow: the exponent {p} does not fit the tensor's {dtype.name} (it would be inf); "
                            "convert the tensor to float32 first")
    return p if rounded == p else rounded


def pow(a, b):  # noqa: A001 (numpy's name)
    """a ** b. A constant number exponent uses PowScalar (x^p); otherwise Pow (needs a > 0
    where the exponent takes a gradient). A NumPy scalar counts as the Python number it holds.
    A boolean tensor beside a number counts as the integer 0 or 1 (True ** 2 is 1, True ** 0.5
    is 1.0, both int64 or float32 as True + 2 would be); beside another tensor it promotes as in
    a + b (int32 ** bool is int32); two booleans are refused, as by PyTorch."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype.kind == b.dtype.kind == "b":
        _not_boolean("pow", a)
    a, b = _python_number(a), _python_number(b)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):  # beside another tensor numpy promotes bools
        a, b = (v.astype(np.int64) if isinstance(v, Tensor) and v.dtype.kind == "b" else v for v in (a, b))
    if isinstance(b, numbers.Number) and isinstance(a, Tensor):
        if a.dtype.kind in "biu" and isinstance(b, float):  # int ** 0.5 is float32, as in PyTorch
            a = a.astype(backend.DEFAULT_FLOAT)
        elif a.dtype.kind in "biu" and b < 0:
            raise ValueError(f"pow: an integer tensor to the negative power {b} has no integer value; "
                             "convert it to a float dtype first")
        elif backend.is_floating(a.dtype) and a.dtype.itemsize == 2:
            b = _exponent_in(a.dtype, b)
        return PowScalar(b)(a)
    a, b = promote(a, b, op="pow")
    if a.dtype.kind in "biu" and b.dtype.kind in "biu" and backend.to_host((b < 0).any()):
        raise ValueError("pow: integer tensors to negative integer powers have no integer value; "
                         "convert them to a float dtype first")
    return binary(Pow(), a, b)


class Exp(Function):
    """y = e^x.   dx = dy * y

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        y = get_array_module(x).exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * y,)


def exp(x): return Exp()(floating(x))


class Log(Function):
    """y = ln x.   dx = dy / x

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / x,)


def log(x): return Log()(floating(x))


class Sqrt(Function):
    """y = sqrt(x).   dx = dy / (2 y)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        y = get_array_module(x).sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy / (2 * y),)


def sqrt(x): return Sqrt()(floating(x))


class Atan2(Function):
    """y = atan2(a, b), the angle of the point (b, a) in (-pi, pi].   With r^2 = a^2 + b^2:
    da = dy * b / r^2      db = -dy * a / r^2      (the partial derivatives of atan(a / b), which
    hold on every branch).

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).arctan2(a, b)

    def backward(self, dy):
        a, b = self.saved
        r2 = a * a + b * b
        return dy * b / r2, -dy * a / r2


def atan2(a, b): return binary(Atan2(), floating(a), b)


class Hypot(Function):
    """y = sqrt(a^2 + b^2), without overflow for large a or b.   da = dy * a / y   db = dy * b / y

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        y = get_array_module(a).hypot(a, b)
        self.save_for_backward(a, b, y)
        return y

    def backward(self, dy):
        a, b, y = self.saved
        return dy * a / y, dy * b / y


def hypot(a, b): return binary(Hypot(), floating(a), b)


class Copysign(Function):
    """y = |a| with the sign of b.   da = dy * sign(a) * (±1, b's sign bit)   db = 0 (the sign
    changes only by jumps); da at a = 0 is 0, as PyTorch's."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).copysign(a, b)

    def backward(self, dy):
        a, b = self.saved
        xp = get_array_module(a)
        return dy * xp.sign(a) * xp.where(xp.signbit(b), -1.0, 1.0), xp.zeros_like(b)


def copysign(a, b): return binary(Copysign(), floating(a), b)


def _no_integer_zero(name, b):
    """Integer division by 0 has no value: raise, as PyTorch does (NumPy gives 0 and a warning).
    A float divisor of 0 gives IEEE's inf or NaN, as in both."""
    if b.dtype.kind in "biu" and backend.to_host((b == 0).any()):  # a host read, counted
        raise ZeroDivisionError(f"{name}: integer division by zero (the divisor holds 0)")


def _operands(op, a, b, two_bools):
    """a and b as tensors (a number takes the other's dtype; a boolean beside an integer counts as
    0 or 1). Two booleans raise TypeError unless ``two_bools``: PyTorch has no boolean kernel for
    division, remainders and shifts (NumPy would compute them in int8)."""
    a, b = operands(op, a, b)
    if not two_bools and a.dtype.kind == b.dtype.kind == "b":
        raise TypeError(f"{op}: not defined for two boolean tensors; convert one to an integer dtype")
    return a, b


def _divides(op, a, b): return binary(op, *_operands(op.name, a, b, two_bools=False))


class FloorDivide(Function):
    """y = floor(a / b), as NumPy's floor_divide and Python's //: with r = fmod(a, b), the exact
    (a - r) / b, less 1 where r and b have opposite signs. Integers: b = 0 raises (see
    _no_integer_zero). Floats: a / b where b = 0 (±inf, NaN for 0 / 0); inf // b is NaN.

    da = 0, db = 0: y is flat between its jumps, as floor (PyTorch raises instead: the derivative
    of floor_divide is not implemented there).

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        _no_integer_zero(self.name, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return get_array_module(a).floor_divide(a, b)

    def backward(self, dy):
        zeros = get_array_module(dy).zeros_like(dy)
        return zeros, zeros


def floor_divide(a, b):
    op = FloorDivide()
    # a divisor float16 or bfloat16 cannot hold (x // 1e-8) is taken in float32, as PyTorch's kernel
    # reads it (x // 0 would be NaN or inf); a number divided (1e6 // x) is rounded, as there
    op.exact_numbers = not isinstance(a, numbers.Number)
    return _divides(op, a, b)


class _Remainder(Function):
    """y = a - b * q for an integer quotient q(a, b) that is constant between its jumps:
    da = dy,   db = -dy * q   (the subclass gives q; integer division by 0 raises)."""

    def divide(self, ufunc, a, b):
        _no_integer_zero(self.name, b)
        self.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return ufunc(a, b)

    def backward(self, dy):
        a, b = self.saved
        if not self.needs_input_grad[1]:
            return dy, None
        with np.errstate(divide="ignore", invalid="ignore"):
            return dy, -dy * self.quotient(a, b)


class Remainder(_Remainder):
    """y = a - b * floor(a / b), the sign of the divisor b (Python's and NumPy's %, PyTorch's
    remainder); a zero result is signed as b too (NumPy's -0.0 % 5 is 0.0, PyTorch's -0.0).
    Integers: b = 0 raises; floats: NaN where b = 0 or a is infinite.

    da = dy,   db = -dy * floor(a / b)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        return self.divide(get_array_module(a).remainder, a, b)

    def quotient(self, a, b):
        return get_array_module(a).floor_divide(a, b)


def remainder(a, b): return _divides(Remainder(), a, b)


class Fmod(_Remainder):
    """y = a - b * trunc(a / b), the sign of the dividend a (C's fmod, NumPy's and PyTorch's fmod).
    Integers: b = 0 raises; floats: NaN where b = 0 or a is infinite.

    da = dy,   db = -dy * trunc(a / b)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, a, b):
        return self.divide(get_array_module(a).fmod, a, b)

    def quotient(self, a, b):
        """The quotient fmod's exact remainder stands for: trunc(a / b) of the rounded division
        may be one off (fmod(1, 0.1) = 0.0999... is 1 - 9 * 0.1, but 1 / 0.1 rounds to 10); where
        b = 0 or a is infinite, trunc(a / b) (inf or NaN)."""
        xp = get_array_module(a)
        exact = xp.round((a - xp.fmod(a, b)) / b)
        return xp.where(xp.isfinite(exact), exact, xp.trunc(a / b))


def fmod(a, b): return _divides(Fmod(), a, b)


def addcmul(x, tensor1, tensor2, *, value=1):
    """x + value * tensor1 * tensor2 (PyTorch's addcmul), as the products and the sum compute it."""
    return add(x, mul(tensor1 if value == 1 else mul(tensor1, value), tensor2))


def addcdiv(x, tensor1, tensor2, *, value=1):
    """x + value * tensor1 / tensor2 (PyTorch's addcdiv), as the product, quotient and sum compute it."""
    return add(x, div(tensor1 if value == 1 else mul(tensor1, value), tensor2))


class Abs(Function):
    """y = |x|.   dx = dy * sign(x) (0 at x = 0)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(xp.sign(x))
        return xp.abs(x)

    def backward(self, dy):
        (sign,) = self.saved
        return (dy * sign,)


def abs(x): return Abs()(_not_boolean("abs", x))  # noqa: A001 (numpy's name)


class Maximum(Function):
    """y = max(a, b) elementwise.   The gradient goes to the larger input; on a tie
    (a == b) it is shared equally, dy/2 to each, so the two parts still add up to dy.

    Derivation: docs/backprop/max-and-ties.md
    """

    def forward(self, a, b):
        xp = get_array_module(a)
        self.save_for_backward(a, b)
        return xp.maximum(a, b)

    def backward(self, dy):
        a, b = self.saved
        share_a = (a > b) + 0.5 * (a == b)
        return dy * share_a, dy * (1 - share_a)


def maximum(a, b): return binary(Maximum(), a, b)


class Minimum(Function):
    """y = min(a, b) elementwise.   As Maximum: the smaller input takes dy; ties share it."""

    def forward(self, a, b):
        xp = get_array_module(a)
        self.save_for_backward(a, b)
        return xp.minimum(a, b)

    def backward(self, dy):
        a, b = self.saved
        share_a = (a < b) + 0.5 * (a == b)
        return dy * share_a, dy * (1 - share_a)


def minimum(a, b): return binary(Minimum(), a, b)


def dy_where(keep, dy):
    """dy where ``keep``, else 0: a selection, not dy * keep, which makes an inf or NaN dy at a
    position not kept NaN (a gradient that does not reach an input is 0 there, whatever it is)."""
    return get_array_module(dy).where(keep, dy, dy.dtype.type(0))


class Clip(Function):
    """y = min(max(x, low), high).   dx = dy where low <= x <= high, else 0

    With low > high every y is high, as NumPy (and PyTorch) define it, and dx = 0.

    Derivation: docs/backprop/elementwise.md
    """

    def __init__(self, low=None, high=None):
        if low is None and high is None:
            raise ValueError("clip: give at least one of min and max")
        self.low, self.high = low, high

    def forward(self, x):
        xp = get_array_module(x)
        inside = xp.ones(x.shape, dtype=bool)
        if self.low is not None:
            inside &= x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        self.save_for_backward(inside)
        return xp.clip(x, self.low, self.high)

    def backward(self, dy):
        (inside,) = self.saved
        return (dy_where(inside, dy),)


class ClipTensor(Function):
    """y = min(max(x, low), high) for tensor bounds (any shapes that broadcast with x's, y taking
    the broadcast shape), given as inputs after x: low, high, or both when ``has_low`` and
    ``has_high`` say so. Maximum, then minimum, as NumPy's clip: with low > high every y is high.

        dx    = dy where low <= x <= high, else 0      (x takes dy at a tie x == low or x == high)
        dlow  = dy where x < low and low < high, else 0
        dhigh = dy where x > high or high < low, else 0

    PyTorch's gradients for clamp with tensor bounds (Clip's for number bounds). Wherever no value
    is NaN they add up to dy: with low > high, high takes it, as y is high's value; at low == high,
    x takes the tie and each bound the side it cuts off.

    Derivation: docs/backprop/elementwise.md
    """

    def __init__(self, has_low=True, has_high=True):
        if not (has_low or has_high):
            raise ValueError("clip: give at least one of min and max")
        self.has_low, self.has_high = has_low, has_high

    def _bounds(self, bounds):
        """(low, high) from the arrays after x, None for the one not given."""
        return bounds[0] if self.has_low else None, bounds[-1] if self.has_high else None

    def forward(self, x, *bounds):
        xp = get_array_module(x)
        self.save_for_backward(x, *bounds)
        low, high = self._bounds(bounds)
        y = x if low is None else xp.maximum(x, low)
        return y if high is None else xp.minimum(y, high)

    def backward(self, dy):
        x, *bounds = self.saved
        low, high = self._bounds(bounds)
        if low is None:
            return dy_where(x <= high, dy), dy_where(x > high, dy)
        if high is None:
            return dy_where(x >= low, dy), dy_where(x < low, dy)
        return (dy_where((x >= low) & (x <= high), dy), dy_where((x < low) & (low < high), dy),
                dy_where((x > high) | (high < low), dy))


def _held_bound(dtype, bound):
    """A number bound as the 16-bit dtype rounds it (1e-8 to 0 beside float16, as PyTorch's clamp),
    unless it would round to inf (PyTorch refuses it; here it stays a float32 bound)."""
    if not isinstance(bound, numbers.Real) or isinstance(bound, bool):
        return bound
    rounded = backend.rounded(bound, dtype)
    return rounded if math.isfinite(rounded) or not math.isfinite(bound) else bound


def clip(x, min=None, max=None):  # noqa: A002 (numpy's names)
    """x limited to [min, max]; an integer tensor with a float bound is clipped in float32, as PyTorch's.

    Number bounds use Clip. Tensor bounds (or lists) use ClipTensor: they take gradients, promote
    with x as in a binary op (x + min) and may broadcast x to a larger shape; a number beside a
    tensor bound becomes a 0-d tensor in x's dtype (PyTorch refuses the mix)."""
    x = as_tensor(x)
    min, max = (_python_number(bound) for bound in (min, max))
    if isinstance(min, float) or isinstance(max, float):
        x = floating(x)
    if backend.is_floating(x.dtype) and x.dtype.itemsize == 2:
        # a bound float16 or bfloat16 holds is taken rounded, as PyTorch's clamp takes it: an x at
        # the rounded bound (0.3 is 0.30005 in float16) is inside and takes dy; the values do not change
        min, max = (_held_bound(x.dtype, bound) for bound in (min, max))
    if all(bound is None or isinstance(bound, numbers.Number) for bound in (min, max)):
        return Clip(min, max)(x)
    bounds = [bound for bound in (min, max) if bound is not None]
    for bound in bounds:  # each bound promoted with x, as x's dtype may still change
        x, _ = promote(x, bound, op="clip")
    bounds = [promote(x, bound, op="clip")[1] for bound in bounds]
    shapes = [x.shape] + [bound.shape for bound in bounds]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"clip: shapes {' and '.join(map(str, shapes))} do not broadcast (x, then the bounds)") \
            from None
    return ClipTensor(min is not None, max is not None)(x, *bounds)


class Where(Function):
    """y = a where cond else b (cond a boolean tensor, broadcast).
    da = dy where cond else 0,   db = dy where not cond else 0,   no gradient for cond"""

    def forward(self, cond, a, b):
        self.save_for_backward(cond)
        return get_array_module(a).where(cond, a, b)

    def backward(self, dy):
        (cond,) = self.saved
        return None, dy_where(cond, dy), dy_where(~cond, dy)


def where(cond, a=None, b=None):
    """a where cond else b (cond boolean); a and b may be numbers. Given cond alone, the
    positions where it holds, one int64 tensor per axis (NumPy's and PyTorch's where(cond))."""
    if a is None and b is None:
        return as_tensor(cond).nonzero(as_tuple=True)
    if a is None or b is None:
        raise TypeError("where: takes cond alone (the positions where it holds) or cond, a and b, got one of a, b")
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    # promote first: a 0-d float beside float32 or float64 with dimensions takes their dtype, as in a + b
    cond, (a, b) = as_tensor(cond, like), one_dtype(*promote(a, b, op="where"))
    check_bool("where", "cond", cond)
    try:
        np.broadcast_shapes(cond.shape, a.shape, b.shape)
    except ValueError:
        raise ValueError(f"where: shapes {cond.shape}, {a.shape} and {b.shape} do not broadcast") from None
    return Where()(cond, a, b)


class MaskedFill(Function):
    """y = value where mask else x (mask True marks the entries to overwrite; value a tensor that
    broadcasts to x's shape, taken in x's dtype).
    dx = dy where not mask else 0,   dvalue = dy where mask else 0 (the engine sums it back to
    value's shape: a 0-d value gets the sum of dy over the masked entries),   no gradient for mask"""

    def forward(self, x, mask, value):
        xp = get_array_module(x)
        self.save_for_backward(mask)
        return xp.where(mask, value.astype(x.dtype, copy=False), x)

    def backward(self, dy):
        (mask,) = self.saved
        return (dy_where(~mask, dy) if self.needs_input_grad[0] else None, None,
                dy_where(mask, dy) if self.needs_input_grad[2] else None)


def masked_fill(x, mask, value):
    """x with ``value`` written where mask is True (mask broadcasts to x's shape). value is a number
    or a tensor, 0-d as PyTorch's or any shape that broadcasts to x's; a tensor value gets a
    gradient (dy summed over the entries it fills)."""
    return filled("masked_fill", x, mask, value)


def filled(op, x, mask, value):
    """masked_fill, its errors naming ``op`` (index_fill is a masked_fill)."""
    mask = as_tensor(mask, x)
    check_bool(op, "mask", mask)
    if isinstance(value, numbers.Number):
        check_fits(op, "value", value, x.dtype)
        with np.errstate(all="ignore"):  # -1e9 in float16: -inf, as the output would hold it anyway
            value = Tensor(get_array_module(x.data).full((), value, dtype=x.dtype))
    value = as_tensor(value, x)
    if not backend.can_cast(value.dtype, x.dtype):  # 0.5 into int64: 0
        raise TypeError(f"{op}: a value tensor of dtype {value.dtype.name} would be truncated into the "
                        f"tensor's {x.dtype.name}; expected a value of an integer or boolean dtype, or convert "
                        f"the tensor first, e.g. x.to(dtype='float32')")
    for what, t in (("mask", mask), ("value", value)):
        if not broadcasts_to(t.shape, x.shape):
            raise ValueError(f"{op}: {what} of shape {t.shape} does not broadcast to {x.shape}")
    return MaskedFill()(x, mask, value)


def broadcasts_to(shape, target) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` without growing it."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


class NanToNum(Function):
    """y = x, with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (numbers;
    nan_to_num picks the dtype's largest finite values for the infinities).

        dx = dy where x is finite, 0 where it was replaced
    (as PyTorch's dy * isfinite(x), but by where: an infinite dy at a replaced entry gives 0, not NaN)
    """

    def __init__(self, nan, posinf, neginf):
        self.nan, self.posinf, self.neginf = nan, posinf, neginf

    def forward(self, x):
        xp = get_array_module(x)
        finite = xp.isfinite(x)
        self.save_for_backward(finite)
        nan, posinf, neginf = (xp.asarray(value, dtype=x.dtype) for value in (self.nan, self.posinf, self.neginf))
        return xp.where(finite, x, xp.where(xp.isnan(x), nan, xp.where(x > 0, posinf, neginf)))

    def backward(self, dy):
        (finite,) = self.saved
        return (get_array_module(dy).where(finite, dy, 0),)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """x with NaN, +inf and -inf replaced by finite numbers (PyTorch's and NumPy's nan_to_num):
    ``nan`` (0.0), ``posinf`` and ``neginf`` (None: the largest and the most negative finite value
    of x's dtype). A replacement x's dtype cannot hold is as that dtype rounds it (1e6 is inf in
    float16), as PyTorch's. Integer and boolean tensors hold neither: a copy of x."""
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        return Tensor(x.data.copy())
    largest = finfo(x.dtype).max
    replacements = [nan, largest if posinf is None else posinf, -largest if neginf is None else neginf]
    for name, value in zip(("nan", "posinf", "neginf"), replacements):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"nan_to_num: {name} must be a number, got {value!r}")
    return NanToNum(*(backend.rounded(value, x.dtype) for value in replacements))(x)


def lerp_values(a, b, w):
    """a + w (b - a) on arrays, as PyTorch's lerp computes it: from b's side where |w| >= 1/2,
    b - (b - a)(1 - w), so that w = 1 gives b itself (a + (b - a) can miss it in the last bit)."""
    xp = get_array_module(a)
    d = b - a
    return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


class Lerp(Function):
    """y = a + w (b - a): the point a fraction w of the way from a to b (PyTorch's lerp; a, b and
    the weight w broadcast together; see lerp_values for how y is rounded).

        da = dy (1 - w),   db = dy w,   dw = dy (b - a)
    """

    def forward(self, a, b, w):
        self.save_for_backward(a, b, w)
        return lerp_values(a, b, w)

    def backward(self, dy):
        a, b, w = self.saved
        return (dy * (1 - w) if self.needs_input_grad[0] else None, dy * w if self.needs_input_grad[1] else None,
                dy * (b - a) if self.needs_input_grad[2] else None)


def lerp(a, b, weight):
    """a + weight (b - a), entry by entry (PyTorch's lerp): ``weight`` a number or a tensor, which
    then takes a gradient too; a, b and weight broadcast together. An integer a computes in float32
    (PyTorch refuses it); b and weight may be numbers, and of other dtypes (NumPy's promotion among
    floats; PyTorch asks for a's)."""
    a = floating(a)
    a, b, weight = one_dtype(*(as_tensor(t, a) for t in (a, b, weight)))
    shapes = (a.shape, b.shape, weight.shape)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"lerp: shapes {', '.join(map(str, shapes))} of a, b and weight do not broadcast") from None
    return Lerp()(a, b, weight)


class Astype(Function):
    """y = x converted to another dtype.   dx = dy converted back to x's dtype"""

    chooses_dtype = True

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.source_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, dy):
        if not backend.is_floating(self.source_dtype):  # an integer or boolean source takes no gradient
            return (None,)
        return (dy.astype(self.source_dtype),)


def astype(x, dtype):
    return Astype(backend.resolve_dtype(dtype))(x)


class ToDevice(Function):
    """y = x copied to another device ("cpu" or "cuda").   dx = dy copied back"""

    def __init__(self, device):
        self.device = device

    def forward(self, x):
        self.source_device = device_of(x)
        return backend.to_device(x, self.device)

    def backward(self, dy):
        return (backend.to_device(dy, self.source_device),)


def to_device(x, device):
    return ToDevice(backend.check_device(device))(x)


_LN2 = math.log(2)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT1_2 = math.sqrt(0.5)


class Sin(Function):
    """y = sin x.   dx = dy * cos x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).sin(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * get_array_module(x).cos(x),)


def sin(x): return Sin()(floating(x))


class Cos(Function):
    """y = cos x.   dx = -dy * sin x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).cos(x)

    def backward(self, dy):
        (x,) = self.saved
        return (-dy * get_array_module(x).sin(x),)


def cos(x): return Cos()(floating(x))


class Tan(Function):
    """y = tan x.   dx = dy * (1 + y^2)   (d tan = 1 / cos^2 = 1 + tan^2)"""

    def forward(self, x):
        y = get_array_module(x).tan(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (1 + y * y),)


def tan(x): return Tan()(floating(x))


class Asin(Function):
    """y = asin x (x in [-1, 1]).   dx = dy / sqrt(1 - x^2)   (inf at x = ±1, NaN outside)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arcsin(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / get_array_module(x).sqrt(1 - x * x),)


def asin(x): return Asin()(floating(x))


class Acos(Function):
    """y = acos x (x in [-1, 1]).   dx = -dy / sqrt(1 - x^2)   (acos = pi/2 - asin)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arccos(x)

    def backward(self, dy):
        (x,) = self.saved
        return (-dy / get_array_module(x).sqrt(1 - x * x),)


def acos(x): return Acos()(floating(x))


class Atan(Function):
    """y = atan x.   dx = dy / (1 + x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arctan(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / (1 + x * x),)


def atan(x): return Atan()(floating(x))


def hyperbolic_values(x):
    """(sinh x, cosh x), accurate up to where they overflow. Past |x| = 20, e^-|x| no longer
    counts, and both are e^|x| / 2 (sinh with x's sign), computed as t * (t / 2) with
    t = e^(|x|/2): e^|x| itself would overflow at |x| = 709.8 where the result, up to |x| =
    710.47, is still a float64 (NumPy's sinh and cosh overflow there; C's and PyTorch's do not)."""
    xp = get_array_module(x)
    t = xp.exp(xp.abs(x) / 2)
    big = t * (t / 2)
    far = xp.abs(x) > 20
    with xp.errstate(over="ignore"):
        return xp.where(far, xp.copysign(big, x), xp.sinh(x)), xp.where(far, big, xp.cosh(x))


class Sinh(Function):
    """y = sinh x = (e^x - e^-x) / 2.   dx = dy * cosh x"""

    def forward(self, x):
        self.save_for_backward(x)
        return hyperbolic_values(x)[0]

    def backward(self, dy):
        (x,) = self.saved
        return (dy * hyperbolic_values(x)[1],)


def sinh(x): return Sinh()(floating(x))


class Cosh(Function):
    """y = cosh x = (e^x + e^-x) / 2.   dx = dy * sinh x"""

    def forward(self, x):
        self.save_for_backward(x)
        return hyperbolic_values(x)[1]

    def backward(self, dy):
        (x,) = self.saved
        return (dy * hyperbolic_values(x)[0],)


def cosh(x): return Cosh()(floating(x))


class Asinh(Function):
    """y = asinh x = log(x + sqrt(x^2 + 1)).   dx = dy / sqrt(x^2 + 1)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arcsinh(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / get_array_module(x).sqrt(x * x + 1),)


def asinh(x): return Asinh()(floating(x))


class Acosh(Function):
    """y = acosh x (x >= 1).   dx = dy / sqrt(x^2 - 1)   (inf at x = 1, NaN below)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arccosh(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / get_array_module(x).sqrt(x * x - 1),)


def acosh(x): return Acosh()(floating(x))


class Atanh(Function):
    """y = atanh x (x in (-1, 1)).   dx = dy / (1 - x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).arctanh(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / (1 - x * x),)


def atanh(x): return Atanh()(floating(x))


class Log10(Function):
    """y = log10 x = ln x / ln 10.   dx = dy / (x ln 10)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log10(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / (x * _LN10),)


def log10(x): return Log10()(floating(x))


_LN10 = math.log(10.0)


_ERF_SWITCH = 1.5  # |x| below it: erf's series; from it on: erfc's continued fraction
_ERFC_LEVELS = 100  # the fraction's depth: exact to float64 rounding from |x| = 1.5 on


def _erf_and_erfc(x):
    """(erf(a), erfc(a)) for a = |x|, in float64. Below a = 1.5

        erf(a)  = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (1 * 3 * ... * (2n+1))

    (only positive terms, no cancellation; 60 of them reach float64 rounding), and elsewhere

        erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + ...)))))

    (100 levels, evaluated from the innermost out). 1 - erfc(a) is erf(a) there, and 1 - erf(a)
    is erfc(a) below 1.5 (erfc(1.5) = 0.034: the subtraction loses about 5 bits). Computed in
    float64 whatever x's dtype: in float32 those 5 bits would be 5 of its 24.
    """
    xp = get_array_module(x)
    a = xp.abs(x).astype(xp.float64)
    small = a < _ERF_SWITCH
    s = xp.where(small, a, 0.0)
    term, total = s, s
    for n in range(1, 60):
        term = term * (2 * s * s / (2 * n + 1))
        total = total + term
    series = _TWO_OVER_SQRT_PI * xp.exp(-s * s) * total
    # 1.5 keeps the unused entries finite; past 30 erfc is 0 in float64 (below 1e-323 from 27.3 on)
    b = xp.minimum(xp.where(small, _ERF_SWITCH, a), 30.0)
    erfc = _exp_minus_square(b) / math.sqrt(math.pi) / _erfc_fraction(b)[0]
    return xp.where(small, series, 1 - erfc), xp.where(small, 1 - series, erfc)


def _erfc_fraction(b):
    """(F, G) for b >= 1.5: erfc(b) = exp(-b^2) / (sqrt(pi) F), the continued fraction above,
    F = b + (1/2) / G,  G = b + 1/(b + (3/2)/(b + 2/(b + ...))), _ERFC_LEVELS levels from the innermost out."""
    inner = b
    for k in range(_ERFC_LEVELS, 1, -1):
        inner = b + (k / 2) / inner
    return b + 0.5 / inner, inner


def _exp_minus_square(b, sign=-1):
    """exp(-b^2) (exp(b^2) for sign = 1) for 0 <= b <= 30 without the rounding of b^2 (an error of 7e-14
    at b = 26): with h = b cut to a multiple of 1/16, h^2 is exact and b^2 = h^2 + (b - h)(b + h)."""
    xp = get_array_module(b)
    h = xp.trunc(b * 16) / 16
    return xp.exp(sign * h * h) * xp.exp(sign * (b - h) * (b + h))


def erf_values(x):
    """erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt, vectorised (NumPy has no erf; CuPy's comes
    from cupyx): erf(a) by its series below |x| = 1.5, 1 - erfc(a) from there on (_erf_and_erfc),
    and erf(-a) = -erf(a). Agrees with math.erf to about 2e-15 relative (tests/ops/test_unary.py).
    """
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erf(x)
    return (xp.sign(x) * _erf_and_erfc(x)[0]).astype(x.dtype, copy=False)


def erfc_values(x):
    """erfc(x) = 1 - erf(x), exact where erfc is tiny (not 1 - erf(x), which is 0 from x = 6 on
    and loses digits long before): erfc(a) by its continued fraction from |x| = 1.5 on, 1 - erf(a)
    below (_erf_and_erfc), and erfc(-a) = 2 - erfc(a). Agrees with math.erfc to about 1e-14 relative
    up to x = 26, where erfc is 5e-296, and to float32's rounding in float32 (tests/ops/test_special.py)."""
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfc(x)
    upper = _erf_and_erfc(x)[1]  # erfc(|x|)
    return xp.where(x < 0, 2 - upper, upper).astype(x.dtype, copy=False)


def _erf_numpy(z):
    """erf on numpy arrays through math.erf (numpy has none). Exact but a Python call per
    element: on the CPU the "tanh" approximation is the fast choice for big activations."""
    return np.vectorize(math.erf, otypes=[z.dtype])(z) if z.size else z.copy()


class Erf(Function):
    """y = erf x (see erf_values).   dx = dy * 2/sqrt(pi) * exp(-x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return erf_values(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _TWO_OVER_SQRT_PI * get_array_module(x).exp(-x * x),)


def erf(x): return Erf()(floating(x))


class Erfc(Function):
    """y = erfc x = 1 - erf x (see erfc_values: exact where it is tiny).   dx = -dy * 2/sqrt(pi) * exp(-x^2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return erfc_values(x)

    def backward(self, dy):
        (x,) = self.saved
        return (-dy * _TWO_OVER_SQRT_PI * get_array_module(x).exp(-x * x),)


def erfc(x): return Erfc()(floating(x))


# Giles's polynomials in w = -log(1 - z^2), highest power first ("Approximating the erfinv function", 2010)
_ERFINV_CENTRE = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941]
_ERFINV_TAIL = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682]


def _horner(coefficients, w):
    """sum_k c_k w^(n-k) for coefficients c_0 .. c_n, highest power first (NumPy's polyval, on either device)."""
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * w + c
    return total


def erfinv_values(z):
    """erfinv(z), the x with erf(x) = z, for z in [-1, 1] (±inf at ±1, NaN outside). With a = |z|
    and erfinv(-a) = -erfinv(a), Giles's approximation first (relative error below 4e-7 for
    1 - a > 6e-8, a few percent nearer 1):

        w = -log(1 - a^2);   x = a * (centre(w - 2.5) if w < 5, else tail(sqrt(w) - 3))

    then four Newton steps, which square the error each time. For a < 1/2 on erf(x) = a,

        x <- x - (erf(x) - a) / (2/sqrt(pi) * exp(-x^2)),

    and from 1/2 on, on log erfc(x) = log(1 - a): 1 - a is exact there, where erf(x) - a would
    lose what erf's flat tail and a's rounding leave (erf(5.8) = 1 - 1e-16), and the log makes
    the step as good from afar as near (erfc falls as exp(-x^2)):

        x <- x + (log erfc(x) - log(1 - a)) * erfc(x) / (2/sqrt(pi) * exp(-x^2)).

    Agrees with mpmath's erfinv to about 1e-15 relative in float64 up to 1 - a = 1e-16 (tests/ops/test_special.py).
    """
    xp = get_array_module(z)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfinv(z)
    with np.errstate(all="ignore"):  # z = ±1 (inf) and |z| > 1 (NaN): set at the end
        a = xp.abs(z).astype(xp.float64)
        inside = a < 1
        a = xp.where(inside, a, 0.5)
        w = -xp.log1p(-a * a)
        x = a * xp.where(w < 5, _horner(_ERFINV_CENTRE, w - 2.5), _horner(_ERFINV_TAIL, xp.sqrt(w) - 3))
        near_one, log_rest = a >= 0.5, xp.log1p(-a)
        for _ in range(4):
            slope = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
            erf, rest = _erf_and_erfc(x)
            x = xp.where(near_one, x + (xp.log(rest) - log_rest) * rest / slope, x - (erf - a) / slope)
        x = xp.where(inside, x, xp.where(xp.abs(z) == 1, xp.inf, xp.nan))
        return xp.copysign(x, z).astype(z.dtype, copy=False)


class Erfinv(Function):
    """y = erfinv x, the inverse of erf on [-1, 1] (see erfinv_values).   dx = dy * sqrt(pi)/2 * exp(y^2)
    (1 / erf'(y); inf at x = ±1)"""

    def forward(self, x):
        y = erfinv_values(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (math.sqrt(math.pi) / 2) * get_array_module(y).exp(y * y),)


def erfinv(x): return Erfinv()(floating(x))


# The gamma function's logarithm and its derivatives, for z >= 10 by their asymptotic series (exact
# there to float64 rounding with these terms), below by the recurrence Gamma(x + 1) = x Gamma(x),
# which steps x up to z = x + n >= 10, and for x < 0 by the reflection Gamma(x) Gamma(1 - x) =
# pi / sin(pi x). Coefficients in powers of w = 1 / z^2, highest first; B_2k are Bernoulli's numbers.
_SHIFT = 10
# lgamma(z) = (z - 1/2) log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k-1)),  over z
_LGAMMA_SERIES = [1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12]
# digamma(z) = log z - 1 / (2z) - sum_k B_2k / (2k z^2k),  the sum over w
_DIGAMMA_SERIES = [1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12]
# trigamma(z) = 1/z + 1 / (2 z^2) + sum_k B_2k / z^(2k+1),  the sum over z
_TRIGAMMA_SERIES = [7 / 6, -691 / 2730, 5 / 66, -1 / 30, 1 / 42, -1 / 30, 1 / 6]
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def _stepped_up(x, term):
    """(z, total): z = x + n, stepped up by ones until z >= 10 (for x > 0, at most 10 steps), and
    total = term(x) + term(x + 1) + ... + term(x + n - 1), what the recurrence leaves behind."""
    xp = get_array_module(x)
    z, total = x, xp.zeros_like(x)
    for _ in range(_SHIFT):
        below = z < _SHIFT
        total = total + xp.where(below, term(z), 0.0)
        z = xp.where(below, z + 1, z)
    return z, total


def _reflected(x):
    """(reflect, u, r): where x < 0, u = 1 - x > 1 (else u = x), and r = x - round(x) in [-1/2,
    1/2], exact, for sin(pi x) = ±sin(pi r) and tan(pi x) = tan(pi r) (pi x itself would round
    away the fraction of a large x); r = 0 at the poles x = 0, -1, -2, ..."""
    xp = get_array_module(x)
    reflect = x < 0
    return reflect, xp.where(reflect, 1 - x, x), x - xp.round(x)


def lgamma_values(x):
    """lgamma(x) = log |Gamma(x)| (float64 in, float64 out): inf at 0, the negative integers and
    ±inf. With lgamma(x) = lgamma(x + n) - log(x (x + 1) ... (x + n - 1)) (_stepped_up), and for
    x < 0 lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x). Near its zeros x = 1 and 2 the
    recurrence leaves an absolute error of about 4e-15 (lgamma(11) = 15.1 less about as much)."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, logs = _stepped_up(u, xp.log)
    w = 1 / (z * z)
    y = (z - 0.5) * (xp.log(z) - 1) - 0.5 + _HALF_LOG_TWO_PI + _horner(_LGAMMA_SERIES, w) / z - logs
    y = xp.where(reflect, xp.log(math.pi / xp.abs(xp.sin(math.pi * r))) - y, y)
    return xp.where(xp.isinf(x), xp.inf, y)


def digamma_values(x):
    """digamma(x) = d/dx lgamma(x) (float64): with digamma(x) = digamma(x + n) - sum_k 1 / (x + k)
    (_stepped_up), and for x < 0 digamma(x) = digamma(1 - x) - pi / tan(pi x). At x = ±0: ∓inf,
    at the negative integers and -inf: NaN, as PyTorch's."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, reciprocals = _stepped_up(u, lambda v: 1 / v)
    w = 1 / (z * z)
    y = xp.log(z) - 0.5 / z - w * _horner(_DIGAMMA_SERIES, w) - reciprocals
    y = xp.where(reflect, y - math.pi / xp.tan(math.pi * r), y)
    y = xp.where(reflect & (r == 0), xp.nan, y)  # the poles below 0, whose sign depends on the side
    return xp.where(x == 0, xp.copysign(xp.inf, -x), y)


def trigamma_values(x):
    """trigamma(x) = d/dx digamma(x) (float64): with trigamma(x) = trigamma(x + n) + sum_k 1 / (x + k)^2
    (_stepped_up), and for x < 0 trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x): +inf at 0 and
    the negative integers (PyTorch's is finite there, its pi x rounded off the pole), NaN at -inf."""
    xp = get_array_module(x)
    reflect, u, r = _reflected(x)
    z, squares = _stepped_up(u, lambda v: 1 / (v * v))
    w = 1 / (z * z)
    y = 1 / z + 0.5 * w + _horner(_TRIGAMMA_SERIES, w) * w / z + squares
    return xp.where(reflect, (math.pi / xp.sin(math.pi * r)) ** 2 - y, y)


def _in_float64(values, x):
    """values(x) computed in float64 and returned in x's dtype: the recurrences' sums keep their
    digits, and float16 would overflow in them (x (x + 1) ... (x + 9) past 65504)."""
    return values(x.astype(get_array_module(x).float64)).astype(x.dtype, copy=False)


class Lgamma(Function):
    """y = log |Gamma(x)| (see lgamma_values).   dx = dy * digamma(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lgamma_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(digamma_values, x),)


def lgamma(x): return Lgamma()(floating(x))


class Digamma(Function):
    """y = digamma(x) = Gamma'(x) / Gamma(x) (see digamma_values).   dx = dy * trigamma(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(digamma_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(trigamma_values, x),)


def digamma(x): return Digamma()(floating(x))


# polygamma(n, x) for n >= 2 = (-1)^(n+1) n! zeta(n + 1, x), Hurwitz's zeta(s, x) = sum_k>=0 1 / (x + k)^s:
# the terms below z = x + m >= _ZETA_SHIFT summed directly (the recurrence), the rest by Euler-Maclaurin,
# zeta(s, z) = z^(1-s) / (s-1) + z^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) z^(1-s-2j),  j = 1.._ZETA_TERMS
_ZETA_SHIFT, _ZETA_TERMS, _ZETA_FLOOR = 30, 12, -1e5
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
              854513 / 138, -236364091 / 2730]  # B_2 .. B_24


def _zeta_tail(s, z):
    """zeta(s, z) for z >= max(_ZETA_SHIFT, s) by Euler-Maclaurin's series (above), its terms built one
    from the last (s a number or an array)."""
    xp = get_array_module(z)
    total = z ** (1 - s) / (s - 1) + 0.5 * z ** -s
    rising, factorial, power = s, 2, z ** (-s - 1)   # s (s+1)...(s+2j-2), (2j)!, z^(1-s-2j) at j = 1
    for j, b in enumerate(_BERNOULLI[:_ZETA_TERMS], start=1):
        total = total + b / factorial * rising * power
        rising = rising * ((s + 2 * j - 1) * (s + 2 * j))   # (not *=: s may be the caller's array)
        factorial *= (2 * j + 1) * (2 * j + 2)
        power = power / (z * z)
    return xp.asarray(total)


def _zeta_sum(s, z, op, name):
    """zeta(s, z) = sum_k>=0 1 / (z + k)^s (float64) for s > 1 (a number or an array) and finite z off the
    poles 0, -1, -2, ...: the terms summed directly (the recurrence) until z + m >= max(_ZETA_SHIFT, s),
    from where the tail's series (_zeta_tail) shrinks by at least (s + 2j)^2 / (2 pi z)^2 a term, or until
    a term (z + m > 0) falls below 1e-17 of the sum, past which the rest is smaller still. Refuses z below
    _ZETA_FLOOR, which would take that many steps; op and name are the caller's, for the message."""
    xp = get_array_module(z)
    if bool(backend.to_host((z < _ZETA_FLOOR).any())):
        raise ValueError(f"{op} takes {name} >= {_ZETA_FLOOR:g} away from the poles (its recurrence steps {name} "
                         f"up one at a time, without reflection), got {name} = {float(backend.to_host(z.min()))!r}")
    level = xp.maximum(_ZETA_SHIFT, s)
    z, level = xp.broadcast_arrays(z, level)
    head = xp.zeros_like(z)
    going = z < level
    while bool(backend.to_host(going.any())):   # (a host read a step, counted)
        term = xp.where(going, xp.where(going, z, 1) ** -s, 0.0)   # (not 1 / z^s: 0 once z^s overflows)
        head = head + term
        z = xp.where(going, z + 1, z)
        negligible = (z > 0) & ((xp.abs(term) <= 1e-17 * xp.abs(head)) | xp.isinf(head))
        going = going & (z < level) & ~negligible
    stopped = z < level   # the rest below rounding
    return head + xp.where(stopped, 0.0, _zeta_tail(s, xp.where(stopped, level, z)))


def polygamma_values(n, x):
    """polygamma(n, x), the n-th derivative of digamma (float64): digamma_values and trigamma_values for
    n = 0 and 1, and for n >= 2 (-1)^(n+1) n! zeta(n + 1, x) (above). The recurrence steps x up to
    _ZETA_SHIFT, as many steps as the most negative x needs (no reflection), so n >= 2 refuses x below
    _ZETA_FLOOR (but its poles). For x < 0 and n even its terms' signs differ and its error is about eps
    times its largest term, n! / (x - round(x))^(n+1), as PyTorch's direct sum. At 0 and the negative
    integers (-1)^(n+1) inf, as PyTorch's; at +inf 0 and at -inf NaN (PyTorch's gives NaN at +inf)."""
    if n == 0:
        return digamma_values(x)
    if n == 1:
        return trigamma_values(x)
    xp = get_array_module(x)
    finite = xp.isfinite(x)
    pole = (x <= 0) & (x == xp.round(x))
    z = xp.where(finite & ~pole, x, _ZETA_SHIFT)   # (the others are answered below)
    sign = (-1) ** (n + 1)
    y = sign * math.factorial(n) * _zeta_sum(n + 1, z, "polygamma: n >= 2", "x")
    y = xp.where(pole, sign * xp.inf, y)
    return xp.where(finite, y, xp.where(x > 0, 0.0, xp.nan))


class Polygamma(Function):
    """y = polygamma(n, x), the n-th derivative of digamma (see polygamma_values).
    dx = dy * polygamma(n + 1, x)"""

    def __init__(self, n):
        self.n = n

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lambda v: polygamma_values(self.n, v), x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: polygamma_values(self.n + 1, v), x),)


def polygamma(n, x):
    """The n-th derivative of digamma (n = 0: digamma itself), as torch.polygamma(n, x)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"polygamma: n must be an integer >= 0, got {n!r}")
    return Polygamma(int(n))(floating(x))


# The modified Bessel functions I_0 and I_1. Below |x| = _BESSEL_SWITCH their power series,
#   I_nu(x) = (x/2)^nu sum_k (x^2/4)^k / (k! (k + nu)!),
# all terms positive (no cancellation), _BESSEL_SERIES terms (the first left out is below 1e-17 of the
# sum there); above, Hankel's asymptotic series
#   I_nu(x) = e^x / sqrt(2 pi x) sum_k a_k,  a_0 = 1,  a_k = -a_(k-1) (4 nu^2 - (2k - 1)^2) / (8 k x),
# _HANKEL_TERMS terms (at x >= 40 the first left out is below 1e-17). e^x is taken in two halves, so
# I_nu(x) stays finite up to about x = 713.9, where e^x alone would overflow past 709.78.
_BESSEL_SWITCH, _BESSEL_SERIES, _HANKEL_TERMS = 40.0, 90, 30


def bessel_i_values(nu, x, scaled=False):
    """I_nu(x) for nu = 0 or 1 (float64): even in x for nu = 0, odd for nu = 1; I_0(±inf) = inf and
    I_1(±inf) = ±inf (PyTorch's are NaN). Agrees with mpmath to 4e-15 relative (tests/ops/test_torch_special.py).
    scaled: exp(-|x|) I_nu(x) instead (i0e, i1e), the series times exp(-|x|) and Hankel's without its e^x,
    finite for every x (0 at ±inf, as PyTorch's)."""
    xp = get_array_module(x)
    a = xp.abs(x)
    near = xp.minimum(a, _BESSEL_SWITCH)   # each series only where it holds, the other branch kept finite
    q = near * near / 4
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, _BESSEL_SERIES):
        term = term * q / (k * (k + nu))
        total = total + term
    series = total * (near / 2) ** nu * (xp.exp(-near) if scaled else 1)
    far = xp.maximum(a, _BESSEL_SWITCH)
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, _HANKEL_TERMS):
        term = -term * (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * far)
        total = total + term
    half = xp.exp(far / 2) if not scaled else 1
    hankel = half * (half * total / xp.sqrt(2 * math.pi * far))
    y = xp.where(a < _BESSEL_SWITCH, series, hankel)
    y = xp.where(xp.isinf(a), 0.0 if scaled else xp.inf, y)
    return xp.copysign(y, x) if nu == 1 else y


class I0(Function):
    """y = I_0(x), the modified Bessel function of the first kind of order 0 (see bessel_i_values).
    dx = dy * I_1(x)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(lambda v: bessel_i_values(0, v), x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: bessel_i_values(1, v), x),)


def i0(x): return I0()(floating(x))


class I1(Function):
    """y = I_1(x), the modified Bessel function of the first kind of order 1 (see bessel_i_values).
    dx = dy * (I_0(x) - y / x),  dy / 2 at x = 0 (the limit: y / x -> 1/2)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(1, v), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        i0_x = _in_float64(lambda v: bessel_i_values(0, v), x)
        return (dy * xp.where(x == 0, x.dtype.type(0.5), i0_x - y / xp.where(x == 0, x.dtype.type(1), x)),)


def i1(x): return I1()(floating(x))


class _PiecewiseConstant(Function):
    """y = f(x) for a step function f.   dx = 0 (f is flat wherever it has a derivative)

    Derivation: docs/backprop/elementwise.md
    """

    def backward(self, dy):
        return (get_array_module(dy).zeros_like(dy),)


class Sign(_PiecewiseConstant):
    """y = -1, 0 or 1 as x < 0, x = 0 or x > 0; NaN stays NaN, as in NumPy (PyTorch gives 0).   dx = 0"""

    def forward(self, x):
        return get_array_module(x).sign(x)


def sign(x):
    """Sign; of booleans the booleans themselves, a copy (True is 1, False 0), as PyTorch's (NumPy
    has no boolean sign)."""
    x = as_tensor(x)
    return Tensor(x.data.copy()) if x.dtype.kind == "b" else Sign()(x)


class Floor(_PiecewiseConstant):
    """y = the largest integer <= x.   dx = 0"""

    def forward(self, x):
        return get_array_module(x).floor(x)


def floor(x): return Floor()(x)


class Ceil(_PiecewiseConstant):
    """y = the smallest integer >= x.   dx = 0"""

    def forward(self, x):
        return get_array_module(x).ceil(x)


def ceil(x): return Ceil()(x)


class Round(_PiecewiseConstant):
    """y = x rounded to ``decimals`` decimal places, halves to even (2.5 -> 2, 3.5 -> 4), as in
    NumPy and PyTorch.   dx = 0"""

    def __init__(self, decimals=0):
        self.decimals = decimals

    def forward(self, x):
        return get_array_module(x).round(x, self.decimals)


def round(x, decimals=0):  # noqa: A001 (numpy's name)
    """x rounded to ``decimals`` places, halves to even; its gradient is 0."""
    return Round(decimals)(x)


class Trunc(_PiecewiseConstant):
    """y = x with its fraction dropped (rounded toward 0).   dx = 0"""

    def forward(self, x):
        return get_array_module(x).trunc(x)


def trunc(x): return Trunc()(x)


class Log2(Function):
    """y = log2 x.   dx = dy / (x ln 2)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log2(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / (x * _LN2),)


def log2(x): return Log2()(floating(x))


class Exp2(Function):
    """y = 2^x.   dx = dy * y * ln 2"""

    def forward(self, x):
        y = get_array_module(x).exp2(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * y * _LN2,)


def exp2(x): return Exp2()(floating(x))


class Log1p(Function):
    """y = ln(1 + x), exact for tiny x (where 1 + x would round to 1).   dx = dy / (1 + x)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log1p(x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy / (1 + x),)


def log1p(x): return Log1p()(floating(x))


class Expm1(Function):
    """y = e^x - 1, exact for tiny x.   dx = dy * e^x = dy * (y + 1)

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        y = get_array_module(x).expm1(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (dy * (y + 1),)


def expm1(x): return Expm1()(floating(x))


class Rsqrt(Function):
    """y = 1 / sqrt(x).   dx = -dy * x^(-3/2) / 2 = -dy * y^3 / 2

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        y = 1 / get_array_module(x).sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (-0.5 * dy * y * y * y,)


def rsqrt(x): return Rsqrt()(floating(x))


class Reciprocal(Function):
    """y = 1 / x.   dx = -dy / x^2 = -dy * y^2

    Derivation: docs/backprop/elementwise.md
    """

    def forward(self, x):
        y = 1 / x
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return (-dy * y * y,)


def reciprocal(x): return Reciprocal()(floating(x))


def _compare(op, fn, a, b):
    """fn (a NumPy/CuPy comparison) of a and b; a Python number is compared as it is (an int8
    tensor < 1000 is all True: the number need not fit the tensor's dtype), beside a float16 or
    bfloat16 tensor as that dtype rounds it (bfloat16 0.3 == 0.3, as in PyTorch)."""
    like = a if isinstance(a, Tensor) else b
    values = [v if isinstance(v, numbers.Number) else as_tensor(v, like) for v in (a, b)]
    if like.dtype.name == "bfloat16":  # NumPy rounds a number to float16 itself, not to ml_dtypes' bfloat16
        values = [backend.rounded(v, like.dtype) if isinstance(v, numbers.Real) else v for v in values]
    tensors = [v for v in values if isinstance(v, Tensor)]
    if len(tensors) == 2:
        _broadcasting(op, *tensors)
    values = [v.data if isinstance(v, Tensor) else v for v in values]
    with np.errstate(all="ignore"):  # 1e6 beside float16 is its inf, silently as the ops (and PyTorch)
        return Tensor(get_array_module(like.data).asarray(fn(*values)))


def equal(a, b): return _compare("equal", lambda x, y: x == y, a, b)


def not_equal(a, b): return _compare("not_equal", lambda x, y: x != y, a, b)


def less(a, b): return _compare("less", lambda x, y: x < y, a, b)


def less_equal(a, b): return _compare("less_equal", lambda x, y: x <= y, a, b)


def greater(a, b): return _compare("greater", lambda x, y: x > y, a, b)


def greater_equal(a, b): return _compare("greater_equal", lambda x, y: x >= y, a, b)


def logical_not(x):
    """True where x is 0 (or False), as numpy.logical_not: a bool tensor for any dtype (not ~x,
    which is the bitwise not of integers)."""
    x = as_tensor(x)
    return Tensor(backend.get_array_module(x.data).logical_not(x.data))


def _predicate(name, x):
    """A boolean tensor (no gradient) of numpy's/cupy's elementwise test ``name``."""
    x = as_tensor(x)
    return Tensor(getattr(backend.get_array_module(x.data), name)(x.data))


def isnan(x): return _predicate("isnan", x)


def isinf(x): return _predicate("isinf", x)


def isfinite(x): return _predicate("isfinite", x)


def _broadcasting(op, a, b):
    """(a, b), with an error naming ``op`` when their shapes do not broadcast."""
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return a, b


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where |a - b| <= atol + rtol * |b| for finite b, or where a == b (so inf is close to
    the same inf); NaN is close to NaN only with equal_nan. As numpy.isclose and torch.isclose,
    tolerance relative to b. Integer and boolean operands are compared in float64 (as NumPy;
    PyTorch computes the tolerance of integers in float32); an integer beside a float takes the
    float's dtype. A bool tensor, no gradient."""
    return _isclose("isclose", a, b, rtol, atol, equal_nan)


def _isclose(op, a, b, rtol, atol, equal_nan):
    """isclose, its errors naming ``op`` (isclose or allclose)."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value >= 0:
            raise ValueError(f"{op}: {name} must be a number >= 0, got {value!r}")
    a, b = _broadcasting(op, *promote(a, b, op=op))
    x, y = a.data, b.data
    if y.dtype.kind in "biu":
        x, y = x.astype(np.float64), y.astype(np.float64)
    xp = get_array_module(x)
    with np.errstate(all="ignore"):  # inf - inf, and rtol * |y| past or below 16 bits' range: the where sorts it
        close = (xp.abs(x - y) <= atol + rtol * xp.abs(y)) & xp.isfinite(y) | (x == y)
    if equal_nan:
        close |= xp.isnan(x) & xp.isnan(y)
    return Tensor(close)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether isclose(a, b, ...) holds everywhere (True for empty tensors): a Python bool."""
    return bool(backend.to_host(_isclose("allclose", a, b, rtol, atol, equal_nan).data.all()))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an entry of ``elements`` equals one of ``test_elements`` (PyTorch's and NumPy's isin; with
    ``invert`` where it equals none): a bool tensor of elements' shape, no gradient. Either may be a number;
    values compare as numbers across dtypes (2 is in [2.0]), NaN equals nothing. ``assume_unique`` is a
    hint NumPy may use; the answer is the same."""
    for name, flag in (("assume_unique", assume_unique), ("invert", invert)):
        if not isinstance(flag, bool):
            raise TypeError(f"isin: {name} must be True or False, got {flag!r}")
    elements, test_elements = promote(elements, test_elements, op="isin")
    xp = get_array_module(elements.data)
    return Tensor(xp.isin(elements.data, test_elements.data, assume_unique=assume_unique, invert=invert))


_UFUNCS = {"bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}  # NumPy's, CuPy's names


def _bits(op, a, b, two_bools=True):
    """The bitwise op named ``op`` on two integer or boolean operands, broadcast; floats raise
    TypeError. Two booleans give a boolean (logical and, or, xor) unless ``two_bools`` is False
    (see _operands). No gradient."""
    given = [v.dtype.name if isinstance(v, Tensor) else type(v).__name__ for v in (a, b)]
    a, b = _operands(op, a, b, two_bools)
    if a.dtype.kind not in "biu" or b.dtype.kind not in "biu":
        raise TypeError(f"{op}: defined for integer and boolean tensors, got {given[0]} and {given[1]}")
    if np.result_type(a.dtype, b.dtype).kind == "f":  # int64 with uint64: NumPy's common dtype is float64
        raise TypeError(f"{op}: {a.dtype.name} and {b.dtype.name} have no common integer dtype (NumPy's is "
                        "float64, PyTorch refuses the promotion); convert one of them first")
    a, b = _broadcasting(op, a, b)
    return Tensor(getattr(get_array_module(a.data), _UFUNCS.get(op, op))(a.data, b.data))


def bitwise_and(a, b): return _bits("bitwise_and", a, b)


def bitwise_or(a, b): return _bits("bitwise_or", a, b)


def bitwise_xor(a, b): return _bits("bitwise_xor", a, b)


def bitwise_left_shift(a, b):
    """a * 2^b in a's bits, as NumPy's left_shift and PyTorch's bitwise_left_shift: bits shifted
    past the width are lost; a shift by b < 0 or b >= the width (in bits) gives 0."""
    return _bits("bitwise_left_shift", a, b, two_bools=False)


def bitwise_right_shift(a, b):
    """floor(a / 2^b), the sign bit copied in (arithmetic shift), as NumPy's right_shift and
    PyTorch's bitwise_right_shift; a shift by b < 0 or b >= the width (in bits) gives -1 for
    a < 0 and 0 otherwise."""
    return _bits("bitwise_right_shift", a, b, two_bools=False)


def bitwise_not(x):
    """~x: each bit flipped for integers (-x - 1), logical not for booleans; floats raise."""
    x = as_tensor(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"bitwise_not: defined for integer and boolean tensors, got dtype {x.dtype.name}")
    return Tensor(get_array_module(x.data).invert(x.data))


# ---------------------------------------------------------------- more of PyTorch's elementwise math


class LogAddExp(Function):
    """y = ln(e^a + e^b), without overflow (NumPy's logaddexp: the larger plus ln(1 + e^-|a - b|)).

        da = dy e^a / (e^a + e^b) = dy / (1 + e^(b - a)),      db = dy / (1 + e^(a - b))

    At a = b = ±inf, b - a is NaN, and so are both (as PyTorch's); at a = inf, b = -inf, a takes dy.
    """

    power = staticmethod(lambda xp, d: xp.exp(d))

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).logaddexp(a, b)

    def backward(self, dy):
        a, b = self.saved
        xp = get_array_module(a)
        return dy / (1 + self.power(xp, b - a)), dy / (1 + self.power(xp, a - b))


def logaddexp(a, b): return binary(LogAddExp(), floating(a), b)


class LogAddExp2(LogAddExp):
    """y = log2(2^a + 2^b), without overflow (NumPy's logaddexp2).

        da = dy / (1 + 2^(b - a)),      db = dy / (1 + 2^(a - b))      (as LogAddExp's, base 2)
    """

    power = staticmethod(lambda xp, d: xp.exp2(d))

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).logaddexp2(a, b)


def logaddexp2(a, b): return binary(LogAddExp2(), floating(a), b)


def _xlogy_values(a, b):
    """a ln b, but 0 where a = 0 unless b is NaN (PyTorch's xlogy)."""
    xp = get_array_module(a)
    return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), a * xp.log(b))


class Xlogy(Function):
    """y = a ln b, but 0 where a = 0 (even where ln b is -inf or NaN) unless b is NaN (PyTorch's
    xlogy: 0 ln 0 = 0, the limit of a ln a that entropies need).

        da = xlogy(dy, b) = dy ln b,  but 0 where a = 0 and b <= 0 (PyTorch's rule: a ln b has
             no value to change there) and where dy = 0
        db = dy a / b   (0 / 0 = NaN at a = b = 0, as PyTorch's)
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return _xlogy_values(a, b)

    def backward(self, dy):
        a, b = self.saved
        da = dy_where(~((a == 0) & (b <= 0)), _xlogy_values(dy, b)) if self.needs_input_grad[0] else None
        return da, (dy * a / b if self.needs_input_grad[1] else None)


def xlogy(a, b): return binary(Xlogy(), *_one_float("xlogy", a, b))


def _xlog1py_values(a, b):
    """a ln(1 + b), but 0 where a = 0 unless b is NaN (PyTorch's xlog1py)."""
    xp = get_array_module(a)
    return xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), a * xp.log1p(b))


class Xlog1py(Function):
    """y = a ln(1 + b), but 0 where a = 0 unless b is NaN, as Xlogy with ln(1 + b) for ln b
    (torch.special.xlog1py; ln(1 + b) by log1p, exact for small b).

        da = xlog1py(dy, b) = dy ln(1 + b),  but 0 where a = 0 and b <= -1 (as PyTorch's)
        db = dy a / (1 + b)
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return _xlog1py_values(a, b)

    def backward(self, dy):
        a, b = self.saved
        da = dy_where(~((a == 0) & (b <= -1)), _xlog1py_values(dy, b)) if self.needs_input_grad[0] else None
        return da, (dy * a / (1 + b) if self.needs_input_grad[1] else None)


def xlog1py(a, b): return binary(Xlog1py(), *_one_float("xlog1py", a, b))


class Entr(Function):
    """y = -x ln x, the entropy of one probability: 0 at x = 0 (the limit), -inf below 0, as
    torch.special.entr.   dx = -dy (1 + ln x)   (inf at 0, NaN below 0, as PyTorch's)"""

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        inside = xp.where(x > 0, x, x.dtype.type(1))   # keeps log off 0 and the negatives
        rest = xp.where(x < 0, -xp.inf, x * 0)   # x * 0: 0 at 0, NaN kept
        return xp.where(x > 0, -x * xp.log(inside), rest).astype(x.dtype, copy=False)

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (-dy * (1 + xp.log(x)),)


def entr(x): return Entr()(floating(x))


def ndtr(x):
    """The standard normal distribution function Phi(x) = (1 + erf(x / sqrt 2)) / 2, composed as
    erfc(-x / sqrt 2) / 2: the same number, without 1 + erf losing the lower tail (erfc(-x / sqrt 2)
    keeps its digits down to x = -37.5, where 1 + erf(x / sqrt 2) is 0 from x = -8.3 on). Its
    gradient, exp(-x^2 / 2) / sqrt(2 pi), comes from erfc's."""
    x = floating(x)
    return erfc(x * -_SQRT1_2) * 0.5


# Below x = _TAIL, Phi(x) = phi(x) / (-x) S(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), with the asymptotic
# series S(x) = sum_k (-1)^k (2k - 1)!! / x^2k  (its first left out, at x <= -20, below 1e-17)
_TAIL, _TAIL_TERMS = -20.0, 12


def _tail_series(x):
    """S(x) above, for x <= _TAIL."""
    xp = get_array_module(x)
    w = 1 / (x * x)
    term, total = xp.ones_like(x), xp.ones_like(x)
    for k in range(1, _TAIL_TERMS):
        term = -term * (2 * k - 1) * w
        total = total + term
    return total


def log_ndtr_values(x):
    """ln Phi(x), the logarithm of the standard normal distribution function (float64): ln(erfc(-x / sqrt 2)
    / 2) for _TAIL <= x < 0, log1p(-erfc(x / sqrt 2) / 2) for x >= 0 (1 - Phi(-x), without rounding Phi
    near 1), and below _TAIL, where erfc underflows, -x^2 / 2 - ln(-x) - ln sqrt(2 pi) + ln S(x)."""
    xp = get_array_module(x)
    far = xp.minimum(x, _TAIL)
    tail = -0.5 * far * far - xp.log(-far) - _HALF_LOG_TWO_PI + xp.log(_tail_series(far))
    with np.errstate(divide="ignore"):  # each branch's log of 0 lies where the other is taken
        y = xp.where(x < 0, xp.log(erfc_values(-x * _SQRT1_2) / 2), xp.log1p(-erfc_values(x * _SQRT1_2) / 2))
    return xp.where(x < _TAIL, tail, y)


def _log_ndtr_slope(x):
    """d/dx ln Phi(x) = phi(x) / Phi(x) (float64), Phi(x) = erfc(-x / sqrt 2) / 2, and below _TAIL
    -x / S(x), where phi and Phi underflow."""
    xp = get_array_module(x)
    far, near = xp.minimum(x, _TAIL), xp.maximum(x, _TAIL)
    near = xp.exp(-0.5 * near * near - _HALF_LOG_TWO_PI) / (erfc_values(-near * _SQRT1_2) / 2)
    return xp.where(x < _TAIL, -far / _tail_series(far), near)


class LogNdtr(Function):
    """y = ln Phi(x) (see log_ndtr_values).   dx = dy phi(x) / Phi(x) (see _log_ndtr_slope)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(log_ndtr_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(_log_ndtr_slope, x),)


def log_ndtr(x): return LogNdtr()(floating(x))


# ---------------------------------------------------------------- torch.special's second group: erfcx, ndtri,
# i0e, i1e, zeta, gammainc and gammaincc (torch.igamma, igammac), multigammaln (torch.mvlgamma)


def erfcx_values(x):
    """erfcx(x) = exp(x^2) erfc(x), the scaled complementary error function (float64), without exp(x^2),
    which overflows from x = 26.7, and erfc, which underflows from 27.3, though erfcx(x) ~ 1 / (x sqrt pi):
    with a = |x|, from a = 1.5 on erfcx(a) = 1 / (sqrt(pi) F(a)), erfc's continued fraction without its
    exp(-a^2) (_erfc_fraction); below, exp(a^2) (1 - erf(a)), erf by its series (_erf_and_erfc), where
    exp(a^2) < 9.5; and for x < 0, erfcx(x) = 2 exp(a^2) - erfcx(a), inf from x = -26.7 on. Agrees with
    mpmath to 3e-14 relative, 6e-15 from x = 1.5 on (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(x)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.erfcx(x)
    with np.errstate(over="ignore"):   # exp(a^2) for x < -26.7: inf, as erfcx there
        a = xp.abs(x)
        near = xp.minimum(a, _ERF_SWITCH)
        grown = _exp_minus_square(near, sign=1)
        upper = xp.where(a < _ERF_SWITCH, grown * _erf_and_erfc(near)[1],
                         1 / (math.sqrt(math.pi) * _erfc_fraction(xp.maximum(a, _ERF_SWITCH))[0]))
        lower = 2 * _exp_minus_square(xp.where(a < xp.inf, a, 0.0), sign=1) - upper
        return xp.where(x < 0, xp.where(a < xp.inf, lower, xp.inf), upper)


def _erfcx_slope(x, y):
    """d/dx erfcx(x) = 2 x erfcx(x) - 2/sqrt(pi) (float64, y = erfcx(x)), whose two terms cancel as x grows
    (2 x erfcx(x) -> 2/sqrt(pi)): from x = 1.5 on, with erfcx(x) = 1 / (sqrt(pi) F) and F - x = (1/2) / G
    (_erfc_fraction), it is -1 / (sqrt(pi) F G) instead."""
    xp = get_array_module(x)
    F, G = _erfc_fraction(xp.maximum(x, _ERF_SWITCH))
    return xp.where(x >= _ERF_SWITCH, -1 / (math.sqrt(math.pi) * F * G), 2 * x * y - _TWO_OVER_SQRT_PI)


class Erfcx(Function):
    """y = erfcx(x) = exp(x^2) erfc(x) (see erfcx_values).   dx = dy (2 x y - 2/sqrt(pi)) (see _erfcx_slope)"""

    def forward(self, x):
        self.save_for_backward(x)
        return _in_float64(erfcx_values, x)

    def backward(self, dy):
        (x,) = self.saved
        return (dy * _in_float64(lambda v: _erfcx_slope(v, erfcx_values(v)), x),)


def erfcx(x): return Erfcx()(floating(x))


# Abramowitz and Stegun 26.2.23: for q <= 1/2 and t = sqrt(-2 ln q), ndtri(q) = -(t - (c0 + c1 t + c2 t^2) /
# (1 + d1 t + d2 t^2 + d3 t^3)) to 4.5e-4; the coefficients highest power first
_NDTRI_NUMERATOR = [0.010328, 0.802853, 2.515517]
_NDTRI_DENOMINATOR = [0.001308, 0.189269, 1.432788, 1.0]
_NDTRI_NEWTON = 4   # Newton's steps from that guess (its error squares each step)


def ndtri_values(p):
    """ndtri(p), the x with Phi(x) = p, the inverse of the standard normal distribution function (float64):
    -inf at 0, inf at 1, NaN outside [0, 1]. With q = min(p, 1 - p) (1 - p is exact for p >= 1/2) and
    ndtri(1 - q) = -ndtri(q): for q >= 1/4, sqrt(2) erfinv(2q - 1) (2q - 1 exact, and erfinv keeps its
    relative digits near 0, where ndtri is small); below 1/4 the guess above, then Newton's steps on
    ln Phi(x) = ln q, exact far into the tail (log_ndtr_values and its slope phi / Phi, _log_ndtr_slope),

        x <- x - (ln Phi(x) - ln q) / (phi(x) / Phi(x)).

    Agrees with mpmath to 3e-15 relative from p = 1e-300 to 1 - 1e-16 (tests/ops/test_torch_special_second.py).
    """
    xp = get_array_module(p)
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special

        return special.ndtri(p)
    with np.errstate(all="ignore"):   # p outside (0, 1): set at the end
        q = xp.minimum(p, 1 - p)
        tail = (q > 0) & (q < 0.25)
        q_tail = xp.where(tail, q, 0.125)
        t = xp.sqrt(-2 * xp.log(q_tail))
        x = -(t - _horner(_NDTRI_NUMERATOR, t) / _horner(_NDTRI_DENOMINATOR, t))
        for _ in range(_NDTRI_NEWTON):
            x = x - (log_ndtr_values(x) - xp.log(q_tail)) / _log_ndtr_slope(x)
        centre = math.sqrt(2) * erfinv_values(2 * xp.where(tail, 0.5, q) - 1)
        x = xp.where(tail, x, centre)
        x = xp.where(q == 0, -xp.inf, xp.where((p >= 0) & (p <= 1), x, xp.nan))
        return xp.where(p > 0.5, -x, x)


class Ndtri(Function):
    """y = ndtri(p), the x with Phi(x) = p (see ndtri_values).   dp = dy / Phi'(y) = dy sqrt(2 pi) exp(y^2 / 2)"""

    def forward(self, p):
        y = _in_float64(ndtri_values, p)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        with np.errstate(over="ignore"):   # inf at p = 0 and 1, and where Phi'(y) is below float64's range
            return (dy * math.sqrt(2 * math.pi) * get_array_module(y).exp(y * y / 2),)


def ndtri(p): return Ndtri()(floating(p))


class I0e(Function):
    """y = exp(-|x|) I_0(x) (see bessel_i_values, scaled).   dx = dy (i1e(x) - sign(x) y)
    (0 at x = 0, between the slopes -1 and 1 of its kink there, as PyTorch's)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(0, v, scaled=True), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        i1e_x = _in_float64(lambda v: bessel_i_values(1, v, scaled=True), x)
        return (dy * (i1e_x - get_array_module(x).sign(x) * y),)


def i0e(x): return I0e()(floating(x))


class I1e(Function):
    """y = exp(-|x|) I_1(x) (see bessel_i_values, scaled).   dx = dy (i0e(x) - y (sign(x) + 1 / x)),
    dy / 2 at x = 0 (the limit: y / x -> 1/2)"""

    def forward(self, x):
        y = _in_float64(lambda v: bessel_i_values(1, v, scaled=True), x)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        i0e_x = _in_float64(lambda v: bessel_i_values(0, v, scaled=True), x)
        slope = i0e_x - y * (xp.sign(x) + 1 / xp.where(x == 0, x.dtype.type(1), x))
        return (dy * xp.where(x == 0, x.dtype.type(0.5), slope),)


def i1e(x): return I1e()(floating(x))


def zeta_values(s, q):
    """Hurwitz's zeta(s, q) = sum_k>=0 1 / (q + k)^s (float64), by _zeta_sum; where it does not converge,
    PyTorch's (Cephes's) answers, tried in Cephes's order (the first that holds wins, a NaN in the other
    argument or not): inf at s = 1; NaN for s < 1; inf at the poles q = 0, -1, -2, ... (-inf one of them);
    NaN for q < 0 and s not a whole number ((q + k)^s is not real). At s = inf 1 / q^s alone (0, 1 or inf);
    at q = inf 0, the limit (PyTorch: NaN). Agrees with mpmath to 1e-15 relative for s up to 1000 and q up to
    1e4 (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(q)
    s, q = xp.broadcast_arrays(s, q)
    pole = (q <= 0) & (q == xp.floor(q))
    inside = (s > 1) & xp.isfinite(s) & xp.isfinite(q) & ~pole
    with np.errstate(all="ignore"):   # 1 / z^s beyond float64's range: 0 or inf, as the sum is
        y = _zeta_sum(xp.where(inside, s, 2.0), xp.where(inside, q, 1.0), "zeta", "q")
        at_infinite_s = xp.where(q > 1, 0.0, xp.where(q == 1, 1.0, xp.inf))   # the first term 1 / q^s alone
    y = xp.where(inside, y, xp.where(s == xp.inf, at_infinite_s, xp.where(q == xp.inf, 0.0, xp.nan)))
    y = xp.where((q < 0) & (s != xp.floor(s)), xp.nan, y)
    y = xp.where(pole, xp.inf, y)
    return xp.where(s == 1, xp.inf, xp.where(s < 1, xp.nan, y))


class Zeta(Function):
    """y = zeta(s, q) = sum_k>=0 1 / (q + k)^s, Hurwitz's zeta function (see zeta_values).
    dq = -dy s zeta(s + 1, q); ds none: PyTorch has none either (backward refuses it, by name)"""

    def forward(self, s, q):
        self.save_for_backward(s, q)
        return zeta_values(s.astype(get_array_module(q).float64), q.astype(get_array_module(q).float64)).astype(
            q.dtype, copy=False)

    def backward(self, dy):
        s, q = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError("zeta: no gradient with respect to s, its first argument (PyTorch has none "
                                      "either); detach s, or pass it as a number")
        xp = get_array_module(q)
        return None, -dy * s * zeta_values(s.astype(xp.float64) + 1, q.astype(xp.float64)).astype(q.dtype, copy=False)


def _one_float(op, a, b):
    """a and b in one floating dtype, for the ops of two real arguments (xlogy, zeta, gammainc, ...): promoted
    as binary promotes them (a number takes the other's dtype: 2.0 beside float16 is float16), integers then
    as float32, and two floats in their result's dtype (float64 beside float32 is float64, as PyTorch's)."""
    a, b = common_16_bits(*(floating(t) for t in promote(a, b, op=op)))
    dtype = np.result_type(a.dtype, b.dtype)
    return [t if t.dtype == dtype else t.astype(dtype) for t in (a, b)]


def zeta(s, q):
    """Hurwitz's zeta(s, q), as torch.special.zeta(x, q): q's gradient only (s's none, as PyTorch's)."""
    return binary(Zeta(), *_one_float("zeta", s, q))


# the regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a) and Q(a, x) = 1 - P(a, x)
_GAMMAINC_EPS, _GAMMAINC_STEPS = np.finfo(np.float64).eps, 100_000


def _log_gamma_prefactor(a, x):
    """ln(x^a e^-x / Gamma(a)) (float64, a > 0, x > 0). From a = 10 on, with lgamma's asymptotic series
    (_LGAMMA_SERIES) and t = (x - a) / a, it is a (ln(1 + t) - t) + ln(a) / 2 - ln sqrt(2 pi) - R(a), R that
    series' sum: a ln x - x and lgamma(a) are each about a ln a, and their difference would keep only
    what their rounding leaves (Cephes's igam_fac does the same with Lanczos's series). ln(1 + t) is
    log1p(t) for |t| < 1/2 and ln(x / a) beyond (1 + t, rounded, would lose x's digits where x << a)."""
    xp = get_array_module(x)
    big = xp.maximum(a, 10.0)
    t = (x - big) / big
    with np.errstate(divide="ignore"):   # (x = 0 is the callers' to answer)
        log_ratio = xp.where(xp.abs(t) < 0.5, xp.log1p(t), xp.log(x / big))
    stirling = (big * (log_ratio - t) + 0.5 * xp.log(big) - _HALF_LOG_TWO_PI
                - _horner(_LGAMMA_SERIES, 1 / (big * big)) / big)
    return xp.where(a >= 10, stirling, a * xp.log(x) - x - lgamma_values(a))


def _until_converged(step, state, op):
    """Applies step(state) -> (state, change) until every |change| <= _GAMMAINC_EPS (at most _GAMMAINC_STEPS)."""
    xp = get_array_module(state[-1])
    for _ in range(_GAMMAINC_STEPS):
        state, change = step(state)
        if not bool(backend.to_host((xp.abs(change) > _GAMMAINC_EPS).any())):   # (a host read a step, counted)
            return state
    raise ValueError(f"{op}: its series did not converge in {_GAMMAINC_STEPS} steps")


_EULER_GAMMA = 0.5772156649015329   # -digamma(1)
_LGAMMA1P_TERMS = 60   # lgamma(1 + a)'s Taylor series: its first left out below 1e-17 for |a| <= 1/2
_UPPER_NEAR_ZERO_TERMS = 30   # Q's series for x < 1.1: its first left out below 1e-31


@functools.cache
def _lgamma1p_coefficients():
    """(-1)^k zeta(k) / k for k = _LGAMMA1P_TERMS - 1 down to 2, highest power first (_lgamma1p's): computed
    once, on the host, where they are constants."""
    k = np.arange(2, _LGAMMA1P_TERMS, dtype=np.float64)
    return tuple(((-1) ** k * _zeta_sum(k, np.ones_like(k), "lgamma1p", "q") / k)[::-1].tolist())


def _lgamma1p(a):
    """lgamma(1 + a) for |a| <= 1/2 by its Taylor series, -gamma a + sum_k>=2 (-1)^k zeta(k) a^k / k (Euler's
    gamma and Riemann's zeta(k) = zeta(k, 1), by _zeta_sum): exact where lgamma_values(1 + a), near its zero
    at 1, leaves an absolute error of 4e-15."""
    return a * (-_EULER_GAMMA + a * _horner(list(_lgamma1p_coefficients()), a))


def _upper_near_zero(a, x):
    """Q(a, x) for a < 1/2 and x < 1.1, where P is near 1 and 1 - P would keep only its rounding, as Cephes's
    igamc_series: with the series of gamma(a, x) = sum_n>=0 (-1)^n x^(a+n) / (n! (a + n)),

        Q(a, x) = -expm1(a ln x - lgamma(1 + a)) - x^a / Gamma(a) sum_n>=1 (-x)^n / (n! (a + n)),

    lgamma(1 + a) by _lgamma1p and lgamma(a) = lgamma(1 + a) - ln a."""
    xp = get_array_module(x)
    term, total = xp.ones_like(x), xp.zeros_like(x)
    for n in range(1, _UPPER_NEAR_ZERO_TERMS):
        term = term * -x / n   # (-x)^n / n!
        total = total + term / (a + n)
    log_x, log_gamma_1p = xp.log(x), _lgamma1p(a)
    return -xp.expm1(a * log_x - log_gamma_1p) - xp.exp(a * log_x - log_gamma_1p + xp.log(a)) * total


def _gammainc_nan(a, x):
    """Where P(a, x) and Q(a, x) are NaN, as PyTorch's: a < 0 or x < 0, a = x = 0, a = x = inf, or a NaN."""
    xp = get_array_module(x)
    return (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ((a == xp.inf) & (x == xp.inf)) | xp.isnan(a) | xp.isnan(x)


def gammainc_values(a, x, op="gammainc"):
    """(P(a, x), Q(a, x)), the regularized lower and upper incomplete gamma functions (float64), as Numerical
    Recipes's gser and gcf (section 6.2) and Cephes's igam and igamc: for x < a + 1 the series

        P(a, x) = x^a e^-x / Gamma(a + 1) sum_n>=0 x^n / ((a + 1) (a + 2) ... (a + n)),

    and from x = a + 1 on the continued fraction, by Lentz's method,

        Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),

    each the smaller of the two (1 minus it gives the other), each run until its last term or factor is
    within float64's eps of 0 or 1 (about 9 sqrt(a) steps where x is near a large a). Where it does not converge,
    PyTorch's answers: NaN for a < 0 or x < 0, at a = x = 0 and at a = x = inf; P = 1 at a = 0 < x and at
    x = inf, P = 0 at x = 0 < a and at a = inf. For a < 1/2 and x < 1.1, where P is near 1, Q by a series of
    its own (_upper_near_zero). Agrees with mpmath to 4e-13 relative for a up to 1e4 (the factor's exponent
    a ln x - x is rounded) (tests/ops/test_torch_special_second.py)."""
    xp = get_array_module(x)
    a, x = xp.broadcast_arrays(a, x)
    inside = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    lower = inside & (x < a + 1)
    b, y = xp.where(inside, a, 1.0), xp.where(inside, x, 1.0)
    factor = xp.exp(_log_gamma_prefactor(b, y))
    bs, ys = xp.where(lower, b, 1.0), xp.where(lower, y, 0.0)   # each method only where it is taken:
    bf, yf = xp.where(lower, 1.0, b), xp.where(lower, 2.0, y)   # elsewhere inputs it finishes at once

    def series(state):   # term_n = term_(n-1) ys / (bs + n)
        n, term, total = state
        term = term * ys / (bs + n)
        return (n + 1, term, total + term), term / total

    total = _until_converged(series, (1, xp.ones_like(y), xp.ones_like(y)), op)[2]
    tiny = 1e-300   # Lentz's stand-in for a 0 denominator

    def fraction(state):   # Lentz: f = f d c, d and c the ratios of the convergents' denominators and numerators
        i, B, c, d, f = state
        an, B = -i * (i - bf), B + 2
        d = B + an * d
        d = 1 / xp.where(xp.abs(d) < tiny, tiny, d)
        c = B + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        return (i + 1, B, c, d, f * (d * c)), d * c - 1

    B = yf + 1 - bf
    f = _until_converged(fraction, (1, B, xp.full_like(y, 1 / tiny), 1 / B, 1 / B), op)[4]
    p = xp.where(lower, factor * total / b, 1 - factor * f)
    p = xp.where(inside, p, xp.where((x == xp.inf) | ((a == 0) & (x > 0)), 1.0, 0.0))
    nan = _gammainc_nan(a, x)
    q = xp.where(lower, 1 - factor * total / b, xp.where(inside, factor * f, 1 - p))
    near_zero = inside & (a < 0.5) & (x < 1.1)   # P near 1 for a small: Q by its own series
    q = xp.where(near_zero, _upper_near_zero(xp.where(near_zero, a, 0.25), xp.where(near_zero, x, 0.5)), q)
    return xp.where(nan, xp.nan, p), xp.where(nan, xp.nan, q)


def _gammainc_slope(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = exp(ln(x^a e^-x / Gamma(a))) / x (float64), and its limits
    where that is not a number: at x = 0, 0 for a > 1, 1 for a = 1 and inf for 0 < a < 1; 0 at a = 0 < x
    (P is 1 there), at x = inf and at a = inf (PyTorch: NaN at a = 1, x = 0, at x = inf for a > 1 and at
    a = inf for x > 1). NaN where P is."""
    xp = get_array_module(x)
    a, x = xp.broadcast_arrays(a, x)
    inside = (a > 0) & (x > 0) & (a < xp.inf) & (x < xp.inf)
    with np.errstate(all="ignore"):
        y = xp.exp(_log_gamma_prefactor(xp.where(inside, a, 1.0), xp.where(inside, x, 1.0))) / x
    at_zero = xp.where(a > 1, 0.0, xp.where(a == 1, 1.0, xp.inf))
    y = xp.where(inside, y, xp.where(x == 0, at_zero, 0.0))
    nan = _gammainc_nan(a, x)
    return xp.where(nan, xp.nan, y)


class GammaInc(Function):
    """y = P(a, x) (upper=False) or Q(a, x) = 1 - P(a, x) (upper=True), the regularized incomplete gamma
    functions (see gammainc_values).   dx = ±dy x^(a-1) e^-x / Gamma(a) (see _gammainc_slope: + for P, - for Q);
    da none: PyTorch has none either (backward refuses it, by name)"""

    def __init__(self, upper):
        self.upper = upper

    @property
    def name(self) -> str:
        """gammaincc or gammainc, the function's name in errors (not the class's, gamma_inc)."""
        return "gammaincc" if self.upper else "gammainc"

    def forward(self, a, x):
        self.save_for_backward(a, x)
        xp = get_array_module(x)
        return gammainc_values(a.astype(xp.float64), x.astype(xp.float64), self.name)[int(self.upper)].astype(
            x.dtype, copy=False)

    def backward(self, dy):
        a, x = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError(f"{self.name}: no gradient with respect to a, its first argument (PyTorch has "
                                      "none either); detach a, or pass it as a number")
        xp = get_array_module(x)
        slope = _gammainc_slope(a.astype(xp.float64), x.astype(xp.float64)).astype(x.dtype, copy=False)
        return None, (-dy * slope if self.upper else dy * slope)


def gammainc(a, x):
    """P(a, x), the regularized lower incomplete gamma function, as torch.special.gammainc and torch.igamma."""
    return binary(GammaInc(upper=False), *_one_float("gammainc", a, x))


def gammaincc(a, x):
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function, as torch.special.gammaincc and
    torch.igammac."""
    return binary(GammaInc(upper=True), *_one_float("gammaincc", a, x))


def multigammaln(x, p):
    """ln Gamma_p(x) = p (p - 1) / 4 ln pi + sum_i=0..p-1 lgamma(x - i / 2), the multivariate gamma function's
    logarithm (torch.special.multigammaln, torch.mvlgamma), composed of lgamma (its gradient is theirs).
    Like PyTorch's, it does not check x > (p - 1) / 2, where Gamma_p is defined."""
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"multigammaln: p must be an integer >= 1, got {p!r}")
    x = floating(x)
    total = lgamma(x)
    for i in range(1, p):
        total = total + lgamma(x - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


# (cos t - sin(t) / t) / t = -t/3 + t^3/30 - t^5/840 + t^7/45360 - ..., in powers of t^2, highest first
_SINC_SLOPE = [1 / 45360, -1 / 840, 1 / 30, -1 / 3]


class Sinc(Function):
    """y = sin(pi x) / (pi x), 1 at x = 0 (the normalized sinc, NumPy's and PyTorch's).

        dx = dy (cos(pi x) - y) / x,  0 at x = 0

    Near 0 that difference cancels (cos and y both near 1): where |t| < 0.1, with t = pi x, it is
    pi (cos t - sin(t) / t) / t, the series _SINC_SLOPE (its next term, t^9 / 3991680, is below
    float64's rounding there).
    """

    def forward(self, x):
        xp = get_array_module(x)
        t = math.pi * x
        y = xp.where(x == 0, x.dtype.type(1), xp.sin(t) / t)
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        xp = get_array_module(x)
        t = math.pi * x
        slope = xp.where(xp.abs(t) < 0.1, math.pi * t * _horner(_SINC_SLOPE, t * t), (xp.cos(t) - y) / x)
        return (dy * slope,)


def sinc(x): return Sinc()(floating(x))


class Logit(Function):
    """y = ln(z / (1 - z)), the inverse of the sigmoid, with z = x, or with x clipped to [eps, 1 - eps]
    when ``eps`` is given (PyTorch's logit).

        dx = dy / (x (1 - x)) for x in [lo, hi],  else NaN without eps, 0 with it

    where [lo, hi] is [0, 1] without eps (outside it y is NaN) and [eps, 1 - eps] with it (the clip
    flat outside), as PyTorch's; a NaN x gives NaN.
    """

    def __init__(self, eps=None):
        self.eps = eps

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        z = x if self.eps is None else xp.clip(x, self.eps, 1 - self.eps)
        return xp.log(z / (1 - z))

    def backward(self, dy):
        (x,) = self.saved
        xp = get_array_module(x)
        lo, hi = (0, 1) if self.eps is None else (self.eps, 1 - self.eps)
        outside = xp.nan if self.eps is None else 0
        return (xp.where((x < lo) | (x > hi), outside, dy / (x * (1 - x))),)


def logit(x, eps=None):
    """ln(x / (1 - x)); with ``eps``, of x clipped to [eps, 1 - eps] first (see Logit)."""
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, numbers.Real)):
        raise TypeError(f"logit: eps must be a number or None, got {eps!r}")
    return Logit(eps)(floating(x))


class Heaviside(Function):
    """y = 0 where x < 0, ``values`` where x = 0, 1 where x > 0; NaN stays NaN, as NumPy's heaviside
    (PyTorch gives 0 at NaN).

        dx = 0 (a step),   dvalues = dy where x = 0, else 0   (PyTorch has no gradient here)
    """

    def forward(self, x, values):
        xp = get_array_module(x)
        at_zero = x == 0
        self.save_for_backward(at_zero)
        y = xp.where(at_zero, values, (x > 0).astype(x.dtype))
        return xp.where(x != x, x, y)  # (x != x: NaN, for every dtype)

    def backward(self, dy):
        (at_zero,) = self.saved
        return get_array_module(dy).zeros_like(dy), dy_where(at_zero, dy)


def heaviside(x, values):
    """The step function of x, ``values`` (a tensor or a number, broadcast) where x = 0 (see
    Heaviside). x and values promote as in x + values (PyTorch asks for one dtype)."""
    return binary(Heaviside(), x, values)


class Fmax(Function):
    """y = max(a, b), a NaN ignored: the other value, NaN only where both are (NumPy's and PyTorch's
    fmax; maximum propagates NaN).

        da = dy where a >= b or b is NaN, else 0,      db = dy elsewhere

    a tie gives all of dy to a, as PyTorch's (maximum shares it).
    """

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).fmax(a, b)

    def backward(self, dy):
        a, b = self.saved
        to_a = self.takes_a(a, b) | get_array_module(a).isnan(b)
        return dy_where(to_a, dy), dy_where(~to_a, dy)

    @staticmethod
    def takes_a(a, b):
        return a >= b


def fmax(a, b): return binary(Fmax(), a, b)


class Fmin(Fmax):
    """y = min(a, b), a NaN ignored (NumPy's and PyTorch's fmin).   As Fmax with a <= b: da = dy where
    a <= b or b is NaN, db = dy elsewhere."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).fmin(a, b)

    @staticmethod
    def takes_a(a, b):
        return a <= b


def fmin(a, b): return binary(Fmin(), a, b)


class Frac(Function):
    """y = x - trunc(x), the fractional part with x's sign (exact; NaN at ±inf, +0 at -0, as
    PyTorch's).   dx = dy"""

    def forward(self, x):
        return x - get_array_module(x).trunc(x)

    def backward(self, dy):
        return (dy,)


def frac(x):
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"frac: defined for floating tensors (an integer has no fraction; PyTorch refuses it too), "
                        f"got dtype {x.dtype.name}")
    return Frac()(x)


def deg2rad(x):
    """x degrees in radians, x * (pi / 180): a product (Mul), whose gradient is dy * pi / 180."""
    return mul(floating(x), math.pi / 180)


def rad2deg(x):
    """x radians in degrees, x * (180 / pi): a product (Mul), whose gradient is dy * 180 / pi."""
    return mul(floating(x), 180 / math.pi)


def float_power(a, b):
    """a ** b computed in float64 whatever the dtypes (PyTorch's float_power): pow of a and b cast to
    float64 (a number stays a number), so each gradient comes back through the cast, in its input's
    dtype (Astype, then Pow or PowScalar)."""
    a, b = (astype(as_tensor(v), np.float64) if not isinstance(v, numbers.Number) else v for v in (a, b))
    return pow(a, b)


def ldexp(x, other):
    """x * 2^other (PyTorch's ldexp): the product of x and exp2(other), each differentiable. An
    integer ``other`` (the usual exponent) is taken in x's float dtype, where 2^other is exact
    for the exponents that dtype can hold."""
    x = floating(x)
    other = as_tensor(other, x)
    if other.dtype.kind in "biu":
        other = other.astype(x.dtype)
    return mul(x, exp2(other))


class Frexp(Function):
    """m = x / 2^e, frexp's mantissa, with e the exponent that puts |m| in [0.5, 1) (m = e = 0 at 0; at inf
    and NaN m = x, e = 0). e is a whole number, constant between powers of 2, so

        dm/dx = 2^-e,   dx = dy * 2^-e

    as PyTorch's (at its jumps, x a power of 2, the derivative from the right).
    """

    def forward(self, x):
        xp = get_array_module(x)
        m, self.exponent = xp.frexp(x)
        return m

    def backward(self, dy):
        xp = get_array_module(dy)
        return (xp.ldexp(dy, -self.exponent),)


class MantissaExponent(NamedTuple):
    """What frexp returns: a pair, ``m, e = F.frexp(x)``, with PyTorch's names for its parts (``.mantissa``,
    ``.exponent``)."""

    mantissa: object
    exponent: object


def frexp(x):
    """x as mantissa * 2^exponent (PyTorch's and NumPy's frexp): the mantissa (x's float dtype, with
    Frexp's gradient) and the exponent (int32, no gradient). Floating x only, as PyTorch's."""
    x = as_tensor(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"frexp: expected a floating-point tensor, got dtype {x.dtype.name} (PyTorch's frexp "
                        "takes floats only)")
    function = Frexp()
    mantissa = function(x)
    return MantissaExponent(mantissa, Tensor(function.exponent.astype(np.int32, copy=False)))


def _integers_only(op, a, b):
    """numpy's/cupy's ``op`` of two integer tensors (or numbers), broadcast; floats and booleans
    raise TypeError, as PyTorch's gcd and lcm do. No gradient."""
    given = [v.dtype.name if isinstance(v, Tensor) else type(v).__name__ for v in (a, b)]
    a, b = _operands(op, a, b, two_bools=True)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu" or np.result_type(a.dtype, b.dtype).kind == "f":
        raise TypeError(f"{op}: defined for integer tensors of a common integer dtype, got {given[0]} and {given[1]}")
    a, b = _broadcasting(op, a, b)
    return Tensor(getattr(get_array_module(a.data), op)(a.data, b.data))


def gcd(a, b):
    """The greatest common divisor of integers, >= 0 (gcd(0, 0) = 0), as NumPy's and PyTorch's."""
    return _integers_only("gcd", a, b)


def lcm(a, b):
    """The least common multiple of integers, >= 0 (0 where either is 0), as NumPy's and PyTorch's."""
    return _integers_only("lcm", a, b)


def nextafter(a, b):
    """The next floating value after a toward b (a where a == b), in a's and b's common dtype, as
    NumPy's and PyTorch's nextafter; integers raise TypeError (they have no such neighbour). No
    gradient (it is a step function of a)."""
    a, b = promote(a, b, op="nextafter")
    if not (backend.is_floating(a.dtype) and backend.is_floating(b.dtype)):
        raise TypeError(f"nextafter: defined for floating tensors, got {a.dtype.name} and {b.dtype.name}")
    a, b = _broadcasting("nextafter", *common_16_bits(a, b))
    return Tensor(get_array_module(a.data).nextafter(a.data, b.data))


def signbit(x):
    """True where x's sign bit is set: x < 0, -0.0, and a NaN with its sign bit (a bool tensor)."""
    return _predicate("signbit", x)


def isposinf(x): return _predicate("isposinf", x)


def isneginf(x): return _predicate("isneginf", x)


def isreal(x):
    """True everywhere: minitx's dtypes are all real (PyTorch's isreal is False where a complex
    value has an imaginary part)."""
    return _predicate("isreal", x)


# ---------------------------------------------------------------- PyTorch's other names
# torch.absolute is torch.abs, torch.arccos torch.acos, ...: the same functions under PyTorch's (and
# NumPy's) second names, or a one-line call where PyTorch's adds an argument (docs/ops.md lists them)
absolute, negative, multiply, true_divide, clamp, fix, sgn = abs, neg, mul, div, clip, trunc, sign
arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2 = acos, acosh, asin, asinh, atan, atanh, atan2
igamma, igammac, mvlgamma = gammainc, gammaincc, multigammaln
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal


def subtract(a, b, *, alpha=1):
    """a - alpha * b, PyTorch's second name for sub (its errors name subtract)."""
    return _difference("subtract", a, b, alpha)


def rsub(input, other, *, alpha=1):  # noqa: A002 (PyTorch's names)
    """other - alpha * input, PyTorch's rsub: subtract with its operands swapped (its errors name subtract)."""
    return subtract(other, input, alpha=alpha)


def positive(x):
    """x itself, as PyTorch's positive and +x (Tensor.__pos__): refused for a boolean tensor."""
    return +as_tensor(x)


def square(x):
    """x * x, as PyTorch's square: a boolean tensor squares as int64 (True * True = 1), as there."""
    x = as_tensor(x)
    x = x.astype("int64") if x.dtype.kind == "b" else x
    return mul(x, x)


def divide(a, b, *, rounding_mode=None):
    """PyTorch's div and divide: true division a / b (rounding_mode None), or the quotient rounded
    toward 0 ("trunc") or toward -inf ("floor": floor_divide). Composed of the ops it names: trunc of
    floats is trunc(a / b), of integers (a - fmod(a, b)) // b, exact (a - fmod(a, b) is a multiple of
    b), in their dtype; the rounded quotients have gradient 0, as PyTorch's. (Not floor_divide's
    quotient with the sign fixed: 1 // 0.1 is 9, by the exact remainder, where trunc(1 / 0.1) is 10.)"""
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError(f"divide: rounding_mode must be one of None, 'trunc' or 'floor', got {rounding_mode!r}")
    if rounding_mode is None:
        return div(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    a, b = _operands("divide", a, b, two_bools=False)
    if backend.is_floating(np.result_type(a.dtype, b.dtype)):
        # PyTorch's trunc(a / b), with gradient 0 for a and b as there: trunc's own 0 sent on through
        # a / b would be NaN where b = 0 or a / b is NaN; so the values, detached, are picked by
        # where over floor_divide(a, b), whose backward gives the zeros
        return where(True, trunc(div(a, b)).detach(), floor_divide(a, b))
    _no_integer_zero("divide", b.data)
    return floor_divide(sub(a, fmod(a, b)), b)
