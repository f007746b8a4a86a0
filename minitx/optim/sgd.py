"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay; and ASGD,
SGD that averages its iterates."""
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
        for _, p in items:
            g = self._gradient(group, p)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    xp = backend.get_array_module(p.data)
                    buf = state["momentum_buffer"] = xp.array(g, dtype=p.dtype, copy=True)
                else:
                    buf *= momentum
                    buf += (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            p.data -= lr * g


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), as PyTorch defines it, with its arguments in its order:
    SGD whose rate decays with the step count, and which keeps a running average of the iterates,
    ``ax``: on a noisy problem the average lands nearer the minimum than the last iterate. For each
    parameter p with gradient g, step count t:

        g = -g                                        (maximize=True: ascend the objective)
        g = g + weight_decay * p                      (L2 penalty, when weight_decay != 0)
        t = t + 1
        p = p * (1 - lambd * eta)                     (a decay of its own, by this step's rate)
        p = p - eta * g                               (eta starts at lr)
        ax = p                                        (mu = 1: no averaging yet)
        ax = ax + mu * (p - ax)                       (mu < 1: a running mean of the iterates)
        eta = lr / (1 + lambd * lr * t)^alpha         (the next step's rate)
        mu = 1 / max(1, t - t0)                       (the next step's averaging weight)

    ax is the iterate itself up to step t0 + 2 (t0 = 1e6 by default: in a short run, always), and
    from there on the plain mean of the iterates since step t0 + 2 (mu = 1/2, 1/3, ... weighs each
    new one in). The parameters stay the SGD iterates: the average is read from the state,
    ``opt.state[p]['ax']``.
    State per parameter: 'step' (t), 'eta' and 'mu' (Python floats; PyTorch keeps them in its
    default dtype, float32 unless set to float64), 'ax'. ``check_finite``: see
    minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    STATE = {"step": "count", "eta": "rate", "mu": "fraction", "ax": "array"}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, *, maximize=False,
                 check_finite=True):
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        for name in ("lr", "lambd", "alpha", "t0", "weight_decay"):
            check_number("ASGD", name, group[name], low=0)
        check_flag("ASGD", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, lambd = group["lr"], group["lambd"]
        t = state["step"] = state["step"] + 1
        eta, mu = state["eta"], state["mu"]
        p *= 1 - lambd * eta
        p -= eta * g
        ax = state["ax"]
        if mu != 1:
            ax += (p - ax) * mu
        else:
            ax[...] = p
        state["eta"] = lr / (1 + lambd * lr * t) ** group["alpha"]
        state["mu"] = 1 / max(1, t - group["t0"])
