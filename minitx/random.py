"""Seeded random numbers for everything in minitx (init, dropout, batching).

``manual_seed(s)`` resets one generator per device, so a run seeded the same way draws the
same numbers: the same initial weights, the same dropout masks.
"""
from __future__ import annotations

import numpy as np

from minitx import backend

_generators: dict = {}
_seed = 0


def manual_seed(seed: int) -> None:
    """Seed the CPU generator and, when a GPU is in use, the GPU generator."""
    global _seed
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"manual_seed: expected a non-negative integer, got {seed!r}")
    _seed = int(seed)
    _generators.clear()


def generator(device: str = "cpu"):
    """The generator of a device: numpy.random.Generator or cupy.random.Generator."""
    device = backend.check_device(device)
    if device not in _generators:
        xp = backend.xp_for(device)
        _generators[device] = xp.random.default_rng(_seed)
    return _generators[device]


def get_state() -> dict:
    """The CPU generator's state, JSON-friendly, for checkpoints."""
    return {"seed": _seed, "cpu": generator("cpu").bit_generator.state}


def set_state(state: dict) -> None:
    global _seed
    _seed = int(state["seed"])
    _generators.clear()
    generator("cpu").bit_generator.state = state["cpu"]
