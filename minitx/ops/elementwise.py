"""Elementwise math: arithmetic, floor division and the two remainders, powers, exp and log,
absolute value, maximum and minimum, clipping, where and masked_fill, nan_to_num, lerp, dtype
and device changes, trigonometry, rounding, base-2 and accurate-near-zero logs and
exponentials, reciprocals; and the comparisons, isclose, tests of values and bitwise ops
(integer or boolean results, no gradient). The special functions (erf, lgamma and its kin,
zeta, gammainc, the normal distribution's, xlogy, entr, sinc) are special.py's, the Bessel
functions bessel.py's.

Each gradient is the local derivative times the incoming gradient ``dy``. Binary ops
broadcast like numpy; the engine sums their gradients back to each input's shape.

Rounding ops (sign, floor, ceil, round, trunc) are flat between their jumps: their derivative
is 0 wherever it exists, and 0 is the gradient they pass back everywhere, as in PyTorch.
"""
from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from minitx import backend
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import device_of, get_array_module
from minitx.dtypes import finfo
from minitx.ops._args import (alpha_times, binary, check_bool, check_fits, common_16_bits, floating, number, one_dtype,
                             operands, promote, whole)

__all__ = ["Frexp", "Add", "Sub", "Mul", "Div", "Neg", "PowScalar", "Pow", "Exp", "Log", "Sqrt", "Abs", "Maximum", "Minimum", "Clip", "ClipTensor", "Where", "MaskedFill", "Astype", "ToDevice", "Sin", "Cos", "Sign", "Floor", "Ceil", "Round", "Trunc", "Log2", "Exp2", "Log1p", "Expm1", "Rsqrt", "Reciprocal", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Log10", "Atan2", "Hypot", "Copysign", "FloorDivide",
           "Remainder", "Fmod", "NanToNum", "Lerp", "LogAddExp", "LogAddExp2",
           "Logit", "Heaviside", "Fmax", "Fmin", "Frac"]


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
    return binary(Add(), a, alpha_times("add", a, b, alpha))


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
    return binary(Sub(), a, alpha_times(op, a, b, alpha, wide=wide))


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
    return Astype(backend.resolve_dtype(dtype, "astype"))(as_tensor(x))


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
    return ToDevice(backend.check_device(device, "to_device"))(as_tensor(x))


_LN2 = math.log(2)


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


def floor(x): return Floor()(as_tensor(x))


class Ceil(_PiecewiseConstant):
    """y = the smallest integer >= x.   dx = 0"""

    def forward(self, x):
        return get_array_module(x).ceil(x)


def ceil(x): return Ceil()(as_tensor(x))


class Round(_PiecewiseConstant):
    """y = x rounded to ``decimals`` decimal places, halves to even (2.5 -> 2, 3.5 -> 4), as in
    NumPy and PyTorch.   dx = 0"""

    def __init__(self, decimals=0):
        self.decimals = decimals

    def forward(self, x):
        return get_array_module(x).round(x, self.decimals)


def round(x, decimals=0):  # noqa: A001 (numpy's name)
    """x rounded to ``decimals`` places, halves to even; its gradient is 0."""
    return Round(whole("round", "decimals", decimals))(as_tensor(x))


class Trunc(_PiecewiseConstant):
    """y = x with its fraction dropped (rounded toward 0).   dx = 0"""

    def forward(self, x):
        return get_array_module(x).trunc(x)


def trunc(x): return Trunc()(as_tensor(x))


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
    rtol, atol = number(op, "rtol", rtol, ">= 0"), number(op, "atol", atol, ">= 0")
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
        return (xp.where((x < lo) | (x > hi), outside, dy / (xp.abs(x) * (1 - x))),)  # (|x|: -0's slope is 0's, +inf)


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


class Ldexp(Function):
    """y = x * 2^e.   dx = dy * 2^e,  de = dy * y * ln 2

    de from y, not as the product x * exp2(e)'s chain (dy * x) * 2^e ln 2: in a 16-bit dtype dy * x
    underflows to 0 where x is tiny and e lifts it (x = 2^-23, e = 5). One op, so 2^e of 16-bit inputs
    is taken in float32: float16 ldexp(0.5, 16.0) is 32768 (PyTorch's 2^e overflows float16 first: inf)."""

    def forward(self, x, e):
        power = get_array_module(x).exp2(e)
        y = x * power
        wants_dx, wants_de = self.needs_input_grad or (True, True)
        self.save_for_backward(power if wants_dx else None, y if wants_de else None)
        return y

    def backward(self, dy):
        power, y = self.saved
        return (dy * power if self.needs_input_grad[0] else None,
                dy * y * _LN2 if self.needs_input_grad[1] else None)


def ldexp(x, other):
    """x * 2^other (PyTorch's ldexp), differentiable in both. An integer ``other`` (the usual exponent)
    is taken in x's float dtype, where 2^other is exact for the exponents that dtype can hold."""
    x = floating(x)
    other = as_tensor(other, x)
    if other.dtype.kind in "biu":
        other = other.astype(x.dtype)
    return binary(Ldexp(), x, other)


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
