"""unfold and fold (minitx/ops/conv.py: Unfold, Fold), im2col and col2im as ops, and their layers.

Forward against plain NumPy loops (an entry-by-entry im2col and a scatter-add col2im), float64
gradients (check_gradients) and PyTorch parity on hypothesis-drawn geometries (kernel, dilation,
padding, stride drawn per axis, as ints or pairs, a batch or one sample), the adjoint identity
<unfold(x), c> = <x, fold(c)>, a convolution as a matrix product with unfold's columns, the
dtypes, and the errors users see.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import nn
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity


def _tf():
    return import_torch().nn.functional


# ---------------------------------------------------------------- NumPy references


def _blocks(size, kernel, dilation, padding, stride):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding,
                                                                                 stride))


def np_unfold(a, kernel, dilation, padding, stride):
    """im2col one entry at a time: column (i_1, i_2) is block (i_1, i_2), its row (c, a_1, a_2) the
    zero-padded input at (i_1 * s_1 + a_1 * d_1, i_2 * s_2 + a_2 * d_2)."""
    (k1, k2), (d1, d2), (s1, s2) = kernel, dilation, stride
    padded = np.pad(a, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    b1, b2 = _blocks(a.shape[2:], kernel, dilation, padding, stride)
    cols = np.zeros((a.shape[0], a.shape[1] * k1 * k2, b1 * b2), dtype=a.dtype)
    for n, c, a1, a2, i1, i2 in np.ndindex(a.shape[:2] + (k1, k2, b1, b2)):
        cols[n, (c * k1 + a1) * k2 + a2, i1 * b2 + i2] = padded[n, c, i1 * s1 + a1 * d1, i2 * s2 + a2 * d2]
    return cols


def np_fold(cols, size, kernel, dilation, padding, stride):
    """col2im one entry at a time: each column entry added where np_unfold reads it, then the
    padding cut off."""
    (k1, k2), (d1, d2), (p1, p2), (s1, s2) = kernel, dilation, padding, stride
    b1, b2 = _blocks(size, kernel, dilation, padding, stride)
    channels = cols.shape[1] // (k1 * k2)
    padded = np.zeros((cols.shape[0], channels, size[0] + 2 * p1, size[1] + 2 * p2), dtype=cols.dtype)
    for n, c, a1, a2, i1, i2 in np.ndindex((cols.shape[0], channels, k1, k2, b1, b2)):
        padded[n, c, i1 * s1 + a1 * d1, i2 * s2 + a2 * d2] += cols[n, (c * k1 + a1) * k2 + a2, i1 * b2 + i2]
    return padded[:, :, p1:p1 + size[0], p2:p2 + size[1]]


# ---------------------------------------------------------------- drawn geometries


@st.composite
def _geometry(draw):
    """(kernel, dilation, padding, stride, size): pairs, and spatial sizes that hold at least one
    block (the padded size at least the span d * (k - 1) + 1), a few blocks past it at most."""
    axes = []
    for _ in range(2):
        k, d, p, s = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(1, 3))
        span = d * (k - 1) + 1
        axes.append((k, d, p, s, draw(st.integers(max(1, span - 2 * p), span + 4))))
    return tuple(zip(*axes))


def _as_given(values, draw):
    """A pair, or one int where both axes agree (PyTorch takes both), drawn."""
    return values[0] if values[0] == values[1] and draw(st.booleans()) else values


@st.composite
def _case(draw, fold=False):
    """(the op's input, its keyword arguments, the geometry as pairs, whether one sample): unfold's
    input [N, C, H, W], fold's [N, C * kh * kw, L]; one sample without the N axis."""
    kernel, dilation, padding, stride, size = draw(_geometry())
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    shape = (n, c * kernel[0] * kernel[1], np.prod(_blocks(size, kernel, dilation, padding, stride))) if fold else \
        (n, c) + size
    one_sample = draw(st.booleans())
    x = draw(mst.tensors(shape[1:] if one_sample else shape))
    kwargs = {"kernel_size": _as_given(kernel, draw), "dilation": _as_given(dilation, draw),
              "padding": _as_given(padding, draw), "stride": _as_given(stride, draw)}
    if fold:
        kwargs["output_size"] = _as_given(size, draw)
    return x, kwargs, (kernel, dilation, padding, stride, size), one_sample


def _batched(reference, one_sample):
    """reference for a batch, given one sample: it gets and returns a batch of one."""
    return (lambda a: reference(a[None])[0]) if one_sample else reference


@given(case=_case())
def test_unfold(case):
    """Unfold: every block a column, in PyTorch's order; drawn kernel, dilation, padding, stride."""
    x, kwargs, (kernel, dilation, padding, stride, _), one_sample = case
    fn = lambda t: F.unfold(t, **kwargs)  # noqa: E731
    check_forward(fn, _batched(lambda a: np_unfold(a, kernel, dilation, padding, stride), one_sample), x)
    assert check_gradients(fn, x)
    parity(fn, lambda t: _tf().unfold(t, **kwargs), leaf(x.numpy()))


@given(case=_case(fold=True))
def test_fold(case):
    """Fold: every column added back at its block, overlaps summed, the padding dropped."""
    x, kwargs, (kernel, dilation, padding, stride, size), one_sample = case
    fn = lambda t: F.fold(t, **kwargs)  # noqa: E731
    check_forward(fn, _batched(lambda a: np_fold(a, size, kernel, dilation, padding, stride), one_sample), x,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    parity(fn, lambda t: _tf().fold(t, **kwargs), leaf(x.numpy()))


@given(case=_case(), data=st.data())
def test_fold_is_the_adjoint_of_unfold(case, data):
    """<unfold(x), c> = <x, fold(c)> for any x and c: the two are transposes of one matrix, so
    each one's backward is the other (dx of unfold is fold(dy), and the other way round)."""
    x, kwargs, (kernel, dilation, padding, stride, size), _ = case
    cols = F.unfold(x, **kwargs)
    c = data.draw(mst.float_arrays(cols.shape))
    back = F.fold(minitx.tensor(c), x.shape[-2:], **kwargs)
    np.testing.assert_allclose((cols.numpy() * c).sum(), (x.numpy() * back.numpy()).sum(), rtol=1e-10, atol=1e-10)
    cols.backward(c)
    np.testing.assert_array_equal(x.grad.numpy(), back.numpy())


def test_a_convolution_is_a_matrix_product_with_unfolds_columns():
    """conv2d(x, w) = w.reshape(O, -1) @ unfold(x), the columns laid out as the output's positions;
    and fold(unfold(x)) is x times the number of blocks reading each entry."""
    rng = np.random.default_rng(0)
    x, w = leaf(rng.standard_normal((2, 3, 6, 5))), leaf(rng.standard_normal((4, 3, 3, 2)))
    kwargs = {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}
    y = F.conv2d(x, w, **kwargs)
    by_hand = (w.reshape(4, -1) @ F.unfold(x, (3, 2), **kwargs)).reshape(y.shape)
    np.testing.assert_allclose(by_hand.numpy(), y.numpy(), rtol=1e-12, atol=1e-12)
    ones = minitx.ones(1, 1, 4, 4, dtype="float64")
    counts = F.fold(F.unfold(ones, 2), (4, 4), 2).numpy()[0, 0]
    np.testing.assert_array_equal(counts, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])


def test_unfold_and_fold_at_empty_batches_and_infinities_as_pytorch():
    x = leaf(np.zeros((0, 2, 3, 3)))
    assert parity(lambda t: F.unfold(t, 2), lambda t: _tf().unfold(t, 2), x).shape == (0, 8, 4)
    cols = leaf(np.zeros((0, 8, 4)))
    assert parity(lambda t: F.fold(t, 3, 2), lambda t: _tf().fold(t, 3, 2), cols).shape == (0, 2, 3, 3)
    a = np.ones((1, 1, 3, 3))
    a[0, 0, 1, 1], a[0, 0, 0, 0] = np.inf, np.nan  # fold adds inf into the middle from 4 blocks, NaN into one corner
    with np.errstate(invalid="ignore"):
        parity(lambda t: F.fold(F.unfold(t, 2), 3, 2), lambda t: _tf().fold(_tf().unfold(t, 2), 3, 2), leaf(a))
        edges = np.arange(36.0).reshape(1, 4, 9)
        edges[0, 0, :3], edges[0, 3, 4] = (np.inf, -np.inf, np.nan), np.inf  # some land in the padding, dropped
        parity(lambda t: F.fold(t, 2, 2, padding=1), lambda t: _tf().fold(t, 2, 2, padding=1), leaf(edges))


def test_unfold_and_fold_keep_booleans_and_compute_integers_in_float32():
    """Booleans stay booleans (a block of them; fold's overlaps or-ed, as PyTorch's); integers,
    which PyTorch refuses, are computed in float32 as ops on real numbers take them."""
    torch = import_torch()
    a = np.random.default_rng(1).random((1, 2, 3, 4)) < 0.4
    ours = F.unfold(minitx.tensor(a), 2)
    assert ours.dtype == np.bool_
    np.testing.assert_array_equal(ours.numpy(), _tf().unfold(torch.tensor(a), 2).numpy())
    folded = F.fold(ours, (3, 4), 2)
    assert folded.dtype == np.bool_
    np.testing.assert_array_equal(folded.numpy(), _tf().fold(_tf().unfold(torch.tensor(a), 2), (3, 4), 2).numpy())
    integers = minitx.tensor(np.arange(24).reshape(1, 2, 3, 4))
    assert F.unfold(integers, 2).dtype == np.float32 and F.fold(F.unfold(integers, 2), (3, 4), 2).dtype == np.float32
    np.testing.assert_array_equal(F.unfold(integers, 2).numpy(), np_unfold(np.arange(24.0).reshape(1, 2, 3, 4),
                                                                           (2, 2), (1, 1), (0, 0), (1, 1)))


def test_unfold_and_fold_errors_name_the_op():
    x, cols = leaf(np.zeros((1, 2, 3, 3))), leaf(np.zeros((1, 8, 4)))
    cases = [
        (lambda: F.fold(leaf(np.zeros((1, 7, 4))), 3, 2), r"fold: the input's axis 1, 7, must be a whole number of "
                                                          r"blocks of kernel_size \(2, 2\) \(a multiple of 4\)"),
        (lambda: F.fold(leaf(np.zeros((1, 8, 5))), 3, 2), r"fold: output_size \(3, 3\) with kernel_size \(2, 2\), "
                                                          r"dilation \(1, 1\), padding \(0, 0\) and stride \(1, 1\) "
                                                          r"holds 2 \* 2 = 4 blocks, but the input's axis 2 has 5"),
        (lambda: F.fold(cols, 3, 2, stride=2), r"fold: .* holds 1 \* 1 = 1 blocks, but the input's axis 2 has 4"),
        (lambda: F.fold(cols, (1, 3), 2), "fold: the height of the padded output, 1, is smaller than the kernel's "
                                          "span 2"),
        (lambda: F.fold(cols, 0, 2), r"fold: output_size must be positive, got \(0, 0\)"),
        (lambda: F.fold(cols, (3, 3, 3), 2), r"fold: output_size must be an int or a pair of ints, got \(3, 3, 3\)"),
        (lambda: F.fold(leaf(np.zeros((1, 8, 4, 1))), 3, 2), r"fold: input must be 3-D \[N, C \* kh \* kw, L\] or "
                                                             r"2-D \[C \* kh \* kw, L\] \(one sample\), got shape "
                                                             r"\(1, 8, 4, 1\)"),
        (lambda: F.unfold(x, 4), "unfold: the height of the padded input, 3, is smaller than the kernel's span 4"),
        (lambda: F.unfold(x, 2, dilation=3), "unfold: the height of the padded input, 3, is smaller than the "
                                             "kernel's span 4"),
        (lambda: F.unfold(x[0, 0], 2), r"unfold: input must be 4-D \[N, C, H, W\] or 3-D \[C, H, W\] \(one "
                                       r"sample\), got shape \(3, 3\)"),
        (lambda: F.unfold(x, 2, stride=0), "unfold: kernel, stride and dilation must be >= 1 and padding >= 0"),
        (lambda: F.unfold(x, 2, padding=-1), "unfold: kernel, stride and dilation must be >= 1 and padding >= 0"),
        (lambda: F.fold(cols, 3, 0), "fold: kernel, stride and dilation must be >= 1"),
        (lambda: F.unfold(x, 2.0), "unfold: kernel_size must be an int or a pair of ints, got 2.0"),
        (lambda: F.unfold(x, 2, dilation=(1, 1, 1)), r"unfold: dilation must be an int or a pair of ints"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_the_layers_match_pytorch():
    """nn.Unfold and nn.Fold: values, gradients and reprs as PyTorch's."""
    torch = import_torch()
    rng = np.random.default_rng(2)
    layers = [(nn.Unfold((2, 3), dilation=(2, 1), padding=1, stride=2),
               torch.nn.Unfold((2, 3), dilation=(2, 1), padding=1, stride=2), (2, 3, 5, 6)),
              (nn.Fold((4, 5), 2, padding=(1, 0)), torch.nn.Fold((4, 5), 2, padding=(1, 0)), (2, 8, 20)),
              (nn.Fold(3, 2, stride=1), torch.nn.Fold(3, 2, stride=1), (8, 4))]
    for ours, theirs, shape in layers:
        parity(ours, theirs, leaf(rng.standard_normal(shape)))
        assert repr(ours) == repr(theirs)
