"""Resampling (minitx/ops/resample.py: Interpolate, MaxUnpool): interpolate in its seven modes and
max_unpool1d/2d/3d.

Forward against NumPy loops over every output element (written from PyTorch's coordinate rules and
bicubic kernel, and area's windows, not calling minitx), float64 gradients (check_gradients) on
hypothesis-drawn sizes, scale factors, modes, align_corners and pooling geometries, PyTorch parity in
float64, a grid of sizes and scale factors where nearest's rounding must be PyTorch's in float32 and
float64, bicubic and area against PyTorch in float32 and float64 (values and gradients), inf and NaN,
integer inputs, and the errors users see.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example


def _tf():
    return import_torch().nn.functional


# ---------------------------------------------------------------- interpolate: the NumPy reference


def _np_keys_cubic(d):
    """Keys' cubic convolution kernel at distance d, A = -0.75 (PyTorch's bicubic)."""
    a, d = -0.75, abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0


def _np_taps(i, n, m, scale_factor, mode, align_corners, dtype, spatial):
    """[(source, weight)] of output i along an axis of input length n and output length m."""
    if mode == "bicubic":  # the four entries around t, each weighted by the kernel at its distance, read
        if align_corners:  # at the edge when past it
            t = i * (n - 1) / (m - 1) if m > 1 else 0.0
        else:  # (not clamped at 0, unlike linear's)
            t = (i + 0.5) * (1 / scale_factor if scale_factor is not None else n / m) - 0.5
        low = math.floor(t)
        return [(min(max(j, 0), n - 1), _np_keys_cubic(t - j)) for j in range(low - 1, low + 3)]
    if mode in ("nearest", "nearest-exact"):
        # PyTorch's CPU kernels: float64 coordinates only for a float64 [N, C, L], floored as float32
        f = np.float64 if dtype == np.float64 and spatial == 1 else np.float32
        scale = f(1 / scale_factor) if scale_factor is not None else f(n) / f(m)
        coordinate = (f(i) + f(0.5 if mode == "nearest-exact" else 0)) * scale
        return [(min(int(math.floor(np.float32(coordinate))), n - 1), 1)]
    if m == n:
        return [(i, 1.0), (i, 0.0)]
    if align_corners:
        t = i * (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        t = max((i + 0.5) * (1 / scale_factor if scale_factor is not None else n / m) - 0.5, 0.0)
    low = min(int(math.floor(t)), n - 1)
    return [(low, 1 - (t - low)), (min(low + 1, n - 1), t - low)]


def np_interpolate(a, size, scale_factor, mode, align_corners):
    spatial = a.ndim - 2
    scales = scale_factor if scale_factor is not None else (None,) * spatial
    out = size if size is not None else tuple(math.floor(n * s) for n, s in zip(a.shape[2:], scales))
    y = np.zeros(a.shape[:2] + tuple(out), dtype=a.dtype)
    for position in np.ndindex(*out):
        taps = [_np_taps(i, n, m, s, mode, align_corners, a.dtype, spatial)
                for i, n, m, s in zip(position, a.shape[2:], out, scales)]
        total = 0
        for combination in itertools.product(*taps):  # bilinear: the 4 corners, weights multiplied
            weight = math.prod(w for _, w in combination)
            picked = a[(slice(None), slice(None)) + tuple(j for j, _ in combination)]
            total = total + (picked if weight == 1 and isinstance(weight, int) else weight * picked)
        y[(slice(None), slice(None)) + position] = total
    return y


def np_area(a, size, scale_factor):
    """PyTorch's area: output i along an axis of length n resized to m averages the entries
    floor(i n / m) to ceil((i + 1) n / m) - 1, over every spatial axis at once."""
    scales = scale_factor if scale_factor is not None else (None,) * (a.ndim - 2)
    out = size if size is not None else tuple(math.floor(n * s) for n, s in zip(a.shape[2:], scales))
    y = np.zeros(a.shape[:2] + tuple(out))
    for position in np.ndindex(*out):
        window = tuple(slice(i * n // m, -(-(i + 1) * n // m)) for i, n, m in zip(position, a.shape[2:], out))
        y[(slice(None), slice(None)) + position] = a[(slice(None), slice(None)) + window].mean(
            axis=tuple(range(2, a.ndim)))
    return y


def np_resize(a, size, scale_factor, mode, align_corners):
    if mode == "area":
        return np_area(a, size, scale_factor)
    return np_interpolate(a, size, scale_factor, mode, align_corners)


def _as_tuple(value, spatial):
    return None if value is None else tuple(value) if isinstance(value, tuple) else (value,) * spatial


MODES = ["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"]


@st.composite
def _interpolate_case(draw, edges=False, modes=MODES):
    mode = draw(st.sampled_from(modes))
    spatial = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode) or draw(st.integers(1, 3))
    aligned = mode in ("linear", "bilinear", "bicubic", "trilinear")
    align_corners = draw(st.sampled_from([None, False, True])) if aligned else None
    in_sizes = tuple(draw(st.integers(1, 5 if spatial < 3 else 3)) for _ in range(spatial))  # (3-d: few entries)
    size = scale_factor = None
    if draw(st.booleans()):
        size = tuple(draw(st.integers(1, 9 if spatial < 3 else 5)) for _ in range(spatial))
        size = size[0] if spatial == 1 and draw(st.booleans()) else size  # an int or a tuple
    else:
        pick = st.sampled_from([0.5, 0.75, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 1 / 3]) | st.floats(0.2, 3.5)
        scale_factor = tuple(draw(pick) for _ in range(spatial))
        assume(all(math.floor(n * s) >= 1 for n, s in zip(in_sizes, scale_factor)))
        scale_factor = scale_factor[0] if len(set(scale_factor)) == 1 and draw(st.booleans()) else scale_factor
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + in_sizes
    if not edges:
        return draw(mst.tensors(shape)), size, scale_factor, mode, align_corners
    array = draw(mst.float_arrays(shape))  # some of its values replaced by inf, -inf, NaN and 0
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    replace = rng.random(shape) < 0.3
    array[replace] = rng.choice([np.inf, -np.inf, np.nan, 0.0], size=int(replace.sum()))
    x = leaf(array)
    return x, size, scale_factor, mode, align_corners


def _interpolate(size, scale_factor, mode, align_corners):
    return lambda t: F.interpolate(t, size, scale_factor, mode, align_corners)


def _torch_interpolate(size, scale_factor, mode, align_corners):
    return lambda t: _tf().interpolate(t, size, scale_factor, mode, align_corners)


def _for_torch(x, scale_factor, mode, align_corners=None):
    """x for the PyTorch comparison: without a gradient where PyTorch's is wrong. Its [N, C, L] and
    [N, C, D, H, W] nearest backward copies when m = n and halves when m = 2n, as its forward does not
    with a scale factor (test_pytorchs_1d_nearest_gradient_is_not_its_forwards_transpose); so does its bicubic
    backward when m = n (test_pytorchs_bicubic_gradient_is_not_its_forwards_transpose)."""
    scales = _as_tuple(scale_factor, x.ndim - 2) or ()
    lengths = [(n, math.floor(n * s)) for n, s in zip(x.shape[2:], scales)]
    wrong = mode == "nearest" and x.ndim in (3, 5) and any(m in (n, 2 * n) for n, m in lengths)
    wrong |= mode == "bicubic" and not align_corners and any(m == n and s != 1 for (n, m), s in zip(lengths, scales))
    return leaf(x.numpy(), requires_grad=not wrong)


def _check_interpolate(case):
    """The forward against the NumPy loops, the gradient by finite differences, and both against
    PyTorch's (where PyTorch follows one rule: _pytorchs_small_plane_shortcut, _for_torch)."""
    x, size, scale_factor, mode, align_corners = case
    spatial = x.ndim - 2
    fn = _interpolate(size, scale_factor, mode, align_corners)
    check_forward(fn, lambda a: np_resize(a, _as_tuple(size, spatial), _as_tuple(scale_factor, spatial), mode,
                                          align_corners), x, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    if _pytorchs_small_plane_shortcut(x, scale_factor, mode):
        return
    parity(fn, _torch_interpolate(size, scale_factor, mode, align_corners),
           _for_torch(x, scale_factor, mode, align_corners))


@given(case=_interpolate_case())
def test_interpolate(case):
    """Interpolate: every mode, align_corners, size or scale factor (an int/float or a tuple)."""
    _check_interpolate(case)


@given(case=_interpolate_case(modes=["bicubic", "area"]))
def test_interpolate_bicubic_and_area(case):
    """The two modes ported last, drawn alone: bicubic's 4 x 4 taps clipped at the edges, both
    align_corners, up and down; area's windows in 1-3 spatial axes."""
    _check_interpolate(case)


def _pytorchs_small_plane_shortcut(x, scale_factor, mode):
    """Whether PyTorch's CPU nearest for a small [N, C, H, W] copies (m = n) or halves the index
    (m = 2n) where the scale factor says otherwise (2.1: floor(4 / 2.1) = 1, not 4 // 2): minitx
    follows floor(i / scale_factor) at every size, as PyTorch itself does for larger planes."""
    if mode != "nearest" or x.ndim != 4 or scale_factor is None:
        return False
    scales = _as_tuple(scale_factor, 2)
    return any(math.floor(n * s) in (n, 2 * n) and s not in (1.0, 2.0) for n, s in zip(x.shape[2:], scales))


@given(case=_interpolate_case(edges=True))
def test_interpolate_inf_and_nan_as_pytorch(case):
    """inf and NaN spread as in PyTorch: a zero weight times inf is NaN there too (m = n included).
    PyTorch's align_corners=False coordinate (i + 0.5) * scale - 0.5 is one fused multiply-add,
    here two roundings: a weight of 1e-17 there can be 0 here, and turn its inf into NaN, so that
    case meets the NumPy reference only."""
    x, size, scale_factor, mode, align_corners = case
    spatial = x.ndim - 2
    fn = _interpolate(size, scale_factor, mode, align_corners)
    with np.errstate(invalid="ignore"):
        check_forward(fn, lambda a: np_resize(a, _as_tuple(size, spatial), _as_tuple(scale_factor, spatial),
                                              mode, align_corners), x, rtol=1e-12, atol=1e-14)
        if (align_corners or mode in ("nearest", "nearest-exact", "area")) and not _pytorchs_small_plane_shortcut(
                x, scale_factor, mode):
            parity(fn, _torch_interpolate(size, scale_factor, mode, align_corners),
                   _for_torch(x, scale_factor, mode, align_corners))


_GRID_SCALES = [0.3, 0.45, 0.5, 0.7, 0.99, 1.0, 1.01, 1.1, 1.3, 4 / 3, 1.5, 1.9, 2.0, 2.5, 3.0, 1 / 3, 2 / 3]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear", "bilinear"])
def test_interpolate_rounds_its_coordinates_as_pytorch(mode, dtype):
    """nearest's floor jumps: a coordinate rounded otherwise picks the neighbouring source. Over a
    grid of lengths and scale factors (m = n, m = 2 n and their scale factors included), every
    source index is PyTorch's, in float32 and float64, along L and along H and W (but where
    PyTorch's small-plane shortcut leaves its own formula: see _pytorchs_small_plane_shortcut)."""
    torch = import_torch()
    rng = np.random.default_rng(0)
    for n in range(1, 13):
        settings = [{"size": m} for m in range(1, 26)] + [{"scale_factor": s} for s in _GRID_SCALES if int(n * s)]
        for kw, spatial in itertools.product(settings, [1, 2]):
            if mode in ("linear", "bilinear") and spatial != {"linear": 1, "bilinear": 2}[mode]:
                continue
            shape = (1, 2) + (n,) * spatial
            if mode == "nearest" and spatial == 2 and _pytorchs_small_plane_shortcut(
                    minitx.zeros(shape), kw.get("scale_factor"), mode):
                continue
            a = rng.standard_normal(shape).astype(dtype)
            align = None if mode.startswith("nearest") else bool(rng.integers(2))
            ours = F.interpolate(minitx.tensor(a), mode=mode, align_corners=align, **kw).numpy()
            theirs = torch.nn.functional.interpolate(torch.tensor(a), mode=mode, align_corners=align, **kw).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-13,
                                       atol=1e-5 if dtype == "float32" else 1e-14,
                                       err_msg=f"{mode} {dtype} n={n} {kw}")


def test_nearest_upsampling_adds_the_gradients_of_outputs_sharing_a_source():
    """[a b] upsampled twice reads a, a, b, b: a gets dy_0 + dy_1, b gets dy_2 + dy_3."""
    x = leaf([[[1.0, 2.0]]])
    y = F.interpolate(x, scale_factor=2.0)
    np.testing.assert_array_equal(y.numpy(), [[[1.0, 1.0, 2.0, 2.0]]])
    y.backward(np.array([[[1.0, 10.0, 100.0, 1000.0]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[11.0, 1100.0]]])


def test_pytorchs_1d_nearest_gradient_is_not_its_forwards_transpose():
    """[a b] by scale factor 1.25: 2 outputs, both reading a (floor(i / 1.25)), in PyTorch's forward
    and here. PyTorch's backward takes m = n for a copy and gives b a gradient; here a gets both."""
    x = leaf([[[1.0, 2.0]]])
    y = parity(lambda t: F.interpolate(t, scale_factor=1.25), lambda t: _tf().interpolate(t, scale_factor=1.25),
               leaf(x.numpy(), requires_grad=False))
    np.testing.assert_array_equal(y.numpy(), [[[1.0, 1.0]]])
    F.interpolate(x, scale_factor=1.25).backward(np.array([[[1.0, 10.0]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[11.0, 0.0]]])
    assert check_gradients(lambda t: F.interpolate(t, scale_factor=1.25), x)
    t = import_torch().tensor([[[1.0, 2.0]]], dtype=import_torch().float64, requires_grad=True)
    _tf().interpolate(t, scale_factor=1.25).backward(import_torch().tensor([[[1.0, 10.0]]], dtype=t.dtype))
    assert t.grad.tolist() == [[[1.0, 10.0]]]  # when PyTorch mends this, drop _for_torch


def test_bilinear_hands_each_output_gradient_to_its_four_corners_by_their_weights():
    """align_corners: 2 x 2 to 3 x 3, the middle output is the mean of the four corners, so each
    corner gets a quarter of its dy; an edge midpoint gives half to each of its two corners."""
    x = leaf(np.arange(4.0).reshape(1, 1, 2, 2))
    y = F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)
    assert y.numpy()[0, 0, 1, 1] == 1.5
    dy = np.zeros((1, 1, 3, 3))
    dy[0, 0, 1, 1], dy[0, 0, 0, 1] = 4.0, 2.0
    y.backward(dy)
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[2.0, 2.0], [1.0, 1.0]])


def test_bicubic_weighs_four_taps_by_keys_cubic_and_reads_the_edge_past_the_ends():
    """[1 2 4 8] to 8 entries: output 0 sits at t = -0.25 (i0 = -1, lam = 0.75), its taps -2, -1,
    0, 1 weighted W(1.75), W(0.75), W(0.25), W(1.25) = -0.03515625, 0.26171875, 0.87890625,
    -0.10546875; the three taps left of the row read entry 0, so it gets their sum as its gradient.
    Midway between two entries (align_corners, 2 -> 3) the weights are -0.09375, 0.59375, 0.59375,
    -0.09375."""
    x = leaf([[[[1.0, 2.0, 4.0, 8.0]]]])
    y = F.interpolate(x, size=(1, 8), mode="bicubic")
    assert y.numpy()[0, 0, 0, 0] == 1.10546875 * 1.0 - 0.10546875 * 2.0
    dy = np.zeros((1, 1, 1, 8))
    dy[..., 0] = 1.0
    y.backward(dy)
    np.testing.assert_array_equal(x.grad.numpy(), [[[[1.10546875, -0.10546875, 0.0, 0.0]]]])
    z = F.interpolate(leaf([[[[0.0, 1.0, 0.0, 0.0]]]]), size=(1, 7), mode="bicubic", align_corners=True)
    np.testing.assert_allclose(z.numpy()[0, 0, 0, [1, 3, 5]], [0.59375, 0.59375, -0.09375], rtol=1e-15)


def test_pytorchs_bicubic_gradient_is_not_its_forwards_transpose():
    """[a b] by scale factor 1.3 keeps 2 entries, read at t = -0.12 and 0.65 in PyTorch's forward
    and here; PyTorch's backward takes m = n for a copy (dy straight through), here the transpose."""
    torch, tf = import_torch(), _tf()
    t = torch.tensor([[[[1.0, 2.0]]]], dtype=torch.float64, requires_grad=True)
    tf.interpolate(t, scale_factor=(1.0, 1.3), mode="bicubic").backward(torch.tensor([[[[1.0, 0.0]]]],
                                                                                      dtype=t.dtype))
    assert t.grad.tolist() == [[[[1.0, 0.0]]]]  # when PyTorch mends this, drop _for_torch's bicubic case
    x = leaf([[[[1.0, 2.0]]]])
    fn = lambda v: F.interpolate(v, scale_factor=(1.0, 1.3), mode="bicubic")  # noqa: E731
    y = parity(fn, lambda v: tf.interpolate(v, scale_factor=(1.0, 1.3), mode="bicubic"), leaf(x.numpy(), False))
    assert y.numpy()[0, 0, 0, 0] != 1.0
    assert check_gradients(fn, x)


_RESIZES = [  # (input H, W, keywords): up and down, odd sizes, sizes and scale factors, one axis kept
    (3, 5, {"size": (7, 4)}), (6, 4, {"size": (3, 9)}), (5, 5, {"scale_factor": 1.7}),
    (7, 6, {"scale_factor": (0.6, 0.5)}), (4, 3, {"size": (4, 8)}), (1, 5, {"size": (3, 2)})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode, align_corners", [("bicubic", False), ("bicubic", True), ("area", None)])
def test_bicubic_and_area_match_pytorch_in_float32_and_float64(mode, align_corners, dtype):
    """Values and gradients beside PyTorch's in each dtype (float32's weights are float64's
    rounded, PyTorch's computed in float32: a few units of float32 apart), and area in [N, C, L]
    and [N, C, D, H, W] too."""
    rng = np.random.default_rng(3)
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else {}
    cases = [((2, 3, height, width), kw) for height, width, kw in _RESIZES]
    if mode == "area":
        cases += [((2, 3, 7), {"size": 3}), ((1, 2, 3, 5, 4), {"size": (2, 3, 6)})]
    for shape, kw in cases:
        x = minitx.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
        y = parity(lambda t: F.interpolate(t, mode=mode, align_corners=align_corners, **kw),
                   lambda t: _tf().interpolate(t, mode=mode, align_corners=align_corners, **kw), x, **tolerance)
        assert y.dtype == np.dtype(dtype)


def test_trilinear_3d_nearest_and_recompute_scale_factor_match_pytorch():
    """PyTorch's argument forms: trilinear (linear along D, H and W, align_corners both ways) and
    nearest and nearest-exact of [N, C, D, H, W], values and float64 gradients; recompute_scale_factor
    =True reads the coordinates from the sizes (5 by 1.7: 8 outputs at scale 5 / 8, not 1 / 1.7),
    in F.interpolate and nn.Upsample."""
    rng = np.random.default_rng(4)
    x = minitx.tensor(rng.standard_normal((2, 1, 3, 4, 2)), requires_grad=True)
    for mode, align_corners in [("trilinear", False), ("trilinear", True), ("nearest", None),
                                ("nearest-exact", None)]:
        for kw in [{"size": (5, 3, 4)}, {"scale_factor": (1.7, 0.6, 2.5)}]:
            y = parity(lambda t: F.interpolate(t, mode=mode, align_corners=align_corners, **kw),
                       lambda t: _tf().interpolate(t, mode=mode, align_corners=align_corners, **kw), x)
            assert y.shape == (2, 1, 5, 2 if "scale_factor" in kw else 3, 5 if "scale_factor" in kw else 4)
            x.grad = None
    x = minitx.tensor(rng.standard_normal((1, 2, 5, 3)), requires_grad=True)
    for mode in ["nearest", "bilinear", "bicubic"]:
        kw = dict(scale_factor=1.7, mode=mode, recompute_scale_factor=True)
        y = parity(lambda t: F.interpolate(t, **kw), lambda t: _tf().interpolate(t, **kw), x)
        assert not np.allclose(y.numpy(), F.interpolate(x, scale_factor=1.7, mode=mode).numpy())
        x.grad = None
        parity(lambda t: minitx.nn.Upsample(**kw)(t), lambda t: import_torch().nn.Upsample(**kw)(t), x)
        x.grad = None


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_nearest_keeps_integer_and_boolean_inputs_and_linear_makes_them_float32(dtype):
    a = (np.arange(30).reshape(1, 2, 3, 5) % 7).astype(dtype)
    x = minitx.tensor(a, dtype=dtype)
    for mode in ("nearest", "nearest-exact"):
        got = F.interpolate(x, size=(4, 7), mode=mode)
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got.numpy(), np_interpolate(a, (4, 7), None, mode, None))
    if dtype == "uint8":  # the only integer dtype PyTorch's nearest takes
        theirs = _tf().interpolate(import_torch().tensor(a), size=(4, 7)).numpy()
        np.testing.assert_array_equal(F.interpolate(x, size=(4, 7)).numpy(), theirs)
    for mode in ("bilinear", "bicubic", "area"):  # computed in float32, as every op on real numbers
        got = F.interpolate(x, scale_factor=1.5, mode=mode)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.numpy(), np_resize(a.astype(np.float64), None, (1.5, 1.5), mode,
                                                          None if mode == "area" else False), rtol=1e-6, atol=1e-6)


def test_interpolate_an_empty_batch():
    for x, modes in [(leaf(np.zeros((0, 3, 4))), ("nearest", "linear", "area")),
                     (leaf(np.zeros((0, 3, 4, 4))), ("bicubic", "area"))]:
        for mode in modes:
            y = parity(lambda t: F.interpolate(t, size=6, mode=mode), lambda t: _tf().interpolate(t, size=6, mode=mode),
                       x)
            assert y.shape == x.shape[:2] + (6,) * (x.ndim - 2)
            x.grad = None


def test_interpolate_errors_name_the_op():
    x1, x2 = leaf(np.zeros((1, 2, 3))), leaf(np.zeros((1, 2, 3, 3)))
    cases = [
        (ValueError, lambda: F.interpolate(x1, size=4, scale_factor=2.0), "give exactly one of size and scale_factor, "
                                                                        "got both"),
        (ValueError, lambda: F.interpolate(x1), "give exactly one of size and scale_factor, got neither"),
        (ValueError, lambda: F.interpolate(x1, size=4, align_corners=True), "align_corners is for modes linear, "
                                                                            "bilinear, bicubic and trilinear, got "
                                                                            "align_corners=True with mode 'nearest'"),
        (ValueError, lambda: F.interpolate(x2, size=4, mode="area", align_corners=False), "align_corners is for modes "
                                                                                         "linear, bilinear, bicubic and "
                                                                                         "trilinear"),
        (ValueError, lambda: F.interpolate(x1, size=4, mode="bicubic"), r"mode 'bicubic' needs a 4-D input \[N, C, "
                                                                        r"...\], got shape \(1, 2, 3\)"),
        (ValueError, lambda: F.interpolate(leaf(np.zeros((2, 3))), size=4, mode="area"), r"mode 'area' needs a 3-D, "
                                                                                          r"4-D or 5-D input"),
        (ValueError, lambda: F.interpolate(x2, scale_factor=0.3, mode="area"), r"input and output sizes must be > 0, "
                                                                               r"got input \(3, 3\) and output "
                                                                               r"\(0, 0\)"),
        (ValueError, lambda: F.interpolate(x2, size=(2, 0), mode="bicubic"), "input and output sizes must be > 0"),
        (ValueError, lambda: F.interpolate(x2, size=4, mode="linear"), r"mode 'linear' needs a 3-D input"),
        (ValueError, lambda: F.interpolate(x1, size=4, mode="bilinear"), r"mode 'bilinear' needs a 4-D input"),
        (ValueError, lambda: F.interpolate(leaf(np.zeros((1, 1, 2))), size=4, mode="trilinear"),
         r"mode 'trilinear' needs a 5-D input .* got shape \(1, 1, 2\)"),
        (ValueError, lambda: F.interpolate(leaf(np.zeros((1, 2))), size=4), r"mode 'nearest' needs a 3-D, 4-D or "
                                                                            r"5-D input .* got shape"),
        (ValueError, lambda: F.interpolate(x1, size=4, mode="cubic"), "mode must be one of nearest, "
                                                                      "nearest-exact, linear, bilinear, bicubic, "
                                                                      "trilinear, area, got 'cubic'"),
        (ValueError, lambda: F.interpolate(x1, size=4, recompute_scale_factor=True),
         "recompute_scale_factor=True is for a scale_factor, got a size"),
        (TypeError, lambda: F.interpolate(x1, scale_factor=2.0, recompute_scale_factor="yes"),
         "recompute_scale_factor must be a bool or None, got 'yes'"),
        (ValueError, lambda: F.interpolate(x2, size=4, mode="bilinear", antialias=True),
         "antialias is not there: give antialias=False, got True"),
        (ValueError, lambda: F.interpolate(x2, size=(4, 4, 4)), r"interpolate: size must be an int or a pair of ints, got \(4, 4, 4\)"),
        (ValueError, lambda: F.interpolate(x1, size=4.0), "interpolate: size must be an int or a 1-tuple of ints, got 4.0"),
        (TypeError, lambda: F.interpolate(x1, size=4, mode="linear", align_corners=1), "align_corners must be a bool"),
        (ValueError, lambda: F.interpolate(x1, scale_factor=-2.0), "scale_factor must be finite and > 0"),
        (ValueError, lambda: F.interpolate(x1, scale_factor=0.2), r"input and output sizes must be > 0, got input "
                                                                 r"\(3,\) and output \(0,\)"),
        (ValueError, lambda: F.interpolate(x1, size=0), "input and output sizes must be > 0"),
        (ValueError, lambda: F.interpolate(leaf(np.zeros((1, 2, 0))), size=3), "input and output sizes must be > 0"),
    ]
    for error, call, message in cases:
        with pytest.raises(error, match=message):
            call()


# ---------------------------------------------------------------- max_unpool


def np_max_pool_with_indices(a, kernel, stride, padding):
    """max_pool{1,2,3}d(return_indices=True) of a [N, C, *S] by direct loops: each window's maximum
    and its flat position in the input plane or volume (h * W + w in 2-d; the first maximum, in
    row-major order; padding never wins)."""
    spatial = a.shape[2:]
    out = tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(spatial, kernel, stride, padding))
    values, indices = np.zeros(a.shape[:2] + out), np.zeros(a.shape[:2] + out, dtype=np.int64)
    for position in np.ndindex(*out):
        reads = [range(i * s - p, i * s - p + k) for i, k, s, p in zip(position, kernel, stride, padding)]
        inside = [at for at in itertools.product(*reads) if all(0 <= q < n for q, n in zip(at, spatial))]
        candidates = np.stack([a[(slice(None), slice(None)) + at] for at in inside])  # [window, N, C]
        first = candidates.argmax(axis=0)
        values[(slice(None), slice(None)) + position] = np.take_along_axis(candidates, first[None], axis=0)[0]
        indices[(slice(None), slice(None)) + position] = np.array([np.ravel_multi_index(at, spatial)
                                                                   for at in inside])[first]
    return values, indices


def np_max_unpool(a, indices, size):
    y = np.zeros(a.shape[:2] + (math.prod(size),), dtype=a.dtype)
    for n, c in np.ndindex(*a.shape[:2]):
        for k, value in zip(indices[n, c].reshape(-1), a[n, c].reshape(-1)):
            y[n, c, k] = value
    return y.reshape(a.shape[:2] + tuple(size))


@st.composite
def _unpool_case(draw, spatial):
    """(pooled values, their indices, kernel, stride, padding, output_size) as the public function
    takes them, and the output size they give; values distinct, so each window has one maximum."""
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(spatial))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(spatial))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    largest = 7 if spatial < 3 else 4  # (3-d: few entries)
    in_sizes = tuple(draw(st.integers(max(1, k - 2 * p), largest)) for k, p in zip(kernel, padding))
    batch = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    a = draw(mst.float_arrays(batch + in_sizes, distinct=True))
    values, indices = np_max_pool_with_indices(a, kernel, stride, padding)
    default = tuple((n - 1) * s + k - 2 * p for n, s, k, p in zip(values.shape[2:], stride, kernel, padding))
    output_size = draw(st.sampled_from([None, in_sizes, batch + in_sizes, "near"]))
    if output_size == "near":  # anywhere strictly within a stride of the default
        output_size = tuple(draw(st.integers(max(0, d - s + 1), d + s - 1)) for d, s in zip(default, stride))
    size = default if output_size is None else tuple(output_size)[-spatial:]
    one = lambda v: v[0] if len(set(v)) == 1 and draw(st.booleans()) else v  # noqa: E731  (an int, axes agreeing)
    stride = None if stride == kernel and draw(st.booleans()) else one(stride)  # None: the kernel's
    return leaf(values), minitx.tensor(indices), one(kernel), stride, one(padding), output_size, size


def _unpool(spatial):
    return getattr(F, f"max_unpool{spatial}d")


@pytest.mark.parametrize("spatial", [1, 2, 3])
@given(data=st.data())
def test_max_unpool(spatial, data):
    """MaxUnpool: drawn kernel, stride, padding and output_size (None, the pooled input's size, or
    anything within a stride of the default); indices outside the output plane raise IndexError."""
    x, indices, kernel, stride, padding, output_size, size = data.draw(_unpool_case(spatial))
    fn = lambda t, i: _unpool(spatial)(t, i, kernel, stride, padding, output_size)  # noqa: E731
    if indices.numpy().size and indices.numpy().max() >= math.prod(size):
        with pytest.raises(IndexError, match=f"max_unpool{spatial}d: indices {indices.numpy().max()} is out of range"):
            fn(x, indices)
        return
    check_forward(fn, lambda a, i: np_max_unpool(a, i, size), x, indices)
    y = fn(x, indices)
    dy = np.random.default_rng(0).standard_normal(y.shape)
    y.backward(dy)  # dx: dy gathered at the indices
    np.testing.assert_array_equal(x.grad.numpy(), np.take_along_axis(
        dy.reshape(dy.shape[:2] + (-1,)), indices.numpy().reshape(x.shape[:2] + (-1,)), axis=2).reshape(x.shape))
    x.grad = None
    flat = indices.numpy().reshape(x.shape[:2] + (-1,))
    if all(len(set(plane)) == plane.size for plane in flat.reshape(-1, flat.shape[-1])):
        assert check_gradients(lambda t: fn(t, indices), x)  # a repeated index would hold one value, grad both
    torch_unpool = lambda t, i: getattr(_tf(), f"max_unpool{spatial}d")(t, i, kernel, stride, padding,  # noqa: E731
                                                                         output_size)
    parity(fn, torch_unpool, leaf(x.numpy()), indices)


@given(data=st.data())
def test_the_numpy_max_pool_gives_pytorchs_indices(data):
    """The indices the max_unpool tests feed are max_pool{1,2,3}d(return_indices=True)'s."""
    spatial = data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    padding = tuple(data.draw(st.integers(0, k // 2)) for k in kernel)
    a = data.draw(mst.float_arrays((2, 2) + tuple(data.draw(st.integers(3, 6 if spatial < 3 else 4))
                                                  for _ in range(spatial)), distinct=True))
    torch = torch_in_example()
    if torch is None:
        return
    values, indices = getattr(torch.nn.functional, f"max_pool{spatial}d")(torch.tensor(a), kernel, stride, padding,
                                                                          return_indices=True)
    ours = np_max_pool_with_indices(a, kernel, stride, padding)
    np.testing.assert_array_equal(ours[0], values.numpy())
    np.testing.assert_array_equal(ours[1], indices.numpy())


def test_max_unpool_puts_each_value_back_and_zeros_the_rest():
    """max_pool2d by 2 of a 4 x 4 plane, undone: the maxima at their places, zeros elsewhere, and
    dy read back at the same places."""
    a = np.array([[1.0, 5.0, 0.0, 2.0], [3.0, 2.0, 8.0, 1.0], [0.0, 0.0, 1.0, 1.0], [9.0, 4.0, 1.0, 7.0]])
    values, indices = np_max_pool_with_indices(a[None, None], (2, 2), (2, 2), (0, 0))
    np.testing.assert_array_equal(indices[0, 0], [[1, 6], [12, 15]])
    x = leaf(values)
    y = F.max_unpool2d(x, minitx.tensor(indices), 2)
    np.testing.assert_array_equal(y.numpy()[0, 0], np.where(np.isin(a, [5, 8, 9, 7]), a, 0))
    y.backward(np.arange(16.0).reshape(1, 1, 4, 4))
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1.0, 6.0], [12.0, 15.0]])


def test_max_unpool_takes_integer_values_and_an_empty_batch():
    got = F.max_unpool1d(minitx.tensor([[[4, 7]]]), minitx.tensor([[[1, 2]]]), 2)
    assert got.dtype == np.int64 and got.numpy().tolist() == [[[0, 4, 7, 0]]]
    x = leaf(np.zeros((0, 3, 2, 2)))
    y = parity(lambda t, i: F.max_unpool2d(t, i, 2), lambda t, i: _tf().max_unpool2d(t, i, 2), x,
               minitx.tensor(np.zeros((0, 3, 2, 2), dtype=np.int64)))
    assert y.shape == (0, 3, 4, 4)


def test_max_unpool_errors_name_the_op():
    x, i = leaf(np.ones((1, 1, 2, 2))), minitx.tensor(np.zeros((1, 1, 2, 2), dtype=np.int64))
    x1, i1 = leaf(np.ones((1, 1, 2))), minitx.tensor(np.zeros((1, 1, 2), dtype=np.int64))
    cases = [
        (IndexError, lambda: F.max_unpool2d(x, i + 16, 2), r"max_unpool2d: indices 16 is out of range \[0, 16\)"),
        (IndexError, lambda: F.max_unpool2d(x, i - 1, 2), r"max_unpool2d: indices -1 is out of range \[0, 16\)"),
        (IndexError, lambda: F.max_unpool1d(x1, i1 + 4, 2), r"max_unpool1d: indices 4 is out of range \[0, 4\)"),
        (TypeError, lambda: F.max_unpool2d(x, x, 2), "max_unpool2d: indices must be an integer tensor, got dtype "
                                                     "float64"),
        (ValueError, lambda: F.max_unpool2d(x, i[:, :, :1], 2), r"max_unpool2d: indices must have the input's shape "
                                                                r"\(1, 1, 2, 2\), got \(1, 1, 1, 2\)"),
        (ValueError, lambda: F.max_unpool2d(x1[0, 0], i1[0, 0], 2), r"max_unpool2d: input must be 4-D \[N, C, H, W\] "
                                                                  r"or 3-D \[C, H, W\] \(one sample\), got shape \(2,\)"),
        (ValueError, lambda: F.max_unpool1d(x, i, 2), r"max_unpool1d: input must be 3-D \[N, C, L\] or 2-D \[C, L\] "
                                                      r"\(one sample\), got shape"),
        (ValueError, lambda: F.max_unpool3d(x1, i1, 2), r"max_unpool3d: input must be 5-D \[N, C, D, H, W\] or 4-D "
                                                        r"\[C, D, H, W\] \(one sample\), got shape \(1, 1, 2\)"),
        (ValueError, lambda: F.max_unpool3d(x, i, (2, 2)), "max_unpool3d: kernel_size must be an int or a triple of "
                                                           "ints, got"),
        (ValueError, lambda: F.max_unpool2d(x, i, 2, output_size=(6, 4)),
         r"max_unpool2d: output_size \(6, 4\) must be strictly between the default size \(4, 4\)"),
        (ValueError, lambda: F.max_unpool2d(x, i, 2, output_size=(4, 4, 4)), r"max_unpool2d: output_size must be an int or a pair of ints"),
        (ValueError, lambda: F.max_unpool2d(x, i, 2, stride=0), "max_unpool2d: kernel_size and stride must be >= 1"),
        (ValueError, lambda: F.max_unpool1d(x1, i1, 2.0), "max_unpool1d: kernel_size must be an int or a 1-tuple of ints, got 2.0"),
    ]
    for error, call, message in cases:
        with pytest.raises(error, match=message):
            call()
