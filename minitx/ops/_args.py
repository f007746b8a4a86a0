"""How the public op functions take their arguments: Python numbers and lists become tensors,
integers meet floats as in PyTorch, shapes that cannot broadcast are named. Shared by every
family module; private to minitx.ops.
"""
from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from minitx import amp, backend
from minitx.autograd.tensor import Tensor, as_tensor, named
from minitx.dtypes import finfo


def binary(op, a, b, true_division=False):
    """Apply a broadcasting binary op, with a clear error when the shapes do not broadcast.

    Dtypes follow PyTorch: an integer or boolean operand meeting a float one is computed in
    the float's dtype (``int_tensor * 0.5`` is float32, where numpy alone would promote int64
    with float32 to float64), and with ``true_division`` two integer operands become float32.
    """
    a, b = promote(a, b, true_division, op.name)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{op.name}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return op(a, b)


def broadcast_batches(op: str, a_name: str, a, b_name: str, b) -> tuple:
    """The batch axes (all but the last two) of a and b broadcast together, for ops over batches of
    matrices; a ValueError naming ``op`` and both shapes when they do not broadcast."""
    try:
        return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{op}: the batch axes of {a_name} {a.shape} and {b_name} {b.shape} do not broadcast") from None


def operands(op, a, b):
    """a and b as tensors; a Python number takes the other's dtype and device, and one outside an
    integer tensor's range is an OverflowError naming ``op``, as is data no tensor holds (a TypeError)."""
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    try:
        with named(op):
            if like is None:  # a list beside an array is made in the array's dtype, as beside a tensor
                if isinstance(b, (list, tuple)) and _is_array(a):
                    a = like = as_tensor(a)
                elif isinstance(a, (list, tuple)) and _is_array(b):
                    b = like = as_tensor(b)
            return as_tensor(a, like), as_tensor(b, like)
    except OverflowError as error:
        raise OverflowError(f"{op}: {error}") from None


def _is_array(value) -> bool:
    """Whether ``value`` is a NumPy or CuPy array (not a list, a tuple or a number)."""
    return isinstance(value, np.ndarray) or backend.get_array_module(value) is not np


def promote(a, b, true_division=False, op="promote"):
    """(a, b) as tensors of one dtype where ints meet floats: the float's (see binary). A 0-d
    float tensor beside a float32 or float64 tensor with dimensions takes its dtype, as in PyTorch:
    a 0-d tensor is a scalar, like a Python number, so ``scores / tensor(np.sqrt(d))`` stays
    float32 where NumPy would promote it to float64. Beside float16 or bfloat16 it promotes as
    NumPy does (float32): rounded to 16 bits first it could lose its value (1e5 is inf in float16),
    where PyTorch's kernels compute with it in float32 and round the result to 16 bits."""
    a, b = operands(op, a, b)
    a_float, b_float = backend.is_floating(a.dtype), backend.is_floating(b.dtype)  # (bfloat16 too)
    if a.dtype.kind in "biu" and b_float:
        a = a.astype(b.dtype)
    elif b.dtype.kind in "biu" and a_float:
        b = b.astype(a.dtype)
    elif true_division and a.dtype.kind in "biu":
        a, b = a.astype(backend.DEFAULT_FLOAT), b.astype(backend.DEFAULT_FLOAT)
    elif a_float and b_float and a.dtype != b.dtype and (a.ndim == 0) != (b.ndim == 0):
        scalar, other = (a, b) if a.ndim == 0 else (b, a)
        if other.dtype.itemsize >= 4:
            scalar = scalar.astype(other.dtype)
            a, b = (scalar, other) if a.ndim == 0 else (other, scalar)
    return a, b


def common_16_bits(*tensors) -> list:
    """float16 beside bfloat16 both as float32, PyTorch's common dtype for them (NumPy has none:
    its concatenate and where raise DTypePromotionError); other tensors as they are."""
    names = {t.dtype.name for t in tensors}
    if "float16" in names and "bfloat16" in names:
        return [t.astype(np.float32) if t.dtype.name in ("float16", "bfloat16") else t for t in tensors]
    return list(tensors)


def one_dtype(*tensors) -> list:
    """tensors in the dtype PyTorch gives the result of an op that puts them together
    (concatenate, stack, where): beside a float, integers and booleans take the floats' dtype
    (NumPy would take float64 for int64 beside float32); float16 beside bfloat16 is float32 (see
    common_16_bits). Without floats, or with floats only, NumPy's promotion is PyTorch's."""
    tensors = common_16_bits(*tensors)
    floats = [t.dtype for t in tensors if backend.is_floating(t.dtype)]
    if not floats or len(floats) == len(tensors):
        return tensors
    dtype = np.result_type(*floats)
    return [t if t.dtype == dtype else t.astype(dtype) for t in tensors]


def one_float_dtype(op, *tensors):
    """Products take one floating dtype, as PyTorch's do: float32 weights given a float64 input
    would otherwise compute the layer in float64 (NumPy promotes), silently slower and not what
    the model was built in. The message says which to cast. Under autocast float32 meets the
    16-bit dtypes by design (minitx.amp casts the products' inputs), but never float64, which
    autocast leaves as it is."""
    tensors = [t for t in tensors if hasattr(t, "dtype")]  # (None: no bias; what is no array is refused later)
    floats = sorted({t.dtype.name for t in tensors if backend.is_floating(t.dtype)})
    if amp.active() is not None and "float64" not in floats:
        return
    if len(floats) > 1:
        raise TypeError(f"{op}: operands of dtypes {' and '.join(floats)}; a product takes one floating dtype, "
                        f"as PyTorch's: cast one, e.g. x.to(dtype='{tensors[-1].dtype.name}') to the weights' dtype")


def product_operands(op, a, b):
    """(a, b) as tensors for a product of two operands (matmul, mm, bmm, dot), one floating dtype.

    Integers meet floats as in a * b (promote). Two tensors or arrays of different floating dtypes
    are refused (one_float_dtype: their dtypes were chosen). A Python list or tuple has none chosen:
    it becomes a tensor as in ``x + [[1.0, 2.0]]`` (floats as float32, on the other's device), and
    its floats meet the other's as in ``a * b``, by NumPy's promotion: ``float64 @ list`` is float64,
    ``float16 @ list`` float32 (as ``float16 + list`` is), where one_float_dtype would refuse both."""
    from_sequence = isinstance(a, (list, tuple)) or isinstance(b, (list, tuple))
    a, b = promote(a, b, op=op)
    if from_sequence and backend.is_floating(a.dtype) and backend.is_floating(b.dtype) and a.dtype != b.dtype:
        dtype = np.result_type(a.dtype, b.dtype)  # (a list is float32: never beside its other 16-bit dtype)
        a, b = (t if t.dtype == dtype else t.astype(dtype) for t in (a, b))
    one_float_dtype(op, a, b)
    return a, b


def product_input(op, x, weight, bias=None) -> Tensor:
    """x for a layer's product with ``weight`` (linear, the convolutions): an integer or boolean x
    takes the weight's floating dtype, as in x * w (PyTorch refuses it; NumPy would compute an
    int64 x with float32 weights in float64), and then one floating dtype for all (one_float_dtype)."""
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor):
        return x  # (refused by the op, by name)
    x, weight = promote(x, weight, op=op)
    one_float_dtype(op, x, weight, bias)
    return x


def floating(x) -> Tensor:
    """x for ops defined on real numbers (exp, softmax, ...): an integer or boolean tensor
    becomes float32, PyTorch's default float (numpy would pick float64)."""
    x = as_tensor(x)
    return x.astype(backend.DEFAULT_FLOAT) if x.dtype.kind in "biu" else x


def accumulate(reduce, dtype, **kwargs):
    """``reduce(dtype=..., **kwargs)`` (a sum, product or their scans) in the dtype PyTorch
    accumulates ``dtype`` in: int64 for booleans and integers narrower than 64 bits (the result
    stays int64; NumPy would take uint64 for the unsigned ones). float16 and bfloat16 arrive here
    as float32 already (Function.apply computes 16-bit ops in float32) and are rounded once after."""
    if np.dtype(dtype).kind in "biu" and np.dtype(dtype).itemsize < 8:
        return reduce(dtype=np.int64, **kwargs)
    return reduce(**kwargs)


def as_indices(value, like: Tensor) -> Tensor:
    """Ids and targets: Python ints and lists become int64 tensors on ``like``'s device."""
    if isinstance(value, Tensor):
        return value
    from minitx.autograd.tensor import tensor

    value = tensor(value, device=like.device)
    return value.astype(np.int64) if value.size == 0 and value.dtype.kind == "f" else value  # [] (floats to NumPy)


def check_fits(op: str, what: str, value, dtype):
    """A number written into an integer or boolean tensor must be one it holds: NumPy would turn
    -1.5 into 254 in uint8, or 0.5 into 0, without a word."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biu" or not isinstance(value, (int, float, np.number)):
        return
    low, high = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    if not (np.isfinite(value) and float(value).is_integer() and low <= value <= high):
        raise ValueError(f"{op}: {what} {value!r} does not fit the tensor's {dtype.name} (whole numbers from {low} "
                         f"to {high}); convert the tensor first, e.g. x.to(dtype='float32')")


def integer_scale(op: str, what: str, value, dtype) -> int:
    """A Python number that scales an integer tensor (addmm's alpha and beta, subtract's alpha) as
    PyTorch takes it: a float within the dtype's range truncated toward 0 (0.5 is 0); an integer
    of an unsigned dtype wrapped from as far below 0 as the dtype's largest value (-1 is 255 in
    uint8, so a - b is a + 255 * b there); a number outside these ranges refused."""
    dtype = np.dtype(dtype)
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    if dtype.kind == "u" and isinstance(value, numbers.Integral):
        low = -high
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{op}: {what} {value!r} does not fit the tensor's {dtype.name} (from {low} to {high}), "
                         "as PyTorch's; convert the tensor first, e.g. x.to(dtype='float32')")
    return int(value) % (high + 1) if dtype.kind == "u" else int(value)


def check_alpha(op: str, alpha, *values):
    """add's and subtract's ``alpha`` (x + alpha * y) refused as by PyTorch where it is a float and no
    value is (the result integral or boolean): computing it in float32 would change the result's dtype,
    even for alpha = 2.0."""
    if isinstance(alpha, (bool, np.bool_)) and not is_boolean(*values):
        dtype = next((v.dtype.name for v in values if isinstance(v, Tensor) and v.dtype != np.bool_), "a number's")
        raise TypeError(f"{op}: alpha {alpha!r} is a boolean, but the result is {dtype}, not boolean, which PyTorch "
                        "refuses; pass an integer alpha")
    if _is_float(alpha) and not any(_is_float(v) for v in values):
        dtype = next((v.dtype.name for v in values if isinstance(v, Tensor)), "integer")
        raise TypeError(f"{op}: alpha {alpha!r} is a float, but the tensors are integral ({dtype}), which PyTorch "
                        "refuses; pass an integer alpha or convert the tensor first, e.g. x.to(dtype='float32')")


def alpha_times(op, a, b, alpha, *, wide=False):
    """The ``alpha * b`` of ``a + alpha * b`` (add's and sub's ``alpha=``, and add_'s and sub_'s), with
    ``alpha`` taken as PyTorch takes it, in the dtype of the sum (PyTorch's result_type of a and b):

    * a float alpha is refused where a and b are integral, a boolean one where they are not boolean
      (check_alpha);
    * booleans: ``b and alpha`` (a + it is then a or it, PyTorch's boolean add);
    * integers: b in the sum's dtype, alpha wrapped into it where it is unsigned (integer_scale: -2 is
      254 in uint8, so a - 2b wraps as PyTorch's does) or refused where it does not fit;
    * floats: b in the sum's dtype, the product rounded there (a Python number b: exactly, as PyTorch
      scales a scalar); with ``wide`` (the in-place forms) in float32 for 16 bits and float64 for
      float32, so that x + alpha * y rounds once, into x, as PyTorch's fused kernel nearly does
      (rounded first, it would be off by its own rounding, hundreds of units of x's where the two
      nearly cancel).

    The default alpha, the int 1, gives b as it is (1.0 and True are checked: PyTorch refuses them for
    some dtypes)."""
    if type(alpha) is int and alpha == 1:
        return b
    check_alpha(op, alpha, a, b)
    if is_boolean(a, b):
        return as_tensor(b) & bool(alpha)
    a_promoted, b_promoted = common_16_bits(*promote(a, b, op=op))
    total = np.result_type(a_promoted.dtype, b_promoted.dtype)  # the dtype of a + alpha * b
    if total.kind in "iu":
        return b_promoted.to(dtype=total) * integer_scale(op, "alpha", alpha, total)
    if abs(alpha) > finfo(total).max:  # (PyTorch casts alpha to the sum's dtype)
        raise ValueError(f"{op}: alpha {alpha!r} does not fit the result's {total.name} (largest "
                         f"{finfo(total).max:g}), as PyTorch's; convert the tensors first, e.g. x.to(dtype='float32')")
    if isinstance(b, numbers.Number):
        return b * alpha
    if wide and total.itemsize in (2, 4):
        total = np.dtype(np.float32 if total.itemsize == 2 else np.float64)
    # (b itself where it is a tensor: an integer b goes straight into the float dtype, not through 16 bits)
    return (b if isinstance(b, Tensor) else b_promoted).to(dtype=total) * alpha


def is_boolean(*values) -> bool:
    """Whether the numbers, arrays or tensors all hold booleans (their sum is then boolean, PyTorch's or)."""
    return all((getattr(v, "dtype", None) if getattr(v, "dtype", None) is not None else np.asarray(v).dtype) == np.bool_
               for v in values)


def _is_float(value) -> bool:
    """Whether a number, a list, an array or a tensor holds floats."""
    dtype = getattr(value, "dtype", None)
    return backend.is_floating(dtype if dtype is not None else np.asarray(value).dtype)


def whole(op: str, what: str, value) -> int:
    """An int argument (a diagonal, an offset, a count) as a Python int: an int, a NumPy integer or a 0-d
    integer tensor; a float (NumPy would truncate 1.5 to 1, or compare with it) and a bool refused by
    name, as PyTorch refuses them."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int, got {value!r}") from None


def number(op: str, what: str, value, bound=None):
    """A number argument (a slope, a rate, a bound) as a Python int or float: given as one, as a NumPy
    number, or as a 0-d tensor or array of numbers (PyTorch takes a 0-d tensor as a number; its value
    is read, on a GPU with one read of the device). A bool, a string, None, a Fraction or a tensor of
    several entries is refused by name with a TypeError (a comparison with a string would fail inside,
    naming nothing); ``bound`` (``"> 0"`` or ``">= 0"``) refuses the rest, NaN included, with a ValueError."""
    given = value
    dtype = getattr(value, "dtype", None)
    if getattr(value, "ndim", None) == 0 and dtype is not None and (backend.is_floating(dtype) or dtype.kind in "iu"):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}: {what} must be a number, got {given!r}")
    if bound == "> 0" and not value > 0 or bound == ">= 0" and not value >= 0:
        raise ValueError(f"{op}: {what} must be a number {bound}, got {given!r}")
    return value


def flag(op: str, what: str, value) -> bool:
    """A True-or-False argument (return_counts, sorted), refused by name where it is anything else: a
    string "False" would read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {what} must be True or False, got {value!r}")
    return bool(value)


def type_name(value) -> str:
    """What an error says ``value`` is: its type's name, with its package for another library's
    (torch.Tensor, numpy.ndarray), which a bare "Tensor" would pass off as minitx's."""
    module = type(value).__module__.split(".")[0]
    return type(value).__name__ if module in ("builtins", "minitx") else f"{module}.{type(value).__name__}"


def check_bool(op: str, what: str, t: Tensor):
    if t.dtype != np.bool_:
        raise TypeError(f"{op}: {what} must be a boolean tensor, got dtype {t.dtype.name}")


def takes_inplace(op):
    """``op(x, ...)`` that also takes PyTorch's ``inplace=`` (F.relu(x, inplace=True), and the
    layers' inplace=True): then op's result is written into x, which is returned, as by any
    in-place op (Tensor._in_place, recorded while a gradient is; into a view, as Flatten's output
    is, the write goes into the tensor it views). Where a recorded write into x is refused (x a
    view of a parameter, a broadcast) the result is a new tensor, as if inplace were False: the
    flag saves memory, it does not change what the model computes."""
    @functools.wraps(op)
    def with_inplace(x, *args, inplace=False, **kwargs):
        name = op.__name__ + "_"
        if inplace:
            x = as_tensor(x)
            if not (x._records_write(args, kwargs) and x._write_refused(name)):
                return x._in_place(name, op, *args, **kwargs)
        return op(x, *args, **kwargs)

    return with_inplace


def in_place_function(op):
    """PyTorch's ``F.relu_(x, ...)``: ``op(x, ..., inplace=True)``, for an op that takes_inplace."""
    def in_place(x, *args, **kwargs):
        return op(x, *args, inplace=True, **kwargs)

    in_place.__name__ = in_place.__qualname__ = op.__name__ + "_"
    in_place.__module__ = op.__module__  # (its family's: pickle finds it there, and ops/__init__.py wraps it)
    in_place.__doc__ = f"{op.__name__}(x, ..., inplace=True): its result written into x, which is returned."
    return in_place
