"""RMSNorm, GroupNorm and BatchNorm (minitx/ops/norm.py) and their layers: each forward against a
NumPy computation written from the definition, float64 gradients by finite differences on drawn
shapes, groups, eps and modes, PyTorch parity (F.rms_norm, F.group_norm, F.batch_norm), and the
layers' running statistics against torch.nn's over several steps."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import nn, ops
from minitx.testing import check_forward, check_gradients, gradcheck, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

TIGHT = dict(rtol=1e-9, atol=1e-11)
EPS = st.floats(1e-6, 0.1)


def _tf():
    return import_torch().nn.functional


def np_standardize(a, axes, eps):
    mean = a.mean(axis=axes, keepdims=True)
    return (a - mean) / np.sqrt(((a - mean) ** 2).mean(axis=axes, keepdims=True) + eps)


def channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)), eps=EPS, data=st.data())
def test_rms_norm(x, eps, data):
    w = leaf(data.draw(mst.float_arrays(x.shape[-1:]), label="w"))

    def reference(a, v):
        return a / np.sqrt((a * a).mean(axis=-1, keepdims=True) + eps) * v

    y = check_forward(lambda t, v: F.rms_norm(t, x.shape[-1], v, eps=eps), reference, x, w, **TIGHT)
    assert isinstance(y._ctx, ops.RMSNorm)
    assert check_gradients(lambda t, v: F.rms_norm(t, x.shape[-1], v, eps=eps), x, w)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda t, v: F.rms_norm(t, x.shape[-1], v, eps=eps),
               lambda t, v: _tf().rms_norm(t, (x.shape[-1],), v, eps=eps), leaf(x.numpy()), leaf(w.numpy()))


def test_rms_norm_takes_the_dtypes_epsilon_by_default_and_names_a_wrong_shape():
    x = leaf([[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(F.rms_norm(x, 3).numpy(), 0.0)  # eps keeps 0 / 0 away
    assert F.rms_norm(x, 3)._ctx.eps == np.finfo(np.float64).eps
    with pytest.raises(ValueError, match=r"rms_norm: normalized_shape \(2, 3\) must be the last axis"):
        F.rms_norm(x, (2, 3))
    for call in (lambda: F.rms_norm(leaf(1.0), 1), lambda: ops.RMSNorm(1e-6)(leaf(1.0), leaf(1.0))):
        with pytest.raises(ValueError, match=r"rms_norm: a 0-d input has no last axis to normalize over; "
                                             r"expected at least 1 dimension, got shape \(\)"):
            call()  # as PyTorch, which refuses it too


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_rms_norm_default_epsilon_is_its_compute_dtypes_as_pytorch(dtype):
    """16-bit inputs compute in float32, so eps=None is float32's machine epsilon there (float16's
    own, 1e-3, would swamp rows of small values: 0.03 instead of 1.5 below), as in PyTorch."""
    x = minitx.tensor([[1e-3, -1e-3, 2e-3]], dtype=dtype, requires_grad=True)
    y = F.rms_norm(x, 3)
    compute = np.float32 if dtype in ("float16", "bfloat16") else np.dtype(dtype)
    assert y._ctx.eps == np.finfo(compute).eps
    want = (x.numpy().astype(np.float64) / np.sqrt(np.mean(x.numpy().astype(np.float64) ** 2) + np.finfo(compute).eps))
    np.testing.assert_allclose(y.numpy().astype(np.float64), want, rtol=1e-2)
    torch = import_torch()
    if dtype != "float64":  # (float64: the same eps; the values above already say it)
        got = torch.nn.functional.rms_norm(torch.tensor(x.numpy().astype(np.float32)).to(getattr(torch, dtype)), (3,))
        np.testing.assert_allclose(got.float().numpy(), y.numpy().astype(np.float32), rtol=1e-2)


def _quietly(fn, *inputs):
    """fn(*inputs) and its backward (dy = ones) with NumPy's warnings as errors: the output."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fn(*inputs)
        y.backward(np.ones(y.shape))
    return y


@pytest.mark.parametrize("shape", [(3, 0), (2, 3, 0), (0,), (0, 3), (0, 0)])
def test_rms_norm_of_empty_inputs_matches_pytorch_without_warnings(shape):
    """Rows of no values, or no rows: an empty output and input gradient, dw summed over no rows
    (0), without NumPy's warnings about the means of nothing."""
    x, w = leaf(np.zeros(shape)), leaf(np.arange(shape[-1]) + 1.0)
    _quietly(lambda t, v: F.rms_norm(t, shape[-1], v), x, w)
    np.testing.assert_array_equal(w.grad.numpy(), 0)
    parity(lambda t, v: F.rms_norm(t, shape[-1], v), lambda t, v: _tf().rms_norm(t, shape[-1:], v), leaf(x.numpy()),
           leaf(w.numpy()))


@st.composite
def grouped(draw):
    groups = draw(st.integers(1, 3))
    channels = groups * draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 3)), channels) + tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    return draw(mst.tensors(shape)), groups


@given(case=grouped(), eps=EPS, data=st.data())
def test_group_norm(case, eps, data):
    x, groups = case
    w, b = (leaf(data.draw(mst.float_arrays(x.shape[1:2]), label=name)) for name in ("w", "b"))
    if x.size // groups == 1:  # one value per group over the batch (a group of one value in each of
        # several samples standardizes to 0, as in PyTorch)
        with pytest.raises(ValueError, match="group_norm: expected more than one value per group over the batch"):
            F.group_norm(x, groups, w, b, eps=eps)
        return

    def reference(a, v, c):
        standardized = np_standardize(a.reshape(a.shape[0], groups, -1), 2, eps).reshape(a.shape)
        return standardized * channel(v, a.ndim) + channel(c, a.ndim)

    y = check_forward(lambda t, v, c: F.group_norm(t, groups, v, c, eps=eps), reference, x, w, b, **TIGHT)
    assert isinstance(y._ctx, ops.GroupNorm)
    assert check_gradients(lambda t, v, c: F.group_norm(t, groups, v, c, eps=eps), x, w, b)
    torch = torch_in_example()
    if torch is not None:
        # PyTorch's dw is (sum(dy * x) - sum(dy) * mean) * rstd: terms of size |x| cancel in float64, and
        # rstd reaches 1 / sqrt(eps) (a group of equal values, where minitx's dw is exactly 0)
        rounding = np.finfo(np.float64).eps * float(np.abs(x.numpy()).max(initial=1.0)) * x.size / np.sqrt(eps)
        parity(lambda t, v, c: F.group_norm(t, groups, v, c, eps=eps),
               lambda t, v, c: _tf().group_norm(t, groups, v, c, eps=eps), *(leaf(a.numpy()) for a in (x, w, b)),
               atol=max(1e-12, rounding))


@pytest.mark.parametrize("training", [True, False])
@given(x=mst.tensors(mst.shapes(min_dims=2, max_dims=4, min_side=2, max_side=3)), eps=EPS,
       momentum=st.floats(0.0, 1.0), data=st.data())
def test_batch_norm(x, eps, momentum, training, data):
    """While training: each channel standardized over the batch and the positions, and the
    running statistics moved toward the batch's (the unbiased variance); in eval mode, the
    running statistics used as they are."""
    w, b = (leaf(data.draw(mst.float_arrays(x.shape[1:2]), label=name)) for name in ("w", "b"))
    mean0 = data.draw(mst.float_arrays(x.shape[1:2]), label="running_mean")
    var0 = data.draw(mst.float_arrays(x.shape[1:2], min_value=0.1, max_value=3.0), label="running_var")
    axes = (0,) + tuple(range(2, x.ndim))

    def reference(a, v, c):
        if training:
            return np_standardize(a, axes, eps) * channel(v, a.ndim) + channel(c, a.ndim)
        return (a - channel(mean0, a.ndim)) / np.sqrt(channel(var0, a.ndim) + eps) * channel(v, a.ndim) \
            + channel(c, a.ndim)

    def bn(t, v, c):
        return F.batch_norm(t, minitx.tensor(mean0.copy()), minitx.tensor(var0.copy()), v, c, training=training,
                            momentum=momentum, eps=eps)

    y = check_forward(bn, reference, x, w, b, **TIGHT)
    assert isinstance(y._ctx, ops.BatchNorm) == training
    assert check_gradients(bn, x, w, b)
    running_mean, running_var = minitx.tensor(mean0.copy()), minitx.tensor(var0.copy())
    F.batch_norm(x, running_mean, running_var, w, b, training=training, momentum=momentum, eps=eps)
    if training:
        n = x.size // x.shape[1]
        batch_var = x.numpy().var(axis=axes) * n / (n - 1)
        np.testing.assert_allclose(running_mean.numpy(), (1 - momentum) * mean0 + momentum * x.numpy().mean(axis=axes),
                                   **TIGHT)
        np.testing.assert_allclose(running_var.numpy(), (1 - momentum) * var0 + momentum * batch_var, **TIGHT)
    else:
        np.testing.assert_array_equal(running_mean.numpy(), mean0)
    torch = torch_in_example()
    if torch is not None:
        # atol 1e-10: a constant channel normalizes to rounding noise (1e-13), and dw sums it: minitx 0, PyTorch 1e-12
        parity(bn, lambda t, v, c: _tf().batch_norm(t, torch.tensor(mean0), torch.tensor(var0), v, c, training=training,
                                                    momentum=momentum, eps=eps), *(leaf(a.numpy()) for a in (x, w, b)),
               atol=1e-10)


@pytest.mark.parametrize("shape, groups", [((0, 4, 3), 2), ((0, 4), 4), ((2, 4, 0), 2), ((2, 0, 3), 1), ((0, 2, 0), 2)])
def test_group_norm_of_empty_inputs(shape, groups):
    """No samples, channels or positions: an empty output and input gradient, dw and db summed over
    nothing (0), without NumPy's warnings; as PyTorch, but for dw where the groups hold no values
    (PyTorch: NaN, from the standardized values' NaN statistics)."""
    x, w, b = leaf(np.zeros(shape)), leaf(np.arange(shape[1]) + 1.0), leaf(np.arange(shape[1]) - 1.0)
    assert _quietly(lambda *t: F.group_norm(*t[:1], groups, *t[1:]), x, w, b).shape == shape
    np.testing.assert_array_equal(w.grad.numpy(), 0)
    np.testing.assert_array_equal(b.grad.numpy(), 0)
    parity(lambda t, v, c: F.group_norm(t, groups, v, c), lambda t, v, c: _tf().group_norm(t, groups, v, c),
           leaf(x.numpy()), leaf(w.numpy(), requires_grad=False), leaf(b.numpy()))


def test_batch_norm_refuses_one_value_per_channel_and_eval_without_statistics():
    with pytest.raises(ValueError, match="batch_norm: training needs more than one value per channel"):
        F.batch_norm(leaf(np.ones((1, 3))), training=True)
    with pytest.raises(ValueError, match="batch_norm: outside training it needs running_mean and running_var"):
        F.batch_norm(leaf(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"group_norm: the input's channels \(axis 1 of \(2, 3\)\) must split into 2"):
        F.group_norm(leaf(np.ones((2, 3))), 2)


# ---------------------------------------------------------------- the layers


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                         ("BatchNorm2d", (4, 3, 2, 5)), ("BatchNorm3d", (2, 3, 2, 3, 2))])
def test_batch_norm_layers_follow_torch_over_training_steps_then_in_eval(name, shape):
    torch = import_torch()
    rng = np.random.default_rng(0)
    ours, theirs = getattr(nn, name)(3, momentum=0.2), getattr(torch.nn, name)(3, momentum=0.2)
    counter = ours.num_batches_tracked.data  # counted in place (a CUDA graph replays into the buffer it saw)
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
        y = ours(minitx.tensor(x))
        np.testing.assert_allclose(y.numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-5, atol=1e-6)
    assert int(ours.num_batches_tracked.numpy()) == int(theirs.num_batches_tracked) == 3
    assert ours.num_batches_tracked.data is counter
    ours.eval(), theirs.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(ours(minitx.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert int(ours.num_batches_tracked.numpy()) == int(theirs.num_batches_tracked) == 3  # eval counts nothing
    assert set(ours.state_dict()) == set(theirs.state_dict())


@pytest.mark.parametrize("name, shape, affine", [("InstanceNorm1d", (4, 3, 5), True), ("InstanceNorm1d", (3, 5), False),
                                                 ("InstanceNorm2d", (4, 3, 2, 5), True),
                                                 ("InstanceNorm3d", (2, 3, 2, 3, 2), False)])
def test_instance_norm_layers_keep_running_statistics_as_torch(name, shape, affine):
    """track_running_stats=True: three training steps (the buffers move, num_batches_tracked stays 0,
    as PyTorch's), then eval mode with the buffers, outputs and gradients as PyTorch's; the same
    state_dict keys. (3, 5) is one unbatched sample [C, L]."""
    torch = import_torch()
    rng = np.random.default_rng(2)
    ours = getattr(nn, name)(3, momentum=0.2, affine=affine, track_running_stats=True, dtype="float64")
    theirs = getattr(torch.nn, name)(3, momentum=0.2, affine=affine, track_running_stats=True, dtype=torch.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    for training in (True, True, True, False):
        ours.train(training), theirs.train(training)
        x = rng.standard_normal(shape) * 2 + 1
        ours_x, theirs_x = minitx.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, their_y = ours(ours_x), theirs(theirs_x)
        np.testing.assert_allclose(y.numpy(), their_y.detach().numpy(), rtol=1e-10, atol=1e-12)
        dy = rng.standard_normal(shape)
        y.backward(minitx.tensor(dy)), their_y.backward(torch.tensor(dy))
        np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-9, atol=1e-12)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(np.asarray(ours.state_dict()[key]), value.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=key)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert int(ours.num_batches_tracked.numpy()) == 0 and not ours.running_mean.requires_grad
    frozen = getattr(nn, name)(3, momentum=None, track_running_stats=True)  # PyTorch's momentum 0: no update
    frozen(minitx.randn(*shape))
    assert frozen.running_mean.tolist() == [0.0] * 3 and frozen.running_var.tolist() == [1.0] * 3


def test_group_norm_and_rms_norm_layers_match_torch():
    torch = import_torch()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    for eps in ({}, {"eps": 0.5}):  # a large eps changes the values: the layer must pass it on
        np.testing.assert_allclose(nn.GroupNorm(2, 4, **eps)(minitx.tensor(x)).numpy(),
                                   torch.nn.GroupNorm(2, 4, **eps)(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(nn.RMSNorm(3, **eps)(minitx.tensor(x)).numpy(),
                                   torch.nn.RMSNorm(3, **eps)(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert nn.GroupNorm(2, 4, affine=False).weight is None and nn.RMSNorm(3, elementwise_affine=False).weight is None
    with pytest.raises(ValueError, match="GroupNorm: 5 channels do not split into 2 groups"):
        nn.GroupNorm(2, 5)
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected an input of 4 dimensions, got shape \(2, 3\)"):
        nn.BatchNorm2d(3)(minitx.tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected an input of 5 dimensions, got shape \(2, 3, 4, 4\)"):
        nn.BatchNorm3d(3)(minitx.ones(2, 3, 4, 4))


def test_batch_norm_without_running_statistics_uses_the_batch_in_eval_too():
    layer = nn.BatchNorm1d(2, track_running_stats=False).eval()
    x = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    np.testing.assert_allclose(layer(minitx.tensor(x)).numpy(), [[-1, -1], [1, 1]], atol=1e-3)
    assert "running_mean" not in layer.state_dict()


# ---------------------------------------------------------------- normalize, cosine_similarity
@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4), away_from=(0.0,)), data=st.data())
def test_normalize(x, data):
    """x / max(||x||_p, eps) along an axis; eps drawn around the norms, so both sides of the max occur."""
    p = data.draw(st.sampled_from([2.0, 1.0, 3.0, np.inf]), label="p")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    eps = data.draw(st.sampled_from([1e-12, 0.5, 3.0]), label="eps")

    def reference(a):
        norms = np.linalg.vector_norm(a, ord=p, axis=axis, keepdims=True)
        return a / np.maximum(norms, eps)

    fn = lambda t: F.normalize(t, p, axis, eps)  # noqa: E731
    check_forward(fn, reference, x, **TIGHT)
    norms = np.linalg.vector_norm(x.numpy(), ord=p, axis=axis)
    if np.abs(norms - eps).min() > 1e-3 and (p != np.inf or _distinct_magnitudes(x.numpy(), axis)):
        assert check_gradients(fn, x)  # (not at the max's kink, nor at a tie of the largest |x|)
    if np.abs(norms - eps).min() > 1e-3:  # (a norm exactly eps: each library's own side of the kink)
        parity(fn, lambda t: _tf().normalize(t, p, axis, eps), leaf(x.numpy()))


def _distinct_magnitudes(a, axis):
    ordered = np.sort(np.abs(a), axis=axis)
    return bool((np.diff(ordered, axis=axis) > 1e-3).all())


@given(shapes=mst.broadcastable_shapes(2, min_dims=1, max_dims=3, max_side=4), data=st.data())
def test_cosine_similarity(shapes, data):
    x1, x2 = (data.draw(mst.tensors(s, away_from=(0.0,)), label=f"x{k}") for k, s in enumerate(shapes, 1))
    ndim = max(len(s) for s in shapes)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")

    def reference(a, b):
        a, b = np.broadcast_arrays(a, b)
        scaled = [v / np.maximum(np.sqrt((v * v).sum(axis=axis, keepdims=True)), 1e-8) for v in (a, b)]
        return (scaled[0] * scaled[1]).sum(axis=axis)

    fn = lambda u, v: F.cosine_similarity(u, v, axis)  # noqa: E731
    check_forward(fn, reference, x1, x2, **TIGHT)
    assert check_gradients(fn, x1, x2)
    parity(fn, lambda u, v: _tf().cosine_similarity(u, v, axis), leaf(x1.numpy()), leaf(x2.numpy()))


def test_normalize_and_cosine_similarity_of_zeros_match_pytorch():
    """A slice of zeros is divided by eps (it stays zeros): no 0 / 0. Below eps, PyTorch's
    cosine_similarity clamps the norm in place, unrecorded, so its gradient still flows through
    the norm; minitx's is the gradient of what it computes, as finite differences find it."""
    x = leaf(np.array([[0.0, 0.0], [3.0, 4.0], [1e-9, 0.0]]))
    y = leaf(np.array([[1.0, 2.0], [0.0, 0.0], [1e-9, 0.0]]))
    # (gradients of 1e11 beside PyTorch's rounding noise of 6e-8 where minitx's is exactly 0)
    parity(lambda t: F.normalize(t), lambda t: _tf().normalize(t), leaf(x.numpy()), atol=1e-6)
    parity(lambda u, v: F.cosine_similarity(u, v), lambda u, v: _tf().cosine_similarity(u, v),
           leaf(x.numpy()[:2]), leaf(y.numpy()[:2]), atol=1e-6)
    theirs = _tf().cosine_similarity(*(import_torch().from_numpy(t.numpy()) for t in (x, y)))
    np.testing.assert_allclose(F.cosine_similarity(x, y).numpy(), theirs.numpy(), rtol=1e-12)
    small = [leaf(np.array([[0.1, 0.2], [0.3, 0.5]])), leaf(np.array([[0.3, -0.1], [0.2, 0.2]]))]  # norms < eps = 1
    assert gradcheck(lambda u, v: F.cosine_similarity(u, v, eps=1.0), *small)
    with pytest.raises(ValueError, match=r"cosine_similarity: shapes \(3, 2\) and \(3,\) do not broadcast"):
        F.cosine_similarity(x, leaf(np.ones(3)))
    assert F.cosine_similarity(x, y).tolist() == pytest.approx([0.0, 0.0, 0.01])


@given(x=mst.tensors(mst.shapes(min_dims=3, max_dims=4, min_side=2, max_side=3)), data=st.data())
def test_instance_norm_and_pairwise_distance(x, data):
    weight = data.draw(mst.tensors((x.shape[1],)), label="weight")
    check_forward(lambda t, w: F.instance_norm(t, w), lambda a, w: w.reshape((-1,) + (1,) * (a.ndim - 2)) * (
        a - a.mean(axis=tuple(range(2, a.ndim)), keepdims=True)) / np.sqrt(
        a.var(axis=tuple(range(2, a.ndim)), keepdims=True) + 1e-5), x, weight, **TIGHT)
    assert check_gradients(lambda t, w: F.instance_norm(t, w), x, weight)
    parity(lambda t, w: F.instance_norm(t, w), lambda t, w: _tf().instance_norm(t, weight=w), leaf(x.numpy()),
           leaf(weight.numpy()), atol=1e-9)  # (a constant channel: PyTorch's gradient is rounding noise, minitx's 0)
    apart = data.draw(mst.float_arrays(x.shape, away_from=(0.0,), margin=0.2), label="y - x")  # (not at |x - y| ~ eps)
    y = leaf(x.numpy() + apart)
    assert check_gradients(F.pairwise_distance, x, y)
    parity(F.pairwise_distance, _tf().pairwise_distance, leaf(x.numpy()), leaf(y.numpy()))


@given(x=mst.tensors(mst.shapes(min_dims=3, max_dims=4, min_side=2, max_side=3)), data=st.data(),
       use_input_stats=st.booleans(), momentum=st.sampled_from([0.0, 0.1, 1.0]))
def test_instance_norm_with_running_statistics(x, data, use_input_stats, momentum):
    """With the input's statistics the running ones move toward their mean over the batch (m_nc,
    unbiased v_nc averaged over n); without them, the running ones standardize each channel. Forward
    against NumPy, gradients, and PyTorch's output and buffers."""
    w, b = (leaf(data.draw(mst.float_arrays(x.shape[1:2]), label=name)) for name in ("w", "b"))
    mean0 = data.draw(mst.float_arrays(x.shape[1:2]), label="running_mean")
    var0 = data.draw(mst.float_arrays(x.shape[1:2], min_value=0.1, max_value=3.0), label="running_var")
    positions, eps = tuple(range(2, x.ndim)), 1e-5

    def reference(a, v, c):
        if use_input_stats:
            return np_standardize(a, positions, eps) * channel(v, a.ndim) + channel(c, a.ndim)
        return (a - channel(mean0, a.ndim)) / np.sqrt(channel(var0, a.ndim) + eps) * channel(v, a.ndim) \
            + channel(c, a.ndim)

    def inorm(t, v, c, running=None):
        running_mean, running_var = running or (minitx.tensor(mean0.copy()), minitx.tensor(var0.copy()))
        return F.instance_norm(t, v, c, eps, running_mean=running_mean, running_var=running_var,
                               use_input_stats=use_input_stats, momentum=momentum)

    check_forward(inorm, reference, x, w, b, **TIGHT)
    assert check_gradients(inorm, x, w, b)
    running = minitx.tensor(mean0.copy()), minitx.tensor(var0.copy())
    inorm(x, w, b, running)
    a = x.numpy()
    if use_input_stats:
        n = math.prod(x.shape[2:])
        np.testing.assert_allclose(running[0].numpy(), (1 - momentum) * mean0 + momentum * a.mean(axis=positions).mean(0),
                                   **TIGHT)
        np.testing.assert_allclose(running[1].numpy(), (1 - momentum) * var0 + momentum * (
            a.var(axis=positions) * n / (n - 1)).mean(0), **TIGHT)
    else:
        np.testing.assert_array_equal(running[0].numpy(), mean0)
        np.testing.assert_array_equal(running[1].numpy(), var0)
    torch = torch_in_example()
    if torch is not None:
        theirs = torch.tensor(mean0), torch.tensor(var0)
        parity(inorm, lambda t, v, c: _tf().instance_norm(t, *theirs, v, c, use_input_stats, momentum, eps),
               *(leaf(t.numpy()) for t in (x, w, b)), atol=1e-9)  # (a constant channel: as above)
        # (parity ran each once: the buffers after one step each)
        running = minitx.tensor(mean0.copy()), minitx.tensor(var0.copy())
        inorm(leaf(a), w, b, running)
        for ours, other in zip(running, theirs):
            np.testing.assert_allclose(ours.numpy(), other.numpy(), rtol=1e-10, atol=1e-12)


def test_instance_norm_refuses_missing_or_misshapen_running_statistics_by_name():
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="instance_norm: with use_input_stats=False it needs running_mean and "
                                         "running_var"):
        F.instance_norm(x, use_input_stats=False)
    with pytest.raises(TypeError, match=r"instance_norm: eps must be a number, got Tensor; PyTorch's "
                                        r"instance_norm\(x, running_mean, running_var, weight, bias, ...\) is written"):
        F.instance_norm(x, None, None, leaf(np.ones(3)))
    with pytest.raises(ValueError, match=r"instance_norm: running_var has shape \(2,\), expected \(3,\)"):
        F.instance_norm(x, running_mean=leaf(np.zeros(3)), running_var=leaf(np.ones(2)))
    # one position: no statistics of the input's, but the running ones do (PyTorch's too)
    y = F.instance_norm(leaf(np.ones((2, 3, 1))), running_mean=leaf(np.zeros(3)), running_var=leaf(np.ones(3)),
                        use_input_stats=False)
    np.testing.assert_allclose(y.numpy(), 1 / np.sqrt(1 + 1e-5))


# ---------------------------------------------------------------- cdist


def _cdist_reference(a, b, p):
    """Each pair of rows by a Python loop, the p-norm of the difference scaled by its largest entry m,
    m (sum (|d| / m)^p)^(1/p), so that no power of a tiny difference underflows (as the op's Norm)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    out = np.empty(batch + (a.shape[-2], b.shape[-2]))
    for index in np.ndindex(*out.shape):
        d = np.abs(a[index[:-1]] - b[index[:-2] + (index[-1],)])
        m = d.max(initial=0)
        out[index] = np.count_nonzero(d) if p == 0 else m if p == np.inf or m == 0 else m * ((d / m) ** p).sum() ** (1 / p)
    return out


@given(data=st.data())
def test_cdist_forward_gradients_and_pytorch(data):
    batch = data.draw(mst.shapes(max_dims=1, max_side=2), label="batch")
    d = data.draw(st.integers(1, 3), label="d")
    x1 = data.draw(mst.tensors(batch + (data.draw(st.integers(1, 3)), d)), label="x1")
    x2 = data.draw(mst.tensors(data.draw(st.sampled_from([batch, ()])) + (data.draw(st.integers(1, 3)), d)), label="x2")
    p = data.draw(st.sampled_from([0.0, 1.0, 2.0, 3.0, np.inf]), label="p")
    y = check_forward(lambda a, b: F.cdist(a, b, p), lambda a, b: _cdist_reference(a, b, p), x1, x2, rtol=1e-12)
    assert isinstance(y._ctx, ops.Cdist)
    gaps = np.abs(x1.numpy()[..., :, None, :] - x2.numpy()[..., None, :, :])
    if p in (1.0, np.inf) or gaps.min() < 1e-3:  # kinks of |d| and max (and the norm at 0): away from them
        return
    assert check_gradients(lambda a, b: F.cdist(a, b, p), x1, x2)
    torch = torch_in_example()
    if torch is not None:
        parity(lambda a, b: F.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p), leaf(x1.numpy()), leaf(x2.numpy()))


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, np.inf])
def test_cdist_gradient_where_two_rows_coincide_is_zero_as_pytorch(p):
    """y = 0 where x1's row equals x2's: the norm's 0 / 0 is taken as 0 (PyTorch's), never NaN."""
    x1, x2 = leaf([[1.0, 2.0], [0.5, -1.0]]), leaf([[1.0, 2.0], [3.0, 0.5], [0.5, -1.0]])
    y = parity(lambda a, b: F.cdist(a, b, p), lambda a, b: import_torch().cdist(a, b, p), x1, x2)
    assert y.numpy()[0, 0] == 0.0 and np.isfinite(x1.grad.numpy()).all() and np.isfinite(x2.grad.numpy()).all()


@pytest.mark.parametrize("p", [2.0, 3.0, 0.5])
def test_cdist_over_one_feature_keeps_a_tiny_difference(p):
    """Over one feature the distance is |a - b| itself (Norm over one entry), its gradient sign(a - b) dy, down
    to 4.4e-305; PyTorch's sqrt((a - b)^2) is 0 there, and so its gradient (a departure, docs/ops.md)."""
    a, b = leaf([[0.0]]), leaf([[4.3738e-305]])
    d = F.cdist(a, b, p)
    np.testing.assert_array_equal(d.numpy(), [[4.3738e-305]])
    d.backward(np.array([[0.5]]))
    np.testing.assert_array_equal(a.grad.numpy(), [[-0.5]])
    np.testing.assert_array_equal(b.grad.numpy(), [[0.5]])


def test_cdist_errors_name_the_op():
    with pytest.raises(ValueError, match=r"cdist: needs x1 \[..., P, D\] and x2 \[..., M, D\] with one D"):
        F.cdist(leaf(np.zeros((2, 3))), leaf(np.zeros((2, 4))))
    with pytest.raises(ValueError, match="cdist: needs x1"):
        F.cdist(leaf(np.zeros(3)), leaf(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="cdist: p must be a number >= 0, got -1"):
        F.cdist(leaf(np.zeros((1, 3))), leaf(np.zeros((2, 3))), p=-1)


# ---------------------------------------------------------------- pdist


@given(data=st.data())
def test_pdist_forward_gradients_and_pytorch(data):
    """Every pair i < j of rows, in the upper triangle's row-major order, by a Python loop."""
    x = data.draw(mst.tensors((data.draw(st.integers(0, 5)), data.draw(st.integers(0, 3)))), label="x")
    p = data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, np.inf]), label="p")
    a = x.numpy()
    pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]

    def reference(a):
        return np.array([_cdist_reference(a[i][None], a[j][None], p)[0, 0] for i, j in pairs]).reshape(len(pairs))

    y = check_forward(lambda t: F.pdist(t, p), reference, x, rtol=1e-12)
    assert isinstance(y._ctx, ops.Pdist) and y.shape == (len(a) * (len(a) - 1) // 2,)
    gaps = np.abs(np.array([a[i] - a[j] for i, j in pairs]))
    if p in (0.5, 2.0, 3.0) and (not gaps.size or gaps.min() > 1e-3):  # the kinks of |d| and max: away from them
        assert check_gradients(lambda t: F.pdist(t, p), x)
    # (p = inf: ties for the largest |d| share dy here, each takes all of it in PyTorch's, as cdist's;
    # no rows of some entries: PyTorch's backward crashes; a difference below 1e-100, whose powers PyTorch's
    # underflow, where minitx's Norm keeps it: a departure, docs/ops.md)
    tiny = ((gaps > 0) & (gaps < 1e-100)).any()
    if p != np.inf and (len(a) or not a.shape[1]) and not tiny:
        parity(lambda t: F.pdist(t, p), lambda t: _tf().pdist(t, p), leaf(a))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, np.inf])
def test_pdist_gradient_where_two_rows_are_equal_is_zero_as_pytorch(p):
    """y = 0 for the equal rows 0 and 2: their difference gets no gradient, never NaN, as PyTorch's."""
    x = leaf([[1.0, 2.0], [0.5, -1.0], [1.0, 2.0], [3.0, 0.5]])
    y = parity(lambda t: F.pdist(t, p), lambda t: _tf().pdist(t, p), x)
    assert y.numpy()[1] == 0.0 and np.isfinite(x.grad.numpy()).all()


def test_pdist_errors_name_the_op():
    with pytest.raises(ValueError, match=r"pdist: x must be 2-D \[N, D\] \(N rows of D entries\), got shape \(3,\)"):
        F.pdist(leaf(np.zeros(3)))
    with pytest.raises(ValueError, match="pdist: p must be a number >= 0, got -1"):
        F.pdist(leaf(np.zeros((2, 3))), p=-1)


# ---------------------------------------------------------------- local response norm


@given(x=mst.tensors(mst.shapes(min_dims=3, max_dims=4, min_side=1, max_side=4)), size=st.integers(1, 6),
       alpha=st.floats(0.01, 2.0), beta=st.floats(0.1, 1.5), k=st.floats(0.5, 3.0))
def test_local_response_norm(x, size, alpha, beta, k):
    """Each channel divided by (k + alpha / size * the sum of squares over channels c - size // 2 ..
    c + (size - 1) // 2 that exist)^beta, by a loop over the channels; gradients; PyTorch parity."""
    def reference(a):
        out = np.empty_like(a)
        for c in range(a.shape[1]):
            near = a[:, max(0, c - size // 2):c + (size - 1) // 2 + 1]
            out[:, c] = a[:, c] / (k + alpha / size * (near ** 2).sum(axis=1)) ** beta
        return out

    fn = lambda t: F.local_response_norm(t, size, alpha, beta, k)  # noqa: E731
    check_forward(fn, reference, x, rtol=1e-12)
    assert check_gradients(fn, x)
    parity(fn, lambda t: _tf().local_response_norm(t, size, alpha, beta, k), leaf(x.numpy()))


def test_local_response_norm_layer_edges_and_errors():
    torch = import_torch()
    x = leaf(np.random.default_rng(5).standard_normal((2, 6, 3, 2)))
    ours, theirs = nn.LocalResponseNorm(3, 0.5, 0.5, 2.0), torch.nn.LocalResponseNorm(3, 0.5, 0.5, 2.0)
    assert repr(ours) == repr(theirs)
    parity(ours, theirs, x)
    assert F.local_response_norm(minitx.zeros(2, 0, 3), 2).shape == (2, 0, 3)  # no channels, as PyTorch's
    with pytest.raises(ValueError, match=r"local_response_norm: x must be \[N, C, \*\] with at least 3 axes, got "
                                         r"shape \(2, 3\)"):
        F.local_response_norm(minitx.ones(2, 3), 2)
    with pytest.raises(ValueError, match="local_response_norm: size must be an int >= 1, got 0"):
        F.local_response_norm(minitx.ones(1, 3, 1), 0)
