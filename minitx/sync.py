"""Host synchronisation: where minitx waits for the GPU, and how a training step avoids it.

The GPU runs the kernels the host queues, in order, while the host goes on queueing. The
queue drains, and the GPU idles, whenever the host *reads* a result: ``float(loss)``, an
``if`` on a norm, a range check's ``min()`` and ``max()``. Every such read in minitx goes
through ``backend.to_host`` (counted: ``backend.count_host_reads``), so a step that makes
none can be proved by counting, and it can be captured as a CUDA graph, which has no way to
hand a value back to Python in the middle of a replay.

A step still needs its checks: ids in range, gradients finite. ``DeferredChecks`` keeps them
on the device. Inside ``with checks.deferring():`` each check that would have read the host
records instead, in place, in two device scalars of its own:

    first_step = step    where bad and no earlier failure (first_step < 0), else unchanged
    value      = the offending value, with the same rule

and ``checks.raise_first()``, called where reading is cheap (a log interval, before a
checkpoint, at the end), makes one host read for all of them and raises the same error the
eager check would have raised, naming the op and the step where it first failed. Outside
``deferring()`` (the default) every check reads and raises at once, as before.
"""
from __future__ import annotations

import contextlib

import numpy as np

from minitx import backend

#: how many steps a run on a GPU goes between reads of the device, unless it sets its own: often
#: enough for the progress bar and a failed check, rarely enough that no step waits for the GPU
GPU_SYNC_EVERY = 50

_active: list = []  # the DeferredChecks inside whose deferring() block we are, innermost last


def deferring_checks():
    """The DeferredChecks that records checks now, or None (checks raise at once)."""
    return _active[-1] if _active else None


def check_in_range(values, size: int, error, low: int = 0, also=()) -> list:
    """Require ``low <= values < size`` for an integer array (ids, targets, indices).

    ``error(value)`` builds the exception for an offending value: the smallest value when it is
    below ``low``, else the largest. Eager: one host read of (min, max), and a raise. Inside
    ``DeferredChecks.deferring()``: recorded on the device, under the message's text, and no read.

    ``also``: other integer 0-d device arrays the caller needs (a count of targets, say): returned
    as Python ints from the same host read, or left on the device when deferring.
    """
    checks = deferring_checks()
    if checks is not None:
        if values.size:
            xp = backend.get_array_module(values)
            smallest, largest = values.min(), values.max()
            # the message for value 0 tells checks apart: the op, and the size it checks against
            checks.record(str(error(0)), (smallest < low) | (largest >= size),
                          xp.where(smallest < low, smallest, largest), error)
        return list(also)
    if not values.size:
        return backend.host_ints(*also) if also else []
    smallest, largest, *extra = backend.host_ints(values.min(), values.max(), *also)
    if smallest < low or largest >= size:
        raise error(smallest if smallest < low else largest)
    return extra


def within_range(values, size: int, low: int = 0):
    """``values`` as they are; inside ``DeferredChecks.deferring()`` clipped into [low, size).

    A value that failed a deferred check has only been recorded: the step goes on, and its
    gathers must neither stop on it (NumPy raises) nor read outside an array (a kernel would).
    The step's results are thrown away when the record is raised, so the clipped value never
    counts. Eager checks have raised already, so nothing needs clipping there."""
    if deferring_checks() is None:
        return values
    return backend.get_array_module(values).clip(values, low, size - 1)


class DeferredChecks:
    """Checks of a run's steps kept on the device (see the module docstring).

    ``step`` is the device's step counter (an int64 scalar): ``begin_step()`` adds one to it in
    place, so a captured graph that calls it counts on replay too. ``set_step(n)`` writes it from
    the host (at resume).
    """

    def __init__(self, device: str = "cpu"):
        self.xp = backend.xp_for(device)
        self.step = self.xp.zeros((), dtype=np.int64)
        self._records: dict = {}  # key -> [first_step, value, error]

    @contextlib.contextmanager
    def deferring(self):
        """Inside: checks record into this object instead of reading the host and raising."""
        _active.append(self)
        try:
            yield self
        finally:
            _active.remove(self)

    def begin_step(self) -> None:
        self.step += 1

    def set_step(self, step: int) -> None:
        self.step[...] = step

    def record(self, key: str, bad, value, error) -> None:
        """Keep the first step at which ``bad`` (a device boolean scalar) held, and ``value``
        then; ``error(value)`` makes the exception to raise for it."""
        entry = self._records.get(key)
        if entry is None:
            entry = self._records[key] = [self.xp.full((), -1, dtype=np.int64),
                                          self.xp.zeros((), dtype=np.float64), error]
        first_step, kept, _ = entry
        new = bad & (first_step < 0)
        kept[...] = self.xp.where(new, value, kept)
        first_step[...] = self.xp.where(new, self.step, first_step)
        entry[2] = error

    def failures(self) -> list:
        """[(step, error)] of every check that failed, earliest first: one host read."""
        if not self._records:
            return []
        entries = list(self._records.values())
        read = backend.to_host(self.xp.stack([self.xp.stack([e[0].astype(np.float64), e[1]])
                                              for e in entries]))
        found = [(int(step), error(_as_number(value))) for (step, value), (_, _, error) in zip(read, entries)
                 if step >= 0]
        return sorted(found, key=lambda item: item[0])

    def raise_first(self) -> None:
        """Raise the earliest failure's error, its message ending with the step; else nothing."""
        found = self.failures()
        if found:
            step, error = found[0]
            raise type(error)(f"{error} (at step {step})") from None

    def clear(self) -> None:
        """Forget every failure (a run that handled one and goes on)."""
        for first_step, _, _ in self._records.values():
            first_step[...] = -1


def _as_number(value: float):
    """A recorded value as the error shows it: an int when it is one (ids, targets)."""
    return int(value) if float(value).is_integer() else float(value)
