"""Looking inside backward: a trace of the ops the engine visits, and anomaly mode.

    from minitx.autograd.debug import detect_anomaly, trace_backward

    with trace_backward(model=model) as trace:
        loss = model(x)     # (the forward inside too: each row then names its op's line and module)
        loss.backward()
    print(trace)        # one row per op, in the order the engine ran their backward

    with detect_anomaly():
        loss = model(x)     # the first op whose forward gives NaN/inf raises here ...
        loss.backward()     # ... or whose backward does, naming the line that created it

Both are hooks: ``minitx.autograd.engine.backward_hooks`` (called after each op's backward),
``minitx.autograd.function.forward_hooks`` (after each op's forward) and, for anomaly mode,
``minitx.autograd.engine.gradient_hooks`` (each tensor's whole gradient, summed by the engine).
While neither tool is on, those lists are empty and an op pays one empty loop. The hooks are process-wide, not per
thread. The third debugging switch, ``minitx.autograd.check_saved_arrays`` (a checksum of the
arrays ops saved, for writes through DLPack), lives with the in-place guard it extends, in
``minitx.autograd.inplace``.
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
import weakref
from typing import NamedTuple

from minitx import backend
from minitx.autograd import engine, function

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../minitx
_AUTOGRAD = os.path.dirname(os.path.abspath(__file__))


def _norm(array) -> float:
    """The 2-norm, summed in float64 (a float32 sum of squares overflows early)."""
    xp = backend.get_array_module(array)
    a = array.astype(xp.float64)
    return float(xp.sqrt(xp.sum(a * a)))


def _describe(array) -> str:
    return f"{tuple(array.shape)} {array.dtype.name}"


# ---------------------------------------------------------------------- the backward trace
class TraceRow(NamedTuple):
    """One op's backward: its name, dy (shape, norm) and each returned gradient (or None); and,
    for an op whose forward ran while the trace was on, what tells it from others of its name."""

    step: int
    op: str
    dy_shape: tuple
    dy_norm: float
    grads: tuple  # per input: (shape, norm), or None where the op returned no gradient
    # the op's number in the order the forwards ran while the trace was on (0 first; every op's
    # forward counts, so numbers may skip), and the user's line that called it, "file:line";
    # None for an op made before the trace began (backward cannot know where it came from)
    forward_index: int | None = None
    site: str | None = None
    # with trace_backward(model=...): the name in model.named_modules() of the innermost of the
    # model's modules whose forward was running when the op's forward ran ("" the model itself, so
    # that model.get_submodule(row.module) finds it); None outside them, or with no model given
    module: str | None = None


class trace_backward:
    """Record every op's backward while the block runs: ``with trace_backward() as t: ...``.

    ``t.rows`` holds one ``TraceRow`` per op, in engine order (the output's op first);
    ``str(t)`` is a table. Computing the norms reads every gradient back (one device
    synchronisation per array on the GPU): use it to look, not while training fast.

    Wrap the forward too, and each op whose forward runs in the block gets its place in
    forward order and the line of your code that called it (columns ``forward`` and ``created
    at``): what tells two ``matmul`` rows apart. Wrapping ``backward()`` alone, the rows have
    only the op's name and its output's shape (dy's), and the table leaves those columns out.

    A model run from one line gives all its ops that line. Name the model, and each row also
    says which of its modules ran the op (column ``module``: the innermost module whose forward
    was running, named as ``model.named_modules()`` names it, "-" for an op outside the model)::

        with trace_backward(model=model) as t:
            F.cross_entropy(model(x), labels).backward()
        print(t)    # the rows of model.fc2's linear say "fc2", of its ReLU "act", cross_entropy's "-"

    It hooks every module the model holds when the block begins (forward pre-hooks and forward
    hooks, removed when it ends); a module called twice, or held under two names, reads its
    first name each time. Without a model no module is hooked and the column is left out.
    """

    def __init__(self, model=None):
        from minitx.nn.module import Module  # noqa: PLC0415  (minitx.nn imports minitx.autograd)

        if model is not None and not isinstance(model, Module):
            raise TypeError(f"trace_backward: model must be a minitx nn.Module (or None), got {type(model).__name__}")
        self.model = model
        self.rows: list[TraceRow] = []
        self._made = weakref.WeakKeyDictionary()  # op -> (forward number, "file:line", module): the forward hook's
        self._forwards = 0
        self._handles = []  # the module hooks this trace registered, removed on exit
        # the model's module calls running now, outermost first: (name, the frame of their
        # Module.__call__). The frame says whether a call is still running: one that raised
        # never reached its forward hook, which would have taken it off (_drop_ended)
        self._calls: list = []

    def _forward(self, fn, inputs, output):
        # the first frame outside minitx; none where the program is minitx's own (python -m minitx.translate:
        # there the frame outside is runpy's, and _creation_site ends on a minitx frame when it finds no other)
        path, line, _ = (_creation_site(sys._getframe(1)) or [(None, None, None)])[-1]
        users = path is not None and not _inside(path, _PACKAGE) and not path.startswith("<frozen ")
        self._drop_ended(sys._getframe(1))
        module = self._calls[-1][0] if self._calls else None
        self._made[fn] = self._forwards, f"{path}:{line}" if users else None, module
        self._forwards += 1

    def _module_starts(self, name, module, args):
        """The forward pre-hook on each module of the model: its call is now the innermost."""
        call = sys._getframe(1)  # Module.__call__'s frame: this call's own
        self._drop_ended(call)
        self._calls.append((name, call))

    def _module_ends(self, module, args, output):
        """The forward hook: take this call off, with the calls inside it that an exception ended
        (and the forward caught). _drop_ended would find it ended too, but by walking every frame
        at the next op: taken off here, the stack's top is running and the walks stay short."""
        call = sys._getframe(1)
        for i in range(len(self._calls) - 1, -1, -1):
            if self._calls[i][1] is call:
                del self._calls[i:]
                return
        # not found: the call began before the trace did

    def _drop_ended(self, frame) -> None:
        """Take off the calls an exception ended: those whose frame no longer encloses ``frame``.
        A call ends before the calls around it, so they are the last ones."""
        if not self._calls:
            return
        innermost, enclosing = self._calls[-1][1], set()
        while frame is not None:
            if frame is innermost:
                return  # running still, and so are the calls around it: the common case, a short walk
            enclosing.add(id(frame))  # (the ids of ended frames _calls holds cannot be reused)
            frame = frame.f_back
        while self._calls and id(self._calls[-1][1]) not in enclosing:
            self._calls.pop()

    def _hook(self, fn, dy, input_grads):
        grads = tuple(None if g is None else (tuple(g.shape), _norm(g)) for g in input_grads)
        forward, site, module = self._made.get(fn, (None, None, None))
        self.rows.append(TraceRow(len(self.rows), fn.name, tuple(dy.shape), _norm(dy), grads, forward, site, module))

    def __enter__(self):
        function.forward_hooks.append(self._forward)
        engine.backward_hooks.append(self._hook)
        for name, module in self.model.named_modules() if self.model is not None else ():
            # prepended: a user's pre-hook runs inside the call, and its ops are the module's too
            self._handles.append(module.register_forward_pre_hook(functools.partial(self._module_starts, name),
                                                                  prepend=True))
            self._handles.append(module.register_forward_hook(self._module_ends))
        return self

    def __exit__(self, *exc):
        function.forward_hooks.remove(self._forward)
        engine.backward_hooks.remove(self._hook)
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._calls.clear()  # (the frames of calls an exception ended, and their locals)
        return False

    def __str__(self) -> str:
        made = any(r.forward_index is not None for r in self.rows)  # the forward columns: only where some op has them
        named = any(r.module is not None for r in self.rows)  # and the module's
        table = [("#", "op", "dy shape", "|dy|") + (("forward", "created at") if made else ())
                 + (("module",) if named else ()) + ("gradients returned: shape |g|",)]
        for r in self.rows:
            returned = "; ".join("-" if g is None else f"{g[0]} {g[1]:.3e}" for g in r.grads)
            where = ("-" if r.forward_index is None else str(r.forward_index), _short(r.site)) if made else ()
            where += (self._module_shown(r.module),) if named else ()
            table.append((str(r.step), r.op, str(r.dy_shape), f"{r.dy_norm:.3e}") + where + (returned,))
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]
                 for row in table]
        lines.insert(1, "-" * len(lines[0]))
        return "\n".join(line.rstrip() for line in lines)

    def _module_shown(self, name) -> str:
        """A row's module as the table shows it: the model itself (named "") by its class."""
        return "-" if name is None else name or f"({type(self.model).__name__})"


def _short(site) -> str:
    """A site "file:line" as the table shows it: the file's name without its folders."""
    return "-" if site is None else os.path.basename(site)


# ---------------------------------------------------------------------- anomaly mode
def _inside(path: str, folder: str) -> bool:
    """Whether the file ``path`` lies in ``folder`` (a sibling ``minitx_scratch.py`` does not)."""
    return path.startswith(folder + os.sep)


def _creation_site(frame, keep=7) -> list:
    """(file, line, function) of the frames from the caller of the op outwards, up to and
    including the first frame outside minitx (the user's line, however deep the op ran inside
    minitx's modules). Of the minitx frames on the way only the ``keep`` nearest the op stay
    (the "via" lines); where more were passed, ``(None, count, None)`` before the user's frame
    says how many."""
    inside, passed = [], 0
    while frame is not None:
        path = frame.f_code.co_filename
        if not _inside(path, _AUTOGRAD):  # Function.__call__ and this module say nothing
            site = (path, frame.f_lineno, frame.f_code.co_name)
            if not _inside(path, _PACKAGE):
                return inside + ([(None, passed, None)] if passed else []) + [site]
            if len(inside) < keep:
                inside.append(site)
            else:
                passed += 1
        frame = frame.f_back
    return inside  # (no frame outside minitx: the program is minitx's own)


def _format_site(sites) -> str:
    if not sites:
        return "  (no creation site recorded: the op ran before detect_anomaly was on)"
    user = sites[-1]
    code = linecache.getline(user[0], user[1]).strip()
    lines = [f"  created at {user[0]}:{user[1]} in {user[2]}" + (f":  {code}" if code else "")]
    for p, n, f in sites[-2::-1]:  # from the user's call inwards, to the op
        lines.append(f"    via {n} frame{'s' * (n > 1)} of minitx not shown" if p is None else
                     f"    via {os.path.relpath(p, os.path.dirname(_PACKAGE))}:{n} in {f}")
    return "\n".join(lines)


def _problem(array, allow_inf=False):
    """'NaN', 'inf' or None for a floating array; integer arrays hold neither."""
    if not backend.is_floating(array.dtype):
        return None
    xp = backend.get_array_module(array)
    if bool(xp.isnan(array).any()):
        return "NaN"
    if not allow_inf and bool(xp.isinf(array).any()):
        return "inf"
    return None


def _inputs(seen) -> str:
    """The inputs' line of a report: each input's shape and dtype, and the NaN/inf it held."""
    parts = [f"{position}: {described}" + (f" (held {held} already)" if held else "")
             for position, (described, held) in enumerate(seen)]
    return "  inputs: " + ", ".join(parts) if parts else "  inputs: none"


class detect_anomaly:
    """Raise ``FloatingPointError`` at the first op whose forward output, or whose backward
    gradient, holds a NaN or an infinity: the message names the op, its input shapes (and
    which of them already held NaN/inf) and the line of user code that created the op. Also at
    the first gradient the engine makes non-finite from finite ones (two uses of a tensor whose
    gradients add up past the dtype's range, a sum over broadcast axes, a cast, an
    accumulation into .grad): the message names the tensor and the ops that sent it gradients.

    While it is on, every op also records where it was called from (the first frame outside
    minitx and the few minitx frames nearest the op, taken at forward time), so a backward
    failure can point at the line that built the op.
    ``allow_inf=True`` lets forward outputs hold infinities (``masked_fill(mask, -inf)``
    before a softmax is a common intended one); NaN and non-finite gradients still raise.
    ``check_nan=False`` (PyTorch's) checks nothing: the creation sites are still recorded, for
    the errors backward raises of its own. Slow (a check of every array): for finding a bug,
    not for training. ``is_anomaly_enabled()`` says whether one is on, ``set_anomaly_enabled``
    turns one on or off without a block.
    """

    def __init__(self, allow_inf: bool = False, check_nan: bool = True):
        self.allow_inf, self.check_nan = allow_inf, check_nan
        # op -> (its creation site, its inputs as the forward saw them): read back by a backward
        # report, since a recorded write into an input leaves the op only a placeholder of its values
        self._recorded = weakref.WeakKeyDictionary()
        # id(tensor) -> (a weak reference to it, the ops that sent it a gradient in this walk so far)
        self._fed = {}

    def _forward(self, fn, inputs, output):
        site = _creation_site(sys._getframe(1))
        seen = tuple((_describe(t.data), _problem(t.data)) for t in inputs)
        self._recorded[fn] = site, seen
        problem = _problem(output, self.allow_inf) if self.check_nan else None
        if problem:
            raise FloatingPointError(f"detect_anomaly: the forward of '{fn.name}' produced {problem} "
                                     f"in its output {_describe(output)}\n"
                                     f"{_inputs(seen)}\n{_format_site(site)}")

    def _backward(self, fn, dy, input_grads):
        if not self.check_nan:
            return
        for parent, g in zip(fn.inputs, input_grads):
            if g is not None and parent.requires_grad:  # (what the engine adds into parent's gradient)
                self._fed.setdefault(id(parent), (weakref.ref(parent), []))[1].append(fn)
        for position, g in enumerate(input_grads):
            problem = None if g is None else _problem(g)
            if problem:
                dy_note = f"; dy ({_describe(dy)}) held {_problem(dy)} already" if _problem(dy) else ""
                # an op made before the mode was on: its inputs' shapes only (their values may be gone)
                site, seen = self._recorded.get(fn, ((), [(f"{t.shape} {t.dtype.name}", None) for t in fn.inputs]))
                raise FloatingPointError(
                    f"detect_anomaly: the backward of '{fn.name}' produced {problem} in the gradient for "
                    f"input {position} {_describe(g)}{dy_note}\n{_inputs(seen)}\n{_format_site(site)}")

    def _gradient(self, node, g, grad):
        """Each tensor's whole gradient, and the .grad backward added it into: the engine's sums
        (of several ops' gradients, over broadcast axes, into an earlier .grad) can overflow where
        no op's gradient did, since _backward checked each one. (None: the walk ended; the ops
        that sent gradients to tensors it did not reach, autograd.grad's or backward(inputs=)'s
        pruned ones, are not a later walk's.)"""
        if node is None:
            self._fed.clear()
            return
        if not self.check_nan:
            return
        ref, fed = self._fed.pop(id(node), (None, []))
        fed = fed if ref is not None and ref() is node else []
        what = f"{'a leaf' if node._ctx is None else repr(node._ctx.name) + ' output'} {_describe(g)}"
        problem = _problem(g)
        if problem and not fed:
            raise FloatingPointError(f"detect_anomaly: the gradient backward started from, at the root ({what}), "
                                     f"holds {problem}")
        if problem:  # (finite parts can only overflow: inf)
            sent, summed = (("the gradient one op", "") if len(fed) == 1 else
                            (f"the {len(fed)} gradients ops", ", the sum of the gradients"))
            raise FloatingPointError(
                f"detect_anomaly: the gradient of a tensor ({what}) holds {problem}, though {sent} sent it held "
                f"none: the engine's work overflowed (a sum over the axes broadcasting stretched, the cast to the "
                f"tensor's dtype{summed})\n{self._senders(fed)}")
        problem = None if grad is None else _problem(grad)
        if problem:
            raise FloatingPointError(
                f"detect_anomaly: the .grad of a tensor ({what}) holds {problem} after this backward added its "
                f"gradient, which held none, into it: the sum overflowed, or .grad held it already (.grad "
                f"accumulates across backward calls until zeroed)\n"
                f"{self._senders(fed)}")

    def _senders(self, fed) -> str:
        """The ops that sent a tensor its gradient, each with the user's line that created it."""
        lines = []
        for fn in fed:
            site = self._recorded.get(fn, ((),))[0]
            lines.append(f"    '{fn.name}'" + (f" created at {site[-1][0]}:{site[-1][1]}" if site else ""))
        return "  sent by:\n" + "\n".join(lines) if lines else "  sent by: no op (the gradient backward started from)"

    def __enter__(self):
        function.forward_hooks.append(self._forward)
        engine.backward_hooks.append(self._backward)
        engine.gradient_hooks.append(self._gradient)
        _modes.append(self)
        return self

    def __exit__(self, *exc):
        function.forward_hooks.remove(self._forward)
        engine.backward_hooks.remove(self._backward)
        engine.gradient_hooks.remove(self._gradient)
        _modes.remove(self)
        self._fed.clear()
        return False


_modes: list = []  # the detect_anomaly modes on, innermost last
_switched_on: list = []  # the one set_anomaly_enabled(True) turned on, if it is


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on: a detect_anomaly block, or set_anomaly_enabled(True) (PyTorch's name)."""
    return bool(_modes)


def is_anomaly_check_nan_enabled() -> bool:
    """Whether the anomaly mode on, the innermost, checks for NaN: its check_nan (True when none is on,
    as PyTorch's answers)."""
    return _modes[-1].check_nan if _modes else True


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on (a detect_anomaly(check_nan=check_nan) without a block) or off again
    (PyTorch's ``torch.autograd.set_anomaly_enabled``). Off ends only the one this turned on: a
    ``with detect_anomaly():`` block stays on to its end (PyTorch's turns off the flag that block set)."""
    for name, flag in (("enabled", enabled), ("check_nan", check_nan)):
        if not isinstance(flag, bool):
            raise TypeError(f"set_anomaly_enabled: {name} must be True or False, got {flag!r}")
    if _switched_on:
        _switched_on.pop().__exit__(None, None, None)
    if enabled:
        _switched_on.append(detect_anomaly(check_nan=check_nan).__enter__())


__all__ = ["trace_backward", "TraceRow", "detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]
