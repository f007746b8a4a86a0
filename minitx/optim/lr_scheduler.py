"""PyTorch's learning-rate schedulers (``torch.optim.lr_scheduler``): its names, its arguments
and its numbers, for code ported from PyTorch.

    from minitx.optim import SGD, lr_scheduler
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)  # construction takes step 0
    for epoch in range(100):
        train(...)                     # opt.step() inside
        sched.step()                   # after opt.step(), as in PyTorch

Each scheduler scales every parameter group's own rate. Construction copies ``group['lr']``
into ``group['initial_lr']`` (unless it is there) and ``base_lrs`` lists those; ``last_epoch``
counts ``step()`` calls, 0 after construction. Most schedulers are *recursive*, as PyTorch's
are: a step multiplies each group's current lr by a factor, which keeps PyTorch's rounding
and lets a change made to the lr from outside carry on. LambdaLR, OneCycleLR, CyclicLR and
CosineAnnealingWarmRestarts compute each rate from base_lrs.

``state_dict()`` is plain data (JSON can hold it); the lrs themselves live in the optimizer,
whose state_dict saves them. To resume, build both, then load both.
"""
from __future__ import annotations

import copy
import math
import types
from bisect import bisect_right

from minitx.optim.optimizer import check_count, check_flag, check_number
from minitx.optim.schedules import ReduceLROnPlateau, _check_keys

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "OneCycleLR",
           "CyclicLR", "CosineAnnealingWarmRestarts", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau"]


class LRScheduler:
    """The shared part. A subclass stores its arguments, calls this ``__init__`` (which takes
    the first step, to last_epoch 0) and implements ``get_lr()``: the groups' rates at
    ``last_epoch``. Where PyTorch has a closed form, ``_closed_form_lr()`` computes the same
    rates from base_lrs; SequentialLR uses it to restart a scheduler at step 0."""

    _not_state = ("optimizer", "_is_initial")  # attributes state_dict leaves out, or saves in its own form

    def __init__(self, optimizer, last_epoch=-1):
        name = type(self).__name__
        groups = _param_groups(name, optimizer)
        last_epoch = check_count(name, "last_epoch", last_epoch, low=-1)
        for i, group in enumerate(groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"{name}: param_groups[{i}] has no 'initial_lr', which resuming with "
                               f"last_epoch={last_epoch} needs; load the optimizer's state_dict first")
        self.optimizer = optimizer
        self.base_lrs = [group["initial_lr"] for group in groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        # recursive forms keep the current lr in this step: a resumed optimizer already holds it
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__} has no get_lr")

    def _closed_form_lr(self) -> list:
        return self.get_lr()

    def step(self) -> None:
        """Call after ``opt.step()``: advance last_epoch and set every group's lr for it."""
        self.last_epoch += 1
        self._write(self.get_lr())

    def _restart(self) -> None:
        """SequentialLR's hand-over at a milestone: this scheduler's step 0, from base_lrs."""
        self.last_epoch = 0
        self._write(self._closed_form_lr())

    def _write(self, lrs) -> None:
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = self._current()

    def _current(self) -> list:
        """The groups' lrs as they are: what a recursive step that changes nothing returns."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        """The lr of every group, as the last step set it."""
        return list(self._last_lr)

    def _moves(self) -> tuple:
        """The group entries its steps set: 'lr', and the momentum that cycle_momentum moves
        (OneCycleLR's, CyclicLR's). A resumed Trainer checks that the others are as built."""
        if getattr(self, "cycle_momentum", False):
            return ("lr", "betas" if self.use_beta1 else "momentum")
        return ("lr",)

    def state_dict(self) -> dict:
        """Every attribute but the optimizer, copied."""
        return {k: copy.deepcopy(v) for k, v in vars(self).items() if k not in self._not_state}

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict() returned: its keys exactly (else ValueError, nothing changed)."""
        name = f"{type(self).__name__}.load_state_dict"
        expected = self.state_dict().keys()
        _check_keys(name, state, expected)
        unknown = sorted(set(state) - set(expected))
        if unknown:
            raise ValueError(f"{name}: unknown keys {unknown}")
        self.__dict__.update({k: copy.deepcopy(v) for k, v in state.items() if k not in self._not_state})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, lrs={self._last_lr})"


class _LRScheduler(LRScheduler):
    """PyTorch's older name for the base class, which it still exports: custom schedulers written
    against it subclass this one unchanged."""


def _param_groups(owner, optimizer) -> list:
    if not hasattr(optimizer, "param_groups"):
        raise TypeError(f"{owner}: expected an optimizer, got {type(optimizer).__name__}")
    return optimizer.param_groups


def _per_group(owner, name, optimizer, value) -> list:
    """One value per parameter group: a list or tuple of them, or one value for every group."""
    n = len(_param_groups(owner, optimizer))
    if not isinstance(value, (list, tuple)):
        return [value] * n
    if len(value) != n:
        raise ValueError(f"{owner}: expected {n} values of {name}, one per parameter group; got {len(value)}")
    return list(value)


# ---------------------------------------------------------------------- given a function
class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of last_epoch per group. state_dict saves a
    callable object's attributes, and None for a plain function or lambda, as PyTorch does."""

    _not_state = LRScheduler._not_state + ("lr_lambdas",)

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        name = type(self).__name__
        self.lr_lambdas = _per_group(name, "lr_lambda", optimizer, lr_lambda)
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"{name}: lr_lambda should be a function, got {type(f).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["lr_lambdas"] = [_function_state(f) for f in self.lr_lambdas]
        return state

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        for f, saved in zip(self.lr_lambdas, state["lr_lambdas"]):
            _load_function_state(f, saved)


def _function_state(f):
    """What a scheduler's state_dict saves of a function it was given, as PyTorch's does: a
    callable object's attributes (a copy), None for a plain function or lambda (or no function)."""
    if f is None or isinstance(f, types.FunctionType):
        return None
    return dict(f.__dict__)


def _load_function_state(f, saved) -> None:
    """Put back what _function_state saved into ``f``, the function this scheduler was built with."""
    if saved is not None:
        f.__dict__.update(copy.deepcopy(saved))


class LambdaLR(_LambdaScheduler):
    """lr = base_lr * lr_lambda(last_epoch)

    ``lr_lambda``: one function for every group, or a list of one per group."""

    def get_lr(self):
        return [base_lr * f(self.last_epoch) for f, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr = lr * lr_lambda(last_epoch)      at every step after construction's"""

    def get_lr(self):
        if self._is_initial:
            return self._current()
        return [group["lr"] * f(self.last_epoch) for f, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


# ---------------------------------------------------------------------- decays
class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size)

    Recursively: lr = lr * gamma when last_epoch is a nonzero multiple of step_size."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = check_count("StepLR", "step_size", step_size, low=1)
        self.gamma = _check_gamma("StepLR", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (the number of milestones <= last_epoch)

    Recursively: lr = lr * gamma ** n at a last_epoch that milestones lists n times (a
    milestone given twice decays twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = _check_milestones("MultiStepLR", milestones, strictly=False)
        self.gamma = _check_gamma("MultiStepLR", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        n = self.milestones.count(self.last_epoch)
        if n == 0:
            return self._current()
        return [group["lr"] * self.gamma ** n for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * self.gamma ** bisect_right(self.milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** last_epoch

    Recursively: lr = lr * gamma at every step after construction's."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = _check_gamma("ExponentialLR", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._current()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = base_lr * factor   while last_epoch < total_iters;   lr = base_lr   after

    Recursively: lr = lr * factor at step 0, lr = lr * (1 / factor) at total_iters. A factor of
    0 is refused: that division could not undo it."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        check_number("ConstantLR", "factor", factor, low=0, high=1, low_open=True)
        self.factor = factor
        self.total_iters = check_count("ConstantLR", "total_iters", total_iters, low=1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = base_lr * (start_factor + (end_factor - start_factor) * min(last_epoch, total_iters) / total_iters)

    Recursively: lr = lr * start_factor at step 0; at each step t up to total_iters

        d = end_factor - start_factor
        lr = lr * (1 + d / (total_iters * start_factor + (t - 1) * d))

    (the ratio of the factors of step t and t - 1); then lr stays."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        check_number("LinearLR", "start_factor", start_factor, low=0, high=1, low_open=True)
        check_number("LinearLR", "end_factor", end_factor, low=0, high=1)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = check_count("LinearLR", "total_iters", total_iters, low=1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, start_factor = self.last_epoch, self.start_factor
        if t == 0:
            return [group["lr"] * start_factor for group in self.optimizer.param_groups]
        if self._is_initial or t > self.total_iters:
            return self._current()
        d = self.end_factor - start_factor
        return [group["lr"] * (1.0 + d / (self.total_iters * start_factor + (t - 1) * d))
                for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(last_epoch, total_iters) / total_iters) ** power

    down to 0 at total_iters, then 0. Recursively, at each step t up to total_iters:

        lr = lr * ((1 - t / total_iters) / (1 - (t - 1) / total_iters)) ** power"""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = check_count("PolynomialLR", "total_iters", total_iters, low=1)
        check_number("PolynomialLR", "power", power, low=0)
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, total = self.last_epoch, self.total_iters
        if self._is_initial or t > total:
            return self._current()
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


# ---------------------------------------------------------------------- cosine
class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2

    half a cosine from base_lr down to eta_min at T_max; past T_max it rises again (period
    2 * T_max). Recursively, with t = last_epoch:

        lr = eta_min + (lr - eta_min) * (1 + cos(pi * t / T_max)) / (1 + cos(pi * (t - 1) / T_max))

    except where that divides by 0 (the step after a minimum, t - 1 - T_max a multiple of
    2 * T_max): lr = lr + (base_lr - eta_min) * (1 - cos(pi / T_max)) / 2."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = check_count("CosineAnnealingLR", "T_max", T_max, low=1)
        check_number("CosineAnnealingLR", "eta_min", eta_min)
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if (t - 1 - T_max) % (2 * T_max) == 0:
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * t / T_max)) / (1 + math.cos(math.pi * (t - 1) / T_max))
                * (group["lr"] - eta_min) + eta_min for group in self.optimizer.param_groups]

    def _closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    T_cur counts the steps since the last restart; when it reaches T_i, it restarts from 0 (lr
    back to base_lr) and T_i becomes T_i * T_mult (T_i = T_0 at first). ``step(epoch)`` may
    also jump to an epoch, a fractional one too (``step(epoch + i / iters)`` within an epoch)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        name = "CosineAnnealingWarmRestarts"
        self.T_0 = self.T_i = check_count(name, "T_0", T_0, low=1)
        self.T_mult = check_count(name, "T_mult", T_mult, low=1)
        check_number(name, "eta_min", eta_min)
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            check_number("CosineAnnealingWarmRestarts.step", "epoch", epoch, low=0)
            if epoch < self.T_0:
                self.T_i, self.T_cur = self.T_0, epoch
            elif self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # n restarts so far: T_0 * (1 + T_mult + ... + T_mult ** (n - 1)) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self._write(self.get_lr())


# ---------------------------------------------------------------------- one cycle
class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2017): from initial_lr = max_lr / div_factor up to
    max_lr over pct_start of total_steps, then down to min_lr = initial_lr / final_div_factor.
    Within a phase from step s0 to s1 (ends at pct_start * total_steps - 1 and total_steps - 1):

        pct = (last_epoch - s0) / (s1 - s0)
        lr = end + (start - end) / 2.0 * (cos(pi * pct) + 1)      anneal_strategy 'cos'
        lr = (end - start) * pct + start                          anneal_strategy 'linear'

    three_phase: up, back down to initial_lr by 2 * pct_start * total_steps - 2, then to min_lr.
    cycle_momentum moves momentum (SGD's 'momentum', Adam's beta1) the other way, between
    max_momentum and base_momentum. Give total_steps, or epochs and steps_per_epoch; stepping
    past total_steps raises. max_lr and the momenta may be lists, one per group. Each group
    holds 'initial_lr', 'max_lr', 'min_lr' (and 'max_momentum', 'base_momentum')."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        name = "OneCycleLR"
        groups = _param_groups(name, optimizer)
        if total_steps is not None:
            self.total_steps = check_count(name, "total_steps", total_steps, low=1)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (check_count(name, "epochs", epochs, low=1)
                                * check_count(name, "steps_per_epoch", steps_per_epoch, low=1))
        else:
            raise ValueError(f"{name}: give total_steps, or epochs and steps_per_epoch")
        check_number(name, "pct_start", pct_start, low=0, high=1)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        check_number(name, "div_factor", div_factor, low=0, low_open=True)
        check_number(name, "final_div_factor", final_div_factor, low=0, low_open=True)
        max_lrs = _per_group(name, "max_lr", optimizer, max_lr)
        for lr in max_lrs:
            check_number(name, "max_lr", lr, low=0)
        self.anneal_strategy = anneal_strategy
        peak = float(pct_start * self.total_steps) - 1
        # (end step, start lr, end lr, start momentum, end momentum): names of group entries
        self.phases = [(peak, "initial_lr", "max_lr", "max_momentum", "base_momentum")]
        if three_phase:
            back = float(2 * pct_start * self.total_steps) - 2
            self.phases += [(back, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases += [(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if last_epoch == -1:
            for group, lr in zip(groups, max_lrs):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        self.use_beta1 = "betas" in optimizer.defaults
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and not self.use_beta1:
                raise ValueError(f"{name}: cycle_momentum=True needs an optimizer with momentum or betas "
                                 f"({type(optimizer).__name__} has neither)")
            maxes = _per_group(name, "max_momentum", optimizer, max_momentum)
            bases = _per_group(name, "base_momentum", optimizer, base_momentum)
            for m in maxes + bases:
                check_number(name, "momentum", m, low=0)
            if last_epoch == -1:
                for group, top, bottom in zip(groups, maxes, bases):
                    group["max_momentum"], group["base_momentum"] = top, bottom
                    _set_momentum(group, top, self.use_beta1)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, past total_steps={self.total_steps}")
        s0 = 0.0
        for i, (s1, lr0, lr1, m0, m1) in enumerate(self.phases):
            if step <= s1 or i == len(self.phases) - 1:
                break
            s0 = s1
        if s1 == s0:
            raise ValueError(f"OneCycleLR: phase {i} of the cycle has no steps (total_steps={self.total_steps}, "
                             "pct_start places it at one step); change pct_start or total_steps")
        pct = (step - s0) / (s1 - s0)
        for group in self.optimizer.param_groups:
            if self.cycle_momentum:
                _set_momentum(group, self._anneal(group[m0], group[m1], pct), self.use_beta1)
        return [self._anneal(group[lr0], group[lr1], pct) for group in self.optimizer.param_groups]


def _set_momentum(group, momentum, use_beta1) -> None:
    """Set a group's momentum: SGD's (and RMSprop's) 'momentum', or Adam's beta1 (betas[0])."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017): each group's lr climbs from base_lr towards max_lr
    over step_size_up steps, comes back down over step_size_down steps (step_size_up when None),
    and starts again; step() after every batch. With total_size = step_size_up + step_size_down
    and step_ratio = step_size_up / total_size:

        cycle = floor(1 + last_epoch / total_size)        which cycle, counted from 1
        x = 1.0 + last_epoch / total_size - cycle         how far into it, from 0 up to 1
        scale_factor = x / step_ratio                     while going up (x <= step_ratio)
        scale_factor = (x - 1) / (step_ratio - 1)         while coming down
        lr = base_lr + (max_lr - base_lr) * scale_factor * scale_fn(cycle)

    mode picks scale_fn: 'triangular' 1.0; 'triangular2' 1 / 2.0 ** (cycle - 1), each cycle half
    as high as the one before; 'exp_range' gamma ** last_epoch, which takes last_epoch for
    cycle. A scale_fn of your own (from 0 to 1) replaces mode's: scale_mode 'cycle' gives it
    cycle, 'iterations' last_epoch.

    cycle_momentum (the default) moves momentum the other way, max_momentum at base_lr and
    base_momentum at max_lr:

        momentum = max_momentum - (max_momentum - base_momentum) * scale_factor * scale_fn(cycle)

    in group['momentum'] (SGD, RMSprop) or beta1, group['betas'][0] (Adam and its kin); an
    optimizer with neither needs cycle_momentum=False. base_lr, max_lr and the momenta may be
    lists, one per group. Construction sets each group's lr to base_lr (and its momentum to
    max_momentum, its 'max_momentum' and 'base_momentum' to theirs). state_dict saves a
    scale_fn that is a callable object by its attributes, a plain function as None, as
    PyTorch's does: build the scheduler again with the same function, then load."""

    _not_state = LRScheduler._not_state + ("_scale_fn_custom",)

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        name = "CyclicLR"
        groups = _param_groups(name, optimizer)
        base_lrs = _per_group(name, "base_lr", optimizer, base_lr)
        self.max_lrs = _per_group(name, "max_lr", optimizer, max_lr)
        for lr in base_lrs:
            check_number(name, "base_lr", lr, low=0)
        for lr in self.max_lrs:  # (below base_lr too: the cycle then dips instead of rising, as PyTorch's)
            check_number(name, "max_lr", lr, low=0)
        # PyTorch takes a step size of 2.5 too; one of 0 up would divide by zero at the first step
        check_number(name, "step_size_up", step_size_up, low=0, low_open=True)
        if step_size_down is None:
            step_size_down = step_size_up
        check_number(name, "step_size_down", step_size_down, low=0)  # 0: a sawtooth, up then straight back
        self.total_size = float(step_size_up) + float(step_size_down)
        self.step_ratio = float(step_size_up) / self.total_size
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{name}: invalid mode {mode!r}; expected 'triangular', 'triangular2' or 'exp_range' "
                             "(or a scale_fn of your own)")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: scale_fn should be a function, got {type(scale_fn).__name__}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{name}: invalid scale_mode {scale_mode!r}; expected 'cycle' or 'iterations'")
        self.mode = mode
        self.gamma = _check_gamma(name, gamma)
        self._scale_fn_custom = scale_fn
        if scale_fn is None:  # mode's scale_fn decides what it is a function of
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        check_flag(name, "cycle_momentum", cycle_momentum)
        self.cycle_momentum = cycle_momentum
        self.use_beta1 = "betas" in optimizer.defaults
        if cycle_momentum and "momentum" not in optimizer.defaults and not self.use_beta1:
            raise ValueError(f"{name}: cycle_momentum=True needs an optimizer with momentum or betas "
                             f"({type(optimizer).__name__} has neither); pass cycle_momentum=False")
        self.base_momentums = _per_group(name, "base_momentum", optimizer, base_momentum)
        self.max_momentums = _per_group(name, "max_momentum", optimizer, max_momentum)
        for m in self.base_momentums:
            check_number(name, "base_momentum", m, low=0)
        for m in self.max_momentums:
            check_number(name, "max_momentum", m, low=0)
        if last_epoch == -1:
            for group, lr in zip(groups, base_lrs):
                group["lr"] = lr
            if cycle_momentum:
                for group, top, bottom in zip(groups, self.max_momentums, self.base_momentums):
                    group["max_momentum"], group["base_momentum"] = top, bottom
                    _set_momentum(group, top, self.use_beta1)
        super().__init__(optimizer, last_epoch)
        # As in PyTorch, construction's step (inside super().__init__) took base_lrs from the
        # groups' 'initial_lr': base_lr, unless a group held one already (resuming, another scheduler).
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        """The share of the cycle's full height (max_lr - base_lr) reached at x: a cycle, or a
        step (scale_mode says which)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x  # exp_range

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, top - (top - bottom) * scale_factor * scale, self.use_beta1)
        return [base_lr + (max_lr - base_lr) * scale_factor * scale
                for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["_scale_fn_custom"] = _function_state(self._scale_fn_custom)
        return state

    def load_state_dict(self, state: dict) -> None:
        saved = state.get("_scale_fn_custom") if isinstance(state, dict) else None
        if saved is not None and self._scale_fn_custom is None:  # (checked before anything changes)
            raise ValueError("CyclicLR.load_state_dict: the state holds a scale_fn's attributes, but this "
                             "CyclicLR was built without a scale_fn; build it with the same scale_fn")
        super().load_state_dict(state)
        _load_function_state(self._scale_fn_custom, saved)


# ---------------------------------------------------------------------- one after another
class _OfSchedulers(LRScheduler):
    """SequentialLR's and ChainedScheduler's shared part: the schedulers they drive, whose states
    their own holds, one per scheduler (a state of another count is refused, nothing changed)."""

    _not_state = LRScheduler._not_state + ("_schedulers",)

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def _moves(self) -> tuple:
        return tuple(sorted({key for scheduler in self._schedulers for key in scheduler._moves()}))

    def load_state_dict(self, state: dict) -> None:
        inner = state.get("_schedulers") if isinstance(state, dict) else None
        if isinstance(inner, list) and len(inner) != len(self._schedulers):
            raise ValueError(f"{type(self).__name__}.load_state_dict: {len(inner)} schedulers' states for "
                             f"{len(self._schedulers)} schedulers")
        super().load_state_dict(state)
        for scheduler, saved in zip(self._schedulers, state["_schedulers"]):
            scheduler.load_state_dict(saved)


class SequentialLR(_OfSchedulers):
    """schedulers[0] until milestones[0], then schedulers[1] from its own step 0, and so on.

    Build the schedulers on the optimizer first; this takes back the step their construction
    took and sets every lr back to its initial_lr. At a milestone the next scheduler restarts
    at step 0 from base_lrs (its closed form, where it has one)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = "SequentialLR"
        groups = _param_groups(name, optimizer)
        if isinstance(schedulers, (str, bytes)) or not hasattr(schedulers, "__len__"):
            raise TypeError(f"{name}: schedulers must be a list of schedulers, got {type(schedulers).__name__}")
        if len(schedulers) < 1:
            raise ValueError(f"{name}: expected at least one scheduler, got none")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name}: scheduler {i} is a ReduceLROnPlateau, whose step() needs a metric")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"{name}: scheduler {i} ({type(scheduler).__name__}) drives another optimizer")
            if i and isinstance(scheduler, ChainedScheduler):  # (PyTorch's fails at the milestone)
                raise ValueError(f"{name}: scheduler {i} is a ChainedScheduler, which cannot restart at a milestone; "
                                 "only the first may be one")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"{name}: {len(schedulers)} schedulers need {len(schedulers) - 1} milestones, "
                             f"got {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = _check_milestones(name, milestones, strictly=True)
        self.optimizer = optimizer
        self.last_epoch = check_count(name, "last_epoch", last_epoch, low=-1) + 1
        for group in groups:
            group["lr"] = group["initial_lr"]
        self.base_lrs = [group["initial_lr"] for group in groups]
        for scheduler in self._schedulers:
            _undo_first_step(scheduler)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._restart()
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Every scheduler's step at each step, in order: their factors multiply (recursive ones
    scale the lr the one before set). Unlike SequentialLR, the schedulers keep the step their
    construction took. ``last_epoch``: the steps taken, as each scheduler counts them."""

    def __init__(self, schedulers, optimizer=None):  # (no super().__init__: nothing of its own to step)
        name = "ChainedScheduler"
        if len(schedulers) < 1:
            raise ValueError(f"{name}: expected at least one scheduler, got none")
        optimizer = optimizer if optimizer is not None else getattr(schedulers[0], "optimizer", None)
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name}: scheduler {i} ({type(scheduler).__name__}) is not a scheduler (it has no "
                                "optimizer)")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name}: scheduler {i} is a ReduceLROnPlateau, whose step() needs a metric")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"{name}: scheduler {i} ({type(scheduler).__name__}) drives another optimizer")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._current()

    @property
    def last_epoch(self) -> int:
        return self._schedulers[0].last_epoch

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current()

    def __repr__(self) -> str:
        return f"ChainedScheduler({', '.join(map(repr, self._schedulers))})"


def _undo_first_step(scheduler) -> None:
    """last_epoch - 1 for a scheduler, and for every scheduler inside a SequentialLR or a
    ChainedScheduler."""
    if hasattr(scheduler, "_schedulers"):
        for inner in scheduler._schedulers:
            _undo_first_step(inner)
    else:
        scheduler.last_epoch -= 1


# ---------------------------------------------------------------------- argument checks
def _check_gamma(owner, gamma):
    check_number(owner, "gamma", gamma, low=0, low_open=True)
    return gamma


def _check_milestones(owner, milestones, strictly) -> list:
    """Whole numbers >= 0 in increasing order (strictly, or repeats allowed), as a list."""
    if isinstance(milestones, (str, bytes)) or not hasattr(milestones, "__iter__"):
        raise TypeError(f"{owner}: milestones must be a list of epochs, got {type(milestones).__name__}")
    milestones = [check_count(owner, "milestone", m) for m in milestones]
    if any(b < a or (strictly and b == a) for a, b in zip(milestones, milestones[1:])):
        raise ValueError(f"{owner}: milestones must be {'strictly ' if strictly else ''}increasing, got {milestones}")
    return milestones
