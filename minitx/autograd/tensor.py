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
recorded as an op, as PyTorch records it: see ``Tensor._in_place``.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import math
import numbers
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
        if dtype is not None and backend.resolve_dtype(dtype) != self.dtype:
            out = F.astype(out, dtype)
        if device is not None and backend.check_device(device) != out.device:
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
        return self.to(other.device, other.dtype)

    def is_floating_point(self) -> bool:
        return backend.is_floating(self.dtype)

    @property
    def is_cuda(self) -> bool:
        return self.device == "cuda"

    # new tensors with this tensor's dtype and device (unless given), no gradient: PyTorch's new_*,
    # their shape given as numbers, a tuple or size=
    def new_zeros(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        return creation.zeros(*shape, size=size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_ones(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        return creation.ones(*shape, size=size, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def new_empty(self, *shape, size=None, dtype=None, device=None, requires_grad=False):
        """PyTorch's new_empty: its values are not to be read; here they are zeros (new_zeros)."""
        return self.new_zeros(*shape, size=size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_full(self, shape=None, value=None, dtype=None, device=None, requires_grad=False, *, size=None,
                 fill_value=None):
        return creation.full(shape, value, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad, size=size, fill_value=fill_value)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A copy of ``data`` (PyTorch's new_tensor: this tensor's dtype, even for integer data)."""
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

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
    # the others (x.exp_(), x.scatter_(...), ...) are built from their out-of-place forms after the class
    def add_(self, other, *, alpha=1): return self._in_place("add_", F.add, _times("add_", self, other, alpha))
    def sub_(self, other, *, alpha=1): return self._in_place("sub_", F.sub, _times("sub_", self, other, alpha))
    def fill_(self, value): return self._in_place("fill_", _as_contents, _one_value(value))
    def copy_(self, src): return self._in_place("copy_", _as_contents, src)
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
    # (those with an axis also take PyTorch's dim=, keepdim=, ...: the loop after the class)
    def sum(self, axis=None, keepdims=False): return F.sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return F.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return F.max(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return F.min(self, axis, keepdims)
    def var(self, axis=None, ddof=0, keepdims=False): return F.var(self, axis, ddof, keepdims)
    def logsumexp(self, axis=None, keepdims=False): return F.logsumexp(self, axis, keepdims)
    def norm(self, p=2, axis=None, keepdims=False): return F.norm(self, p, axis, keepdims)
    def argmax(self, axis=None, keepdims=False): return F.argmax(self, axis, keepdims)
    def any(self, axis=None, keepdims=False): return Tensor(self.data.any(axis=axis, keepdims=keepdims))
    def all(self, axis=None, keepdims=False): return Tensor(self.data.all(axis=axis, keepdims=keepdims))
    def reshape(self, *shape): return F.reshape(self, _shape_args(shape))
    def view(self, *shape): return F.reshape(self, lengths("view", _shape_args(shape)))
    def transpose(self, *axes): return F.transpose(self, _shape_args(axes) or None)
    def permute(self, *axes): return F.transpose(self, _shape_args(axes))
    def swapaxes(self, axis1, axis2): return F.swapaxes(self, axis1, axis2)
    def squeeze(self, axis=None): return F.squeeze(self, axis)
    def unsqueeze(self, axis): return F.unsqueeze(self, axis)
    def broadcast_to(self, shape): return F.broadcast_to(self, shape)
    def exp(self): return F.exp(self)
    def log(self): return F.log(self)
    def sqrt(self): return F.sqrt(self)
    def tanh(self): return F.tanh(self)
    def sigmoid(self): return F.sigmoid(self)
    def relu(self): return F.relu(self)
    def abs(self): return F.abs(self)
    def clip(self, min=None, max=None): return F.clip(self, min, max)
    def clamp(self, min=None, max=None): return F.clip(self, min, max)  # noqa: A002 (PyTorch's names)
    def pow(self, exponent): return F.pow(self, exponent)
    def matmul(self, other): return F.matmul(self, other)
    def flatten(self, start_axis=0, end_axis=-1): return F.reshape(self, _flattened(self.shape, start_axis, end_axis))
    def expand(self, *sizes): return F.broadcast_to(self, _expanded(self.shape, _shape_args(sizes)))
    def masked_fill(self, mask, value): return F.masked_fill(self, mask, value)
    def softmax(self, axis=-1): return F.softmax(self, axis)
    def log_softmax(self, axis=-1): return F.log_softmax(self, axis)

    # PyTorch's names for what the operators and functions above do (axis for PyTorch's dim)
    def eq(self, other): return self == other
    def ne(self, other): return self != other
    def gt(self, other): return self > other
    def ge(self, other): return self >= other
    def lt(self, other): return self < other
    def le(self, other): return self <= other
    def neg(self): return -self
    def square(self): return F.square(self)
    def maximum(self, other): return F.maximum(self, other)
    def minimum(self, other): return F.minimum(self, other)
    def amax(self, axis=None, keepdims=False): return F.max(self, axis, keepdims)  # (ties share dy: as PyTorch's amax)
    def amin(self, axis=None, keepdims=False): return F.min(self, axis, keepdims)
    def expand_as(self, other): return F.broadcast_to(self, other.shape)
    def view_as(self, other): return F.reshape(self, other.shape)
    def reshape_as(self, other): return F.reshape(self, other.shape)
    def narrow(self, axis, start, length):
        """Entries start .. start + length - 1 along ``axis`` (a view), as PyTorch's narrow: a negative
        start counts from the end, and the span must lie inside the axis (a slice would cut it short)."""
        axis = _method_axis("narrow", axis, self.shape)
        n = self.shape[axis]
        if isinstance(start, Tensor):  # (PyTorch takes a 0-d integer tensor as start)
            start = start.item()
        if not -n <= start <= n:
            raise IndexError(f"narrow: start {start} is out of range for axis {axis} of length {n}; expected an "
                             f"int in [{-n}, {n}]")
        start = start % n if start < 0 else start  # (before the slice: -1 + 1 would be the empty slice -1:0)
        if length < 0 or start + length > n:
            raise ValueError(f"narrow: start {start} and length {length} do not fit axis {axis} of length {n}; "
                             f"expected 0 <= length <= {n - start}")
        return self._along(axis, slice(start, start + length))

    def movedim(self, source, destination): return F.movedim(self, source, destination)

    def split(self, split_size_or_sections, dim=0):
        """Pieces along axis ``dim``, as PyTorch's Tensor.split (NumPy arrays have no split method;
        F.split is NumPy's function: a number of equal parts, or cut points). An int cuts pieces of
        that size, the last one smaller where it does not divide; a list gives each piece's size."""
        dim = _method_axis("split", dim, self.shape)
        n = self.shape[dim]
        if isinstance(split_size_or_sections, numbers.Integral):
            size = int(split_size_or_sections)
            if size <= 0:
                raise ValueError(f"split: the piece size must be >= 1, got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] or [0]
        else:
            sizes = [int(s) for s in split_size_or_sections]
            if sum(sizes) != n or min(sizes, default=0) < 0:
                raise ValueError(f"split: sizes {sizes} do not add up to the {n} entries of axis {dim}")
        starts = np.cumsum([0] + sizes[:-1])
        return tuple(self.narrow(dim, int(start), size) for start, size in zip(starts, sizes))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with U(a, b) samples, in place: nn.init.uniform_'s draws (minitx's seeded generator,
        or generator=), written as any in-place op's result (refused into a parameter while a
        graph is recorded, as PyTorch's; nn.init writes there, as PyTorch's does under no_grad)."""
        from minitx.nn import init  # noqa: PLC0415  (nn builds on tensors)
        return self._in_place("uniform_", lambda x: init.uniform_(x.new_zeros(x.shape), a, b, generator=generator))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with N(mean, std^2) samples, in place: nn.init.normal_'s draws (see uniform_)."""
        from minitx.nn import init  # noqa: PLC0415
        return self._in_place("normal_", lambda x: init.normal_(x.new_zeros(x.shape), mean, std, generator=generator))

    # random fills: samples drawn as minitx.creation's samplers draw them (the seeded generator of
    # the tensor's device, or generator=), written in as any in-place op's result
    def bernoulli_(self, p=0.5, *, generator=None):
        return self._in_place("bernoulli_", creation.bernoulli_fill, p, generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        return self._in_place("exponential_", creation.exponential_fill, lambd, generator)

    def random_(self, *bounds, to=None, generator=None):
        """Whole numbers drawn uniformly from [from, to), PyTorch's random_(from, to), random_(to) or
        random_() (from 0 to the largest of the dtype, or for floats to 2**mantissa bits, inclusive)."""
        return self._in_place("random_", creation.random_fill, bounds + (() if to is None else (to,)), generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return self._in_place("cauchy_", creation.cauchy_fill, median, sigma, generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return self._in_place("log_normal_", creation.log_normal_fill, mean, std, generator)

    def geometric_(self, p, *, generator=None):
        return self._in_place("geometric_", creation.geometric_fill, p, generator)

    # minitx.bernoulli and minitx.multinomial drawn from this tensor's probabilities or weights
    def bernoulli(self, p=None, *, generator=None): return creation.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return creation.multinomial(self, num_samples, replacement, generator=generator)

    def unflatten(self, axis, sizes):
        """Axis ``axis`` split into ``sizes`` (one of them may be -1), as PyTorch's unflatten."""
        return F.reshape(self, _unflattened(self.shape, axis, sizes))
    def repeat_interleave(self, repeats, axis=None): return F.repeat(self, repeats, axis)  # (PyTorch's repeat is tile)
    def masked_select(self, mask): return F.masked_select(self, mask)
    def where(self, condition, other): return F.where(condition, self, other)  # (PyTorch's x.where(c, y))
    def logical_not(self): return F.logical_not(self)
    def logical_and(self, other): return (self != 0) & (as_tensor(other, self) != 0)
    def logical_or(self, other): return (self != 0) | (as_tensor(other, self) != 0)
    def logical_xor(self, other): return (self != 0) ^ (as_tensor(other, self) != 0)
    def add(self, other, *, alpha=1): return self + _scaled("add", self, other, alpha)
    def sub(self, other, *, alpha=1): return self - _scaled("sub", self, other, alpha)
    def mul(self, other): return self * other
    def div(self, other, *, rounding_mode=None): return F.divide(self, other, rounding_mode=rounding_mode)
    def clamp_min(self, min): return F.clip(self, min, None)  # noqa: A002
    def clamp_max(self, max): return F.clip(self, None, max)  # noqa: A002
    def log10(self): return F.log10(self)

    def t(self):
        """A matrix transposed; a vector or a 0-d tensor as it is (PyTorch's t)."""
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor with at most 2 axes, got shape {self.shape}; for more, "
                             "swapaxes(-2, -1) or mT")
        return F.transpose(self) if self.ndim == 2 else self

    def dot(self, other): return _product("dot", self, other, 1)
    def mm(self, other): return _product("mm", self, other, 2)
    def bmm(self, other): return _product("bmm", self, other, 3)

    def nonzero(self, *, as_tuple=False):
        """The positions of the entries that are not 0: one row per entry, one column per axis
        (int64); with ``as_tuple``, one 1-d tensor per axis, as NumPy's nonzero (and PyTorch's)."""
        found = F.nonzero(self)
        return tuple(found[:, k] for k in range(found.shape[1])) if as_tuple else found

    def _along(self, axis, index):
        """self[..., index, ...] with ``index`` (an int, slice or index tensor) on axis ``axis``."""
        return self[(slice(None),) * (axis % max(self.ndim, 1)) + (index,)]

    def count_nonzero(self, axis=None):
        """How many entries are not 0 (over ``axis``), an int64 tensor."""
        return F.sum((self != 0).to(dtype="int64"), axis)

    def index_select(self, axis, index):
        """The entries at the integer positions ``index`` (1-d) along ``axis``, as PyTorch's."""
        index = index if isinstance(index, Tensor) else tensor(index)
        if index.ndim != 1:
            raise ValueError(f"index_select: index must be 1-d, got shape {index.shape}")
        axis = _method_axis("index_select", axis, self.shape, takes_0d=True)
        return self._along(axis, index).contiguous()  # (NumPy lays a middle axis's pick out of order)

    def chunk(self, chunks, axis=0):
        """At most ``chunks`` pieces along ``axis``, each of ceil(n / chunks) entries but the last,
        as PyTorch's chunk (views; fewer pieces where n is small)."""
        if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral) or chunks < 1:
            raise ValueError(f"chunk: chunks must be an int >= 1, got {chunks!r}")
        axis = _method_axis("chunk", axis, self.shape)
        n = self.shape[axis]
        if n == 0:  # nothing to share out: ``chunks`` empty pieces, as PyTorch's
            return tuple(self._along(axis, slice(0, 0)) for _ in range(chunks))
        size = -(-n // chunks)
        return tuple(self._along(axis, slice(start, start + size)) for start in range(0, n, size))

    def tensor_split(self, indices_or_sections, axis=0):
        """Pieces as equal as can be, or cut at the given points (PyTorch's; F.tensor_split)."""
        return F.tensor_split(self, indices_or_sections, axis)

    def hsplit(self, indices_or_sections): return F.hsplit(self, indices_or_sections)
    def vsplit(self, indices_or_sections): return F.vsplit(self, indices_or_sections)
    def dsplit(self, indices_or_sections): return F.dsplit(self, indices_or_sections)

    def unfold(self, dimension, size, step):
        """Windows of ``size`` entries along ``dimension``, one every ``step``, on a new last axis:
        PyTorch's Tensor.unfold, a sliding window (F.sliding_windows; a copy). F.unfold is im2col."""
        return F.sliding_windows(self, dimension, size, step)

    def unbind(self, axis=0):
        """The slices along ``axis``, each without it (views)."""
        axis = _method_axis("unbind", axis, self.shape)
        return tuple(self._along(axis, k) for k in range(self.shape[axis]))

    # ---------------------------------------------------------------- more math, activations, scans, indexing
    def sin(self): return F.sin(self)
    def cos(self): return F.cos(self)
    def erf(self): return F.erf(self)
    def sign(self): return F.sign(self)
    def floor(self): return F.floor(self)

    def sort(self, axis=-1, descending=False, *, stable=False): return F.sort(self, axis, descending, stable=stable)

    def argsort(self, axis=-1, descending=False, *, stable=False):
        return F.argsort(self, axis, descending, stable=stable)

    def topk(self, k, axis=-1, largest=True, sorted=True): return F.topk(self, k, axis, largest, sorted)  # noqa: A002
    def ceil(self): return F.ceil(self)
    def round(self, decimals=0): return F.round(self, decimals)
    def trunc(self): return F.trunc(self)
    def log2(self): return F.log2(self)
    def exp2(self): return F.exp2(self)
    def log1p(self): return F.log1p(self)
    def expm1(self): return F.expm1(self)
    def rsqrt(self): return F.rsqrt(self)
    def reciprocal(self): return F.reciprocal(self)
    def isnan(self): return F.isnan(self)
    def isinf(self): return F.isinf(self)
    def isfinite(self): return F.isfinite(self)
    # PyTorch's further elementwise math (minitx/ops/elementwise.py)
    def erfc(self): return F.erfc(self)
    def erfinv(self): return F.erfinv(self)
    def lgamma(self): return F.lgamma(self)
    def digamma(self): return F.digamma(self)
    def polygamma(self, n): return F.polygamma(n, self)
    def i0(self): return F.i0(self)
    def igamma(self, other): return F.igamma(self, other)
    def igammac(self, other): return F.igammac(self, other)
    def mvlgamma(self, p): return F.mvlgamma(self, p)
    def sinc(self): return F.sinc(self)
    def logit(self, eps=None): return F.logit(self, eps)
    def frac(self): return F.frac(self)
    def deg2rad(self): return F.deg2rad(self)
    def rad2deg(self): return F.rad2deg(self)
    def signbit(self): return F.signbit(self)
    def isposinf(self): return F.isposinf(self)
    def isneginf(self): return F.isneginf(self)
    def isreal(self): return F.isreal(self)
    def logaddexp(self, other): return F.logaddexp(self, other)
    def logaddexp2(self, other): return F.logaddexp2(self, other)
    def xlogy(self, other): return F.xlogy(self, other)
    def heaviside(self, values): return F.heaviside(self, values)
    def fmax(self, other): return F.fmax(self, other)
    def fmin(self, other): return F.fmin(self, other)
    def float_power(self, exponent): return F.float_power(self, exponent)
    def ldexp(self, other): return F.ldexp(self, other)
    def frexp(self): return F.frexp(self)  # (mantissa, exponent), as PyTorch's
    def renorm(self, p, dim, maxnorm): return F.renorm(self, p, dim, maxnorm)
    def gcd(self, other): return F.gcd(self, other)
    def lcm(self, other): return F.lcm(self, other)
    def nextafter(self, other): return F.nextafter(self, other)
    def silu(self): return F.silu(self)
    def leaky_relu(self, negative_slope=0.01): return F.leaky_relu(self, negative_slope)
    def elu(self, alpha=1.0): return F.elu(self, alpha)
    def softplus(self, beta=1.0, threshold=20.0): return F.softplus(self, beta, threshold)
    def logsigmoid(self): return F.logsigmoid(self)
    def hardtanh(self, min_val=-1.0, max_val=1.0): return F.hardtanh(self, min_val, max_val)
    def hardshrink(self, lambd=0.5): return F.hardshrink(self, lambd)
    def std(self, axis=None, ddof=0, keepdims=False): return F.std(self, axis, ddof, keepdims)
    def prod(self, axis=None, keepdims=False): return F.prod(self, axis, keepdims)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return F.cov(self, correction=correction, fweights=fweights, aweights=aweights)
    def corrcoef(self): return F.corrcoef(self)
    def cumsum(self, axis, dtype=None): return F.cumsum(self, axis, dtype)
    def cumprod(self, axis, dtype=None): return F.cumprod(self, axis, dtype)
    def cummax(self, axis): return F.cummax(self, axis)  # (values, indices), as PyTorch's
    def cummin(self, axis): return F.cummin(self, axis)
    def logcumsumexp(self, axis): return F.logcumsumexp(self, axis)
    def argmin(self, axis=None, keepdims=False): return F.argmin(self, axis, keepdims)
    def flip(self, axis=None): return F.flip(self, axis)
    def roll(self, shift, axis=None): return F.roll(self, shift, axis)
    def tril(self, k=0): return F.tril(self, k)
    def triu(self, k=0): return F.triu(self, k)
    def diagonal(self, offset=0, axis1=0, axis2=1): return F.diagonal(self, offset, axis1, axis2)
    def trace(self): return F.trace(self)
    def gather(self, axis, index): return F.gather(self, axis, index)
    def take_along_dim(self, index, axis=None): return F.take_along_dim(self, index, axis)
    def scatter_add(self, axis, index, src): return F.scatter_add(self, axis, index, src)
    def repeat(self, repeats, axis=None): return F.repeat(self, repeats, axis)
    def tile(self, reps): return F.tile(self, reps)
    def median(self, axis=None, keepdims=False): return F.median(self, axis, keepdims)
    def nanmedian(self, axis=None, keepdims=False): return F.nanmedian(self, axis, keepdims)
    def kthvalue(self, k, axis=-1, keepdims=False): return F.kthvalue(self, k, axis, keepdims)
    def mode(self, axis=-1, keepdims=False): return F.mode(self, axis, keepdims)

    def quantile(self, q, axis=None, keepdims=False, interpolation="linear"):
        return F.quantile(self, q, axis, keepdims, interpolation)

    def nanquantile(self, q, axis=None, keepdims=False, interpolation="linear"):
        return F.nanquantile(self, q, axis, keepdims, interpolation)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None): return F.nan_to_num(self, nan, posinf, neginf)
    def lerp(self, end, weight): return F.lerp(self, end, weight)
    def diff(self, n=1, axis=-1, prepend=None, append=None): return F.diff(self, n, axis, prepend, append)
    def cross(self, other, axis=-1): return F.cross(self, other, axis)
    def outer(self, other): return F.outer(self, other)
    def inner(self, other): return F.inner(self, other)
    def vdot(self, other): return F.vdot(self, other)
    def kron(self, other): return F.kron(self, other)
    def diag(self, diagonal=0): return F.diag(self, diagonal)
    def diag_embed(self, offset=0, axis1=-2, axis2=-1): return F.diag_embed(self, offset, axis1, axis2)
    def bincount(self, weights=None, minlength=0): return F.bincount(self, weights, minlength)
    def histc(self, bins=100, min=0, max=0): return F.histc(self, bins, min, max)  # noqa: A002
    def histogram(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's names)
        return F.histogram(self, bins, range=range, weight=weight, density=density)
    def index_add(self, axis, index, source, *, alpha=1): return F.index_add(self, axis, index, source, alpha)
    def index_fill(self, axis, index, value): return F.index_fill(self, axis, index, value)
    def index_copy(self, axis, index, source): return F.index_copy(self, axis, index, source)
    def slice_scatter(self, src, axis=0, start=None, end=None, step=1):
        return F.slice_scatter(self, src, axis, start, end, step)

    def select_scatter(self, src, axis, index): return F.select_scatter(self, src, axis, index)
    def index_put(self, indices, values, accumulate=False): return F.index_put(self, indices, values, accumulate)

    def index_reduce(self, axis, index, source, reduce, *, include_self=True):
        return F.index_reduce(self, axis, index, source, reduce, include_self)

    def diagonal_scatter(self, src, offset=0, axis1=0, axis2=1): return F.diagonal_scatter(self, src, offset, axis1, axis2)
    def masked_scatter(self, mask, source): return F.masked_scatter(self, mask, source)
    def fmod(self, other): return F.fmod(self, other)
    def remainder(self, other): return F.remainder(self, other)
    def addcmul(self, tensor1, tensor2, *, value=1): return F.addcmul(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1): return F.addcdiv(self, tensor1, tensor2, value=value)

    def scatter(self, axis, index, src=None, *, value=None, reduce=None):
        return F.scatter(self, axis, index, src, value=value, reduce=reduce)

    def scatter_reduce(self, axis, index, src, reduce, *, include_self=True):
        return F.scatter_reduce(self, axis, index, src, reduce, include_self)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return F.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, axis=None):
        return F.unique_consecutive(self, return_inverse, return_counts, axis)

    # ---------------------------------------------------------------- matrix functions (minitx.linalg's)
    def det(self): return matrix.det(self)
    def logdet(self): return matrix.logdet(self)
    def slogdet(self): return matrix.slogdet(self)
    def inverse(self): return matrix.inv(self)
    def cholesky(self, upper=False): return matrix.cholesky(self, upper=upper)
    def matrix_power(self, n): return matrix.matrix_power(self, n)
    def matrix_exp(self): return matrix.matrix_exp(self)

    def svd(self, some=True):
        """(U, S, V) with self = U diag(S) V^T: PyTorch's Tensor.svd, the older API, which returns V,
        not linalg.svd's Vh, and the thin SVD unless some=False."""
        U, S, Vh = matrix.svd(self, full_matrices=not some)
        return U, S, Vh.mT

    def qr(self, some=True):
        """(Q, R): PyTorch's Tensor.qr, linalg.qr's mode 'reduced' (some=True) or 'complete'."""
        return matrix.qr(self, "reduced" if some else "complete")

    def pinverse(self, rcond=1e-15): return matrix.pinverse(self, rcond)
    def cholesky_solve(self, L, upper=False): return matrix.cholesky_solve(self, L, upper)
    def cholesky_inverse(self, upper=False): return matrix.cholesky_inverse(self, upper)

    def lu(self, pivot=True, get_infos=False): return matrix.lu_with_info(self, pivot, get_infos)
    def lu_solve(self, LU_data, LU_pivots): return matrix.lu_solve_b_first(self, LU_data, LU_pivots)  # noqa: N803
    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        return matrix.triangular_solve(self, A, upper, transpose, unitriangular)

    # ---------------------------------------------------------------- PyTorch's names and compositions
    # methods of ops minitx.functional has (PyTorch's names for them), and small compositions
    def acos(self): return F.acos(self)
    def acosh(self): return F.acosh(self)
    def asin(self): return F.asin(self)
    def asinh(self): return F.asinh(self)
    def atan(self): return F.atan(self)
    def atanh(self): return F.atanh(self)
    def cosh(self): return F.cosh(self)
    def sinh(self): return F.sinh(self)
    def tan(self): return F.tan(self)
    def atan2(self, other): return F.atan2(self, other)
    def hypot(self, other): return F.hypot(self, other)
    def copysign(self, other): return F.copysign(self, other)
    def floor_divide(self, other): return F.floor_divide(self, other)
    def bitwise_and(self, other): return F.bitwise_and(self, other)
    def bitwise_or(self, other): return F.bitwise_or(self, other)
    def bitwise_xor(self, other): return F.bitwise_xor(self, other)
    def bitwise_not(self): return F.bitwise_not(self)
    def bitwise_left_shift(self, other): return F.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other): return F.bitwise_right_shift(self, other)
    def greater(self, other): return F.greater(self, other)
    def greater_equal(self, other): return F.greater_equal(self, other)
    def less(self, other): return F.less(self, other)
    def less_equal(self, other): return F.less_equal(self, other)
    def not_equal(self, other): return F.not_equal(self, other)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return F.isclose(self, other, rtol, atol, equal_nan)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return F.allclose(self, other, rtol, atol, equal_nan)
    def argwhere(self): return F.argwhere(self)
    def prelu(self, weight): return F.prelu(self, weight)
    def subtract(self, other, *, alpha=1): return F.subtract(self, other, alpha=alpha)
    def positive(self): return F.positive(self)
    def swapdims(self, dim0, dim1): return F.swapdims(self, dim0, dim1)
    def ravel(self): return F.ravel(self)
    def fliplr(self): return F.fliplr(self)
    def flipud(self): return F.flipud(self)
    def rot90(self, k=1, axes=(0, 1)): return F.rot90(self, k, axes)
    def select(self, axis, index): return F.select(self, axis, index)
    def take(self, index): return F.take(self, index)
    def msort(self): return F.msort(self)
    def diagflat(self, offset=0): return F.diagflat(self, offset)
    def aminmax(self, *, axis=None, keepdims=False): return F.aminmax(self, axis=axis, keepdims=keepdims)
    def nansum(self, axis=None, keepdims=False): return F.nansum(self, axis, keepdims)
    def nanmean(self, axis=None, keepdims=False): return F.nanmean(self, axis, keepdims)
    def sum_to_size(self, *shape, size=None): return F.sum_to_size(self, *shape, size=size)
    def dist(self, other, p=2): return F.dist(self, other, p)
    def mv(self, vec): return F.mv(self, vec)
    def ger(self, vec2): return F.ger(self, vec2)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1): return F.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmv(self, mat, vec, *, beta=1, alpha=1): return F.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1): return F.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1): return F.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1): return F.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    # the same methods under PyTorch's other names (as minitx.functional's, elementwise.py's last lines)
    absolute, negative, multiply, true_divide, divide, moveaxis, fix, sgn = abs, neg, mul, div, div, movedim, trunc, sign
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2 = acos, acosh, asin, asinh, atan, atanh, atan2

    def equal(self, other) -> bool:
        """PyTorch's Tensor.equal: one bool, whether the two have one shape and equal entries (NaN is
        equal to nothing). minitx.functional.equal is NumPy's ==, entry by entry (docs/ops.md)."""
        other = as_tensor(other, self)
        return self.shape == other.shape and bool((self == other).all())

    def split_with_sizes(self, split_sizes, dim=0):
        """PyTorch's split_with_sizes: split(sizes, dim) given a list of sizes only."""
        if isinstance(split_sizes, numbers.Integral):
            raise TypeError(f"split_with_sizes: split_sizes must be a list of sizes, got {split_sizes!r}; "
                            "split(size, dim) cuts pieces of one size")
        return self.split(list(split_sizes), dim)

    @property
    def retains_grad(self) -> bool:
        """Whether backward keeps ``.grad`` on this computed tensor (retain_grad() was called); a
        leaf's is False, as PyTorch's (a leaf keeps its .grad anyway)."""
        return not self.is_leaf and self._retains_grad

    def char(self) -> "Tensor": return self.astype("int8")
    def is_signed(self) -> bool: return backend.is_floating(self.dtype) or self.dtype.kind == "i"
    def is_nonzero(self) -> bool: return bool(self)  # (one entry, else the ValueError of bool(x))
    def is_same_size(self, other) -> bool: return self.shape == other.shape
    def ndimension(self) -> int: return self.ndim
    def get_device(self) -> int: return -1 if self.device == "cpu" else self.data.device.id  # (PyTorch's -1: the CPU)

    @property
    def is_cpu(self) -> bool:
        return self.device == "cpu"

    def is_inference(self) -> bool:
        """False: minitx's inference_mode is no_grad, and makes ordinary tensors (PyTorch's makes
        inference tensors, and answers True for them)."""
        return False

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


# PyTorch's keywords (dim=, keepdim=, dims=, start_dim=, correction=, ...) for every method that
# takes an axis; minitx.keywords says which mean the same and which are refused
for _name in ("sum", "mean", "max", "min", "var", "std", "logsumexp", "norm", "argmax", "argmin", "any", "all",
              "prod", "amax", "amin", "count_nonzero", "softmax", "log_softmax", "squeeze", "unsqueeze",
              "flatten", "flip", "roll", "repeat", "repeat_interleave", "cumsum", "cumprod", "cummax", "cummin",
              "logcumsumexp", "sort", "argsort", "topk", "diagonal", "gather", "scatter_add", "index_select", "chunk",
              "unbind", "median", "nanmedian", "index_add", "index_fill", "index_copy", "scatter", "scatter_reduce",
              "tril", "triu", "narrow", "unflatten", "kthvalue", "mode", "quantile", "nanquantile", "diff", "cross",
              "tensor_split", "take_along_dim", "diag_embed", "unique_consecutive", "rot90", "select", "aminmax",
              "nansum", "nanmean", "slice_scatter", "select_scatter", "diagonal_scatter", "index_reduce"):
    setattr(Tensor, _name, takes_torch_keywords(getattr(Tensor, _name)))


def _in_place_form(name: str):
    """Tensor.<name>_: ``x.<name>(...)`` written into x (Tensor._in_place), taking its arguments."""
    out_of_place = getattr(Tensor, name)

    @functools.wraps(out_of_place)  # (its signature: help() and the keyword check see the arguments)
    def in_place(self, *args, **kwargs):
        return self._in_place(name + "_", out_of_place, *args, **kwargs)

    in_place.__name__, in_place.__qualname__ = name + "_", f"Tensor.{name}_"
    in_place.__doc__ = f"``x.{name}(...)`` written into x in place, as PyTorch's {name}_ (see Tensor._in_place)."
    return in_place


# PyTorch's in-place methods: x.exp_() is x.exp() written into x, x.scatter_(dim, index, src) is
# x.scatter(dim, index, src), each with its out-of-place form's arguments (PyTorch's dim= too)
for _name in (
        "abs", "neg", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "square", "sign",  # unary
        "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "round", "trunc", "nan_to_num",
        "clamp", "clip", "clamp_min", "clamp_max",                                                      # bounds
        "mul", "div", "pow", "fmod", "remainder", "lerp", "addcmul", "addcdiv",                         # binary
        "masked_fill", "masked_scatter", "scatter", "scatter_add", "scatter_reduce", "index_add",       # indexed
        "index_fill", "index_copy", "index_put", "index_reduce",
        "erfc", "erfinv", "lgamma", "digamma", "sinc", "logit", "frac", "sgn", "deg2rad", "rad2deg",    # more math
        "xlogy", "heaviside", "ldexp", "gcd", "lcm", "nextafter", "igamma", "igammac", "mvlgamma",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "exp2", "log2",  # and more
        "log10", "fix", "atan2", "hypot", "copysign",
        "absolute", "negative", "multiply", "subtract", "divide", "true_divide", "arcsin", "arccos",     # second names
        "arctan", "arcsinh", "arccosh", "arctanh", "arctan2",
        "floor_divide", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",  # integer
        "bitwise_right_shift",
        "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater", "greater_equal",  # tests:
        "logical_not", "logical_and", "logical_or", "logical_xor",                                   # 1 or 0 written
        "cumsum", "cumprod", "tril", "triu"):                                                        # along an axis
    setattr(Tensor, _name + "_", _in_place_form(_name))


def _shape_not_changed_in_place(name: str, rewrite: str):
    """Tensor.<name>: PyTorch's in-place shape change, refused with what to write (docs/ops.md says why)."""
    def refused(self, *args, **kwargs):
        raise TypeError(f"{name}: minitx changes no tensor's shape in place (a tensor's shape is its array's, made "
                        f"by the op it records); write x = {rewrite}, a view of the same memory with its gradient")

    refused.__name__, refused.__qualname__ = name, f"Tensor.{name}"
    return refused


for _name, _rewrite in (("t_", "x.t()"), ("transpose_", "x.swapaxes(dim0, dim1)"), ("unsqueeze_", "x.unsqueeze(dim)"),
                        ("squeeze_", "x.squeeze(dim)"), ("swapaxes_", "x.swapaxes(dim0, dim1)"),
                        ("swapdims_", "x.swapdims(dim0, dim1)")):
    setattr(Tensor, _name, _shape_not_changed_in_place(_name, _rewrite))
del _name, _rewrite


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


def _flattened(shape, start_axis, end_axis, op="flatten"):
    """flatten's shape: axes start_axis..end_axis (both included) as one; a 0-d tensor's is (1,),
    as PyTorch's. ``op`` names the caller in the errors (nn.Flatten's too)."""
    start, end = (_method_axis(op, axis, shape, takes_0d=True) for axis in (start_axis, end_axis))
    if start > end:
        raise ValueError(f"{op}: start axis {start_axis} comes after end axis {end_axis} for shape {shape}")
    # the length counted, not left to a -1: NumPy cannot infer one beside a length-0 axis
    return shape[:start] + (int(np.prod(shape[start:end + 1])),) + shape[end + 1:]


def _split_sizes(op, sizes) -> tuple:
    """unflatten's sizes, checked: whole numbers >= 0, of which one may be -1."""
    sizes = tuple(sizes)
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < -1 for s in sizes):
        raise ValueError(f"{op}: sizes must be whole numbers >= 0 (one may be -1), got {sizes!r}")
    return sizes


def _unflattened(shape, axis, sizes, op="unflatten"):
    """unflatten's shape: axis ``axis`` split into ``sizes``, a -1 among them worked out from the
    axis' own length, as PyTorch's (a reshape's -1 would be inferred from the whole size, which
    says nothing when it is 0). ``op`` names the caller in the errors (nn.Unflatten's too)."""
    sizes = _split_sizes(op, sizes)
    axis = _method_axis(op, axis, shape)
    length, known, unknown = shape[axis], math.prod(s for s in sizes if s != -1), sizes.count(-1)
    fits = known == length if not unknown else unknown == 1 and known > 0 and length % known == 0
    if not fits:
        raise ValueError(f"{op}: sizes {sizes} do not split axis {axis} of length {length} (input shape {shape}); "
                         f"expected sizes whose product is {length}, with at most one -1")
    return shape[:axis] + tuple(length // known if s == -1 else int(s) for s in sizes) + shape[axis + 1:]


def _expanded(shape, sizes):
    """expand's sizes as a shape for broadcast_to: -1 keeps the tensor's length on that axis (its
    axes align with the last sizes; a new leading axis needs a length)."""
    lead = len(sizes) - len(shape)
    if lead < 0 or -1 in sizes[:lead]:
        raise ValueError(f"expand: sizes {sizes} for shape {shape}: give a length for each axis (-1 keeps "
                         "one), and for each new leading axis a length that is not -1")
    return tuple(shape[i - lead] if size == -1 and i >= lead else size for i, size in enumerate(sizes))


# the out-of-place forms of the in-place methods defined in the class, for their messages
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


def _product(op, a, b, ndim):
    """dot, mm and bmm: see minitx.ops.linalg.fixed_rank_matmul."""
    from minitx.ops.linalg import fixed_rank_matmul  # (minitx.ops imports this module)

    return fixed_rank_matmul(op, a, b, ndim)


def _scaled(op, x, y, alpha):
    """add's and sub's ``alpha * y``, rounded (as PyTorch's add rounds it too); a float alpha refused
    where x and y are integral (check_alpha)."""
    check_alpha(op, alpha, x, y)
    return y if alpha == 1 else _alpha_times(y, alpha, is_boolean(x, y))


def _alpha_times(y, alpha, boolean):
    """alpha * y; where x, y and so x + alpha * y are boolean, PyTorch's ``alpha and y`` (x + it is x or it)."""
    return as_tensor(y) & bool(alpha) if boolean else y * alpha


def _times(op, x, y, alpha):
    """add_'s and sub_'s ``alpha * y`` (a float alpha refused into an integral x: check_alpha), in a wider dtype than y's (float32 for 16 bits, float64 for
    float32) so that x + alpha * y rounds once, into x, as PyTorch's fused kernel nearly does: alpha * y
    rounded first would be off by its own rounding, hundreds of units of x's where the two nearly cancel."""
    check_alpha(op, alpha, x)
    if alpha == 1:
        return y
    y = as_tensor(y)
    if is_boolean(x, y):
        return _alpha_times(y, alpha, True)
    wide = {2: "float32", 4: "float64"}.get(y.dtype.itemsize) if backend.is_floating(y.dtype) else None
    return F.mul(y.to(dtype=wide) if wide else y, alpha)


def _one_value(value):
    """fill_'s value: a number or a 0-d tensor, as PyTorch's (copy_ takes arrays)."""
    if getattr(value, "ndim", 0) != 0:
        raise ValueError(f"fill_: the value must be a number or a 0-d tensor, got shape {tuple(value.shape)}; "
                         "use copy_ for an array")
    return value


def _as_contents(x, value):
    """fill_'s and copy_'s new values of x: ``value`` (a number, an array, a tensor) on x's device,
    broadcast to x's shape."""
    return F.broadcast_to(as_tensor(value, like=x).to(x.device), x.shape)


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


def _shape_args(args):
    """Accept both t.reshape(2, 3) and t.reshape((2, 3))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def lengths(op, shape) -> tuple:
    """``shape`` (reshape's, view's) as a tuple of its lengths, each an int or anything with
    __index__, or a TypeError naming ``op``. A dtype alone is named as one: PyTorch's view(dtype)
    reinterprets the bits, which minitx does not."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if all(hasattr(n, "__index__") for n in shape):
        return shape
    dtype = None
    if len(shape) == 1 and isinstance(shape[0], (str, np.dtype, type)):
        with contextlib.suppress(TypeError):
            dtype = backend.resolve_dtype(shape[0]).name
    if dtype is not None:
        raise TypeError(f"{op}: expected a shape (ints), got the dtype {shape[0]!r}; reinterpreting the bits as "
                        f"another dtype (PyTorch's view(dtype)) is not implemented: x.to(dtype) converts the values")
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
        if isinstance(error, TypeError) and str(error).startswith("tensor: "):
            raise TypeError(f"{self.op}: {str(error).removeprefix('tensor: ')}") from None
        return False


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
    device = backend.check_device(device)
    xp = backend.get_array_module(data)
    with _read_list(data):
        if dtype is None:
            is_array = isinstance(data, (xp.ndarray, np.generic))
            if is_array and not backend.holds(data.dtype) and not backend.byte_order_hint(data.dtype):
                raise TypeError(f"tensor: cannot hold an array of dtype {data.dtype}; expected one of "
                                f"{backend.dtype_names()}, or pass dtype= to convert it")
            dtype = data.dtype if is_array else _infer_dtype(data)
        dtype = backend.resolve_dtype(dtype)
        with np.errstate(all="ignore"):  # 1e300 as float32 is inf, silently as the ops (and PyTorch)
            array = backend.to_device(xp.array(data, dtype=dtype, copy=True), device)
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
from minitx.ops._args import check_alpha, is_boolean  # noqa: E402
from minitx.ops import matrix  # noqa: E402  (the matrix methods: det, inverse, svd, ...)

