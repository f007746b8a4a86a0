"""The general trainer (minitx.train) on a model that is not a Transformer: files written
whole, exact resume after kills at any moment, Ctrl-C, the finish on its own."""
import contextlib
import json
import math
import os
import re
import signal
import sys

import numpy as np
import pytest

import minitx
from minitx import nn, optim
from minitx.serialization import load
from minitx.train import Trainer, TrainingInterrupted, mean_loss, patience_reason, write_json
from same_state import assert_same_state


class Killed(BaseException):
    """A kill: nothing in the trainer may catch it (as with SIGKILL, no handler runs)."""


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    """The files are still written to a temporary name and renamed; only the wait for the
    disk (most of these small runs' time) is skipped."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


# ------------------------------------------------------------------ a small regression task

_rng = np.random.default_rng(0)
X = _rng.normal(size=(48, 4)).astype(np.float32)
Y = (X @ _rng.normal(size=(4, 1)) + 0.1 * _rng.normal(size=(48, 1))).astype(np.float32)
VAL = [(minitx.tensor(X[:16] + 0.5), minitx.tensor(Y[:16]))]
BATCH = 8  # 6 batches an epoch
SETTINGS = dict(epochs=4, max_steps=21, save_every=3, average_last=2, clip_norm=1.0, seed=7)
# 21 steps: three whole epochs and three batches of the fourth; the last step is also saved


def batches(seed, epoch):
    """Deterministic in (seed, epoch), as the trainer requires."""
    order = np.random.default_rng([seed, epoch]).permutation(len(X))
    return [(minitx.tensor(X[order[i:i + BATCH]]), minitx.tensor(Y[order[i:i + BATCH]]))
            for i in range(0, len(X), BATCH)]


def loss_fn(model, batch, reduction="mean"):
    x, y = batch
    error = model(x) - y
    total = (error * error).sum()
    return (total if reduction == "sum" else total / len(y)), len(y)


def inverse_sqrt(opt):
    return optim.WarmupInverseSqrt(opt, peak_lr=0.02, warmup_steps=4)


def make_trainer(run_dir, hooks=None, make_schedule=inverse_sqrt, autocast=None, **settings):
    """The trainer of a small MLP with dropout (so the random state matters); ``hooks``
    (name -> function) are called at the named moments, to kill or interrupt the run;
    ``autocast``: the dtype its steps' forward passes compute in (None: float32)."""
    hooks = hooks or {}
    minitx.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
    opt = optim.Adam(model.parameters(), lr=0.02)
    schedule = make_schedule(opt)

    def step_loss(model, batch):
        hooks.get("step", lambda: None)()
        with minitx.autocast(autocast) if autocast else contextlib.nullcontext():
            return loss_fn(model, batch)

    def validation_loss(model):
        hooks.get("validation", lambda: None)()
        return mean_loss(model, VAL, lambda m, b: loss_fn(m, b, "sum"))

    return Trainer(run_dir, model, opt, step_loss, batches, schedule=schedule, validation_loss=validation_loss,
                   progress=False, **{**SETTINGS, **settings})


def run(run_dir, resume=False, hooks=None, **settings):
    """Train (or resume) and finish; returns (trainer, the final model's name, candidates)."""
    trainer = make_trainer(run_dir, hooks, **settings)
    if resume:
        trainer.resume()
    trainer.fit()
    return (trainer, *trainer.choose_final())


def outcome(run_dir, final):
    """What a run leaves, less the clock: every checkpoint and history.json."""
    files = {p.name: load(p) for p in sorted(run_dir.glob("*.npz"))}
    for state in files.values():
        state.get("progress", {}).pop("train_seconds", None)
        for record in state.get("history", []):
            record.pop("seconds")
    history = json.loads((run_dir / "history.json").read_text())
    for record in history:
        record.pop("seconds")
    return {"files": files, "history": history, "final": final}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run."""
    run_dir = tmp_path_factory.mktemp("reference")
    trainer, name, losses = run(run_dir)
    return outcome(run_dir, (name, losses))


def kill_at(count):
    """A hook that kills the run at its count-th call."""
    calls = {"n": 0}

    def hook():
        calls["n"] += 1
        if calls["n"] == count:
            raise Killed()

    return hook


def test_the_uninterrupted_run_is_what_the_settings_say(reference):
    history = reference["history"]
    assert [(r["epoch"], r["step"], r["complete"]) for r in history] == \
        [(1, 6, True), (2, 12, True), (3, 18, True), (4, 21, False)]
    assert history[-1]["val_loss"] < history[0]["val_loss"]
    assert sorted(reference["files"]) == ["averaged.npz", "best.npz", "epoch-2.npz", "epoch-3.npz", "last.npz"]
    assert reference["files"]["last.npz"]["progress"]["step"] == 21


def test_a_kill_before_the_last_record_is_resumed_with_the_finish(tmp_path, reference):
    """Killed in the validation after the last step's checkpoint: best.npz of the last epoch,
    its record, the averaging and the final choice all come when the run is resumed."""
    with pytest.raises(Killed):
        run(tmp_path, hooks={"validation": kill_at(4)})
    assert load(tmp_path / "last.npz")["progress"]["step"] == 21
    assert len(json.loads((tmp_path / "history.json").read_text())) == 3
    trainer, name, losses = run(tmp_path, resume=True)
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def test_a_kill_before_the_first_checkpoint_restarts_and_says_so(tmp_path, reference, capsys):
    with pytest.raises(Killed):
        run(tmp_path, hooks={"step": kill_at(2)})
    assert not (tmp_path / "last.npz").exists()
    trainer, name, losses = run(tmp_path, resume=True)
    assert "has no last.npz (stopped before its first checkpoint): training starts from step 0" in \
        capsys.readouterr().err
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


@pytest.mark.parametrize("stop", [15, 18], ids=["inside-an-epoch", "at-an-epoch-end"])
def test_a_run_extended_past_its_max_steps_ends_as_the_uninterrupted_one(tmp_path, reference, stop):
    """Stopped by max_steps, then resumed with a larger one (the documented way to extend a run):
    the record of the stop inside epoch 3 gives way to that epoch's, whose training loss is the
    mean over all its steps, as in the run that never stopped. (best.npz may differ: the model
    of the stop, validated then, stays the best where no later epoch beats it.)"""
    run(tmp_path, max_steps=stop)
    assert json.loads((tmp_path / "history.json").read_text())[-1]["step"] == stop
    trainer, name, losses = run(tmp_path, resume=True)
    extended = outcome(tmp_path, (name, losses))
    assert_same_state(extended["history"], reference["history"])
    assert_same_state(extended["files"]["last.npz"]["history"], reference["history"])
    for name in ("epoch-2.npz", "epoch-3.npz", "averaged.npz"):
        assert_same_state(extended["files"][name], reference["files"][name])
    for key in ("model", "optimizer", "schedule"):
        assert_same_state(extended["files"]["last.npz"][key], reference["files"]["last.npz"][key])
    run(tmp_path, resume=True)  # the progress saved after the replaced record resumes (its checks hold)


def test_a_resume_with_a_limit_below_where_the_run_is_is_refused_for_steps_and_epochs_alike(tmp_path):
    """A max_steps below the step reached was taken (the run stopped at once, recording the lower
    limit) where fewer epochs were refused; both are refused now, the epochs numbered from 1 as
    the log ("resumed ... (epoch 4, batch 3)") and the history number them."""
    run(tmp_path)  # 21 steps: three whole epochs of 6 and 3 batches of the fourth
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for settings, message in (({"max_steps": 20}, r"at step 21, past max_steps 20; resume it with max_steps 21 or "
                                                   "more"),
                              ({"epochs": 3}, r"at step 21, batch 3 of epoch 4, past a run of 3 epochs; resume it "
                                              "with epochs 4 or more")):
        with pytest.raises(ValueError, match=message):
            make_trainer(tmp_path, **settings).resume()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    make_trainer(tmp_path, max_steps=21).resume()  # (where it is: no further step, but accepted)
    run(tmp_path / "ends", max_steps=18)  # the end of epoch 3
    with pytest.raises(ValueError, match=r"at step 18, the end of epoch 3, past a run of 2 epochs"):
        make_trainer(tmp_path / "ends", epochs=2, max_steps=18).resume()


def test_a_run_that_lost_its_last_checkpoint_is_refused(tmp_path):
    run(tmp_path, max_steps=6)
    (tmp_path / "last.npz").unlink()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(ValueError, match="last.npz is missing, but best.npz, history.json, epoch-1.npz are there"):
        run(tmp_path, resume=True, max_steps=6)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_json_files_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "history.json"
    write_json(path, [{"epoch": 1}], indent=2)
    before = path.read_bytes()

    def fsync_then_die(fd):
        raise Killed()

    monkeypatch.setattr(os, "fsync", fsync_then_die)
    with pytest.raises(Killed):
        write_json(path, [{"epoch": 1}, {"epoch": 2}], indent=2)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]  # no temporary file left
    monkeypatch.undo()
    write_json(path, [{"epoch": 1}, {"epoch": 2}], indent=2)
    assert json.loads(path.read_text()) == [{"epoch": 1}, {"epoch": 2}]


# ------------------------------------------------------------------ Ctrl-C, and kills at random moments


def sigint_at(count):
    """A hook that presses Ctrl-C (a real SIGINT to this process) at its count-th call."""
    calls = {"n": 0}

    def hook():
        calls["n"] += 1
        if calls["n"] == count:
            signal.raise_signal(signal.SIGINT)

    return hook


def test_ctrl_c_in_a_step_saves_that_step_and_resumes_exactly(tmp_path, reference):
    """SIGINT in the 8th step (one after the save at step 6): the step is finished, saved, and
    the run stops with a message; nothing is lost, and the resumed run is the reference."""
    before = signal.getsignal(signal.SIGINT)  # default_int_handler; SIG_IGN where pytest was started with `&`
    with pytest.raises(TrainingInterrupted, match=r"interrupted: saved .*last.npz at step 8"):
        run(tmp_path, hooks={"step": sigint_at(8)})
    assert load(tmp_path / "last.npz")["progress"]["step"] == 8
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
    trainer, name, losses = run(tmp_path, resume=True)
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def kill_in_a_write(count):
    """os.replace that kills the run at its count-th call: inside a checkpoint's (or a JSON
    file's) writing, after the temporary file is complete and before it is renamed."""
    calls, replace = {"n": 0}, os.replace

    def maybe_die(*args):
        calls["n"] += 1
        if calls["n"] == count:
            raise Killed()
        return replace(*args)

    return maybe_die


def test_every_kill_resumes_to_the_uninterrupted_result(tmp_path, reference, monkeypatch):
    """24 kills drawn from a seeded generator: SIGKILL-like (nothing runs) in a step, in a
    validation (the epochs' ends and the finish's), inside a file's writing; or Ctrl-C in a
    step or in a validation. Each killed run is resumed and must leave exactly the
    uninterrupted run's checkpoints, history and final choice."""
    counts = {"step": 21, "validation": 5, "write": 0}  # how often each moment comes in a whole run
    replace = os.replace

    def count_writes(*args):
        counts["write"] += 1
        return replace(*args)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", count_writes)
        run(tmp_path / "count")
    rng = np.random.default_rng(2026)
    kinds = ["kill-step", "kill-validation", "kill-write", "ctrl-c-step", "ctrl-c-validation"]
    for trial in range(24):
        kind = kinds[trial % len(kinds)] if trial < len(kinds) else kinds[rng.integers(len(kinds))]
        where = kind.split("-")[-1]
        at = int(rng.integers(1, counts[where] + 1))
        run_dir = tmp_path / f"{trial}-{kind}-{at}"
        hooks = {}
        with monkeypatch.context() as patch:
            if where == "write":
                patch.setattr(os, "replace", kill_in_a_write(at))
            else:
                hooks[where] = (sigint_at if kind.startswith("ctrl-c") else kill_at)(at)
            with pytest.raises((Killed, KeyboardInterrupt)):
                run(run_dir, hooks=hooks)
        trainer, name, losses = run(run_dir, resume=True)
        assert_same_state(outcome(run_dir, (name, losses)), reference, run_dir.name)


# ------------------------------------------------------------------ a schedule stepped per epoch


def plateau(opt):  # a 10% better validation loss counts as progress: the lr halves at most epoch ends
    return optim.ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=0.1)


def test_a_plateau_schedule_steps_at_complete_epochs_ends_with_the_validation_loss(tmp_path):
    trainer, _, _ = run(tmp_path, make_schedule=plateau)
    expected, replay = 0.02, optim.ReduceLROnPlateau(optim.SGD([minitx.zeros(1, requires_grad=True)], lr=0.02),
                                                     factor=0.5, patience=0, threshold=0.1)
    for record in trainer.history:  # 3 complete epochs and the 4th's three batches (not stepped)
        if record["complete"]:
            replay.step(record["val_loss"])
    expected = replay.optimizer.param_groups[0]["lr"]
    assert expected < 0.02 and trainer.optimizer.param_groups[0]["lr"] == expected
    assert trainer.schedule.state_dict() == replay.state_dict() and trainer.schedule.last_step == 3


def stop_in_the_write_of_last_npz(count, how):
    """os.replace that, at the count-th renaming of last.npz, raises Killed or a
    KeyboardInterrupt (how="kill", "raise"), or sends a real SIGINT and goes on (how="sigint")."""
    calls, replace = {"n": 0}, os.replace

    def maybe_stop(source, target, *args, **kwargs):
        if str(target).endswith("last.npz"):
            calls["n"] += 1
            if calls["n"] == count:
                if how == "sigint":
                    signal.raise_signal(signal.SIGINT)
                else:
                    raise {"kill": Killed, "raise": KeyboardInterrupt}[how]()
        return replace(source, target, *args, **kwargs)

    return maybe_stop


# last.npz is written at steps 3 and 6, then at the end of epoch 1 (its 3rd writing), 9, 12, epoch 2 (6th) ...
@pytest.mark.parametrize("how, at", [("kill", 3), ("raise", 3), ("raise", 6), ("sigint", 3), ("sigint", 6)])
def test_a_plateau_run_stopped_at_an_epoch_end_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch,
                                                                                    how, at):
    """At an epoch's end the schedule is stepped just before last.npz is written. A kill or an
    error there must save nothing, and Ctrl-C must wait for the write: a last.npz with the old
    state and the stepped schedule would step it twice when resumed."""
    trainer, name, losses = run(tmp_path / "whole", make_schedule=plateau)
    whole = outcome(tmp_path / "whole", (name, losses))
    run_dir = tmp_path / f"{how}-{at}"
    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", stop_in_the_write_of_last_npz(at, how))
        with pytest.raises((Killed, KeyboardInterrupt)) as stopped:
            run(run_dir, make_schedule=plateau)
    if how == "sigint":  # the epoch end was committed, then the run stopped with a message
        assert stopped.type is TrainingInterrupted
        assert load(run_dir / "last.npz")["progress"]["epoch"] == at // 3
    trainer, name, losses = run(run_dir, resume=True, make_schedule=plateau)
    assert_same_state(outcome(run_dir, (name, losses)), whole, run_dir.name)


# ------------------------------------------------------------------ progress


@pytest.mark.parametrize("settings, end", [
    ({}, (21, 4)),                              # max_steps 21 comes in the 4th epoch
    ({"max_steps": 8}, (8, 2)),
    ({"max_steps": None}, (24, 4)),             # all 4 epochs of 6 batches
    ({"max_steps": 100, "epochs": 2}, (12, 2)),
])
def test_the_progress_bar_ends_where_the_run_ends(tmp_path, settings, end, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # (the bar is drawn on a terminal only)
    trainer = make_trainer(tmp_path, **settings)
    assert trainer.plan() == end
    trainer.show_progress = True
    trainer.fit()
    err = capsys.readouterr().err
    steps, epochs = end
    last = re.findall(r"epoch (\d+)/(\d+): +(\d+)%\|[^|]*\| (\d+)/(\d+) \[(\d\d:\d\d)<(\d\d:\d\d)", err)[-1]
    # (epoch reached / epochs: 100%| steps / steps [elapsed<remaining)
    assert last[:5] + last[6:] == (str(epochs), str(epochs), "100", str(steps), str(steps), "00:00"), err


def test_a_sigint_ignored_when_the_run_began_stays_ignored(tmp_path, reference):
    """A background job of a non-interactive shell starts with SIGINT ignored: Python's startup
    kept it so, but the trainer installed its own handler and stopped at the next SIGINT."""
    steps = []

    def sigint_at_step_5():
        steps.append(1)
        if len(steps) == 5:
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        trainer, name, losses = run(tmp_path, hooks={"step": sigint_at_step_5})
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    except TrainingInterrupted:  # (a KeyboardInterrupt, which pytest would take for its own)
        pytest.fail("the ignored SIGINT stopped the run")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert_same_state(outcome(tmp_path, (name, losses)), reference)


def test_no_bar_is_drawn_where_stderr_is_no_terminal(tmp_path, capsys):
    """A log file of stderr got the bar's \\r frames: where stderr is no terminal the bar is left
    out (tqdm's disable=None), and the log's lines are the run's messages alone."""
    trainer = make_trainer(tmp_path, max_steps=8)
    trainer.show_progress = True
    trainer.fit()
    err = capsys.readouterr().err
    assert "\r" not in err and "step/s" not in err and "training stopped: reached max_steps 8" in err


def test_a_sync_free_run_shows_no_loss_until_it_reads_one(tmp_path, monkeypatch):
    """Reading the device every 4 steps, the bar's loss is "-" until the first read (never the
    nan of a value not read yet), then the last loss read."""
    import tqdm

    shown = []
    original = tqdm.tqdm.set_postfix
    monkeypatch.setattr(tqdm.tqdm, "set_postfix", lambda bar, values, **kw: (shown.append(values["loss"]),
                                                                              original(bar, values, **kw)))
    trainer = make_trainer(tmp_path, sync_every=4, max_steps=6, epochs=1)
    trainer.show_progress = True
    trainer.fit()
    assert shown[:3] == ["-"] * 3 and len(shown) == 6
    assert all(re.fullmatch(r"\d+\.\d{3}", value) for value in shown[3:])
    assert shown[4] == shown[3]  # steps 5 and 6 show step 4's loss, the last one read


def test_a_resumed_run_plans_from_where_it_is(tmp_path):
    run(tmp_path, max_steps=9)
    trainer = make_trainer(tmp_path, max_steps=20)
    trainer.resume()
    assert trainer.plan() == (20, 4)


def test_averaging_keeps_each_parameters_dtype(tmp_path):
    from minitx.train import average_checkpoints
    from minitx.serialization import save

    paths = []
    for k, value in enumerate((1.0, 2.0)):
        path = tmp_path / f"epoch-{k}.npz"
        save({"model": {"w": np.full(3, value, dtype=np.float64), "h": np.full(2, value, dtype=np.float32)}}, path)
        paths.append(path)
    averaged = average_checkpoints(paths)
    assert averaged["w"].dtype == np.float64 and averaged["h"].dtype == np.float32
    np.testing.assert_array_equal(averaged["w"], [1.5, 1.5, 1.5])
    with pytest.raises(ValueError, match="average_checkpoints: no checkpoint to average"):
        average_checkpoints([])
    save({"weights": {}}, tmp_path / "other.npz")
    with pytest.raises(ValueError, match=r"other.npz is a minitx file but not a checkpoint \(no 'model' entry\)"):
        average_checkpoints([paths[0], tmp_path / "other.npz"])


def test_loading_a_model_from_a_full_checkpoint_leaves_the_random_state_alone(tmp_path):
    """Evaluating last.npz in the middle of a program (no optimizer given) set the global random
    generators to the checkpoint's: every later draw changed. A resume (with the optimizer) still
    restores them."""
    from minitx import random as mrandom
    from minitx.train import load_checkpoint

    trainer = make_trainer(tmp_path, epochs=1, max_steps=None)
    trainer.fit()
    minitx.manual_seed(123)
    before = mrandom.get_state()
    load_checkpoint(tmp_path / "last.npz", trainer.model)
    assert_same_state(mrandom.get_state(), before)
    load_checkpoint(tmp_path / "last.npz", trainer.model, trainer.optimizer, trainer.schedule)
    assert_same_state(mrandom.get_state(), load(tmp_path / "last.npz")["rng"])


def test_each_epoch_record_logs_the_weighted_mean_of_its_own_steps_losses(tmp_path):
    """train_loss of an epoch's record is sum(loss * weight) / sum(weight) over that epoch's
    steps only, recomputed here from the losses the steps returned (weights differ: the last
    batch is smaller)."""
    steps = []

    def recording_loss(model, batch):
        loss, weight = loss_fn(model, batch)
        steps.append((loss.item(), weight))
        return loss, weight

    def uneven_batches(seed, epoch):  # 5 batches an epoch: four of 10 rows, one of 8
        order = np.random.default_rng([seed, epoch]).permutation(len(X))
        return [(minitx.tensor(X[order[i:i + 10]]), minitx.tensor(Y[order[i:i + 10]])) for i in range(0, len(X), 10)]

    minitx.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    trainer = Trainer(tmp_path, model, optim.Adam(model.parameters(), lr=0.02), recording_loss, uneven_batches,
                      validation_loss=lambda m: mean_loss(m, VAL, lambda m, b: loss_fn(m, b, "sum")), epochs=2,
                      progress=False)
    trainer.fit()
    for record, epoch_steps in zip(trainer.history, (steps[:5], steps[5:])):
        expected = sum(loss * weight for loss, weight in epoch_steps) / sum(weight for _, weight in epoch_steps)
        assert record["train_loss"] == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------ gradient accumulation


def test_a_step_over_micro_batches_follows_the_mean_over_all_their_examples():
    """Two micro-batches of 8 and 5 rows, accumulated, step as one batch of all 13 rows would:
    the gradient is the weighted mean of theirs (weights: their row counts)."""
    from minitx.train import MicroBatches, train_step

    def model_and_optimizer():
        minitx.manual_seed(3)
        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).to(dtype="float64")
        return model, optim.AdamW(model.parameters(), lr=0.05)

    a, b = (minitx.tensor(X[:8].astype(np.float64)), minitx.tensor(Y[:8].astype(np.float64))), \
        (minitx.tensor(X[8:13].astype(np.float64)), minitx.tensor(Y[8:13].astype(np.float64)))
    both = (minitx.tensor(X[:13].astype(np.float64)), minitx.tensor(Y[:13].astype(np.float64)))
    split, split_opt = model_and_optimizer()
    whole, whole_opt = model_and_optimizer()
    loss, weight = train_step(split, MicroBatches([a, b]), loss_fn, split_opt, clip_norm=1.0)
    whole_loss, whole_weight = train_step(whole, both, loss_fn, whole_opt, clip_norm=1.0)
    assert weight == whole_weight == 13 and loss == pytest.approx(whole_loss, rel=1e-12)
    for p, q in zip(split.parameters(), whole.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, atol=1e-14)


def test_an_accumulating_run_counts_optimizer_steps_and_resumes_exactly(tmp_path):
    """accumulate=4 over 6 batches an epoch: steps of 4 and 2 batches, two a epoch; every kill
    in a micro-batch's forward resumes to the uninterrupted run."""
    settings = dict(epochs=3, max_steps=None, save_every=1, accumulate=4)
    trainer, name, losses = run(tmp_path / "whole", **settings)
    assert [(r["epoch"], r["step"]) for r in trainer.history] == [(1, 2), (2, 4), (3, 6)]
    reference = outcome(tmp_path / "whole", (name, losses))
    for at in (3, 6, 11, 17):  # calls of loss_fn: inside the first step, at a step's end, in later epochs
        run_dir = tmp_path / f"killed-{at}"
        with pytest.raises(Killed):
            run(run_dir, hooks={"step": kill_at(at)}, **settings)
        trainer, name, losses = run(run_dir, resume=True, **settings)
        assert_same_state(outcome(run_dir, (name, losses)), reference, run_dir.name)


def test_a_run_resumed_with_another_accumulation_is_refused(tmp_path):
    run(tmp_path, max_steps=3, save_every=1)  # one batch a step: step 3 is batch 3
    trainer = make_trainer(tmp_path, accumulate=2)
    with pytest.raises(ValueError, match="progress: step 3, but epoch 1, batch 3 is step 2"):
        trainer.resume()
    with pytest.raises(ValueError, match="Trainer: accumulate must be a whole number of batches >= 1, got 0"):
        make_trainer(tmp_path, accumulate=0)


# ------------------------------------------------------------------ stopping early (patience)


@pytest.mark.parametrize("losses, patience, stops_after", [
    ([3.0, 2.0, 2.5, 2.0, 2.1], 3, 3),      # a tie is no improvement
    ([3.0, 2.0, 2.5, 2.0], 3, None),
    ([3.0, 2.0, 2.5, 1.9, 2.1], 3, None),   # 1.9 restarted the count
    ([math.nan, math.nan], 2, 2),           # no finite loss: every epoch counts
    ([2.0, math.nan, math.inf], 2, 2),      # NaN and inf never improve on a number
    ([3.0, 2.0, 2.5, 2.6, 2.7], 0, None),   # 0: never
])
def test_patience_counts_the_complete_epochs_since_the_best_validation_loss(losses, patience, stops_after):
    history = [{"val_loss": loss, "complete": True} for loss in losses]
    reason = patience_reason(history, patience)
    if stops_after is None:
        assert reason is None
    else:
        assert reason == f"the validation loss has not improved for {stops_after} epochs (patience {patience})"
    # a record of a stop inside an epoch (not complete) is not an epoch without improvement
    assert patience_reason(history + [{"val_loss": 9.0, "complete": False}], patience) == reason


SCRIPTED = [3.0, 2.0, 2.5, 2.0, 2.1, 1.0]  # the validation loss at the end of epoch n + 1: best at epoch 2


def scripted_run(run_dir, resume=False, hooks=None, **settings):
    """(trainer, why fit stopped, final name, candidates) of a 6-epoch run whose validation
    losses are SCRIPTED: with patience 3 it stops after epoch 5."""
    trainer = make_trainer(run_dir, hooks, **{"epochs": 6, "max_steps": None, "patience": 3, **settings})
    validation = (hooks or {}).get("validation", lambda: None)
    trainer.validation_loss = lambda model: (validation(), SCRIPTED[min(trainer.progress["epoch"], 5)])[1]
    if resume:
        trainer.resume()
    reason = trainer.fit()
    return (trainer, reason, *trainer.choose_final())


def test_patience_stops_the_run_and_a_stopped_run_resumes_to_its_result(tmp_path):
    trainer, reason, name, losses = scripted_run(tmp_path / "whole")
    assert reason == "the validation loss has not improved for 3 epochs (patience 3)"
    assert [r["epoch"] for r in trainer.history] == [1, 2, 3, 4, 5] and trainer.progress["step"] == 30
    whole = outcome(tmp_path / "whole", (name, losses))
    for stopped in ({"hooks": {"validation": kill_at(5)}}, {"hooks": {"step": kill_at(27)}}, {"max_steps": 27}):
        run_dir = tmp_path / f"stopped-{len(list(tmp_path.iterdir()))}"
        try:
            scripted_run(run_dir, **stopped)
        except Killed:
            pass
        _, reason, name, losses = scripted_run(run_dir, resume=True)
        assert reason == "the validation loss has not improved for 3 epochs (patience 3)"
        assert_same_state(outcome(run_dir, (name, losses)), whole, str(stopped))
    # resumed once stopped: the same patience trains no further step; a larger one goes on
    trainer, reason, _, _ = scripted_run(tmp_path / "whole", resume=True)
    assert trainer.progress["step"] == 30 and reason.startswith("the validation loss has not improved")
    trainer, reason, _, _ = scripted_run(tmp_path / "whole", resume=True, patience=4)
    assert reason == "all epochs done" and [r["epoch"] for r in trainer.history] == [1, 2, 3, 4, 5, 6]


def test_patience_must_be_a_whole_number_of_epochs(tmp_path):
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match=f"Trainer: patience must be a whole number of epochs >= 0, got "
                                             f"{re.escape(repr(bad))}"):
            make_trainer(tmp_path, patience=bad)


# ------------------------------------------------------------------ what an application hands the trainer


def test_a_pytorch_style_scheduler_resumes_as_minitxs_own_schedules_do(tmp_path):
    """optim.lr_scheduler's classes (what from-pytorch.md points porters to) count last_epoch,
    not last_step, and name no hyperparameters: a run stopped by max_steps resumed with one
    to the uninterrupted run's result (the resume raised AttributeError)."""
    def cosine(opt):
        return optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)

    assert_resumes_to_the_whole_run(tmp_path, cosine, max_steps=9)


def assert_resumes_to_the_whole_run(tmp_path, make_schedule, max_steps):
    """A run stopped at max_steps and resumed ends in the uninterrupted run's last.npz."""
    trainer, name, losses = run(tmp_path / "whole", make_schedule=make_schedule)
    whole = outcome(tmp_path / "whole", (name, losses))
    run(tmp_path / "stopped", make_schedule=make_schedule, max_steps=max_steps)
    trainer, name, losses = run(tmp_path / "stopped", resume=True, make_schedule=make_schedule)
    assert_same_state(outcome(tmp_path / "stopped", (name, losses))["files"]["last.npz"],
                      whole["files"]["last.npz"])


@pytest.mark.parametrize("make_schedule", [
    lambda opt: optim.lr_scheduler.CyclicLR(opt, 0.002, 0.02, step_size_up=3),
    lambda opt: optim.lr_scheduler.OneCycleLR(opt, max_lr=0.02, total_steps=SETTINGS["max_steps"]),
    lambda opt: optim.lr_scheduler.SequentialLR(opt, [optim.lr_scheduler.LinearLR(opt, 0.1, total_iters=4),
                                                      optim.lr_scheduler.CyclicLR(opt, 0.002, 0.02, 3)], [4]),
], ids=["CyclicLR", "OneCycleLR", "SequentialLR-CyclicLR"])
def test_a_scheduler_that_cycles_adams_beta1_resumes(tmp_path, make_schedule):
    """CyclicLR and OneCycleLR move beta1 with the lr: a resumed run holds the saved betas, not
    those construction set, and that is no change of settings (the resume refused it)."""
    assert_resumes_to_the_whole_run(tmp_path, make_schedule, max_steps=8)


def test_a_resume_beside_a_cycling_schedule_still_checks_the_other_settings(tmp_path):
    def cyclic(opt):
        return optim.lr_scheduler.CyclicLR(opt, 0.002, 0.02, step_size_up=3)

    run(tmp_path, make_schedule=cyclic, max_steps=8)
    trainer = make_trainer(tmp_path, make_schedule=cyclic)
    trainer.optimizer.param_groups[0]["eps"] = 1e-6
    with pytest.raises(ValueError, match=r"optimizer group 0 has eps = 1e-08, but this run was built with 1e-06"):
        trainer.resume()


def test_a_resume_beside_a_schedule_cycling_beta1_still_checks_beta2(tmp_path):
    def cyclic(opt):
        return optim.lr_scheduler.CyclicLR(opt, 0.002, 0.02, step_size_up=3)

    run(tmp_path, make_schedule=cyclic, max_steps=8)
    trainer = make_trainer(tmp_path, make_schedule=cyclic)
    group = trainer.optimizer.param_groups[0]
    group["betas"] = (group["betas"][0], 0.99)
    with pytest.raises(ValueError, match=r"optimizer group 0 has betas\[1:\] = \(0\.999,\), but this run was built "
                                         r"with \(0\.99,\)"):
        trainer.resume()


@pytest.mark.parametrize("returned", [np.float32(0.75), np.array(0.75), "tensor"], ids=["float32", "0-d", "tensor"])
def test_a_validation_loss_or_metric_of_numpy_or_a_tensor_is_recorded_as_a_number(tmp_path, returned):
    """loss.numpy().mean() is a NumPy float32: history.json failed to write it (a bare TypeError
    on the writer thread, naming nothing), and the resume then refused the float32 best."""
    value = minitx.tensor(0.75) if isinstance(returned, str) else returned
    trainer = make_trainer(tmp_path, epochs=2, max_steps=None)
    trainer.validation_loss = lambda model: value
    trainer.evaluate = lambda model, epoch: {"val_accuracy": value}
    trainer.fit()
    history = json.loads((tmp_path / "history.json").read_text())
    assert [(r["val_loss"], r["val_accuracy"]) for r in history] == [(0.75, 0.75)] * 2
    assert type(load(tmp_path / "last.npz")["progress"]["best_val_loss"]) is float


def test_choose_final_gives_the_averaged_models_loss_as_a_float_too(tmp_path):
    trainer = make_trainer(tmp_path, epochs=3, max_steps=None, average_last=2)
    trainer.validation_loss = lambda model: np.float32(0.5)
    trainer.fit()
    _, candidates = trainer.choose_final()
    assert set(candidates) == {"best", "averaged"} and all(type(v) is float for v in candidates.values())


@pytest.mark.parametrize("returned", [True, np.True_, np.array(False), b"0.5", 10 ** 400],
                         ids=["bool", "numpy-bool", "0-d-bool", "bytes", "huge-int"])
def test_a_validation_loss_that_is_no_float_is_refused_naming_it(tmp_path, returned):
    trainer = make_trainer(tmp_path, epochs=1, max_steps=None)
    trainer.validation_loss = lambda model: returned
    with pytest.raises(TypeError, match=r"Trainer: validation_loss\(model\) returned .*; expected a number"):
        trainer.fit()


def test_a_validation_loss_that_is_no_number_is_named(tmp_path):
    trainer = make_trainer(tmp_path, epochs=1, max_steps=None)
    trainer.validation_loss = lambda model: "0.5"
    with pytest.raises(TypeError, match=r"Trainer: validation_loss\(model\) returned '0.5'; expected a number"):
        trainer.fit()
    trainer = make_trainer(tmp_path / "other", epochs=1, max_steps=None)
    trainer.evaluate = lambda model, epoch: {"val_bleu": [1, 2]}
    with pytest.raises(TypeError, match=r"evaluate\(model, epoch\)'s 'val_bleu' returned \[1, 2\]; expected"):
        trainer.fit()


def test_a_mean_loss_over_no_batch_is_nan_never_a_loss_of_0(tmp_path):
    model = make_trainer(tmp_path / "run").model
    assert math.isnan(mean_loss(model, [], lambda m, b: loss_fn(m, b, "sum")))
    # a validation loss of nothing: no epoch is taken as the best, and the finish says so
    trainer = make_trainer(tmp_path / "run", max_steps=6, epochs=1)
    trainer.validation_loss = lambda model: mean_loss(model, [], lambda m, b: loss_fn(m, b, "sum"))
    trainer.fit()
    assert math.isnan(trainer.history[-1]["val_loss"]) and not (tmp_path / "run" / "best.npz").exists()
    with pytest.raises(RuntimeError, match="no epoch had a finite validation loss"):
        trainer.choose_final()


def test_an_epoch_without_batches_is_refused_not_trained_as_0_steps(tmp_path):
    trainer = make_trainer(tmp_path / "run")
    trainer.batches = lambda seed, epoch: []
    with pytest.raises(ValueError, match=r"batches\(seed, 0\) gave no batch for epoch 1"):
        trainer.fit()
    assert trainer.progress["step"] == 0 and not trainer.history
