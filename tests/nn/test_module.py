"""Module bookkeeping: registration, tree walking, modes, casting, state_dict, repr."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitx
from minitx import nn
from minitx.nn import Module, Parameter


class Affine(Module):
    """y = x * scale + inner(x), with a buffer and a child."""

    def __init__(self, dim=3):
        super().__init__()
        self.scale = Parameter(np.ones(dim, dtype=np.float32))
        self.inner = nn.Linear(dim, dim)
        self.register_buffer("steps", minitx.tensor(np.zeros(dim, dtype=np.float32)))
        self.register_buffer("counter", minitx.tensor(np.array([7])))

    def forward(self, x):
        return x * self.scale + self.inner(x)


class Shared(Module):
    """Two children that share one Linear (tied weights) plus a direct alias of its weight."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = self.a
        self.alias = self.a.weight
        self.extra = nn.Linear(2, 1, bias=False)


def test_named_parameters_use_dotted_names_in_registration_order():
    names = [name for name, _ in Affine().named_parameters()]
    assert names == ["scale", "inner.weight", "inner.bias"]
    nested = nn.Sequential(Affine(), nn.Linear(3, 2))
    assert [name for name, _ in nested.named_parameters()] == [
        "0.scale", "0.inner.weight", "0.inner.bias", "1.weight", "1.bias"]


def test_shared_parameters_are_counted_once():
    model = Shared()
    params = list(model.parameters())
    assert len(params) == 3 and len({id(p) for p in params}) == 3
    # the root's own parameters come first; the shared Linear's weight is already seen there
    assert [name for name, _ in model.named_parameters()] == ["alias", "a.bias", "extra.weight"]
    assert model.num_parameters() == 4 + 2 + 2


def test_children_and_modules():
    model = Affine()
    assert list(model.children()) == [model.inner]
    assert list(model.modules()) == [model, model.inner]


def test_num_parameters_trainable_only():
    model = Affine()
    assert model.num_parameters() == 3 + 9 + 3
    model.scale.requires_grad_(False)
    assert model.num_parameters() == 12
    assert model.num_parameters(trainable_only=False) == 15


def test_train_and_eval_propagate_to_every_descendant():
    model = nn.Sequential(Affine(), nn.Dropout(0.5), nn.Sequential(nn.Dropout(0.2)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_zero_grad_clears_every_gradient():
    model = Affine()
    model(minitx.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    kept = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=False)  # PyTorch's keyword: the same gradients, zeroed in place
    assert all(p.grad is g and not g.numpy().any() for p, g in zip(model.parameters(), kept))
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_to_casts_floating_parameters_and_buffers_but_not_integer_buffers():
    model = Affine()
    model(minitx.randn(2, 3)).sum().backward()
    assert model.to("cpu", dtype="float64") is model
    assert all(p.dtype == np.float64 and p.device == "cpu" for p in model.parameters())
    grads = {name: p.grad for name, p in model.named_parameters()}
    assert all(g is not None and g.dtype == np.float64 for g in grads.values())  # cast along, as PyTorch's
    model.to("cpu", dtype="float64")  # already there: nothing moves, the gradients stay
    assert all(p.grad is grads[name] for name, p in model.named_parameters())
    assert model.steps.dtype == np.float64
    assert model.counter.dtype == np.int64
    out = model(minitx.tensor(np.ones((2, 3))))
    assert out.dtype == np.float64
    assert model.device == "cpu"


def test_to_takes_a_dtype_or_a_tensor_first_and_non_blocking_as_pytorchs():
    """model.to(torch.float64), model.to(x) and model.to(device, non_blocking=True) are PyTorch
    code as it is commonly written; read as a device, the dtype was an unknown device."""
    model = Affine()
    assert model.to(minitx.float64) is model and model.scale.dtype == np.float64
    assert model.counter.dtype == np.int64  # floating tensors only, as with dtype=
    model.to(minitx.zeros(1, dtype="float32"))
    assert model.inner.weight.dtype == np.float32 and model.steps.dtype == np.float32
    assert model.to("cpu", non_blocking=True).scale.device == "cpu"
    with pytest.raises(TypeError, match="Affine.to: got 'float64' first, and 'float32' as a second dtype"):
        model.to("float64", "float32")


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", np.uint8])
def test_to_refuses_a_non_float_dtype_and_changes_nothing(dtype):
    model = Affine()
    before = {name: p.numpy().copy() for name, p in model.named_parameters()}
    with pytest.raises(TypeError, match="Affine.to: dtype must be a floating-point dtype.*truncate"):
        model.to(dtype=dtype)
    for name, p in model.named_parameters():
        assert p.dtype == np.float32
        np.testing.assert_array_equal(p.numpy(), before[name])


def test_state_dict_contains_parameters_and_buffers_as_copies():
    model = Affine()
    state = model.state_dict()
    assert list(state) == ["scale", "steps", "counter", "inner.weight", "inner.bias"]  # module by module, as PyTorch
    assert all(isinstance(v, np.ndarray) for v in state.values())
    state["scale"][:] = 42  # a copy: the model is untouched
    assert np.all(model.scale.numpy() == 1)


@given(seed=st.integers(0, 2**16))
def test_state_dict_round_trip(seed):
    minitx.manual_seed(seed)
    source = Affine()
    source.steps.data[:] = np.arange(3)
    target = Affine()
    result = target.load_state_dict(source.state_dict())
    assert result == ([], []) and repr(result) == "<All keys matched successfully>"
    for (name, a), (_, b) in zip(source.state_dict().items(), target.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=name)
    x = minitx.randn(2, 3)
    np.testing.assert_array_equal(source(x).numpy(), target(x).numpy())


def test_load_state_dict_keeps_the_model_dtype():
    model = Affine().to(dtype="float64")
    model.load_state_dict(Affine().state_dict())
    assert model.inner.weight.dtype == np.float64


@pytest.mark.parametrize("change, key", [
    (lambda s: s.pop("inner.bias"), "inner.bias"),
    (lambda s: s.__setitem__("surprise.weight", np.zeros(1)), "surprise.weight"),
])
def test_strict_loading_names_missing_and_unexpected_keys(change, key):
    state = Affine().state_dict()
    change(state)
    with pytest.raises(KeyError, match=key.replace(".", r"\.")):
        Affine().load_state_dict(state)
    result = Affine().load_state_dict(state, strict=False)
    assert key in result.missing_keys + result.unexpected_keys


def test_a_tied_parameter_loads_from_any_of_its_names_as_pytorch_saves_it_under_each():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5))
    theirs[1].weight = theirs[0].weight
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(state) == ["0.weight", "1.weight", "1.bias"]  # PyTorch: every name
    ours = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 5))
    ours[1].weight = ours[0].weight
    assert list(ours.state_dict()) == ["0.weight", "1.bias"]  # minitx: the first name
    assert ours.load_state_dict(state) == ([], [])
    np.testing.assert_array_equal(ours[1].weight.numpy(), state["1.weight"])
    second_only = {k: v for k, v in state.items() if k != "0.weight"}
    assert ours.load_state_dict(second_only) == ([], [])
    state["1.weight"] = state["1.weight"] + 1
    with pytest.raises(ValueError, match="'1.weight' and '0.weight' name one parameter of the model .tied., but the "
                                         "state dict gives them different values"):
        ours.load_state_dict(state)
    state["1.weight"] = state["1.weight"][:2]
    with pytest.raises(ValueError, match=r"'1.weight' and '0.weight' .* different shapes \(5, 3\) and \(2, 3\)"):
        ours.load_state_dict(state)
    model = Shared()  # the root's alias comes first: the Linear's weight is its second name
    state = model.state_dict()
    state["a.weight"] = state["b.weight"] = state["alias"]
    assert Shared().load_state_dict(state) == ([], [])


def test_wrong_shape_names_the_key_and_both_shapes():
    state = Affine().state_dict()
    state["inner.weight"] = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=r"inner\.weight") as info:
        Affine().load_state_dict(state)
    assert "(3, 4)" in str(info.value) and "(3, 3)" in str(info.value)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.complex64])
def test_an_array_of_another_kind_is_refused_naming_the_key_and_both_dtypes(dtype):
    model = Affine()
    before = model.inner.weight.numpy().copy()
    state = model.state_dict()
    state["inner.bias"] = np.ones(3, dtype=dtype)
    with pytest.raises(TypeError, match=rf"'inner\.bias' is {np.dtype(dtype).name} in the state dict but float32"):
        model.load_state_dict(state)
    np.testing.assert_array_equal(model.inner.weight.numpy(), before)  # nothing loaded


def test_register_buffer_is_saved_and_moved_but_not_a_parameter():
    model = Affine()
    assert "steps" not in dict(model.named_parameters())
    assert dict(model.named_buffers()).keys() == {"steps", "counter"}
    assert "steps" in model.state_dict()
    model.steps = minitx.tensor(np.full(3, 5.0, dtype=np.float32))  # a new value stays a buffer
    np.testing.assert_array_equal(model.state_dict()["steps"], np.full(3, 5.0))
    assert model.to(dtype="float64").steps.dtype == np.float64


@pytest.mark.parametrize("register", [
    lambda m: setattr(m, "w", Parameter(np.ones(2))),
    lambda m: m.register_buffer("b", minitx.zeros(2)),
], ids=["attribute", "buffer"])
def test_registering_before_super_init_raises(register):
    class Broken(Module):
        def __init__(self):
            register(self)
            super().__init__()

    with pytest.raises(RuntimeError, match=re.escape("call super().__init__()")):
        Broken()


def test_a_name_lives_in_one_registry():
    model = Affine()
    model.register_buffer("scale", minitx.ones(3))  # a parameter turned into a buffer
    assert "scale" not in dict(model.named_parameters())
    assert list(model.state_dict()).count("scale") == 1


def test_reassigning_and_deleting_attributes_updates_the_registries():
    model = Affine()
    model.inner = nn.LayerNorm(3)  # a different child under the same name
    assert [n for n, _ in model.named_parameters()] == ["scale", "inner.weight", "inner.bias"]
    model.inner = None  # a plain value unregisters the child
    assert list(model.children()) == []
    del model.scale
    assert list(model.parameters()) == []


def test_repr_shows_the_tree_with_settings():
    text = repr(nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.25), nn.ModuleList([nn.ReLU()])))
    assert text.splitlines()[0] == "Sequential("
    assert "(0): Linear(in_features=4, out_features=2, bias=True)" in text
    assert "(1): Dropout(p=0.25)" in text
    assert "(2): ModuleList(\n    (0): ReLU()\n  )" in text
    assert text.endswith(")")
    assert repr(nn.Embedding(5, 3, padding_idx=0)) == "Embedding(5, 3, padding_idx=0)"


def test_forward_must_be_overridden():
    with pytest.raises(NotImplementedError, match="Module.forward"):
        Module()(1)


def test_sequential_applies_in_order_and_indexes():
    first, second = nn.Linear(3, 4), nn.Linear(4, 2)
    model = nn.Sequential(first, nn.ReLU(), second)
    assert len(model) == 3 and model[0] is first and model[-1] is second
    x = minitx.randn(5, 3)
    expected = second(first(x).relu())
    np.testing.assert_allclose(model(x).numpy(), expected.numpy(), rtol=1e-6)


def test_module_list_registers_appended_modules():
    layers = nn.ModuleList([nn.Linear(2, 2)])
    layers.append(nn.Linear(2, 3))
    assert len(layers) == 2 and [type(m) for m in layers] == [nn.Linear, nn.Linear]
    assert layers[1].out_features == 3
    assert [n for n, _ in layers.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_evaluating_restores_the_mode_also_after_an_error():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)) if hasattr(nn, "Sequential") else nn.Linear(2, 2)
    model.train()
    with pytest.raises(ZeroDivisionError):
        with model.evaluating():
            assert not any(m.training for m in model.modules())
            1 / 0
    assert all(m.training for m in model.modules())
    model.eval()
    with model.evaluating():
        pass
    assert not model.training


def test_module_dict_and_parameter_list_register_what_they_hold():
    from minitx import optim

    heads = nn.ModuleDict({"de": nn.Linear(4, 2), "en": nn.Linear(4, 3)})
    scales = nn.ParameterList([nn.Parameter(np.ones(2, dtype=np.float32)) for _ in range(3)])
    assert sorted(heads) == ["de", "en"] and "de" in heads and len(heads) == 2
    assert len(scales) == 3 and scales[1].shape == (2,)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads, self.scales = heads, scales

    names = sorted(name for name, _ in Model().named_parameters())
    assert names == ["heads.de.bias", "heads.de.weight", "heads.en.bias", "heads.en.weight",
                     "scales.0", "scales.1", "scales.2"]
    optim.Adam(Model().parameters())  # every one of them reaches the optimizer
    with pytest.raises(TypeError, match="ModuleDict: 'x' must be a Module, got int"):
        heads["x"] = 3
    with pytest.raises(TypeError, match="ParameterList: '3' must be a Parameter, got ndarray; wrap the tensor in "
                                        "nn.Parameter"):
        scales.append(np.ones(2))


@given(names=st.permutations(["en", "de", "fr", "ja"]), count=st.integers(1, 5))
def test_module_dict_keeps_the_order_given_and_parameter_list_its_indices(names, count):
    """As Python's dict and list (and PyTorch's containers): a ModuleDict iterates, names its
    parameters and saves them in the order given; a ParameterList's [i] is the i-th appended."""
    heads = nn.ModuleDict({name: nn.Linear(2, k + 1) for k, name in enumerate(names)})
    assert list(heads) == list(heads.keys()) == names
    assert [m.out_features for m in heads.values()] == [k + 1 for k in range(len(names))]
    assert list(heads.state_dict()) == [f"{name}.{p}" for name in names for p in ("weight", "bias")]
    values = [float(k) for k in range(count)]
    scales = nn.ParameterList([nn.Parameter(np.full(2, v, np.float32)) for v in values])
    assert [scales[i].numpy()[0] for i in range(-count, count)] == values + values
    assert [p.numpy()[0] for p in scales] == [p.numpy()[0] for p in scales.parameters()] == values


def test_apply_visits_every_module_children_first():
    seen = []
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]


def test_a_forward_hook_sees_every_forward_may_replace_the_output_and_can_be_removed():
    layer = nn.Linear(2, 2)
    x = minitx.tensor([[1.0, 2.0]])
    seen = []
    handle = layer.register_forward_hook(lambda module, inputs, output: seen.append((module, inputs[0], output)))
    y = layer(x)
    assert seen == [(layer, x, y)]
    double = layer.register_forward_hook(lambda module, inputs, output: output * 2)
    np.testing.assert_allclose(layer(x).numpy(), 2 * y.numpy())
    handle.remove()
    double.remove()
    np.testing.assert_allclose(layer(x).numpy(), y.numpy())
    assert len(seen) == 2


def _pre_hook_events(Base):
    """The calls a module of ``Base`` (PyTorch's nn.Module or minitx's) sees with forward pre-hooks
    that look, return one value, return a tuple, are prepended and removed, beside a forward hook."""
    events = []

    class Echo(Base):
        def forward(self, *args, **kwargs):
            events.append(("forward", args, kwargs))
            return sum(args)

    module = Echo()
    module.register_forward_pre_hook(lambda m, args: events.append(("looks", m is module, args)))
    plus_one = module.register_forward_pre_hook(lambda m, args: args[0] + 1)  # one value: a 1-tuple
    module.register_forward_pre_hook(lambda m, args: (args[0] * 10, 5))  # a tuple: the arguments as they are
    module.register_forward_pre_hook(lambda m, args: events.append(("first", args)), prepend=True)
    module.register_forward_hook(lambda m, args, output: events.append(("after", args, output)))
    events.append(("returned", module(1, 2, scale=3)))
    plus_one.remove()
    events.append(("returned", module(1, 2)))
    return events


def test_forward_pre_hooks_run_in_order_and_replace_the_arguments_as_torchs():
    torch = pytest.importorskip("torch")
    ours = _pre_hook_events(Module)
    assert ours == _pre_hook_events(torch.nn.Module)
    assert ours[:5] == [("first", (1, 2)), ("looks", True, (1, 2)), ("forward", (20, 5), {"scale": 3}),
                        ("after", (20, 5), 25), ("returned", 25)]
    assert ours[5:] == [("first", (1, 2)), ("looks", True, (1, 2)), ("forward", (10, 5), {}),
                        ("after", (10, 5), 15), ("returned", 15)]


def test_a_pre_hooks_new_input_is_what_a_full_backward_hook_sees_the_gradient_of_as_torchs():
    """Pre-hooks run before the backward hooks take the inputs, as in PyTorch: grad_input is the
    gradient of the tensor the hook returned (x * 2), not of the caller's x."""
    torch = pytest.importorskip("torch")
    layer, twin = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    twin.weight.data, twin.bias.data = torch.tensor(layer.weight.numpy()), torch.tensor(layer.bias.numpy())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    seen = {}
    for name, module, tensor in (("ours", layer, minitx.tensor(x, requires_grad=True)),
                                 ("theirs", twin, torch.tensor(x, requires_grad=True))):
        module.register_forward_pre_hook(lambda m, args: args[0] * 2)
        module.register_full_backward_hook(lambda m, gi, go, name=name: seen.__setitem__(name, gi[0]))
        (module(tensor) ** 2).sum().backward()
        seen[name + " x.grad"] = tensor.grad
    np.testing.assert_allclose(seen["ours"].numpy(), seen["theirs"].numpy(), rtol=1e-5)
    np.testing.assert_allclose(seen["ours x.grad"].numpy(), seen["theirs x.grad"].numpy(), rtol=1e-5)
    np.testing.assert_allclose(seen["ours x.grad"].numpy(), 2 * seen["ours"].numpy(), rtol=1e-6)


def test_tensor_hooks_see_and_may_replace_a_gradient_before_it_goes_on():
    x = minitx.tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.numpy().copy()))
    h.register_hook(lambda g: g * 10)  # replaces what flows into x
    (h * h).sum().backward()
    np.testing.assert_array_equal(seen[0], [6.0, 12.0])  # d(h^2)/dh = 2h, before the second hook
    np.testing.assert_array_equal(x.grad.numpy(), [180.0, 360.0])  # (2h * 10) * 3
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="register_hook: this tensor does not require grad"):
        minitx.tensor(np.ones(2)).register_hook(print)
    leaf = minitx.tensor(np.ones(2), requires_grad=True)
    leaf.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match=r"'<lambda>' changed the shape of the gradient \(was \(2,\), got \(1,\)\)"):
        (leaf * 2).sum().backward()


def test_a_full_backward_hook_sees_the_modules_own_input_and_output_gradients_as_torchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    layer = nn.Linear(3, 2)
    twin = torch.nn.Linear(3, 2)
    twin.weight.data, twin.bias.data = torch.tensor(layer.weight.numpy()), torch.tensor(layer.bias.numpy())
    x = rng.standard_normal((4, 3)).astype(np.float32)
    ours, theirs = [], []
    handle = layer.register_full_backward_hook(lambda m, gi, go: ours.append((m, gi, go)))
    twin.register_full_backward_hook(lambda m, gi, go: theirs.append((gi, go)))
    a = minitx.tensor(x, requires_grad=True)
    y = layer(a)
    ((y * y).sum() + (a * a).sum()).backward()  # a feeds another op too: its gradient is not the hook's
    b = torch.tensor(x, requires_grad=True)
    ((twin(b) ** 2).sum() + (b * b).sum()).backward()
    (module, grad_input, grad_output), = ours
    assert module is layer and len(grad_input) == 1 and len(grad_output) == 1
    np.testing.assert_allclose(grad_input[0].numpy(), theirs[0][0][0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_output[0].numpy(), theirs[0][1][0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)  # the hook changed nothing
    handle.remove()
    layer(minitx.tensor(x, requires_grad=True)).sum().backward()
    assert len(ours) == 1
    layer.register_full_backward_hook(lambda m, gi, go: gi)
    with pytest.raises(RuntimeError, match="a backward hook of Linear returned a value"):
        layer(minitx.tensor(x, requires_grad=True)).sum().backward()


class _TwoInputs(Module):
    """y = a * k + b * b: two tensor inputs with a plain number between them."""

    def forward(self, a, k, b):
        return a * k + b * b


@given(shape=st.lists(st.integers(1, 3), max_size=2).map(tuple), k=st.floats(-2.0, 2.0), seed=st.integers(0, 2**16))
def test_a_full_backward_hook_gives_each_input_its_own_gradient_at_its_position(shape, k, seed):
    """grad_input has one entry per argument of the call: dy * k for a, None for the number k,
    2 b dy for b, and None for an input that takes no gradient."""
    rng = np.random.default_rng(seed)
    for needs in ((True, True), (True, False), (False, True)):
        a, b = (minitx.tensor(rng.standard_normal(shape), requires_grad=need) for need in needs)
        module, seen = _TwoInputs(), []
        module.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
        dy = rng.standard_normal(shape)
        module(a, k, b).backward(dy)
        ((grad_a, grad_k, grad_b), (grad_output,)), = seen
        assert grad_k is None and (grad_a is None) != needs[0] and (grad_b is None) != needs[1]
        if needs[0]:
            np.testing.assert_allclose(grad_a.numpy(), dy * k, rtol=1e-12)
        if needs[1]:
            np.testing.assert_allclose(grad_b.numpy(), 2 * b.numpy() * dy, rtol=1e-12)
        np.testing.assert_array_equal(grad_output.numpy(), dy)


def test_a_full_backward_hook_of_a_module_whose_inputs_take_no_gradient_still_sees_grad_output():
    layer = nn.Linear(2, 2)
    seen = []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].shape)))
    layer(minitx.tensor(np.ones((3, 2), np.float32))).sum().backward()
    assert seen == [((None,), (3, 2))]


class _FirstOnly(Module):
    """y = 2 a, whatever b is (a mask that only sometimes matters, say); or y = 2 a.detach()."""

    def __init__(self, detach=False):
        super().__init__()
        self.detach = detach

    def forward(self, a, b):
        return (a.detach() if self.detach else a) * 2


def test_a_full_backward_hook_runs_when_an_input_that_requires_grad_does_not_reach_the_output_as_torchs():
    """The input the output does not depend on gets no gradient: waiting for it, the hooks never
    ran. PyTorch's run once the others arrive, with zeros in its place; and not at all when no
    input reaches the output."""
    torch = pytest.importorskip("torch")
    results = []
    for lib, module in ((minitx, _FirstOnly), (torch, None)):
        seen = []
        if module is None:
            class Twin(torch.nn.Module):
                def __init__(self, detach=False):
                    super().__init__()
                    self.detach = detach

                def forward(self, a, b):
                    return (a.detach() if self.detach else a) * 2
            module = Twin
        for detach in (False, True):
            m = module(detach)
            m.register_full_backward_hook(lambda _, gi, go, detach=detach: seen.append(
                (detach, [None if g is None else g.tolist() for g in gi], go[0].tolist())))
            a, b = (lib.tensor([1.0, 2.0], requires_grad=True) for _ in range(2))
            w = lib.tensor([3.0, 4.0], requires_grad=True)
            (m(a, b) * w).sum().backward()
        results.append(seen)
    assert results[0] == results[1] == [(False, [[6.0, 8.0], [0.0, 0.0]], [3.0, 4.0])]
