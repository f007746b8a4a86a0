"""Optimizers and gradient clipping against hand-written NumPy references."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
from minitx import optim
from minitx.optim import SGD, Adam, AdamW, clip_grad_norm_
from torch_reference import import_torch

SHAPES = [(3, 4), (5,), ()]


def make_params(seed=0, shapes=SHAPES, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [minitx.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]


def grad_sequence(steps, seed=1, shapes=SHAPES, dtype=np.float64):
    """grads[t][i]: the gradient of parameter i at step t (fixed, so runs can be compared)."""
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]


def set_grads(params, grads):
    for p, g in zip(params, grads):
        p.grad = None if g is None else minitx.tensor(g)


def run(opt, params, grads):
    for gs in grads:
        set_grads(params, gs)
        opt.step()


# ---------------------------------------------------------------------- references (plain numpy)
def ref_sgd(p0, grads, lr, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0):
    p = [x.copy() for x in p0]
    buf = [None] * len(p)
    for gs in grads:
        for i, g in enumerate(gs):
            d = g + weight_decay * p[i]
            if momentum:
                buf[i] = d.copy() if buf[i] is None else momentum * buf[i] + (1 - dampening) * d
                d = d + momentum * buf[i] if nesterov else buf[i]
            p[i] = p[i] - lr * d
    return p


def ref_adam(p0, grads, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    p = [x.copy() for x in p0]
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    t = [0] * len(p)
    for gs in grads:
        for i, g in enumerate(gs):
            if g is None:
                continue
            t[i] += 1
            if decoupled:
                p[i] = p[i] - lr * wd * p[i]
            else:
                g = g + wd * p[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g ** 2
            m_hat = m[i] / (1 - b1 ** t[i])
            v_hat = v[i] / (1 - b2 ** t[i])
            p[i] = p[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def assert_params(params, expected, rtol=1e-10, atol=1e-12):
    for k, (p, e) in enumerate(zip(params, expected)):
        np.testing.assert_allclose(p.data, e, rtol=rtol, atol=atol, err_msg=f"parameter {k}")


# ---------------------------------------------------------------------- SGD
@pytest.mark.parametrize("kw", [
    dict(),
    dict(momentum=0.9),
    dict(momentum=0.9, dampening=0.3),
    dict(momentum=0.8, nesterov=True),
    dict(weight_decay=0.05),
    dict(momentum=0.9, nesterov=True, weight_decay=0.01),
])
def test_sgd_matches_reference(kw):
    params = make_params()
    p0 = [p.data.copy() for p in params]
    grads = grad_sequence(4)
    run(SGD(params, lr=0.1, **kw), params, grads)
    assert_params(params, ref_sgd(p0, grads, lr=0.1, **kw))


def test_sgd_updates_in_place_and_keeps_dtype():
    params = make_params(dtype=np.float32)
    arrays = [p.data for p in params]
    run(SGD(params, lr=0.1, momentum=0.9), params, grad_sequence(2, dtype=np.float32))
    for p, a in zip(params, arrays):
        assert p.data is a and p.data.dtype == np.float32


# ---------------------------------------------------------------------- Adam / AdamW
@pytest.mark.parametrize("cls,kw", [
    (Adam, dict()),
    (Adam, dict(betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (AdamW, dict()),
    (AdamW, dict(betas=(0.5, 0.9), weight_decay=0.3)),
])
def test_adam_matches_reference(cls, kw):
    params = make_params()
    p0 = [p.data.copy() for p in params]
    grads = grad_sequence(5)
    opt = cls(params, lr=0.01, **kw)
    run(opt, params, grads)
    b1, b2 = kw.get("betas", (0.9, 0.999))
    wd = kw.get("weight_decay", 0.01 if cls is AdamW else 0.0)
    expected = ref_adam(p0, grads, 0.01, b1, b2, kw.get("eps", 1e-8), wd, decoupled=cls is AdamW)
    assert_params(params, expected)
    assert [opt.state[p]["step"] for p in params] == [5, 5, 5]


def test_adamw_differs_from_adam_only_by_weight_decay():
    grads = grad_sequence(3)
    results = {}
    for cls in (Adam, AdamW):
        for wd in (0.0, 0.5):
            params = make_params()
            run(cls(params, lr=0.05, weight_decay=wd), params, grads)
            results[cls.__name__, wd] = [p.data.copy() for p in params]
    for a, b in zip(results["Adam", 0.0], results["AdamW", 0.0]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(results["Adam", 0.5], results["AdamW", 0.5]):
        assert not np.allclose(a, b)
    # AdamW's decay is p -= lr * wd * p on top of the plain Adam step
    p0 = [p.data.copy() for p in make_params()]
    expected = ref_adam(p0, grads, 0.05, wd=0.5, decoupled=True)
    for a, e in zip(results["AdamW", 0.5], expected):
        np.testing.assert_allclose(a, e, rtol=1e-12)


def test_params_without_grad_are_untouched_and_keep_own_step_count():
    params = make_params()
    p0 = [p.data.copy() for p in params]
    grads = grad_sequence(4)
    grads[0][1] = None          # parameter 1 has no gradient at steps 0 and 2
    grads[2][1] = None
    opt = Adam(params, lr=0.01)
    run(opt, params, grads[:1])
    np.testing.assert_array_equal(params[1].data, p0[1])
    assert params[1] not in opt.state
    run(opt, params, grads[1:])
    assert opt.state[params[1]]["step"] == 2 and opt.state[params[0]]["step"] == 4
    assert_params(params, ref_adam(p0, grads, 0.01))


def test_sgd_skips_params_without_grad():
    params = make_params()
    before = params[2].data.copy()
    set_grads(params, [np.ones((3, 4)), np.ones(5), None])
    SGD(params, lr=0.1, momentum=0.9).step()
    np.testing.assert_array_equal(params[2].data, before)


def test_param_groups_have_their_own_hyperparameters():
    params = make_params()
    p0 = [p.data.copy() for p in params]
    grads = grad_sequence(3)
    opt = AdamW([{"params": params[:2]}, {"params": params[2:], "lr": 0.1, "weight_decay": 0.0}],
                lr=0.01, weight_decay=0.2)
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.1]
    run(opt, params, grads)
    first = ref_adam(p0[:2], [g[:2] for g in grads], 0.01, wd=0.2, decoupled=True)
    second = ref_adam(p0[2:], [g[2:] for g in grads], 0.1, wd=0.0, decoupled=True)
    assert_params(params, first + second)


def test_lr_is_writable_between_steps():
    params = make_params()
    p0 = [p.data.copy() for p in params]
    grads = grad_sequence(2)
    opt = SGD(params, lr=0.1)
    run(opt, params, grads[:1])
    opt.param_groups[0]["lr"] = 0.5
    run(opt, params, grads[1:])
    expected = ref_sgd(ref_sgd(p0, grads[:1], lr=0.1), grads[1:], lr=0.5)
    assert_params(params, expected)


@pytest.mark.parametrize("make", [
    lambda ps: SGD(ps, lr=0.1),
    lambda ps: SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
    lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
    lambda ps: SGD(ps, lr=0.1, momentum=0.5, dampening=0.3),
    lambda ps: Adam(ps, lr=0.01),
    lambda ps: Adam(ps, lr=0.01, weight_decay=0.1),
    lambda ps: AdamW(ps, lr=0.01, weight_decay=0.3),
    lambda ps: optim.Adagrad(ps, weight_decay=0.1),
    lambda ps: optim.Adadelta(ps, weight_decay=0.1),
    lambda ps: optim.Adamax(ps, weight_decay=0.1),
    lambda ps: optim.NAdam(ps, weight_decay=0.1),
    lambda ps: optim.RAdam(ps, weight_decay=0.1),
    lambda ps: optim.Rprop(ps, maximize=True),
    lambda ps: optim.ASGD(ps, weight_decay=0.1, t0=0),
    lambda ps: optim.Adafactor(ps, weight_decay=0.1),
], ids=["sgd", "sgd-momentum-decay", "sgd-nesterov-decay", "sgd-dampening", "adam", "adam-l2", "adamw", "adagrad-l2",
        "adadelta-l2", "adamax-l2", "nadam-l2", "radam-l2", "rprop-maximize", "asgd-l2", "adafactor-decay"])
def test_step_leaves_the_gradients_unchanged(make):
    """step() reads .grad and never writes it: a weight-decay or momentum term added into the
    gradient in place would change what the user (or gradient clipping, or a second optimizer
    over the same parameters) sees."""
    params = make_params()
    set_grads(params, grad_sequence(1)[0])
    grads = [p.grad for p in params]
    before = [g.numpy().copy() for g in grads]
    start = [p.numpy().copy() for p in params]
    opt = make(params)
    for _ in range(2):
        opt.step()
        for k, (p, g, b) in enumerate(zip(params, grads, before)):
            assert p.grad is g, f"parameter {k}: .grad replaced"
            np.testing.assert_array_equal(g.numpy(), b, err_msg=f"parameter {k}: .grad changed by step()")
    assert all(not np.array_equal(p.numpy(), s) for p, s in zip(params, start))


def test_zero_grad():
    params = make_params()
    set_grads(params, grad_sequence(1)[0])
    opt = SGD(params, lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.data.any() for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


# ---------------------------------------------------------------------- state_dict
@pytest.mark.parametrize("make", [
    lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: Adam(ps, lr=0.01, weight_decay=0.1),
    lambda ps: AdamW([{"params": ps[:1]}, {"params": ps[1:], "weight_decay": 0.0}], lr=0.01),
    lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    lambda ps: optim.Adadelta(ps, rho=0.8, weight_decay=0.01),
    lambda ps: optim.Adamax(ps, lr=0.01),
    lambda ps: optim.NAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    lambda ps: optim.RAdam(ps, lr=0.01),  # 3 steps, then the 4th to 6th: the sixth is RAdam's first rectified
    lambda ps: optim.Rprop(ps, lr=0.1, etas=(0.4, 1.3)),
    lambda ps: optim.ASGD(ps, lr=0.1, lambd=0.1, t0=1),  # averaging from the second step
    lambda ps: optim.Adafactor([{"params": ps[:1]}, {"params": ps[1:], "eps": (1e-3, 1e-2)}], weight_decay=0.1),
])
def test_state_dict_round_trip_continues_identically(make, tmp_path):
    grads = grad_sequence(6)
    # uninterrupted run
    params_a = make_params()
    run(make(params_a), params_a, grads)
    # interrupted: 3 steps, save (through a checkpoint file), fresh optimizer, load, 3 more
    params_b = make_params()
    opt_b = make(params_b)
    run(opt_b, params_b, grads[:3])
    from minitx.serialization import load, save
    save({"opt": opt_b.state_dict(), "params": [p.data for p in params_b]}, tmp_path / "ck.npz")
    ck = load(tmp_path / "ck.npz")
    params_c = [minitx.tensor(a, requires_grad=True) for a in ck["params"]]
    opt_c = make(params_c)
    opt_c.load_state_dict(ck["opt"])
    run(opt_c, params_c, grads[3:])
    for a, c in zip(params_a, params_c):
        np.testing.assert_array_equal(a.data, c.data)


def test_state_dict_holds_numpy_copies():
    params = make_params()
    opt = Adam(params)
    run(opt, params, grad_sequence(1))
    sd = opt.state_dict()
    assert isinstance(sd["state"][0]["exp_avg"], np.ndarray)
    sd["state"][0]["exp_avg"][...] = 123.0
    assert not (opt.state[params[0]]["exp_avg"] == 123.0).any()
    assert sd["param_groups"][0]["params"] == [0, 1, 2]


def test_load_state_dict_wrong_shape_names_index_and_shapes():
    params = make_params()
    opt = Adam(params)
    run(opt, params, grad_sequence(1))
    sd = opt.state_dict()
    sd["state"][1]["exp_avg"] = np.zeros((6,))
    fresh = Adam(make_params())
    with pytest.raises(ValueError, match=r"parameter 1 has shape \(6,\).*shape \(5,\)"):
        fresh.load_state_dict(sd)
    assert fresh.state == {}  # nothing was changed


def test_load_state_dict_wrong_counts():
    params = make_params()
    sd = Adam(params).state_dict()
    with pytest.raises(ValueError, match="parameter groups differs: 1 in the state dict, 2 in this"):
        Adam([{"params": params[:1]}, {"params": params[1:]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="3 parameters in the state dict and 2"):
        Adam(params[:2]).load_state_dict(sd)


def test_load_state_dict_restores_hyperparameters():
    params = make_params()
    opt = AdamW(params, lr=0.123, betas=(0.7, 0.77))
    fresh = AdamW(make_params())
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["lr"] == 0.123 and fresh.param_groups[0]["betas"] == (0.7, 0.77)


# ---------------------------------------------------------------------- invalid input
@pytest.mark.parametrize("make,match", [
    (lambda ps: SGD(ps, lr=-0.1), r"SGD: invalid lr -0.1"),
    (lambda ps: SGD(ps, lr=0.1, momentum=-1), "SGD: invalid momentum"),
    (lambda ps: SGD(ps, lr=0.1, nesterov=True), "nesterov"),
    (lambda ps: Adam(ps, lr=-1.0), r"Adam: invalid lr -1.0"),
    (lambda ps: Adam(ps, betas=(1.0, 0.999)), r"Adam: invalid beta1 1.0"),
    (lambda ps: Adam(ps, betas=(0.9, -0.1)), r"Adam: invalid beta2 -0.1"),
    (lambda ps: AdamW(ps, eps=-1e-8), r"AdamW: invalid eps"),
    (lambda ps: AdamW(ps, weight_decay=float("nan")), r"AdamW: invalid weight_decay nan"),
    (lambda ps: AdamW([{"params": ps, "lr": -3.0}]), r"AdamW: invalid lr -3.0"),
    (lambda ps: optim.Adagrad(ps, lr_decay=-0.1), r"Adagrad: invalid lr_decay -0.1"),
    (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1.0), r"Adagrad: invalid initial_accumulator_value -1.0"),
    (lambda ps: optim.Adagrad(ps, eps=float("inf")), r"Adagrad: invalid eps inf"),
    (lambda ps: optim.Adadelta(ps, rho=1.5), r"Adadelta: invalid rho 1.5"),
    (lambda ps: optim.Adadelta(ps, lr=-1.0), r"Adadelta: invalid lr -1.0"),
    (lambda ps: optim.Adadelta(ps, weight_decay=-0.1), r"Adadelta: invalid weight_decay -0.1"),
    (lambda ps: optim.Adamax(ps, betas=(0.9, 1.0)), r"Adamax: invalid beta2 1.0"),
    (lambda ps: optim.Adamax(ps, eps=-1.0), r"Adamax: invalid eps -1.0"),
    (lambda ps: optim.NAdam(ps, momentum_decay=-0.1), r"NAdam: invalid momentum_decay -0.1"),
    (lambda ps: optim.NAdam(ps, betas=(-0.1, 0.9)), r"NAdam: invalid beta1 -0.1"),
    (lambda ps: optim.RAdam(ps, betas=(0.9,)), r"RAdam: invalid betas \(0.9,\)"),
    (lambda ps: optim.RAdam(ps, weight_decay=-0.1), r"RAdam: invalid weight_decay -0.1"),
    (lambda ps: optim.Rprop(ps, lr=-0.1), r"Rprop: invalid lr -0.1"),
    (lambda ps: optim.Rprop(ps, etas=(1.2, 0.5)),
     r"Rprop: invalid etas \(1.2, 0.5\); expected a pair \(etaminus, etaplus\) with 0 < etaminus < 1 < etaplus"),
    (lambda ps: optim.Rprop(ps, etas=(0.5,)), r"Rprop: invalid etas \(0.5,\)"),
    (lambda ps: optim.Rprop(ps, step_sizes=(1.0, 1e-3)),
     r"Rprop: invalid step_sizes \(1.0, 0.001\); expected a pair \(step_size_min, step_size_max\) with "
     r"0 <= step_size_min <= step_size_max"),
    (lambda ps: optim.ASGD(ps, lr=-1.0), r"ASGD: invalid lr -1.0"),
    (lambda ps: optim.ASGD(ps, lambd=-1e-4), r"ASGD: invalid lambd -0.0001"),
    (lambda ps: optim.ASGD(ps, alpha=float("nan")), r"ASGD: invalid alpha nan"),
    (lambda ps: optim.ASGD(ps, weight_decay=-0.1), r"ASGD: invalid weight_decay -0.1"),
    (lambda ps: optim.Adafactor(ps, lr=-0.01), r"Adafactor: invalid lr -0.01"),
    (lambda ps: optim.Adafactor(ps, beta2_decay=0.8), r"Adafactor: invalid beta2_decay 0.8; expected a finite "
                                                      r"number beta2_decay <= 0"),
    (lambda ps: optim.Adafactor(ps, eps=1e-3), r"Adafactor: invalid eps 0.001; expected a pair \(eps1, eps2\)"),
    (lambda ps: optim.Adafactor(ps, eps=(None, -1.0)), r"Adafactor: invalid eps2 -1.0"),
    (lambda ps: optim.Adafactor(ps, d=0.5), r"Adafactor: invalid d 0.5; expected a finite number 1 <= d"),
    (lambda ps: optim.LBFGS(ps, lr=-1), r"LBFGS: invalid lr -1"),
    (lambda ps: optim.LBFGS(ps, max_iter=0), r"LBFGS: invalid max_iter 0; expected a whole number >= 1"),
    (lambda ps: optim.LBFGS(ps, max_eval=2.5), r"LBFGS: invalid max_eval 2.5"),
    (lambda ps: optim.LBFGS(ps, history_size=0), r"LBFGS: invalid history_size 0"),
    (lambda ps: optim.LBFGS(ps, tolerance_grad=-1e-7), r"LBFGS: invalid tolerance_grad -1e-07"),
    (lambda ps: optim.LBFGS(ps, line_search_fn="armijo"),
     r"LBFGS: invalid line_search_fn 'armijo'; expected None or 'strong_wolfe'"),
    (lambda ps: optim.LBFGS([{"params": ps[:1]}, {"params": ps[1:]}]),
     r"LBFGS: got 2 parameter groups; expected one \(LBFGS works over all its parameters as one flat vector"),
    (lambda ps: Adam([]), "empty parameter list"),
    (lambda ps: Adam(ps + ps[:1]), "more than once"),
])
def test_invalid_hyperparameters(make, match):
    with pytest.raises(ValueError, match=match):
        make(make_params())


def test_invalid_param_types():
    with pytest.raises(TypeError, match="single Tensor"):
        SGD(make_params()[0], lr=0.1)
    with pytest.raises(TypeError, match="parameter 1 is a ndarray"):
        SGD([make_params()[0], np.zeros(3)], lr=0.1)


# ---------------------------------------------------------------------- NaN / inf policy
@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, optim.RMSprop, optim.Adagrad, optim.Adadelta, optim.Adamax,
                                 optim.NAdam, optim.RAdam, optim.Rprop, optim.ASGD, optim.Adafactor])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_grad_raises_and_changes_nothing(cls, bad):
    params = make_params()
    opt = cls(params, lr=0.1)
    run(opt, params, grad_sequence(1))
    before = [p.data.copy() for p in params]
    state_before = opt.state_dict()
    grads = grad_sequence(1, seed=5)[0]
    grads[2] = np.array(bad)      # parameter 2 (0-d) is the bad one; 0 and 1 come first
    set_grads(params, grads)
    with pytest.raises(FloatingPointError, match=r"parameter 2 \(shape \(\)\)"):
        opt.step()
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.data, b)
    after = opt.state_dict()
    for s0, s1 in zip(state_before["state"], after["state"]):
        for k in s0:
            np.testing.assert_array_equal(s0[k], s1[k])


def test_the_first_non_finite_parameter_is_named_across_dtypes():
    """Gradients are checked per dtype; the error still names the lowest index."""
    params = [minitx.tensor(np.zeros(2), requires_grad=True),
              minitx.tensor(np.zeros(2, np.float32), requires_grad=True),
              minitx.tensor(np.zeros(3), requires_grad=True)]
    set_grads(params, [np.zeros(2), np.array([np.nan, 0], np.float32), np.array([0, np.inf, 0])])
    with pytest.raises(FloatingPointError, match=r"parameter 1 \(shape \(2,\)\)"):
        SGD(params, lr=0.1).step()


def test_check_finite_false_lets_nan_through():
    params = make_params(shapes=[(2,)])
    set_grads(params, [np.array([np.nan, 1.0])])
    SGD(params, lr=0.1, check_finite=False).step()
    assert np.isnan(params[0].data[0]) and np.isfinite(params[0].data[1])


# ---------------------------------------------------------------------- clip_grad_norm_
def test_clip_grad_norm_2_and_scaling():
    params = make_params()
    grads = grad_sequence(1)[0]
    set_grads(params, grads)
    expected = math.sqrt(sum(float((g ** 2).sum()) for g in grads))
    total = clip_grad_norm_(params, max_norm=1.0)
    assert isinstance(total, float)
    assert total == pytest.approx(expected, rel=1e-12)
    coef = 1.0 / (expected + 1e-6)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.data, g * coef, rtol=1e-12)
    new_norm = math.sqrt(sum(float((p.grad.data ** 2).sum()) for p in params))
    assert new_norm == pytest.approx(1.0, abs=1e-5)


def test_clip_grad_norm_inf():
    params = make_params()
    grads = grad_sequence(1)[0]
    set_grads(params, grads)
    expected = max(float(np.abs(g).max()) for g in grads)
    total = clip_grad_norm_(params, max_norm=0.5, norm_type=float("inf"))
    assert total == pytest.approx(expected, rel=1e-12)
    assert max(float(np.abs(p.grad.data).max()) for p in params) == pytest.approx(0.5, rel=1e-5)


def test_clip_grad_norm_noop_below_max_and_skips_none():
    params = make_params()
    grads = grad_sequence(1)[0]
    grads[1] = None
    set_grads(params, grads)
    expected = math.sqrt(float((grads[0] ** 2).sum() + (grads[2] ** 2).sum()))
    total = clip_grad_norm_(params, max_norm=1e6)
    assert total == pytest.approx(expected, rel=1e-12)
    np.testing.assert_array_equal(params[0].grad.data, grads[0])
    assert params[1].grad is None
    assert clip_grad_norm_([params[1]], 1.0) == 0.0


@given(norm_type=st.sampled_from([1.0, 2.0, 3.0, math.inf]),
       max_norm=st.floats(0.01, 10.0), seed=st.integers(0, 10_000))
def test_clip_grad_norm_property(norm_type, max_norm, seed):
    params = make_params(shapes=[(4, 3), (7,)])
    grads = grad_sequence(1, seed=seed, shapes=[(4, 3), (7,)])[0]
    set_grads(params, grads)
    flat = np.concatenate([g.ravel() for g in grads])
    expected = float(np.linalg.norm(flat, ord=norm_type))
    total = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    assert total == pytest.approx(expected, rel=1e-10)
    clipped = np.concatenate([p.grad.data.ravel() for p in params])
    assert np.linalg.norm(clipped, ord=norm_type) <= max(max_norm, expected) * (1 + 1e-9)
    if expected <= max_norm:
        np.testing.assert_array_equal(clipped, flat)


def test_clip_grad_norm_non_finite_returns_norm_and_leaves_grads():
    params = make_params()
    grads = grad_sequence(1)[0]
    grads[0][0, 0] = np.inf
    set_grads(params, grads)
    total = clip_grad_norm_(params, max_norm=1.0)
    assert math.isinf(total)
    np.testing.assert_array_equal(params[1].grad.data, grads[1])
    with pytest.raises(FloatingPointError, match="total gradient norm is inf"):
        clip_grad_norm_(params, max_norm=1.0, error_if_nonfinite=True)


@pytest.mark.parametrize("dtype, value", [(np.float16, 300.0), (np.float16, 60000.0), ("bfloat16", 1e5)])
@pytest.mark.parametrize("norm_type", [2.0, 3.0, math.inf])
def test_clip_grad_norm_of_gradients_whose_squares_overflow_their_dtype(dtype, value, norm_type):
    """A 16-bit gradient's norm is taken in float32, summed in float64: a float16 300 squared
    (90000) is past float16's largest, so squaring in float16 gave an inf norm and left the
    gradients unclipped; PyTorch gives 300 sqrt(3) = 519.6 and clips each to 0.577."""
    p = minitx.tensor(np.zeros(3), dtype=dtype, requires_grad=True)
    p.grad = minitx.tensor(np.full(3, value), dtype=dtype)
    stored = float(p.grad.data.astype(np.float64)[0])  # value as the dtype holds it
    expected = float(np.linalg.norm(np.full(3, stored), ord=norm_type))
    assert clip_grad_norm_([p], max_norm=1.0, norm_type=norm_type) == pytest.approx(expected, rel=1e-6)  # float32 powers
    clipped = p.grad.data.astype(np.float64)
    np.testing.assert_allclose(clipped, stored / expected, rtol=1e-2)
    if dtype == np.float16 and value == 300.0 and norm_type == 2.0:  # (PyTorch's float16 norm of 60000s is inf)
        torch = import_torch()
        q = torch.zeros(3, dtype=torch.float16, requires_grad=True)
        q.grad = torch.full((3,), value, dtype=torch.float16)
        assert float(torch.nn.utils.clip_grad_norm_([q], 1.0)) == pytest.approx(expected, rel=1e-3)
        np.testing.assert_allclose(clipped, q.grad.double().numpy(), rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_clip_grads_on_device_reference_path_computes_16_bit_norms_in_float32(dtype):
    """The step that reads nothing back (minitx.sync) clips as clip_grad_norm_ does."""
    from minitx.optim.clip import clip_grads_on_device

    g = minitx.tensor(np.full(3, 300.0), dtype=dtype).data
    total = clip_grads_on_device([g], 1.0)
    assert float(total) == pytest.approx(300.0 * math.sqrt(3), rel=1e-12)
    np.testing.assert_allclose(g.astype(np.float64), 1 / math.sqrt(3), rtol=1e-2)


def test_clip_grad_norm_invalid_arguments():
    params = make_params()
    with pytest.raises(ValueError, match="norm_type"):
        clip_grad_norm_(params, 1.0, norm_type=0)
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm_(params, -1.0)


# ---------------------------------------------------------------------- PyTorch's arguments
def _step_both_and_compare(torch, ours_opt, params, their_opt, theirs, steps=3, grads=None):
    """Three steps of minitx's optimizer and PyTorch's on the same gradients (``grads``, else
    grad_sequence(steps)); the same parameters."""
    for gs in grads or grad_sequence(steps):
        set_grads(params, gs)
        for q, g in zip(theirs, gs):
            q.grad = torch.tensor(g)
        ours_opt.step()
        their_opt.step()
    for p, q in zip(params, theirs):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, kw", [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
                                      ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                      ("Adam", dict(lr=0.01, weight_decay=0.1)), ("AdamW", dict(lr=0.01))])
def test_maximize_matches_pytorch(name, kw):
    """maximize=True ascends: the gradient is negated before anything else (weight decay too is
    then added to -g), as in PyTorch."""
    torch = import_torch()
    params = make_params()
    theirs = [torch.tensor(p.numpy(), requires_grad=True) for p in params]
    ours_opt = getattr(optim, name)(params, maximize=True, **kw)
    their_opt = getattr(torch.optim, name)(theirs, maximize=True, **kw)
    _step_both_and_compare(torch, ours_opt, params, their_opt, theirs)
    assert ours_opt.state_dict()["param_groups"][0]["maximize"] is True


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                  "Rprop", "ASGD", "Adafactor"])
def test_step_with_a_closure_matches_pytorch(name):
    """opt.step(closure), as PyTorch's: the closure is called once, first, with gradients recorded
    (under no_grad too), the step uses the gradients it left, and step returns its loss."""
    torch = import_torch()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # (PyTorch keeps NAdam's and ASGD's scalar state in it)
    try:
        _step_with_closures(torch, name)
    finally:
        torch.set_default_dtype(previous)


def _step_with_closures(torch, name):
    target = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    params = [minitx.tensor(np.zeros((3, 4)), requires_grad=True)]
    theirs = [torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)]
    ours_opt, their_opt = getattr(optim, name)(params, lr=0.1), getattr(torch.optim, name)(theirs, lr=0.1)
    calls = []

    def closure(lib, opt, p):
        def evaluate():
            calls.append(lib)
            opt.zero_grad()
            loss = ((p - lib.tensor(target)) ** 2).sum()
            loss.backward()
            return loss
        return evaluate

    for _ in range(3):
        with minitx.no_grad():
            ours = ours_opt.step(closure(minitx, ours_opt, params[0]))
        with torch.no_grad():
            their = their_opt.step(closure(torch, their_opt, theirs[0]))
        assert float(ours.item()) == pytest.approx(float(their.item()), rel=1e-12)
        np.testing.assert_allclose(params[0].numpy(), theirs[0].detach().numpy(), rtol=1e-12, atol=1e-14)
    assert calls == [minitx, torch] * 3
    assert ours_opt.step() is None
    with pytest.raises(TypeError, match=f"{name}.step: closure must be a function"):
        ours_opt.step(0.5)


def test_sgd_takes_pytorchs_arguments_in_its_order_and_its_default_lr():
    """SGD(params, lr=1e-3, momentum, dampening, weight_decay, nesterov): positional arguments
    written for PyTorch mean the same here (dampening third, not nesterov)."""
    torch = import_torch()
    params = make_params()
    theirs = [torch.tensor(p.numpy(), requires_grad=True) for p in params]
    ours_opt, their_opt = SGD(params, 0.1, 0.9, 0.5, 0.01), torch.optim.SGD(theirs, 0.1, 0.9, 0.5, 0.01)
    _step_both_and_compare(torch, ours_opt, params, their_opt, theirs)
    assert SGD(params).param_groups[0]["lr"] == torch.optim.SGD(theirs).param_groups[0]["lr"] == 1e-3


@pytest.mark.parametrize("kw", [dict(lr=0.05), dict(lr=0.05, weight_decay=0.1, betas=(0.5, 0.9)),
                                dict(lr=0.05, maximize=True)])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_amsgrad_matches_pytorch(name, kw):
    """amsgrad is Adam's sixth argument, as in PyTorch (check_finite is keyword-only). Gradients
    that shrink after the first steps, so the running maximum of v differs from v."""
    torch, kw = import_torch(), dict(kw)
    params = make_params()
    theirs = [torch.tensor(p.numpy(), requires_grad=True) for p in params]
    ours_opt = getattr(optim, name)(params, kw.pop("lr"), kw.pop("betas", (0.9, 0.999)), 1e-8,
                                    kw.pop("weight_decay", 0.0), True, **kw)
    their_opt = getattr(torch.optim, name)(theirs, **ours_opt.defaults)
    shrinking = [[g / (1 + 10 * t) for g in gs] for t, gs in enumerate(grad_sequence(6))]
    _step_both_and_compare(torch, ours_opt, params, their_opt, theirs, grads=shrinking)
    ours, theirs_state = ours_opt.state[params[0]], their_opt.state[theirs[0]]
    assert sorted(ours) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    np.testing.assert_allclose(ours["max_exp_avg_sq"], theirs_state["max_exp_avg_sq"].numpy(), rtol=1e-12)
    assert (ours["max_exp_avg_sq"] > ours["exp_avg_sq"]).any()


def test_amsgrad_state_is_saved_restored_and_checked():
    params = make_params()
    opt = Adam(params, lr=0.01, amsgrad=True)
    run(opt, params, grad_sequence(2))
    saved = opt.state_dict()
    again = Adam(make_params(), lr=0.01)  # amsgrad comes with the saved groups, as PyTorch's
    again.load_state_dict(saved)
    assert again.param_groups[0]["amsgrad"] is True
    np.testing.assert_array_equal(again.state[again.param_groups[0]["params"][1]]["max_exp_avg_sq"],
                                  opt.state[params[1]]["max_exp_avg_sq"])
    without = Adam(make_params(), lr=0.01)
    run(without, without.param_groups[0]["params"], grad_sequence(1))
    plain = without.state_dict()
    plain["param_groups"][0]["amsgrad"] = True
    with pytest.raises(ValueError, match=r"state of parameter 0 has keys .*\(missing: \['max_exp_avg_sq'\]\)"):
        Adam(make_params(), lr=0.01).load_state_dict(plain)
    saved["state"][2]["max_exp_avg_sq"] = -saved["state"][2]["max_exp_avg_sq"] - 1
    with pytest.raises(ValueError, match="state 'max_exp_avg_sq' of parameter 2 holds negative values"):
        Adam(make_params(), lr=0.01).load_state_dict(saved)


def test_amsgrad_takes_a_skipped_step_as_nothing():
    """A step skipped on the device (GradScaler: a gradient overflowed) leaves v's maximum too."""
    params = make_params()
    opt = AdamW(params, lr=0.01, amsgrad=True)
    run(opt, params, grad_sequence(1))
    before = [{k: np.array(v, copy=True) for k, v in opt.state[p].items()} for p in params]
    set_grads(params, grad_sequence(1, seed=5)[0])
    weights = [p.numpy().copy() for p in params]
    opt._step(skip=np.array(True))
    for i, p in enumerate(params):
        np.testing.assert_array_equal(p.numpy(), weights[i])
        for key, value in before[i].items():
            np.testing.assert_array_equal(np.asarray(opt.state[p][key]), value, err_msg=key)
    opt._step(skip=np.array(False))
    state = opt.state[params[0]]
    assert (state["max_exp_avg_sq"] >= before[0]["max_exp_avg_sq"]).all() and state["step"] == 2


@pytest.mark.parametrize("cls", [Adam, AdamW])
def test_adams_flags_are_checked(cls):
    with pytest.raises(TypeError, match=f"{cls.__name__}: invalid amsgrad 1; expected True or False"):
        cls(make_params(), amsgrad=1)
    with pytest.raises(TypeError, match=f"{cls.__name__}: invalid maximize 'yes'; expected True or False"):
        cls(make_params(), maximize="yes")


def test_public_names():
    assert all(hasattr(optim, name) for name in optim.__all__)
    for name in ("Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                 "Rprop", "ASGD", "Adafactor", "LBFGS",
                 "clip_grad_norm_", "NoamSchedule", "WarmupInverseSqrt", "WarmupCosine", "ReduceLROnPlateau"):
        assert name in optim.__all__


# ---------------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.parametrize("cls, kw", [(SGD, {"momentum": 0.9}), (Adam, {}), (AdamW, {}), (Adam, {"amsgrad": True}),
                                     (AdamW, {"amsgrad": True}), (optim.RMSprop, {"centered": True}),
                                     (optim.Adagrad, {}), (optim.Adadelta, {}), (optim.Adamax, {}), (optim.NAdam, {}),
                                     (optim.RAdam, {}), (optim.Rprop, {}), (optim.ASGD, {"t0": 1, "lambd": 0.1}),
                                     (optim.Adafactor, {"weight_decay": 0.1})])
def test_gpu_matches_cpu(cls, kw):
    """(amsgrad and the optimizers after it: the reference update on CuPy; Adam(W): the fused kernel.)"""
    grads = grad_sequence(3, dtype=np.float32)
    results = []
    for device in ("cpu", "cuda"):
        params = [p.to(device=device).detach().requires_grad_() for p in make_params(dtype=np.float32)]
        opt = cls(params, lr=0.01, **kw)
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = minitx.tensor(g, device=device)
            opt.step()
        clip_grad_norm_(params, 0.1)
        sd = opt.state_dict()
        assert all(isinstance(v, np.ndarray) for s in sd["state"] for v in s.values()
                   if not isinstance(v, (int, float)))  # arrays, step counts, NAdam's mu_product
        results.append([p.numpy() for p in params])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_below_max_writes_nothing_so_a_graph_that_saved_the_gradient_still_runs():
    """A gradient used as a constant in a later graph: clipping that changes nothing must not
    count as an in-place write (the version check would refuse that graph's backward)."""
    p = minitx.tensor([3.0, 4.0], requires_grad=True)
    (p * p).sum().backward()                      # p.grad = [6, 8], norm 10
    w = minitx.tensor([1.0, 1.0], requires_grad=True)
    y = (w * p.grad).sum()                        # saves p.grad's array
    optim.clip_grad_norm_([p], max_norm=100.0)    # below the max: nothing is scaled
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 8.0])


@pytest.mark.parametrize("opt_class", [optim.Adam, optim.AdamW])
def test_a_group_added_after_steps_counts_its_own_steps_and_saves_them(opt_class):
    """Each group keeps its step counts on the device in an array of its own: a group added after
    a step (its parameters unknown when the first array was made) steps, saves and restores."""
    a = minitx.tensor(np.ones(3, np.float32), requires_grad=True)
    b = minitx.tensor(np.ones(2, np.float32), requires_grad=True)
    opt = opt_class([a], lr=0.1)
    a.grad = minitx.tensor(np.ones(3, np.float32))
    opt.step()
    opt.add_param_group({"params": [b], "lr": 0.2})
    for _ in range(2):
        a.grad, b.grad = minitx.tensor(np.ones(3, np.float32)), minitx.tensor(np.ones(2, np.float32))
        opt.step()
    assert [int(s["step"]) for s in opt.state.values()] == [3, 2]
    saved = opt.state_dict()
    assert [entry["step"] for entry in saved["state"]] == [3, 2]
    again = opt_class([minitx.tensor(np.ones(3, np.float32), requires_grad=True)], lr=0.1)
    again.add_param_group({"params": [minitx.tensor(np.ones(2, np.float32), requires_grad=True)], "lr": 0.2})
    again.load_state_dict(saved)
    assert [int(s["step"]) for s in again.state.values()] == [3, 2]


# ---------------------------------------------------------------------- RMSprop
@pytest.mark.parametrize("kw", [dict(), dict(lr=0.05, alpha=0.9, eps=1e-6), dict(weight_decay=0.1),
                                dict(momentum=0.9), dict(centered=True), dict(momentum=0.5, centered=True),
                                dict(maximize=True, weight_decay=0.1)])
def test_rmsprop_matches_pytorch(kw):
    """Step for step against torch.optim.RMSprop (its arguments, defaults and state)."""
    torch = import_torch()
    params = make_params()
    theirs = [torch.tensor(p.numpy(), requires_grad=True) for p in params]
    ours_opt, their_opt = optim.RMSprop(params, **kw), torch.optim.RMSprop(theirs, **kw)
    _step_both_and_compare(torch, ours_opt, params, their_opt, theirs)
    assert sorted(ours_opt.state[params[0]]) == sorted(k for k in their_opt.state[theirs[0]] if k != "step")


def test_rmsprop_state_round_trips_and_its_arguments_are_checked():
    params = make_params()
    opt = optim.RMSprop(params, lr=0.01, momentum=0.9, centered=True)
    run(opt, params, grad_sequence(2))
    saved = opt.state_dict()
    twin_params = [minitx.tensor(p.numpy(), requires_grad=True) for p in params]
    twin = optim.RMSprop(twin_params, lr=0.01, momentum=0.9, centered=True)
    twin.load_state_dict(saved)
    more = grad_sequence(2)
    run(opt, params, more)
    run(twin, twin_params, more)
    for a, b in zip(params, twin_params):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="RMSprop: .*alpha"):
        optim.RMSprop(make_params(), alpha=-0.5)


# ---------------------------------------------------------------------- PyTorch's other optimizers
def _against_pytorch(name, args=(), kw=None, steps=8, shapes=SHAPES):
    """minitx.optim.<name> and torch.optim.<name>, built with the same arguments (PyTorch's order: a
    positional argument means the same in both), take ``steps`` steps on the same float64 gradients;
    after each, the parameters and every state value agree (PyTorch may keep a 'step' that minitx's
    update, not reading it, drops). The hyperparameters agree too: PyTorch's defaults are minitx's."""
    torch = import_torch()
    kw = kw or {}
    params = make_params(shapes=shapes)
    theirs = [torch.tensor(p.numpy(), requires_grad=True) for p in params]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # PyTorch's scalar state (NAdam's mu_product) in it, as minitx's
    try:
        ours_opt, their_opt = getattr(optim, name)(params, *args, **kw), getattr(torch.optim, name)(theirs, *args, **kw)
        assert ours_opt.defaults == {key: their_opt.defaults[key] for key in ours_opt.defaults}
        for t, gs in enumerate(grad_sequence(steps, shapes=shapes)):
            set_grads(params, gs)
            for q, g in zip(theirs, gs):
                q.grad = torch.tensor(g)
            ours_opt.step()
            their_opt.step()
            for k, (p, q) in enumerate(zip(params, theirs)):
                where = f"step {t + 1}, parameter {k}"
                np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=where)
                ours, their_state = ours_opt.state[p], their_opt.state[q]
                assert set(ours) <= set(their_state) and set(their_state) - set(ours) <= {"step"}, where
                for key, value in ours.items():
                    np.testing.assert_allclose(np.asarray(value, dtype=np.float64), their_state[key].numpy(),
                                               rtol=1e-12, atol=1e-14, err_msg=f"{where}, state '{key}'")
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor"])
def test_pytorchs_options_minitx_has_not_are_refused_by_name(name):
    """foreach, fused, capturable, differentiable: how PyTorch runs the update, not what it computes;
    minitx has one way to run each, so a program that asks for another is told so."""
    with pytest.raises(TypeError, match=f"{name}.* unexpected keyword argument 'foreach'"):
        getattr(optim, name)(make_params(), foreach=True)


# ---------------------------------------------------------------------- Adagrad
@pytest.mark.parametrize("args, kw", [((), {}), ((0.05, 0.1, 0.1, 0.5, 1e-6), {}), ((0.5,), dict(lr_decay=0.01)),
                                      ((), dict(initial_accumulator_value=2.0, weight_decay=0.1, maximize=True))])
def test_adagrad_matches_pytorch(args, kw):
    _against_pytorch("Adagrad", args, kw)


# ---------------------------------------------------------------------- Adadelta
@pytest.mark.parametrize("args, kw", [((), {}), ((0.5, 0.95, 1e-4, 0.1), {}), ((), dict(rho=0.0)),
                                      ((), dict(weight_decay=0.1, maximize=True))])
def test_adadelta_matches_pytorch(args, kw):
    _against_pytorch("Adadelta", args, kw)


# ---------------------------------------------------------------------- Adamax
@pytest.mark.parametrize("args, kw", [((), {}), ((0.01, (0.5, 0.9), 1e-6, 0.1), {}), ((), dict(betas=(0.0, 0.5))),
                                      ((), dict(weight_decay=0.1, maximize=True))])
def test_adamax_matches_pytorch(args, kw):
    _against_pytorch("Adamax", args, kw)


# ---------------------------------------------------------------------- NAdam
@pytest.mark.parametrize("args, kw", [((), {}), ((0.01, (0.8, 0.99), 1e-6, 0.1, 0.01, True), {}),
                                      ((), dict(weight_decay=0.1)), ((), dict(momentum_decay=0.1, betas=(0.5, 0.9))),
                                      ((), dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True))])
def test_nadam_matches_pytorch(args, kw):
    _against_pytorch("NAdam", args, kw)


def test_nadam_mu_product_is_saved_as_a_number_and_checked():
    params = make_params()
    opt = optim.NAdam(params)
    run(opt, params, grad_sequence(2))
    saved = opt.state_dict()
    assert isinstance(saved["state"][0]["mu_product"], float) and 0 < saved["state"][0]["mu_product"] < 0.9 ** 2
    saved["state"][1]["mu_product"] = 1.5
    with pytest.raises(ValueError, match="NAdam.load_state_dict: invalid state 'mu_product' of parameter 1 1.5"):
        optim.NAdam(make_params()).load_state_dict(saved)


# ---------------------------------------------------------------------- RAdam
@pytest.mark.parametrize("args, kw", [((), {}), ((0.01, (0.8, 0.99), 1e-6, 0.1, True), {}),
                                      ((), dict(weight_decay=0.1)), ((), dict(betas=(0.9, 0.5))),
                                      ((), dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True))])
def test_radam_matches_pytorch(args, kw):
    """Eight steps: with beta2 = 0.999 or 0.99 the first five take plain momentum steps (rho_t <= 5),
    the last three the rectified adaptive step; with beta2 = 0.5 (rho_inf = 3) every step is plain."""
    _against_pytorch("RAdam", args, kw)


# ---------------------------------------------------------------------- Rprop
@pytest.mark.parametrize("args, kw", [((), {}), ((0.05, (0.3, 1.5), (1e-3, 0.2)), {}),
                                      ((0.5,), dict(step_sizes=(0.0, 0.6))),
                                      ((), dict(etas=(0.5, 2.0), maximize=True))])
def test_rprop_matches_pytorch(args, kw):
    """The clamp matters in the second and third settings (step sizes reach 0.2 and 0.6 in a few steps)."""
    _against_pytorch("Rprop", args, kw)


def test_rprop_grows_shrinks_and_pauses_as_the_signs_say():
    """One weight, by hand, gradients 1, 3, -1, -1, 2: the step size is lr (0.1), then grows (0.2: the
    same sign), then shrinks at the flip (0.1) and the weight stays; after the pause (prev = 0) it moves
    by 0.1, and at the next flip the size halves again (0.05) and it stays."""
    p = minitx.tensor(np.zeros(1), requires_grad=True)
    opt = optim.Rprop([p], lr=0.1, etas=(0.5, 2.0))
    moves = []
    for g in (1.0, 3.0, -1.0, -1.0, 2.0):
        before = float(p.numpy()[0])
        p.grad = minitx.tensor([g])
        opt.step()
        moves.append(round(float(p.numpy()[0]) - before, 12))
    assert moves == [-0.1, -0.2, 0.0, 0.1, 0.0]
    assert float(opt.state[p]["step_size"][0]) == pytest.approx(0.05)


# ---------------------------------------------------------------------- ASGD
@pytest.mark.parametrize("args, kw", [((), {}), ((0.05, 0.1, 0.5, 2.0, 0.1), {}), ((0.1,), dict(lambd=0.5, t0=0.0)),
                                      ((), dict(weight_decay=0.1, t0=3, maximize=True))])
def test_asgd_matches_pytorch(args, kw):
    """With t0 = 2, 0 or 3 the average starts within the eight steps (mu < 1); with the default t0 = 1e6
    it does not (ax is the last iterate)."""
    _against_pytorch("ASGD", args, kw)


def test_asgd_averages_the_iterates_after_t0():
    """mu = 1 / max(1, t - t0) after step t: from step t0 + 2 on, ax is the plain mean of the iterates
    since step t0 + 2."""
    params = make_params(shapes=[(4,)])
    opt = optim.ASGD(params, lr=0.1, lambd=0.0, t0=2)
    iterates = []
    for gs in grad_sequence(7, shapes=[(4,)]):
        set_grads(params, gs)
        opt.step()
        iterates.append(params[0].numpy().copy())
    state = opt.state[params[0]]
    np.testing.assert_allclose(state["ax"], np.mean(iterates[3:], axis=0), rtol=1e-12)
    assert state["mu"] == 1 / (7 - 2) and state["eta"] == 0.1


# ---------------------------------------------------------------------- Adafactor
_ADAFACTOR_SHAPES = [(3, 4), (5,), (), (2, 3, 4)]  # factored: the matrix and the 3-d parameter (per leading index)


@pytest.mark.parametrize("args, kw", [((), {}), ((0.5, -0.5, (1e-3, 1e-2), 2.0, 0.1), {}), ((), dict(lr=0.2, d=1.5)),
                                      ((), dict(eps=(1e-2, 1e-3), weight_decay=0.1, maximize=True)),
                                      ((), dict(lr=1.0, beta2_decay=0.0))])
def test_adafactor_matches_pytorch(args, kw):
    """lr = 0.2, 0.5 or 1 (above 1 / sqrt(t) in the later steps): rho = 1 / sqrt(t); the others keep rho = lr.
    d = 1, 1.5, 2: the clipping of the update's RMS; a large eps1 (1e-2) clamps the variance estimate."""
    _against_pytorch("Adafactor", args, kw, shapes=_ADAFACTOR_SHAPES)


def test_adafactor_keeps_factors_for_matrices_and_a_variance_for_vectors():
    params = make_params(shapes=_ADAFACTOR_SHAPES)
    opt = optim.Adafactor(params)
    run(opt, params, grad_sequence(2, shapes=_ADAFACTOR_SHAPES))
    shapes = [{key: np.shape(value) for key, value in opt.state[p].items() if key != "step"} for p in params]
    assert shapes == [{"row_var": (3, 1), "col_var": (1, 4)}, {"variance": (5,)}, {"variance": ()},
                      {"row_var": (2, 3, 1), "col_var": (2, 1, 4)}]
    saved = opt.state_dict()
    saved["state"][3]["col_var"] = np.zeros((2, 4, 1))
    with pytest.raises(ValueError, match=r"Adafactor.load_state_dict: state 'col_var' of parameter 3 has shape "
                                         r"\(2, 4, 1\), but expected \(2, 1, 4\) for the parameter of shape "
                                         r"\(2, 3, 4\)"):
        optim.Adafactor(make_params(shapes=_ADAFACTOR_SHAPES)).load_state_dict(saved)


@pytest.mark.parametrize("name", ["SGD", "Adam", "LBFGS"])
def test_a_bfloat16_parameter_is_refused_also_when_cast_after_the_optimizer_took_it(name):
    """model.bfloat16() after the optimizer was made casts the same Parameter objects: the step
    refuses them as the constructor does (it stepped them in bfloat16, and the fused Adam raised
    an error of its kernel's, naming no parameter)."""
    message = "parameter 0 has dtype bfloat16; the optimizers update float16, float32 and float64 parameters"
    with pytest.raises(TypeError, match=f"{name}: {message}"):
        getattr(optim, name)([minitx.tensor(np.ones(2), dtype="bfloat16", requires_grad=True)], lr=0.1)
    model = minitx.nn.Linear(2, 1)
    opt = getattr(optim, name)(model.parameters(), lr=0.1)
    model.bfloat16()
    before = model.weight.numpy().copy()
    x = minitx.ones(3, 2).bfloat16()

    def closure():
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        return loss

    closure()
    with pytest.raises(TypeError, match=f"{name}.step: {message}"):
        opt.step(closure)
    np.testing.assert_array_equal(model.weight.numpy(), before)


# ---------------------------------------------------------------------- groups edited after a step
def _tensor_values(lib, tensors):
    return [(t.detach() if lib.__name__ == "torch" else t).numpy().copy() for t in tensors]


@pytest.mark.parametrize("name, kw", [("SGD", dict(momentum=0.9)), ("Adam", {}), ("AdamW", dict(amsgrad=True))])
def test_a_parameter_appended_to_an_earlier_group_starts_fresh_and_the_others_keep_theirs(name, kw):
    """The state is keyed by the parameter, as PyTorch's. Keyed by index (its position over all the
    groups), q appended to group 0 took b's momentum and b started over; Adam's step counts, one array
    per group sized at its first step, raised IndexError."""
    torch = import_torch()
    results = []
    for lib, lib_optim in ((minitx, optim), (torch, torch.optim)):
        a, b, q = (lib.tensor(np.zeros(2), requires_grad=True) for _ in range(3))
        opt = getattr(lib_optim, name)([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, **kw)
        a.grad, b.grad = lib.tensor(np.array([1.0, 2.0])), lib.tensor(np.array([100.0, -100.0]))
        opt.step()
        opt.param_groups[0]["params"].append(q)
        for t in range(2):
            for k, p in enumerate((a, b, q)):
                p.grad = lib.tensor(np.array([1.0 + k, -1.0 - t]))
            opt.step()
        results.append(_tensor_values(lib, (a, b, q)))
    for name_, ours, theirs in zip("abq", *results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14, err_msg=name_)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD"])
def test_a_group_dict_replaced_after_a_step_steps_on_as_in_pytorch(name):
    """opt.param_groups[0] = {**group, 'lr': ...}: Adam kept its step counts per group dict (by id) and
    raised KeyError at the next step; they follow the parameters now."""
    torch = import_torch()
    results = []
    for lib, lib_optim in ((minitx, optim), (torch, torch.optim)):
        p = lib.tensor(np.ones(3), requires_grad=True)
        opt = getattr(lib_optim, name)([p], lr=0.1)
        for t in range(3):
            p.grad = lib.tensor(np.array([0.5, -1.0, 2.0]) * (t + 1))
            opt.step()
            opt.param_groups[0] = {**opt.param_groups[0], "lr": 0.1 / (t + 2)}
        results.append(_tensor_values(lib, [p])[0])
        if lib is minitx:
            assert opt.state_dict()["state"][0].get("step", 3) == 3
    np.testing.assert_allclose(*results, rtol=1e-12, atol=1e-14)


def test_state_is_keyed_by_the_parameter_and_saved_by_index_as_in_pytorch():
    """opt.state[p] as in PyTorch (a defaultdict, so a subclass may write self.state[p]['n']); state_dict
    numbers the parameters by their index at the time it is called."""
    a, b, q = (minitx.tensor(np.zeros(2), requires_grad=True) for _ in range(3))
    opt = SGD([{"params": [a]}, {"params": [b]}], lr=0.1, momentum=0.9)
    a.grad, b.grad = minitx.tensor(np.ones(2)), minitx.tensor(np.full(2, 2.0))
    opt.step()
    np.testing.assert_array_equal(opt.state[b]["momentum_buffer"], [2.0, 2.0])
    opt.param_groups[0]["params"].append(q)
    saved = opt.state_dict()
    assert [sorted(entry) for entry in saved["state"]] == [["momentum_buffer"], [], ["momentum_buffer"]]
    assert [g["params"] for g in saved["param_groups"]] == [[0, 1], [2]]
    np.testing.assert_array_equal(saved["state"][2]["momentum_buffer"], [2.0, 2.0])

    class SignSGD(optim.Optimizer):  # written as for PyTorch: the state made by self.state[p]
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["n"] = state.get("n", 0) + 1
                    with minitx.no_grad():
                        p.sub_(group["lr"] * p.grad.sign())

    p = minitx.tensor(np.ones(2), requires_grad=True)
    custom = SignSGD([p])
    p.grad = minitx.tensor(np.array([0.5, -0.5]))
    custom.step()
    np.testing.assert_allclose(p.numpy(), [0.9, 1.1])
    assert custom.state[p] == {"n": 1}


_EVERY_OPTIMIZER = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.1)),
                    ("AdamW", dict(lr=0.1, amsgrad=True)), ("RMSprop", dict(momentum=0.5, centered=True)),
                    ("Adagrad", {}), ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Rprop", {}),
                    ("ASGD", dict(t0=1)), ("Adafactor", {}), ("LBFGS", dict(max_iter=3))]


def test_every_optimizer_is_listed_for_the_copy_test():
    listed = {name for name, _ in _EVERY_OPTIMIZER}
    assert listed == {name for name in optim.__all__
                      if isinstance(getattr(optim, name), type) and issubclass(getattr(optim, name), optim.Optimizer)
                      and name != "Optimizer"}


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("name, kw", _EVERY_OPTIMIZER)
def test_a_copied_optimizer_steps_on_as_the_original(name, kw, how):
    """copy.deepcopy and pickle of an optimizer in mid-run, as PyTorch's: the copy (over copies of the
    parameters) takes the steps the original takes. Adam's step counts, views into a per-group device
    array, came back as plain arrays under keys of the original's groups: KeyError at the next step."""
    import copy
    import pickle

    params = make_params()
    groups = [{"params": params} if name == "LBFGS" else {"params": params[:2]},
              *([] if name == "LBFGS" else [{"params": params[2:], "lr": 0.02}])]
    opt = getattr(optim, name)(groups, **kw)
    targets = [t[0] for t in grad_sequence(1, seed=7)] + [t[1] for t in grad_sequence(1, seed=8)]

    def closure_of(opt):
        def closure():
            opt.zero_grad()
            ps = [p for group in opt.param_groups for p in group["params"]]
            loss = sum((((p - float(np.sum(t))) ** 2) * (k + 1)).sum() for k, (p, t) in enumerate(zip(ps, targets)))
            loss.backward()
            return loss
        return closure

    for _ in range(2):
        opt.step(closure_of(opt))
    twin = copy.deepcopy(opt) if how == "deepcopy" else pickle.loads(pickle.dumps(opt))
    twin_params = [p for group in twin.param_groups for p in group["params"]]
    assert all(a is not b for a, b in zip(params, twin_params))
    for _ in range(2):
        opt.step(closure_of(opt))
        twin.step(closure_of(twin))
    for k, (p, twin_p) in enumerate(zip(params, twin_params)):
        np.testing.assert_array_equal(p.numpy(), twin_p.numpy(), err_msg=f"parameter {k}")
    for ours, theirs in zip(opt.state_dict()["state"], twin.state_dict()["state"]):
        assert sorted(ours) == sorted(theirs)
        for key in ours:  # (LBFGS's lists of vectors as matrices)
            np.testing.assert_array_equal(np.asarray(ours[key]), np.asarray(theirs[key]), err_msg=key)


# ---------------------------------------------------------------------- what an optimizer takes
@pytest.mark.parametrize("name", ["SGD", "Adam", "LBFGS"])
def test_a_non_leaf_tensor_is_refused_naming_the_optimizer_and_the_parameter(name):
    """PyTorch's refusal: backward never gives a computed tensor a .grad, so the optimizer took it and
    silently never moved it (hunt: w = randn(3, requires_grad=True) * 0.01)."""
    leaf = minitx.tensor(np.ones(2), requires_grad=True)
    w = minitx.tensor(np.ones(3), requires_grad=True) * 0.01
    with pytest.raises(ValueError, match=rf"^{name}: can't optimize a non-leaf Tensor: parameter 1 \(shape \(3,\)\) "
                                         r"is computed from others \(by 'mul'\); optimize the leaf"):
        getattr(optim, name)([leaf, w], lr=0.1)
    if name != "LBFGS":  # (one group only)
        opt = getattr(optim, name)([leaf], lr=0.1)
        with pytest.raises(ValueError, match=rf"^{name}: can't optimize a non-leaf Tensor: parameter 1 "):
            opt.add_param_group({"params": [w]})
    kept = minitx.tensor(np.ones(3), requires_grad=True) * 2
    kept.retain_grad()  # PyTorch takes one whose .grad backward keeps
    getattr(optim, name)([kept], lr=0.1)


def test_named_parameters_are_taken_with_their_names_as_in_pytorch():
    """PyTorch >= 2.6 takes model.named_parameters(): the names go into the group's 'param_names',
    which state_dict saves."""
    torch = import_torch()
    ours = optim.AdamW(minitx.nn.Linear(3, 2).named_parameters(), lr=0.1)
    theirs = torch.optim.AdamW(torch.nn.Linear(3, 2).named_parameters(), lr=0.1)
    assert ours.param_groups[0]["param_names"] == theirs.param_groups[0]["param_names"] == ["weight", "bias"]
    assert all(isinstance(p, minitx.Tensor) for p in ours.param_groups[0]["params"])
    assert ours.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    ours.load_state_dict(theirs.state_dict())
    with pytest.raises(ValueError, match=r"SGD: parameter group 1 is without names and group 0 is not"):
        optim.SGD([{"params": minitx.nn.Linear(3, 2).named_parameters()},
                   {"params": minitx.nn.Linear(3, 2).parameters()}], lr=0.1)
    with pytest.raises(TypeError, match=r"SGD: parameter 1 is a tuple, expected a minitx Tensor \(or, for every "
                                        r"parameter, a \(name, Tensor\) pair"):
        optim.SGD([minitx.tensor(np.ones(2), requires_grad=True), ("b", minitx.tensor(np.ones(2)))], lr=0.1)


def test_adams_decoupled_weight_decay_is_taken_at_pytorchs_default_and_refused_by_name_otherwise():
    """PyTorch's Adam(decoupled_weight_decay=True) is its AdamW (docs/from-pytorch.md: refused by name)."""
    params = make_params()
    plain, grads = Adam(params, lr=0.01, weight_decay=0.1, decoupled_weight_decay=False), grad_sequence(2)
    p0 = [p.data.copy() for p in params]
    run(plain, params, grads)
    assert_params(params, ref_adam(p0, grads, 0.01, wd=0.1))
    with pytest.raises(ValueError, match=r"^Adam: decoupled_weight_decay=True is AdamW's update; use "
                                         r"minitx.optim.AdamW \(the same arguments, but weight_decay defaults"):
        Adam(make_params(), decoupled_weight_decay=True)
    with pytest.raises(TypeError, match=r"Adam: invalid decoupled_weight_decay 'yes'; expected True or False"):
        Adam(make_params(), decoupled_weight_decay="yes")
