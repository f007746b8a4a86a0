"""Recorded writes: ``x[index] = v``, ``x += y``, ``x.exp_()`` while a graph is recorded.

A write into x while a gradient is recorded (x or the value requires grad) is an op, as in
PyTorch: ``h = w * 2; h.exp_()`` must send h's gradient on to w through exp. So the write
computes x's new values out of place, from a node standing for x's old values (``old``), and x
becomes the output of that computation: it takes the result's array and op (``record_write``).
Three things follow.

* **Ops that took x before the write** must still send their gradients to its old values, not
  to x, whose graph now goes through the write. The graph's edges are tensors (an op keeps the
  tensors it was applied to), so each write is counted, every op remembers the count when it
  was recorded, and x keeps ``(count at the write, old node)`` for the writes it had after some
  op took it: an op recorded before a write sees the old node instead of x
  (``Function.inputs``, ``written.as_seen``). A write into a tensor no op took since its last
  write (``x.mul_(w); x.detach_()`` in a loop) keeps nothing.
* **Ops that saved x's old array** keep it: it is not written, so their gradients stay right
  (where PyTorch, which writes into the same memory, refuses their backward).
* **Views of x** (``v = x[1:]``, ``x.T``, ``x.reshape(...)``, ``x.detach()``, taken before the
  write) would keep showing the old array, silently. So every op that returns a view of its
  input notes it on the input (``note_view``), weakly, and a write that gives x a new array
  makes each live view again from it (``_views_again``): the same view op on the new array,
  itself recorded as a write into the view. The view then shows the new values, as PyTorch's
  does, and its gradient reaches x's new graph; ops that took the view before reach the old.
  What minitx does not see is not remade: a raw array (``a = x.data[1:]``, ``np.asarray(x)``),
  or another Tensor wrapping x's array (``Tensor(x.data)``), keeps the old values.
"""
from __future__ import annotations

import weakref

from minitx import backend
from minitx.autograd.inplace import _root


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
        the first write into t after it."""
        for count, old in t._before:
            if count >= recorded_at:
                return old
        return t


written = _Writes()


def record_write(x, compute) -> None:
    """Give the tensor x the values ``compute(old)``, computed by recorded ops from ``old``, a
    node of the graph standing for x's values before (see the module's docstring).

    x takes the result's array and op, so its gradient reaches what its new values were computed
    from. Ops that took x before keep sending their gradients to ``old``, and so do the hooks
    registered on x before, as PyTorch's. Views of x are made again from its new array.

    Where x is itself a view of a tensor (``x = y[0]``, then ``x.exp_()``), the write goes into
    that tensor: y becomes y with x's part replaced by the new values (WriteThroughView), and x,
    as y's other views, is made again from y's new array, as PyTorch's write through a view.
    Callers refuse first what cannot be written (``refusal``).
    """
    from minitx.autograd.tensor import Tensor  # noqa: PLC0415 (tensor.py imports this module)

    viewed = _viewed(x)
    if viewed is not None:
        base, view = viewed
        new = compute(x)  # (x is the old node here: the write into base makes x again, keeping it as old)
        if new is not x:
            from minitx.ops.indexing import WriteThroughView  # noqa: PLC0415 (the ops import autograd)

            record_write(base, lambda old: WriteThroughView(view.again()).apply(old, new))
        return
    old = Tensor._from_op(x.data, x._ctx)
    old.requires_grad = x.requires_grad
    new = compute(old)
    if new is old:
        return  # nothing changed (dropout in eval mode)
    old._hooks, x._hooks = x._hooks, None
    old_array, array = x.data, new.data
    # the graph needs the old node's shape and dtype only; its values stay alive where an op
    # saved them, and are not kept for each write of a tensor written many times
    xp = backend.get_array_module(array)
    old.data = xp.broadcast_to(xp.zeros((), dtype=x.dtype), x.shape)
    written.record(x, old)
    x.data, x._ctx, x.requires_grad = array, new._ctx, new.requires_grad
    if x._views and array is not old_array:  # (detach_ keeps the array: its views still show it)
        _views_again(x, old_array)


def refusal(x):
    """Why a recorded write cannot go into x's array, or None: x shares memory that minitx cannot
    write through (a view of a parameter, of an array from outside, a broadcast, a detach)."""
    if any(stride == 0 and n > 1 for stride, n in zip(x.data.strides, x.data.shape)):
        return (f"several elements of the tensor share one memory location (a view made by broadcast_to or "
                f"expand, strides {x.data.strides}); copy it first, e.g. x = x.clone()")
    viewed = _viewed(x)
    if viewed is not None:
        base, _ = viewed
        return refusal(base) if not (base.is_leaf and base.requires_grad) else (
            "the tensor is a view of a leaf that requires grad, whose gradient would not see the write; write "
            "into a clone, or under minitx.no_grad(), as the optimizers do")
    if x._base is not None and _root(x._base[0].data) is _root(x.data):
        return ("the tensor shares its array with the tensor it was detached from, and a recorded write gives it "
                "an array of its own, which that tensor would not see; write into x = x.clone()")
    if _shares_memory(x):
        return ("the tensor's array is a view of memory minitx cannot write through (a view of a leaf that requires "
                "grad, such as a parameter, or of an array from outside), and a recorded write gives it an array of "
                "its own, which the memory it views would not see; write into x = x.clone()")
    return None


def _shares_memory(x) -> bool:
    """Whether x's array shows memory another tensor or array may show: a view's, or (x computed
    by an op) one of its op's inputs'."""
    if x._ctx is None:
        return x.data.base is not None
    xp = backend.get_array_module(x.data)
    return any(xp.may_share_memory(x.data, t.data) for t in x._ctx.inputs)


def _viewed(x):
    """(base, view op) when x shows part of the tensor base's array, made by the view op (see
    note_view); else None (not a view, a detach, or given an array of its own since)."""
    if x._base is None:
        return None
    base, view = x._base
    if view is None or _root(x.data) is not _root(base.data):
        return None
    return base, view


def note_view(base, view, fn) -> None:
    """Remember that the tensor ``view`` shows ``base``'s memory, made by the op ``fn`` (None:
    ``base.detach()``): a recorded write giving base a new array makes the view again, and a
    recorded write into the view goes into base.

    Not for a leaf that requires grad (a parameter: a recorded write into it is refused), nor
    for a result that only looks like a view (a reshape that had to copy)."""
    if base.is_leaf and base.requires_grad or _root(view.data) is not _root(base.data):
        return
    # base notes its views weakly (a view dropped is forgotten), a view its base strongly (as
    # PyTorch's ._base): no cycle, so the arrays of a dropped graph go without the garbage collector
    view._base = (base, fn)
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return
    views.append(weakref.ref(view))
    if len(views) % 64 == 0:  # forget the dead now and then: a tensor viewed every step keeps few
        views[:] = [ref for ref in views if ref() is not None]


def _views_again(x, old_array) -> None:
    """Make each live view of x's old array again, from x's new one (see note_view)."""
    from minitx.autograd.grad_mode import no_grad  # noqa: PLC0415 (grad_mode is imported after this module)

    root = _root(old_array)
    live = [view for view in (ref() for ref in x._views)
            if view is not None and _root(view.data) is root]  # (not those given arrays of their own since)
    x._views = []
    for view in live:
        _, fn = view._base
        if view.is_leaf and view.requires_grad:  # a parameter made from a view: its graph is its own
            with no_grad():
                view.data = _view_of(x, fn).data
        else:
            record_write(view, lambda _old, fn=fn: _view_of(x, fn))
        view._base = (x, fn)
        x._views.append(weakref.ref(view))


def _view_of(x, fn):
    """The view that the op ``fn`` makes of x (None: x.detach())."""
    return x.detach() if fn is None else fn.again().apply(x)
