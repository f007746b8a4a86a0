"""The training step and the loop: epochs, limits, checkpoints, validation, averaging."""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
import signal
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

import minitx
from minitx import backend, optim, sync
from minitx.autograd.inplace import mark_modified
from minitx.optim.clip import clip_grads_on_device
from minitx.optim.optimizer import check_count, check_number
from minitx.serialization import read_json, save, write_json
from minitx.train.checkpoints import (CheckpointWriter, average_checkpoints, copy_containers, load_checkpoint,
                                      save_checkpoint)
from minitx.train.rundir import log, run_files


class MicroBatches(list):
    """Batches whose gradients one optimizer step accumulates (Trainer(accumulate=N) makes them):
    the step follows the weighted mean loss over all of them,

        grad = sum_b w_b * grad(loss_b) / sum_b w_b        (w_b: the weight loss_fn gives batch b)

    the gradient one batch holding all their examples would give, in the memory of one."""


def _losses_and_gradients(model, batch, loss_fn, scaler=None):
    """Forward and backward of one batch, or of each of MicroBatches: (loss tensor, weight), the
    parameters' .grad filled (zeroed first by the caller), times the scaler's scale if any."""
    scaled = scaler.scale if scaler is not None else (lambda loss: loss)
    if not isinstance(batch, MicroBatches):
        loss, weight = loss_fn(model, batch)
        scaled(loss).backward()
        return loss, weight
    summed, total = 0.0, 0
    for micro in batch:
        loss, weight = loss_fn(model, micro)
        scaled(loss * weight).backward()  # gradients add up across the micro-batches
        summed, total = loss.detach() * weight + summed, total + weight
    for p in model.parameters():
        if p.grad is not None:
            mark_modified(p.grad)
            p.grad.data *= 1 / max(total, 1)
    return summed / max(total, 1), total


def train_step(model, batch, loss_fn, optimizer, schedule=None, clip_norm: float = 0.0, checks=None,
               scaler=None) -> tuple:
    """One optimizer step on one batch (or on MicroBatches, their gradients accumulated): forward
    and loss (``loss_fn(model, batch)`` returns the loss tensor and its weight, e.g. the number of
    tokens it averages over), backward, gradient clipping to a global norm of ``clip_norm`` (0:
    none), the optimizer's update, the schedule's step. Returns (loss value, weight).

    With ``scaler`` (a GradScaler: float16 training) backward runs on the scaled loss, the
    gradients are unscaled before clipping, and the step is skipped, and the scale backed off,
    when one overflowed; the schedule steps either way, as in PyTorch.

    With ``checks`` (a ``minitx.sync.DeferredChecks``) the step reads nothing back from the
    device: the ops' range checks, the optimizer's NaN/inf check (a bad step is skipped on the
    device) and a non-finite loss are recorded in ``checks``; the clip norm stays on the device;
    and the loss value is returned as a device scalar. The parameters come out bit for bit as
    without ``checks``; the errors come when the caller reads ``checks``.
    """
    if checks is None:
        optimizer.zero_grad()
        loss, weight = _losses_and_gradients(model, batch, loss_fn, scaler)
        if scaler is not None:
            scaler.unscale_(optimizer)
        if clip_norm:
            optim.clip_grad_norm_(model.parameters(), clip_norm)
        _step(optimizer, scaler)
    else:
        with checks.deferring():
            checks.begin_step()
            optimizer.zero_grad()
            loss, weight = _losses_and_gradients(model, batch, loss_fn, scaler)
            if scaler is not None:
                scaler.unscale_(optimizer)
            grads = [p.grad.data for p in model.parameters() if p.grad is not None]
            if clip_norm and grads:
                clip_grads_on_device(grads, clip_norm)
            _step(optimizer, scaler)
            xp = backend.get_array_module(loss.data)
            checks.record("training loss", ~xp.isfinite(loss.data), loss.data, _loss_error)
    if schedule is not None:
        schedule.step()
    if checks is not None:
        return loss.data, weight
    return float(loss.item()), weight


def _check_graphs(model, sync_every, accumulate, weight_of) -> None:
    """What a run with cuda_graphs needs; ValueError naming what it lacks."""
    device = next(iter(model.parameters())).device
    lacks = [what for what, missing in (
        (f"a model on the GPU (it is on {device})", device != "cuda"),
        ("sync_every (a captured step cannot read the device back)", sync_every is None),
        (f"one batch per step (accumulate is {accumulate})", accumulate != 1),
        ("weight_of(batch), the weight loss_fn gives a batch", weight_of is None)) if missing]
    if lacks:
        raise ValueError("Trainer: cuda_graphs needs " + "; ".join(lacks))


def _step(optimizer, scaler) -> None:
    if scaler is None:
        optimizer.step()
    else:
        scaler.step(optimizer)
        scaler.update()


def _number(value, what) -> float:
    """A validation loss or metric as a Python float (history.json and last.npz hold numbers): a
    NumPy scalar, a 0-d array or a one-element tensor converts; anything else (a bool, a string,
    an integer past float's range) names ``what``."""
    item = value.item() if hasattr(value, "item") else value
    number = None
    if not isinstance(item, (bool, np.bool_, str, bytes)):
        try:
            number = float(item)
        except (TypeError, ValueError, OverflowError):
            pass
    if number is None:
        raise TypeError(f"Trainer: {what} returned {value!r:.80}; expected a number")
    return number


def _steps_taken(schedule) -> int:
    """The steps a schedule has taken: minitx's schedules count last_step, the PyTorch-style
    lr_scheduler ones last_epoch (stepped once per optimizer step here: the same count)."""
    return schedule.last_step if hasattr(schedule, "last_step") else schedule.last_epoch


def _loss_error(value) -> FloatingPointError:
    return FloatingPointError(f"training loss became {value}; lower the learning rate or raise warmup_steps")


def stop_reason(progress: dict, max_steps=None, time_limit=None):
    """Why a run at ``progress`` must stop (max_steps reached, or time_limit minutes of
    training), or None to go on."""
    if max_steps and progress["step"] >= max_steps:
        return f"reached max_steps {max_steps}"
    if time_limit and progress["train_seconds"] >= time_limit * 60:
        return f"reached the time limit of {time_limit} minutes"
    return None


def patience_reason(history: list, patience: int):
    """Why a run with this ``history`` must stop early, or None: ``patience`` complete epochs in
    a row have ended without a validation loss below the best before them (fairseq's
    ``--patience``; a tie or a NaN is no improvement). 0: never."""
    losses = [record["val_loss"] for record in history if record["complete"]]
    if not patience or not losses:
        return None
    finite = [i for i, loss in enumerate(losses) if math.isfinite(loss)]
    best = min(finite, key=lambda i: losses[i]) if finite else -1  # min keeps the first of a tie
    since = len(losses) - 1 - best
    if since >= patience:
        return f"the validation loss has not improved for {since} epoch{'s' * (since != 1)} (patience {patience})"
    return None


@minitx.no_grad()
def mean_loss(model, batches, loss_fn) -> float:
    """sum(loss) / sum(weight) over the batches, where ``loss_fn(model, batch)`` returns a
    summed loss tensor and its weight, in eval mode; the model's mode is restored afterwards.
    No weight at all (no batch) gives NaN: a mean of nothing is no loss, never a perfect 0,
    and a NaN validation loss is never taken as the best."""
    total, count = 0.0, 0
    with model.evaluating():
        for batch in batches:
            loss, weight = loss_fn(model, batch)
            total += float(loss.item())
            count += weight
    return total / count if count else math.nan


class Trainer:
    """Trains ``model`` in ``run_dir`` (see the package docstring for the whole interface).

    ``batches(seed, epoch)`` gives the training batches of one epoch (a list, or any sized
    iterable; one that can be sliced, ``batches[k:]``, lets a resumed epoch skip making the
    first k); the same (seed, epoch) must give the same batches, so a resumed run sees what
    an uninterrupted one would. ``loss_fn(model, batch)`` returns (loss tensor, weight).
    ``validation_loss(model)`` returns a number, measured at each epoch's end (or when a limit
    stops the run); the lowest is kept as best.npz. ``evaluate(model, epoch)`` (optional) runs
    after it and returns extra metrics for that epoch's history record. ``extra`` entries are
    stored in every checkpoint (e.g. {"config": ...}). ``throughput(batch)`` (optional) counts
    what the progress bar shows per second (default: the loss weight). ``patience`` N > 0
    stops the run once N complete epochs in a row have ended without a lower validation loss
    (``patience_reason``); it is read from the history, so a resumed run stops where the
    uninterrupted one did.

    ``accumulate``: how many batches each optimizer step takes (their gradients accumulated:
    MicroBatches); an epoch's last step takes what is left. Steps, ``max_steps``, ``save_every``
    and the schedule count optimizer steps; a run is saved, and resumes, at step boundaries.

    ``sync_every``: None (the default) reads every step's loss back at once, and every check
    raises in its step. A number N makes the steps read nothing back from the device
    (``train_step`` with a ``minitx.sync.DeferredChecks``): the epoch's loss is summed on the
    device, and the trainer reads it, with every deferred check, every N steps, before each
    checkpoint and at each epoch's end. A failed check then raises its error naming the step
    where it failed, before anything from after that step is saved. The run's numbers and
    files are the same bits either way.

    Exact resume: last.npz is the one commit point. It is written every ``save_every`` steps
    and once at each epoch's end, after that end's other files (best.npz, epoch-<n>.npz) and
    with the history inside, so a run killed anywhere resumes from a consistent state and
    redoes what came after it (the same batches, dropout masks and updates). An epoch end
    not yet recorded (a kill after the last step's checkpoint) is redone before the finish.

    ``write_in_background`` (the default): fit takes each checkpoint's state at its moment (host
    copies) and a CheckpointWriter thread encodes, checksums, writes and fsyncs it while the
    steps go on (a full checkpoint of a 25M-parameter model is about 300 MB; at most about four
    such copies are held at once: one being written, two queued, one being handed over); the
    files come in the same order, each whole, so a kill leaves some first of them, as one always
    could. fit returns (or raises) once they are all written. False: fit writes them itself.
    Each epoch's log line gives the wall time of its steps in this process (the device's
    included: the epoch end waits for it); the rest of the training clock is the epoch ends'.

    ``scaler``: a GradScaler (float16 training, ``amp.loss_scaler('fp16')``) each step scales
    its loss with and steps through (``train_step``); its scale and growth count are saved in
    last.npz and restored on resume, so a resumed run scales as the uninterrupted one did.

    ``cuda_graphs``: on a GPU, capture each batch shape's step as a CUDA graph and replay it
    (``minitx.train.graphs.StepGraphs``): the same bits, without Python between the kernels. It
    needs a sync-free run (``sync_every``), one batch per step, and ``weight_of(batch)``, the
    weight loss_fn gives a batch (a replay cannot ask loss_fn).
    """

    def __init__(self, run_dir, model, optimizer, loss_fn: Callable, batches: Callable[[int, int], Iterable], *,
                 validation_loss: Callable, schedule=None, evaluate: Callable | None = None, epochs: int = 1,
                 max_steps: int | None = None, time_limit: float | None = None, save_every: int = 0,
                 average_last: int = 0, clip_norm: float = 0.0, seed: int = 0, extra: dict | None = None,
                 throughput: Callable | None = None, progress: bool = True, sync_every: int | None = None,
                 accumulate: int = 1, scaler=None, cuda_graphs: bool = False, weight_of: Callable | None = None,
                 keep_epochs: bool = False, patience: int = 0, write_in_background: bool = True):
        self.run_dir = Path(run_dir)
        self.model, self.optimizer, self.schedule, self.scaler = model, optimizer, schedule, scaler
        self.loss_fn, self.batches, self.validation_loss, self.evaluate = loss_fn, batches, validation_loss, evaluate
        self.epochs, self.max_steps, self.time_limit = epochs, max_steps, time_limit
        self.save_every, self.average_last, self.clip_norm, self.seed = save_every, average_last, clip_norm, seed
        self.keep_epochs, self.write_in_background = keep_epochs, write_in_background
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"Trainer: patience must be a whole number of epochs >= 0, got {patience!r}")
        self.patience = patience
        self._writer = None  # fit()'s CheckpointWriter: the run's files written while training goes on
        self._epoch_started = None  # when the current epoch's first step began (perf_counter)
        self.extra = dict(extra or {})
        self.throughput = throughput
        self.show_progress = progress
        if sync_every is not None and (isinstance(sync_every, bool) or not isinstance(sync_every, int)
                                       or sync_every < 1):
            raise ValueError(f"Trainer: sync_every must be None or a whole number of steps >= 1, got {sync_every!r}")
        self.sync_every = sync_every
        if isinstance(accumulate, bool) or not isinstance(accumulate, int) or accumulate < 1:
            raise ValueError(f"Trainer: accumulate must be a whole number of batches >= 1, got {accumulate!r}")
        self.accumulate = accumulate
        self.cuda_graphs, self.weight_of = cuda_graphs, weight_of
        if cuda_graphs:
            _check_graphs(model, sync_every, accumulate, weight_of)
        self.checks = None  # a sync-free run's DeferredChecks, made by fit()
        self._graphs = None  # the StepGraphs of a cuda_graphs run, made by fit()
        # one object, replaced whole at an epoch's end, so it is never half updated
        self.state = {"progress": {"step": 0, "epoch": 0, "batch": 0, "best_val_loss": math.inf,
                                   "train_seconds": 0.0, "epoch_loss": 0.0, "epoch_weight": 0},
                      "history": []}

    @property
    def progress(self) -> dict:
        """step, epoch, batch (the next one of that epoch), best_val_loss, train_seconds, and the
        current epoch's summed training loss and weight."""
        return self.state["progress"]

    @property
    def per_epoch_schedule(self) -> bool:
        """A ReduceLROnPlateau is stepped with each complete epoch's validation loss; any other
        schedule after every optimizer step."""
        return isinstance(self.schedule, optim.ReduceLROnPlateau)

    @property
    def history(self) -> list:
        """The history.json records, one per epoch end."""
        return self.state["history"]

    # ------------------------------------------------------------ state on disk

    def path(self, name: str) -> Path:
        return self.run_dir / name

    def save_last(self, state=None) -> None:
        if state is None:
            self.read_device()  # a failed check raises here: nothing after its step is saved
        state = state or self.state
        with self._whole_write():
            save_checkpoint(self.path("last.npz"), self.model, self.optimizer, self.schedule, state["progress"],
                            scaler=self.scaler, writer=self._writer, history=state["history"], **self.extra)

    def save_model(self, name: str) -> None:
        with self._whole_write():
            save_checkpoint(self.path(name), self.model, writer=self._writer, **self.extra)

    def _write(self, job) -> None:
        """Run ``job`` (a write or a deletion of run files) after the writes before it: on fit's
        writer thread while training, here otherwise."""
        if self._writer is None:
            job()
        else:
            self._writer.submit(job)

    @contextlib.contextmanager
    def _whole_write(self):
        """A file write (or a hand-over to fit's writer thread, or the wait for it) that Ctrl-C
        waits for, as it waits for a step (the KeyboardInterrupt comes after it): raised inside
        NumPy's zip writer or a queue's wait, it would come out as another error, or halfway."""
        outer, self._in_step = self._in_step, True
        try:
            yield
        finally:
            self._in_step = outer
        if self._interrupted and not outer:
            raise KeyboardInterrupt

    def resume(self) -> bool:
        """Continue from last.npz when there is one (True). Without it, a run killed before its
        first checkpoint starts again from step 0, as a new run would (False); a run with other
        files but no last.npz cannot be continued: ValueError."""
        if not self.path("last.npz").exists():
            left = [p.name for p in run_files(self.run_dir, ("best.npz", "averaged.npz", "history.json"))]
            if left:
                raise ValueError(f"cannot resume {self.run_dir}: last.npz is missing, but {', '.join(left)} "
                                 "are there, so the run's state is lost; start a new run (another --output-dir, "
                                 "or --overwrite)")
            log(f"resume: {self.run_dir} has no last.npz (stopped before its first checkpoint): "
                "training starts from step 0")
            return False
        built = self._hyperparameters()
        saved = load_checkpoint(self.path("last.npz"), self.model, self.optimizer, self.schedule, self.scaler)
        for (where, key, value), (_, _, expected) in zip(self._hyperparameters(), built):
            if value != expected:
                raise ValueError(f"{self.path('last.npz')}: {where} has {key} = {value!r}, but this run was built "
                                 f"with {expected!r}")
        progress = self._restored_progress(saved["progress"])
        history = saved.get("history")
        if history is None and self.path("history.json").exists():  # a checkpoint from before it held one
            history = read_json(self.path("history.json"), list)
        self.state = {"progress": progress, "history": self._restored_history(history or [], progress)}
        log(f"resumed from {self.path('last.npz')} at step {progress['step']} "
            f"(epoch {progress['epoch'] + 1}, batch {progress['batch']})")
        return True

    def _steps_in(self, batches: int) -> int:
        """The optimizer steps that take ``batches`` batches (the last may take fewer)."""
        return -(-batches // self.accumulate)

    def _hyperparameters(self) -> list:
        """(where, name, value) of what stays as built for a whole run: every optimizer group's
        settings but those the schedule sets (the rate; the momentum, or Adam's betas, that
        OneCycleLR and CyclicLR cycle), the schedule's own, and the loss scaler's factors and
        interval (not its scale, which moves)."""
        moved = self.schedule._moves() if hasattr(self.schedule, "_moves") else ("lr",)
        found = []
        for g, group in enumerate(self.optimizer.param_groups):
            for key, value in group.items():
                if key == "betas" and key in moved:  # a cycling schedule moves beta1 alone: beta2 stays as built
                    found.append((f"optimizer group {g}", "betas[1:]", tuple(value[1:])))
                elif key != "params" and key not in moved:
                    found.append((f"optimizer group {g}", key, value))
        if self.schedule is not None:  # (a PyTorch-style lr_scheduler names none: its state_dict holds them)
            found += [("the schedule", key, getattr(self.schedule, key))
                      for key in getattr(self.schedule, "_hyper", ())]
        if self.scaler is not None:
            found += [("the loss scaler", key, value) for key, value in self.scaler.state_dict().items()
                      if key in ("growth_factor", "backoff_factor", "growth_interval")]
        return found

    def _restored_progress(self, saved) -> dict:
        """The progress of last.npz, checked: each count of the right kind and range, the batch
        within its epoch, and the step count equal to the optimizer's and the schedule's, which
        were saved beside it (a hand-edited or mixed-up file would resume somewhere else)."""
        where = f"{self.path('last.npz')}: progress"
        if not isinstance(saved, dict) or not {"step", "epoch", "batch"} <= set(saved):
            raise ValueError(f"{where} is {saved!r:.100}; expected the step, epoch and batch the run had reached")
        progress = {**self.progress, **saved}
        for key in ("step", "epoch", "batch"):
            progress[key] = check_count(where, key, progress[key])
        for key in ("train_seconds", "epoch_weight"):
            check_number(where, key, progress[key], low=0)
        check_number(where, "epoch_loss", progress["epoch_loss"])
        best = progress["best_val_loss"]
        if isinstance(best, np.floating):  # (a file written before validation losses were made floats)
            best = progress["best_val_loss"] = float(best)
        if not isinstance(best, (int, float)) or isinstance(best, bool) or best != best:
            raise ValueError(f"{where}: invalid best_val_loss {best!r}; expected a number (inf before any)")
        step, epoch, batch = progress["step"], progress["epoch"], progress["batch"]
        if self._steps_in(batch) > step:
            raise ValueError(f"{where}: step {step} cannot have taken batch {batch} of epoch {epoch + 1}")
        # epochs numbered from 1, as the log and the history number them; a limit below where the run
        # is would stop it at once and record the lower limit: refused alike for epochs and max_steps
        begun = epoch + (batch > 0)
        if begun > self.epochs:
            at = f"batch {batch} of epoch {begun}" if batch else f"the end of epoch {epoch}"
            raise ValueError(f"{where}: the run is at step {step}, {at}, past a run of {self.epochs} epoch"
                             f"{'s' * (self.epochs != 1)}; resume it with epochs {begun} or more")
        if self.max_steps and step > self.max_steps:
            raise ValueError(f"{where}: the run is at step {step}, past max_steps {self.max_steps}; resume it with "
                             f"max_steps {step} or more")
        if epoch < self.epochs and batch > len(self.batches(self.seed, epoch)):
            raise ValueError(f"{where}: batch {batch} is past the end of epoch {epoch + 1}, which has "
                             f"{len(self.batches(self.seed, epoch))} batches")
        before = sum(self._steps_in(len(self.batches(self.seed, e))) for e in range(epoch))
        if before + self._steps_in(batch) != step:  # each step takes `accumulate` batches, epoch after epoch
            raise ValueError(f"{where}: step {step}, but epoch {epoch + 1}, batch {batch} is step "
                             f"{before + self._steps_in(batch)}")
        if batch % self.accumulate and not (epoch < self.epochs and batch == len(self.batches(self.seed, epoch))):
            raise ValueError(f"{where}: batch {batch} is inside a step of {self.accumulate} batches; a run is "
                             "saved between steps")
        taken = max((int(s["step"]) for s in self.optimizer.state.values() if "step" in s), default=0)
        # a loss scaler's skipped steps do not count in the optimizer's (as in PyTorch): fewer, never more
        if "step" in type(self.optimizer).STATE and (taken > step or (taken < step and self.scaler is None)):
            raise ValueError(f"{where}: step {step}, but the optimizer saved beside it has taken {taken} steps")
        if self.schedule is not None and not self.per_epoch_schedule and _steps_taken(self.schedule) != step:
            raise ValueError(f"{where}: step {step}, but the schedule saved beside it has taken "
                             f"{_steps_taken(self.schedule)} steps")
        return progress

    def _restored_history(self, history, progress) -> list:
        """The epoch-end records of last.npz, checked: a list of records holding _RECORD_KEYS,
        epochs counting up and steps up to the run's step, the best validation loss progress's."""
        where = f"{self.path('last.npz')}: history"
        step = progress["step"]
        if not isinstance(history, list):
            raise ValueError(f"{where} is a {type(history).__name__}; expected a list of epoch records")
        previous = (0, -1)  # (epoch, step) of the record before
        for i, record in enumerate(history):
            if not isinstance(record, dict) or not set(_RECORD_KEYS) <= set(record):
                raise ValueError(f"{where}: record {i} is {record!r:.80}; expected the keys {list(_RECORD_KEYS)}")
            epoch = check_count(f"{where}: record {i}", "epoch", record["epoch"], low=1)
            at = check_count(f"{where}: record {i}", "step", record["step"])
            for key in ("train_loss", "val_loss", "val_ppl", "seconds"):
                check_number(f"{where}: record {i}", key, record[key])
            # a run stopped inside an epoch records it, and again at its end: epochs may repeat, steps not
            if epoch < previous[0] or at <= previous[1] or at > step or not isinstance(record["complete"], bool):
                raise ValueError(f"{where}: record {i} (epoch {epoch}, step {at}, complete {record['complete']!r}) "
                                 f"does not follow the one before it or the run's step {step}")
            previous = (epoch, at)
        completed = [r["epoch"] for r in history if r["complete"]]
        if completed != list(range(1, progress["epoch"] + 1)):
            raise ValueError(f"{where} records the ends of epochs {completed}, but the run is in epoch "
                             f"{progress['epoch'] + 1}: each epoch before it has one record")
        best = min((r["val_loss"] for r in history), default=math.inf)
        best = min(best, progress.get("replaced_best_val_loss", math.inf))  # (see _end_epoch)
        if history and progress["best_val_loss"] != best:
            raise ValueError(f"{self.path('last.npz')}: progress has best_val_loss {progress['best_val_loss']!r}, "
                             f"but the history's best is {best!r}")
        return list(history)

    def recorded(self) -> bool:
        """Whether the run's position has its epoch-end record (or no step was taken)."""
        step = self.progress["step"]
        return step == 0 or bool(self.history) and self.history[-1]["step"] == step

    # ------------------------------------------------------------ the loop

    def fit(self) -> str:
        """Train until the epochs are done or a limit stops the run; returns why it stopped.

        Ctrl-C (SIGINT, or a KeyboardInterrupt raised between steps) saves last.npz as of
        the last whole step and raises TrainingInterrupted, which says so. A SIGINT during a
        step waits for the step's end: a half-done update cannot be saved, nor resumed from;
        likewise during an epoch end's commit (the schedule's step and last.npz).
        A KeyboardInterrupt raised inside a step by other code (it cannot wait) saves nothing:
        the last checkpoint stands."""
        self._in_step = self._interrupted = False
        restore = _catch_sigint(self)
        if self.sync_every is not None:
            device = next(iter(self.model.parameters())).device
            xp = backend.xp_for(device)
            self.checks = sync.DeferredChecks(device)
            self.checks.set_step(self.progress["step"])
            # the epoch's sum of loss * weight (progress["epoch_loss"], summed in the same order on
            # the device), and the last step's loss
            self._device_loss = xp.full((), self.progress["epoch_loss"], dtype=np.float64)
            self._last_loss = xp.full((), np.nan, dtype=np.float64)
        if self.cuda_graphs:
            from minitx.train.graphs import StepGraphs  # noqa: PLC0415 (GPU only)

            self._graphs = StepGraphs(self.model, self.loss_fn, self.optimizer, self.checks, self.weight_of,
                                      None if self.per_epoch_schedule else self.schedule, self.clip_norm, self.scaler)
        if self._writer is not None:
            raise RuntimeError("Trainer.fit: this trainer is already fitting (fit called from inside fit)")
        self._writer = CheckpointWriter() if self.write_in_background else None
        self._epoch_started = None
        try:
            try:
                reason = self._fit()
                with self._whole_write():  # Ctrl-C waits for the last writes (then saves: below)
                    self._close_writer()
            except KeyboardInterrupt:
                if self._in_step:
                    raise
                self._interrupted = False  # this save is the answer to it
                self._in_step = True  # a second Ctrl-C waits for it too
                self.save_last()
                self._close_writer()  # on disk before the message says so
                self._in_step = False
                raise TrainingInterrupted(f"interrupted: saved {self.path('last.npz')} at step "
                                          f"{self.progress['step']}") from None
        except BaseException as error:
            self._close_writer(quietly=error)  # the files queued before the error are written
            raise
        finally:
            restore()
        return reason

    def _close_writer(self, quietly: BaseException | None = None) -> None:
        """Wait for the queued writes, then stop fit's writer thread; a failed write raises its
        exception, unless another (``quietly``) is on its way out: then it is noted on that one."""
        writer = self._writer
        if writer is None:
            return
        try:
            writer.close()
        except BaseException as failed:
            if quietly is None:
                raise
            if hasattr(quietly, "add_note"):  # Python 3.11 on
                quietly.add_note(f"(and writing the run's files failed: {failed!r})")
        finally:
            self._writer = None

    def _on_sigint(self, signum, frame):
        if not self._in_step:
            raise KeyboardInterrupt
        self._interrupted = True  # stop at the step's end

    def _fit(self) -> str:
        from tqdm.auto import tqdm

        self.run_dir.mkdir(parents=True, exist_ok=True)
        reason = stop_reason(self.progress, self.max_steps, self.time_limit) or \
            patience_reason(self.history, self.patience)
        # training time runs on from the saved count; it includes the epochs' validation
        self._loop_started = time.perf_counter() - self.progress["train_seconds"]
        self.model.train()
        end_step, end_epoch = self.plan() if self.show_progress and not reason else (0, 0)
        # disable=None: no bar where stderr is no terminal (a log file would fill with \r frames)
        bar = tqdm(total=end_step, initial=self.progress["step"], unit="step", disable=None if end_step else True,
                   mininterval=1.0, dynamic_ncols=True)
        try:
            # a resumed run at its limits trains no further step, but records its epoch's end
            # if a kill came between its last step's checkpoint and that record
            while self.progress["epoch"] < self.epochs and not (reason and self.recorded()):
                epoch = self.progress["epoch"]
                batches = self.batches(self.seed, epoch)
                if not len(batches):  # an epoch of 0 steps would record a training loss of nothing
                    raise ValueError(f"Trainer: batches(seed, {epoch}) gave no batch for epoch {epoch + 1}; there "
                                     "is nothing to train on")
                if not reason:
                    bar.set_description(f"epoch {epoch + 1}/{end_epoch}", refresh=False)
                    reason = self._train_epoch(batches, bar)
                self._end_epoch(epoch, complete=self.progress["batch"] >= len(batches))
                reason = reason or patience_reason(self.history, self.patience)
        finally:
            bar.close()
        reason = reason or "all epochs done"
        log(f"training stopped: {reason} after {self.progress['step']} steps, "
            f"{self.progress['train_seconds']:.0f}s")
        if self._graphs is not None:
            shapes, held = self._graphs.held()
            log(f"CUDA graphs: {shapes} batch shape(s) captured ({self._graphs.captures} captures in all), holding "
                f"{held / 2**30:.2f} GiB of device memory")
        with self._whole_write():  # (a kill may have come before it)
            self._write_history()
        return reason

    def plan(self) -> tuple:
        """(the step the run will end at, the number of epochs it reaches): the end of its
        epochs, or max_steps when that comes first (a time_limit may stop it sooner). Counts
        the batches of the epochs to come, with ``batches(seed, epoch)``."""
        step, epoch = self.progress["step"] - self._steps_in(self.progress["batch"]), self.progress["epoch"]
        while epoch < self.epochs and not (self.max_steps and step >= self.max_steps):
            step += self._steps_in(len(self.batches(self.seed, epoch)))
            epoch += 1
        return (min(step, self.max_steps) if self.max_steps else step), epoch

    def _train_epoch(self, batches, bar) -> str | None:
        """The steps of one epoch from progress["batch"] on; returns the stop reason, or None
        when the epoch's batches are all done."""
        progress = self.progress
        skip = progress["batch"]
        window, window_start, reason = 0, time.perf_counter(), None
        self._epoch_started = window_start
        # a resumed epoch starts at the saved batch; slicing (a list, say) skips without making the batches
        rest = batches[skip:] if hasattr(batches, "__getitem__") else itertools.islice(batches, skip, None)
        loss_value = None  # what the bar shows: each step's loss, or in a sync-free run the last one read
        for taken, batch in self._steps(rest, skip):
            self._in_step = True
            if self._graphs is not None:
                loss, weight = self._graphs(batch)
            else:
                loss, weight = train_step(self.model, batch, self.loss_fn, self.optimizer,
                                          None if self.per_epoch_schedule else self.schedule, self.clip_norm,
                                          self.checks, self.scaler)
            if self.checks is None:
                loss_value = loss
                if not math.isfinite(loss_value):
                    raise FloatingPointError(f"training loss became {loss_value} at step {progress['step'] + 1}; "
                                             "lower the learning rate or raise warmup_steps")
                progress["epoch_loss"] += loss_value * weight
            else:  # the same float64 sum, kept on the device
                self._device_loss += loss.astype(np.float64) * weight
                self._last_loss[...] = loss
            progress["step"] += 1
            progress["batch"] = taken
            progress["epoch_weight"] += weight
            if self.checks is not None and progress["step"] % self.sync_every == 0:
                loss_value = self.read_device()
            now = time.perf_counter()
            progress["train_seconds"] = now - self._loop_started
            self._in_step = False
            if self._interrupted:
                raise KeyboardInterrupt  # (fit saves last.npz)
            window += sum(map(self.throughput, batch if isinstance(batch, MicroBatches) else [batch])) \
                if self.throughput else weight
            shown = {"loss": "-" if loss_value is None else f"{loss_value:.3f}",  # "-": not read back yet
                     "tok_s": f"{window / max(now - window_start, 1e-9):.0f}",
                     "lr": f"{self.optimizer.param_groups[0]['lr']:.2e}"}
            if self.time_limit:  # the bar's end is the step count; the clock may stop the run first
                shown["time_left"] = f"{max(self.time_limit - progress['train_seconds'] / 60, 0):.1f}min"
            bar.set_postfix(shown, refresh=False)
            bar.update(1)
            if self.save_every and progress["step"] % self.save_every == 0:
                self.save_last()
            reason = stop_reason(progress, self.max_steps, self.time_limit)
            if reason:
                break
        return reason

    def _steps(self, batches, start):
        """(batches of the epoch taken so far, what one step takes) from batch ``start`` on: each
        batch, or MicroBatches of ``accumulate`` of them (the epoch's last may hold fewer)."""
        group = MicroBatches()
        for b, batch in enumerate(batches, start=start):
            if self.accumulate == 1:
                yield b + 1, batch
                continue
            group.append(batch)
            if len(group) == self.accumulate:
                yield b + 1, group
                group = MicroBatches()
        if group:
            yield b + 1, group

    def read_device(self) -> float:
        """A sync-free run's one read of the device: raises the first failed check (naming its
        step), copies the epoch's summed loss into progress["epoch_loss"], and returns the last
        step's loss. In other runs: nothing to read, nan."""
        if self.checks is None:
            return math.nan
        self.checks.raise_first()
        summed, last = backend.to_host(backend.get_array_module(self._device_loss).stack(
            [self._device_loss, self._last_loss]))
        self.progress["epoch_loss"] = float(summed)
        return float(last)

    def _end_epoch(self, epoch: int, complete: bool) -> None:
        """Validation, the history record, best.npz, the epoch checkpoint, then last.npz (the
        commit). The trainer's state changes only after that commit."""
        self.read_device()
        # this epoch's steps in this process, to the device's last (the read waited for it): the
        # rest of the training clock is the epoch ends' (validation, checkpoints)
        steps_took = None if self._epoch_started is None else time.perf_counter() - self._epoch_started
        self._epoch_started = None
        progress = dict(self.progress)
        val_loss = _number(self.validation_loss(self.model), "validation_loss(model)")
        record = {"epoch": epoch + 1, "step": progress["step"], "complete": complete,
                  "train_loss": progress["epoch_loss"] / max(progress["epoch_weight"], 1), "val_loss": val_loss,
                  "val_ppl": math.exp(min(val_loss, 50)), "seconds": round(progress["train_seconds"], 1)}
        if self.evaluate is not None:
            record.update({key: _number(value, f"evaluate(model, epoch)'s {key!r}")
                           for key, value in (self.evaluate(self.model, epoch + 1) or {}).items()})
            self.model.train()
        extras = "".join(f", {key.replace('_', ' ')} {record[key]:.2f}" for key in record if key not in _RECORD_KEYS)
        log("epoch {epoch}: train loss {train_loss:.3f}, val loss {val_loss:.3f}, val ppl {val_ppl:.1f}".format(**record)
            + extras + f" ({record['seconds']:.0f}s of training"
            + ("" if steps_took is None else f"; steps {steps_took:.1f}s") + ")")
        if val_loss < progress["best_val_loss"]:
            progress["best_val_loss"] = val_loss
            self.save_model("best.npz")
        if complete and (self.average_last > 1 or self.keep_epochs):
            self.save_model(f"epoch-{epoch + 1}.npz")
        if complete and not self.keep_epochs:  # (also what a run that kept them before its resume left)
            last_needed = epoch + 1 - (self.average_last if self.average_last > 1 else 0)
            with self._whole_write():
                self._write(functools.partial(self._delete_epochs_to, last_needed))
        if complete:  # the next epoch's loss sum starts; a stop inside the epoch keeps it, to go on with
            progress.update(epoch=epoch + 1, batch=0, epoch_loss=0.0, epoch_weight=0)
        # the record of a stop inside this epoch (a limit, which a resume may raise) gives way to this
        # one: the history is the uninterrupted run's
        replaced = [r for r in self.history if not r["complete"] and r["epoch"] == epoch + 1]
        history = [r for r in self.history if r not in replaced] + [record]
        if replaced and progress["best_val_loss"] < min(r["val_loss"] for r in history):
            # best.npz is still the model of that stop: its loss stays the best, noted for the resume's check
            progress["replaced_best_val_loss"] = progress["best_val_loss"]
        state = {"progress": progress, "history": history}
        # The commit, guarded like a step: Ctrl-C waits for its end, so a stepped schedule and
        # the new state reach last.npz together (an error inside it saves nothing, as in a step).
        self._in_step = True
        if complete and self.per_epoch_schedule and math.isfinite(val_loss):
            self.schedule.step(val_loss)
        self.save_last(state)
        self.state = state
        if self.checks is not None:
            self._device_loss[...] = progress["epoch_loss"]  # 0: the next epoch's sum starts
        self._in_step = False
        with self._whole_write():
            self._write_history()
        if self._interrupted:
            raise KeyboardInterrupt  # (fit saves last.npz)

    def _write_history(self) -> None:
        """history.json, as of now, after the writes before it (see _write)."""
        self._write(functools.partial(write_json, self.path("history.json"), copy_containers(self.history), indent=2))

    def _delete_epochs_to(self, last_needed: int) -> None:
        """Delete the epoch checkpoints numbered up to ``last_needed``: no longer averaged."""
        for number, stale in self.epoch_files():
            if number <= last_needed:
                stale.unlink()

    # ------------------------------------------------------------ the final model

    def epoch_files(self) -> list:
        """[(n, path of epoch-<n>.npz)] in the run directory, in epoch order."""
        found = ((path.stem.split("-", 1)[1], path) for path in self.run_dir.glob("epoch-*.npz"))
        return sorted((int(number), path) for number, path in found if number.isdigit())

    def choose_final(self) -> tuple:
        """Load the final model: best.npz, or the average of the last ``average_last`` epoch
        checkpoints (averaged.npz) when its validation loss is lower. Returns (its name,
        {name: validation loss} of the candidates).

        Averaging helps once the averaged epochs sit near one optimum; while the loss is
        still falling fast, the older epochs pull the average back and the best single one wins.
        """
        if not self.path("best.npz").exists():  # every validation loss was NaN (a diverged run)
            raise RuntimeError(f"{self.run_dir}: no epoch had a finite validation loss, so there is no best.npz "
                               f"to finish on (history.json has the losses; last.npz the last model)")
        # the last average_last of them (keep_epochs keeps more)
        epoch_files = [path for _, path in self.epoch_files()[-self.average_last:]] if self.average_last > 1 else []
        candidates = {"best": self.progress["best_val_loss"]}
        if len(epoch_files) >= 2:
            save({"model": average_checkpoints(epoch_files), **self.extra}, self.path("averaged.npz"))
            load_checkpoint(self.path("averaged.npz"), self.model)
            candidates["averaged"] = _number(self.validation_loss(self.model), "validation_loss(model)")
            log(f"averaged the last {len(epoch_files)} epoch checkpoints into {self.path('averaged.npz')}: "
                f"validation loss {candidates['averaged']:.4f}, best single checkpoint {candidates['best']:.4f}")
        chosen = min(candidates, key=candidates.get)  # ties keep "best" (listed first)
        load_checkpoint(self.path(f"{chosen}.npz"), self.model)
        return chosen, candidates


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the training; last.npz holds every step taken (the message says where)."""


def _catch_sigint(trainer):
    """Route SIGINT to trainer._on_sigint; returns the function that puts the old handler back.
    Only the main thread can set handlers: elsewhere nothing changes. A SIGINT ignored when the
    run began stays ignored, as Unix programs leave it: a non-interactive shell starts `cmd &`
    so, to keep a Ctrl-C meant for the foreground from reaching it (and Python's startup left it
    ignored too, so only the training would have heeded it)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return lambda: None
    previous = signal.signal(signal.SIGINT, trainer._on_sigint)
    return lambda: signal.signal(signal.SIGINT, previous)


# the keys every history record holds; others come from the evaluate hook
_RECORD_KEYS = ("epoch", "step", "complete", "train_loss", "val_loss", "val_ppl", "seconds")
