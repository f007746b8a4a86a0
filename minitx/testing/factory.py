"""A declarative op test: say what the op takes and what it should equal; get a hypothesis test.

    test_softmax = op_test(F.softmax, arg(), numpy=np_softmax, torch="torch.softmax",
                           kwargs={"axis": lambda shape: st.integers(-len(shape), len(shape) - 1)},
                           torch_kwargs=lambda kw: {"dim": kw["axis"]})

Each example draws the shapes, the arguments (``arg``: float64 leaves by default) and the
keyword arguments, then checks, in this order:

1. forward against the NumPy reference (``check_forward``: shapes, values, NaN matches NaN);
   each floating output has the float inputs' dtype; an integer or bool output (argmax,
   comparisons) must be one in the references too, and an op with no floating output skips the
   gradient checks;
2. forward and gradients against the PyTorch reference: both run in float64 on the same values
   and take one random output cotangent; an input without a gradient counts as zeros;
3. ``check_gradients`` (finite differences, backward hygiene, and subsets of the inputs
   requiring grad), skipped for examples holding edge values (inf, NaN: no finite difference)
   or ties (a step would cross them); a case with edges or ties needs a NumPy or PyTorch
   reference, or nothing would check the op on those examples. Only a PyTorch reference checks
   the gradients there: with a NumPy reference alone, a backward wrong only at an edge value
   or a tie (NaN at inf, the whole dy to both sides of a tie) passes.

``op_case`` returns the check as a callable of hypothesis' ``data``, for tables of ops under
``pytest.mark.parametrize``; ``op_test`` wraps one case as a test function for pytest to collect.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from minitx import backend
from minitx.autograd.tensor import Tensor, tensor
from minitx.ops.shape import concatenate
from minitx.testing import strategies as mst
from minitx.testing.checks import _as_numpy, _compare, check_forward, check_gradients, check_low_precision

__all__ = ["arg", "op_case", "op_test", "Arg", "OpCase"]

#: the shape every ``arg()`` without its own shape shares, unless op_case says otherwise
DEFAULT_SHAPES = mst.shapes(max_dims=3, max_side=4)


@dataclass(frozen=True)
class Arg:
    """How to draw one positional argument of the op (made by ``arg``)."""

    shape: object = None
    min_value: float = -3.0
    max_value: float = 3.0
    away_from: tuple = ()
    margin: float = 0.05
    distinct: bool = False
    ties: bool = False
    edges: tuple = ()
    edge_probability: float = 0.25
    requires_grad: bool = True
    transposed: object = None
    strategy: object = None
    dtype: str = "float64"


def arg(shape=None, *, min_value=-3.0, max_value=3.0, away_from=(), margin=0.05, distinct=False, ties=False,
        edges=(), edge_probability=0.25, requires_grad=True, transposed=None, strategy=None, dtype="float64") -> Arg:
    """One positional argument of the op under test.

    shape: None (the shape op_case draws for all such arguments, or each its own broadcastable
    one), a tuple or int, a strategy of shapes, or a callable of the earlier arguments' shapes
    returning one of those (``lambda x: x[-1:]`` for a layer-norm weight).
    Values: float64 in [min_value, max_value], ``away_from`` kinks by ``margin``, ``distinct``
    (no ties) as in strategies.float_arrays; ``ties`` rounds them to multiples of 0.5 in about
    half the examples, so equal values are common (max, maximum), and draws the others uniformly
    (NumPy, from a drawn seed), for the gradient checks those rounded examples skip; they skip an
    example where two values of the ``ties`` arguments lie within 4 eps of each other too (a step
    would cross the tie); ``edges`` (say (0.0, inf, -inf, nan)) replace each value with
    probability ``edge_probability``. ``requires_grad`` and ``transposed`` as in
    strategies.tensors. dtype: "float64", or "float32" or "float16" (the values drawn as above,
    then rounded to it): finite differences need float64, so such a case takes
    ``gradcheck=False`` and the tolerances of its precision (rtol, grad_rtol).
    strategy: anything else (integer targets, masks, a Python value), as a strategy or a callable
    of the earlier arguments' shapes returning one; a drawn NumPy array becomes a tensor of its
    dtype that requires no grad, other values are passed as they are.
    """
    mst._float_plan("arg", min_value, max_value, away_from, margin, distinct)  # checks them now
    if not (shape is None or callable(shape) or isinstance(shape, SearchStrategy) or _is_shape(shape)):
        raise ValueError(f"arg: shape must be None, a shape (an int or a tuple of ints >= 0), a strategy of shapes "
                         f"or a callable of the earlier arguments' shapes, got {shape!r}")
    if not 0 <= edge_probability <= 1:
        raise ValueError(f"arg: edge_probability must be in [0, 1], got {edge_probability!r}")
    if dtype not in ("float64", "float32", "float16"):  # (bfloat16: OpCase.low_precision, against float32)
        raise ValueError(f"arg: dtype must be 'float64', 'float32' or 'float16', got {dtype!r}")
    return Arg(shape, min_value, max_value, tuple(away_from), margin, distinct, ties, tuple(edges),
               edge_probability, requires_grad, transposed, strategy, dtype)


def _is_shape(shape) -> bool:
    """Whether ``shape`` is an int or a tuple or list of ints, none below 0 (not bools)."""
    sides = (shape,) if isinstance(shape, int) else shape if isinstance(shape, (tuple, list)) else None
    return sides is not None and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0
                                     for n in sides)


def _resolve(spec, earlier_shapes):
    return spec(*earlier_shapes) if callable(spec) and not isinstance(spec, SearchStrategy) else spec


def _draw_shape(data, spec, earlier_shapes, label):
    shape = _resolve(spec, earlier_shapes)
    if isinstance(shape, SearchStrategy):
        shape = data.draw(shape, label=label)
    if not _is_shape(shape):
        raise ValueError(f"op_case: the {label} must be an int or a tuple of ints >= 0, got {shape!r}")
    return (int(shape),) if isinstance(shape, int) else tuple(int(n) for n in shape)


def _check_callables(op, args, numpy, torch, torch_kwargs, kwargs):
    """op_case's arguments checked when the case is made: a wrong one would fail at the first draw,
    inside hypothesis, in words that name neither op_case nor the argument."""
    if not callable(op):
        raise TypeError(f"op_case: op must be a callable of tensors, got {type(op).__name__}")
    if numpy is not None and not callable(numpy):
        raise TypeError(f"op_case: numpy must be a callable of NumPy arrays, got {type(numpy).__name__}")
    if torch is not None and not (callable(torch) or isinstance(torch, str)):
        raise TypeError(f"op_case: torch must be a callable of torch tensors or a dotted name (\"torch.exp\"), got "
                        f"{type(torch).__name__}")
    if torch_kwargs is not None and not callable(torch_kwargs):
        raise TypeError(f"op_case: torch_kwargs must be a callable taking the drawn keyword arguments and returning "
                        f"torch's, got {type(torch_kwargs).__name__}")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise TypeError(f"op_case: kwargs must be a dict of name -> value, strategy or callable of the shapes, got "
                        f"{type(kwargs).__name__}")
    # a shape or strategy given as a callable takes the shapes of the arguments before it
    for k, a in enumerate(args):
        for what in ("shape", "strategy"):
            spec = getattr(a, what, None) if isinstance(a, Arg) else None
            if callable(spec) and not isinstance(spec, SearchStrategy):
                _check_arity(spec, k, f"the {what} of argument {k}")


def _check_arity(spec, k, what):
    """A callable of the k earlier arguments' shapes must take k positional arguments."""
    try:
        signature = inspect.signature(spec)
    except (TypeError, ValueError):  # (a builtin without a signature: left to the call)
        return
    try:
        signature.bind(*range(k))
    except TypeError:
        raise TypeError(f"op_case: {what} is a callable of the shapes of the {k} argument(s) before it, so it "
                        f"must take {k} positional argument(s); {getattr(spec, '__name__', spec)}{signature} "
                        "does not") from None


@st.composite
def _values(draw, a: Arg, shape, position=0):
    """A float64 tensor for ``a``, and whether it holds an edge value or a tie."""
    t = draw(mst.tensors(shape, requires_grad=False, transposed=a.transposed, min_value=a.min_value,
                         max_value=a.max_value, away_from=a.away_from, margin=a.margin, distinct=a.distinct))
    array, special = t.data, False
    # multiples of 0.5 inside the bounds, many equal values, in about half the examples: the others
    # are plain draws, on which check_gradients runs (it skips every example that may hold a tie)
    if a.ties and draw(st.booleans()):
        special = True
        array = np.clip(np.round(array * 2) / 2, a.min_value, a.max_value)
    elif a.ties and array.size and not a.distinct:
        # hypothesis fills most of an array with one value, and draws 0 beside 1e-178: nearly every
        # plain draw of a few elements would hold a tie. Uniform NumPy values (from a drawn seed) hold
        # none, but for the rare pair op_case then skips (_holds_a_tie). The argument's position goes
        # into the seed: hypothesis draws the same seed (0) for a and b, which would make them equal
        rng = np.random.default_rng([draw(st.integers(0, 2**32 - 1)), position])
        array = np.array(array, order="K")  # written in place: a transposed view stays one
        array[...] = _away_from(rng.uniform(a.min_value, a.max_value, array.shape), a)
    # NumPy picks the values to replace, from a drawn seed: hypothesis favours edge cases over uniform draws
    if a.edges and array.size:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        replace = rng.random(array.shape) < a.edge_probability
        picks = np.asarray(a.edges, dtype=np.float64)[rng.integers(0, len(a.edges), array.shape)]
        # written in place: np.where would return a C-contiguous array, and a transposed view must stay one
        array = np.array(array, order="K")  # (a 0-d result of np.round is a NumPy scalar: an array again)
        array[replace] = picks[replace]
        special = special or bool(replace.any())
    made = Tensor(array.astype(a.dtype, order="K", copy=False))  # (order K: a transposed view stays one)
    return (made.requires_grad_(True) if a.requires_grad else made), special


def _away_from(values, a: Arg):
    """values with each one nearer than a.margin to a point of a.away_from moved to the nearest
    value in range that is far enough, as strategies.float_arrays moves them."""
    far = mst._far_enough(values, a.min_value, a.max_value, a.away_from, a.margin)
    if not far.all():
        plan = mst._float_plan("arg", a.min_value, a.max_value, a.away_from, a.margin, False)
        values[~far] = plan[np.abs(values[~far][:, None] - plan[None, :]).argmin(axis=1)]
    return values


def _holds_a_tie(arrays, within):
    """Whether the values of the ``ties`` arguments, taken together, hold two within ``within`` of
    each other: one argument's (max) or two's (maximum(a, b)), where a step of gradcheck's eps
    could cross from one side of the tie to the other."""
    values = np.sort(np.concatenate(arrays)) if arrays else np.empty(0)
    return bool((np.diff(values) <= within).any())


class OpCase:
    """One op's checks as a callable of hypothesis' ``data`` (see op_case)."""

    def __init__(self, op, args, numpy, torch, torch_kwargs, kwargs, shapes, broadcast, gradcheck, rtol, atol,
                 grad_rtol, grad_atol, gradcheck_kwargs):
        _check_callables(op, args, numpy, torch, torch_kwargs, kwargs)
        narrow = [k for k, a in enumerate(args) if isinstance(a, Arg) and a.dtype != "float64"]
        if gradcheck and narrow:
            raise ValueError(f"op_case: argument {narrow[0]} is {args[narrow[0]].dtype}, and finite differences need "
                             "float64: give gradcheck=False (a torch reference still checks the gradients)")
        if numpy is None and torch is None and not gradcheck:
            raise ValueError("op_case: give a numpy or torch reference, or gradcheck=True: nothing would be checked")
        self.op, self.args, self.numpy, self.torch, self.torch_kwargs = op, args, numpy, torch, torch_kwargs
        self.kwargs, self.shapes, self.broadcast, self.gradcheck = kwargs or {}, shapes, broadcast, gradcheck
        self.rtol, self.atol, self.grad_rtol, self.grad_atol = rtol, atol, grad_rtol, grad_atol
        self.gradcheck_kwargs = gradcheck_kwargs or {}
        if numpy is None and torch is None and any(isinstance(a, Arg) and (a.edges or a.ties) for a in args):
            raise ValueError("op_case: examples with edges or ties skip the gradient checks; give a numpy or torch "
                             "reference, or nothing would check the op on them")
        self.name = getattr(op, "__name__", repr(op))  # for the failures

    def draw(self, data):
        """(inputs, keyword arguments, whether some value is an edge value or a tie)."""
        shared = [a for a in self.args if isinstance(a, Arg) and a.strategy is None and a.shape is None]
        if self.broadcast:
            strategy = mst.broadcastable_shapes(len(shared), max_dims=3, max_side=4) if self.shapes is None \
                else self.shapes
            shapes_drawn = data.draw(strategy, label="shapes") if shared else ()
            if shared and not (isinstance(shapes_drawn, (tuple, list)) and len(shapes_drawn) == len(shared)
                               and all(isinstance(s, (tuple, list)) and _is_shape(s) for s in shapes_drawn)):
                raise ValueError(f"op_case: with broadcast=True, shapes must draw a tuple of {len(shared)} shapes "
                                 f"(one per argument without its own shape), got {shapes_drawn!r}")
            drawn = iter(shapes_drawn)
        else:
            one = data.draw(DEFAULT_SHAPES if self.shapes is None else self.shapes, label="shape") if shared else None
        inputs, shapes, special, tied = [], [], False, []
        for k, a in enumerate(self.args):
            if not isinstance(a, Arg):
                value = a  # a constant
            elif a.strategy is not None:
                value = data.draw(_resolve(a.strategy, shapes), label=f"argument {k}")
                if isinstance(value, np.ndarray):
                    value = tensor(value)
            else:
                shape = (next(drawn) if self.broadcast else one) if a.shape is None else \
                    _draw_shape(data, a.shape, shapes, f"shape of argument {k}")
                value, edge = data.draw(_values(a, tuple(shape), k), label=f"argument {k}")
                special = special or edge
                if a.ties:
                    tied.append(backend.to_numpy(value.data).reshape(-1))
            inputs.append(value)
            shapes.append(tuple(value.shape) if hasattr(value, "shape") else ())
        # the examples ties leaves unrounded are as hypothesis drew them, and it draws equal values
        # often (0.0 in a and in b): a finite-difference step would cross such a tie too
        special = special or _holds_a_tie(tied, 4 * self.gradcheck_kwargs.get("eps", 1e-6))
        kwargs = {}
        for name, spec in self.kwargs.items():
            value = _resolve(spec, shapes)
            kwargs[name] = data.draw(value, label=name) if isinstance(value, SearchStrategy) else value
        return inputs, kwargs, special

    def __call__(self, data):
        inputs, kwargs, special = self.draw(data)

        def fn(*ts):
            return self.op(*ts, **kwargs)

        out, reference_dtypes = None, []  # reference_dtypes: one list per reference, a dtype per output
        if self.numpy is not None:
            results = []  # the reference's result, for its dtypes
            copies = {name: _as_numpy(value) for name, value in kwargs.items()}  # (tensors too, as the inputs)

            def reference(*arrays):
                results.append(self.numpy(*arrays, **copies))
                return results[-1]

            out = check_forward(fn, reference, *inputs, rtol=self.rtol, atol=self.atol)
            several = isinstance(out, (tuple, list))
            reference_dtypes.append([np.asarray(r).dtype for r in (results[0] if several else [results[0]])])
        if self.torch is not None:
            out, torch_dtypes = self._against_torch(fn, inputs, kwargs)
            reference_dtypes.append(torch_dtypes)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for k, o in enumerate(outs):
            if isinstance(o, Tensor):
                what = f"output {k}" if len(outs) > 1 else "output"
                self._check_dtype(o, what, inputs, [dtypes[k] for dtypes in reference_dtypes])
        if not any(isinstance(o, Tensor) and backend.is_floating(o.dtype) for o in outs):
            return  # integer or bool outputs only (argmax, a comparison): no gradient to check
        if self.gradcheck and not special and any(getattr(t, "requires_grad", False) for t in inputs):
            check_gradients(fn, *inputs, **self.gradcheck_kwargs)

    def _check_dtype(self, out, what, inputs, reference_dtypes):
        """A floating output has the float inputs' dtype where they share one, and is floating only
        where the references return floats; an integer or bool output is one only where the
        references return one of the same kind (as argmax and comparisons do)."""
        floats = {t.dtype for t in inputs if isinstance(t, Tensor) and backend.is_floating(t.dtype)}
        if backend.is_floating(out.dtype):
            if len(floats) == 1 and out.dtype not in floats:
                (dtype,) = floats
                raise AssertionError(f"op_case of {self.name}: {what} dtype {out.dtype.name} from {dtype.name} "
                                     f"inputs, expected {dtype.name}")
            for dtype in reference_dtypes:
                if dtype.kind in "biu":  # (a comparison returning 0.0 and 1.0 where its references say bool)
                    raise AssertionError(f"op_case of {self.name}: {what} dtype {out.dtype.name}, but the reference "
                                         f"returns {dtype.name}")
            return
        kind = "bool" if out.dtype == np.bool_ else "integer"
        for dtype in reference_dtypes:
            if ("bool" if dtype == np.bool_ else "integer" if dtype.kind in "iu" else dtype.name) != kind:
                raise AssertionError(f"op_case of {self.name}: {what} dtype {out.dtype.name}, but the reference "
                                     f"returns {dtype.name}")

    def on_device(self, data, device="cuda", dtype=None, rtol=1e-9, atol=1e-12):
        """The op on ``device`` against the CPU, on the same drawn inputs: each output's dtype,
        device and values, and the gradients of one random cotangent (as in the torch check),
        within rtol/atol, NaN where the CPU's is NaN. What a device path computes otherwise than
        NumPy's (another libm, another summation order: hence the looser default tolerances),
        or an op that left the device, shows here. Tensors among the keyword arguments move too;
        ``dtype`` (say "float32") casts the floating inputs first, on both sides."""
        inputs, kwargs, _ = self.draw(data)
        inputs = [_moved(t, "cpu", dtype) for t in inputs]
        kwargs = {name: _moved(v, "cpu", dtype) for name, v in kwargs.items()}
        here = _outputs_and_gradients(self.op, inputs, kwargs)
        moved = [_moved(t, device) for t in inputs]
        there = _outputs_and_gradients(self.op, moved, {name: _moved(v, device) for name, v in kwargs.items()})
        check = f"op_case of {self.name} on {device}, against the CPU"
        (outs, grads), (outs_there, grads_there) = here, there
        for k, (o, d) in enumerate(zip(outs, outs_there)):
            what = f"output {k}" if len(outs) > 1 else "the output"
            if d.device != backend.check_device(device) or d.dtype != o.dtype:
                raise AssertionError(f"{check}: {what} is {d.dtype.name} on {d.device}, expected {o.dtype.name} on "
                                     f"{backend.check_device(device)}")
            _compare(what, backend.to_numpy(d.data), backend.to_numpy(o.data), rtol, atol, check=check)
        for k, (g, h) in enumerate(zip(grads, grads_there)):
            if g is not None:
                _compare(f"the gradient of argument {k}", h, g, rtol, atol, check=f"{check}, backward")

    def low_precision(self, data, dtype="bfloat16", ulps=4, device=None):
        """The op on drawn inputs rounded to ``dtype`` against float32 on the same values
        (check_low_precision, on ``device``); edge values (inf, NaN) included, they must land the same."""
        inputs, kwargs, _ = self.draw(data)
        kwargs = {name: _moved(v, device) if device is not None else v for name, v in kwargs.items()}
        # (None, as __call__ and on_device: a test of hypothesis' that returns a value fails its health check)
        check_low_precision(lambda *ts: self.op(*ts, **kwargs), *inputs, dtype=dtype, ulps=ulps, device=device)

    def _against_torch(self, fn, inputs, kwargs):
        """Forward and gradients against the torch reference; (fn's output, torch's dtypes). An op
        returning several tensors is compared output by output, and its floating outputs take the
        gradients as one, flattened and concatenated (as check_gradients takes them)."""
        torch = _import_torch()
        reference = _torch_callable(torch, self.torch)
        theirs = [torch.tensor(_as_numpy(t), requires_grad=t.requires_grad) if isinstance(t, Tensor) else t
                  for t in inputs]
        # a tensor among the keyword arguments goes over as a constant: only the inputs' gradients are checked
        kwargs = {name: torch.tensor(_as_numpy(v)) if isinstance(v, Tensor) else v for name, v in kwargs.items()}
        torch_kwargs = self.torch_kwargs(kwargs) if self.torch_kwargs is not None else kwargs
        expected = reference(*theirs, **torch_kwargs)
        for t in inputs:
            if isinstance(t, Tensor):
                t.grad = None
        out = fn(*inputs)
        several = isinstance(out, (tuple, list))
        outs, expecteds = (list(out), list(expected)) if several else ([out], [expected])
        check = f"op_case of {self.name}"
        names = [o._ctx.name for o in outs if isinstance(o, Tensor) and o._ctx is not None]
        if names and names != [self.name]:  # a lambda's name says little
            check += f" (last op: {', '.join(dict.fromkeys(names))})"
        if len(outs) != len(expecteds):
            raise AssertionError(f"{check}, against torch: fn returned {len(outs)} outputs, the reference "
                                 f"{len(expecteds)}")
        for k, (o, e) in enumerate(zip(outs, expecteds)):
            _compare(f"output {k}" if several else "the output", backend.to_numpy(o.data), e.detach().numpy(),
                     self.rtol, self.atol, check=f"{check}, against torch")
        torch_dtypes = [e.detach().numpy().dtype for e in expecteds]
        floating = [k for k, o in enumerate(outs) if backend.is_floating(o.dtype)]
        if not floating:
            return out, torch_dtypes
        if several:  # one cotangent over the floating outputs: their concatenation, on both sides
            out_cat = concatenate([outs[k].reshape(-1) for k in floating])
            expected_cat = torch.cat([expecteds[k].reshape(-1) for k in floating])
        else:
            out_cat, expected_cat = out, expected
        if not (out_cat.requires_grad or expected_cat.requires_grad):
            return out, torch_dtypes
        cotangent = np.random.default_rng(0).standard_normal(out_cat.shape)
        if out_cat.requires_grad:
            out_cat.backward(cotangent)
        if expected_cat.requires_grad:
            expected_cat.backward(torch.from_numpy(cotangent))
        for k, (ours, t) in enumerate(zip(inputs, theirs)):
            if isinstance(ours, Tensor) and ours.requires_grad:
                mine = np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy()
                other = np.zeros(ours.shape) if t.grad is None else t.grad.numpy()
                _compare(f"the gradient of argument {k}", mine, other, self.grad_rtol, self.grad_atol,
                         check=f"{check}, backward against torch")
        return out, torch_dtypes


def _moved(value, device, dtype=None):
    """A tensor as a fresh leaf on ``device`` (requiring grad as it did), cast to ``dtype`` if it
    is floating and one is given; anything else as it is."""
    if not isinstance(value, Tensor):
        return value
    cast = dtype if dtype is not None and backend.is_floating(value.dtype) else None
    made = value.detach().to(device, cast, copy=True)
    return made.requires_grad_(True) if value.requires_grad else made


def _outputs_and_gradients(op, inputs, kwargs):
    """(op's outputs as a list, each input's gradient as a NumPy array, None for an input that
    does not require grad): one random cotangent over the floating outputs flattened and
    concatenated, the same on every device."""
    out = op(*inputs, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    floating = [o.reshape(-1) for o in outs if backend.is_floating(o.dtype) and o.requires_grad]
    if floating:
        joined = concatenate(floating) if len(floating) > 1 else floating[0]
        cotangent = np.random.default_rng(0).standard_normal(joined.shape).astype(joined.dtype)
        joined.backward(tensor(cotangent).to(joined.device))
    grads = [None if not (isinstance(t, Tensor) and t.requires_grad) else
             np.zeros(t.shape) if t.grad is None else backend.to_numpy(t.grad.data) for t in inputs]
    return outs, grads


def _import_torch():
    try:
        return importlib.import_module("torch")
    except ImportError:
        import pytest

        pytest.skip("the torch reference needs PyTorch (pip install torch)")


def _torch_callable(torch, reference):
    """A callable, or a dotted name under torch ("torch.nn.functional.gelu") looked up now."""
    if callable(reference):
        return reference
    target = torch
    for part in reference.split(".")[1 if reference.startswith("torch.") else 0:]:
        target = getattr(target, part)
    return target


def op_case(op, *args, numpy=None, torch=None, torch_kwargs=None, kwargs=None, shapes=None, broadcast=False,
            gradcheck=True, rtol=1e-10, atol=1e-12, grad_rtol=1e-9, grad_atol=1e-11, gradcheck_kwargs=None) -> OpCase:
    """The checks of ``op(*args, **kwargs)`` as a callable ``case(data)`` (data: ``st.data()``).

    op: a callable of tensors (F.exp, lambda x, w: F.linear(x, w), ...). args: ``arg(...)``
    specs, or constants passed as they are. numpy: reference on NumPy copies of the inputs, with
    the same keyword arguments. torch: a callable of torch tensors or a dotted name ("torch.exp");
    ``torch_kwargs`` maps the drawn keyword arguments to torch's (axis -> dim). kwargs: name ->
    a value, a strategy, or a callable of the arguments' shapes returning a strategy. shapes: the
    strategy for the shared shape (default: up to 3 axes of 1..4), or with ``broadcast=True`` for
    the tuple of broadcastable shapes. gradcheck: run check_gradients (with gradcheck_kwargs).
    rtol/atol: forward tolerances; grad_rtol/grad_atol: gradients against torch.
    """
    return OpCase(op, args, numpy, torch, torch_kwargs, kwargs, shapes, broadcast, gradcheck, rtol, atol,
                  grad_rtol, grad_atol, gradcheck_kwargs)


def op_test(op, *args, settings=None, **options):
    """``op_case(op, *args, **options)`` as a hypothesis test function: assign it to a ``test_``
    name in a test module and pytest runs it. It runs under the active settings profile without
    a deadline (finite differences, and torch's first calls, overrun hypothesis' 200 ms), unless
    ``settings`` (a ``hypothesis.settings``) gives a deadline other than the profile's. Each
    op_test has its own key in hypothesis' example database (and its own derandomized draws),
    made from the op and its references."""
    case = op_case(op, *args, **options)

    @given(data=st.data())
    def test(data):
        case(data)

    test.__doc__ = f"op_test of {case.name}"
    # every op_test wraps this one function: without its own digest, hypothesis would replay one op_test's
    # failures in every other, and draw the same examples for all of them under derandomize
    test.hypothesis.inner_test._hypothesis_internal_add_digest = _digest(op, options.get("numpy"),
                                                                          options.get("torch"))
    if settings is None or settings.deadline == hypothesis_settings.default.deadline:
        settings = hypothesis_settings(settings, deadline=None)
    return settings(test)


def _digest(*things) -> bytes:
    """A key for the callables and names in ``things`` that is the same in every process: each
    one's source where Python has it (a lambda's line), else its qualified name."""
    hasher = hashlib.sha256()
    for thing in things:
        try:
            text = inspect.getsource(thing)
        except (OSError, TypeError):
            text = thing if isinstance(thing, str) else \
                f"{getattr(thing, '__module__', '')}.{getattr(thing, '__qualname__', type(thing).__qualname__)}"
        hasher.update(text.encode() + b"\0")
    return hasher.digest()
