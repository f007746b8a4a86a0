"""Adam and AdamW.

The math over one parameter group lives in one method, ``Adam._update_group``, which takes
plain lists of arrays. A fused multi-tensor CUDA kernel can replace that method (same
arguments, same in-place effect) without touching the bookkeeping around it, and tests can
compare the two paths: on CuPy arrays it does, with ``kernels.adam_step`` (one launch updates
every tensor of the group).
"""
from __future__ import annotations

import numpy as np

from minitx import backend, kernels
from minitx.optim.optimizer import Optimizer, check_flag, check_number


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015). For each parameter p with gradient g, step count t:

        g = -g                                       (maximize=True: ascend the objective)
        g = g + weight_decay * p                     (Adam: L2 penalty added to the gradient)
        m = beta1 * m + (1 - beta1) * g              (first moment, 'exp_avg')
        v = beta2 * v + (1 - beta2) * g * g          (second moment, 'exp_avg_sq')
        v_max = max(v_max, v)                        (amsgrad=True only: v_max starts at 0)
        m_hat = m / (1 - beta1 ** t)                 (bias corrections: m and v start at 0)
        v_hat = v / (1 - beta2 ** t)                 (amsgrad: v_max / (1 - beta2 ** t))
        p = p - lr * m_hat / (sqrt(v_hat) + eps)

    State per parameter: 'step' (t; each parameter counts its own steps, so one that had no
    gradient for a while is corrected for the steps it really took), 'exp_avg', 'exp_avg_sq',
    and with amsgrad (Reddi et al., 2018: the step size never grows back where v shrinks)
    'max_exp_avg_sq'. Parameters whose grad is None are skipped and their state is untouched.
    ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    PyTorch's arguments in its order. The fused kernel keeps three state arrays: a group with
    amsgrad takes the reference update (on the GPU too).

    What changes from step to step lives on the device, where the update reads it, so that a
    step needs no copy from the host and a captured step replays with the current values: t
    (an int64 0-d array per parameter, a view into one array of counts per group and device,
    advanced there, laid out again when the group's parameters or the group dict change; a
    step skipped on the device does not count, as PyTorch's Adam does not step then)
    and each group's lr (a float64 array, written from ``group['lr']`` at every step, so a
    schedule changes it between steps as before). ``state_dict()`` saves t as an int.
    """

    decoupled_weight_decay = False
    _CACHES = (*Optimizer._CACHES, "_step_counts", "_lr_arrays")
    PYTORCH_FIXED = {"decoupled_weight_decay": False}  # PyTorch's Adam(decoupled_weight_decay=True) is AdamW
    STATE = {"step": "count", "exp_avg": "array", "exp_avg_sq": "squares"}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False, check_finite=True, decoupled_weight_decay=False):
        # PyTorch's Adam(decoupled_weight_decay=True) is its AdamW, a class here as there: taken at
        # PyTorch's default, refused by name otherwise
        check_flag("Adam", "decoupled_weight_decay", decoupled_weight_decay)
        if decoupled_weight_decay:
            raise ValueError("Adam: decoupled_weight_decay=True is AdamW's update; use minitx.optim.AdamW (the same "
                             "arguments, but weight_decay defaults to 0.01 there)")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults, check_finite=check_finite)
        self._step_counts: dict = {}  # (id(group), device) -> _Counts: t of each of the group's parameters
        self._lr_arrays: dict = {}    # (id(group), device) -> [float64 array: that group's lr there, value written]

    def _check_group(self, group):
        check_adam_group(self._name, group)
        check_flag(self._name, "amsgrad", group["amsgrad"])

    def _state_kinds(self, group) -> dict:
        return {**self.STATE, "max_exp_avg_sq": "squares"} if group["amsgrad"] else self.STATE

    supports_skip = True

    def _step_group(self, group, items, skip=None):
        first = self._first_index(group)  # a parameter's place in its group: index - first
        by_device: dict = {}  # the update runs per device: one count array and one lr array each
        for index, p in items:
            by_device.setdefault(p.device, []).append((index - first, p))
        beta1, beta2 = group["betas"]
        for device, entries in by_device.items():
            counts = self._counts(group, device)
            states = [self._adam_state(group, counts, place, p) for place, p in entries]
            lr = self._lr_on_device(group, device)
            steps = self._count_step(counts, device, [place for place, _ in entries], skip)
            grads = [p.grad.data for _, p in entries]
            if group["maximize"]:
                grads = [-g for g in grads]
            self._update_group([p.data for _, p in entries], grads,
                               [state["exp_avg"] for state in states],
                               [state["exp_avg_sq"] for state in states], steps, lr=lr,
                               beta1=beta1, beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                               decoupled=self.decoupled_weight_decay, skip=skip,
                               max_exp_avg_sqs=[state["max_exp_avg_sq"] for state in states]
                               if group["amsgrad"] else None)

    def _first_index(self, group) -> int:
        """The index of the group's first parameter."""
        first = 0
        for other in self.param_groups:
            if other is group:
                return first
            first += len(other["params"])
        raise ValueError(f"{self._name}: a parameter group that is not this optimizer's")

    def _adam_state(self, group, counts, place, p) -> dict:
        """p's state, made at its first step: t a 0-d view into ``counts`` (the group's, p at
        ``place``), set to 0; the moments zeros."""
        state = self.state.get(p)
        if not state:
            xp = backend.get_array_module(p.data)
            counts[place] = 0  # (a state removed by the user leaves its count behind)
            state = self.state[p] = {"step": counts[place:place + 1].reshape(()),
                                     "exp_avg": xp.zeros_like(p.data), "exp_avg_sq": xp.zeros_like(p.data)}
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(p.data)
        return state

    def _counts(self, group, device):
        """The int64 array of t for the group's parameters on ``device``, by place in the group.
        Laid out again when it was laid out for another group dict or other parameters (a group
        replaced in param_groups, a parameter appended to one, a copy of the optimizer): the
        group's parameters compared by identity, one check per group and step."""
        laid = self._step_counts.get((id(group), device))
        params = group["params"]
        if laid is None or laid.group is not group or len(laid.params) != len(params) \
                or any(a is not b for a, b in zip(laid.params, params)):
            laid = self._lay_out_counts(group, device)
        return laid.counts

    def _lay_out_counts(self, group, device):
        """A new count array for the group's parameters on ``device``: each t that a state holds
        copied in (on the device: no host read), and that state's 'step' made a view into it."""
        params = group["params"]
        counts = backend.xp_for(device).zeros(len(params), dtype=np.int64)
        for place, p in enumerate(params):
            state = self.state.get(p)
            if state and p.device == device:
                counts[place] = state["step"]
                state["step"] = counts[place:place + 1].reshape(())
        live = {id(g) for g in self.param_groups}  # forget the arrays of groups no longer here
        self._step_counts = {key: laid for key, laid in self._step_counts.items() if key[0] in live}
        self._lr_arrays = {key: entry for key, entry in self._lr_arrays.items() if key[0] in live}
        laid = self._step_counts[(id(group), device)] = _Counts(group, tuple(params), counts)
        return laid

    def _count_step(self, counts, device, places, skip):
        """t = t + 1 for the group's parameters at ``places`` (ascending) on the device (t + (not
        skip) with a skip flag), in one operation; returns their counts, an int64 array in that order."""
        first, last = places[0], places[-1]
        if last - first + 1 == len(places):  # a run of places (every parameter had a gradient): a view
            where = slice(first, last + 1)
        else:
            where = self._device_indices(tuple(places), device)
        counts[where] += 1 if skip is None else ~skip
        return counts[where]

    def _lr_on_device(self, group, device):
        """The group's float64 array on ``device`` that the update reads, holding ``group['lr']``:
        written (a fill, no copy from the host) only when the rate differs from the value last
        written, so a step captured right after write_lr() records no write of its own."""
        key = (id(group), device)
        entry = self._lr_arrays.get(key)
        if entry is None:
            entry = self._lr_arrays[key] = [backend.xp_for(device).zeros(1, dtype=np.float64), None]
        if entry[1] != group["lr"]:
            entry[0][...] = group["lr"]
            entry[1] = group["lr"]
        return entry[0]

    def write_lr(self):
        """Write each group's lr where the update reads it (the step does this itself; a replayed
        CUDA graph, which runs no Python, needs it done before each replay)."""
        for group in self.param_groups:
            for device in {p.device for p in group["params"]}:
                self._lr_on_device(group, device)

    def _state_restored(self):
        """load_state_dict gave each parameter's t as an int: back into the device counts."""
        self._step_counts = {}
        for group in self.param_groups:
            for device in {p.device for p in group["params"]}:
                self._lay_out_counts(group, device)

    @staticmethod
    def _update_group(params, grads, exp_avgs, exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
                      weight_decay, decoupled, skip=None, max_exp_avg_sqs=None):
        """The reference update, in place, over lists of raw arrays (see the class docstring).

        ``steps``: t for each parameter, already incremented for this step, an int64 array on
        the parameters' device; ``lr``: a float64 array of one element there. Each factor
        computed from them is rounded once to the parameter's dtype, as the fused kernel does.
        ``decoupled`` selects AdamW's ``p = p - lr * weight_decay * p`` instead of the L2
        gradient term. ``skip`` (a device boolean, or None): where True, every array is left as
        it was, and deciding needs no host read: the kernel reads the flag itself; the
        reference path computes the update on copies and writes it back only where the flag is
        False. ``max_exp_avg_sqs`` (amsgrad): each parameter's running maximum of v, or None.

        Fused path: one multi-tensor kernel launch for the group (per gradient dtype), when the
        arrays suit the kernels and the updated ones are contiguous (updated in place); not for
        amsgrad, whose fourth state array the kernel does not keep.
        """
        maxima = max_exp_avg_sqs or ()
        updated = (*params, *exp_avgs, *exp_avg_sqs, *maxima)
        if max_exp_avg_sqs is None and kernels.enabled(*updated, *grads) and all(a.flags.c_contiguous for a in updated):
            kernels.adam_step(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, weight_decay, decoupled,
                              step=steps, skip=skip)
            return
        if skip is not None:
            xp = backend.get_array_module(skip)
            copies = [[a.copy() for a in arrays] for arrays in (params, exp_avgs, exp_avg_sqs, maxima)]
            with np.errstate(all="ignore"):  # a skipped step's copies may hold inf and NaN: they are not kept
                Adam._update_group(copies[0], grads, copies[1], copies[2], steps, lr=lr, beta1=beta1, beta2=beta2,
                                   eps=eps, weight_decay=weight_decay, decoupled=decoupled,
                                   max_exp_avg_sqs=copies[3] if max_exp_avg_sqs is not None else None)
            keep_new = ~skip
            for target, new in zip(updated, (a for arrays in copies for a in arrays)):
                xp.copyto(target, new, where=keep_new)
            return
        lr = lr.reshape(())
        for k, (p, g, m, v, t) in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs, steps)):
            xp = backend.get_array_module(p)
            if weight_decay != 0:
                if decoupled:
                    p *= (1 - lr * weight_decay).astype(p.dtype)
                else:
                    g = g + weight_decay * p
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * (g * g)
            if max_exp_avg_sqs is not None:
                xp.maximum(max_exp_avg_sqs[k], v, out=max_exp_avg_sqs[k])
                v = max_exp_avg_sqs[k]
            bias_correction1 = 1 - beta1 ** t
            bias_correction2 = 1 - beta2 ** t
            denom = xp.sqrt(v / bias_correction2.astype(v.dtype))
            denom += eps
            p -= (lr / bias_correction1).astype(p.dtype) * m / denom


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter, 2019): Adam with *decoupled* weight decay.

        g = -g                                       (maximize=True)
        p = p - lr * weight_decay * p                (decay the weights directly ...)
        m = beta1 * m + (1 - beta1) * g              (... and leave g alone)
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t),  v_hat = v / (1 - beta2 ** t)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)

    With Adam's L2 term, the decay is divided by sqrt(v_hat) like the rest of the gradient, so
    parameters with large gradients are hardly decayed; AdamW decays every weight at the same
    rate. Give biases and norm weights a group with weight_decay=0.
    """

    decoupled_weight_decay = True
    PYTORCH_FIXED = {"decoupled_weight_decay": True}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, amsgrad=False, *,
                 maximize=False, check_finite=True):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, check_finite=check_finite)


class _Counts:
    """Adam's step counts for one group on one device: an int64 array, t of the parameter at each
    place in the group (its state['step'] a 0-d view into it), and what it was laid out for: the
    group dict and its parameters, held so that their identity can be checked at each step."""

    __slots__ = ("group", "params", "counts")

    def __init__(self, group, params, counts):
        self.group, self.params, self.counts = group, params, counts


def check_adam_group(name: str, group: dict) -> None:
    """The hyperparameters every optimizer of Adam's family (each one that takes betas) has: lr,
    betas, eps and weight_decay (each >= 0, each beta < 1) and maximize."""
    check_number(name, "lr", group["lr"], low=0)
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{name}: invalid betas {betas!r}; expected a pair (beta1, beta2)")
    group["betas"] = tuple(betas)  # as PyTorch saves them
    check_number(name, "beta1", betas[0], low=0, high=1, high_open=True)
    check_number(name, "beta2", betas[1], low=0, high=1, high_open=True)
    check_number(name, "eps", group["eps"], low=0)
    check_number(name, "weight_decay", group["weight_decay"], low=0)
    check_flag(name, "maximize", group["maximize"])
