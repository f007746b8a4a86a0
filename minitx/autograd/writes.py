"""Recorded writes: ``x[index] = v``, ``x += y``, ``x.exp_()`` while a graph is recorded.

A write into x while a gradient is recorded (x or the value requires grad) is an op, as in
PyTorch: ``h = w * 2; h.exp_()`` must send h's gradient on to w through exp. So the write
computes x's new values out of place, from a node standing for x's old values (``old``), and x
becomes the output of that computation: it takes the result's array and op (``record_write``).
What follows from that:

* **Ops that took x before the write** must still send their gradients to its old values, not
  to x, whose graph now goes through the write. The graph's edges are tensors (an op keeps the
  tensors it was applied to), so each write is counted, every op remembers the count when it
  was recorded, and x keeps ``(count at the write, old node)`` for the writes it had after some
  op took it: an op recorded before a write sees the old node instead of x
  (``Function.inputs``, ``written.as_seen``). A write into a tensor no op took since its last
  write keeps nothing.
* **Ops that saved x's old array** keep it: it is not written, so their gradients stay right
  (where PyTorch, which writes into the same memory, refuses their backward).
* **Views of x** (``v = x[1:]``, ``x.T``, ``x.reshape(...)``, ``x.detach()``) would keep showing
  the old array, silently. So every op that returns a view of its input notes it there
  (``note_view``: the input keeps weak references to its views, a view its input and view op,
  PyTorch's ``._base``, held weakly where the view op was not recorded, so that a view logged
  under no_grad does not keep its base's graph), and a write that gives x a new array marks its
  views stale (``_stale``): a stale view is made again from x, the same view op on x's new
  array, recorded as a write into the view, when its data, requires_grad or is_leaf is next read
  (``refresh``, through ``tensor._StaleView``). While a backward walk runs it is not made again
  (the walk has ordered the graph's nodes already): its values are read from x as it is now
  (``values_now``), its graph as recorded. Made when read, not at each write: a loop that writes
  row t of a buffer from row t - 1 does not remake every earlier row's view at every step. A
  detached tensor (``x.detach()``) has no op to make again: it takes x's new array at once (a
  detached view, ``x[0].detach()``, keeps the old values).
* **A write into a view** (``v = y[0]; v.exp_()``, ``y[0][1] = v``) goes into the tensor it views:
  y becomes y with v's part replaced by the new values (WriteThroughView, PyTorch's
  CopySlices), and v, stale then, is made again from y's new array.

What minitx does not see keeps the old values: a raw array (``a = x.data[1:]``,
``np.asarray(x)``) or another Tensor wrapping x's array (``Tensor(x.data)``). Where a write's
value was computed from x itself (``x[1:] = x[:-1] * 0.5``), x's new graph reaches x through the
op that took it, a reference cycle: its arrays wait for Python's garbage collector.
"""
from __future__ import annotations

import bisect
import weakref

from minitx import backend
from minitx.autograd.grad_mode import enable_grad, no_grad
from minitx.autograd.inplace import _root

#: a detached tensor's ``_base``: it shares its tensor's array, through no op to make again
_DETACHED = "detached"


class _Writes:
    """The count of recorded writes, and each written tensor's old nodes (see the module's
    docstring): ``x._before`` holds ``(count at the write, old node)``."""

    def __init__(self):
        self.count = 0

    def record(self, x, old) -> None:
        """x was written, and ``old`` stands for its values before."""
        if not x._taken:  # no op took x since its last write: none will look for this old node
            return
        x._taken = False
        if not x._before:  # () until the first write: most tensors are never written
            x._before = []
        x._before.append((self.count, old))
        self.count += 1

    @staticmethod
    def as_seen(t, recorded_at: int):
        """The node of ``t`` that an op recorded at ``recorded_at`` took: t, or the old node of
        the first write into t after it (the counts grow along the list: a binary search)."""
        first = bisect.bisect_left(t._before, recorded_at, key=lambda entry: entry[0])
        return t._before[first][1] if first < len(t._before) else t


written = _Writes()


def record_write(x, compute) -> None:
    """Give the tensor x the values ``compute(old)``, computed by recorded ops from ``old``, a
    node of the graph standing for x's values before (see the module's docstring).

    x takes the result's array and op, so its gradient reaches what its new values were computed
    from. Ops that took x before keep sending their gradients to ``old``, and so do the hooks
    registered on x before, as PyTorch's. Views of x become stale. Where x is itself a view of a
    tensor, the write goes into that tensor. Callers refuse first what cannot be written
    (``refusal``).
    """
    from minitx.autograd.tensor import Tensor  # noqa: PLC0415 (tensor.py imports this module)
    from minitx.ops.indexing import WriteThroughView  # noqa: PLC0415 (the ops import autograd)

    viewed = base_of(x)
    if viewed is not None:
        base, view = viewed

        def through(old):  # x's part of base's old values, written
            part = view.again().apply(old)
            new = compute(part)
            return old if new is part else WriteThroughView(view.again()).apply(old, new)

        record_write(base, through)  # (x's part taken of a node, not of x: base's graph does not reach base)
        return
    old = Tensor._from_op(x.data, x._ctx)
    old.requires_grad = x.requires_grad
    new = compute(old)
    if new is old:
        return  # nothing changed (dropout in eval mode)
    old._hooks, x._hooks = x._hooks, None
    old_array, array = x.data, new.data
    if x._views is not None and array.strides != old_array.strides:  # (viewed: a reshape made again stays a view)
        array = backend.get_array_module(array).empty_like(old_array)
        array[...] = new.data
    # the graph needs the old node's shape and dtype only; its values stay alive where an op
    # saved them, and are not kept for each write of a tensor written many times
    xp = backend.get_array_module(array)
    old.data = xp.broadcast_to(xp.zeros((), dtype=x.dtype), x.shape)
    written.record(x, old)
    x.data, x._ctx, x.requires_grad = array, new._ctx, new.requires_grad
    if x._views and array is not old_array:  # (detach_ keeps the array: its views still show it)
        _stale(x, old_array)


def note_view(base, view, fn) -> None:
    """Note that the tensor ``view`` shows ``base``'s memory, made by the op ``fn`` (None:
    ``base.detach()``): a recorded write giving base a new array makes the view stale, and a
    recorded write into the view goes into base.

    Not for a result that only looks like a view (a reshape that had to copy); nor for a view of
    a leaf that requires grad (a parameter: a recorded write into it is refused, and an optimizer
    writes into its own array). A detached tensor is noted on the tensor it was detached from
    only where that tensor has an array of its own (not a view): ``x[0].detach()`` keeps the
    values it showed after a recorded write into x."""
    if fn is None:
        view._base = _DETACHED
        if _root(base.data) is base.data and not (base.is_leaf and base.requires_grad):
            _register(base, view)  # (of a tensor with an array of its own: a detached view keeps its values)
        return
    if base.is_leaf and base.requires_grad or _root(view.data) is not _root(base.data):
        return
    _link(view, base, fn)
    _register(base, view)


def _link(view, base, fn) -> None:
    """view._base: its base and view op. Held as strongly as the view's op holds the base: a
    recorded op does (its inputs), so the view strongly; a view made without a graph weakly, or
    it would keep its base's graph alive (a view logged under no_grad). Base holds its views
    weakly: no cycle."""
    view._base = (base if fn._inputs else weakref.ref(base), fn)


def _register(base, view) -> None:
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return
    views.append(weakref.ref(view))
    n = len(views)
    if n >= 64 and n & (n - 1) == 0:  # forget the dead at each power of two: a tensor viewed every step keeps few
        views[:] = [ref for ref in views if ref() is not None]


def _stale(x, old_array) -> None:
    """x's views (and theirs) showed ``old_array``, which x has left for a new one: a detached
    tensor takes the new array; a view becomes stale, made again when read (refresh)."""
    from minitx.autograd.tensor import Tensor, _StaleView  # noqa: PLC0415 (tensor.py imports this module)

    root, kept, now = _root(old_array), [], []
    for ref in x._views:
        view = ref()
        if view is None or type(view) is _StaleView:
            continue
        array = view.data
        if _root(array) is not root:
            continue  # an array of its own since (a detached tensor written out of place)
        if view._base is _DETACHED:
            view.data = x.data
            kept.append(ref)
        elif type(view) is Tensor:
            view.__class__ = _StaleView  # (back on refresh, which notes it on x again)
            view._base = (x, view._base[1])  # (x held strongly until then: the view is made from it)
        else:
            now.append(view)  # a subclass of Tensor: no stale class of its own, so made again now
        if view._views:
            _stale(view, array)
    x._views = kept
    for view in now:
        refresh(view)


def refresh(view) -> None:
    """Make a stale view again from its base (see _stale): the same view op on the base's array
    now, recorded as a write into the view, so that ops that took the view before keep its old
    node. A parameter made from a view takes the array only: its graph is its own."""
    from minitx.autograd.tensor import Tensor, _StaleView  # noqa: PLC0415

    stale = type(view) is _StaleView
    if stale:
        view.__class__ = Tensor
    base, fn = _linked(view)
    try:
        with enable_grad():  # (read under no_grad too: its graph must be there when it is used with a gradient)
            if view.is_leaf and view.requires_grad:
                with no_grad():
                    view.data = fn.again().apply(base).data
            else:
                record_write(view, lambda _old: fn.again().apply(base))
    except BaseException:
        if stale:
            view.__class__ = _StaleView  # (still to make: the error is the caller's to see)
        raise
    if _root(view.data) is _root(base.data):
        _link(view, base, view._ctx if view._ctx is not None else fn)
        _register(base, view)
    else:
        view._base = None  # (a view op that had to copy: a view no more)


def values_now(view):
    """A stale view's values as its base holds them now, made by its view op on the base's array
    without recording anything: what a backward walk reads (engine.walking)."""
    base, fn = _linked(view)
    return fn.again().forward(base.data)


def _linked(view):
    """(base, view op) as view._base holds them (the base weakly or strongly: _link)."""
    base, fn = view._base
    return (base() if isinstance(base, weakref.ref) else base), fn


def base_of(x):
    """(base, view op) when x shows part of the tensor base's array, made by the view op (see
    note_view); else None (not a view, a detached tensor, a base gone, or an array of its own since)."""
    if x._base is None or x._base is _DETACHED:
        return None
    base, view = _linked(x)
    return (base, view) if base is not None and _root(x.data) is _root(base.data) else None


def is_view(x) -> bool:
    """Whether x shows memory of another tensor through a view op (noted or not: a view of a parameter)."""
    return base_of(x) is not None or (x._ctx is not None and x._ctx.moves_values and _shares_memory(x))


def refusal(x):
    """Why a recorded write cannot go into x's array, or None: x shares memory that minitx cannot
    write through (a view of a parameter, of an array from outside, a broadcast, a detach)."""
    data = x.data
    if any(stride == 0 and n > 1 for stride, n in zip(data.strides, data.shape)):
        return (f"several elements of the tensor share one memory location (a view made by broadcast_to or expand, "
                f"strides {data.strides}); clone it first (x = x.clone())")
    viewed = base_of(x)
    if viewed is not None:
        return refusal(viewed[0])
    if x._base is _DETACHED:
        return ("the tensor shares its array with the tensor it was detached from, whose graph would not see "
                "the write; clone it first (x = x.detach().clone())")
    if x._ctx is not None and x._ctx.moves_values and x._ctx.inputs[0].is_leaf and x._ctx.inputs[0].requires_grad:
        return ("the tensor is a view of a leaf that requires grad, whose gradient would not see the write; write "
                "into a clone, or under minitx.no_grad(), as the optimizers do")
    if _shares_memory(x):
        return ("the tensor's array is a view of memory minitx cannot write through (an array from outside, "
                "wrapped by Tensor(...)); clone it first (x = x.clone())")
    return None


def _shares_memory(x) -> bool:
    """Whether x's array shows memory another tensor or array may show: a view's, or (x computed
    by an op) one of its op's inputs'."""
    if x._ctx is None:
        return x.data.base is not None
    xp = backend.get_array_module(x.data)
    return any(xp.may_share_memory(x.data, t.data) for t in x._ctx.inputs)
