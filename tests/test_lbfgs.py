"""LBFGS: step(closure) against torch.optim.LBFGS (the iterates, the closure calls, the state), its two
pieces (the two-loop recursion, the strong Wolfe line search) against their math, and its state."""
import math

import numpy as np
import pytest

import minitx
from minitx import optim
from minitx.optim.lbfgs import cubic_minimum, strong_wolfe, two_loop_direction
from torch_reference import import_torch

ROSENBROCK_START = [np.array([-1.2, 1.0, -0.5, 0.8])]


def rosenbrock(x):
    """sum over i of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2: a curved valley, its minimum at x = 1."""
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def least_squares_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.1 * rng.standard_normal(20)
    return X, y


def least_squares(params, X, y):
    """The mean squared error of a line fit, y ~ X w + b: params (w, b)."""
    w, b = params
    r = X @ w + b - y
    return (r * r).mean()


def make_problem(problem, lib):
    """(parameters, loss of the parameters) in minitx or torch, float64."""
    if problem == "rosenbrock":
        params = [lib.tensor(a.copy(), requires_grad=True) for a in ROSENBROCK_START]
        return params, lambda: rosenbrock(params[0])
    X, y = (lib.tensor(a) for a in least_squares_data())
    params = [lib.tensor(np.zeros(3), requires_grad=True), lib.tensor(np.array(0.0), requires_grad=True)]
    return params, lambda: least_squares(params, X, y)


def counting_closure(opt, loss_of, calls):
    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss
    return closure


SETTINGS = [
    ("rosenbrock", dict(lr=0.5, max_iter=7, history_size=3)),  # fixed steps; the history full, pairs dropped
    ("rosenbrock", dict(line_search_fn="strong_wolfe")),  # PyTorch's defaults: converges in the 4th step
    ("rosenbrock", dict(history_size=2, max_iter=6, line_search_fn="strong_wolfe")),
    ("least_squares", dict()),  # converges in the first step: later steps stop at their first evaluation
    ("least_squares", dict(lr=0.5, max_iter=7, history_size=3)),
    ("least_squares", dict(history_size=2, max_iter=6, line_search_fn="strong_wolfe")),
    ("least_squares", dict(max_iter=4, max_eval=3, line_search_fn="strong_wolfe")),  # max_eval cuts the search
]


@pytest.mark.parametrize("problem, kw", SETTINGS, ids=[f"{p}-{kw}" for p, kw in SETTINGS])
def test_lbfgs_matches_pytorch(problem, kw):
    """Four step(closure) calls of each, on the same problem: after each, the same number of closure
    calls, and the same parameters, returned loss and state to 1e-8. Not to the last bits: the
    gradients' last bits differ between minitx's ops and PyTorch's (which of PyTorch's vector kernels
    runs depends on the CPU), and the line search along Rosenbrock's valley grows that to 1e-10 in
    the parameters after two steps on some CPUs. The state is compared to 1e-5 of each entry's
    largest value: y, a difference of nearby gradients, loses digits to cancellation, and
    rho = 1 / (y . s) more (1.5e-7 of it at Rosenbrock's third step on one CPU); a wrong rule
    misses by far more."""
    torch = import_torch()
    params, loss_of = make_problem(problem, minitx)
    theirs, their_loss_of = make_problem(problem, torch)
    opt, their_opt = optim.LBFGS(params, **kw), torch.optim.LBFGS(theirs, **kw)
    assert opt.defaults == {key: their_opt.defaults[key] for key in opt.defaults}
    calls, their_calls = [], []
    closure = counting_closure(opt, loss_of, calls)
    their_closure = counting_closure(their_opt, their_loss_of, their_calls)
    for t in range(4):
        returned, their_returned = opt.step(closure), their_opt.step(their_closure)
        where = f"step {t + 1}"
        assert len(calls) == len(their_calls), where
        assert float(returned) == pytest.approx(float(their_returned.detach()), rel=1e-8, abs=1e-14), where
        for k, (p, q) in enumerate(zip(params, theirs)):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-8, atol=1e-8,
                                       err_msg=f"{where}, parameter {k}")
        ours, their_state = opt.state[params[0]], their_opt.state[theirs[0]]
        assert set(their_state) - set(ours) <= {"al"}, where
        for key, value in ours.items():
            theirs_value = their_state[key]
            if key in ("old_dirs", "old_stps", "ro"):
                assert len(value) == len(theirs_value), f"{where}, '{key}'"
            else:
                value, theirs_value = [value], [theirs_value]
            for a, b in zip(value, theirs_value):
                b = np.asarray(b.detach().numpy() if hasattr(b, "detach") else b, dtype=np.float64)
                np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=1e-8,
                                           atol=1e-5 * np.abs(b).max(), err_msg=f"{where}, state '{key}'")


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_fits_a_line_by_least_squares(line_search_fn):
    """The fit LBFGS is for: a few steps reach the least-squares solution (np.linalg.lstsq's)."""
    params, loss_of = make_problem("least_squares", minitx)
    opt = optim.LBFGS(params, line_search_fn=line_search_fn)
    closure = counting_closure(opt, loss_of, [])
    for _ in range(3):
        opt.step(closure)
    X, y = least_squares_data()
    solution = np.linalg.lstsq(np.hstack([X, np.ones((20, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.append(params[0].numpy(), params[1].numpy()), solution, rtol=1e-6, atol=1e-8)


def test_lbfgs_with_strong_wolfe_finds_rosenbrocks_minimum():
    params, loss_of = make_problem("rosenbrock", minitx)
    opt = optim.LBFGS(params, line_search_fn="strong_wolfe")
    closure = counting_closure(opt, loss_of, [])
    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(params[0].numpy(), np.ones(4), atol=1e-6)
    assert float(closure()) < 1e-10


# ---------------------------------------------------------------------- the pieces against their math
def test_two_loop_direction_is_bfgs_inverse_hessian_times_minus_g():
    """The two-loop recursion computes -H g without forming H, where H is BFGS's inverse-Hessian
    estimate after the kept pairs, oldest first, starting from H_diag * I:
    H = (I - rho s y^T) H (I - rho y s^T) + rho s s^T, rho = 1 / (y . s)."""
    rng = np.random.default_rng(3)
    n, m = 6, 4
    A = rng.standard_normal((n, n))
    A = A @ A.T + n * np.eye(n)  # a positive definite Hessian: every pair has y . s > 0
    old_stps = [rng.standard_normal(n) for _ in range(m)]
    old_dirs = [A @ s for s in old_stps]
    ro = [1 / (y @ s) for y, s in zip(old_dirs, old_stps)]
    H_diag = (old_dirs[-1] @ old_stps[-1]) / (old_dirs[-1] @ old_dirs[-1])
    H = H_diag * np.eye(n)
    for s, y, rho in zip(old_stps, old_dirs, ro):
        H = (np.eye(n) - rho * np.outer(s, y)) @ H @ (np.eye(n) - rho * np.outer(y, s)) + rho * np.outer(s, s)
    g = rng.standard_normal(n)
    np.testing.assert_allclose(two_loop_direction(g, old_dirs, old_stps, ro, H_diag), -H @ g, rtol=1e-10)
    np.testing.assert_allclose(H @ old_dirs[-1], old_stps[-1], rtol=1e-10)  # the latest secant condition
    np.testing.assert_allclose(two_loop_direction(g, [], [], [], 0.5), -0.5 * g)  # no pairs: scaled descent


def test_cubic_minimum_is_exact_for_a_cubic_and_falls_back_to_the_middle():
    f = lambda x: (x - 1) ** 2 * (x + 2)  # noqa: E731  minimum at x = 1, maximum at x = -1
    df = lambda x: 2 * (x - 1) * (x + 2) + (x - 1) ** 2  # noqa: E731
    assert cubic_minimum(0.0, f(0.0), df(0.0), 3.0, f(3.0), df(3.0)) == pytest.approx(1.0, abs=1e-12)
    assert cubic_minimum(3.0, f(3.0), df(3.0), 0.0, f(0.0), df(0.0)) == pytest.approx(1.0, abs=1e-12)
    assert cubic_minimum(0.0, f(0.0), df(0.0), 3.0, f(3.0), df(3.0), bounds=(2.0, 2.5)) == 2.0  # clamped
    # a cubic without a minimum (d1^2 < g1 g2: it only falls), or a division by zero: the middle of the bounds
    assert cubic_minimum(0.0, 0.0, -1.0, 1.0, -0.5, -1.0, bounds=(0.0, 4.0)) == 2.0
    assert cubic_minimum(0.0, 0.0, 1.0, 1.0, 0.0, -1.0, bounds=(0.0, 4.0)) == 2.0
    assert cubic_minimum(1.0, 0.0, 1.0, 1.0, 0.0, -1.0, bounds=(0.0, 4.0)) == 2.0


@pytest.mark.parametrize("t0", [1e-3, 1.0, 30.0])
def test_strong_wolfe_returns_a_step_that_satisfies_both_conditions(t0):
    """phi(t) = f(x + t d) for a smooth 1-d function, from a step that is short, about right or far too
    long: the step found has sufficient decrease and a slope at most c2 times the first's."""
    f = lambda x: math.log(1 + x * x) + 0.1 * x * x  # noqa: E731
    df = lambda x: 2 * x / (1 + x * x) + 0.2 * x  # noqa: E731
    x0, d = np.array([3.0]), np.array([-1.0])

    def phi(t):
        x = float((x0 + t * d)[0])
        return f(x), np.array([df(x)])

    f0, g0 = phi(0.0)
    gtd = float(g0 @ d)
    f_t, g_t, t, evaluations = strong_wolfe(phi, t0, d, f0, g0, gtd)
    assert f_t <= f0 + 1e-4 * t * gtd
    assert abs(float(g_t @ d)) <= -0.9 * gtd
    f_at, g_at = phi(t)  # what it returns is phi at the step it returns
    assert f_t == f_at and g_t[0] == g_at[0]
    assert 1 <= evaluations <= 25


# ---------------------------------------------------------------------- state, errors, NaN
def test_lbfgs_state_round_trip_continues_identically(tmp_path):
    from minitx.serialization import load, save

    kw = dict(history_size=2, max_iter=5, line_search_fn="strong_wolfe")
    params_a, loss_a = make_problem("rosenbrock", minitx)
    opt_a = optim.LBFGS(params_a, **kw)
    closure_a = counting_closure(opt_a, loss_a, [])
    for _ in range(4):
        opt_a.step(closure_a)

    params_b, loss_b = make_problem("rosenbrock", minitx)
    opt_b = optim.LBFGS(params_b, **kw)
    closure_b = counting_closure(opt_b, loss_b, [])
    for _ in range(2):
        opt_b.step(closure_b)
    saved = opt_b.state_dict()
    assert sorted(saved["state"][0]) == ["H_diag", "d", "func_evals", "n_iter", "old_dirs", "old_stps",
                                         "prev_flat_grad", "prev_loss", "ro", "t"]
    assert len(saved["state"][0]["old_dirs"]) == 2 and isinstance(saved["state"][0]["old_dirs"][0], np.ndarray)
    save({"opt": saved, "params": [p.data for p in params_b]}, tmp_path / "ck.npz")
    ck = load(tmp_path / "ck.npz")
    params_c = [minitx.tensor(a, requires_grad=True) for a in ck["params"]]
    opt_c = optim.LBFGS(params_c)  # the hyperparameters come with the state dict
    opt_c.load_state_dict(ck["opt"])
    assert opt_c.param_groups[0]["history_size"] == 2
    closure_c = counting_closure(opt_c, lambda: rosenbrock(params_c[0]), [])
    for _ in range(2):
        opt_c.step(closure_c)
    np.testing.assert_array_equal(params_a[0].numpy(), params_c[0].numpy())
    assert opt_a.state[params_a[0]]["func_evals"] == opt_c.state[params_c[0]]["func_evals"]


def test_lbfgs_state_is_checked_on_load():
    params, loss_of = make_problem("least_squares", minitx)
    opt = optim.LBFGS(params, max_iter=3)
    opt.step(counting_closure(opt, loss_of, []))
    saved = opt.state_dict()
    bad = dict(saved, state=[dict(saved["state"][0], d=np.zeros(3)), {}])
    with pytest.raises(ValueError, match=r"LBFGS.load_state_dict: state 'd' of parameter 0 has shape \(3,\); "
                                         r"expected \(4,\), the parameters' number of weights"):
        optim.LBFGS(make_problem("least_squares", minitx)[0]).load_state_dict(bad)
    bad = dict(saved, state=[dict(saved["state"][0], ro=[]), {}])
    with pytest.raises(ValueError, match=r"'old_dirs', 'old_stps' and 'ro' are lists of one length"):
        optim.LBFGS(make_problem("least_squares", minitx)[0]).load_state_dict(bad)
    bad = dict(saved, state=[{}, saved["state"][0]])
    with pytest.raises(ValueError, match=r"state for parameter 1; LBFGS keeps its one state as parameter 0's"):
        optim.LBFGS(make_problem("least_squares", minitx)[0]).load_state_dict(bad)


def test_a_start_that_is_already_optimal_moves_nothing_and_counts_the_call():
    p = minitx.tensor(np.zeros(3), requires_grad=True)
    opt = optim.LBFGS([p])
    closure = counting_closure(opt, lambda: (p * p).sum(), [])
    assert float(opt.step(closure)) == 0.0
    np.testing.assert_array_equal(p.numpy(), np.zeros(3))
    assert opt.state[p] == {"func_evals": 1, "n_iter": 0}
    q = minitx.tensor(np.zeros(3), requires_grad=True)
    again = optim.LBFGS([q])
    again.load_state_dict(opt.state_dict())
    assert again.state[q] == {"func_evals": 1, "n_iter": 0}


def test_lbfgs_refuses_a_second_group_and_a_step_without_closure():
    params, loss_of = make_problem("least_squares", minitx)
    opt = optim.LBFGS(params[:1])
    with pytest.raises(ValueError, match=r"LBFGS: got a second parameter group; expected one"):
        opt.add_param_group({"params": params[1:]})
    with pytest.raises(TypeError, match=r"LBFGS.step: expected a closure .* got None"):
        opt.step()
    with pytest.raises(TypeError, match=r"LBFGS.step: the closure returned None; expected the loss"):
        opt.step(lambda: None)


def test_a_parameter_without_gradient_stays_and_the_others_move():
    params, loss_of = make_problem("least_squares", minitx)
    unused = minitx.tensor(np.ones(2), requires_grad=True)
    opt = optim.LBFGS(params + [unused])
    opt.step(counting_closure(opt, loss_of, []))
    np.testing.assert_array_equal(unused.numpy(), np.ones(2))
    assert opt.state[params[0]]["d"].shape == (6,) and not (params[0].numpy() == 0).all()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_a_non_finite_loss_raises_and_puts_everything_back(line_search_fn):
    """The third closure call (in the line search, or the second iteration) gives NaN: the error names
    the call, and the parameters and the state are those before the step; check_finite=False goes on."""
    params, loss_of = make_problem("rosenbrock", minitx)
    opt = optim.LBFGS(params, line_search_fn=line_search_fn, max_iter=5)
    opt.step(counting_closure(opt, loss_of, []))
    before, state_before = params[0].numpy().copy(), opt.state_dict()
    calls = []

    def poisoned():
        loss = counting_closure(opt, loss_of, calls)()
        return loss * float("nan") if len(calls) == 3 else loss

    with pytest.raises(FloatingPointError, match=r"LBFGS.step: the closure's loss is not finite \(NaN or inf\) at "
                                                 r"its call 3 of this step; the parameters and the state are as "
                                                 r"they were before the step"):
        opt.step(poisoned)
    np.testing.assert_array_equal(params[0].numpy(), before)
    after = opt.state_dict()["state"][0]
    for key, value in state_before["state"][0].items():
        np.testing.assert_array_equal(np.asarray(after[key]), np.asarray(value), err_msg=key)
    calls.clear()
    unchecked = optim.LBFGS(params, line_search_fn=line_search_fn, max_iter=5, check_finite=False)
    unchecked.step(poisoned)  # NaN flows on, as in PyTorch


# ---------------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_on_the_gpu_matches_the_cpu(line_search_fn):
    results = []
    for device in ("cpu", "cuda"):
        x = minitx.tensor(ROSENBROCK_START[0].copy(), device=device, requires_grad=True)
        opt = optim.LBFGS([x], line_search_fn=line_search_fn, lr=0.5 if line_search_fn is None else 1)
        closure = counting_closure(opt, lambda: rosenbrock(x), [])
        for _ in range(3):
            opt.step(closure)
        assert all(isinstance(v, (np.ndarray, int, float, list)) for v in opt.state_dict()["state"][0].values())
        results.append(x.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-8, atol=1e-10)
