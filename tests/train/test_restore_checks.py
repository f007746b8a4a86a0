"""A last.npz edited by hand, or mixed up with another run's, is refused on resume, naming the
file and the part: it used to resume somewhere else and exit 0. The run is test_trainer.py's,
stopped after 9 steps (one epoch and a half)."""
import numpy as np
import pytest

from minitx import optim
from minitx.serialization import load, save
from test_trainer import make_trainer, no_fsync, plateau  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """The state of a run stopped after 9 steps (save_every=3: last.npz is at step 9)."""
    run_dir = tmp_path_factory.mktemp("stopped")
    make_trainer(run_dir, max_steps=9).fit()
    return load(run_dir / "last.npz")


def resume_edited(tmp_path, state, edit, **settings):
    """Resume a run whose last.npz is ``state`` after ``edit(state)``."""
    edit(state)
    save(state, tmp_path / "last.npz")
    trainer = make_trainer(tmp_path, max_steps=12, **settings)
    return trainer.resume(), trainer


def test_the_unedited_state_resumes_at_its_step(tmp_path, stopped):
    resumed, trainer = resume_edited(tmp_path, dict(stopped), lambda state: None)
    assert resumed and trainer.progress["step"] == 9 and trainer.progress["batch"] == 3


def _set(*path_and_value):
    *path, value = path_and_value

    def edit(state):
        node = state
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_set("optimizer", "state", 0, "step", 1.5),
     r"optimizer state does not fit: .*invalid state 'step' of parameter 0 1\.5; expected a whole number from 1 to 9223372036854775807"),
    (_set("optimizer", "state", 1, "exp_avg_sq", np.zeros((16,), np.int64)),
     r"optimizer state does not fit: .*state 'exp_avg_sq' of parameter 1 is int64; expected a float array"),
    (_set("optimizer", "state", 2, {"step": 9}),
     r"optimizer state does not fit: .*parameter 2 has keys \['step'\]; expected .*missing: \['exp_avg', "
     r"'exp_avg_sq'\]"),
    (_set("schedule", {}), r"holds no learning-rate schedule state, but this run has WarmupInverseSqrt"),
    (_set("schedule", "last_step", -1), r"schedule state does not fit: .*invalid last_step -1"),
    (_set("schedule", "warmup_steps", 0), r"schedule state does not fit: .*invalid warmup_steps 0"),
    (lambda state: state.pop("progress"), r"is not a full checkpoint: it has no progress"),
    (_set("progress", {}), r"progress is \{\}; expected the step, epoch and batch"),
    (_set("progress", "batch", 7), r"progress: batch 7 is past the end of epoch 2, which has 6 batches"),
    (_set("progress", "step", 10), r"progress: step 10, but epoch 2, batch 3 is step 9"),
    (lambda state: [s.update(step=8) for s in state["optimizer"]["state"]],
     r"progress: step 9, but the optimizer saved beside it has taken 8 steps"),
    (_set("history", 0, "val_loss", []), r"history: record 0: invalid val_loss \[\]"),
    (_set("history", 1, "step", 6), r"history: record 1 \(epoch 2, step 6, complete False\) does not follow"),
    (_set("progress", "best_val_loss", 0.5), r"progress has best_val_loss 0\.5, but the history's best is"),
    (_set("optimizer", "param_groups", 0, "weight_decay", 0.5),
     r"optimizer group 0 has weight_decay = 0\.5, but this run was built with 0"),
    (_set("schedule", "peak_lr", 0.5), r"the schedule has peak_lr = 0\.5, but this run was built with 0\.02"),
    (_set("history", []), r"history records the ends of epochs \[\], but the run is in epoch 2"),
    (_set("progress", "step", 2.0), r"progress: invalid step 2\.0; expected a whole number >= 0"),
    (_set("progress", "epoch_loss", float("nan")), r"progress: invalid epoch_loss nan"),
    (_set("progress", "best_val_loss", float("nan")), r"invalid best_val_loss nan"),
    (_set("progress", "epoch", 9), r"progress: the run is at step 9, batch 3 of epoch 10, past a run of 4 epochs"),
], ids=["step-1.5", "int-moment", "missing-moments", "empty-schedule", "negative-schedule-step",
        "schedule-hyperparameter", "no-progress", "empty-progress", "batch-past-epoch", "step-vs-position",
        "step-vs-optimizer", "history-loss", "history-order", "best-vs-history", "weight-decay", "peak-lr",
        "no-history",
        "float-step", "nan-epoch-loss", "nan-best", "epoch-past-end"])
def test_an_edited_state_is_refused_naming_the_file_and_the_part(tmp_path, stopped, edit, message):
    state = load_fresh(stopped)
    with pytest.raises(ValueError, match=message) as info:
        resume_edited(tmp_path, state, edit)
    assert str(tmp_path / "last.npz") in str(info.value)


def test_a_schedule_behind_the_optimizer_is_refused(tmp_path, stopped):
    state = load_fresh(stopped)
    with pytest.raises(ValueError, match=r"step 9, but the schedule saved beside it has taken 8 steps"):
        resume_edited(tmp_path, state, _set("schedule", "last_step", 8))


def test_a_plateau_schedule_state_is_checked_before_it_replaces_the_running_one(tmp_path):
    """The plateau schedule's counters and hyperparameters: invalid ones leave it as it was."""
    trainer = make_trainer(tmp_path, make_schedule=plateau)
    schedule = trainer.schedule
    before = schedule.state_dict()
    for key, value, message in [("num_bad_steps", 1.5, "invalid num_bad_steps 1.5"),
                                ("best", float("nan"), "invalid best nan"),
                                ("mode", "lowest", "invalid mode 'lowest'"),
                                ("min_lrs", [0.0, 0.0], "got 2 min_lr values for 1 parameter groups"),
                                ("factor", 1.0, "invalid factor 1.0")]:
        with pytest.raises(ValueError, match=message):
            schedule.load_state_dict({**before, key: value})
        assert schedule.state_dict() == before
    with pytest.raises(ValueError, match=r"missing \['cooldown_counter'\]"):
        schedule.load_state_dict({k: v for k, v in before.items() if k != "cooldown_counter"})


def test_a_step_schedule_state_is_checked_before_it_replaces_the_running_one():
    opt = optim.SGD([optim_parameter()], lr=0.1)
    schedule = optim.WarmupCosine(opt, peak_lr=0.1, warmup_steps=2, total_steps=10)
    before = schedule.state_dict()
    with pytest.raises(ValueError, match="invalid total_steps 1"):
        schedule.load_state_dict({**before, "total_steps": 1, "last_step": 5})
    assert schedule.state_dict() == before
    with pytest.raises(TypeError, match="expected a dict, got list"):
        schedule.load_state_dict([])


def optim_parameter():
    from minitx import nn

    return nn.Parameter(np.zeros(2, np.float32))


def load_fresh(state):
    """A deep copy of a loaded checkpoint (its arrays and nested dicts)."""
    if isinstance(state, dict):
        return {k: load_fresh(v) for k, v in state.items()}
    if isinstance(state, list):
        return [load_fresh(v) for v in state]
    return state.copy() if isinstance(state, np.ndarray) else state
