"""Gradient checking: compare backward's gradients with finite differences.

For a function f of tensors, backward computes vector-Jacobian products: given a cotangent
r of f's output's shape, it returns r^T J for each input, J = d(output)/d(input). Central
differences estimate the same numbers from forward evaluations alone:

    d f_j / d x_i  ~=  (f_j(x + eps e_i) - f_j(x - eps e_i)) / (2 eps)          error O(eps^2)

``gradcheck`` compares the two in float64, where rounding (about 1e-16 / eps) stays well
below the tolerance:

* small problems (input size * output size <= ``full_jacobian_limit``): the full Jacobian,
  one backward per output element and one pair of forwards per input element;
* large problems: ``directions`` random directions u and one random cotangent r, comparing
  r . (f(x + eps u) - f(x - eps u)) / (2 eps)   with   (r^T J) . u.

A failure raises ``GradcheckError`` naming the input, the worst element, and the analytic
and numeric values. ``check_backward_hygiene`` checks that backward leaves its inputs,
saved arrays and dy untouched and returns gradients that do not share memory with them (dy
may be handed on, unless the op promises ``fresh_gradients``).
"""
from __future__ import annotations

import numbers

import numpy as np

from minitx import backend
from minitx.autograd.engine import grad as autograd_grad
from minitx.autograd.grad_mode import no_grad
from minitx.autograd.tensor import Tensor
from minitx.ops.shape import concatenate

__all__ = ["gradcheck", "check_backward_hygiene", "GradcheckError"]


class GradcheckError(AssertionError):
    """Analytic and numeric gradients disagree (or backward misbehaves)."""


def _as_leaves(inputs):
    """``inputs`` with each tensor that requires grad but is not a leaf replaced by a leaf holding
    the same array (one per tensor: x passed twice stays one). The gradient is then taken with
    respect to the value itself, and the graph that made it is neither walked nor freed."""
    stand_ins = {id(t): Tensor(t.data).requires_grad_(True) for t in inputs
                 if isinstance(t, Tensor) and t.requires_grad and not t.is_leaf}
    return [stand_ins.get(id(t), t) for t in inputs]


def _checked_inputs(inputs):
    """The positions of the inputs to check, and the inputs (non-leaves as leaves, _as_leaves)."""
    checked = []
    for position, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            if t.dtype != np.float64:
                raise TypeError(f"gradcheck: input {position} has dtype {t.dtype.name}; finite differences need "
                                "float64 inputs (float32 rounding would swamp the difference)")
            checked.append(position)
    if not checked:
        raise ValueError("gradcheck: no input requires grad; pass tensors with requires_grad=True")
    return checked, _as_leaves(inputs)


def _nan_note(inputs, checked) -> str:
    """For a failure's message: the first NaN in a checked input, if one holds any. A difference
    through a NaN is NaN (and so is a correct backward's 0 * NaN beside it), unless the op
    replaces it (nan_to_num, a selection), so such a failure may blame a gradient that is right."""
    for position in checked:
        values = backend.to_numpy(inputs[position].data)
        nan = np.isnan(values)
        if nan.any():
            where = _index(int(np.argmax(nan.reshape(-1))), values.shape)
            return (f"; input {position} holds NaN at element {where}: differences through it are NaN, so check "
                    "the op's values there with its forward")
    return ""


def _evaluate(fn, inputs):
    """f(inputs) as a float64 numpy array, without recording a graph."""
    with no_grad():
        out = fn(*inputs)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    return backend.to_numpy(out.data).astype(np.float64, copy=True)


def _vjp(fn, inputs, checked, cotangent):
    """Analytic r^T J for each checked input. autograd.grad returns the gradients without adding
    into any .grad: not the inputs', nor those of tensors fn uses besides them (a layer's weights)."""
    out = fn(*inputs)
    if not out.requires_grad:
        raise GradcheckError("gradcheck: the output does not depend on any input that requires grad")
    xp = backend.get_array_module(out.data)
    grads = autograd_grad(out, [inputs[i] for i in checked], grad_outputs=xp.asarray(cotangent, dtype=out.dtype),
                          allow_unused=True)
    return [np.zeros(inputs[i].shape) if g is None else backend.to_numpy(g.data).astype(np.float64)
            for i, g in zip(checked, grads)]


def _numeric_along(fn, inputs, position, direction, eps):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for input ``position`` moved along u."""
    t = inputs[position]
    original = t.data  # put back as it was, the same array (a transposed view stays one)
    step = backend.to_device(direction * eps, t.device)
    try:
        t.data = original + step
        plus = _evaluate(fn, inputs)
        t.data = original - step
        minus = _evaluate(fn, inputs)
    finally:
        t.data = original
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN, which fails the comparison
        return (plus - minus) / (2 * eps)


def _index(flat, shape):
    return tuple(int(k) for k in np.unravel_index(flat, shape))


def _fail(position, where, analytic, numeric, tolerance):
    raise GradcheckError(
        f"gradcheck: gradient of input {position} is wrong at {where}: "
        f"analytic {analytic:.10g}, numeric {numeric:.10g}, difference {abs(analytic - numeric):.3g} ({tolerance})")


def _check_options(eps, atol, rtol, full_jacobian_limit, directions):
    for name, value, positive in (("eps", eps, True), ("atol", atol, False), ("rtol", rtol, False)):
        # numbers.Real takes NumPy's floats too; a bool is an int to Python, but no tolerance
        if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value < 0
                or (positive and value == 0)):
            raise ValueError(f"gradcheck: {name} must be a finite number {'> 0' if positive else '>= 0'}, "
                             f"got {value!r}")
    # directions=0 would check nothing of an input past full_jacobian_limit
    for name, value, minimum in (("full_jacobian_limit", full_jacobian_limit, 0), ("directions", directions, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
            raise ValueError(f"gradcheck: {name} must be an int >= {minimum}, got {value!r}")


def _one_output(fn):
    """fn, or, where it returns several tensors, fn with its floating outputs flattened and
    concatenated into one (the others carry no gradient). ``last_ops`` names the ops that made
    those outputs, for the messages (the concatenation's is not fn's)."""
    def concatenated(*inputs):
        out = fn(*inputs)
        if not isinstance(out, (tuple, list)):
            return out
        nested = [k for k, t in enumerate(out) if isinstance(t, (tuple, list, dict))]
        if nested:  # (its tensors would go unchecked)
            raise TypeError(f"gradcheck: fn's outputs must be a flat tuple of tensors; output {nested[0]} is a "
                            f"{type(out[nested[0]]).__name__}: return its tensors beside the others")
        floating = [t for t in out if isinstance(t, Tensor) and backend.is_floating(t.dtype)]
        if not floating:
            raise TypeError(f"gradcheck: none of fn's {len(out)} outputs is a floating tensor: nothing to check")
        concatenated.last_ops = ", ".join(t._ctx.name if t._ctx is not None else "none" for t in floating)
        return concatenate([t.reshape(-1) for t in floating])

    concatenated.last_ops = None
    return concatenated


def _unwritten(fn, inputs):
    """fn's output shape and dtype and the name of its last op, after checking that fn's forward wrote
    into none of the inputs it is differentiated in (those that require grad): every later value
    would be taken at the written values. A buffer an op updates (batch norm's running
    statistics, which require no grad) may change, as PyTorch's gradcheck lets it."""
    before = [(k, t.data.copy()) for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    out = fn(*inputs)  # recorded, for its op's name
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    if not backend.is_floating(out.dtype):
        raise TypeError(f"gradcheck: fn's output is {out.dtype.name}, not a floating tensor: nothing to check")
    name = getattr(fn, "last_ops", None) or (out._ctx.name if out._ctx is not None else "none")
    for k, b in before:
        where = _first_change(inputs[k].data, b)
        if where is not None:
            raise GradcheckError(f"gradcheck: fn's forward wrote into input {k} (fn's last op: {name}): element "
                                 f"{where} was {float(backend.to_numpy(b)[where]):.10g}, is now "
                                 f"{float(backend.to_numpy(inputs[k].data)[where]):.10g}; an op must not change "
                                 "an input it is differentiated in")
    return out.shape, out.dtype, name


def gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-4, full_jacobian_limit=4096, directions=6,
              seed=0) -> bool:
    """Check fn's gradients with respect to every input that requires grad; True or raise.

    fn takes ``inputs`` (tensors and anything else) and returns a Tensor of any shape, or a
    tuple or list of them (as PyTorch's gradcheck takes): its floating outputs are checked as one,
    flattened and concatenated (the same Jacobian, row by row), and an integer or bool output
    (sort's indices) has no gradient to check. No tensor's ``.grad`` changes: the gradients come
    from autograd.grad, as in PyTorch's gradcheck.
    fn's forward must leave its tensor inputs as they were. An input holding NaN is checked too
    (an op that replaces it, nan_to_num, passes); a failure then says where the NaN is. An
    input or output with no elements has nothing to compare; backward still runs once, and its
    gradient must have the input's shape (zeros, for an empty output).
    """
    _check_options(eps, atol, rtol, full_jacobian_limit, directions)
    checked, inputs = _checked_inputs(inputs)
    fn = _one_output(fn)
    rng = np.random.default_rng(seed)
    out_shape, out_dtype, op_name = _unwritten(fn, inputs)
    out_size = int(np.prod(out_shape))
    tolerance = f"atol={atol:g}, rtol={rtol:g}; fn's last op: {op_name}" + _nan_note(inputs, checked)
    if out_dtype != np.float64:  # (the inputs are float64: _checked_inputs)
        tolerance += (f"; fn's output is {out_dtype.name}: its rounding swamps a finite difference, so compute "
                      "it in float64")
    for n, position in enumerate(checked):
        in_shape = inputs[position].shape
        in_size = int(np.prod(in_shape))
        if in_size == 0 or out_size == 0:
            _check_empty(fn, inputs, checked, n, rng.standard_normal(out_shape), atol, op_name)
        elif in_size * out_size <= full_jacobian_limit:
            # analytic Jacobian, row by row: backward of each one-hot output cotangent
            analytic = np.empty((out_size, in_size))
            for j in range(out_size):
                onehot = np.zeros(out_size)
                onehot[j] = 1
                analytic[j] = _vjp(fn, inputs, checked, onehot.reshape(out_shape))[n].reshape(-1)
            numeric = np.empty((out_size, in_size))
            for i in range(in_size):
                e = np.zeros(in_size)
                e[i] = 1
                numeric[:, i] = _numeric_along(fn, inputs, position, e.reshape(in_shape), eps).reshape(-1)
            with np.errstate(invalid="ignore"):  # inf - inf: NaN, which fails below
                bad = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
            if (bad > 0).any() or not np.isfinite(bad).all():  # a NaN on either side fails too
                j, i = np.unravel_index(np.nanargmax(np.where(np.isfinite(bad), bad, np.inf)), bad.shape)
                where = (f"element {_index(i, in_shape)} (output element {_index(j, out_shape)})")
                _fail(position, where, analytic[j, i], numeric[j, i], tolerance)
        else:
            cotangent = rng.standard_normal(out_shape)
            grad = _vjp(fn, inputs, checked, cotangent)[n]
            for k in range(directions):
                u = rng.standard_normal(in_shape)
                with np.errstate(invalid="ignore", over="ignore"):  # inf * 0: NaN, which fails below
                    numeric = float((_numeric_along(fn, inputs, position, u, eps) * cotangent).sum())
                    analytic = float((grad * u).sum())
                scale = np.sqrt(in_size)  # the sum adds in_size terms: tolerance grows with it
                # an infinite numeric makes rtol * |numeric| infinite: it would pass any finite analytic
                if not (np.isfinite(numeric) and np.isfinite(analytic)
                        and abs(analytic - numeric) <= atol * scale + rtol * abs(numeric)):
                    _fail(position, f"random direction {k} (products with a random output cotangent)", analytic,
                          numeric, tolerance)
    return True


def _check_empty(fn, inputs, checked, n, cotangent, atol, op_name):
    """An empty input or output: backward's gradient for input checked[n] must have the input's
    shape, and be zero where the input has elements (r^T J sums no rows when J has none)."""
    position = checked[n]
    shape = inputs[position].shape
    try:
        grad = _vjp(fn, inputs, checked, cotangent)[n]
    except (RuntimeError, ValueError) as error:  # the engine refuses a gradient of the wrong shape
        raise GradcheckError(f"gradcheck: backward failed for input {position} of shape {shape} with an output of "
                             f"shape {cotangent.shape} (fn's last op: {op_name}): {error}") from error
    if grad.shape != shape:
        raise GradcheckError(f"gradcheck: the gradient of input {position} has shape {grad.shape}, expected {shape} "
                             f"(fn's last op: {op_name})")
    if grad.size and not (np.abs(grad) <= atol).all():
        i = int(np.argmax(np.where(np.abs(grad) <= atol, -np.inf, np.nan_to_num(np.abs(grad), nan=np.inf))))
        _fail(position, f"element {_index(i, shape)} (the output is empty)", grad.reshape(-1)[i], 0.0,
              f"atol={atol:g}; fn's last op: {op_name}")


def _arrays_of(values):
    return [v for v in values if v is not None and hasattr(v, "shape") and hasattr(v, "dtype")]


def _first_change(now, before):
    """Where ``now`` first differs from its copy ``before`` (an index tuple), or None. NaN
    equals NaN in every float dtype (bfloat16's NumPy kind is 'V', not 'f')."""
    now, before = backend.to_numpy(now), backend.to_numpy(before)
    same = now == before
    if backend.is_floating(now.dtype):
        same |= np.isnan(now) & np.isnan(before)
    if same.all():
        return None
    return _index(int(np.argmin(same.reshape(-1))), now.shape)


def check_backward_hygiene(fn, *inputs, seed=0) -> bool:
    """Run fn once, then its last op's backward directly, and check that backward

    * does not modify its inputs, its saved arrays or the incoming gradient dy;
    * returns gradients that share no memory with the saved arrays or the inputs;
    * when the op declares ``fresh_gradients``, returns gradients that share memory neither
      with dy nor with each other (the engine adds other gradients into them in place).

    Where fn returns several tensors, the last op of each floating one is checked.
    """
    out = fn(*inputs)
    outs = [t for t in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(t, Tensor) and backend.is_floating(t.dtype)]
    ops = {id(t._ctx): (t._ctx, t) for t in outs if t._ctx is not None}
    if not ops:
        raise ValueError("check_backward_hygiene: the output was not produced by an op that records a graph")
    for k, (op, made) in enumerate(ops.values()):
        _check_hygiene(op, made, seed + k)
    return True


def _check_hygiene(op, out, seed) -> None:
    """check_backward_hygiene of one op, whose output is ``out``."""
    xp = backend.get_array_module(out.data)
    dy = xp.asarray(np.random.default_rng(seed).standard_normal(out.shape), dtype=out.dtype)
    saved, op_inputs = _arrays_of(op.saved), [t.data for t in op.inputs]
    watched = ([(f"saved array {k}", w) for k, w in enumerate(saved)]
               + [(f"input {k}", w) for k, w in enumerate(op_inputs)] + [("dy", dy)])
    before = [w.copy() for _, w in watched]
    try:
        with np.errstate(all="ignore"):  # as the engine runs a backward (NaN and inf are the answer there)
            grads = op.backward(dy)
    except ValueError as error:  # a write into a saved array, which the graph keeps read-only
        if "read-only" not in str(error):
            raise
        raise GradcheckError(f"{op.name}.backward modified an input, a saved array or dy in place "
                             f"({error})") from error
    grads = grads if isinstance(grads, tuple) else (grads,)
    for (what, w), b in zip(watched, before):
        where = _first_change(w, b)
        if where is not None:
            raise GradcheckError(f"{op.name}.backward modified an input, a saved array or dy in place: {what} "
                                 f"changed at {where} (check_backward_hygiene)")
    returned = [(k, g) for k, g in enumerate(grads) if _arrays_of([g])]
    shared = saved + op_inputs
    for k, g in returned:
        for w in shared:
            if xp.may_share_memory(g, w):
                raise GradcheckError(f"{op.name}.backward: gradient {k} shares memory with a saved array or input")
    if op.fresh_gradients:  # the engine adds into such a gradient in place: dy or a twin would be written too
        for k, g in returned:
            for other, w in [("dy", dy)] + [(f"gradient {j}", h) for j, h in returned if j < k]:
                if xp.may_share_memory(g, w):
                    raise GradcheckError(f"{op.name}.backward: gradient {k} shares memory with {other}, but "
                                         f"{op.name} declares fresh_gradients (every gradient a new array); "
                                         "check_backward_hygiene")
