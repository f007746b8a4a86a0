"""Seeded random numbers for everything in minitx (init, dropout, batching).

``manual_seed(s)`` resets one generator per device, so a run seeded the same way draws the
same numbers: the same initial weights, the same dropout masks.

The fused dropout kernels draw no numbers from these generators: they hash each element's
index with a counter-based RNG (Philox) keyed by a (seed, offset) pair, and the backward
regenerates the same mask from the same pair. ``next_philox_seed_offset(device)`` hands out
those pairs: the seed is the ``manual_seed`` value, the offset counts calls per device, so a
run seeded the same way gets the same masks, and every call gets a fresh stream. An op's U[0, 1)
draw on a GPU (``uniform``: rrelu's slopes, gumbel_softmax's noise) takes the next pair too, so
``get_state`` resumes it.

PyTorch's top-level names for the global generator are here too, and at ``minitx.``:
``initial_seed()``, ``seed()``, ``get_rng_state()`` and ``set_rng_state(state)``; and
``fork_rng()``, PyTorch's ``torch.random.fork_rng``, a ``with`` block whose draws leave the
global state as it was.

A ``Generator`` (PyTorch's ``torch.Generator``) is a CPU generator of its own, for draws that
must not move with the global one: ``rand``, ``randn``, ``randperm``, ``randint``, ``normal``,
``bernoulli``, ``multinomial``, the random fills (``Tensor.uniform_`` ...), ``nn.init``'s random
initializers, the samplers, the DataLoader and ``random_split`` take one as ``generator=``.
"""
from __future__ import annotations

import contextlib
import math
import secrets

import numpy as np

from minitx import backend

_generators: dict = {}
_philox_offsets: dict = {}   # device -> the next Philox offset handed out
_seed = 0


def manual_seed(seed: int) -> None:
    """Seed the CPU generator and, when a GPU is in use, the GPU generator."""
    global _seed
    _seed = _checked_seed(seed, "manual_seed")
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


def uniform(shape, dtype, device: str = "cpu", seed=None):
    """U[0, 1) of ``shape`` for an op's random draw (dropout's masks, rrelu's slopes, gumbel_softmax's
    noise): from a generator seeded with ``seed`` when given (the same draw at every call), else from
    the device's global one: on the CPU NumPy's generator, on a GPU the next Philox pair
    (philox_uniform), whose offset get_state saves, where CuPy's generator state could not be saved
    (a resumed run would not draw again what the uninterrupted one drew). In ``dtype`` where it is
    float32 or float64, else in float32 (the generators draw no other: the caller rounds)."""
    device = backend.check_device(device)
    xp = backend.xp_for(device)
    draw = dtype if np.dtype(dtype).name in ("float32", "float64") else np.float32
    if device != "cpu" and seed is None:
        from minitx.kernels import _runtime, philox_memory  # (the kernels import this module)

        pair_seed, offset = next_philox_seed_offset(device)
        # the offset past a base in device memory, as the kernels take theirs: a captured CUDA graph's
        # replay reads it afresh (train/graphs.py), where a number would repeat the capture's draw
        base = philox_memory(_runtime.backend_for(xp.empty(0)), pair_seed)[1]
        return philox_uniform(xp, shape, pair_seed, base + np.uint64(offset)).astype(draw, copy=False)
    rng = generator(device) if seed is None else xp.random.default_rng(seed)
    return rng.random(shape, dtype=draw)


def philox_uniform(xp, shape, seed: int, offset):
    """U[0, 1) in float32 from the dropout kernels' Philox-4x32-10 (kernels/philox.cuh), in array
    module ``xp``: flat element i takes word i % 4 of the counter (i // 4, offset) under the key
    seed, and u = (word >> 8) * 2^-24, its top 24 bits (exact in float32): the bits whose
    threshold decides the kernels' dropout. Each round multiplies two 32-bit words into 64 bits:
    the high half and the low half feed the next counter."""
    n = math.prod(shape)
    low32, words = np.uint64(0xFFFFFFFF), np.uint64(32)
    g = xp.arange(-(-n // 4), dtype=np.uint64)
    c0, c1 = g & low32, g >> words
    offset = xp.asarray(offset, dtype=np.uint64)  # (a number, or a 0-d array in device memory)
    c2, c3 = xp.zeros_like(g) + (offset & low32), xp.zeros_like(g) + (offset >> words)
    k0, k1 = int(seed) & 0xFFFFFFFF, (int(seed) >> 32) & 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> words) ^ c1 ^ np.uint64(k0), p1 & low32, (p0 >> words) ^ c3 ^ np.uint64(k1), p0 & low32
    word = xp.stack([c0, c1, c2, c3], axis=-1).reshape(-1)[:n]
    return ((word >> np.uint64(8)).astype(np.float32) * np.float32(2.0 ** -24)).reshape(shape)


def drawing_from(chosen, device: str):
    """The NumPy (or CuPy) generator a draw on ``device`` takes: ``chosen``'s own where one is
    given (a ``generator=`` argument: a minitx.Generator of that device), else the device's global one."""
    if chosen is None:
        return generator(device)
    if not isinstance(chosen, Generator):
        raise TypeError(f"generator: expected a minitx.Generator or None, got "
                        f"{type(chosen).__module__}.{type(chosen).__qualname__}")
    if backend.check_device(device) != chosen.device:
        raise ValueError(f"Generator: this one draws on {chosen.device!r}, not on {device!r}")
    return chosen._rng


class Generator:
    """A seeded CPU generator of its own, apart from the global one (PyTorch's ``torch.Generator``):
    for draws that must repeat whatever else the program draws, such as a fixed split,
    ``random_split(ds, [0.9, 0.1], generator=Generator().manual_seed(42))``, or a DataLoader
    whose shuffles do not move with dropout's draws.

    Like the global generator it is NumPy's PCG64. A new one is seeded with PyTorch's default
    seed; ``manual_seed`` restarts it and returns it, ``get_state``/``set_state`` save and resume
    it (JSON-friendly dicts, where PyTorch's are byte tensors). CPU only: a draw on the GPU with one
    is refused by name (nn.init, which draws on the CPU for every device, takes one for any tensor).
    """

    def __init__(self, device="cpu"):
        device = backend.check_device(device)
        if device != "cpu":
            raise ValueError(f"Generator: device={device!r} is not supported; minitx's Generator draws on the "
                             f"CPU (GPU draws take the global generator, seeded by minitx.manual_seed)")
        self.device = device
        self.manual_seed(_TORCH_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
        """Restart the draws from ``seed``; returns the generator itself, as PyTorch's does."""
        self._seed = _checked_seed(seed, "Generator.manual_seed")
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Restart it from a fresh 64-bit number from the operating system, and return that number
        (PyTorch's ``Generator.seed``; ``manual_seed`` of it draws the same again)."""
        fresh = secrets.randbits(64)
        self.manual_seed(fresh)
        return fresh

    def initial_seed(self) -> int:
        """The seed it was last seeded with."""
        return self._seed

    def get_state(self) -> dict:
        """Its seed and PCG64 state: ``set_state`` of it resumes the draws from here."""
        return {"seed": self._seed, "cpu": self._rng.bit_generator.state}

    def set_state(self, state: dict) -> "Generator":
        """Resume from what ``get_state`` returned (checked as ``minitx.random.set_state`` checks)."""
        _check_seed_and_cpu(state, "Generator.set_state")
        self.manual_seed(int(state["seed"]))
        self._rng.bit_generator.state = state["cpu"]
        return self


_TORCH_DEFAULT_SEED = 67280421310721  # a new torch.Generator's initial_seed()


def get_state() -> dict:
    """The CPU generator's state and the Philox offsets, JSON-friendly, for checkpoints."""
    return {"seed": _seed, "cpu": generator("cpu").bit_generator.state, "philox": dict(_philox_offsets)}


def set_state(state: dict) -> None:
    """Restore what ``get_state`` returned. Checked first, changed after: anything else (a
    seed of 1.5, a generator state that is not PCG64's) raises ValueError naming the entry."""
    _restore(state, "random state")


# PyTorch's names (torch.initial_seed, torch.seed, torch.get_rng_state, torch.set_rng_state)
def initial_seed() -> int:
    """The seed of the global generators: the last manual_seed's or seed's, or that of the state
    set_rng_state restored (as PyTorch's); 0 before any."""
    return _seed


def seed() -> int:
    """Seed the global generators with a fresh 64-bit number from the operating system, and
    return it (write it down to repeat the run: ``manual_seed`` of it draws the same again)."""
    fresh = secrets.randbits(64)
    manual_seed(fresh)
    return fresh


def get_rng_state() -> dict:
    """The global random state, as ``get_state`` gives it: a JSON-friendly dict where PyTorch's
    is a byte tensor, holding the CPU generator's state, the seed and the dropout kernels' offsets."""
    return get_state()


def set_rng_state(new_state: dict) -> None:
    """Resume the global draws from what ``get_rng_state`` returned: the draws after it are those
    that followed it. Anything else is refused (ValueError), and nothing changes."""
    _restore(new_state, "set_rng_state")


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """PyTorch's ``torch.random.fork_rng``: the global draws inside the ``with`` block leave the
    global random state as it was before it, so what follows draws as if the block had drawn
    nothing (a probe, an evaluation with dropout on, a ``manual_seed`` inside). ``devices`` and
    ``device_type`` are taken for PyTorch's signature: every device's state is kept (minitx has
    one generator per device). ``enabled=False`` keeps nothing.

    The block draws on the CPU from a copy of the CPU generator, so it draws what would have come
    next; on the GPU it starts CuPy's generator afresh from the seed (whose state cannot be
    copied), while the dropout kernels' Philox offsets go on from where they were. A
    ``minitx.Generator`` is its own state, untouched by this, as PyTorch's."""
    del devices, device_type  # (PyTorch's selection of CUDA devices: all of minitx's are kept)
    if not enabled:
        yield
        return
    global _seed
    kept_seed, kept_offsets, kept_generators = _seed, dict(_philox_offsets), dict(_generators)
    _generators.clear()  # the block's own generators, so the originals stay as they were
    if "cpu" in kept_generators:  # (else the block's starts from the seed, as the original would)
        generator("cpu").bit_generator.state = kept_generators["cpu"].bit_generator.state
    try:
        yield
    finally:
        _seed = kept_seed
        _philox_offsets.clear()
        _philox_offsets.update(kept_offsets)
        _generators.clear()
        _generators.update(kept_generators)


def _restore(state, who: str) -> None:
    """set_state and set_rng_state: check ``state`` whole (errors name ``who``), then load it."""
    global _seed
    _check_seed_and_cpu(state, who)
    philox = state.get("philox", {})
    if not isinstance(philox, dict) or not all(isinstance(d, str) and _whole(n, 2 ** 64) for d, n in philox.items()):
        raise ValueError(f"{who}: invalid philox {philox!r:.80}; expected {{device: next offset >= 0}}")
    _seed = int(state["seed"])
    _generators.clear()
    _philox_offsets.clear()
    _philox_offsets.update({device: int(n) for device, n in philox.items()})
    generator("cpu").bit_generator.state = state["cpu"]


def _checked_seed(seed, who: str) -> int:
    """``seed`` as an int, refused (naming ``who``) unless it is a whole number from 0 to
    2**64 - 1: a saved state holds no larger one (PyTorch refuses one too)."""
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 64:
        raise ValueError(f"{who}: expected a non-negative integer below 2**64, got {seed!r}")
    return int(seed)


def _check_seed_and_cpu(state, who: str) -> None:
    """The 'seed' and 'cpu' entries a saved state must have, checked before anything is changed."""
    if not isinstance(state, dict) or not {"seed", "cpu"} <= set(state):
        raise ValueError(f"{who}: expected a dict with 'seed' and 'cpu', got {state!r:.80}")
    if not _whole(state["seed"], 2 ** 64):
        raise ValueError(f"{who}: invalid seed {state['seed']!r:.40}; expected a whole number from 0 to 2**64 - 1")
    _check_pcg64(state["cpu"], who)


def _whole(value, end) -> bool:
    """Whether ``value`` is an integer (not a bool) in [0, end)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < end


def _check_pcg64(cpu, who: str) -> None:
    """The CPU generator's state, as NumPy's PCG64 gives it: numbers its setter would
    otherwise truncate (inc = 1.5) or refuse with an OverflowError are refused here by name."""
    expected = "{'bit_generator': 'PCG64', 'state': {'state': s, 'inc': i}, 'has_uint32': 0 or 1, 'uinteger': u}"
    inner = cpu.get("state") if isinstance(cpu, dict) else None
    ok = (isinstance(cpu, dict) and cpu.get("bit_generator") == "PCG64" and isinstance(inner, dict)
          and _whole(inner.get("state"), 2 ** 128) and _whole(inner.get("inc"), 2 ** 128)
          and _whole(cpu.get("has_uint32"), 2) and _whole(cpu.get("uinteger"), 2 ** 32))
    if not ok:
        raise ValueError(f"{who}: the CPU generator's state {cpu!r:.120} is not {expected}")
