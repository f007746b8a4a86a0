"""A captured step replays its kernels with the arguments of its capture: the learning rate is read
from device memory (Adam.write_lr before each replay), but beta1, beta2, eps and weight_decay go to
adam.cu as kernel scalars (kernels/adam.py: np.float64(beta1) ...). A schedule that moves one of
them at every step (OneCycleLR or CyclicLR with cycle_momentum=True: Adam's beta1) would leave a
CUDA graph replaying the capture's value, silently. StepGraphs refuses such a schedule, starts over
when a setting moved between two steps anyway, and the CPU model of a graph (_rerun_graphs.py)
reports a setting that moved after the capture. CPU only."""
import numpy as np
import pytest

import minitx
from minitx import nn, optim, sync
from minitx.optim.lr_scheduler import ChainedScheduler, CyclicLR, OneCycleLR, StepLR
from minitx.train import train_step
from minitx.train.graphs import StepGraphs

from _rerun_graphs import RerunGraphs
from test_graphs import batches, loss_fn, on_device


def _model_and_optimizer():
    minitx.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 8), nn.Dropout(0.3), nn.Linear(8, 12))
    return model, optim.AdamW(model.parameters(), lr=1e-2)


@pytest.mark.parametrize("make", [
    lambda opt: OneCycleLR(opt, max_lr=1e-2, total_steps=20),
    lambda opt: CyclicLR(opt, base_lr=1e-3, max_lr=1e-2, step_size_up=3),
    lambda opt: ChainedScheduler([StepLR(opt, 5), OneCycleLR(opt, max_lr=1e-2, total_steps=20)]),
], ids=["OneCycleLR", "CyclicLR", "ChainedScheduler"])
def test_step_graphs_refuse_a_schedule_that_moves_beta1(make):
    model, opt = _model_and_optimizer()
    with pytest.raises(ValueError, match="StepGraphs: .* moves the optimizer's betas"):
        StepGraphs(model, loss_fn, opt, sync.DeferredChecks("cpu"), lambda batch: batch.tokens, schedule=make(opt),
                   recorder=RerunGraphs(opt))


def test_a_schedule_that_moves_the_rate_alone_replays_to_the_eager_bits():
    """OneCycleLR with cycle_momentum=False: the rate moves every step (device memory), the rest
    stays as captured; the replays give the eager steps' parameters."""
    results = []
    for captured in (False, True):
        model, opt = _model_and_optimizer()
        schedule = OneCycleLR(opt, max_lr=1e-2, total_steps=20, cycle_momentum=False)
        checks = sync.DeferredChecks("cpu")
        context, _ = on_device("cpu")
        step = StepGraphs(model, loss_fn, opt, checks, lambda batch: batch.tokens, schedule=schedule,
                          recorder=RerunGraphs(opt)) if captured else None
        with context:
            for batch in batches():
                if captured:
                    step(batch)
                else:
                    train_step(model, batch, loss_fn, opt, schedule, checks=checks)
        checks.raise_first()
        results.append([p.numpy() for p in model.parameters()])
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def _steps_with_beta1_moving(step=None):
    """The eight batches, beta1 moved after each step as a cycling schedule would move it (through
    ``step``, a StepGraphs, or eager steps); the parameters after them."""
    model, opt = _model_and_optimizer()
    checks = sync.DeferredChecks("cpu")
    graphs = step(model, opt, checks) if step else None
    context, _ = on_device("cpu")
    with context:
        for batch in batches():
            if graphs:
                graphs(batch)
            else:
                train_step(model, batch, loss_fn, opt, checks=checks)
            opt.param_groups[0]["betas"] = (opt.param_groups[0]["betas"][0] * 0.99, 0.999)
    checks.raise_first()
    return [p.numpy() for p in model.parameters()], graphs


def _driver(model, opt, checks):
    return StepGraphs(model, loss_fn, opt, checks, lambda batch: batch.tokens, recorder=RerunGraphs(opt))


def test_a_setting_moved_at_every_step_leaves_every_step_eager():
    """beta1 moved between every two steps (by hand; a schedule that does it is refused above):
    StepGraphs sees the move before each step and starts over, so no step replays a capture and
    the parameters are the eager steps'."""
    eager, _ = _steps_with_beta1_moving()
    with pytest.warns(RuntimeWarning, match="the graphs are doing nothing"):
        driven, graphs = _steps_with_beta1_moving(_driver)
    assert graphs.recorder.launches == 0 and graphs.held()[0] == 0
    for got, want in zip(driven, eager):
        np.testing.assert_array_equal(got, want)


def test_the_strict_model_of_a_graph_sees_beta1_move(monkeypatch):
    """What StepGraphs prevents: beta1 moving between the capture and a replay, which the CPU model
    of a graph reports (a GPU would replay the capture's beta1, silently)."""
    monkeypatch.setattr(StepGraphs, "_unchanged", lambda self: True)
    with pytest.raises(AssertionError, match="settings moved since the capture"):
        _steps_with_beta1_moving(_driver)


def test_a_load_between_a_warm_up_and_the_capture_warms_up_again():
    """No graph captured yet, nothing is outdated: a load after the warm-up (here a fresh
    optimizer's state, no moments) must not be captured at once, or the capture would make the
    moments and step counts inside the graph (zeroed again at every replay on a GPU)."""
    model, opt = _model_and_optimizer()
    fresh = optim.AdamW(model.parameters(), lr=1e-2).state_dict()
    states_at_capture = []

    class Recorder(RerunGraphs):
        def capture(self, fn):
            states_at_capture.append(len(self.optimizer.state))
            return super().capture(fn)

    step = StepGraphs(model, loss_fn, opt, sync.DeferredChecks("cpu"), lambda batch: batch.tokens,
                      recorder=Recorder(opt))
    same = [batch for batch in batches() if batch.ids.shape == (2, 4)]
    context, _ = on_device("cpu")
    with context:
        step(same[0])
        opt.load_state_dict(fresh)
        step(same[1])  # a warm-up again, not a capture
        step(same[2])
    assert states_at_capture == [len(list(model.parameters()))]
