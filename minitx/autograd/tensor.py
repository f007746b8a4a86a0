"""``Tensor``: an array (numpy or cupy) plus what autograd needs to know about it.

A tensor holds

* ``data``: the raw array, on the CPU (numpy) or the GPU (cupy);
* ``requires_grad``: whether gradients should flow to it;
* ``grad``: after ``backward()``, a Tensor with d(loss)/d(this tensor), for leaves;
* ``grad_fn``: the op (a ``Function``) that produced it, or None for a leaf (kept in ``_ctx``).

Operators (``+ - * / // % ** @``, ``& | ^ ~ << >>``, indexing, ...) call ``minitx.functional``,
which applies one op each; so ``grep "class Add"`` in ``minitx/ops`` finds everything about ``+``.
Their augmented forms (``x += y`` ...) and PyTorch's in-place methods (``x.add_(y)``, ``x.exp_()``
...) write into ``x`` in place; while a graph is recorded with a gradient involved the write is
recorded as an op, as PyTorch records it: see ``Tensor._in_place``. The methods PyTorch code calls
by name (``x.sum()``, ``x.exp()``, ``x.index_add(...)``) are in ``methods.py``, each a call into
``minitx.functional``; the end of this file makes them Tensor's own.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import numbers
import operator
import re
import threading
import warnings

import numpy as np

from minitx import backend, interop, printing
from minitx.autograd.engine import backward as _run_backward
from minitx.autograd.grad_mode import is_grad_enabled
from minitx.autograd.inplace import mark_modified
from minitx.autograd.writes import is_view, note_view, record_write, refresh, refusal
from minitx.keywords import takes_torch_keywords


class Tensor:
    """``Tensor(array)`` wraps the array itself, without copying: ``a = np.ones(3);
    w = Tensor(a, requires_grad=True)``, then an optimizer step on ``w`` changes ``a`` too (and a
    write into ``a`` changes ``w``). It is minitx's own wrapper, which ops use for their outputs;
    ``minitx.tensor(data)`` copies, as ``torch.tensor`` does (``torch.Tensor(ndarray)`` copies
    too: here it does not). Python data (numbers, lists) is converted, as ``tensor()`` would.
    """

    # .grad and .requires_grad are properties over _grad and _requires_grad, which check what is
    # assigned; the engine reads and writes the slots (a property's read costs a call, on every op)
    # _cell, _views, _base: what recorded writes need (minitx.autograd.writes): the cell the ops that took
    # it hold it through (weakly), the tensors that view its array, and the one it views
    __slots__ = ("data", "_grad", "_requires_grad", "_ctx", "_retains_grad", "_hooks", "_post_hooks", "_cell",
                 "_views", "_base", "__weakref__")
    # numpy must defer to our reflected operators (np_array + tensor -> Tensor.__radd__)
    __array_priority__ = 1000

    def __init__(self, data, requires_grad: bool = False):
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TypeError(f"Tensor: requires_grad must be True or False, got {requires_grad!r}; Tensor(data) "
                            "wraps data (PyTorch's torch.Tensor(2, 3), an uninitialized (2, 3) tensor, is "
                            "minitx.empty(2, 3))")
        if isinstance(data, Tensor):
            data = data.data
        data = interop.as_array(data, "Tensor")  # a PyTorch tensor, any DLPack/__array__ object
        xp = backend.get_array_module(data)
        if isinstance(data, np.generic):  # a NumPy scalar (np.float64(1.5)) keeps its dtype
            data = np.asarray(data)
        elif isinstance(data, np.ndarray) and type(data) is not np.ndarray:
            # a subclass's own methods would answer the ops (a masked array's sum skips what
            # it masks, np.matrix's keeps two axes): its memory as a plain array, as PyTorch's
            data = data.view(np.ndarray)
        elif not isinstance(data, xp.ndarray):  # Python data: floats become float32, as in tensor()
            data = np.asarray(data, dtype=backend.resolve_dtype(_infer_dtype(data)))
        if not backend.holds(data.dtype):
            raise TypeError(f"Tensor: cannot hold an array of dtype {data.dtype}; expected one of "
                            f"{backend.dtype_names()} (convert it first, e.g. with .astype)"
                            f"{backend.byte_order_hint(data.dtype)}")
        self.data = data
        self._grad = None
        self._ctx = None
        self._retains_grad = False
        self._hooks = self._post_hooks = None
        self._cell, self._views, self._base = None, None, None
        self._requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def __getstate__(self) -> dict:
        """What pickle and copy keep: every slot but the op that made the tensor, its hooks and the
        notes of recorded writes. A copy is a leaf, as PyTorch's: a graph is a record of one
        computation, not a value to copy (its ops hold their inputs, and guard the arrays they
        saved), and the views' weak references do not pickle; the hooks stay behind, as PyTorch's
        (they are code about this tensor's backward). requires_grad and .grad are kept."""
        state = {name: getattr(self, name) for name in _slots(type(self)) if hasattr(self, name)}
        state.update(getattr(self, "__dict__", {}))  # (a subclass's own attributes)
        state["_ctx"], state["_hooks"], state["_post_hooks"] = None, None, None
        return state

    def __copy__(self) -> "Tensor":
        """copy.copy: a leaf with this tensor's array (shared) and requires_grad, without .grad, as
        PyTorch's: a shared .grad would take the copy's gradients into this tensor's."""
        state = self.__getstate__()  # (first: a stale view is made again, a Tensor once more)
        state["_grad"] = None
        twin = type(self).__new__(type(self))
        twin.__setstate__(state)
        return twin

    def __deepcopy__(self, memo) -> "Tensor":
        """copy.deepcopy: a tensor with its own copy of the array (and of .grad), as PyTorch's;
        refused for a tensor made by a recorded op, as PyTorch refuses it: a copy of its values
        would not be a copy of how they were computed (detach() first: x.detach().clone())."""
        if not self.is_leaf:  # (is_leaf makes a stale view again first: its op is then the one to name)
            raise RuntimeError(f"deepcopy: the tensor was computed by the recorded op '{self.grad_fn.name}', and a copy "
                               f"would leave its graph behind; only leaves (tensors made by the user, parameters) "
                               f"are deep-copied, as in PyTorch: copy x.detach() instead")
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        twin.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return twin

    def __setstate__(self, state: dict) -> None:
        self._cell, self._views, self._base, self._post_hooks = None, None, None, None
        if "requires_grad" in state:  # pickled when the flag was the slot itself (now the property's _requires_grad)
            state = {("_requires_grad" if name == "requires_grad" else name): value for name, value in state.items()}
        for name, value in state.items():
            setattr(self, name, value)

    @classmethod
    def _from_op(cls, data, ctx):
        """Wrap an op's output; ``ctx`` is the op when a graph is being recorded."""
        t = cls.__new__(cls)
        # numpy returns scalars from ops on 0-d arrays; keep arrays so in-place updates work
        t.data = np.asarray(data) if isinstance(data, np.generic) else data
        t._grad = None
        t._ctx = ctx
        t._retains_grad = False
        t._hooks = t._post_hooks = None
        t._cell, t._views, t._base = None, None, None
        t._requires_grad = ctx is not None
        return t

    # ---------------------------------------------------------------- properties
    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        """The number of entries, as NumPy's; called, PyTorch's ``size()``: the shape, or one axis'
        length (``t.size(0)``, ``t.size(dim=-1)``)."""
        return _Size(self.data.size, self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def device(self) -> str:
        return backend.device_of(self.data)

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    # the same facts under PyTorch's names
    def dim(self) -> int: return self.ndim
    def numel(self) -> int: return self.size
    def nelement(self) -> int: return self.size
    def element_size(self) -> int: return self.dtype.itemsize
    def is_contiguous(self) -> bool: return bool(self.data.flags.c_contiguous)

    # its memory and type, under PyTorch's names (nbytes and itemsize are NumPy's too)
    @property
    def nbytes(self) -> int:
        """numel() * element_size(): the bytes of its own entries (of a view: not of the memory it views)."""
        return self.data.nbytes

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @takes_torch_keywords  # (stride(dim=1), as PyTorch's)
    def stride(self, axis=None):
        """PyTorch's stride(): how many entries apart in memory neighbours along each axis lie, as a
        tuple (or along ``axis``, an int). A contiguous tensor's are PyTorch's, each the product of the
        lengths after its axis ([2, 3, 4]: (12, 4, 1), whatever NumPy gives an axis of length 1 or an
        empty array); a view's are its array's byte strides / itemsize: t.T's (1, 4) where t's are
        (4, 1), 0 along an axis expand() broadcast. minitx's views are PyTorch's, but for an axis of
        length 1 in a view that is not contiguous (never stepped along), and where one library views
        what the other copies (t.diagonal() is a copy in minitx)."""
        if self.data.flags.c_contiguous:
            items = [math.prod(self.shape[i + 1:]) for i in range(self.ndim)]
        else:
            items = []
            for step in self.data.strides:
                if step % self.dtype.itemsize:
                    raise ValueError(f"stride: the array's byte strides {self.data.strides} are no whole number of "
                                     f"{self.dtype.itemsize}-byte entries")
                items.append(step // self.dtype.itemsize)
        return tuple(items) if axis is None else items[_method_axis("stride", axis, self.shape)]

    def data_ptr(self) -> int:
        """The address of the first entry (PyTorch's data_ptr): in host memory on "cpu", in the GPU's
        on "cuda"; 0 for an empty tensor, as PyTorch's."""
        return backend.address(self.data) if self.data.size else 0

    def storage_offset(self) -> int:
        """How many entries into the memory it views the tensor starts (PyTorch's storage_offset; see
        backend.offset_in_base): 1 for x[1:] of a 1-d x. Where minitx copies what PyTorch views, it
        counts into minitx's copy (0 for x.diagonal(1); 3 for x.unfold(0, 3, 2)[1], PyTorch's 2)."""
        return backend.offset_in_base(self.data, "storage_offset")

    def type(self, dtype=None, non_blocking=False):
        """The dtype's name ('float32'), where PyTorch's type() gives its tensor type's
        ('torch.FloatTensor'); ``type(dtype)`` is ``to(dtype)``, as PyTorch's (a dtype or its name:
        minitx has no tensor types to name). ``non_blocking`` is taken and changes nothing, as in to()."""
        return self.dtype.name if dtype is None else self.to(dtype=dtype, non_blocking=non_blocking)

    @property
    def grad(self):
        """After ``backward()``, a Tensor of this tensor's shape with d(loss)/d(this tensor) (for
        leaves, and tensors that ``retain_grad()``); None before, or once zeroed."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        """None, or a floating-point Tensor of this tensor's shape on its device: backward adds
        into it in place, so anything else would fail there, or broadcast into the wrong shape."""
        if value is not None:
            self._check_grad(value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def _check_grad(self, value) -> None:
        if isinstance(value, Tensor) and value is not self and value.data.shape == self.data.shape \
                and value.data.dtype.kind == "f" and type(value.data) is type(self.data):
            return  # the common case, checked cheaply (the same array type: the same device)
        expected = f"None or a floating-point Tensor of shape {self.shape} on {self.device}"
        if not isinstance(value, Tensor):
            hint = " (wrap an array with minitx.tensor)" if hasattr(value, "shape") else ""
            raise TypeError(f".grad: expected {expected}, got {type(value).__name__}{hint}")
        if value is self:
            raise RuntimeError(".grad: a tensor cannot be its own gradient; assign a copy, t.detach().clone()")
        if value.shape != self.shape:
            raise ValueError(f".grad: expected {expected}, got shape {value.shape}")
        if not backend.is_floating(value.dtype):
            raise TypeError(f".grad: expected {expected}, got dtype {value.dtype.name}; convert it, "
                            f"e.g. with .to(dtype=...)")
        if value.device != self.device:
            raise RuntimeError(f".grad: expected {expected}, got a tensor on {value.device}")

    @property
    def grad_fn(self):
        """The op (a ``Function``) that computed this tensor, None for a leaf; its ``inputs``
        lead further back (minitx.autograd.graph draws the whole graph)."""
        return self._ctx

    @property
    def T(self) -> "Tensor":
        """Reverse all axes, as numpy's ``.T``."""
        return F.transpose(self)

    @property
    def mT(self) -> "Tensor":  # noqa: N802 (PyTorch's name)
        """Swap the last two axes (each matrix of a batch transposed), as PyTorch's ``.mT``."""
        return F.swapaxes(self, -2, -1)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        """The tensor's rows, ``self[0], self[1], ...`` (each a tensor, with gradient flowing)."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, element) -> bool:
        """``v in t``: whether v equals some entry of t, broadcast as ``==`` broadcasts it
        (``row in matrix`` for a row of its length, ``x in t`` for a 0-d t), as PyTorch's
        ``(t == v).any()``. Without it Python iterates the rows and asks each ``row == v`` for one
        bool: ambiguous for a row, and a 0-d tensor has no rows. None or a string is in no tensor."""
        if not _comparable(element):
            return False
        return bool((self == element).any())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its number; any tensor formats as ``str``
        with an empty spec."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if not spec:
            return str(self)
        raise TypeError(f"format: the spec {spec!r} applies to 0-d tensors (a number), got shape {self.shape}; "
                        "format t.item(), or the elements of t.tolist()")

    def __index__(self) -> int:
        """A 0-d integer tensor as a Python int, wherever Python wants one (``x[t0:t1]``,
        ``range(t)``, ``[a, b][t]``), as NumPy's 0-d integer arrays."""
        if self.ndim != 0 or self.dtype.kind not in "iu":
            raise TypeError(f"__index__: only a 0-d integer tensor converts to an index, got shape {self.shape} "
                            f"and dtype {self.dtype.name}")
        return int(self.item())

    def __repr__(self) -> str:
        array = backend.to_numpy(self.data)
        if array.dtype.name == "bfloat16":  # ml_dtypes' type has no NumPy float format (1.0 printed as 1):
            array = array.astype(np.float32)  # float32 holds each value exactly
        body = printing.array_string(array, prefix="tensor(")  # (by minitx.set_printoptions)
        extras = []
        if array.size == 0 and array.shape != (0,):  # "[]" alone says no shape: (2, 0) and (0, 5) print alike
            extras.append(f"size={array.shape}")
        if self.dtype != backend.DEFAULT_FLOAT:
            extras.append(f"dtype={self.dtype.name}")
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self._ctx is not None:
            extras.append(f"grad_fn={self._ctx.name}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    # ---------------------------------------------------------------- autograd
    def requires_grad_(self, flag: bool = True) -> "Tensor":
        if not isinstance(flag, bool):  # (PyTorch's takes a bool alone: requires_grad_(1) is refused there too)
            raise TypeError(f"requires_grad_: requires_grad must be True or False, got {flag!r}")
        if flag and not backend.is_floating(self.dtype):
            raise TypeError(f"requires_grad: only floating-point tensors can require gradients, "
                            f"got dtype {self.dtype.name}")
        if not flag and not self.is_leaf:  # (is_leaf: a stale view is made again first)
            raise RuntimeError("requires_grad_(False) on a tensor computed by an op; use .detach()")
        self._requires_grad = bool(flag)
        return self

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor: a leaf's is set by the user (requires_grad_, or
        assigned), a computed tensor's is whether one of its op's inputs requires grad."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        """``t.requires_grad = flag``: requires_grad_(flag) on a leaf, as PyTorch's; a computed
        tensor's is refused either way, as PyTorch refuses it (switched off, it would cut the graph)."""
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"requires_grad must be True or False, got {flag!r}")
        if not self.is_leaf:  # (is_leaf: a stale view is made again first)
            raise RuntimeError(f"requires_grad: only a leaf's flag is assigned; this tensor was computed by the "
                               f"recorded op '{self._ctx.name}' (to use its values as a constant, take .detach())")
        self.requires_grad_(bool(flag))

    def retain_grad(self) -> "Tensor":
        """Also keep ``.grad`` on this intermediate tensor (normally only leaves keep it)."""
        if not self.requires_grad:  # (PyTorch refuses it too: no gradient would reach it)
            raise RuntimeError("retain_grad: this tensor does not require grad, so no gradient will reach it")
        self._retains_grad = True
        return self

    @property
    def retains_grad(self) -> bool:
        """Whether backward keeps ``.grad`` on this computed tensor (retain_grad() was called); a
        leaf's is False, as PyTorch's (a leaf keeps its .grad anyway)."""
        return not self.is_leaf and self._retains_grad

    def register_hook(self, hook):
        """Call ``hook(grad)`` each time backward has this tensor's whole gradient (a Tensor of its
        shape), before it goes on to what the tensor was computed from, or into ``.grad`` of a
        leaf; a Tensor it returns replaces the gradient (to clip or record it, say). Returns a
        handle whose ``remove()`` unhooks it."""
        if not self.requires_grad:
            raise RuntimeError("register_hook: this tensor does not require grad, so no gradient will reach it")
        from minitx.autograd.engine import HookHandle  # noqa: PLC0415

        if self._hooks is None:
            self._hooks = {}
        return HookHandle.add(self._hooks, hook, counted=self.is_leaf)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` each time backward has added this leaf's gradient into its ``.grad``
        (PyTorch's register_post_accumulate_grad_hook): after every tensor hook, with .grad whole, so
        an optimizer can step this parameter there and then. Not when the gradient goes elsewhere
        (autograd.grad, backward(inputs=) without it). The hook returns None (anything else is a
        RuntimeError, as PyTorch's). A leaf that requires grad only. Returns a handle whose
        ``remove()`` unhooks it."""
        if not self.requires_grad:
            raise RuntimeError("register_post_accumulate_grad_hook: this tensor does not require grad, so no "
                               "gradient will reach it")
        if not self.is_leaf:
            raise RuntimeError(f"register_post_accumulate_grad_hook: this tensor was computed by the op "
                               f"'{self._ctx.name}'; only a leaf (a parameter) accumulates .grad, as in PyTorch "
                               f"(register_hook sees any tensor's gradient)")
        from minitx.autograd.engine import HookHandle  # noqa: PLC0415

        if self._post_hooks is None:
            self._post_hooks = {}
        return HookHandle.add(self._post_hooks, hook, counted=True)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None, *, grad=None) -> None:
        """Fill ``.grad`` of every leaf this tensor depends on (see minitx.autograd.engine), with
        PyTorch's arguments: ``gradient`` (or ``grad``), the output's gradient (None for a
        one-element tensor: 1); ``retain_graph`` keeps the graph for another backward; ``inputs``
        (a tensor or a sequence of them, leaves or not) fills the ``.grad`` of those only (after
        their hooks; a tensor given twice once) and of the retain_grad() tensors on the way, as
        PyTorch's, and the walk stops at them. ``create_graph=True`` is refused: minitx's backward records no graph
        of itself, so there are no higher derivatives."""
        if grad is not None:
            if gradient is not None:
                raise TypeError("backward: got both gradient and grad, two names for the output's gradient; give one")
            gradient = grad
        retain_graph, create_graph = _truth("retain_graph", retain_graph), _truth("create_graph", create_graph)
        if create_graph:
            raise NotImplementedError("backward: create_graph=True asks for a graph of the backward pass (for higher "
                                      "derivatives); minitx's backward records none")
        if inputs is None:
            _run_backward(self, gradient, retain_graph=bool(retain_graph))
            return
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not inputs:
            raise ValueError("backward: inputs is empty; leave it out to fill the .grad of every leaf")
        for k, t in enumerate(inputs):
            if not isinstance(t, Tensor) or not t.requires_grad:
                raise RuntimeError(f"backward: input {k} does not require grad (a {type(t).__name__}); inputs are "
                                   "tensors whose .grad is to be filled")
        _run_backward(self, gradient, retain_graph=bool(retain_graph), inputs=inputs, fill=True)

    def _accumulate_grad(self, g, exclusive: bool = False) -> None:
        """Add g into .grad, which has this tensor's dtype (whatever g's) unless one of another
        floating dtype was assigned. ``exclusive``: the engine made g and nothing else holds it,
        so a first gradient may be kept as it is."""
        grad = self._grad  # (not the property: this is the engine's hot path, and g fits by construction)
        if grad is None:
            if exclusive and g.dtype == self.dtype and g.flags.c_contiguous:
                self._grad = Tensor(g)  # what a copy would hold, without the copy (as PyTorch's AccumulateGrad)
                return
            # own copy (g may be shared with another gradient), in this tensor's dtype
            self._grad = Tensor(backend.get_array_module(g).array(g, dtype=self.dtype, copy=True))
        else:
            mark_modified(grad)  # a graph may have used the old .grad as a constant
            grad.data += g.astype(grad.dtype, copy=False)

    def detach(self) -> "Tensor":
        """The same data, cut from the graph (shares memory with this tensor, and keeps sharing
        it after a recorded write gives this tensor a new array: minitx.autograd.writes)."""
        detached = Tensor._from_op(self.data, None)
        note_view(self, detached, None)
        return detached

    def detach_(self) -> "Tensor":
        """This tensor cut from the graph in place: a leaf that requires no grad, with the same
        array (PyTorch's detach_). The ops that used it before still send their gradients back
        through what it was computed from, as in PyTorch: a recorded write (minitx.autograd.writes)."""
        if is_view(self):  # (its base's graph would lose this part, as PyTorch refuses too)
            raise RuntimeError("detach_: this tensor is a view of another tensor (an index, reshape or transpose), "
                               "whose graph would lose it; write v = v.detach(), a new tensor")
        if self._ctx is None:
            self.requires_grad = False
        else:
            record_write(self, lambda old: Tensor._from_op(old.data, None))
        return self

    def clone(self) -> "Tensor":
        """A copy in the graph (gradient flows back to this tensor): a cast to its own dtype,
        which copies and keeps the layout, as PyTorch's clone."""
        return F.astype(self, self.dtype)

    def contiguous(self) -> "Tensor":
        """This tensor if its array is C-contiguous, else a C-ordered copy in the graph (repeat's
        take writes a new C-ordered array; a cast or an elementwise op keeps a transpose's layout)."""
        return self if self.is_contiguous() else F.repeat(self, 1, axis=0)

    # ---------------------------------------------------------------- conversion
    def numpy(self) -> np.ndarray:
        """A numpy array with the data: the tensor's own memory on the CPU (a write into either
        is seen by the other), a copy from the GPU. A tensor that requires grad gives its array too,
        without its gradient (PyTorch asks for ``t.detach().numpy()``; docs/ops.md lists this)."""
        return backend.to_numpy(self.data)

    def item(self):
        if self.size != 1:
            raise ValueError(f"item: only a one-element tensor converts to a Python number, got shape {self.shape}")
        return backend.to_host(self.data.reshape(())).item()

    def tolist(self):
        return self.numpy().tolist()

    def to(self, device=None, dtype=None, non_blocking=False, copy=False) -> "Tensor":
        """This tensor on ``device`` and/or as ``dtype`` (itself where it already is, as in
        PyTorch, unless ``copy``); gradients flow back through the move. A dtype or another tensor
        may come first, as PyTorch takes them: ``t.to("float32", non_blocking, copy)``, and
        ``t.to(other, non_blocking, copy)`` for other's dtype and device. ``non_blocking`` is taken
        for PyTorch's code and changes nothing (a copy minitx makes is complete before an op reads it)."""
        first = _dtype_first(device)
        if first is not None:
            # PyTorch's to(dtype, non_blocking=False, copy=False) and to(other, ...): what comes
            # second is non_blocking, third copy (read as a dtype, True was an unknown one)
            if dtype is not None and not isinstance(dtype, bool):
                raise TypeError(f"to: got {device!r} first, and {dtype!r} as a second dtype; after a dtype or a "
                                "tensor come non_blocking and copy (True or False)")
            if isinstance(dtype, bool):
                non_blocking, copy = dtype, bool(non_blocking) or copy
            device, dtype = first
        out = self
        if dtype is not None and backend.resolve_dtype(dtype, "to") != self.dtype:
            out = F.astype(out, dtype)
        if device is not None and backend.check_device(device, "to") != out.device:
            out = F.to_device(out, device)
        return out.clone() if copy and out is self else out

    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self) -> "Tensor":
        return self.to("cuda")

    def astype(self, dtype) -> "Tensor":
        return self.to(dtype=dtype)

    def float(self) -> "Tensor":
        return self.to(dtype="float32")

    def double(self) -> "Tensor":
        return self.to(dtype="float64")

    def long(self) -> "Tensor":
        return self.to(dtype="int64")

    def half(self) -> "Tensor":
        return self.to(dtype="float16")

    def bfloat16(self) -> "Tensor":
        return self.to(dtype="bfloat16")

    def int(self) -> "Tensor":  # (PyTorch's names: int32, int16, uint8 and bool casts)
        return self.to(dtype="int32")

    def short(self) -> "Tensor":
        return self.to(dtype="int16")

    def byte(self) -> "Tensor":
        return self.to(dtype="uint8")

    def bool(self) -> "Tensor":
        return self.to(dtype="bool")

    def type_as(self, other) -> "Tensor":
        """This tensor as ``other``'s dtype, on its device (PyTorch's type names both)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as: other must be a tensor, got {type_name(other)}")
        return self.to(other.device, other.dtype)

    def is_floating_point(self) -> bool:
        return backend.is_floating(self.dtype)

    @property
    def is_cuda(self) -> bool:
        return self.device == "cuda"

    # new tensors with this tensor's dtype and device (unless given), no gradient: PyTorch's new_*,
    # their shape given as numbers, a tuple or size=
    def new_zeros(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        return self._new(creation.zeros, "new_zeros", shape, size, dtype, device, requires_grad)

    def new_ones(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        return self._new(creation.ones, "new_ones", shape, size, dtype, device, requires_grad)

    def new_empty(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        """PyTorch's new_empty: its values are not to be read; here they are zeros (new_zeros)."""
        return self._new(creation.zeros, "new_empty", shape, size, dtype, device, requires_grad)

    def _new(self, make, op, shape, size, dtype, device, requires_grad):
        """``make`` (zeros, ones) of the shape given to ``op`` as numbers, a tuple or size=, in this
        tensor's dtype and on its device unless others are given."""
        return make(creation.shape_arguments(op, shape, size), dtype=self.dtype if dtype is None else dtype,
                    device=self.device if device is None else device, requires_grad=requires_grad)

    def new_full(self, shape=None, value=None, dtype=None, device=None, requires_grad=False, *, size=None,
                 fill_value=None):
        shape = creation.new_shape("new_full", creation.one_of("new_full", "shape", shape, "size", size))
        return creation.full(shape, value, dtype=self.dtype if dtype is None else dtype,
                             device=self.device if device is None else device, requires_grad=requires_grad,
                             fill_value=fill_value)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A copy of ``data`` (PyTorch's new_tensor: this tensor's dtype, even for integer data)."""
        with named("new_tensor"):
            return tensor(data, dtype=self.dtype if dtype is None else dtype,
                          device=self.device if device is None else device, requires_grad=requires_grad)

    def __array__(self, dtype=None, copy=None):
        """The data as a NumPy array, under NumPy's contract for ``copy``: None shares the
        tensor's memory where it can (``np.asarray(t)``, as ``t.numpy()``), True gives an array
        of its own (``np.array(t)``, as PyTorch's: a snapshot an optimizer step will not change),
        and False refuses where a copy is needed (a cast, or a GPU tensor)."""
        reading = _reading_a_list  # an element of tensor([...]), x + [...]: see _read_list
        if self.requires_grad and reading.depth and not reading.warned:
            reading.warned = True  # once a list: NumPy asks each element for its array more than once
            warnings.warn("tensor: a list holding a Tensor that requires grad is copied as numbers: no gradient "
                          "flows back to that tensor; minitx.stack([...]) keeps the graph (or write t.detach() "
                          "to say so)", UserWarning, stacklevel=interop._user_stacklevel())
        moved = self.device != "cpu"  # (numpy() copies from the GPU)
        cast = dtype is not None and np.dtype(dtype) != self.dtype
        if copy is False and (moved or cast):
            raise ValueError(f"__array__: a {self.device} tensor of dtype {self.dtype.name} cannot be read as a "
                             f"NumPy array{f' of dtype {np.dtype(dtype).name}' if cast else ''} without a copy; "
                             "leave copy unset (np.asarray) to allow one")
        arr = self.numpy()
        if cast:
            return arr.astype(dtype)  # (a copy)
        return arr.copy() if copy and not moved else arr

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"the truth value of a tensor with {self.size} elements is ambiguous; "
                             "use .any() or .all()")
        return bool(self.item())

    # ---------------------------------------------------------------- operators
    def __add__(self, other): return F.add(self, other)
    def __radd__(self, other): return F.add(other, self)
    def __sub__(self, other): return F.sub(self, other)
    def __rsub__(self, other): return F.sub(other, self)
    def __mul__(self, other): return F.mul(self, other)
    def __rmul__(self, other): return F.mul(other, self)
    def __truediv__(self, other): return F.div(self, other)
    def __rtruediv__(self, other): return F.div(other, self)
    def __floordiv__(self, other): return F.floor_divide(self, other)
    def __rfloordiv__(self, other): return F.floor_divide(other, self)
    def __mod__(self, other): return F.remainder(self, other)
    def __rmod__(self, other): return F.remainder(other, self)
    def __pow__(self, other): return F.pow(self, other)
    def __rpow__(self, other): return F.pow(other, self)
    def __matmul__(self, other): return F.matmul(self, other)
    def __rmatmul__(self, other): return F.matmul(other, self)
    def __neg__(self): return F.neg(self)
    def __abs__(self): return F.abs(self)
    def __getitem__(self, index): return F.getitem(self, index)

    def __pos__(self):
        """+x is x itself, as PyTorch's (x unchanged: no copy, the same graph); not for booleans."""
        if self.dtype.kind == "b":
            raise TypeError("+ (positive): not defined for boolean tensors (NumPy and PyTorch refuse them "
                            "too); convert to an integer dtype first")
        return self

    # comparisons give bool tensors that carry no gradient; with what is no number, array or
    # tensor (None, a string) Python decides: == is False, != True, and < raises its TypeError
    def __eq__(self, other): return F.equal(self, other) if _comparable(other) else NotImplemented
    def __ne__(self, other): return F.not_equal(self, other) if _comparable(other) else NotImplemented
    def __lt__(self, other): return F.less(self, other) if _comparable(other) else NotImplemented
    def __le__(self, other): return F.less_equal(self, other) if _comparable(other) else NotImplemented
    def __gt__(self, other): return F.greater(self, other) if _comparable(other) else NotImplemented
    def __ge__(self, other): return F.greater_equal(self, other) if _comparable(other) else NotImplemented
    def __invert__(self):
        """~x: logical not of a boolean tensor, the bitwise not of an integer one (as NumPy and
        PyTorch); no gradient. A float has no bits to flip: TypeError."""
        if self.dtype.kind not in "biu":
            raise TypeError(f"~ (invert): defined for boolean and integer tensors, got dtype {self.dtype.name}")
        return F.bitwise_not(self)

    # bitwise ops of integer and boolean tensors (booleans: logical), no gradient
    def __and__(self, other): return F.bitwise_and(self, other)
    def __rand__(self, other): return F.bitwise_and(other, self)
    def __or__(self, other): return F.bitwise_or(self, other)
    def __ror__(self, other): return F.bitwise_or(other, self)
    def __xor__(self, other): return F.bitwise_xor(self, other)
    def __rxor__(self, other): return F.bitwise_xor(other, self)
    def __lshift__(self, other): return F.bitwise_left_shift(self, other)
    def __rlshift__(self, other): return F.bitwise_left_shift(other, self)
    def __rshift__(self, other): return F.bitwise_right_shift(self, other)
    def __rrshift__(self, other): return F.bitwise_right_shift(other, self)
    __hash__ = object.__hash__

    # ---------------------------------------------------------------- in place
    # x += y: x + y as the operator computes it, written into x's own array (see _in_place);
    # without these Python would rebind x to a new tensor, and a parameter would stay unchanged
    def __iadd__(self, other): return self._in_place("+=", F.add, other)
    def __isub__(self, other): return self._in_place("-=", F.sub, other)
    def __imul__(self, other): return self._in_place("*=", F.mul, other)
    def __itruediv__(self, other): return self._in_place("/=", F.div, other)
    def __ifloordiv__(self, other): return self._in_place("//=", F.floor_divide, other)
    def __imod__(self, other): return self._in_place("%=", F.remainder, other)
    def __ipow__(self, other): return self._in_place("**=", F.pow, other)
    def __imatmul__(self, other): return self._in_place("@=", F.matmul, other)
    def __iand__(self, other): return self._in_place("&=", F.bitwise_and, other)
    def __ior__(self, other): return self._in_place("|=", F.bitwise_or, other)
    def __ixor__(self, other): return self._in_place("^=", F.bitwise_xor, other)
    def __ilshift__(self, other): return self._in_place("<<=", F.bitwise_left_shift, other)
    def __irshift__(self, other): return self._in_place(">>=", F.bitwise_right_shift, other)

    # PyTorch's in-place methods that have no out-of-place form of their own name, or add to it;
    # the others (x.exp_(), x.scatter_(...), ...) are built from their out-of-place forms (methods.py)
    def add_(self, other, *, alpha=1):  # (alpha * other wide, so that x + alpha * y rounds once: alpha_times)
        return self._in_place("add_", F.add, alpha_times("add_", self, other, alpha, wide=True))

    def sub_(self, other, *, alpha=1): return self._subtract_in_place("sub_", other, alpha)
    def subtract_(self, other, *, alpha=1): return self._subtract_in_place("subtract_", other, alpha)

    def _subtract_in_place(self, op, other, alpha):
        return self._in_place(op, lambda x, y: _difference(op, x, y, alpha, wide=True), other)

    def fill_(self, value): return self._in_place("fill_", _as_contents, _one_value(_operand("fill_", self, value)))
    def copy_(self, src): return self._in_place("copy_", _as_contents, _operand("copy_", self, src))
    def zero_(self): return self._in_place("zero_", lambda x: x.new_zeros(x.shape))

    def fill_diagonal_(self, fill_value, wrap=False): return indexing.fill_diagonal_(self, fill_value, wrap)

    def float_power_(self, exponent):
        """``x.float_power(exponent)`` written into x: its result is float64 whatever x's dtype, so
        PyTorch takes only a float64 x (a float32 x would round what float_power computes in double)."""
        if self.dtype != np.float64:
            raise TypeError(f"float_power_: the result is float64, and the tensor's dtype is {self.dtype.name} (an "
                            "in-place float_power keeps float64 only, as PyTorch's); write x = "
                            "x.float_power(exponent), or convert x first, e.g. x = x.double()")
        return self._in_place("float_power_", F.float_power, exponent)

    def __setitem__(self, index, value):
        """``x[index] = v``: v written into x's array, recorded while a gradient is (F.setitem)."""
        F.setitem(self, index, value)

    def _in_place(self, op: str, fn, /, *args, **kwargs) -> "Tensor":
        """``x op= y``, or the method ``x.op(...)`` (``add_``, ``exp_``): ``fn(x, *args, **kwargs)``
        (the out-of-place op) written into x; x is returned.

        The result must have x's shape (x itself is not broadcast) and a dtype that casts to x's
        by NumPy's 'same_kind' rule (a float32 x stays float32 after ``x += float64``, as in
        PyTorch; an integer x refuses ``x += 0.5`` and ``x.exp_()``). A result that is x itself
        (dropout in eval mode) writes nothing.

        Where no gradient is involved (grad mode off, or neither x nor an argument requires grad)
        the write goes into x's own array, so into the tensor x is a view of (``v = y[0];
        v += 1`` changes y), and is counted by ``mark_modified``: a graph that saved the old
        values refuses its backward, as PyTorch's does.

        While a graph is recorded with a gradient involved the write is recorded, as PyTorch
        records it: x becomes the output of the op, with a new array (minitx.autograd.writes:
        its views are made again from it), so ``h = w * 2; h.exp_()`` sends h's gradient on to w,
        and ``loss += part`` accumulates. New contents (``fill_``, ``copy_``, ``zero_``) and a
        result that takes no gradient (``floor_``) are written as ``x[...] = result``: x still
        requires grad, and what it was gets a zero gradient, as in PyTorch. A view of another
        tensor (``v = y[0]; v.exp_()``) writes into that tensor, as PyTorch's. Refused there
        (_write_refused): a leaf that requires grad (as in PyTorch: the write would be lost to its
        gradient), and memory minitx cannot write through (writes.refusal: a view of such a leaf,
        of an array from outside, a broadcast).
        """
        if self._records_write(args, kwargs):
            refusal = self._write_refused(op)
            if refusal is not None:
                raise RuntimeError(refusal)

            def new_values(old):  # the result in x's dtype, with an array of its own (not fill_'s value broadcast)
                new = self._as_written(op, fn(old, *args, **kwargs)).to(dtype=self.dtype)
                if old.requires_grad and (fn is _as_contents or not new.requires_grad):  # x[...] = new
                    return SetItem(Ellipsis).apply(old, new)  # (what x was gets a zero gradient, not none)
                return new.clone() if new is not old and new.data.base is not None else new

            record_write(self, new_values)
            return self
        result = fn(self, *args, **kwargs)
        if result is not self:
            written_values = self._as_written(op, result).data
            with np.errstate(all="ignore"):  # a cast past the dtype's range gives its inf, silently as the ops
                self._writable(op)[...] = written_values
        return self

    def _records_write(self, args=(), kwargs=None) -> bool:
        """Whether an in-place op with these arguments is recorded: a graph is, and this tensor
        or an argument requires grad."""
        arguments = args + tuple((kwargs or {}).values())
        return is_grad_enabled() and (self.requires_grad or _any_requires_grad(arguments))

    def _write_refused(self, op: str):
        """Why a recorded in-place op cannot write into this tensor, or None when it can."""
        if self.is_leaf and self.requires_grad:
            return (f"{op}: a leaf tensor that requires grad cannot be changed in place while a graph is recorded "
                    f"(its gradient would not see the write); write x = {_out_of_place(op)}, or update it under "
                    "minitx.no_grad(), as the optimizers do")
        why = refusal(self)
        return None if why is None else f"{op}: {why}; or write x = {_out_of_place(op)} for a new tensor"

    def _as_written(self, op: str, result: "Tensor") -> "Tensor":
        """``result``, checked to be what an in-place op may write into this tensor: its shape, and
        a dtype that casts to its dtype by the same-kind rule (see _in_place)."""
        if result.shape != self.shape:
            raise ValueError(f"{op}: the result has shape {result.shape}, and an in-place op keeps the tensor's "
                             f"shape {self.shape} (the tensor is not broadcast); write x = {_out_of_place(op)}")
        if not backend.can_cast(result.dtype, self.dtype):
            raise TypeError(f"{op}: the result has dtype {result.dtype.name}, which cannot be stored in the "
                            f"tensor's dtype {self.dtype.name} (same-kind casting); write x = {_out_of_place(op)}, "
                            f"or convert x first, e.g. x = x.to(dtype='{result.dtype.name}')")
        return result

    def _writable(self, op: str):
        """``self.data``, ready for a write: the lock of ops that saved it lifted and a version
        counted (``mark_modified``); refused when elements share memory (a broadcast view)."""
        data = self.data
        if data.size and any(stride == 0 and n > 1 for stride, n in zip(data.strides, data.shape)):
            raise RuntimeError(f"{op}: several elements of the tensor share one memory location (a view made "
                               f"by broadcast_to or expand, strides {data.strides}); copy it first, "
                               "e.g. x.clone()")
        mark_modified(self)  # (the tensor: a raw NumPy array's .data is its buffer, not itself)
        if isinstance(data, np.ndarray) and not data.flags.writeable:
            # a view taken while an op held its array locked stays read-only after the lock goes;
            # NumPy lets a view write again only when the array owning the memory is writeable
            try:
                if data.base is None:
                    raise ValueError  # an array made read-only by its owner: not ours to change
                data.setflags(write=True)
            except ValueError:
                raise RuntimeError(f"{op}: the tensor's array is read-only (made so by its owner, or memory "
                                   "minitx does not own); copy it first, e.g. x.clone()") from None
        return data

    # ---------------------------------------------------------------- methods
    # PyTorch's method names (x.sum(), x.exp(), x.index_add(...)), each a call into minitx.functional,
    # are in methods.py, which makes them this class's own once it exists (the import at the end)

    # ---------------------------------------------------------------- DLPack (see minitx.interop)
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The data's DLPack capsule: torch/numpy/cupy.from_dlpack(t) share this tensor's memory
        (a bfloat16 one's says bfloat16, which PyTorch reads and NumPy does not: see minitx.interop)."""
        return interop.export_dlpack(self.data, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(1, 0) for the CPU, (2, n) for CUDA GPU n."""
        return self.data.__dlpack_device__()


_DATA, _REQUIRES_GRAD = Tensor.__dict__["data"], Tensor.__dict__["_requires_grad"]  # the slots themselves


class _StaleView(Tensor):
    """A view whose base a recorded write gave a new array (minitx.autograd.writes): reading its
    data, whether it requires grad or is a leaf makes it again from the base first (``refresh``,
    which makes it a Tensor again), also in a hook during a backward walk: the graph being walked
    holds the view's old node, not the view (writes._stale). Its shape and dtype are read as they
    are (a refresh changes neither), and so is its grad_fn: the op that made its old values, until
    it is made again (minitx.autograd.graph makes a stale root again before drawing it, as a
    backward from it does)."""

    __slots__ = ()

    @property
    def data(self):
        refresh(self)
        return self.data

    @data.setter
    def data(self, value):  # (an array given replaces the view's: nothing to make again)
        self.__class__ = Tensor
        self.data = value

    @property
    def _requires_grad(self):
        refresh(self)
        return _REQUIRES_GRAD.__get__(self)

    @_requires_grad.setter
    def _requires_grad(self, value):  # (made again first: the flag is the view's as it is now)
        refresh(self)
        self._requires_grad = value

    @property
    def is_leaf(self):
        refresh(self)
        return self._ctx is None

    shape = property(lambda self: tuple(_DATA.__get__(self).shape))
    ndim = property(lambda self: _DATA.__get__(self).ndim)
    dtype = property(lambda self: _DATA.__get__(self).dtype)

    def __reduce_ex__(self, protocol):  # (pickle and copy read the class first: a Tensor's, once made again)
        refresh(self)
        return self.__reduce_ex__(protocol)


class _Size(int):
    """A tensor's ``size``: an int, the number of entries (NumPy's ``size``), that can be called as
    PyTorch's ``size()``, which code written for PyTorch does (``batch = x.size(0)``)."""

    def __new__(cls, entries: int, shape: tuple):
        size = super().__new__(cls, entries)
        size.shape = shape
        return size

    def __reduce__(self):  # (copy and pickle call __new__ with these)
        return _Size, (int(self), self.shape)

    def __call__(self, dim=None):
        if dim is None:
            return self.shape
        n = len(self.shape)
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -n <= dim < n:
            raise IndexError(f"size: dim {dim!r} is not an axis of a tensor of shape {self.shape}; expected an int "
                             f"in [{-n}, {n})")
        return self.shape[dim]

@functools.lru_cache(maxsize=None)
def _slots(cls) -> tuple:
    """The slots of a Tensor class and its bases that pickle keeps (Tensor.__getstate__)."""
    notes = ("_cell", "_views", "_base", "__weakref__")
    return tuple(name for c in cls.__mro__ for name in getattr(c, "__slots__", ()) if name not in notes)


def _names_a_dtype(value) -> bool:
    """Whether ``value`` (given as ``to``'s device) is a dtype instead: a dtype, or its name."""
    try:
        backend.resolve_dtype(value)
    except (TypeError, ValueError):
        return False
    return True


def _dtype_first(first):
    """``to``'s first argument read as PyTorch reads it: (device, dtype) where it is a dtype (or
    its name), None for the device; where it is a tensor, that tensor's device and dtype; else
    None (it names a device)."""
    if isinstance(first, Tensor):
        return first.device, first.dtype
    if first is not None and _names_a_dtype(first):
        return None, first
    return None


def _comparable(other) -> bool:
    """What a comparison takes: a tensor, a number, an array or array-like (a list, a PyTorch
    tensor). Anything else (None, a string) is Python's to compare (``==`` is then identity)."""
    if isinstance(other, (Tensor, numbers.Number, np.ndarray, list, tuple)):
        return True
    if isinstance(other, np.generic):
        return other.dtype.kind in "biufc"  # np.bool_ is no numbers.Number; np.str_ is no number
    if isinstance(other, (str, bytes)) or other is None:
        return False
    return hasattr(other, "__array__") or hasattr(other, "__dlpack__") or hasattr(other, "__cuda_array_interface__")


# the out-of-place forms of the in-place methods written by hand (here and in methods.py), for their messages
_OUT_OF_PLACE = {"add_": "x + alpha * y", "sub_": "x - alpha * y", "fill_": "x.new_full(x.shape, value)",
                 "copy_": "src.type_as(x).broadcast_to(x.shape)", "zero_": "x.new_zeros(x.shape)",
                 "uniform_": "minitx.rand_like(x) * (b - a) + a", "normal_": "minitx.randn_like(x) * std + mean"}


def _out_of_place(op: str) -> str:
    """What to write for a new tensor where the in-place op ``op`` is refused: ``x + y`` for
    ``+=``, ``x.exp(...)`` for ``exp_``, ``F.dropout(x, ...)`` for F.dropout(x, inplace=True)."""
    if op.endswith("="):
        return f"x {op[:-1]} y"
    name = op.removesuffix("_")
    return _OUT_OF_PLACE.get(op) or (f"x.{name}(...)" if hasattr(Tensor, name) else f"F.{name}(x, ...)")


def _any_requires_grad(args) -> bool:
    """Whether one of ``args`` (an in-place op's arguments) takes a gradient."""
    return any(isinstance(t, Tensor) and t.requires_grad for t in args)


def _one_value(value):
    """fill_'s value: a number or a 0-d tensor, as PyTorch's (copy_ takes arrays)."""
    if getattr(value, "ndim", 0) != 0:
        raise ValueError(f"fill_: the value must be a number or a 0-d tensor, got shape {tuple(value.shape)}; "
                         "use copy_ for an array")
    return value


def _operand(op, x, value):
    """fill_'s and copy_'s value as a tensor beside x; data no tensor holds named by ``op``."""
    with named(op):
        return as_tensor(value, like=x)


def _as_contents(x, value):
    """fill_'s and copy_'s new values of x: ``value`` (a number, an array, a tensor) on x's device,
    broadcast to x's shape."""
    return F.broadcast_to(as_tensor(value, like=x).to(x.device), x.shape)


def _truth(name, value):
    """backward's retain_graph or create_graph: None, or what PyTorch reads as a bool (True, 1, a 0-d
    tensor of one); a string or a list, which Python would read as True, is refused."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, numbers.Integral) and value in (0, 1) or getattr(value, "size", None) == 1:
        return bool(value)
    raise TypeError(f"backward: {name} must be True, False or None, got {value!r}")


def _method_axis(op, axis, shape, takes_0d=False):
    """``axis`` of a tensor of ``shape`` as a position in [0, ndim), checked to lie in [-ndim, ndim):
    an axis past the end is an error, not the axis it wraps around to. A 0-d tensor takes axis 0 or
    -1 where ``takes_0d`` (as PyTorch's movedim, index_select and flatten); else it has no axis to
    cut along, and is refused, as PyTorch's narrow, chunk, split, unbind and unflatten refuse it."""
    ndim = len(shape)
    if not ndim and not takes_0d:
        raise ValueError(f"{op}: needs a tensor with at least 1 dimension, got a 0-d tensor")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    n = max(ndim, 1)
    if not -n <= axis < n:
        raise np.exceptions.AxisError(f"{op}: axis {axis} is out of range for a tensor of shape {tuple(shape)}; "
                                      f"expected an int in [{-n}, {n})")
    return int(axis) % n


def lengths(op, shape) -> tuple:
    """``shape`` (reshape's, view's, expand's, a new tensor's: a tuple, list, range or 1-d array, or one
    length) as a tuple of ints, each given as an int or anything with __index__ but a bool (NumPy would
    take True as 1), or a TypeError naming ``op``. A dtype alone given to reshape or view is named as
    one (view(dtype) takes it)."""
    shape = tuple(shape) if isinstance(shape, (tuple, list, range)) or getattr(shape, "ndim", 0) == 1 else (shape,)
    if all(hasattr(n, "__index__") and not isinstance(n, (bool, np.bool_)) for n in shape):
        try:  # (a plain try: reshape passes here on every call; a tensor of several entries has no index)
            return tuple(operator.index(n) for n in shape)
        except TypeError:
            pass
    dtype = None
    if op in ("reshape", "view") and len(shape) == 1 and isinstance(shape[0], (str, np.dtype, type)):
        with contextlib.suppress(TypeError):
            dtype = backend.resolve_dtype(shape[0]).name
    if dtype is not None:
        raise TypeError(f"{op}: expected a shape (ints), got the dtype {shape[0]!r}; x.to(dtype) converts the values, "
                        "x.view(dtype) reads the same bytes as another dtype")
    raise TypeError(f"{op}: expected a shape (ints), got {shape!r}")


def _infer_dtype(data):
    """Default dtypes for data from Python: floats -> float32, ints -> int64, bools -> bool.

    Arrays (numpy or cupy) and numpy scalars are judged by their dtype: np.asarray would copy a
    cupy array to the host, or raise TypeError (cupy refuses implicit conversion)."""
    dtype = np.dtype(data.dtype) if hasattr(data, "dtype") else np.asarray(data).dtype
    kind = dtype.kind
    if kind == "b":
        return "bool"
    if kind in "iu":
        return "int64"
    if kind == "f":
        return backend.DEFAULT_FLOAT
    raise TypeError(f"tensor: cannot make a tensor from data of type {type(data).__name__} (NumPy dtype {dtype}); "
                    "expected numbers or booleans (a number, a list of them, an array or a tensor)")


def bits_as(x, dtype):
    """x's bytes read as ``dtype``, sharing x's memory, as PyTorch's view(dtype): float32 1.0 is the
    int32 1065353216. Where the two dtypes' sizes differ, the last axis' length is scaled by their
    ratio (a (2, 4) float32 tensor is a (2, 8) float16 one or a (2, 2) float64 one), which PyTorch
    allows only where the last axis is contiguous and, toward a larger dtype, where its length, the
    other strides and the offset into memory come whole in the larger size: the same checks here,
    but for the strides of axes of length 1 and of empty tensors, which nothing steps along (NumPy
    keeps any stride there; PyTorch refuses an odd one: docs/ops.md).
    No gradient flows through it (PyTorch's takes none either): a tensor that requires none, which
    shares x's memory as x.detach() does."""
    dtype = backend.resolve_dtype(dtype)
    old, new = x.dtype.itemsize, dtype.itemsize
    what = f"view: {x.dtype.name} as {dtype.name} (elements of {old} and {new} bytes)"
    if old != new:
        if x.ndim == 0:
            raise ValueError(f"{what}: a 0-d tensor has no last axis to scale; expected at least 1 dimension")
        # (the strides of the axes stepped along: not one of length 1, nor any of an empty tensor)
        steps = {axis: step // old for axis, (step, n) in enumerate(zip(x.data.strides, x.shape))
                 if n > 1 and x.data.size}
        last = steps.pop(x.ndim - 1, 1)
        if last != 1:
            raise ValueError(f"{what}: the last axis must be contiguous (stride 1), got stride {last}; "
                             "copy it first, e.g. x.contiguous()")
        if new > old:
            ratio, offset = new // old, x.storage_offset()
            for name, count in ((f"the last axis' length {x.shape[-1]}", x.shape[-1]), (f"the offset {offset}", offset),
                                *((f"the stride {step} of axis {axis}", step) for axis, step in steps.items())):
                if count % ratio:
                    raise ValueError(f"{what}: {name} must be a multiple of {ratio}")
    out = Tensor._from_op(x.data.view(dtype), None)
    note_view(x, out, None)
    return out


class named:
    """``with named(op):`` while ``op`` makes its arguments tensors, tensor()'s TypeErrors (data it
    cannot hold) name ``op``, the function the user called, rather than tensor, which they did not.
    (A class, not contextlib's generator: every binary op enters one, and this costs a third.)"""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if isinstance(error, TypeError):
            _tell_as(self.op, error)
        return False  # (the error goes on, told as op's)


def _tell_as(op: str, error: Exception, inner=("tensor",), unnamed=False) -> None:
    """An error told as ``op``'s, in place, so that its traceback still shows where it was raised:
    "tensor: cannot make ..." becomes "op: cannot make ...", and likewise for any name in ``inner``
    (the ops ``op`` is built from, for naming); with ``unnamed``, a message that names nothing (NumPy's
    "operands could not be broadcast ...") gets "op: " before it. Other errors are left alone (Python's
    "relu() takes 1 positional argument" names the function already), as is one that prints something
    other than its message."""
    message = str(error)
    first = _FIRST_WORD.match(message)
    if first and first[1] != op and first[1] in inner:
        told = f"{op}: {message[first.end():]}"
    elif not first and unnamed and not _PYTHONS_OWN.match(message):
        told = f"{op}: {message}"
    else:
        return
    if isinstance(error, np.exceptions.AxisError):  # it prints its own copy of the message:
        if error.axis is None:
            error._msg = told                       # the whole of it (minitx's, one argument)
        else:
            error._msg = op                         # the name before NumPy's own words
            return
    elif error.args != (message,) or type(error).__str__ is not BaseException.__str__:
        return
    error.args = (told,)


#: what an error's message names first: "sum: ..." names sum, "linalg.inv: ..." linalg.inv
_FIRST_WORD = re.compile(r"([\w.]+): ")
#: Python's own errors of a call, which name the function: "relu() takes 1 positional argument ..."
_PYTHONS_OWN = re.compile(r"[\w.]+\(\) ")


#: the names an op's error starts with: each op family's public functions and Functions (LogAddExp's
#: log_add_exp), and tensor() converting arguments; minitx/ops/__init__.py adds them once all are loaded
OP_NAMES = {"tensor"}


def naming(op, name: str):
    """``op`` (an op family's public function: minitx/ops/__init__.py wraps each once), whose errors
    name ``name``, the function called: an error that starts with another op's name (nanmean's sum,
    l1_loss's smooth_l1_loss, logaddexp's Function log_add_exp) or with tensor (arguments tensor()
    cannot hold: a string, an object) or with nothing is told as ``name``'s. Where an op calls another
    (selu its elu), each wrapper on the way tells it so, and the outermost, the call the user made,
    last. Only where no code of the user's ran below the call (a callback or generator of theirs,
    whose errors are theirs; a RecursionError is the user's too). The wrapper is one more Python call;
    the checks run only when an error passes. The name is the wrapper's ``called``, which a module
    exporting the function under another (minitx.linalg's ``linalg.det``) may set."""
    @functools.wraps(op)
    def named_op(*args, **kwargs):
        try:
            return op(*args, **kwargs)
        except (TypeError, ValueError, IndexError, RuntimeError) as error:
            if not isinstance(error, RecursionError) and _no_code_of_the_users_below(error):
                _tell_as(named_op.called, error, OP_NAMES, unnamed=True)
            raise

    named_op.called = name
    return named_op


#: the code an op runs below it that is not the user's: minitx's own, and the libraries it calls into
_NOT_THE_USERS = frozenset({"minitx", "numpy", "cupy", "cupyx", "ml_dtypes", "contextlib", "functools"})


def _no_code_of_the_users_below(error) -> bool:
    """Whether no frame from the op down to the raise of ``error`` is the user's (a callback or a
    generator of theirs, called by the op). (A callback called from C, map(minitx.tensor, data), leaves
    no frame: its error is told as the op's.)"""
    tb = error.__traceback__.tb_next  # (below naming's own frame)
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").partition(".")[0] not in _NOT_THE_USERS:
            return False
        tb = tb.tb_next
    return True


class _ListDepth(threading.local):
    depth = 0
    warned = False  # for the list being read


#: > 0 while tensor() reads a list or tuple: its Tensor elements warn when they require grad
_reading_a_list = _ListDepth()


@contextlib.contextmanager
def _read_list(data):
    """While NumPy reads the list or tuple ``data`` into an array: a Tensor element that requires
    grad warns (its numbers are copied, its graph is not: ``x @ [[w], [w]]`` sends w no gradient,
    silently otherwise; PyTorch's torch.tensor([t]) warns too), and a PyTorch tensor that requires
    grad, which NumPy cannot read, is refused naming what to do."""
    if not isinstance(data, (list, tuple)):
        yield
        return
    if not _reading_a_list.depth:
        _reading_a_list.warned = False
    _reading_a_list.depth += 1
    try:
        yield
    except RuntimeError as error:
        if "requires grad" not in str(error):
            raise
        raise TypeError("tensor: the list holds a PyTorch tensor that requires grad, which it cannot copy as "
                        "numbers; pass [t.detach() for t in ...]") from error
    finally:
        _reading_a_list.depth -= 1


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Make a tensor from a Python number, (nested) list, numpy or cupy array, Tensor, PyTorch
    tensor, or any object with ``__dlpack__`` or ``__array__``.

    Without ``dtype``: an array or NumPy scalar keeps its dtype (as torch.tensor does); Python
    floats become float32, integers int64, booleans bool. The data is copied; a tensor (minitx's
    or PyTorch's) that requires grad is copied detached, with a warning, as torch.tensor(t)
    copies it: no gradient reaches it through the copy.
    """
    if isinstance(data, Tensor):
        if data.requires_grad:
            warnings.warn("tensor: copying a minitx Tensor that requires grad: the copy is detached from its graph, "
                          "so no gradient reaches the tensor through it (as torch.tensor(t)); write t.detach().clone() "
                          "to say so, or use t itself to keep the gradient", UserWarning,
                          stacklevel=interop._user_stacklevel())
        data = data.data
    data = interop.as_array(data, copy=True)  # (a copy: a PyTorch tensor that requires grad detached, with a warning)
    device = backend.check_device(device, "tensor")
    xp = backend.get_array_module(data)
    with _read_list(data):
        if dtype is None:
            is_array = isinstance(data, (xp.ndarray, np.generic))
            if is_array and not backend.holds(data.dtype) and not backend.byte_order_hint(data.dtype):
                raise TypeError(f"tensor: cannot hold an array of dtype {data.dtype}; expected one of "
                                f"{backend.dtype_names()}, or pass dtype= to convert it")
            dtype = data.dtype if is_array else _infer_dtype(data)
        dtype = backend.resolve_dtype(dtype, "tensor")
        with np.errstate(all="ignore"):  # 1e300 as float32 is inf, silently as the ops (and PyTorch)
            try:
                array = backend.to_device(xp.array(data, dtype=dtype, copy=True), device)
            except (TypeError, ValueError) as numpys:  # ("a" or an object as float32: say what tensor holds)
                try:
                    _infer_dtype(data)
                except (TypeError, ValueError) as ours:
                    raise ours from None
                raise numpys
    return Tensor(array, requires_grad=requires_grad)


# below these, float16 and bfloat16 keep few bits of a number (subnormals) or none (0)
_SMALLEST_NORMAL = {"float16": 2.0 ** -14, "bfloat16": 2.0 ** -126}


class _Number(Tensor):
    """A Python number beside a float16 or bfloat16 tensor that this dtype cannot hold (see as_tensor)."""

    __slots__ = ("exact",)  # the number in float32


def as_tensor(value, like: Tensor | None = None) -> Tensor:
    """Tensors pass through; Python numbers and arrays become constant tensors.

    A Python number takes the dtype and device of ``like`` (so ``x * 2`` stays float32),
    as long as that dtype can hold it. One that float16 or bfloat16 cannot (it would round to
    inf, to 0, or to a subnormal keeping few of its bits: 1e6, 1e-8 or 1e-7 beside float16)
    takes it too, rounded, but ``*`` and ``/`` compute in float32 with the number itself
    (``.exact``), as PyTorch's kernels do: ``float16 0 * 1e6`` is 0, not 0 * inf = NaN.

    A list or tuple of Python floats is a float32 tensor (as ``tensor`` makes it), but beside a
    float64 ``like`` it is made in float64 from the numbers themselves: made in float32 first,
    ``x64 + [0.1]`` would compute with 0.1 rounded to float32 (0.10000000149...).
    """
    if isinstance(value, Tensor):
        return value
    if like is not None and isinstance(value, numbers.Number) and not isinstance(value, bool):
        dtype = like.dtype
        if not backend.is_floating(dtype) and isinstance(value, float):
            dtype = backend.DEFAULT_FLOAT
        elif dtype.kind == "b":  # a number beside a bool tensor: True + 1 is 2, not True
            dtype = np.dtype(np.int64)
        elif dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
            raise OverflowError(f"the Python integer {value} does not fit the tensor's {dtype} (from "
                                f"{np.iinfo(dtype).min} to {np.iinfo(dtype).max}); convert the tensor first, "
                                f"e.g. x.to(dtype='int64')")
        xp = backend.get_array_module(like.data)
        # on a GPU a fill: no copy from the host to wait on or capture; 1e6 beside float16 is inf,
        # silently as the ops
        with np.errstate(all="ignore"):
            if dtype.itemsize == 2 and backend.is_floating(dtype):  # float16, bfloat16: can it hold it?
                rounded = abs(backend.rounded(value, dtype))  # on the host: no GPU read
                lost = value != 0 and rounded < _SMALLEST_NORMAL[dtype.name]  # to 0, or a subnormal's few bits
                if (rounded == np.inf and abs(value) != np.inf) or lost:
                    number = _Number(xp.full((), value, dtype=dtype))  # for other ops, as PyTorch's
                    number.exact = xp.full((), value, dtype=np.float32)  # for ops with exact_numbers
                    return number
            return Tensor(xp.full((), value, dtype=dtype))
    if like is not None:
        # (beside a 0-d float64 the list stays float32: the 0-d tensor takes its dtype, see promote)
        exact = (isinstance(value, (list, tuple)) and like.dtype == np.float64 and like.ndim > 0
                 and np.dtype(_infer_dtype(value)).kind == "f")
        return tensor(value, dtype=like.dtype if exact else None, device=like.device)
    return tensor(value)


from minitx import creation, functional as F  # noqa: E402  (operators need them; they need Tensor)
from minitx.ops import indexing  # noqa: E402  (fill_diagonal_)
from minitx.ops.indexing import SetItem  # noqa: E402
from minitx.ops._args import alpha_times, type_name  # noqa: E402
from minitx.ops.elementwise import _difference  # noqa: E402  (sub_'s errors name it)
from minitx.autograd.methods import TensorMethods  # noqa: E402  (PyTorch's method names)

# PyTorch's method names become Tensor's own
for _name, _method in list(vars(TensorMethods).items()):
    if _name.startswith("__"):
        continue
    assert _name not in vars(Tensor), f"Tensor.{_name} is defined twice: in tensor.py and methods.py"
    setattr(Tensor, _name, _method)

# Each method names itself in its errors, as the functions do: x.clamp's say clamp, not the clip it
# calls, and x.astype's astype, not to. (Not backward's: an error in an op's backward names that op.)
_methods = {name: method for name, method in vars(Tensor).items()
            if not name.startswith("_") and inspect.isfunction(method) and name != "backward"}
OP_NAMES.update(_methods)
for _name, _method in _methods.items():
    setattr(Tensor, _name, naming(_method, _name))
del _name, _method, _methods

