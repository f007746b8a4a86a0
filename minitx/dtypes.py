"""What PyTorch's dtype helpers answer, for minitx's dtypes: finfo and iinfo (a dtype's limits),
promote_types and result_type (the dtype an op computes two operands in), can_cast (what an
in-place write accepts), and set_default_dtype (the dtype new float tensors take).

    minitx.finfo(minitx.bfloat16).eps        # 0.0078125
    minitx.result_type(int_tensor, 0.5)      # float32, as int_tensor * 0.5 is

Each answer comes from the code that decides it in the ops (ops/_args.promote for promotion,
backend.can_cast for writes), not from a table of its own: it says what minitx computes.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from minitx import backend


def numpy_finfo(dtype):
    """NumPy's finfo for a float dtype, or ml_dtypes' for bfloat16 (NumPy's does not know it)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        import ml_dtypes  # noqa: PLC0415  (there whenever a bfloat16 dtype is)

        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


@dataclasses.dataclass(frozen=True)
class finfo:  # noqa: N801  (PyTorch's name)
    """The limits of a floating dtype, as PyTorch's ``torch.finfo(dtype)`` gives them (Python floats):

    * bits: the dtype's width; eps: the gap between 1 and the next number above it;
    * max, min: the largest finite number and its negative;
    * tiny (= smallest_normal): the smallest positive normal number (subnormals go below it);
    * resolution: 10 ** -precision, precision being the decimal digits the dtype keeps
      (float32: 6, so 1e-06; bfloat16: 2, so 0.01);
    * dtype: the dtype's name ('float32').

    ``finfo()`` describes the default float dtype (get_default_dtype)."""

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type=None):  # noqa: A002  (PyTorch's argument name)
        dtype = backend.DEFAULT_FLOAT if type is None else _dtype("finfo", type)
        if not backend.is_floating(dtype):
            raise TypeError(f"finfo: expected a floating dtype (float16, bfloat16, float32, float64), got "
                            f"{dtype.name}; minitx.iinfo gives an integer dtype's limits")
        info = numpy_finfo(dtype)
        for name, value in (("bits", int(info.bits)), ("eps", float(info.eps)), ("max", float(info.max)),
                            ("min", float(info.min)), ("tiny", float(info.smallest_normal)),
                            ("smallest_normal", float(info.smallest_normal)),
                            ("resolution", 10.0 ** -int(info.precision)), ("dtype", dtype.name)):
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class iinfo:  # noqa: N801  (PyTorch's name)
    """The limits of an integer dtype, as PyTorch's ``torch.iinfo(dtype)`` gives them (Python ints):
    bits, max, min and dtype (its name). Booleans have none (PyTorch refuses them too)."""

    bits: int
    max: int
    min: int
    dtype: str

    def __init__(self, type):  # noqa: A002  (PyTorch's argument name)
        dtype = _dtype("iinfo", type)
        if dtype.kind not in "iu":
            raise TypeError(f"iinfo: expected an integer dtype (int8 ... int64, uint8 ... uint64), got "
                            f"{dtype.name}; minitx.finfo gives a floating dtype's limits")
        info = np.iinfo(dtype)
        for name, value in (("bits", int(info.bits)), ("max", int(info.max)), ("min", int(info.min)),
                            ("dtype", dtype.name)):
            object.__setattr__(self, name, value)


def _dtype(function: str, dtype) -> np.dtype:
    """``dtype`` (a minitx dtype name, a NumPy dtype or type) as np.dtype, or a TypeError naming
    ``function``."""
    if dtype is None:
        raise TypeError(f"{function}: expected a dtype, got None")
    try:
        return backend.resolve_dtype(dtype)
    except TypeError as error:
        raise TypeError(f"{function}: {error}") from None


def result_type(tensor, other) -> np.dtype:
    """The dtype minitx computes ``tensor + other`` in (PyTorch's ``torch.result_type``); each may be
    a tensor or a Python number. The rules are ops/_args.promote's, as PyTorch's: an integer or
    boolean beside a float takes the float's dtype; a Python number takes the tensor's dtype of
    its kind (``int8_tensor + 300`` is refused; a float beside integers is the default float); a
    0-d float tensor beside float32 or float64 with dimensions takes theirs; float16 beside bfloat16
    is float32; otherwise NumPy's promotion, which is PyTorch's for all but two cases (docs/ops.md):
    a 0-d integer tensor promotes as one with dimensions (PyTorch: int32 beside a 0-d int64 stays
    int32), and int64 beside uint64 is float64 (PyTorch refuses it, and uint16/32 beside signed)."""
    from minitx.ops._args import common_16_bits, promote  # noqa: PLC0415  (ops import this module's users)

    a, b = common_16_bits(*promote(tensor, other, op="result_type"))
    return np.result_type(a.dtype, b.dtype)


def promote_types(type1, type2) -> np.dtype:
    """The dtype of ``a + b`` for tensors ``a`` of ``type1`` and ``b`` of ``type2``, both with
    dimensions (PyTorch's ``torch.promote_types``): result_type of two empty tensors."""
    from minitx.autograd.tensor import Tensor  # noqa: PLC0415  (which imports minitx.creation, which imports this)

    a, b = (Tensor(np.empty(0, _dtype("promote_types", t))) for t in (type1, type2))
    return result_type(a, b)


def can_cast(from_, to) -> bool:
    """Whether an in-place op may write values of dtype ``from_`` into a tensor of dtype ``to``
    (PyTorch's ``torch.can_cast``; the rule is backend.can_cast's): any float into a float, no
    float into integers, no number into booleans. Unlike PyTorch's, no signed integer into an
    unsigned one (NumPy's same-kind rule: int64 into uint8 would wrap negative numbers)."""
    return backend.can_cast(_dtype("can_cast", from_), _dtype("can_cast", to))


def set_default_dtype(d) -> None:
    """Make ``d`` (float32 or float64, as PyTorch allows) the dtype of new float tensors
    (PyTorch's ``torch.set_default_dtype``): minitx.tensor of Python floats, the factories without
    dtype= (zeros, rand, ...), so new modules' parameters, and where integers become floats
    (``int_tensor * 0.5``, ``int_tensor / 2``, exp of integers). get_default_dtype reads it back."""
    dtype = _dtype("set_default_dtype", d)
    if dtype.name not in ("float32", "float64"):
        raise TypeError(f"set_default_dtype: expected float32 or float64 (as PyTorch), got {dtype.name}")
    backend.DEFAULT_FLOAT = dtype
