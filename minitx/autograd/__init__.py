"""The autograd engine: Tensor, Function, the backward walk, and no_grad."""
from minitx.autograd.engine import backward, topological_order, unbroadcast
from minitx.autograd.function import Function, mark_modified
from minitx.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from minitx.autograd.tensor import Tensor, as_tensor, tensor

__all__ = ["Tensor", "tensor", "as_tensor", "Function", "backward", "topological_order",
           "unbroadcast", "no_grad", "enable_grad", "is_grad_enabled", "mark_modified"]
