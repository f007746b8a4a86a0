"""``Parameter``: a tensor that a Module owns and an optimizer updates."""
from __future__ import annotations

from minitx.autograd.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad; assigning one to a Module attribute registers it."""

    __slots__ = ()

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__() + ")"
