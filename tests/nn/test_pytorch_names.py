"""The modules and names a PyTorch user reaches for (issue 26 item 4, a first part): each module
against PyTorch's, forward and gradients in float64, and the grad-mode and top-level names."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()  # skipped without PyTorch, an error in CI (where it is installed)


def _both(module, torch_module, *arrays, targets=None):
    """(ours, theirs): output and the first input's gradient of each module on the same data."""
    ours_in = [minitx.tensor(a, dtype="float64", requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    extra = () if targets is None else (targets[0],)
    extra_t = () if targets is None else (targets[1],)
    ours, theirs = module(*ours_in, *extra), torch_module(*theirs_in, *extra_t)
    dy = np.random.default_rng(0).standard_normal(ours.shape)
    ours.backward(dy)
    theirs.backward(torch.tensor(dy))
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours_in[0].grad.numpy(), theirs_in[0].grad.numpy(), rtol=1e-10, atol=1e-12)


X = np.random.default_rng(1).standard_normal((3, 4, 5))


@pytest.mark.parametrize("ours, theirs", [
    (nn.SiLU(), torch.nn.SiLU()), (nn.Tanh(), torch.nn.Tanh()), (nn.Sigmoid(), torch.nn.Sigmoid()),
    (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)), (nn.Identity(), torch.nn.Identity()),
    (nn.Flatten(), torch.nn.Flatten()), (nn.Flatten(0, 1), torch.nn.Flatten(0, 1)),
    (nn.Unflatten(2, (5, 1)), torch.nn.Unflatten(2, (5, 1))), (nn.Unflatten(1, (2, 2)), torch.nn.Unflatten(1, (2, 2))),
    (nn.Flatten(1, 1), torch.nn.Flatten(1, 1)), (nn.Flatten(-2), torch.nn.Flatten(-2)),
    (nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2)),
    (nn.Upsample(size=7, mode="linear", align_corners=True), torch.nn.Upsample(size=7, mode="linear", align_corners=True)),
    (nn.Upsample(scale_factor=0.6, mode="area"), torch.nn.Upsample(scale_factor=0.6, mode="area")),
    (nn.UpsamplingNearest2d(scale_factor=2), torch.nn.UpsamplingNearest2d(scale_factor=2)),
    (nn.UpsamplingNearest2d(size=(3, 7)), torch.nn.UpsamplingNearest2d(size=(3, 7))),
    (nn.UpsamplingBilinear2d(size=(7, 4)), torch.nn.UpsamplingBilinear2d(size=(7, 4))),
    (nn.UpsamplingBilinear2d(scale_factor=1.5), torch.nn.UpsamplingBilinear2d(scale_factor=1.5)),
    (nn.LeakyReLU(0.2), torch.nn.LeakyReLU(0.2)), (nn.ELU(0.5), torch.nn.ELU(0.5)), (nn.CELU(0.5), torch.nn.CELU(0.5)),
    (nn.SELU(), torch.nn.SELU()), (nn.ReLU6(), torch.nn.ReLU6()), (nn.Hardtanh(-0.5, 0.5), torch.nn.Hardtanh(-0.5, 0.5)),
    (nn.Mish(), torch.nn.Mish()), (nn.Threshold(0.1, 20.0), torch.nn.Threshold(0.1, 20.0)),
    (nn.Softplus(2.0, 1.0), torch.nn.Softplus(2.0, 1.0)), (nn.LogSigmoid(), torch.nn.LogSigmoid()),
    (nn.Softsign(), torch.nn.Softsign()), (nn.GLU(1), torch.nn.GLU(1)), (nn.LogSoftmax(1), torch.nn.LogSoftmax(1)),
    (nn.Softmin(-1), torch.nn.Softmin(-1)), (nn.PReLU(4, dtype="float64"), torch.nn.PReLU(4, dtype=torch.float64)),
    (nn.Hardshrink(0.3), torch.nn.Hardshrink(0.3)), (nn.Softshrink(0.3), torch.nn.Softshrink(0.3)),
    (nn.Tanhshrink(), torch.nn.Tanhshrink()), (nn.RReLU(0.1, 0.3).eval(), torch.nn.RReLU(0.1, 0.3).eval()),
    (nn.Softmax2d(), torch.nn.Softmax2d()),
], ids=lambda m: repr(m))
def test_layers_match_pytorch(ours, theirs):
    two_d = (nn.UpsamplingNearest2d, nn.UpsamplingBilinear2d)  # ([N, C, H, W] layers)
    _both(ours, theirs, X[:, :, :, None] * X[:, :, None] if isinstance(ours, two_d) else
          X if not isinstance(ours, nn.GLU) else X[:, :2])  # (GLU halves axis 1)
    if type(ours).__name__ in ACTIVATION_LAYERS:
        assert repr(ours) == repr(theirs)


ACTIVATION_LAYERS = {"LeakyReLU", "ELU", "CELU", "SELU", "ReLU6", "Hardtanh", "Mish", "Threshold", "Softplus",
                     "LogSigmoid", "Softsign", "GLU", "LogSoftmax", "Softmin", "PReLU", "Hardsigmoid", "Hardswish",
                     "Hardshrink", "Softshrink", "Tanhshrink", "RReLU", "Softmax2d"}


@pytest.mark.parametrize("ours, theirs", [(nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
                                          (nn.Hardswish(), torch.nn.Hardswish())], ids=lambda m: repr(m))
def test_hard_activation_layers_match_pytorch(ours, theirs):
    """(PyTorch's CPU kernels take 1/6 in float32 for every dtype: tests/ops/test_activation.py.)"""
    x = minitx.tensor(X * 4, dtype="float64")
    np.testing.assert_allclose(ours(x).numpy(), theirs(torch.from_numpy(X * 4)).numpy(), rtol=1e-7)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_pytorch(reduction):
    rng = np.random.default_rng(2)
    logits, classes = rng.standard_normal((6, 4)), rng.integers(0, 4, 6)
    classes[1] = -100
    _both(nn.CrossEntropyLoss(reduction=reduction, label_smoothing=0.1),
          torch.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=0.1), logits,
          targets=(minitx.tensor(classes), torch.tensor(classes)))
    log_probs = np.log(np.random.default_rng(3).dirichlet(np.ones(4), 6))
    _both(nn.NLLLoss(reduction=reduction), torch.nn.NLLLoss(reduction=reduction), log_probs,
          targets=(minitx.tensor(classes), torch.tensor(classes)))
    _both(nn.MSELoss(reduction=reduction), torch.nn.MSELoss(reduction=reduction), logits, rng.standard_normal((6, 4)))
    weight = rng.uniform(0.2, 2.0, 4)  # each class its own weight, which moves the weighted mean
    _both(nn.NLLLoss(minitx.tensor(weight), reduction=reduction),
          torch.nn.NLLLoss(torch.tensor(weight), reduction=reduction), log_probs,
          targets=(minitx.tensor(classes), torch.tensor(classes)))
    labels = (rng.random((6, 4)) < 0.5).astype(np.float64)
    _both(nn.BCEWithLogitsLoss(reduction=reduction), torch.nn.BCEWithLogitsLoss(reduction=reduction), logits,
          targets=(minitx.tensor(labels, dtype="float64"), torch.tensor(labels)))
    _both(nn.BCEWithLogitsLoss(reduction=reduction, pos_weight=minitx.tensor(weight)),
          torch.nn.BCEWithLogitsLoss(reduction=reduction, pos_weight=torch.tensor(weight)), logits,
          targets=(minitx.tensor(labels, dtype="float64"), torch.tensor(labels)))
    other = rng.standard_normal((6, 4))
    for ours, theirs in ((nn.L1Loss(reduction=reduction), torch.nn.L1Loss(reduction=reduction)),
                         (nn.SmoothL1Loss(reduction=reduction, beta=0.5), torch.nn.SmoothL1Loss(reduction=reduction,
                                                                                                beta=0.5)),
                         (nn.HuberLoss(reduction=reduction, delta=0.5), torch.nn.HuberLoss(reduction=reduction,
                                                                                            delta=0.5))):
        _both(ours, theirs, logits, other)
    probs = 1 / (1 + np.exp(-logits))
    _both(nn.BCELoss(minitx.tensor(weight), reduction=reduction), torch.nn.BCELoss(torch.tensor(weight),
                                                                                 reduction=reduction), probs,
          targets=(minitx.tensor(labels, dtype="float64"), torch.tensor(labels)))
    target_probs = np.random.default_rng(4).dirichlet(np.ones(4), 6)
    for kl in ("batchmean", reduction):
        _both(nn.KLDivLoss(reduction=kl), torch.nn.KLDivLoss(reduction=kl), log_probs,
              targets=(minitx.tensor(target_probs, dtype="float64"), torch.tensor(target_probs)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_and_likelihood_loss_modules_match_pytorch(reduction):
    """Each module with options off their defaults, against PyTorch's: values and the first input's gradient."""
    rng = np.random.default_rng(5)
    x, other, third = rng.standard_normal((3, 6, 4))
    signs, rows = np.where(rng.random(6) < 0.5, -1.0, 1.0), rng.standard_normal((6, 4))
    ids, weight = rng.integers(0, 4, 6), rng.uniform(0.2, 2.0, 4)
    lists = np.array([[0, 2, -1, 1]] * 3 + [[3, -1, 0, 0]] * 3)
    labels, counts = (rng.random((6, 4)) < 0.5).astype(np.float64), rng.poisson(3.0, (6, 4)).astype(np.float64)
    r = dict(reduction=reduction)

    def pair(name, *args, **kwargs):
        return getattr(nn, name)(*args, **kwargs, **r), getattr(torch.nn, name)(*args, **kwargs, **r)

    _both(*pair("CosineEmbeddingLoss", 0.2), x, other, targets=(minitx.tensor(signs), torch.tensor(signs)))
    _both(*pair("MarginRankingLoss", 0.5), x[:, 0], other[:, 0], targets=(minitx.tensor(signs), torch.tensor(signs)))
    _both(*pair("HingeEmbeddingLoss", 0.5), np.abs(x[:, 0]), targets=(minitx.tensor(signs), torch.tensor(signs)))
    _both(*pair("SoftMarginLoss"), x, targets=(minitx.tensor(np.sign(rows)), torch.tensor(np.sign(rows))))
    ours, theirs = nn.MultiLabelSoftMarginLoss(minitx.tensor(weight), **r), torch.nn.MultiLabelSoftMarginLoss(
        torch.tensor(weight), **r)
    _both(ours, theirs, x, targets=(minitx.tensor(labels), torch.tensor(labels)))
    ours, theirs = nn.MultiMarginLoss(2, 0.5, minitx.tensor(weight), **r), torch.nn.MultiMarginLoss(
        2, 0.5, torch.tensor(weight), **r)
    _both(ours, theirs, x, targets=(minitx.tensor(ids), torch.tensor(ids)))
    _both(*pair("MultiLabelMarginLoss"), x, targets=(minitx.tensor(lists), torch.tensor(lists)))
    _both(*pair("TripletMarginLoss", 0.5, 1.0, 1e-6, True), x, other, third)
    ours, theirs = pair("TripletMarginWithDistanceLoss", margin=2.0, swap=True)
    _both(ours, theirs, x, other, third)
    _both(*pair("PoissonNLLLoss", False, True, eps=1e-6), np.exp(x), targets=(minitx.tensor(counts),
                                                                              torch.tensor(counts)))
    var = rng.uniform(0.0, 2.0, 6)  # one variance per row, some below eps = 0.1
    _both(*pair("GaussianNLLLoss", full=True, eps=0.1), x, other, var)


def test_loss_options_are_checked():
    with pytest.raises(ValueError, match="MSELoss: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match=r"Flatten: start axis 2 comes after end axis 1 for shape \(3, 4, 5\)"):
        nn.Flatten(2, 1)(minitx.tensor(X))


def test_grad_mode_names_and_top_level_cat_and_stack():
    x = minitx.tensor([1.0, 2.0], requires_grad=True)
    with minitx.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with minitx.set_grad_enabled(True):
            assert (x * 2).requires_grad
    with minitx.inference_mode():
        assert not (x * 2).requires_grad

    @minitx.set_grad_enabled(False)
    def evaluate():
        return x * 2

    assert not evaluate().requires_grad and (x * 2).requires_grad
    assert minitx.cat([x, x]).tolist() == [1.0, 2.0, 1.0, 2.0]
    assert minitx.stack([x, x], axis=1).shape == (2, 2)


def test_set_grad_enabled_called_alone_sets_the_mode_as_pytorchs():
    """A statement, not a context: PyTorch's call sets the mode at once (minitx's once did
    nothing outside a with block, and graphs went on being recorded)."""
    x, tx = minitx.tensor([1.0], requires_grad=True), torch.tensor([1.0], requires_grad=True)
    try:
        minitx.set_grad_enabled(False)
        torch.set_grad_enabled(False)
        assert (x * 2).requires_grad == (tx * 2).requires_grad is False
        with minitx.set_grad_enabled(True), torch.set_grad_enabled(True):
            assert (x * 2).requires_grad == (tx * 2).requires_grad is True
        assert (x * 2).requires_grad == (tx * 2).requires_grad is False  # restored after the with block
    finally:
        minitx.set_grad_enabled(True)
        torch.set_grad_enabled(True)
    assert minitx.is_grad_enabled() and (x * 2).requires_grad


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_layers_invert_the_pools_as_pytorchs(dims):
    shape = {1: (2, 3, 6), 2: (2, 3, 4, 6), 3: (2, 3, 4, 2, 6)}[dims]
    x = np.random.default_rng(2).standard_normal(shape)
    pool, unpool = getattr(nn, f"MaxPool{dims}d")(2, return_indices=True), getattr(nn, f"MaxUnpool{dims}d")(2)
    t_pool = getattr(torch.nn, f"MaxPool{dims}d")(2, return_indices=True)
    t_unpool = getattr(torch.nn, f"MaxUnpool{dims}d")(2)
    values, indices = pool(minitx.tensor(x))
    t_values, t_indices = t_pool(torch.tensor(x))
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    _both(lambda v: unpool(v, indices), lambda v: t_unpool(v, t_indices), values.numpy())
    assert unpool(values, indices, output_size=shape[2:]).shape == shape



X4 = np.random.default_rng(7).standard_normal((2, 4, 5, 6))


@pytest.mark.parametrize("ours, theirs", [
    (nn.ZeroPad2d((1, 2, 0, 3)), torch.nn.ZeroPad2d((1, 2, 0, 3))), (nn.ConstantPad2d(2, 3.5), torch.nn.ConstantPad2d(2, 3.5)),
    (nn.ConstantPad1d((0, 2), -1.0), torch.nn.ConstantPad1d((0, 2), -1.0)), (nn.ZeroPad1d(1), torch.nn.ZeroPad1d(1)),
    (nn.ReflectionPad2d((1, 2, 2, 1)), torch.nn.ReflectionPad2d((1, 2, 2, 1))),
    (nn.ReplicationPad2d(2), torch.nn.ReplicationPad2d(2)), (nn.ReflectionPad1d((3, 1)), torch.nn.ReflectionPad1d((3, 1))),
    (nn.CircularPad2d((1, 2, 2, 1)), torch.nn.CircularPad2d((1, 2, 2, 1))), (nn.CircularPad3d(1), torch.nn.CircularPad3d(1)),
    (nn.CircularPad1d((3, -1)), torch.nn.CircularPad1d((3, -1))),
    (nn.InstanceNorm2d(4), torch.nn.InstanceNorm2d(4)), (nn.InstanceNorm1d(4, affine=True), torch.nn.InstanceNorm1d(4, affine=True).double()),
    (nn.PixelShuffle(2), torch.nn.PixelShuffle(2)), (nn.PixelUnshuffle(1), torch.nn.PixelUnshuffle(1)),
    (nn.Dropout2d(0.5).eval(), torch.nn.Dropout2d(0.5).eval()),
], ids=lambda m: repr(m))
def test_composed_layers_match_pytorch(ours, theirs):
    """Padding in PyTorch's order (the last axis's pair first), instance norm, pixel shuffle:
    values, the input's gradient and the repr."""
    x = X4 if not isinstance(ours, nn.InstanceNorm1d) else X4[:, :, :, 0]
    one_axis = (nn.ConstantPad1d, nn.ZeroPad1d, nn.ReflectionPad1d, nn.CircularPad1d)
    _both(ours, theirs, x if not isinstance(ours, one_axis) else X4[0])
    if not isinstance(ours, nn.Dropout):  # (minitx's dropout layers show inplace only when it is True)
        assert repr(ours) == repr(theirs)


def test_channel_dropout_zeroes_whole_channels_and_distances_match_pytorch():
    minitx.manual_seed(0)
    y = nn.Dropout2d(0.5)(minitx.tensor(X4 + 10)).numpy()
    per_channel = y.reshape(2, 4, -1)
    assert ((per_channel == 0).all(-1) | (per_channel != 0).all(-1)).all() and (per_channel == 0).any()
    np.testing.assert_allclose(per_channel[(per_channel != 0).all(-1)], 2 * (X4 + 10).reshape(2, 4, -1)[
        (per_channel != 0).all(-1)], rtol=1e-12)
    a, b = np.random.default_rng(8).standard_normal((2, 3, 5))
    _both(nn.PairwiseDistance(), torch.nn.PairwiseDistance(), a, b)
    _both(nn.CosineSimilarity(dim=-1), torch.nn.CosineSimilarity(dim=-1), a, b)


def test_embedding_from_pretrained_copies_and_freezes_as_pytorch():
    table = np.random.default_rng(9).standard_normal((5, 3))
    ours, theirs = nn.Embedding.from_pretrained(minitx.tensor(table)), torch.nn.Embedding.from_pretrained(
        torch.tensor(table))
    assert not ours.weight.requires_grad and not theirs.weight.requires_grad
    ids = np.array([[4, 0], [2, 2]])
    np.testing.assert_array_equal(ours(minitx.tensor(ids)).numpy(), theirs(torch.tensor(ids)).numpy())
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad and trainable.weight.numpy()[1].tolist() == table[1].tolist()


def test_embedding_bag_from_pretrained_copies_and_freezes_as_pytorch():
    table = np.random.default_rng(10).standard_normal((5, 3))
    ours = nn.EmbeddingBag.from_pretrained(minitx.tensor(table), mode="max", padding_idx=2)
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), mode="max", padding_idx=2)
    assert not ours.weight.requires_grad and not theirs.weight.requires_grad and repr(ours) == repr(theirs)
    assert ours.weight.numpy().tolist() == table.tolist()  # (the padding row as given, not zeroed: PyTorch's too)
    ids = np.array([[4, 0, 2], [2, 2, 1]])
    np.testing.assert_array_equal(ours(minitx.tensor(ids)).numpy(), theirs(torch.tensor(ids)).numpy())
    source = minitx.tensor(table)
    trainable = nn.EmbeddingBag.from_pretrained(source, freeze=False, include_last_offset=True)
    assert trainable.weight.requires_grad and trainable.include_last_offset and trainable.mode == "mean"
    with minitx.no_grad():
        trainable.weight.fill_(0)
    assert source.numpy().tolist() == table.tolist()  # (a copy: the caller's tensor keeps its values)
    with pytest.raises(ValueError, match=r"EmbeddingBag.from_pretrained: embeddings must be 2-d \[num, dim\], got"):
        nn.EmbeddingBag.from_pretrained(np.zeros(3))
    with pytest.raises(ValueError, match="EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not supported"):
        nn.EmbeddingBag.from_pretrained(table, sparse=True)


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"size": (3, 4), "mode": "bilinear", "align_corners": True},
                                    {"scale_factor": (2, 1.5)}, {"size": 3}, {"scale_factor": 0.5, "mode": "area"}])
def test_upsample_shows_and_keeps_its_scale_factor_as_pytorchs(kwargs):
    ours, theirs = nn.Upsample(**kwargs), torch.nn.Upsample(**kwargs)
    assert repr(ours) == repr(theirs) and ours.scale_factor == theirs.scale_factor
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == repr(torch.nn.UpsamplingNearest2d(scale_factor=2))


def test_composed_layers_name_what_is_wrong():
    with pytest.raises(ValueError, match="dropout2d: p must be in"):
        minitx.functional.dropout2d(minitx.ones(1, 2, 3, 3), 1.5)
    with pytest.raises(ValueError, match=r"pixel_shuffle: x must be \[\*, C, H, W\] with at least 3 axes"):
        nn.PixelShuffle(2)(minitx.ones(4, 4))
    assert nn.ZeroPad2d(np.int64(1))(minitx.ones(1, 1, 2, 2)).shape == (1, 1, 4, 4)



def test_batch_norm_eps_and_train_mode_are_checked_as_pytorch():
    for layer in (nn.BatchNorm1d, nn.BatchNorm2d):
        with pytest.raises(ValueError, match=f"{layer.__name__}: eps must be a number > 0, got -1.0"):
            layer(3, eps=-1.0)
    with pytest.raises(ValueError, match="Linear.train: mode must be True or False, got 'no'"):
        nn.Linear(2, 2).train("no")



@pytest.mark.parametrize("ours, theirs", [
    (nn.Hardtanh(inplace=True), torch.nn.Hardtanh(inplace=True)), (nn.Threshold(0.1, 2.0, True), torch.nn.Threshold(0.1, 2.0, True)),
    (nn.Hardswish(inplace=True), torch.nn.Hardswish(inplace=True)), (nn.Hardsigmoid(True), torch.nn.Hardsigmoid(True)),
    (nn.LeakyReLU(0.1, True), torch.nn.LeakyReLU(0.1, True)), (nn.CELU(inplace=True), torch.nn.CELU(inplace=True)),
    (nn.RReLU(0.1, 0.2, True), torch.nn.RReLU(0.1, 0.2, True)),
    (nn.RNN(3, 4, nonlinearity="relu"), torch.nn.RNN(3, 4, nonlinearity="relu")),
    (nn.RNNCell(3, 4, nonlinearity="relu"), torch.nn.RNNCell(3, 4, nonlinearity="relu")),
    (nn.LSTMCell(3, 4, bias=False), torch.nn.LSTMCell(3, 4, bias=False)),
], ids=lambda m: type(m).__name__)
def test_reprs_with_their_options_are_pytorchs(ours, theirs):
    assert repr(ours) == repr(theirs)


def test_instance_norm_of_one_position_is_refused_as_pytorch():
    with pytest.raises(ValueError, match="instance_norm: each channel needs more than one position"):
        nn.InstanceNorm1d(3)(minitx.ones(2, 3, 1))


def test_alpha_dropout_layers_and_softmax2d_as_pytorchs():
    """nn.AlphaDropout and nn.FeatureAlphaDropout: PyTorch's two values a + b and -a alpha (1 - p) on
    ones while training, x itself in eval mode, p = 1 taken (zeros) and p outside [0, 1] refused by
    name; nn.RReLU draws while training; nn.Softmax2d refuses what is not [C, H, W] or [N, C, H, W]."""
    ones = np.ones((100, 20, 3))
    for ours, theirs in ((nn.AlphaDropout(0.2), torch.nn.AlphaDropout(0.2)),
                         (nn.FeatureAlphaDropout(0.6), torch.nn.FeatureAlphaDropout(0.6))):
        mine = ours(minitx.tensor(ones, dtype="float64")).numpy()
        np.testing.assert_allclose(np.unique(mine), np.unique(theirs(torch.tensor(ones)).numpy()), rtol=1e-15)
        x = minitx.tensor(ones)
        assert ours.eval()(x) is x
    assert nn.AlphaDropout(1.0)(minitx.tensor(ones)).numpy().tolist() == torch.nn.AlphaDropout(1.0)(
        torch.tensor(ones)).tolist()
    for layer in (nn.AlphaDropout, nn.FeatureAlphaDropout):
        with pytest.raises(ValueError, match=rf"{layer.__name__}: p must be in \[0, 1\], got 1.5"):
            layer(1.5)
    minitx.manual_seed(0)
    drawn = nn.RReLU()(minitx.tensor(-ones)).numpy()
    assert len(np.unique(drawn)) > 1000 and ((-drawn >= 1 / 8) & (-drawn <= 1 / 3)).all()
    with pytest.raises(ValueError, match=r"Softmax2d: expected an input of 3 or 4 axes .* got shape \(2,\)"):
        nn.Softmax2d()(minitx.ones(2))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_layer_loads_pytorchs_state_dict_and_matches_it(mode):
    """A torch.nn.EmbeddingBag's state_dict loads as it is; values and the table's gradient agree,
    with offsets, 2-D input and (for sum) per_sample_weights; the padding row is drawn as zeros."""
    theirs = torch.nn.EmbeddingBag(6, 3, mode=mode, padding_idx=2, dtype=torch.float64)
    ours = nn.EmbeddingBag(6, 3, mode=mode, padding_idx=2, dtype="float64")
    assert repr(ours) == repr(theirs) and not ours.weight.numpy()[2].any()
    assert set(ours.state_dict()) == set(theirs.state_dict()) == {"weight"}
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(6)
    ids, offsets = rng.integers(0, 6, 9), np.array([0, 4, 4, 7])
    psw = rng.standard_normal(9) if mode == "sum" else None
    for args, t_args in (((minitx.tensor(ids), minitx.tensor(offsets)), (torch.tensor(ids), torch.tensor(offsets))),
                         ((minitx.tensor(ids[:8].reshape(2, 4)),), (torch.tensor(ids[:8].reshape(2, 4)),))):
        weights = None if psw is None else psw[:args[0].size].reshape(args[0].shape)
        y = ours(*args, per_sample_weights=None if weights is None else minitx.tensor(weights))
        t_y = theirs(*t_args, per_sample_weights=None if weights is None else torch.tensor(weights))
        dy = rng.standard_normal(y.shape)
        y.backward(dy)
        t_y.backward(torch.tensor(dy))
        np.testing.assert_allclose(y.numpy(), t_y.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12, atol=1e-15)
        ours.zero_grad(), theirs.zero_grad()
    last = nn.EmbeddingBag(6, 3, mode=mode, include_last_offset=True)
    assert last(minitx.tensor(ids), minitx.tensor([0, 4, 9])).shape == (2, 3)
    with pytest.raises(ValueError, match="EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not supported"):
        nn.EmbeddingBag(6, 3, max_norm=1.0)
    with pytest.raises(ValueError, match="EmbeddingBag: mode must be 'sum', 'mean' or 'max', got 'min'"):
        nn.EmbeddingBag(6, 3, mode="min")


def test_batch_norm_3d_takes_pytorchs_state_dict():
    theirs = torch.nn.BatchNorm3d(3)
    theirs(torch.randn(2, 3, 2, 2, 2))  # running statistics that are not the initial ones
    ours = nn.BatchNorm3d(3)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(7).standard_normal((2, 3, 2, 3, 2)).astype(np.float32)
    np.testing.assert_allclose(ours.eval()(minitx.tensor(x)).numpy(), theirs.eval()(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
