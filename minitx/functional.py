"""The public op API: ``import minitx.functional as F``.

Each function checks and converts its arguments (Python numbers become constant tensors of
the other operand's dtype), then applies one op from ``minitx.ops``. Argument names follow
numpy (``axis``, ``keepdims``).
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from minitx import backend
from minitx import ops
from minitx.autograd.tensor import Tensor, as_tensor

# ---------------------------------------------------------------- helpers


def _binary(op, a, b, true_division=False):
    """Apply a broadcasting binary op, with a clear error when the shapes do not broadcast.

    Dtypes follow PyTorch: an integer or boolean operand meeting a float one is computed in
    the float's dtype (``int_tensor * 0.5`` is float32, where numpy alone would promote int64
    with float32 to float64), and with ``true_division`` two integer operands become float32.
    """
    a, b = _promote(a, b, true_division)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{op.name}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return op(a, b)


def _promote(a, b, true_division=False):
    """(a, b) as tensors of one dtype where ints meet floats: the float's (see _binary)."""
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    a, b = as_tensor(a, like), as_tensor(b, like)
    if a.dtype.kind in "biu" and b.dtype.kind == "f":
        a = a.astype(b.dtype)
    elif b.dtype.kind in "biu" and a.dtype.kind == "f":
        b = b.astype(a.dtype)
    elif true_division and a.dtype.kind in "biu":
        a, b = a.astype(backend.DEFAULT_FLOAT), b.astype(backend.DEFAULT_FLOAT)
    return a, b


def _floating(x) -> Tensor:
    """x for ops defined on real numbers (exp, softmax, ...): an integer or boolean tensor
    becomes float32, PyTorch's default float (numpy would pick float64)."""
    x = as_tensor(x)
    return x.astype(backend.DEFAULT_FLOAT) if x.dtype.kind in "biu" else x


def _as_indices(value, like: Tensor) -> Tensor:
    """Ids and targets: Python ints and lists become int64 tensors on ``like``'s device."""
    if isinstance(value, Tensor):
        return value
    from minitx.autograd.tensor import tensor

    return tensor(value, device=like.device)


def _check_bool(op: str, what: str, t: Tensor):
    if t.dtype != np.bool_:
        raise TypeError(f"{op}: {what} must be a boolean tensor, got dtype {t.dtype.name}")


# ---------------------------------------------------------------- elementwise


def add(a, b): return _binary(ops.Add(), a, b)
def sub(a, b): return _binary(ops.Sub(), a, b)
def mul(a, b): return _binary(ops.Mul(), a, b)
def div(a, b): return _binary(ops.Div(), a, b, true_division=True)
def maximum(a, b): return _binary(ops.Maximum(), a, b)
def minimum(a, b): return _binary(ops.Minimum(), a, b)
def neg(x): return ops.Neg()(x)
def exp(x): return ops.Exp()(_floating(x))
def log(x): return ops.Log()(_floating(x))
def sqrt(x): return ops.Sqrt()(_floating(x))
def tanh(x): return ops.Tanh()(_floating(x))
def sigmoid(x): return ops.Sigmoid()(_floating(x))
def relu(x): return ops.Relu()(x)
def abs(x): return ops.Abs()(x)  # noqa: A001 (numpy's name)


def pow(a, b):  # noqa: A001 (numpy's name)
    """a ** b. A constant number exponent uses PowScalar (x^p); otherwise Pow (needs a > 0
    where the exponent takes a gradient)."""
    if isinstance(b, numbers.Number) and isinstance(a, Tensor):
        if a.dtype.kind in "biu" and isinstance(b, float):  # int ** 0.5 is float32, as in PyTorch
            a = a.astype(backend.DEFAULT_FLOAT)
        return ops.PowScalar(b)(a)
    return _binary(ops.Pow(), a, b)


def gelu(x, approximate: str = "none"):
    """GELU; approximate='tanh' for the tanh formula (GPT/BERT), 'none' for the exact erf form."""
    return ops.Gelu(approximate)(_floating(x))


def clip(x, min=None, max=None):  # noqa: A002 (numpy's names)
    return ops.Clip(min, max)(x)


def where(cond, a, b):
    """a where cond else b (cond boolean); a and b may be numbers."""
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    cond, a, b = as_tensor(cond, like), as_tensor(a, like), as_tensor(b, like)
    _check_bool("where", "cond", cond)
    try:
        np.broadcast_shapes(cond.shape, a.shape, b.shape)
    except ValueError:
        raise ValueError(f"where: shapes {cond.shape}, {a.shape} and {b.shape} do not broadcast") from None
    return ops.Where()(cond, a, b)


def masked_fill(x, mask, value):
    """x with ``value`` written where mask is True (mask broadcasts to x's shape)."""
    mask = as_tensor(mask, x)
    _check_bool("masked_fill", "mask", mask)
    try:
        fits = np.broadcast_shapes(mask.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} does not broadcast to {x.shape}")
    return ops.MaskedFill(value)(x, mask)


def astype(x, dtype):
    return ops.Astype(backend.resolve_dtype(dtype))(x)


def to_device(x, device):
    return ops.ToDevice(backend.check_device(device))(x)


# comparisons: results are boolean and never carry gradients


def _compare(fn, a, b):
    like = a if isinstance(a, Tensor) else b
    a, b = as_tensor(a, like), as_tensor(b, like)
    return Tensor(fn(a.data, b.data))


def equal(a, b): return _compare(lambda x, y: x == y, a, b)
def not_equal(a, b): return _compare(lambda x, y: x != y, a, b)
def less(a, b): return _compare(lambda x, y: x < y, a, b)
def less_equal(a, b): return _compare(lambda x, y: x <= y, a, b)
def greater(a, b): return _compare(lambda x, y: x > y, a, b)
def greater_equal(a, b): return _compare(lambda x, y: x >= y, a, b)


def logical_not(x):
    """True where x is 0 (or False), as numpy.logical_not: a bool tensor for any dtype (not ~x,
    which is the bitwise not of integers)."""
    x = as_tensor(x)
    return Tensor(backend.get_array_module(x.data).logical_not(x.data))


def argmax(x, axis=None):
    """Index of the maximum (an integer tensor; no gradient)."""
    return Tensor(x.data.argmax(axis=axis))


# ---------------------------------------------------------------- reductions


def sum(x, axis=None, keepdims=False): return ops.Sum(axis, keepdims)(x)  # noqa: A001
def mean(x, axis=None, keepdims=False): return ops.Mean(axis, keepdims)(x)
def max(x, axis=None, keepdims=False): return ops.Max(axis, keepdims)(x)  # noqa: A001
def min(x, axis=None, keepdims=False): return ops.Min(axis, keepdims)(x)  # noqa: A001
def var(x, axis=None, ddof=0, keepdims=False): return ops.Var(axis, ddof, keepdims)(x)
def logsumexp(x, axis=None, keepdims=False): return ops.LogSumExp(axis, keepdims)(_floating(x))


# ---------------------------------------------------------------- shape


def reshape(x, shape): return ops.Reshape(shape)(x)
def transpose(x, axes=None): return ops.Transpose(axes)(x)
def permute(x, axes): return ops.Transpose(axes)(x)
def swapaxes(x, axis1, axis2): return ops.SwapAxes(axis1, axis2)(x)
def squeeze(x, axis=None): return ops.Squeeze(axis)(x)
def unsqueeze(x, axis): return ops.Unsqueeze(axis)(x)


def broadcast_to(x, shape):
    return ops.BroadcastTo(shape)(x)


def _convert_index(x: Tensor, index):
    """Replace tensors and lists inside an index by arrays on x's device; check their dtype.

    On CuPy arrays, integer index arrays are also checked against their axis (CuPy would wrap
    an out-of-range index around silently; numpy raises): before the upload for host arrays
    and lists, with one device sync for arrays already on the GPU.
    """
    parts = index if isinstance(index, tuple) else (index,)
    xp = backend.get_array_module(x.data)
    host = []
    for part in parts:
        if isinstance(part, Tensor):
            if part.device != x.device:
                raise RuntimeError(f"getitem: index on {part.device} for a tensor on {x.device}")
            part = part.data
        elif isinstance(part, (list, np.ndarray)):
            part = np.asarray(part, dtype=np.int64 if len(part) == 0 else None)  # [] is an empty index
        if hasattr(part, "dtype") and part.dtype.kind not in "iub":
            raise TypeError(f"getitem: index arrays must be integer or boolean, got dtype {part.dtype.name}")
        host.append(part)
    if xp is not np:
        _check_index_bounds(x.shape, host)
    converted = [xp.asarray(part) if isinstance(part, np.ndarray) else part for part in host]
    return tuple(converted) if isinstance(index, tuple) else converted[0]


def _check_index_bounds(shape, parts):
    """Raise IndexError, as numpy would, when an integer index array points outside its axis.

    Each part of an index consumes axes: an int, slice or integer array one, a boolean array
    as many as it has dimensions, None and True/False none, and ``...`` what the others leave.
    """
    def consumed(part):
        if part is None or part is Ellipsis or isinstance(part, (bool, np.bool_)):
            return 0
        return part.ndim if getattr(part, "dtype", None) is not None and part.dtype.kind == "b" else 1

    axis = 0
    for part in parts:
        if part is Ellipsis:
            axis += len(shape) - builtins.sum(consumed(q) for q in parts)  # F.sum shadows sum here
            continue
        if getattr(part, "dtype", None) is not None and part.dtype.kind in "iu" and part.ndim and part.size \
                and axis < len(shape):
            size = shape[axis]
            low, high = backend.host_ints(part.min(), part.max())
            if low < -size or high >= size:
                raise IndexError(f"getitem: index {high if high >= size else low} is out of bounds for axis {axis} "
                                 f"with size {size}")
        axis += consumed(part)


def getitem(x, index):
    return ops.GetItem(_convert_index(x, index))(x)


def concatenate(tensors, axis=0):
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("concatenate: need at least one tensor")
    return ops.Concatenate(axis)(*tensors)


def stack(tensors, axis=0):
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("stack: need at least one tensor")
    return ops.Stack(axis)(*tensors)


def split(x, indices_or_sections, axis=0):
    """Split along ``axis`` like numpy.split: a number of equal parts or a list of cut points.

    Each part is a slice (GetItem), so its gradient lands in the right place of x's.
    """
    if not isinstance(axis, numbers.Integral) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"split: axis {axis!r} does not exist in a tensor of shape {x.shape}; expected an "
                         f"int in [{-x.ndim}, {x.ndim})")
    n = x.shape[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError(f"split: axis {axis} of length {n} does not split into {indices_or_sections} equal parts")
        step = n // indices_or_sections
        cuts = list(range(step, n, step))
    else:
        cuts = list(indices_or_sections)
    bounds = [0] + cuts + [n]
    prefix = (slice(None),) * (axis % x.ndim)
    return [getitem(x, prefix + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def pad(x, pad_width, value=0.0, mode="constant"):
    """Pad with ``value`` (mode 'constant'), or with x's own edge: 'reflect' (mirror, edge not
    repeated) or 'replicate' (edge repeated), see ops.PadEdges. pad_width is an int, one
    (before, after) pair, or one pair per axis, as numpy's."""
    if mode == "constant":
        return ops.Pad(pad_width, value)(x)
    return ops.PadEdges(pad_width, mode)(x)


# ---------------------------------------------------------------- linear algebra


def matmul(a, b):
    """a @ b; an integer operand takes the float operand's dtype, as in a * b."""
    a, b = _promote(as_tensor(a), as_tensor(b))
    return ops.Matmul()(a, b)


# ---------------------------------------------------------------- neural-network ops


def softmax(x, axis=-1): return ops.Softmax(axis)(_floating(x))
def log_softmax(x, axis=-1): return ops.LogSoftmax(axis)(_floating(x))


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last axis; weight defaults to ones, bias to zeros."""
    x = _floating(x)
    xp = backend.get_array_module(x.data)
    dim = x.shape[-1:]
    weight = weight if weight is not None else Tensor(xp.ones(dim, dtype=x.dtype))
    bias = bias if bias is not None else Tensor(xp.zeros(dim, dtype=x.dtype))
    return ops.LayerNorm(eps)(x, weight, bias)


def dropout(x, p=0.5, training=True, seed=None):
    """Inverted dropout while training; the identity when not training or p == 0."""
    if not training or p == 0:
        return x
    return ops.Dropout(p, seed)(x)


def dropout_add(x, residual, p=0.5, training=True, seed=None):
    """residual + dropout(x) as one op (a residual connection); residual + x when not training
    or p == 0. x and residual must have one shape. See ops.DropoutAdd."""
    if not training or p == 0:
        return add(residual, x)
    return ops.DropoutAdd(p, seed)(x, residual)


def bias_act_dropout(x, bias=None, activation="relu", p=0.0, training=True, seed=None):
    """dropout(activation(x + bias)) as one op, bias [C] along the last axis (or None);
    activation 'identity', 'relu' or 'gelu_tanh'. No dropout when not training. See
    ops.BiasActDropout."""
    op = ops.BiasActDropout(activation, p if training else 0.0, seed)
    return op(x) if bias is None else op(x, bias)


def embedding(ids, weight, padding_idx=None):
    """Rows of ``weight`` picked by integer ``ids``: result shape ids.shape + (dim,)."""
    ids = _as_indices(ids, weight)
    return ops.Embedding(padding_idx)(ids, weight)


def linear(x, weight, bias=None):
    """x @ weight^T + bias, weight of shape [out_features, in_features]."""
    return ops.Linear()(x, weight) if bias is None else ops.Linear()(x, weight, bias)


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """Cross-entropy of logits [..., C] against integer class targets [...], or against float
    probability targets [..., C] (ops.SoftCrossEntropy; ignore_index does not apply there)."""
    targets = _as_indices(targets, logits)
    if targets.dtype.kind == "f":
        return ops.SoftCrossEntropy(label_smoothing, reduction)(logits, targets)
    return ops.CrossEntropy(ignore_index, label_smoothing, reduction)(logits, targets)


def scaled_dot_product_attention(q, k, v, mask=None, causal=False, dropout_p=0.0, scale=None,
                                 return_weights=False, seed=None):
    """softmax(scale * q @ k^T, masked) @ v; see ops.ScaledDotProductAttention.

    mask: boolean, True = may attend, broadcastable to [..., Lq, Lk]. With
    return_weights=True returns (output, weights), the weights P as a constant tensor
    (before dropout) for plotting.
    """
    op = ops.ScaledDotProductAttention(causal, dropout_p, scale, seed, need_weights=return_weights)
    if mask is None:
        out = op(q, k, v)
    else:
        mask = as_tensor(mask, q)
        _check_bool("scaled_dot_product_attention", "mask", mask)
        try:
            np.broadcast_shapes(mask.shape, q.shape[:-1] + (k.shape[-2],))
        except ValueError:
            raise ValueError(f"scaled_dot_product_attention: mask of shape {mask.shape} does not broadcast "
                             f"to [..., Lq, Lk] = {q.shape[:-1] + (k.shape[-2],)}") from None
        out = op(q, k, v, mask)
    if return_weights:
        return out, Tensor(op.weights)
    return out


# ================================================================ more math, activations, scans, indexing, losses, convolution
# (kept in one block; each group's ops live in their own module of minitx.ops)

# ---------------------------------------------------------------- more elementwise math (ops/unary.py)


def sin(x): return ops.Sin()(_floating(x))
def cos(x): return ops.Cos()(_floating(x))
def erf(x): return ops.Erf()(_floating(x))
def sign(x): return ops.Sign()(x)
def floor(x): return ops.Floor()(x)
def ceil(x): return ops.Ceil()(x)
def trunc(x): return ops.Trunc()(x)
def log2(x): return ops.Log2()(_floating(x))
def exp2(x): return ops.Exp2()(_floating(x))
def log1p(x): return ops.Log1p()(_floating(x))
def expm1(x): return ops.Expm1()(_floating(x))
def rsqrt(x): return ops.Rsqrt()(_floating(x))
def reciprocal(x): return ops.Reciprocal()(_floating(x))


def round(x, decimals=0):  # noqa: A001 (numpy's name)
    """x rounded to ``decimals`` places, halves to even; its gradient is 0."""
    return ops.Round(decimals)(x)


# tests of values: boolean results that carry no gradient, as the comparisons


def isnan(x): return _predicate("isnan", x)
def isinf(x): return _predicate("isinf", x)
def isfinite(x): return _predicate("isfinite", x)


def _predicate(name, x):
    """A boolean tensor (no gradient) of numpy's/cupy's elementwise test ``name``."""
    x = as_tensor(x)
    return Tensor(getattr(backend.get_array_module(x.data), name)(x.data))


# ---------------------------------------------------------------- activations (ops/activation.py)


def silu(x): return ops.Silu()(_floating(x))
def leaky_relu(x, negative_slope=0.01): return ops.LeakyRelu(negative_slope)(x)
def elu(x, alpha=1.0): return ops.Elu(alpha)(_floating(x))
def logsigmoid(x): return ops.LogSigmoid()(_floating(x))
def hardtanh(x, min_val=-1.0, max_val=1.0): return ops.Hardtanh(min_val, max_val)(x)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, computed without overflow; x itself where beta * x > threshold."""
    return ops.Softplus(beta, threshold)(_floating(x))


# ---------------------------------------------------------------- reductions and scans (ops/scan.py)


def std(x, axis=None, ddof=0, keepdims=False): return ops.Std(axis, ddof, keepdims)(_floating(x))
def prod(x, axis=None, keepdims=False): return ops.Prod(axis, keepdims)(x)
def cumsum(x, axis): return ops.Cumsum(axis)(x)
def cumprod(x, axis): return ops.Cumprod(axis)(x)
def logcumsumexp(x, axis): return ops.Logcumsumexp(axis)(_floating(x))


def argmin(x, axis=None):
    """Index of the minimum (an integer tensor; no gradient); the first one on ties, a NaN if any."""
    return Tensor(as_tensor(x).data.argmin(axis=axis))


# ---------------------------------------------------------------- shape and indexing (ops/indexing.py)


def flip(x, axis=None): return ops.Flip(axis)(x)
def roll(x, shift, axis=None): return ops.Roll(shift, axis)(x)
def tril(x, k=0): return ops.Tril(k)(x)
def triu(x, k=0): return ops.Triu(k)(x)


def gather(x, axis, index):
    """y[p] = x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's gather)."""
    return ops.Gather(axis)(x, _as_indices(index, x))


def scatter_add(x, axis, index, src):
    """x with src[p] added at x[p with its ``axis`` coordinate replaced by index[p]] (PyTorch's scatter_add)."""
    return ops.ScatterAdd(axis)(x, _as_indices(index, x), src)


def repeat(x, repeats, axis=None):
    """numpy.repeat: each element ``repeats`` times along axis (PyTorch: repeat_interleave)."""
    return ops.Repeat(repeats, axis)(x)


def tile(x, reps):
    """numpy.tile: the whole of x repeated reps[i] times along axis i (PyTorch: Tensor.repeat)."""
    return ops.Tile(reps)(x)


def einsum(subscripts, *operands):
    """Einstein summation with an explicit '->' output, e.g. einsum('bqd,bkd->bqk', q, k); see ops.Einsum."""
    return ops.Einsum(subscripts)(*(as_tensor(a) for a in operands))


def one_hot(indices, num_classes=-1):
    """int64 tensor indices.shape + (num_classes,): 1 at each index, 0 elsewhere (PyTorch's
    one_hot; no gradient). num_classes -1 means max(indices) + 1."""
    indices = _as_indices(indices, indices if isinstance(indices, Tensor) else Tensor(np.zeros(0)))
    data = indices.data
    xp = backend.get_array_module(data)
    if num_classes < 0:
        if not data.size:
            raise ValueError("one_hot: cannot infer num_classes from empty indices; pass num_classes")
        num_classes = backend.host_ints(data.max())[0] + 1
    ops.indexing.check_indices("one_hot", "indices", data, num_classes)
    return Tensor((data[..., None] == xp.arange(num_classes)).astype(np.int64))


# ---------------------------------------------------------------- losses (ops/loss.py; cross_entropy above)


def nll_loss(log_probs, targets, ignore_index=-100, reduction="mean"):
    """-log_probs[..., target] per row, log_probs [..., C] (e.g. from log_softmax), targets [...]."""
    return ops.NllLoss(ignore_index, reduction)(log_probs, _as_indices(targets, log_probs))


def binary_cross_entropy(probs, targets, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) elementwise, p in [0, 1]; logs floored at -100 as in PyTorch."""
    return ops.BinaryCrossEntropy(reduction)(probs, as_tensor(targets, probs))


def binary_cross_entropy_with_logits(logits, targets, reduction="mean", pos_weight=None):
    """Binary cross-entropy of sigmoid(logits), computed stably from the logits; pos_weight (a
    number or a constant tensor broadcast against logits) weighs the positive targets."""
    weight = pos_weight.data if isinstance(pos_weight, Tensor) else pos_weight
    return ops.BinaryCrossEntropyWithLogits(reduction, weight)(logits, as_tensor(targets, logits))


# ---------------------------------------------------------------- convolution and pooling (ops/conv.py)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, H, W] cross-correlated with weight [O, C/groups, kh, kw], plus bias [O]; stride,
    padding (zeros) and dilation are ints or (height, width) pairs."""
    op = ops.Conv2d(stride, padding, dilation, groups)
    return op(x, weight) if bias is None else op(x, weight, bias)


def _as_2d(op, x, what="input"):
    """A [N, C, L] tensor as [N, C, 1, L], for a 1-d op run as the 2-d one."""
    if x.ndim != 3:
        raise ValueError(f"{op}: {what} must be 3-D [N, C, L], got shape {x.shape}")
    return unsqueeze(x, 2)


def _one(op, name, value):
    """A 1-d op's stride/padding/... as the 2-d op's (1 or 0 along the height)."""
    if not isinstance(value, numbers.Integral):
        raise ValueError(f"{op}: {name} must be an int, got {value!r}")
    return (0 if name == "padding" else 1, value)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, L] cross-correlated with weight [O, C/groups, k], plus bias [O]."""
    settings = [_one("conv1d", name, v) for name, v in (("stride", stride), ("padding", padding),
                                                            ("dilation", dilation))]
    op = ops.Conv2d(*settings, groups, op="conv1d")
    x2, w2 = _as_2d("conv1d", x), _as_2d("conv1d", weight, "weight")
    return squeeze(op(x2, w2) if bias is None else op(x2, w2, bias), 2)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """The maximum of each kernel_size window of x [N, C, H, W] (stride defaults to kernel_size)."""
    return ops.MaxPool2d(kernel_size, stride, padding, dilation)(x)


def avg_pool2d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    """The mean of each kernel_size window of x [N, C, H, W] (stride defaults to kernel_size)."""
    return ops.AvgPool2d(kernel_size, stride, padding, count_include_pad)(x)


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1):
    stride = kernel_size if stride is None else stride
    settings = [_one("max_pool1d", name, v) for name, v in (("kernel_size", kernel_size), ("stride", stride),
                                                                ("padding", padding), ("dilation", dilation))]
    return squeeze(ops.MaxPool2d(*settings, op="max_pool1d")(_as_2d("max_pool1d", x)), 2)


def avg_pool1d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    stride = kernel_size if stride is None else stride
    settings = [_one("avg_pool1d", name, v) for name, v in (("kernel_size", kernel_size), ("stride", stride),
                                                                ("padding", padding))]
    return squeeze(ops.AvgPool2d(*settings, count_include_pad, op="avg_pool1d")(_as_2d("avg_pool1d", x)), 2)
