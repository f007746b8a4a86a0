"""minitx.train.checkpoints.CheckpointWriter: a run's files written on a thread of their own, in
order, while training goes on; and the Trainer with it (write_in_background, the default), which
must leave exactly the files of the Trainer that writes them itself."""
import os
import threading

import pytest

from minitx.serialization import load
from minitx.train.checkpoints import CheckpointWriter, save_checkpoint
from minitx.train.loop import TrainingInterrupted
from same_state import assert_same_state
from test_trainer import Killed, kill_in_a_write, outcome, run, sigint_at


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    """As in test_trainer: the files are written and renamed; the wait for the disk is skipped."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def test_jobs_run_in_the_order_they_are_handed_over_and_drain_waits_for_them():
    done, gate = [], threading.Event()
    writer = CheckpointWriter(pending=8)
    writer.submit(gate.wait)  # holds the thread until the other jobs are queued
    for n in range(5):
        writer.submit(lambda n=n: done.append(n))
    assert done == []
    gate.set()
    writer.drain()
    assert done == [0, 1, 2, 3, 4]
    writer.close()


def test_a_failed_job_drops_every_later_one_and_its_error_comes_back_each_time():
    done = []

    def disk_full():
        raise OSError(28, "No space left on device", "last.npz")

    writer = CheckpointWriter(pending=8)
    gate = threading.Event()
    writer.submit(gate.wait)
    writer.submit(disk_full)
    writer.submit(lambda: done.append("after"))  # queued before the failure is known: dropped
    gate.set()
    with pytest.raises(OSError, match="No space left on device"):
        writer.drain()
    with pytest.raises(OSError, match="No space left on device"):
        writer.submit(lambda: done.append("later"))
    with pytest.raises(OSError, match="No space left on device"):
        writer.close()
    assert done == []


def test_at_most_pending_jobs_wait_and_a_further_submit_waits_for_the_oldest():
    gate, third_queued = threading.Event(), threading.Event()
    writer = CheckpointWriter(pending=1)
    writer.submit(gate.wait)  # taken by the thread at once (or waiting in the one slot)
    writer.submit(lambda: None)

    def submit_third():
        writer.submit(lambda: None)
        third_queued.set()

    threading.Thread(target=submit_third, daemon=True).start()
    assert not third_queued.wait(0.3)  # the slot is full: the third waits
    gate.set()
    assert third_queued.wait(5)
    writer.close()


def test_a_checkpoint_handed_to_the_writer_holds_the_state_of_when_it_was_handed_over(tmp_path):
    """The model's and optimizer's state_dicts are host copies and the small dicts are copied:
    changing the model or the progress afterwards does not reach the file."""
    import minitx
    from minitx import nn, optim

    minitx.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = optim.Adam(model.parameters(), lr=0.1)
    progress = {"step": 7}
    gate = threading.Event()
    writer = CheckpointWriter()
    writer.submit(gate.wait)
    before = model.weight.numpy().copy()
    history = [{"epoch": 1, "val_loss": 0.5}]
    save_checkpoint(tmp_path / "last.npz", model, opt, None, progress, writer=writer, history=history)
    model.weight.data[...] += 1.0
    progress["step"] = 8
    history[0]["val_loss"] = 0.25
    history.append({"epoch": 2})
    assert not (tmp_path / "last.npz").exists()  # not written until the thread gets to it
    gate.set()
    writer.close()
    state = load(tmp_path / "last.npz")
    assert (state["model"]["weight"] == before).all() and state["progress"]["step"] == 7
    assert state["history"] == [{"epoch": 1, "val_loss": 0.5}]


@pytest.mark.parametrize("settings", [{}, {"save_every": 2, "average_last": 2}])
def test_the_trainer_leaves_the_same_files_writing_in_the_background_or_not(tmp_path, settings):
    results = []
    for background in (True, False):
        run_dir = tmp_path / str(background)
        trainer, name, losses = run(run_dir, write_in_background=background, **settings)
        assert trainer._writer is None  # fit's writer is closed when fit returns
        results.append(outcome(run_dir, (name, losses)))
    assert_same_state(results[0], results[1])



def _file_operations(monkeypatch):
    """The run's renames (each file's write completing) and deletions, in order, as names."""
    seen, replace, unlink = [], os.replace, os.unlink

    def renamed(source, target):
        seen.append(("wrote", os.path.basename(target)))
        return replace(source, target)

    def deleted(path, *args, **kwargs):
        seen.append(("deleted", os.path.basename(path)))
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "replace", renamed)
    monkeypatch.setattr(os, "unlink", deleted)
    return seen


def test_the_files_are_written_and_deleted_in_the_same_order_either_way(tmp_path, monkeypatch):
    orders = []
    for background in (True, False):
        with monkeypatch.context() as patch:
            seen = _file_operations(patch)
            run(tmp_path / str(background), write_in_background=background)
        orders.append([event for event in seen if not event[1].startswith(".")])  # (temporary files' cleanup)
    assert orders[0] == orders[1] and ("deleted", "epoch-1.npz") in orders[0]


@pytest.mark.parametrize("background", [True, False])
def test_a_kill_inside_any_write_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, background):
    """Every write of a whole run, killed in turn (the temporary file complete, not yet renamed):
    the run resumed from what is on disk leaves exactly the uninterrupted run's files. With the
    writer thread the kill happens on it; the training thread learns of it at its next hand-over
    or at fit's end, and nothing after the killed write reaches the disk."""
    with monkeypatch.context() as patch:
        seen = _file_operations(patch)
        trainer, name, losses = run(tmp_path / "reference", write_in_background=background)
    reference = outcome(tmp_path / "reference", (name, losses))
    writes = sum(1 for event, _ in seen if event == "wrote")
    for at in range(1, writes + 1):
        run_dir = tmp_path / f"killed-at-{at}"
        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", kill_in_a_write(at))
            with pytest.raises(Killed):
                run(run_dir, write_in_background=background)
        trainer, name, losses = run(run_dir, resume=True, write_in_background=background)
        assert_same_state(outcome(run_dir, (name, losses)), reference, run_dir.name)


def test_a_failed_write_is_not_hidden_by_a_ctrl_c(tmp_path, monkeypatch):
    """Ctrl-C in the 2nd step, before any other last.npz: the save it asks for fails (a full
    disk). fit raises the write's error, not TrainingInterrupted (which would say it was saved)."""
    replace = os.replace

    def full_disk(source, target):
        if os.path.basename(target) == "last.npz":
            raise OSError(28, "No space left on device", str(target))
        return replace(source, target)

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(BaseException) as raised:  # (a TrainingInterrupted is a KeyboardInterrupt)
        run(tmp_path, hooks={"step": sigint_at(2)}, save_every=0)
    assert isinstance(raised.value, OSError) and not isinstance(raised.value, TrainingInterrupted), raised.value
    assert "No space left on device" in str(raised.value)
    assert not (tmp_path / "last.npz").exists()
