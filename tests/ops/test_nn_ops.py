"""Softmax, layer norm, dropout, embedding, linear and cross-entropy (minitx/ops/activation.py,
norm.py, dropout.py, indexing.py, linalg.py, loss.py): forward against NumPy written here (check_forward),
backward against finite differences and backward hygiene (check_gradients, which runs
gradcheck(...) and check_backward_hygiene(...)), on hypothesis-drawn inputs.

Each op class is named where it is tested (ops.Softmax, ops.CrossEntropy, ...): the meta-test
in tests/test_meta.py looks for those names next to a gradcheck call.
"""
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import ops
from minitx.testing import arg, check_forward, check_gradients, leaf, op_case
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

TIGHT = dict(rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- NumPy references


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_softmax(x, axis):
    return np.exp(np_log_softmax(x, axis))


def np_layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_cross_entropy(x, t, ignore_index=-100, smoothing=0.0, reduction="mean"):
    """Cross-entropy against the smoothed target distribution q = (1 - s) onehot(t) + s / C."""
    classes = x.shape[-1]
    valid = t != ignore_index
    q = (1 - smoothing) * np.eye(classes)[np.where(valid, t, 0)] + smoothing / classes
    losses = -(q * np_log_softmax(x, -1)).sum(-1) * valid
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / max(int(valid.sum()), 1)


def np_attention(q, k, v, allowed=None, scale=None):
    """softmax(scale q k^T) @ v with disallowed keys removed; a row with no key gives zeros."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    allowed = np.ones(scores.shape, bool) if allowed is None else np.broadcast_to(allowed, scores.shape)
    masked = np.where(allowed, scores, -np.inf)
    m = masked.max(-1, keepdims=True)
    e = np.exp(masked - np.where(m == -np.inf, 0, m))
    total = e.sum(-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1)
    return weights @ v, weights


def random_qkv(seed, lq, lk, d=2, dv=2, batch=()):
    """float64 leaves q [*batch, lq, d], k [*batch, lk, d], v [*batch, lk, dv]."""
    rng = np.random.default_rng(seed)
    return tuple(leaf(rng.standard_normal(batch + s)) for s in ((lq, d), (lk, d), (lk, dv)))


def causal_allowed(lq, lk):
    """Query i (the last lq of lk positions) may see key j when j <= i + lk - lq."""
    i, j = np.arange(lq)[:, None], np.arange(lk)[None, :]
    return j <= i + lk - lq


# ---------------------------------------------------------------- softmax, log_softmax

SOFTMAXES = [(ops.Softmax, F.softmax, np_softmax), (ops.LogSoftmax, F.log_softmax, np_log_softmax)]
SOFTMAX_IDS = ["Softmax", "LogSoftmax"]


def any_axis(shape):
    return st.integers(-len(shape), len(shape) - 1)


# forward against NumPy, then check_gradients, through op_case (minitx.testing's op-test factory)
SOFTMAX_CASES = {op: op_case(fn, arg(), numpy=ref, shapes=mst.shapes(min_dims=1, max_dims=3),
                             kwargs={"axis": any_axis}, **TIGHT) for op, fn, ref in SOFTMAXES}


@pytest.mark.parametrize("op, fn, ref", SOFTMAXES, ids=SOFTMAX_IDS)
@given(data=st.data())
def test_softmax_family_any_axis(op, fn, ref, data):
    SOFTMAX_CASES[op](data)
    assert isinstance(fn(leaf([1.0, 2.0]), 0)._ctx, op)


@pytest.mark.parametrize("op, fn, ref", SOFTMAXES, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_large_inputs_stay_finite(op, fn, ref, dtype):
    x = np.array([[1e4, 0.0, -1e4], [-3e4, -3e4, -3e4], [88.0, 89.0, 90.0]])
    y = fn(minitx.tensor(x, dtype=dtype), -1).numpy()
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y, ref(x, -1), rtol=1e-5)


def test_softmax_of_a_fully_masked_row_is_zero():
    x = minitx.tensor([[-np.inf, -np.inf], [0.0, -np.inf]], requires_grad=True)
    y = F.softmax(x)
    np.testing.assert_array_equal(y.numpy(), [[0.0, 0.0], [1.0, 0.0]])
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("op, fn, ref", SOFTMAXES, ids=SOFTMAX_IDS)
@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_family_nan_makes_its_whole_slice_nan(op, fn, ref, axis):
    """A NaN is never hidden (PyTorch's rule): its slice is NaN, forward and gradient; the other
    slices and the fully-masked rule (all -inf: softmax 0, log_softmax -inf) are unchanged."""
    data = np.array([[1.0, np.nan, 2.0], [0.5, -1.0, 3.0], [-np.inf, -np.inf, -np.inf]])
    x = leaf(data if axis == 1 else data.T)
    y = fn(x, axis)
    nan_slice = np.isnan(x.numpy()).any(axis=axis, keepdims=True)
    out = y.numpy()
    assert np.isnan(out[np.broadcast_to(nan_slice, out.shape)]).all()
    clean = np.take(x.numpy(), [1, 2], axis=1 - axis)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(np.take(out, [1], axis=1 - axis), ref(np.take(clean, [0], axis=1 - axis), axis))
    masked = np.take(out, [2], axis=1 - axis)
    assert (masked == (0.0 if op is ops.Softmax else -np.inf)).all()
    y.backward(np.ones(y.shape))
    grad = x.grad.numpy()
    assert np.isnan(grad[np.broadcast_to(nan_slice, grad.shape)]).all()
    assert np.isfinite(grad[~np.broadcast_to(nan_slice, grad.shape)]).all()


# rows with +inf: alone, beside a finite value, twice, beside a NaN; a plain row; all -inf is left out
# (minitx's softmax of a fully masked row is 0 where PyTorch's is NaN: test_softmax_of_a_fully_masked_row_is_zero)
PLUS_INF_ROWS = [[np.inf, 0.0, 1.0], [np.inf, np.inf, 0.0], [np.nan, np.inf, 0.0], [-np.inf, 0.0, 1.0],
                 [0.5, -1.0, 3.0]]


@pytest.mark.parametrize("fn, torch_name", [
    (lambda x: F.softmax(x, -1), "softmax"), (lambda x: F.log_softmax(x, -1), "log_softmax"),
    (lambda x: F.logsumexp(x, axis=-1), "logsumexp"),
    (lambda x: F.cross_entropy(x, minitx.tensor([1, 2, 1, 1, 0]), reduction="none"), "cross_entropy"),
    (lambda x: F.cross_entropy(x, minitx.tensor([1, 2, 1, 1, 0]), reduction="none", label_smoothing=0.1),
     "cross_entropy-smoothed"),
], ids=["softmax", "log_softmax", "logsumexp", "cross_entropy", "cross_entropy-smoothed"])
def test_a_plus_infinite_logit_gives_pytorchs_values(fn, torch_name):
    """A +inf makes its row's softmax, log_softmax and cross-entropy NaN, as PyTorch's (and as
    the CUDA kernels compute it); logsumexp is +inf there, with PyTorch's gradient."""
    def theirs(t):
        import torch

        target = torch.tensor([1, 2, 1, 1, 0])
        return {"softmax": lambda: torch.softmax(t, -1), "log_softmax": lambda: torch.log_softmax(t, -1),
                "logsumexp": lambda: torch.logsumexp(t, -1),
                "cross_entropy": lambda: torch.nn.functional.cross_entropy(t, target, reduction="none"),
                "cross_entropy-smoothed": lambda: torch.nn.functional.cross_entropy(
                    t, target, reduction="none", label_smoothing=0.1)}[torch_name]()

    with np.errstate(invalid="ignore"):
        parity(fn, theirs, leaf(PLUS_INF_ROWS))


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_family_axis_errors_name_the_op(fn):
    name = fn.__name__
    with pytest.raises(ValueError, match=rf"{name}: axis 1 of the input of shape \(2, 0\) has length 0; "
                                         "expected at least one entry"):
        fn(minitx.ones(2, 0), axis=1)
    with pytest.raises(ValueError, match=f"{name}: axis 2 is out of range for a tensor with 2 dimensions"):
        fn(minitx.ones(2, 3), axis=2)
    assert fn(minitx.ones(0, 3), axis=1).shape == (0, 3)  # no rows: nothing to normalize, no error


# ---------------------------------------------------------------- layer_norm


# eps=1e-3 keeps 1/std bounded, so finite differences stay accurate on nearly constant rows
LAYER_NORM_CASE = op_case(F.layer_norm, arg(distinct=True), arg(shape=lambda x: x[-1:]), arg(shape=lambda x, w: w),
                          numpy=lambda x, w, b, eps: np_layer_norm(x, w, b, eps), kwargs={"eps": 1e-3},
                          shapes=mst.shapes(min_dims=1, max_dims=3, min_side=2), rtol=1e-8, atol=1e-10)


@given(data=st.data())
def test_layer_norm_forward_and_gradients(data):
    LAYER_NORM_CASE(data)
    x = leaf([[1.0, 2.0, 4.0]])
    y = check_forward(F.layer_norm, lambda x: np_layer_norm(x, 1.0, 0.0, 1e-5), x, rtol=1e-8, atol=1e-10)
    assert isinstance(y._ctx, ops.LayerNorm)


def test_layer_norm_defaults_and_shape_error():
    x = leaf([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    y = F.layer_norm(x)
    np.testing.assert_allclose(y.numpy().mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.numpy().std(-1), 1, rtol=1e-4)
    with pytest.raises(ValueError, match="layer_norm.*weight"):
        F.layer_norm(x, leaf(np.ones(2)), leaf(np.zeros(3)))
    for shape in ((3,), [3], 3):  # PyTorch's order, (x, normalized_shape, weight, bias): named, not misread
        with pytest.raises(TypeError, match=r"layer_norm: the arguments are \(x, weight, bias, eps\), normalizing "
                                            r"over the last axis; .* reads as PyTorch's normalized_shape"):
            F.layer_norm(x, shape, leaf(np.ones(3)))
    for call in (lambda: F.layer_norm(leaf(1.0)), lambda: ops.LayerNorm()(leaf(1.0), leaf(1.0), leaf(0.0))):
        with pytest.raises(ValueError, match=r"layer_norm: a 0-d input has no last axis to normalize over; "
                                             r"expected at least 1 dimension, got shape \(\)"):
            call()  # as PyTorch, which refuses it too


@pytest.mark.parametrize("shape", [(3, 0), (2, 3, 0), (0,), (0, 3), (0, 0)])
def test_layer_norm_of_empty_inputs_matches_pytorch_without_warnings(shape):
    """Rows of no values, or no rows: an empty output and input gradient, dw and db summed over no
    rows (0), without NumPy's warnings about the means of nothing."""
    x, w, b = leaf(np.zeros(shape)), leaf(np.arange(shape[-1]) + 1.0), leaf(np.arange(shape[-1]) - 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.layer_norm(x, w, b).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 0)
    tf = import_torch().nn.functional
    parity(F.layer_norm, lambda t, v, c: tf.layer_norm(t, shape[-1:], v, c), *(leaf(a.numpy()) for a in (x, w, b)))


# ---------------------------------------------------------------- dropout


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3)), p=st.sampled_from([0.1, 0.5, 0.8]),
       seed=st.integers(0, 2**32 - 1))
def test_dropout_gradient_uses_the_forward_mask(x, p, seed):
    y = F.dropout(x, p, seed=seed)
    assert isinstance(y._ctx, ops.Dropout)
    np.testing.assert_allclose(y.numpy(), x.numpy() * np_keep_mask(x.shape, p, seed), **TIGHT)
    check_gradients(lambda t: F.dropout(t, p, seed=seed), x)


def test_dropout_backward_is_the_saved_mask():
    minitx.manual_seed(5)
    x = leaf(np.ones((50, 40)))
    y = F.dropout(x, 0.3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
    assert 0 < (y.numpy() == 0).sum() < y.size


def test_dropout_seeding():
    x = minitx.ones(20, 30)
    assert np.array_equal(F.dropout(x, 0.5, seed=3).numpy(), F.dropout(x, 0.5, seed=3).numpy())
    assert not np.array_equal(F.dropout(x, 0.5, seed=3).numpy(), F.dropout(x, 0.5, seed=4).numpy())
    minitx.manual_seed(9)
    first, second = F.dropout(x, 0.5).numpy(), F.dropout(x, 0.5).numpy()
    assert not np.array_equal(first, second)  # the generator moves on
    minitx.manual_seed(9)
    np.testing.assert_array_equal(F.dropout(x, 0.5).numpy(), first)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_inverted_scaling_preserves_the_mean(p):
    minitx.manual_seed(0)
    y = F.dropout(minitx.ones(400_000), p).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / (1 - p))}
    assert abs(y.mean() - 1) < 0.02
    assert abs((y == 0).mean() - p) < 0.01


def test_dropout_eval_mode_and_p_zero_are_the_identity():
    x = leaf(np.arange(6.0))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_dropout_p_out_of_range(p):
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\)"):
        F.dropout(minitx.ones(3), p)


# ---------------------------------------------------------------- alpha dropout (ops.AlphaDropout)

SELU_ALPHA = 1.7580993408473766  # SELU's scale * alpha: -SELU(-inf), the value a dropped unit takes


def np_alpha_dropout(a, p, seed, feature=False):
    """Klambauer et al.'s affine, written from the paper: kept units a * x + b, dropped ones
    a * alpha' + b, alpha' = -SELU_ALPHA, a = ((1 - p)(1 + p alpha'^2))^-1/2, b = -a alpha' p; the
    keep draw dropout's at ``seed``, one per (sample, channel) with ``feature``."""
    shape = a.shape[:2] + (1,) * (a.ndim - 2) if feature else a.shape
    keep = np.random.default_rng(seed).random(shape) >= p
    alpha = -SELU_ALPHA
    scale = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    return np.where(keep, scale * a, scale * alpha) - scale * alpha * p


@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=4, max_side=4)), p=st.floats(0.05, 0.95),
       feature=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_alpha_dropout_forward_and_gradients_at_a_seed(x, p, feature, seed):
    fn = (lambda t: F.feature_alpha_dropout(t, p, True, seed=seed)) if feature else \
        (lambda t: F.alpha_dropout(t, p, True, seed=seed))
    y = check_forward(fn, lambda a: np_alpha_dropout(a, p, seed, feature), x, **TIGHT)
    assert isinstance(y._ctx, ops.AlphaDropout)
    check_gradients(fn, x)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_alpha_dropout_keeps_selus_mean_and_variance_as_pytorchs(p):
    """SELU of standard normal values (mean 0, variance 1 by SELU's design) through alpha dropout
    keeps mean 0 and variance 1, in both libraries: 400 000 values at fixed seeds, so the check
    cannot flake, its bounds at least 5 standard errors (0.01 on the mean, 0.035 on the variance: at
    p = 0.9 the variance's is 0.0066); and PyTorch's affine a, b exactly (the two values of ones)."""
    torch = import_torch()
    values = np.random.default_rng(0).standard_normal(400_000)
    ours_in, theirs_in = F.selu(minitx.tensor(values)), torch.selu(torch.tensor(values))
    assert abs(ours_in.numpy().mean()) < 0.005 and abs(ours_in.numpy().var() - 1) < 0.01
    minitx.manual_seed(0)
    torch.manual_seed(0)
    for y in (F.alpha_dropout(ours_in, p, True).numpy(), torch.nn.functional.alpha_dropout(theirs_in, p, True).numpy()):
        assert abs(y.mean()) < 0.01 and abs(y.var() - 1) < 0.035
    ones = np.ones(10_000)
    ours = np.unique(F.alpha_dropout(minitx.tensor(ones), p, True).numpy())
    theirs = np.unique(torch.nn.functional.alpha_dropout(torch.tensor(ones), p, True).numpy())
    assert len(ours) == 2
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def test_feature_alpha_dropout_keeps_or_drops_whole_channels():
    """One draw per (sample, channel) of [N, C, ...], the positions following it: PyTorch's
    F.feature_alpha_dropout takes the first two axes as N and C, an unbatched [C, L] too."""
    def dropped(y, p):  # where y holds the value of a dropped unit, -a alpha (1 - p)
        return np.isclose(y, -SELU_ALPHA * (1 - p) / math.sqrt((SELU_ALPHA ** 2 * p + 1) * (1 - p)), rtol=1e-12)

    minitx.manual_seed(1)
    x = leaf(np.random.default_rng(1).standard_normal((40, 50, 3, 2)))
    channels = dropped(F.feature_alpha_dropout(x, 0.3, True).numpy(), 0.3)
    assert (channels.all(axis=(2, 3)) == channels.any(axis=(2, 3))).all()
    assert abs(channels.all(axis=(2, 3)).mean() - 0.3) < 0.03
    entries = dropped(F.feature_alpha_dropout(leaf(np.ones((200, 100))), 0.5, True).numpy(), 0.5)  # [N, C]
    assert 0.45 < entries.mean() < 0.55


def test_alpha_dropouts_eval_p0_and_p1_are_pytorchs_exactly():
    """Not training (the default, as PyTorch's), or p = 0: x itself. p = 1: x * 0, NaN and inf
    giving NaN, gradient 0, as PyTorch's."""
    torch = import_torch()
    x = leaf(np.arange(12.0).reshape(3, 4))
    for fn in (F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5) is x and fn(x, 0.5, training=False) is x and fn(x, 0.0, True) is x
    edges = np.array([[1.0, -2.0, 0.0, np.nan], [np.inf, -np.inf, 3.0, -0.0]])
    tf = torch.nn.functional
    parity(lambda t: F.alpha_dropout(t, 1.0, True), lambda t: tf.alpha_dropout(t, 1.0, True), leaf(edges))
    parity(lambda t: F.feature_alpha_dropout(t, 1.0, True), lambda t: tf.feature_alpha_dropout(t, 1.0, True),
           leaf(edges))


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_alpha_dropout_p_out_of_range_names_the_op(p):
    for name in ("alpha_dropout", "feature_alpha_dropout"):
        with pytest.raises(ValueError, match=rf"{name}: p must be in \[0, 1\], got {p}"):
            getattr(F, name)(minitx.ones(3, 2), p, True)
        with pytest.raises(ValueError, match=rf"{name}: p must be in \[0, 1\]"):
            getattr(F, name)(minitx.ones(3, 2), p)  # (checked outside training too, as PyTorch's)
    with pytest.raises(ValueError, match=r"feature_alpha_dropout: input must have at least 2 axes .* got shape \(3,\)"):
        F.feature_alpha_dropout(minitx.ones(3), 0.5, True)


# ---------------------------------------------------------------- fused dropout ops: dropout_add, bias_act_dropout


def np_keep_mask(shape, p, seed):
    """The reference path's scaled keep mask for a given seed (the generator Dropout uses)."""
    return (np.random.default_rng(seed).random(shape) >= p) / (1 - p)


# p > 0 in every example, so each one builds the op and draws its p and seed (p == 0 is the plain
# sum, below)
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3)), p=st.floats(0.05, 0.8), seed=st.integers(0, 2**32 - 1))
def test_dropout_add_forward_and_gradients(x, p, seed):
    residual = leaf(np.random.default_rng(1).standard_normal(x.shape))
    y = check_forward(lambda x, r: F.dropout_add(x, r, p, seed=seed),
                      lambda x, r: r + x * np_keep_mask(x.shape, p, seed), x, residual, **TIGHT)
    assert isinstance(y._ctx, ops.DropoutAdd)
    check_gradients(lambda x, r: F.dropout_add(x, r, p, seed=seed), x, residual)


def test_dropout_add_outside_training_or_at_p_0_is_the_plain_sum_and_shapes_must_match():
    x, r = leaf(np.ones((2, 3))), leaf(np.arange(6.0).reshape(2, 3))
    for y in (F.dropout_add(x, r, 0.5, training=False), F.dropout_add(x, r, 0.0)):
        np.testing.assert_array_equal(y.numpy(), r.numpy() + 1)
        assert not isinstance(y._ctx, ops.DropoutAdd)
    with pytest.raises(ValueError, match=r"dropout_add: x \(2, 3\) and residual \(3,\)"):
        F.dropout_add(x, leaf(np.ones(3)), 0.5)
    with pytest.raises(ValueError, match=r"dropout_add: p must be in \[0, 1\)"):
        F.dropout_add(x, r, 1.0)


BIAS_ACTIVATIONS = {"identity": lambda u: u, "relu": lambda u: np.maximum(u, 0),
                    "gelu_tanh": lambda u: 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))}


@given(data=st.data(), activation=st.sampled_from(sorted(BIAS_ACTIVATIONS)),
       p=st.sampled_from([0.0, 0.3]), with_bias=st.booleans())
def test_bias_act_dropout_forward_and_gradients(data, activation, p, with_bias):
    # values kept away from 0, where relu has its kink and finite differences would straddle it
    x = data.draw(mst.tensors(mst.shapes(min_dims=1, max_dims=3), away_from=(0.0,)))
    b = data.draw(mst.tensors(x.shape[-1:], away_from=(0.0,))) if with_bias else None
    inputs = (x, b) if with_bias else (x,)

    def reference(x, b=0):
        return BIAS_ACTIVATIONS[activation](x + b) * (np_keep_mask(x.shape, p, 3) if p else 1)

    y = check_forward(lambda *t: F.bias_act_dropout(*t, activation=activation, p=p, seed=3), reference, *inputs,
                      **TIGHT)
    assert isinstance(y._ctx, ops.BiasActDropout)
    u = x.numpy() + (b.numpy() if with_bias else 0)
    if activation == "relu" and with_bias:
        assume(np.abs(u).min() > 1e-3)  # x + b may still land on the kink
    check_gradients(lambda *t: F.bias_act_dropout(*t, activation=activation, p=p, seed=3), *inputs)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (2, 3, 0), (0, 4)])
@pytest.mark.parametrize("activation", sorted(BIAS_ACTIVATIONS))
def test_bias_act_dropout_of_empty_inputs_matches_pytorch(shape, activation):
    """No rows or no channels: an empty output and x gradient, and db summed over no rows (0)."""
    def theirs(t, c):
        tf = import_torch().nn.functional
        return {"identity": lambda u: u, "relu": tf.relu, "gelu_tanh": lambda u: tf.gelu(u, approximate="tanh")}[
            activation](t + c)

    parity(lambda t, c: F.bias_act_dropout(t, c, activation=activation, p=0.3, seed=3), theirs,
           leaf(np.zeros(shape)), leaf(np.arange(shape[-1]) - 1.5))


def test_bias_act_dropout_rejects_bad_arguments():
    x = leaf(np.ones((2, 3)))
    with pytest.raises(ValueError, match="bias_act_dropout: activation must be one of"):
        F.bias_act_dropout(x, activation="gelu")
    with pytest.raises(ValueError, match=r"bias_act_dropout: bias \(2,\) must have shape \(3,\)"):
        F.bias_act_dropout(x, leaf(np.ones(2)))
    assert F.bias_act_dropout(x, p=0.9, training=False).numpy().tolist() == [[1.0] * 3] * 2


# ---------------------------------------------------------------- embedding


@given(data=st.data())
def test_embedding_forward_and_gradient(data):
    rows = data.draw(st.integers(1, 6))
    weight = data.draw(mst.tensors((rows, data.draw(st.integers(1, 4)))))
    ids = data.draw(mst.class_targets(mst.shapes(max_dims=2), rows))
    padding_idx = data.draw(st.one_of(st.none(), st.integers(0, rows - 1)))
    y = check_forward(lambda w: F.embedding(ids, w, padding_idx=padding_idx), lambda w: w[ids], weight, rtol=0, atol=0)
    assert isinstance(y._ctx, ops.Embedding)
    check_gradients(lambda w: zero_padding_row(F.embedding(ids, w, padding_idx), ids, padding_idx), weight)


def zero_padding_row(y, ids, padding_idx):
    """What padding_idx means for the gradient: positions holding it do not depend on the table."""
    if padding_idx is None:
        return y
    return F.where(minitx.tensor(ids == padding_idx)[..., None], 0.0, y)


def test_embedding_repeated_ids_accumulate_and_padding_gets_no_gradient():
    weight = leaf(np.arange(12.0).reshape(4, 3))
    ids = minitx.tensor([[0, 2, 0], [0, 3, 3]])
    y = F.embedding(ids, weight, padding_idx=3)
    (y * leaf(np.arange(1.0, 4.0), requires_grad=False)).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(),
                                  [[3.0, 6.0, 9.0], [0, 0, 0], [1.0, 2.0, 3.0], [0, 0, 0]])
    np.testing.assert_array_equal(y.numpy()[1, 1], weight.numpy()[3])  # forward still reads the row


@pytest.mark.parametrize("ids, error, message", [
    (np.array([0.0, 1.0]), TypeError, "embedding: ids must be an integer tensor"),
    (np.array([0, 7]), IndexError, "embedding: id 7 is out of range for a table of 5 rows"),
    (np.array([-1, 2]), IndexError, "embedding: id -1 is out of range"),
])
def test_embedding_rejects_bad_ids(ids, error, message):
    with pytest.raises(error, match=message):
        F.embedding(minitx.tensor(ids), leaf(np.zeros((5, 2))))


# ---------------------------------------------------------------- linear


def linear_weight(x_shape):
    return st.integers(1, 4).map(lambda n_out: (n_out, x_shape[-1]))


LINEAR_CASES = {with_bias: op_case(F.linear, arg(), arg(shape=linear_weight),
                                   *([arg(shape=lambda x, w: w[:1])] if with_bias else []),
                                   numpy=lambda x, w, b=0: x @ w.T + b, shapes=mst.shapes(min_dims=1, max_dims=3,
                                                                                          max_side=4), **TIGHT)
                for with_bias in (False, True)}


@pytest.mark.parametrize("with_bias", [False, True], ids=["no-bias", "bias"])
@given(data=st.data())
def test_linear_forward_and_gradients(with_bias, data):
    LINEAR_CASES[with_bias](data)
    assert isinstance(F.linear(leaf([[1.0]]), leaf([[2.0]]))._ctx, ops.Linear)


def test_linear_3d_input_and_shape_error():
    x = leaf(np.arange(24.0).reshape(2, 3, 4))
    w, b = leaf(np.ones((5, 4))), leaf(np.zeros(5))
    y = F.linear(x, w, b)
    assert y.shape == (2, 3, 5)
    y.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.full(5, 6.0))
    np.testing.assert_array_equal(w.grad.numpy(), np.tile(x.numpy().reshape(6, 4).sum(0), (5, 1)))
    with pytest.raises(ValueError, match=r"linear: input of shape \(2, 3, 4\) does not fit weight \(4, 5\)"):
        F.linear(x, leaf(np.ones((4, 5))))
    for bias in (np.zeros(4), np.zeros((1, 5)), np.zeros(())):
        with pytest.raises(ValueError, match=rf"linear: bias of shape {re.escape(str(bias.shape))} does not fit "
                                             r"weight \(5, 4\): expected shape \(5,\)"):
            F.linear(x, w, leaf(bias))


@pytest.mark.parametrize("x_shape, w_shape", [((2, 0), (4, 0)), ((0,), (2, 0)), ((2, 3), (0, 3)), ((0, 3), (4, 3)),
                                              ((2, 0, 3), (4, 3)), ((3, 2, 0), (0, 0))])
def test_linear_with_empty_axes_matches_pytorch(x_shape, w_shape):
    """No input features (y = b), no outputs or no rows: PyTorch's values and gradients (zeros or
    empty), and finite differences wherever an input and the output have entries."""
    rng = np.random.default_rng(0)
    x, w, b = (leaf(rng.standard_normal(shape)) for shape in (x_shape, w_shape, w_shape[:1]))
    y = parity(F.linear, lambda *t: import_torch().nn.functional.linear(*t), x, w, b)
    assert y.shape == x_shape[:-1] + w_shape[:1]
    assert check_gradients(F.linear, *(leaf(a.numpy()) for a in (x, w, b)))


# ---------------------------------------------------------------- cross_entropy


@given(data=st.data(), reduction=st.sampled_from(["mean", "sum", "none"]),
       ignore_index=st.sampled_from([-100, 0]), smoothing=st.sampled_from([0.0, 0.1, 0.35]))
def test_cross_entropy_forward_and_gradient(data, reduction, ignore_index, smoothing):
    batch = data.draw(mst.shapes(max_dims=2, max_side=4))
    classes = data.draw(st.integers(2, 5))
    x = data.draw(mst.tensors(batch + (classes,)))
    t = data.draw(mst.class_targets(batch, classes, ignore_index=ignore_index))
    loss = check_forward(
        lambda x: F.cross_entropy(x, t, ignore_index=ignore_index, label_smoothing=smoothing, reduction=reduction),
        lambda x: np_cross_entropy(x, t, ignore_index, smoothing, reduction), x, **TIGHT)
    assert isinstance(loss._ctx, ops.CrossEntropy)
    check_gradients(lambda x: F.cross_entropy(x, t, ignore_index, smoothing, reduction), x)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_a_nan_logit_is_nan_unless_its_row_is_ignored(smoothing):
    x = leaf([[1.0, np.nan, 2.0], [0.5, 1.0, -1.0], [np.nan, 0.0, 0.0]])
    loss = F.cross_entropy(x, minitx.tensor([0, 2, -100]), label_smoothing=smoothing, reduction="none")
    assert np.isnan(loss.numpy()[0]) and np.isfinite(loss.numpy()[1]) and loss.numpy()[2] == 0.0
    assert np.isnan(F.cross_entropy(x, minitx.tensor([0, 2, -100]), label_smoothing=smoothing).item())
    loss.backward(np.ones(3))
    assert np.isnan(x.grad.numpy()[0]).all() and np.isfinite(x.grad.numpy()[1]).all()
    np.testing.assert_array_equal(x.grad.numpy()[2], 0.0)
    # an ignored NaN row leaves the mean of the others as it was
    mean = F.cross_entropy(x, minitx.tensor([-100, 2, -100]), label_smoothing=smoothing)
    np.testing.assert_allclose(mean.item(), loss.numpy()[1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_all_rows_ignored_is_zero_not_nan(reduction):
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)))
    loss = F.cross_entropy(x, minitx.tensor([-100, -100, -100]), reduction=reduction, label_smoothing=0.1)
    np.testing.assert_array_equal(loss.numpy(), np.zeros(loss.shape))
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))


@pytest.mark.parametrize("loss, targets", [
    (F.cross_entropy, [-100, -100]), (F.cross_entropy, [0, 0]), (F.nll_loss, [-100, -100]),
    (F.cross_entropy, np.zeros((2, 0))),  # probability targets
])
def test_losses_need_a_class_unless_there_are_no_rows(loss, targets):
    """Zero classes is no distribution, whether the rows' targets are ignored or not; with no
    rows there is nothing to score (a loss of 0)."""
    name = loss.__name__
    with pytest.raises(ValueError, match=rf"{name}: input of shape \(2, 0\) has 0 classes on its last axis; "
                                         "expected at least one"):
        loss(leaf(np.zeros((2, 0))), minitx.tensor(np.asarray(targets)))
    empty = np.zeros((0, 0)) if np.asarray(targets).dtype.kind == "f" else np.zeros(0, np.int64)
    assert loss(leaf(np.zeros((0, 0))), minitx.tensor(empty)).item() == 0.0


def test_cross_entropy_smoothing_matches_the_textbook_formula():
    x = np.array([[2.0, -1.0, 0.5], [0.0, 0.0, 3.0]])
    t, s, classes = np.array([0, 2]), 0.2, 3
    logp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    expected = np.mean([(1 - s) * -logp[r, t[r]] + s / classes * -logp[r].sum() for r in range(2)])
    assert F.cross_entropy(leaf(x), minitx.tensor(t), label_smoothing=s).item() == pytest.approx(expected)


@pytest.mark.parametrize("targets, error, message", [
    (np.array([0.0, 1.0]), ValueError, r"cross_entropy: float targets of shape \(2,\) are class probabilities and "
                                       r"need the logits' shape \(2, 3\); class indices must be an integer tensor"),
    (np.array([0, 3]), IndexError, "cross_entropy: target 3 is out of range for 3 classes"),
    (np.array([-2, 1]), IndexError, "cross_entropy: target -2 is out of range"),
    (np.array([0, 1, 2]), ValueError, r"cross_entropy: logits \(2, 3\) need targets of shape \(2,\), got \(3,\)"),
])
def test_cross_entropy_rejects_bad_targets(targets, error, message):
    with pytest.raises(error, match=message):
        F.cross_entropy(leaf(np.zeros((2, 3))), minitx.tensor(targets))


@pytest.mark.parametrize("kwargs, message", [({"reduction": "avg"}, "reduction must be"),
                                             ({"label_smoothing": 1.5}, "label_smoothing must be")])
def test_cross_entropy_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        F.cross_entropy(leaf(np.zeros((2, 3))), minitx.tensor([0, 1]), **kwargs)


# ---------------------------------------------------------------- scaled_dot_product_attention


@st.composite
def attention_problems(draw):
    """q [B,H,Lq,d], k [B,H,Lk,d], v [B,H,Lk,dv] and a mask of one of the shapes layers use."""
    b, h, lq, lk = (draw(st.integers(1, n)) for n in (2, 2, 4, 4))
    d, dv = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    q, k, v = (draw(mst.tensors(s)) for s in ((b, h, lq, d), (b, h, lk, d), (b, h, lk, dv)))
    kind = draw(st.sampled_from(["none", "key_padding", "full", "2d"]))
    batch, rows = {"none": (None, None), "key_padding": ((b, 1), 1), "full": ((b, 1), lq), "2d": ((), lq)}[kind]
    mask = None if batch is None else draw(mst.attention_masks(batch, rows, lk))
    return q, k, v, mask, draw(st.booleans())


@given(problem=attention_problems())
def test_attention_forward_and_gradients(problem):
    q, k, v, mask, causal = problem
    allowed = np.ones((q.shape[-2], k.shape[-2]), bool) if mask is None else mask
    if causal:
        allowed = allowed & causal_allowed(q.shape[-2], k.shape[-2])
    out, weights = check_forward(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal, return_weights=True),
        lambda q, k, v: np_attention(q, k, v, allowed), q, k, v, **TIGHT)
    assert isinstance(out._ctx, ops.ScaledDotProductAttention)
    allowed = np.broadcast_to(allowed, weights.shape)
    assert (weights.numpy()[~allowed] == 0).all() and (weights.numpy()[allowed] >= 0).all()
    np.testing.assert_allclose(weights.numpy().sum(-1), allowed.any(-1), rtol=1e-12)
    check_gradients(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal), q, k, v)


@pytest.mark.parametrize("lq, lk", [(3, 3), (2, 5), (1, 4), (4, 2)])
def test_attention_causal_sees_keys_up_to_i_plus_lk_minus_lq(lq, lk):
    q, k, v = random_qkv(lq * 10 + lk, lq, lk, d=3)
    out, weights = F.scaled_dot_product_attention(q, k, v, causal=True, return_weights=True)
    allowed = causal_allowed(lq, lk)
    assert (weights.numpy()[~allowed] == 0).all() and (weights.numpy()[allowed] > 0).all()
    np.testing.assert_allclose(weights.numpy().sum(-1), allowed.any(-1).astype(float), rtol=1e-12)
    assert np.isfinite(out.numpy()).all()


def test_attention_fully_masked_row_gives_zeros_and_finite_gradients():
    q, k, v = random_qkv(1, 3, 4, batch=(1,))
    mask = np.array([[[True, False, True, False], [False] * 4, [True] * 4]])
    out, weights = F.scaled_dot_product_attention(q, k, v, mask=mask, return_weights=True)
    np.testing.assert_array_equal(out.numpy()[0, 1], 0)
    np.testing.assert_array_equal(weights.numpy()[0, 1], 0)
    assert (weights.numpy() >= 0).all() and (weights.numpy()[mask.nonzero()] > 0).all()
    np.testing.assert_allclose(weights.numpy().sum(-1), [[1, 0, 1]], rtol=1e-12)
    out.sum().backward()
    for t in (q, k, v):
        assert np.isfinite(t.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[0, 1], 0)


def test_attention_nan_in_a_query_makes_its_row_nan_forward_and_backward():
    q, k, v = random_qkv(4, 3, 4, batch=(1,))
    q.data[0, 1, 0] = np.nan
    mask = np.array([[[True, True, False, True], [True, False, True, True], [False] * 4]])
    out = F.scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.isnan(out.numpy()[0, 1]).all() and np.isfinite(out.numpy()[0, 0]).all()
    np.testing.assert_array_equal(out.numpy()[0, 2], 0.0)  # sees no key: 0, as before
    out.backward(np.ones(out.shape))
    assert np.isnan(q.grad.numpy()[0, 1]).all() and np.isfinite(q.grad.numpy()[0, 0]).all()
    np.testing.assert_array_equal(q.grad.numpy()[0, 2], 0.0)


@given(lq=st.integers(1, 3), lk=st.integers(1, 4), p=st.sampled_from([0.0, 0.3, 0.7]),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_attention_dropout_drops_the_drawn_weights(lq, lk, p, seed, data):
    """out = (softmax(q k^T / sqrt(d)) * m) v, m the keep mask a seeded generator draws (as
    dropout's), for every drawn dropout_p and seed; gradients by finite differences."""
    q, k, v = random_qkv(data.draw(st.integers(0, 99)), lq, lk, d=3, dv=2, batch=(2,))

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, seed=seed)

    scores = q.numpy() @ np.swapaxes(k.numpy(), -1, -2) / np.sqrt(3)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    mask = np_keep_mask(weights.shape, p, seed) if p else 1
    np.testing.assert_allclose(attend(q, k, v).numpy(), (weights * mask) @ v.numpy(), **TIGHT)
    check_gradients(attend, q, k, v)


def test_attention_dropout_is_seeded_and_differentiable():
    q, k, v = random_qkv(2, 3, 4, dv=3, batch=(2,))

    def attend(q, k, v, seed=5):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, seed=seed)

    np.testing.assert_array_equal(attend(q, k, v).numpy(), attend(q, k, v).numpy())
    assert not np.allclose(attend(q, k, v).numpy(), F.scaled_dot_product_attention(q, k, v).numpy())
    assert not np.allclose(attend(q, k, v).numpy(), attend(q, k, v, seed=6).numpy())
    check_gradients(attend, q, k, v)


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_attention_custom_scale(scale):
    """The scale it is called with, not 1/sqrt(d), in forward and backward (d = 3 here)."""
    q, k, v = random_qkv(3, 3, 4, d=3, batch=(2,))
    mask = np.array([[True, True, False, True]])
    check_forward(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale),
                  lambda q, k, v: np_attention(q, k, v, mask, scale=scale)[0], q, k, v, **TIGHT)
    check_gradients(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale), q, k, v)


@pytest.mark.parametrize("call, error, message", [
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=np.ones((2, 2), np.int64)),
     TypeError, r"scaled_dot_product_attention: mask must be boolean .* or floating .*, got dtype int64"),
    (lambda q, k, v: ops.ScaledDotProductAttention()(q, k, v, minitx.tensor(np.ones((2, 2), np.uint8))),
     TypeError, "scaled_dot_product_attention: mask must be boolean"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=np.ones((3, 3), bool)),
     ValueError, r"mask of shape \(3, 3\) does not broadcast"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :1], v),
     ValueError, "scaled_dot_product_attention: q .* do not fit"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=1.0),
     ValueError, r"dropout_p must be in \[0, 1\)"),
])
def test_attention_rejects_bad_arguments(call, error, message):
    q = k = v = leaf(np.ones((2, 2)))
    with pytest.raises(error, match=message):
        call(q, k, v)
