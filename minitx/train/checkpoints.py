"""Checkpoints of a training run: saving, restoring, averaging.

A full checkpoint (``last.npz``) holds everything a run needs to continue exactly: the model,
the optimizer (moments, step counts), the learning-rate schedule, a float16 run's loss scaler,
the random generators' state and the position in the data ("progress"). A model checkpoint (``best.npz``,
``epoch-<n>.npz``, ``averaged.npz``) holds the model only. Both carry the caller's extra
entries (e.g. {"config": ...}). Files are written by :func:`minitx.save`: to a temporary file,
then renamed, so a kill mid-save leaves the previous file whole; a CheckpointWriter writes them
on a thread of its own, in order, while training goes on.
"""
from __future__ import annotations

import functools
import queue
import threading
from pathlib import Path

import numpy as np

from minitx import random as mrandom
from minitx.serialization import load, save


def save_checkpoint(path, model, optimizer=None, schedule=None, progress=None, scaler=None, writer=None,
                    **extra) -> None:
    """Save the model, and with an optimizer everything needed to resume (a full checkpoint);
    a loss scaler's state under "scaler" (only when there is one: other runs' files are as before).

    With a ``writer`` (a CheckpointWriter) the state is taken here, as of now (the state_dicts
    are copies on the host), and written on the writer's thread."""
    state = {"model": model.state_dict()}
    if optimizer is not None:
        state.update(optimizer=optimizer.state_dict(), schedule=schedule.state_dict() if schedule else {},
                     rng=mrandom.get_state(), progress=dict(progress or {}))
        if scaler is not None:
            state["scaler"] = scaler.state_dict()
    if writer is None:
        save({**state, **extra}, path)
    else:
        writer.submit(functools.partial(save, copy_containers({**state, **extra}), path))


def copy_containers(obj):
    """obj with its dicts, lists and tuples copied, as the plain kinds save writes them (the
    arrays in it are the state_dicts' own copies already): what the caller changes afterwards
    does not reach the file."""
    if isinstance(obj, dict):
        return {key: copy_containers(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [copy_containers(value) for value in obj]
    if isinstance(obj, tuple):
        return tuple(copy_containers(value) for value in obj)
    return obj


class CheckpointWriter:
    """Writes a run's files on a thread of its own, in the order they are handed over, while
    training goes on: a full checkpoint is a few hundred MB to encode, checksum, write and
    fsync, which would otherwise stop the GPU's queue every few hundred steps.

    ``submit(job)`` queues a callable that writes (or deletes) files; at most ``pending`` wait,
    and a further submit waits for the oldest to finish (so the copies held stay bounded).
    ``drain()`` waits for every job and raises the exception of the first that failed, if one
    did (``submit`` and ``close`` raise it too); after a failure every later job is dropped, so
    no file is written past a missing one.
    Each file is written atomically (serialization.write_atomically), so a kill leaves the
    files of the jobs done, as a kill between two writes always did."""

    def __init__(self, pending: int = 2):
        self._jobs: queue.Queue = queue.Queue(maxsize=pending)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="minitx-checkpoint-writer", daemon=True)
        self._thread.start()

    def submit(self, job) -> None:
        self._raise()
        self._jobs.put(job)

    def drain(self) -> None:
        self._jobs.join()
        self._raise()

    def close(self) -> None:
        """Finish the queued jobs and stop the thread (a failed job's exception is raised)."""
        self._jobs.join()
        self._jobs.put(None)  # (the queue is empty: this does not wait)
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:  # kept: every job after it stays dropped
            raise self._error  # the job's own exception (an OSError naming the file, say)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._error is None:
                    job()
            except BaseException as error:  # kept for the training thread to raise
                self._error = error
            finally:
                self._jobs.task_done()


def load_checkpoint(path, model, optimizer=None, schedule=None, scaler=None) -> dict:
    """Restore a checkpoint into model (and optimizer, schedule, loss scaler, the random
    generators); returns everything it holds (the model's weights too). The random generators
    are restored with an optimizer only (a resume): a model loaded to be used leaves the
    program's random state as it was.

    Given an optimizer, the file must be a full checkpoint: an optimizer state, random
    generators, progress, a schedule state exactly when ``schedule`` is given and a loss
    scaler's exactly when ``scaler`` is. Any state that does not fit raises ValueError naming
    the file and the part."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    state = load(path)
    if not isinstance(state, dict) or "model" not in state:
        raise ValueError(f"{path} is a minitx file but not a training checkpoint (no 'model' entry)")
    try:
        model.load_state_dict(state["model"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"checkpoint {path} does not match this model: {error}") from None
    bad = next((name for name, p in model.named_parameters() if not np.isfinite(p.numpy().astype(np.float64)).all()),
               None)
    if bad is not None:  # a run stops at a NaN or inf before it saves: this file was damaged
        raise ValueError(f"checkpoint {path}: the model's '{bad}' holds NaN or inf")
    if optimizer is not None:
        missing = [key for key in ("optimizer", "rng", "progress") if key not in state]
        if missing:
            raise ValueError(f"{path} is not a full checkpoint: it has no {', '.join(missing)}, so training "
                             "cannot continue from it")
        if bool(state.get("schedule")) != (schedule is not None):
            raise ValueError(f"{path} holds {'a' if state.get('schedule') else 'no'} learning-rate schedule state, "
                             f"but this run has {type(schedule).__name__ if schedule else 'no schedule'}")
        if ("scaler" in state) != (scaler is not None):
            raise ValueError(f"{path} holds {'a' if 'scaler' in state else 'no'} loss scaler state (float16), but "
                             f"this run has {'a GradScaler' if scaler is not None else 'none'}")
        for part, target in (("optimizer", optimizer), ("schedule", schedule), ("scaler", scaler)):
            if target is not None:
                try:
                    target.load_state_dict(state[part])
                except (KeyError, TypeError, ValueError) as error:
                    raise ValueError(f"{path}: its {part} state does not fit: {error}") from None
    if optimizer is not None and "rng" in state:
        try:
            mrandom.set_state(state["rng"])
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
    return state


def average_checkpoints(paths) -> dict:
    """The elementwise mean of the models in several checkpoints (same architecture), summed
    in float64."""
    paths = list(paths)
    if not paths:
        raise ValueError("average_checkpoints: no checkpoint to average")
    total = None
    for path in paths:
        state = load(path)
        if not isinstance(state, dict) or "model" not in state:
            raise ValueError(f"average_checkpoints: {path} is a minitx file but not a checkpoint (no 'model' entry)")
        model_state = state["model"]
        if total is None:
            first, dtypes = path, {k: v.dtype for k, v in model_state.items()}
            total = {k: v.astype(np.float64) for k, v in model_state.items()}
            continue
        if set(model_state) != set(total) or any(model_state[k].shape != total[k].shape for k in total):
            raise ValueError(f"average_checkpoints: {path} holds a different model than {first} "
                             "(other parameter names or shapes)")
        for k, v in model_state.items():
            total[k] += v
    return {k: (v / len(paths)).astype(dtypes[k]) for k, v in total.items()}  # summed in float64


