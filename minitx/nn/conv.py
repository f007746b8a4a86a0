"""Convolution and pooling layers: thin Modules around minitx.functional's conv and pool ops."""
from __future__ import annotations

import math

from minitx import functional as F
from minitx.nn import init
from minitx.nn.layers import _new_parameter
from minitx.nn.module import Module
from minitx.ops.conv import pair


class _ConvNd(Module):
    """Weights [out_channels, in_channels / groups, *kernel] (transposed: [in_channels,
    out_channels / groups, *kernel]) and bias [out_channels], both ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    fan_in = the weight's second axis times prod(kernel), as PyTorch."""

    _op = None  # conv1d, conv2d, ...
    transposed = False

    def __init__(self, in_channels, out_channels, kernel, stride, padding, dilation, groups, bias, device, dtype):
        super().__init__()
        name = type(self).__name__
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups),
                            *((f"kernel_size[{i}]", k) for i, k in enumerate(kernel))):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {value!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels {out_channels} must both be "
                             f"divisible by groups {groups}")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        shape = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        bound = 1 / math.sqrt(shape[1] * math.prod(kernel))
        self.weight = init.uniform_(_new_parameter(shape + kernel, device, dtype), -bound, bound)
        self.bias = init.uniform_(_new_parameter((out_channels,), device, dtype), -bound, bound) if bias else None

    def forward(self, x):
        return type(self)._op(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
                f"bias={self.bias is not None}")


class Conv1d(_ConvNd):
    """y = conv1d(x, weight, bias): x [N, in_channels, L] -> [N, out_channels, L']."""

    _op = staticmethod(F.conv1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, device=None, dtype=None):
        super().__init__(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias,
                         device, dtype)


class Conv2d(_ConvNd):
    """y = conv2d(x, weight, bias): x [N, in_channels, H, W] -> [N, out_channels, H', W']; kernel_size,
    stride, padding and dilation are ints or (height, width) pairs."""

    _op = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, device=None, dtype=None):
        super().__init__(in_channels, out_channels, pair(kernel_size, "kernel_size", "Conv2d"), stride, padding,
                         dilation, groups, bias, device, dtype)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel, stride, padding, output_padding, groups, bias, dilation,
                 device, dtype):
        super().__init__(in_channels, out_channels, kernel, stride, padding, dilation, groups, bias, device, dtype)
        self.output_padding = output_padding

    def forward(self, x):
        return type(self)._op(x, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups,
                              self.dilation)

    def extra_repr(self):
        return f"{super().extra_repr()}, output_padding={self.output_padding}"


class ConvTranspose1d(_ConvTransposeNd):
    """y = conv_transpose1d(x, weight, bias): x [N, in_channels, L] -> [N, out_channels, L'], weight
    [in_channels, out_channels / groups, kernel_size]."""

    _op = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, device=None, dtype=None):
        super().__init__(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, groups, bias,
                         dilation, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """y = conv_transpose2d(x, weight, bias): x [N, in_channels, H, W] -> [N, out_channels, H', W'],
    weight [in_channels, out_channels / groups, kh, kw]."""

    _op = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, device=None, dtype=None):
        super().__init__(in_channels, out_channels, pair(kernel_size, "kernel_size", "ConvTranspose2d"), stride,
                         padding, output_padding, groups, bias, dilation, device, dtype)


class MaxPool2d(Module):
    """The maximum of each window: [N, C, H, W] -> [N, C, H', W'] (stride defaults to kernel_size),
    and with return_indices where each is (F.max_pool2d's)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each window: [N, C, H, W] -> [N, C, H', W'] (stride defaults to kernel_size)."""

    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad=True, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad, self.ceil_mode = count_include_pad, ceil_mode

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.count_include_pad, self.ceil_mode)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"ceil_mode={self.ceil_mode}")
