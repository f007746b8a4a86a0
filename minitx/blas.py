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
def _switched(cell: list, flag: bool):
    """cell[0] = flag inside, as it was after."""
    before = cell[0]
    cell[0] = bool(flag)
    try:
        yield
    finally:
        cell[0] = before


def use_cublas(flag: bool = True):
    """Inside: products of CuPy arrays go through :func:`matmul` (capture-safe cuBLAS)."""
    return _switched(_use, flag)


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


# ---------------------------------------------------------------------------- a bias inside the product (cuBLASLt)
#
# A linear layer adds its bias to every row of x W^T, and its backward sums dy over the rows for
# the bias's gradient: each a pass of its own over a [rows, out] array (the output projection's is
# [tokens, vocabulary]). cuBLASLt, cuBLAS's configurable sibling, does both inside the product, in
# its epilogue (what the kernel does to the accumulators before it stores them):
#
#   BIAS    D = A B + bias, bias [m] added to every column of the column-major D [m, n]: for our
#           row-major C = A @ B (C^T = B^T A^T, see the module docstring) a vector over C's last
#           axis, added to every row: x W^T + b.
#   BGRADB  D = A B, and bias_out [n] = the sum of cuBLAS's B [k, n] over k: cuBLAS's B is our A,
#           so bias_out[i] = sum_k A[i, k], our A's row sums. In dW = dy^T @ x, A = dy^T: the
#           row sums of dy^T are db. cuBLASLt takes this epilogue with B transposed only, which
#           dy^T (a transposed view) is.
#
# The sum is added in the epilogue in float32 before the result's one rounding, as the separate
# add would (for float32; bfloat16 is rounded once instead of twice). cuBLASLt chooses its own
# kernel (a heuristic, asked once per shape and kept), so its bits need not be cublasGemmEx's: a
# step uses one or the other throughout (the switch below), and a captured step its eager twin's.
# The switch is off until a GPU has shown these calls right and faster (tests/test_blas_gpu.py,
# benchmarks/bench_train_step.py with MINITX_BLAS_EPILOGUES=1).

_cublaslt = []
_lt_handles: dict = {}   # device -> cuBLASLt handle
_lt_plans: dict = {}     # (device, dtype, tf32, plan, epilogue, alignments) -> _LtPlan, or None: no kernel
_EPILOGUES = ("bias", "bgradb")
_use_epilogues = [os.environ.get("MINITX_BLAS_EPILOGUES", "").strip() == "1"]


class _LtPlan(NamedTuple):
    """The descriptors of one cublasLtMatmul, kept (the heuristic's choice included)."""
    key: tuple  # its key in _lt_plans
    desc: int
    a_layout: int
    b_layout: int
    d_layout: int
    heuristic: object  # cublasLt.MatmulHeuristicResult: its first field is the algorithm the call takes


def use_epilogues(flag: bool = True):
    """Inside (with :func:`use_cublas` on): Linear adds its bias and sums its gradient inside its
    products, through cuBLASLt's epilogues (or ``MINITX_BLAS_EPILOGUES=1``)."""
    return _switched(_use_epilogues, flag)


def epilogues_on() -> bool:
    """Whether use_epilogues (or MINITX_BLAS_EPILOGUES=1) is in force."""
    return _use_epilogues[0]


def _lt_binding():
    if not _cublaslt:
        try:
            from nvmath.bindings import cublasLt
        except (ImportError, OSError):
            cublasLt = None
        _cublaslt.append(cublasLt)
    return _cublaslt[0]


def epilogue_plan(a_shape, a_strides, b_shape, b_strides, epilogue: str) -> GemmPlan | None:
    """The GemmPlan of a 2-D C = A @ B with ``epilogue`` ("bias" or "bgradb"), from the operands'
    shapes and element strides; None where the epilogue does not apply: an operand no leading
    dimension describes, or for "bgradb" an A that is not a transposed view (cuBLASLt sums its B,
    our A, only when it enters transposed); and a product with a dimension of 1 (a leading
    dimension of 1, which PyTorch keeps away from cuBLASLt too)."""
    if epilogue not in _EPILOGUES:
        raise ValueError(f"blas: unknown epilogue {epilogue!r}; expected one of {', '.join(_EPILOGUES)}")
    if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[1] != b_shape[0] or min(*a_shape, b_shape[1]) < 2:
        return None
    a = operand_layout(tuple(a_shape), tuple(a_strides), ())
    b = operand_layout(tuple(b_shape), tuple(b_strides), ())
    if a is None or b is None or (epilogue == "bgradb" and a.op != OP_T):
        return None
    return gemm_plan(a, b, a_shape[0], a_shape[1], b_shape[1], 1)


def emulate_epilogue(plan: GemmPlan, epilogue: str, first, second, out, bias) -> None:
    """:func:`emulate_gemm` with ``epilogue`` as cuBLASLt runs it: "bias" adds ``bias`` [m] to
    every column of the column-major D before the rounding; "bgradb" writes the sums of cuBLAS's
    B [k, n] over k into ``bias`` [n] (each in the compute type, rounded once)."""
    wide = np.float64 if out.dtype == np.float64 else np.float32
    b_rows, b_cols = (plan.k, plan.n) if plan.transb == OP_N else (plan.n, plan.k)
    b = np.lib.stride_tricks.as_strided(second, shape=(b_rows, b_cols),
                                        strides=(second.itemsize, plan.ldb * second.itemsize))
    op_b = b if plan.transb == OP_N else b.T
    if epilogue == "bgradb":
        emulate_gemm(plan, first, second, out)
        bias[...] = op_b.astype(wide).sum(axis=0).astype(bias.dtype)
        return
    exact = np.empty(out.size, wide)
    emulate_gemm(plan, first, second, exact)
    d = np.lib.stride_tricks.as_strided(exact, shape=(plan.m, plan.n), strides=(exact.itemsize, plan.ldc * exact.itemsize))
    d += bias.astype(wide)[:, None]
    out[...] = exact.astype(out.dtype)


def epilogues_enabled(*arrays) -> bool:
    """Whether Linear takes the epilogues for these arrays: both switches on (use_cublas and
    use_epilogues), float32 or bfloat16 CuPy arrays, and nvmath-python's cuBLASLt binding imports."""
    return (_use[0] and epilogues_on() and supported(*(a for a in arrays if a.ndim >= 2))
            and all(a.dtype == arrays[0].dtype for a in arrays)
            and arrays[0].dtype.name in ("float32", "bfloat16") and _lt_binding() is not None)


def _alignment(pointer: int) -> int:
    """The largest power of two up to 256 that divides a device address: what cuBLASLt may
    assume of an operand (it assumes 256 unless told)."""
    return min(256, pointer & -pointer) if pointer else 256


def _set_attribute(setter, dtype_of, handle, attribute, value) -> None:
    """A cuBLASLt descriptor's (or preference's) attribute, from a host value of the type the
    binding says it has."""
    value = np.array([value], dtype=dtype_of(attribute))
    setter(handle, attribute, value.ctypes.data, value.itemsize)


def _lt_plan(cp, lt, dtype, tf32: bool, plan: GemmPlan, epilogue: str, alignments: tuple, bias_pointer: int):
    """The kept descriptors for this call, made (and cuBLASLt's heuristic asked, with this call's
    bias pointer set, as the library expects) on first use; None where cuBLASLt has no kernel."""
    device = cp.cuda.runtime.getDevice()
    key = (device, dtype.name, tf32, plan, epilogue, alignments)
    if key in _lt_plans:
        return _lt_plans[key]
    if device not in _lt_handles:
        _lt_handles[device] = lt.create()
    kind = _CUDA_TYPES[dtype.name]
    desc = lt.matmul_desc_create(_compute_type(_binding(), dtype, tf32), _CUDA_TYPES["float32"])
    desc_attr, pref_attr = lt.MatmulDescAttribute, lt.MatmulPreferenceAttribute
    for attribute, value in ((desc_attr.TRANSA, plan.transa), (desc_attr.TRANSB, plan.transb),
                             (desc_attr.EPILOGUE, lt.Epilogue.BIAS if epilogue == "bias" else lt.Epilogue.BGRADB),
                             (desc_attr.BIAS_POINTER, bias_pointer)):
        _set_attribute(lt.matmul_desc_set_attribute, lt.get_matmul_desc_attribute_dtype, desc, attribute, value)
    a_rows, a_cols = (plan.m, plan.k) if plan.transa == OP_N else (plan.k, plan.m)
    b_rows, b_cols = (plan.k, plan.n) if plan.transb == OP_N else (plan.n, plan.k)
    layouts = (lt.matrix_layout_create(kind, rows=a_rows, cols=a_cols, ld=plan.lda),
               lt.matrix_layout_create(kind, rows=b_rows, cols=b_cols, ld=plan.ldb),
               lt.matrix_layout_create(kind, rows=plan.m, cols=plan.n, ld=plan.ldc))
    preference = lt.matmul_preference_create()
    # a margin below the buffer's size: nvmath adds 16 bytes to what an epilogue's kernel asks for
    for attribute, value in ((pref_attr.MAX_WORKSPACE_BYTES, WORKSPACE_BYTES - 256),
                             (pref_attr.MIN_ALIGNMENT_A_BYTES, alignments[0]),
                             (pref_attr.MIN_ALIGNMENT_B_BYTES, alignments[1]),
                             (pref_attr.MIN_ALIGNMENT_C_BYTES, alignments[2]),
                             (pref_attr.MIN_ALIGNMENT_D_BYTES, alignments[2])):
        _set_attribute(lt.matmul_preference_set_attribute, lt.get_matmul_preference_attribute_dtype, preference,
                       attribute, value)
    heuristic = lt.MatmulHeuristicResult(1)
    found = np.zeros(1, dtype=np.int32)
    try:
        lt.matmul_algo_get_heuristic(_lt_handles[device], desc, layouts[0], layouts[1], layouts[2], layouts[2],
                                     preference, 1, heuristic.ptr, found.ctypes.data)
    except lt.cuBLASLtError:  # CUBLAS_STATUS_NOT_SUPPORTED: no kernel for this case
        found[0] = 0
    lt.matmul_preference_destroy(preference)
    if found[0] < 1:
        for layout in layouts:
            lt.matrix_layout_destroy(layout)
        lt.matmul_desc_destroy(desc)
        _lt_plans[key] = None
    else:
        _lt_plans[key] = _LtPlan(key, desc, *layouts, heuristic)
    return _lt_plans[key]


def _lt_matmul(a, b, epilogue: str, bias):
    """One cublasLtMatmul of 2-D CuPy arrays with ``epilogue``, writing a new C (and, for
    "bgradb", ``bias``); None where :func:`epilogue_plan` or cuBLASLt's heuristic says no."""
    import cupy as cp

    from minitx.backend import tf32_allowed

    if 0 in a.shape + b.shape or any(s % a.itemsize for s in a.strides + b.strides) or bias.data.ptr % 16:
        return None
    plan = epilogue_plan(a.shape, tuple(s // a.itemsize for s in a.strides), b.shape,
                         tuple(s // b.itemsize for s in b.strides), epilogue)
    if plan is None:
        return None
    lt = _lt_binding()
    c = cp.empty((a.shape[0], b.shape[1]), dtype=a.dtype)
    alignments = (_alignment(b.data.ptr), _alignment(a.data.ptr), _alignment(c.data.ptr))  # cuBLAS's A is our b
    kept = _lt_plan(cp, lt, a.dtype, a.dtype.name == "float32" and tf32_allowed(), plan, epilogue, alignments,
                    bias.data.ptr)
    if kept is None:
        return None
    _set_attribute(lt.matmul_desc_set_attribute, lt.get_matmul_desc_attribute_dtype, kept.desc,
                   lt.MatmulDescAttribute.BIAS_POINTER, bias.data.ptr)
    _handle(cp, _binding())  # this device's workspace (the cuBLAS handle's), bound to the current stream
    device = cp.cuda.runtime.getDevice()
    alpha, beta = np.ones(1, np.float32), np.zeros(1, np.float32)  # host pointer mode: read at the call
    try:
        lt.matmul(_lt_handles[device], kept.desc, alpha.ctypes.data, b.data.ptr, kept.a_layout,
                  a.data.ptr, kept.b_layout, beta.ctypes.data, c.data.ptr, kept.d_layout, c.data.ptr, kept.d_layout,
                  kept.heuristic.ptr, _handles[device][2].data.ptr, WORKSPACE_BYTES, cp.cuda.get_current_stream().ptr)
    except lt.cuBLASLtError:  # refused before any launch (a case the heuristic let through): never ask again
        _lt_plans[kept.key] = None
        return None
    return c


def matmul_bias(a, b, bias):
    """a @ b + bias (bias [m] added to every row of the [n, m] result) for 2-D CuPy arrays of one
    dtype, the add inside cuBLASLt's product (the BIAS epilogue); None where it does not apply
    (the caller multiplies and adds apart)."""
    if bias.shape != (b.shape[1],) or not bias.flags.c_contiguous:
        return None
    return _lt_matmul(a, b, "bias", bias)


def matmul_row_sums(a, b):
    """(a @ b, the row sums of a) for 2-D CuPy arrays of one dtype, a a transposed view: for
    Linear's dw = dy^T @ x, (dw, db) from one product (cuBLASLt's BGRADB epilogue, the sums in
    the compute type, rounded once); None where it does not apply."""
    import cupy as cp

    sums = cp.empty(a.shape[0], dtype=a.dtype)
    c = _lt_matmul(a, b, "bgradb", sums)
    return None if c is None else (c, sums)
