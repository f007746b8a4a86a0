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

import functools
import re

from minitx import amp
from minitx.autograd import inplace
from minitx.autograd.grad_mode import is_grad_enabled
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
    saved: tuple = ()
    _inputs: tuple = ()
    _held: tuple = ()  # the saved arrays' guards and versions (minitx.autograd.inplace)
    _prints: tuple = ()  # their checksums, under check_saved_arrays (minitx.autograd.inplace)
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
        if not self.chooses_dtype:
            output = _in_bfloat16_if_its_inputs_are(inputs, output)
        for hook in forward_hooks:
            hook(self, inputs, output)
        # integer and boolean outputs (indices, masks) carry no gradient
        record = is_grad_enabled() and any(self.needs_input_grad) and is_floating(output.dtype)
        if record:
            self._inputs = inputs
            if self.saved:
                self._held = inplace.hold(self.saved, inputs, output)
                if inplace.checking:
                    self._prints = inplace.fingerprint(self.saved, inputs, output)
            return Tensor._from_op(output, self)
        self.saved = ()  # nothing will call backward: keep no arrays alive
        return Tensor._from_op(output, None)



def _in_bfloat16_if_its_inputs_are(inputs, output):
    """An op whose floating inputs are all bfloat16 returns bfloat16, as PyTorch's do. NumPy
    (with ml_dtypes) computes bfloat16 with a Python float, a float32 statistic or a matrix
    product in float32, and some ops would hand that back: the result is rounded once here."""
    floating = [t.dtype for t in inputs if is_floating(t.dtype)]
    if floating and all(d.name == "bfloat16" for d in floating) and is_floating(output.dtype) \
            and output.dtype != floating[0]:
        return output.astype(floating[0])
    return output
