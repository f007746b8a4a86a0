"""Recorded writes: ``x[index] = v``, ``x += y``, ``x.exp_()`` while a graph is recorded.

A write into x while a gradient is recorded (x or the value requires grad) is an op, as in
PyTorch: ``h = w * 2; h.exp_()`` must send h's gradient on to w through exp. So the write
computes x's new values out of place, from a node standing for x's old values (``old``), and x
becomes the output of that computation: it takes the result's array and op (``record_write``).
Four things follow. Take ::

    v = x[1:]        # a view of x
    y = x * 2        # an op that took x
    x.exp_()         # the write
    z = v + 1        # v read after the write

* **Ops that took x before the write** (``y``'s mul) must send their gradients to x's old values,
  not to x, whose graph now goes through exp. An op holds each input through a *cell*, which all
  the ops taking x between two writes share (``Cell``, ``cell_of``). The write puts ``old`` in
  x's cell in place of x and starts x a new one (``leave_old``), so mul finds ``old`` there
  (``Function.inputs``) and the ops after the write find x. A cell lives as long as the ops that
  hold it: old nodes go with them, however often x is written; and no op holds x after its
  write, so a write computed from x itself (``x[1:] = x[:-1] * 0.5``) leaves no reference cycle.
* **Ops that saved x's old array** (mul saved it, for w's gradient) keep it: it is not written,
  so their gradients stay right (where PyTorch, writing into the same memory, refuses them).
* **Views of x** (``v``; ``x.T``, ``x.reshape(...)``, ``x.detach()``) would show the old array,
  silently. So an op that returns a view notes it on its input (``note_view``: x keeps weak
  references to its views; a view keeps x and its view op in ``_base``, as PyTorch's, weakly
  where the op was not recorded, so that a view logged under no_grad keeps no graph alive), and
  the write marks them stale (``_stale``), leaving each view's old node in its cell as the write
  leaves x's: the graph holds the old node from then on, not the view, which holds x. A stale
  view is made again from x when its data, requires_grad or is_leaf is next read (``z = v + 1``
  reads it, and so may a hook during backward): the same view op on x's new
  array, recorded as a write into the view (``refresh``, through ``tensor._StaleView``). Made
  when read, not at each write: a loop writing row t of a buffer from row t - 1 does not make
  every earlier row again at every step. A detached tensor has
  no op to make again: it takes x's new array at once (a detached view, ``x[0].detach()``, keeps
  the old values).
* **A write into a view** (``v.exp_()``, ``y[0][1] = u``) goes into the tensor it views: x
  becomes x with v's part replaced (WriteThroughView, PyTorch's CopySlices), and v, stale then,
  is made again from x's new array.

What minitx does not see keeps the old values: a raw array (``a = x.data[1:]``,
``np.asarray(x)``) or another Tensor wrapping x's array (``Tensor(x.data)``).

A write computes x's new values out of place, so ``x[index] = v`` would copy the whole of x to
change a part, and a loop writing rows of a buffer (``h[t] = tanh(h[t - 1] @ W + ...)``) would
hold a copy per row until backward: O(T^2) memory and time. Only those who hold x's old array
read its old values: ops that saved it or a view of it, x's views, and raw arrays. So where the
index is basic (a view of x's array), x's array is its own, and none of them reads the written
region, the write goes into x's array itself (``in_place``, ``SetItem(in_place=True)``): the arrays
ops saved (each saved array's guard lists them, inplace.saved_parts) and the arrays of x's views
must miss the region, and nothing else may hold the array or a view of it (its references are
counted: a raw array, a Tensor wrapping it, a detached view, an op that kept an array outside
what it saved, all unseen otherwise, make the write copy, so they keep the old values as above).
A stale view reads none of its old values (it is made again when read): its array, where
nothing else holds it, is known whatever the region (``outs.append(h[t])`` at each step: each
row's view goes stale at the next write, and every write goes in place); held by another
(``a = v.data`` taken before v went stale), it makes the write copy. The region's old values are
then read by no one: every value and gradient is the one the copy gives, bit for bit; the
guard's lock is lifted for the write and put back, with no version counted, and a checksum of
what was saved still matches. The old node stays in the graph, with its shape only, as after
any write; x's views go stale as after a copy, and stay listed on x (they still show its
array). The check reads the arrays' layout only (no device synchronisation on the GPU; on the
CPU NumPy tells a column from its neighbour, on the GPU the spans must not meet), costs a step
over the saved parts of the array and x's views (a loop of T steps: O(T^2) comparisons of
numbers, no copies), and is off while detect_anomaly or trace_backward watch each forward
(they read x's old values after it).
Otherwise, and for advanced indices, writes into views (WriteThroughView) and in-place methods
(``x.exp_()``, ``x += y``: a new array, their result), x is copied as before. One thing changes
for a buffer written in place: the ops of every step hold the same array, so a write into it
not recorded (under no_grad) before backward makes all of them refuse backward, where with a
copy per step only the last step's saw that array. Two holders the count does not see: a raw
array of one of x's views (``a = v.data``, ``v.detach()``; the view is checked, its array's other
holders are not until it is stale), which after a write in place still shares x's memory where
a copy would have parted them (a write not recorded reaches it); and
another thread taking ``x.data`` between the check and the write.
"""
from __future__ import annotations

import sys
import weakref

import numpy as np

from minitx import backend
from minitx.autograd.grad_mode import enable_grad, no_grad
from minitx.autograd.inplace import _root

#: a detached tensor's ``_base``: it shares its tensor's array, through no op to make again
_DETACHED = "detached"


class Cell:
    """How an op holds one of its inputs: ``node`` is the tensor t, until t's next recorded write
    puts there the node of t's old values (leave_old). Every op taking t between two writes
    shares one cell, which t holds weakly (a cell that held t and was held by t would make every
    tensor a reference cycle). After the write no op holds t itself: a write whose value was
    computed from t (``t[1:] = t[:-1] * 0.5``) leaves no cycle through the ops that took t."""

    __slots__ = ("node", "__weakref__")

    def __init__(self, node):
        self.node = node


def cell_of(t) -> Cell:
    """t's current cell (see Cell), shared by the ops that took t since its last write; made by
    the first of them (Function.apply)."""
    cell = t._cell() if t._cell is not None else None
    if cell is None:
        cell = Cell(t)
        t._cell = weakref.ref(cell)
    return cell


def leave_old(x, old) -> None:
    """x was written, and ``old`` stands for its values before: the ops that took x since its
    last write find it in their cell; the ops that take x from now on get a new one."""
    cell = x._cell() if x._cell is not None else None
    if cell is not None:  # (else no op took x since its last write: none will look for old)
        cell.node = old
    x._cell = None


def record_write(x, compute) -> None:
    """Give the tensor x the values ``compute(old)``, computed by recorded ops from ``old``, a
    node of the graph standing for x's values before (see the module's docstring).

    x takes the result's array and op, so its gradient reaches what its new values were computed
    from. Ops that took x before keep sending their gradients to ``old``, and so do the hooks
    registered on x before, as PyTorch's. Views of x become stale. Where x is itself a view of a
    tensor, the write goes into that tensor. Callers refuse first what cannot be written
    (``refusal``).
    """
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
    _record_own(x, compute)


def _record_own(x, compute) -> None:
    """record_write into x's own array (not the tensor x views): x takes compute(old)'s array and op."""
    from minitx.autograd.tensor import Tensor  # noqa: PLC0415 (tensor.py imports this module)

    old = Tensor._from_op(x.data, x._ctx)
    old._requires_grad = x.requires_grad
    new = compute(old)
    if new is old:
        return  # nothing changed (dropout in eval mode)
    old_array, array = x.data, new.data
    xp = backend.get_array_module(array)
    if x._views is not None and array.strides != old_array.strides:  # (viewed: a reshape made again stays a view)
        array = xp.empty_like(old_array)
        array[...] = new.data
    _leave_old_node(x, old)
    # (detach_ keeps the array: its views still show it; a write that went into it, in_place, changed them)
    changed = array is not old_array or getattr(new._ctx, "in_place", False)
    made_now = _stale(x, old_array, array) if x._views and changed else ()
    x.data, x._ctx, x._requires_grad = array, new._ctx, new.requires_grad
    for view in made_now:
        refresh(view)


def _leave_old_node(x, old) -> None:
    """x's values are about to change: ``old``, a node with x's op and requires_grad, stands for
    them in the graph from now on (leave_old), with the hooks registered on x so far. The graph
    needs its shape and dtype only: the old values stay alive where an op saved them, and are not
    kept for each write of a tensor written many times."""
    xp = backend.get_array_module(x.data)
    old._hooks, x._hooks = x._hooks, None
    old.data = xp.broadcast_to(xp.zeros((), dtype=x.dtype), x.shape)
    leave_old(x, old)


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
    view._base = (base if fn._cells or base._ctx is None else weakref.ref(base), fn)  # (a leaf has no graph to keep)


def _register(base, view) -> None:
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return
    views.append(weakref.ref(view))
    n = len(views)
    if n >= 64 and n & (n - 1) == 0:  # forget the dead at each power of two: a tensor viewed every step keeps few
        views[:] = [ref for ref in views if ref() is not None]


def _stale(x, old_array, new_array, memory=None) -> list:
    """x's views (and theirs) show ``old_array``, which x leaves for ``new_array``: a detached
    tensor takes the new array; a view becomes stale, made again when read (refresh). Marked
    before x takes the new array, so that an interrupt (Ctrl-C) leaves x and its views agreeing.
    Returns the views of a Tensor subclass, which has no stale class: the caller makes them again
    once x has its new array. Where x keeps its array (a write in place: ``memory``, its root),
    the stale views stay listed, as they still show it: in_place counts them as known holders."""
    from minitx.autograd.tensor import _DATA, Tensor, _StaleView  # noqa: PLC0415 (tensor.py imports this module)

    root, kept, made_now, seen = _root(old_array), [], [], set()
    if memory is None and new_array is old_array:
        memory = root
    for ref in x._views:
        view = ref()
        if view is None or id(view) in seen:
            continue
        seen.add(id(view))
        if type(view) is _StaleView:
            if memory is not None and _root(_DATA.__get__(view)) is memory:
                kept.append(ref)
            continue
        array = view.data
        if _root(array) is not root:
            continue  # an array of its own since
        if view._base is _DETACHED:
            view.data = new_array
            kept.append(ref)
        elif type(view) is Tensor:
            # the ops that took the view take its old node from now on, which does not hold x (the
            # view does, to be made again): a write into x computed from the view leaves no cycle
            old = Tensor._from_op(array, view._ctx)
            old._requires_grad = view.requires_grad
            _leave_old_node(view, old)
            view.__class__ = _StaleView  # (back on refresh, which notes it on x again)
            view._base = (x, view._base[1])  # (x held strongly until then: the view is made from it)
            if memory is not None:
                kept.append(ref)
        else:
            made_now.append(view)
        if view._views:  # (a detached tensor's views see its new array; a stale view's are stale with it)
            made_now += _stale(view, array, new_array if view._base is _DETACHED else None, memory)
    x._views = kept
    return made_now


def refresh(view) -> None:
    """Make a stale view again from its base (see _stale): the same view op on the base's array
    now, recorded as a write into the view, so that ops that took the view before keep its old
    node. A view of a view is made from the tensor at the root of the chain, through each view
    op in turn, as PyTorch's: its new graph does not pass through the views between (a hook on
    them does not see its gradient). A parameter made from a view takes the array only: its
    graph is its own."""
    from minitx.autograd.tensor import Tensor, _StaleView  # noqa: PLC0415

    # a stale base first: made again after this view, it would make it stale again (written in
    # place, its old array and this view's new one show the same memory: _stale)
    base = _linked(view)[0]
    if type(base) is _StaleView:
        refresh(base)
    stale = type(view) is _StaleView
    if stale:
        view.__class__ = Tensor
    base, fn = _linked(view)
    root, ops = _view_chain(base, fn)

    def made_again(_old=None):
        t = root
        for op in ops:
            t = op.again().apply(t)
        return t

    try:
        with enable_grad():  # (read under no_grad too: its graph must be there when it is used with a gradient)
            if view.is_leaf and view.requires_grad:
                with no_grad():
                    view.data = made_again().data
            else:  # (into the view's own array: with its base written in place, it shows the base's still)
                _record_own(view, made_again)
    except BaseException:
        if stale:
            view.__class__ = _StaleView  # (still to make: the error is the caller's to see)
        raise
    if _root(view.data) is _root(base.data):
        _link(view, base, view._ctx if view._ctx is not None else fn)
        _register(base, view)
    else:
        view._base = None  # (a view op that had to copy: a view no more)


def _view_chain(base, fn):
    """(root, view ops): ``base`` and ``[fn]``, or, where base is itself a view whose values are
    its view op's on its own base (stale, or showing that base's array), that base's chain and fn
    after it. The arrays are read as they are, not made again."""
    from minitx.autograd.tensor import _DATA, _StaleView  # noqa: PLC0415

    ops = [fn]
    while isinstance(base._base, tuple):
        up, up_fn = _linked(base)
        if up is None or type(base) is not _StaleView and _root(_DATA.__get__(base)) is not _root(_DATA.__get__(up)):
            break
        ops.append(up_fn)
        base = up
    return base, ops[::-1]


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


def in_place(x, index) -> bool:
    """Whether the recorded write ``x[index] = v`` (a basic index: a view of x's array) may go into
    x's array itself rather than into a copy: whether nothing that may read that array's old
    values in the written region is left. Each part of the array minitx knows must miss the
    region: the arrays that ops saved for their gradient (inplace.saved_parts) and the arrays of
    x's views and theirs (stale after the write, made again when read: a view of the region
    holds an array a caller may have taken), but for a stale view's array that nothing else
    holds (no one reads it); and nothing else may hold the array or a view of it
    (a raw array taken with ``x.data`` or ``np.asarray(x)``, a Tensor wrapping it, an op that
    kept it outside what it saved): the references to the array are counted (_holders), and
    must be those minitx knows. Only the region's values change, and no op saved them: every
    gradient is the same as with a copy; and each write costs no copy, where a loop writing the
    rows of a buffer would otherwise keep a copy of it per row until backward.

    False where x is a view (the write goes into its base, through a copy), where its array is
    not its own (a view of another array, memory from outside), or read-only to others than the
    guard of saved arrays, or where the region overlaps a known part (checked on the arrays'
    layout only, no values read: no device synchronisation on the GPU; on the CPU exactly); and
    while a debugging tool watches each op's forward (detect_anomaly, trace_backward: it reads
    the inputs after the forward, and would see the write in x's old values)."""
    from minitx.autograd import function, inplace  # noqa: PLC0415
    from minitx.autograd.tensor import _DATA, _StaleView  # noqa: PLC0415

    if x._base is not None or type(x) is _StaleView or function.forward_hooks:
        return False
    array = _DATA.__get__(x)
    if not _owns_memory(array):
        return False
    guard = inplace.guard_of(array)  # (held here: the guard's reference to the array stays while it is counted)
    parts = None if guard is None else guard.parts
    if isinstance(array, np.ndarray) and not array.flags.writeable and not (guard is not None and guard.locked):
        return False  # read-only, and not by the guard's lock (which write_unseen lifts)
    region = array[index]
    if isinstance(region, np.generic):  # integers only: NumPy gives a scalar; the 0-d view instead
        region = array[(*index, ...) if isinstance(index, tuple) else (index, ...)]
    if _root(region) is not array:
        return False  # a copy (x[True] is an advanced index): not the region
    bounds = _bounds(region)
    if bounds is None:
        return False  # an empty region: nothing to gain, and x would keep an array raw holders share
    # those holding the array: this function (``array``, ``region``), the guard, the parts of it minitx
    # knows (each once), the other tensors showing it whole (a view of a view may hold the view, on CuPy:
    # inside a known part, or an unknown holder)
    holders = 1 + (region.base is array) + (parts is not None)
    low, high = bounds
    # a list, held until the count: a collection inside this loop may free a dropped graph, whose ops
    # take their parts out of the dict (and their references to the array with them)
    entries = list((parts or {}).values())
    for entry in entries:  # one pass: a loop of T steps asks T parts at each
        part = entry[0]
        if part is array:
            return False  # an op saved it whole
        span = entry[2]
        if span is None:
            span = entry[2] = _bounds(part) or (0, 0)
        if span[0] < high and low < span[1] and _shares_memory_with(region, part):
            return False
        holders += part.base is array
    if x._views:
        # (the detached tensors themselves, and the arrays of the stale views no one reads: held until the count)
        views, unread, tensors = {}, [], []
        if not _known_views(x, array, parts or {}, views, unread, tensors, set()):
            return False
        for part in views.values():
            if _overlap(region, bounds, part):
                return False
            holders += part.base is array
        holders += len(tensors) + sum(part.base is array for part in unread)
    return _holders(x) == holders  # else held by something minitx does not see


def _known_views(x, array, parts, views, unread, tensors, seen) -> bool:
    """Note in ``views`` the arrays of x's views (and theirs) that show ``array``'s memory and are
    not among the saved ``parts``, but in ``unread`` those of stale views that nothing else holds
    (made again when read, a stale view reads none of its old values: whatever the region, no
    one does); and in ``tensors`` the detached tensors that show it whole (they take the write,
    as they take x's new array). False where a view shows it whole (it overlaps any region), or
    a stale view's array is held by another (which may read it)."""
    from minitx.autograd.tensor import _DATA, _StaleView  # noqa: PLC0415

    for ref in x._views:
        view = ref()
        if view is None or id(view) in seen:
            continue
        seen.add(id(view))
        alone = type(view) is _StaleView and _holders(view) == 0  # (asked before ``data`` holds it too)
        data = _DATA.__get__(view)
        if data is array:
            if view._base is not _DETACHED:
                return False
            tensors.append(view)
        elif _root(data) is not array:
            continue  # an array of its own since
        elif id(data) in parts:
            pass  # (compared with the region among the saved parts)
        elif type(view) is not _StaleView:
            views[id(data)] = data
        elif alone:
            unread.append(data)
        else:
            return False  # a stale view's array that another holds (``a = v.data`` taken before)
        if view._views and not _known_views(view, array, parts, views, unread, tensors, seen):
            return False
    return True


def _owns_memory(array) -> bool:
    """Whether ``array`` owns its memory: allocated by NumPy or by CuPy's allocator, not a view,
    not memory from outside (a buffer, DLPack, __cuda_array_interface__)."""
    if isinstance(array, np.ndarray):
        return array.base is None and array.flags.owndata
    memory = getattr(getattr(array, "data", None), "mem", None)
    return (getattr(array, "base", True) is None and memory is not None
            and type(memory).__name__ in ("Memory", "PooledMemory", "ManagedMemory", "MemoryAsync"))


def _holders(x) -> int:
    """How many references x's array has, less one: x's own (sys.getrefcount, its offsets for
    this interpreter measured once on a tensor whose array nothing else holds)."""
    global _HOLDERS_OFFSET
    if _HOLDERS_OFFSET is None:
        from minitx.autograd.tensor import Tensor  # noqa: PLC0415

        _HOLDERS_OFFSET = _count_references(Tensor._from_op(np.empty(1), None))
    return _count_references(x) - _HOLDERS_OFFSET


def _count_references(x) -> int:
    from minitx.autograd.tensor import _DATA  # noqa: PLC0415

    array = _DATA.__get__(x)
    return sys.getrefcount(array)


_HOLDERS_OFFSET = None


def _bounds(array):
    """(first byte, one past the last byte) that ``array`` spans, from its layout; None if empty."""
    low = backend.address(array)
    high = low
    for n, stride in zip(array.shape, array.strides):
        if n == 0:
            return None
        if stride > 0:
            high += stride * (n - 1)
        else:
            low += stride * (n - 1)
    return low, high + array.itemsize


def _overlap(region, bounds, part) -> bool:
    """Whether ``part`` may show memory of ``region`` (which spans ``bounds``)."""
    span = _bounds(part)
    return span is not None and span[0] < bounds[1] and bounds[0] < span[1] and _shares_memory_with(region, part)


def _shares_memory_with(region, part) -> bool:
    """For arrays whose spans meet: whether they may share an element. On the CPU NumPy finds out
    (a column beside a column: no); on the GPU, where that would be a computation, they may."""
    if isinstance(region, np.ndarray):
        try:
            return bool(np.shares_memory(region, part, max_work=10_000))
        except getattr(np, "exceptions", np).TooHardError:
            return True
    return True


def refusal(x):
    """Why a recorded write cannot go into x's array, or None: x shares memory that minitx cannot
    write through (a view of a parameter, of an array from outside, a broadcast, a detach)."""
    data = x.data
    if data.size and any(stride == 0 and n > 1 for stride, n in zip(data.strides, data.shape)):
        return (f"several elements of the tensor share one memory location (a view made by broadcast_to or expand, "
                f"strides {data.strides}); clone it first (x = x.clone())")
    viewed = base_of(x)
    if viewed is not None:
        base = viewed[0]
        if base.is_leaf and base.requires_grad:  # (a view taken before its base became a parameter)
            return ("the tensor is a view of a leaf that requires grad, whose gradient would not see the write; write "
                    "into a clone, or under minitx.no_grad(), as the optimizers do")
        return refusal(base)
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
    if x._ctx is None or x.data.base is None:  # (an array that owns its memory shows no other's)
        return x.data.base is not None
    from minitx.autograd.tensor import _DATA  # noqa: PLC0415
    xp = backend.get_array_module(x.data)
    return any(xp.may_share_memory(x.data, _DATA.__get__(t)) for t in x._ctx.inputs)  # (as recorded: no refresh)
