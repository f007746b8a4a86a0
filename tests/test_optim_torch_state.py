"""A PyTorch optimizer's state_dict(), as it is, loads into minitx's optimizer of the same name, and the
run continues there: minitx's next steps are PyTorch's (float64, to 1e-12), for every optimizer.

minitx does not depend on PyTorch: these tests are skipped without it, and fail in CI, which installs
it (torch_reference.import_torch).
"""
import numpy as np
import pytest

import minitx
from minitx import backend, optim
from torch_reference import import_torch

torch = import_torch()

SHAPES = [(3, 4), (5,), ()]


@pytest.fixture(autouse=True)
def float64_default():
    """PyTorch keeps scalar state (NAdam's mu_product) in its default dtype: float64, as minitx's."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def torch_run(name, kw, steps=5, seed=0):
    """PyTorch's optimizer after ``steps`` steps on float64 parameters: parameter 1 has had no
    gradient (PyTorch has no state for it, or Adagrad's made at the start), parameter 2 (0-d) one
    only in the last two steps (a step count of its own)."""
    rng = np.random.default_rng(seed)
    theirs = [torch.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
    opt = getattr(torch.optim, name)(theirs, **kw)
    for t in range(steps):
        for i, q in enumerate(theirs):
            q.grad = None if i == 1 or (i == 2 and t < steps - 2) else torch.tensor(rng.standard_normal(q.shape))
        opt.step()
    return theirs, opt


def edited_copy(their_opt):
    """PyTorch's state dict, to be edited: its state entries are the optimizer's own dicts."""
    saved = their_opt.state_dict()
    return {"state": {i: dict(entry) for i, entry in saved["state"].items()},
            "param_groups": [dict(group) for group in saved["param_groups"]]}


def minitx_twin(theirs, name, **kw):
    """minitx's optimizer ``name`` over parameters holding PyTorch's current values."""
    params = [minitx.tensor(q.detach().numpy().copy(), requires_grad=True) for q in theirs]
    return params, getattr(optim, name)(params, **kw)


def step_both(params, opt, theirs, their_opt, seed):
    rng = np.random.default_rng(seed)
    for p, q in zip(params, theirs):
        g = rng.standard_normal(p.shape)
        p.grad, q.grad = minitx.tensor(g), torch.tensor(g)
    opt.step()
    their_opt.step()


def assert_same(params, opt, theirs, their_opt, where):
    """The same parameters and the same state (PyTorch's RMSprop and Adadelta also count steps)."""
    for k, (p, q) in enumerate(zip(params, theirs)):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14,
                                   err_msg=f"{where}, parameter {k}")
        ours, their_state = opt.state.get(p, {}), their_opt.state[q]
        assert set(their_state) - set(ours) <= {"step"} and set(ours) <= set(their_state), where
        for key, value in ours.items():
            np.testing.assert_allclose(np.asarray(value, dtype=np.float64), their_state[key].numpy(),
                                       rtol=1e-12, atol=1e-14, err_msg=f"{where}, parameter {k}, state '{key}'")


SETTINGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.5, 0.9), maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.05, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(alpha=0.9, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5)),
    ("Adagrad", dict(weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(rho=0.5, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(betas=(0.5, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(momentum_decay=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict()),  # 5 steps in PyTorch: the sixth, here, is the first rectified one
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    ("ASGD", dict(lambd=0.1, t0=2.0)),  # averaging from PyTorch's fourth step: mu = 1/2 when it loads
    ("ASGD", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize("name, kw", SETTINGS, ids=[f"{n}-{kw}" for n, kw in SETTINGS])
def test_a_pytorch_run_continues_in_minitx(name, kw):
    """minitx's optimizer, built with its defaults, takes PyTorch's state and hyperparameters from the
    dict; its next two steps are PyTorch's, state included."""
    theirs, their_opt = torch_run(name, kw)
    params, opt = minitx_twin(theirs, name)
    opt.load_state_dict(their_opt.state_dict())
    for key in kw:
        assert opt.param_groups[0][key] == kw[key], key
    for t in range(2):
        step_both(params, opt, theirs, their_opt, seed=10 + t)
        assert_same(params, opt, theirs, their_opt, f"step {t + 1} after loading")


def test_pytorchs_adam_with_decoupled_weight_decay_continues_in_adamw_and_is_refused_by_adam():
    """decoupled_weight_decay changes the update and minitx's Adam has no such setting: AdamW is
    that update. The refusal names the optimizer, the key and its value, and changes nothing."""
    theirs, their_opt = torch_run("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True))
    params, opt = minitx_twin(theirs, "AdamW")
    opt.load_state_dict(their_opt.state_dict())
    step_both(params, opt, theirs, their_opt, seed=10)
    assert_same(params, opt, theirs, their_opt, "AdamW after PyTorch's decoupled Adam")

    _, adam = minitx_twin(theirs, "Adam", lr=0.5)
    with pytest.raises(ValueError, match=r"Adam.load_state_dict: PyTorch's parameter group 0 has "
                                         r"decoupled_weight_decay=True, which changes the update; Adam has no "
                                         r"decoupled_weight_decay setting and computes what "
                                         r"decoupled_weight_decay=False does"):
        adam.load_state_dict(their_opt.state_dict())
    assert adam.state == {} and adam.param_groups[0]["lr"] == 0.5
    _, adamw = minitx_twin(theirs, "AdamW")
    with pytest.raises(ValueError, match=r"AdamW.load_state_dict: .* decoupled_weight_decay=False, .* computes "
                                         r"what decoupled_weight_decay=True does"):
        adamw.load_state_dict(torch_run("Adam", dict(lr=0.01))[1].state_dict())


def test_pytorchs_group_keys_taken_ignored_or_kept_and_minitx_saves_its_own_format():
    """The run keys (foreach, fused, capturable, differentiable) and the fixed one are not kept in
    minitx's groups; other keys (a scheduler's initial_lr) are, as in minitx's format. state_dict()
    then writes minitx's format: a list by index, int step counts, NumPy arrays."""
    theirs, their_opt = torch_run("Adam", dict(lr=0.01, foreach=True))
    torch.optim.lr_scheduler.StepLR(their_opt, step_size=10)
    saved = their_opt.state_dict()
    assert {"foreach", "fused", "capturable", "differentiable", "decoupled_weight_decay", "initial_lr"} \
        <= set(saved["param_groups"][0])
    params, opt = minitx_twin(theirs, "Adam")
    opt.load_state_dict(saved)
    assert sorted(opt.param_groups[0]) == ["amsgrad", "betas", "eps", "initial_lr", "lr", "maximize", "params",
                                           "weight_decay"]
    ours = opt.state_dict()
    assert [sorted(entry) for entry in ours["state"]] == [["exp_avg", "exp_avg_sq", "step"], [],
                                                         ["exp_avg", "exp_avg_sq", "step"]]
    assert [entry.get("step") for entry in ours["state"]] == [5, None, 2]
    assert type(ours["state"][0]["step"]) is int and isinstance(ours["state"][2]["exp_avg"], np.ndarray)
    again_params, again = minitx_twin(theirs, "Adam")
    again.load_state_dict(ours)
    for ps, o in [(params, opt), (again_params, again)]:
        for p in ps:
            p.grad = minitx.tensor(np.ones(p.shape))
        o.step()
    for p, q in zip(params, again_params):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_parameter_pytorch_has_no_state_for_loads_as_fresh():
    """PyTorch leaves a parameter that has taken no step out of 'state'; Adagrad makes every state when
    built, with step 0: either way minitx has no state for it, and makes it at its first step."""
    for name, kw in [("Adam", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5))]:
        theirs, their_opt = torch_run(name, kw)
        saved = their_opt.state_dict()
        assert (1 not in saved["state"]) if name == "Adam" else float(saved["state"][1]["step"]) == 0.0
        params, opt = minitx_twin(theirs, name)
        opt.load_state_dict(saved)
        assert len(opt.state) == 2 and params[1] not in opt.state, name
        step_both(params, opt, theirs, their_opt, seed=10)
        assert_same(params, opt, theirs, their_opt, f"{name}, the first step of parameter 1")


def test_an_older_pytorchs_dict_is_told_by_its_tensors():
    """Before torch 1.12 the groups had no run keys and step counts were ints: the torch tensors in
    its state still tell PyTorch's format (a dict by index, where a parameter left out is fresh)."""
    theirs, their_opt = torch_run("Adam", dict(lr=0.01))
    saved = edited_copy(their_opt)
    for key in ("foreach", "fused", "capturable", "differentiable"):
        del saved["param_groups"][0][key]
    for entry in saved["state"].values():
        entry["step"] = int(entry["step"])
    params, opt = minitx_twin(theirs, "Adam")
    opt.load_state_dict(saved)
    step_both(params, opt, theirs, their_opt, seed=10)
    assert_same(params, opt, theirs, their_opt, "a dict without run keys")


def test_a_step_count_that_is_not_whole_is_refused_and_changes_nothing():
    theirs, their_opt = torch_run("NAdam", {})
    saved = edited_copy(their_opt)
    saved["state"][2]["step"] = torch.tensor(2.5)
    params, opt = minitx_twin(theirs, "NAdam", lr=0.5)
    with pytest.raises(ValueError, match=r"NAdam.load_state_dict: PyTorch's state 'step' of parameter 2 is 2.5; "
                                         "expected a whole number of steps"):
        opt.load_state_dict(saved)
    assert opt.state == {} and opt.param_groups[0]["lr"] == 0.5


def test_a_tensor_learning_rate_is_taken_as_its_float():
    """PyTorch takes lr (and betas) as tensors too: minitx's group holds the same number."""
    theirs, their_opt = torch_run("Adam", dict(lr=torch.tensor(0.01), betas=(torch.tensor(0.8), torch.tensor(0.99))))
    params, opt = minitx_twin(theirs, "Adam")
    opt.load_state_dict(their_opt.state_dict())
    assert opt.param_groups[0]["lr"] == float(torch.tensor(0.01)) and opt.param_groups[0]["betas"] == (0.8, 0.99)
    step_both(params, opt, theirs, their_opt, seed=10)
    assert_same(params, opt, theirs, their_opt, "tensor lr")


def test_the_loaded_state_is_a_copy_and_the_dict_is_left_as_it_was():
    theirs, their_opt = torch_run("Adam", dict(lr=0.01))
    saved = their_opt.state_dict()
    params, opt = minitx_twin(theirs, "Adam")
    opt.load_state_dict(saved)
    their_opt.state[theirs[0]]["exp_avg"].fill_(123.0)
    assert not (opt.state[params[0]]["exp_avg"] == 123.0).any()
    assert "foreach" in saved["param_groups"][0] and torch.is_tensor(saved["state"][0]["step"])


def test_wrong_shapes_and_counts_are_refused_as_in_minitxs_format_and_change_nothing():
    theirs, their_opt = torch_run("Adam", dict(lr=0.01))
    params, opt = minitx_twin(theirs, "Adam", lr=0.5)
    for p in params:
        p.grad = minitx.tensor(np.ones(p.shape))
    opt.step()  # state of its own, which a refused dict must leave as it is
    before = {p: {k: np.array(v, copy=True) for k, v in s.items()} for p, s in opt.state.items()}

    def unchanged():
        assert opt.param_groups[0]["lr"] == 0.5 and [id(p) for p in opt.state] == [id(p) for p in before]
        for p, s in before.items():
            for key, value in s.items():
                np.testing.assert_array_equal(np.asarray(opt.state[p][key]), value)

    saved = edited_copy(their_opt)
    saved["state"][2]["exp_avg"] = torch.zeros(6)
    with pytest.raises(ValueError, match=r"state 'exp_avg' of parameter 2 has shape \(6,\), but the parameter has "
                                         r"shape \(\)"):
        opt.load_state_dict(saved)
    unchanged()
    two_groups = edited_copy(their_opt)
    two_groups["param_groups"] = [dict(two_groups["param_groups"][0], params=[0]),
                                  dict(two_groups["param_groups"][0], params=[1, 2])]
    with pytest.raises(ValueError, match="number of parameter groups differs: 2 in the state dict, 1 in this"):
        opt.load_state_dict(two_groups)
    unchanged()
    with pytest.raises(ValueError, match="3 parameters in the state dict and 2 in this optimizer"):
        optim.Adam(params[:2]).load_state_dict(their_opt.state_dict())
    extra = edited_copy(their_opt)
    extra["state"][7] = extra["state"][0]
    with pytest.raises(ValueError, match="state for parameter 7, but this optimizer has 3 parameters"):
        opt.load_state_dict(extra)
    unchanged()
    amsgrad = edited_copy(their_opt)
    amsgrad["param_groups"][0]["amsgrad"] = True
    with pytest.raises(ValueError, match=r"state of parameter 0 has keys .*\(missing: \['max_exp_avg_sq'\]\)"):
        opt.load_state_dict(amsgrad)
    unchanged()


def lbfgs_problem(lib, params):
    """Rosenbrock's function of the parameters joined (a (3,) and a 0-d one): LBFGS's one flat vector."""
    x = lib.cat([params[0], params[1].reshape(1)])
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


@pytest.mark.parametrize("kw", [dict(history_size=2, max_iter=5), dict(max_iter=4, line_search_fn="strong_wolfe")])
def test_a_pytorch_lbfgs_run_continues_in_minitx(kw):
    """LBFGS's one state (d, t, the kept pairs, ...; PyTorch's list 'al' is dropped), on parameter 0:
    after two steps of PyTorch's, minitx's next two are PyTorch's, closure calls included."""
    start = [np.array([-1.2, 1.0, -0.5]), np.array(0.8)]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in start]
    their_opt = torch.optim.LBFGS(theirs, **kw)

    def their_closure():
        their_opt.zero_grad()
        loss = lbfgs_problem(torch, theirs)
        loss.backward()
        return loss

    for _ in range(2):
        their_opt.step(their_closure)
    saved = their_opt.state_dict()
    assert "al" in saved["state"][0] and torch.is_tensor(saved["state"][0]["d"])
    params, opt = minitx_twin(theirs, "LBFGS")
    opt.load_state_dict(saved)
    assert {key: opt.param_groups[0][key] for key in kw} == kw
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = lbfgs_problem(minitx, params)
        loss.backward()
        return loss

    for t in range(2):
        evals = their_opt.state[theirs[0]]["func_evals"]
        opt.step(closure)
        their_opt.step(their_closure)
        assert len(calls) == their_opt.state[theirs[0]]["func_evals"] - evals, f"step {t + 1} after loading"
        calls.clear()
        for k, (p, q) in enumerate(zip(params, theirs)):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"step {t + 1} after loading, parameter {k}")
    assert opt.state[params[0]]["n_iter"] == their_opt.state[theirs[0]]["n_iter"]
    assert opt.state[params[0]]["func_evals"] == their_opt.state[theirs[0]]["func_evals"]


@pytest.mark.gpu
@pytest.mark.parametrize("name, kw", [("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                      ("NAdam", dict()), ("SGD", dict(lr=0.1, momentum=0.9))])
def test_pytorchs_cpu_state_loads_onto_the_gpu(name, kw):
    """PyTorch's CPU tensors are copied onto each parameter's device (Adam's step counts into its
    device array): the next steps there are PyTorch's on the CPU (the fused kernel rounds otherwise)."""
    theirs, their_opt = torch_run(name, kw)
    params = [minitx.tensor(q.detach().numpy().copy(), device="cuda", requires_grad=True) for q in theirs]
    opt = getattr(optim, name)(params)
    opt.load_state_dict(their_opt.state_dict())
    for t in range(2):
        rng = np.random.default_rng(10 + t)
        for p, q in zip(params, theirs):
            g = rng.standard_normal(p.shape)
            p.grad, q.grad = minitx.tensor(g, device="cuda"), torch.tensor(g)
        opt.step()
        their_opt.step()
    for k, (p, q) in enumerate(zip(params, theirs)):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=f"parameter {k}")
        for key, value in opt.state.get(p, {}).items():
            np.testing.assert_allclose(np.asarray(backend.to_numpy(value), dtype=np.float64),
                                       their_opt.state[q][key].numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"parameter {k}, state '{key}'")
