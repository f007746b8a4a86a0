"""minitx.optim.lr_scheduler gives PyTorch's learning rates, step by step, group by group; and
clip_grad_value_ clamps as torch.nn.utils.clip_grad_value_ does."""
import copy
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
from minitx.optim import SGD, Adam, AdamW, Optimizer, ReduceLROnPlateau, clip_grad_value_
from minitx.optim import lr_scheduler
from torch_reference import import_torch

LRS = (0.1, 0.03)  # two parameter groups of different lr


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def optimizers(torch, kind="sgd"):
    """The same two-group optimizer in minitx and in PyTorch: SGD with momentum, Adam or AdamW."""
    ours_params = [minitx.tensor(np.ones(3), requires_grad=True) for _ in LRS]
    theirs_params = [torch.nn.Parameter(torch.ones(3, dtype=torch.float64)) for _ in LRS]
    kwargs = {"sgd": dict(momentum=0.9), "adam": {}, "adamw": dict(weight_decay=0.01)}[kind]
    ours_cls = {"sgd": SGD, "adam": Adam, "adamw": AdamW}[kind]
    theirs_cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind]
    ours = ours_cls([{"params": [p], "lr": lr} for p, lr in zip(ours_params, LRS)], **kwargs)
    theirs = theirs_cls([{"params": [p], "lr": lr} for p, lr in zip(theirs_params, LRS)], **kwargs)
    return ours, theirs


def hyper(opt):
    """What a scheduler sets in each group: lr, and the momentum OneCycleLR cycles."""
    return [(g["lr"], g.get("momentum"), g.get("betas", (None,))[0]) for g in opt.param_groups]


# (id, build(M, opt) with M the scheduler module, steps, optimizer kind); M is
# torch.optim.lr_scheduler or minitx.optim.lr_scheduler, so one lambda builds both.
CASES = [
    ("LambdaLR", lambda M, o: M.LambdaLR(o, lambda e: 0.95 ** e), 60, "sgd"),
    ("LambdaLR-per-group", lambda M, o: M.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: min(1.0, (e + 1) / 10)]),
     40, "adam"),
    ("MultiplicativeLR", lambda M, o: M.MultiplicativeLR(o, lambda e: 0.97), 60, "sgd"),
    ("MultiplicativeLR-per-group", lambda M, o: M.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.0 + 0.01 * (e % 3)]),
     50, "adamw"),
    ("StepLR", lambda M, o: M.StepLR(o, step_size=7, gamma=0.5), 60, "sgd"),
    ("StepLR-1", lambda M, o: M.StepLR(o, step_size=1, gamma=0.9), 40, "adam"),
    ("StepLR-grow", lambda M, o: M.StepLR(o, step_size=10, gamma=1.5), 45, "sgd"),
    ("MultiStepLR", lambda M, o: M.MultiStepLR(o, milestones=[5, 12, 30], gamma=0.3), 50, "sgd"),
    ("MultiStepLR-repeat", lambda M, o: M.MultiStepLR(o, milestones=[0, 4, 4, 20]), 30, "adam"),
    ("ExponentialLR", lambda M, o: M.ExponentialLR(o, gamma=0.93), 100, "sgd"),
    ("ExponentialLR-grow", lambda M, o: M.ExponentialLR(o, gamma=1.02), 40, "adamw"),
    ("CosineAnnealingLR", lambda M, o: M.CosineAnnealingLR(o, T_max=20), 100, "sgd"),
    ("CosineAnnealingLR-eta_min", lambda M, o: M.CosineAnnealingLR(o, T_max=13, eta_min=0.001), 80, "adam"),
    ("CosineAnnealingLR-1", lambda M, o: M.CosineAnnealingLR(o, T_max=1, eta_min=0.01), 30, "sgd"),
    ("LinearLR", lambda M, o: M.LinearLR(o), 30, "sgd"),
    ("LinearLR-down", lambda M, o: M.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=37), 50, "adam"),
    ("LinearLR-to-0", lambda M, o: M.LinearLR(o, start_factor=0.5, end_factor=0.0, total_iters=10), 30, "sgd"),
    ("ConstantLR", lambda M, o: M.ConstantLR(o), 30, "sgd"),
    ("PolynomialLR", lambda M, o: M.PolynomialLR(o), 30, "sgd"),
    ("PolynomialLR-power", lambda M, o: M.PolynomialLR(o, total_iters=17, power=2.0), 40, "adam"),
    ("PolynomialLR-root", lambda M, o: M.PolynomialLR(o, total_iters=9, power=0.5), 20, "adamw"),
    ("ChainedScheduler", lambda M, o: M.ChainedScheduler([M.ConstantLR(o, factor=0.1, total_iters=20),
                                                          M.ExponentialLR(o, gamma=0.9)]), 40, "sgd"),
    ("ChainedScheduler-3", lambda M, o: M.ChainedScheduler([M.LinearLR(o, start_factor=0.2, total_iters=6),
                                                            M.StepLR(o, step_size=5, gamma=0.5),
                                                            M.PolynomialLR(o, total_iters=30, power=1.5)],
                                                           optimizer=o), 45, "adam"),
    ("SequentialLR-chained-first", lambda M, o: M.SequentialLR(o, [M.ChainedScheduler([M.LinearLR(o, 0.1, total_iters=5),
                                                                                       M.ExponentialLR(o, 0.95)]),
                                                                   M.CosineAnnealingLR(o, T_max=20)], milestones=[8]),
     40, "sgd"),
    ("ConstantLR-args", lambda M, o: M.ConstantLR(o, factor=0.3, total_iters=17), 40, "adamw"),
    ("OneCycleLR", lambda M, o: M.OneCycleLR(o, max_lr=1.0, total_steps=60), 60, "sgd"),
    ("OneCycleLR-adam-lists", lambda M, o: M.OneCycleLR(o, max_lr=[0.01, 0.003], epochs=5, steps_per_epoch=10,
                                                       base_momentum=[0.8, 0.85], max_momentum=0.95), 50, "adam"),
    ("OneCycleLR-linear-3phase", lambda M, o: M.OneCycleLR(o, max_lr=0.5, total_steps=77, pct_start=0.25,
                                                          anneal_strategy="linear", three_phase=True), 77, "adamw"),
    ("OneCycleLR-3phase-cos", lambda M, o: M.OneCycleLR(o, max_lr=0.2, total_steps=40, three_phase=True,
                                                       div_factor=10.0, final_div_factor=100.0), 40, "sgd"),
    ("OneCycleLR-no-momentum", lambda M, o: M.OneCycleLR(o, max_lr=0.1, total_steps=30, cycle_momentum=False),
     30, "adam"),
    ("CyclicLR", lambda M, o: M.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5), 40, "sgd"),
    ("CyclicLR-triangular2-lists", lambda M, o: M.CyclicLR(o, [0.01, 0.001], [0.1, 0.02], step_size_up=3,
                                                           step_size_down=7, mode="triangular2",
                                                           base_momentum=[0.8, 0.85], max_momentum=[0.9, 0.95]),
     60, "sgd"),
    ("CyclicLR-exp_range-adam", lambda M, o: M.CyclicLR(o, 1e-4, 1e-2, step_size_up=4, mode="exp_range", gamma=0.97,
                                                        base_momentum=0.85, max_momentum=0.95), 50, "adam"),
    ("CyclicLR-scale_fn-iterations", lambda M, o: M.CyclicLR(o, 0.001, 0.01, step_size_up=6, scale_mode="iterations",
                                                             scale_fn=lambda t: 1 / (1 + 0.05 * t)), 50, "adamw"),
    ("CyclicLR-scale_fn-cycle", lambda M, o: M.CyclicLR(o, 0.01, [0.05, 0.2], step_size_up=2, step_size_down=5,
                                                        mode="ignored", scale_fn=lambda c: 0.7 ** c), 40, "sgd"),
    ("CyclicLR-sawtooth", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=0), 30, "sgd"),
    ("CyclicLR-step-2.5", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=2.5, mode="triangular2"), 30, "adam"),
    ("CyclicLR-no-momentum", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=3, cycle_momentum=False), 20, "sgd"),
    ("CyclicLR-dips", lambda M, o: M.CyclicLR(o, 0.1, 0.01, step_size_up=1, step_size_down=3), 20, "sgd"),
    ("SequentialLR-warmup-cyclic", lambda M, o: M.SequentialLR(o, [M.LinearLR(o, start_factor=0.1, total_iters=5),
                                                                   M.CyclicLR(o, 0.01, 0.1, step_size_up=4)],
                                                               milestones=[5]), 40, "sgd"),
    ("CosineAnnealingWarmRestarts", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=10), 60, "sgd"),
    ("CosineAnnealingWarmRestarts-mult", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
     100, "adam"),
    ("SequentialLR", lambda M, o: M.SequentialLR(o, [M.LinearLR(o, start_factor=0.1, total_iters=5),
                                                     M.CosineAnnealingLR(o, T_max=30)], milestones=[5]), 60, "sgd"),
    ("SequentialLR-3", lambda M, o: M.SequentialLR(o, [M.ConstantLR(o, factor=0.5, total_iters=3),
                                                       M.ExponentialLR(o, gamma=0.9),
                                                       M.StepLR(o, step_size=4, gamma=0.5)], milestones=[6, 20]),
     50, "adam"),
    ("SequentialLR-lambda-onecycle", lambda M, o: M.SequentialLR(o, [M.LambdaLR(o, lambda e: 0.5 ** e),
                                                                     M.OneCycleLR(o, max_lr=0.3, total_steps=40)],
                                                                 milestones=[8]), 48, "sgd"),
    ("SequentialLR-restarts", lambda M, o: M.SequentialLR(o, [M.MultiStepLR(o, [2, 3]),
                                                              M.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2)],
                                                          milestones=[10]), 50, "sgd"),
]
IDS = [case[0] for case in CASES]


def lockstep(torch, build, steps, kind):
    """Both schedulers built on the same two-group optimizer, and a function that takes one
    opt.step(); sched.step() on both and checks everything they set."""
    ours_opt, theirs_opt = optimizers(torch, kind)
    ours, theirs = build(lr_scheduler, ours_opt), build(torch.optim.lr_scheduler, theirs_opt)
    return ours_opt, theirs_opt, ours, theirs


def step_both(ours_opt, theirs_opt, ours, theirs):
    """opt.step(), then sched.step(), in both (no gradients: the optimizers change nothing)."""
    theirs_opt.step()
    ours_opt.step()
    theirs.step()
    ours.step()


def assert_same(ours_opt, theirs_opt, ours, theirs):
    assert hyper(ours_opt) == hyper(theirs_opt)  # exact: the same float operations in the same order
    assert ours.get_last_lr() == theirs.get_last_lr()
    assert ours.last_epoch == getattr(theirs, "last_epoch", ours.last_epoch)  # (PyTorch's ChainedScheduler has none)


@pytest.mark.parametrize("name, build, steps, kind", CASES, ids=IDS)
def test_matches_pytorch_every_step(torch, name, build, steps, kind):
    ours_opt, theirs_opt, ours, theirs = lockstep(torch, build, steps, kind)
    if hasattr(theirs, "base_lrs"):
        assert ours.base_lrs == theirs.base_lrs
    assert_same(ours_opt, theirs_opt, ours, theirs)
    seen = set()
    for _ in range(steps):
        step_both(ours_opt, theirs_opt, ours, theirs)
        assert_same(ours_opt, theirs_opt, ours, theirs)
        seen.add(tuple(ours.get_last_lr()))
    assert len(seen) > 1, f"{name}: the lr never changed in {steps} steps"


@pytest.mark.parametrize("name, build, steps, kind", CASES, ids=IDS)
def test_state_dict_round_trip_mid_run(torch, name, build, steps, kind):
    """Saved (through JSON) partway, restored into a new optimizer and scheduler: the run goes
    on as PyTorch's uninterrupted one does."""
    ours_opt, theirs_opt, ours, theirs = lockstep(torch, build, steps, kind)
    for k in range(steps):
        if k == steps // 3:
            saved_opt = copy.deepcopy(ours_opt.state_dict())
            saved = json.loads(json.dumps(ours.state_dict()))
            ours_opt, _ = optimizers(torch, kind)
            ours = build(lr_scheduler, ours_opt)
            ours_opt.load_state_dict(saved_opt)
            ours.load_state_dict(saved)
            assert_same(ours_opt, theirs_opt, ours, theirs)
        step_both(ours_opt, theirs_opt, ours, theirs)
        assert_same(ours_opt, theirs_opt, ours, theirs)


RESUMED = [
    ("StepLR", lambda M, o: M.StepLR(o, 7, 0.5, last_epoch=13)),
    ("ExponentialLR", lambda M, o: M.ExponentialLR(o, 0.93, last_epoch=4)),
    ("CosineAnnealingLR", lambda M, o: M.CosineAnnealingLR(o, 20, last_epoch=6)),
    ("LinearLR", lambda M, o: M.LinearLR(o, last_epoch=2)),
    ("ConstantLR", lambda M, o: M.ConstantLR(o, total_iters=5, last_epoch=4)),
    ("PolynomialLR", lambda M, o: M.PolynomialLR(o, total_iters=12, power=2.0, last_epoch=5)),
    ("MultiStepLR", lambda M, o: M.MultiStepLR(o, [5, 12], last_epoch=4)),
    ("MultiplicativeLR", lambda M, o: M.MultiplicativeLR(o, lambda e: 0.9, last_epoch=3)),
    ("CyclicLR", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="triangular2", last_epoch=9)),
]


@pytest.mark.parametrize("name, build", RESUMED, ids=[r[0] for r in RESUMED])
def test_resume_from_last_epoch_as_pytorch(torch, name, build):
    """last_epoch=k on an optimizer whose groups hold 'initial_lr': PyTorch's first step then."""
    ours_opt, theirs_opt = optimizers(torch)
    for opt in (ours_opt, theirs_opt):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
    ours, theirs = build(lr_scheduler, ours_opt), build(torch.optim.lr_scheduler, theirs_opt)
    for _ in range(30):
        assert_same(ours_opt, theirs_opt, ours, theirs)
        step_both(ours_opt, theirs_opt, ours, theirs)


def test_closed_forms_follow_the_recursions():
    """The closed form in each docstring is what the recursion computes, to rounding."""
    cases = {"StepLR": dict(step_size=4, gamma=0.7), "MultiStepLR": dict(milestones=[3, 3, 9], gamma=0.5),
             "ExponentialLR": dict(gamma=0.9), "ConstantLR": dict(factor=0.25, total_iters=6),
             "LinearLR": dict(start_factor=0.2, end_factor=0.7, total_iters=11),
             "CosineAnnealingLR": dict(T_max=9, eta_min=0.002)}
    for name, kwargs in cases.items():
        opt = SGD([{"params": [minitx.tensor(np.ones(2))], "lr": lr} for lr in LRS])
        sched = getattr(lr_scheduler, name)(opt, **kwargs)
        for _ in range(40):
            np.testing.assert_allclose(sched.get_last_lr(), sched._closed_form_lr(), rtol=1e-12, atol=1e-15,
                                       err_msg=f"{name} at step {sched.last_epoch}")
            sched.step()


def test_warm_restarts_step_to_an_epoch(torch):
    """step(epoch), fractional epochs too, as PyTorch's CosineAnnealingWarmRestarts takes them."""
    for T_mult in (1, 2, 3):
        ours_opt, theirs_opt = optimizers(torch)
        ours = lr_scheduler.CosineAnnealingWarmRestarts(ours_opt, T_0=5, T_mult=T_mult, eta_min=0.001)
        theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs_opt, T_0=5, T_mult=T_mult, eta_min=0.001)
        for epoch in [0.5, 1.25, 3, 4.999, 5, 7.5, 16, 40.2, 2, None, None, 100, None]:
            ours.step(epoch)
            theirs.step(epoch)
            assert_same(ours_opt, theirs_opt, ours, theirs)
            assert (ours.T_cur, ours.T_i) == (theirs.T_cur, theirs.T_i)


def test_lambda_state_keeps_a_callable_objects_attributes(torch):
    """A callable object's attributes are saved and restored; a plain function is saved as None."""

    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    opt, _ = optimizers(torch)
    sched = lr_scheduler.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
    saved = sched.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.5}, None]
    decay = Decay(0.9)
    lr_scheduler.LambdaLR(optimizers(torch)[0], [decay, lambda e: 1.0]).load_state_dict(saved)
    assert decay.rate == 0.5
    theirs_opt = optimizers(torch)[1]
    theirs = torch.optim.lr_scheduler.LambdaLR(theirs_opt, [Decay(0.5), lambda e: 1.0])
    assert theirs.state_dict()["lr_lambdas"] == saved["lr_lambdas"]


# ---------------------------------------------------------------------- drawn arguments
@given(step_size=st.integers(1, 12), gamma=st.floats(0.05, 2.0), steps=st.integers(30, 80))
def test_drawn_step_lr(torch, step_size, gamma, steps):
    run_drawn(torch, lambda M, o: M.StepLR(o, step_size, gamma), steps)


@given(milestones=st.lists(st.integers(0, 60), max_size=6).map(sorted), gamma=st.floats(0.05, 1.0))
def test_drawn_multi_step_lr(torch, milestones, gamma):
    run_drawn(torch, lambda M, o: M.MultiStepLR(o, milestones, gamma), 60)


@given(T_max=st.integers(1, 40), eta_min=st.sampled_from([0.0, 1e-4, 0.02]), steps=st.integers(30, 100))
def test_drawn_cosine_annealing_lr(torch, T_max, eta_min, steps):
    run_drawn(torch, lambda M, o: M.CosineAnnealingLR(o, T_max, eta_min), steps)


@given(T_0=st.integers(1, 12), T_mult=st.integers(1, 3), eta_min=st.sampled_from([0.0, 0.005]))
def test_drawn_cosine_annealing_warm_restarts(torch, T_0, T_mult, eta_min):
    run_drawn(torch, lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0, T_mult, eta_min), 80)


@given(start=st.floats(0.01, 1.0), end=st.floats(0.0, 1.0), total_iters=st.integers(1, 40))
def test_drawn_linear_lr(torch, start, end, total_iters):
    run_drawn(torch, lambda M, o: M.LinearLR(o, start, end, total_iters), 50)


@given(total_steps=st.integers(2, 100), pct_start=st.floats(0.0, 1.0), anneal=st.sampled_from(["cos", "linear"]),
       three_phase=st.booleans(), div_factor=st.floats(1.0, 100.0), kind=st.sampled_from(["sgd", "adam"]))
def test_drawn_one_cycle_lr(torch, total_steps, pct_start, anneal, three_phase, div_factor, kind):
    """Where a phase of PyTorch's cycle has no steps it divides by zero at that step: ours
    raises ValueError there instead, naming the phase."""
    build = (lambda M, o: M.OneCycleLR(o, max_lr=[0.4, 0.1], total_steps=total_steps, pct_start=pct_start,
                                       anneal_strategy=anneal, three_phase=three_phase, div_factor=div_factor))
    ours_opt, theirs_opt = optimizers(torch, kind)
    try:
        theirs = build(torch.optim.lr_scheduler, theirs_opt)
    except ZeroDivisionError:
        with pytest.raises(ValueError, match="OneCycleLR: phase 0"):
            build(lr_scheduler, ours_opt)
        return
    ours = build(lr_scheduler, ours_opt)
    for _ in range(total_steps):
        assert_same(ours_opt, theirs_opt, ours, theirs)
        theirs_opt.step()
        ours_opt.step()
        try:
            theirs.step()
        except ZeroDivisionError:
            with pytest.raises(ValueError, match="OneCycleLR: phase"):
                ours.step()
            return
        ours.step()
    assert_same(ours_opt, theirs_opt, ours, theirs)
    with pytest.raises(ValueError, match="past total_steps"):
        ours.step()


@given(step_size_up=st.one_of(st.integers(1, 12), st.floats(0.5, 8.0)),
       step_size_down=st.one_of(st.none(), st.integers(0, 12)),
       mode=st.sampled_from(["triangular", "triangular2", "exp_range"]), gamma=st.floats(0.8, 1.0),
       kind=st.sampled_from(["sgd", "adam"]))
def test_drawn_cyclic_lr(torch, step_size_up, step_size_down, mode, gamma, kind):
    build = (lambda M, o: M.CyclicLR(o, [0.001, 0.01], 0.05, step_size_up=step_size_up,
                                     step_size_down=step_size_down, mode=mode, gamma=gamma))
    ours_opt, theirs_opt, ours, theirs = lockstep(torch, build, 60, kind)
    for _ in range(60):
        assert_same(ours_opt, theirs_opt, ours, theirs)
        step_both(ours_opt, theirs_opt, ours, theirs)
    assert_same(ours_opt, theirs_opt, ours, theirs)


def run_drawn(torch, build, steps):
    ours_opt, theirs_opt, ours, theirs = lockstep(torch, build, steps, "sgd")
    for _ in range(steps):
        assert_same(ours_opt, theirs_opt, ours, theirs)
        step_both(ours_opt, theirs_opt, ours, theirs)
    assert_same(ours_opt, theirs_opt, ours, theirs)


# ---------------------------------------------------------------------- errors
def opt2():
    return SGD([{"params": [minitx.tensor(np.ones(2))], "lr": lr} for lr in LRS], momentum=0.9)


# (what, build(M, opt), error type; the same error from PyTorch, or None where PyTorch takes it)
ERRORS = [
    ("StepLR negative step_size", lambda M, o: M.StepLR(o, step_size=-3), ValueError, None),
    ("StepLR step_size 0", lambda M, o: M.StepLR(o, step_size=0), ValueError, None),
    ("StepLR gamma 0", lambda M, o: M.StepLR(o, 5, gamma=0.0), ValueError, None),
    ("MultiStepLR milestones not increasing", lambda M, o: M.MultiStepLR(o, [10, 5]), ValueError, None),
    ("MultiStepLR gamma negative", lambda M, o: M.MultiStepLR(o, [5], gamma=-0.5), ValueError, None),
    ("ExponentialLR gamma nan", lambda M, o: M.ExponentialLR(o, float("nan")), ValueError, None),
    ("CosineAnnealingLR T_max 0", lambda M, o: M.CosineAnnealingLR(o, 0), ValueError, None),
    ("LinearLR start_factor 0", lambda M, o: M.LinearLR(o, start_factor=0.0), ValueError, ValueError),
    ("LinearLR end_factor 2", lambda M, o: M.LinearLR(o, end_factor=2.0), ValueError, ValueError),
    ("ConstantLR factor 1.5", lambda M, o: M.ConstantLR(o, factor=1.5), ValueError, ValueError),
    ("ConstantLR factor 0", lambda M, o: M.ConstantLR(o, factor=0.0), ValueError, None),
    ("LambdaLR lambda count", lambda M, o: M.LambdaLR(o, [lambda e: 1.0]), ValueError, ValueError),
    ("MultiplicativeLR not callable", lambda M, o: M.MultiplicativeLR(o, 0.9), TypeError, TypeError),
    ("OneCycleLR total_steps missing", lambda M, o: M.OneCycleLR(o, max_lr=0.1), ValueError, ValueError),
    ("OneCycleLR epochs only", lambda M, o: M.OneCycleLR(o, max_lr=0.1, epochs=3), ValueError, ValueError),
    ("OneCycleLR total_steps 0", lambda M, o: M.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError, ValueError),
    ("OneCycleLR pct_start 1.5", lambda M, o: M.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5),
     ValueError, ValueError),
    ("OneCycleLR anneal_strategy", lambda M, o: M.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="exp"),
     ValueError, ValueError),
    ("OneCycleLR phase of one step", lambda M, o: M.OneCycleLR(o, 0.1, total_steps=10, pct_start=0.1),
     ValueError, ZeroDivisionError),
    ("OneCycleLR max_lr count", lambda M, o: M.OneCycleLR(o, [0.1, 0.2, 0.3], total_steps=10), ValueError, ValueError),
    ("CosineAnnealingWarmRestarts T_0 0", lambda M, o: M.CosineAnnealingWarmRestarts(o, 0), ValueError, ValueError),
    ("CosineAnnealingWarmRestarts T_mult 0", lambda M, o: M.CosineAnnealingWarmRestarts(o, 5, T_mult=0),
     ValueError, ValueError),
    ("SequentialLR milestone count", lambda M, o: M.SequentialLR(o, [M.StepLR(o, 2), M.StepLR(o, 3)], [2, 4]),
     ValueError, ValueError),
    ("SequentialLR no scheduler", lambda M, o: M.SequentialLR(o, [], []), ValueError, ValueError),
    ("SequentialLR milestones not increasing", lambda M, o: M.SequentialLR(
        o, [M.StepLR(o, 2), M.StepLR(o, 3), M.StepLR(o, 4)], [6, 4]), ValueError, None),
    ("PolynomialLR total_iters 0", lambda M, o: M.PolynomialLR(o, total_iters=0), ValueError, None),
    ("PolynomialLR power negative", lambda M, o: M.PolynomialLR(o, power=-1.0), ValueError, None),
    ("ChainedScheduler no scheduler", lambda M, o: M.ChainedScheduler([]), ValueError, ValueError),
    ("ChainedScheduler another optimizer", lambda M, o: M.ChainedScheduler([M.StepLR(o, 2)], optimizer=opt2()),
     ValueError, None),
    ("ChainedScheduler ReduceLROnPlateau", lambda M, o: M.ChainedScheduler([M.ReduceLROnPlateau(o)]),
     ValueError, ValueError),
    ("ChainedScheduler not a scheduler", lambda M, o: M.ChainedScheduler([object()]), TypeError, AttributeError),
    ("SequentialLR a later ChainedScheduler", lambda M, o: M.SequentialLR(
        o, [M.StepLR(o, 2), M.ChainedScheduler([M.StepLR(o, 3)])], [4]), ValueError, None),
    ("CyclicLR mode", lambda M, o: M.CyclicLR(o, 0.01, 0.1, mode="triangle"), ValueError, ValueError),
    ("CyclicLR step_size_up 0", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=0), ValueError, ZeroDivisionError),
    ("CyclicLR step_size_up negative", lambda M, o: M.CyclicLR(o, 0.01, 0.1, step_size_up=-4), ValueError, None),
    ("CyclicLR step_size_down negative", lambda M, o: M.CyclicLR(o, 0.01, 0.1, 4, step_size_down=-1),
     ValueError, None),
    ("CyclicLR base_lr count", lambda M, o: M.CyclicLR(o, [0.01, 0.02, 0.03], 0.1), ValueError, ValueError),
    ("CyclicLR max_lr count", lambda M, o: M.CyclicLR(o, 0.01, [0.1]), ValueError, ValueError),
    ("CyclicLR base_momentum count", lambda M, o: M.CyclicLR(o, 0.01, 0.1, base_momentum=[0.8]),
     ValueError, ValueError),
    ("CyclicLR base_lr negative", lambda M, o: M.CyclicLR(o, -0.01, 0.1), ValueError, None),
    ("CyclicLR max_lr nan", lambda M, o: M.CyclicLR(o, 0.01, float("nan")), ValueError, None),
    ("CyclicLR max_momentum negative", lambda M, o: M.CyclicLR(o, 0.01, 0.1, max_momentum=-0.9), ValueError, None),
    ("CyclicLR scale_fn not callable", lambda M, o: M.CyclicLR(o, 0.01, 0.1, scale_fn=0.5), TypeError, TypeError),
    ("CyclicLR scale_mode", lambda M, o: M.CyclicLR(o, 0.01, 0.1, scale_fn=lambda c: 1.0, scale_mode="epochs"),
     ValueError, None),
    ("CyclicLR gamma 0", lambda M, o: M.CyclicLR(o, 0.01, 0.1, mode="exp_range", gamma=0.0), ValueError, None),
    ("CyclicLR cycle_momentum not a bool", lambda M, o: M.CyclicLR(o, 0.01, 0.1, cycle_momentum="yes"),
     TypeError, None),
    ("CyclicLR last_epoch without initial_lr", lambda M, o: M.CyclicLR(o, 0.01, 0.1, last_epoch=3),
     KeyError, KeyError),
    ("StepLR last_epoch -2", lambda M, o: M.StepLR(o, 2, last_epoch=-2), ValueError, None),
    ("ExponentialLR last_epoch without initial_lr", lambda M, o: M.ExponentialLR(o, 0.9, last_epoch=3),
     KeyError, KeyError),
]


@pytest.mark.parametrize("what, build, error, theirs_error", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_raise_naming_the_scheduler(what, build, error, theirs_error):
    with pytest.raises(error, match=what.split()[0]):
        build(lr_scheduler, opt2())


@pytest.mark.parametrize("what, build, error, theirs_error", [e for e in ERRORS if e[3]],
                         ids=[e[0] for e in ERRORS if e[3]])
def test_pytorch_raises_there_too(torch, what, build, error, theirs_error):
    theirs_opt = optimizers(torch)[1]
    with pytest.raises(theirs_error):
        build(torch.optim.lr_scheduler, theirs_opt)


def test_other_refusals():
    opt = opt2()
    with pytest.raises(TypeError, match="StepLR: expected an optimizer"):
        lr_scheduler.StepLR([1, 2], 3)
    with pytest.raises(ValueError, match="OneCycleLR: cycle_momentum=True needs an optimizer with momentum"):
        lr_scheduler.OneCycleLR(Optimizer([minitx.tensor(np.ones(2))], {"lr": 0.1}), 0.1, total_steps=10)
    with pytest.raises(ValueError, match="SequentialLR: scheduler 0 is a ReduceLROnPlateau"):
        lr_scheduler.SequentialLR(opt, [ReduceLROnPlateau(opt), lr_scheduler.StepLR(opt, 2)], [3])
    with pytest.raises(ValueError, match="SequentialLR: scheduler 1 .* drives another optimizer"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.StepLR(opt, 2), lr_scheduler.StepLR(opt2(), 2)], [3])
    with pytest.raises(ValueError, match="CosineAnnealingWarmRestarts.step: invalid epoch -1"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt2(), 5).step(-1)
    sched = lr_scheduler.StepLR(opt2(), 3)
    before = sched.state_dict()
    with pytest.raises(ValueError, match=r"StepLR.load_state_dict: missing \['gamma'\]"):
        sched.load_state_dict({k: v for k, v in before.items() if k != "gamma"})
    with pytest.raises(ValueError, match=r"StepLR.load_state_dict: unknown keys \['extra'\]"):
        sched.load_state_dict({**before, "extra": 1})
    assert sched.state_dict() == before
    # a state of three inner schedulers does not load into two (zip would have taken two of them)
    for build in (lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(o, 2), lr_scheduler.StepLR(o, 3)]),
                  lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2), lr_scheduler.StepLR(o, 3)], [4])):
        sched = build(opt2())
        state = sched.state_dict()
        state["_schedulers"].append(state["_schedulers"][0])
        with pytest.raises(ValueError, match=rf"{type(sched).__name__}.load_state_dict: 3 schedulers' states for 2 "
                                             "schedulers"):
            sched.load_state_dict(state)


def test_cyclic_lr_names_what_it_refuses():
    messages = {
        "CyclicLR: invalid mode 'triangle'; expected 'triangular', 'triangular2' or 'exp_range'":
            dict(mode="triangle"),
        "CyclicLR: invalid step_size_up 0; expected a finite number 0 < step_size_up": dict(step_size_up=0),
        "CyclicLR: invalid step_size_down -1; expected a finite number 0 <= step_size_down": dict(step_size_down=-1),
        "CyclicLR: expected 2 values of base_momentum, one per parameter group; got 3":
            dict(base_momentum=[0.8, 0.8, 0.8]),
        "CyclicLR: scale_fn should be a function, got float": dict(scale_fn=0.5),
        "CyclicLR: invalid scale_mode 'epochs'; expected 'cycle' or 'iterations'":
            dict(scale_fn=lambda c: 1.0, scale_mode="epochs"),
    }
    for message, kwargs in messages.items():
        with pytest.raises((ValueError, TypeError), match=re.escape(message)):
            lr_scheduler.CyclicLR(opt2(), **{"base_lr": 0.01, "max_lr": 0.1, **kwargs})


def test_cyclic_lr_momentum_needs_an_optimizer_with_one(torch):
    """Adagrad has neither momentum nor betas: cycle_momentum=True is refused (by PyTorch too),
    and cycle_momentum=False cycles the lr alone, as PyTorch's does."""
    ours_params = [minitx.tensor(np.ones(3), requires_grad=True) for _ in LRS]
    theirs_params = [torch.nn.Parameter(torch.ones(3, dtype=torch.float64)) for _ in LRS]
    ours_opt = minitx.optim.Adagrad([{"params": [p], "lr": lr} for p, lr in zip(ours_params, LRS)])
    theirs_opt = torch.optim.Adagrad([{"params": [p], "lr": lr} for p, lr in zip(theirs_params, LRS)])
    with pytest.raises(ValueError, match=r"CyclicLR: cycle_momentum=True needs an optimizer with momentum or betas "
                                         r"\(Adagrad has neither\); pass cycle_momentum=False"):
        lr_scheduler.CyclicLR(ours_opt, 0.01, 0.1)
    with pytest.raises(ValueError):
        torch.optim.lr_scheduler.CyclicLR(theirs_opt, 0.01, 0.1)
    ours = lr_scheduler.CyclicLR(ours_opt, 0.01, 0.1, step_size_up=3, cycle_momentum=False)
    theirs = torch.optim.lr_scheduler.CyclicLR(theirs_opt, 0.01, 0.1, step_size_up=3, cycle_momentum=False)
    for _ in range(15):
        assert_same(ours_opt, theirs_opt, ours, theirs)
        step_both(ours_opt, theirs_opt, ours, theirs)


class Shrink:
    """A scale_fn that is a callable object: state_dict saves its attributes."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, cycle):
        return self.rate ** (cycle - 1)


def test_cyclic_lr_resumes_mid_cycle_with_the_same_numbers(torch):
    """Saved (through JSON) partway down a cycle and loaded into a new optimizer and scheduler:
    the lrs and momenta that follow are those of the run that never stopped, and a callable
    object's scale_fn gets its saved attributes back, as PyTorch's state_dict keeps them."""

    def build(opt, rate):
        return lr_scheduler.CyclicLR(opt, [0.01, 0.002], [0.1, 0.03], step_size_up=4, step_size_down=6,
                                     scale_fn=Shrink(rate), base_momentum=0.85, max_momentum=0.95)

    whole_opt, _ = optimizers(torch)
    whole = build(whole_opt, 0.6)
    expected = []
    for _ in range(40):
        whole_opt.step()
        whole.step()
        expected.append(hyper(whole_opt))
    opt, theirs_opt = optimizers(torch)
    sched = build(opt, 0.6)
    theirs = torch.optim.lr_scheduler.CyclicLR(theirs_opt, [0.01, 0.002], [0.1, 0.03], step_size_up=4,
                                               step_size_down=6, scale_fn=Shrink(0.6), base_momentum=0.85,
                                               max_momentum=0.95)
    got = []
    for k in range(40):
        if k == 17:  # cycle 2, coming down
            saved_opt = copy.deepcopy(opt.state_dict())
            saved = json.loads(json.dumps(sched.state_dict()))
            assert saved["_scale_fn_custom"] == {"rate": 0.6} == theirs.state_dict()["_scale_fn_custom"]
            opt, _ = optimizers(torch)
            sched = build(opt, 0.9)  # the rate the state brings back
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved)
            assert sched._scale_fn_custom.rate == 0.6
        opt.step()
        sched.step()
        theirs_opt.step()
        theirs.step()
        got.append(hyper(opt))
        assert got[-1] == hyper(theirs_opt)
    assert got == expected


def test_cyclic_lr_refuses_a_scale_fn_state_it_has_no_scale_fn_for(torch):
    opt, _ = optimizers(torch)
    saved = lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=Shrink(0.5)).state_dict()
    plain = lr_scheduler.CyclicLR(optimizers(torch)[0], 0.01, 0.1)
    before = plain.state_dict()
    with pytest.raises(ValueError, match="CyclicLR.load_state_dict: the state holds a scale_fn's attributes, but "
                                         "this CyclicLR was built without a scale_fn"):
        plain.load_state_dict(saved)
    assert plain.state_dict() == before
    # a plain function is saved as None, and the scheduler built with it again computes it
    with_lambda = lr_scheduler.CyclicLR(optimizers(torch)[0], 0.01, 0.1, scale_fn=lambda c: 1.0)
    assert with_lambda.state_dict()["_scale_fn_custom"] is None


def test_schedulers_exported_as_pytorch_does(torch):
    assert minitx.optim.lr_scheduler is lr_scheduler
    assert lr_scheduler.ReduceLROnPlateau is ReduceLROnPlateau
    assert all(hasattr(lr_scheduler, name) for name in lr_scheduler.__all__)
    # every scheduler of PyTorch's (docs/from-pytorch.md says none is missing)
    assert sorted(set(torch.optim.lr_scheduler.__all__) - set(lr_scheduler.__all__)) == []


# ---------------------------------------------------------------------- clip_grad_value_
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("clip_value", [0.0, 0.05, 1, 3.5, 1e6])
def test_clip_grad_value_matches_pytorch(torch, dtype, clip_value):
    rng = np.random.default_rng(7)
    grads = [rng.normal(scale=2.0, size=shape).astype(dtype) for shape in [(4, 3), (5,), ()]]
    grads[0][0, 0], grads[0][1, 1], grads[1][0] = np.nan, np.inf, -np.inf
    ours = [minitx.tensor(np.zeros_like(g), requires_grad=True) for g in grads] + [minitx.tensor(np.ones(2))]
    for p, g in zip(ours, grads):
        p.grad = minitx.tensor(g.copy())
    assert clip_grad_value_(ours, clip_value) is None
    if dtype == "float16" and clip_value > 65504:
        expected = grads  # PyTorch refuses a bound past float16's range; ours clips nothing
    else:
        theirs = [torch.nn.Parameter(torch.zeros(g.shape, dtype=getattr(torch, dtype))) for g in grads]
        for p, g in zip(theirs, grads):
            p.grad = torch.tensor(g.copy())
        torch.nn.utils.clip_grad_value_(theirs, clip_value)
        expected = [p.grad.numpy() for p in theirs]
    for p, e in zip(ours, expected):
        np.testing.assert_array_equal(p.grad.data, e)
        assert p.grad.data.dtype == np.dtype(dtype)
    assert ours[-1].grad is None


def test_clip_grad_value_takes_one_tensor_and_refuses_bad_values():
    p = minitx.tensor(np.zeros(3), requires_grad=True)
    p.grad = minitx.tensor(np.array([-5.0, 0.5, 5.0]))
    clip_grad_value_(p, 1.0)
    np.testing.assert_array_equal(p.grad.data, [-1.0, 0.5, 1.0])
    for bad in (-1.0, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="clip_grad_value_: invalid clip_value"):
            clip_grad_value_([p], bad)
    clip_grad_value_([], 1.0)  # nothing to clip


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_clip_grad_value_on_the_gpu_as_on_the_cpu(dtype):
    rng = np.random.default_rng(3)
    grads = [rng.normal(scale=2.0, size=shape).astype(dtype) for shape in [(64, 33), (7,)]]
    grads[0][0, 0] = np.nan
    clipped = []
    for device in ("cpu", "cuda"):
        params = [minitx.tensor(np.zeros_like(g), device=device, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = minitx.tensor(g, device=device)
        clip_grad_value_(params, 0.7)
        clipped.append([p.grad.numpy() for p in params])
    for cpu, gpu in zip(*clipped):
        np.testing.assert_array_equal(cpu, gpu)


def test_pytorchs_older_base_class_name_is_there_for_custom_schedulers():
    """torch.optim.lr_scheduler._LRScheduler, still exported by PyTorch: a scheduler written against it."""
    torch = import_torch()
    rates = []
    for lib, lib_sched in ((minitx, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        class Halving(lib_sched._LRScheduler):
            def get_lr(self):
                return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

        opt = (SGD if lib is minitx else torch.optim.SGD)([lib.tensor(np.ones(1), requires_grad=True)], lr=1.0)
        sched = Halving(opt)
        assert isinstance(sched, lib_sched.LRScheduler)
        for _ in range(3):
            opt.step()
            sched.step()
        rates.append(sched.get_last_lr())
    assert rates[0] == rates[1] == [0.125]
