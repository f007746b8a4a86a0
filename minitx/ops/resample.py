"""Resampling: interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)
and max_unpool1d/2d/3d.

Both move values between positions of the spatial axes of [N, C, L], [N, C, H, W] or
[N, C, D, H, W] by index, so each backward sends dy back to where the values came from, ADDING
where one source fed several outputs (a scatter-add, ``add_at``).

interpolate resizes each spatial axis on its own. Along one axis of input length n and output
length m, output i reads, with scale = 1 / scale_factor when a scale factor is given, else n / m
(PyTorch's coordinate rules, recompute_scale_factor=None):

    nearest        src(i) = min(floor(i * scale), n - 1)
    nearest-exact  src(i) = min(floor((i + 0.5) * scale), n - 1)
    linear         t(i) = i * (n - 1) / (m - 1)  (0 when m = 1)        align_corners=True
                   t(i) = max((i + 0.5) * scale - 0.5, 0)              align_corners=False
                   i0 = min(floor(t), n - 1), lam = t - i0
                   y(i) = (1 - lam) * x(i0) + lam * x(min(i0 + 1, n - 1))
    bicubic        t(i) as linear's, not clamped at 0 with align_corners=False; i0, lam as linear's
                   y(i) = sum_{k=0..3} w_k(lam) * x(clip(i0 - 1 + k, 0, n - 1))
                   w = (W(lam + 1), W(lam), W(1 - lam), W(2 - lam)), Keys' cubic with A = -0.75:
                   W(d) = (A + 2) d^3 - (A + 3) d^2 + 1        |d| <= 1
                   W(d) = A d^3 - 5A d^2 + 8A d - 4A           1 < |d| < 2

and m = n reads i0 = i1 = i with lam = 0 in linear (PyTorch's copy). bilinear is linear along H,
then along W, and trilinear along D, H and W; bicubic (PyTorch: 4-d only) cubic along H, then
along W: the taps outside the axis read its edge entry. area is adaptive average pooling to the output size, as PyTorch
computes it (ops/conv.py's). max_unpool puts each value of x at its recorded flat position in a
zero output plane.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import as_tensor
from minitx.backend import get_array_module
from minitx.ops._args import as_indices, floating
from minitx.ops.conv import LAYOUT, _adaptive_avg_pool, as_tuple
from minitx.ops.indexing import add_at, check_indices

__all__ = ["Interpolate", "MaxUnpool"]

MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,), "bicubic": (4,),
         "trilinear": (5,), "area": (3, 4, 5)}  # mode: input ndims
ALIGNED = ("linear", "bilinear", "bicubic", "trilinear")  # the modes that take align_corners
CUBIC_A = -0.75  # the free parameter of Keys' cubic convolution kernel, PyTorch's (and OpenCV's)


def _sources(n, m, scale_factor, mode, align_corners, dtype, spatial):
    """[(index, weight)] along one axis: output i is the sum of weight[i] * x[index[i]] over the
    pairs (weight None: 1).

    nearest's floor jumps, so its coordinates are rounded as PyTorch's CPU kernels round them: in
    float64 for a float64 [N, C, L], in float32 otherwise, floored as a float32. (PyTorch's CPU
    kernel for a small [N, C, H, W] copies when m = n and halves the index when m = 2n, whatever
    the scale factor; minitx keeps to floor(i / scale_factor) at every size.)"""
    if mode == "linear":
        return _linear_sources(n, m, scale_factor, align_corners)
    if mode == "bicubic":
        return _cubic_sources(n, m, scale_factor, align_corners)
    ft = np.float64 if dtype == np.float64 and spatial == 1 else np.float32
    scale = ft(1.0 / scale_factor) if scale_factor is not None else ft(n) / ft(m)
    t = (np.arange(m).astype(ft) + ft(0.5 if mode == "nearest-exact" else 0.0)) * scale
    return [(np.minimum(np.floor(t.astype(np.float32)).astype(np.int64), n - 1), None)]


def _coordinates(n, m, scale_factor, align_corners, cubic=False):
    """(i0, lam) for each output i: the source coordinate t(i) (the module docstring's; cubic leaves
    a negative one as it is, as PyTorch's area_pixel_compute_source_index) split as
    i0 = min(floor(t), n - 1) and lam = t - i0 in [0, 1] (lam is continuous in t: float64 serves)."""
    i = np.arange(m, dtype=np.float64)
    if align_corners:
        t = i * ((n - 1) / (m - 1) if m > 1 else 0.0)
    else:
        t = (i + 0.5) * (1.0 / scale_factor if scale_factor is not None else n / m) - 0.5
        t = t if cubic else np.maximum(t, 0.0)
    i0 = np.minimum(np.floor(t).astype(np.int64), n - 1)
    return i0, np.clip(t - i0, 0.0, 1.0)


def _linear_sources(n, m, scale_factor, align_corners):
    """The two (index, weight) pairs of linear along one axis."""
    if m == n:  # PyTorch's copy, which still reads its one source twice: 0 * inf is NaN there too
        return [(np.arange(m), np.ones(m)), (np.arange(m), np.zeros(m))]
    i0, lam = _coordinates(n, m, scale_factor, align_corners)
    return [(i0, 1.0 - lam), (np.minimum(i0 + 1, n - 1), lam)]


def _cubic_weights(lam):
    """Keys' cubic W at the distances lam + 1, lam, 1 - lam, 2 - lam from the four taps: the
    weights of x(i0 - 1), x(i0), x(i0 + 1), x(i0 + 2); they sum to 1 (module docstring). Each
    written as PyTorch's get_cubic_upsample_coefficients rounds it (2 - lam as (1 - lam) + 1)."""
    a = CUBIC_A
    near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # noqa: E731  (|d| <= 1)
    far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # noqa: E731  (1 < |d| < 2)
    rest = 1 - lam
    return far(lam + 1), near(lam), near(rest), far(rest + 1)


def _cubic_sources(n, m, scale_factor, align_corners):
    """The four (index, weight) pairs of bicubic along one axis, the taps past an end reading the
    edge entry (PyTorch's upsample_get_value_bounded). PyTorch has no copy for m = n: t = i there
    gives the weights (0, 1, 0, 0), and an inf beside it still makes NaN."""
    i0, lam = _coordinates(n, m, scale_factor, align_corners, cubic=True)
    return [(np.clip(i0 - 1 + k, 0, n - 1), w) for k, w in enumerate(_cubic_weights(lam))]


def _weighted(a, w):
    return a if w is None else a * w


class Interpolate(Function):
    """x [N, C, *spatial] resized along each spatial axis a in turn, y = A_last(... A_2(x)).
    Along axis a, with the module docstring's pairs (idx_k, w_k) (one for nearest, two for linear,
    four for bicubic):

        forward   y[..., i, ...] = sum_k w_k[i] * x[..., idx_k[i], ...]          (a gather)
        backward  dx[..., j, ...] = sum_k sum_{i : idx_k[i] = j} w_k[i] * dy[..., i, ...]

    the transpose of the gather, a scatter-add: several outputs share a source when nearest
    upsamples, and neighbouring outputs share their two (linear) or four (bicubic) sources, as
    do the taps clipped to an edge. Over the axes, dx = A_2^T(... A_last^T(dy)), the last axis first.

    Derivation: docs/backprop/padding-and-resampling.md
    """

    def __init__(self, sizes, scale_factor, mode, align_corners):
        self.sizes, self.scale_factor, self.mode, self.align_corners = sizes, scale_factor, mode, align_corners

    def forward(self, x):
        xp = get_array_module(x)
        self.in_spatial = x.shape[2:]
        scales = self.scale_factor or (None,) * len(self.in_spatial)
        mode = "linear" if self.mode in ("bilinear", "trilinear") else self.mode
        self.sources = []  # per spatial axis, its (index, weight) pairs on x's device
        for axis, (n, m, s) in enumerate(zip(self.in_spatial, self.sizes, scales), start=2):
            tail = (1,) * (x.ndim - axis - 1)  # a weight per position along this axis, broadcast over the rest
            self.sources.append([(xp.asarray(index), w if w is None else xp.asarray(w.reshape((-1,) + tail), x.dtype))
                                 for index, w in _sources(n, m, s, mode, self.align_corners, x.dtype, x.ndim - 2)])
            terms = [_weighted(xp.take(x, index, axis=axis), w) for index, w in self.sources[-1]]
            x = sum(terms[1:], terms[0])
        return x

    def backward(self, dy):
        xp = get_array_module(dy)
        for axis in reversed(range(2, dy.ndim)):
            dx = xp.zeros(dy.shape[:axis] + (self.in_spatial[axis - 2],) + dy.shape[axis + 1:], dtype=dy.dtype)
            for index, w in self.sources[axis - 2]:
                add_at(dx, (slice(None),) * axis + (index,), _weighted(dy, w))
            dy = dx
        return (dy,)


def _scale_factors(value, count):
    """A number, or a sequence of ``count`` numbers (one per spatial axis), as a tuple of floats."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * count
    if len(values) != count or not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                                       for v in values):
        raise ValueError(f"interpolate: scale_factor must be a number or {count} of them, one per spatial axis, "
                         f"got {value!r}")
    return tuple(float(v) for v in values)


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """x [N, C, L] (nearest, nearest-exact, linear, area), [N, C, H, W] (nearest, nearest-exact,
    bilinear, bicubic, area) or [N, C, D, H, W] (nearest, nearest-exact, trilinear, area) resized to
    ``size`` or by ``scale_factor`` (output length floor(n * scale_factor)), by PyTorch's coordinates
    (align_corners for linear, bilinear, bicubic and trilinear only, default False). area averages
    over adaptive_avg_pool's windows. recompute_scale_factor=True keeps only the output size a scale
    factor gives, and reads the coordinates from the sizes (scale = n / m), as PyTorch; antialias
    is not there (False only)."""
    x = as_tensor(x)
    if mode not in MODES:
        raise ValueError(f"interpolate: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if x.ndim not in MODES[mode]:
        *most, last = [f"{d}-D" for d in MODES[mode]]
        wanted = f"{', '.join(most)} or {last}" if most else last
        raise ValueError(f"interpolate: mode {mode!r} needs a {wanted} input [N, C, ...], got shape {x.shape}")
    if mode not in ALIGNED:
        if align_corners is not None:
            raise ValueError(f"interpolate: align_corners is for modes {', '.join(ALIGNED[:-1])} and {ALIGNED[-1]}, "
                             f"got align_corners={align_corners!r} with mode {mode!r}")
    else:
        if align_corners is not None and not isinstance(align_corners, bool):
            raise TypeError(f"interpolate: align_corners must be a bool or None, got {align_corners!r}")
        align_corners, x = bool(align_corners), floating(x)
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor, got "
                         f"{'both' if size is not None else 'neither'}")
    if recompute_scale_factor not in (None, False, True):
        raise TypeError(f"interpolate: recompute_scale_factor must be a bool or None, got {recompute_scale_factor!r}")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor=True is for a scale_factor, got a size")
    if antialias is not False:  # (PyTorch's: bilinear and bicubic with a separable filter wider than theirs)
        raise ValueError(f"interpolate: antialias is not there: give antialias=False, got {antialias!r}")
    spatial = x.ndim - 2
    if size is not None:
        sizes = as_tuple(size, spatial, "size", "interpolate")
    else:
        scale_factor = _scale_factors(scale_factor, spatial)
        if not all(math.isfinite(v) and v > 0 for v in scale_factor):
            raise ValueError(f"interpolate: scale_factor must be finite and > 0, got {scale_factor}")
        sizes = tuple(int(n * s) for n, s in zip(x.shape[2:], scale_factor))
        if recompute_scale_factor:  # the coordinates from the sizes alone, as when size is given
            scale_factor = None
    if min(x.shape[2:] + sizes) < 1:
        raise ValueError(f"interpolate: input and output sizes must be > 0, got input {x.shape[2:]} and "
                         f"output {sizes}")
    if mode == "area":  # PyTorch's too: the scale factor only sets the output size
        return _adaptive_avg_pool("interpolate", spatial, x, sizes)
    return Interpolate(sizes, scale_factor, mode, align_corners)(x)


class MaxUnpool(Function):
    """y = zeros [N, C, *size], then y[n, c].flat[indices[n, c, k]] = x[n, c, k] for every
    position k of x's plane (flat positions in the output plane, as max pooling's indices).

        backward  dx[n, c, k] = dy[n, c].flat[indices[n, c, k]]    (dy gathered at the indices)

    no gradient for indices. A position listed twice (overlapping pooling windows list their
    shared maximum in each) holds one of its values (the last; PyTorch's CPU build keeps the
    first: the same where the indices come from max pooling, whose values there are equal) and
    hands dy to both, as PyTorch's: not the transpose of the forward there (gradcheck fails).

    Derivation: docs/backprop/padding-and-resampling.md
    """

    def __init__(self, size, op="max_unpool2d"):
        self.size, self.op = tuple(size), op

    def forward(self, x, indices):
        if indices.shape != x.shape:
            raise ValueError(f"{self.op}: indices must have the input's shape {x.shape}, got {indices.shape}")
        plane = math.prod(self.size)
        check_indices(self.op, "indices", indices, plane)
        xp = get_array_module(x)
        n, c = x.shape[:2]
        flat = (n, c, math.prod(x.shape[2:]))  # sizes, not -1: an empty batch leaves -1 undetermined
        self.save_for_backward(indices)  # guarded: a write into the user's indices before backward raises
        self.where = (xp.arange(n)[:, None, None], xp.arange(c)[None, :, None], indices.reshape(flat))
        self.in_shape = x.shape
        y = xp.zeros((n, c, plane), dtype=x.dtype)
        y[self.where] = x.reshape(flat)
        return y.reshape((n, c) + self.size)

    def backward(self, dy):
        n, c = dy.shape[:2]
        return dy.reshape(n, c, math.prod(self.size))[self.where].reshape(self.in_shape), None


def _unpool(op, spatial, x, indices, kernel_size, stride, padding, output_size):
    """max_unpool{1,2,3}d: the arguments checked, the output size PyTorch's (_unpool_output_size)."""
    x = as_tensor(x)
    if x.ndim == spatial + 1:  # one sample [C, *spatial], as PyTorch takes it too: a batch of one
        indices = as_indices(indices, x)
        if indices.shape != x.shape:
            raise ValueError(f"{op}: indices must have the input's shape {x.shape}, got {indices.shape}")
        return _unpool(op, spatial, x.unsqueeze(0), indices.unsqueeze(0), kernel_size, stride, padding,
                       output_size).squeeze(0)
    if x.ndim != spatial + 2:
        raise ValueError(f"{op}: input must be {spatial + 2}-D {LAYOUT[spatial]} or {spatial + 1}-D "
                         f"[{LAYOUT[spatial][4:]} (one sample), got shape {x.shape}")
    kernel = as_tuple(kernel_size, spatial, "kernel_size", op)
    stride = kernel if stride is None else as_tuple(stride, spatial, "stride", op)
    padding = as_tuple(padding, spatial, "padding", op)
    if min(kernel + stride) < 1 or min(padding) < 0:
        raise ValueError(f"{op}: kernel_size and stride must be >= 1 and padding >= 0, got kernel_size {kernel}, "
                         f"stride {stride}, padding {padding}")
    default = tuple((n - 1) * s + k - 2 * p for n, k, s, p in zip(x.shape[2:], kernel, stride, padding))
    if output_size is None:
        size = default
    else:  # (N, C, *size) as PyTorch takes it too, each within a stride of the default
        given = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * spatial
        size = as_tuple(given[2:] if len(given) == spatial + 2 else given, spatial, "output_size", op)
        if not all(d - s < v < d + s for v, d, s in zip(size, default, stride)):
            raise ValueError(f"{op}: output_size {output_size!r} must be strictly between the default size "
                             f"{default} minus and plus the stride {stride}")
    if min(size) < 0:
        raise ValueError(f"{op}: the output size {size} is negative (input {x.shape}, kernel_size {kernel}, "
                         f"stride {stride}, padding {padding})")
    return MaxUnpool(size, op)(x, as_indices(indices, x))


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: x [N, C, H, W] placed at ``indices`` (flat h * W + w
    positions in each output plane, as max_pool2d(return_indices=True) gives), zeros elsewhere."""
    return _unpool("max_unpool2d", 2, x, indices, kernel_size, stride, padding, output_size)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: x [N, C, L] placed at ``indices``, zeros elsewhere."""
    return _unpool("max_unpool1d", 1, x, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: x [N, C, D, H, W] placed at ``indices`` (flat
    d * H * W + h * W + w positions in each output volume, as max_pool3d(return_indices=True)
    gives), zeros elsewhere; kernel_size, stride and padding are ints or triples."""
    return _unpool("max_unpool3d", 3, x, indices, kernel_size, stride, padding, output_size)
