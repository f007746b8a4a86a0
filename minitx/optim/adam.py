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
from minitx.optim.optimizer import Optimizer, check_number


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015). For each parameter p with gradient g, step count t:

        g = g + weight_decay * p                     (Adam: L2 penalty added to the gradient)
        m = beta1 * m + (1 - beta1) * g              (first moment, 'exp_avg')
        v = beta2 * v + (1 - beta2) * g * g          (second moment, 'exp_avg_sq')
        m_hat = m / (1 - beta1 ** t)                 (bias corrections: m and v start at 0)
        v_hat = v / (1 - beta2 ** t)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)

    State per parameter: 'step' (t, an int; each parameter counts its own steps, so one that
    had no gradient for a while is corrected for the steps it really took), 'exp_avg',
    'exp_avg_sq'. Parameters whose grad is None are skipped and their state is untouched.
    ``check_finite``: see minitx.optim.optimizer (NaN/inf gradients raise, nothing changes).
    """

    decoupled_weight_decay = False
    STATE = {"step": "count", "exp_avg": "array", "exp_avg_sq": "squares"}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 check_finite=True):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults, check_finite=check_finite)

    def _check_group(self, group):
        name = self._name
        check_number(name, "lr", group["lr"], low=0)
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: invalid betas {betas!r}; expected a pair (beta1, beta2)")
        group["betas"] = tuple(betas)
        check_number(name, "beta1", betas[0], low=0, high=1, high_open=True)
        check_number(name, "beta2", betas[1], low=0, high=1, high_open=True)
        check_number(name, "eps", group["eps"], low=0)
        check_number(name, "weight_decay", group["weight_decay"], low=0)

    supports_skip = True

    def _step_group(self, group, items, skip=None):
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        for index, p in items:
            state = self.state.get(index)
            if not state:
                xp = backend.get_array_module(p.data)
                state = self.state[index] = {"step": 0,
                                             "exp_avg": xp.zeros_like(p.data),
                                             "exp_avg_sq": xp.zeros_like(p.data)}
            state["step"] += 1
            params.append(p.data)
            grads.append(p.grad.data)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            steps.append(state["step"])
        beta1, beta2 = group["betas"]
        self._update_group(params, grads, exp_avgs, exp_avg_sqs, steps, lr=group["lr"],
                           beta1=beta1, beta2=beta2, eps=group["eps"],
                           weight_decay=group["weight_decay"],
                           decoupled=self.decoupled_weight_decay, skip=skip)

    @staticmethod
    def _update_group(params, grads, exp_avgs, exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
                      weight_decay, decoupled, skip=None):
        """The reference update, in place, over lists of raw arrays (see the class docstring).

        ``steps[i]`` is t for parameter i, already incremented for this step. ``decoupled``
        selects AdamW's ``p = p - lr * weight_decay * p`` instead of the L2 gradient term.
        ``skip`` (a device boolean, or None): where True, every array is left as it was, and
        deciding needs no host read: the kernel reads the flag itself; the reference path
        computes the update on copies and writes it back only where the flag is False.

        Fused path: one multi-tensor kernel launch per distinct step count (usually one), when
        the arrays suit the kernels and the updated ones are contiguous (updated in place).
        """
        updated = (*params, *exp_avgs, *exp_avg_sqs)
        if kernels.enabled(*updated, *grads) and all(a.flags.c_contiguous for a in updated):
            by_step: dict = {}
            for i, t in enumerate(steps):
                by_step.setdefault(t, []).append(i)
            for t, idx in by_step.items():
                kernels.adam_step(*([arrays[i] for i in idx] for arrays in (params, grads, exp_avgs, exp_avg_sqs)),
                                  lr, beta1, beta2, eps, weight_decay, decoupled, step=t, skip=skip)
            return
        if skip is not None:
            xp = backend.get_array_module(skip)
            copies = [[a.copy() for a in arrays] for arrays in (params, exp_avgs, exp_avg_sqs)]
            with np.errstate(all="ignore"):  # a skipped step's copies may hold inf and NaN: they are not kept
                Adam._update_group(copies[0], grads, copies[1], copies[2], steps, lr=lr, beta1=beta1, beta2=beta2,
                                   eps=eps, weight_decay=weight_decay, decoupled=decoupled)
            keep_new = ~skip
            for target, new in zip(updated, (a for arrays in copies for a in arrays)):
                xp.copyto(target, new, where=keep_new)
            return
        for p, g, m, v, t in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            xp = backend.get_array_module(p)
            if weight_decay != 0:
                if decoupled:
                    p *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * p
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * (g * g)
            bias_correction1 = 1 - beta1 ** t
            bias_correction2 = 1 - beta2 ** t
            denom = xp.sqrt(v / bias_correction2)
            denom += eps
            p -= (lr / bias_correction1) * m / denom


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter, 2019): Adam with *decoupled* weight decay.

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

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                 check_finite=True):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         check_finite=check_finite)
