"""Adagrad and Adadelta, as PyTorch defines them: each weight's step scaled by the squared gradients it
has seen, all of them (Adagrad) or a running mean of them (Adadelta)."""
from __future__ import annotations

from minitx import backend
from minitx.optim.optimizer import Optimizer, check_flag, check_number


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011) with PyTorch's arguments in its order. For each parameter p with
    gradient g, one step is

        g = -g                                       (maximize=True: ascend the objective)
        g = g + weight_decay * p                     (L2 penalty, when weight_decay != 0)
        t = t + 1
        clr = lr / (1 + (t - 1) * lr_decay)          (the rate decays with the step count)
        sum = sum + g^2                              (starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(sum) + eps)

    The sum only grows, so every weight's step shrinks: a weight with large gradients slows first.
    State per parameter: 'step' (t) and 'sum'. ``check_finite``: see minitx.optim.optimizer
    (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"step": "count", "sum": "squares"}

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 *, maximize=False, check_finite=True):
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        for name in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_number("Adagrad", name, group[name], low=0)
        check_flag("Adagrad", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        state_sum = state["sum"]
        if state["step"] == 0:  # the state was made for this step, with a sum of zeros
            state_sum += group["initial_accumulator_value"]
        t = state["step"] = state["step"] + 1
        clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        state_sum += g * g
        p -= clr * g / (xp.sqrt(state_sum) + group["eps"])


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012) with PyTorch's arguments in its order. For each parameter p with
    gradient g, one step is

        g = -g                                               (maximize=True: ascend the objective)
        g = g + weight_decay * p                             (L2 penalty, when weight_decay != 0)
        square_avg = rho * square_avg + (1 - rho) * g^2      (starts at 0)
        delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta^2    (starts at 0)
        p = p - lr * delta

    delta is g rescaled by the root mean square of the past steps over that of the gradients, so
    it carries p's units and lr = 1 (the default) is a sensible rate. State per parameter:
    'square_avg' and 'acc_delta' (PyTorch also counts 'step', which its update never reads).
    ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"square_avg": "squares", "acc_delta": "squares"}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, *, maximize=False, check_finite=True):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_number("Adadelta", "lr", group["lr"], low=0)
        check_number("Adadelta", "rho", group["rho"], low=0, high=1)
        check_number("Adadelta", "eps", group["eps"], low=0)
        check_number("Adadelta", "weight_decay", group["weight_decay"], low=0)
        check_flag("Adadelta", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * g * g
        delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * g
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        p -= group["lr"] * delta
