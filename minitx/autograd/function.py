"""``Function``: the base class of every differentiable op.

An op is a small class with two methods that work on raw arrays (numpy or cupy):

* ``forward(*arrays) -> array`` computes the output and keeps what backward needs with
  ``self.save_for_backward(...)``;
* ``backward(dy) -> tuple`` receives the gradient of the loss with respect to the output,
  ``dy`` (same shape as the output), and returns one gradient per input, in order, or
  ``None`` for an input that takes no gradient (an integer index, a mask).

Settings such as ``axis`` or ``eps`` go to ``__init__``; tensors are call arguments::

    y = Softmax(axis=-1)(x)          # x is a Tensor, y is a Tensor

Calling the op unwraps the tensors, runs ``forward`` and, when some input requires a
gradient and recording is on, links the output to this op so the engine can call
``backward`` later. Gradients may have the broadcast shape of the output: the engine sums
them back to each input's shape (``unbroadcast``), so ops never do it themselves.

Saved arrays are guarded against in-place writes. An op's gradient is computed from the
arrays it saved, so writing into one of them between forward and backward (``w.data[...] = 0``,
an optimizer step) would silently give wrong gradients. While an op that has not yet run its
backward holds an array, NumPy marks that array (the one owning the memory, when a view was
saved) read-only: a raw write raises at once. minitx's own in-place writers (optimizers,
gradient accumulation, ``minitx.nn.init``) call ``mark_modified`` first, which lifts the lock
and raises the array's *version*; an op whose saved array changed version refuses backward,
naming itself and the tensor. ``release()`` and the op's garbage collection drop the guard.
CuPy arrays have no read-only flag: on the GPU only the version check works.
"""
from __future__ import annotations

import re

import numpy as np

from minitx import backend
from minitx.autograd.grad_mode import is_grad_enabled

#: called as ``hook(fn, inputs, output)`` (output: the raw array) after every op's forward;
#: empty unless a debugging tool of minitx.autograd.debug is on, so an op pays one empty loop
forward_hooks: list = []


def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Function:
    """Base class: subclass it, write ``forward`` and ``backward``, call an instance."""

    #: whether each input requires a gradient; backward may skip work for the others
    needs_input_grad: tuple = ()
    saved: tuple = ()
    _inputs: tuple = ()
    _guarded: tuple = ()  # (guard, version at forward) for each array owning saved memory
    _released = False

    @property
    def inputs(self) -> tuple:
        """The tensors this op was applied to, in order (empty unless a graph was recorded)."""
        return self._inputs

    @property
    def name(self) -> str:
        """The op's name in error messages: class ``LogSoftmax`` is ``log_softmax``."""
        return _snake_case(type(self).__name__)

    def save_for_backward(self, *arrays) -> None:
        self.saved = arrays

    def forward(self, *arrays):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, dy):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def release(self) -> None:
        """Free the saved arrays after backward (unless retain_graph=True)."""
        self.saved = ()
        self._released = True
        self._unguard()

    def check_saved(self) -> None:
        """Raise unless backward can run: saved arrays still here and unchanged since forward."""
        if self._released:
            raise RuntimeError(f"backward: the graph through '{self.name}' was already freed by an earlier "
                               "backward(); pass retain_graph=True to the first call to backward twice")
        for guard, version in self._guarded:
            if guard.version != version:
                raise RuntimeError(f"backward: '{self.name}' saved {self._describe(guard.array)} for its "
                                   f"gradient, and it was modified in place after the forward pass (version "
                                   f"{version} -> {guard.version}, e.g. by an optimizer step); run backward "
                                   "before changing it, or compute the forward again")

    def _describe(self, owner) -> str:
        """Which tensor owns the array ``owner``: an input by position, or the output."""
        for position, t in enumerate(self._inputs):
            if _owner(t.data) is owner:
                return f"input {position} (shape {t.shape}, {t.dtype.name})"
        return f"its output or an array it computed (shape {tuple(owner.shape)})"

    def _guard_saved(self) -> None:
        guarded = []
        for array in self.saved:
            owner = _owner(array)
            if owner is None:
                continue
            guard = _guards.get(id(owner))
            if guard is None:
                guard = _guards[id(owner)] = _Guard(owner)
            elif any(g is guard for g, _ in guarded):
                continue  # two views of one array
            guard.hold()
            guarded.append((guard, guard.version))
        self._guarded = tuple(guarded)

    def _unguard(self) -> None:
        for guard, _ in self._guarded:
            guard.drop()
        self._guarded = ()

    def __del__(self):
        # a graph dropped without backward (evaluation outside no_grad) unlocks its arrays here
        if self._guarded:
            self._unguard()

    def __call__(self, *inputs):
        from minitx.autograd.tensor import Tensor

        for position, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self.name}: input {position} is {type(t).__name__}, expected a Tensor")
        devices = {t.device for t in inputs}
        if len(devices) > 1:
            listed = " and ".join(sorted(devices))
            raise RuntimeError(f"{self.name}: inputs are on different devices: {listed}; "
                               "move them with .to(device) first")
        if self.inputs:
            raise RuntimeError(f"{self.name}: this Function instance already recorded a call; ops keep their "
                               "inputs and saved arrays on the instance, so create a new one for each call")
        self.needs_input_grad = tuple(t.requires_grad for t in inputs)
        output = self.forward(*(t.data for t in inputs))
        for hook in forward_hooks:
            hook(self, inputs, output)
        # integer and boolean outputs (indices, masks) carry no gradient
        record = is_grad_enabled() and any(self.needs_input_grad) and output.dtype.kind == "f"
        if record:
            self._inputs = inputs
            if self.saved:
                self._guard_saved()
            return Tensor._from_op(output, self)
        self.saved = ()  # nothing will call backward: keep no arrays alive
        return Tensor._from_op(output, None)


# ---------------------------------------------------------------------- guarding saved arrays
class _Guard:
    """One array that unreleased ops hold: how many hold it, and its version (in-place writes)."""

    __slots__ = ("array", "holders", "version", "locked")

    def __init__(self, array):
        self.array, self.holders, self.version = array, 0, 0
        # only a writeable NumPy array is locked (and later unlocked); CuPy has no such flag
        self.locked = False

    def hold(self) -> None:
        self.holders += 1
        if isinstance(self.array, np.ndarray) and self.array.flags.writeable:
            self.array.flags.writeable = False
            self.locked = True

    def drop(self) -> None:
        self.holders -= 1
        if self.holders == 0:
            self.unlock()
            del _guards[id(self.array)]

    def unlock(self) -> None:
        if self.locked:
            self.array.flags.writeable = True
            self.locked = False


_guards: dict = {}  # id(owning array) -> _Guard, while some unreleased op holds that array


def _owner(array):
    """The array that owns ``array``'s memory (a view keeps it in ``.base``), or None when
    ``array`` is no numpy/cupy array or its memory belongs to something else (a buffer)."""
    xp = backend.get_array_module(array)
    if not isinstance(array, xp.ndarray):
        return None
    while array.base is not None:
        if not isinstance(array.base, xp.ndarray):
            return None  # e.g. an as_strided view: its read-only flag could not be lifted again
        array = array.base
    return array


def mark_modified(*tensors) -> None:
    """Call before writing into ``t.data`` in place (optimizers, initializers do).

    Ops that saved the array for their gradient then refuse to run backward (their gradient
    would be wrong), and the read-only lock they put on it is lifted so the write can happen.
    Arrays that no op holds are left as they are. Tensors or raw arrays are accepted.
    """
    for t in tensors:
        owner = _owner(getattr(t, "data", t))
        guard = _guards.get(id(owner)) if owner is not None else None
        if guard is not None:
            guard.version += 1
            guard.unlock()
