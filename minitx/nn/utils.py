"""Helpers PyTorch keeps in ``torch.nn.utils``, where ported code looks for them.

``clip_grad_norm_`` and ``clip_grad_value_`` live in minitx.optim.clip and are the same
functions here. The two below
treat a model's parameters as one long vector, p_1 then p_2 ..., each flattened in C order
(what a line search or a second-order method works on).
"""
from __future__ import annotations

from minitx.autograd.tensor import Tensor
from minitx.ops.shape import concatenate, reshape
from minitx.optim.clip import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor, the parameters flattened and joined: a graph op, so a gradient of the
    vector flows back to each parameter."""
    return concatenate([reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive pieces of ``vec`` into the parameters, as PyTorch: each parameter's array
    becomes its piece, reshaped (a view of vec's array, so no copy where the dtypes agree), and
    no graph is recorded. ``vec`` must hold exactly as many entries as the parameters together."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: expected a 1-D vector, got shape {vec.shape}")
    parameters = list(parameters)
    total = sum(p.size for p in parameters)
    if vec.shape[0] != total:
        raise ValueError(f"vector_to_parameters: the vector has {vec.shape[0]} entries but the parameters "
                         f"{total}")
    start = 0
    for p in parameters:
        p.data = vec.data[start:start + p.size].reshape(p.shape).astype(p.dtype, copy=False)
        start += p.size
