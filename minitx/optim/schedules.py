"""Learning-rate schedules.

Step-based schedules (``NoamSchedule``, ``WarmupInverseSqrt``, ``WarmupCosine``) count
optimizer steps from 1. The t-th optimizer step runs with the rate ``lr_at(t)``:

    opt = AdamW(model.parameters(), lr=0.0)      # the schedule overwrites lr
    sched = WarmupCosine(opt, peak_lr=5e-4, warmup_steps=1000, total_steps=20000)
    for batch in batches:                        # construction already set lr_at(1)
        loss = ...; loss.backward()
        opt.step()                               # step t uses lr_at(t)
        opt.zero_grad()
        sched.step()                             # sets lr_at(t + 1) for the next step

Each curve is also a plain function of the step (``noam_lr``, ``warmup_inverse_sqrt_lr``,
``warmup_cosine_lr``) so it can be plotted or tested without an optimizer. ``lr_at(0)`` is
defined (0 during a warm-up) and never divides by zero.

A schedule writes the same rate into every parameter group, multiplied by the group's
optional ``'lr_scale'`` (default 1.0); use that to keep, say, a smaller rate for embeddings.
``minitx.optim.lr_scheduler`` has PyTorch's schedulers instead, which scale each group's own
initial lr and count from step 0: use them for code ported from PyTorch, these for peak-rate curves.

``ReduceLROnPlateau`` is different: it is driven by a metric, ``sched.step(val_loss)``, once
per evaluation.
"""
from __future__ import annotations

import copy
import math

from minitx.optim.optimizer import check_count, check_number


# ---------------------------------------------------------------------- the curves
def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """The schedule of "Attention Is All You Need" (Vaswani et al., 2017, section 5.3):

        lr = factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)

    It rises linearly for warmup_steps steps, peaks at step = warmup_steps with
    factor * (d_model * warmup_steps) ** -0.5, then decays as 1 / sqrt(step). step 0 gives 0.
    """
    if step <= 0:
        return 0.0
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def warmup_inverse_sqrt_lr(step: int, peak_lr: float, warmup_steps: int) -> float:
    """Linear warm-up to peak_lr, then inverse-square-root decay (the Noam shape, given its peak):

        lr = peak_lr * step / warmup_steps              for step <= warmup_steps
        lr = peak_lr * sqrt(warmup_steps / step)        after
    """
    if step <= 0:
        return 0.0
    if step <= warmup_steps:
        return peak_lr * step / warmup_steps
    return peak_lr * math.sqrt(warmup_steps / step)


def warmup_cosine_lr(step: int, peak_lr: float, warmup_steps: int, total_steps: int,
                     min_lr: float = 0.0) -> float:
    """Linear warm-up to peak_lr, then half a cosine down to min_lr at total_steps:

        lr = peak_lr * step / warmup_steps                                for step <= warmup_steps
        progress = (step - warmup_steps) / (total_steps - warmup_steps)   clipped to [0, 1]
        lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + cos(pi * progress))  after
    """
    if warmup_steps > 0 and step <= warmup_steps:
        return peak_lr * max(step, 0) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    progress = min(max(progress, 0.0), 1.0)
    return min_lr + (peak_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


# ---------------------------------------------------------------------- step-based schedules
class LRSchedule:
    """Base for step-based schedules: ``lr_at(t)`` is the rate of the t-th optimizer step.

    ``last_step`` counts the optimizer steps taken so far (``step()`` calls). Subclasses list
    their hyperparameters in ``_hyper`` (saved by ``state_dict``) and implement ``lr_at``.
    """

    _hyper: tuple = ()

    def __init__(self, optimizer):
        if not hasattr(optimizer, "param_groups"):
            raise TypeError(f"{type(self).__name__}: expected an optimizer, "
                            f"got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.last_step = 0
        self._apply()

    def lr_at(self, step: int) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def get_lr(self) -> float:
        """The rate this schedule set for the next optimizer step: lr_at(last_step + 1)."""
        return self.lr_at(self.last_step + 1)

    def get_last_lr(self) -> list:
        """The 'lr' of every parameter group, as the optimizer will use it."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:
        """Call after each optimizer step: count it and set the rate for the next one."""
        self.last_step += 1
        self._apply()

    def _apply(self) -> None:
        lr = self.get_lr()
        for group in self.optimizer.param_groups:
            group["lr"] = lr * group.get("lr_scale", 1.0)

    def state_dict(self) -> dict:
        """{'last_step': int, and each hyperparameter}; the optimizer is not included."""
        state = {"last_step": self.last_step}
        state.update({name: getattr(self, name) for name in self._hyper})
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore the step count and hyperparameters, and set the optimizer's lr to match.
        Checked first, changed after: a missing or invalid entry raises, naming it, and leaves
        the schedule as it was."""
        name = f"{type(self).__name__}.load_state_dict"
        _check_keys(name, state, ("last_step",) + self._hyper)
        restored = copy.copy(self)
        for key in self._hyper:
            setattr(restored, key, state[key])
        restored._check()
        last_step = check_count(name, "last_step", state["last_step"])
        for key in self._hyper:
            setattr(self, key, state[key])
        self.last_step = last_step
        self._apply()

    def _check(self) -> None:
        pass

    def __repr__(self) -> str:
        hyper = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._hyper)
        return f"{type(self).__name__}({hyper}, last_step={self.last_step})"


class NoamSchedule(LRSchedule):
    """lr = factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)

    The Transformer paper's schedule (see ``noam_lr``); peak at step = warmup_steps.
    """

    _hyper = ("d_model", "warmup_steps", "factor")

    def __init__(self, optimizer, d_model, warmup_steps, factor=1.0):
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor
        self._check()
        super().__init__(optimizer)

    def _check(self):
        check_number("NoamSchedule", "d_model", self.d_model, low=0, low_open=True)
        check_number("NoamSchedule", "warmup_steps", self.warmup_steps, low=1)
        check_number("NoamSchedule", "factor", self.factor, low=0)

    def lr_at(self, step):
        return noam_lr(step, self.d_model, self.warmup_steps, self.factor)


class WarmupInverseSqrt(LRSchedule):
    """lr = peak_lr * step / warmup_steps  (step <= warmup_steps),
    then lr = peak_lr * sqrt(warmup_steps / step)   (see ``warmup_inverse_sqrt_lr``)."""

    _hyper = ("peak_lr", "warmup_steps")

    def __init__(self, optimizer, peak_lr, warmup_steps):
        self.peak_lr, self.warmup_steps = peak_lr, warmup_steps
        self._check()
        super().__init__(optimizer)

    def _check(self):
        check_number("WarmupInverseSqrt", "peak_lr", self.peak_lr, low=0)
        check_number("WarmupInverseSqrt", "warmup_steps", self.warmup_steps, low=1)

    def lr_at(self, step):
        return warmup_inverse_sqrt_lr(step, self.peak_lr, self.warmup_steps)


class WarmupCosine(LRSchedule):
    """Linear warm-up to peak_lr over warmup_steps, then a half cosine down to min_lr at
    total_steps, and min_lr after (see ``warmup_cosine_lr``). warmup_steps may be 0."""

    _hyper = ("peak_lr", "warmup_steps", "total_steps", "min_lr")

    def __init__(self, optimizer, peak_lr, warmup_steps, total_steps, min_lr=0.0):
        self.peak_lr, self.warmup_steps = peak_lr, warmup_steps
        self.total_steps, self.min_lr = total_steps, min_lr
        self._check()
        super().__init__(optimizer)

    def _check(self):
        check_number("WarmupCosine", "peak_lr", self.peak_lr, low=0)
        check_number("WarmupCosine", "warmup_steps", self.warmup_steps, low=0)
        check_number("WarmupCosine", "total_steps", self.total_steps, low=self.warmup_steps)
        check_number("WarmupCosine", "min_lr", self.min_lr, low=0, high=self.peak_lr)

    def lr_at(self, step):
        return warmup_cosine_lr(step, self.peak_lr, self.warmup_steps, self.total_steps,
                                self.min_lr)


# ---------------------------------------------------------------------- metric-driven
class ReduceLROnPlateau:
    """Multiply the lr by ``factor`` when a metric has stopped improving.

    Call ``step(metric)`` after each evaluation. A metric *improves* when (mode 'min')

        metric < best * (1 - threshold)     threshold_mode 'rel' (default)
        metric < best - threshold           threshold_mode 'abs'

    (mode 'max': greater than best * (1 + threshold), or best + threshold). After more than
    ``patience`` evaluations in a row without improvement, every group's lr becomes
    max(lr * factor, min_lr) and the next ``cooldown`` evaluations are ignored (no counting of
    bad evaluations). A group whose lr would change by ``eps`` or less keeps it (PyTorch's
    ``eps``: a factor within eps of 1, or an lr at its min_lr, changes nothing). A NaN or
    infinite metric raises ValueError rather than being counted. PyTorch's arguments in its order.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0.0, eps=1e-8):
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_steps = 0
        self.cooldown_counter = 0
        self.last_step = 0
        self._check()

    def _check(self) -> None:
        """Every hyperparameter and counter of the right kind and range (counters made ints):
        at construction, and on a restored state before it replaces this one."""
        name = "ReduceLROnPlateau"
        if self.mode not in ("min", "max"):
            raise ValueError(f"{name}: invalid mode {self.mode!r}; expected 'min' or 'max'")
        if self.threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{name}: invalid threshold_mode {self.threshold_mode!r}; expected 'rel' or 'abs'")
        check_number(name, "factor", self.factor, low=0, high=1, high_open=True)
        check_number(name, "threshold", self.threshold, low=0)
        check_number(name, "eps", self.eps, low=0)
        n = len(self.optimizer.param_groups)
        if not isinstance(self.min_lrs, (list, tuple)) or len(self.min_lrs) != n:
            count = len(self.min_lrs) if isinstance(self.min_lrs, (list, tuple)) else repr(self.min_lrs)
            raise ValueError(f"{name}: got {count} min_lr values for {n} parameter groups")
        for m in self.min_lrs:
            check_number(name, "min_lr", m, low=0)
        if not isinstance(self.best, (int, float)) or isinstance(self.best, bool) or self.best != self.best:
            raise ValueError(f"{name}: invalid best {self.best!r}; expected a number (inf before any metric)")
        for key in ("patience", "cooldown", "num_bad_steps", "cooldown_counter", "last_step"):
            setattr(self, key, check_count(name, key, getattr(self, key)))
        self.min_lrs = list(self.min_lrs)

    def is_better(self, metric: float) -> bool:
        if self.mode == "min":
            edge = self.best * (1 - self.threshold) if self.threshold_mode == "rel" \
                else self.best - self.threshold
            return metric < edge
        edge = self.best * (1 + self.threshold) if self.threshold_mode == "rel" \
            else self.best + self.threshold
        return metric > edge

    def step(self, metric) -> None:
        metric = float(metric)
        if not math.isfinite(metric):
            raise ValueError(f"ReduceLROnPlateau.step: the metric is {metric}; expected a "
                             "finite number")
        self.last_step += 1
        if self.is_better(metric):
            self.best = metric
            self.num_bad_steps = 0
        else:
            self.num_bad_steps += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_steps = 0
        if self.num_bad_steps > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_steps = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def get_last_lr(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    _hyper = ("mode", "factor", "patience", "threshold", "threshold_mode", "min_lrs", "cooldown", "eps")
    _state_keys = _hyper + ("best", "num_bad_steps", "cooldown_counter", "last_step")
    _added_keys = ("eps",)  # absent from a state saved before they were: this schedule's value stays

    def state_dict(self) -> dict:
        """Counters, best metric and hyperparameters (the lr itself lives in the optimizer)."""
        return {k: (list(v) if isinstance(v, list) else v)
                for k, v in ((k, getattr(self, k)) for k in self._state_keys)}

    def load_state_dict(self, state: dict) -> None:
        """Restore counters, best metric and hyperparameters; checked first (naming a missing
        or invalid entry), changed after."""
        _check_keys("ReduceLROnPlateau.load_state_dict", state,
                    [k for k in self._state_keys if k not in self._added_keys])
        restored = copy.copy(self)
        for k in self._state_keys:
            setattr(restored, k, state.get(k, getattr(self, k)))
        restored._check()
        for k in self._state_keys:
            setattr(self, k, getattr(restored, k))


def _check_keys(name: str, state, keys) -> None:
    """A saved schedule state must be a dict holding ``keys``."""
    if not isinstance(state, dict):
        raise TypeError(f"{name}: expected a dict, got {type(state).__name__}")
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(f"{name}: missing {missing}")
