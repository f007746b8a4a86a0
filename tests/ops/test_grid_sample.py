"""grid_sample and affine_grid (minitx/ops/resample.py: GridSample, AffineGrid), the sampler of a
spatial transformer network.

The forward against loops over every output point written here from PyTorch's rules (the
unnormalisation, border's clip, reflection folded step by step, Python's round for nearest, Keys'
cubic at each tap's distance), float64 gradients (check_gradients) in x and in the grid on drawn
sizes, grids and every mode x padding_mode x align_corners in 2-d and 3-d, PyTorch parity of the
values and both gradients, grids exactly on entries' centres, on the borders and half-way between
entries (where the sampler has its kinks: PyTorch's one-sided slopes are the ones to match), the
identity through affine_grid, a non-finite grid, float32 and integer inputs, and the errors.
"""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from _torch_kit import import_torch, parity
from test_resample import _np_keys_cubic

MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]
EVERY = [(m, p, a, k) for m, p, a, k in itertools.product(MODES, PADDINGS, [False, True], [2, 3])
         if not (m == "bicubic" and k == 3)]


def _tf():
    return import_torch().nn.functional


# ---------------------------------------------------------------- the loop reference


def _np_fold(v, low, high):
    """v mirrored at low and high until it lies between them (one mirror at a time)."""
    if low == high:
        return low
    while v < low or v > high:
        v = 2 * low - v if v < low else 2 * high - v
    return v


def _np_padded(v, n, padding_mode, align_corners):
    if padding_mode == "zeros":
        return v
    if padding_mode == "reflection":
        v = _np_fold(v, 0.0, n - 1.0) if align_corners else _np_fold(v, -0.5, n - 0.5)
    return min(max(v, 0.0), n - 1.0)


def _np_taps(g, n, mode, padding_mode, align_corners):
    """[(entry or None when outside, weight)] along an axis of n entries for grid coordinate g."""
    v = (g + 1) / 2 * (n - 1) if align_corners else ((g + 1) * n - 1) / 2
    if mode != "bicubic":
        v = _np_padded(v, n, padding_mode, align_corners)
    low = math.floor(v)
    if mode == "nearest":
        taps = [(round(v), 1.0)]  # Python's round: half to even
    elif mode == "bilinear":
        taps = [(low, 1 - (v - low)), (low + 1, v - low)]
    else:  # each tap's position padded on its own, weighted by Keys' cubic at its distance
        taps = [(_np_padded(j, n, padding_mode, align_corners), _np_keys_cubic(v - j)) for j in range(low - 1, low + 3)]
    return [(int(j) if 0 <= j <= n - 1 else None, w) for j, w in taps]


def np_grid_sample(a, grid, mode, padding_mode, align_corners):
    """a [N, C, *S] read at grid [N, *out, k] (k = len(S), the grid's x along S's last axis)."""
    spatial = a.ndim - 2
    out = grid.shape[1:-1]
    y = np.zeros(a.shape[:2] + out)
    for n in range(a.shape[0]):
        for q in np.ndindex(*out):
            point = grid[(n,) + q]  # (x, y[, z])
            taps = [_np_taps(point[spatial - 1 - axis], size, mode, padding_mode, align_corners)
                    for axis, size in enumerate(a.shape[2:])]
            for corner in itertools.product(*taps):
                if all(j is not None for j, _ in corner):
                    y[(n, slice(None)) + q] += math.prod(w for _, w in corner) * a[(n, slice(None)) +
                                                                                 tuple(j for j, _ in corner)]
    return y


def np_affine_grid(theta, size, align_corners):
    spatial = size[2:]
    lines = []
    for n in spatial:  # each entry's coordinate along its axis
        if n == 1:
            lines.append([0.0])
        else:
            lines.append([-1 + 2 * j / (n - 1) if align_corners else (2 * j + 1) / n - 1 for j in range(n)])
    grid = np.zeros((size[0],) + spatial + (len(spatial),))
    for b in range(size[0]):
        for position in np.ndindex(*spatial):
            point = [lines[axis][i] for axis, i in enumerate(position)][::-1] + [1.0]  # (x, y[, z], 1)
            grid[(b,) + position] = theta[b] @ np.array(point)
    return grid


# ---------------------------------------------------------------- drawn grids: away from the kinks


def _grid_values(draw, n, count, align_corners):
    """count coordinates along an axis of n entries whose positions u lie 0.1 or more from every
    integer and half-integer (bilinear's kinks, nearest's jumps, border's clip and reflection's
    mirrors all sit there), from 3 entries before the first to 3 past the last."""
    if align_corners and n == 1:  # every coordinate reads the one entry
        return [draw(st.floats(-2.5, 2.5)) for _ in range(count)]
    values = []
    for _ in range(count):
        u = draw(st.integers(-3, n + 2)) + draw(st.sampled_from([0.1, 0.2, 0.3, 0.4]) | st.floats(0.1, 0.4)) \
            + draw(st.sampled_from([0.0, 0.5]))
        values.append(2 * u / (n - 1) - 1 if align_corners else (2 * u + 1) / n - 1)
    return values


@st.composite
def _grid_case(draw, modes=MODES):
    mode = draw(st.sampled_from(modes))
    padding_mode, align_corners = draw(st.sampled_from(PADDINGS)), draw(st.booleans())
    spatial = 2 if mode == "bicubic" else draw(st.sampled_from([2, 3]))
    sizes = tuple(draw(st.integers(1, 5 if spatial == 2 else 3)) for _ in range(spatial))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    out = tuple(draw(st.integers(1, 3 if spatial == 2 else 2)) for _ in range(spatial))
    count = batch * math.prod(out)
    columns = [_grid_values(draw, n, count, align_corners) for n in sizes[::-1]]  # x (along W) first
    grid = np.array(columns).T.reshape((batch,) + out + (spatial,))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((batch, channels) + sizes)
    return leaf(x), leaf(grid), mode, padding_mode, align_corners


def _sample(mode, padding_mode, align_corners):
    return lambda x, grid: F.grid_sample(x, grid, mode, padding_mode, align_corners)


def _torch_sample(mode, padding_mode, align_corners):
    return lambda x, grid: _tf().grid_sample(x, grid, mode, padding_mode, align_corners)


def _check(x, grid, mode, padding_mode, align_corners, grid_gradient=True):
    fn = _sample(mode, padding_mode, align_corners)
    check_forward(fn, lambda a, g: np_grid_sample(a, g, mode, padding_mode, align_corners), x, grid,
                  rtol=1e-12, atol=1e-13)
    if grid_gradient:
        assert check_gradients(fn, x, grid)
    else:  # a grid on the kinks: finite differences there average the two sides' slopes
        assert check_gradients(fn, x, leaf(grid.numpy(), requires_grad=False))
    parity(fn, _torch_sample(mode, padding_mode, align_corners), x, grid)


@given(case=_grid_case())
def test_grid_sample(case):
    """GridSample: every mode, padding_mode and align_corners, 2-d and 3-d, drawn sizes and grids
    (points outside [-1, 1] too), against the loops, finite differences (x and grid) and PyTorch."""
    _check(*case)


@given(case=_grid_case(modes=["bicubic"]))
def test_grid_sample_bicubic(case):
    """bicubic drawn alone: its 4 x 4 taps each padded on their own, its weights' slopes to the grid."""
    _check(*case)


def _exact_grid(n, align_corners, spatial):
    """Points on every entry's centre, half-way between entries, on the borders (the ends'
    centres and outer edges) and outside, for n entries per axis: n = 4 (outer edges at -1 and 1)
    or 5 (align_corners: centres at -1 and 1) makes each coordinate exact in binary, so no
    rounding moves a point off its kink, here or in PyTorch."""
    positions = sorted({j / 2 for j in range(-6, 2 * n + 5)})  # u = -3, -2.5, ..., n + 2
    g = [2 * u / (n - 1) - 1 if align_corners else (2 * u + 1) / n - 1 for u in positions]
    rng = np.random.default_rng(7)
    points = np.array(list(itertools.product(g, repeat=spatial)))
    if spatial == 3:  # a sample of the cube's points: every value still on every axis
        points = points[rng.permutation(len(points))[:160]]
        points[:len(g), :] = np.array(g)[:, None]
    return points.reshape((1, 1, -1, spatial) if spatial == 2 else (1, 1, 1, -1, spatial))


@pytest.mark.parametrize("mode, padding_mode, align_corners, spatial", EVERY)
def test_grid_sample_on_centres_borders_and_halfway_as_pytorch(mode, padding_mode, align_corners, spatial):
    """On the kinks PyTorch takes the slope of the side floor(x) gives (x - floor(x) = 0: the
    right-hand one), counts the borders as outside for border's and reflection's clip (slope 0
    there), and rounds half to even for nearest: values and both gradients are its, and x's
    gradient is the finite differences' (the grid's cannot be there)."""
    n = 5 if align_corners else 4
    grid = leaf(_exact_grid(n, align_corners, spatial))
    x = leaf(np.random.default_rng(1).standard_normal((1, 2) + (n,) * spatial))
    _check(x, grid, mode, padding_mode, align_corners, grid_gradient=False)


@pytest.mark.parametrize("mode, padding_mode, align_corners, spatial", EVERY)
def test_identity_grid_reads_every_entry_back(mode, padding_mode, align_corners, spatial):
    """affine_grid of the identity puts each output point on the entry of the same index (exactly,
    on pixel centres): every mode and padding reads x back, and x's gradient is dy."""
    rng = np.random.default_rng(2)
    sizes = (3, 5, 4)[-spatial:]
    x = leaf(rng.standard_normal((2, 3) + sizes))
    theta = minitx.tensor(np.tile(np.eye(spatial, spatial + 1), (2, 1, 1)))
    y = F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners), mode, padding_mode, align_corners)
    np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-14, atol=1e-14)
    dy = rng.standard_normal(y.shape)
    y.backward(dy)
    np.testing.assert_allclose(x.grad.numpy(), dy, rtol=1e-14, atol=1e-14)


def test_bilinear_reads_and_sends_gradients_by_the_four_corner_weights():
    """x = [[0, 1], [2, 3]] read at position (0.25, 0.5) (align_corners: g = 2u - 1): the corners'
    weights nw, ne, sw, se = 0.75 * 0.5, 0.75 * 0.5, 0.25 * 0.5, 0.25 * 0.5; dy = 1 gives x those
    weights, and the grid (ne - nw)(1 - lam_y) + (se - sw) lam_y = 1 along x, times dx/dg = 1/2, and
    (sw - nw)(1 - lam_x) + (se - ne) lam_x = 2 along y, times 1/2."""
    x = leaf(np.arange(4.0).reshape(1, 1, 2, 2))
    grid = leaf([[[[2 * 0.5 - 1, 2 * 0.25 - 1]]]])  # (g_x, g_y): x at 0.5 along W, 0.25 along H
    y = F.grid_sample(x, grid, align_corners=True)
    assert y.item() == 0.25 * 2 + 0.5 * 1
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0.375, 0.375], [0.125, 0.125]])
    np.testing.assert_array_equal(grid.grad.numpy(), [[[[0.5, 1.0]]]])


def test_nearest_sends_the_grid_no_gradient_and_rounds_half_to_even():
    """[1 .. 6] read at positions 0.5, 1.5, 2.5, 3.5 rounds them to 0, 2, 2, 4 (PyTorch's nearbyint)."""
    x = leaf(np.arange(1.0, 7.0).reshape(1, 1, 1, 6))
    grid = leaf([[[[(2 * u + 1) / 6 - 1, 0.0] for u in (0.5, 1.5, 2.5, 3.5)]]])
    y = F.grid_sample(x, grid, mode="nearest")
    np.testing.assert_array_equal(y.numpy(), [[[[1.0, 3.0, 3.0, 5.0]]]])
    y.sum().backward()
    np.testing.assert_array_equal(grid.grad.numpy(), np.zeros(grid.shape))


@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("align_corners", [False, True])
@given(data=st.data())
def test_affine_grid(spatial, align_corners, data):
    """AffineGrid: drawn sizes (ones included) and maps, against the loops, finite differences in
    theta and PyTorch."""
    sizes = tuple(data.draw(st.integers(1, 4)) for _ in range(spatial))
    batch = data.draw(st.integers(1, 3))
    size = (batch, data.draw(st.integers(1, 3))) + sizes
    theta = leaf(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).standard_normal(
        (batch, spatial, spatial + 1)))
    fn = lambda t: F.affine_grid(t, size, align_corners)  # noqa: E731
    check_forward(fn, lambda t: np_affine_grid(t, size, align_corners), theta, rtol=1e-13, atol=1e-14)
    assert check_gradients(fn, theta)
    with warnings.catch_warnings():  # PyTorch's about align_corners=True with a size of 1
        warnings.simplefilter("ignore", UserWarning)
        parity(fn, lambda t: _tf().affine_grid(t, size, align_corners), theta)


@pytest.mark.parametrize("mode, padding_mode", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                                ("bicubic", "border"), ("nearest", "zeros")])
def test_a_spatial_transformer_is_differentiable_in_theta_and_x(mode, padding_mode):
    """affine_grid then grid_sample: a rotation, scaling and shift of x, differentiable in theta (through the
    grid) and in x; values and gradients as PyTorch's."""
    rng = np.random.default_rng(5)
    x = leaf(rng.standard_normal((2, 2, 5, 6)))
    angle = np.array([0.3, -1.1])
    theta = np.stack([[[1.2 * np.cos(a), -np.sin(a), 0.13], [np.sin(a), 0.8 * np.cos(a), -0.21]] for a in angle])
    theta = leaf(theta)
    fn = lambda t, v: F.grid_sample(v, F.affine_grid(t, (2, 2, 4, 3)), mode, padding_mode)  # noqa: E731
    assert check_gradients(fn, theta, x)
    parity(fn, lambda t, v: _tf().grid_sample(v, _tf().affine_grid(t, (2, 2, 4, 3), align_corners=False), mode,
                                               padding_mode, align_corners=False), theta, x)


def test_a_non_finite_grid_point_reads_zero_but_inf_under_border_reads_the_edge():
    """NaN anywhere, and inf that the padding leaves non-finite (zeros, reflection, and bicubic,
    which pads its taps, not the point), read nothing: 0, with no gradient to x or the grid.
    bilinear's and nearest's border clips +-inf to the end entries (no gradient along W there). PyTorch's 3-d kernel reads 0
    for each of these with zeros padding; its 2-d kernel gives NaN or an entry (docs/ops.md)."""
    x = leaf(np.arange(1.0, 13.0).reshape(1, 1, 3, 4))
    inf, nan = np.inf, np.nan
    grid = leaf([[[[nan, 0.0], [0.0, nan], [inf, 0.0], [-inf, 0.0]]]])  # inf, -inf along W in row 1
    for mode, padding_mode in itertools.product(MODES, PADDINGS):
        edges = padding_mode == "border" and mode != "bicubic"
        y = F.grid_sample(x, grid, mode, padding_mode)
        np.testing.assert_array_equal(y.numpy()[0, 0, 0], [0, 0, 8, 5] if edges else [0, 0, 0, 0],
                                      err_msg=f"{mode} {padding_mode}")
        y.sum().backward()
        expected = np.zeros((3, 4))
        expected[1, [0, 3]] = edges
        np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)
        along_h = np.zeros(grid.shape)  # an edge point still moves along H: (x[2, j] - x[1, j]) * dy/dg = 4 * 1.5
        along_h[0, 0, 2:, 1] = 6.0 * (edges and mode == "bilinear")
        np.testing.assert_array_equal(grid.grad.numpy(), along_h)
        x.grad = grid.grad = None
    x3 = leaf(np.arange(24.0).reshape(1, 1, 2, 3, 4))
    grid3 = leaf([[[[[nan, 0.0, 0.0], [inf, 0.0, -1.0], [-inf, 1e30, -1.0]]]]])
    parity(lambda v, g: F.grid_sample(v, g, padding_mode="zeros"),
           lambda v, g: _tf().grid_sample(v, g, padding_mode="zeros", align_corners=False), x3, grid3)


@pytest.mark.parametrize("mode, padding_mode, align_corners, spatial", EVERY)
def test_grid_sample_matches_pytorch_in_float32(mode, padding_mode, align_corners, spatial):
    rng = np.random.default_rng(11)
    x = minitx.tensor(rng.standard_normal((2, 3) + (4, 5, 3)[:spatial]).astype("float32"), requires_grad=True)
    grid = minitx.tensor(rng.uniform(-1.3, 1.3, (2,) + (3, 2, 4)[:spatial] + (spatial,)).astype("float32"),
                         requires_grad=True)
    y = parity(_sample(mode, padding_mode, align_corners), _torch_sample(mode, padding_mode, align_corners), x, grid,
               rtol=1e-5, atol=1e-5)
    assert y.dtype == np.float32 and grid.grad.dtype == np.float32


def test_empty_batch_and_output_and_integer_input():
    torch = import_torch()
    for x_shape, grid_shape in [((0, 2, 3, 4), (0, 2, 2, 2)), ((2, 2, 3, 4), (2, 0, 5, 2)), ((1, 0, 3, 4), (1, 2, 2, 2)),
                                ((2, 1, 2, 3, 4), (2, 1, 0, 2, 3))]:
        x, grid = leaf(np.ones(x_shape)), leaf(np.zeros(grid_shape))
        y = parity(_sample("bilinear", "zeros", False), _torch_sample("bilinear", "zeros", False), x, grid)
        assert y.shape == x_shape[:2] + grid_shape[1:-1]
    a = np.arange(12).reshape(1, 1, 3, 4)
    y = F.grid_sample(minitx.tensor(a), minitx.tensor(np.zeros((1, 1, 1, 2), "float32")))
    assert y.dtype == np.float32
    assert y.item() == _tf().grid_sample(torch.tensor(a, dtype=torch.float32), torch.zeros(1, 1, 1, 2),
                                         align_corners=False).item()


def test_grid_sample_and_affine_grid_errors_name_the_op():
    x4, x5 = leaf(np.zeros((2, 1, 3, 3))), leaf(np.zeros((2, 1, 2, 3, 3)))
    g4, g5 = leaf(np.zeros((2, 2, 2, 2))), leaf(np.zeros((2, 1, 2, 2, 3)))
    cases = [
        (ValueError, lambda: F.grid_sample(x4, leaf(np.zeros((2, 2, 2, 3)))),
         r"grid_sample: grid's last axis must hold 2 coordinates \(x, y\) for a 4-D input, got 3"),
        (ValueError, lambda: F.grid_sample(x5, leaf(np.zeros((2, 1, 2, 2, 2)))),
         r"grid_sample: grid's last axis must hold 3 coordinates \(x, y, z\) for a 5-D input, got 2"),
        (ValueError, lambda: F.grid_sample(x4, g4[:1]), r"grid_sample: input and grid must have the same batch size, "
                                                        r"got input 2 \(shape \(2, 1, 3, 3\)\) and grid 1"),
        (ValueError, lambda: F.grid_sample(x5, g5, mode="bicubic"),
         r"grid_sample: mode 'bicubic' takes a 4-D input \[N, C, H, W\] only, got shape \(2, 1, 2, 3, 3\)"),
        (ValueError, lambda: F.grid_sample(x4, g5), r"grid_sample: grid must be 4-D \[N, H_out, W_out, 2\] for a 4-D "
                                                    r"input, got shape \(2, 1, 2, 2, 3\)"),
        (ValueError, lambda: F.grid_sample(leaf(np.zeros((2, 3, 3))), g4), r"grid_sample: input must be 4-D .* or "
                                                                           r"5-D .*, got shape \(2, 3, 3\)"),
        (ValueError, lambda: F.grid_sample(x4, g4, mode="linear"), "grid_sample: mode must be one of bilinear, "
                                                                   "nearest, bicubic, got 'linear'"),
        (ValueError, lambda: F.grid_sample(x4, g4, padding_mode="circular"),
         "grid_sample: padding_mode must be one of zeros, border, reflection, got 'circular'"),
        (TypeError, lambda: F.grid_sample(x4, g4, align_corners=1), "grid_sample: align_corners must be a bool"),
        (TypeError, lambda: F.grid_sample(x4, g4.astype("float32")),
         "grid_sample: input and grid must have the same dtype, got float64 and float32"),
        (ValueError, lambda: F.grid_sample(leaf(np.zeros((2, 1, 0, 3))), g4), "grid_sample: input's spatial sizes "
                                                                              "must be > 0"),
        (ValueError, lambda: F.affine_grid(leaf(np.zeros((2, 3, 4))), (2, 1, 3, 3)),
         r"affine_grid: theta must be a batch of 2-D affine maps \[N, 2, 3\] for size \(2, 1, 3, 3\), got shape "
         r"\(2, 3, 4\)"),
        (ValueError, lambda: F.affine_grid(leaf(np.zeros((2, 2, 3))), (2, 1, 2, 3, 3)),
         r"affine_grid: theta must be a batch of 3-D affine maps \[N, 3, 4\]"),
        (ValueError, lambda: F.affine_grid(leaf(np.zeros((2, 2, 3))), (3, 1, 3, 3)),
         r"affine_grid: theta's batch 2 must be size's N, got size \(3, 1, 3, 3\)"),
        (ValueError, lambda: F.affine_grid(leaf(np.zeros((2, 2))), (2, 3)), r"affine_grid: size must be 4 ints"),
        (ValueError, lambda: F.affine_grid(leaf(np.zeros((2, 2, 3))), (2, 1, 0, 3)),
         r"affine_grid: size must be > 0 in every axis, got \(2, 1, 0, 3\)"),
    ]
    for error, call, message in cases:
        with pytest.raises(error, match=message):
            call()
