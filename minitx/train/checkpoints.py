"""Checkpoints of a training run: saving, restoring, averaging.

A full checkpoint (``last.npz``) holds everything a run needs to continue exactly: the model,
the optimizer (moments, step counts), the learning-rate schedule, a float16 run's loss scaler,
the random generators' state and the position in the data ("progress"). A model checkpoint (``best.npz``,
``epoch-<n>.npz``, ``averaged.npz``) holds the model only. Both carry the caller's extra
entries (e.g. {"config": ...}). Files are written by :func:`minitx.save`: to a temporary file,
then renamed, so a kill mid-save leaves the previous file whole.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from minitx import random as mrandom
from minitx.serialization import load, save


def save_checkpoint(path, model, optimizer=None, schedule=None, progress=None, scaler=None, **extra) -> None:
    """Save the model, and with an optimizer everything needed to resume (a full checkpoint);
    a loss scaler's state under "scaler" (only when there is one: other runs' files are as before)."""
    state = {"model": model.state_dict()}
    if optimizer is not None:
        state.update(optimizer=optimizer.state_dict(), schedule=schedule.state_dict() if schedule else {},
                     rng=mrandom.get_state(), progress=dict(progress or {}))
        if scaler is not None:
            state["scaler"] = scaler.state_dict()
    save({**state, **extra}, path)


def load_checkpoint(path, model, optimizer=None, schedule=None, scaler=None) -> dict:
    """Restore a checkpoint into model (and optimizer, schedule, loss scaler, the random
    generators); returns everything it holds (the model's weights too).

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
    if "rng" in state:
        try:
            mrandom.set_state(state["rng"])
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
    return state


def average_checkpoints(paths) -> dict:
    """The elementwise mean of the models in several checkpoints (same architecture), summed
    in float64."""
    total = None
    for path in paths:
        model_state = load(path)["model"]
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


