"""nn.AdaptiveLogSoftmaxWithLoss beside a NumPy computation of its log-probabilities and beside
PyTorch's (forward, loss, gradients of the input and of every parameter, log_prob, predict, state_dict
keys, repr), its draws (the Linear layers' own, in PyTorch's order) and its errors."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn
from minitx.testing import check_gradients

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()

_RNG = np.random.default_rng(0)
ARGS = (8, 20, [4, 10, 15])  # in_features, n_classes, cutoffs: a shortlist of 4 and three clusters


def _pair(div_value=2.0, head_bias=True):
    """(ours, PyTorch's) in float64, ours holding PyTorch's parameters."""
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*ARGS, div_value=div_value, head_bias=head_bias).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(*ARGS, div_value=div_value, head_bias=head_bias, dtype="float64")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def np_log_prob(module, x):
    """Every class's log-probability from the module's weights, by the formula: the head's for the
    shortlist, the cluster's head entry plus the tail's for the others."""
    state = {k: np.asarray(v) for k, v in module.state_dict().items()}
    head = x @ state["head.weight"].T + state.get("head.bias", 0)
    head = _log_softmax(head)
    short = module.cutoffs[0]
    parts = [head[:, :short]]
    for i in range(module.n_clusters):
        tail = x @ state[f"tail.{i}.0.weight"].T @ state[f"tail.{i}.1.weight"].T
        parts.append(_log_softmax(tail) + head[:, short + i:short + i + 1])
    return np.concatenate(parts, axis=1)


def test_the_output_is_each_targets_log_probability_and_log_prob_sums_to_one():
    ours, _ = _pair()
    x, y = _RNG.standard_normal((7, 8)), np.array([0, 5, 12, 19, 3, 11, 15])
    full = np_log_prob(ours, x)
    np.testing.assert_allclose(np.exp(full).sum(axis=1), 1.0, rtol=1e-12)
    output, loss = ours(minitx.tensor(x), minitx.tensor(y))
    np.testing.assert_allclose(output.numpy(), full[np.arange(7), y], rtol=1e-12)
    np.testing.assert_allclose(loss.item(), -full[np.arange(7), y].mean(), rtol=1e-12)
    np.testing.assert_allclose(ours.log_prob(minitx.tensor(x)).numpy(), full, rtol=1e-12)
    assert ours.predict(minitx.tensor(x)).numpy().tolist() == full.argmax(axis=1).tolist()
    assert check_gradients(lambda t: ours(t, minitx.tensor(y)).loss, minitx.tensor(x, requires_grad=True))
    assert check_gradients(lambda t: ours.log_prob(t), minitx.tensor(x, requires_grad=True))


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("targets", [[0, 5, 12, 19, 3, 11], [1, 2, 3, 0, 0, 1], [16, 17, 19, 15, 18, 16]],
                         ids=["every cluster", "shortlist only", "one cluster"])
def test_forward_loss_and_gradients_match_pytorch(targets, head_bias):
    ours, theirs = _pair(head_bias=head_bias)
    x, y = _RNG.standard_normal((6, 8)), np.array(targets)
    ours_x, theirs_x = minitx.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    result, t_result = ours(ours_x, minitx.tensor(y)), theirs(theirs_x, torch.tensor(y))
    assert result._fields == t_result._fields == ("output", "loss")
    np.testing.assert_allclose(result.output.numpy(), t_result.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(result.loss.item(), t_result.loss.item(), rtol=1e-12)
    (result.loss + (result.output * minitx.tensor(np.arange(6.0))).sum()).backward()
    (t_result.loss + (t_result.output * torch.arange(6.0, dtype=torch.float64)).sum()).backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-14)
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        expected = np.zeros(p.shape) if q.grad is None else q.grad.numpy()  # (an unused tail: None in both)
        got = np.zeros(p.shape) if p.grad is None else p.grad.numpy()
        assert (p.grad is None) == (q.grad is None), key
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14, err_msg=key)


def test_one_sample_log_prob_and_predict_match_pytorch():
    ours, theirs = _pair()
    x = _RNG.standard_normal((5, 8))
    output, loss = ours(minitx.tensor(x[0]), minitx.tensor(np.int64(13)))
    t_output, t_loss = theirs(torch.tensor(x[0]), torch.tensor(13))
    assert output.shape == tuple(t_output.shape) == ()
    np.testing.assert_allclose([output.item(), loss.item()], [t_output.item(), t_loss.item()], rtol=1e-12)
    np.testing.assert_allclose(ours.log_prob(minitx.tensor(x)).numpy(), theirs.log_prob(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    # predict: the head's argmax in the shortlist, log_prob's elsewhere; a head bias sends some rows (then all)
    # to the clusters
    for bias in ([0, 0, 0, 0, 0, 3, 0], [0, 0, 0, 0, 9, 9, 9]):
        with minitx.no_grad(), torch.no_grad():
            ours.head.bias.copy_(minitx.tensor(np.array(bias, dtype=np.float64)))
            theirs.head.bias.copy_(torch.tensor(bias, dtype=torch.float64))
        predicted = ours.predict(minitx.tensor(x))
        assert predicted.dtype == np.int64 and not predicted.requires_grad
        assert predicted.numpy().tolist() == theirs.predict(torch.tensor(x)).numpy().tolist()
        assert predicted.numpy().tolist() == np_log_prob(ours, x).argmax(axis=1).tolist()
    assert repr(ours) == repr(theirs)


def test_it_draws_its_linear_layers_in_pytorchs_order_and_reset_draws_them_again():
    minitx.manual_seed(4)
    layer = nn.AdaptiveLogSoftmaxWithLoss(*ARGS)  # div_value 4: hidden sizes 2, 0 and 0
    built = {k: np.array(v) for k, v in layer.state_dict().items()}
    minitx.manual_seed(4)
    linears = [nn.Linear(8, 7, bias=False), nn.Linear(8, 2, bias=False), nn.Linear(2, 6, bias=False),
               nn.Linear(8, 0, bias=False), nn.Linear(0, 5, bias=False), nn.Linear(8, 0, bias=False),
               nn.Linear(0, 5, bias=False)]
    for (key, value), linear in zip(built.items(), linears):
        np.testing.assert_array_equal(value, linear.weight.numpy(), err_msg=key)
    minitx.manual_seed(4)
    layer.reset_parameters()
    for key, value in layer.state_dict().items():
        np.testing.assert_array_equal(value, built[key], err_msg=key)


def test_errors_name_the_layer():
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [])
    for bad in ([10, 4], [4, 4], [0, 4], [4, 20], [4.5]):
        for library in (nn, torch.nn):
            with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
                library.AdaptiveLogSoftmaxWithLoss(8, 20, bad)
    with pytest.raises(ValueError, match=r"cutoffs should be .*; got \[True\]"):  # (PyTorch's takes True as 1)
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [True])
    layer = nn.AdaptiveLogSoftmaxWithLoss(*ARGS)
    x = minitx.zeros(3, 8)
    with pytest.raises(ValueError, match=r"target values should be in \[0, 19\], but values in range \[0, 20\]"):
        layer(x, minitx.tensor([0, 1, 20]))
    with pytest.raises(ValueError, match="the same size in the batch dimension, got 3 and 2"):
        layer(x, minitx.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"expected input \[N, in_features\] and target \[N\]"):
        layer(x, minitx.tensor([[0, 1, 2]]))
    with pytest.raises(TypeError, match="AdaptiveLogSoftmaxWithLoss: target must hold class indices"):
        layer(x, minitx.tensor([0.0, 1.0, 2.0]))
