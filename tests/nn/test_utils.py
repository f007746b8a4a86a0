"""minitx.nn.utils against torch.nn.utils: clip_grad_norm_ is minitx.optim's, and the parameters
turned into one vector and back."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn, optim
from minitx.nn.utils import parameters_to_vector, vector_to_parameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402


@pytest.fixture
def torch():
    return import_torch()


def _pair(torch):
    """The same small model in both libraries, its weights copied from ours."""
    minitx.manual_seed(0)
    ours = nn.Sequential(nn.Linear(3, 4), nn.Conv1d(4, 2, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Conv1d(4, 2, 3)).double()
    ours.to(dtype="float64")
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    return ours, theirs


def test_clip_grad_norm_is_optims():
    assert nn.utils.clip_grad_norm_ is optim.clip_grad_norm_


def test_parameters_to_vector_is_pytorchs_and_passes_the_gradient_back(torch):
    ours, theirs = _pair(torch)
    vec = parameters_to_vector(ours.parameters())
    expected = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(vec.numpy(), expected.detach().numpy())
    weights = np.arange(vec.shape[0], dtype=np.float64)
    (vec * minitx.tensor(weights)).sum().backward()
    (expected * torch.from_numpy(weights)).sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_vector_to_parameters_is_pytorchs(torch):
    ours, theirs = _pair(torch)
    values = np.random.default_rng(1).standard_normal(sum(p.size for p in ours.parameters()))
    vec = minitx.tensor(values)
    vector_to_parameters(vec, ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(values), theirs.parameters())
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert p.shape == tuple(q.shape) and p.grad_fn is None
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy())
    np.testing.assert_array_equal(parameters_to_vector(ours.parameters()).numpy(), values)
    vec.data[0] = 5.0  # as PyTorch's, the parameters view the vector's array
    assert ours[0].weight.numpy()[0, 0] == 5.0


def test_float_parameters_keep_their_dtype():
    layer = nn.Linear(2, 1)
    vector_to_parameters(minitx.tensor(np.ones(3)), layer.parameters())
    assert layer.weight.dtype == np.float32 and np.all(layer.weight.numpy() == 1)


@pytest.mark.parametrize("vec, error, message", [
    (np.ones(3), TypeError, "vector_to_parameters: expected a Tensor, got ndarray"),
    (minitx.ones(3, 1), ValueError, r"vector_to_parameters: expected a 1-D vector, got shape \(3, 1\)"),
    (minitx.ones(4), ValueError, "vector_to_parameters: the vector has 4 entries but the parameters 3"),
])
def test_vector_to_parameters_refuses_a_vector_that_does_not_fit(vec, error, message):
    with pytest.raises(error, match=message):
        vector_to_parameters(vec, nn.Linear(2, 1).parameters())


def test_pytorchs_module_paths_reach_minitxs_functions():
    """``import torch.nn.functional as F`` ported as ``minitx.nn.functional``: the same module as
    minitx.functional; torch.nn.utils' clipping is minitx.optim's."""
    import minitx.functional
    import minitx.nn.functional as nn_functional
    from minitx import optim
    from minitx.nn import utils

    assert nn_functional is minitx.functional and nn_functional.softmax is minitx.functional.softmax
    assert utils.clip_grad_norm_ is optim.clip_grad_norm_ and utils.clip_grad_value_ is optim.clip_grad_value_
