"""The Lazy modules (sizes read from the first input, then the eager class), nn.Buffer and the
uninitialized parameters, each beside PyTorch's: the parameters a seeded first forward draws are
the eager class's, state_dict keys and loading as PyTorch's, forward and gradients in float64."""
import copy
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()

# name -> (the lazy layer's arguments, the eager class's arguments after its input size, input shape)
LAZY = {
    "LazyLinear": ((4,), (4,), (2, 5, 3)),
    "LazyLinear no bias": ((4, False), (4, False), (2, 3)),
    "LazyConv1d": ((6, 3), (6, 3), (2, 4, 7)),
    "LazyConv2d": ((6, 2), (6, 2), (2, 4, 5, 5)),
    "LazyConv2d groups one sample": ((6, (2, 3), 1, 1, 1, 2, False), (6, (2, 3), 1, 1, 1, 2, False), (4, 5, 5)),
    "LazyConv3d": ((2, 2), (2, 2), (1, 3, 3, 4, 3)),
    "LazyConvTranspose1d": ((6, 3, 2, 1, 1, 2), (6, 3, 2, 1, 1, 2), (2, 4, 5)),
    "LazyConvTranspose2d": ((2, 2), (2, 2), (2, 3, 3, 4)),
    "LazyConvTranspose3d": ((2, 2), (2, 2), (1, 3, 2, 3, 2)),
    "LazyBatchNorm1d": ((), (), (6, 3)),
    "LazyBatchNorm2d no affine": ((1e-5, 0.1, False), (1e-5, 0.1, False), (4, 3, 2, 2)),
    "LazyBatchNorm3d": ((), (), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), (), (2, 3, 5)),
    "LazyInstanceNorm2d one sample": ((), (), (3, 4, 5)),
    "LazyInstanceNorm3d no affine": ((1e-5, 0.1, False), (1e-5, 0.1, False), (2, 3, 2, 3, 2)),
}


def _count(name, shape):
    """The size the first input tells: its last axis for a Linear, else its channel axis."""
    if "Linear" in name:
        return shape[-1]
    one_sample = "one sample" in name
    return shape[0] if one_sample else shape[1]


def _eager_args(name):
    """The eager class's arguments as PyTorch's Lazy one passes them (LazyInstanceNorm: affine=True and
    track_running_stats=True, where the eager class's are False)."""
    _, eager, shape = LAZY[name]
    if "InstanceNorm" in name:
        return (_count(name, shape), *eager, *(1e-5, 0.1, True)[len(eager):], True)
    return (_count(name, shape), *eager)


def _class(name, library=nn):
    return getattr(library, name.split()[0])


def _eager_class(name, library=nn):
    return getattr(library, name.split()[0].removeprefix("Lazy"))


def _state(module):
    return {k: np.array(v) for k, v in module.state_dict().items()}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_the_first_forward_draws_what_the_eager_class_draws_and_becomes_it(name):
    args, _, shape = LAZY[name]
    x = minitx.randn(*shape)
    minitx.manual_seed(7)
    lazy = _class(name)(*args)
    assert lazy.has_uninitialized_params()  # (a norm without affine parameters: its running statistics)
    y = lazy(x)
    after = minitx.rand(3, dtype="float64").numpy()  # (the generator's position: as far as the eager class's)
    assert type(lazy) is _eager_class(name)
    minitx.manual_seed(7)
    eager = _eager_class(name)(*_eager_args(name))
    np.testing.assert_array_equal(after, minitx.rand(3, dtype="float64").numpy())
    assert repr(lazy) == repr(eager)
    # (after the eager one's forward: a batch norm's updates its running statistics, as the lazy one's did)
    np.testing.assert_array_equal(y.numpy(), eager(x).numpy())
    ours, theirs = _state(lazy), _state(eager)
    assert ours.keys() == theirs.keys()
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


# (PyTorch's Lazy instance norm reads one sample's [C, *S] sizes from axis 1, and then refuses it; minitx's reads C)
@pytest.mark.parametrize("name", sorted(set(LAZY) - {"LazyInstanceNorm2d one sample"}))
def test_lazy_layers_match_pytorchs_state_keys_forward_and_gradients(name):
    args, _, shape = LAZY[name]
    ours, theirs = _class(name)(*args, dtype="float64"), _class(name, torch.nn)(*args, dtype=torch.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert all(nn.parameter.is_lazy(v) == torch.nn.parameter.is_lazy(w)
               for v, w in zip(ours.state_dict().values(), theirs.state_dict().values()))
    x = np.random.default_rng(0).standard_normal(shape)
    with torch.no_grad():  # PyTorch's sized and drawn by a first forward in eval mode (no statistics updated)
        theirs.eval()(torch.tensor(x))
    assert ours.load_state_dict(theirs.train().state_dict()) == ([], [])  # (the uninitialized take its shapes)
    theirs_x = torch.tensor(x, requires_grad=True)
    theirs_y = theirs(theirs_x)
    assert not ours.has_uninitialized_params() and type(ours) is _class(name)
    ours_x = minitx.tensor(x, requires_grad=True)
    ours_y = ours(ours_x)
    assert type(ours) is _eager_class(name) and type(theirs) is _eager_class(name, torch.nn)
    dy = np.random.default_rng(1).standard_normal(ours_y.shape)
    ours_y.backward(minitx.tensor(dy))
    theirs_y.backward(torch.tensor(dy))
    np.testing.assert_allclose(ours_y.numpy(), theirs_y.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)


def test_the_input_size_comes_from_the_first_forward_as_pytorchs():
    ours, theirs = nn.LazyConvTranspose2d(4, 3, groups=2), torch.nn.LazyConvTranspose2d(4, 3, groups=2)
    ours(minitx.zeros(1, 6, 4, 4))
    theirs(torch.zeros(1, 6, 4, 4))
    assert (ours.in_channels, ours.weight.shape) == (theirs.in_channels, tuple(theirs.weight.shape)) == (6, (6, 2, 3, 3))
    linear = nn.LazyLinear(2)
    assert linear.in_features == 0 and "in_features=0" in repr(linear)  # (PyTorch's until the first forward)
    linear(minitx.zeros(3, 5))
    assert linear.in_features == 5 and linear(minitx.zeros(1, 5)).shape == (1, 2)


def test_an_uninitialized_parameter_is_refused_where_its_values_or_shape_are_read():
    layer = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="uninitialized parameter"):
        layer.weight + 1
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        layer.weight.shape
    assert repr(layer.weight) == "<UninitializedParameter>" and layer.weight.requires_grad
    assert repr(nn.LazyBatchNorm1d().running_mean) == "<UninitializedBuffer>"
    twin = copy.deepcopy(layer)
    assert twin.has_uninitialized_params() and twin.weight is not layer.weight
    twin(minitx.zeros(2, 4))
    assert layer.has_uninitialized_params()  # (the copy's forward leaves the original as it was)


def test_an_optimizer_built_before_the_first_forward_is_refused_by_name():
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    with pytest.raises(ValueError, match="SGD: parameter 0 is uninitialized.*call the model once"):
        minitx.optim.SGD(model.parameters(), lr=0.1)
    model(minitx.zeros(2, 3))
    minitx.optim.Adam(model.parameters()).step()  # (after it, as any model)


def test_the_first_call_is_checked_by_name():
    with pytest.raises(ValueError, match="LazyConv2d: the input's 3 channels must be divisible by groups 2"):
        nn.LazyConv2d(4, 3, groups=2)(minitx.zeros(1, 3, 5, 5))
    with pytest.raises(ValueError, match=r"LazyConv1d: expected an input \[N, C\] or \[C\] and 1 spatial"):
        nn.LazyConv1d(4, 3)(minitx.zeros(5))
    with pytest.raises(ValueError, match="LazyLinear: expected an input with a last axis"):
        nn.LazyLinear(4)(minitx.tensor(1.0))
    with pytest.raises(TypeError, match="LazyLinear: the first call takes the input tensor"):
        nn.LazyLinear(4)(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="LazyBatchNorm1d: expected an input with a channel axis"):
        nn.LazyBatchNorm1d()(minitx.zeros(4))


def test_state_dicts_of_uninitialized_modules_load_as_pytorchs():
    fresh, other = nn.LazyLinear(4), nn.LazyLinear(4)
    assert fresh.load_state_dict(other.state_dict()) == ([], []) and fresh.has_uninitialized_params()
    done = nn.Linear(3, 4)
    with pytest.raises(RuntimeError, match="'weight' is uninitialized in the state dict"):
        done.load_state_dict(other.state_dict())
    weight = np.arange(12.0).reshape(4, 3)
    fresh.load_state_dict({"weight": weight, "bias": np.ones(4)})
    assert fresh.weight.shape == (4, 3) and not fresh.has_uninitialized_params()
    assert fresh(minitx.ones(1, 3)).numpy().tolist() == [[4, 13, 22, 31]]  # (the state's values, not drawn again)
    assert type(fresh) is nn.Linear and fresh.in_features == 3
    with pytest.raises(ValueError, match=r"'weight' has shape \(4, 2\) in the state dict but \(4, 3\)"):
        fresh.load_state_dict({"weight": np.zeros((4, 2)), "bias": np.zeros((4,))})


def test_saving_an_uninitialized_state_is_refused_and_a_pickled_module_stays_lazy(tmp_path):
    layer = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="uninitialized parameter .*call the module once on a batch"):
        minitx.save(layer.state_dict(), tmp_path / "state.npz")
    twin = pickle.loads(pickle.dumps(layer))
    assert twin.has_uninitialized_params() and type(twin) is nn.LazyLinear
    twin(minitx.zeros(2, 5))
    assert type(twin) is nn.Linear and twin.weight.shape == (3, 5)


def test_to_before_the_first_forward_sets_the_dtype_it_draws_in():
    norm = nn.LazyBatchNorm1d().double()
    assert norm.weight.dtype == np.float64 and norm.running_var.dtype == np.float64
    assert norm.num_batches_tracked.dtype == np.int64
    norm(minitx.zeros(2, 3, dtype="float64"))
    assert {t.dtype for t in norm.parameters()} == {np.dtype(np.float64)} and norm.running_mean.shape == (3,)


# ------------------------------------------------------------------ nn.Buffer
def test_assigning_a_buffer_registers_it_as_pytorchs():
    ours, theirs = nn.Module(), torch.nn.Module()
    source = minitx.ones(2, requires_grad=True)
    ours.saved = nn.Buffer(source)
    ours.scratch = nn.Buffer(minitx.zeros(3), persistent=False)
    theirs.saved = torch.nn.Buffer(torch.ones(2, requires_grad=True))
    theirs.scratch = torch.nn.Buffer(torch.zeros(3), persistent=False)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()] == ["saved", "scratch"]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["saved"]
    assert ours.saved.requires_grad and ours.saved.is_leaf and isinstance(ours.saved, nn.Buffer)
    with minitx.no_grad():
        source.fill_(5)
    assert ours.saved.numpy().tolist() == [5, 5]  # (its memory is the source's, as detach())
    ours.scratch = minitx.ones(3)  # a plain tensor for a buffer stays a buffer, still not persistent
    assert list(ours.state_dict()) == ["saved"] and ours.scratch.numpy().tolist() == [1, 1, 1]
    empty = nn.Buffer()
    assert empty.shape == (0,) and empty.dtype == np.float32 and nn.Buffer(minitx.zeros(1)).persistent


def test_a_buffer_without_data_takes_the_default_dtype_as_pytorchs():
    minitx.set_default_dtype(minitx.float64)
    try:
        assert nn.Buffer().dtype == np.float64  # (torch.nn.Buffer() is torch.empty(0): the default dtype)
    finally:
        minitx.set_default_dtype(minitx.float32)


def test_a_buffer_is_refused_where_pytorch_refuses_it():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign a Buffer as parameter 'weight'"):
        layer.weight = nn.Buffer(minitx.zeros(2, 2))
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        layer.forward = nn.Buffer(minitx.zeros(1))
    with pytest.raises(TypeError, match="Buffer: persistent must be True or False"):
        nn.Buffer(minitx.zeros(1), persistent=0)
