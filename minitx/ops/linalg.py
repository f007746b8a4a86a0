"""Matrix and vector products: matmul, linear (x @ W^T + b), outer, cross, einsum and the products
made of them (tensordot, inner, vdot, kron, bilinear; the statistics cov and corrcoef); the norms of minitx.linalg (vector_norm, matrix_norm,
norm; its matrix functions are in minitx/ops/matrix.py).
"""
from __future__ import annotations

import math
import numbers
import string
import warnings

import numpy as np

from minitx.autograd.function import Function, _low_precision_of
from minitx import amp, backend, blas, interop
from minitx.blas import product
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module, is_floating, sum_rows
from minitx.dtypes import promote_types
from minitx.keywords import takes_torch_keywords
from minitx.ops._args import floating, integer_scale, product_input, product_operands, promote
from minitx.ops.elementwise import clip, sqrt
from minitx.ops.indexing import diagonal
from minitx.ops.matrix import svdvals
from minitx.ops.reduction import Norm, norm_order, normalize_axes
from minitx.ops.shape import broadcast_to

__all__ = ["Matmul", "Linear", "Cross", "Einsum"]


class Matmul(Function):
    """y = a @ b, as numpy.matmul: a [..., n, k] @ b [..., k, m] -> [..., n, m], batch axes broadcast.

    da = dy @ b^T        db = a^T @ dy        (^T swaps the last two axes)

    A 1-D operand is a row vector on the left (k -> 1 x k) and a column vector on the right
    (k -> k x 1); that axis is removed from the result, and put back in dy for backward.
    Gradients over broadcast batch axes are summed by the engine.

    Derivation: docs/backprop/matmul-linear.md
    """

    low_precision = "gpu"  # its products run as they are on the GPU (tensor cores)

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes {a.shape} and {b.shape}")
        k_a = a.shape[-1]
        k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
        if k_a != k_b:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align: {k_a} != {k_b}")
        self.a_vector, self.b_vector = a.ndim == 1, b.ndim == 1
        a2 = a[None, :] if self.a_vector else a
        b2 = b[:, None] if self.b_vector else b
        try:
            y = product(a2, b2)
        except ValueError:
            raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} do not broadcast") from None
        self.save_for_backward(a2, b2)
        if self.b_vector:
            y = y[..., 0]
        if self.a_vector:
            y = y[..., 0, :] if not self.b_vector else y[..., 0]
        return y

    def backward(self, dy):
        a2, b2 = self.saved
        xp = get_array_module(dy)
        # restore the removed axes so dy is [..., n, m]
        if self.b_vector:
            dy = dy[..., None]
        if self.a_vector:
            dy = xp.expand_dims(dy, -2)
        da = db = None
        if self.needs_input_grad[0]:
            da = product(dy, xp.swapaxes(b2, -1, -2))
            if self.a_vector:
                da = da.reshape(da.shape[:-2] + (da.shape[-1],)) if da.ndim > 2 else da[0]
        if self.needs_input_grad[1]:
            db = product(xp.swapaxes(a2, -1, -2), dy)
            if self.b_vector:
                db = db[..., 0]
        return da, db


def matmul(a, b):
    """a @ b; an integer operand takes the float operand's dtype, as in a * b; two floats of
    different dtypes are refused (see one_float_dtype), unless one is a Python list, whose floats
    promote as in a * b (see product_operands)."""
    a, b = product_operands("matmul", a, b)
    return Matmul()(a, b)


def outer(a, b):
    """The outer product of two 1-d tensors, y[i, j] = a[i] * b[j] (PyTorch's outer): a as a column
    times b, broadcast (mul's gradient: da[i] = sum_j dy[i, j] b[j], db[j] = sum_i dy[i, j] a[i])."""
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: needs two 1-d tensors, got shapes {a.shape} and {b.shape}")
    return a.reshape(-1, 1) * b


ger = outer  # (PyTorch's older name)


def fixed_rank_matmul(op, a, b, ndim):
    """dot, mm and bmm (Tensor's), and the products of addmm, addbmm and baddbmm: matmul of two
    tensors of exactly ``ndim`` axes (PyTorch's refuse others), of one batch size for 3 (matmul
    would broadcast a batch of 1; PyTorch's bmm does not); dtypes as matmul's (product_operands)."""
    a, b = product_operands(op, a, b)
    if a.ndim != ndim or b.ndim != ndim:
        raise ValueError(f"{op}: expects two tensors of {ndim} axes, got shapes {a.shape} and {b.shape}")
    if ndim == 3 and a.shape[0] != b.shape[0]:
        raise ValueError(f"{op}: batch sizes differ, got shapes {a.shape} and {b.shape}; matmul broadcasts them")
    _check_aligned(op, a, b)
    return Matmul()(a, b)


def _check_aligned(op, a, b):
    """a's last axis as long as b's axis of the sum (its first for a vector, else its next to last),
    or matmul's error under ``op``'s name."""
    inner = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not align: {a.shape[-1]} != {inner}")


def mv(matrix, vector):
    """A matrix times a vector, as PyTorch's mv: matmul of a 2-d and a 1-d tensor, checked."""
    matrix, vector = product_operands("mv", matrix, vector)
    if matrix.ndim != 2 or vector.ndim != 1:
        raise ValueError(f"mv: expects a 2-d matrix and a 1-d vector, got shapes {matrix.shape} and {vector.shape}")
    _check_aligned("mv", matrix, vector)
    return Matmul()(matrix, vector)


def _beta_input_alpha_product(op, input, a, b, product, beta, alpha):
    """beta * input + alpha * product(a, b), the sum PyTorch's addmm, addmv, addbmm, baddbmm and
    addr compute (composed of mul and add, each number applied where it is not 1): input broadcasts
    to the product's shape, not the other way; beta = 0 leaves input out, so its NaN and inf do not
    reach the result (nor a gradient reach it), as PyTorch documents.

    Dtypes as PyTorch's kernels: bfloat16 or float16 tensors are cast to float32 (an op: gradients
    flow back through it) and the sum rounded once, on the GPU too (a product rounded to 16 bits,
    then scaled, would round twice); integers keep their dtype, beta and alpha taken as
    integer_scale says (only addr refuses a float one); booleans only in addr, as logic (input or
    outer(a, b), where beta and alpha are not 0).

    Under autocast, as PyTorch's (its CUDA autocast lists all five, its CPU one addmm, addbmm and
    baddbmm): the float32 tensors cast to the autocast dtype, then computed as any 16-bit ones are,
    rounded once, with autocast off inside (else the product alone would round to 16 bits)."""
    if amp.active() is not None:
        input, a, b = amp.lowered((input, a, b))  # (before the block below, which turns autocast off)
        with amp.autocast(enabled=False):
            return _beta_input_alpha_product(op, input, a, b, product, beta, alpha)
    low = _low_precision_of([t for t in (input, a, b) if isinstance(t, Tensor)])
    if low is not None:
        input, a, b = (t.astype(np.float32) if isinstance(t, Tensor) and t.dtype == low else t for t in (input, a, b))
    if op != "addr" and any(isinstance(t, Tensor) and t.dtype.kind == "b" for t in (input, a, b)):
        raise TypeError(f"{op}: not defined for boolean tensors, as PyTorch's; convert them first, e.g. "
                        "x.to(dtype='int64')")
    product = product(a, b)
    input = as_tensor(input, product)
    try:
        fits = np.broadcast_shapes(input.shape, product.shape) == product.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: input of shape {input.shape} does not broadcast to the product's shape "
                         f"{product.shape}")
    if not is_floating(product.dtype):
        if op == "addr" or product.dtype.kind == "b":
            if any(isinstance(n, float) for n in (beta, alpha)):
                raise TypeError(f"{op}: beta and alpha must be whole numbers for integer tensors, as PyTorch's, "
                                f"got beta={beta!r} and alpha={alpha!r}")
        if product.dtype.kind == "b":
            scaled = product if alpha else product & False
            return scaled if beta == 0 else input | scaled
        beta, alpha = (integer_scale(op, what, n, product.dtype) for what, n in (("beta", beta), ("alpha", alpha)))
    scaled = product if alpha == 1 else product * alpha
    if beta != 0:
        scaled = (input if beta == 1 else input * beta) + scaled
    return scaled if low is None else scaled.astype(low)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), as PyTorch's addmm (see _beta_input_alpha_product)."""
    return _beta_input_alpha_product("addmm", input, mat1, mat2, lambda a, b: fixed_rank_matmul("addmm", a, b, 2),
                                     beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec), as PyTorch's addmv (see _beta_input_alpha_product)."""
    return _beta_input_alpha_product("addmv", input, mat, vec, mv, beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch, as PyTorch's baddbmm."""
    return _beta_input_alpha_product("baddbmm", input, batch1, batch2,
                                     lambda a, b: fixed_rank_matmul("baddbmm", a, b, 3), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b], the products summed over the batch, as
    PyTorch's addbmm; integers summed in their own dtype, as there (sum would widen int32 to int64)."""
    def summed(a, b):
        products = fixed_rank_matmul("addbmm", a, b, 3)
        total = products.sum(axis=0)
        return total if total.dtype == products.dtype else total.astype(products.dtype)

    return _beta_input_alpha_product("addbmm", input, batch1, batch2, summed, beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2), as PyTorch's addr."""
    vec1, vec2 = as_tensor(vec1), as_tensor(vec2)
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"addr: expects two 1-d vectors, got shapes {vec1.shape} and {vec2.shape}")
    return _beta_input_alpha_product("addr", input, vec1, vec2, outer, beta, alpha)


def tensordot(a, b, dims=2):
    """a times b summed over pairs of axes (PyTorch's tensordot): dims=n pairs a's last n axes with
    b's first n, in order; dims=([1, 0], [0, 1]) pairs a's axis 1 with b's axis 0 and a's 0 with
    b's 1. The result has a's other axes, then b's. Paired axes have one length (PyTorch's: no
    broadcasting, unlike einsum). Dtypes as matmul's (product_operands)."""
    a, b = product_operands("tensordot", a, b)
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims={dims} pairs a's last {dims} axes with b's first {dims}; shapes "
                             f"{a.shape} and {b.shape} take 0 to {min(a.ndim, b.ndim)}")
        return _contract("tensordot", a, b, range(a.ndim - dims, a.ndim), range(dims))
    if not (isinstance(dims, (list, tuple)) and len(dims) == 2 and all(isinstance(d, (list, tuple)) for d in dims)
            and len(dims[0]) == len(dims[1])):
        raise TypeError(f"tensordot: dims must be an int or a pair of lists of axes of one length, such as "
                        f"([1, 0], [0, 1]), got {dims!r}")
    for t, axes in zip((a, b), dims):
        normalize_axes(axes, t.ndim, "tensordot")  # integers, in range, none repeated
        if t.ndim == 0 and axes:
            raise ValueError(f"tensordot: a 0-d operand has no axis to pair, got dims={dims!r}")
    return _contract("tensordot", a, b, [k % max(a.ndim, 1) for k in dims[0]], [k % max(b.ndim, 1) for k in dims[1]])


def _contract(op, a, b, a_axes, b_axes):
    """sum over the paired axes a_axes[k], b_axes[k] of a times b: Einsum with one letter per axis, a
    pair sharing one (its gradient is Einsum's); the result has a's unpaired axes, then b's, in C
    order as PyTorch's (NumPy's einsum may answer with a transposed view)."""
    a_axes, b_axes = list(a_axes), list(b_axes)
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"{op}: axis {i} of a (length {a.shape[i]}) is paired with axis {j} of b (length "
                             f"{b.shape[j]}); paired axes need one length, got shapes {a.shape} and {b.shape}")
    if a.ndim + b.ndim - len(a_axes) > len(string.ascii_letters):
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} have more axes than einsum has letters")
    letters = iter(string.ascii_letters)
    a_term = [next(letters) for _ in range(a.ndim)]
    b_term = [a_term[a_axes[b_axes.index(k)]] if k in b_axes else next(letters) for k in range(b.ndim)]
    out = [c for k, c in enumerate(a_term) if k not in a_axes] + [c for k, c in enumerate(b_term) if k not in b_axes]
    return Einsum("".join(a_term) + "," + "".join(b_term) + "->" + "".join(out))(a, b).contiguous()


def inner(a, b):
    """y[i.., j..] = sum_k a[i.., k] b[j.., k] (PyTorch's and NumPy's inner): the products over the
    last axis of each, of shape a.shape[:-1] + b.shape[:-1]; a 0-d operand multiplies the other.
    Dtypes as matmul's (product_operands)."""
    a, b = product_operands("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return _contract("inner", a, b, [a.ndim - 1], [b.ndim - 1])


def vdot(a, b):
    """sum_k a[k] b[k] of two 1-d tensors of one length (PyTorch's vdot, whose conjugate of a changes
    nothing here: minitx has no complex dtypes): Matmul of two vectors. Dtypes as matmul's."""
    a, b = product_operands("vdot", a, b)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"vdot: expects two 1-d tensors of one length, got shapes {a.shape} and {b.shape}")
    return Matmul()(a, b)


def kron(a, b):
    """The Kronecker product (PyTorch's kron): each entry of a times the whole of b, laid out in
    blocks of b's shape. The shorter shape is padded with leading 1s; along each axis, with m the
    length of b there,
        y[i * m + j] = a[i] * b[j]        (y's length: a's times m)
    Composed: a with a new axis after each of its own, times b with one before each, the pairs of
    axes then merged (mul's and reshape's gradients); dtypes as in a * b."""
    a, b = as_tensor(a), as_tensor(b)
    n = max(a.ndim, b.ndim)
    a_shape, b_shape = (1,) * (n - a.ndim) + a.shape, (1,) * (n - b.ndim) + b.shape
    spread = a.reshape(tuple(x for m in a_shape for x in (m, 1))) * b.reshape(tuple(x for m in b_shape for x in (1, m)))
    return spread.reshape(tuple(p * q for p, q in zip(a_shape, b_shape)))


def _cross(u, v, axis):
    """u x v along ``axis`` (of length 3): component i is u_{i+1} v_{i+2} - u_{i+2} v_{i+1}, the
    indices taken mod 3, so each rolled copy lines up the components component i needs."""
    xp = get_array_module(u)
    return xp.roll(u, -1, axis) * xp.roll(v, -2, axis) - xp.roll(u, -2, axis) * xp.roll(v, -1, axis)


class Cross(Function):
    """y = a x b, the cross product of the 3-vectors along ``axis`` (the other axes broadcast):
    y_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3.

    The triple product <dy, a x b> = <a, b x dy> = <b, dy x a>, so
        da = b x dy        db = dy x a
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return _cross(a, b, self.axis)

    def backward(self, dy):
        a, b = self.saved
        return (_cross(b, dy, self.axis) if self.needs_input_grad[0] else None,
                _cross(dy, a, self.axis) if self.needs_input_grad[1] else None)


@takes_torch_keywords
def cross(a, b, axis=-1):
    """The cross product of 3-vectors along ``axis`` (of length 3 in both), the other axes
    broadcast: PyTorch's linalg.cross (torch.cross without dim takes the first axis of length 3,
    a default PyTorch deprecates). a and b have the same number of axes, as PyTorch asks; an integer
    operand beside a float one takes its dtype, as in a * b."""
    a, b = promote(a, b, op="cross")
    if a.ndim != b.ndim or a.ndim == 0:
        raise ValueError(f"cross: expected two tensors with the same number of axes (at least one), got shapes "
                         f"{a.shape} and {b.shape}")
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise TypeError("cross: not defined for boolean tensors (PyTorch refuses them too); convert to a number "
                        "dtype first")
    (along,) = normalize_axes(axis, a.ndim, "cross")
    if a.shape[along] != 3 or b.shape[along] != 3:
        raise ValueError(f"cross: axis {axis} must have length 3 in both tensors, got shapes {a.shape} and {b.shape}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"cross: shapes {a.shape} and {b.shape} do not broadcast") from None
    return Cross(axis)(a, b)


def _observation_weights(name, weights, n, kinds, expected):
    """cov's fweights or aweights, checked: a 1-d tensor of n entries, of a dtype kind in ``kinds``, none
    negative (a host read, counted, as PyTorch's check)."""
    weights = as_tensor(weights)
    if weights.ndim != 1 or weights.shape[0] != n:
        raise ValueError(f"cov: {name} must be a 1-d tensor with one entry per observation ({n}), got shape "
                         f"{weights.shape}")
    if not (weights.dtype.kind in kinds or "f" in kinds and is_floating(weights.dtype)):   # (bfloat16's kind is V)
        raise TypeError(f"cov: {name} must have {expected} dtype, got {weights.dtype.name}")
    if n and bool(backend.to_host((weights.data < 0).any())):
        raise ValueError(f"cov: {name} must not be negative, got {weights.numpy().tolist()}")
    return weights


def _variables(op, x):
    """x for cov and corrcoef (``op``): floating, variables in rows [variables, observations] (a 1-d x
    is one variable), or a ValueError naming ``op``."""
    x = floating(x)
    if x.ndim > 2:
        raise ValueError(f"{op}: expected a tensor of at most 2 dimensions (variables x observations), got shape {x.shape}")
    return x.reshape(1, -1) if x.ndim < 2 else x


def cov(x, *, correction=1, fweights=None, aweights=None):
    """PyTorch's cov: the covariance matrix of the variables in x's rows (a 1-d x is one variable), each
    column an observation. Composed of differentiable ops (mean, sum, matmul), so gradients reach x and
    aweights. A 16-bit x is computed in float32 and the result rounded once: composed in 16 bits, the
    mean would be rounded before x is centred on it (bfloat16 cov of [-2.578125, -2.625]: 6.1e-4, as
    PyTorch's, instead of float32's 5.5e-4). With w = fweights * aweights (either alone; all 1 without them) and W = sum_j w_j:

        avg_i = sum_j w_j x_ij / W,   xc = x - avg,   C = xc diag(w) xc^T / f
        f = W - correction * sum_j w_j aweights_j / W   with aweights,   W - correction   otherwise

    (fweights count repeats of an observation; aweights weigh them, and f is then the unbiased
    normalisation of numpy.cov.) f <= 0 leaves no degrees of freedom: f is taken as 0, so C is inf or
    NaN, with a RuntimeWarning, as var's. The result is squeezed, as PyTorch's: one variable gives a 0-d
    tensor. fweights are integers, aweights floats, none negative, and w not all 0 (PyTorch's checks).
    """
    x = _variables("cov", x)
    if isinstance(correction, bool) or not isinstance(correction, numbers.Integral):
        raise TypeError(f"cov: correction must be an integer, got {correction!r}")
    narrow = x.dtype if x.dtype.itemsize == 2 else None
    if narrow is not None:
        x = x.astype(np.float32)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _observation_weights("fweights", fweights, n, "iu", "an integer")
    if aweights is not None:
        aweights = _observation_weights("aweights", aweights, n, "f", "a floating-point")
        w = aweights if w is None else w * aweights
    if w is None:
        total, f, avg = n, n - correction, x.mean(axis=1, keepdims=True)
    else:
        total = w.sum()
        avg = (x * w).sum(axis=1, keepdims=True) / total
        f = total - correction * (w * aweights).sum() / total if aweights is not None and correction else total - correction
    if w is None:
        free = f > 0
    else:  # PyTorch's two checks in one host read, counted: W = 0 is refused, f <= 0 warns
        w_sum, f_host = backend.to_host(backend.get_array_module(f.data).stack(
            [total.data.astype(np.float64), f.data.astype(np.float64)])).tolist()
        if w_sum == 0:
            raise ValueError("cov: the weights sum to 0: no observation counts, and the mean cannot be taken "
                             "(the product of fweights and aweights where both are given)")
        free = f_host > 0
    if not free:
        warnings.warn(f"cov: {n} observations with correction={correction} leave no degrees of freedom (the "
                      "divisor is taken as 0); the result is inf or NaN", RuntimeWarning,
                      stacklevel=interop._user_stacklevel())
        f = 0  # (no gradient through f then, as PyTorch's zero_())
    centered = x - avg
    c = (matmul(centered, (centered if w is None else centered * w).T) / f).squeeze()
    if narrow is not None:   # the dtype a 16-bit x gives, beside aweights' own
        c = c.astype(narrow if aweights is None else promote_types(narrow, aweights.dtype))
    return c


def corrcoef(x):
    """PyTorch's corrcoef: Pearson's correlation of the variables in x's rows (a 1-d x is one
    variable), cov composed: R_ij = C_ij / (s_i s_j), s = sqrt(diag C), clipped to [-1, 1] as PyTorch's
    (rounding can step past 1). A variable of zero variance gives NaN in its row and column; one
    variable gives C / C, 1 (or NaN). A 16-bit x is computed in float32 and rounded once, as cov's."""
    x = _variables("corrcoef", x)
    c = cov(x.astype(np.float32) if x.dtype.itemsize == 2 else x)
    if c.ndim == 0:
        r = c / c
    else:
        s = sqrt(diagonal(c))
        r = clip(c / s.reshape(-1, 1) / s, -1, 1)
    return r.astype(x.dtype)


def _rows(a):
    """a as a C-contiguous 2-D array [rows, last axis]: matrix products on it always take
    the fast BLAS path (numpy falls back to a slow loop for some strided N-D operands). The rows
    are counted, not -1: NumPy cannot infer it when the last axis is 0."""
    return get_array_module(a).ascontiguousarray(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]))


class Linear(Function):
    """y = x @ w^T + b, with w of shape [out_features, in_features] (as PyTorch stores it).

    backward, with rows = all leading axes of x flattened:
        dx = dy @ w        dw = dy^T @ x  (summed over rows)        db = sum over rows of dy

    Derivation: docs/backprop/matmul-linear.md
    """

    low_precision = "gpu"  # its products run as they are on the GPU (tensor cores)
    fresh_gradients = True  # products and a row sum, each a new array

    def forward(self, x, w, b=None):
        self.has_bias = b is not None  # then backward returns a third gradient, db
        if x.ndim == 0 or w.ndim != 2:  # (else an IndexError from the shapes below, naming nothing)
            raise ValueError(f"linear: expected an input of at least 1 axis [..., in_features] and a weight "
                             f"[out_features, in_features], got shapes {x.shape} and {w.shape}")
        if x.shape[-1] != w.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} does not fit weight {w.shape}: "
                             f"{x.shape[-1]} != {w.shape[1]}")
        if b is not None and b.shape != w.shape[:1]:
            raise ValueError(f"linear: bias of shape {b.shape} does not fit weight {w.shape}: "
                             f"expected shape ({w.shape[0]},)")
        rows = _rows(x)
        self.save_for_backward(rows, w)
        self.in_shape = x.shape
        y = None
        if b is not None and blas.epilogues_enabled(rows, w, b):  # the bias added inside the product
            y = blas.matmul_bias(rows, w.T, b)
        if y is None:
            y = product(rows, w.T)
            if b is not None:
                y += b
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward(self, dy):
        rows, w = self.saved
        dy = _rows(dy)
        dx = product(dy, w).reshape(self.in_shape) if self.needs_input_grad[0] else None
        if self.has_bias and all(self.needs_input_grad[1:]) and blas.epilogues_enabled(dy, rows):
            both = blas.matmul_row_sums(dy.T, rows)  # db summed inside dw's product
            if both is not None:
                return dx, *both
        dw = product(dy.T, rows) if self.needs_input_grad[1] else None
        if not self.has_bias:
            return dx, dw
        return dx, dw, sum_rows(dy) if self.needs_input_grad[2] else None


def linear(x, weight, bias=None):
    """x @ weight^T + bias, weight of shape [out_features, in_features]; x, weight and bias of one
    floating dtype, an integer x taking the weight's (see product_input)."""
    x = product_input("linear", x, weight, bias)  # (a list bias is no tensor: refused by Linear, by name)
    return Linear()(x, weight) if bias is None else Linear()(x, weight, bias)


def bilinear(x1, x2, weight, bias=None):
    """y[..., o] = sum_{i, j} x1[..., i] weight[o, i, j] x2[..., j] + bias[o]: x1^T A_o x2 + b_o for
    each output feature o (PyTorch's F.bilinear), x1 [..., in1] and x2 [..., in2] with the same
    leading axes, weight [out, in1, in2], bias [out]. Composed of einsum and an add, whose gradients
    are its:

        dx1[..., i] = sum_{o, j} dy[..., o] weight[o, i, j] x2[..., j]     (dx2 likewise)
        dweight[o, i, j] = sum over the leading axes of dy[..., o] x1[..., i] x2[..., j]
    """
    x1, x2 = product_input("bilinear", x1, weight, bias), product_input("bilinear", x2, weight, bias)
    if not all(isinstance(t, Tensor) for t in (x1, x2, weight)) or (bias is not None and not isinstance(bias, Tensor)):
        raise TypeError(f"bilinear: x1, x2, weight and bias must be tensors, got "
                        f"{', '.join(type(t).__name__ for t in (x1, x2, weight, bias))}")
    if weight.ndim != 3 or x1.ndim == 0 or x2.ndim == 0 or x1.shape[:-1] != x2.shape[:-1] \
            or (x1.shape[-1], x2.shape[-1]) != weight.shape[1:]:
        raise ValueError(f"bilinear: expected x1 [..., in1], x2 [..., in2] with the same leading axes and weight "
                         f"[out, in1, in2], got shapes {x1.shape}, {x2.shape} and {weight.shape}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"bilinear: bias of shape {bias.shape} does not fit weight {weight.shape}: expected shape "
                         f"({weight.shape[0]},)")
    y = einsum("...i,oij,...j->...o", x1, weight, x2)
    return y if bias is None else y + bias


def _einsum(xp, spec, *arrays):
    """xp.einsum; NumPy's own loop is slow for products, optimize=True lets it use BLAS."""
    return xp.einsum(spec, *arrays, optimize=True) if xp is np else xp.einsum(spec, *arrays)


class Einsum(Function):
    """Einstein summation with an explicit output, e.g. 'bhqd,bhkd->bhqk' (attention scores) or
    'bti,oi->bto' (a linear layer): y[out letters] = sum over the other letters of the product of
    the operands. Supported: letters a-z/A-Z, one letter per axis, one length per letter, '->'
    always written; not supported: a letter repeated in the output. A letter repeated inside one
    operand (a diagonal), '...' and a letter of length 1 beside a longer one (broadcast) are taken
    apart by ``einsum`` below before this op sees them.

    backward, for operand i with letters s_i:  d operand_i = einsum(the other operands and dy,
    with their letters and the output's -> s_i). A letter of s_i that appears nowhere else was
    summed over in forward; dy does not depend on where along it, so the gradient is the same
    along that axis: computed without it, then broadcast.
    """

    low_precision = "gpu"  # its products run as they are on the GPU (tensor cores)

    def __init__(self, subscripts):
        self.subscripts = subscripts

    def _parse(self, shapes):
        spec = self.subscripts.replace(" ", "")
        if "->" not in spec:
            raise ValueError(f"einsum: {self.subscripts!r} needs an explicit output after '->', e.g. 'ij,jk->ik'")
        if "." in spec:
            raise ValueError(f"einsum: {self.subscripts!r}: the Einsum op takes no '...' (einsum() names its axes "
                             "with letters first); name every axis with a letter")
        lhs, out = spec.split("->")
        terms = lhs.split(",")
        if len(terms) != len(shapes):
            raise ValueError(f"einsum: {self.subscripts!r} names {len(terms)} operands, got {len(shapes)}")
        sizes = {}
        for k, (term, shape) in enumerate(zip(terms, shapes)):
            if term and not (term.isascii() and term.isalpha()):
                raise ValueError(f"einsum: operand {k} has subscripts {term!r}; use letters, one per axis")
            if len(term) != len(shape):
                raise ValueError(f"einsum: operand {k} has subscripts {term!r} for shape {shape}: "
                                 f"{len(term)} letters for {len(shape)} axes")
            if len(set(term)) != len(term):  # (einsum() takes a repeated letter's diagonal before this op)
                raise ValueError(f"einsum: operand {k} has subscripts {term!r}; the Einsum op takes distinct letters")
            for letter, n in zip(term, shape):
                if sizes.setdefault(letter, n) != n:
                    raise ValueError(f"einsum: index {letter!r} has size {sizes[letter]} in one operand and "
                                     f"{n} in operand {k}")
        if (out and not out.isalpha()) or len(set(out)) != len(out) or any(c not in sizes for c in out):
            raise ValueError(f"einsum: output {out!r} must use distinct letters that appear in the operands")
        return terms, out

    def forward(self, *operands):
        self.terms, self.out = self._parse([a.shape for a in operands])
        self.save_for_backward(*operands)
        spec = ",".join(self.terms) + "->" + self.out
        return _einsum(get_array_module(operands[0]), spec, *operands)

    def backward(self, dy):
        operands = self.saved
        xp = get_array_module(dy)
        grads = []
        for i, (term, a) in enumerate(zip(self.terms, operands)):
            if not self.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(self.terms) if j != i] + [self.out]
            arrays = [b for j, b in enumerate(operands) if j != i] + [dy]
            present = set("".join(others))
            target = "".join(c for c in term if c in present)
            g = _einsum(xp, ",".join(others) + "->" + target, *arrays)
            if target != term:  # letters summed over in forward only: broadcast along them
                g = xp.broadcast_to(g.reshape([n if c in present else 1 for c, n in zip(term, a.shape)]), a.shape)
            grads.append(g)
        return tuple(grads)


def einsum(subscripts, *operands):
    """Einstein summation, e.g. einsum('bqd,bkd->bqk', q, k); see Einsum. As in NumPy's and
    PyTorch's einsum: without '->' the output is '...' and then the letters used once, in ASCII
    order ('ij,jk' is 'ij,jk->ik', 'ba' a transpose); a letter repeated inside one operand takes
    that operand's diagonal first ('ii->i', a trace 'ii->', 'bii->b'); '...' stands for the axes
    the letters leave, broadcast between the operands ('...qd,...kd->...qk'; left out of the
    output, they are summed, as PyTorch's); an axis of length 1 is broadcast against its letter's
    length in the other operands ('ij,ij->ij' of [1, 3] and [4, 3]). The operands may come as one
    list, as PyTorch's einsum('ij,jk', [a, b])."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string such as 'ij,jk->ik', got {subscripts!r}")
    listed = len(operands) == 1 and isinstance(operands[0], (list, tuple))
    if listed and all(isinstance(a, Tensor) for a in operands[0]):
        operands = tuple(operands[0])  # PyTorch's einsum(eq, [a, b])
    operands = [as_tensor(a) for a in operands]
    lhs, arrow, out = subscripts.replace(" ", "").partition("->")
    if "->" in out:
        raise ValueError(f"einsum: {subscripts!r} has more than one '->'; write one, before the output")
    if not arrow:  # implicit output: '...' first, then the letters used once, in ASCII order
        letters = lhs.replace(".", "").replace(",", "")
        arrow, out = "->", "..." * ("..." in lhs) + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) == len(operands):
        if "." in subscripts:
            terms, out = _ellipsis_as_letters(terms, out, operands)
        pairs = [_diagonals_of_repeats(k, term, a) for k, (term, a) in enumerate(zip(terms, operands))]
        terms = [term for term, _ in pairs]
        subscripts = ",".join(terms) + "->" + out
        operands = _broadcast_letters(terms, [a for _, a in pairs])
    return Einsum(subscripts)(*operands)


def _broadcast_letters(terms, operands):
    """The operands with each axis of length 1 broadcast to its letter's length in the others, as
    NumPy's and PyTorch's einsum do (F.broadcast_to: a view, whose gradient is summed back to length
    1). A letter with two lengths other than 1, or a term that does not fit its operand, is left
    for Einsum to refuse by name."""
    lengths = {}
    for term, a in zip(terms, operands):
        if len(term) == a.ndim:
            for letter, n in zip(term, a.shape):
                if n != 1:
                    lengths.setdefault(letter, n)
    broadcast = []
    for term, a in zip(terms, operands):
        if len(term) == a.ndim:
            shape = tuple(lengths.get(letter, 1) if n == 1 else n for letter, n in zip(term, a.shape))
            a = a if shape == a.shape else broadcast_to(a, shape)
        broadcast.append(a)
    return broadcast


def _ellipsis_as_letters(terms, out, operands):
    """(terms, out) with each '...' replaced by letters no subscript uses, one per axis
    it stands for, aligned from the right as broadcasting aligns axes (an axis of length 1 there is
    broadcast with the letters, _broadcast_letters)."""
    spans = []  # (where '...' starts in the operand's axes, how many axes it stands for)
    for k, (term, a) in enumerate(zip(terms, operands)):
        if "." in term and (term.count("...") != 1 or "." in term.replace("...", "")):
            raise ValueError(f"einsum: operand {k} has subscripts {term!r}: '...' may appear once, as three dots")
        if "..." not in term:
            spans.append(None)
            continue
        count = a.ndim - (len(term) - 3)
        if count < 0:
            raise ValueError(f"einsum: operand {k} has subscripts {term!r} for shape {a.shape}: more letters than axes")
        spans.append((term.index("..."), count))
    if "." in out and (out.count("...") != 1 or "." in out.replace("...", "")):
        raise ValueError(f"einsum: output {out!r}: '...' may appear once, as three dots")
    n = max((count for _, count in filter(None, spans)), default=0)
    free = [c for c in string.ascii_letters if c not in "".join(terms) + out][:n]
    if len(free) < n:
        raise ValueError(f"einsum: '...' stands for {n} axes, and only {len(free)} letters are left to name them")
    shapes = [a.shape[start:start + count] for a, span in zip(operands, spans) if span for start, count in [span]]
    try:
        np.broadcast_shapes(*shapes)  # (said here in terms of '...', not of the letters that name its axes)
    except ValueError:
        raise ValueError(f"einsum: the axes '...' stands for do not broadcast: shapes {shapes}") from None
    named_terms = [term if span is None else term.replace("...", "".join(free[n - span[1]:]))
                   for term, span in zip(terms, spans)]
    return named_terms, out.replace("...", "".join(free))


def _diagonals_of_repeats(k, term, operand):
    """(term, operand) with each letter once: the two axes of a repeated letter become their
    diagonal, on a new last axis (F.diagonal), named by that letter."""
    while term.isascii() and term.isalpha() and len(term) == operand.ndim:
        repeated = next((c for c in term if term.count(c) > 1), None)
        if repeated is None:
            break
        first = term.index(repeated)
        second = term.index(repeated, first + 1)
        if operand.shape[first] != operand.shape[second]:
            raise ValueError(f"einsum: operand {k} repeats {repeated!r} ({term!r}) on axes of sizes "
                             f"{operand.shape[first]} and {operand.shape[second]}; a diagonal needs equal sizes")
        operand = diagonal(operand, 0, first, second)
        term = "".join(c for i, c in enumerate(term) if i not in (first, second)) + repeated
    return term, operand


# ---------------------------------------------------------------- the norms of minitx.linalg (torch.linalg's)


@takes_torch_keywords
def vector_norm(x, ord=2, axis=None, keepdims=False, *, dtype=None):  # noqa: A002 (PyTorch's name)
    """||x||_ord over ``axis`` (all axes when None), PyTorch's linalg.vector_norm: the p-norm op of
    F.norm (Norm: its math, its gradient at 0 and at ties). ``dtype``: x is cast to it first (a
    floating dtype: float32 to sum float16 entries, say); an integer x is computed in float32."""
    x = as_tensor(x)
    if dtype is not None:
        x = x.to(dtype=dtype)
        if not is_floating(x.dtype):
            raise ValueError(f"vector_norm: dtype must be a floating dtype, got {dtype!r}")
    return Norm(norm_order("vector_norm", ord, "ord"), axis, keepdims, op="vector_norm")(floating(x))


@takes_torch_keywords
def matrix_norm(A, ord="fro", axis=(-2, -1), keepdims=False, *, dtype=None):  # noqa: A002
    """A matrix norm of A over its two ``axis`` (rows, columns), PyTorch's linalg.matrix_norm, made
    of vector norms (their gradients):
        'fro':    sqrt(sum of A^2)              vector_norm(A, 2) over both axes
        1, -1:    the largest (smallest) of the column sums of |A|: the 1-norms down the rows, then
                  their inf (-inf) norm
        inf, -inf: the same of the row sums of |A|
        'nuc':    the sum of the singular values     2, -2: the largest (smallest) of them
                  (linalg.svdvals, its gradient U diag(dy) V^T; 2 and -2 through vector_norm's
                  inf and -inf, whose gradient at tied singular values is PyTorch's too)
    The largest of no sums is 0, as in PyTorch (the smallest of none is refused, as there)."""
    A = as_tensor(A)
    if A.ndim < 2:
        raise ValueError(f"matrix_norm: expects a tensor of at least 2 axes, got shape {A.shape}")
    if not (isinstance(axis, (list, tuple)) and len(axis) == 2):
        raise ValueError(f"matrix_norm: axis must be a pair of axes (rows, columns), got {axis!r}")
    normalize_axes(axis, A.ndim, "matrix_norm")  # integers, in range, the two different
    rows, columns = (k % A.ndim for k in axis)
    if ord == "fro":
        return vector_norm(A, 2, (rows, columns), keepdims, dtype=dtype)
    if isinstance(ord, bool) or ord not in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise ValueError(f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, rows, columns, keepdims, dtype)
    summed, across = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = vector_norm(A, 1, summed, keepdims=True, dtype=dtype)
    if sums.shape[across] == 0:  # no sums: the largest is 0, as PyTorch's; the smallest is refused, as there
        if ord < 0:
            raise ValueError(f"matrix_norm: ord={ord} is the smallest {'column' if abs(ord) == 1 else 'row'} sum, "
                             f"and A of shape {A.shape} has none")
        y = sums.sum(axis=across, keepdims=True)
    else:
        y = vector_norm(sums, math.copysign(math.inf, ord), across, keepdims=True)
    return y if keepdims else y.squeeze(axis=(rows, columns))


def _singular_value_norm(A, ord, rows, columns, keepdims, dtype):  # noqa: A002
    """matrix_norm's 'nuc' (the sum of the singular values), 2 (the largest) and -2 (the smallest)
    over the axes rows, columns: those moved last, svdvals, then a vector norm of the values
    (nonnegative: their 1-norm is their sum, inf and -inf their largest and smallest)."""
    if dtype is not None:
        A = A.to(dtype=dtype)
    s = svdvals(A.movedim((rows, columns), (-2, -1)))
    if s.shape[-1] == 0:  # no singular values: their sum and their largest are 0, the smallest is refused
        if ord == -2:
            raise ValueError(f"matrix_norm: ord=-2 is the smallest singular value, and A of shape {A.shape} has none")
        y = s.sum(axis=-1)
    else:
        y = vector_norm(s, {"nuc": 1, 2: math.inf, -2: -math.inf}[ord], -1)
    if keepdims:
        y = y.reshape(tuple(1 if k in (rows, columns) else n for k, n in enumerate(A.shape)))
    return y


@takes_torch_keywords
def linalg_norm(A, ord=None, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """minitx.linalg.norm, PyTorch's linalg.norm: a vector norm over one axis, a matrix norm over two.
    With neither ord nor axis, the 2-norm of every entry; with ord alone, A's own kind (1-d: vector,
    2-d: matrix). ord None is 2 for vectors and 'fro' for matrices."""
    A = as_tensor(A)
    if axis is None and ord is not None:
        if A.ndim not in (1, 2):
            raise ValueError(f"linalg.norm: with ord and no axis, expects a 1-d or 2-d tensor, got shape {A.shape}")
        axis = tuple(range(A.ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else axis
    if axes is None or len(axes) == 1:
        return vector_norm(A, 2 if ord is None else ord, axes, keepdims, dtype=dtype)
    if len(axes) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(axes), keepdims, dtype=dtype)
    raise ValueError(f"linalg.norm: axis must be one axis or two, got {axis!r}")
