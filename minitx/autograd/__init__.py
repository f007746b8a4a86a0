"""The autograd engine: Tensor, Function, the backward walk, and no_grad.

Windows onto it, none needed to train: ``minitx.autograd.graph`` draws the graph
(``to_dot``, ``render``, ``to_tree``), ``minitx.autograd.debug`` traces a backward pass
(``trace_backward``) and finds the op that made the first NaN/inf (``detect_anomaly``), and
``check_saved_arrays`` (``minitx.autograd.inplace``) catches writes into saved arrays that
minitx cannot see, such as through DLPack.
"""
from minitx.autograd.engine import backward, grad, topological_order, unbroadcast
from minitx.autograd.function import Function
from minitx.autograd.inplace import check_saved_arrays, mark_modified
from minitx.autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                                       set_grad_enabled)
from minitx.autograd.tensor import Tensor, as_tensor, tensor
from minitx.autograd import graph  # noqa: E402  (after Tensor: graph reads it)
from minitx.autograd.debug import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
                                   trace_backward)

__all__ = ["Tensor", "tensor", "as_tensor", "Function", "backward", "grad", "topological_order",
           "unbroadcast", "no_grad", "enable_grad", "is_grad_enabled", "inference_mode", "set_grad_enabled",
           "mark_modified", "check_saved_arrays", "graph", "detect_anomaly", "trace_backward",
           "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]
