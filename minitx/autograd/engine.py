"""The backward engine: walk the graph from the output back to the leaves.

``backward(root)`` does reverse-mode differentiation. Every tensor produced by an op
remembers that op (``tensor.grad_fn``) and the op remembers its inputs, so the graph can be
walked from the root. We order the tensors so that each one comes before everything it was
computed from (a topological order, found with an explicit stack rather than recursion, so a
chain of 100,000 ops is fine), then visit them in that order, handing each op the total
gradient of its output and adding what it returns into the gradients of its inputs:

    dL/dinput  +=  op.backward(dL/doutput)[i]

A tensor used twice receives the sum of both contributions. Leaves (tensors created by the
user with requires_grad=True) add the result into ``.grad``, which accumulates across calls
until zeroed.

``grad(outputs, inputs)`` walks the same way, from several outputs at once if asked, but returns
the gradients of the tensors asked for, leaves or not, instead of adding into any ``.grad``
(PyTorch's autograd.grad).

The sums cost memory and launches on a GPU, so the engine adds in place into a running sum it
owns: one it made by adding, or a gradient an op returned new (``Function.fresh_gradients``);
a leaf's first gradient, if the engine owns it, becomes its ``.grad`` without a copy.
An op whose backward is a scatter-add writes into such a sum itself (``backward_into``): the
tied embedding of a Transformer, used by both embeddings and the output layer, then has one
gradient table and no separate add. An op whose kernel writes dx in one pass adds the gradient
its input already has as it writes (``backward_adding``): a layer norm on a residual stream,
whose input also feeds the residual add. The values are those of the plain sum, bit for bit
(but for the sign of a zero: a row the embedding leaves untouched keeps a -0.0 that adding 0.0
would make +0.0; and for which NaN a sum of two NaNs keeps, the hardware's choice).
"""
from __future__ import annotations

import numpy as np

from minitx.autograd.grad_mode import no_grad
from minitx.backend import get_array_module

#: called as ``hook(fn, dy, input_grads)`` after each op's backward, in the order the engine
#: visits them; empty unless a tool of minitx.autograd.debug is on (one empty loop per op)
backward_hooks: list = []
#: called as ``hook(node, g, grad)`` for each tensor the walk reaches: ``g`` its whole gradient (the
#: sum of what the ops sent it, before its tensor hooks), ``grad`` the array of its .grad where the walk
#: added g into it, else None; and once as ``hook(None, None, None)`` when a walk ends or stops on
#: an error; empty unless detect_anomaly is on (one empty loop per tensor)
gradient_hooks: list = []


class HookHandle:
    """What registering a hook returns (Tensor.register_hook, Module.register_*_hook):
    ``remove()`` takes the hook off again."""

    _next_id = 0
    #: hooks added to or removed from a module or a leaf tensor (a parameter) so far: what a
    #: captured step (minitx.train.graphs) ran is its capture's hooks (an intermediate tensor's,
    #: made by each step, are not counted)
    changes = 0

    def __init__(self, hooks, counted=False):
        self.hooks, self.id, self.counted = hooks, HookHandle._next_id, counted
        HookHandle._next_id += 1

    @classmethod
    def add(cls, hooks: dict, hook, counted=False, prepend=False) -> "HookHandle":
        """``hook`` put into ``hooks`` last, or first with ``prepend`` (an OrderedDict's then)."""
        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        handle = cls(hooks, counted)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        HookHandle.changes += counted
        return handle

    def remove(self) -> None:
        if self.hooks.pop(self.id, None) is not None:
            HookHandle.changes += self.counted

    # ``with module.register_forward_hook(hook):`` hooks the block only, as PyTorch's handles
    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _run_tensor_hooks(node, g, errstate):
    """The gradient of ``node`` after its hooks (Tensor.register_hook), each seeing the last's;
    they run under NumPy's error settings ``errstate``, the caller's."""
    from minitx.autograd.tensor import Tensor

    for hook in list(node._hooks.values()):
        with np.errstate(**errstate):
            result = hook(Tensor(g))
        if result is not None:
            if not isinstance(result, Tensor) and not hasattr(result, "shape"):
                raise TypeError(f"a gradient hook returned a {type(result).__name__}; expected a Tensor of the "
                                f"gradient's shape {tuple(g.shape)}, or None to keep the gradient")
            result = result.data if isinstance(result, Tensor) else result
            # refused, not cast, as PyTorch refuses it: a cast would hide that the hook computed
            # something else than the gradient it was meant to replace
            for what, was, got in (("shape", tuple(g.shape), tuple(result.shape)), ("dtype", g.dtype, result.dtype)):
                if got != was:
                    raise RuntimeError(f"the gradient hook {getattr(hook, '__name__', type(hook).__name__)!r} "
                                       f"changed the {what} of the gradient (was {was}, got {got}); a hook returns "
                                       "a gradient of the one it was given, or None to keep it")
            g = result
    return g


def _run_post_accumulate_hooks(node, errstate):
    """``hook(node)`` for each hook of Tensor.register_post_accumulate_grad_hook, its .grad whole
    now; under NumPy's error settings ``errstate``, the caller's."""
    for hook in list(node._post_hooks.values()):
        with np.errstate(**errstate):
            result = hook(node)
        if result is not None:
            raise RuntimeError(f"the post-accumulate-grad hook {getattr(hook, '__name__', type(hook).__name__)!r} "
                               f"returned a {type(result).__name__}; it must return None (it may change .grad "
                               "in place, as PyTorch's)")


def _backward_of(fn, g):
    """``fn.backward(g)``; a write into an array the graph holds read-only (an input, an output, a
    saved array: see inplace.py) named as the op's, with what to do instead: NumPy's words name no op."""
    try:
        return fn.backward(g)
    except ValueError as error:
        if "read-only" not in str(error):
            raise
        raise ValueError(f"{fn.name}.backward wrote into an array the graph holds read-only (an input, an output "
                         f"or a saved array, which other ops may still read): compute a new array (y = y * dy) "
                         f"instead of writing in place (y *= dy); NumPy said: {error}") from error


def _gradient_array(fn, index, pg):
    """A gradient ``fn.backward`` returned for input ``index`` that is not an array: a Tensor's
    array (PyTorch's backward returns tensors), else a TypeError naming the op."""
    from minitx.autograd.tensor import Tensor

    if isinstance(pg, Tensor):
        return pg.data
    raise TypeError(f"{fn.name}.backward returned a {type(pg).__name__} for input {index}; expected an array of "
                    f"the input's shape (or None)")


def unbroadcast(grad, shape, op="backward"):
    """Sum ``grad`` over the axes that broadcasting added or stretched, to get ``shape`` back.

    If x of shape (3, 1) was broadcast to (2, 3, 4), each x element was used 2 * 4 times,
    so its gradient is the sum over axis 0 (added) and axis 2 (stretched from 1).
    ``op`` names the backward that produced ``grad``, for the error messages.

    Derivation: docs/backprop/broadcasting.md
    """
    if grad.shape == tuple(shape):
        return grad
    extra = grad.ndim - len(shape)
    if extra < 0:
        raise RuntimeError(f"{op}: gradient of shape {grad.shape} cannot be reduced to {tuple(shape)}")
    dtype = grad.dtype
    # a bfloat16 or float16 gradient is summed in float32 and rounded once (its own running sums
    # would drop the small terms), as PyTorch's reductions do
    wide = np.float32 if dtype == np.float16 or dtype.name == "bfloat16" else None
    if extra:
        grad = grad.sum(axis=tuple(range(extra)), dtype=wide)
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True, dtype=wide)
    grad = grad.astype(dtype, copy=False)
    if grad.shape != tuple(shape):
        raise RuntimeError(f"{op}: gradient of shape {grad.shape} does not match input shape {tuple(shape)}")
    return grad


def topological_order(root):
    """Tensors reachable from ``root`` (a tensor, or a list of them) that require grad, each
    before its inputs."""
    order, visited = [], set()
    stack = [(r, False) for r in (root if isinstance(root, (list, tuple)) else [root])]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)  # post-order: after everything it depends on
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        if node._ctx is not None:
            for parent in node._ctx.inputs:
                if parent._requires_grad and id(parent) not in visited:  # (the slot: Tensor's comment)
                    stack.append((parent, False))
    order.reverse()
    return order


def _added_into_running_sum(fn, inputs, dy, grads, owned) -> bool:
    """Whether ``fn`` added its gradient into the engine's running sum for its one
    differentiable input (Function.backward_into); never while a debugging hook watches every
    op's gradients (no sum is owned then: the hook may keep what it was shown)."""
    wanted = [i for i, needs in enumerate(fn.needs_input_grad) if needs]
    if len(wanted) != 1:
        return False
    parent = inputs[wanted[0]]
    return id(parent) in owned and fn.backward_into(dy, grads[id(parent)])  # (owned: pending, unbroadcast)


def _pending_input(fn, inputs, grads):
    """The first input of ``fn`` that needs a gradient and already has one pending from its other
    uses (for Function.backward_adding); else None."""
    for index, (parent, needs) in enumerate(zip(inputs, fn.needs_input_grad)):
        if needs and id(parent) in grads:
            return index
    return None


def _seed(root, grad):
    """The gradient backward starts from at ``root``: ``grad`` as an array of root's shape and
    dtype, or 1 for a one-element root."""
    from minitx.autograd.tensor import Tensor

    if not root.requires_grad:
        raise RuntimeError("backward: this tensor does not require grad and has no graph; "
                           "create the inputs with requires_grad=True (and outside no_grad())")
    xp = get_array_module(root.data)
    if grad is None:
        if root.size != 1:
            raise RuntimeError(f"backward: output has shape {root.shape}; backward() without a gradient "
                               "needs a single-element output (reduce it, e.g. .sum()), or pass grad=")
        return xp.ones_like(root.data)
    with np.errstate(all="ignore"):  # grad=1e300 beside a float32 output is its inf, silently as the ops
        grad = grad.data if isinstance(grad, Tensor) else xp.asarray(grad, dtype=root.dtype)
    if grad.shape != root.shape:
        raise ValueError(f"backward: grad has shape {grad.shape}, expected the output's shape {root.shape}")
    return grad


def backward(root, grad=None, retain_graph=False, inputs=None, fill=False):
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that requires grad; or, given
    ``inputs`` (tensors of the graph, leaves or not), return d(root)/d(input) for each (None
    where nothing reached it) and leave every .grad as it was (see ``grad`` below); or, with
    ``inputs`` and ``fill`` (Tensor.backward(inputs=...)), accumulate into the .grad of those
    inputs only, and of the retain_grad() tensors the walk passes, as PyTorch does: each after
    its hooks. ``root`` may be a list of tensors, ``grad`` then a list of their gradients: one
    walk from all of them."""
    if isinstance(root, (list, tuple)):
        roots, seeds = list(root), [None] * len(root) if grad is None else list(grad)
        if len(seeds) != len(roots):
            raise ValueError(f"backward: {len(seeds)} gradients for {len(roots)} roots")
    else:
        roots, seeds = [root], [grad]
    grads = {}
    for r, g in zip(roots, seeds):
        g = _seed(r, g)
        grads[id(r)] = grads[id(r)] + g if id(r) in grads else g

    wanted = None if inputs is None else {}  # id(input) -> its places in inputs
    for k, t in enumerate(inputs or ()):
        wanted.setdefault(id(t), []).append(k)
    found = None if inputs is None else [None] * len(inputs)
    with no_grad():  # (a tensor hook's ops, the user's, build no graph: PyTorch's too)
        try:
            _walk(roots, grads, wanted, None if fill else found, retain_graph)
        finally:
            for hook in gradient_hooks:  # the walk is over: what a hook kept of it goes
                hook(None, None, None)
    return None if fill else found


def _leading_to(order, wanted) -> set:
    """The ids of the nodes in ``order`` (topological, outputs first) whose op leads to a wanted
    input: the walk of grad() runs those ops only, as PyTorch's, so a graph behind an intermediate
    input is neither computed nor freed."""
    behind = set()  # nodes that are wanted or lead to one
    leading = set()
    for node in reversed(order):  # (inputs before the nodes computed from them)
        fn = node._ctx
        if fn is not None and any(id(parent) in behind for parent in fn.inputs):
            leading.add(id(node))
        if id(node) in leading or id(node) in wanted:
            behind.add(id(node))
    return leading


def _walk(roots, grads, wanted, found, retain_graph):
    """backward's walk from the seeded ``grads``: each node, in topological order, hands its op
    its whole gradient and adds what the op returns into its inputs' (see backward)."""
    from minitx.autograd.tensor import Tensor

    owned = set()  # the ids whose running sum in grads is the engine's to add into in place
    may_own = not backward_hooks  # a debugging hook may keep the gradients it is shown: no sum is then reused
    # NaN and inf are the answer at the edges (0, inf, NaN), as in PyTorch and on CuPy: the ops and
    # the sums run without NumPy's warnings (detect_anomaly() names the op that made one); the
    # tensor hooks, the user's code, run under the user's own settings
    user_errstate = np.geterr()
    order = topological_order(roots)
    expand = None if wanted is None else _leading_to(order, wanted)
    with np.errstate(all="ignore"):
        for node in order:
            if expand is not None and id(node) not in expand and id(node) not in wanted:
                continue  # no wanted input lies behind it
            g = grads.pop(id(node), None)
            exclusive = id(node) in owned and not node._hooks  # a hook may keep the g it is shown
            owned.discard(id(node))
            if g is None:
                continue  # nothing flowed here (e.g. an output no one used)
            before_hooks = g
            if node._hooks:
                g = _run_tensor_hooks(node, g, user_errstate)
            accumulated = False
            if found is not None:
                # a leaf's gradient after its hooks, an intermediate's before them, as PyTorch's autograd.grad
                seen = g if node._ctx is None else before_hooks
                for k, place in enumerate(wanted.get(id(node), ())):  # (the engine writes no more into it)
                    found[place] = seen if exclusive and not k else get_array_module(seen).array(seen, copy=True)
            elif wanted is not None:  # backward(inputs=...): those, and the retain_grad() tensors on the way
                if id(node) in wanted or node._retains_grad and node._ctx is not None:
                    node._accumulate_grad(g, exclusive=exclusive and node._ctx is None)
                    accumulated = True
            elif node._ctx is None or node._retains_grad:
                # a leaf may keep an owned sum as its .grad; a node that goes on to its op's backward copies
                node._accumulate_grad(g, exclusive=exclusive and node._ctx is None)
                accumulated = True
            if accumulated and node._post_hooks:  # (a leaf's: only leaves take them)
                _run_post_accumulate_hooks(node, user_errstate)
            for hook in gradient_hooks:
                hook(node, before_hooks, node._grad.data if accumulated else None)
            fn = node._ctx
            if fn is None or expand is not None and id(node) not in expand:
                continue  # a leaf, or a wanted input with no other wanted input behind it: the walk stops there
            fn.check_saved()  # not freed by an earlier backward, nothing it saved changed in place
            if fn.computed_in is not None:  # a 16-bit op computed in float32: its backward too (dy rounded once)
                g = g.astype(fn.computed_in, copy=False)
            inputs = fn.inputs
            if _added_into_running_sum(fn, inputs, g, grads, owned):
                if not retain_graph:
                    fn.release()
                continue
            added = _pending_input(fn, inputs, grads) if may_own else None  # a hook must see the op's own gradients
            input_grads = None if added is None else fn.backward_adding(g, added, grads[id(inputs[added])])
            if input_grads is None:
                added, input_grads = None, _backward_of(fn, g)
            if not isinstance(input_grads, tuple):  # one array; a list is the gradients, as a tuple
                input_grads = tuple(input_grads) if isinstance(input_grads, list) else (input_grads,)
            if len(input_grads) != len(inputs):
                raise RuntimeError(f"{fn.name}.backward returned {len(input_grads)} gradients "
                                   f"for {len(inputs)} inputs")
            for hook in backward_hooks:
                hook(fn, g, input_grads)
            for index, (parent, pg) in enumerate(zip(inputs, input_grads)):
                if pg is None or not parent._requires_grad:  # (the slot, as above)
                    continue
                if not hasattr(pg, "shape") or isinstance(pg, Tensor):
                    pg = _gradient_array(fn, index, pg)
                pg = unbroadcast(pg, parent.shape, f"{fn.name}.backward")
                if pg.dtype != parent.dtype:
                    pg = pg.astype(parent.dtype)
                previous = grads.get(id(parent))
                if index == added:  # pg is previous + the op's gradient, a new array: it takes the sum's place
                    grads[id(parent)] = pg
                    owned.add(id(parent))
                elif previous is None:
                    grads[id(parent)] = pg
                    if fn.fresh_gradients and may_own:
                        owned.add(id(parent))
                elif id(parent) in owned:
                    previous += pg  # the same bits as previous + pg, without a new array
                    grads[id(parent)] = previous  # (NumPy's 0-d results are scalars: += made a new one)
                else:
                    grads[id(parent)] = previous + pg
                    if may_own:
                        owned.add(id(parent))
            if not retain_graph:
                fn.release()


def grad(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=False, only_inputs=True,
         allow_unused=False):
    """d(outputs)/d(inputs) as a tuple of Tensors, one per input, as PyTorch's autograd.grad:
    nothing is added into any ``.grad``. ``inputs``: tensors that require grad, leaves or not
    (an intermediate result's gradient is the sum of what its uses sent it); ``outputs``: a
    tensor or a sequence of them, each with its ``grad_outputs`` (None for a one-element
    output: 1); with several, the gradients of each are summed. An input no output depends on
    raises, unless ``allow_unused`` (its gradient is then None). As PyTorch's: an intermediate
    input's gradient is the one before its tensor hooks (a leaf's, after them), and the walk runs
    only the ops between the outputs and the inputs (the graph behind an intermediate input is
    neither walked nor freed); unlike PyTorch's, no ``.grad`` is filled, retain_grad() or not.
    ``create_graph=True`` is refused, as by Tensor.backward (no higher derivatives);
    ``only_inputs``, deprecated and ignored in PyTorch, is taken and ignored."""
    from minitx.autograd.tensor import Tensor

    if create_graph:
        raise NotImplementedError("grad: create_graph=True asks for a graph of the backward pass (for higher "
                                  "derivatives); minitx's backward records none")

    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if not inputs or not outputs:
        raise ValueError(f"grad: needs at least one output and one input, got {len(outputs)} and {len(inputs)}")
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif not isinstance(grad_outputs, (list, tuple)):  # one gradient (a tensor, an array, a number)
        grad_outputs = (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for k, (out, given) in enumerate(zip(outputs, grad_outputs)):  # (backward's own errors name its arguments)
        if given is None and isinstance(out, Tensor) and out.size != 1:
            raise RuntimeError(f"grad: output {k} has shape {out.shape}; without grad_outputs only a single-element "
                               f"output has an implied gradient (1): reduce it (e.g. .sum()), or pass grad_outputs")
        shape = None if given is None else tuple(np.shape(getattr(given, "data", given)))
        if shape is not None and isinstance(out, Tensor) and shape != out.shape:
            raise ValueError(f"grad: grad_outputs[{k}] has shape {shape}, expected output {k}'s shape {out.shape}")
    for k, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {k} does not require grad (a {type(t).__name__}); the gradient is taken "
                               "with respect to tensors that do")
    total = backward(list(outputs), list(grad_outputs), retain_graph=retain_graph, inputs=inputs)
    unused = [k for k, g in enumerate(total) if g is None]
    if unused and not allow_unused:
        raise RuntimeError(f"grad: input {unused[0]} is not used by the outputs (its gradient would be None); pass "
                           "allow_unused=True to get None for it")
    return tuple(None if g is None else Tensor(g) for g in total)
