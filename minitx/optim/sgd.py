"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay."""
from __future__ import annotations

from minitx import backend
from minitx.optim.optimizer import Optimizer, check_flag, check_number


class SGD(Optimizer):
    """SGD as PyTorch defines it, with its arguments in its order. For each parameter p with
    gradient g, one step is

        g = -g                                          (maximize=True: ascend the objective)
        g = g + weight_decay * p                        (L2 penalty, when weight_decay != 0)
        if momentum != 0:
            buf = g                                     (first step: the buffer starts as g)
            buf = momentum * buf + (1 - dampening) * g  (later steps)
            g = g + momentum * buf    if nesterov else    g = buf
        p = p - lr * g

    State per parameter: 'momentum_buffer' (only when momentum != 0).
    Nesterov momentum needs momentum > 0 and dampening = 0.
    ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"momentum_buffer": "array"}

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False, check_finite=True):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_number("SGD", "lr", group["lr"], low=0)
        check_number("SGD", "momentum", group["momentum"], low=0)
        check_number("SGD", "dampening", group["dampening"])
        check_number("SGD", "weight_decay", group["weight_decay"], low=0)
        check_flag("SGD", "nesterov", group["nesterov"])
        check_flag("SGD", "maximize", group["maximize"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, got "
                             f"momentum={group['momentum']!r}, dampening={group['dampening']!r}")

    def _step_group(self, group, items):
        lr, momentum, dampening, nesterov = group["lr"], group["momentum"], group["dampening"], group["nesterov"]
        for index, p in items:
            g = self._gradient(group, p)
            if momentum != 0:
                state = self.state.setdefault(index, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    xp = backend.get_array_module(p.data)
                    buf = state["momentum_buffer"] = xp.array(g, dtype=p.dtype, copy=True)
                else:
                    buf *= momentum
                    buf += (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            p.data -= lr * g
