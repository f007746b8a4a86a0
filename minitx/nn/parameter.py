"""``Parameter``: a tensor that a Module owns and an optimizer updates; ``Buffer``: a tensor that
a Module keeps (assigning one registers it as a buffer); the uninitialized parameters and buffers of
the Lazy modules (minitx.nn.lazy), whose shape their first forward decides."""
from __future__ import annotations

import numpy as np

from minitx import backend
from minitx.autograd.tensor import _DATA, Tensor
from minitx.autograd.writes import note_view


class Parameter(Tensor):
    """A leaf tensor that requires grad; assigning one to a Module attribute registers it."""

    __slots__ = ()

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data, requires_grad=requires_grad)

    def __deepcopy__(self, memo) -> "Parameter":
        """copy.deepcopy: a Tensor's copy, without .grad, as PyTorch's Parameter (a model copied,
        for an average of its weights say, starts without gradients)."""
        twin = super().__deepcopy__(memo)
        twin._grad = None
        return twin

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__() + ")"


class Buffer(Tensor):
    """A tensor that assigning to a Module attribute registers as a buffer (``model.table =
    nn.Buffer(t)`` is ``model.register_buffer("table", t)``), saved in state_dict unless
    ``persistent=False``, as PyTorch 2's. It shares ``data``'s memory, detached from its graph
    (``data.detach()``, requires_grad as data's); no data: an empty tensor of the default float
    dtype (get_default_dtype)."""

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent: bool = True):
        if not isinstance(persistent, bool):
            raise TypeError(f"Buffer: persistent must be True or False, got {persistent!r}")
        if data is None:
            data = Tensor(np.empty(0, dtype=backend.DEFAULT_FLOAT))
        source = data if isinstance(data, Tensor) else Tensor(data)
        super().__init__(source.data, requires_grad=source.requires_grad)
        note_view(source, self, None)  # (as detach(): a recorded write into the source reaches the buffer)
        self.persistent = persistent


class _Uninitialized(Tensor):
    """A parameter or buffer of a Lazy module before its first forward: a dtype and a device, no
    shape. Its values and shape cannot be read (an error says why, as PyTorch's);
    ``materialize(shape)`` gives it an array of that shape (uninitialized memory, which the module
    then fills) and makes it the ordinary kind (``cls_to_become``), the same object: a reference
    to it stays valid."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None):
        device = backend.check_device(device)
        placeholder = backend.xp_for(device).empty(0, dtype=backend.resolve_dtype(dtype))
        super().__init__(placeholder, requires_grad=requires_grad)

    @property
    def data(self):
        raise ValueError(f"Attempted to use an uninitialized {self._kind} (of a Lazy module): call the module "
                         "once on a batch (forward) to initialize it before using it")

    @data.setter
    def data(self, value):  # (the placeholder: its dtype and device are what materialize() will use)
        _DATA.__set__(self, value)

    @property
    def shape(self):
        raise RuntimeError(f"Can't access the shape of an uninitialized {self._kind}: call forward on the Lazy "
                           "module first (loading an initialized state dict gives it the state's shapes)")

    dtype = property(lambda self: _DATA.__get__(self).dtype)
    device = property(lambda self: backend.device_of(_DATA.__get__(self)))

    @property
    def _kind(self) -> str:
        return "parameter" if isinstance(self, Parameter) else "buffer"

    def materialize(self, shape, device=None, dtype=None) -> None:
        """An array of ``shape`` (uninitialized values) on ``device`` with ``dtype`` (by default
        those it was made with), and the ordinary class."""
        placeholder = _DATA.__get__(self)
        device = backend.device_of(placeholder) if device is None else backend.check_device(device)
        dtype = placeholder.dtype if dtype is None else backend.resolve_dtype(dtype)
        self.__class__ = self.cls_to_become
        self.data = backend.xp_for(device).empty(tuple(shape), dtype=dtype)

    def _retarget(self, device, dtype) -> None:
        """Module.to's move and cast: the placeholder's, for materialize() to use."""
        placeholder = _DATA.__get__(self)
        device = backend.device_of(placeholder) if device is None else device
        _DATA.__set__(self, backend.xp_for(device).empty(0, dtype=placeholder.dtype if dtype is None else dtype))

    def __deepcopy__(self, memo):
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        twin.__setstate__({**self.__getstate__(), "data": _DATA.__get__(self).copy(), "_grad": None})
        return twin

    def __getstate__(self) -> dict:
        state = {name: getattr(self, name) for name in ("_grad", "_requires_grad", "_retains_grad")}
        return {**state, "data": _DATA.__get__(self), "_ctx": None, "_hooks": None}

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A Lazy module's parameter before its first forward (see _Uninitialized); requires grad."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        super().__init__(requires_grad, device, dtype)


class UninitializedBuffer(_Uninitialized):
    """A Lazy module's buffer (a running statistic) before its first forward (see _Uninitialized)."""

    __slots__ = ()


def is_lazy(t) -> bool:
    """Whether ``t`` is an uninitialized parameter or buffer (torch.nn.parameter.is_lazy)."""
    return isinstance(t, _Uninitialized)
