"""The Lazy modules, as PyTorch's: a Linear, convolution or norm whose input size (in_features,
in_channels, num_features) is read from its first input. Until then its parameters and running
statistics are uninitialized (minitx.nn.parameter.UninitializedParameter: a dtype and a device, no
shape); the first forward gives them their shapes, draws them as the eager class's constructor
would (the same draws from the same generator: seeded, ``LazyLinear(4)`` called on x [N, 3] holds
what ``Linear(3, 4)`` would), and makes the module that class (``cls_to_become``): after it,
``type(m) is Linear``.

Loading a state dict before the first forward gives the uninitialized tensors the state's shapes,
as PyTorch's. An optimizer refuses an uninitialized parameter (call the model once on a batch
first), where PyTorch's takes it."""
from __future__ import annotations

from minitx.autograd.grad_mode import no_grad
from minitx.autograd.tensor import Tensor
from minitx.nn.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from minitx.nn.layers import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                              Linear)
from minitx.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


class LazyModuleMixin:
    """What every Lazy module shares: ``cls_to_become`` (the eager class it becomes), the first
    call that sizes and draws the parameters (``initialize_parameters``, each Lazy class's) and
    ``has_uninitialized_params``.

    The constructor is the eager class's, with a placeholder size (``count``, the attribute that
    holds it, is set to 0 after) and its draws held back; the uninitialized parameters and buffers
    then take the places of the ones it made."""

    cls_to_become = None
    count = None  # the name of the size the first input tells: in_features, in_channels or num_features

    def _build(self, placeholder, *args, device=None, dtype=None, **kwargs):
        object.__setattr__(self, "_building", True)  # (reset_parameters draws nothing meanwhile)
        self.cls_to_become.__init__(self, placeholder, *args, device=device, dtype=dtype, **kwargs)
        object.__delattr__(self, "_building")
        setattr(self, self.count, 0)  # (as PyTorch's: unknown until the first forward)
        for name, p in list(self._parameters.items()):
            if p is not None:
                setattr(self, name, UninitializedParameter(device=device, dtype=dtype))
        for name in ("running_mean", "running_var"):
            if self._buffers.get(name) is not None:
                self.register_buffer(name, UninitializedBuffer(device=device, dtype=dtype))

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(t) for t in [*self._parameters.values(), *self._buffers.values()])

    def reset_parameters(self):
        """The eager class's draws, once every shape is known (before, nothing to draw)."""
        if not (self.has_uninitialized_params() or self.__dict__.get("_building")):
            super().reset_parameters()

    def _materialize(self, shapes: dict) -> None:
        """Give each uninitialized tensor (by name) its shape, then draw as the eager class does;
        nothing where none is uninitialized (a state dict loaded before the first forward set them)."""
        if not self.has_uninitialized_params():
            return
        for name, shape in shapes.items():
            t = getattr(self, name)
            if is_lazy(t):
                t.materialize(shape)
        self.reset_parameters()

    def __call__(self, *args, **kwargs):
        """The first call: size and draw (initialize_parameters), become the eager class, then run
        as it, its hooks included."""
        if not args or not isinstance(args[0], Tensor):
            raise TypeError(f"{type(self).__name__}: the first call takes the input tensor, whose sizes set the "
                            f"layer's; got {type(args[0]).__name__ if args else 'no argument'}")
        with no_grad():
            self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"{type(self).__name__}: its first call left a parameter or buffer uninitialized")
        self.__class__ = self.cls_to_become
        return self(*args, **kwargs)


class LazyLinear(LazyModuleMixin, Linear):
    """Linear with in_features read from the input's last axis at the first forward."""

    cls_to_become, count = Linear, "in_features"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        self._build(0, out_features, bias, device=device, dtype=dtype)

    def initialize_parameters(self, x, *args, **kwargs):
        if x.ndim == 0:
            raise ValueError("LazyLinear: expected an input with a last axis of in_features, got a 0-d tensor")
        self.in_features = x.shape[-1]
        shapes = {"weight": (self.out_features, self.in_features)}
        self._materialize({**shapes, "bias": (self.out_features,)} if self.bias is not None else shapes)


class _LazyConvNd(LazyModuleMixin):
    """A convolution with in_channels read from the input's channel axis (x [N, C, *S], or one
    sample [C, *S]) at the first forward."""

    count = "in_channels"

    def initialize_parameters(self, x, *args, **kwargs):
        name = type(self).__name__
        if x.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"{name}: expected an input [N, C] or [C] and {self.dims} spatial axes, got shape "
                             f"{x.shape}")
        self.in_channels = x.shape[x.ndim - self.dims - 1]
        if self.in_channels % self.groups:
            raise ValueError(f"{name}: the input's {self.in_channels} channels must be divisible by groups "
                             f"{self.groups}")
        if self.transposed:
            weight = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            weight = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self._materialize({"weight": weight, "bias": (self.out_channels,)} if self.bias is not None
                          else {"weight": weight})


class _LazyConv(_LazyConvNd):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        # (placeholder in_channels: groups, which the eager constructor's checks take)
        self._build(groups, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                    device=device, dtype=dtype)


class _LazyConvTranspose(_LazyConvNd):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._build(groups, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
                    padding_mode, device=device, dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d


class _LazyNorm(LazyModuleMixin):
    """A batch or instance norm with num_features read from the input's channel axis at the first
    forward (axis 1; an instance norm's one sample [C, *S]: axis 0)."""

    count = "num_features"

    def initialize_parameters(self, x, *args, **kwargs):
        unbatched = isinstance(self, _LazyInstanceNorm) and x.ndim == self._dims + 1
        if x.ndim < 2 - unbatched:
            raise ValueError(f"{type(self).__name__}: expected an input with a channel axis, got shape {x.shape}")
        self.num_features = x.shape[0 if unbatched else 1]
        self._materialize({name: (self.num_features,) for name in ("weight", "bias", "running_mean", "running_var")
                           if getattr(self, name, None) is not None})


class _LazyBatchNorm(_LazyNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        self._build(0, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)


class _LazyInstanceNorm(_LazyNorm):
    # affine=True and track_running_stats=True as PyTorch's LazyInstanceNorm (the eager class's are False)
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        self._build(1, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
