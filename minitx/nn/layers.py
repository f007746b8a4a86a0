"""Basic layers. Each is a thin Module around one functional op, holding its parameters."""
from __future__ import annotations

import math
import numbers
import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from minitx import backend
from minitx import functional as F
from minitx.autograd.inplace import mark_modified
from minitx.autograd.methods import _flattened, _split_sizes, _unflattened
from minitx.autograd.tensor import Tensor, tensor
from minitx.nn import init
from minitx.nn.module import Module, layer_input
from minitx.nn.parameter import Parameter
from minitx.ops.indexing import padding_row


def _count(layer: str, arg: str, value, minimum: int = 0) -> int:
    """``value`` as an int >= ``minimum`` (a size, a number of groups), or a TypeError/ValueError
    naming the layer, the argument, what it got and what it expected."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{layer}: {arg} must be a whole number >= {minimum}, got {value!r} "
                        f"({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{layer}: {arg} must be a whole number >= {minimum}, got {value}")
    return int(value)


def _probability(layer: str, arg: str, p, one: bool = False) -> float:
    """A dropout probability: a real number in [0, 1) (1 would drop everything and scale by 1/0),
    or with ``one`` in [0, 1] (alpha dropout, whose p = 1 gives 0)."""
    interval = "[0, 1]" if one else "[0, 1)"
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{layer}: {arg} must be a number in {interval}, got {p!r} ({type(p).__name__})")
    if not (0 <= p <= 1 if one else 0 <= p < 1):
        raise ValueError(f"{layer}: {arg} must be in {interval}, got {p}")
    return p


def _trailing_shape(layer: str, normalized_shape) -> tuple:
    """A norm's ``normalized_shape`` as a tuple: an int, or a tuple or list of ints, as PyTorch's."""
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else normalized_shape
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"{layer}: normalized_shape must be an int or a non-empty tuple or list of ints, "
                        f"got {normalized_shape!r}")
    return tuple(_count(layer, "normalized_shape", size) for size in shape)


def _over_trailing_axes(layer: str, norm, x, shape, *params):
    """``norm`` (a norm over the last axis) over the last len(shape) axes of x: those axes as one
    and each [*shape] parameter as a vector, then back; the reshapes carry the gradients."""
    if x.ndim < len(shape) or x.shape[x.ndim - len(shape):] != shape:
        raise ValueError(f"{layer}: expected an input whose last axes are {shape}, got shape {x.shape}")
    size = (math.prod(shape),)
    flat = [F.reshape(p, size) if p is not None else None for p in params]
    return F.reshape(norm(F.reshape(x, x.shape[:x.ndim - len(shape)] + size), *flat), x.shape)


def _check_channels(layer: str, x, count: int, axis: int = 1) -> None:
    """A ValueError naming the layer where x's channel axis does not hold ``count`` channels (the
    op's own check would speak of its weight's or running statistics' shape instead)."""
    if x.ndim > axis and x.shape[axis] != count:
        raise ValueError(f"{layer}: expected {count} channels on axis {axis}, got an input of shape {x.shape}")


def _new_parameter(shape, device=None, dtype=None):
    device = backend.check_device(device)
    xp = backend.xp_for(device)
    return Parameter(xp.zeros(shape, dtype=backend.resolve_dtype(dtype)))


def _reset_affine(norm) -> None:
    """A norm's reset_parameters: its weight ones and its bias zeros, where it has them."""
    if norm.weight is not None:
        init.ones_(norm.weight)
    if getattr(norm, "bias", None) is not None:
        init.zeros_(norm.bias)


class Linear(Module):
    """y = x @ weight^T + bias, weight [out_features, in_features].

    With ``activation`` ('relu' or 'gelu_tanh') and ``dropout`` p, the layer computes
    y = Dropout_p(act(x @ weight^T + bias)): the bias, the activation and the dropout are one
    op (F.bias_act_dropout), one pass over the output, one kernel on the GPU.

    Initialized as PyTorch does: weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)); with in_features
    0 the weight is empty and the bias zeros (the output is the bias). ``reset_parameters()`` draws
    them again, as PyTorch's (a layer's constructor draws by calling it).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, activation=None,
                 dropout=0.0):
        super().__init__()
        if activation not in (None, "relu", "gelu_tanh"):
            raise ValueError(f"Linear: activation must be None, 'relu' or 'gelu_tanh', got {activation!r}")
        in_features = _count("Linear", "in_features", in_features)
        out_features = _count("Linear", "out_features", out_features)
        self.in_features, self.out_features = in_features, out_features
        self.activation, self.dropout = activation, _probability("Linear", "dropout", dropout)
        self.weight = _new_parameter((out_features, in_features), device, dtype)
        self.register_parameter("bias", _new_parameter((out_features,), device, dtype) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in_features) if self.in_features else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        if self.activation is None and not self.dropout:
            return F.linear(x, self.weight, self.bias)
        return F.bias_act_dropout(F.linear(x, self.weight), self.bias, self.activation or "identity",
                                  self.dropout, self.training)

    def extra_repr(self):
        text = f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        if self.activation is not None:
            text += f", activation={self.activation!r}"
        return text + (f", dropout={self.dropout}" if self.dropout else "")


class Bilinear(Module):
    """y[..., o] = x1^T weight[o] x2 + bias[o] (F.bilinear), weight [out_features, in1_features,
    in2_features], bias [out_features].

    Initialized as PyTorch does: weight and bias ~ U(-1/sqrt(in1), 1/sqrt(in1)), drawn in that
    order; with in1_features 0 the weight is empty and the bias zeros (PyTorch divides by zero).
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = _count("Bilinear", "in1_features", in1_features)
        self.in2_features = _count("Bilinear", "in2_features", in2_features)
        self.out_features = _count("Bilinear", "out_features", out_features)
        self.weight = _new_parameter((self.out_features, self.in1_features, self.in2_features), device, dtype)
        self.register_parameter("bias", _new_parameter((self.out_features,), device, dtype) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def token_ids(owner: str, ids, device) -> Tensor:
    """Token ids [batch, length] as an integer Tensor on ``device``, straight there (ids already on
    the GPU, a captured step's batch, never visit the host); ValueError naming ``owner`` otherwise."""
    ids = ids.to(device) if isinstance(ids, Tensor) else tensor(ids, device=device)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError(f"{owner}: token ids must be an integer array [batch, length], "
                         f"got shape {ids.shape} and dtype {ids.dtype.name}")
    return ids


class Embedding(Module):
    """Row lookup in a [num_embeddings, dim] table, weight ~ N(0, 1); the padding row is zero
    and receives no gradient."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, device=None, dtype=None):
        super().__init__()
        num_embeddings = _count("Embedding", "num_embeddings", num_embeddings)
        embedding_dim = _count("Embedding", "embedding_dim", embedding_dim)
        padding_idx = padding_row("Embedding", padding_idx, num_embeddings)  # (-1: the last row, as PyTorch's)
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = _new_parameter((num_embeddings, embedding_dim), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """The table drawn from N(0, 1) again, its padding row zeros, as the constructor draws it."""
        init.normal_(self.weight)
        self.reset_padding()

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """An Embedding whose table is a copy of ``embeddings`` [num, dim] (a tensor or an array);
        ``freeze``: the table takes no gradient, as PyTorch's."""
        table = embeddings.detach() if isinstance(embeddings, Tensor) else tensor(embeddings)
        if table.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-d [num, dim], got {table.shape}")
        layer = cls(*table.shape, padding_idx=padding_idx, device=table.device, dtype=table.dtype)
        layer.weight.data[...] = table.data
        layer.weight.requires_grad_(not freeze)
        return layer

    def reset_padding(self):
        if self.padding_idx is not None:
            mark_modified(self.weight)
            self.weight.data[self.padding_idx] = 0

    def forward(self, ids):
        return F.embedding(ids, self.weight, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class EmbeddingBag(Module):
    """Bags of rows of a [num_embeddings, dim] table, each reduced to one row by ``mode`` ('sum',
    'mean' or 'max'; F.embedding_bag's); weight ~ N(0, 1), the padding row zero, as PyTorch's
    (``_weight``: a table to hold instead, as PyTorch's). forward(input, offsets=None,
    per_sample_weights=None): input 2-D [bags, length], or 1-D with offsets. max_norm,
    scale_grad_by_freq and sparse are not supported."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise ValueError(f"EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not supported, got "
                             f"max_norm={max_norm!r}, scale_grad_by_freq={scale_grad_by_freq!r}, sparse={sparse!r}")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        num_embeddings = _count("EmbeddingBag", "num_embeddings", num_embeddings)
        embedding_dim = _count("EmbeddingBag", "embedding_dim", embedding_dim)
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = None, norm_type, False, False
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_row("EmbeddingBag", padding_idx, num_embeddings)
        if _weight is None:
            self.weight = _new_parameter((num_embeddings, embedding_dim), device, dtype)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight must have shape {(num_embeddings, embedding_dim)}, got "
                                 f"{tuple(_weight.shape)}")
            self.weight = Parameter(_weight.detach() if isinstance(_weight, Tensor) else tensor(_weight))

    def reset_parameters(self):
        """The table drawn from N(0, 1) again, its padding row zeros, as the constructor draws it."""
        init.normal_(self.weight)
        Embedding.reset_padding(self)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose table is a copy of ``embeddings`` [num, dim] (a tensor or an array),
        its padding row as given, as Embedding.from_pretrained; ``freeze``: the table takes no gradient,
        as PyTorch's. The other arguments are the constructor's."""
        table = embeddings.detach() if isinstance(embeddings, Tensor) else tensor(embeddings)
        if table.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-d [num, dim], got {table.shape}")
        layer = cls(*table.shape, max_norm, norm_type, scale_grad_by_freq, mode, sparse, table.clone(),
                    include_last_offset, padding_idx)
        layer.weight.requires_grad_(not freeze)
        return layer

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002 (PyTorch's name)
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        text += f", norm_type={self.norm_type}" if self.norm_type != 2 else ""
        text += f", mode={self.mode!r}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class LayerNorm(Module):
    """Normalize the last axis to mean 0 and variance 1, then scale by weight (ones) and
    shift by bias (zeros).

    ``dim`` is PyTorch's normalized_shape: an int, or a tuple or list of the trailing sizes;
    (3, 4) normalizes each [3, 4] block as one vector, with [3, 4] parameters.
    ``elementwise_affine=False`` leaves out weight and bias, ``bias=False`` the bias (None
    then, and out of state_dict, as in PyTorch).
    """

    def __init__(self, dim, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _trailing_shape("LayerNorm", dim)
        self.dim = self.normalized_shape[0] if isinstance(dim, numbers.Integral) else self.normalized_shape
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.register_parameter("weight", _new_parameter(self.normalized_shape, device, dtype)
                                if elementwise_affine else None)
        self.register_parameter("bias", _new_parameter(self.normalized_shape, device, dtype)
                                if elementwise_affine and bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, x):
        x = layer_input("LayerNorm", x)
        if len(self.normalized_shape) == 1 and x.shape[-1:] == self.normalized_shape:
            return F.layer_norm(x, self.weight, self.bias, self.eps)
        return _over_trailing_axes("LayerNorm", lambda v, w, b: F.layer_norm(v, w, b, self.eps), x,
                                   self.normalized_shape, self.weight, self.bias)

    def extra_repr(self):
        text = f"{self.dim}, eps={self.eps}"
        if not self.elementwise_affine:
            return text + ", elementwise_affine=False"
        return text + (", bias=False" if self.bias is None else "")


class RMSNorm(Module):
    """Scale the last axis to root-mean-square 1, then by weight (ones): F.rms_norm. eps=None is
    the dtype's machine epsilon, as in PyTorch. normalized_shape: an int, or a tuple or list of
    the trailing sizes, normalized as one vector with a weight of that shape."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        shape = _trailing_shape("RMSNorm", normalized_shape)
        self.normalized_shape = shape[0] if isinstance(normalized_shape, numbers.Integral) else shape
        self.eps = eps
        self.register_parameter("weight", _new_parameter(shape, device, dtype) if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, x):
        if isinstance(self.normalized_shape, numbers.Integral) or len(self.normalized_shape) == 1:
            return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
        return _over_trailing_axes("RMSNorm", lambda v, w: F.rms_norm(v, v.shape[-1], w, self.eps), x,
                                   self.normalized_shape, self.weight)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class GroupNorm(Module):
    """Standardize each sample's groups of channels (x [N, C, *], C = num_channels split into
    num_groups), then scale and shift each channel: F.group_norm."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        num_groups = _count("GroupNorm", "num_groups", num_groups, minimum=1)
        num_channels = _count("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: {num_channels} channels do not split into {num_groups} groups")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.register_parameter("weight", _new_parameter((num_channels,), device, dtype) if affine else None)
        self.register_parameter("bias", _new_parameter((num_channels,), device, dtype) if affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, x):
        _check_channels("GroupNorm", x, self.num_channels)
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.weight is not None}"


class _RunningStats(Module):
    """A norm layer's running statistics (track_running_stats), kept as buffers: running_mean,
    running_var and num_batches_tracked (batch norm counts its updates in it; instance norm, as
    PyTorch's, keeps it at 0)."""

    def _register_running_stats(self, num_features, device, dtype):
        if self.track_running_stats:
            self.register_buffer("running_mean", _new_parameter((num_features,), device, dtype).detach())
            self.register_buffer("running_var", _new_parameter((num_features,), device, dtype).detach())
            self.register_buffer("num_batches_tracked", Tensor(backend.xp_for(backend.check_device(device)).zeros(
                (), dtype="int64")))

    def reset_running_stats(self):
        """running_mean zeros, running_var ones, num_batches_tracked 0: as if no batch had been seen."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        """The running statistics and weight and bias as the constructor makes them (PyTorch's)."""
        self.reset_running_stats()
        _reset_affine(self)

    def _stats(self):
        """(running_mean, running_var), or (None, None) where none are kept."""
        return (self.running_mean, self.running_var) if self.track_running_stats else (None, None)


class _BatchNorm(_RunningStats):
    """Batch norm over channel axis 1 (F.batch_norm): while training, each batch's own statistics,
    and running ones kept as buffers (running_mean, running_var; num_batches_tracked counts the
    updates); in eval mode, the running ones. momentum=None is not supported (PyTorch's cumulative
    average)."""

    dims: tuple = ()  # the input ranks the layer takes

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        if momentum is None or not 0 <= momentum <= 1:
            raise ValueError(f"{type(self).__name__}: momentum must be a number in [0, 1], got {momentum!r}")
        if not eps > 0:  # (a negative eps could make var + eps negative: a NaN scale)
            raise ValueError(f"{type(self).__name__}: eps must be a number > 0, got {eps!r}")
        num_features = _count(type(self).__name__, "num_features", num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.register_parameter("weight", _new_parameter((num_features,), device, dtype) if affine else None)
        self.register_parameter("bias", _new_parameter((num_features,), device, dtype) if affine else None)
        self.track_running_stats = track_running_stats
        self._register_running_stats(num_features, device, dtype)
        self.reset_parameters()

    def forward(self, x):
        x = layer_input(type(self).__name__, x)
        if x.ndim not in self.dims:
            raise ValueError(f"{type(self).__name__}: expected an input of {' or '.join(map(str, self.dims))} "
                             f"dimensions, got shape {x.shape}")
        _check_channels(type(self).__name__, x, self.num_features)
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data += 1  # in place: a replayed CUDA graph updates the one buffer it recorded
        return F.batch_norm(x, *self._stats(), self.weight, self.bias, training=use_batch, momentum=self.momentum,
                            eps=self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.weight is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of x [N, C] or [N, C, L]."""

    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of x [N, C, H, W]."""

    dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm of x [N, C, D, H, W]."""

    dims = (5,)


class Dropout(Module):
    """Inverted dropout with probability p (0.5 by default, as PyTorch) while training; the
    identity in eval mode. With ``inplace=True`` the result is written into the input, as
    PyTorch's (F.dropout(x, inplace=True))."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p, self.inplace = _probability("Dropout", "p", p), inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, inplace=self.inplace)

    def extra_repr(self):
        return f"p={self.p}" + (", inplace=True" if self.inplace else "")


class _MayActInPlace(Module):
    """An activation that takes PyTorch's ``inplace`` flag: with inplace=True its result is
    written into its input, which it returns, as PyTorch's (F.relu(x, inplace=True): an in-place
    op, recorded while a gradient is). Where such a write is refused (a leaf that requires grad,
    a view of a parameter) the result is a new tensor instead, as takes_inplace says: the flag
    saves memory, it does not change what the model computes (PyTorch raises there)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_MayActInPlace):
    def forward(self, x):
        return F.relu(x, inplace=self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_MayActInPlace):
    def forward(self, x):
        return F.silu(x, inplace=self.inplace)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Softmax(Module):
    """softmax along ``dim`` (PyTorch's name for the axis)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, axis=self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels of x [N, C, H, W] or [C, H, W] (axis -3), at each position."""

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected an input of 3 or 4 axes ([C, H, W] or [N, C, H, W]), got "
                             f"shape {x.shape}")
        return F.softmax(x, axis=-3)


class LogSoftmax(Softmax):
    """log_softmax along ``dim``."""

    def forward(self, x):
        return F.log_softmax(x, axis=self.dim)


class Softmin(Softmax):
    """softmin (softmax of -x) along ``dim``."""

    def forward(self, x):
        return F.softmin(x, axis=self.dim)


class LeakyReLU(_MayActInPlace):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope, inplace=self.inplace)

    def extra_repr(self):
        return ", ".join([f"negative_slope={self.negative_slope}"] + ([super().extra_repr()] if self.inplace else []))


class ELU(_MayActInPlace):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, self.alpha, inplace=self.inplace)

    def extra_repr(self):
        return ", ".join([f"alpha={self.alpha}"] + ([super().extra_repr()] if self.inplace else []))


class CELU(ELU):
    def forward(self, x):
        return F.celu(x, self.alpha, inplace=self.inplace)


class SELU(_MayActInPlace):
    def forward(self, x):
        return F.selu(x, inplace=self.inplace)


class ReLU6(_MayActInPlace):
    def forward(self, x):
        return F.relu6(x, inplace=self.inplace)


class Hardsigmoid(_MayActInPlace):
    def forward(self, x):
        return F.hardsigmoid(x, inplace=self.inplace)

    def extra_repr(self):
        return ""  # (PyTorch's shows no inplace here)


class Hardswish(_MayActInPlace):
    def forward(self, x):
        return F.hardswish(x, inplace=self.inplace)

    def extra_repr(self):
        return ""  # (PyTorch's shows no inplace here)


class Mish(_MayActInPlace):
    def forward(self, x):
        return F.mish(x, inplace=self.inplace)


class Hardtanh(_MayActInPlace):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__(inplace)
        if min_val >= max_val:   # (when built, as PyTorch's module; F.hardtanh takes min_val = max_val)
            raise ValueError(f"Hardtanh: max_val {max_val} must be greater than min_val {min_val}")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val, inplace=self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Threshold(_MayActInPlace):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, x):
        return F.threshold(x, self.threshold, self.value, inplace=self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class RReLU(_MayActInPlace):
    """Randomized leaky ReLU (F.rrelu): while training a slope per element drawn from
    U[lower, upper] for the negative part; in eval mode the mean slope (lower + upper) / 2."""

    def __init__(self, lower=1 / 8, upper=1 / 3, inplace=False):
        super().__init__(inplace)
        self.lower, self.upper = lower, upper

    def forward(self, x):
        return F.rrelu(x, self.lower, self.upper, self.training, inplace=self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    """x where |x| > lambd, else 0 (F.hardshrink)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, x):
        return F.hardshrink(x, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x moved lambd towards 0, and 0 where |x| <= lambd (F.softshrink)."""

    def forward(self, x):
        return F.softshrink(x, self.lambd)


class Tanhshrink(Module):
    def forward(self, x):
        return F.tanhshrink(x)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    def forward(self, x):
        return F.logsigmoid(x)


class Softsign(Module):
    def forward(self, x):
        return F.softsign(x)


class GLU(Module):
    """The gated linear unit: the first half of x along ``dim`` times the sigmoid of the second."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.glu(x, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """F.prelu with a learned slope for the negative part: one (num_parameters=1) or one per
    channel, each starting at ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = _count("PReLU", "num_parameters", num_parameters, 1)
        self.init = init  # (PyTorch's attribute: the slope reset_parameters starts from)
        self.weight = _new_parameter((self.num_parameters,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _ChannelDropout(Dropout):
    """Whole channels zeroed with probability p while training (F.dropout2d's), the identity in
    eval mode."""

    _op = None

    def forward(self, x):
        return type(self)._op(x, self.p, self.training, inplace=self.inplace)


class Dropout1d(_ChannelDropout):
    _op = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    _op = staticmethod(F.dropout2d)


class Dropout3d(_ChannelDropout):
    _op = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """Alpha dropout with probability p while training (F.alpha_dropout: it keeps SELU's mean 0
    and variance 1), the identity in eval mode; p may be 1 (the output is then 0), as PyTorch's."""

    _op = staticmethod(F.alpha_dropout)

    def __init__(self, p=0.5, inplace=False):
        Module.__init__(self)
        self.p, self.inplace = _probability(type(self).__name__, "p", p, one=True), inplace

    def forward(self, x):
        return type(self)._op(x, self.p, self.training, inplace=self.inplace)


class FeatureAlphaDropout(AlphaDropout):
    """Alpha dropout of whole channels of x [N, C, ...] (F.feature_alpha_dropout)."""

    _op = staticmethod(F.feature_alpha_dropout)


class _InstanceNorm(_RunningStats):
    """Each sample's each channel standardized over its positions (F.instance_norm), then, with
    ``affine``, scaled and shifted per channel. With track_running_stats, running statistics
    (averaged over the batch) are kept while training and used in eval mode, as PyTorch's;
    momentum=None leaves them as they are (PyTorch's momentum 0 here)."""

    _dims = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = _count(type(self).__name__, "num_features", num_features, 1)
        self.eps, self.momentum = eps, momentum
        self.register_parameter("weight", _new_parameter((num_features,), device, dtype) if affine else None)
        self.register_parameter("bias", _new_parameter((num_features,), device, dtype) if affine else None)
        self.track_running_stats = track_running_stats
        self._register_running_stats(num_features, device, dtype)
        self.reset_parameters()

    def forward(self, x):
        # (PyTorch only warns where there is no weight to disagree: the count is the layer's all the same)
        _check_channels(type(self).__name__, x, self.num_features, axis=int(x.ndim != self._dims + 1))
        running_mean, running_var = self._stats()
        one = x.ndim == self._dims + 1  # one sample [C, *S]: a batch of one
        y = F.instance_norm(x.unsqueeze(0) if one else x, self.weight, self.bias, self.eps, running_mean=running_mean,
                            running_var=running_var, use_input_stats=self.training or not self.track_running_stats,
                            momentum=0.0 if self.momentum is None else self.momentum)
        return y.squeeze(0) if one else y

    def extra_repr(self):
        affine = self.weight is not None
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={affine}, bias={affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    _dims = 3


class LocalResponseNorm(Module):
    """Each channel of x [N, C, *] divided by (k + alpha / size * the sum of squares over its
    ``size`` neighbouring channels)^beta (F.local_response_norm's); no parameters."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x):
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """PyTorch's legacy local response norm of x [N, C, H, W] (from Lua Torch): y = x (k + alpha /
    size * s)^-beta, s[:, c] the sum of x^2 over channels c - p + 1 .. c + p - 1 (those there),
    p = int((size - 1) / 2 + 1), and, for c >= p, over channel 0 as well: PyTorch's running sum
    never takes channel 0 out (its loop removes channel c - p only while c > p), so its forward
    differs from LocalResponseNorm's there and this one computes the same. Composed of elementwise
    ops, pad and sum, whose gradients are its: the derivative of that forward (PyTorch's hand-written
    backward is not, and fails its own gradcheck for an odd size, or more than p channels)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = _count("CrossMapLRN2d", "size", size, 1)
        self.alpha, self.beta, self.k = alpha, beta, k

    def forward(self, x):
        if not isinstance(x, Tensor) or x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4-D input [N, C, H, W], got "
                             f"{f'shape {x.shape}' if isinstance(x, Tensor) else type(x).__name__}")
        channels, reach = x.shape[1], int((self.size - 1) / 2 + 1) - 1
        square = x * x
        padded = F.pad(square, (0, 0, 0, 0, reach, reach))
        window = sum(padded[:, offset:offset + channels] for offset in range(2 * reach + 1))
        # (channel 0's square, in the channels its running sum never took it out of)
        kept = Tensor((backend.xp_for(x.device).arange(channels) > reach).astype(x.dtype).reshape(1, channels, 1, 1))
        scale = self.k + self.alpha / self.size * (window + square[:, :1] * kept)
        return x * scale ** -self.beta

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _PadNd(Module):
    """x padded on its last ``_dims`` axes, PyTorch's padding order: (left, right) of the last
    axis first, then (top, bottom) of the one before, ...; one int pads every side by it.
    ``_mode``: F.pad's (constant, reflect, replicate, circular)."""

    _dims, _mode = None, "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        name = type(self).__name__
        given = padding
        if isinstance(padding, numbers.Integral):
            padding = (padding,) * (2 * self._dims)
        padding = tuple(padding) if hasattr(padding, "__iter__") else None   # (any iterable, as PyTorch's)
        if (padding is None or len(padding) != 2 * self._dims
                or not all(isinstance(w, numbers.Integral) and not isinstance(w, bool) for w in padding)):
            raise ValueError(f"{name}: padding must be an int or {2 * self._dims} ints, got {given!r}")
        self.padding, self.value = tuple(int(w) for w in padding), value

    def forward(self, x):
        if x.ndim < self._dims:
            raise ValueError(f"{type(self).__name__}: input must have at least {self._dims} axes, got shape {x.shape}")
        if self._mode == "constant":  # (F.pad reads the flat padding as this layer does)
            return F.pad(x, self.padding, value=self.value)
        return F.pad(x, self.padding, mode=self._mode)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}" if isinstance(self, _ConstantPadNd) else f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)


class _ZeroPadNd(_PadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class _ReflectionPadNd(_ZeroPadNd):
    _mode = "reflect"


class _ReplicationPadNd(_ZeroPadNd):
    _mode = "replicate"


class _CircularPadNd(_ZeroPadNd):
    _mode = "circular"


class ZeroPad1d(_ZeroPadNd):
    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    _dims = 3


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class ReflectionPad1d(_ReflectionPadNd):
    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    _dims = 3


class ReplicationPad1d(_ReplicationPadNd):
    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    _dims = 3


class CircularPad1d(_CircularPadNd):
    _dims = 1


class CircularPad2d(_CircularPadNd):
    _dims = 2


class CircularPad3d(_CircularPadNd):
    _dims = 3


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x):
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x):
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """The channels of [N, C, *] in ``groups`` groups, shuffled so that each group's channels
    spread over all groups (F.channel_shuffle's)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Identity(Module):
    """x itself (a placeholder where a model may or may not have a layer)."""

    def forward(self, x):
        return x


class Flatten(Module):
    """Axes start_dim..end_dim as one: [N, C, H, W] -> [N, C * H * W] with the defaults."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return F.reshape(x, _flattened(x.shape, self.start_dim, self.end_dim, "Flatten"))

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Axis ``dim`` as the axes ``sizes``: the inverse of Flatten."""

    def __init__(self, dim, sizes):
        super().__init__()
        self.dim, self.sizes = dim, _split_sizes("Unflatten", sizes)

    def forward(self, x):
        return F.reshape(x, _unflattened(x.shape, self.dim, self.sizes, "Unflatten"))

    def extra_repr(self):
        return f"dim={self.dim}, sizes={self.sizes}"


def _position(container, index, insert=False) -> int:
    """``index`` as a position in ``container``, counting a negative one from the end, as a Python
    list and PyTorch do; ``insert`` admits len(container) too (the place after the last)."""
    cls = type(container).__name__
    try:
        index = operator.index(index)
    except TypeError:
        raise TypeError(f"{cls}: an index must be an integer, got {type(index).__name__} {index!r}") from None
    n = len(container)
    if not -n <= index < n + insert:
        raise IndexError(f"{cls}: index {index} is out of range for length {n} (expected {-n} <= index "
                         f"{'<=' if insert else '<'} {n})")
    return index + n if index < 0 else index


def _iterable(container, method: str, values, expected: str) -> list:
    """``values`` as a list, or a TypeError naming the method: a tensor is refused whole rather than
    taken apart row by row (as PyTorch's ParameterList.extend)."""
    if isinstance(values, Tensor) or not isinstance(values, Iterable):
        raise TypeError(f"{type(container).__name__}.{method}: expected an iterable of {expected}, got "
                        f"{type(values).__name__}")
    return list(values)


def _parameters_repr(container) -> str:
    """ParameterList's and ParameterDict's repr: a line per parameter, its shape and dtype, as PyTorch's."""
    lines = [f"  ({name}): Parameter of shape {tuple(p.shape)}, {p.dtype.name}"
             for name, p in container._parameters.items()]
    return f"{type(container).__name__}(" + "".join(f"\n{line}" for line in lines) + ("\n)" if lines else ")")


def _check_parameter(container, name, value) -> None:
    """What ParameterList and ParameterDict hold: Parameters only, so the optimizer finds each
    (PyTorch would wrap a plain tensor; here wrapping is left to the caller, and said)."""
    if not isinstance(value, Parameter):
        raise TypeError(f"{type(container).__name__}: {name!r} must be a Parameter, got {type(value).__name__}; "
                        "wrap the tensor in nn.Parameter")


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: modules in order, indexed as a Python list with
    PyTorch's errors; an insert or a delete renumbers them '0', '1', ..., as PyTorch does."""

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(list(self._modules.values())[i])
        return list(self._modules.values())[_position(self, i)]

    def __setitem__(self, i, module):
        self.add_module(list(self._modules)[_position(self, i)], module)

    def __delitem__(self, i):
        modules = list(self._modules.values())
        del modules[i if isinstance(i, slice) else _position(self, i)]
        self._renumber(modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        for module in _iterable(self, "extend", modules, "modules"):
            self.append(module)
        return self

    def insert(self, index, module):
        """Put ``module`` before position ``index`` (len(self) appends), as PyTorch's Sequential.insert.
        Refused where the modules have names of their own (Sequential(OrderedDict(...))):
        numbering them would change their state_dict keys (PyTorch's fails there with a KeyError)."""
        index = _position(self, index, insert=True)
        if list(self._modules) != [str(i) for i in range(len(self))]:
            raise ValueError(f"{type(self).__name__}.insert: the modules are named {list(self._modules)}, and "
                             "inserting would number them '0', '1', ... (their state_dict keys would change); "
                             "build a new Sequential(OrderedDict(...)) with the module in its place")
        self._check_module(str(index), module)
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self

    def __add__(self, other):
        """A new container of this one's modules, then other's (the same modules, numbered anew), as PyTorch's."""
        if not isinstance(other, type(self)):
            raise TypeError(f"{type(self).__name__} + {type(other).__name__}: expected another {type(self).__name__}")
        return type(self)().extend([*self, *other])

    def __iadd__(self, modules):
        return self.extend(modules)

    def pop(self, i):
        """Remove and return self[i] (a slice gives a container of those)."""
        popped = self[i]
        del self[i]
        return popped

    def _renumber(self, modules):
        """Hold ``modules`` as '0', '1', ... in place of what it held."""
        for name in list(self._modules):
            delattr(self, name)
        for i, module in enumerate(modules):
            setattr(self, str(i), module)


class Sequential(_ModuleSequence):
    """Apply modules one after another: Sequential(m0, m1, ...) names them '0', '1', ...;
    Sequential(OrderedDict(name=module, ...)) (or another mapping) by its keys, as in PyTorch.
    s[i] is a module, s[a:b] a Sequential of those (under their names)."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(OrderedDict(list(self._modules.items())[i]))
        return super().__getitem__(i)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(_ModuleSequence):
    """A list of modules, registered so their parameters are found (names '0', '1', ...);
    l[a:b] is a ModuleList of those, renumbered, as in PyTorch."""

    def __init__(self, modules=None):
        super().__init__()
        for m in modules if modules is not None else ():
            self.append(m)



class _NamedContainer(Module):
    """What ModuleDict and ParameterDict share: values by name in one registry (``_registry``,
    their _modules or _parameters), with a dict's methods; each class checks what it stores."""

    _registry = "_modules"

    def _held(self):
        return self.__dict__[self._registry]

    def __getitem__(self, name):
        return self._held()[name]

    def __delitem__(self, name):
        if name not in self._held():
            raise KeyError(name)
        delattr(self, name)

    def __contains__(self, name):
        return name in self._held()

    def __iter__(self):
        return iter(self._held())

    def __len__(self):
        return len(self._held())

    def keys(self):
        return self._held().keys()

    def items(self):
        return self._held().items()

    def values(self):
        return self._held().values()

    def pop(self, name):
        """Remove ``name`` and return what it held."""
        value = self[name]
        del self[name]
        return value

    def clear(self):
        for name in list(self._held()):
            del self[name]

    def update(self, items):
        """Add or replace each (name, value) of a mapping, or of an iterable of pairs, in its order."""
        cls = type(self).__name__
        if isinstance(items, (Mapping, _NamedContainer)):
            items = items.items()
        for j, pair in enumerate(_iterable(self, "update", items, "(name, value) pairs or a mapping")):
            if isinstance(pair, (str, Tensor)) or not isinstance(pair, Iterable):
                raise TypeError(f"{cls}.update: element #{j} is a {type(pair).__name__}; expected a (name, value) pair")
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(f"{cls}.update: element #{j} has length {len(pair)}; expected a (name, value) pair")
            self[pair[0]] = pair[1]


class ModuleDict(_NamedContainer):
    """Modules by name, registered so their parameters are found (``name.param`` in state dicts).
    A name is a string without '.' that is not already an attribute ('keys', 'to', 'training'
    ...): KeyError otherwise, as in PyTorch."""

    def __init__(self, modules=None):
        super().__init__()
        for name, module in dict(modules or {}).items():
            self[name] = module

    def __setitem__(self, name, module):
        self.add_module(name, module)


class ParameterDict(_NamedContainer):
    """Parameters by name, registered so the optimizer and state dicts find them; names follow
    ModuleDict's rules, and a name it lacks is a KeyError, as a dict's (PyTorch: AttributeError). As
    PyTorch, a plain dict given to the constructor or update() is taken in sorted key order (an
    OrderedDict, a ParameterDict or a list of pairs keeps its own)."""

    _registry = "_parameters"
    __repr__ = _parameters_repr

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, name, parameter):
        _check_parameter(self, name, parameter)
        self.register_parameter(name, parameter)

    def get(self, name, default=None):
        return self[name] if name in self else default

    def update(self, parameters):
        """As ModuleDict.update, but a plain dict's items in sorted key order, as PyTorch."""
        if isinstance(parameters, Mapping) and not isinstance(parameters, OrderedDict):
            parameters = sorted(parameters.items(), key=lambda item: str(item[0]))
        super().update(parameters)


class ParameterList(Module):
    """A list of Parameters, registered so the optimizer and state dicts find them ('0', '1', ...);
    p[a:b] is a ParameterList of those, renumbered, as in PyTorch."""

    __repr__ = _parameters_repr

    def __init__(self, parameters=None):
        super().__init__()
        for parameter in parameters if parameters is not None else ():
            self.append(parameter)

    def append(self, parameter):
        name = str(len(self._parameters))
        _check_parameter(self, name, parameter)
        setattr(self, name, parameter)
        return self

    def extend(self, parameters):
        for parameter in _iterable(self, "extend", parameters, "Parameters"):
            self.append(parameter)
        return self

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(list(self._parameters.values())[i])
        i = _position(self, i)
        return list(self._parameters.values())[i]

    def __setitem__(self, i, parameter):
        name = str(_position(self, i))
        _check_parameter(self, name, parameter)
        setattr(self, name, parameter)

    def __iter__(self):
        return iter(self._parameters.values())

    def __len__(self):
        return len(self._parameters)
