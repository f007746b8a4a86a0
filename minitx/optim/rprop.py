"""Rprop (resilient backpropagation, Riedmiller & Braun, 1993), as PyTorch defines it: each weight moves
by a step size of its own, in the direction opposite its gradient's sign; the gradient's size is never
used. A weight's step size grows while its gradient keeps its sign and shrinks when the sign flips (the
last step jumped over a minimum). Meant for full-batch training: noisy minibatch gradients flip signs at
random."""
from __future__ import annotations

import numbers

from minitx import backend
from minitx.optim.optimizer import Optimizer, check_flag, check_number


class Rprop(Optimizer):
    """Rprop with PyTorch's arguments in its order. For each parameter p with gradient g, one step
    is, weight by weight:

        g = -g                                        (maximize=True: ascend the objective)
        factor = etaplus   where g * prev > 0         (the same sign as the last step's: speed up)
                 etaminus  where g * prev < 0         (the sign flipped: the last step went too far)
                 1         where g * prev = 0         (the first step, or the step after a flip)
        step_size = clamp(step_size * factor, step_size_min, step_size_max)   (starts at lr)
        g = 0              where g * prev < 0         (after a flip: no move now, and no flip next time)
        p = p - sign(g) * step_size
        prev = g                                      (starts at 0)

    with (etaminus, etaplus) = etas and (step_size_min, step_size_max) = step_sizes. Rprop has no
    weight decay. State per parameter: 'prev' and 'step_size' (PyTorch also counts 'step', which
    its update never reads). ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients
    raise, nothing changes).
    """

    STATE = {"prev": "array", "step_size": "rates"}

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False,
                 check_finite=True):
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        check_number("Rprop", "lr", group["lr"], low=0)
        etas, step_sizes = group["etas"], group["step_sizes"]
        if not (_is_pair_of_numbers(etas) and 0 < etas[0] < 1 < etas[1] < float("inf")):
            raise ValueError(f"Rprop: invalid etas {etas!r}; expected a pair (etaminus, etaplus) with "
                             "0 < etaminus < 1 < etaplus: the factors that shrink and grow the step sizes")
        if not (_is_pair_of_numbers(step_sizes) and 0 <= step_sizes[0] <= step_sizes[1]):
            raise ValueError(f"Rprop: invalid step_sizes {step_sizes!r}; expected a pair (step_size_min, "
                             "step_size_max) with 0 <= step_size_min <= step_size_max")
        group["etas"], group["step_sizes"] = tuple(etas), tuple(step_sizes)  # as PyTorch saves them
        check_flag("Rprop", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        xp = backend.get_array_module(p)
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        same_sign = g * prev  # > 0: the sign held since the last step; < 0: it flipped; 0: no last step
        factor = xp.where(same_sign > 0, etaplus, xp.where(same_sign < 0, etaminus, 1.0))
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        g = xp.where(same_sign < 0, 0, g)
        p -= xp.sign(g) * step_size  # only g's sign: its size is never used
        prev[...] = g


def _is_pair_of_numbers(value) -> bool:
    """Whether ``value`` is a tuple or list of two real numbers (not bools; NaN compares False after)."""
    return isinstance(value, (tuple, list)) and len(value) == 2 \
        and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)
