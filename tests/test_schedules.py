"""Learning-rate schedules follow their documented curves."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
from minitx.optim import (SGD, AdamW, NoamSchedule, ReduceLROnPlateau, WarmupCosine,
                          WarmupInverseSqrt, noam_lr, warmup_cosine_lr, warmup_inverse_sqrt_lr)
from torch_reference import import_torch


def make_opt(lr=1.0, groups=1):
    params = [minitx.tensor(np.ones(3), requires_grad=True) for _ in range(groups)]
    return SGD([{"params": [p]} for p in params], lr=lr)


def lrs_used(opt, sched, steps):
    """The lr each of the first `steps` optimizer steps runs with (step() after each)."""
    used = []
    for _ in range(steps):
        used.append(opt.param_groups[0]["lr"])
        sched.step()
    return used


# ---------------------------------------------------------------------- Noam
def noam_formula(step, d_model, warmup, factor):
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


@pytest.mark.parametrize("step", [1, 2, 10, 399, 400, 401, 1000, 10_000])
def test_noam_follows_formula(step):
    assert noam_lr(step, 512, 400, 2.0) == pytest.approx(noam_formula(step, 512, 400, 2.0),
                                                         rel=1e-12)


def test_noam_schedule_drives_optimizer_and_peaks_at_warmup():
    opt = make_opt()
    sched = NoamSchedule(opt, d_model=64, warmup_steps=10, factor=1.5)
    used = lrs_used(opt, sched, 30)
    expected = [noam_formula(t, 64, 10, 1.5) for t in range(1, 31)]
    np.testing.assert_allclose(used, expected, rtol=1e-12)
    assert int(np.argmax(used)) + 1 == 10
    assert used[9] == pytest.approx(1.5 * (64 * 10) ** -0.5, rel=1e-12)
    assert sched.lr_at(0) == 0.0  # step 0 never divides by zero
    assert sched.get_lr() == pytest.approx(noam_formula(31, 64, 10, 1.5))


# ---------------------------------------------------------------------- warm-up + inverse sqrt
@pytest.mark.parametrize("step", [0, 1, 5, 99, 100, 101, 400, 10_000])
def test_warmup_inverse_sqrt_follows_formula(step):
    peak, warmup = 3e-4, 100
    expected = peak * step / warmup if step <= warmup else peak * math.sqrt(warmup / step)
    assert warmup_inverse_sqrt_lr(step, peak, warmup) == pytest.approx(expected, rel=1e-12)


def test_warmup_inverse_sqrt_schedule_peak_and_continuity():
    opt = make_opt()
    sched = WarmupInverseSqrt(opt, peak_lr=0.01, warmup_steps=8)
    used = lrs_used(opt, sched, 40)
    assert max(used) == pytest.approx(0.01) and used.index(max(used)) + 1 == 8
    assert used[0] == pytest.approx(0.01 / 8)
    assert used[31] == pytest.approx(0.01 * math.sqrt(8 / 32))   # step 32
    # same shape as Noam, scaled to the peak
    scale = 0.01 / noam_lr(8, 64, 8)
    np.testing.assert_allclose(used, [scale * noam_lr(t, 64, 8) for t in range(1, 41)], rtol=1e-12)


# ---------------------------------------------------------------------- warm-up + cosine
def cosine_formula(step, peak, warmup, total, min_lr):
    if warmup > 0 and step <= warmup:
        return peak * step / warmup
    progress = min(max((step - warmup) / (total - warmup), 0.0), 1.0)
    return min_lr + (peak - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))


@pytest.mark.parametrize("step", [0, 1, 10, 11, 50, 99, 100, 101, 500])
def test_warmup_cosine_follows_formula(step):
    got = warmup_cosine_lr(step, 1e-3, 10, 100, 1e-5)
    assert got == pytest.approx(cosine_formula(step, 1e-3, 10, 100, 1e-5), rel=1e-12)


def test_warmup_cosine_schedule_endpoints():
    opt = make_opt()
    sched = WarmupCosine(opt, peak_lr=0.1, warmup_steps=5, total_steps=25, min_lr=0.001)
    used = lrs_used(opt, sched, 30)
    np.testing.assert_allclose(used, [cosine_formula(t, 0.1, 5, 25, 0.001) for t in range(1, 31)],
                               rtol=1e-12)
    assert used[4] == pytest.approx(0.1)                   # peak at step = warmup
    assert used[14] == pytest.approx((0.1 + 0.001) / 2)    # half way through the decay
    assert used[24:] == pytest.approx([0.001] * 6)         # min_lr from total_steps on
    assert all(a >= b for a, b in zip(used[4:], used[5:]))  # monotone after the peak


def test_warmup_cosine_without_warmup():
    assert warmup_cosine_lr(0, 0.1, 0, 10) == pytest.approx(0.1)
    assert warmup_cosine_lr(10, 0.1, 0, 10) == pytest.approx(0.0)
    opt = make_opt()
    WarmupCosine(opt, peak_lr=0.1, warmup_steps=0, total_steps=10)
    assert opt.param_groups[0]["lr"] == pytest.approx(cosine_formula(1, 0.1, 0, 10, 0.0))


@given(warmup=st.integers(0, 50), extra=st.integers(0, 200), step=st.integers(0, 400),
       peak=st.floats(1e-6, 1.0), frac=st.floats(0.0, 1.0))
def test_warmup_cosine_bounds(warmup, extra, step, peak, frac):
    min_lr = peak * frac
    lr = warmup_cosine_lr(step, peak, warmup, warmup + extra, min_lr)
    low = 0.0 if step <= warmup else min_lr
    assert low - 1e-12 <= lr <= peak * (1 + 1e-12)


# ---------------------------------------------------------------------- shared behaviour
SCHEDULES = [
    lambda opt: NoamSchedule(opt, d_model=32, warmup_steps=4),
    lambda opt: WarmupInverseSqrt(opt, peak_lr=0.5, warmup_steps=4),
    lambda opt: WarmupCosine(opt, peak_lr=0.5, warmup_steps=4, total_steps=20, min_lr=0.01),
]


@pytest.mark.parametrize("make", SCHEDULES)
def test_state_dict_round_trip(make, tmp_path):
    from minitx.serialization import load, save

    opt_a = make_opt()
    sched_a = make(opt_a)
    for _ in range(7):
        sched_a.step()
    save(sched_a.state_dict(), tmp_path / "sched.npz")
    opt_b = make_opt()
    sched_b = make(opt_b)
    sched_b.load_state_dict(load(tmp_path / "sched.npz"))
    assert sched_b.last_step == 7
    assert opt_b.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"]
    assert lrs_used(opt_a, sched_a, 10) == lrs_used(opt_b, sched_b, 10)


@pytest.mark.parametrize("make", SCHEDULES)
def test_schedule_sets_every_group_with_lr_scale(make):
    opt = make_opt(groups=2)
    opt.param_groups[1]["lr_scale"] = 0.1
    sched = make(opt)
    sched.step()
    lr0, lr1 = sched.get_last_lr()
    assert lr0 == sched.lr_at(2) and lr1 == pytest.approx(0.1 * lr0)


def test_schedule_invalid_arguments():
    with pytest.raises(ValueError, match="NoamSchedule: invalid warmup_steps 0"):
        NoamSchedule(make_opt(), d_model=512, warmup_steps=0)
    with pytest.raises(ValueError, match="WarmupInverseSqrt: invalid peak_lr"):
        WarmupInverseSqrt(make_opt(), peak_lr=-1.0, warmup_steps=10)
    with pytest.raises(ValueError, match="WarmupCosine: invalid total_steps"):
        WarmupCosine(make_opt(), peak_lr=1.0, warmup_steps=10, total_steps=5)
    with pytest.raises(ValueError, match="missing"):
        WarmupCosine(make_opt(), 1.0, 1, 5).load_state_dict({"last_step": 3})


def test_schedule_with_adamw_changes_the_update():
    p = minitx.tensor(np.ones(2), requires_grad=True)
    opt = AdamW([p], lr=123.0, weight_decay=0.0)
    WarmupInverseSqrt(opt, peak_lr=0.1, warmup_steps=10)
    p.grad = minitx.tensor(np.ones(2))
    opt.step()
    # first Adam step moves each weight by lr (m_hat / sqrt(v_hat) = 1): lr_at(1) = 0.01
    np.testing.assert_allclose(p.data, 1 - 0.01, rtol=1e-6)


# ---------------------------------------------------------------------- ReduceLROnPlateau
def test_plateau_reduces_after_patience():
    opt = make_opt(lr=1.0)
    sched = ReduceLROnPlateau(opt, factor=0.5, patience=2)
    for metric in [1.0, 0.9, 0.9, 0.9]:     # best 0.9, then 2 bad evaluations: still patient
        sched.step(metric)
    assert opt.param_groups[0]["lr"] == 1.0
    sched.step(0.95)                         # the 3rd bad one: reduce
    assert opt.param_groups[0]["lr"] == 0.5
    for metric in [0.95, 0.95]:
        sched.step(metric)
    assert opt.param_groups[0]["lr"] == 0.5
    sched.step(0.8)                          # improvement resets the count
    for metric in [0.8, 0.8]:
        sched.step(metric)
    assert opt.param_groups[0]["lr"] == 0.5
    sched.step(0.8)
    assert opt.param_groups[0]["lr"] == 0.25


def test_plateau_threshold_and_max_mode():
    opt = make_opt(lr=1.0)
    sched = ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, threshold=0.1)
    sched.step(1.0)
    sched.step(1.05)                         # not better than 1.0 * 1.1: reduce (patience 0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    sched.step(1.2)                          # better
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)


def test_plateau_cooldown_and_min_lr():
    opt = make_opt(lr=1.0)
    sched = ReduceLROnPlateau(opt, factor=0.1, patience=0, cooldown=2, min_lr=0.005)
    sched.step(1.0)
    sched.step(1.0)                          # bad, patience 0: reduce to 0.1, cooldown 2
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    assert sched.in_cooldown
    sched.step(1.0)
    sched.step(1.0)                          # two evaluations ignored while cooling down
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    sched.step(1.0)                          # cooldown over: reduce to 0.01
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)
    for _ in range(6):
        sched.step(1.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.005)   # floored at min_lr


def test_plateau_state_dict_round_trip(tmp_path):
    from minitx.serialization import load, save

    metrics = [1.0, 0.9, 0.95, 0.97, 0.99, 0.98, 0.97, 0.96, 0.99, 1.0]
    opt_a = make_opt(lr=1.0)
    sched_a = ReduceLROnPlateau(opt_a, factor=0.5, patience=1, cooldown=1)
    for m in metrics[:4]:
        sched_a.step(m)
    save({"opt": opt_a.state_dict(), "sched": sched_a.state_dict()}, tmp_path / "p.npz")
    ck = load(tmp_path / "p.npz")
    opt_b = make_opt(lr=1.0)
    opt_b.load_state_dict(ck["opt"])
    sched_b = ReduceLROnPlateau(opt_b)
    sched_b.load_state_dict(ck["sched"])
    for m in metrics[4:]:
        sched_a.step(m)
        sched_b.step(m)
        assert sched_a.get_last_lr() == sched_b.get_last_lr()


@pytest.mark.parametrize("kw", [dict(factor=0.99999999), dict(factor=0.5, min_lr=0.099999995), dict(factor=0.5),
                                dict(factor=0.5, eps=0.06), dict(factor=0.5, eps=0.0)])
def test_plateau_eps_keeps_an_lr_that_would_change_by_eps_or_less_as_pytorch(kw):
    """A reduction of lr by eps (default 1e-8) or less is not made: a factor within eps of 1, or
    an lr already at its min_lr, leaves the lr exactly as it was."""
    torch = import_torch()
    opt = make_opt(lr=0.1)
    theirs = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    sched, their_sched = ReduceLROnPlateau(opt, patience=0, **kw), \
        torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, patience=0, **kw)
    for metric in (1.0, 1.0, 1.0, 1.0):
        sched.step(metric)
        their_sched.step(metric)
        assert sched.get_last_lr() == their_sched.get_last_lr()
    assert (sched.get_last_lr()[0] == 0.1) == (kw.get("eps", 1e-8) >= 0.05 or "min_lr" in kw or kw["factor"] > 0.9)


def test_plateau_takes_pytorchs_arguments_in_its_order_and_loads_a_state_saved_without_eps():
    """ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode, cooldown,
    min_lr, eps), as PyTorch; a state saved before eps was kept loads, keeping this eps."""
    sched = ReduceLROnPlateau(make_opt(), "max", 0.5, 3, 0.01, "abs", 2, 0.001, 1e-6)
    assert (sched.mode, sched.factor, sched.patience, sched.threshold, sched.threshold_mode, sched.cooldown,
            sched.min_lrs, sched.eps) == ("max", 0.5, 3, 0.01, "abs", 2, [0.001], 1e-6)
    saved = sched.state_dict()
    assert saved["eps"] == 1e-6
    del saved["eps"]
    again = ReduceLROnPlateau(make_opt(), eps=1e-7)
    again.load_state_dict(saved)
    assert (again.mode, again.eps) == ("max", 1e-7)
    with pytest.raises(ValueError, match="ReduceLROnPlateau: invalid eps -1.0; expected a finite number 0 <= eps"):
        ReduceLROnPlateau(make_opt(), eps=-1.0)


def test_plateau_rejects_bad_input():
    with pytest.raises(ValueError, match="mode"):
        ReduceLROnPlateau(make_opt(), mode="lowest")
    with pytest.raises(ValueError, match="factor"):
        ReduceLROnPlateau(make_opt(), factor=1.0)
    with pytest.raises(ValueError, match="metric is nan"):
        ReduceLROnPlateau(make_opt()).step(float("nan"))
