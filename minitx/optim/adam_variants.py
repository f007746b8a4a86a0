"""Adamax, NAdam and RAdam: Adam's variants, each as PyTorch defines it, with its arguments in its order.

Each keeps Adam's running mean of the gradients (exp_avg, bias-corrected by 1 - beta1^t) and changes
what divides it: a running maximum of |g| (Adamax), Adam's root mean square with Nesterov's look-ahead
momentum (NAdam), or that root mean square only once enough steps make its estimate trustworthy
(RAdam). Unlike Adam's, their updates run one parameter at a time (no fused kernel).
"""
from __future__ import annotations

import math

from minitx import backend
from minitx.optim.adam import check_adam_group
from minitx.optim.optimizer import Optimizer, check_flag, check_number


def _update_moments(state, g, beta1, beta2):
    """Adam's running means, in place: of g (exp_avg) and of g^2 (exp_avg_sq), both starting at 0."""
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg *= beta1
    exp_avg += (1 - beta1) * g
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * g * g


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2015, section 7): Adam with the infinity norm in place of the root mean
    square. For each parameter p with gradient g, step count t:

        g = -g                                       (maximize=True: ascend the objective)
        g = g + weight_decay * p                     (L2 penalty, when weight_decay != 0)
        exp_avg = beta1 * exp_avg + (1 - beta1) * g  (starts at 0)
        exp_inf = max(beta2 * exp_inf, |g| + eps)    (starts at 0: a decaying maximum, no bias to correct)
        p = p - lr / (1 - beta1^t) * exp_avg / exp_inf

    State per parameter: 'step' (t), 'exp_avg', 'exp_inf'. ``check_finite``: see
    minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"step": "count", "exp_avg": "array", "exp_inf": "squares"}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, maximize=False,
                 check_finite=True):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_adam_group("Adamax", group)

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        beta1, beta2 = group["betas"]
        t = state["step"] = state["step"] + 1
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg *= beta1
        exp_avg += (1 - beta1) * g
        exp_inf *= beta2
        xp.maximum(exp_inf, xp.abs(g) + group["eps"], out=exp_inf)
        p -= group["lr"] / (1 - beta1 ** t) * exp_avg / exp_inf


class NAdam(Optimizer):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum, and a momentum that warms up. For each
    parameter p with gradient g, step count t:

        g = -g                                       (maximize=True: ascend the objective)
        g = g + weight_decay * p                     (L2 penalty, when weight_decay != 0 ...)
        p = p - lr * weight_decay * p                (... or, decoupled_weight_decay=True, AdamW's decay)
        mu = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))          (this step's momentum)
        mu_next = beta1 * (1 - 0.5 * 0.96^((t + 1) * momentum_decay))
        mu_product = mu_product * mu                 (starts at 1: mu of every step so far, multiplied)
        exp_avg = beta1 * exp_avg + (1 - beta1) * g              (starts at 0)
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g^2      (starts at 0)
        denom = sqrt(exp_avg_sq / (1 - beta2^t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_product) * g / denom
        p = p - lr * mu_next / (1 - mu_product * mu_next) * exp_avg / denom

    The last line is Nesterov's look-ahead: the momentum of the next step, applied now.
    State per parameter: 'step' (t), 'mu_product' (a Python float; PyTorch keeps it in its default
    dtype, float32 unless set to float64), 'exp_avg', 'exp_avg_sq'. ``check_finite``: see
    minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"step": "count", "mu_product": "fraction", "exp_avg": "array", "exp_avg_sq": "squares"}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, maximize=False, check_finite=True):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_adam_group("NAdam", group)
        check_number("NAdam", "momentum_decay", group["momentum_decay"], low=0)
        check_flag("NAdam", "decoupled_weight_decay", group["decoupled_weight_decay"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        lr, (beta1, beta2), momentum_decay = group["lr"], group["betas"], group["momentum_decay"]
        t = state["step"] = state["step"] + 1
        mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        _update_moments(state, g, beta1, beta2)
        denom = xp.sqrt(state["exp_avg_sq"] / (1 - beta2 ** t)) + group["eps"]
        p -= lr * (1 - mu) / (1 - mu_product) * g / denom
        p -= lr * mu_next / (1 - mu_product * mu_next) * state["exp_avg"] / denom


class RAdam(Optimizer):
    """RAdam (Liu et al., 2020): Adam whose adaptive step waits until v's estimate can be trusted,
    then is rectified for its variance. For each parameter p with gradient g, step count t:

        g = -g                                       (maximize=True: ascend the objective)
        g = g + weight_decay * p                     (L2 penalty, when weight_decay != 0 ...)
        p = p - lr * weight_decay * p                (... or, decoupled_weight_decay=True, AdamW's decay)
        exp_avg = beta1 * exp_avg + (1 - beta1) * g              (starts at 0)
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g^2      (starts at 0)
        m_hat = exp_avg / (1 - beta1^t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2^t / (1 - beta2^t)        (how many steps v really averages)
        if rho_t > 5:                                (enough: the adaptive step, rectified)
            rect = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * rect * sqrt(1 - beta2^t) / (sqrt(exp_avg_sq) + eps)
        else:                                        (the first steps: SGD with momentum)
            p = p - lr * m_hat

    With beta2 = 0.999 the first five steps are plain momentum steps. State per parameter: 'step'
    (t), 'exp_avg', 'exp_avg_sq'. ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients
    raise, nothing changes).
    """

    STATE = {"step": "count", "exp_avg": "array", "exp_avg_sq": "squares"}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
                 *, maximize=False, check_finite=True):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_adam_group("RAdam", group)
        check_flag("RAdam", "decoupled_weight_decay", group["decoupled_weight_decay"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        t = state["step"] = state["step"] + 1
        _update_moments(state, g, beta1, beta2)
        m_hat = state["exp_avg"] / (1 - beta1 ** t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p -= lr * m_hat * rect * math.sqrt(1 - beta2 ** t) / (xp.sqrt(state["exp_avg_sq"]) + group["eps"])
        else:
            p -= lr * m_hat
