"""Convolution, pooling and resampling layers: thin Modules around minitx.functional's conv, pool,
unpool, unfold, fold and interpolate ops, with PyTorch's names and arguments; the 1-d, 2-d and 3-d layers
differ only in the op they call."""
from __future__ import annotations

import math
import numbers
import types

from minitx import functional as F
from minitx.nn import init
from minitx.nn.layers import _new_parameter
from minitx.nn.module import Module
from minitx.ops.conv import _conv_padding, _padding_pairs, as_tuple

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Weights [out_channels, in_channels / groups, *kernel] and bias [out_channels], both
    ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = the weight's second axis times prod(kernel), as
    PyTorch; kernel_size, stride, padding and dilation are ints or one per spatial axis.

    padding_mode: what the padding holds, as PyTorch's: 'zeros', or x's own values, 'reflect'
    (mirrored, the edge not repeated), 'replicate' (the edge repeated) or 'circular' (wrapped
    around: the other end's values); the last three pad x first (F.pad), then convolve unpadded."""

    _op, dims, transposed = None, None, False  # each layer's functional op and number of spatial axes

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:  # its own copy, so that Python's argument errors name the layer
            inherited = cls.__init__
            own = types.FunctionType(inherited.__code__, inherited.__globals__, inherited.__name__,
                                     inherited.__defaults__, inherited.__closure__)
            own.__kwdefaults__, own.__doc__ = inherited.__kwdefaults__, inherited.__doc__
            own.__qualname__ = f"{cls.__name__}.__init__"
            cls.__init__ = own

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {', '.join(map(repr, _PADDING_MODES))}, "
                             f"got {padding_mode!r}")
        kernel = as_tuple(kernel_size, self.dims, "kernel_size", name)
        if not self.transposed:  # (a transposed conv's padding is checked by its op)
            def per_axis(value, what):  # (a one-element tuple stands for every axis, as in conv2d)
                return as_tuple(value, self.dims, what, name, one_for_all=True)

            padding_values = _conv_padding(padding, per_axis(stride, "stride"), name,
                                           lambda: per_axis(padding, "padding"))
            self._padding_pairs = _padding_pairs(padding_values, kernel, per_axis(dilation, "dilation"))
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups),
                            *((f"kernel_size[{i}]", k) for i, k in enumerate(kernel))):
            # (numbers.Integral: a NumPy integer, a shape read from an array, is a size, as Linear takes it)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {value!r}")
        in_channels, out_channels, groups = int(in_channels), int(out_channels), int(groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels {out_channels} must both be "
                             f"divisible by groups {groups}")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        self.weight = _new_parameter(shape + kernel, device, dtype)
        self.bias = _new_parameter((out_channels,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """weight and bias drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) again, as the constructor draws them."""
        fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        if self.padding_mode == "zeros":
            return type(self)._op(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return type(self)._op(self._pad(x), self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def _pad(self, x):
        """x [N, C, *S] (or one sample [C, *S]) padded on its spatial axes with its own values, as
        padding_mode says."""
        if x.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"{type(self).__name__}: input must be [N, C] or [C] and {self.dims} spatial axes, got "
                             f"shape {x.shape}")
        lead = x.ndim - self.dims
        return F.pad(x, ((0, 0),) * lead + self._padding_pairs, mode=self.padding_mode)

    def extra_repr(self):
        mode = "" if self.padding_mode == "zeros" else f", padding_mode={self.padding_mode!r}"
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
                f"bias={self.bias is not None}{mode}")


class Conv1d(_ConvNd):
    """y = conv1d(x, weight, bias): x [N, in_channels, L] -> [N, out_channels, L']."""

    _op, dims = staticmethod(F.conv1d), 1


class Conv2d(_ConvNd):
    """y = conv2d(x, weight, bias): x [N, in_channels, H, W] -> [N, out_channels, H', W']; kernel_size,
    stride, padding and dilation are ints or (height, width) pairs; padding also "valid" or "same"."""

    _op, dims = staticmethod(F.conv2d), 2


class Conv3d(_ConvNd):
    """y = conv3d(x, weight, bias): x [N, in_channels, D, H, W] -> [N, out_channels, D', H', W']."""

    _op, dims = staticmethod(F.conv3d), 3


class _ConvTransposeNd(_ConvNd):
    """Weights [in_channels, out_channels / groups, *kernel] (fan_in: out_channels / groups *
    prod(kernel), as PyTorch) and bias [out_channels]; PyTorch's argument order."""

    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f"{type(self).__name__}: padding_mode must be 'zeros' (the only one a transposed "
                             f"convolution takes, as in PyTorch), got {padding_mode!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)
        self.output_padding = output_padding

    def forward(self, x, output_size=None):
        """output_size (the spatial sizes, or with x's leading axes too), as PyTorch's: it picks the
        output_padding in place of the layer's, among the sizes whose convolution gives x's."""
        output_padding = self.output_padding
        if output_size is not None and getattr(x, "ndim", None) in (self.dims + 1, self.dims + 2):  # (else the op
            output_padding = self._output_padding(x, output_size)  # names what x should be)
        return type(self)._op(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)

    def _output_padding(self, x, output_size):
        """q = size - smallest on each axis, where smallest = (n - 1) s - 2 p + d (k - 1) + 1 is the
        output length with q = 0 and size may exceed it by at most s - 1."""
        name, dims = type(self).__name__, self.dims
        sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size]
        lead = x.ndim - dims  # (2 for a batch, 1 for one sample)
        sizes = sizes[lead:] if len(sizes) == lead + dims else sizes
        if len(sizes) != dims or not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in sizes):
            raise ValueError(f"{name}: output_size must be {dims} ints (or {lead + dims} with x's leading axes), "
                             f"got {output_size!r}")
        stride, padding, dilation = (as_tuple(v, dims, what, name, one_for_all=True) for what, v in
                                     (("stride", self.stride), ("padding", self.padding), ("dilation", self.dilation)))
        smallest = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
                    zip(x.shape[lead:], stride, padding, dilation, self.kernel_size)]
        if not all(low <= n <= low + s - 1 for n, low, s in zip(sizes, smallest, stride)):
            raise ValueError(f"{name}: output_size {tuple(sizes)} must lie between {tuple(smallest)} and "
                             f"{tuple(low + s - 1 for low, s in zip(smallest, stride))} for an input of spatial "
                             f"sizes {x.shape[lead:]}")
        return tuple(int(n) - low for n, low in zip(sizes, smallest))

    def extra_repr(self):
        return f"{super().extra_repr()}, output_padding={self.output_padding}"


class ConvTranspose1d(_ConvTransposeNd):
    """y = conv_transpose1d(x, weight, bias): x [N, in_channels, L] -> [N, out_channels, L']."""

    _op, dims = staticmethod(F.conv_transpose1d), 1


class ConvTranspose2d(_ConvTransposeNd):
    """y = conv_transpose2d(x, weight, bias): x [N, in_channels, H, W] -> [N, out_channels, H', W']."""

    _op, dims = staticmethod(F.conv_transpose2d), 2


class ConvTranspose3d(_ConvTransposeNd):
    """y = conv_transpose3d(x, weight, bias): x [N, in_channels, D, H, W] -> [N, out_channels, D', H', W']."""

    _op, dims = staticmethod(F.conv_transpose3d), 3


class _MaxPoolNd(Module):
    """The maximum of each window (stride defaults to kernel_size), and with return_indices where
    each is (F.max_pool2d's)."""

    _op = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        stride = kernel_size if stride is None else stride  # (as PyTorch keeps it: its repr shows the kernel's)
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x):
        return type(self)._op(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                              self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """[N, C, L] -> [N, C, L']."""

    _op = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """[N, C, H, W] -> [N, C, H', W']."""

    _op = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """[N, C, D, H, W] -> [N, C, D', H', W']."""

    _op = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    """The mean of each window (stride defaults to kernel_size), PyTorch's arguments in its order
    (the 1-d pool has no divisor_override, as PyTorch's)."""

    _op = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        stride = kernel_size if stride is None else stride  # (as PyTorch keeps it: its repr shows the kernel's)
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, x):
        override = () if self.divisor_override is None else (self.divisor_override,)
        return type(self)._op(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                              *override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"  # (PyTorch's)


class AvgPool1d(_AvgPoolNd):
    """[N, C, L] -> [N, C, L']."""

    _op = staticmethod(F.avg_pool1d)


class AvgPool2d(_AvgPoolNd):
    """[N, C, H, W] -> [N, C, H', W']."""

    _op = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """[N, C, D, H, W] -> [N, C, D', H', W']."""

    _op = staticmethod(F.avg_pool3d)


class _LPPoolNd(Module):
    """(sum of x^p over each window)^(1/p), p = norm_type (stride defaults to kernel_size;
    F.lp_pool2d's)."""

    _op = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, x):
        return type(self)._op(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """[N, C, L] -> [N, C, L']."""

    _op = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """[N, C, H, W] -> [N, C, H', W']."""

    _op = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """[N, C, D, H, W] -> [N, C, D', H', W']."""

    _op = staticmethod(F.lp_pool3d)


class _AdaptiveAvgPoolNd(Module):
    """The mean over windows that cover each spatial axis, to a fixed output_size whatever the
    input's (F.adaptive_avg_pool2d's)."""

    _op = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return type(self)._op(x, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(_AdaptiveAvgPoolNd):
    """The maximum over windows that cover each spatial axis, and with return_indices where each
    is (F.adaptive_max_pool2d's)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x):
        return type(self)._op(x, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """[N, C, L] -> [N, C, output_size]."""

    _op = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """[N, C, H, W] -> [N, C, *output_size]: AdaptiveAvgPool2d(1) averages each channel's plane."""

    _op = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """[N, C, D, H, W] -> [N, C, *output_size]."""

    _op = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """[N, C, L] -> [N, C, output_size]."""

    _op = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """[N, C, H, W] -> [N, C, *output_size]."""

    _op = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """[N, C, D, H, W] -> [N, C, *output_size]."""

    _op = staticmethod(F.adaptive_max_pool3d)


class _FractionalMaxPoolNd(Module):
    """The maximum of each kernel_size window, output_size windows per spatial axis (or
    int(size * output_ratio)) at pseudo-random steps (F.fractional_max_pool2d's); the steps are
    drawn from minitx.random at each call, or read from the ``_random_samples`` buffer [N, C, dims]
    where one is given, as PyTorch's."""

    _op, dims = None, None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio (one of them), "
                             f"got output_size={output_size!r}, output_ratio={output_ratio!r}")
        if output_ratio is not None:
            ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * self.dims
            if len(ratios) != self.dims or not all(isinstance(r, numbers.Real) and 0 < r < 1 for r in ratios):
                raise ValueError(f"{name}: output_ratio must be between 0 and 1, one number or {self.dims}, got "
                                 f"{output_ratio!r}")
            output_ratio = ratios
        self.kernel_size = as_tuple(kernel_size, self.dims, "kernel_size", name, one_for_all=True)
        self.output_size = None if output_size is None else as_tuple(output_size, self.dims, "output_size", name)
        self.output_ratio, self.return_indices = output_ratio, return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, x):
        return type(self)._op(x, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """[N, C, H, W] -> [N, C, *output_size], each the maximum of a kernel_size window."""

    _op, dims = staticmethod(F.fractional_max_pool2d), 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """[N, C, D, H, W] -> [N, C, *output_size], each the maximum of a kernel_size window."""

    _op, dims = staticmethod(F.fractional_max_pool3d), 3


class _MaxUnpoolNd(Module):
    """The partial inverse of a max pool: each input value put back where ``indices`` (the pool's
    return_indices) say it came from, zeros elsewhere (F.max_unpool2d's)."""

    _op = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x, indices, output_size=None):
        return type(self)._op(x, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """[N, C, L'] and indices from MaxPool1d(return_indices=True) -> [N, C, L]."""

    _op = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """[N, C, H', W'] and indices from MaxPool2d(return_indices=True) -> [N, C, H, W]."""

    _op = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """[N, C, D', H', W'] and indices from MaxPool3d(return_indices=True) -> [N, C, D, H, W]."""

    _op = staticmethod(F.max_unpool3d)


class Upsample(Module):
    """F.interpolate as a layer: resize [N, C, L], [N, C, H, W] or [N, C, D, H, W] to ``size`` or
    by ``scale_factor`` (mode nearest, nearest-exact, linear, bilinear, bicubic, trilinear or area;
    align_corners for linear, bilinear, bicubic and trilinear; recompute_scale_factor as F.interpolate's)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode, self.align_corners = size, _floats(scale_factor), mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        """PyTorch's: the scale factor where there is one, else the size, then the mode."""
        shown = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{shown}, mode={self.mode!r}"


def _floats(scale_factor):
    """A scale factor (or one per axis) as floats, as PyTorch's Upsample keeps it (its repr shows
    2.0); what is no number is left for interpolate to refuse by name."""
    def real(factor):
        return float(factor) if isinstance(factor, numbers.Real) and not isinstance(factor, bool) else factor

    return tuple(map(real, scale_factor)) if isinstance(scale_factor, (tuple, list)) else real(scale_factor)


class UpsamplingNearest2d(Upsample):
    """Upsample with mode 'nearest' (PyTorch's older name): [N, C, H, W] resized to ``size`` or by
    ``scale_factor``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode 'bilinear' and align_corners=True, as PyTorch's (its older name; the
    corners of the input and output grids meet): [N, C, H, W] resized to ``size`` or by ``scale_factor``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Unfold(Module):
    """F.unfold as a layer: the sliding blocks of [N, C, H, W] as the columns of [N, C * kh * kw, L]."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x):
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Fold(Unfold):
    """F.fold as a layer: the columns of [N, C * kh * kw, L] added back into [N, C, *output_size]
    at their blocks, overlaps summed (Unfold's adjoint)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, x):
        return F.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, {super().extra_repr()}"
