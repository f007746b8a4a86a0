"""Module and layer edges a sweep against torch.nn found: what the containers accept, what a
registered name may be reassigned to, empty and non-persistent buffers, modules registered twice,
zero-size Flatten/Unflatten, container slices, constructor arguments, LayerNorm's shapes and
keywords, and PyTorch's defaults and flags (Dropout's p, inplace); then the containers edited as
lists and dicts (renumbering, indices out of range, ParameterDict) and the tree walked with
recurse, prefix and remove_duplicate beside a tied weight. PyTorch's behaviour is checked where it
has one; those tests, or their PyTorch part, skip without PyTorch."""
import contextlib
import copy
import itertools
import re
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn
from minitx.nn import Module, Parameter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402


@pytest.fixture
def torch():
    return import_torch()


def _copy_weights(ours, theirs, torch):
    """theirs takes ours' parameter values (the same names), so outputs can be compared."""
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.tensor(dict(ours.named_parameters())[name].numpy()))


# ---------------------------------------------------------------- A: what the containers accept
def test_sequential_takes_an_ordered_dict_and_names_its_children_by_the_keys(torch):
    ours = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    theirs = torch.nn.Sequential(OrderedDict([("fc", torch.nn.Linear(2, 3)), ("act", torch.nn.ReLU())]))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["fc.weight", "fc.bias"]
    assert len(ours) == 2 and ours[0] is ours.fc
    _copy_weights(ours, theirs, torch)
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose(ours(minitx.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("build, container, item", [
    (lambda: nn.Sequential(nn.Linear(2, 2), np.tanh), "Sequential", "'1'.*ufunc"),
    (lambda: nn.ModuleList().append(3), "ModuleList", "'0'.*int"),
    (lambda: nn.ModuleList([nn.ReLU(), "relu"]), "ModuleList", "'1'.*str"),
    (lambda: nn.Sequential(OrderedDict(head=minitx.zeros(2))), "Sequential", "'head'.*Tensor"),
], ids=["sequential-ufunc", "modulelist-append-int", "modulelist-str", "sequential-dict-tensor"])
def test_containers_refuse_what_is_not_a_module_naming_the_container_and_the_item(build, container, item):
    with pytest.raises(TypeError, match=rf"{container}: {item}.*\(.*\)"):
        build()
    layers = nn.ModuleList()
    with pytest.raises(TypeError):
        layers.append(3)
    assert len(layers) == 0


def test_torch_refuses_the_same_container_items(torch):
    for build in (lambda: torch.nn.Sequential(torch.nn.Linear(2, 2), np.tanh),
                  lambda: torch.nn.ModuleList().append(3)):
        with pytest.raises(TypeError):
            build()


# ---------------------------------------------------------------- E: reassigning a registered name
def test_a_plain_tensor_assigned_to_a_parameter_is_refused_and_the_parameter_stays(torch):
    layer = nn.Linear(2, 2)
    weight = layer.weight
    with pytest.raises(TypeError, match=r"Linear: cannot assign a Tensor as parameter 'weight' "
                                        r"\(a Parameter or None expected\)"):
        layer.weight = minitx.tensor(np.ones((2, 2)))
    assert layer.weight is weight and [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    with pytest.raises(TypeError, match="cannot assign 'torch.DoubleTensor' as parameter 'weight'"):
        torch.nn.Linear(2, 2).weight = torch.ones(2, 2, dtype=torch.float64)
    layer.weight = Parameter(np.ones((2, 2), np.float32))  # a Parameter replaces it
    assert list(layer.parameters())[0] is layer.weight and layer.weight.numpy().sum() == 4


def test_none_empties_a_parameter_slot_as_in_pytorch(torch):
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    _copy_weights(ours, theirs, torch)
    ours.bias, theirs.bias = None, None
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(minitx.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(TypeError, match="parameter 'bias'"):  # the slot stays a parameter's
        ours.bias = minitx.zeros(2)
    with pytest.raises(TypeError, match="parameter 'bias'"):
        theirs.bias = torch.zeros(2)
    ours.bias = Parameter(np.zeros(2, np.float32))
    assert list(ours.state_dict()) == ["weight", "bias"]
    assert list(nn.Linear(3, 2, bias=False).state_dict()) == ["weight"]
    with pytest.raises(TypeError, match="parameter 'bias'"):  # bias=False registers the empty slot
        nn.Linear(3, 2, bias=False).bias = minitx.zeros(2)


def test_a_child_or_buffer_takes_only_its_own_kind_or_none(torch):
    model = Module()
    model.child = nn.ReLU()
    model.register_buffer("steps", minitx.zeros(2))
    with pytest.raises(TypeError, match=r"Module: cannot assign a int as child module 'child' \(a Module or None"):
        model.child = 3
    with pytest.raises(TypeError, match=r"Module: cannot assign a list as buffer 'steps' \(a Tensor or None"):
        model.steps = [1, 2]
    assert list(model.children()) == [model.child] and list(model.state_dict()) == ["steps"]
    theirs = torch.nn.Module()
    theirs.child = torch.nn.ReLU()
    theirs.register_buffer("steps", torch.zeros(2))
    for name, value in (("child", 3), ("steps", [1, 2])):
        with pytest.raises(TypeError):
            setattr(theirs, name, value)


# ---------------------------------------------------------------- F: names that clash or hold a dot
@pytest.mark.parametrize("key, error, match", [
    ("keys", KeyError, "attribute 'keys' already exists"),
    ("to", KeyError, "attribute 'to' already exists"),
    ("training", KeyError, "attribute 'training' already exists"),
    ("forward", KeyError, "attribute 'forward' already exists"),
    ("a.b", KeyError, "module name cannot contain a dot, got 'a.b'"),
    ("", KeyError, "module name cannot be empty"),
    (3, TypeError, "must be a string, got int"),
])
def test_module_dict_refuses_names_that_clash_hold_a_dot_or_are_no_string(key, error, match, torch):
    with pytest.raises(error, match=f"ModuleDict: .*{match}"):
        nn.ModuleDict({key: nn.Linear(2, 2)})
    heads = nn.ModuleDict({"en": nn.Linear(2, 2)})
    with pytest.raises(error):
        heads[key] = nn.Linear(2, 2)
    assert list(heads.keys()) == ["en"] and heads.training is True
    with pytest.raises(error):
        torch.nn.ModuleDict({key: torch.nn.Linear(2, 2)})


@pytest.mark.parametrize("register", ["register_buffer", "register_parameter", "add_module"])
@pytest.mark.parametrize("name, error", [("a.b", KeyError), ("", KeyError), ("eval", KeyError), (1, TypeError)])
def test_registering_under_a_bad_name_raises_as_in_pytorch(register, name, error, torch):
    value = {"register_buffer": minitx.zeros(1), "register_parameter": Parameter(np.zeros(1)),
             "add_module": nn.ReLU()}[register]
    torch_value = {"register_buffer": torch.zeros(1), "register_parameter": torch.nn.Parameter(torch.zeros(1)),
                   "add_module": torch.nn.ReLU()}[register]
    with pytest.raises(error):
        getattr(Module(), register)(name, value)
    with pytest.raises(error):
        getattr(torch.nn.Module(), register)(name, torch_value)


# ---------------------------------------------------------------- H: a module registered twice
def _shared(mod):
    root = mod.Module()
    root.l = mod.Linear(2, 2)
    root.l2 = root.l
    root.seq = mod.Sequential(root.l, mod.ReLU())
    return root


def test_a_module_registered_twice_is_listed_and_visited_once_as_in_pytorch(torch):
    ours, theirs = _shared(nn), _shared(torch.nn)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()] == ["", "l", "seq", "seq.1"]
    assert len(list(ours.children())) == len(list(theirs.children())) == 2
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()] == ["l", "seq"]
    assert len(list(ours.modules())) == 4
    ours_seen, theirs_seen = [], []
    ours.apply(lambda m: ours_seen.append(type(m).__name__))
    theirs.apply(lambda m: theirs_seen.append(type(m).__name__))
    assert ours_seen == theirs_seen  # PyTorch's apply: once per parent, through children()
    assert [n for n, _ in ours.named_modules(remove_duplicate=False)] == [
        n for n, _ in theirs.named_modules(remove_duplicate=False)]
    assert [n for n, _ in ours.named_parameters()] == ["l.weight", "l.bias"]  # parameters() as before


def test_buffers_of_a_module_registered_twice_keep_every_state_dict_key():
    """Checkpoints written before modules were deduplicated name a shared module's buffers under
    each of its names: state_dict keeps those keys, so they still load strictly."""
    model = Module()
    model.bn = nn.BatchNorm1d(3)
    model.again = model.bn
    keys = ["bn.weight", "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
            "again.running_mean", "again.running_var", "again.num_batches_tracked"]
    assert list(model.state_dict()) == keys
    assert [n for n, _ in model.named_buffers()] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    state = {k: np.full(v.shape, 2, v.dtype) for k, v in model.state_dict().items()}
    assert model.load_state_dict(state) == ([], [])
    np.testing.assert_array_equal(model.bn.running_mean.numpy(), 2)
    assert model.to(dtype="float64").bn.running_var.dtype == np.float64


# ---------------------------------------------------------------- I: empty, odd and non-persistent buffers
def test_a_none_buffer_is_an_empty_slot_that_state_dict_and_to_skip(torch):
    ours, theirs = Module(), torch.nn.Module()
    ours.register_buffer("mask", None)
    theirs.register_buffer("mask", None)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    assert ours.to(dtype="float64") is ours and list(ours.named_buffers()) == []
    ours.mask = minitx.ones(2)  # filled later, it is a saved buffer
    theirs.mask = torch.ones(2)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["mask"]


def test_register_buffer_refuses_what_is_not_a_tensor(torch):
    with pytest.raises(TypeError, match=r"Module: cannot register a list as buffer 'x' \(a Tensor or None"):
        Module().register_buffer("x", [1.0, 2.0])
    with pytest.raises(TypeError):
        torch.nn.Module().register_buffer("x", [1.0, 2.0])


def test_a_non_persistent_buffer_moves_but_is_not_saved_or_expected(torch):
    ours, theirs = Module(), torch.nn.Module()
    for m, t in ((ours, minitx.ones(2)), (theirs, torch.ones(2))):
        m.register_buffer("kept", t * 1)
        m.register_buffer("table", t * 3, persistent=False)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["kept"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()] == ["kept", "table"]
    assert ours.to(dtype="float64").table.dtype == np.float64
    assert ours.load_state_dict({"kept": np.zeros(2)}) == ([], [])
    ours.table = minitx.zeros(3)  # a new value keeps the buffer non-persistent
    assert list(ours.state_dict()) == ["kept"]


# ---------------------------------------------------------------- J: zero-size Flatten and Unflatten
@pytest.mark.parametrize("ours, theirs, shape", [
    (lambda: nn.Flatten(), lambda t: t.nn.Flatten(), (0, 4)),
    (lambda: nn.Flatten(), lambda t: t.nn.Flatten(), (0, 4, 3)),
    (lambda: nn.Flatten(0, 1), lambda t: t.nn.Flatten(0, 1), (2, 0, 3)),
    (lambda: nn.Unflatten(-1, (2, -1)), lambda t: t.nn.Unflatten(-1, (2, -1)), (0, 4)),
    (lambda: nn.Unflatten(1, (-1, 3)), lambda t: t.nn.Unflatten(1, (-1, 3)), (0, 6, 2)),
    (lambda: nn.Unflatten(1, (0, 5)), lambda t: t.nn.Unflatten(1, (0, 5)), (2, 0)),
])
def test_flatten_and_unflatten_count_their_sizes_also_with_no_elements(ours, theirs, shape, torch):
    x = np.zeros(shape, np.float32)
    got = ours()(minitx.tensor(x, requires_grad=True))
    assert got.shape == tuple(theirs(torch)(torch.tensor(x)).shape)
    got.sum().backward()


@pytest.mark.parametrize("ours, theirs, shape", [
    (lambda: nn.Flatten(), lambda t: t.nn.Flatten(), (3,)),  # (one sample: no axis 1 to start at)
    (lambda: nn.Flatten(), lambda t: t.nn.Flatten(), ()),
    (lambda: nn.Flatten(5), lambda t: t.nn.Flatten(5), (3, 4)),
    (lambda: nn.Flatten(0, -4), lambda t: t.nn.Flatten(0, -4), (3, 4)),
    (lambda: nn.Unflatten(5, (2, 2)), lambda t: t.nn.Unflatten(5, (2, 2)), (3, 4)),
    (lambda: nn.Unflatten(-3, (3, 1)), lambda t: t.nn.Unflatten(-3, (3, 1)), (3, 4)),
])
def test_flatten_and_unflatten_refuse_an_axis_out_of_range_naming_the_layer(ours, theirs, shape, torch):
    """Taken modulo the rank, such an axis named another: Flatten() of a 1-d input flattened
    nothing, Unflatten(5, ...) of a matrix split its axis 1."""
    layer = ours()
    with pytest.raises(IndexError, match=rf"{type(layer).__name__}: axis -?\d is out of range for a tensor of shape"):
        layer(minitx.zeros(*shape))
    with pytest.raises(IndexError, match="Dimension out of range"):
        theirs(torch)(torch.zeros(shape))


@pytest.mark.parametrize("method, args", [("unflatten", (5, (2, 2))), ("unflatten", (-3, (3, 1))), ("flatten", (0, 2))])
def test_tensor_methods_refuse_an_axis_out_of_range_as_the_layers(method, args, torch):
    """The layers' shapes come from the methods' (one rule): unflatten took its axis modulo the rank too."""
    with pytest.raises(IndexError, match=rf"{method}: axis -?\d is out of range for a tensor of shape \(3, 4\)"):
        getattr(minitx.zeros(3, 4), method)(*args)
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(torch.zeros(3, 4), method)(*args)


def test_flatten_takes_pytorchs_axes_of_a_0d_input(torch):
    assert nn.Flatten(0)(minitx.tensor(2.0)).shape == tuple(torch.nn.Flatten(0)(torch.tensor(2.0)).shape) == (1,)
    assert nn.Flatten(-1, 0)(minitx.zeros(3)).shape == (3,)


def test_unflatten_sizes_that_do_not_split_the_axis_name_the_layer():
    with pytest.raises(ValueError, match=r"Unflatten: sizes \(3, 3\) do not split axis 1 of length 4"):
        nn.Unflatten(1, (3, 3))(minitx.zeros(3, 4))
    with pytest.raises(ValueError, match="Unflatten: sizes"):
        nn.Unflatten(1, (-1, -1))(minitx.zeros(3, 4))
    with pytest.raises(ValueError, match=r"Unflatten: sizes must be whole numbers"):
        nn.Unflatten(1, (2.0, 2))


# ---------------------------------------------------------------- K: slices and empty containers
def test_slices_of_containers_are_containers_as_in_pytorch(torch):
    def build(lib):
        return (lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1)),
                lib.ModuleList([lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1)]))

    for ours, theirs in zip(build(nn), build(torch.nn)):
        part, torch_part = ours[1:3], theirs[1:3]
        assert type(part) is type(ours) and type(torch_part).__name__ == type(ours).__name__
        assert [n for n, _ in part.named_parameters()] == [n for n, _ in torch_part.named_parameters()]
        assert part[1] is ours[2]
    x = minitx.randn(4, 3)
    np.testing.assert_array_equal(build(nn)[0][::2][1](x).shape, (4, 1))
    params = nn.ParameterList([Parameter(np.full(2, k, np.float32)) for k in range(3)])
    torch_params = torch.nn.ParameterList([torch.nn.Parameter(torch.full((2,), float(k))) for k in range(3)])
    assert type(params[1:]) is nn.ParameterList
    assert list(params[1:].state_dict()) == list(torch_params[1:].state_dict()) == ["0", "1"]
    assert params[1:][0] is params[1]


def test_empty_containers_from_none(torch):
    assert len(nn.ModuleList(None)) == len(torch.nn.ModuleList(None)) == 0
    assert len(nn.ParameterList(None)) == len(torch.nn.ParameterList(None)) == 0


# ---------------------------------------------------------------- L: constructor arguments
@pytest.mark.parametrize("build, error, match", [
    (lambda: nn.Linear(-1, 3), ValueError, "Linear: in_features must be a whole number >= 0, got -1"),
    (lambda: nn.Linear(3, -2), ValueError, "Linear: out_features must be a whole number >= 0, got -2"),
    (lambda: nn.Linear(2.5, 3), TypeError, r"Linear: in_features must be a whole number >= 0, got 2\.5 \(float\)"),
    (lambda: nn.Linear("3", 2), TypeError, r"Linear: in_features must be a whole number >= 0, got '3' \(str\)"),
    (lambda: nn.Linear(2, 2, dropout=1.0), ValueError, r"Linear: dropout must be in \[0, 1\), got 1\.0"),
    (lambda: nn.Embedding(-1, 3), ValueError, "Embedding: num_embeddings must be a whole number >= 0, got -1"),
    (lambda: nn.Embedding(4, None), TypeError, "Embedding: embedding_dim must be a whole number >= 0, got None"),
    (lambda: nn.BatchNorm1d(-1), ValueError, "BatchNorm1d: num_features must be a whole number >= 0, got -1"),
    (lambda: nn.BatchNorm2d(3.0), TypeError, r"BatchNorm2d: num_features must be a whole number >= 0, got 3\.0"),
    (lambda: nn.GroupNorm(0, 4), ValueError, "GroupNorm: num_groups must be a whole number >= 1, got 0"),
    (lambda: nn.GroupNorm(-2, 4), ValueError, "GroupNorm: num_groups must be a whole number >= 1, got -2"),
    (lambda: nn.GroupNorm(2, -4), ValueError, "GroupNorm: num_channels must be a whole number >= 0, got -4"),
    (lambda: nn.Dropout("0.5"), TypeError, r"Dropout: p must be a number in \[0, 1\), got '0\.5' \(str\)"),
    (lambda: nn.Dropout(None), TypeError, r"Dropout: p must be a number in \[0, 1\), got None \(NoneType\)"),
    (lambda: nn.Dropout(-0.1), ValueError, r"Dropout: p must be in \[0, 1\), got -0\.1"),
    (lambda: nn.LayerNorm(-4), ValueError, "LayerNorm: normalized_shape must be a whole number >= 0, got -4"),
    (lambda: nn.LayerNorm("4"), TypeError, "LayerNorm: normalized_shape must be an int or a non-empty tuple"),
    (lambda: nn.LayerNorm(()), TypeError, "LayerNorm: normalized_shape must be an int or a non-empty tuple"),
    (lambda: nn.RMSNorm((3, 2.0)), TypeError, r"RMSNorm: normalized_shape must be a whole number >= 0, got 2\.0"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 else None)
def test_constructor_arguments_are_checked_naming_layer_argument_and_value(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_sizes_may_be_numpy_integers():
    layer = nn.Linear(np.int64(3), np.int32(2))
    assert (layer.in_features, layer.out_features) == (3, 2) and type(layer.in_features) is int


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("bias", [True, False])
def test_linear_with_no_inputs_outputs_its_bias_as_pytorch(bias, torch):
    ours, theirs = nn.Linear(0, 3, bias=bias), torch.nn.Linear(0, 3, bias=bias)
    assert ours.weight.shape == tuple(theirs.weight.shape) == (3, 0)
    for shape in [(4, 0), (2, 3, 0), (0,)]:
        x = np.zeros(shape, np.float32)
        got, want = ours(minitx.tensor(x)), theirs(torch.tensor(x)).detach().numpy()
        np.testing.assert_array_equal(got.numpy(), want)  # both zeros: a bias drawn from U(0, 0)


# ---------------------------------------------------------------- M: LayerNorm's shapes and keywords
def _norm_pair(ours, theirs, shape, torch):
    rng = np.random.default_rng(2)
    _copy_weights(ours, theirs, torch)
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):  # not ones and zeros
        values = rng.standard_normal(p.shape)
        p.data = values.astype(p.dtype)
        with torch.no_grad():
            q.copy_(torch.tensor(values))
    x = rng.standard_normal(shape)
    xs, xt = minitx.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ys, yt = ours.to(dtype="float64")(xs), theirs.double()(xt)
    dy = rng.standard_normal(ys.shape)
    ys.backward(dy)
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(ys.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)
    assert {k: v.shape for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}


@pytest.mark.parametrize("shape_arg, x_shape", [(4, (2, 3, 4)), ((4,), (2, 3, 4)), ([4], (5, 4)),
                                                 ((3, 4), (2, 3, 4)), ([2, 3, 4], (2, 3, 4)), ((3, 4), (0, 3, 4))])
@pytest.mark.parametrize("keywords", [{}, {"bias": False}, {"elementwise_affine": False}],
                         ids=["affine", "no-bias", "no-affine"])
def test_layer_norm_takes_pytorchs_shapes_and_keywords(shape_arg, x_shape, keywords, torch):
    _norm_pair(nn.LayerNorm(shape_arg, **keywords), torch.nn.LayerNorm(shape_arg, **keywords), x_shape, torch)


@pytest.mark.parametrize("shape_arg, x_shape", [((4,), (2, 3, 4)), ((3, 4), (2, 3, 4))])
def test_rms_norm_over_trailing_axes_as_pytorch(shape_arg, x_shape, torch):
    _norm_pair(nn.RMSNorm(shape_arg, eps=1e-6), torch.nn.RMSNorm(shape_arg, eps=1e-6), x_shape, torch)


def test_a_norm_refuses_an_input_of_other_trailing_axes():
    for layer in (nn.LayerNorm((3, 4)), nn.LayerNorm(4, elementwise_affine=False), nn.RMSNorm((3, 4))):
        with pytest.raises(ValueError, match=rf"{type(layer).__name__}: expected an input whose last axes are"):
            layer(minitx.zeros(2, 4, 3))


def test_layer_norm_keeps_its_settings_and_checkpoints():
    assert nn.LayerNorm(4).dim == 4 and nn.LayerNorm((4,)).normalized_shape == (4,)
    assert repr(nn.LayerNorm(4)) == "LayerNorm(4, eps=1e-05)"
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None and nn.LayerNorm(4, bias=False).bias is None
    assert list(nn.LayerNorm(4).state_dict()) == ["weight", "bias"]


# ---------------------------------------------------------------- N: PyTorch's defaults and flags
def test_dropout_defaults_to_pytorchs_p(torch):
    assert nn.Dropout().p == torch.nn.Dropout().p == 0.5


@pytest.mark.parametrize("name", ["ReLU", "SiLU", "Dropout"])
def test_inplace_writes_into_the_input_as_pytorchs(name, torch):
    x = np.random.default_rng(3).standard_normal((4, 5))
    ours, theirs = getattr(nn, name)(inplace=True), getattr(torch.nn, name)(inplace=True)
    ours.eval(), theirs.eval()
    xs, txs = minitx.tensor(x), torch.tensor(x.copy())
    assert ours(xs) is xs and theirs(txs) is txs
    np.testing.assert_allclose(xs.numpy(), txs.numpy(), rtol=1e-12)
    assert "inplace=True" in repr(ours) and "inplace" not in repr(getattr(nn, name)())


@pytest.mark.parametrize("build, match", [
    (lambda: nn.Tanh(inplace=True), r"Tanh.__init__\(\) got an unexpected keyword argument 'inplace'"),
    (lambda: nn.Sigmoid(1), r"Sigmoid.__init__\(\) got an unexpected 1 positional argument"),
])
def test_a_layer_without_arguments_names_itself_when_given_some(build, match):
    with pytest.raises(TypeError, match=match):
        build()


def test_a_module_with_new_registries_still_copies():
    model = nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2, bias=False))
    model.register_buffer("table", minitx.ones(2), persistent=False)
    twin = copy.deepcopy(model)
    assert list(twin.state_dict()) == list(model.state_dict()) and twin[0].weight is not model[0].weight
    with pytest.raises(TypeError, match="parameter 'bias'"):
        twin[1].bias = minitx.zeros(2)



# ---------------------------------------------------------------- O: editing Sequential and ModuleList
def _list_of(lib, kind, modules):
    return lib.Sequential(*modules) if kind == "Sequential" else lib.ModuleList(modules)


def _edited(lib, kind):
    """The same edits on a Sequential or ModuleList of ``lib``; after each, the item types and the
    state_dict keys (which show the renumbering)."""
    layers = _list_of(lib, kind, [lib.Linear(2, 3), lib.ReLU()])
    seen = []

    def note(*extra):
        seen.append(([type(m).__name__ for m in layers], list(layers.state_dict()), *extra))

    layers.append(lib.Linear(3, 4))
    layers.extend([lib.Tanh(), lib.Linear(4, 2)])
    note()
    layers.insert(1, lib.Identity())
    layers.insert(len(layers), lib.Sigmoid())
    note()
    layers[0] = lib.Linear(2, 5)
    layers[-3] = lib.GELU()
    note(layers[0].weight.shape[0])
    del layers[1]
    note()
    del layers[-1]
    note()
    del layers[0:4:2]
    note()
    note(type(layers.pop(0)).__name__)
    note([type(m).__name__ for m in layers.pop(slice(0, 2))])
    return seen


@pytest.mark.parametrize("kind", ["Sequential", "ModuleList"])
def test_list_containers_append_insert_set_delete_and_pop_renumbering_as_pytorch(kind):
    ours = _edited(nn, kind)
    assert ours[3] == (["Linear", "ReLU", "Linear", "GELU", "Linear", "Sigmoid"],
                       ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"])
    assert ours[5] == (["ReLU", "GELU", "Linear"], ["2.weight", "2.bias"])
    assert ours[-1] == ([], [], ["GELU", "Linear"])
    layers = _list_of(nn, kind, [nn.ReLU(), nn.Tanh(), nn.Linear(2, 2)])
    del layers[0]  # the attributes follow the renumbering too
    assert sorted(n for n in vars(layers) if n.isdigit()) == ["0", "1"] and vars(layers)["1"] is layers[1]
    assert layers.load_state_dict(layers.state_dict()) == ([], [])
    assert ours == _edited(import_torch().nn, kind)


def test_insert_counts_a_negative_index_from_the_end_and_refuses_one_out_of_range(torch):
    """ModuleList.insert takes Sequential.insert's rule: PyTorch's ModuleList.insert does not check
    its index (a negative one fails halfway with a KeyError)."""
    for lib in (nn, torch.nn):
        layers = lib.Sequential(lib.ReLU(), lib.Tanh())
        layers.insert(-1, lib.Identity())
        assert [type(m).__name__ for m in layers] == ["ReLU", "Identity", "Tanh"]
        for index in (4, -4):
            with pytest.raises(IndexError):
                layers.insert(index, lib.ReLU())
        assert len(layers) == 3
    for kind in ("Sequential", "ModuleList"):
        layers = _list_of(nn, kind, [nn.ReLU(), nn.Tanh()])
        layers.insert(-2, nn.Identity())
        assert [type(m).__name__ for m in layers] == ["Identity", "ReLU", "Tanh"]
        with pytest.raises(IndexError, match=rf"{kind}: index -4 is out of range for length 3 \(expected -3 <= "
                                             r"index <= 3\)"):
            layers.insert(-4, nn.ReLU())
        with pytest.raises(TypeError, match=rf"{kind}: '1' must be a Module, got int \(3\)"):
            layers.insert(1, 3)
        assert len(layers) == 3


def test_insert_into_a_sequential_of_named_modules_is_refused_keeping_their_names(torch):
    """Numbering them would change their state_dict keys; PyTorch's insert fails there too (KeyError)."""
    ours = nn.Sequential(OrderedDict([("enc", nn.Linear(2, 2)), ("dec", nn.Linear(2, 2))]))
    with pytest.raises(ValueError, match=r"Sequential.insert: the modules are named \['enc', 'dec'\].*state_dict"):
        ours.insert(1, nn.ReLU())
    assert list(ours.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    theirs = torch.nn.Sequential(OrderedDict([("enc", torch.nn.Linear(2, 2)), ("dec", torch.nn.Linear(2, 2))]))
    with pytest.raises(KeyError):
        theirs.insert(1, torch.nn.ReLU())


def test_module_list_plus_equals_extends_as_pytorch(torch):
    for lib in (nn, torch.nn):
        layers = lib.ModuleList([lib.Linear(2, 2)])
        same = layers
        layers += [lib.ReLU(), lib.Linear(2, 1)]
        layers += lib.Sequential(lib.Tanh())
        assert layers is same and list(layers.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
        assert [type(m).__name__ for m in layers] == ["Linear", "ReLU", "Linear", "Tanh"]
        with pytest.raises(TypeError):
            layers.extend(3)
    with pytest.raises(TypeError, match="ModuleList.extend: expected an iterable of modules, got int"):
        nn.ModuleList().extend(3)
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()]).extend(nn.ModuleList([nn.Identity()]))
    layers.extend(layers)  # its own items, once more (PyTorch's extend fails: its dict grows as it is read)
    assert [type(m).__name__ for m in layers] == ["ReLU", "Tanh", "Identity"] * 2


def _three(lib, kind, zeros):
    if kind == "ParameterList":
        return lib.ParameterList([lib.Parameter(zeros(2)) for _ in range(3)])
    return _list_of(lib, kind, [lib.ReLU(), lib.Tanh(), lib.Identity()])


def _index_edits(kind, index):
    edits = [lambda c: c[index], lambda c: c.__setitem__(index, c[0])]
    if kind != "ParameterList":
        edits += [lambda c: c.__delitem__(index), lambda c: c.pop(index)]
    return edits


@pytest.mark.parametrize("kind", ["Sequential", "ModuleList", "ParameterList"])
@pytest.mark.parametrize("index", [3, -4, 10])
def test_an_index_out_of_range_raises_index_error_naming_the_container_its_length_and_the_index(kind, index):
    layers = _three(nn, kind, minitx.zeros)
    assert layers[-1] is layers[2] and layers[-3] is layers[0]
    for edit in _index_edits(kind, index):
        with pytest.raises(IndexError, match=rf"{kind}: index {index} is out of range for length 3 \(expected -3 "
                                             r"<= index < 3\)"):
            edit(layers)
    assert len(layers) == 3
    with pytest.raises(TypeError, match=rf"{kind}: an index must be an integer, got float 1.0"):
        layers[1.0]
    torch = import_torch()
    theirs = _three(torch.nn, kind, torch.zeros)
    assert theirs[-1] is theirs[2]
    for edit in _index_edits(kind, index):
        with pytest.raises(IndexError):
            edit(theirs)
    with pytest.raises(TypeError):
        theirs[1.0]


# ---------------------------------------------------------------- P: editing ModuleDict
def _dict_edited(lib):
    heads = lib.ModuleDict([("de", lib.Linear(2, 2)), ("en", lib.ReLU())])
    seen = []

    def note(*extra):
        seen.append((list(heads), list(heads.state_dict()), *extra))

    heads.update({"fr": lib.Linear(2, 3), "de": lib.Tanh()})  # "de" replaced in its place
    note()
    heads.update([("it", lib.Identity())])
    heads.update(lib.ModuleDict({"es": lib.Linear(3, 3)}))
    note()
    note(type(heads.pop("en")).__name__)
    del heads["fr"]
    note("fr" in heads, len(heads))
    heads["fr"] = lib.Linear(1, 1)  # a deleted name is free again
    note()
    heads.clear()
    note(len(heads), [name for name, _ in heads.named_modules()])
    return seen


def test_module_dict_update_pop_delete_and_clear_as_pytorch():
    ours = _dict_edited(nn)
    assert ours[0] == (["de", "en", "fr"], ["fr.weight", "fr.bias"])
    assert ours[-1] == ([], [], 0, [""])
    heads = nn.ModuleDict({"de": nn.ReLU(), "en": nn.Tanh()})
    del heads["de"]
    heads.clear()
    assert not hasattr(heads, "de") and not hasattr(heads, "en") and heads.training is True
    assert ours == _dict_edited(import_torch().nn)


@pytest.mark.parametrize("items, error, match", [
    (3, TypeError, r"expected an iterable of \(name, value\) pairs or a mapping, got int"),
    ([("a",)], ValueError, r"element #0 has length 1; expected a \(name, value\) pair"),
    ([3], TypeError, r"element #0 is a int; expected a \(name, value\) pair"),
])
def test_module_dict_update_refuses_what_is_not_pairs_naming_the_element(items, error, match):
    with pytest.raises(error, match=f"ModuleDict.update: {match}"):
        nn.ModuleDict().update(items)
    torch = import_torch()
    with pytest.raises(error):
        torch.nn.ModuleDict().update(items)


@pytest.mark.parametrize("name", ["xx", "training", "keys"])
def test_deleting_a_name_a_dict_container_does_not_hold_is_a_key_error(name):
    for heads in (nn.ModuleDict({"en": nn.ReLU()}), nn.ParameterDict({"en": Parameter(np.zeros(1))})):
        with pytest.raises(KeyError, match=name):
            del heads[name]
        with pytest.raises(KeyError):
            heads.pop(name)
        assert list(heads) == ["en"] and heads.training is True and callable(heads.keys)
    torch = import_torch()
    with pytest.raises(KeyError):
        del torch.nn.ModuleDict({"en": torch.nn.ReLU()})[name]


# ---------------------------------------------------------------- Q: ParameterDict and ParameterList
def _parameter_dicts(lib, ones):
    def p(n):
        return lib.Parameter(ones(n))

    return {"plain dict": lib.ParameterDict({"w": p(1), "b": p(2), "a": p(3)}),
            "OrderedDict": lib.ParameterDict(OrderedDict([("w", p(1)), ("b", p(2))])),
            "pairs": lib.ParameterDict([("w", p(1)), ("b", p(2))])}


def test_parameter_dict_takes_a_plain_dict_in_sorted_order_and_the_others_in_theirs_as_pytorch():
    ours = {kind: (list(d), list(d.state_dict())) for kind, d in _parameter_dicts(nn, minitx.ones).items()}
    assert ours == {"plain dict": (["a", "b", "w"],) * 2, "OrderedDict": (["w", "b"],) * 2,
                    "pairs": (["w", "b"],) * 2}
    torch = import_torch()
    assert ours == {kind: (list(d), list(d.state_dict())) for kind, d in _parameter_dicts(torch.nn, torch.ones).items()}


def _parameter_dict_edited(lib, ones):
    model = lib.Module()
    model.scales = lib.ParameterDict(OrderedDict([("de", lib.Parameter(ones(2))), ("en", lib.Parameter(ones(3)))]))
    scales = model.scales
    seen = []

    def note(*extra):
        seen.append((list(scales), list(model.state_dict()), [n for n, _ in model.named_parameters()], *extra))

    scales["fr"] = lib.Parameter(ones(4))
    scales["de"] = lib.Parameter(ones(5))  # replaced in its place
    note(tuple(scales["de"].shape), "fr" in scales, "xx" in scales, len(scales))
    note([k for k, _ in scales.items()], list(scales.keys()), [tuple(v.shape) for v in scales.values()])
    scales.update(OrderedDict([("it", lib.Parameter(ones(6))), ("en", lib.Parameter(ones(7)))]))
    note([tuple(v.shape) for v in scales.values()])
    note(tuple(scales.pop("en").shape))
    del scales["fr"]
    note()
    scales["fr"] = lib.Parameter(ones(1))  # a deleted name is free again
    note(scales.get("xx") is None, tuple(scales.get("it").shape))
    scales.clear()
    note(len(scales))
    return seen


def test_parameter_dict_edits_as_pytorch_and_its_parameters_reach_the_optimizer():
    from minitx import optim

    ours = _parameter_dict_edited(nn, minitx.ones)
    assert ours[0][:3] == (["de", "en", "fr"], ["scales.de", "scales.en", "scales.fr"],
                           ["scales.de", "scales.en", "scales.fr"])
    assert ours[-1] == ([], [], [], 0)
    model = Module()
    model.scales = nn.ParameterDict({"a": Parameter(np.ones(2, np.float32))})
    model.scales["a"].sum().backward()
    optim.SGD(model.parameters(), lr=0.5).step()
    np.testing.assert_array_equal(model.scales["a"].numpy(), [0.5, 0.5])
    assert model.load_state_dict({"scales.a": np.zeros(2)}) == ([], [])
    torch = import_torch()
    assert ours == _parameter_dict_edited(torch.nn, torch.ones)


@pytest.mark.parametrize("key, error, match", [
    ("keys", KeyError, "attribute 'keys' already exists"),
    ("training", KeyError, "attribute 'training' already exists"),
    ("a.b", KeyError, "parameter name cannot contain a dot, got 'a.b'"),
    ("", KeyError, "parameter name cannot be empty"),
    (3, TypeError, "must be a string, got int"),
])
def test_parameter_dict_refuses_names_as_module_dict_does(key, error, match):
    """PyTorch's ParameterDict takes 'training' (dropping the module's mode flag); its ModuleDict
    refuses it, as both containers do here."""
    with pytest.raises(error, match=f"ParameterDict: .*{match}"):
        nn.ParameterDict({key: Parameter(np.zeros(1))})
    scales = nn.ParameterDict({"en": Parameter(np.zeros(1))})
    with pytest.raises(error):
        scales[key] = Parameter(np.zeros(1))
    assert list(scales) == ["en"] and scales.training is True
    torch = import_torch()
    with pytest.raises(error) if key != "training" else contextlib.nullcontext():
        torch.nn.ParameterDict({key: torch.nn.Parameter(torch.zeros(1))})


@pytest.mark.parametrize("value, got", [(np.zeros(2), "ndarray"), (minitx.zeros(2), "Tensor"), (None, "NoneType"),
                                        (3, "int")])
def test_parameter_containers_refuse_what_is_not_a_parameter_naming_what_they_got(value, got):
    """PyTorch wraps a plain tensor in a Parameter and keeps anything else as a plain attribute;
    here the caller wraps it, and is told so."""
    with pytest.raises(TypeError, match=rf"ParameterDict: 'w' must be a Parameter, got {got}; wrap the tensor in "
                                        r"nn.Parameter"):
        nn.ParameterDict({"w": value})
    scales = nn.ParameterList([Parameter(np.zeros(2))])
    for edit in (lambda: scales.append(value), lambda: scales.extend([value]), lambda: scales.__setitem__(0, value)):
        with pytest.raises(TypeError, match=rf"ParameterList: '\d' must be a Parameter, got {got}"):
            edit()
    assert len(scales) == 1 and isinstance(scales[0], Parameter)


def _parameter_list_edited(lib, zeros):
    scales = lib.ParameterList([lib.Parameter(zeros(1))])
    scales.extend([lib.Parameter(zeros(2)), lib.Parameter(zeros(3))])
    scales.extend(scales[:1])
    scales[-1] = lib.Parameter(zeros(4))
    scales[0] = lib.Parameter(zeros(5))
    return [tuple(p.shape) for p in scales], list(scales.state_dict())


def test_parameter_list_extends_and_sets_as_pytorch():
    ours = _parameter_list_edited(nn, minitx.zeros)
    assert ours == ([(5,), (2,), (3,), (4,)], ["0", "1", "2", "3"])
    with pytest.raises(TypeError, match="ParameterList.extend: expected an iterable of Parameters, got Parameter"):
        nn.ParameterList().extend(Parameter(np.zeros(2)))
    torch = import_torch()
    assert _parameter_list_edited(torch.nn, torch.zeros) == ours
    with pytest.raises(TypeError):
        torch.nn.ParameterList().extend(torch.nn.Parameter(torch.zeros(2)))


# ---------------------------------------------------------------- R: walking the tree
def _tied(lib, ones):
    """A nested model whose output layer shares the embedding's weight, with a block registered
    twice and buffers at two depths."""
    model = lib.Module()
    model.embed = lib.Embedding(5, 3)
    model.body = lib.Sequential(lib.Linear(3, 3), lib.ModuleList([lib.BatchNorm1d(3)]))
    model.head = lib.Linear(3, 5, bias=False)
    model.head.weight = model.embed.weight
    model.again = model.body
    model.register_buffer("scale", ones(1))
    return model


def _walks(model):
    """Every listing of parameters, buffers and children by name; the unnamed ones (parameters(),
    buffers(), children()) by the name their object has in the named one."""
    walks = {}
    for prefix, recurse, remove_duplicate in itertools.product(("", "net"), (True, False), (True, False)):
        key = (prefix, recurse, remove_duplicate)
        walks["named_parameters", key] = [n for n, _ in model.named_parameters(prefix, recurse, remove_duplicate)]
        walks["named_buffers", key] = [n for n, _ in model.named_buffers(prefix, recurse, remove_duplicate)]
    for name, part in (("model", model), ("body", model.body)):
        for recurse in (True, False):
            names = {id(p): n for n, p in part.named_parameters(recurse=recurse)}
            walks["parameters", name, recurse] = [names[id(p)] for p in part.parameters(recurse=recurse)]
            names = {id(b): n for n, b in part.named_buffers(recurse=recurse)}
            walks["buffers", name, recurse] = [names[id(b)] for b in part.buffers(recurse=recurse)]
        names = {id(m): n for n, m in part.named_children()}
        walks["children", name] = [names[id(m)] for m in part.children()]
    return walks


def test_parameters_buffers_and_children_name_and_order_as_pytorch_with_a_tied_weight():
    ours = _walks(_tied(nn, minitx.ones))
    assert ours["named_parameters", ("", True, True)] == [
        "embed.weight", "body.0.weight", "body.0.bias", "body.1.0.weight", "body.1.0.bias"]
    assert ours["named_parameters", ("net", True, False)] == [
        "net.embed.weight", "net.body.0.weight", "net.body.0.bias", "net.body.1.0.weight", "net.body.1.0.bias",
        "net.head.weight", "net.again.0.weight", "net.again.0.bias", "net.again.1.0.weight", "net.again.1.0.bias"]
    assert ours["named_buffers", ("", True, True)] == [
        "scale", "body.1.0.running_mean", "body.1.0.running_var", "body.1.0.num_batches_tracked"]
    assert ours["named_buffers", ("net", False, True)] == ["net.scale"]
    assert ours["parameters", "body", False] == [] and ours["children", "model"] == ["embed", "body", "head"]
    torch = import_torch()
    assert ours == _walks(_tied(torch.nn, torch.ones))


def test_the_parameter_containers_repr_lists_their_parameters():
    ps = nn.ParameterDict(OrderedDict([("w", nn.Parameter(minitx.zeros(2, 3))), ("b", nn.Parameter(minitx.zeros(3)))]))
    assert repr(ps) == ("ParameterDict(\n  (w): Parameter of shape (2, 3), float32\n"
                        "  (b): Parameter of shape (3,), float32\n)")
    assert repr(nn.ParameterList([nn.Parameter(minitx.zeros(2))])) == ("ParameterList(\n"
                                                                       "  (0): Parameter of shape (2,), float32\n)")
    assert repr(nn.ParameterList()) == "ParameterList()"


def test_traversals_are_generators_as_pytorchs(torch):
    """next(model.parameters()).device, PyTorch's idiom, works; list(...) to go over them twice."""
    import types
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.BatchNorm1d(3))
        for walk in ("parameters", "buffers", "children", "modules"):
            assert isinstance(getattr(model, walk)(), types.GeneratorType), (lib, walk)
        assert next(model.parameters()) is model[0].weight
    assert nn.Linear(2, 3).device == "cpu" and nn.ReLU().device == "cpu"


@pytest.mark.parametrize("kind", ["Sequential", "ModuleList"])
def test_list_containers_add_up_as_pytorchs(kind, torch):
    """a + b is a new container of a's modules then b's (the same objects, numbered anew); a += b extends a."""
    for lib in (nn, torch.nn):
        a, b = _list_of(lib, kind, [lib.Linear(2, 2), lib.ReLU()]), _list_of(lib, kind, [lib.Tanh()])
        both = a + b
        assert type(both) is type(a) and list(both._modules) == ["0", "1", "2"] and both[0] is a[0]
        a += b
        assert [type(m).__name__ for m in a] == ["Linear", "ReLU", "Tanh"]
    with pytest.raises(TypeError, match=f"{kind} \\+ list: expected another {kind}"):
        _list_of(nn, kind, [nn.ReLU()]) + [nn.Tanh()]


# ---------------------------------------------------------------- S: state_dict's order
def _with_buffers(lib, parameter, ones):
    """A module with a parameter and a buffer of its own, then children that hold both kinds."""
    model = lib.Module()
    model.scale = parameter(ones(3))
    model.register_buffer("steps", ones(1))
    model.body = lib.Sequential(lib.Linear(3, 4), lib.BatchNorm1d(4), lib.ReLU(), lib.Linear(4, 2),
                                lib.BatchNorm1d(2))
    model.head = lib.Linear(2, 1)
    return model


def test_state_dict_goes_module_by_module_as_pytorchs(torch):
    """Each module's parameters, then its buffers, then its children in turn (minitx once gave
    every parameter first, then every buffer)."""
    ours, theirs = _with_buffers(nn, Parameter, minitx.ones), _with_buffers(torch.nn, torch.nn.Parameter, torch.ones)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours.state_dict())[:6] == ["scale", "steps", "body.0.weight", "body.0.bias", "body.1.weight",
                                           "body.1.bias"]
    assert list(ours.body.state_dict()) == list(theirs.body.state_dict())


def test_a_transformers_state_dict_goes_module_by_module():
    model = nn.Transformer(11, 11, d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=1, d_ff=32,
                           max_len=16)
    position = {name: i for i, (name, _) in enumerate(model.named_modules(remove_duplicate=False))}
    where = []  # (the module's place in the walk, whether the key is a buffer) for each key
    for key in model.state_dict():
        module_name, _, name = key.rpartition(".")
        where.append((position[module_name], name in model.get_submodule(module_name)._buffers))
    assert where == sorted(where) and any(buffer for _, buffer in where)
    assert not where[-1][1]  # the buffers are not all at the end
    parameters = [key for key, (_, buffer) in zip(model.state_dict(), where) if not buffer]
    assert parameters == [name for name, _ in model.named_parameters()]


def test_load_state_dict_answers_with_pytorchs_named_tuple(torch):
    ours, theirs = nn.Linear(2, 3), torch.nn.Linear(2, 3)
    state = {"weight": np.zeros((3, 2), np.float32), "extra": np.zeros(1, np.float32)}
    got = ours.load_state_dict(state, strict=False)
    want = theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    assert got == want == (["bias"], ["extra"]) and got._fields == want._fields == ("missing_keys", "unexpected_keys")
    assert repr(got) == repr(want)
    state = {"weight": state["weight"], "bias": np.zeros(3, np.float32)}
    got = ours.load_state_dict(state)
    assert repr(got) == repr(theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}))


def test_load_state_dict_writes_into_the_tensors_own_arrays_as_pytorch():
    """Views of a parameter or buffer (and anything holding its array) see the loaded values."""
    torch = import_torch()
    results = []
    for lib in (minitx, torch):
        lib.manual_seed(0)
        layer = lib.nn.BatchNorm1d(3)
        running = layer.running_mean
        head = layer.weight.detach()[:2]
        layer.load_state_dict({**layer.state_dict(), "weight": lib.tensor([2.0, 3.0, 4.0]),
                               "running_mean": lib.tensor([0.5, 0.5, 0.5])})
        results.append((running.tolist(), head.tolist(), layer.running_mean is running))
    assert results[0] == results[1] == ([0.5, 0.5, 0.5], [2.0, 3.0], True)
    array = minitx.nn.Linear(2, 2)
    before = array.weight.data
    array.load_state_dict({k: v + 1 for k, v in array.state_dict().items()})
    assert array.weight.data is before


@pytest.mark.parametrize("layer, shape, axis", [
    (lambda: nn.BatchNorm1d(4), (2, 3), 1), (lambda: nn.BatchNorm2d(4), (2, 3, 5, 5), 1),
    (lambda: nn.GroupNorm(2, 4), (2, 6, 5), 1), (lambda: nn.InstanceNorm1d(4), (2, 3, 5), 1),
    (lambda: nn.InstanceNorm1d(4), (3, 5), 0), (lambda: nn.InstanceNorm2d(4, affine=True), (2, 3, 5, 5), 1),
])
def test_norm_layers_name_themselves_and_their_channels_on_a_mismatch(layer, shape, axis):
    """(the ops' checks spoke of running_mean's or the weight's shape; instance norm without a weight
    took any count, where PyTorch warns)"""
    made = layer()
    with pytest.raises(ValueError, match=rf"{type(made).__name__}: expected 4 channels on axis {axis}, got an "
                                         rf"input of shape {re.escape(str(shape))}"):
        made(minitx.zeros(*shape))


def test_get_buffer_finds_a_buffer_by_its_dotted_path_as_pytorchs(torch):
    results = []
    for lib in (minitx, torch):
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(2))
        model[0].register_buffer("table", lib.ones(2), persistent=False)
        model[0].register_buffer("empty", None)
        found = [model.get_buffer("0.running_mean") is model[0].running_mean,
                 model.get_buffer("0.table") is model[0].table, model.get_buffer("0.empty")]
        for target in ("0.weight", "0.nothing", "1.running_mean"):
            with pytest.raises(AttributeError):
                model.get_buffer(target)
        results.append(found)
    assert results[0] == results[1] == [True, True, None]
    with pytest.raises(AttributeError, match=r"get_buffer\('0.weight'\): BatchNorm1d has no buffer 'weight'"):
        nn.Sequential(nn.BatchNorm1d(2)).get_buffer("0.weight")


def test_a_hook_handle_used_as_a_context_manager_hooks_the_block_only_as_pytorchs(torch):
    counts = []
    for lib in (minitx, torch):
        layer, seen = lib.nn.Linear(2, 2), []
        with layer.register_forward_hook(lambda *_: seen.append(1)) as handle:
            layer(lib.ones(1, 2))
        layer(lib.ones(1, 2))
        handle.remove()  # removing it again changes nothing
        counts.append(len(seen))
    assert counts == [1, 1]


def test_a_forward_hook_registered_with_prepend_runs_first_as_pytorchs(torch):
    orders = []
    for lib in (minitx, torch):
        layer, order = lib.nn.Linear(2, 2), []
        layer.register_forward_hook(lambda *_: order.append("a"))
        layer.register_forward_hook(lambda *_: order.append("b"), prepend=True)
        layer.register_forward_hook(lambda *_: order.append("c"))
        layer(lib.ones(1, 2))
        orders.append(order)
    assert orders[0] == orders[1] == ["b", "a", "c"]


def test_load_state_dict_refuses_what_is_not_a_mapping_by_name(torch):
    """A list where the state dict should be (a damaged checkpoint's entries exchanged) is refused
    by name with a TypeError, as PyTorch's, before any lookup in it."""
    model = nn.Linear(2, 3)
    for state in ([1, 2], "weight", None):
        with pytest.raises(TypeError, match="load_state_dict: expected a mapping of names to arrays"):
            model.load_state_dict(state)
        with pytest.raises(TypeError):
            torch.nn.Linear(2, 3).load_state_dict(state)
