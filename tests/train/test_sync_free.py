"""The sync-free training step (Trainer(sync_every=N)): the same run, bit for bit, with no read
of the device inside a step, and every check still raising its error, naming its step, before
anything from after that step is saved. The run and its kills are test_trainer.py's."""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import backend, nn, optim, sync
from minitx.serialization import load
from minitx.train import TrainingInterrupted, train_step
from same_state import assert_same_state
from test_trainer import kill_at, make_trainer, no_fsync, outcome, reference, run, sigint_at  # noqa: F401 (fixtures)


@pytest.mark.parametrize("sync_every", [1, 4, 100])
def test_a_sync_free_run_is_the_eager_run_bit_for_bit(tmp_path, reference, sync_every):  # noqa: F811
    trainer, name, losses = run(tmp_path, sync_every=sync_every)
    assert trainer.checks is not None
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


@pytest.mark.parametrize("hooks", [{"step": kill_at(10)}, {"step": sigint_at(8)}, {"validation": kill_at(2)}])
def test_a_killed_sync_free_run_resumes_to_the_eager_result(tmp_path, reference, hooks):  # noqa: F811
    with pytest.raises(BaseException) as stopped:
        run(tmp_path, hooks=hooks, sync_every=4)
    assert not isinstance(stopped.value, (FloatingPointError, IndexError))
    trainer, name, losses = run(tmp_path, resume=True, sync_every=4)
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def test_ctrl_c_in_a_sync_free_run_saves_the_step_with_its_loss_read(tmp_path):
    with pytest.raises(TrainingInterrupted, match="at step 8"):
        run(tmp_path, hooks={"step": sigint_at(8)}, sync_every=5)
    progress = load(tmp_path / "last.npz")["progress"]
    assert progress["step"] == 8 and progress["epoch_loss"] > 0  # steps 7 and 8 of epoch 2, read back


def test_a_non_finite_gradient_in_a_sync_free_run_raises_at_the_next_read_naming_its_step(tmp_path):
    """Step 9 makes the first layer's weight NaN: its gradient is NaN, the step is skipped on the
    device, the run goes on to the read at step 12, raises there naming step 9, and the
    checkpoint of step 12 is never written (last.npz is still step 6's)."""
    calls, model = {"n": 0}, {}

    def poison():
        calls["n"] += 1
        if calls["n"] == 9:
            weight = next(iter(model["it"].parameters()))
            weight.data = np.full_like(weight.data, np.nan)

    trainer = make_trainer(tmp_path, {"step": poison}, sync_every=6, save_every=6)
    model["it"] = trainer.model
    with pytest.raises(FloatingPointError, match=r"the gradient of parameter 0 .*\(at step 9\)$"):
        trainer.fit()
    assert load(tmp_path / "last.npz")["progress"]["step"] == 6


def test_sync_every_is_checked():
    with pytest.raises(ValueError, match="sync_every must be None or a whole number of steps >= 1, got 0"):
        run("unused", sync_every=0)
# ------------------------------------------------------------------ one step, counted


def _tiny_step(ids, sync_free):
    minitx.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 10))
    opt = optim.Adam(model.parameters(), lr=1e-2)
    checks = sync.DeferredChecks() if sync_free else None

    def loss_fn(model, batch):
        return F.cross_entropy(model(batch), batch, ignore_index=0), int((batch != 0).sum())

    with backend.count_host_reads() as reads:
        loss, weight = train_step(model, ids, loss_fn, opt, clip_norm=1.0, checks=checks)
    return model, loss, reads.count, checks


def test_a_sync_free_step_reads_nothing_and_gives_the_eager_parameters():
    ids = np.array([[1, 2, 3, 0], [4, 5, 0, 0]])
    eager, eager_loss, eager_reads, _ = _tiny_step(ids, False)
    free, free_loss, free_reads, checks = _tiny_step(ids, True)
    assert eager_reads > 0 and free_reads == 0
    assert float(free_loss) == eager_loss
    for a, b in zip(eager.parameters(), free.parameters()):
        np.testing.assert_array_equal(a.data, b.data)
    checks.raise_first()


def test_an_id_out_of_range_in_a_sync_free_step_raises_the_eager_error_when_read():
    ids = np.array([[1, 2, 12, 0]])
    with pytest.raises(IndexError) as eager:
        _tiny_step(ids, False)
    _, _, reads, checks = _tiny_step(ids, True)
    assert reads == 0
    with pytest.raises(IndexError) as deferred:
        checks.raise_first()
    assert str(deferred.value) == f"{eager.value} (at step 1)"

