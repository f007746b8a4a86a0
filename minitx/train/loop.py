"""The training step and the loop: epochs, limits, checkpoints, validation, averaging."""
from __future__ import annotations

import itertools
import json
import math
import time
from pathlib import Path
from typing import Callable, Iterable

import minitx
from minitx import optim
from minitx.serialization import save
from minitx.train.checkpoints import average_checkpoints, load_checkpoint, save_checkpoint, write_json
from minitx.train.rundir import log


def train_step(model, batch, loss_fn, optimizer, schedule=None, clip_norm: float = 0.0) -> tuple:
    """One optimizer step on one batch: forward and loss (``loss_fn(model, batch)`` returns the
    loss tensor and its weight, e.g. the number of tokens it averages over), backward, gradient
    clipping to a global norm of ``clip_norm`` (0: none), the optimizer's update, the schedule's
    step. Returns (loss value, weight)."""
    loss, weight = loss_fn(model, batch)
    optimizer.zero_grad()
    loss.backward()
    if clip_norm:
        optim.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    if schedule is not None:
        schedule.step()
    return float(loss.item()), weight


def stop_reason(progress: dict, max_steps=None, time_limit=None):
    """Why a run at ``progress`` must stop (max_steps reached, or time_limit minutes of
    training), or None to go on."""
    if max_steps and progress["step"] >= max_steps:
        return f"reached max_steps {max_steps}"
    if time_limit and progress["train_seconds"] >= time_limit * 60:
        return f"reached the time limit of {time_limit} minutes"
    return None


@minitx.no_grad()
def mean_loss(model, batches, loss_fn) -> float:
    """sum(loss) / sum(weight) over the batches, where ``loss_fn(model, batch)`` returns a
    summed loss tensor and its weight, in eval mode; the model's mode is restored afterwards."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for batch in batches:
        loss, weight = loss_fn(model, batch)
        total += float(loss.item())
        count += weight
    model.train(was_training)
    return total / max(count, 1)


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
    what the progress bar shows per second (default: the loss weight).
    """

    def __init__(self, run_dir, model, optimizer, loss_fn: Callable, batches: Callable[[int, int], Iterable], *,
                 validation_loss: Callable, schedule=None, evaluate: Callable | None = None, epochs: int = 1,
                 max_steps: int | None = None, time_limit: float | None = None, save_every: int = 0,
                 average_last: int = 0, clip_norm: float = 0.0, seed: int = 0, extra: dict | None = None,
                 throughput: Callable | None = None, progress: bool = True):
        self.run_dir = Path(run_dir)
        self.model, self.optimizer, self.schedule = model, optimizer, schedule
        self.loss_fn, self.batches, self.validation_loss, self.evaluate = loss_fn, batches, validation_loss, evaluate
        self.epochs, self.max_steps, self.time_limit = epochs, max_steps, time_limit
        self.save_every, self.average_last, self.clip_norm, self.seed = save_every, average_last, clip_norm, seed
        self.extra = dict(extra or {})
        self.throughput = throughput
        self.show_progress = progress
        self.progress = {"step": 0, "epoch": 0, "batch": 0, "best_val_loss": math.inf, "train_seconds": 0.0}
        self.history = []

    # ------------------------------------------------------------ state on disk

    def path(self, name: str) -> Path:
        return self.run_dir / name

    def save_last(self) -> None:
        save_checkpoint(self.path("last.npz"), self.model, self.optimizer, self.schedule, self.progress,
                        **self.extra)

    def save_model(self, name: str) -> None:
        save_checkpoint(self.path(name), self.model, **self.extra)

    def resume(self) -> bool:
        """Continue from last.npz and history.json when there is a last.npz; True if there was."""
        if not self.path("last.npz").exists():
            return False
        self.progress.update(load_checkpoint(self.path("last.npz"), self.model, self.optimizer, self.schedule))
        if self.path("history.json").exists():
            self.history = json.loads(self.path("history.json").read_text())
        log(f"resumed from {self.path('last.npz')} at step {self.progress['step']} "
            f"(epoch {self.progress['epoch'] + 1}, batch {self.progress['batch']})")
        return True

    # ------------------------------------------------------------ the loop

    def fit(self) -> str:
        """Train until the epochs are done or a limit stops the run; returns why it stopped."""
        progress = self.progress
        reason = stop_reason(progress, self.max_steps, self.time_limit)
        # a resumed run may already be at its limits: then it trains no further step
        first_epoch = self.epochs if reason else progress["epoch"]
        # training time runs on from the saved count; it includes the epochs' validation
        self._loop_started = time.perf_counter() - progress["train_seconds"]
        self.model.train()
        for epoch in range(first_epoch, self.epochs):
            progress["epoch"] = epoch
            reason, epoch_loss, epoch_weight, epoch_done = self._train_epoch(epoch)
            if epoch_done:
                progress["batch"] = 0
                progress["epoch"] = epoch + 1
            self._end_epoch(epoch, epoch_loss / max(epoch_weight, 1), epoch_done)
            if reason:
                break
        reason = reason or "all epochs done"
        log(f"training stopped: {reason} after {progress['step']} steps, {progress['train_seconds']:.0f}s")
        return reason

    def _train_epoch(self, epoch: int) -> tuple:
        """The steps of one epoch from progress["batch"] on: (stop reason or None, summed loss,
        summed weight, whether the epoch's batches are all done)."""
        from tqdm.auto import tqdm

        progress = self.progress
        batches = self.batches(self.seed, epoch)
        total, skip = len(batches), progress["batch"]
        bar = tqdm(total=total, initial=skip, desc=f"epoch {epoch + 1}/{self.epochs}", unit="batch",
                   disable=not self.show_progress, mininterval=1.0, dynamic_ncols=True)
        window, window_start, epoch_loss, epoch_weight, reason = 0, time.perf_counter(), 0.0, 0, None
        # a resumed epoch starts at the saved batch; slicing (a list, say) skips without making the batches
        rest = batches[skip:] if hasattr(batches, "__getitem__") else itertools.islice(batches, skip, None)
        for b, batch in enumerate(rest, start=skip):
            loss_value, weight = train_step(self.model, batch, self.loss_fn, self.optimizer, self.schedule,
                                            self.clip_norm)
            if not math.isfinite(loss_value):
                raise FloatingPointError(f"training loss became {loss_value} at step {progress['step'] + 1}; "
                                         "lower the learning rate or raise warmup_steps")
            progress["step"] += 1
            progress["batch"] = b + 1
            window += self.throughput(batch) if self.throughput else weight
            epoch_loss += loss_value * weight
            epoch_weight += weight
            bar.update(1)
            now = time.perf_counter()
            bar.set_postfix(loss=f"{loss_value:.3f}", tok_s=f"{window / max(now - window_start, 1e-9):.0f}",
                            lr=f"{self.optimizer.param_groups[0]['lr']:.2e}", refresh=False)
            progress["train_seconds"] = now - self._loop_started
            if self.save_every and progress["step"] % self.save_every == 0:
                self.save_last()
            reason = stop_reason(progress, self.max_steps, self.time_limit)
            if reason:
                break
        bar.close()
        return reason, epoch_loss, epoch_weight, progress["batch"] >= total

    def _end_epoch(self, epoch: int, train_loss: float, complete: bool) -> None:
        """Validation, the history record, best.npz, last.npz, the epoch checkpoint."""
        progress = self.progress
        val_loss = self.validation_loss(self.model)
        record = {"epoch": epoch + 1, "step": progress["step"], "complete": complete, "train_loss": train_loss,
                  "val_loss": val_loss, "val_ppl": math.exp(min(val_loss, 50)),
                  "seconds": round(progress["train_seconds"], 1)}
        if self.evaluate is not None:
            record.update(self.evaluate(self.model, epoch + 1) or {})
            self.model.train()
        self.history.append(record)
        extras = "".join(f", {key.replace('_', ' ')} {record[key]:.2f}" for key in record if key not in _RECORD_KEYS)
        log("epoch {epoch}: train loss {train_loss:.3f}, val loss {val_loss:.3f}, val ppl {val_ppl:.1f}".format(**record)
            + extras + f" ({record['seconds']:.0f}s of training)")
        if val_loss < progress["best_val_loss"]:
            progress["best_val_loss"] = val_loss
            self.save_model("best.npz")
        self.save_last()
        if complete and self.average_last > 1:
            self.save_model(f"epoch-{epoch + 1}.npz")
            stale = self.path(f"epoch-{epoch + 1 - self.average_last}.npz")
            if stale.exists():
                stale.unlink()
        write_json(self.path("history.json"), self.history, indent=2)

    # ------------------------------------------------------------ the final model

    def choose_final(self) -> tuple:
        """Load the final model: best.npz, or the average of the last ``average_last`` epoch
        checkpoints (averaged.npz) when its validation loss is lower. Returns (its name,
        {name: validation loss} of the candidates).

        Averaging helps once the averaged epochs sit near one optimum; while the loss is
        still falling fast, the older epochs pull the average back and the best single one wins.
        """
        epoch_files = sorted(self.run_dir.glob("epoch-*.npz"), key=lambda p: int(p.stem.split("-")[1]))
        candidates = {"best": self.progress["best_val_loss"]}
        if self.average_last > 1 and len(epoch_files) >= 2:
            save({"model": average_checkpoints(epoch_files), **self.extra}, self.path("averaged.npz"))
            load_checkpoint(self.path("averaged.npz"), self.model)
            candidates["averaged"] = self.validation_loss(self.model)
            log(f"averaged the last {len(epoch_files)} epoch checkpoints into {self.path('averaged.npz')}: "
                f"validation loss {candidates['averaged']:.4f}, best single checkpoint {candidates['best']:.4f}")
        chosen = min(candidates, key=candidates.get)  # ties keep "best" (listed first)
        load_checkpoint(self.path(f"{chosen}.npz"), self.model)
        return chosen, candidates


# the keys every history record holds; others come from the evaluate hook
_RECORD_KEYS = ("epoch", "step", "complete", "train_loss", "val_loss", "val_ppl", "seconds")
