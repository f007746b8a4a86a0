"""Adafactor (Shazeer & Stern, 2018), as PyTorch defines it: Adam's second moment at a fraction of its
memory, and a step size relative to the weights' own size.

For a weight matrix of shape (n, m) Adam keeps n * m running squares; Adafactor keeps the running mean
of g^2 over each row (n numbers) and over each column (m numbers), and rebuilds an n x m estimate from
them as their outer product. There is no first moment (no momentum) either.
"""
from __future__ import annotations

import math

from minitx import backend
from minitx.optim.optimizer import Optimizer, check_flag, check_number


def _lerp_(a, b, w) -> None:
    """a = a + w * (b - a), in place, as PyTorch's lerp computes it: from b's side, b - (1 - w) * (b - a),
    when w >= 0.5, so that w = 1 gives b exactly (a + 1 * (b - a) rounds when a is much larger than b)."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (1 - w) * (b - a)


def _rms(a) -> float:
    """The root mean square of the array ``a``: sqrt(sum(a^2) / a.size)."""
    xp = backend.get_array_module(a)
    return float(xp.sqrt((a * a).sum())) / math.sqrt(a.size)


class Adafactor(Optimizer):
    """Adafactor with PyTorch's arguments in its order. For each parameter p with gradient g,
    step count t:

        g = -g                                        (maximize=True: ascend the objective)
        t = t + 1
        w = t^beta2_decay                             (1 - beta2_t: the running means' weight, 1 at t = 1)
        rho = min(lr, 1 / sqrt(t))                    (the relative step size)
        alpha = max(eps2, RMS(p)) * rho               (the step's size: relative to p's own)
        p = p * (1 - lr * weight_decay)               (decoupled weight decay, as AdamW's)
        if p has 2 or more dimensions (factored along its last two, of sizes n and m; all start at 0):
            row_var = row_var + w * (mean(g^2 over the last axis) - row_var)          (shape (..., n, 1))
            col_var = col_var + w * (mean(g^2 over the next-to-last axis) - col_var)  (shape (..., 1, m))
            v = row_var @ col_var / max(mean(row_var over the next-to-last axis), eps1)
        else:
            variance = variance + w * (g^2 - variance)
            v = variance
        u = g / sqrt(max(v, eps1^2))                  (Adam's g / sqrt(v), without momentum)
        p = p - alpha / max(1, RMS(u) / d) * u        (an update whose RMS is above d is scaled down to d)

    RMS(a) = sqrt(mean(a^2)); (eps1, eps2) = eps, with eps1 = None meaning the machine epsilon of
    p's dtype. The factored v is a rank-1 estimate of the running g^2: row_var @ col_var is the
    outer product of the row and column means, each of which carries the overall size of g^2, so
    dividing by one overall mean (that of the row means) leaves it counted once. lr caps rho and
    scales the weight decay; it is not the step size. State per parameter: 'step' (t), and
    'row_var' and 'col_var', or 'variance'. ``check_finite``: see minitx.optim.optimizer (NaN/inf
    gradients raise, nothing changes).
    """

    STATE = {"step": "count", "row_var": "squares", "col_var": "squares", "variance": "squares"}

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 maximize=False, check_finite=True):
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_number("Adafactor", "lr", group["lr"], low=0)
        check_number("Adafactor", "beta2_decay", group["beta2_decay"], high=0)
        eps = group["eps"]
        if not isinstance(eps, (tuple, list)) or len(eps) != 2:
            raise ValueError(f"Adafactor: invalid eps {eps!r}; expected a pair (eps1, eps2), eps1 None or a number")
        group["eps"] = tuple(eps)  # as PyTorch saves it
        if eps[0] is not None:
            check_number("Adafactor", "eps1", eps[0], low=0)
        check_number("Adafactor", "eps2", eps[1], low=0)
        check_number("Adafactor", "d", group["d"], low=1)
        check_number("Adafactor", "weight_decay", group["weight_decay"], low=0)
        check_flag("Adafactor", "maximize", group["maximize"])

    def _param_state_kinds(self, group, p):
        if p.ndim > 1:
            return {"step": "count", "row_var": "squares", "col_var": "squares"}
        return {"step": "count", "variance": "squares"}

    def _state_shape(self, p, key):
        if key == "row_var":
            return (*p.shape[:-1], 1)
        if key == "col_var":
            return (*p.shape[:-2], 1, p.shape[-1])
        return p.shape

    def _step_group(self, group, items):
        # the weight decay comes after alpha reads p: not the base class's _gradient
        for _, p in items:
            g = -p.grad.data if group["maximize"] else p.grad.data
            self._update(p.data, g, self._state_of(group, p), group)

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        lr, weight_decay = group["lr"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(xp.finfo(p.dtype).eps)
        t = state["step"] = state["step"] + 1
        w = t ** group["beta2_decay"]
        rho = min(lr, 1 / t ** 0.5)
        alpha = max(eps2, _rms(p)) * rho
        if weight_decay != 0:
            p *= 1 - lr * weight_decay
        if g.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            _lerp_(row_var, (g * g).mean(axis=-1, keepdims=True), w)
            _lerp_(col_var, (g * g).mean(axis=-2, keepdims=True), w)
            v = row_var @ col_var
            v /= xp.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"]
            _lerp_(variance, g * g, w)
            v = variance
        u = g / xp.sqrt(xp.maximum(v, eps1 * eps1))
        p -= alpha / max(1.0, _rms(u) / group["d"]) * u
