"""The loss modules take PyTorch's arguments in PyTorch's order: a class weight first (given
positionally, it weighs the classes, as in PyTorch), the options after it keyword-only, and the
weights kept as buffers."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402


def _both(ours, theirs, logits, targets, torch_targets):
    """Loss and logits gradient of each module on the same float64 data, compared. The logits'
    classes are on the last axis here and on axis 1 in PyTorch."""
    torch = import_torch()
    x, x_t = minitx.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss, loss_t = ours(x, targets), theirs(x_t.movedim(-1, 1) if logits.ndim > 2 else x_t, torch_targets)
    dy = np.random.default_rng(0).standard_normal(loss.shape)
    loss.backward(dy)
    loss_t.backward(torch.tensor(dy))
    np.testing.assert_allclose(loss.numpy(), loss_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_a_positional_weight_weighs_the_classes_as_in_pytorch():
    torch = import_torch()
    logits = np.random.default_rng(1).standard_normal((5, 5))
    w = np.arange(1.0, 6.0)
    for rows in (5, 4):  # 4 rows: the weight once taken for ignore_index failed to broadcast against them
        t = np.arange(rows)
        ours = nn.CrossEntropyLoss(minitx.tensor(w))(minitx.tensor(logits[:rows]), minitx.tensor(t))
        theirs = torch.nn.CrossEntropyLoss(torch.tensor(w))(torch.tensor(logits[:rows]), torch.tensor(t))
        assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    assert ours.item() != pytest.approx(nn.CrossEntropyLoss()(minitx.tensor(logits[:4]), minitx.tensor(t)).item())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("shape", [(6, 4), (3, 2, 4)])
def test_weighted_cross_entropy_matches_pytorch(reduction, smoothing, shape):
    """Class ids (one ignored) and class probabilities, with and without label smoothing (PyTorch's
    formula: the smoothing term weighted too, and normalized by the counted rows' weights)."""
    torch = import_torch()
    rng = np.random.default_rng(2)
    logits, w = rng.standard_normal(shape), rng.uniform(0.2, 2.0, shape[-1])
    ids = rng.integers(0, shape[-1], shape[:-1])
    ids.flat[1] = -100
    probs = rng.dirichlet(np.ones(shape[-1]), shape[:-1])
    options = dict(reduction=reduction, label_smoothing=smoothing)
    ours = nn.CrossEntropyLoss(minitx.tensor(w), **options)
    theirs = torch.nn.CrossEntropyLoss(torch.tensor(w), **options)
    _both(ours, theirs, logits, minitx.tensor(ids), torch.tensor(ids))
    probs_t = torch.tensor(probs)
    _both(ours, theirs, logits, minitx.tensor(probs), probs_t.movedim(-1, 1) if len(shape) > 2 else probs_t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_binary_cross_entropy_with_logits_matches_pytorch(reduction):
    torch = import_torch()
    rng = np.random.default_rng(3)
    logits, labels = rng.standard_normal((5, 3)), (rng.random((5, 3)) < 0.5).astype(np.float64)
    weight, pos_weight = rng.uniform(0.2, 2.0, 3), rng.uniform(0.5, 3.0, 3)
    ours = nn.BCEWithLogitsLoss(minitx.tensor(weight), reduction=reduction, pos_weight=minitx.tensor(pos_weight))
    theirs = torch.nn.BCEWithLogitsLoss(torch.tensor(weight), reduction=reduction, pos_weight=torch.tensor(pos_weight))
    _both(ours, theirs, logits, minitx.tensor(labels), torch.tensor(labels))


def test_weights_are_buffers_in_the_state_dict_that_move_with_to():
    losses = [nn.CrossEntropyLoss(minitx.tensor([1.0, 2.0, 3.0])), nn.NLLLoss([1.0, 2.0, 3.0]),
              nn.BCEWithLogitsLoss(minitx.tensor([1.0, 2.0, 3.0]), pos_weight=minitx.tensor([2.0, 1.0, 1.0]))]
    for loss, keys in zip(losses, (["weight"], ["weight"], ["weight", "pos_weight"])):
        assert list(loss.state_dict()) == keys
        np.testing.assert_array_equal(loss.state_dict()["weight"], [1.0, 2.0, 3.0])
        loss.to(dtype="float64")
        assert all(getattr(loss, key).dtype == np.float64 for key in keys)
    assert list(nn.CrossEntropyLoss().state_dict()) == [] and nn.CrossEntropyLoss().weight is None
    given = minitx.tensor([1.0, 2.0])  # a copy: the module's to() leaves the caller's tensor alone
    nn.NLLLoss(given).to(dtype="float64")
    assert given.dtype == np.float32


def test_the_options_after_the_weight_are_keyword_only_and_a_bad_weight_is_named():
    with pytest.raises(TypeError, match=r"CrossEntropyLoss: weight must be a tensor of numbers, got 'sum' "
                                        r"\(the options after it are keyword-only"):
        nn.CrossEntropyLoss("sum")
    with pytest.raises(TypeError, match=r"NLLLoss.__init__\(\) takes from 1 to 2 positional arguments"):
        nn.NLLLoss(None, -100)  # PyTorch's second positional argument is the deprecated size_average
    with pytest.raises(TypeError, match=r"MSELoss.__init__\(\) takes 1 positional argument"):
        nn.MSELoss("sum")
    with pytest.raises(ValueError, match=r"CrossEntropyLoss: weight must hold one weight per class \(shape \(C,\)\), "
                                         r"got shape \(1, 2\)"):
        nn.CrossEntropyLoss([[1.0, 2.0]])
    logits = minitx.tensor(np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"CrossEntropyLoss: weight has shape \(2,\), expected \(3,\)"):
        nn.CrossEntropyLoss([1.0, 2.0])(logits, minitx.tensor([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="CrossEntropyLoss: label_smoothing must be in"):
        nn.CrossEntropyLoss(label_smoothing=1.5)


@pytest.mark.parametrize("name", ["BCELoss", "BCEWithLogitsLoss"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_a_binary_loss_weight_must_broadcast_to_the_input_as_pytorchs(name, reduction):
    """A [3, 1] weight beside [3] inputs broadcast with the losses, growing them to [3, 3] (and
    'mean' to an average over 9 entries); PyTorch refuses it, and so does minitx, naming the layer."""
    torch = import_torch()
    probs, labels, weight = np.array([0.2, 0.7, 0.4]), np.array([0.0, 1.0, 1.0]), np.array([[1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match=rf"{name}: weight of shape \(3, 1\) must broadcast to the input's shape \(3,\)"):
        getattr(nn, name)(weight, reduction=reduction)(minitx.tensor(probs), minitx.tensor(labels))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(torch.nn, name)(torch.tensor(weight), reduction=reduction)(torch.tensor(probs), torch.tensor(labels))
    with pytest.raises(ValueError, match=rf"{name}: weight of shape \(2,\) must broadcast"):  # (was mul's error)
        getattr(nn, name)([1.0, 2.0], reduction=reduction)(minitx.tensor(probs), minitx.tensor(labels))
    ours = getattr(nn, name)(weight[:, 0], reduction=reduction)(minitx.tensor(probs), minitx.tensor(labels))
    theirs = getattr(torch.nn, name)(torch.tensor(weight[:, 0]), reduction=reduction)(torch.tensor(probs),
                                                                                      torch.tensor(labels))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
