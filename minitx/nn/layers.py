"""Basic layers. Each is a thin Module around one functional op, holding its parameters."""
from __future__ import annotations

import math

from minitx import backend
from minitx import functional as F
from minitx.autograd.inplace import mark_modified
from minitx.autograd.tensor import Tensor, tensor
from minitx.nn import init
from minitx.nn.module import Module
from minitx.nn.parameter import Parameter


def _new_parameter(shape, device=None, dtype=None):
    device = backend.check_device(device)
    xp = backend.xp_for(device)
    return Parameter(xp.zeros(shape, dtype=backend.resolve_dtype(dtype)))


class Linear(Module):
    """y = x @ weight^T + bias, weight [out_features, in_features].

    With ``activation`` ('relu' or 'gelu_tanh') and ``dropout`` p, the layer computes
    y = Dropout_p(act(x @ weight^T + bias)): the bias, the activation and the dropout are one
    op (F.bias_act_dropout), one pass over the output, one kernel on the GPU.

    Initialized as PyTorch does: weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, activation=None,
                 dropout=0.0):
        super().__init__()
        if activation not in (None, "relu", "gelu_tanh"):
            raise ValueError(f"Linear: activation must be None, 'relu' or 'gelu_tanh', got {activation!r}")
        self.in_features, self.out_features = in_features, out_features
        self.activation, self.dropout = activation, dropout
        bound = 1 / math.sqrt(in_features)
        self.weight = init.uniform_(_new_parameter((out_features, in_features), device, dtype), -bound, bound)
        self.bias = init.uniform_(_new_parameter((out_features,), device, dtype), -bound, bound) if bias else None

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
        if padding_idx is not None and not 0 <= padding_idx < num_embeddings:
            raise ValueError(f"Embedding: padding_idx {padding_idx} is outside [0, {num_embeddings})")
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = init.normal_(_new_parameter((num_embeddings, embedding_dim), device, dtype))
        self.reset_padding()

    def reset_padding(self):
        if self.padding_idx is not None:
            mark_modified(self.weight)
            self.weight.data[self.padding_idx] = 0

    def forward(self, ids):
        return F.embedding(ids, self.weight, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class LayerNorm(Module):
    """Normalize the last axis to mean 0 and variance 1, then scale by weight (ones) and
    shift by bias (zeros)."""

    def __init__(self, dim, eps=1e-5, device=None, dtype=None):
        super().__init__()
        self.dim, self.eps = dim, eps
        self.weight = init.ones_(_new_parameter((dim,), device, dtype))
        self.bias = _new_parameter((dim,), device, dtype)

    def forward(self, x):
        return F.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.dim}, eps={self.eps}"


class RMSNorm(Module):
    """Scale the last axis to root-mean-square 1, then by weight (ones): F.rms_norm. eps=None is
    the dtype's machine epsilon, as in PyTorch."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = normalized_shape if isinstance(normalized_shape, int) else tuple(normalized_shape)
        size = self.normalized_shape if isinstance(self.normalized_shape, int) else self.normalized_shape[-1]
        self.eps = eps
        self.weight = init.ones_(_new_parameter((size,), device, dtype)) if elementwise_affine else None

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class GroupNorm(Module):
    """Standardize each sample's groups of channels (x [N, C, *], C = num_channels split into
    num_groups), then scale and shift each channel: F.group_norm."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: {num_channels} channels do not split into {num_groups} groups")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = init.ones_(_new_parameter((num_channels,), device, dtype)) if affine else None
        self.bias = _new_parameter((num_channels,), device, dtype) if affine else None

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.weight is not None}"


class _BatchNorm(Module):
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
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = init.ones_(_new_parameter((num_features,), device, dtype)) if affine else None
        self.bias = _new_parameter((num_features,), device, dtype) if affine else None
        self.track_running_stats = track_running_stats
        if track_running_stats:
            self.register_buffer("running_mean", _new_parameter((num_features,), device, dtype).detach())
            self.register_buffer("running_var", init.ones_(_new_parameter((num_features,), device, dtype)).detach())
            self.register_buffer("num_batches_tracked", Tensor(backend.xp_for(backend.check_device(device)).zeros(
                (), dtype="int64")))

    def forward(self, x):
        if x.ndim not in self.dims:
            raise ValueError(f"{type(self).__name__}: expected an input of {' or '.join(map(str, self.dims))} "
                             f"dimensions, got shape {x.shape}")
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data += 1  # in place: a replayed CUDA graph updates the one buffer it recorded
        stats = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
        return F.batch_norm(x, *stats, self.weight, self.bias, training=use_batch, momentum=self.momentum,
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


class Dropout(Module):
    """Inverted dropout with probability p while training; the identity in eval mode."""

    def __init__(self, p=0.1):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x):
        return F.silu(x)


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
        start, end = (d % x.ndim if x.ndim else 0 for d in (self.start_dim, self.end_dim))
        if start > end:
            raise ValueError(f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for a tensor "
                             f"of shape {x.shape}")
        return F.reshape(x, x.shape[:start] + (-1,) + x.shape[end + 1:])

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Axis ``dim`` as the axes ``sizes``: the inverse of Flatten."""

    def __init__(self, dim, sizes):
        super().__init__()
        self.dim, self.sizes = dim, tuple(sizes)

    def forward(self, x):
        dim = self.dim % x.ndim
        return F.reshape(x, x.shape[:dim] + self.sizes + x.shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, sizes={self.sizes}"


class Sequential(Module):
    """Apply modules one after another."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of modules, registered so their parameters are found (names '0', '1', ...)."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class ModuleDict(Module):
    """Modules by name, registered so their parameters are found (``name.param`` in state dicts)."""

    def __init__(self, modules=None):
        super().__init__()
        for name, module in dict(modules or {}).items():
            self[name] = module

    def __setitem__(self, name, module):
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict: {name!r} must be a Module, got {type(module).__name__}")
        setattr(self, name, module)

    def __getitem__(self, name):
        return self._modules[name]

    def __contains__(self, name):
        return name in self._modules

    def __iter__(self):
        return iter(self._modules)

    def __len__(self):
        return len(self._modules)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()


class ParameterList(Module):
    """A list of Parameters, registered so the optimizer and state dicts find them ('0', '1', ...)."""

    def __init__(self, parameters=()):
        super().__init__()
        for parameter in parameters:
            self.append(parameter)

    def append(self, parameter):
        if not isinstance(parameter, Parameter):
            raise TypeError(f"ParameterList: got a {type(parameter).__name__}; wrap the tensor in nn.Parameter")
        setattr(self, str(len(self._parameters)), parameter)
        return self

    def __getitem__(self, i):
        return list(self._parameters.values())[i]

    def __iter__(self):
        return iter(self._parameters.values())

    def __len__(self):
        return len(self._parameters)

