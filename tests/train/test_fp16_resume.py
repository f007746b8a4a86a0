"""A float16 run (autocast("float16") and a GradScaler) in the trainer: its scale backs off and
grows as the run goes, is saved in last.npz, and a run killed after it changed resumes to the
uninterrupted run's files bit for bit, eagerly and sync-free. The run and its kills are
test_trainer.py's."""
import pytest

from minitx import optim
from minitx.serialization import load
from same_state import assert_same_state
from test_trainer import Killed, kill_at, no_fsync, outcome, run, sigint_at  # noqa: F401 (a fixture)


def fp16(**scaler):
    """A float16 run's settings, with a fresh scaler: growing after 3 clean steps, the scale moves
    within the 21 steps (2^16 backs off at once: the first gradients overflow float16)."""
    return dict(autocast="float16", scaler=optim.GradScaler(**{"growth_interval": 3, **scaler}))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("fp16")
    trainer, name, losses = run(run_dir, **fp16())
    return outcome(run_dir, (name, losses))


def test_the_scale_moves_and_is_saved(reference):
    scales = {name: state["scaler"]["scale"] for name, state in reference["files"].items() if "scaler" in state}
    assert list(scales) == ["last.npz"]  # model checkpoints hold no scaler
    assert scales["last.npz"] != 2.0 ** 16


@pytest.mark.parametrize("hooks, sync_every", [({"step": kill_at(11)}, None), ({"step": sigint_at(8)}, None),
                                               ({"validation": kill_at(2)}, None), ({"step": kill_at(11)}, 4)])
def test_a_float16_run_killed_after_its_scale_changed_resumes_to_the_uninterrupted_result(tmp_path, reference,
                                                                                         hooks, sync_every):
    with pytest.raises((Killed, KeyboardInterrupt)):
        run(tmp_path, hooks=hooks, sync_every=sync_every, **fp16())
    saved = load(tmp_path / "last.npz")
    assert saved["progress"]["step"] >= 6 and saved["scaler"]["scale"] != 2.0 ** 16
    trainer, name, losses = run(tmp_path, resume=True, sync_every=sync_every, **fp16())
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def test_a_sync_free_float16_run_is_the_eager_run_bit_for_bit(tmp_path, reference):
    trainer, name, losses = run(tmp_path, sync_every=5, **fp16())
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def test_a_resume_without_the_scaler_or_with_other_settings_is_refused(tmp_path):
    run(tmp_path / "fp16", max_steps=3, save_every=3, **fp16())
    with pytest.raises(ValueError, match="holds a loss scaler state .float16., but this run has none"):
        run(tmp_path / "fp16", resume=True, max_steps=3, autocast="float16")
    with pytest.raises(ValueError, match="the loss scaler has growth_interval = 3, but this run was built with 2000"):
        run(tmp_path / "fp16", resume=True, max_steps=3, **fp16(growth_interval=2000))
    run(tmp_path / "fp32", max_steps=3, save_every=3)
    with pytest.raises(ValueError, match="holds no loss scaler state .float16., but this run has a GradScaler"):
        run(tmp_path / "fp32", resume=True, max_steps=3, **fp16())
