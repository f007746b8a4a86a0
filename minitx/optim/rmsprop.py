"""RMSprop (Hinton's lecture 6e), as PyTorch defines it: each weight's step divided by the root of a
running mean of its squared gradients."""
from __future__ import annotations

from minitx import backend
from minitx.optim.optimizer import Optimizer, check_flag, check_number


class RMSprop(Optimizer):
    """RMSprop with PyTorch's arguments in its order. For each parameter p with gradient g, one step is

        g = -g                                              (maximize=True: ascend the objective)
        g = g + weight_decay * p                            (L2 penalty, when weight_decay != 0)
        square_avg = alpha * square_avg + (1 - alpha) * g^2          (starts at 0)
        avg = sqrt(square_avg) + eps
        avg = sqrt(square_avg - grad_avg^2) + eps,  grad_avg = alpha * grad_avg + (1 - alpha) * g
                                                            (centered=True: the variance, not the raw second moment)
        buf = momentum * buf + g / avg;  p = p - lr * buf   (momentum > 0; buf starts at 0)
        p = p - lr * g / avg                                (momentum = 0)

    State per parameter: 'square_avg', with 'momentum_buffer' when momentum > 0 and 'grad_avg' when
    centered. ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, *,
                 maximize=False, check_finite=True):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _state_kinds(self, group) -> dict:
        kinds = {"square_avg": "squares"}
        if group["momentum"] > 0:
            kinds["momentum_buffer"] = "array"
        if group["centered"]:
            kinds["grad_avg"] = "array"
        return kinds

    def _check_group(self, group):
        check_number("RMSprop", "lr", group["lr"], low=0)
        check_number("RMSprop", "alpha", group["alpha"], low=0)
        check_number("RMSprop", "eps", group["eps"], low=0)
        check_number("RMSprop", "weight_decay", group["weight_decay"], low=0)
        check_number("RMSprop", "momentum", group["momentum"], low=0)
        check_flag("RMSprop", "centered", group["centered"])
        check_flag("RMSprop", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * g * g
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg *= alpha
            grad_avg += (1 - alpha) * g
            avg = xp.sqrt(square_avg - grad_avg * grad_avg) + eps
        else:
            avg = xp.sqrt(square_avg) + eps
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf *= momentum
            buf += g / avg
            p -= group["lr"] * buf
        else:
            p -= group["lr"] * g / avg
