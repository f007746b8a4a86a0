"""Fractional max pooling (minitx/ops/conv.py's fractional_max_pool2d/3d, nn.FractionalMaxPool2d/3d):
the forward against a NumPy loop over PyTorch's window starts (ATen's generate_intervals, written
out here), float64 gradients on hypothesis-drawn geometries and samples, PyTorch parity with the
same samples (values, indices, gradients; ties, NaN, -inf, empty batches), the seeded draws, the
errors and the layers."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
import minitx.nn as nn
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

_RNG = np.random.default_rng(0)


def _tf():
    return import_torch().nn.functional


def np_starts(u, length, out, kernel, dtype):
    """ATen's generate_intervals, one start at a time, in the input's precision."""
    if out == 0:
        return []
    alpha = dtype(length - kernel) / dtype(out - 1) if out > 1 else dtype(0)
    return [int((dtype(i) + dtype(u)) * alpha) - int(dtype(u) * alpha) for i in range(out - 1)] + [length - kernel]


def np_fractional_max_pool(a, kernel, out, samples):
    """PyTorch's loop: per plane, the first maximum of each window, the last NaN where there is one
    (val > best or isnan(val)); (values, flat in-plane indices)."""
    dims = a.ndim - 2
    order = (1, 0) if dims == 2 else (0, 1, 2)  # PyTorch's samples: (w, h) for 2-d, (d, h, w) for 3-d
    dtype = a.dtype.type
    y, where = np.zeros(a.shape[:2] + tuple(out), a.dtype), np.zeros(a.shape[:2] + tuple(out), np.int64)
    for n, c in np.ndindex(*a.shape[:2]):
        starts = [np_starts(samples[n, c, j], length, o, k, dtype)
                  for j, length, o, k in zip(order, a.shape[2:], out, kernel)]
        for cell in np.ndindex(*out):
            best, place = -np.inf, np.ravel_multi_index([s[i] for s, i in zip(starts, cell)], a.shape[2:])
            for offset in np.ndindex(*kernel):
                position = tuple(s[i] + o for s, i, o in zip(starts, cell, offset))
                value = a[(n, c) + position]
                if value > best or np.isnan(value):
                    best, place = value, np.ravel_multi_index(position, a.shape[2:])
            y[(n, c) + cell], where[(n, c) + cell] = best, place
    return y, where


@st.composite
def _case(draw):
    """x [N, C, *spatial] (distinct values: one maximum per window), kernel, output size, samples."""
    dims = draw(st.sampled_from([2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    out = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    # (PyTorch's 3-d op refuses windows that end exactly at an axis's end, which its 2-d op and minitx's take)
    size = tuple(o + k - 1 + draw(st.integers(dims == 3, 4)) for o, k in zip(out, kernel))
    # (distinct values come from a grid of 2,000: a 3-d x of 10^3 per channel takes two channels at most)
    batch, channels = draw(st.sampled_from([(1, 1), (1, 2), (2, 1)] + [(2, 2)] * (dims == 2)))
    x = draw(mst.tensors((batch, channels) + size, distinct=True))
    samples = draw(st.lists(st.floats(0, 1, exclude_max=True), min_size=batch * channels * dims,
                            max_size=batch * channels * dims))
    return x, kernel, out, np.array(samples).reshape(batch, channels, dims)


@given(case=_case())
def test_fractional_max_pool_nd(case):
    x, kernel, out, samples = case
    dims = x.ndim - 2
    ours = getattr(F, f"fractional_max_pool{dims}d")
    u = minitx.tensor(samples)
    fn = lambda t: ours(t, kernel, out, _random_samples=u)  # noqa: E731
    check_forward(fn, lambda a: np_fractional_max_pool(a, kernel, out, samples)[0], x)
    assert check_gradients(fn, x)
    _, indices = ours(x, kernel, out, return_indices=True, _random_samples=u)
    np.testing.assert_array_equal(indices.numpy(), np_fractional_max_pool(x.numpy(), kernel, out, samples)[1])
    parity(lambda t, s: ours(t, kernel, out, _random_samples=s),
           lambda t, s: getattr(_tf(), f"fractional_max_pool{dims}d")(t, kernel, out, _random_samples=s),
           leaf(x.numpy()), u)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [2, 3])
def test_values_indices_and_gradients_match_pytorch_with_overlapping_windows(dims, dtype):
    """Windows wider than their steps overlap: an entry that wins two gets both dy's, as PyTorch's.
    In float32 the starts are computed in float32, as PyTorch's (its truncations differ from float64's)."""
    shape, kernel, out = ((2, 3, 9, 7), (3, 2), (6, 5)) if dims == 2 else ((2, 2, 6, 7, 5), (2, 3, 2), (4, 3, 3))
    x, samples = _RNG.standard_normal(shape).astype(dtype), _RNG.random(shape[:2] + (dims,)).astype(dtype)
    ours, theirs = getattr(F, f"fractional_max_pool{dims}d_with_indices"), getattr(_tf(), f"fractional_max_pool{dims}d")
    torch = import_torch()
    values, indices = ours(minitx.tensor(x), kernel, out, _random_samples=minitx.tensor(samples))
    t_values, t_indices = theirs(torch.from_numpy(x), kernel, out, return_indices=True,
                                 _random_samples=torch.from_numpy(samples))
    np.testing.assert_array_equal(values.numpy(), t_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    assert indices.dtype == np.int64 and not indices.requires_grad
    parity(lambda t: ours(t, kernel, out, _random_samples=minitx.tensor(samples))[0],
           lambda t: theirs(t, kernel, out, _random_samples=torch.from_numpy(samples)),
           minitx.tensor(x, requires_grad=True), rtol=1e-6)


@pytest.mark.parametrize("row", [[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, 1.0], [-np.inf] * 4, [0.0] * 4])
def test_ties_nan_and_minus_infinity_as_pytorch(row):
    """The first maximum of a window, the last NaN where there are NaNs, the first entry where all
    are -inf: PyTorch's CPU loop."""
    x = np.array(row).reshape(1, 1, 1, 4)
    values, indices = F.fractional_max_pool2d(leaf(x), (1, 4), (1, 1), return_indices=True,
                                              _random_samples=minitx.zeros(1, 1, 2, dtype="float64"))
    torch = import_torch()
    t_values, t_indices = _tf().fractional_max_pool2d(torch.from_numpy(x), (1, 4), (1, 1), return_indices=True,
                                                      _random_samples=torch.zeros(1, 1, 2, dtype=torch.float64))
    np.testing.assert_array_equal(values.numpy(), t_values.numpy())
    assert indices.numpy().tolist() == t_indices.numpy().tolist()


def test_one_sample_empty_batch_and_no_windows_as_pytorch():
    torch = import_torch()
    x = _RNG.standard_normal((3, 7, 6))
    samples = _RNG.random((1, 3, 2))
    ours = F.fractional_max_pool2d(leaf(x), 2, 3, _random_samples=minitx.tensor(samples))
    theirs = _tf().fractional_max_pool2d(torch.from_numpy(x), 2, 3, _random_samples=torch.from_numpy(samples))
    assert ours.shape == tuple(theirs.shape) == (3, 3, 3)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert F.fractional_max_pool2d(leaf(np.zeros((0, 3, 7, 6))), 2, 3).shape == (0, 3, 3, 3)
    assert F.fractional_max_pool3d(leaf(np.zeros((1, 2, 4, 4, 4))), 2, (0, 1, 2)).shape == (1, 2, 0, 1, 2)
    # windows that end exactly at the axis's end, in 3-d too (where PyTorch's op refuses them)
    x3 = _RNG.standard_normal((1, 2, 5, 5, 5))
    samples3 = _RNG.random((1, 2, 3))
    exact = F.fractional_max_pool3d(leaf(x3), 2, 4, _random_samples=minitx.tensor(samples3))
    np.testing.assert_array_equal(exact.numpy(), np_fractional_max_pool(x3, (2, 2, 2), (4, 4, 4), samples3)[0])
    # output_ratio: int(size * ratio) windows per axis
    assert F.fractional_max_pool2d(leaf(np.zeros((1, 1, 9, 8))), 2, output_ratio=(0.5, 0.75)).shape == (1, 1, 4, 6)


def test_the_draws_come_from_minitx_random_and_repeat_with_its_seed():
    x = leaf(_RNG.standard_normal((2, 3, 9, 9)))
    minitx.manual_seed(11)
    first = F.fractional_max_pool2d(x, 2, 4, return_indices=True)[1].numpy()
    minitx.manual_seed(11)
    again = F.fractional_max_pool2d(x, 2, 4, return_indices=True)[1].numpy()
    minitx.manual_seed(11)
    samples = minitx.rand(2, 3, 2, dtype="float64")  # (the draw: [N, C, 2] in x's dtype, as PyTorch's)
    given_them = F.fractional_max_pool2d(x, 2, 4, return_indices=True, _random_samples=samples)[1].numpy()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, given_them)


def test_errors_name_the_op():
    x = leaf(np.zeros((2, 3, 7, 6)))
    with pytest.raises(ValueError, match="fractional_max_pool2d requires specifying either an output_size or an "
                                         "output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match="fractional_max_pool2d requires specifying either"):
        F.fractional_max_pool2d(x, 2, 3, output_ratio=0.5)
    with pytest.raises(ValueError, match=r"fractional_max_pool2d: 7 windows of 2 do not fit the input's height 7"):
        F.fractional_max_pool2d(x, 2, 7)
    with pytest.raises(ValueError, match=r"fractional_max_pool2d: output_ratio must be a number in \(0, 1\)"):
        F.fractional_max_pool2d(x, 2, output_ratio=1.5)
    with pytest.raises(ValueError, match="fractional_max_pool2d: kernel_size must be positive, got 0"):
        F.fractional_max_pool2d(x, 0, 3)
    with pytest.raises(ValueError, match=r"fractional_max_pool2d: _random_samples must be \[N, C, 2\] .* got shape "
                                         r"\(2, 3, 3\)"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=minitx.rand(2, 3, 3, dtype="float64"))
    with pytest.raises(ValueError, match=r"_random_samples must be \[N, C, 2\]"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=minitx.rand(1, 3, 2, dtype="float64"))
    with pytest.raises(TypeError, match="fractional_max_pool2d: _random_samples must have the input's dtype float64"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=minitx.rand(2, 3, 2))
    with pytest.raises(ValueError, match=r"fractional_max_pool3d: input must be 5-D \[N, C, D, H, W\] or 4-D"):
        F.fractional_max_pool3d(x[0, 0], 2, 3)


def test_the_layers_match_pytorchs():
    torch = import_torch()
    x = _RNG.standard_normal((2, 3, 8, 9))
    samples = _RNG.random((2, 3, 2))
    ours = nn.FractionalMaxPool2d((2, 3), output_ratio=0.5, return_indices=True, _random_samples=minitx.tensor(samples))
    theirs = torch.nn.FractionalMaxPool2d((2, 3), output_ratio=0.5, return_indices=True,
                                          _random_samples=torch.from_numpy(samples))
    assert repr(ours) == repr(theirs) == "FractionalMaxPool2d()"
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    (values, indices), (t_values, t_indices) = ours(leaf(x)), theirs(torch.from_numpy(x))
    np.testing.assert_array_equal(values.numpy(), t_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    assert not nn.FractionalMaxPool3d(2, output_size=(1, 2, 3)).state_dict()
    assert nn.FractionalMaxPool3d(2, output_size=1)(leaf(np.zeros((1, 2, 3, 3, 3)))).shape == (1, 2, 1, 1, 1)
    with pytest.raises(ValueError, match="FractionalMaxPool2d requires specifying either an output size, or a "
                                         "pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match=r"FractionalMaxPool3d: output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5))
