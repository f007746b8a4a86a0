"""The guard against in-place writes into arrays that a graph saved for backward.

An op computes its gradient from the arrays it saved in forward, so writing into one of them
between forward and backward (``w.data[...] = 0``, an optimizer step) would silently give a
wrong gradient: ``y = (x * w).sum(); w.data[...] = 100.; y.backward()`` gave x.grad = [100, 100].
Two mechanisms together catch both kinds of write:

* **A lock.** While an op that has not run its backward holds an array that some tensor shows
  (the data of one of its inputs or of its output), NumPy marks the array owning that memory
  (the ``.base`` of a saved view) read-only, so a raw write through that array raises at once.
  Several ops may hold one array: the lock goes when the last lets go, in ``release()`` after
  backward or when a graph dropped without backward is collected.
* **A version.** minitx's own in-place writers (optimizer steps, gradient accumulation,
  ``clip_grad_norm_``, ``nn.init``) call ``mark_modified`` first: it lifts the lock so the
  write can happen, and counts a new version of the array. Each op remembers the versions it
  saw, and backward through an op whose saved array changed version raises, naming the op
  and the tensor.

CuPy arrays have no read-only flag: on the GPU only the version check works.

What these two cannot see: a writer that is not minitx and ignores NumPy's flag, which belongs
to each array object, not to the memory. A DLPack consumer (``torch.from_dlpack(w.data)[:] = 0``,
or a write into the torch tensor that a ``minitx.from_dlpack`` tensor views), a NumPy view made
before the lock (``v = w.data.reshape(...)`` kept from earlier) and any raw write on the GPU go
unseen. A third mechanism, off by default, sees them too:

* **A checksum** (``check_saved_arrays()``, or ``MINITX_CHECK_SAVED=1`` for the process). When
  an op saves an array that a tensor shows, it keeps a CRC-32 of its bytes (on the GPU, a
  copy); just before the op's backward runs, the bytes must still match, whoever wrote them.
  Writes after backward, or into a graph that was dropped, are never checked. It reads every
  such array twice a step (on a small Transformer, a tenth or more of a CPU training step; on
  the GPU, a device comparison and a synchronisation per array), so it is for debugging.

A view made while the lock holds (``w.data.T``, ``np.from_dlpack(w)``) stays read-only after
the lock goes: take views after backward, or copy.
"""
from __future__ import annotations

import os
import zlib

import numpy as np

from minitx import backend


class _Guard:
    """One array that unreleased ops hold: how many hold it, its version, whether it is locked,
    and which arrays of its memory they saved (``parts``: id -> [array, how many ops saved it, the
    bytes it spans once asked]), so that a recorded write may go into the array where it touches
    none of them (saved_parts)."""

    __slots__ = ("array", "holders", "version", "lockable", "locked", "parts")

    def __init__(self, array):
        self.array, self.holders, self.version, self.locked, self.parts = array, 0, 0, False, {}
        # only a NumPy array that is writeable now gets locked (and unlocked); CuPy has no such flag
        self.lockable = isinstance(array, np.ndarray) and array.flags.writeable

    def drop(self, arrays) -> None:
        for array in arrays:
            entry = self.parts[id(array)]
            entry[1] -= 1
            if entry[1] == 0:
                del self.parts[id(array)]
        self.holders -= 1
        if self.holders == 0:
            self.unlock()
            del _guards[id(self.array)]

    def unlock(self) -> None:
        if self.locked:
            self.array.setflags(write=True)
            self.locked = False


_guards: dict = {}  # id(owning array) -> _Guard, while some unreleased op holds that array


def _root(array):
    """The last NumPy/CuPy array down ``array``'s chain of ``.base``s (``array`` itself when it
    owns its memory or views a foreign buffer, such as a DLPack capsule), or None for a
    shape, a number or None."""
    if isinstance(array, np.ndarray):  # checked first: it is the common case, and quick
        kind = np.ndarray
    else:
        kind = backend.get_array_module(array).ndarray
        if not isinstance(array, kind):
            return None  # a shape, a number, None: nothing to guard
    while isinstance(array.base, kind):
        array = array.base
    return array


def _owner(array):
    """The array that owns ``array``'s memory (a view keeps it in ``.base``), or None when
    ``array`` is no numpy/cupy array or its memory belongs to something else (a buffer, a
    DLPack capsule, an as_strided view, whose read-only flag could not be lifted again)."""
    root = _root(array)
    return root if root is not None and root.base is None else None


def hold(saved, inputs, output) -> tuple:
    """Lock the arrays owning ``saved``'s memory that a tensor shows (the data of an input or
    of the output); returns ((guard, version now, the saved arrays of its memory), ...). An
    array only the op can reach (a layer norm's 1/sigma, an attention's log-sum-exp) cannot be
    written by anyone: no guard."""
    shown = {id(_owner(t.data)) for t in inputs}
    shown.add(id(_owner(output)))
    held = {}  # id(owner) -> (guard, version, [saved arrays]): two saved views of one array count once
    for array in saved:
        owner = _owner(array)
        key = id(owner)
        if owner is None or key not in shown:
            continue
        if key not in held:
            guard = _guards.get(key)
            if guard is None:
                guard = _guards[key] = _Guard(owner)
            guard.holders += 1
            if guard.lockable and not guard.locked:  # new, or unlocked by mark_modified since
                owner.setflags(write=False)
                guard.locked = True
            held[key] = (guard, guard.version, [])
        guard, _, arrays = held[key]
        arrays.append(array)
        guard.parts.setdefault(id(array), [array, 0, None])[1] += 1
    return tuple(held.values())


def let_go(held) -> None:
    """Undo ``hold``: the last holder of an array unlocks it."""
    for guard, _, arrays in held:
        guard.drop(arrays)


def saved_parts(owner):
    """The arrays of ``owner``'s memory (views of it, or itself) that unreleased ops saved for
    their gradient and guard, as the guard holds them (not to be changed): id(array) -> [array,
    how many ops saved it, the bytes it spans: None until the caller notes them there]; or None
    where no op holds ``owner``."""
    guard = _guards.get(id(owner))
    return None if guard is None or guard.array is not owner else guard.parts


def guard_of(owner):
    """The guard of ``owner`` (an array owning its memory) while unreleased ops hold it, else None."""
    guard = _guards.get(id(owner))
    return None if guard is None or guard.array is not owner else guard


def write_unseen(array, index, value) -> None:
    """``array[index] = value`` into an array that ops may hold locked, for a recorded write that
    checked it touches none of the arrays they saved (minitx.autograd.writes.in_place): the lock
    is lifted for the write and put back, and no version is counted, since what they saved keeps
    its values (a checksum of them still matches)."""
    guard = _guards.get(id(array))
    locked = guard is not None and guard.array is array and guard.locked
    if locked:
        array.setflags(write=True)
    try:
        array[index] = value
    finally:
        if locked:
            array.setflags(write=False)


def check(fn, held) -> None:
    """Raise if an array that ``fn`` saved changed version since ``hold``."""
    for guard, version, _ in held:
        if guard.version != version:
            raise RuntimeError(f"backward: '{fn.name}' saved {_whose(fn, guard.array)} for its gradient, and "
                               f"it was modified in place after the forward pass (version {version} -> "
                               f"{guard.version}, e.g. by an optimizer step); run backward before changing "
                               "it, or compute the forward again")


def _whose(fn, owner) -> str:
    """Which tensor owns the array ``owner``: an input by position, or else the op's own."""
    for position, t in enumerate(fn.inputs):
        if _owner(t.data) is owner:
            return f"input {position} (shape {t.shape}, {t.dtype.name})"
    # (or the array of an input written in place since: x[index] = v into x's own array, see
    # writes.in_place; the op's input is then x's old node, whose array is no longer x's)
    return (f"its output, an array it computed or an input's array written in place since "
            f"(shape {tuple(owner.shape)})")


def _array_of(t):
    """A tensor's array, or t itself when it is a NumPy or CuPy array (whose ``.data`` is its
    memory buffer, not an array)."""
    return t if isinstance(t, np.ndarray) or type(t).__module__.startswith("cupy") else t.data


def mark_modified(*tensors) -> None:
    """Call before writing into ``t.data`` in place (optimizers and initializers do).

    Ops that saved the array for their gradient then refuse to run backward (their gradient
    would be wrong), and the read-only lock they put on it is lifted so the write can happen.
    Arrays that no op holds are left as they are. Tensors or raw arrays are accepted.
    """
    for t in tensors:
        owner = _owner(_array_of(t))
        guard = _guards.get(id(owner)) if owner is not None else None
        if guard is not None:
            guard.version += 1
            guard.unlock()


def zero_gradients(params, set_to_none: bool = True) -> None:
    """zero_grad, for Module and Optimizer alike: each ``p.grad = None`` (PyTorch's default), or
    with ``set_to_none=False`` zeros written into each gradient in place (a name kept for it sees 0)."""
    for p in params:
        if set_to_none:
            p.grad = None
        elif p.grad is not None:
            mark_modified(p.grad)
            p.grad.data[...] = 0


# ---------------------------------------------------------------------- the checksum check
def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() not in ("", "0", "false", "no", "off")


checking = _env_flag("MINITX_CHECK_SAVED")  # read once, at import; check_saved_arrays() switches it


class check_saved_arrays:
    """While on, each op fingerprints the saved arrays a tensor shows when it saves them, and
    its backward raises if one changed since, whoever wrote it: ``with check_saved_arrays():``,
    or ``MINITX_CHECK_SAVED=1`` in the environment for the whole process.

    It sees the writes the lock and the version cannot (a DLPack consumer, a NumPy view taken
    before the forward pass). ``check_saved_arrays(False)`` turns it off inside a block.
    Process-wide, like detect_anomaly; it covers the ops recorded while it is on.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = bool(enabled)

    def __enter__(self):
        global checking
        self._before, checking = checking, self.enabled
        return self

    def __exit__(self, *exc):
        global checking
        checking = self._before
        return False


def _digest(array):
    """What ``_unchanged`` compares against later: a CRC-32 of the bytes of a NumPy array, a
    copy of a CuPy one (its bytes stay on the device: the check is one reduction there)."""
    if isinstance(array, np.ndarray):
        # as bytes: equal bytes are equal values, NaN included, and any dtype (bfloat16) hashes
        return zlib.crc32(np.ascontiguousarray(array).view(np.uint8))
    return array.copy()


def _unchanged(array, digest) -> bool:
    if isinstance(array, np.ndarray):
        return zlib.crc32(np.ascontiguousarray(array).view(np.uint8)) == digest
    bits = np.dtype(f"uint{8 * array.dtype.itemsize}")
    return not bool((array.view(bits) != digest.view(bits)).any())  # bit for bit, NaN included


def fingerprint(saved, inputs, output) -> tuple:
    """((array, digest), ...) for each saved array whose memory a tensor shows (an input's data
    or the output), whether minitx owns that memory or it came through DLPack."""
    shown = {id(_root(t.data)) for t in inputs}
    shown.add(id(_root(output)))
    prints, seen = [], set()
    for array in saved:
        root = _root(array)
        if root is None or id(root) not in shown or id(array) in seen:
            continue
        seen.add(id(array))
        prints.append((array, _digest(array)))
    return tuple(prints)


def verify(fn, prints) -> None:
    """Raise if a saved array no longer holds the bytes ``fingerprint`` saw in forward."""
    for array, digest in prints:
        if not _unchanged(array, digest):
            raise RuntimeError(
                f"backward: '{fn.name}' saved {_which(fn, array)} for its gradient, and its memory was "
                "written after the forward pass by something minitx does not see (a DLPack consumer "
                "such as torch.from_dlpack, or a NumPy view or alias of the array), so the gradient "
                "would be wrong; clone before writing (array.copy(), torch.clone(t), t.clone()), "
                "or run backward first")


def _which(fn, array) -> str:
    """Which tensor shows the saved ``array``: an input by position, or else the op's output."""
    root = _root(array)
    for position, t in enumerate(fn.inputs):
        if _root(t.data) is root:
            return f"input {position} (shape {t.shape}, {t.dtype.name})"
    return f"its output (shape {tuple(array.shape)}, {array.dtype.name})"
