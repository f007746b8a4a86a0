"""One-call checks for op tests: gradients (gradcheck + hygiene) and forward against NumPy.

``check_gradients`` is what an op test wants after drawing inputs: finite differences agree
with backward, and backward leaves its inputs and saved arrays alone. ``check_forward``
compares an op's output with a NumPy reference run on the same values, and says where they
differ the most. ``leaf`` makes the float64 tensors both need.
"""
from __future__ import annotations

import numpy as np

from minitx import backend
from minitx.autograd.tensor import Tensor
from minitx.testing.gradcheck import check_backward_hygiene, gradcheck

__all__ = ["check_gradients", "check_forward", "leaf"]


def leaf(data, requires_grad=True) -> Tensor:
    """A float64 leaf tensor holding a copy of ``data`` (numbers, lists or arrays), as gradcheck needs."""
    from minitx.autograd.tensor import tensor

    return tensor(np.asarray(data, dtype=np.float64), requires_grad=requires_grad)


def check_gradients(fn, *inputs, **gradcheck_kwargs) -> bool:
    """gradcheck(fn, *inputs, **gradcheck_kwargs), then check_backward_hygiene(fn, *inputs): True or raise.

    Raises GradcheckError when backward disagrees with finite differences, or when the backward of
    fn's last op modifies its inputs, its saved arrays or dy in place, or returns gradients that
    share memory with them. ``seed`` (when given) is used by both checks.
    """
    gradcheck(fn, *inputs, **gradcheck_kwargs)
    check_backward_hygiene(fn, *inputs, seed=gradcheck_kwargs.get("seed", 0))
    return True


def _as_numpy(value):
    """Tensors become NumPy copies (the reference must not be able to touch the tensor)."""
    if isinstance(value, Tensor):
        return np.array(backend.to_numpy(value.data), copy=True)
    return value


def check_forward(fn, reference, *inputs, rtol=1e-7, atol=0.0):
    """Check that fn(*inputs) matches reference(*arrays) elementwise; return fn's output.

    ``arrays`` are ``inputs`` with every Tensor replaced by a NumPy copy of its values (other
    inputs are passed as they are). fn returns a Tensor, or a tuple/list of Tensors; reference
    returns an array-like, or a sequence of as many. Shapes must be equal, and each element must
    satisfy |out - expected| <= atol + rtol * |expected| (NaN matches NaN, like numpy.isclose).
    Raises AssertionError naming the output, the number of mismatches and the worst element
    with both values.
    """
    out = fn(*inputs)
    expected = reference(*(_as_numpy(x) for x in inputs))
    several = isinstance(out, (tuple, list))
    outs = list(out) if several else [out]
    refs = list(expected) if several else [expected]
    if len(outs) != len(refs):
        raise AssertionError(f"check_forward: fn returned {len(outs)} outputs, the reference {len(refs)}")
    for k, (o, r) in enumerate(zip(outs, refs)):
        name = f"output {k}" if several else "the output"
        if not isinstance(o, Tensor):
            raise TypeError(f"check_forward: fn must return Tensors, {name} is a {type(o).__name__}")
        _compare(name, backend.to_numpy(o.data), np.asarray(r), rtol, atol)
    return out


def _compare(name, actual, expected, rtol, atol):
    if actual.shape != expected.shape:
        raise AssertionError(f"check_forward: {name} has shape {actual.shape}, the reference {expected.shape}")
    if not actual.size:
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return
    # worst = the largest excess over the tolerance; a NaN on one side only counts as infinite
    excess = np.where(close, -np.inf, np.abs(a - e) - (atol + rtol * np.abs(e)))
    excess = np.where(np.isnan(excess), np.inf, excess)
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    where = tuple(int(i) for i in worst)
    raise AssertionError(
        f"check_forward: {name} differs from the reference at {int((~close).sum())} of {close.size} elements "
        f"(rtol={rtol:g}, atol={atol:g}); worst at {where}: got {float(a[worst]):.10g}, "
        f"expected {float(e[worst]):.10g}, difference {float(abs(a[worst] - e[worst])):.3g}")
