"""One-call checks for op tests: gradients (gradcheck + hygiene) and forward against NumPy.

``check_gradients`` is what an op test wants after drawing inputs: finite differences agree
with backward, backward leaves its inputs and saved arrays alone, and with only some inputs
requiring grad those get the same gradients. No ``.grad`` changes: the gradients come from
autograd.grad, with respect to the inputs only. ``check_forward``
compares an op's output with a NumPy reference run on the same values, and says where they
differ the most. ``leaf`` makes the float64 tensors both need.
"""
from __future__ import annotations

import numbers

import numpy as np

from minitx import backend
from minitx.autograd.engine import grad as autograd_grad
from minitx.autograd.tensor import Tensor, tensor
from minitx.testing.gradcheck import GradcheckError, check_backward_hygiene, gradcheck

__all__ = ["check_gradients", "check_gradient_subsets", "check_forward", "check_low_precision", "leaf"]


def leaf(data, requires_grad=True) -> Tensor:
    """A float64 leaf tensor holding a copy of ``data`` (numbers, lists or arrays), as gradcheck needs."""
    from minitx.autograd.tensor import tensor

    return tensor(np.asarray(data, dtype=np.float64), requires_grad=requires_grad)


def check_gradients(fn, *inputs, **gradcheck_kwargs) -> bool:
    """gradcheck, check_backward_hygiene and check_gradient_subsets on fn(*inputs): True or raise.

    Raises GradcheckError when backward disagrees with finite differences; when the backward of
    fn's last op modifies its inputs, its saved arrays or dy in place, or returns gradients that
    share memory with them; or when, with only some inputs requiring grad, those inputs get no
    gradient or a different one. ``seed`` (when given) is used by all three. fn may return a
    tensor or several (a tuple or list: each floating one is checked).
    """
    seed = gradcheck_kwargs.get("seed", 0)
    try:
        gradcheck(fn, *inputs, **gradcheck_kwargs)
    except ValueError as error:  # the engine's: a backward wrote into an array the graph holds read-only
        if "read-only" not in str(error):
            raise
        check_backward_hygiene(fn, *inputs, seed=seed)  # a GradcheckError, if it was fn's last op
        raise GradcheckError(f"check_gradients: {error}") from error
    check_backward_hygiene(fn, *inputs, seed=seed)
    check_gradient_subsets(fn, *inputs, seed=seed)
    return True


def _gradients(fn, inputs, positions, cotangent):
    """{position: gradient array, or None where none flowed} of fn(*inputs) with respect to the
    inputs at ``positions``, for one output cotangent. autograd.grad adds into no ``.grad``."""
    out = fn(*inputs)
    if not out.requires_grad:
        return dict.fromkeys(positions)
    grads = autograd_grad(out, [inputs[i] for i in positions],
                          grad_outputs=backend.get_array_module(out.data).asarray(cotangent, dtype=out.dtype),
                          allow_unused=True)
    return {i: None if g is None else backend.to_numpy(g.data).copy() for i, g in zip(positions, grads)}


def _subsets(positions):
    """Every proper non-empty subset for up to 3 inputs; each one alone and each one left out beyond."""
    from itertools import combinations

    if len(positions) <= 3:
        return [c for size in range(1, len(positions)) for c in combinations(positions, size)]
    alone = [(i,) for i in positions]
    return alone + [tuple(j for j in positions if j != i) for i in positions]


def check_gradient_subsets(fn, *inputs, seed=0, rtol=1e-9, atol=1e-12) -> bool:
    """With only a subset of the inputs requiring grad, those get a gradient, equal to the one
    they get when all do; True or raise GradcheckError.

    A backward may skip the gradients nobody needs (``needs_input_grad``); this catches one that
    skips a needed one, or mixes them up (say dw computed when b needs it). The tensors that
    require grad are the candidates (one that is not a leaf stands in as a leaf of its value), a
    tensor passed at several positions counted once (it requires grad at all of them or none);
    each subset runs fn forward and backward once, with one random output cotangent (from
    ``seed``) shared by all runs. Several outputs are checked as one, their floating ones
    flattened and concatenated (as gradcheck does).
    """
    from minitx.testing.gradcheck import _as_leaves, _evaluate, _one_output

    inputs, fn = _as_leaves(inputs), _one_output(fn)
    positions = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    places = {}  # id(tensor) -> its positions
    for i in positions:
        places.setdefault(id(inputs[i]), []).append(i)
    tensors = list(places.values())
    if len(tensors) < 2:
        return True

    cotangent = np.random.default_rng(seed).standard_normal(_evaluate(fn, inputs).shape)
    full = _gradients(fn, inputs, positions, cotangent)
    for subset in _subsets(range(len(tensors))):
        chosen = [i for k in subset for i in tensors[k]]
        for k in range(len(tensors)):
            if k not in subset:
                inputs[tensors[k][0]].requires_grad_(False)
        try:
            got = _gradients(fn, inputs, chosen, cotangent)
        finally:
            for k in range(len(tensors)):
                inputs[tensors[k][0]].requires_grad_(True)
        where = f"check_gradient_subsets: with only input(s) {chosen} requiring grad"
        for i in chosen:
            if (got[i] is None) != (full[i] is None):
                raise GradcheckError(f"{where}, input {i} received no gradient (it gets one when all inputs "
                                     "require grad)")
            if got[i] is not None:
                close = np.isclose(got[i], full[i], rtol=rtol, atol=atol, equal_nan=True)
                if not close.all():
                    k = np.unravel_index(int(np.argmin(close)), close.shape)
                    raise GradcheckError(f"{where}, input {i}'s gradient differs from the one with all inputs "
                                         f"requiring grad at {tuple(int(n) for n in k)}: {got[i][k]:.10g} "
                                         f"instead of {full[i][k]:.10g}")
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
    with both values; or naming an input that requires grad which fn wrote into (the copies are
    taken before fn runs; a buffer an op updates, as batch norm's running statistics, may change).
    """
    from minitx.testing.gradcheck import _first_change

    arrays = [_as_numpy(x) for x in inputs]
    out = fn(*inputs)
    for k, (x, a) in enumerate(zip(inputs, arrays)):
        where = _first_change(x.data, a) if isinstance(x, Tensor) and x.requires_grad else None
        if where is not None:
            raise AssertionError(f"check_forward: fn wrote into input {k}: element {where} was {float(a[where]):.10g}, "
                                 f"is now {float(backend.to_numpy(x.data)[where]):.10g}; an op must not change an "
                                 "input it is differentiated in")
    expected = reference(*arrays)
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


def _compare(name, actual, expected, rtol, atol, check="check_forward"):
    """Raise AssertionError, beginning with ``check``, where actual and expected differ."""
    if actual.shape != expected.shape:
        raise AssertionError(f"{check}: {name} has shape {actual.shape}, the reference {expected.shape}")
    if not actual.size:
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return
    atol = np.broadcast_to(atol, a.shape)  # a number, or one per element (check_low_precision)
    # worst = the largest excess over the tolerance; a NaN on one side only counts as infinite
    excess = np.where(close, -np.inf, np.abs(a - e) - (atol + rtol * np.abs(e)))
    excess = np.where(np.isnan(excess), np.inf, excess)
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    where = tuple(int(i) for i in worst)
    raise AssertionError(
        f"{check}: {name} differs from the reference at {int((~close).sum())} of {close.size} elements "
        f"(rtol={rtol:g}, atol={float(atol[worst]):g}); worst at {where}: got {float(a[worst]):.10g}, "
        f"expected {float(e[worst]):.10g}, difference {float(abs(a[worst] - e[worst])):.3g}")


def _low_precision_units(dtype):
    """(eps, tiny) of ``dtype``: its spacing at 1.0 (2^-7 bfloat16, 2^-10 float16) and the
    spacing of its smallest (subnormal) values."""
    dtype = backend.resolve_dtype(dtype)
    if dtype.name == "bfloat16":
        import ml_dtypes  # noqa: PLC0415 (resolve_dtype has imported it)

        info = ml_dtypes.finfo(dtype)
    elif dtype == np.float16:
        info = np.finfo(dtype)
    else:
        raise ValueError(f"check_low_precision: dtype must be bfloat16 or float16, got {dtype}")
    return float(info.eps), float(info.smallest_subnormal)


def check_low_precision(fn, *inputs, dtype="bfloat16", ulps=4, seed=0, device=None) -> bool:
    """fn in a low-precision float dtype against float32 on the same values: True or raise.

    Every float input is rounded to ``dtype`` (bfloat16 or float16); fn runs on those tensors,
    and on float32 and float64 tensors holding the same rounded values. The output must come back
    in ``dtype``; then it and every input's gradient (backward of one cotangent, itself rounded to
    ``dtype``; the gradients in ``dtype`` too) must be within

        ulps * (eps * (scale + noise32 / eps32) + tiny)

    of float32's result rounded once to ``dtype`` (so a float32 value past the dtype's range
    is its inf, one below it 0), element by element. eps is the dtype's spacing at 1 (bfloat16
    2^-7, float16 2^-10), tiny the spacing of its subnormals, scale the element's float32
    magnitude, and noise32 / eps32 the size of the terms float32 itself lost digits of there (its
    distance to float64, in float32's eps): a value that cancels to near zero is judged by the
    terms that cancelled, not by itself. One run can land on float32's exact result by chance, so
    where an element is out by that measure, the noise is measured again on the inputs moved by one
    float32 unit each way at random (0, inf and NaN stay), four times, and the largest taken. An op
    that computes in float32 and rounds once stays within half a unit. NaN must match NaN, and inf
    the same inf. Tuple outputs are compared forward only. ``device`` ("cuda"): the runs compute
    there, every input tensor moved (None: where the inputs are).
    """
    if isinstance(ulps, bool) or not isinstance(ulps, numbers.Real) or not ulps >= 0 or not np.isfinite(ulps):
        raise ValueError(f"check_low_precision: ulps must be a finite number >= 0, got {ulps!r}")
    eps, tiny = _low_precision_units(dtype)
    eps32 = float(np.finfo(np.float32).eps)
    low_dtype = backend.resolve_dtype(dtype)
    rounded = [backend.to_numpy(x.data).astype(low_dtype) if isinstance(x, Tensor) and backend.is_floating(x.dtype)
               else None for x in inputs]
    others = [x.to(device) if r is None and isinstance(x, Tensor) and device is not None else x
              for x, r in zip(inputs, rounded)]

    def run(values, run_dtype, cotangent=None):
        """fn on ``values`` (None: the input as it is) in run_dtype: (its inputs, its output), after
        backward of ``cotangent`` where one is given."""
        run_inputs = [x if v is None else tensor(v.astype(run_dtype), device=device or x.device,
                                                 requires_grad=x.requires_grad) for x, v in zip(others, values)]
        out = fn(*run_inputs)
        if cotangent is not None:
            out.backward(backend.get_array_module(out.data).asarray(cotangent.astype(out.dtype)))
        return run_inputs, out

    def results(run_inputs, out):
        """{name: array} of the output(s) and, for one output, every gradient."""
        if isinstance(out, (tuple, list)):
            return {f"output {k}": o.data for k, o in enumerate(out)}
        found = {"the output": out.data}
        for k, x in enumerate(run_inputs):
            if isinstance(x, Tensor) and x.requires_grad and x.grad is not None:
                found[f"the gradient of input {k}"] = x.grad.data
        return found

    low_inputs, out_low = run(rounded, low_dtype)
    high_inputs, out_high = run(rounded, np.float32)
    exact_inputs, out_exact = run(rounded, np.float64)
    single = not isinstance(out_low, (tuple, list))
    if single and backend.is_floating(out_high.dtype) and out_low.dtype != low_dtype:
        raise AssertionError(f"check_low_precision: the output of {low_dtype.name} inputs is {out_low.dtype.name}")
    cotangent = None
    if single and out_low.requires_grad:
        cotangent = np.random.default_rng(seed).standard_normal(out_high.shape).astype(low_dtype)
        for inputs_, out in ((low_inputs, out_low), (high_inputs, out_high), (exact_inputs, out_exact)):
            out.backward(backend.get_array_module(out.data).asarray(cotangent.astype(out.dtype)))
        for k, (a, b) in enumerate(zip(low_inputs, high_inputs)):
            if not (isinstance(a, Tensor) and a.requires_grad):
                continue
            if (a.grad is None) != (b.grad is None):
                raise AssertionError(f"check_low_precision: input {k} has a gradient in one precision only")
            if a.grad is not None and a.grad.dtype != low_dtype:
                raise AssertionError(f"check_low_precision: the gradient of input {k} is {a.grad.dtype.name}, "
                                     f"expected {low_dtype.name}")
    got, expected, reference = (
        {name: backend.to_numpy(a).astype(np.float64) for name, a in results(*pair).items()}
        for pair in ((low_inputs, out_low), (high_inputs, out_high), (exact_inputs, out_exact)))

    def noise_of(high, exact):
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf: no noise there
            return {name: np.nan_to_num(np.abs(high[name] - exact[name]), nan=0.0, posinf=0.0) for name in high}

    noise = noise_of(expected, reference)

    def measured_again():
        """noise, the largest of it and float32's distance to float64 on four moves of the inputs."""
        draws, largest = np.random.default_rng(None if seed is None else seed + 1), dict(noise)
        for _ in range(4):
            moved = [None if v is None else _moved_one_unit(v.astype(np.float32), draws) for v in rounded]
            high, exact = ({n: backend.to_numpy(a).astype(np.float64)
                            for n, a in results(*run(moved, d, cotangent)).items()} for d in (np.float32, np.float64))
            largest = {n: np.maximum(largest[n], again) for n, again in noise_of(high, exact).items()}
        return largest

    def compare(name):
        with np.errstate(over="ignore"):  # past the dtype's range: its inf, as the low run gives
            rounded_expected = expected[name].astype(low_dtype).astype(np.float64)
        _compare(f"{name} in {low_dtype.name}", got[name], rounded_expected, ulps * eps,
                 ulps * (eps * noise[name] / eps32 + tiny), check="check_low_precision")

    again = False
    for name in got:
        try:
            compare(name)
        except AssertionError as failure:
            if again:
                raise
            try:
                noise, again = measured_again(), True
            except Exception:   # fn refuses the moved inputs (a precondition they broke): the first verdict
                raise failure from None
            compare(name)
    return True


def _moved_one_unit(values, rng):
    """float32 ``values`` each one unit up or down at random; 0, inf and NaN as they are."""
    direction = np.where(rng.random(values.shape) < 0.5, -np.inf, np.inf).astype(np.float32)
    return np.where(np.isfinite(values) & (values != 0), np.nextafter(values, direction), values)
