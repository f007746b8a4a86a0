"""Kernel registry, source loading and the two launch back ends.

Every launcher (the Python module beside each ``.cu`` file, e.g. ``softmax.py``
next to ``softmax.cu``) is written once against a tiny back-end interface (``xp``, ``empty``, ``launch``, ``pointer_array`` ...):

* :class:`CupyBackend` -- the real thing.  Compiles a ``.cu`` file with
  ``cupy.RawModule(code=..., options=..., name_expressions=[...])`` lazily, once
  per (file, dtype) (and compile-time size, for the kernels that have one), and launches
  ``kernel<float>``, ``kernel<double>`` or ``kernel<mtx::bfloat16>`` (``kernel<float, 64>``).
* ``CpuBackend`` (in :mod:`minitx.kernels.cpu_harness`) -- compiles the *same*
  ``.cu`` file with g++ against ``cpu_compat.h`` and runs it on the CPU.  It
  is chosen automatically when the launcher is given NumPy arrays (tests only:
  it is slow) and checks the argument types against the kernel signature,
  which also validates what the CuPy path would pass.

Nothing here imports CuPy at module import time.
"""
from __future__ import annotations

import importlib
import re
import threading
from pathlib import Path

import numpy as np

KERNEL_DIR = Path(__file__).resolve().parent

#: Every .cu file in this directory and the templated kernels it defines.
#: Each kernel is instantiated for every type of CTYPES (or of the file's own CTYPES, for a
#: file whose kernels take fewer: :func:`instantiated_ctypes`).  The compile check
#: in tests/kernels fails if a .cu file is missing from this table, and the one
#: beside it if the README's table or ``minitx.kernels.__all__`` disagree with it.
KERNELS: dict[str, tuple[str, ...]] = {
    "softmax.cu": ("softmax_forward", "softmax_backward"),
    "layer_norm.cu": (
        "layer_norm_forward",
        "layer_norm_backward_dx",
        "layer_norm_backward_dwdb_partial",
        "layer_norm_backward_dwdb_reduce",
    ),
    "cross_entropy.cu": ("cross_entropy_forward", "cross_entropy_backward"),
    "attention.cu": (
        "attention_forward",
        "attention_backward_delta",
        "attention_backward_dkdv",
        "attention_backward_dq",
        "attention_backward_onepass",
    ),
    "attention_mma.cu": ("attention_mma_forward", "attention_mma_backward_dkdv", "attention_mma_backward_dq"),
    "dropout.cu": (
        "dropout_add_forward",
        "dropout_mask_apply",
        "bias_act_dropout_forward",
        "bias_act_dropout_backward",
    ),
    "adam.cu": ("adam_step", "sumsq_partial", "sumsq_finalize", "nonfinite_partial", "scale_inplace"),
    "embedding.cu": ("embedding_backward",),
}

#: The kernels' template argument T for each storage dtype (by NumPy name).  bfloat16 is
#: ml_dtypes' type on the host and common.cuh's 16-bit mtx::bfloat16 in the kernels, which
#: compute in float (mtx::compute_t); keyed by name, so that no import of ml_dtypes is needed.
CTYPE = {"float32": "float", "float64": "double", "bfloat16": "mtx::bfloat16"}
#: The types every kernel of KERNELS is instantiated for (the ladder's rungs: PLAIN_CTYPES).
CTYPES = tuple(CTYPE.values())
PLAIN_CTYPES = ("float", "double")
#: The storage dtypes the launchers take (float arrays of one call share one of them).
STORAGE_DTYPES = tuple(CTYPE)
#: The dtypes the kernels compute in: float32 and float64 (bfloat16 is computed in float32).
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def compute_dtype(dtype) -> np.dtype:
    """The dtype a kernel of storage ``dtype`` computes in, and of the statistics and sums its
    contract keeps unrounded: float32 for bfloat16, the dtype itself otherwise."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.name == "bfloat16" else dtype


def instantiated_ctypes(path) -> tuple[str, ...]:
    """The template arguments the kernels of the .cu file at ``path`` are instantiated for:
    for the files of KERNELS, the ``CTYPES`` of the Python module beside it where it has one
    (attention_mma.cu: no double, the tensor cores take none), else CTYPES; float and double
    for any other file (the ladder's rungs)."""
    path = Path(path).resolve()
    if path.parent != KERNEL_DIR or path.name not in KERNELS:
        return PLAIN_CTYPES
    module = importlib.import_module(f"{__package__}.{path.stem}")
    return tuple(getattr(module, "CTYPES", CTYPES))

#: NVRTC options used by the CuPy back end (CuPy adds -arch itself).
NVRTC_OPTIONS = ("--std=c++17",)

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*$', re.M)


def load_source(filename: str) -> str:
    """Return the .cu source with local ``#include "x.cuh"`` lines pasted in.

    NVRTC gets one self-contained string (so CuPy's source-keyed compile cache
    also sees header edits).  ``#pragma once`` headers are pasted only once.
    """
    seen: set[Path] = set()

    def expand(path: Path) -> str:
        text = path.read_text()

        def repl(m: re.Match) -> str:
            inc = (path.parent / m.group(1)).resolve()
            if inc in seen:
                return f"// (already included: {m.group(1)})"
            seen.add(inc)
            return f"// ---- begin {m.group(1)} ----\n{expand(inc)}\n// ---- end {m.group(1)} ----"

        return _INCLUDE_RE.sub(repl, text)

    return expand(KERNEL_DIR / filename)


def _launcher_fact(filename: str, name: str) -> dict:
    """The dict ``name`` of the Python module beside a registered .cu file (its launchers), or
    {} (a file not in KERNELS, or a module without it)."""
    if filename not in KERNELS:
        return {}
    module = importlib.import_module(f"{__package__}.{Path(filename).stem}")
    return dict(getattr(module, name, {}))


def compile_defines(filename: str) -> dict[str, int]:
    """Macros a registered .cu file is compiled with: the ``DEFINES`` of the Python module
    beside it (``attention.py`` gives ``attention.cu`` its tile sizes and thread count), so
    that the launcher and the kernel read each such fact from one place.  Every compiler gets
    them: NVRTC through CuPy, g++ for the CPU build, nvcc in the tests."""
    return _launcher_fact(filename, "DEFINES")


def compile_sizes(filename: str) -> dict[str, tuple[int, ...]]:
    """The kernels of a registered .cu file that take a compile-time size as their second
    template argument, each with the sizes it is compiled for: the ``SIZES`` of the Python
    module beside it (attention's head-dim classes). A launch names its size (``size=``)."""
    return _launcher_fact(filename, "SIZES")


def define_flags(filename: str) -> list[str]:
    """``compile_defines(filename)`` as ``-DNAME=value`` compiler options."""
    return [f"-D{k}={v}" for k, v in compile_defines(filename).items()]


def instantiation(kernel: str, ctype: str, size: int | None = None) -> str:
    """The C++ name of one compiled kernel: ``k<ctype>``, or ``k<ctype, size>``."""
    return f"{kernel}<{ctype}>" if size is None else f"{kernel}<{ctype}, {size}>"


def instantiations(filename: str, ctype: str, kernels=None) -> list[tuple[str, int | None]]:
    """(kernel, size) of every kernel of a file (given, or those of KERNELS) compiled for
    ``ctype``: size None for a kernel templated on its type alone, else one pair per size of
    :func:`compile_sizes`."""
    sizes = compile_sizes(filename)
    return [(k, size) for k in (kernels or KERNELS[filename]) for size in sizes.get(k, (None,))]


def name_expressions(filename: str, ctype: str, kernels=None) -> list[str]:
    """The C++ names of a file's kernels for ``ctype`` (:func:`instantiation` of each)."""
    return [instantiation(k, ctype, size) for k, size in instantiations(filename, ctype, kernels)]


def check_size(filename: str, kernel: str, size) -> None:
    """A ValueError unless ``size`` is one the kernel is compiled for (None for a kernel
    templated on its type alone)."""
    sizes = compile_sizes(filename).get(kernel)
    if (size is not None) if sizes is None else (size not in sizes):
        raise ValueError(f"{filename}: {kernel} takes " + (f"size= one of {sizes}" if sizes else "no size=")
                         + f", got size={size!r}")


def ctype_of(dtype) -> str:
    try:
        return CTYPE[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"fused kernels support {', '.join(STORAGE_DTYPES)}, got {np.dtype(dtype)}") from None


def is_cupy_array(a) -> bool:
    return type(a).__module__.split(".", 1)[0] == "cupy"


def check_kernel_args(args, strided=False) -> None:
    """Arguments must be arrays (C-contiguous, unless the kernel reads them through strides it
    is given: ``strided``), None (NULL) or NumPy scalars.

    Plain Python numbers are refused: CuPy would silently pass them as 64-bit
    values, which does not match ``int``/``float`` kernel parameters.
    """
    for i, a in enumerate(args):
        if a is None or isinstance(a, np.generic):
            continue
        if hasattr(a, "flags") and hasattr(a, "dtype"):
            if not (a.flags.c_contiguous or strided):
                raise ValueError(f"kernel argument {i} is not C-contiguous")
            continue
        raise TypeError(f"kernel argument {i} has type {type(a).__name__}; pass a numpy scalar")


class CupyBackend:
    """Launches kernels on the current CUDA device through CuPy."""

    name = "cupy"

    def __init__(self):
        import cupy  # noqa: PLC0415 (lazy by design)

        self.xp = cupy
        self._lock = threading.Lock()
        self._modules: dict[tuple, object] = {}
        self._functions: dict[tuple, object] = {}
        self.pointer_tables: dict[tuple, tuple] = {}  # addresses -> (device table, its pinned source)
        self._pinned, self._pinned_used = None, 0  # the block pointer tables' pinned sources are cut from

    # -- compilation -------------------------------------------------------
    def module(self, filename: str, dtype, kernels=None, size=None):
        """The file compiled for one dtype: the kernels of that size only (None: those without
        one), so a run compiles the head-dim classes it uses, not all of them."""
        ctype = ctype_of(dtype)
        key = (filename, ctype, size)
        mod = self._modules.get(key)
        if mod is None:
            with self._lock:
                mod = self._modules.get(key)
                if mod is None:
                    mod = self.xp.RawModule(
                        code=load_source(filename),
                        options=(*NVRTC_OPTIONS, *define_flags(filename)),
                        name_expressions=[instantiation(k, ctype, s)
                                          for k, s in instantiations(filename, ctype, kernels) if s == size],
                    )
                    self._modules[key] = mod
        return mod

    def function(self, filename: str, kernel: str, dtype, kernels=None, size=None):
        ctype = ctype_of(dtype)
        key = (filename, kernel, ctype, size)
        fn = self._functions.get(key)
        if fn is None:
            check_size(filename, kernel, size)
            fn = self.module(filename, dtype, kernels, size).get_function(instantiation(kernel, ctype, size))
            self._functions[key] = fn
        return fn

    # -- launching ---------------------------------------------------------
    def launch(self, filename, kernel, dtype, grid, block, args, *, kernels=None, strided=False, size=None):
        """Launch ``kernel<T>`` of ``filename`` (a path below this directory), or
        ``kernel<T, size>`` for a kernel of :func:`compile_sizes`; ``kernels`` lists the file's
        kernels when it is not in KERNELS (the ladder's rungs); ``strided``: the kernel reads
        its arrays through strides it is given (any layout may go in)."""
        check_kernel_args(args, strided)
        fn = self.function(filename, kernel, dtype, kernels, size)
        # NULL pointers go as an 8-byte zero (portable across CuPy versions).
        packed = tuple(np.uint64(0) if a is None else a for a in args)
        fn(tuple(int(g) for g in grid), tuple(int(b) for b in block), packed)

    # -- memory helpers ----------------------------------------------------
    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype=dtype)

    def pointer(self, a) -> int:
        return int(a.data.ptr)

    POINTER_TABLES_KEPT = 1024  # more than a run's few steps' worth: start over

    def pointer_array(self, arrays):
        """The arrays' addresses as a uint64 device array (a multi-tensor kernel's argument):
        one table per list of addresses, kept with the pinned host words it is copied from.
        Every use copies the words in again, in stream order: the one kind of copy a CUDA graph
        capture may hold (a node that reads the pinned words at each replay), and the table may
        lie in memory that a graph's replay wrote its own temporaries into since (the graphs of
        a run share one memory pool), so no use may trust what was copied before. Whoever keeps
        a graph keeps the tables it captured (``pointer_tables``)."""
        key = tuple(self.pointer(a) for a in arrays)
        entry = self.pointer_tables.get(key)
        if entry is None:
            if len(self.pointer_tables) >= self.POINTER_TABLES_KEPT:
                self.pointer_tables.clear()
            pinned = self._pinned_words(len(key))
            pinned[:] = key
            entry = self.pointer_tables[key] = (self.xp.empty(len(key), dtype=np.uint64), pinned)
        table, pinned = entry
        # cudaMemcpyAsync itself: CuPy's set refuses every copy while a stream captures
        runtime = self.xp.cuda.runtime
        runtime.memcpyAsync(table.data.ptr, pinned.ctypes.data, table.nbytes, runtime.memcpyHostToDevice,
                            self.xp.cuda.get_current_stream().ptr)
        return table

    PINNED_BLOCK = 1 << 17  # uint64 words (1 MiB) of pinned memory allocated at a time

    def reserve_pinned(self, words: int = PINNED_BLOCK // 2) -> None:
        """Make sure ``words`` pinned words can be handed out without allocating: done before a
        capture, which must not allocate pinned memory (cudaHostAlloc may wait for the device)."""
        if self._pinned is None or self._pinned_used + words > len(self._pinned):
            import cupyx  # noqa: PLC0415

            self._pinned = cupyx.empty_pinned(max(self.PINNED_BLOCK, words), dtype=np.uint64)
            self._pinned_used = 0

    def _pinned_words(self, n: int):
        """n uint64 words of pinned host memory, cut from the current block (a slice keeps its
        block alive)."""
        self.reserve_pinned(n)
        words = self._pinned[self._pinned_used:self._pinned_used + n]
        self._pinned_used += n
        return words

    def to_device(self, host_array):
        return self.xp.asarray(host_array)


_cupy_backend = None
_cupy_lock = threading.Lock()


def cupy_backend() -> CupyBackend:
    global _cupy_backend
    if _cupy_backend is None:
        with _cupy_lock:
            if _cupy_backend is None:
                _cupy_backend = CupyBackend()
    return _cupy_backend


def backend_for(*arrays):
    """CuPy back end for CuPy arrays, the CPU emulation for NumPy arrays.

    None, Python numbers, NumPy scalars and lists are ignored when choosing.
    """
    kinds = set()
    for a in arrays:
        if a is None or isinstance(a, (int, float, bool, np.generic, list, tuple)):
            continue
        if is_cupy_array(a):
            kinds.add("cupy")
        elif isinstance(a, np.ndarray):
            kinds.add("numpy")
        else:
            raise TypeError(f"unsupported array type for fused kernels: {type(a).__name__}")
    if kinds == {"cupy"}:
        return cupy_backend()
    if len(kinds) > 1:
        raise TypeError("fused kernels got a mix of CuPy and NumPy arrays")
    from . import cpu_harness  # noqa: PLC0415

    return cpu_harness.cpu_backend()
