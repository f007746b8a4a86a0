"""Convolution and pooling over 1, 2 or 3 spatial axes as im2col, with hand-derived backwards
(col2im); the 1-d, 2-d and 3-d ops are one op each, told the number of spatial axes.

im2col: for input x [N, C, *S] (S: the spatial sizes, x already padded) and a kernel of sizes k
moved with stride s and spread by dilation d (each a tuple, one entry per spatial axis t),
output position i = (i_1, ...) and kernel offset a = (a_1, ...) read

    x[n, c, i_1 * s_1 + a_1 * d_1, ..., i_t * s_t + a_t * d_t, ...]

All those reads at once form ``cols`` [N, C, *k, *out] (one fancy-indexing gather, with
rows_t[a, i] = i * s_t + a * d_t broadcast along the other axes), and convolution becomes a
matrix product over (C, *k). col2im is the transpose of that gather: each entry of dcols is
ADDED back to the x position it was read from (overlapping windows read a position several
times), dx = zeros, then dx[:, :, rows_1, rows_2, ...] += dcols (scatter-add).

Padding is a (before, after) pair per axis: "same" padding and ceil_mode make it uneven.
unfold and fold are im2col and col2im themselves as ops (2 spatial axes, PyTorch's layout); the
power-average pools (lp_pool) are composed of avg_pool.
"""
from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

from minitx import random as mrandom
from minitx.autograd.function import Function
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.backend import get_array_module, is_floating
from minitx.ops._args import floating, product_input
from minitx.ops.elementwise import dy_where, where
from minitx.ops.indexing import add_at, gather
from minitx.ops.shape import concatenate

__all__ = ["ConvNd", "ConvTransposeNd", "Unfold", "Fold", "MaxPoolNd", "AvgPoolNd"]

SPATIAL = {1: ("length",), 2: ("height", "width"), 3: ("depth", "height", "width")}  # axis names
LAYOUT = {1: "[N, C, L]", 2: "[N, C, H, W]", 3: "[N, C, D, H, W]"}
_TUPLE = {1: "a 1-tuple", 2: "a pair", 3: "a triple"}


def op_name(kind, dims):
    """conv2d, max_pool3d, ...: the op's name for ``dims`` spatial axes, which must be 1, 2 or 3."""
    if dims not in SPATIAL:
        raise ValueError(f"{kind}: the number of spatial axes must be 1, 2 or 3, got {dims!r}")
    return f"{kind}{dims}d"


def as_tuple(value, dims, name, op, one_for_all=False):
    """An int, or a tuple of ``dims`` ints (one per spatial axis), as a tuple of ints. With
    ``one_for_all`` a tuple or list of one int stands for every axis too, as PyTorch's conv and
    pooling read it (ATen's expand_param_if_needed); its interpolate, unfold and max_unpool do not."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if one_for_all and len(values) == 1:
        values *= dims
    if len(values) != dims or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                      for v in values):   # (a bool is refused, as PyTorch's)
        raise ValueError(f"{op}: {name} must be an int or {_TUPLE[dims]} of ints, got {value!r}")
    return tuple(int(v) for v in values)


def _window_starts(length, before, after, kernel, stride, dilation, op, axis, ceil_mode=False, out=None,
                   what="input"):
    """rows[a, i] = i * stride + a * dilation: the padded input position read by output i at
    offset a, and how far the last window reads past the padded input (ceil_mode's extra padding).

    ceil_mode rounds the number of windows up, as PyTorch: a last window that starts in the
    right padding (at or past length + before) is dropped. what: the array the windows lie in, for
    the error (fold's lie in its output)."""
    padded, span = length + before + after, dilation * (kernel - 1) + 1
    if padded < span:
        raise ValueError(f"{op}: the {axis} of the padded {what}, {padded}, is smaller than the kernel's span "
                         f"{span} (kernel {kernel}, dilation {dilation})")
    if out is None:
        out = (-(-(padded - span) // stride) if ceil_mode else (padded - span) // stride) + 1
    if ceil_mode and (out - 1) * stride >= length + before:
        out -= 1
    extra = max(0, (out - 1) * stride + span - padded)
    return np.arange(kernel)[:, None] * dilation + np.arange(out)[None, :] * stride, extra


_ALL = (slice(None), slice(None))  # the batch and channel axes, whole


def _check_windows(op, kernel, stride, padding, dilation):
    """kernel, stride and dilation >= 1, padding ((before, after) per axis) >= 0, or a ValueError."""
    if min(kernel + stride + dilation) < 1 or min(sum(padding, ())) < 0:
        raise ValueError(f"{op}: kernel, stride and dilation must be >= 1 and padding >= 0, got kernel "
                         f"{kernel}, stride {stride}, padding {padding}, dilation {dilation}")


class _Windows:
    """The im2col/col2im geometry of one call over the spatial axes of x [N, C, *spatial]:
    padding as a (before, after) pair per axis (after grown by ceil_mode's extra), and where each
    window reads."""

    def __init__(self, op, x_shape, kernel, stride, padding, dilation, ceil_mode=False, out=None, what="input"):
        """out: the number of windows per axis, when the caller knows it (a transposed conv's input);
        what: the array x_shape is, for the errors (_window_starts)."""
        _check_windows(op, kernel, stride, padding, dilation)
        dims = len(kernel)
        self.in_shape, self.kernel, self.declared = x_shape, tuple(kernel), tuple(padding)
        index, pads = [], []
        for t, axis in enumerate(SPATIAL[dims]):
            rows, extra = _window_starts(x_shape[2 + t], *padding[t], kernel[t], stride[t], dilation[t], op, axis,
                                         ceil_mode, None if out is None else out[t], what)
            shape = [1] * (2 * dims)  # kernel offsets on axis t, outputs on axis dims + t: [*kernel, *out]
            shape[t], shape[dims + t] = rows.shape
            index.append(rows.reshape(shape))
            pads.append((padding[t][0], padding[t][1] + extra))
        self.index, self.padding = tuple(index), tuple(pads)
        self.out = tuple(rows.shape[dims + t] for t, rows in enumerate(index))
        self.padded_shape = x_shape[:2] + tuple(n + b + a for n, (b, a) in zip(x_shape[2:], pads))

    def pad(self, x, value=0.0):
        xp = get_array_module(x)
        return xp.pad(x, ((0, 0), (0, 0)) + self.padding, mode="constant", constant_values=value)

    def im2col(self, x_padded):
        """cols[n, c, a_1.., i_1..] = x_padded[n, c, index_1[a_1, i_1], ...]: [N, C, *kernel, *out]."""
        xp = get_array_module(x_padded)
        return x_padded[_ALL + tuple(xp.asarray(rows) for rows in self.index)]

    def col2im(self, dcols):
        """dx (unpadded) with every dcols entry added where im2col read it."""
        xp = get_array_module(dcols)
        dx = xp.zeros(self.padded_shape, dtype=dcols.dtype)
        add_at(dx, _ALL + tuple(xp.asarray(rows) for rows in self.index), dcols)
        return dx[_ALL + tuple(slice(b, b + n) for (b, _), n in zip(self.padding, self.in_shape[2:]))]

    def inside(self, low, high):
        """[prod(kernel), *out]: whether each window position lies in [low_t, high_t) on every axis t
        (padded coordinates)."""
        mask = np.bool_(True)
        for rows, lo, hi in zip(self.index, low, high):
            mask = mask & (rows >= lo) & (rows < hi)
        return mask.reshape((-1,) + self.out)

    def in_input(self):
        """inside() the input itself, padding excluded."""
        return self.inside([b for b, _ in self.padding],
                           [b + n for (b, _), n in zip(self.padding, self.in_shape[2:])])


def _check_dims(op, what, a, dims, layout=None):
    if a.ndim != dims + 2:
        # (an input of one sample, [C, *spatial], is made a batch of one by the op's function)
        sample = f" or {dims + 1}-D [{LAYOUT[dims][4:]} (one sample)" if layout is None else ""
        raise ValueError(f"{op}: {what} must be {dims + 2}-D {layout or LAYOUT[dims]}{sample}, got shape {a.shape}")


def _check_groups(op, groups):
    if not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"{op}: groups must be an int >= 1, got {groups!r}")
    return int(groups)


def _check_bias(op, b, channels):
    if b is not None and b.shape != (channels,):
        raise ValueError(f"{op}: bias must have shape ({channels},), got {b.shape}")


def _conv_padding(padding, stride, op, as_ints):
    """A conv's padding: "valid", "same" (stride 1 only, as PyTorch), or ``as_ints()``."""
    if not isinstance(padding, str):
        return as_ints()
    if padding not in ("valid", "same"):
        raise ValueError(f"{op}: padding must be 'valid', 'same' or ints, got {padding!r}")
    if padding == "same" and any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' needs stride 1, got stride {stride}")
    return padding


def _padding_pairs(padding, kernel, dilation):
    """(before, after) per axis: "valid" none; "same" d * (k - 1) in all, so that the output keeps
    the input's size, the odd one after (PyTorch's choice); ints on both sides."""
    if padding == "valid":
        return ((0, 0),) * len(kernel)
    if padding == "same":
        return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
    return tuple((p, p) for p in padding)


class ConvNd(Function):
    """Cross-correlation (what deep learning calls convolution) of x [N, C, *S] with weights
    w [O, C/g, *k] in g = ``groups`` groups over ``dims`` spatial axes, plus an optional bias b [O]:

        y[n, o, i] = b[o] + sum_{c, a} w[o, c, a] * xpad[n, G(o) + c, i * s + a * d]

    (i, a: an output position and a kernel offset, one entry per spatial axis, i * s + a * d
    taken axis by axis; G(o) = first channel of o's group). With cols = im2col(xpad) grouped as
    [N, g, K, L] (K = C/g * prod(k), L = prod(out)) and W = w as [g, O/g, K]:

        forward   Y = W @ cols                              [N, g, O/g, L]
        backward  dW = sum over n of dY @ cols^T            dcols = W^T @ dY
                  dx = col2im(dcols) (unpadded)             db = sum of dy over n and the spatial axes

    padding: ints (both sides of each axis), "valid" (none) or "same" (see _padding_pairs).

    Derivation: docs/backprop/convolution.md
    """

    def __init__(self, dims, stride=1, padding=0, dilation=1, groups=1):
        op = self.op = op_name("conv", dims)
        self.dims = dims
        self.stride = as_tuple(stride, dims, "stride", op, one_for_all=True)
        self.dilation = as_tuple(dilation, dims, "dilation", op, one_for_all=True)
        self.padding = _conv_padding(padding, self.stride, op,
                                     lambda: as_tuple(padding, dims, "padding", op, one_for_all=True))
        self.groups = _check_groups(op, groups)

    def forward(self, x, w, b=None):
        op, g, dims = self.op, self.groups, self.dims
        _check_dims(op, "input", x, dims)
        _check_dims(op, "weight", w, dims, "[out_channels, in_channels / groups, *kernel]")
        (n, c), o, kernel = x.shape[:2], w.shape[0], w.shape[2:]
        if c % g or o % g or w.shape[1] * g != c:
            raise ValueError(f"{op}: input with {c} channels, weight {w.shape} and groups={g} do not fit: "
                             f"need weight [out_channels, in_channels / groups, *kernel] and both channel "
                             f"counts divisible by groups")
        _check_bias(op, b, o)
        self.has_bias = b is not None
        self.windows = _Windows(op, x.shape, kernel, self.stride, _padding_pairs(self.padding, kernel, self.dilation),
                                self.dilation)
        out = self.windows.out
        window = c // g * math.prod(kernel)  # (not -1: an empty batch or 0 out_channels leave it undetermined)
        cols = self.windows.im2col(self.windows.pad(x)).reshape(n, g, window, math.prod(out))
        weights = w.reshape(g, o // g, window)
        self.save_for_backward(cols, weights)
        self.w_shape = w.shape
        y = (weights @ cols).reshape((n, o) + out)
        return y + b.reshape((o,) + (1,) * dims) if b is not None else y

    def backward(self, dy):
        cols, weights = self.saved
        n, g = cols.shape[:2]
        dy_groups = dy.reshape(n, g, weights.shape[1], cols.shape[-1])
        dx = dw = db = None
        if self.needs_input_grad[0]:
            xp = get_array_module(dy)
            dcols = xp.swapaxes(weights, -1, -2) @ dy_groups
            dx = self.windows.col2im(dcols.reshape((n, self.windows.in_shape[1]) + self.windows.kernel
                                                   + self.windows.out))
        if self.needs_input_grad[1]:
            dw = (dy_groups @ get_array_module(dy).swapaxes(cols, -1, -2)).sum(axis=0).reshape(self.w_shape)
        if not self.has_bias:
            return dx, dw
        if self.needs_input_grad[2]:
            db = dy.sum(axis=(0,) + tuple(range(2, dy.ndim)))
        return dx, dw, db


def _apply(op, x, weight, bias):
    x = product_input(op.op, x, weight, bias)
    return op(x, weight) if bias is None else op(x, weight, bias)


def _one_sample_as_a_batch(dims, x, apply):
    """apply(x) for a batch x [N, C, *spatial]; one sample [C, *spatial], as PyTorch also takes,
    goes in as a batch of one and comes out without that axis (each tensor of a tuple)."""
    if not isinstance(x, Tensor) or x.ndim != dims + 1:
        return apply(x)  # (what is no tensor is refused there, by name)
    out = apply(x.unsqueeze(0))
    return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, L] cross-correlated with weight [O, C/groups, k], plus bias [O] (arguments as conv2d's)."""
    op = ConvNd(1, stride, padding, dilation, groups)
    return _one_sample_as_a_batch(1, x, lambda x: _apply(op, x, weight, bias))


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, H, W] cross-correlated with weight [O, C/groups, kh, kw], plus bias [O]; stride,
    padding (zeros) and dilation are ints or (height, width) pairs; padding may also be "valid"
    (none) or "same" (the output keeps the input's size; stride 1)."""
    op = ConvNd(2, stride, padding, dilation, groups)
    return _one_sample_as_a_batch(2, x, lambda x: _apply(op, x, weight, bias))


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, D, H, W] cross-correlated with weight [O, C/groups, kd, kh, kw], plus bias [O]
    (arguments as conv2d's, triples for (depth, height, width))."""
    op = ConvNd(3, stride, padding, dilation, groups)
    return _one_sample_as_a_batch(3, x, lambda x: _apply(op, x, weight, bias))


class ConvTransposeNd(Function):
    """The adjoint of the convolution in its input (transposed convolution), over ``dims`` = 1, 2
    or 3 spatial axes: x [N, C, *S] with weights w [C, O/g, *k] in g = ``groups`` groups, plus
    bias b [O], gives y [N, O, *T], T = (S - 1) * s - 2 * p + d * (k - 1) + output_padding + 1 on
    each axis: the sizes whose convolution (same s, p, d; w read as [C, O/g, *k] = [out, in/g, *k])
    has S outputs, output_padding choosing among the sizes that do. With X = x as [N, g, C/g, L]
    (L = prod(S)), W = w as [g, C/g, K] (K = O/g * prod(k)) and im2col/col2im over ypad:

        forward   y = col2im(W^T @ X)           (the convolution's dx, its dy being x)
        backward  dcols = im2col(dypad)         [N, g, K, L]
                  dx = W @ dcols                dW = sum over n of X @ dcols^T
                  db = sum of dy over n and the spatial axes

    y is a linear map of x, A x, whose matrix A is the convolution's transposed: so dx = A^T dy
    is that convolution of dy, and dW pairs each x entry with the dy window it was scattered to.
    """

    def __init__(self, dims, stride=1, padding=0, output_padding=0, dilation=1, groups=1):
        op = self.op = op_name("conv_transpose", dims)
        self.dims = dims
        self.stride, self.padding, self.output_padding, self.dilation = (
            as_tuple(v, dims, name, op, one_for_all=True) for name, v in
            (("stride", stride), ("padding", padding), ("output_padding", output_padding), ("dilation", dilation)))
        if any(not 0 <= q < max(s, d) for q, s, d in zip(self.output_padding, self.stride, self.dilation)):
            raise ValueError(f"{op}: output_padding {self.output_padding} must be >= 0 and smaller than the stride "
                             f"{self.stride} or the dilation {self.dilation} on each axis")
        self.groups = _check_groups(op, groups)

    def forward(self, x, w, b=None):
        op, g, dims = self.op, self.groups, self.dims
        _check_dims(op, "input", x, dims)
        _check_dims(op, "weight", w, dims, "[in_channels, out_channels / groups, *kernel]")
        (n, c), kernel, spatial = x.shape[:2], w.shape[2:], x.shape[2:]
        if c % g or w.shape[0] != c:
            raise ValueError(f"{op}: input with {c} channels, weight {w.shape} and groups={g} do not fit: need weight "
                             "[in_channels, out_channels / groups, *kernel] and in_channels divisible by groups")
        o = w.shape[1] * g
        _check_bias(op, b, o)
        sizes = tuple((m - 1) * s - 2 * p + d * (k - 1) + q + 1 for m, s, p, d, k, q in
                      zip(spatial, self.stride, self.padding, self.dilation, kernel, self.output_padding))
        if min(sizes, default=1) < 1:
            raise ValueError(f"{op}: the output would have sizes {sizes}: padding {self.padding} is too large for "
                             f"input {spatial} and kernel {kernel}")
        self.windows = _Windows(op, (n, o) + sizes, kernel, self.stride, tuple((p, p) for p in self.padding),
                                self.dilation, out=spatial)
        # (not -1: 0 in_channels leave it undetermined)
        inputs, weights = x.reshape(n, g, c // g, math.prod(spatial)), w.reshape(g, c // g, o // g * math.prod(kernel))
        self.save_for_backward(inputs, weights)
        self.shapes, self.has_bias = (x.shape, w.shape), b is not None
        cols = get_array_module(x).swapaxes(weights, -1, -2) @ inputs
        y = self.windows.col2im(cols.reshape((n, o) + kernel + spatial))
        return y + b.reshape((o,) + (1,) * dims) if b is not None else y

    def backward(self, dy):
        inputs, weights = self.saved
        xp = get_array_module(dy)
        dcols = self.windows.im2col(self.windows.pad(dy)).reshape(inputs.shape[:2] + weights.shape[2:]
                                                                  + inputs.shape[3:])
        dx = (weights @ dcols).reshape(self.shapes[0]) if self.needs_input_grad[0] else None
        dw = (inputs @ xp.swapaxes(dcols, -1, -2)).sum(axis=0).reshape(self.shapes[1]) \
            if self.needs_input_grad[1] else None
        if not self.has_bias:
            return dx, dw
        return dx, dw, dy.sum(axis=(0,) + tuple(range(2, dy.ndim))) if self.needs_input_grad[2] else None


def conv_transpose1d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """x [N, C, L] through the transposed convolution with weight [C, O/groups, k], plus bias [O]."""
    op = ConvTransposeNd(1, stride, padding, output_padding, dilation, groups)
    return _one_sample_as_a_batch(1, x, lambda x: _apply(op, x, weight, bias))


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """x [N, C, H, W] through the transposed convolution with weight [C, O/groups, kh, kw], plus
    bias [O]; stride, padding, output_padding and dilation are ints or (height, width) pairs."""
    op = ConvTransposeNd(2, stride, padding, output_padding, dilation, groups)
    return _one_sample_as_a_batch(2, x, lambda x: _apply(op, x, weight, bias))


def conv_transpose3d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """x [N, C, D, H, W] through the transposed convolution with weight [C, O/groups, kd, kh, kw],
    plus bias [O] (arguments as conv_transpose2d's, triples for (depth, height, width))."""
    op = ConvTransposeNd(3, stride, padding, output_padding, dilation, groups)
    return _one_sample_as_a_batch(3, x, lambda x: _apply(op, x, weight, bias))


# ---------------------------------------------------------------- unfold and fold: im2col and col2im as ops
class _Blocks(Function):
    """What unfold and fold share: the blocks (windows) of kernel_size k moved with stride s over the
    two spatial axes of [N, C, H, W] padded by p zeros on each side, their taps d = dilation apart,
    where _Windows says each one reads (the convolution's own im2col and col2im); and _unfold (U)
    and _fold (U^T), each op's forward and the other's backward."""

    def __init__(self, op, kernel_size, dilation, padding, stride):
        self.op = op
        self.kernel, self.dilation, self.padding, self.stride = (
            as_tuple(v, 2, name, op) for name, v in (("kernel_size", kernel_size), ("dilation", dilation),
                                                     ("padding", padding), ("stride", stride)))
        self.pads = tuple((p, p) for p in self.padding)
        _check_windows(op, self.kernel, self.stride, self.pads, self.dilation)  # (before fold divides by the kernel)

    def _geometry(self, shape, what):
        """The blocks of an array [N, C, H, W] of ``shape`` (the input of unfold, the output of fold)."""
        self.windows = _Windows(self.op, shape, self.kernel, self.stride, self.pads, self.dilation, what=what)

    def _unfold(self, x):
        """U x: im2col's [N, C, kh, kw, bh, bw] as [N, C * kh * kw, L] (L = bh * bw blocks)."""
        n, c = x.shape[:2]  # (sizes, not -1: an empty batch leaves -1 undetermined)
        cols = self.windows.im2col(self.windows.pad(x))
        return cols.reshape(n, c * math.prod(self.kernel), math.prod(self.windows.out))

    def _fold(self, cols):
        """U^T cols: cols [N, C * kh * kw, L] added back into [N, C, H, W] by col2im."""
        shape = cols.shape[:1] + self.windows.in_shape[1:2] + self.kernel + self.windows.out
        return self.windows.col2im(cols.reshape(shape))


def _blocks_input(x):
    """x for unfold and fold: booleans kept (a block of booleans, as PyTorch's), integers as float32
    (PyTorch refuses them; an op on real numbers computes them so, see floating)."""
    x = as_tensor(x)
    return x if x.dtype == np.bool_ else floating(x)


class Unfold(_Blocks):
    """im2col as an op: each block of x [N, C, H, W] made a column of cols [N, C * kh * kw, L],
    its entries in (channel, kernel row, kernel column) order, the L = bh * bw blocks in row-major
    order, with xpad = x padded by p zeros on each side:

        cols[n, (c, a_1, a_2), (i_1, i_2)] = xpad[n, c, i_1 * s_1 + a_1 * d_1, i_2 * s_2 + a_2 * d_2]

    b_t = (n_t + 2 p_t - d_t (k_t - 1) - 1) // s_t + 1 blocks along an axis of n_t entries. A
    convolution is then w.reshape(O, -1) @ cols (docs/backprop/convolution.md).

    cols = U x is linear in x, each cols entry a copy of one xpad entry. Its adjoint (the transpose
    of U's matrix) is fold, U^T: <U x, c> = <x, U^T c> for every x and every c of cols' shape, as
    both sides are the sum of x[n, c, r] * c[n, (c, a), i] over the pairs (r, (a, i)) where block i
    reads r at offset a. So the vector-Jacobian product is

        backward  dx = U^T dcols = fold(dcols)     (col2im: each dcols entry added back where it was
                                                    read, overlapping blocks adding up; the padding's
                                                    share dropped)

    Derivation: docs/backprop/convolution.md
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__("unfold", kernel_size, dilation, padding, stride)

    def forward(self, x):
        _check_dims(self.op, "input", x, 2)
        self._geometry(x.shape, "input")
        return self._unfold(x)

    def backward(self, dcols):
        return (self._fold(dcols),)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of x [N, C, H, W] (or one sample [C, H, W]) as the columns of
    [N, C * kh * kw, L] (or [C * kh * kw, L]), as PyTorch's: kernel_size, dilation, padding (zeros)
    and stride are ints or (height, width) pairs. fold is its adjoint (see Unfold)."""
    op = Unfold(kernel_size, dilation, padding, stride)
    return _one_sample_as_a_batch(2, _blocks_input(x), op)


class Fold(_Blocks):
    """col2im as an op, unfold's adjoint U^T: cols [N, C * kh * kw, L] summed into
    y [N, C, *output_size], each column added back where unfold would have read its block:

        ypad = zeros;  ypad[n, c, i_1 * s_1 + a_1 * d_1, i_2 * s_2 + a_2 * d_2] += cols[n, (c, a_1, a_2), (i_1, i_2)]
        y = ypad without its padding (what lands there is dropped)

    Where blocks overlap their entries add up, so fold(unfold(x)) is x times the number of blocks
    reading each entry, not x. L must be the number of blocks output_size holds, b_1 * b_2 (Unfold),
    and axis 1 a whole number of blocks of C * kh * kw entries. y = U^T cols is linear in cols, and
    the adjoint of U^T is U (<U^T c, y> = <c, U y>), so

        backward  dcols = U dy = unfold(dy)        (im2col: each block of dy, padded with zeros)

    Derivation: docs/backprop/convolution.md
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__("fold", kernel_size, dilation, padding, stride)
        self.output_size = as_tuple(output_size, 2, "output_size", "fold")
        if min(self.output_size) < 1:
            raise ValueError(f"fold: output_size must be positive, got {self.output_size}")

    def forward(self, cols):
        if cols.ndim != 3:
            raise ValueError(f"fold: input must be 3-D [N, C * kh * kw, L] or 2-D [C * kh * kw, L] (one sample), "
                             f"got shape {cols.shape}")
        (n, rows, count), window = cols.shape, math.prod(self.kernel)
        if rows % window:
            raise ValueError(f"fold: the input's axis 1, {rows}, must be a whole number of blocks of kernel_size "
                             f"{self.kernel} (a multiple of {window}), got shape {cols.shape}")
        self._geometry((n, rows // window) + self.output_size, "output")
        blocks = self.windows.out
        if count != math.prod(blocks):
            raise ValueError(f"fold: output_size {self.output_size} with kernel_size {self.kernel}, dilation "
                             f"{self.dilation}, padding {self.padding} and stride {self.stride} holds "
                             f"{blocks[0]} * {blocks[1]} = {math.prod(blocks)} blocks, but the input's axis 2 "
                             f"has {count} (shape {cols.shape})")
        return self._fold(cols)

    def backward(self, dy):
        return (self._unfold(dy),)


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The columns x [N, C * kh * kw, L] (or one sample [C * kh * kw, L]) added back into
    [N, C, *output_size] (or [C, *output_size]) at their blocks, overlaps summed, as PyTorch's
    (arguments as unfold's). The adjoint of unfold (see Fold)."""
    op = Fold(output_size, kernel_size, dilation, padding, stride)
    # (fold's batch is 3-D, so one sample is 2-D: as a batch with one axis after [N, C])
    return _one_sample_as_a_batch(1, _blocks_input(x), op)


class _PoolNd(Function):
    kind = None  # "max_pool" or "avg_pool"

    def __init__(self, dims, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        op = self.op = op_name(self.kind, dims)
        self.dims = dims
        self.kernel = as_tuple(kernel_size, dims, "kernel_size", op, one_for_all=True)
        # (None or an empty stride: the kernel's, as PyTorch's, which reads stride=[] so)
        no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
        self.stride = self.kernel if no_stride else as_tuple(stride, dims, "stride", op, one_for_all=True)
        self.padding = as_tuple(padding, dims, "padding", op, one_for_all=True)
        self.dilation = as_tuple(dilation, dims, "dilation", op, one_for_all=True)
        if any(2 * p > k for p, k in zip(self.padding, self.kernel)):
            raise ValueError(f"{op}: padding {self.padding} must be at most half the kernel {self.kernel}")
        self.ceil_mode = bool(ceil_mode)

    def _windows(self, x):
        """cols [N, C, prod(kernel), *out] of x padded with ``self.pad_value(x.dtype)`` (ceil_mode's
        extra padding included)."""
        _check_dims(self.op, "input", x, self.dims)
        self.windows = _Windows(self.op, x.shape, self.kernel, self.stride, tuple((p, p) for p in self.padding),
                                self.dilation, self.ceil_mode)
        if not self.windows.in_input().any(axis=0).all():  # with dilation a window can fall between inputs
            raise ValueError(f"{self.op}: a window of kernel {self.kernel}, dilation {self.dilation} and padding "
                             f"{self.padding} reads padding only (input {x.shape[2:]}); it has no value")
        cols = self.windows.im2col(self.windows.pad(x, self.pad_value(x.dtype)))
        return cols.reshape(x.shape[:2] + (math.prod(self.kernel),) + self.windows.out)

    def _col2im(self, dcols):
        return self.windows.col2im(dcols.reshape(dcols.shape[:2] + self.windows.kernel + self.windows.out))


class MaxPoolNd(_PoolNd):
    """y[n, c, i] = max over the window at i * s (spread by dilation; padding counts as -inf), over
    ``dims`` spatial axes.

    backward: the whole dy goes to the window's maximum, the FIRST one in row-major order on a
    tie (as PyTorch) or among several NaNs (PyTorch's CPU kernel: the last NaN), through col2im;
    overlapping windows add up. Padding ties with an input of
    -inf (or an integer dtype's minimum) lose: the input position wins, as PyTorch.

    Derivation: docs/backprop/max-and-ties.md
    """

    kind = "max_pool"

    @staticmethod
    def pad_value(dtype):
        """What padding holds, so it never wins: -inf, an integer dtype's minimum (it has no -inf),
        or False for booleans (where -inf would be True)."""
        kind = np.dtype(dtype).kind
        return False if kind == "b" else np.iinfo(dtype).min if kind in "iu" else -np.inf

    def forward(self, x):
        xp = get_array_module(x)
        cols = self._windows(x)
        y = xp.take_along_axis(cols, cols.argmax(axis=2)[:, :, None], axis=2)  # NaN counts as the maximum
        best = (cols == y) | (cols != cols)  # the maximum's positions, or the NaNs'
        self.winner = (best & xp.asarray(self.windows.in_input())).argmax(axis=2)[:, :, None]
        self.save_for_backward(self.winner)
        self.cols_shape = cols.shape
        return y[:, :, 0]

    def indices(self):
        """Where each maximum is, as PyTorch's return_indices: its flat index into the (n, c) plane
        of the unpadded input (h * W + w in 2-d), from the winner's offset in its window, axis by axis."""
        xp = get_array_module(self.winner)
        windows, dims = self.windows, self.dims
        offsets = xp.unravel_index(self.winner[:, :, 0], self.kernel)
        flat = 0
        for t, (a, (before, _), n) in enumerate(zip(offsets, windows.padding, windows.in_shape[2:])):
            i = xp.arange(windows.out[t]).reshape([-1 if u == t else 1 for u in range(dims)])
            flat = flat * n + i * self.stride[t] + a * self.dilation[t] - before
        return flat

    def backward(self, dy):
        (winner,) = self.saved
        xp = get_array_module(dy)
        positions = xp.arange(self.cols_shape[2]).reshape((-1,) + (1,) * self.dims)  # against winner's axis 2
        return (self._col2im(dy_where(positions == winner, dy[:, :, None])),)


def _max_pool(dims, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """y, or (y, where each maximum is: int64, no gradient) where return_indices asks."""
    op = MaxPoolNd(dims, kernel_size, stride, padding, dilation, ceil_mode)
    y = op(x)
    return (y, Tensor(op.indices())) if return_indices else y


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each kernel_size window of x [N, C, L] (arguments as max_pool2d's)."""
    return _one_sample_as_a_batch(1, x, lambda x: _max_pool(1, x, kernel_size, stride, padding, dilation,
                                                                ceil_mode, return_indices))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each kernel_size window of x [N, C, H, W] (stride defaults to kernel_size;
    ceil_mode: the last windows may reach past the right padding, as PyTorch's); return_indices:
    (y, where each maximum is, h * W + w in its plane)."""
    return _one_sample_as_a_batch(2, x, lambda x: _max_pool(2, x, kernel_size, stride, padding, dilation,
                                                                ceil_mode, return_indices))


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each kernel_size window of x [N, C, D, H, W] (arguments as max_pool2d's;
    the indices d * H * W + h * W + w)."""
    return _one_sample_as_a_batch(3, x, lambda x: _max_pool(3, x, kernel_size, stride, padding, dilation,
                                                                ceil_mode, return_indices))


def max_pool1d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """PyTorch's name for max_pool1d(..., return_indices=True): (y, indices), whatever return_indices
    says (PyTorch's takes the argument and ignores it too)."""
    return max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d(..., return_indices=True) under PyTorch's name (see max_pool1d_with_indices)."""
    return max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d(..., return_indices=True) under PyTorch's name (see max_pool1d_with_indices)."""
    return max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode, True)


class AvgPoolNd(_PoolNd):
    """y[n, c, i] = sum over the window at i * s / q, over ``dims`` spatial axes, where q counts the
    window's positions inside x and its padding (count_include_pad; ceil_mode's extra positions
    past the padding never count, as PyTorch) or inside x only; or q = divisor_override.

    backward:  every position of a window gets dy / q, through col2im (overlaps add up)
    """

    kind = "avg_pool"

    @staticmethod
    def pad_value(dtype):
        return 0  # padding counts as zeros (count_include_pad says whether it counts in the mean)

    def __init__(self, dims, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(dims, kernel_size, stride, padding, 1, ceil_mode)
        if divisor_override is not None and (isinstance(divisor_override, bool) or divisor_override < 1
                                             or not isinstance(divisor_override, numbers.Integral)):
            raise ValueError(f"{self.op}: divisor_override must be None or an integer >= 1, got {divisor_override!r}")
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x):
        xp = get_array_module(x)
        cols = self._windows(x)
        windows = self.windows
        if self.divisor_override is not None:
            counted = np.full((1,) + windows.out, self.divisor_override)
        elif self.count_include_pad:  # the declared padding counts, ceil_mode's extra does not
            counted = windows.inside([0] * self.dims, [n + b + a for n, (b, a) in zip(x.shape[2:], windows.declared)])
        else:
            counted = windows.in_input()
        self.divisor = xp.asarray(counted.sum(axis=0), dtype=x.dtype if is_floating(x.dtype) else None)
        self.cols_shape = cols.shape
        return cols.sum(axis=2) / self.divisor

    def backward(self, dy):
        xp = get_array_module(dy)
        dcols = xp.broadcast_to((dy / self.divisor)[:, :, None], self.cols_shape)
        return (self._col2im(xp.ascontiguousarray(dcols)),)


def avg_pool1d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each kernel_size window of x [N, C, L] (arguments as avg_pool2d's)."""
    op = AvgPoolNd(1, kernel_size, stride, padding, ceil_mode, count_include_pad)
    return _one_sample_as_a_batch(1, x, lambda x: op(floating(x)))


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each kernel_size window of x [N, C, H, W] (stride defaults to kernel_size;
    ceil_mode as max_pool2d's; the arguments in PyTorch's order)."""
    op = AvgPoolNd(2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _one_sample_as_a_batch(2, x, lambda x: op(floating(x)))


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each kernel_size window of x [N, C, D, H, W] (arguments as avg_pool2d's)."""
    op = AvgPoolNd(3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _one_sample_as_a_batch(3, x, lambda x: op(floating(x)))



def _lp_pool(dims, x, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's power-average pool, composed of avg_pool and elementwise ops (their gradients are
    its): over each window, of k = prod(kernel_size) positions,

        s = k * avg_pool(x^p) (the sum of x^p over the window),    y = s^(1/p)

    A window with s = 0 gets no gradient, as PyTorch's (its sign(s) * relu(|s|) stops it there,
    where d s^(1/p) / ds is infinite for p > 1); ``where`` stops it here. p = inf is the largest
    |x| of the window and p = -inf the smallest, as PyTorch's (max pools of |x|). No padding;
    ceil_mode as avg_pool's, a last window cut short by it averaged over its own positions, then
    times k, as PyTorch's."""
    op = op_name("lp_pool", dims)
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real) or norm_type != norm_type \
            or norm_type == 0:
        raise ValueError(f"{op}: norm_type must be a nonzero number (inf and -inf included), got {norm_type!r}")
    x = floating(x)
    if x.ndim != dims + 1:  # (a batch [N, C, *spatial] is checked by name here; one sample goes as a batch of one)
        _check_dims(op, "input", x, dims)
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[dims - 1]
    if norm_type == math.inf:
        return max_pool(x.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-x.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = math.prod(as_tuple(kernel_size, dims, "kernel_size", op, one_for_all=True))
    mean = (avg_pool1d, avg_pool2d, avg_pool3d)[dims - 1](x ** norm_type, kernel_size, stride, 0, ceil_mode)
    return where(mean == 0, 0.0, mean * k) ** (1.0 / norm_type)


def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each kernel_size window of x [N, C, L])^(1/p), p = norm_type (see _lp_pool)."""
    return _lp_pool(1, x, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each kernel_size window of x [N, C, H, W])^(1/p), p = norm_type; stride
    defaults to kernel_size (see _lp_pool)."""
    return _lp_pool(2, x, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each kernel_size window of x [N, C, D, H, W])^(1/p) (see _lp_pool)."""
    return _lp_pool(3, x, norm_type, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------- adaptive pools
def _adaptive_windows(op, x, dims, output_size):
    """Per spatial axis, the (start, end) of each output position's window: PyTorch's
    floor(i L / n) to ceil((i + 1) L / n) for an axis of length L pooled to n (the windows cover
    the axis, overlapping by one where n does not divide L). None in output_size keeps L."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: the input is a {type(x).__name__}, expected a Tensor")
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{op}: input must be {dims + 2}-D {LAYOUT[dims]} or {dims + 1}-D [{LAYOUT[dims][4:]} "
                         f"(one sample), got shape {x.shape}")
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * dims
    if len(sizes) != dims:
        raise ValueError(f"{op}: output_size must be an int or {dims} of them, got {output_size!r}")
    spatial = x.shape[-dims:]
    sizes = [length if n is None else n for n, length in zip(sizes, spatial)]
    for n, length in zip(sizes, spatial):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1 or length < 1:
            raise ValueError(f"{op}: output_size {output_size!r} must hold ints >= 1 (or None), and the input's "
                             f"spatial axes {spatial} must not be empty")
    return [[(i * length // n, -(-(i + 1) * length // n)) for i in range(n)] for n, length in zip(sizes, spatial)]


def _adaptive_avg_pool(op, dims, x, output_size):
    """The mean of each adaptive window (see _adaptive_windows), one spatial axis at a time: the
    means of the axis's windows side by side (an inf or NaN stays in its own windows)."""
    x = floating(x)
    windows = _adaptive_windows(op, x, dims, output_size)
    for axis, spans in zip(range(x.ndim - dims, x.ndim), windows):
        lead = (slice(None),) * axis
        x = concatenate([x[lead + (slice(start, end),)].mean(axis=axis, keepdims=True) for start, end in spans],
                        axis=axis)
    return x


def adaptive_avg_pool1d(x, output_size):
    """x [N, C, L] (or [C, L]) averaged over output_size windows covering L (PyTorch's)."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, x, output_size)


def adaptive_avg_pool2d(x, output_size):
    """x [N, C, H, W] (or [C, H, W]) averaged over windows covering H and W, output_size (h, w)
    or one int for both (None keeps that axis): adaptive_avg_pool2d(x, 1) is the global average."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, x, output_size)


def adaptive_avg_pool3d(x, output_size):
    """x [N, C, D, H, W] (or [C, D, H, W]) averaged over windows covering D, H and W."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, x, output_size)


def _adaptive_max_pool(op, dims, x, output_size, return_indices):
    """The maximum of each adaptive window, taken where it is: the first maximum of each window
    (a NaN where there is one, as max finds it; the first of several NaNs, where PyTorch's CPU
    kernel takes the last) is found on the arrays, then picked with gather, so dy goes to that
    one entry, as PyTorch's and max_pool's. With return_indices, those places
    (flat in each plane; int64, no gradient), as max_pool's."""
    windows = _adaptive_windows(op, x, dims, output_size)
    lead = x.ndim - dims
    data, xp = x.data, get_array_module(x.data)
    out_shape = x.shape[:lead] + tuple(len(spans) for spans in windows)
    where = []
    for cell in itertools.product(*windows):
        block = data[(Ellipsis,) + tuple(slice(*span) for span in cell)]
        flat = block.reshape(block.shape[:lead] + (math.prod(block.shape[lead:]),))  # (not -1: an empty batch)
        first = flat.argmax(axis=-1) if flat.size else xp.zeros(flat.shape[:-1], dtype=np.int64)
        position = 0
        for (start, _), inner, length in zip(cell, xp.unravel_index(first, block.shape[lead:]), x.shape[lead:]):
            position = position * length + inner + start
        where.append(xp.asarray(position, dtype=np.int64))
    places = xp.stack(where, axis=-1)
    y = gather(x.reshape(x.shape[:lead] + (math.prod(x.shape[lead:]),)), -1, Tensor(places)).reshape(out_shape)
    return (y, Tensor(places.reshape(out_shape))) if return_indices else y


def adaptive_max_pool1d(x, output_size, return_indices=False):
    """The maximum of each of output_size windows covering L (see _adaptive_max_pool)."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, x, output_size, return_indices)


def adaptive_max_pool2d(x, output_size, return_indices=False):
    """The maximum of each window covering H and W, output_size (h, w) or one int for both."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, x, output_size, return_indices)


def adaptive_max_pool3d(x, output_size, return_indices=False):
    """The maximum of each window covering D, H and W."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, x, output_size, return_indices)


def adaptive_max_pool1d_with_indices(x, output_size, return_indices=False):
    """PyTorch's name for adaptive_max_pool1d(..., return_indices=True): (y, indices), whatever
    return_indices says (PyTorch's ignores it too)."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, x, output_size, True)


def adaptive_max_pool2d_with_indices(x, output_size, return_indices=False):
    """adaptive_max_pool2d(..., return_indices=True) under PyTorch's name."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, x, output_size, True)


def adaptive_max_pool3d_with_indices(x, output_size, return_indices=False):
    """adaptive_max_pool3d(..., return_indices=True) under PyTorch's name."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, x, output_size, True)


# ---------------------------------------------------------------- fractional max pools
def _fractional_starts(u, length, out, kernel, dtype):
    """PyTorch's pseudo-random window starts along one axis of ``length`` (ATen's
    generate_intervals), for each plane's sample u in [0, 1): with alpha = (length - kernel) / (out - 1),

        start_i = int((i + u) alpha) - int(u alpha)   (i < out - 1),    start_(out-1) = length - kernel

    so the windows step by int(alpha) or int(alpha) + 1 and the last one ends at the axis's end.
    Computed in ``dtype`` (the input's), as PyTorch's: the truncations depend on the rounding.
    u [N, C] -> starts [N, C, out] (int64)."""
    xp = get_array_module(u)
    last = xp.full(u.shape + (min(out, 1),), length - kernel, dtype=np.int64)
    if out <= 1:
        return last
    alpha = dtype.type(length - kernel) / dtype.type(out - 1)
    u = u[..., None].astype(dtype)
    steps = ((xp.arange(out - 1, dtype=dtype) + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    return xp.concatenate([steps, last], axis=-1)


def _fractional_max_pool(dims, x, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    """Fractional max pooling (Graham, 2014) as PyTorch's: kernel_size windows whose starts step
    pseudo-randomly (_fractional_starts, one sample u per plane and axis, _random_samples [N, C,
    dims] or drawn from minitx.random), output_size windows per axis (or int(size * output_ratio)).
    The maximum of each window is found on the arrays (the first maximum, the last NaN where there
    is one, as PyTorch's), then picked with gather, so dy goes to that entry (adding up where
    windows overlap). With return_indices, those places, flat in each plane (int64)."""
    op = op_name("fractional_max_pool", dims)
    x = floating(x)
    _check_dims(op, "input", x, dims)
    kernel = as_tuple(kernel_size, dims, "kernel_size", op, one_for_all=True)
    if min(kernel) < 1:
        raise ValueError(f"{op}: kernel_size must be positive, got {kernel_size!r}")
    spatial = x.shape[2:]
    if (output_size is None) == (output_ratio is None):
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio (one of them), got "
                         f"output_size={output_size!r}, output_ratio={output_ratio!r}")
    if output_size is None:
        ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * dims
        if len(ratios) != dims or not all(isinstance(r, numbers.Real) and 0 < r < 1 for r in ratios):
            raise ValueError(f"{op}: output_ratio must be a number in (0, 1) or {_TUPLE[dims]} of them, got "
                             f"{output_ratio!r}")
        output_size = tuple(int(n * r) for n, r in zip(spatial, ratios))
    out = as_tuple(output_size, dims, "output_size", op)
    for axis, n, o, k in zip(SPATIAL[dims], spatial, out, kernel):
        if o < 0 or o + k - 1 > n:
            raise ValueError(f"{op}: {o} windows of {k} do not fit the input's {axis} {n} (output_size + "
                             f"kernel_size - 1 must be at most it)")
    batch, channels = x.shape[:2]
    xp = get_array_module(x.data)
    if _random_samples is None:
        samples = mrandom.uniform((batch, channels, dims), x.dtype, x.device)
    else:
        if not isinstance(_random_samples, Tensor):
            raise TypeError(f"{op}: _random_samples must be a Tensor, got {type(_random_samples).__name__}")
        samples = _random_samples.data
        if samples.ndim != 3 or samples.shape[0] < batch or samples.shape[1:] != (channels, dims):
            raise ValueError(f"{op}: _random_samples must be [N, C, {dims}] for an input of N = {batch} (or more "
                             f"rows), C = {channels}, got shape {samples.shape}")
        if samples.dtype != x.dtype:
            raise TypeError(f"{op}: _random_samples must have the input's dtype {x.dtype.name}, got "
                            f"{samples.dtype.name}")
    # (PyTorch's order of the samples: width, then height for 2-d; depth, height, width for 3-d)
    order = (1, 0) if dims == 2 else (0, 1, 2)
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    starts = [_fractional_starts(samples[:batch, :, j], n, o, k, dtype)
              for j, n, o, k in zip(order, spatial, out, kernel)]
    # places[n, c, *o, *a] = the flat in-plane index of window o's offset a: per axis (start + a) * stride
    strides = [math.prod(spatial[axis + 1:]) for axis in range(dims)]
    places = 0
    for axis, (start, k, stride) in enumerate(zip(starts, kernel, strides)):
        shape = [batch, channels] + [1] * (2 * dims)
        shape[2 + axis] = start.shape[-1]
        offset = xp.arange(k).reshape([1] * (2 + dims + axis) + [k] + [1] * (dims - axis - 1))
        places = places + (start.reshape(shape) + offset) * stride
    places = places.reshape(batch, channels, math.prod(out), math.prod(kernel))
    flat = x.reshape(batch, channels, math.prod(spatial))
    values = xp.take_along_axis(flat.data, places.reshape(batch, channels, places.shape[2] * places.shape[3]), axis=-1)
    values = values.reshape(places.shape)  # (sizes, not -1: an empty batch)
    nan = xp.isnan(values)
    pick = xp.where(nan.any(axis=-1), places.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1), values.argmax(axis=-1))
    chosen = xp.take_along_axis(places, pick[..., None], axis=-1)[..., 0].astype(np.int64)
    y = gather(flat, -1, Tensor(chosen)).reshape((batch, channels) + out)
    return (y, Tensor(chosen.reshape(y.shape))) if return_indices else y


def fractional_max_pool2d(x, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The maximum of each kernel_size window of x [N, C, H, W] (or [C, H, W]), output_size (h, w)
    windows, or int(H, W times output_ratio), starting at pseudo-random steps (_fractional_max_pool)."""
    return _one_sample_as_a_batch(2, x, lambda x: _fractional_max_pool(2, x, kernel_size, output_size, output_ratio,
                                                                       return_indices, _random_samples))


def fractional_max_pool3d(x, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The maximum of each kernel_size window of x [N, C, D, H, W] (or [C, D, H, W]), as
    fractional_max_pool2d's."""
    return _one_sample_as_a_batch(3, x, lambda x: _fractional_max_pool(3, x, kernel_size, output_size, output_ratio,
                                                                       return_indices, _random_samples))


def fractional_max_pool2d_with_indices(x, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool2d(..., return_indices=True) under PyTorch's name: (y, indices)."""
    return fractional_max_pool2d(x, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(x, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """fractional_max_pool3d(..., return_indices=True) under PyTorch's name: (y, indices)."""
    return fractional_max_pool3d(x, kernel_size, output_size, output_ratio, True, _random_samples)
