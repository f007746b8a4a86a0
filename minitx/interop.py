"""Exchanging data with other array libraries: DLPack both ways, and ``__array__`` objects.

DLPack is the protocol array libraries use to hand each other memory without a copy: the
producer's ``__dlpack__()`` wraps a pointer, shape, strides and dtype in a capsule, and
``__dlpack_device__()`` says where the memory is ((1, 0) for the CPU, (2, n) for CUDA GPU n).

* out of minitx: ``torch.from_dlpack(t)``, ``numpy.from_dlpack(t)`` and ``cupy.from_dlpack(t)``
  see the tensor's own memory (``Tensor.__dlpack__`` hands on its NumPy or CuPy array's
  capsule). A write through either side is seen by the other, as with ``t.numpy()``.
* into minitx: ``minitx.from_dlpack(x)`` wraps the memory of any DLPack producer (a PyTorch,
  CuPy, NumPy, JAX array) in a Tensor on the device where it lives; ``minitx.Tensor(x)`` does
  the same for any such object, and ``minitx.tensor(x)`` copies it. Objects without DLPack
  but with ``__array__`` (pandas, PIL, ...) are read through ``numpy.asarray``.

The memory is shared for every dtype a Tensor holds (``backend.dtype_names()``: float16/32/64,
int8 to int64, uint8 to uint64, bool, bfloat16); any other (complex, float128) is refused with
a TypeError that names it, never converted silently.
"""
from __future__ import annotations

import numpy as np

from minitx import backend

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


def as_array(data, op: str = "tensor"):
    """``data`` as a NumPy or CuPy array when it comes from another library, else unchanged.

    NumPy and CuPy arrays, NumPy scalars and Python data (numbers, lists) pass through; other
    objects with ``__dlpack__`` are viewed through DLPack (no copy), and objects with only
    ``__array__`` are read with ``numpy.asarray``.
    """
    if isinstance(data, (np.ndarray, np.generic)) or backend.get_array_module(data) is not np:
        return data
    if hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        return array_from_dlpack(data, op)
    if hasattr(data, "__array__"):
        return np.asarray(data)
    return data


def export_dlpack(array, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of a NumPy or CuPy ``array`` (what ``Tensor.__dlpack__`` returns).

    Only the keywords the consumer gave are passed on: NumPy before 2.0 knows ``stream``
    alone, and consumers retry without ``max_version`` when a producer refuses it.
    """
    given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
    return array.__dlpack__(**{key: value for key, value in given.items() if value is not None})


def _name(x) -> str:
    return f"{type(x).__module__}.{type(x).__qualname__}"
