"""Convolution, transposed convolution and pooling over 1, 2 and 3 spatial axes
(minitx/ops/conv.py: ConvNd, ConvTransposeNd, MaxPoolNd, AvgPoolNd) and their layers
(minitx/nn/conv.py).

Forward against direct NumPy loops over every output position (PyTorch's pooling loop for the
pools, a direct scatter for the transposed convolution), float64 gradients (check_gradients) on
hypothesis-drawn geometries (spatial axes, stride, padding and its modes, dilation, groups,
output_padding, ceil_mode, count_include_pad), PyTorch parity, max pooling's indices, ties and
NaN, and the errors users see.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
import minitx.nn as nn
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")  # PyTorch's note that it copies x


def _tf():
    return import_torch().nn.functional


# ---------------------------------------------------------------- NumPy references


def np_conv(a, w, b, stride, pads, dilation, groups):
    """Direct cross-correlation over every output position; pads: (before, after) per axis."""
    padded = np.pad(a, ((0, 0), (0, 0)) + tuple(pads))
    kernel, per_in, per_out = w.shape[2:], a.shape[1] // groups, w.shape[0] // groups
    out = tuple((n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(padded.shape[2:], kernel, stride, dilation))
    y = np.zeros((a.shape[0], w.shape[0]) + out)
    for position in np.ndindex(*out):
        reads = tuple(slice(i * s, i * s + d * (k - 1) + 1, d)
                      for i, k, s, d in zip(position, kernel, stride, dilation))
        window = padded[(slice(None), slice(None)) + reads]
        for o in range(w.shape[0]):
            group = slice(o // per_out * per_in, (o // per_out + 1) * per_in)
            y[(slice(None), o) + position] = (window[:, group] * w[o]).sum(axis=tuple(range(1, w.ndim)))
    return y if b is None else y + b.reshape((-1,) + (1,) * len(out))


def _same_pads(kernel, dilation):
    """PyTorch's "same": d * (k - 1) padding in all, the odd one on the after side."""
    return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))


def _np_pool_out(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: ceil_mode rounds up, but drops a last window that would
    start in the right padding."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return out - 1 if ceil_mode and (out - 1) * s >= n + p else out


def np_pool(a, kind, kernel, stride, padding, dilation, ceil_mode, include_pad=True, divisor_override=None):
    """PyTorch's pooling loop over every output position: window i of axis t reads input positions
    i * s - p + a * d that lie inside the input; max takes the first maximum (or the first NaN),
    avg divides by divisor_override, or the positions inside [-p, n + p) (include_pad, no
    dilation), or those in the input.
    Returns (y, the maximum's flat index into each (n, c) plane)."""
    spatial = a.shape[2:]
    out = tuple(_np_pool_out(*args, ceil_mode) for args in zip(spatial, kernel, stride, padding, dilation))
    y, where = np.zeros(a.shape[:2] + out), np.zeros(a.shape[:2] + out, dtype=np.int64)
    for position in np.ndindex(*out):
        taps, padded_count = [], 1
        for i, n, k, s, p, d in zip(position, spatial, kernel, stride, padding, dilation):
            start = i * s - p
            reads = start + d * np.arange(k)
            taps.append(reads[(reads >= 0) & (reads < n)])
            padded_count *= min(start + k, n + p) - start
        grid = np.ix_(*taps)
        window = a[(slice(None), slice(None)) + grid].reshape(a.shape[:2] + (-1,))
        flat = np.ravel_multi_index(np.broadcast_arrays(*grid), spatial).reshape(-1)
        at = (slice(None), slice(None)) + position
        if kind == "max":
            first = window.argmax(axis=2)  # NumPy's argmax: the first maximum, or the first NaN
            y[at], where[at] = np.take_along_axis(window, first[:, :, None], 2)[:, :, 0], flat[first]
        else:
            y[at] = window.sum(axis=2) / (divisor_override or (padded_count if include_pad else window.shape[2]))
    return y, where


def np_conv_transpose(a, w, b, stride, padding, output_padding, dilation, groups):
    """Every input entry x[n, c, i] adds x * w[c, o', a] at output position i * s + a * d - p
    (channel o = its group's first + o'): a direct scatter, output_padding more positions at the
    end of each axis."""
    kernel, per_in, per_out = w.shape[2:], a.shape[1] // groups, w.shape[1]
    reach = tuple((m - 1) * s + d * (k - 1) + 1 + q
                  for m, s, d, k, q in zip(a.shape[2:], stride, dilation, kernel, output_padding))
    y = np.zeros((a.shape[0], per_out * groups) + reach)
    for i in np.ndindex(*a.shape[2:]):
        for c in range(a.shape[1]):
            outs = slice(c // per_in * per_out, (c // per_in + 1) * per_out)
            for offset in np.ndindex(*kernel):
                at = tuple(ii * s + aa * d for ii, aa, s, d in zip(i, offset, stride, dilation))
                y[(slice(None), outs) + at] += a[(slice(None), c) + i][:, None] * w[(c, slice(None)) + offset]
    y = y[(slice(None), slice(None)) + tuple(slice(p, n - p) for p, n in zip(padding, reach))]
    return y if b is None else y + b.reshape((-1,) + (1,) * len(kernel))


def np_conv2d(a, w, b, stride, padding, dilation, groups):
    return np_conv(a, w, b, stride, tuple((p, p) for p in padding), dilation, groups)


def np_max_pool(a, kernel, stride, padding, dilation):
    return np_pool(a, "max", kernel, stride, padding, dilation, False)[0]


def np_avg_pool(a, kernel, stride, padding, include_pad):
    return np_pool(a, "avg", kernel, stride, padding, (1, 1), False, include_pad)[0]


# ---------------------------------------------------------------- 2-d and 1-d


@st.composite
def _geometry(draw, one_d=False):
    """kernel, stride, padding, dilation (pairs; height 1/1/0/1 for 1-d) and an input size that fits."""
    def side(axis_is_height):
        if one_d and axis_is_height:
            return 1, 1, 0, 1, 1
        k, s, p, d = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(1, 2))
        span = d * (k - 1) + 1
        return k, s, p, d, draw(st.integers(max(1, span - 2 * p), span + 3))
    h, w = side(True), side(False)
    return tuple(zip(h, w))  # (kernel, stride, padding, dilation, size) pairs


@st.composite
def _conv_case(draw, one_d=False):
    kernel, stride, padding, dilation, size = draw(_geometry(one_d))
    groups = draw(st.integers(1, 2))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    x = draw(mst.tensors((draw(st.integers(1, 2)), c) + size))
    w = draw(mst.tensors((o, c // groups) + kernel))
    b = draw(mst.tensors((o,))) if draw(st.booleans()) else None
    return x, w, b, stride, padding, dilation, groups


@given(case=_conv_case())
def test_conv2d(case):
    x, w, b, stride, padding, dilation, groups = case
    fn = lambda *t: F.conv2d(t[0], t[1], t[2] if b is not None else None, stride, padding, dilation, groups)  # noqa
    inputs = (x, w) + ((b,) if b is not None else ())
    reference = lambda *a: np_conv2d(a[0], a[1], a[2] if b is not None else None, stride, padding, dilation,  # noqa
                                     groups)
    check_forward(fn, reference, *inputs, rtol=1e-12, atol=1e-13)
    assert check_gradients(fn, *inputs)
    parity(fn, lambda *t: _tf().conv2d(t[0], t[1], t[2] if b is not None else None, stride, padding, dilation,
                                       groups), *(leaf(t.numpy()) for t in inputs))


@given(case=_conv_case(one_d=True))
def test_conv1d(case):
    x, w, b, stride, padding, dilation, groups = case
    x1, w1 = leaf(x.numpy()[:, :, 0]), leaf(w.numpy()[:, :, 0])
    s, p, d = stride[1], padding[1], dilation[1]
    fn = lambda a, k, *bias: F.conv1d(a, k, bias[0] if bias else None, s, p, d, groups)  # noqa: E731
    inputs = (x1, w1) + ((b,) if b is not None else ())
    check_forward(fn, lambda a, k, *bias: np_conv2d(a[:, :, None], k[:, :, None], bias[0] if bias else None,
                                                    stride, padding, dilation, groups)[:, :, 0], *inputs, rtol=1e-12,
                  atol=1e-13)
    assert check_gradients(fn, *inputs)
    parity(fn, lambda a, k, *bias: _tf().conv1d(a, k, bias[0] if bias else None, s, p, d, groups),
           *(leaf(t.numpy()) for t in inputs))


# ---------------------------------------------------------------- pooling


@st.composite
def _pool_case(draw, kind, one_d=False):
    kernel, stride, padding, dilation, size = draw(_geometry(one_d))
    if kind == "avg":
        dilation = (1, 1)
    padding = tuple(min(p, k // 2) for p, k in zip(padding, kernel))  # at most half the kernel
    # a dilated window could then read padding only (a -inf maximum): no dilation with padding
    dilation = tuple(1 if p else d for p, d in zip(padding, dilation))
    size = tuple(max(n, d * (k - 1) + 1 - 2 * p) for n, k, p, d in zip(size, kernel, padding, dilation))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + size
    x = draw(mst.tensors(shape, distinct=True))  # distinct: no ties for max's finite differences to cross
    return x, kernel, stride, padding, dilation


@given(case=_pool_case("max"))
def test_max_pool2d(case):
    x, kernel, stride, padding, dilation = case
    fn = lambda t: F.max_pool2d(t, kernel, stride, padding, dilation)  # noqa: E731
    check_forward(fn, lambda a: np_max_pool(a, kernel, stride, padding, dilation), x)
    assert check_gradients(fn, x)
    parity(fn, lambda t: _tf().max_pool2d(t, kernel, stride, padding, dilation), leaf(x.numpy()))


@pytest.mark.parametrize("include_pad", [True, False])
@given(case=_pool_case("avg"))
def test_avg_pool2d(include_pad, case):
    x, kernel, stride, padding, _ = case
    fn = lambda t: F.avg_pool2d(t, kernel, stride, padding, count_include_pad=include_pad)  # noqa: E731
    check_forward(fn, lambda a: np_avg_pool(a, kernel, stride, padding, include_pad), x, rtol=1e-12)
    assert check_gradients(fn, x)
    parity(fn, lambda t: _tf().avg_pool2d(t, kernel, stride, padding, count_include_pad=include_pad),
           leaf(x.numpy()))


@given(case=_pool_case("max", one_d=True), include_pad=st.booleans())
def test_pool1d(case, include_pad):
    x, kernel, stride, padding, dilation = case
    x1 = leaf(x.numpy()[:, :, 0])
    k, s, p, d = kernel[1], stride[1], padding[1], dilation[1]
    parity(lambda t: F.max_pool1d(t, k, s, p, d), lambda t: _tf().max_pool1d(t, k, s, p, d), x1)
    assert check_gradients(lambda t: F.max_pool1d(t, k, s, p, d), x1)
    x1.grad = None
    parity(lambda t: F.avg_pool1d(t, k, s, p, count_include_pad=include_pad),
           lambda t: _tf().avg_pool1d(t, k, s, p, count_include_pad=include_pad), x1)
    assert check_gradients(lambda t: F.avg_pool1d(t, k, s, p, count_include_pad=include_pad), x1)


def test_max_pool_ties_go_to_the_first_maximum_and_nan_propagates():
    x = leaf([[[[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [2.0, 2.0, 2.0]]]])
    out = parity(lambda t: F.max_pool2d(t, 2, 1), lambda t: _tf().max_pool2d(t, 2, 1), x)
    np.testing.assert_array_equal(out.numpy(), [[[[1.0, 2.0], [2.0, 2.0]]]])
    np.testing.assert_array_equal(x.grad.numpy() != 0, [[[[True, False, False], [False, False, True],
                                                          [True, False, False]]]])
    parity(lambda t: F.max_pool2d(t, 2), lambda t: _tf().max_pool2d(t, 2), leaf([[[[1.0, np.nan], [3.0, 4.0]]]]))


def test_overlapping_windows_add_their_gradients():
    """stride 1 < kernel 2: the middle input is in both windows of [a b c] and gets dy_0 + dy_1."""
    x = leaf([[[1.0, 2.0, 3.0]]])
    F.avg_pool1d(x, 2, 1).backward(np.array([[[10.0, 20.0]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[5.0, 15.0, 10.0]]])


def test_conv_and_pool_errors_name_the_op():
    x = leaf(np.zeros((1, 4, 5, 5)))
    cases = [
        (lambda: F.conv2d(x, leaf(np.zeros((2, 3, 3, 3)))), r"conv2d: input with 4 channels, weight \(2, 3, 3, 3\) "
                                                            r"and groups=1 do not fit"),
        (lambda: F.conv2d(x, leaf(np.zeros((2, 4, 7, 1)))), "conv2d: the height of the padded input, 5, is smaller "
                                                            r"than the kernel's span 7"),
        (lambda: F.conv2d(x, leaf(np.zeros((2, 4, 1, 1))), leaf(np.zeros(3))), r"conv2d: bias must have shape \(2,\)"),
        (lambda: F.conv2d(x[0, 0], leaf(np.zeros((2, 4, 1, 1)))), r"conv2d: input must be 4-D \[N, C, H, W\] or "
                                                                  r"3-D \[C, H, W\] \(one sample\), got shape \(5, 5\)"),
        (lambda: F.conv1d(x, leaf(np.zeros((2, 4, 1)))), r"conv1d: input must be 3-D \[N, C, L\]"),
        (lambda: F.conv2d(x, leaf(np.zeros((2, 4, 1, 1))), stride=0), "conv2d: kernel, stride and dilation must be"),
        (lambda: F.conv2d(x, leaf(np.zeros((2, 4, 1, 1))), padding=(1, 2, 3)), "conv2d: padding must be an int or a "
                                                                               "pair of ints"),
        (lambda: F.max_pool2d(x, 2, padding=2), r"max_pool2d: padding \(2, 2\) must be at most half the kernel"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


# one sample [C, *spatial]: (minitx function, PyTorch function, the sample's shape, the other arguments
# as arrays, keyword arguments)
_RNG = np.random.default_rng(3)
ONE_SAMPLE = {
    "conv1d": (F.conv1d, "conv1d", (2, 7), [_RNG.standard_normal((3, 2, 3))], {"padding": 1}),
    "conv2d": (F.conv2d, "conv2d", (2, 5, 4), [_RNG.standard_normal((3, 2, 2, 3)), _RNG.standard_normal(3)], {}),
    "conv3d": (F.conv3d, "conv3d", (2, 3, 4, 3), [_RNG.standard_normal((2, 1, 2, 2, 2))], {"groups": 2}),
    "conv_transpose1d": (F.conv_transpose1d, "conv_transpose1d", (2, 5), [_RNG.standard_normal((2, 3, 2))],
                         {"stride": 2}),
    "conv_transpose2d": (F.conv_transpose2d, "conv_transpose2d", (2, 3, 4), [_RNG.standard_normal((2, 1, 2, 2))], {}),
    "conv_transpose3d": (F.conv_transpose3d, "conv_transpose3d", (1, 2, 3, 2), [_RNG.standard_normal((1, 2, 2, 1, 2))],
                         {}),
    "max_pool1d": (F.max_pool1d, "max_pool1d", (2, 7), [], {"kernel_size": 2}),
    "max_pool2d": (F.max_pool2d, "max_pool2d", (2, 5, 4), [], {"kernel_size": 2, "ceil_mode": True}),
    "max_pool3d": (F.max_pool3d, "max_pool3d", (2, 4, 4, 3), [], {"kernel_size": 2, "padding": 1}),
    "avg_pool1d": (F.avg_pool1d, "avg_pool1d", (2, 7), [], {"kernel_size": 3}),
    "avg_pool2d": (F.avg_pool2d, "avg_pool2d", (2, 5, 4), [], {"kernel_size": 2, "padding": 1}),
    "avg_pool3d": (F.avg_pool3d, "avg_pool3d", (2, 4, 4, 3), [], {"kernel_size": 2}),
}


@pytest.mark.parametrize("name", ONE_SAMPLE)
def test_one_sample_is_taken_as_a_batch_of_one_as_pytorch(name):
    """[C, *spatial] as PyTorch also takes it: the batch of one's result, without the batch axis."""
    fn, torch_name, shape, others, kwargs = ONE_SAMPLE[name]
    x = leaf(_RNG.standard_normal(shape))
    weights = [leaf(a) for a in others]
    alone = fn(x, *weights, **kwargs)
    batch = fn(x.reshape((1,) + shape), *weights, **kwargs)
    np.testing.assert_array_equal(alone.numpy(), batch.numpy()[0])
    assert check_gradients(lambda *ts: fn(*ts, **kwargs), x, *weights)
    parity(lambda *ts: fn(*ts, **kwargs), lambda *ts: getattr(_tf(), torch_name)(*ts, **kwargs), x, *weights)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_layers_pad_one_sample_by_their_padding_mode_as_pytorch(mode):
    torch = import_torch()
    minitx.manual_seed(0)
    ours = nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode).double()
    theirs = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    x = _RNG.standard_normal((2, 5, 4))
    np.testing.assert_allclose(ours(minitx.tensor(x)).numpy(), theirs(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-12)


def test_one_sample_errors_name_the_op_and_the_shapes():
    with pytest.raises(TypeError, match="conv2d: input 0 is ndarray, expected a Tensor"):
        F.conv2d(np.ones((2, 3, 3)), leaf(np.ones((1, 2, 1, 1))))
    y, indices = F.max_pool2d(leaf(np.ones((2, 4, 4))), 2, return_indices=True)
    with pytest.raises(ValueError, match=r"max_unpool2d: indices must have the input's shape \(2, 2, 2\), got "
                                         r"\(1, 2, 2, 2\)"):
        F.max_unpool2d(y, indices[None], 2)


def test_max_pool_of_one_sample_gives_its_indices_and_max_unpool_takes_them_back():
    tf = _tf()
    x = leaf(_RNG.standard_normal((3, 6, 8)))
    y, indices = F.max_pool2d(x, 2, return_indices=True)
    ty, t_indices = tf.max_pool2d(import_torch().from_numpy(x.numpy()), 2, return_indices=True)
    assert y.shape == indices.shape == (3, 3, 4)
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    parity(lambda t: F.max_unpool2d(t, indices, 2), lambda t: tf.max_unpool2d(t, t_indices, 2), leaf(y.numpy()))
    y1, indices1 = F.max_pool1d(x[:, 0], 2, return_indices=True)
    assert check_gradients(lambda t: F.max_unpool1d(t, indices1, 2), leaf(y1.numpy()))


# ---------------------------------------------------------------- layers


def test_conv_layers_match_the_functional_ops_and_init_like_pytorch():
    minitx.manual_seed(0)
    layer = nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2)
    assert layer.weight.shape == (6, 2, 3, 2) and layer.bias.shape == (6,)
    bound = 1 / np.sqrt(2 * 3 * 2)
    assert np.abs(layer.weight.numpy()).max() <= bound and np.abs(layer.weight.numpy()).max() > 0.5 * bound
    x = minitx.tensor(np.random.default_rng(0).standard_normal((2, 4, 7, 7)), dtype="float32")
    np.testing.assert_array_equal(layer(x).numpy(),
                                  F.conv2d(x, layer.weight, layer.bias, 2, 1, 1, 2).numpy())
    assert len(list(nn.Conv1d(3, 5, 4, bias=False).parameters())) == 1
    assert nn.Conv1d(3, 5, 4)(minitx.zeros(2, 3, 9)).shape == (2, 5, 6)
    assert nn.MaxPool2d(2)(x).shape == (2, 4, 3, 3) and nn.AvgPool2d(3, 2, 1)(x).shape == (2, 4, 4, 4)
    assert nn.MaxPool2d(2, ceil_mode=True)(x).shape == (2, 4, 4, 4)
    assert nn.Conv2d(4, 6, (3, 2), padding="same")(x).shape == (2, 6, 7, 7)
    assert nn.AvgPool2d(2, ceil_mode=True)(x).shape == (2, 4, 4, 4)
    assert nn.MaxPool2d(2, return_indices=True)(x)[1].shape == (2, 4, 3, 3)
    with pytest.raises(ValueError, match="Conv2d: in_channels 3 and out_channels 4 must both be divisible by groups 2"):
        nn.Conv2d(3, 4, 3, groups=2)


# ---------------------------------------------------------------- some inputs constant


def _frozen_variants(n):
    """Every way to leave some (not all) of n inputs without a gradient."""
    return [mask for mask in np.ndindex(*(2,) * n) if any(mask) and not all(mask)]


@pytest.mark.parametrize("name", ["Conv2d", "Einsum", "ScatterAdd", "SoftCrossEntropy", "BinaryCrossEntropy"])
def test_ops_with_several_inputs_when_only_some_need_gradients(name):
    """Backward may skip the gradients nobody needs; the ones asked for must still be right and
    the others stay None."""
    rng = np.random.default_rng(0)
    cases = {
        "Conv2d": (lambda x, w, b: F.conv2d(x, w, b, 2, 1, 1, 2), [(2, 4, 5, 5), (4, 2, 3, 3), (4,)]),
        "Einsum": (lambda a, b: F.einsum("bqd,bkd->bqk", a, b), [(2, 3, 4), (2, 5, 4)]),
        "ScatterAdd": (lambda x, s: F.scatter_add(x, 1, [[0, 2, 2], [1, 1, 0]], s), [(2, 3), (2, 3)]),
        "SoftCrossEntropy": (lambda x, q: F.cross_entropy(x, q), [(3, 4), (3, 4)]),
        "BinaryCrossEntropy": (lambda p, y: F.binary_cross_entropy(p, y), [(3, 4), (3, 4)]),
    }
    fn, shapes = cases[name]
    for needs in _frozen_variants(len(shapes)):
        inputs = [leaf(rng.uniform(0.1, 0.9, shape), requires_grad=bool(k)) for shape, k in zip(shapes, needs)]
        assert check_gradients(fn, *inputs)
        fn(*inputs).sum().backward()
        assert [t.grad is not None for t in inputs] == [bool(k) for k in needs]


def test_an_integer_max_pool_pads_with_the_dtypes_minimum():
    """Padding is what never wins: -inf for floats, the dtype's minimum for integers (which have no
    -inf; padding with it raised OverflowError)."""
    x = minitx.tensor(np.arange(-8, 8).reshape(1, 1, 4, 4))
    got = F.max_pool2d(x, 2, padding=1)
    padded = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.iinfo(np.int64).min)
    expected = padded.reshape(1, 1, 3, 2, 3, 2).max(axis=(3, 5))
    assert got.dtype == np.int64 and got.numpy().tolist() == expected.tolist()
    assert F.max_pool2d(x.astype("int32"), 3, stride=1, padding=1).dtype == np.int32


# ---------------------------------------------------------------- pooling over n spatial axes, ceil_mode

DIMS = (1, 2, 3)  # spatial axes drawn by the n-d tests
LARGER = {1: 4, 2: 4, 3: 2}  # how much an input may exceed its window: 3-d finite differences stay quick


def _one_or_tuple(values):
    return values[0] if len(values) == 1 else values


@st.composite
def _pool_nd_case(draw, kind):
    """x [N, C, *spatial] and the pool's kernel, stride, padding, dilation, ceil_mode, count_include_pad."""
    dims = draw(st.sampled_from(DIMS))
    kernel, stride, padding, dilation, size = [], [], [], [], []
    for _ in range(dims):
        k, s = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        p = draw(st.integers(0, k // 2))
        d = 1 if kind == "avg" or p else draw(st.integers(1, 2))  # dilated padding could fill a whole window
        span = d * (k - 1) + 1
        for values, v in zip((kernel, stride, padding, dilation), (k, s, p, d)):
            values.append(v)
        size.append(draw(st.integers(max(1, span - 2 * p), span + LARGER[dims])))
    x = draw(mst.tensors((draw(st.integers(1, 2)), draw(st.integers(1, 2))) + tuple(size), distinct=True))
    return x, tuple(kernel), tuple(stride), tuple(padding), tuple(dilation), draw(st.booleans()), draw(st.booleans())


@given(case=_pool_nd_case("max"))
def test_max_pool_nd_ceil_mode_and_indices(case):
    """MaxPoolNd over 1-3 spatial axes, its values, gradients and indices."""
    x, kernel, stride, padding, dilation, ceil_mode, _ = case
    k, s, p, d = (_one_or_tuple(v) for v in (kernel, stride, padding, dilation))
    ours, theirs = f"max_pool{x.ndim - 2}d", f"max_pool{x.ndim - 2}d"
    fn = lambda t: getattr(F, ours)(t, k, s, p, d, ceil_mode)  # noqa: E731
    y, where = np_pool(x.numpy(), "max", kernel, stride, padding, dilation, ceil_mode)
    check_forward(fn, lambda a: y, x)
    assert check_gradients(fn, x)
    parity(fn, lambda t: getattr(_tf(), theirs)(t, k, s, p, d, ceil_mode), leaf(x.numpy()))
    values, indices = getattr(F, ours)(x, k, s, p, d, ceil_mode, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), y)
    assert indices.dtype == np.int64 and not indices.requires_grad
    np.testing.assert_array_equal(indices.numpy(), where)
    torch = torch_in_example()
    if torch is not None:
        theirs_indices = getattr(torch.nn.functional, theirs)(torch.tensor(x.numpy()), k, s, p, d, ceil_mode, True)[1]
        np.testing.assert_array_equal(indices.numpy(), theirs_indices.numpy())


@given(case=_pool_nd_case("avg"), divisor_override=st.sampled_from([None, 1, 3]))
def test_avg_pool_nd_ceil_mode(case, divisor_override):
    """AvgPoolNd over 1-3 spatial axes, count_include_pad, ceil_mode and divisor_override drawn."""
    x, kernel, stride, padding, _, ceil_mode, include_pad = case
    k, s, p = (_one_or_tuple(v) for v in (kernel, stride, padding))
    ours = getattr(F, f"avg_pool{x.ndim - 2}d")
    override = () if x.ndim == 3 else (divisor_override,)  # PyTorch's avg_pool1d has none
    fn = lambda t: ours(t, k, s, p, ceil_mode, include_pad, *override)  # noqa: E731
    expected = np_pool(x.numpy(), "avg", kernel, stride, padding, (1,) * len(kernel), ceil_mode, include_pad,
                       *override)[0]
    check_forward(fn, lambda a: expected, x, rtol=1e-12)
    assert check_gradients(fn, x)
    if x.ndim == 5 and any(n < w for n, w in zip(x.shape[2:], kernel)):
        return  # PyTorch's avg_pool3d refuses an input smaller than the kernel, padding or not
    parity(fn, lambda t: getattr(_tf(), f"avg_pool{x.ndim - 2}d")(t, k, s, p, ceil_mode, include_pad, *override),
           leaf(x.numpy()))


def test_ceil_mode_keeps_a_last_window_starting_in_the_input_and_drops_one_in_the_padding():
    """x = [1 2 3 4 5] at positions 0..4, kernel 2, stride 2, padding 1: windows [-1, 0], [1, 2],
    [3, 4]; ceil_mode's fourth would start at 5, in the right padding, and is dropped. Without
    padding the third window [4, 5] starts inside and counts 1 position (count_include_pad too:
    5 is past the padding)."""
    x = leaf(np.arange(1.0, 6.0)[None, None])
    for include_pad, first in ((True, 0.5), (False, 1.0)):
        out = parity(lambda t: F.avg_pool1d(t, 2, 2, 1, True, include_pad),
                     lambda t: _tf().avg_pool1d(t, 2, 2, 1, True, include_pad), x)
        np.testing.assert_array_equal(out.numpy(), [[[first, 2.5, 4.5]]])
        x.grad = None
    out = parity(lambda t: F.avg_pool1d(t, 2, 2, 0, True),
                 lambda t: _tf().avg_pool1d(t, 2, 2, 0, True), x)
    np.testing.assert_array_equal(out.numpy(), [[[1.5, 3.5, 5.0]]])
    x.grad = None
    out = parity(lambda t: F.max_pool1d(t, 2, 2, 0, 1, ceil_mode=True),
                 lambda t: _tf().max_pool1d(t, 2, 2, 0, 1, True), x)
    np.testing.assert_array_equal(out.numpy(), [[[2.0, 4.0, 5.0]]])


def test_max_pool_gives_a_tie_between_padding_and_minus_inf_to_the_input():
    """Padding holds -inf: a window whose input is all -inf still sends its gradient to the input."""
    x = leaf([[[-np.inf, -np.inf, 2.0]]])
    out = parity(lambda t: F.max_pool1d(t, 2, 2, 1), lambda t: _tf().max_pool1d(t, 2, 2, 1), x)
    np.testing.assert_array_equal(out.numpy(), [[[-np.inf, 2.0]]])
    np.testing.assert_array_equal(x.grad.numpy() != 0, [[[True, False, True]]])
    assert F.max_pool1d(x, 2, 2, 1, return_indices=True)[1].numpy().tolist() == [[[0, 2]]]


def test_max_pool_indices_point_into_the_unpadded_plane_and_find_nan():
    """h * W + w of each maximum in its (n, c) plane, padding not counted; a NaN is the maximum."""
    x = np.array([[[[1.0, 5.0, 2.0], [7.0, 0.0, np.nan], [3.0, 8.0, 4.0]]]])
    values, indices = F.max_pool2d(leaf(x), 2, 2, 1, return_indices=True)
    theirs = _tf().max_pool2d(import_torch().tensor(x), 2, 2, 1, return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), [[[[0, 1], [3, 5]]]])
    np.testing.assert_array_equal(indices.numpy(), theirs[1].numpy())
    np.testing.assert_array_equal(values.numpy(), theirs[0].numpy())


@pytest.mark.parametrize("pool", [lambda x: F.max_pool1d(x, 3, return_indices=True),
                                  lambda x: F.adaptive_max_pool1d(x, 1, return_indices=True)],
                         ids=["max_pool1d", "adaptive_max_pool1d"])
def test_a_window_of_several_nans_gives_its_gradient_and_index_to_the_first(pool):
    """(PyTorch's CPU kernel takes the last: docs/ops.md lists the departure)"""
    x = leaf([[[np.nan, 1.0, np.nan]]])
    values, indices = pool(x)
    values.sum().backward()
    assert np.isnan(values.numpy()).all() and indices.numpy().tolist() == [[[0]]]
    np.testing.assert_array_equal(x.grad.numpy(), [[[1.0, 0.0, 0.0]]])


# ---------------------------------------------------------------- convolution over n spatial axes

@st.composite
def _conv_nd_case(draw):
    """x [N, C, *spatial], weight, bias or None, stride, padding (ints per axis, "valid" or "same"),
    the padding as (before, after) pairs, dilation, groups."""
    dims = draw(st.sampled_from(DIMS))
    mode = draw(st.sampled_from(["ints", "valid", "same"]))
    kernel = tuple(draw(st.integers(1, 4 if dims < 3 else 2)) for _ in range(dims))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(dims))
    stride = (1,) * dims if mode == "same" else tuple(draw(st.integers(1, 3)) for _ in range(dims))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(dims)) if mode == "ints" else mode
    pads = {"ints": lambda: tuple((p, p) for p in padding), "valid": lambda: ((0, 0),) * dims,
            "same": lambda: _same_pads(kernel, dilation)}[mode]()
    size = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - sum(p)), d * (k - 1) + LARGER[dims]))
                 for k, d, p in zip(kernel, dilation, pads))
    groups = draw(st.integers(1, 2))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    x = draw(mst.tensors((draw(st.integers(1, 2)), c) + size))
    w = draw(mst.tensors((o, c // groups) + kernel))
    b = draw(mst.tensors((o,))) if draw(st.booleans()) else None
    return x, w, b, stride, padding, pads, dilation, groups


@given(case=_conv_nd_case())
def test_conv_nd_with_padding_modes(case):
    """ConvNd over 1-3 spatial axes; padding as ints per axis (non-square), "valid", and "same",
    whose odd total padding is asymmetric."""
    x, w, b, stride, padding, pads, dilation, groups = case
    s, p, d = (v if isinstance(v, str) else _one_or_tuple(v) for v in (stride, padding, dilation))
    name = f"conv{x.ndim - 2}d"
    fn = lambda t, k, *bias: getattr(F, name)(t, k, bias[0] if bias else None, s, p, d, groups)  # noqa: E731
    inputs = (x, w) + ((b,) if b is not None else ())
    check_forward(fn, lambda a, k, *bias: np_conv(a, k, bias[0] if bias else None, stride, pads, dilation, groups),
                  *inputs, rtol=1e-12, atol=1e-13)
    if padding == "same":
        assert fn(*inputs).shape[2:] == x.shape[2:]
    assert check_gradients(fn, *inputs)
    parity(fn, lambda t, k, *bias: getattr(_tf(), name)(t, k, bias[0] if bias else None, s, p, d, groups),
           *(leaf(t.numpy()) for t in inputs))


def test_conv_padding_strings_and_their_errors():
    x, w = leaf(np.arange(5.0)[None, None]), leaf([[[1.0, 10.0]]])
    out = parity(lambda t, k: F.conv1d(t, k, padding="same"), lambda t, k: _tf().conv1d(t, k, padding="same"), x, w)
    np.testing.assert_array_equal(out.numpy(), [[[10.0, 21.0, 32.0, 43.0, 4.0]]])  # the odd padding on the right
    assert F.conv1d(x, w, padding="valid").shape == (1, 1, 4)
    with pytest.raises(ValueError, match="conv2d: padding='same' needs stride 1, got stride \\(2, 1\\)"):
        F.conv2d(leaf(np.zeros((1, 1, 3, 3))), leaf(np.zeros((1, 1, 2, 2))), stride=(2, 1), padding="same")
    with pytest.raises(ValueError, match="conv1d: padding must be 'valid', 'same' or ints, got 'full'"):
        F.conv1d(x, w, padding="full")


# ---------------------------------------------------------------- transposed convolution

@st.composite
def _conv_transpose_case(draw):
    """x [N, C, *spatial], weight [C, O/groups, *kernel], bias or None, stride, padding,
    output_padding (below the stride or the dilation), dilation, groups."""
    dims = draw(st.sampled_from(DIMS))
    kernel, stride, padding, output_padding, dilation, size = [], [], [], [], [], []
    for _ in range(dims):
        k, s, d, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
        q = draw(st.integers(0, max(s, d) - 1))
        p = draw(st.integers(0, min(2, ((m - 1) * s + d * (k - 1) + q) // 2)))  # at least one output
        for values, v in zip((kernel, stride, padding, output_padding, dilation, size), (k, s, p, q, d, m)):
            values.append(v)
    groups = draw(st.integers(1, 2))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    x = draw(mst.tensors((draw(st.integers(1, 2)), c) + tuple(size)))
    w = draw(mst.tensors((c, o // groups) + tuple(kernel)))
    b = draw(mst.tensors((o,))) if draw(st.booleans()) else None
    return x, w, b, tuple(stride), tuple(padding), tuple(output_padding), tuple(dilation), groups


@given(case=_conv_transpose_case())
def test_conv_transpose_nd(case):
    """ConvTransposeNd: against a direct scatter in NumPy, finite differences and PyTorch."""
    x, w, b, stride, padding, output_padding, dilation, groups = case
    s, p, q, d = (_one_or_tuple(v) for v in (stride, padding, output_padding, dilation))
    name = f"conv_transpose{x.ndim - 2}d"
    fn = lambda t, k, *bias: getattr(F, name)(t, k, bias[0] if bias else None, s, p, q, groups, d)  # noqa: E731
    inputs = (x, w) + ((b,) if b is not None else ())
    check_forward(fn, lambda a, k, *bias: np_conv_transpose(a, k, bias[0] if bias else None, stride, padding,
                                                            output_padding, dilation, groups),
                  *inputs, rtol=1e-12, atol=1e-13)
    assert check_gradients(fn, *inputs)
    parity(fn, lambda t, k, *bias: getattr(_tf(), name)(t, k, bias[0] if bias else None, s, p, q, groups, d),
           *(leaf(t.numpy()) for t in inputs))


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv(u), v> = <u, conv_transpose(v)> with the same weight, stride, padding, dilation and
    groups, output_padding making the sizes meet."""
    rng = np.random.default_rng(0)
    u, w, v = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2)), rng.standard_normal((2, 6, 4, 2))
    conv = F.conv2d(leaf(u), leaf(w), None, 2, (1, 0), (1, 2), 2).numpy()
    back = F.conv_transpose2d(leaf(v), leaf(w), None, 2, (1, 0), (0, 1), 2, (1, 2)).numpy()
    assert conv.shape == v.shape and back.shape == u.shape
    np.testing.assert_allclose((conv * v).sum(), (u * back).sum(), rtol=1e-12)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("kind", ["conv", "conv_transpose"])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_with_no_out_channels_and_conv_transpose_with_no_in_channels(dims, kind, groups):
    """The weight's first axis empty: conv gives an empty y, conv_transpose the bias alone, with
    gradients of their inputs' shapes, as for the other channel counts of 0 (PyTorch refuses these
    two: "expected weight to be at least 1 at dimension 0")."""
    rng = np.random.default_rng(0)
    spatial, kernel, ones = (4,) * dims, (2,) * dims, (1,) * dims
    if kind == "conv":
        x, w, b = leaf(rng.standard_normal((2, 2 * groups) + spatial)), leaf(np.zeros((0, 2) + kernel)), leaf([])
        fn = lambda t, k, c: getattr(F, f"conv{dims}d")(t, k, c, padding=1, groups=groups)  # noqa: E731
        reference = lambda a, k, c: np_conv(a, k, c, ones, ((1, 1),) * dims, ones, groups)  # noqa: E731
    else:
        x, w, b = leaf(np.zeros((2, 0) + spatial)), leaf(np.zeros((0, 3) + kernel)), leaf(rng.standard_normal(3 * groups))
        fn = lambda t, k, c: getattr(F, f"conv_transpose{dims}d")(t, k, c, stride=2, groups=groups)  # noqa: E731
        zeros = (0,) * dims
        reference = lambda a, k, c: np_conv_transpose(a, k, c, (2,) * dims, zeros, zeros, ones, groups)  # noqa: E731
    y = check_forward(fn, reference, x, w, b, rtol=0)
    assert y.shape == ((2, 0) + (5,) * dims if kind == "conv" else (2, 3 * groups) + (8,) * dims)
    assert check_gradients(fn, x, w, b)


def test_conv_transpose_errors_name_the_op():
    x = leaf(np.zeros((1, 4, 3, 3)))
    cases = [
        (lambda: F.conv_transpose2d(x, leaf(np.zeros((3, 2, 2, 2)))),
         r"conv_transpose2d: input with 4 channels, weight \(3, 2, 2, 2\) and groups=1 do not fit"),
        (lambda: F.conv_transpose2d(x, leaf(np.zeros((4, 2, 2, 2))), output_padding=1),
         r"conv_transpose2d: output_padding \(1, 1\) must be >= 0 and smaller than the stride \(1, 1\)"),
        (lambda: F.conv_transpose2d(x, leaf(np.zeros((4, 2, 1, 1))), padding=2),
         r"conv_transpose2d: the output would have sizes \(-1, -1\)"),
        (lambda: F.conv_transpose1d(x, leaf(np.zeros((4, 2, 1)))), r"conv_transpose1d: input must be 3-D \[N, C, L\]"),
        (lambda: F.conv_transpose2d(x, leaf(np.zeros((4, 2, 1, 1))), leaf(np.zeros(2)), groups=2),
         r"conv_transpose2d: bias must have shape \(4,\), got \(2,\)"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_conv_transpose_layers_match_pytorch_and_init_like_it():
    """Weights [in, out / groups, *kernel], both ~ U(+-1/sqrt(out / groups * prod(kernel)))."""
    torch = import_torch()
    minitx.manual_seed(0)
    layer = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))
    assert layer.weight.shape == (4, 3, 3, 2) and layer.bias.shape == (6,)
    bound = 1 / np.sqrt(3 * 3 * 2)
    assert bound >= np.abs(layer.weight.numpy()).max() > 0.5 * bound
    theirs = torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2),
                                      dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(layer.weight.numpy()))
        theirs.bias.copy_(torch.tensor(layer.bias.numpy()))
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 4))
    np.testing.assert_allclose(layer.double()(leaf(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    one_d = nn.ConvTranspose1d(3, 5, 4, stride=3, bias=False)
    assert len(list(one_d.parameters())) == 1 and one_d(minitx.zeros(2, 3, 6)).shape == (2, 5, 19)


def test_conv_transpose_layers_take_an_output_size_as_pytorch():
    """forward(x, output_size): the output_padding that gives it (the layer's own set aside), the
    sizes given alone or with x's leading axes, a batch or one sample; outside the reachable
    (n - 1) s - 2 p + d (k - 1) + 1 plus 0 to s - 1 it is refused, naming the range."""
    torch = import_torch()
    cases = [(nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1), torch.nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1),
              (5, 4), [(10, 8), [2, 6, 9, 7]]),
             (nn.ConvTranspose1d(6, 4, 3, stride=3, output_padding=2), torch.nn.ConvTranspose1d(6, 4, 3, stride=3),
              (5,), [[16], (17,)]),
             (nn.ConvTranspose3d(6, 4, 2, stride=(2, 3, 1), dilation=2),
              torch.nn.ConvTranspose3d(6, 4, 2, stride=(2, 3, 1), dilation=2), (2, 3, 2), [(5, 9, 4)])]
    rng = np.random.default_rng(0)
    for ours, theirs, spatial, sizes in cases:
        ours = ours.double()
        theirs = theirs.double()
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(ours.weight.numpy()))
            theirs.bias.copy_(torch.tensor(ours.bias.numpy()))
        for size in sizes:
            for shape in [(2, 6) + spatial, (6,) + spatial]:
                if len(size) == len(spatial) + 2 and len(shape) < len(size):
                    continue
                x = rng.standard_normal(shape)
                np.testing.assert_allclose(ours(leaf(x), output_size=size).numpy(),
                                           theirs(torch.tensor(x), output_size=size).detach().numpy(), rtol=1e-12)
    layer = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match=r"ConvTranspose2d: output_size \(11, 8\) must lie between \(9, 7\) and "
                                         r"\(10, 8\) for an input of spatial sizes \(5, 4\)"):
        layer(minitx.zeros(1, 6, 5, 4), output_size=(11, 8))
    with pytest.raises(ValueError, match=r"ConvTranspose2d: output_size must be 2 ints \(or 4 with x's leading "
                                         r"axes\), got \(9, 7, 1\)"):
        layer(minitx.zeros(1, 6, 5, 4), output_size=(9, 7, 1))


# ---------------------------------------------------------------- 3-d and the n-d layers


@pytest.mark.parametrize("ours, theirs, shape", [
    (lambda: nn.Conv3d(4, 6, (3, 2, 1), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1), groups=2),
     lambda t: t.nn.Conv3d(4, 6, (3, 2, 1), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1), groups=2),
     (2, 4, 5, 4, 3)),
    (lambda: nn.Conv3d(2, 3, 2, padding="same", bias=False), lambda t: t.nn.Conv3d(2, 3, 2, padding="same", bias=False),
     (1, 2, 3, 4, 2)),
    (lambda: nn.ConvTranspose3d(4, 2, 2, stride=2, output_padding=(1, 0, 1), groups=2),
     lambda t: t.nn.ConvTranspose3d(4, 2, 2, stride=2, output_padding=(1, 0, 1), groups=2), (1, 4, 2, 3, 2)),
    (lambda: nn.MaxPool3d(2, 1, 1, ceil_mode=True), lambda t: t.nn.MaxPool3d(2, 1, 1, ceil_mode=True), (2, 3, 4, 3, 5)),
    (lambda: nn.AvgPool3d((3, 2, 2), 2, 1, True, False), lambda t: t.nn.AvgPool3d((3, 2, 2), 2, 1, True, False),
     (2, 3, 4, 3, 5)),
    (lambda: nn.MaxPool1d(3, 2, 1), lambda t: t.nn.MaxPool1d(3, 2, 1), (2, 3, 7)),
    (lambda: nn.AvgPool1d(3, 2, ceil_mode=True), lambda t: t.nn.AvgPool1d(3, 2, ceil_mode=True), (2, 3, 6)),
], ids=["Conv3d", "Conv3d-same", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "MaxPool1d", "AvgPool1d"])
def test_nd_layers_match_pytorch(ours, theirs, shape):
    """Each layer against PyTorch's with the same parameters, forward and gradients in float64."""
    torch = import_torch()
    layer, reference = ours().double(), theirs(torch).double()
    with torch.no_grad():
        for name, parameter in reference.named_parameters():
            assert getattr(layer, name).shape == tuple(parameter.shape)
            parameter.copy_(torch.tensor(getattr(layer, name).numpy()))
    parity(layer, reference, leaf(np.random.default_rng(0).standard_normal(shape)))


ONE_FOR_EVERY_AXIS = [  # (op, the argument given as a one-element tuple or list, the other arguments)
    *((f"conv{d}d", name, {}) for d in (2, 3) for name in ("stride", "padding", "dilation")),
    *((f"conv_transpose{d}d", name, {"stride": 2} if name == "output_padding" else {})
      for d in (2, 3) for name in ("stride", "padding", "output_padding", "dilation")),
    *((f"max_pool{d}d", name, {"kernel_size": 3}) for d in (2, 3)
      for name in ("kernel_size", "stride", "padding", "dilation")),
    *((f"avg_pool{d}d", name, {"kernel_size": 3}) for d in (2, 3) for name in ("kernel_size", "stride", "padding")),
]


@pytest.mark.parametrize("op, name, others", ONE_FOR_EVERY_AXIS,
                         ids=[f"{op}-{name}" for op, name, _ in ONE_FOR_EVERY_AXIS])
def test_a_one_element_tuple_stands_for_every_spatial_axis_as_in_pytorch(op, name, others):
    """stride=(2,) is stride=2 for conv and pooling, as PyTorch expands it (ATen's
    expand_param_if_needed for conv, the pools' own reading); other lengths but the axes' are refused."""
    dims = int(op[-2])
    rng = np.random.default_rng(0)
    x = leaf(rng.standard_normal((1, 2) + (6,) * dims))
    weight = {"conv": (3, 2), "conv_transpose": (2, 3)}.get(op[:-2], None)
    inputs = (x,) if weight is None else (x, leaf(rng.standard_normal(weight + (3,) * dims)))
    value = 3 if name == "kernel_size" else 2 if name in ("stride", "dilation") else 1
    if op.startswith("conv_transpose") and name == "stride":
        others = {**others, "output_padding": 1}
    expected = getattr(F, op)(*inputs, **{**others, name: value})
    for spelled in ((value,), [value]):
        np.testing.assert_array_equal(getattr(F, op)(*inputs, **{**others, name: spelled}).numpy(), expected.numpy())
        parity(lambda *a, spelled=spelled: getattr(F, op)(*a, **{**others, name: spelled}),
               lambda *a, spelled=spelled: getattr(_tf(), op)(*a, **{**others, name: spelled}),
               *(leaf(t.numpy()) for t in inputs))  # (fresh leaves: parity compares their gradients)
    empty_is_the_kernel = "pool" in op and name == "stride"  # (test_an_empty_stride_is_the_kernels_as_pytorchs)
    for wrong in ((() if not empty_is_the_kernel else (value,) * (dims + 2)), (value,) * (dims + 1)) \
            + (((value,) * 2,) if dims == 3 else ()):
        with pytest.raises(ValueError, match=rf"^{op}: {name} must be an int or a (pair|triple) of ints"):
            getattr(F, op)(*inputs, **{**others, name: wrong})


def test_a_one_element_tuple_stays_refused_where_pytorch_refuses_it():
    """interpolate's size, the adaptive pools' and max_unpool's sizes, and a layer's kernel_size are
    not expanded in PyTorch either (interpolate and the adaptive pools say so; the others fail later)."""
    x = leaf(np.zeros((1, 2, 4, 4)))
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    cases = [
        (lambda: F.interpolate(x, size=(8,)), r"interpolate: size must be an int or a pair of ints, got \(8,\)$"),
        (lambda: F.adaptive_avg_pool2d(x, (2,)), "adaptive_avg_pool2d: output_size must be an int or 2 of them"),
        (lambda: F.max_unpool2d(values, indices, (2,)), r"max_unpool2d: kernel_size must be an int or a pair of ints"),
        (lambda: nn.Conv2d(2, 3, (3,)), r"Conv2d: kernel_size must be an int or a pair of ints, got \(3,\)$"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert nn.Conv2d(2, 3, 3, stride=(2,), padding=[1], dilation=(1,))(x.float()).shape == (1, 3, 2, 2)  # as PyTorch's


def test_3d_ops_on_integers_and_their_errors():
    """An integer max_pool3d keeps its dtype and finds its indices; the 3-d ops name themselves."""
    x = np.random.default_rng(1).integers(-50, 50, (1, 2, 3, 4, 5))
    values, indices = F.max_pool3d(minitx.tensor(x), 2, 2, 1, return_indices=True)
    y, where = np_pool(x, "max", (2,) * 3, (2,) * 3, (1,) * 3, (1,) * 3, False)
    assert values.dtype == np.int64 and values.numpy().tolist() == y.tolist()
    np.testing.assert_array_equal(indices.numpy(), where)
    cases = [
        (lambda: F.conv3d(leaf(np.zeros((2, 3, 3))), leaf(np.zeros((1, 2, 1, 1, 1)))),
         r"conv3d: input must be 5-D \[N, C, D, H, W\] or 4-D \[C, D, H, W\] \(one sample\), got shape \(2, 3, 3\)"),
        (lambda: F.max_pool3d(leaf(np.zeros((1, 1, 3, 3, 3))), (2, 2)),
         r"max_pool3d: kernel_size must be an int or a triple of ints, got \(2, 2\)"),
        (lambda: F.avg_pool3d(leaf(np.zeros((1, 1, 3, 3, 3))), 2, padding=(0, 0, 2)),
         r"avg_pool3d: padding \(0, 0, 2\) must be at most half the kernel \(2, 2, 2\)"),
        (lambda: F.conv_transpose3d(leaf(np.zeros((1, 2, 3, 3, 3))), leaf(np.zeros((2, 1, 2, 2, 2))), stride=2,
                                    output_padding=2), r"conv_transpose3d: output_padding \(2, 2, 2\) must be >= 0"),
        (lambda: minitx.ops.ConvNd(4), "conv: the number of spatial axes must be 1, 2 or 3, got 4"),
        (lambda: minitx.ops.AvgPoolNd(0, 2), "avg_pool: the number of spatial axes must be 1, 2 or 3, got 0"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_avg_pool_takes_pytorchs_argument_order_and_divisor_override():
    """avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override), as PyTorch's: code
    ported with positional arguments means the same thing."""
    x = leaf(np.arange(16.0).reshape(1, 1, 4, 4))
    out = parity(lambda t: F.avg_pool2d(t, 3, 2, 1, True, False, 2), lambda t: _tf().avg_pool2d(t, 3, 2, 1, True, False, 2), x)
    assert out.shape == (1, 1, 3, 3)
    layer = nn.AvgPool2d(3, 2, 1, True, False, 2)
    np.testing.assert_array_equal(layer(x).numpy(), out.numpy())
    with pytest.raises(ValueError, match=r"avg_pool2d: divisor_override must be None or an integer >= 1, got 0"):
        F.avg_pool2d(x, 2, divisor_override=0)


def test_pools_of_booleans_and_integers():
    """A boolean max-pool pads with False (-inf would be True), as logical or over each window; an
    integer avg-pool is computed in float32, as every op on real numbers."""
    x = minitx.tensor(np.zeros((1, 1, 3, 3), dtype=bool))
    assert not F.max_pool2d(x, 3, 1, 1).numpy().any()
    eye = np.eye(3, dtype=bool)
    padded = np.pad(eye, 1)  # False around it
    windows = [[padded[i:i + 2, j:j + 2].any() for j in range(4)] for i in range(4)]
    np.testing.assert_array_equal(F.max_pool2d(minitx.tensor(eye[None, None]), 2, 1, 1).numpy()[0, 0], windows)
    ints = minitx.tensor(np.arange(16).reshape(1, 1, 4, 4))
    out = F.avg_pool2d(ints, 2)
    assert out.dtype == np.float32 and out.numpy().tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]


def test_a_window_that_reads_only_padding_is_refused():
    """kernel 2, dilation 2, padding 1 over one element: the window reads positions -1 and 1,
    padding both; it has no maximum (PyTorch returns -inf and an index of -1)."""
    with pytest.raises(ValueError, match=r"max_pool1d: a window of kernel \(2,\), dilation \(2,\) and padding \(1,\) "
                                         r"reads padding only"):
        F.max_pool1d(leaf([[[5.0]]]), 2, 3, 1, 2)



# ---------------------------------------------------------------- adaptive pools
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kind", ["avg", "max"])
@given(data=st.data())
def test_adaptive_pools(dims, kind, data):
    """Output sizes that divide the input's, that do not (windows overlapping by one), larger than
    it (windows of one, repeated), None (the axis kept); one sample or a batch."""
    largest = 6 if dims < 3 else 3  # (a max op per window: 3-d outputs kept small)
    spatial = data.draw(st.tuples(*[st.integers(1, largest)] * dims), label="spatial")
    lead = data.draw(st.sampled_from([(2,), (1, 2)]), label="batch")
    x = data.draw(mst.tensors(lead + spatial, distinct=kind == "max"), label="x")
    out = st.integers(1, largest + 1)  # (None keeps an axis: not in PyTorch's 1-d pool)
    out = out if dims == 1 else st.one_of(st.none(), out)
    size = tuple(data.draw(out, label="out") for _ in range(dims))
    output_size = size[0] if dims == 1 else size

    def reference(a):  # each output position's window, by PyTorch's formula, one at a time
        cells = [[(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]
                 for n, m in zip(spatial, (n if m is None else m for n, m in zip(spatial, size)))]
        out = np.empty(a.shape[:len(lead)] + tuple(len(c) for c in cells))
        for index in np.ndindex(*out.shape[len(lead):]):
            window = a[(Ellipsis,) + tuple(slice(*cells[k][i]) for k, i in enumerate(index))]
            out[(Ellipsis,) + index] = (window.mean if kind == "avg" else window.max)(axis=tuple(range(-dims, 0)))
        return out

    fn = getattr(F, f"adaptive_{kind}_pool{dims}d")
    check_forward(lambda t: fn(t, output_size), reference, x, rtol=1e-12, atol=1e-12)
    assert check_gradients(lambda t: fn(t, output_size), x)
    parity(lambda t: fn(t, output_size), lambda t: getattr(_tf(), f"adaptive_{kind}_pool{dims}d")(t, output_size),
           leaf(x.numpy()))


def test_adaptive_max_pool_indices_and_layers_match_pytorch():
    torch = import_torch()
    x = _RNG.standard_normal((2, 3, 5, 7))
    values, indices = F.adaptive_max_pool2d(leaf(x), (2, 3), return_indices=True)
    t_values, t_indices = _tf().adaptive_max_pool2d(torch.from_numpy(x), (2, 3), return_indices=True)
    np.testing.assert_array_equal(values.numpy(), t_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    for ours, theirs in ((nn.AdaptiveAvgPool2d(1), torch.nn.AdaptiveAvgPool2d(1)),
                         (nn.AdaptiveMaxPool1d(4), torch.nn.AdaptiveMaxPool1d(4)),
                         (nn.AdaptiveAvgPool3d((None, 2, 2)), torch.nn.AdaptiveAvgPool3d((None, 2, 2)))):
        dims = int(type(ours).__name__[-2])  # AdaptiveAvgPool2d: 2
        sample = _RNG.standard_normal((2, 3) + (4, 5, 6)[:dims])
        np.testing.assert_allclose(ours(minitx.tensor(sample)).numpy(), theirs(torch.from_numpy(sample)).numpy(),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match=r"adaptive_avg_pool2d: output_size \(0, 2\) must hold ints >= 1"):
        F.adaptive_avg_pool2d(leaf(x), (0, 2))
    with pytest.raises(ValueError, match=r"adaptive_max_pool1d: input must be 3-D \[N, C, L\] or 2-D \[C, L\]"):
        F.adaptive_max_pool1d(leaf(x), 2)


def test_adaptive_pools_at_ties_infinities_and_empty_batches_match_pytorch():
    """A tie's dy goes to the first maximum (as max_pool's and PyTorch's); an inf stays in its own
    windows' means; a batch of no samples gives no outputs, indices included."""
    torch = import_torch()
    ties = leaf(np.zeros((1, 2, 4, 4)))
    parity(lambda t: F.adaptive_max_pool2d(t, (1, 2)), lambda t: _tf().adaptive_max_pool2d(t, (1, 2)), ties)
    x = np.arange(16.0).reshape(1, 2, 8)
    x[0, 0, 0], x[0, 1, 5] = np.inf, np.nan
    np.testing.assert_array_equal(F.adaptive_avg_pool1d(leaf(x), 3).numpy(),
                                  _tf().adaptive_avg_pool1d(torch.from_numpy(x), 3).numpy())
    values, indices = F.adaptive_max_pool2d(leaf(np.zeros((0, 3, 5, 7))), (2, 3), return_indices=True)
    assert values.shape == indices.shape == (0, 3, 2, 3)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pools_on_cupy_agree_with_numpy(kind):
    x, dy = _RNG.standard_normal((2, 3, 5, 7)), _RNG.standard_normal((2, 3, 2, 3))
    results = {}
    for device in ("cpu", "cuda"):
        t = minitx.tensor(x, dtype="float32", device=device, requires_grad=True)
        y = getattr(F, f"adaptive_{kind}_pool2d")(t, (2, 3))
        y.backward(minitx.tensor(dy, dtype="float32", device=device))
        results[device] = [y.numpy(), t.grad.numpy()]
        if kind == "max":
            results[device].append(F.adaptive_max_pool2d(t, (2, 3), return_indices=True)[1].numpy())
    for ours, cpu in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(ours, cpu, rtol=1e-6, atol=1e-6)


def test_max_pool_gives_an_infinite_dy_to_the_winner_alone():
    """(positions == winner) * dy made 0 * inf = NaN at every entry that lost its window (PyTorch: 0)."""
    x = leaf([[[1.0, 2.0, 3.0, 4.0]]])
    F.max_pool1d(x, 2).backward(np.array([[[np.inf, np.nan]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, np.inf, 0.0, np.nan]]])


# ---------------------------------------------------------------- power-average pools and the _with_indices names
@st.composite
def _lp_pool_case(draw):
    """x [N, C, *spatial], p (whole, fractional, +-inf), kernel, stride (None: the kernel), ceil_mode."""
    dims = draw(st.sampled_from(DIMS))
    p = draw(st.sampled_from([1, 2, 3, 1.5, 0.5, np.inf, -np.inf]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    stride = draw(st.one_of(st.none(), st.tuples(*[st.integers(1, 3)] * dims)))
    size = tuple(draw(st.integers(k, k + LARGER[dims])) for k in kernel)
    # negative entries for p = 1 and 2 only: a window's negative sum of cubes, or a fractional power of
    # a negative number, is NaN (as PyTorch's, on which finite differences say nothing); steps stay off 0
    low = -2.0 if p in (1, 2) else 0.2
    x = draw(mst.tensors((draw(st.integers(1, 2)), 2) + size, min_value=low, max_value=2.0, away_from=(0.0,),
                         margin=0.1, distinct=True))
    return x, p, kernel, stride, draw(st.booleans())


@given(case=_lp_pool_case())
def test_lp_pool_nd(case):
    """(sum of x^p over each window)^(1/p) against NumPy (x^p summed by PyTorch's pooling loop: a
    window ceil_mode cuts short averaged over its own positions, times the kernel's size, as
    PyTorch's), float64 gradients and PyTorch parity; p = +-inf the largest / smallest |x|."""
    x, p, kernel, stride, ceil_mode = case
    dims = x.ndim - 2
    k, s = _one_or_tuple(kernel), None if stride is None else _one_or_tuple(stride)
    ours = getattr(F, f"lp_pool{dims}d")
    fn = lambda t: ours(t, p, k, s, ceil_mode)  # noqa: E731
    geometry = (kernel, kernel if stride is None else stride, (0,) * dims, (1,) * dims, ceil_mode)
    a = x.numpy()
    if abs(p) == np.inf:
        sign = 1 if p > 0 else -1
        expected = sign * np_pool(sign * np.abs(a), "max", *geometry)[0]
    else:
        expected = (np_pool(a ** p, "avg", *geometry, include_pad=False)[0] * np.prod(kernel)) ** (1 / p)
    check_forward(fn, lambda t: expected, x, rtol=1e-10)
    assert check_gradients(fn, x)
    parity(fn, lambda t: getattr(_tf(), f"lp_pool{dims}d")(t, p, k, s, ceil_mode), leaf(a))


@pytest.mark.parametrize("p", [1, 2, 3, 0.5])
def test_lp_pool_gives_a_window_of_zeros_no_gradient_as_pytorch(p):
    """s = 0: d s^(1/p) / ds is infinite (p > 1); PyTorch's gradient there is 0, and so is ours. The
    other window's entries get theirs; a zero entry's x^p derivative is infinite for p < 1: NaN, as
    PyTorch's."""
    x = np.array([[[0.0, 0.0, 1.0, 2.0, 0.0, 3.0]]])
    parity(lambda t: F.lp_pool1d(t, p, 2), lambda t: _tf().lp_pool1d(t, p, 2), leaf(x))
    t = leaf(x)
    F.lp_pool1d(t, p, 2).sum().backward()
    zeros = t.grad.numpy()[0, 0, :2]
    assert zeros.tolist() == [0.0, 0.0] if p >= 1 else np.isnan(zeros).all()


def test_lp_pool_errors_and_layers():
    x = leaf(_RNG.standard_normal((2, 3, 5, 4)))
    for bad in (0, True, float("nan"), "2"):
        with pytest.raises(ValueError, match=rf"lp_pool2d: norm_type must be a nonzero number .*, got {bad!r}"):
            F.lp_pool2d(x, bad, 2)
    with pytest.raises(ValueError, match=r"lp_pool3d: kernel_size must be an int or a triple of ints, got \(2, 2\)"):
        F.lp_pool3d(leaf(np.ones((1, 1, 3, 3, 3))), 2, (2, 2))
    for lp_pool, shape, layout in ((F.lp_pool1d, (2, 3, 4, 5), r"3-D \[N, C, L\]"), (F.lp_pool2d, (5, 4), r"4-D"),
                                   (F.lp_pool3d, (2, 3), r"5-D")):
        with pytest.raises(ValueError, match=rf"^{lp_pool.__name__}: input must be {layout}"):
            lp_pool(leaf(np.ones(shape)), 2, 2)
        with pytest.raises(ValueError, match=rf"^{lp_pool.__name__}: input must be {layout}"):
            lp_pool(leaf(np.ones(shape)), np.inf, 2)
    torch = import_torch()
    for ours, theirs, shape in ((nn.LPPool1d(2, 3, 2), torch.nn.LPPool1d(2, 3, 2), (2, 3, 7)),
                                (nn.LPPool2d(1.5, (2, 3), ceil_mode=True), torch.nn.LPPool2d(1.5, (2, 3), ceil_mode=True),
                                 (2, 3, 5, 4)),
                                (nn.LPPool3d(np.inf, 2), torch.nn.LPPool3d(np.inf, 2), (1, 2, 4, 3, 5))):
        assert repr(ours) == repr(theirs)
        parity(ours, theirs, leaf(np.abs(_RNG.standard_normal(shape)) + 0.1))
    assert nn.LPPool2d(2, 2)(minitx.ones(3, 4, 4)).shape == (3, 2, 2)  # one sample


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_the_with_indices_names_are_the_pools_with_return_indices(dims):
    """PyTorch's max_pool2d_with_indices and adaptive_max_pool2d_with_indices: (values, indices)
    whatever return_indices says, the values' gradient as the pool's."""
    torch = import_torch()
    x = _RNG.standard_normal((2, 3) + (5, 4, 6)[:dims])
    pooled = getattr(F, f"max_pool{dims}d_with_indices"), getattr(_tf(), f"max_pool{dims}d_with_indices")
    adaptive = (getattr(F, f"adaptive_max_pool{dims}d_with_indices"),
                getattr(_tf(), f"adaptive_max_pool{dims}d_with_indices"))
    for (ours, theirs), args in ((pooled, (2, 1, 1)), (adaptive, (3,))):
        values, indices = ours(leaf(x), *args)
        t_values, t_indices = theirs(torch.from_numpy(x), *args)
        np.testing.assert_array_equal(values.numpy(), t_values.numpy())
        np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
        assert indices.dtype == np.int64 and not indices.requires_grad
        assert len(ours(leaf(x), *args, return_indices=False)) == 2
        parity(lambda t: ours(t, *args)[0], lambda t: theirs(t, *args)[0], leaf(x))
    expected = getattr(F, f"max_pool{dims}d")(leaf(x), 2, 1, 1, return_indices=True)
    for ours, theirs in zip(pooled[0](leaf(x), 2, 1, 1), expected):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("stride", [None, [], ()])
@pytest.mark.parametrize("name", ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                                  "lp_pool1d", "lp_pool2d", "lp_pool3d"])
def test_an_empty_stride_is_the_kernels_as_pytorchs(name, stride):
    """PyTorch's pools read stride None, [] and () as kernel_size (ATen: an empty stride is the kernel)."""
    dims = int(name[-2])
    x = np.abs(_RNG.standard_normal((2, 3) + (5,) * dims)) + 0.1
    lp = (2,) if name.startswith("lp") else ()
    ours = getattr(F, name)(leaf(x), *lp, 2, stride=stride)
    np.testing.assert_array_equal(ours.numpy(), getattr(F, name)(leaf(x), *lp, 2, stride=2).numpy())
    parity(lambda t: getattr(F, name)(t, *lp, 2, stride=stride),
           lambda t: getattr(_tf(), name)(t, *lp, 2, stride=list(stride) if stride is not None else None), leaf(x))


def test_pool_layers_keep_and_show_their_stride_as_pytorchs():
    torch = import_torch()
    for args in [(2,), (2, None), (3, 1), ((1, 2, 2),)]:
        for kind in ("MaxPool2d", "AvgPool2d", "MaxPool3d", "AvgPool3d"):
            if len(args) and isinstance(args[0], tuple) and kind.endswith("2d"):
                continue
            ours, theirs = getattr(nn, kind)(*args), getattr(torch.nn, kind)(*args)
            assert repr(ours) == repr(theirs) and ours.stride == theirs.stride
