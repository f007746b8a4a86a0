"""Exchanging data with other array libraries: DLPack both ways, and ``__array__`` objects.

DLPack is the protocol array libraries use to hand each other memory without a copy: the
producer's ``__dlpack__()`` wraps a pointer, shape, strides and dtype in a capsule, and
``__dlpack_device__()`` says where the memory is ((1, 0) for the CPU, (2, n) for CUDA GPU n).

* out of minitx: ``torch.from_dlpack(t)``, ``numpy.from_dlpack(t)`` and ``cupy.from_dlpack(t)``
  see the tensor's own memory (``Tensor.__dlpack__`` hands on its NumPy or CuPy array's
  capsule). A write through either side is seen by the other, as with ``t.numpy()``. A
  bfloat16 tensor's capsule says DLPack's bfloat16 (NumPy refuses to export ml_dtypes' type:
  its uint16 bits are exported, the capsule's dtype set to bfloat16), which PyTorch reads;
  NumPy has no bfloat16 and refuses it (``t.numpy()`` is the NumPy view).
* into minitx: ``minitx.from_dlpack(x)`` wraps the memory of any DLPack producer (a PyTorch,
  CuPy, NumPy, JAX array) in a Tensor on the device where it lives; ``minitx.Tensor(x)`` does
  the same for any such object, and ``minitx.tensor(x)`` copies it (a PyTorch tensor that
  requires grad detached, with a warning, as torch.tensor(t) copies it). Objects without DLPack
  but with ``__array__`` (pandas, PIL, ...) are read through ``numpy.asarray``. bfloat16 comes
  in from PyTorch (as its int16 bits); another producer's bfloat16 is refused, as NumPy has none.

The memory is shared for every dtype a Tensor holds (``backend.dtype_names()``: float16/32/64,
int8 to int64, uint8 to uint64, bool, bfloat16, with PyTorch for bfloat16); any other (complex,
float128) is refused with a TypeError that names it, never converted silently.
"""
from __future__ import annotations

import ctypes
import os
import sys
import warnings

import numpy as np

from minitx import backend

_PACKAGE = os.path.dirname(os.path.abspath(__file__))  # .../minitx

# DLPack device types (dlpack.h, DLDeviceType) that minitx can take memory from
_CPU, _CUDA, _CUDA_MANAGED = 1, 2, 13

__all__ = ["array_from_dlpack", "as_array", "export_dlpack"]


def array_from_dlpack(x, op: str = "from_dlpack"):
    """The NumPy (CPU) or CuPy (CUDA) array viewing the memory of the DLPack producer ``x``;
    ``op`` names the caller in error messages."""
    if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
        raise TypeError(f"{op}: {_name(x)} has no __dlpack__/__dlpack_device__ methods; "
                        "expected a DLPack producer such as a PyTorch, CuPy or NumPy array")
    device_type, device_id = (int(v) for v in x.__dlpack_device__())
    if device_type == _CPU:
        xp = np
    elif device_type in (_CUDA, _CUDA_MANAGED):
        xp = backend.xp_for(backend.check_device("cuda"))  # a clear error without a usable GPU
    else:
        raise ValueError(f"{op}: {_name(x)} lives on DLPack device type {device_type} (id "
                         f"{device_id}); minitx reads CPU (1) and CUDA (2, 13) memory")
    try:
        return xp.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":  # NumPy has no DLPack bfloat16: its bits as int16
            import torch  # noqa: PLC0415 (x is a PyTorch tensor: torch is there)

            return xp.from_dlpack(x.view(torch.int16)).view(backend.bfloat16())
        # e.g. PyTorch refuses a tensor that requires grad, NumPy a dtype it has no match for
        raise TypeError(f"{op}: cannot take the memory of {_name(x)} through DLPack: "
                        f"{type(e).__name__}: {e}") from e


def as_array(data, op: str = "tensor", copy: bool = False):
    """``data`` as a NumPy or CuPy array when it comes from another library, else unchanged.

    NumPy and CuPy arrays, NumPy scalars and Python data (numbers, lists) pass through; other
    objects with ``__dlpack__`` are viewed through DLPack (no copy), and objects with only
    ``__array__`` are read with ``numpy.asarray``. ``copy``: the caller copies what it gets
    (minitx.tensor), so a PyTorch tensor that requires grad is read through its ``detach()``,
    with a warning, as torch.tensor(t) copies one (see detached).
    """
    if isinstance(data, (np.ndarray, np.generic)) or backend.get_array_module(data) is not np:
        return data
    if copy:
        data = detached(data, op)
    if hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        return array_from_dlpack(data, op)
    if hasattr(data, "__array__"):
        return np.asarray(data)
    return data


def detached(data, op: str = "tensor"):
    """``data.detach()`` for a PyTorch tensor that requires grad (DLPack refuses to export one),
    with a UserWarning as PyTorch's torch.tensor(t) gives: the copy leaves the tensor's graph, so
    no gradient flows back into it. Anything else is returned as it is. Sharing its memory instead
    (minitx.Tensor, from_dlpack, as_tensor) stays refused, as in PyTorch: a write through minitx
    would change a tensor PyTorch's autograd saved, unseen."""
    if getattr(data, "requires_grad", False) is not True or not callable(getattr(data, "detach", None)):
        return data
    warnings.warn(f"{op}: copying a {_name(data)} that requires grad: the copy is detached from its graph, as "
                  f"torch.tensor(t) copies one (no gradient flows back to it); write minitx.{op}(t.detach()) "
                  f"to say so, and pass requires_grad=True for a new leaf", UserWarning,
                  stacklevel=_user_stacklevel())
    return data.detach()


def _user_stacklevel() -> int:
    """warnings.warn's stacklevel for its caller's first caller outside minitx: the user's line,
    however deep in minitx the copy was asked for (minitx.tensor, or an op turning an operand into
    a tensor). Level 1 is the function that calls warnings.warn."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and _inside_minitx(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


def _inside_minitx(path: str) -> bool:
    return os.path.abspath(path).startswith(_PACKAGE + os.sep)


def export_dlpack(array, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of a NumPy or CuPy ``array`` (what ``Tensor.__dlpack__`` returns).

    Only the keywords the consumer gave are passed on: NumPy before 2.0 knows ``stream``
    alone, and consumers retry without ``max_version`` when a producer refuses it.
    """
    given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
    given = {key: value for key, value in given.items() if value is not None}
    if str(getattr(array, "dtype", "")) != "bfloat16":
        return array.__dlpack__(**given)
    # NumPy refuses to export ml_dtypes' bfloat16 (DLPack has one, NumPy has none): export the
    # same memory as uint16, then set the capsule's dtype code to DLPack's bfloat16 (kDLBfloat)
    capsule = array.view(np.uint16).__dlpack__(**given)
    _dlpack_dtype(capsule).code = _DL_BFLOAT
    return capsule


# dlpack.h's DLDataType codes, and the leading fields of its structs, as far as the dtype
_DL_UINT, _DL_BFLOAT = 1, 4


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType)]


# capsule "dltensor_versioned"; the unversioned DLManagedTensor ("dltensor") starts with its DLTensor
class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _dlpack_dtype(capsule) -> _DLDataType:
    """The dtype field of an unconsumed capsule of uint16 data, to be written in place."""
    name = _capsule_name(capsule)
    address = _capsule_pointer(capsule, name)
    if name == b"dltensor_versioned":
        dtype = _DLManagedTensorVersioned.from_address(address).dl_tensor.dtype
    elif name == b"dltensor":
        dtype = _DLTensor.from_address(address).dtype
    else:
        raise TypeError(f"__dlpack__: the capsule of a bfloat16 tensor's bits is named {name!r}, not a DLPack "
                        "tensor's; hand on the bits instead: "
                        "torch.from_dlpack(t.data.view(numpy.uint16)).view(torch.bfloat16)")
    if (dtype.code, dtype.bits, dtype.lanes) != (_DL_UINT, 16, 1):  # the layout is not the one above
        raise TypeError(f"__dlpack__: the capsule of a bfloat16 tensor's bits reads as dtype code {dtype.code}, "
                        f"{dtype.bits} bits, {dtype.lanes} lanes, not uint16; hand on the bits instead: "
                        "torch.from_dlpack(t.data.view(numpy.uint16)).view(torch.bfloat16)")
    return dtype


def _name(x) -> str:
    return f"{type(x).__module__}.{type(x).__qualname__}"
