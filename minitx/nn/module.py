"""``Module``: the base class of layers and models.

A module keeps its parameters, buffers (constant arrays such as positional tables) and
child modules in three ordered dictionaries, filled simply by assigning attributes::

    class Affine(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones(3))     # registered as a parameter
            self.inner = Linear(3, 3)           # registered as a child module

Everything that walks the tree (parameters, state_dict, to, train/eval) is written once here.
"""
from __future__ import annotations

import contextlib

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from minitx import backend, interop
from minitx.autograd.engine import HookHandle
from minitx.autograd.grad_mode import no_grad
from minitx.autograd.inplace import zero_gradients
from minitx.autograd.tensor import Tensor, _dtype_first, as_tensor, named
from minitx.nn.parameter import Buffer, Parameter, is_lazy


class _IncompatibleKeys(namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns, as PyTorch's: the model's keys the state dict lacked, and
    the state dict's keys the model has not (both empty when strict)."""

    __slots__ = ()

    def __repr__(self):
        return "<All keys matched successfully>" if self == ([], []) else super().__repr__()


class StateDictKeyError(KeyError):
    """Missing or unexpected keys in load_state_dict (a KeyError that prints its message plainly)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class Module:
    training: bool

    def __init__(self, *args, **kwargs):
        # a layer without an __init__ of its own lands here: name it, not Module
        if args or kwargs:
            got = f"keyword argument {next(iter(kwargs))!r}" if kwargs else f"{len(args)} positional argument(s)"
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected {got}")
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "training", True)

    # ---------------------------------------------------------------- registration
    def __setattr__(self, name, value):
        """Register Parameters and Modules by assignment, as PyTorch: a registered name takes only
        its own kind or None afterwards (a plain tensor assigned to ``weight`` would otherwise drop
        it from parameters(), state_dict and the optimizer without a word)."""
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before assigning attributes")
        if isinstance(value, Parameter):
            self._forget(name, keep=self._parameters)
            self._parameters[name] = value
        elif name in self._parameters:
            if value is not None:
                raise TypeError(f"{type(self).__name__}: cannot assign a {type(value).__name__} as parameter "
                                f"'{name}' (a Parameter or None expected); wrap it in nn.Parameter, or write "
                                f"into the parameter with .data")
            self._parameters[name] = None  # stays registered, empty (an optional bias, say)
        elif isinstance(value, Module):
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif name in self._modules:
            if value is not None:
                raise TypeError(f"{type(self).__name__}: cannot assign a {type(value).__name__} as child module "
                                f"'{name}' (a Module or None expected)")
            del self._modules[name]
        elif isinstance(value, Buffer):  # nn.Buffer(t, persistent=...): registered as register_buffer would
            self.register_buffer(name, value, value.persistent)
            return
        elif name in self._buffers:
            # a new value for a buffer stays a buffer (else state_dict and to() would drop it)
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}: cannot assign a {type(value).__name__} as buffer "
                                f"'{name}' (a Tensor or None expected)")
            self._buffers[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._forget(name)
        object.__delattr__(self, name)

    def _forget(self, name, keep=None):
        """Take ``name`` out of every registry but ``keep`` (where a new value replaces the old
        in its place, as in PyTorch): one name, one registry."""
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def _check_name(self, kind, name, registries):
        """PyTorch's checks of a name to register: a string, not empty, without '.' (state_dict
        keys join names with dots), and not an attribute of another sort (a method such as
        ``to``, or ``training``), which the registered value would shadow."""
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before registering a {kind}")
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: a {kind} name must be a string, got {type(name).__name__} "
                            f"{name!r}")
        if "." in name:
            raise KeyError(f"{type(self).__name__}: a {kind} name cannot contain a dot, got {name!r}")
        if name == "":
            raise KeyError(f"{type(self).__name__}: a {kind} name cannot be empty")
        if hasattr(self, name) and not any(name in registry for registry in registries):
            raise KeyError(f"{type(self).__name__}: attribute '{name}' already exists; a {kind} cannot take "
                           "its name")

    def register_buffer(self, name: str, value, persistent: bool = True) -> None:
        """A constant tensor that moves with the module and, if ``persistent``, is saved in
        state_dict. None is an empty buffer (left out of state_dict and to() until it holds a
        tensor), as in PyTorch. A parameter or child of that name becomes this buffer."""
        self._check_name("buffer", name, (self.__dict__.get("_parameters", ()), self.__dict__.get("_buffers", ()),
                                          self.__dict__.get("_modules", ())))
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"{type(self).__name__}: cannot register a {type(value).__name__} as buffer '{name}' "
                            "(a Tensor or None expected)")
        self._forget(name, keep=self._buffers)
        object.__setattr__(self, name, value)
        self._buffers[name] = value
        if not persistent:
            self._non_persistent_buffers.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a Parameter, or None for an empty slot such as a missing bias) as
        ``name``; the same as assigning it, with PyTorch's checks of the name."""
        self._check_name("parameter", name, (self.__dict__.get("_parameters", ()),))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"{type(self).__name__}: cannot register a {type(param).__name__} as parameter "
                            f"'{name}' (a Parameter or None expected)")
        self._forget(name, keep=self._parameters)
        object.__setattr__(self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Register ``module`` as the child ``name`` (what the containers use): a Module, under a
        name that is a string without '.' and not an attribute of another sort."""
        self._check_module(name, module)
        self._check_name("module", name, (self.__dict__.get("_modules", ()),))
        setattr(self, name, module)

    def _check_module(self, name, module) -> None:
        """A TypeError naming this class, ``name`` and what it got, unless ``module`` is a Module."""
        if not isinstance(module, Module):
            shown = repr(module) if len(repr(module)) <= 60 else repr(module)[:57] + "..."
            raise TypeError(f"{type(self).__name__}: {name!r} must be a Module, got {type(module).__name__} "
                            f"({shown})")

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def __call__(self, *args, **kwargs):
        pre_hooks = self.__dict__.get("_forward_pre_hooks")
        if pre_hooks:
            for hook in list(pre_hooks.values()):
                result = hook(self, args)
                if result is not None:  # new arguments, as in PyTorch: a single value stands for a 1-tuple
                    args = result if isinstance(result, tuple) else (result,)
        backward_hooks = self.__dict__.get("_backward_hooks")
        if backward_hooks:
            args = _BackwardHookCall(self, backward_hooks, args).inputs
        output = self.forward(*args, **kwargs)
        for hook in list(self.__dict__.get("_forward_hooks", {}).values()):
            result = hook(self, args, output)
            if result is not None:  # a hook may replace the output, as in PyTorch
                output = result
        if backward_hooks:
            args.call.watch(output)
        return output

    def register_forward_pre_hook(self, hook, *, prepend: bool = False) -> "HookHandle":
        """Call ``hook(module, args)`` before every forward of this module, ``args`` the tuple of
        positional arguments (keyword arguments go to forward alone, as PyTorch's hooks without
        ``with_kwargs``, which minitx lacks). A value it returns replaces the arguments: a tuple
        as it is, anything else as a 1-tuple; the next hook, forward and the forward hooks see
        them. Hooks run in the order registered, ``prepend=True`` puts this one first.
        ``handle.remove()`` unhooks it."""
        hooks = self.__dict__.setdefault("_forward_pre_hooks", OrderedDict())
        return HookHandle.add(hooks, hook, counted=True, prepend=prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False) -> "HookHandle":
        """Call ``hook(module, inputs, output)`` after every forward of this module (to record
        activations, say), ``inputs`` the positional arguments forward got (the pre-hooks' when
        they replaced them); a value it returns replaces the output. Hooks run in the order
        registered, ``prepend=True`` puts this one first, as PyTorch's. ``handle.remove()`` unhooks it."""
        hooks = self.__dict__.setdefault("_forward_hooks", OrderedDict())
        return HookHandle.add(hooks, hook, counted=True, prepend=prepend)

    def register_full_backward_hook(self, hook) -> "HookHandle":
        """Call ``hook(module, grad_input, grad_output)`` when a backward has computed the
        gradients of this module's tensor inputs (a tuple, None where an input takes none) from
        that of its output (a 1-tuple); as PyTorch's, zeros for an input that requires grad but
        that the output does not depend on, and no call when the output depends on none. It
        observes: a hook that returns a value raises, where PyTorch's would replace grad_input.
        The module's output must be one Tensor."""
        return HookHandle.add(self.__dict__.setdefault("_backward_hooks", OrderedDict()), hook, counted=True)

    def apply(self, fn) -> "Module":
        """Call ``fn(module)`` on every submodule, children first, then on this module (a custom
        initialization, say); returns this module. As PyTorch, a child registered under two names
        of one parent is visited once (children() lists it once)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ---------------------------------------------------------------- walking the tree
    def named_modules(self, prefix: str = "", remove_duplicate: bool = True):
        """(name, module) for this module and every descendant, depth first. A module registered
        twice (under two names, or by two parents) comes once, under its first name, as in
        PyTorch, so that train(), apply() and the like visit it once; ``remove_duplicate=False``
        lists every name."""
        seen = set() if remove_duplicate else None

        def walk(module, name):
            if seen is not None:
                if id(module) in seen:
                    return
                seen.add(id(module))
            yield name, module
            for child_name, child in module._modules.items():
                if child is not None:
                    yield from walk(child, f"{name}.{child_name}" if name else child_name)

        yield from walk(self, prefix)

    def modules(self):
        """Every module once, this one first (a generator, as PyTorch's: next(model.modules()) works)."""
        return (m for _, m in self.named_modules())

    def named_children(self):
        """(name, child) for each direct child, each module once (under its first name)."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        return (child for _, child in self.named_children())

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        """(dotted name, tensor) for what each module's ``registry`` (its _parameters or _buffers)
        holds, as PyTorch: this module alone unless ``recurse``; with ``remove_duplicate`` each
        tensor (and each module) once, under its first name."""
        modules = self.named_modules(prefix, remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for module_name, module in modules:
            for name, t in module.__dict__[registry].items():
                if t is None or id(t) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(t))
                yield (f"{module_name}.{name}" if module_name else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(dotted name, parameter), each parameter once even if shared by two modules
        (``remove_duplicate=False``: under every name); ``recurse=False``: this module's own."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Each parameter once, a generator as PyTorch's (``next(model.parameters()).device``; take
        ``list(...)`` to go over them twice)."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(dotted name, buffer) for every buffer that holds a tensor, each once (or under every
        name, ``remove_duplicate=False``); ``recurse=False``: this module's own."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def _state_items(self):
        """(key, tensor) of state_dict in PyTorch's order: module by module (this one, then each
        child's subtree in turn), each module's parameters, then its persistent buffers. A
        parameter comes once, under its first name; a buffer under every name its module is
        registered under (the keys saved checkpoints hold). Loading goes by key, not by order."""
        seen = set()
        for module_name, module in self.named_modules(remove_duplicate=False):
            prefix = f"{module_name}." if module_name else ""
            for name, p in module._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield prefix + name, p
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers:
                    yield prefix + name, b

    def num_parameters(self, trainable_only: bool = True) -> int:
        return sum(p.size for p in self.parameters() if p.requires_grad or not trainable_only)

    def get_submodule(self, target: str) -> "Module":
        """The descendant at dotted path ``target`` ("encoder.layers.0"; "" is this module), as
        PyTorch's: an AttributeError names the part that is no child module."""
        module = self
        for name in target.split(".") if target else ():
            child = module._modules.get(name)
            if child is None:
                raise AttributeError(f"get_submodule({target!r}): {type(module).__name__} has no child module "
                                     f"{name!r}")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` ("encoder.layers.0.attn.w_q.weight"), as PyTorch's."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if module._parameters.get(name) is None:
            raise AttributeError(f"get_parameter({target!r}): {type(module).__name__} has no parameter {name!r}")
        return module._parameters[name]

    def get_buffer(self, target: str):
        """The buffer at dotted path ``target`` ("norm.running_mean"), non-persistent ones too, as
        PyTorch's (an empty buffer is None there as here)."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._buffers:
            raise AttributeError(f"get_buffer({target!r}): {type(module).__name__} has no buffer {name!r}")
        return module._buffers[name]

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set requires_grad on every parameter (False freezes them); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # ---------------------------------------------------------------- modes and devices
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):  # (model.train("no") would set a truthy string: training)
            raise ValueError(f"{type(self).__name__}.train: mode must be True or False, got {mode!r}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    @contextlib.contextmanager
    def evaluating(self):
        """``with model.evaluating():`` eval mode inside the block; the mode it had before is
        restored afterwards, also when the block raises."""
        was_training = self.training
        self.eval()
        try:
            yield self
        finally:
            self.train(was_training)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient, as PyTorch: ``p.grad = None``, or with
        ``set_to_none=False`` zeros written into each gradient in place (a name kept for it sees 0)."""
        zero_gradients(self.parameters(), set_to_none)

    def to(self, device=None, dtype=None, non_blocking=False) -> "Module":
        """Move (and/or cast) every parameter and buffer in place; returns self.

        ``dtype`` casts the floating-point tensors only and must itself be a float dtype
        (bfloat16 included): casting weights to an integer or bool dtype would truncate them
        (most to zero). As PyTorch's, a dtype or a tensor may come first: ``model.to(minitx.float64)``,
        and ``model.to(t)`` for t's device and dtype. ``non_blocking`` is taken for PyTorch's code
        and changes nothing, as Tensor.to's.
        """
        first = _dtype_first(device)  # (read as a device, a dtype given first was an unknown device)
        if first is not None:
            if dtype is not None:
                raise TypeError(f"{type(self).__name__}.to: got {device!r} first, and {dtype!r} as a second dtype")
            device, dtype = first
        device = backend.check_device(device) if device is not None else None
        dtype = backend.resolve_dtype(dtype) if dtype is not None else None
        if dtype is not None and not backend.is_floating(dtype):
            raise TypeError(f"{type(self).__name__}.to: dtype must be a floating-point dtype "
                            f"(float32, float64, bfloat16 or float16), got {dtype.name}; casting the "
                            "parameters to it would truncate them")
        for t in [*self.parameters(), *self.buffers()]:
            if is_lazy(t):  # (no array yet: where and in what its first forward will make one)
                t._retarget(device, dtype if backend.is_floating(t.dtype) else None)
                continue
            cast = dtype is not None and backend.is_floating(t.dtype) and t.dtype != dtype
            move = device is not None and t.device != device
            if not (cast or move):
                continue  # already there: its array and its .grad stay as they are
            grad = t.grad
            if cast:
                t.data = t.data.astype(dtype)
            if move:
                t.data = backend.to_device(t.data, device)
            if grad is not None:  # the gradient goes along, as PyTorch's
                with no_grad():
                    t.grad = grad.to(device if move else None, dtype if cast else None)
        return self

    def cpu(self) -> "Module": return self.to("cpu")
    def cuda(self) -> "Module": return self.to("cuda")
    def float(self) -> "Module": return self.to(dtype="float32")
    def double(self) -> "Module": return self.to(dtype="float64")
    def half(self) -> "Module": return self.to(dtype="float16")
    def bfloat16(self) -> "Module": return self.to(dtype="bfloat16")

    @property
    def device(self) -> str:
        first = next(self.parameters(), None)
        return first.device if first is not None else backend.default_device()

    # ---------------------------------------------------------------- state
    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """Every parameter and persistent buffer by dotted name, as numpy arrays (copies); an
        uninitialized one (of a Lazy module before its first forward) as itself, as PyTorch's."""
        return OrderedDict((name, t if is_lazy(t) else t.numpy().copy()) for name, t in self._state_items())

    def load_state_dict(self, state, strict: bool = True) -> _IncompatibleKeys:
        """Copy arrays into the parameters and buffers, checking names and shapes.

        strict: every key of the module must be present and no unknown key may appear.
        Returns the keys that did not match, as PyTorch: ``(missing_keys, unexpected_keys)``.

        A parameter shared by several modules (tied embeddings) is saved under its first name;
        it loads from any of its names, as PyTorch saves it under each (different values under
        two names of it are refused).

        Each array takes the model's dtype: a floating array may load into a floating parameter
        of another precision (as ``to(dtype=...)`` would cast it); any other array must cast to
        the model's dtype without loss (an int32 count into an int64 buffer). An integer array
        for a float weight is refused: that is another model's state, or a damaged one.

        An uninitialized parameter or buffer (a Lazy module's before its first forward) takes the
        state's shape, as PyTorch's; an uninitialized one in the state is skipped where the model's
        is uninitialized too, and refused where the model's holds values.
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of names to arrays (what state_dict returns), got "
                            f"a {type(state).__name__}")
        own = OrderedDict(self._state_items())
        state = self._under_first_names(state)
        for name, t in own.items():
            if is_lazy(state.get(name)) and not is_lazy(t):
                raise RuntimeError(f"load_state_dict: '{name}' is uninitialized in the state dict (a Lazy module's "
                                   f"before its first forward) but has shape {t.shape} in the model: call forward "
                                   "on the module the state came from first")
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys {missing[:10]}" + (" ..." if len(missing) > 10 else ""))
            if unexpected:
                parts.append(f"unexpected keys {unexpected[:10]}" + (" ..." if len(unexpected) > 10 else ""))
            raise StateDictKeyError(f"load_state_dict into {type(self).__name__}: " + "; ".join(parts))
        # (a tensor's array; a PyTorch tensor's, through DLPack: torch_model.state_dict() loads as it is)
        present = [(name, t, state[name].data if isinstance(state[name], Tensor) else _array(state[name]))
                   for name, t in own.items() if name in state and not (is_lazy(t) and is_lazy(state[name]))]
        lazy = {name for name, t, _ in present if is_lazy(t)}  # (no shape to check: they take the state's)
        for name, t, value in present:  # check every shape and dtype before changing anything
            if not (hasattr(value, "shape") and hasattr(value, "dtype")):
                raise TypeError(f"load_state_dict: '{name}' is a {type(value).__name__} in the state dict; "
                                f"expected an array of shape {t.shape}")
            if name not in lazy and tuple(value.shape) != t.shape:
                raise ValueError(f"load_state_dict: '{name}' has shape {tuple(value.shape)} in the state dict "
                                 f"but {t.shape} in the model")
            floats = backend.is_floating(value.dtype) and backend.is_floating(t.dtype)
            if not (floats or np.can_cast(value.dtype, t.dtype, casting="safe")):
                raise TypeError(f"load_state_dict: '{name}' is {np.dtype(value.dtype).name} in the state dict but "
                                f"{np.dtype(t.dtype).name} in the model, and would not cast without loss")
        for name, t, value in present:
            if name in lazy:
                t.materialize(value.shape)
            with np.errstate(all="ignore"):  # a float64 value past float32's range is its inf, silently as the ops
                array = backend.to_device(np.asarray(backend.to_numpy(value), dtype=t.dtype), t.device)
            try:  # into the tensor's own array, as PyTorch copies: its views (and a captured graph) see the values
                t._writable("load_state_dict")[...] = array
            except RuntimeError:  # memory it cannot write (a broadcast, an array from outside): a copy of its own
                t.data = array.copy()
        return _IncompatibleKeys(missing, unexpected)

    def _under_first_names(self, state):
        """``state`` with a tied parameter's other names folded into the name state_dict uses."""
        first = {}
        aliases = {}  # another name of a parameter -> its first name
        for name, p in self.named_parameters(remove_duplicate=False):
            aliases[name] = first.setdefault(id(p), name)
        if not any(name in state and aliases[name] != name for name in aliases):
            return state
        folded = OrderedDict()
        for key, value in state.items():
            name = aliases.get(key, key)
            if name in folded:
                seen, here = (backend.to_numpy(v.data if isinstance(v, Tensor) else _array(v)) for v in (folded[name], value))
                if seen.shape != here.shape or not np.array_equal(seen, here, equal_nan=True):
                    what = f"shapes {seen.shape} and {here.shape}" if seen.shape != here.shape else "values"
                    raise ValueError(f"load_state_dict: '{key}' and '{name}' name one parameter of the model (tied), "
                                     f"but the state dict gives them different {what}")
                continue
            folded[name] = value
        return folded

    # ---------------------------------------------------------------- display
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            child_lines = repr(child).split("\n")
            lines.append(f"  ({name}): " + "\n  ".join(child_lines))
        if len(lines) == 1:
            return lines[0] + ")"
        return "\n".join(lines) + "\n)"


class _HookedInputs(tuple):
    """The module's arguments, each tensor that requires grad passed through an identity op of
    its own, so that its gradient from this call alone can be seen (the caller's tensor may feed
    other ops too); ``call`` is the _BackwardHookCall they belong to."""

    call = None


class _BackwardHookCall:
    """One call of a module with backward hooks: collects grad_output and each input's gradient,
    then calls the hooks once every input that takes a gradient has its own."""

    def __init__(self, module, hooks, args):
        from minitx.ops.shape import reshape  # noqa: PLC0415

        self.module, self.hooks = module, hooks
        # a reshape to its own shape: an op whose output is the input, with a gradient of its own
        wrapped = [reshape(a, a.shape) if isinstance(a, Tensor) and a.requires_grad else a for a in args]
        self.positions = [i for i, a in enumerate(wrapped) if isinstance(a, Tensor) and a.requires_grad]
        self.grad_input = [None] * len(wrapped)
        self.grad_output = None
        for i in self.positions:
            wrapped[i].register_hook(lambda g, i=i: self._arrived(i, g))
        self.inputs = _HookedInputs(wrapped)
        self.inputs.call = self
        self.waiting = set(self.positions)

    def watch(self, output) -> None:
        if not isinstance(output, Tensor):
            raise TypeError(f"register_full_backward_hook: {type(self.module).__name__} returned a "
                            f"{type(output).__name__}; backward hooks need one Tensor output")
        if output.requires_grad:
            output.register_hook(self._output_grad)
        # an input the output does not depend on gets no gradient, so waiting for it would keep
        # the hooks from ever running: as PyTorch's, they run once the others arrive, with zeros
        # in its place (and not at all when no input reaches the output)
        reached = self._reached_from(output)
        for i in self.positions if reached else ():
            if i not in reached:
                data = self.inputs[i].data
                self.grad_input[i] = Tensor(backend.get_array_module(data).zeros_like(data))
                self.waiting.discard(i)

    def _reached_from(self, output) -> set:
        """The positions of the wrapped inputs that ``output``'s graph leads back to; the walk
        stops at them and at the caller's tensors they wrap (the graph before this call)."""
        targets = {id(self.inputs[i]): i for i in self.positions}
        stop = {id(self.inputs[i]._ctx.inputs[0]) for i in self.positions}
        reached, seen, stack = set(), set(), [output]
        while stack:
            node = stack.pop()
            if id(node) in seen or id(node) in stop or not node.requires_grad:
                continue
            seen.add(id(node))
            if id(node) in targets:
                reached.add(targets[id(node)])
                continue
            if node._ctx is not None:
                stack.extend(node._ctx.inputs)
        return reached

    def _output_grad(self, g):
        self.grad_output = g
        if not self.positions:  # nothing flows further: call now, with no input gradients
            self._call_hooks()

    def _arrived(self, i, g):
        self.grad_input[i] = g
        self.waiting.discard(i)
        if not self.waiting:
            self._call_hooks()

    def _call_hooks(self):
        for hook in list(self.hooks.values()):
            if hook(self.module, tuple(self.grad_input), (self.grad_output,)) is not None:
                raise RuntimeError(f"a backward hook of {type(self.module).__name__} returned a value: minitx's "
                                   "backward hooks observe the gradients and do not replace them")


def _array(value):
    """A state dict's value as an array: NumPy and CuPy arrays as they are, another library's
    tensor (a PyTorch one, detached) through minitx.interop."""
    if hasattr(value, "detach") and not isinstance(value, Tensor):
        value = value.detach()
    return interop.as_array(value, "load_state_dict")



def layer_input(owner: str, x, what: str = "input") -> Tensor:
    """``x``, a layer's input, as a tensor, converted as the ops convert theirs (an array, a list, a
    PyTorch tensor); what no tensor holds is a TypeError naming ``owner``: a layer that reads its
    input's shape first would fail on Python's "'str' object has no attribute 'shape'" otherwise."""
    if isinstance(x, Tensor):
        return x
    with named(owner if what == "input" else f"{owner} ({what})"):
        return as_tensor(x)
