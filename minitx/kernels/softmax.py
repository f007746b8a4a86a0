"""Launchers of softmax.cu: softmax over the last axis, forward and backward."""
from __future__ import annotations

from ._launch import launch_rows, rows_cols, same_shape_inputs
from ._runtime import backend_for


def softmax_forward(x):
    """``y = softmax(x)`` over the last axis of x ([..., cols], any row length).

    x: float32, float64 or bfloat16 (computed in float32, y rounded once).  A row that
    is all -inf gives all zeros.  Returns y with x's shape and dtype.
    """
    be = backend_for(x)
    x, dt = same_shape_inputs(be.xp, x)
    rows, cols = rows_cols(x)
    y = be.empty(x.shape, dt)
    if x.size:
        launch_rows(be, "softmax.cu", "softmax_forward", dt, (x, y), rows, cols)
    return y


def softmax_backward(y, dy):
    """Gradient of :func:`softmax_forward`: ``dx = y * (dy - sum(dy * y))``.

    y: the forward output; dy: upstream gradient, same shape and dtype.  Returns dx in
    that dtype (bfloat16: computed in float32, rounded once).
    """
    be = backend_for(y, dy)
    y, dy, dt = same_shape_inputs(be.xp, y, dy)
    rows, cols = rows_cols(y)
    dx = be.empty(y.shape, dt)
    if y.size:
        launch_rows(be, "softmax.cu", "softmax_backward", dt, (y, dy, dx), rows, cols)
    return dx
