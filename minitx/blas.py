"""Matrix products through cuBLAS called directly: products a captured CUDA graph can contain.

CuPy's ``a @ b`` calls cuBLAS too, but its wrapper raises while the stream is capturing (CuPy
issue 6290), so a training step that multiplies matrices cannot be captured through it. cuBLAS
itself can be captured once it has a workspace it need not allocate (``cublasSetWorkspace``).
This module calls ``cublasGemmStridedBatchedEx`` through nvmath-python's thin binding
(``nvmath.bindings.cublas``, an optional dependency of the GPU extras), on the current stream.
It is off unless asked for (``use_cublas(True)`` or ``MINITX_BLAS=cublas``); ops then call
:func:`product`, which falls back to ``a @ b`` wherever the call does not apply.

Layout. cuBLAS reads matrices column-major, minitx's arrays are row-major. A row-major matrix
X [r, c] whose rows are ``ld`` elements apart (strides (ld, 1)) is, read column-major, X^T [c, r]
with leading dimension ld. So the row-major product C = A @ B, with C [n, m] contiguous, is the
column-major product

    C^T [m, n] = B^T [m, k] @ A^T [k, n]          (cuBLAS's A is our B, its B our A)

An operand that is a transposed view (strides (1, ld)) is already X^T read row-major: it enters
with op = T instead of being copied. Batch axes become one batch stride (0 for an operand
broadcast over them). :func:`gemm_plan` works all of this out from shapes and strides;
:func:`emulate_gemm` runs a plan with NumPy as cuBLAS runs it, so the plans are tested on any
machine, and only the call itself needs a GPU.
"""
from __future__ import annotations

import contextlib
import os
from typing import NamedTuple

import numpy as np

OP_N, OP_T = 0, 1  # cublasOperation_t
_CUDA_TYPES = {"float16": 2, "float32": 0, "float64": 1, "bfloat16": 14}  # cudaDataType_t
_GEMM_DEFAULT = -1  # cublasGemmAlgo_t: cuBLAS's heuristic choice
WORKSPACE_BYTES = 32 * 2**20  # what NVIDIA's cuBLAS guide asks for on Hopper


class Operand(NamedTuple):
    """How one operand enters the call, from its first element (its data pointer): op (OP_N or
    OP_T), leading dimension and batch stride, in elements."""
    op: int
    ld: int
    batch_stride: int


class GemmPlan(NamedTuple):
    """The arguments of cublasGemmStridedBatchedEx for the row-major C = A @ B (see the module
    docstring): cuBLAS's first operand is our B, its second our A."""
    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    stride_a: int
    ldb: int
    stride_b: int
    ldc: int
    stride_c: int
    batch: int


def _matrix_operand(rows: int, cols: int, strides: tuple) -> tuple | None:
    """(op, ld) of a row-major matrix [rows, cols] with element strides (sr, sc), read as the
    column-major X^T cuBLAS needs; None when no leading dimension describes it (a copy will).
    The stride of an axis of length 1 is never used, so it may be anything."""
    sr, sc = strides
    if cols == 1:
        sc = 1
    if rows == 1:
        sr = max(cols, 1) if sc == 1 else 1
    if sc == 1 and sr >= max(cols, 1):
        return OP_N, sr
    if sr == 1 and sc >= max(rows, 1):  # a transposed view: column-major as it stands
        return OP_T, sc
    return None


def _batch_stride(shape: tuple, strides: tuple) -> int | None:
    """One stride that walks every batch index in row-major order, or None when there is
    none (then the operand is copied). Axes of length 1 are skipped; a fully broadcast batch
    has stride 0."""
    axes = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if not axes:
        return 0
    if all(s == 0 for _, s in axes):
        return 0
    stride = axes[-1][1]
    expected = stride
    for n, s in reversed(axes):
        if s != expected:
            return None
        expected = s * n
    return stride


def operand_layout(shape: tuple, strides: tuple, batch: tuple) -> Operand | None:
    """How an operand of ``shape`` and element ``strides``, broadcast over ``batch``, enters the
    call; None when it must be made contiguous first."""
    if any(s < 0 for s in strides):
        return None
    lead = len(batch) - (len(shape) - 2)
    b_shape = (1,) * lead + tuple(shape[:-2])
    b_strides = (0,) * lead + tuple(strides[:-2])
    b_strides = tuple(0 if n == 1 and want != 1 else s
                      for n, s, want in zip(b_shape, b_strides, batch))
    matrix = _matrix_operand(shape[-2], shape[-1], strides[-2:])
    batch_stride = _batch_stride(batch, b_strides)
    if matrix is None or batch_stride is None:
        return None
    return Operand(*matrix, batch_stride)


def gemm_plan(a: Operand, b: Operand, n: int, k: int, m: int, batch: int) -> GemmPlan:
    """The call for C [batch, n, m] = A [batch, n, k] @ B [batch, k, m], C contiguous."""
    return GemmPlan(transa=b.op, transb=a.op, m=m, n=n, k=k, lda=b.ld, stride_a=b.batch_stride,
                    ldb=a.ld, stride_b=a.batch_stride, ldc=m, stride_c=n * m, batch=batch)


def emulate_gemm(plan: GemmPlan, first, second, out) -> None:
    """Run ``plan`` with NumPy as cuBLAS would, on flat 1-D arrays holding cuBLAS's A (``first``,
    our B) and B (``second``, our A) from their first elements, writing ``out`` (flat, C's
    elements): column-major views with the plan's leading dimensions and batch strides, each
    product computed as the call's compute type does (float64 for float64, float32 otherwise)
    and rounded once to C's type."""
    wide = np.float64 if out.dtype == np.float64 else np.float32

    def view(flat, offset, rows, cols, ld):
        return np.lib.stride_tricks.as_strided(flat[offset:], shape=(rows, cols),
                                               strides=(flat.itemsize, ld * flat.itemsize))

    for i in range(plan.batch):
        a_rows, a_cols = (plan.m, plan.k) if plan.transa == OP_N else (plan.k, plan.m)
        b_rows, b_cols = (plan.k, plan.n) if plan.transb == OP_N else (plan.n, plan.k)
        a = view(first, i * plan.stride_a, a_rows, a_cols, plan.lda)
        b = view(second, i * plan.stride_b, b_rows, b_cols, plan.ldb)
        op_a = a if plan.transa == OP_N else a.T
        op_b = b if plan.transb == OP_N else b.T
        c = view(out, i * plan.stride_c, plan.m, plan.n, plan.ldc)
        c[...] = (op_a.astype(wide) @ op_b.astype(wide)).astype(out.dtype)


# ---------------------------------------------------------------------------- the switch

_use = [os.environ.get("MINITX_BLAS", "").strip().lower() == "cublas"]


@contextlib.contextmanager
def use_cublas(flag: bool = True):
    """Inside: products of CuPy arrays go through :func:`matmul` (capture-safe cuBLAS)."""
    before = _use[0]
    _use[0] = bool(flag)
    try:
        yield
    finally:
        _use[0] = before


def available() -> bool:
    """Whether nvmath-python's cuBLAS binding imports (the call itself needs a GPU as well)."""
    return _binding() is not None


def enabled(*arrays) -> bool:
    """Whether :func:`product` calls cuBLAS for these arrays: the switch is on and
    :func:`supported` says yes."""
    return _use[0] and supported(*arrays)


def supported(*arrays) -> bool:
    """Whether :func:`matmul` can multiply these arrays, switch or not: they are CuPy arrays of
    one supported float dtype with at least 2 dimensions, and nvmath-python imports."""
    if not arrays:
        return False
    dtype = arrays[0].dtype
    if dtype.name not in _CUDA_TYPES or any(a.dtype != dtype or a.ndim < 2 for a in arrays):
        return False
    return type(arrays[0]).__module__.split(".")[0] == "cupy" and available()


def product(a, b):
    """a @ b: through cuBLAS when :func:`enabled`, else the array module's own product."""
    return matmul(a, b) if enabled(a, b) else a @ b


# ---------------------------------------------------------------------------- the call (GPU)

_cublas = []       # [nvmath.bindings.cublas] once imported, [None] when it cannot be
_handles: dict = {}  # device -> [handle, stream it is bound to, workspace array]


def _binding():
    if not _cublas:
        try:
            from nvmath.bindings import cublas
        except (ImportError, OSError):  # not installed, or its CUDA libraries do not load
            cublas = None
        _cublas.append(cublas)
    return _cublas[0]


def _handle(cp, cublas):
    """This device's cuBLAS handle, bound to the current stream with a workspace of its own
    (cublasSetStream resets the workspace, so both are set together, and only when the stream
    changes: bind the capturing stream before capture begins)."""
    device = cp.cuda.runtime.getDevice()
    entry = _handles.get(device)
    if entry is None:
        workspace = cp.empty(WORKSPACE_BYTES, dtype=np.uint8)
        entry = _handles[device] = [cublas.create(), None, workspace]
    stream = cp.cuda.get_current_stream().ptr
    if entry[1] != stream:
        cublas.set_stream(entry[0], stream)
        cublas.set_workspace(entry[0], entry[2].data.ptr, WORKSPACE_BYTES)
        entry[1] = stream
    return entry[0]


def bind_to_current_stream() -> None:
    """Bind this device's cuBLAS handle (and its workspace) to the current stream now: before a
    capture begins, so that the captured products find it bound and change nothing of it."""
    import cupy as cp

    _handle(cp, _binding())


def _compute_type(cublas, dtype, tf32: bool) -> int:
    kinds = cublas.ComputeType
    if dtype.name == "float64":
        return int(kinds.COMPUTE_64F)
    if dtype.name == "float32" and tf32:
        return int(kinds.COMPUTE_32F_FAST_TF32)
    return int(kinds.COMPUTE_32F)  # float32, and the 16-bit types accumulate in float32


def prepared(xp, x, batch):
    """(x, its Operand), or a contiguous copy of x broadcast over ``batch`` and its Operand when
    x's strides fit no call (negative, crossed, or broadcast in part of the batch axes)."""
    layout = None
    if all(s % x.itemsize == 0 for s in x.strides):
        layout = operand_layout(x.shape, tuple(s // x.itemsize for s in x.strides), batch)
    if layout is None:
        x = xp.ascontiguousarray(xp.broadcast_to(x, batch + x.shape[-2:]))
        layout = operand_layout(x.shape, tuple(s // x.itemsize for s in x.strides), batch)
    return x, layout


def matmul(a, b, tf32=None):
    """a @ b for CuPy arrays of >= 2 dimensions (batch axes broadcast as in numpy.matmul), one
    cublasGemmStridedBatchedEx call on the current stream; float32 products on TF32 tensor cores
    when backend.allow_tf32 is on (``tf32`` None) or ``tf32`` is True, 16-bit ones accumulated in
    float32. ``tf32=False`` keeps a float32 product exact whatever the switch says: a sum written
    as a product (backend.sum_rows) must not round its terms. Returns a new contiguous array."""
    import cupy as cp

    from minitx.backend import tf32_allowed

    cublas = _binding()
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"blas.matmul: shapes {a.shape} and {b.shape} do not align: {a.shape[-1]} != {b.shape[-2]}")
    if a.dtype != b.dtype:
        raise TypeError(f"blas.matmul: operands of one dtype, got {a.dtype} and {b.dtype}")
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    c = cp.empty(batch + (n, m), dtype=a.dtype)
    if c.size == 0:
        return c
    if k == 0:
        c[...] = 0
        return c
    a, a_layout = prepared(cp, a, batch)
    b, b_layout = prepared(cp, b, batch)
    plan = gemm_plan(a_layout, b_layout, n, k, m, count)
    scalar = np.float64 if a.dtype.name == "float64" else np.float32
    alpha, beta = np.ones(1, scalar), np.zeros(1, scalar)  # host pointer mode: read at the call
    kind = _CUDA_TYPES[a.dtype.name]
    cublas.gemm_strided_batched_ex(
        _handle(cp, cublas), plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha.ctypes.data,
        b.data.ptr, kind, plan.lda, plan.stride_a, a.data.ptr, kind, plan.ldb, plan.stride_b,
        beta.ctypes.data, c.data.ptr, kind, plan.ldc, plan.stride_c, plan.batch,
        _compute_type(cublas, a.dtype, tf32_allowed() if tf32 is None else tf32), _GEMM_DEFAULT)
    return c
