"""``Parameter``: a tensor that a Module owns and an optimizer updates."""
from __future__ import annotations

from minitx.autograd.tensor import Tensor


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
