"""Weight initializers. Each fills a tensor in place from minitx's seeded generator
(``minitx.manual_seed``) and returns it.

For a weight of shape [fan_out, fan_in] (as Linear stores it):
    xavier_uniform_:  U(-a, a),  a = gain * sqrt(6 / (fan_in + fan_out))
    xavier_normal_:   N(0, std), std = gain * sqrt(2 / (fan_in + fan_out))
Both keep the variance of activations and of gradients roughly constant across layers
(Glorot & Bengio, 2010).
"""
from __future__ import annotations

import math

from minitx import random as mrandom
from minitx.backend import to_device
from minitx.autograd.inplace import mark_modified
from minitx.autograd.grad_mode import no_grad


def _fans(t):
    if t.ndim < 2:
        raise ValueError(f"xavier init needs a tensor with at least 2 dimensions, got shape {t.shape}")
    receptive = 1
    for n in t.shape[2:]:
        receptive *= n
    return t.shape[1] * receptive, t.shape[0] * receptive


def _fill(t, sample):
    """Draw on the CPU generator (so a seed gives the same weights on every device), copy in."""
    with no_grad():
        values = sample(mrandom.generator("cpu")).astype(t.dtype)
        mark_modified(t)  # a graph that saved the old values must not use them for a gradient
        t.data[...] = to_device(values, t.device)
    return t


def uniform_(t, low=0.0, high=1.0):
    return _fill(t, lambda rng: rng.uniform(low, high, t.shape))


def normal_(t, mean=0.0, std=1.0):
    return _fill(t, lambda rng: rng.normal(mean, std, t.shape))


def xavier_uniform_(t, gain=1.0):
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t, gain=1.0):
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def zeros_(t):
    mark_modified(t)
    t.data[...] = 0
    return t


def ones_(t):
    mark_modified(t)
    t.data[...] = 1
    return t
