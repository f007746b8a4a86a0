"""Seeded random numbers for everything in minitx (init, dropout, batching).

``manual_seed(s)`` resets one generator per device, so a run seeded the same way draws the
same numbers: the same initial weights, the same dropout masks.

The fused dropout kernels draw no numbers from these generators: they hash each element's
index with a counter-based RNG (Philox) keyed by a (seed, offset) pair, and the backward
regenerates the same mask from the same pair. ``next_philox_seed_offset(device)`` hands out
those pairs: the seed is the ``manual_seed`` value, the offset counts calls per device, so a
run seeded the same way gets the same masks, and every call gets a fresh stream.
"""
from __future__ import annotations

import numpy as np

from minitx import backend

_generators: dict = {}
_philox_offsets: dict = {}   # device -> the next Philox offset handed out
_seed = 0


def manual_seed(seed: int) -> None:
    """Seed the CPU generator and, when a GPU is in use, the GPU generator."""
    global _seed
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"manual_seed: expected a non-negative integer, got {seed!r}")
    _seed = int(seed)
    _generators.clear()
    _philox_offsets.clear()


def next_philox_seed_offset(device: str = "cuda") -> tuple:
    """(seed, offset) for one fused-dropout call on ``device``; each call gets the next offset.

    The kernels keep element i of a call iff Philox(counter=(i // 4, offset), key=seed) clears
    the drop threshold, so distinct offsets give independent masks of any size.
    """
    device = str(device).split(":")[0]
    offset = _philox_offsets.get(device, 0)
    _philox_offsets[device] = offset + 1
    return _seed, offset


def philox_seed() -> int:
    """The seed of every (seed, offset) pair next_philox_seed_offset hands out."""
    return _seed


def philox_offset(device: str = "cuda") -> int:
    """The offset the next fused-dropout call on ``device`` will get."""
    return _philox_offsets.get(str(device).split(":")[0], 0)


def set_philox_offset(device: str, offset: int) -> None:
    """Make ``offset`` the next one handed out on ``device`` (a replayed CUDA graph's calls take
    the offsets of its capture plus a base in device memory: minitx.train.graphs)."""
    _philox_offsets[str(device).split(":")[0]] = int(offset)


def generator(device: str = "cpu"):
    """The generator of a device: numpy.random.Generator or cupy.random.Generator."""
    device = backend.check_device(device)
    if device not in _generators:
        xp = backend.xp_for(device)
        _generators[device] = xp.random.default_rng(_seed)
    return _generators[device]


def get_state() -> dict:
    """The CPU generator's state and the Philox offsets, JSON-friendly, for checkpoints."""
    return {"seed": _seed, "cpu": generator("cpu").bit_generator.state, "philox": dict(_philox_offsets)}


def set_state(state: dict) -> None:
    """Restore what ``get_state`` returned. Checked first, changed after: anything else (a
    seed of 1.5, a generator state that is not PCG64's) raises ValueError naming the entry."""
    global _seed
    if not isinstance(state, dict) or not {"seed", "cpu"} <= set(state):
        raise ValueError(f"random state: expected a dict with 'seed' and 'cpu', got {state!r:.80}")
    if not _whole(state["seed"], 2 ** 64):
        raise ValueError(f"random state: invalid seed {state['seed']!r:.40}; expected a whole number >= 0")
    philox = state.get("philox", {})
    if not isinstance(philox, dict) or not all(isinstance(d, str) and _whole(n, 2 ** 64) for d, n in philox.items()):
        raise ValueError(f"random state: invalid philox {philox!r:.80}; expected {{device: next offset >= 0}}")
    _check_pcg64(state["cpu"])
    _seed = int(state["seed"])
    _generators.clear()
    _philox_offsets.clear()
    _philox_offsets.update({device: int(n) for device, n in philox.items()})
    generator("cpu").bit_generator.state = state["cpu"]


def _whole(value, end) -> bool:
    """Whether ``value`` is an integer (not a bool) in [0, end)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < end


def _check_pcg64(cpu) -> None:
    """The CPU generator's state, as NumPy's PCG64 gives it: numbers its setter would
    otherwise truncate (inc = 1.5) or refuse with an OverflowError are refused here by name."""
    expected = "{'bit_generator': 'PCG64', 'state': {'state': s, 'inc': i}, 'has_uint32': 0 or 1, 'uinteger': u}"
    inner = cpu.get("state") if isinstance(cpu, dict) else None
    ok = (isinstance(cpu, dict) and cpu.get("bit_generator") == "PCG64" and isinstance(inner, dict)
          and _whole(inner.get("state"), 2 ** 128) and _whole(inner.get("inc"), 2 ** 128)
          and _whole(cpu.get("has_uint32"), 2) and _whole(cpu.get("uinteger"), 2 ** 32))
    if not ok:
        raise ValueError(f"random state: the CPU generator's state {cpu!r:.120} is not {expected}")
