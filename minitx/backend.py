"""The one place that decides NumPy or CuPy.

Every array in minitx is either a ``numpy.ndarray`` (device "cpu") or a ``cupy.ndarray``
(device "cuda"). Code that works on raw arrays asks ``get_array_module(x)`` for the module
``xp`` and writes ``xp.exp(x)``; the same line then runs on both devices.

CuPy is optional. It is imported lazily, the first time something asks about the GPU, and
any failure (not installed, no driver, no device) simply means "no CUDA": minitx then runs
on the CPU. Besides this module, only ``minitx.kernels`` imports CuPy.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

DEVICES = ("cpu", "cuda")

# dtypes minitx computes in: the ones NumPy, CuPy and PyTorch all have (and bfloat16, below).
# Floats are what gradients flow through; integers and bools carry indices, targets, masks and
# integer data (images as uint8, quantized values as int8).
_DTYPES = {name: np.dtype(name) for name in (
    "float16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "bool",
)}
DEFAULT_FLOAT = np.dtype(np.float32)

_cupy = None            # the cupy module once imported successfully
_cupy_checked = False   # whether we already tried
_default_device = None  # resolved lazily from MINITX_DEVICE


def _try_import_cupy():
    """Import CuPy once; return the module if a usable GPU is present, else None."""
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                _cupy = cupy
        except Exception:  # ImportError, CUDARuntimeError (no driver), ...: no GPU for us
            _cupy = None
    return _cupy


def cuda_available() -> bool:
    """True when CuPy imports and sees at least one GPU."""
    return _try_import_cupy() is not None


def resolve_dtype(dtype, op: str | None = None) -> np.dtype:
    """Turn 'float32', np.float32, np.dtype('float32') or a minitx dtype name into np.dtype; an
    unknown one is a TypeError naming ``op`` where given. A tensor or an array is no dtype (NumPy would
    read a tensor's, as it reads any object's ``.dtype``; PyTorch refuses it, as NumPy refuses an array).

    'bfloat16' is ml_dtypes' type (NumPy has none): mixed precision (minitx.amp) computes the
    products in it."""
    if dtype is None:
        return DEFAULT_FLOAT
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype]
    if isinstance(dtype, str) and dtype == "bfloat16" or getattr(dtype, "__name__", None) == "bfloat16":
        return bfloat16()
    try:
        resolved = None if hasattr(dtype, "shape") and not isinstance(dtype, (type, np.dtype)) else np.dtype(dtype)
    except TypeError:
        resolved = None
    if resolved is not None and resolved.name == "bfloat16":
        return resolved
    if resolved is None or resolved.name not in _DTYPES:
        raise TypeError(f"{op + ': ' if op else ''}unknown dtype {dtype!r}; expected one of {dtype_names()}")
    return resolved.newbyteorder("=")  # ('>f4' is float32 too: a tensor's dtype compares equal to minitx.float32)


def bfloat16() -> np.dtype:
    """The bfloat16 dtype: float32's 8 exponent bits and 8 of its mantissa bits (ml_dtypes)."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError("bfloat16 needs ml_dtypes: pip install ml_dtypes (it is in minitx's test and cuda "
                          "extras)") from None
    return np.dtype(ml_dtypes.bfloat16)


def holds(dtype) -> bool:
    """Whether a Tensor keeps arrays of ``dtype`` as they are (``_DTYPES`` and bfloat16), in the
    machine's byte order: a big-endian float32 ('>f4') is not float32 to ``==``, to DLPack (which
    refuses to export it) or to the kernels, so it is copied (``tensor``) or refused, as PyTorch's."""
    dtype = np.dtype(dtype)
    return (dtype.name in _DTYPES or dtype.name == "bfloat16") and dtype.isnative


def byte_order_hint(dtype) -> str:
    """What to add to a refusal of an array whose dtype differs from one a Tensor holds only in
    its byte order (data read from a big-endian file, say), else ''."""
    dtype = np.dtype(dtype)
    if dtype.isnative or not holds(dtype.newbyteorder("=")):
        return ""
    return (f" ({dtype.str} is {dtype.name} in the other byte order: minitx.tensor(array) copies it into this "
            "machine's, as array.astype(array.dtype.newbyteorder('=')) does)")


def dtype_names() -> str:
    """The dtypes a Tensor holds, for error messages."""
    return ", ".join(list(_DTYPES) + ["bfloat16"])


def rounded(value, dtype) -> float:
    """The Python number ``value`` as ``dtype`` holds it (inf past its range, 0 below its smallest
    subnormal), as a Python float; computed on the host, silently (it is the answer, not an error)."""
    with np.errstate(all="ignore"):
        return float(np.asarray(float(value), dtype=dtype))


def is_floating(dtype) -> bool:
    """Whether arrays of ``dtype`` carry gradients: float16/32/64, and bfloat16 (whose NumPy
    kind is 'V', not 'f')."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype.name == "bfloat16"


def can_cast(from_, to) -> bool:
    """Whether values of dtype ``from_`` may be written into an array of dtype ``to`` (in-place ops,
    ``x[i] = v``, ``masked_fill``): any float into any float (bfloat16 and float16 too, which
    ml_dtypes' casting rules do not allow), else NumPy's 'same_kind' rule: no float into integers,
    no number into booleans, and no signed integer into an unsigned one (PyTorch allows that)."""
    from_, to = np.dtype(from_), np.dtype(to)
    return (is_floating(from_) and is_floating(to)) or bool(np.can_cast(from_, to, casting="same_kind"))


def address(array) -> int:
    """The address of ``array``'s first element: host memory for NumPy's, device memory for CuPy's."""
    return array.__array_interface__["data"][0] if isinstance(array, np.ndarray) else array.data.ptr


def offset_in_base(array, function: str) -> int:
    """How many entries past the start of the memory it views ``array`` begins (a tensor's
    storage_offset): the memory of the array it is a view of, through NumPy's or CuPy's ``base``,
    else its own (0). A ValueError naming ``function`` where the distance is no whole number of
    entries (a view of the memory as another dtype)."""
    root = array
    while isinstance(getattr(root, "base", None), type(array)):
        root = root.base
    offset, rest = divmod(address(array) - address(root), array.itemsize)
    if rest:
        raise ValueError(f"{function}: the tensor starts {address(array) - address(root)} bytes into its memory, no "
                         f"whole number of {array.itemsize}-byte entries")
    return offset


def check_device(device, op: str | None = None) -> str:
    """Validate a device name ('cpu', 'cuda', 'cuda:0' is accepted as 'cuda'); an unknown one is a
    ValueError naming ``op`` where given."""
    if device is None:
        return default_device()
    name = str(device)
    if name.startswith("cuda:"):
        if name != "cuda:0":
            raise ValueError(f"{op + ': ' if op else ''}unknown device {device!r}; minitx uses one GPU: 'cuda' "
                             "(or 'cuda:0')")
        name = "cuda"
    if name not in DEVICES:
        raise ValueError(f"{op + ': ' if op else ''}unknown device {device!r}; expected 'cpu' or 'cuda'")
    if name == "cuda" and not cuda_available():
        raise RuntimeError(f"device {str(device)!r} requested but CuPy with a GPU is not available; "
                           "install minitx[cuda12] or minitx[cuda13] on a machine with a GPU, or use 'cpu'")
    return name


def resolve_device(name: str) -> str:
    """A device option as the command lines take it: 'auto' is the GPU when one is usable, else
    the CPU; any other name is checked by check_device."""
    if name == "auto":
        return "cuda" if cuda_available() else "cpu"
    return check_device(name)


def default_device() -> str:
    """The device new tensors go to: set_default_device(), else $MINITX_DEVICE, else 'cpu'.

    MINITX_DEVICE may be 'cpu', 'cuda' or 'auto' ('cuda' when a GPU is usable, else 'cpu').
    """
    global _default_device
    if _default_device is None:
        wanted = os.environ.get("MINITX_DEVICE", "cpu").strip().lower() or "cpu"
        if wanted == "auto":
            wanted = "cuda" if cuda_available() else "cpu"
        _default_device = check_device(wanted)
    return _default_device


def set_default_device(device: str) -> None:
    """Set the device that minitx.tensor() and the layers use when none is given ('auto' allowed)."""
    global _default_device
    if device == "auto":
        device = "cuda" if cuda_available() else "cpu"
    _default_device = check_device(device, "set_default_device")


def sum_rows(a):
    """sum_r a[r, :] of a 2-D array [rows, cols]: a bias gradient, the bias being added to every
    row. On CuPy it is the product ones[1, rows] @ a, which cuBLAS computes at memory speed,
    where CuPy's own reduction over axis 0 is several times slower (the profile is in
    results/README.md). A TF32 product would round every element of a to 10 mantissa bits
    first, so minitx.blas computes it in float32 even when TF32 is on, in eager and captured
    steps alike (so both give the same bits); without minitx.blas (no nvmath-python) CuPy's
    product follows the switch, and under TF32 CuPy sums instead. NumPy sums.

    A bfloat16 or float16 array is summed in float32 and rounded once: cuBLAS's product reads it as
    it is (16-bit products accumulate in float32), the other ways sum a float32 copy."""
    from minitx import blas  # minitx.blas reads backend's TF32 switch

    xp = get_array_module(a)
    product = xp is not np and a.ndim == 2
    if product and blas.supported(a):
        return blas.matmul(xp.ones((1, a.shape[0]), dtype=a.dtype), a, tf32=False).reshape(a.shape[1])
    if a.dtype.itemsize == 2 and is_floating(a.dtype):
        return sum_rows(a.astype(np.float32)).astype(a.dtype)
    if not product or tf32_allowed():
        return a.sum(axis=0)
    return (xp.ones((1, a.shape[0]), dtype=a.dtype) @ a).reshape(a.shape[1])


def _one_pass(a, b):
    """Whether NumPy's BLAS and einsum serve sum_last/mean_last/sum_dot for a (and b): float32 or
    float64 arrays of one dtype and shape, on the CPU, their last axis not empty."""
    return type(a) is np.ndarray and a.dtype in (np.float32, np.float64) and a.shape[-1:] != (0,) \
        and (b is None or (type(b) is np.ndarray and b.dtype == a.dtype and b.shape == a.shape))


def sum_last(a, b=None):
    """The sum over the last axis of a, or of a * b (b shaped like a), that axis dropped.

    On NumPy, for float32 and float64, each row is read once and no temporary is made: the sum is
    a matrix-vector product with ones (BLAS), the sum of a * b einsum's sum of products. NumPy's
    own reduction over a short last axis runs row by row, and a * b would be an array of its own:
    both several times slower (a layer norm's rows of 256, attention's of 32, a cross-entropy's
    of 5,000). The terms are added in another order than NumPy's, so the last bit may differ.
    Elsewhere: the expression."""
    return _row_sums(a, b) if _one_pass(a, b) else (a if b is None else a * b).sum(axis=-1)


def mean_last(a, b=None):
    """The mean over the last axis of a, or of a * b: :func:`sum_last` / n (a 16-bit array's
    mean, through NumPy's, is taken in float32). Over a last axis of length 0 it is NumPy's
    0 / 0 = NaN, without NumPy's warning: rows of no values have no statistics, and say so."""
    if _one_pass(a, b):
        return _row_sums(a, b) / a.shape[-1]
    values = a if b is None else a * b
    if a.shape[-1:] == (0,):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice"
            return values.mean(axis=-1)
    return values.mean(axis=-1)


def _row_sums(a, b):
    """sum_last's one pass: a product with ones (BLAS), or einsum's sum of products."""
    return a @ np.ones(a.shape[-1], a.dtype) if b is None else np.einsum("...i,...i->...", a, b)


def sum_dot(a, b, axes):
    """sum of a * b over ``axes`` (a tuple of all the leading axes, or of none), both shaped alike:
    a weight's gradient summed over the rows (layer norm's dw = sum of dy * xhat), in one pass
    without the product's array where :func:`sum_last` makes one, else the expression."""
    if not (_one_pass(a, b) and axes == tuple(range(a.ndim - 1))):
        return (a * b).sum(axis=axes)
    rows = (-1, a.shape[-1])
    return np.einsum("ri,ri->i", a.reshape(rows), b.reshape(rows))


# ---------------------------------------------------------------- reading the device from the host

_host_reads = [0]  # calls of to_host since import (a list: one mutable cell)


def to_host(array) -> np.ndarray:
    """The one way minitx reads an array back to the host (NumPy).

    On the GPU every such read waits for all queued work to finish: a *host synchronisation*,
    which stalls the launch queue, and which a captured CUDA graph cannot contain at all. So
    each read goes through here and is counted (on every device, so that a test on the CPU
    sees the same count as the GPU would): ``count_host_reads()`` tells how many a piece of
    code makes, and the training step is held to zero.
    """
    _host_reads[0] += 1
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy.asnumpy(array)
    return np.asarray(array)


class count_host_reads:
    """``with count_host_reads() as reads: ...; reads.count`` is the number of ``to_host``
    calls made inside the block."""

    def __enter__(self):
        self._start = _host_reads[0]
        self.count = 0
        return self

    def __exit__(self, *exc):
        self.count = _host_reads[0] - self._start
        return False


def host_ints(*values) -> list:
    """Integer 0-d arrays (results of reductions) as Python ints, with ONE device-to-host copy:
    on the GPU each int(value) would wait for the device separately."""
    xp = get_array_module(values[0])
    return to_host(xp.stack([xp.asarray(v, dtype=np.int64) for v in values])).tolist()


def get_array_module(array):
    """numpy for numpy arrays (and Python scalars), cupy for cupy arrays."""
    if not _cupy_checked and type(array).__module__.startswith("cupy"):
        # a cupy array made before minitx looked for a GPU (user code ran cupy.ones(3) first):
        # import cupy now, or the array would be taken for a numpy one
        _try_import_cupy()
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy
    return np


def device_of(array) -> str:
    return "cuda" if get_array_module(array) is not np else "cpu"


def xp_for(device: str):
    """The array module of a device name."""
    if check_device(device) == "cuda":
        return _cupy
    return np


def to_device(array, device: str):
    """Move a raw array to 'cpu' or 'cuda' (no copy when it is already there)."""
    device = check_device(device)
    if device == "cuda":
        return _cupy.asarray(array)
    if device_of(array) == "cuda":
        return to_host(array)
    return np.asarray(array)


def to_numpy(array) -> np.ndarray:
    return to_device(array, "cpu")


def allow_tf32(flag: bool = True) -> None:
    """Let CuPy's float32 matrix products (matmul, dot, the Linear and attention products) run
    on TF32 tensor cores (GPUs of compute capability >= 8.0), or stop them (flag=False).

    TF32 keeps float32's 8-bit exponent but rounds the inputs of each product to a 10-bit
    mantissa, about 1e-3 relative error per product (sums still accumulate in float32), for
    several times the float32 matmul throughput. Training is usually unaffected; results are no
    longer bit-comparable with the CPU. float64 is not affected, nor are the hand-written kernels
    but attention on the tensor cores, where it is chosen (minitx.kernels.attention_mma).
    Off by default, as in CuPy.

    How: CuPy decides the cuBLAS compute type of float32 once, at the first float32 product,
    from the environment variable CUPY_TF32 (cupy/_core/_routines_linalg.pyx,
    ``get_compute_type``), and caches it. So this sets CUPY_TF32 (enough when no product has
    run yet) and, when CuPy is already imported, also sets the cached compute type with
    ``set_compute_type`` (which falls back to the default, with a warning, on older GPUs).
    """
    os.environ["CUPY_TF32"] = "1" if flag else "0"
    if _try_import_cupy() is None:  # not just `_cupy`: CuPy may be in use before minitx looked
        return
    try:
        from cupy._core import _routines_linalg as linalg
    except ImportError:  # a CuPy without this internal module: the variable alone must do
        return
    if hasattr(linalg, "set_compute_type"):
        linalg.set_compute_type(np.float32, _cupy_compute_type(linalg, flag))


def tf32_allowed() -> bool:
    """Whether float32 products may use TF32: CuPy's cached choice when available, else CUPY_TF32."""
    if _try_import_cupy() is not None:
        try:
            from cupy._core import _routines_linalg as linalg

            return linalg.get_compute_type(np.float32) == _cupy_compute_type(linalg, True)
        except (ImportError, AttributeError):
            pass
    return os.environ.get("CUPY_TF32", "0").strip() not in ("", "0")


def _cupy_compute_type(linalg, tf32: bool) -> int:
    """CuPy's COMPUTE_TYPE_TF32 / COMPUTE_TYPE_DEFAULT (7 and 1 in its source, should the enum
    not be visible from Python)."""
    return getattr(linalg, "COMPUTE_TYPE_TF32", 7) if tf32 else getattr(linalg, "COMPUTE_TYPE_DEFAULT", 1)


# ------------------------------------------------------------ deterministic algorithms
# minitx's own GPU kernels (minitx.kernels) sum without atomics, so in a fixed order; the one
# place minitx knows to sum in no fixed order is a floating-point scatter-add on the GPU
# (ops/indexing.ufunc_at through cupyx.scatter_add: scatter_add, index_add, embedding_bag, and
# the backward of x[index], gather and the other index ops, in float16, float32 and float64;
# not embedding's backward where its sorted kernel serves), which adds by atomics as the
# threads arrive: its last bits may vary from run to run. (cuBLAS and CuPy's reductions are
# taken as their documentation states them, unchecked here.) On the CPU, NumPy's add.at adds
# in index order.
_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """PyTorch's ``torch.use_deterministic_algorithms``: with ``mode`` True, an op that would
    compute nondeterministically (on the GPU, a floating-point scatter-add: see above) raises a
    RuntimeError, or with ``warn_only`` warns and goes on."""
    for name, flag in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(flag, bool):
            raise TypeError(f"use_deterministic_algorithms: {name} must be True or False, got {flag!r}")
    _deterministic.update(mode=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether use_deterministic_algorithms(True) is in force (PyTorch's name)."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The warn_only last given to use_deterministic_algorithms (PyTorch's name; it answers so too)."""
    return _deterministic["warn_only"]


def check_deterministic(what: str) -> None:
    """Say, as use_deterministic_algorithms asked, that ``what`` is about to compute
    nondeterministically: a RuntimeError, or a warning under warn_only; nothing when it is off."""
    if not _deterministic["mode"]:
        return
    message = (f"{what} does not compute deterministically (its sum's order varies from run to run), and "
               "minitx.use_deterministic_algorithms(True) is on; compute it on the CPU, or pass warn_only=True "
               "to be warned only")
    if _deterministic["warn_only"]:
        warnings.warn(message, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(message)
