"""Resampling: interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area),
max_unpool1d/2d/3d, grid_sample and affine_grid.

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

grid_sample reads x at the points a grid gives, in coordinates from -1 (the first entry's outer
edge, or its centre with align_corners) to 1 (the last entry's), and affine_grid makes the grid of
an affine map: the sampler of a spatial transformer network (GridSample, AffineGrid below).
"""
from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

from minitx.autograd.function import Function
from minitx.autograd.tensor import as_tensor
from minitx.backend import get_array_module
from minitx.ops._args import as_indices, floating
from minitx.ops.conv import LAYOUT, _adaptive_avg_pool, as_tuple
from minitx.ops.indexing import add_at, check_indices

__all__ = ["Interpolate", "MaxUnpool", "GridSample", "AffineGrid"]

MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,), "bicubic": (4,),
         "trilinear": (5,), "area": (3, 4, 5)}  # mode: input ndims
ALIGNED = ("linear", "bilinear", "bicubic", "trilinear")  # the modes that take align_corners
CUBIC_A = -0.75  # the free parameter of Keys' cubic convolution kernel, PyTorch's (and OpenCV's)


def _align_corners(op, value):
    """align_corners as a bool: None is False (PyTorch's default, which it warns about)."""
    if value is not None and not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: align_corners must be a bool or None, got {value!r}")
    return bool(value)


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


def _cubic_weight_slopes(lam):
    """d/dlam of _cubic_weights(lam): W'(lam + 1), W'(lam), -W'(1 - lam), -W'(2 - lam), from
    W'(d) = 3(A + 2) d^2 - 2(A + 3) d (|d| <= 1) and 3A d^2 - 10A d + 8A (1 < |d| < 2); they sum to 0,
    as the weights sum to 1."""
    a = CUBIC_A
    near = lambda d: (3 * (a + 2) * d - 2 * (a + 3)) * d  # noqa: E731
    far = lambda d: (3 * a * d - 10 * a) * d + 8 * a  # noqa: E731
    rest = 1 - lam
    return far(lam + 1), near(lam), -near(rest), -far(rest + 1)


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
        align_corners, x = _align_corners("interpolate", align_corners), floating(x)
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


# ---------------------------------------------------------------- grid_sample and affine_grid

GRID_MODES = {"bilinear": (4, 5), "nearest": (4, 5), "bicubic": (4,)}  # mode: input ndims (5-d bilinear: trilinear)
PADDING_MODES = ("zeros", "border", "reflection")


def _unnormalize(xp, g, n, align_corners):
    """The grid coordinate g (-1 .. 1) as a position x along an axis of n entries, and dx/dg:

        x = ((g + 1) / 2) * (n - 1)     dx/dg = (n - 1) / 2     align_corners: -1, 1 the end entries' centres
        x = ((g + 1) * n - 1) / 2       dx/dg = n / 2           otherwise: -1, 1 their outer edges
    """
    if align_corners:
        return ((g + 1) / 2) * (n - 1), (n - 1) / 2
    return ((g + 1) * n - 1) / 2, n / 2


def _clip(xp, x, n):
    """x clipped to [0, n - 1], and its slope: 1 strictly inside, 0 at and past the ends (PyTorch's
    clip_coordinates_set_grad counts the ends as outside)."""
    return xp.clip(x, 0, n - 1), ((x > 0) & (x < n - 1)).astype(x.dtype)


def _reflect(xp, x, low, high):
    """x folded into [low, high] by mirroring it at both ends as often as it takes, and its slope
    (+1 or -1: each mirror turns the direction). With d = x - low, s = sign(d) and span = high - low:
    after floor(|d| / span) flips, an even count leaves low + (|d| mod span) (slope s), an odd one
    high - (|d| mod span) (slope -s). A single point (low = high) is itself, slope 0."""
    span = high - low
    if span == 0:
        return xp.full_like(x, low), xp.zeros_like(x)
    d = x - low
    sign = xp.where(d < 0, -1.0, 1.0).astype(x.dtype)
    d = xp.abs(d)
    extra = xp.fmod(d, span)
    even = xp.floor(d / span) % 2 == 0
    return xp.where(even, low + extra, high - extra), xp.where(even, sign, -sign)


def _pad(xp, x, n, padding_mode, align_corners):
    """A position x along an axis of n entries as padding_mode reads it, and d(that)/dx:
    zeros leaves it (a read outside is 0); border clips it to [0, n - 1]; reflection mirrors it at
    the end entries' centres (align_corners: 0 and n - 1) or their outer edges (-0.5 and n - 0.5),
    then clips it (only the outer edges' half-entries are past the centres)."""
    if padding_mode == "zeros":
        return x, 1.0
    slope = 1.0
    if padding_mode == "reflection":
        x, slope = _reflect(xp, x, 0.0, n - 1.0) if align_corners else _reflect(xp, x, -0.5, n - 0.5)
    x, clip_slope = _clip(xp, x, n)
    return x, slope * clip_slope


def _grid_taps(xp, x, mode):
    """[(position, weight, d weight / dx)]: the entries along one axis that a read at x takes, as
    floats. With i0 = floor(x) and lam = x - i0:

        nearest   round(x) (half to even, as PyTorch's nearbyint)      weight 1, slope 0
        bilinear  i0: 1 - lam, slope -1;  i0 + 1: lam, slope 1
        bicubic   i0 - 1 + k: w_k(lam), slope w_k'(lam), k = 0..3 (_cubic_weights and _cubic_weight_slopes)
    """
    if mode == "nearest":
        return [(xp.rint(x), 1.0, 0.0)]
    i0 = xp.floor(x)
    lam = x - i0
    if mode == "bilinear":
        return [(i0, 1 - lam, -1.0), (i0 + 1, lam, 1.0)]
    return [(i0 - 1 + k, w, dw) for k, (w, dw) in enumerate(zip(_cubic_weights(lam), _cubic_weight_slopes(lam)))]


def _as_rows(xp, a):
    """[N, C, *S] as [N * P, C] (P = prod(S)): a row per sample and position, holding its channels."""
    n, c, p = a.shape[0], a.shape[1], math.prod(a.shape[2:])
    return xp.moveaxis(a.reshape(n, c, p), 1, 2).reshape(n * p, c)


def _from_rows(xp, rows, shape):
    """_as_rows undone: [N * P, C] as [N, C, *S]."""
    n, c, p = shape[0], shape[1], math.prod(shape[2:])
    return xp.ascontiguousarray(xp.moveaxis(rows.reshape(n, p, c), 2, 1).reshape(shape))


class GridSample(Function):
    """y[n, c, q] = x[n, c] read at the grid's point q (PyTorch's grid_sample), x [N, C, H, W]
    with grid [N, H_out, W_out, 2] holding (g_x, g_y) per point, or x [N, C, D, H, W] with grid
    [N, D_out, H_out, W_out, 3] holding (g_x, g_y, g_z): g_x runs along W, g_y along H, g_z along D.

    Along each axis a of n_a entries (_unnormalize, _pad), the point's position is

        x_a = ((g_a + 1) / 2) * (n_a - 1)   (align_corners)   or   ((g_a + 1) * n_a - 1) / 2
        x_a <- pad(x_a)   (border: clip to [0, n_a - 1]; reflection: mirror, then clip; not for bicubic)

    with s_a = dx_a/dg_a: (n_a - 1) / 2 or n_a / 2, times the padding's slope (0 where clipped, -1
    across an odd number of mirrors). Along the axis the read takes the taps t (_grid_taps) at
    positions p_t with weights w_t(x_a): bilinear the two entries around x_a, i0 = floor(x_a),
    lam = x_a - i0, weights 1 - lam and lam; nearest the one at round(x_a); bicubic the four
    i0 - 1 .. i0 + 2, weighted by Keys' cubic at their distances, each tap's position padded on its
    own (PyTorch's: bicubic pads the taps, not x_a). In 2-d the four corners (b over the taps of
    y and of x) are

        y[n, c, q] = sum_b m_b * w_b * x[n, c, p_b],   w_b = w_{t_y}(x_y) * w_{t_x}(x_x)

    (bilinear: nw = (1 - lam_y)(1 - lam_x), ne = (1 - lam_y) lam_x, sw = lam_y (1 - lam_x),
    se = lam_y lam_x), where m_b is 1 when p_b lies in x and 0 when not (zeros padding's outside;
    nothing is read there, so an inf beside it makes no NaN). 3-d takes the eight corners of three
    axes the same way. Backward:

        dx[n, c, p] = sum_{(q, b) : p_b = p} m_b * w_b * dy[n, c, q]          (a scatter-add, add_at)
        dg_a[n, q]  = s_a * sum_c dy[n, c, q] * sum_b m_b * x[n, c, p_b] * dw_b/dx_a

    with dw_b/dx_a = w'_{t_a}(x_a) times the other axes' weights (bilinear along x: d nw/dx_x =
    -(1 - lam_y), d ne/dx_x = 1 - lam_y, d sw/dx_x = -lam_y, d se/dx_x = lam_y). nearest's weights
    are constant: its dg is 0. A point whose position is not finite (a NaN in the grid, or inf
    where it is not clipped) reads 0 and takes no gradient.

    Derivation: docs/backprop/padding-and-resampling.md
    """

    def __init__(self, mode, padding_mode, align_corners):
        self.mode, self.padding_mode, self.align_corners = mode, padding_mode, align_corners

    def _reads(self, xp, grid, sizes):
        """[(row, m_b * w_b, [dw_b/dx_a for each axis a], m_b)] over the corners b (row: in x's
        [N * P, C] layout, _as_rows), and s_a for each axis; the grid is [N, Q, k]."""
        n_batch, q, k = grid.shape
        base = xp.arange(n_batch)[:, None] * math.prod(sizes)  # row of (n, position 0)
        valid = xp.ones((n_batch, q), dtype=bool)
        per_axis, slopes = [], []
        for a, n in enumerate(sizes):  # x's axes D, H, W in order: the grid's last coordinate first
            x, slope = _unnormalize(xp, grid[..., k - 1 - a], n, self.align_corners)
            if self.mode != "bicubic":
                x, pad_slope = _pad(xp, x, n, self.padding_mode, self.align_corners)
                slope = slope * pad_slope
            finite = xp.isfinite(x)
            valid &= finite
            taps = []
            for at, w, dw in _grid_taps(xp, xp.where(finite, x, 0.0), self.mode):
                if self.mode == "bicubic":
                    at = _pad(xp, at, n, self.padding_mode, self.align_corners)[0]
                inside = (at >= 0) & (at <= n - 1)
                taps.append((xp.clip(at, 0, n - 1).astype(np.int64), inside, w, dw))
            per_axis.append(taps)
            slopes.append(slope)
        reads = []
        for corner in itertools.product(*per_axis):
            position, inside, weight = 0, valid, 1.0
            for (at, tap_inside, w, _), n in zip(corner, sizes):
                position, inside, weight = position * n + at, inside & tap_inside, weight * w
            row = base + position
            dweights = [math.prod([c[3] if b == a else c[2] for b, c in enumerate(corner)]) for a in range(k)]
            reads.append((row.reshape(-1), (inside * weight).reshape(-1), dweights, inside))
        return reads, slopes

    def forward(self, x, grid):
        xp = get_array_module(x)
        n_batch, c, sizes = x.shape[0], x.shape[1], x.shape[2:]
        k, out = len(sizes), grid.shape[1:-1]
        q = math.prod(out)
        self.x_shape, self.grid_shape = x.shape, grid.shape
        rows_of_x = _as_rows(xp, x)
        self.reads, self.slopes = self._reads(xp, grid.reshape(n_batch, q, k), sizes)
        self.save_for_backward(x)
        y = xp.zeros((n_batch * q, c), dtype=x.dtype)
        for row, weight, _, inside in self.reads:  # inside: a read outside x is 0, not 0 * x's edge
            y += xp.where(inside.reshape(-1, 1), rows_of_x[row], 0) * weight.astype(x.dtype)[:, None]
        return _from_rows(xp, y, (n_batch, c) + out)

    def backward(self, dy):
        xp = get_array_module(dy)
        (x,) = self.saved
        n_batch, c, sizes = self.x_shape[0], self.x_shape[1], self.x_shape[2:]
        k, q = len(sizes), math.prod(self.grid_shape[1:-1])
        dy_rows = _as_rows(xp, dy)
        dx = dgrid = None
        if self.needs_input_grad[0]:
            dx_rows = xp.zeros((n_batch * math.prod(sizes), c), dtype=dy.dtype)
            for row, weight, _, _ in self.reads:
                add_at(dx_rows, row, dy_rows * weight.astype(dy.dtype)[:, None])
            dx = _from_rows(xp, dx_rows, self.x_shape)
        if self.needs_input_grad[1]:
            dgrid = xp.zeros((n_batch, q, k), dtype=dy.dtype)
            if self.mode != "nearest":
                rows_of_x = _as_rows(xp, x)
                for row, _, dweights, inside in self.reads:
                    seen = (xp.where(inside.reshape(-1, 1), rows_of_x[row], 0) * dy_rows).sum(axis=1)
                    for a in range(k):
                        dgrid[..., k - 1 - a] += (seen * dweights[a].reshape(-1)).reshape(n_batch, q)
                for a in range(k):
                    dgrid[..., k - 1 - a] *= self.slopes[a]
            dgrid = dgrid.reshape(self.grid_shape)
        return dx, dgrid


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """x [N, C, H, W] read at grid [N, H_out, W_out, 2]'s points (x, y) into [N, C, H_out, W_out],
    or x [N, C, D, H, W] at grid [N, D_out, H_out, W_out, 3]'s (x, y, z): coordinates from -1 to 1
    across each axis (align_corners: the end entries' centres; else their outer edges, the
    default); mode bilinear (trilinear in 3-d), nearest or bicubic (4-d only); what a point
    outside reads by padding_mode zeros, border or reflection. As PyTorch's grid_sample;
    differentiable in x and in the grid (nearest: 0 to the grid)."""
    x, grid = floating(x), floating(grid)
    if mode not in GRID_MODES:
        raise ValueError(f"grid_sample: mode must be one of {', '.join(GRID_MODES)}, got {mode!r}")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"grid_sample: padding_mode must be one of {', '.join(PADDING_MODES)}, got {padding_mode!r}")
    align_corners = _align_corners("grid_sample", align_corners)
    if x.ndim not in (4, 5):
        raise ValueError(f"grid_sample: input must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape {x.shape}")
    if x.ndim not in GRID_MODES[mode]:
        raise ValueError(f"grid_sample: mode {mode!r} takes a 4-D input [N, C, H, W] only, got shape {x.shape}")
    k = x.ndim - 2
    layout = "[N, H_out, W_out, 2]" if k == 2 else "[N, D_out, H_out, W_out, 3]"
    if grid.ndim != x.ndim:
        raise ValueError(f"grid_sample: grid must be {x.ndim}-D {layout} for a {x.ndim}-D input, got shape {grid.shape}")
    if grid.shape[-1] != k:
        raise ValueError(f"grid_sample: grid's last axis must hold {k} coordinates ({', '.join('xyz'[:k])}) for a "
                         f"{x.ndim}-D input, got {grid.shape[-1]} (grid shape {grid.shape})")
    if grid.shape[0] != x.shape[0]:
        raise ValueError(f"grid_sample: input and grid must have the same batch size, got input {x.shape[0]} "
                         f"(shape {x.shape}) and grid {grid.shape[0]} (shape {grid.shape})")
    if min(x.shape[2:]) < 1:
        raise ValueError(f"grid_sample: input's spatial sizes must be > 0, got shape {x.shape}")
    if x.dtype != grid.dtype:
        raise TypeError(f"grid_sample: input and grid must have the same dtype, got {x.dtype} and {grid.dtype}")
    return GridSample(mode, padding_mode, align_corners)(x, grid)


def _grid_line(n, align_corners):
    """The n coordinates of an axis' entries: -1 + 2j / (n - 1) (align_corners: the end entries at
    -1 and 1) or -1 + (2j + 1) / n (their centres, the axis' edges at -1 and 1); one entry is at 0."""
    j = np.arange(n, dtype=np.float64)
    if n == 1:
        return np.zeros(1)
    return -1 + 2 * j / (n - 1) if align_corners else -1 + (2 * j + 1) / n


class AffineGrid(Function):
    """grid[n, p] = theta[n] @ (b_p, 1): each output entry's coordinates b_p (x along W, y along
    H, z along D: _grid_line per axis) through the affine map theta [N, k, k + 1] (k = 2 or 3).
    With B [P, k + 1] the rows (b_p, 1):

        forward   grid[n, p, i] = sum_j B[p, j] * theta[n, i, j]        (grid[n] = B @ theta[n]^T)
        backward  dtheta[n, i, j] = sum_p dgrid[n, p, i] * B[p, j]      (dtheta[n] = dgrid[n]^T @ B)
    """

    def __init__(self, size, align_corners):
        self.size, self.align_corners = tuple(size), align_corners

    def forward(self, theta):
        xp = get_array_module(theta)
        spatial = self.size[2:]
        points = np.meshgrid(*[_grid_line(n, self.align_corners) for n in spatial], indexing="ij")  # (z,) y, x
        rows = np.stack([p.reshape(-1) for p in points[::-1]] + [np.ones(math.prod(spatial))], axis=1)  # x, y(, z), 1
        self.rows = xp.asarray(rows, dtype=theta.dtype)
        grid = xp.matmul(self.rows, theta.transpose(0, 2, 1))  # [N, P, k]
        return grid.reshape(self.size[:1] + spatial + (len(spatial),))

    def backward(self, dgrid):
        n_batch, k = dgrid.shape[0], dgrid.shape[-1]
        return (get_array_module(dgrid).matmul(dgrid.reshape(n_batch, -1, k).transpose(0, 2, 1), self.rows),)


def affine_grid(theta, size, align_corners=None):
    """The grid of the affine maps theta [N, 2, 3] for size (N, C, H, W) ([N, H, W, 2]), or theta
    [N, 3, 4] for size (N, C, D, H, W) ([N, D, H, W, 3]): output entry p's coordinates (x, y(, z))
    in grid_sample's -1 .. 1 (align_corners as there), mapped by theta[n]. As PyTorch's
    affine_grid; differentiable in theta."""
    theta = floating(theta)
    align_corners = _align_corners("affine_grid", align_corners)
    size = tuple(size) if isinstance(size, (tuple, list)) else size
    if not isinstance(size, tuple) or len(size) not in (4, 5) or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in size):
        raise ValueError(f"affine_grid: size must be 4 ints (N, C, H, W) or 5 (N, C, D, H, W), got {size!r}")
    k = len(size) - 2
    if theta.ndim != 3 or theta.shape[1:] != (k, k + 1):
        raise ValueError(f"affine_grid: theta must be a batch of {k}-D affine maps [N, {k}, {k + 1}] for size {size}, "
                         f"got shape {theta.shape}")
    if theta.shape[0] != size[0]:
        raise ValueError(f"affine_grid: theta's batch {theta.shape[0]} must be size's N, got size {size}")
    if min(size) < 1:
        raise ValueError(f"affine_grid: size must be > 0 in every axis, got {size}")
    return AffineGrid(size, align_corners)(theta)
