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

Saved arrays are guarded (minitx.autograd.inplace): until backward has run, NumPy keeps them
read-only, and backward refuses to run if minitx changed one in place since forward (an
optimizer step), since the gradient would be wrong; under ``check_saved_arrays()`` it also
refuses when a checksum taken at forward no longer matches (a write through DLPack).
"""
from __future__ import annotations

import copy
import functools
import re

import numpy as np

from minitx import amp, backend
from minitx.autograd import inplace
from minitx.autograd.grad_mode import is_grad_enabled
from minitx.autograd.writes import cell_of, note_view
from minitx.backend import is_floating

#: called as ``hook(fn, inputs, output)`` (output: the raw array) after every op's forward;
#: empty unless a debugging tool of minitx.autograd.debug is on, so an op pays one empty loop
forward_hooks: list = []


@functools.lru_cache(maxsize=None)  # op names go into messages the engine formats per op
def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Function:
    """Base class: subclass it, write ``forward`` and ``backward``, call an instance."""

    #: whether each input requires a gradient; backward may skip work for the others
    needs_input_grad: tuple = ()
    #: whether the op's output dtype is its purpose (a cast), not left to the bfloat16 rule in apply
    chooses_dtype: bool = False
    #: whether the op only moves values (a reshape, a transpose, a basic index, x[index] = v): 16-bit
    #: arrays go in as they are, since there is nothing to round (a view op's output stays a view)
    moves_values: bool = False
    #: where the op computes bfloat16 and float16 arrays as they are: None (never: they are
    #: computed in float32, see _low_precision_of), "kernels" (where kernels.enabled takes them:
    #: the kernels keep bfloat16 storage and compute in float32) or "gpu" (the products, on
    #: CuPy: tensor cores multiply 16-bit inputs adding in float32)
    low_precision = None
    #: float32 when apply computed this call's 16-bit inputs in float32: backward gets dy in it too
    computed_in = None
    #: whether the op's kernels read 16-bit inputs and return float32 (a loss, its sums in
    #: float32): under autocast's "float32" rule such inputs then go in as they are, not cast up
    #: first (amp.call), and ``keeps_float32`` is set for that call so apply keeps the output float32
    float32_from_16_bits: bool = False
    keeps_float32: bool = False
    #: whether the op, computing 16-bit inputs in float32, takes a Python number that 16 bits
    #: cannot hold (1e6 beside float16) in float32 too, as PyTorch's mul and div do (as_tensor)
    exact_numbers: bool = False
    #: whether every gradient backward returns is a new array nothing else holds (not dy, not a
    #: saved array, not a buffer the op keeps for its next call), so the engine may add an
    #: input's other gradients into it in place, and a leaf may keep it as its .grad, which later
    #: backward calls and the optimizer write in place (see engine.backward)
    fresh_gradients: bool = False
    saved: tuple = ()
    _held: tuple = ()  # the saved arrays' guards and versions (minitx.autograd.inplace)
    _prints: tuple = ()  # their checksums, under check_saved_arrays (minitx.autograd.inplace)
    _released = False
    _cells: tuple = ()  # per input, the writes.Cell it is held through

    def __init_subclass__(cls, **kwargs):
        """Refuse PyTorch's static style (``forward(ctx, x)`` and ``backward(ctx, dy)`` as
        staticmethods, called as ``MyOp.apply(x)``) when the class is defined: minitx's are
        methods of an instance that keeps its call's saved arrays, and the static ones would fail
        later with an error about a missing argument."""
        super().__init_subclass__(**kwargs)
        for name in ("forward", "backward"):
            if isinstance(cls.__dict__.get(name), staticmethod):
                raise TypeError(f"{cls.__name__}.{name} is a staticmethod, as in PyTorch; minitx's Function has "
                                f"methods: def forward(self, *arrays) (keep what backward needs with "
                                f"self.save_for_backward) and def backward(self, dy), and is called as "
                                f"{cls.__name__}()(x), a new instance per call")

    @property
    def inputs(self) -> tuple:
        """The tensors this op was applied to, in order (empty unless a graph was recorded).

        An input written since by a recorded write (``x[index] = v``, ``x += y`` while a gradient
        is recorded) is given as it was when this op took it: the node of its old values, which
        the write left in the cell the op holds it through (minitx.autograd.writes.Cell)."""
        return tuple([cell.node for cell in self._cells])

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

    def backward_into(self, dy, grad) -> bool:
        """Add this op's gradient of its one differentiable input into ``grad`` (the engine's
        running sum for that input: its shape and dtype, the engine's to write) and return True;
        or return False to have the engine call backward and add the result itself. Ops whose
        backward is a scatter-add (an embedding) write into the sum directly: a parameter used
        twice then costs no zero-filled table and no separate add."""
        return False

    def backward_adding(self, dy, index, pending):
        """backward(dy)'s gradients, except that input ``index``'s already holds ``pending`` (the
        gradient that input has from its other uses: its shape and dtype, not to be written),
        as a new array pending + dx with the bits the engine's add would give; or None to have
        the engine call backward and add itself. An op that writes dx in one kernel adds there:
        a layer norm on a residual stream then costs no separate add."""
        return None

    def release(self) -> None:
        """Free the saved arrays after backward (unless retain_graph=True)."""
        self.saved = ()
        self._prints = ()
        self._released = True
        if self._held:
            inplace.let_go(self._held)
            self._held = ()

    def check_saved(self) -> None:
        """Raise unless backward can run: saved arrays still here and unchanged since forward."""
        if self._released:
            raise RuntimeError(f"backward: the graph through '{self.name}' was already freed by an earlier "
                               "backward(); pass retain_graph=True to the first call to backward twice")
        if self._held:
            inplace.check(self, self._held)
        if self._prints:
            inplace.verify(self, self._prints)

    def __del__(self):
        # a graph dropped without backward (evaluation outside no_grad) unlocks its arrays here
        if self._held:
            inplace.let_go(self._held)

    def __call__(self, *inputs):
        if amp.active() is not None:  # mixed precision: the op's inputs and output in its dtype (minitx.amp)
            return amp.call(self, inputs)
        return self.apply(*inputs)

    def apply(self, *inputs):
        """Run forward on the tensors' arrays and, when a gradient is wanted, record the op."""
        from minitx.autograd.tensor import Tensor

        if not isinstance(self, Function):  # MyOp.apply(x), PyTorch's call: x was taken as the instance
            raise TypeError("Function.apply was called on the class, as in PyTorch (MyOp.apply(x)); call an "
                            "instance, MyOp()(x): a new one per call, which keeps that call's saved arrays")
        for position, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self.name}: input {position} is {type(t).__name__}, expected a Tensor")
        devices = {t.device for t in inputs}  # (reads each array: a stale view is made again first, writes.refresh)
        if len(devices) > 1:
            listed = " and ".join(sorted(devices))
            raise RuntimeError(f"{self.name}: inputs are on different devices: {listed}; "
                               "move them with .to(device) first")
        if self._cells:
            raise RuntimeError(f"{self.name}: this Function instance already recorded a call; ops keep their "
                               "inputs and saved arrays on the instance, so create a new one for each call")
        self.needs_input_grad = tuple(t._requires_grad for t in inputs)  # (the slot: Tensor's comment)
        arrays = [t.data for t in inputs]
        low = None if self.chooses_dtype or self.moves_values else _low_precision_of(inputs)
        if low is not None and not self._computes_as_they_are(arrays):  # see _low_precision_of
            arrays = [a.astype(np.float32) if a.dtype == low else a for a in arrays]
            if self.exact_numbers:
                arrays = [getattr(t, "exact", a) for t, a in zip(inputs, arrays)]
            self.computed_in = np.dtype(np.float32)
        # NaN and inf are the answer at the edges (log(-1), x / 0, float16 past 65504): no NumPy
        # warning, as PyTorch and CuPy give none (detect_anomaly() names the op that made one)
        with np.errstate(all="ignore"):
            output = self.forward(*arrays)
            if not hasattr(output, "dtype") or isinstance(output, Tensor):
                output = self._as_array(output)
            if low is not None and is_floating(output.dtype) and output.dtype != low and not self.keeps_float32:
                output = output.astype(low)
        for hook in forward_hooks:
            hook(self, inputs, output)
        # integer and boolean outputs (indices, masks) carry no gradient
        record = is_grad_enabled() and any(self.needs_input_grad) and is_floating(output.dtype)
        if record:
            self._cells = tuple([cell_of(t) for t in inputs])
            if self.saved:
                self._held = inplace.hold(self.saved, inputs, output)
                if inplace.checking:
                    self._prints = inplace.fingerprint(self.saved, inputs, output)
        else:
            self.saved = ()  # nothing will call backward: keep no arrays alive
        result = Tensor._from_op(output, self if record else None)
        if self.moves_values:  # perhaps a view of x: a recorded write into x makes it again (note_view)
            note_view(inputs[0], result, self)
        return result

    def _as_array(self, output):
        """forward's result as an array: a Tensor's (PyTorch's forward returns tensors), else a
        TypeError naming the op, rather than an error about an attribute later."""
        from minitx.autograd.tensor import Tensor

        if isinstance(output, Tensor):
            return output.data
        if isinstance(output, (tuple, list)):
            raise TypeError(f"{self.name}.forward returned a {type(output).__name__}; expected one array (the op's "
                            f"output): an op with several outputs is written as several Functions")
        raise TypeError(f"{self.name}.forward returned a {type(output).__name__}; expected an array (NumPy's or "
                        f"CuPy's, from the arrays it was given)")

    def again(self) -> "Function":
        """A new instance of this op with the same settings (what __init__ set), to apply to other
        inputs: a view made again of a written tensor's new array (minitx.autograd.writes)."""
        fresh = copy.copy(self)
        for name in _PER_CALL:
            fresh.__dict__.pop(name, None)
        return fresh

    def _computes_as_they_are(self, arrays) -> bool:
        """Whether this op's fast path takes these bfloat16/float16 arrays (see low_precision)."""
        if self.low_precision == "kernels":
            from minitx import kernels  # noqa: PLC0415 (kernels import the autograd package)

            return kernels.enabled(*(a for a in arrays if is_floating(a.dtype)))
        return self.low_precision == "gpu" and backend.device_of(arrays[0]) == "cuda"




#: what apply and forward set on an instance for one call (Function.again forgets them)
_PER_CALL = ("needs_input_grad", "computed_in", "keeps_float32", "saved", "_held", "_prints", "_released", "_cells")


def _low_precision_of(inputs):
    """bfloat16 or float16 when every floating input has that dtype (else None): the op returns
    that dtype, as PyTorch's ops do, its result rounded once.

    It computes in float32 ("opmath", as PyTorch's kernels do), unless its own fast path takes
    the 16-bit arrays (Function.low_precision: the fused kernels, which keep bfloat16 storage
    and compute in float32 inside, and the GPU's products). Step by step in 16 bits, a formula
    would round at every step and, in float16, overflow past 65504 or underflow below 6e-8 in
    its middle (x ** (p - 1) of a small x, dy * b before / h) where the result itself fits.
    A Python number that dtype cannot hold (1e6 beside float16) counts as that dtype, rounded,
    but an op with ``exact_numbers`` (a product, a quotient) takes it in float32, as PyTorch's.
    Gradients come back in float32 and the engine rounds them to the input's dtype."""
    floating = {t.dtype for t in inputs if is_floating(t.dtype)}
    if len(floating) == 1:
        (dtype,) = floating
        if dtype == np.float16 or dtype.name == "bfloat16":
            return dtype
    return None
