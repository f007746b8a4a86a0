"""``Optimizer``: the part every optimizer shares.

An optimizer owns a list of *parameter groups*. Each group is a dict holding the parameters
(``group['params']``, a list of Tensors) and the hyperparameters that apply to them
(``group['lr']``, ``group['weight_decay']``, ...). One group is the common case; several
groups let a model train, say, its biases and norms without weight decay:

    decay = [p for name, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for name, p in model.named_parameters() if p.ndim < 2]
    opt = AdamW([{'params': decay}, {'params': no_decay, 'weight_decay': 0.0}], lr=3e-4)

The per-parameter state (momentum buffers, Adam's moments) is kept in ``opt.state``, a dict
keyed by the parameter tensor itself, as PyTorch's: ``opt.state[p]['exp_avg']``. Keyed so, the
state follows its parameter when the groups change (a parameter appended to a group, a group
dict replaced). Every parameter also has an *index*: its position when the groups are read in
order, one parameter after another. ``state_dict()`` saves the state by index (a saved file
holds no tensors to key by), and errors name a parameter by its index.

The update itself happens in place on the raw arrays ``p.data`` (numpy or cupy): modules
keep references to their parameter tensors, and an optimizer step must not record a graph.

NaN / inf policy
----------------
With ``check_finite=True`` (the default), ``step()`` first checks every gradient. If any holds
a NaN or an infinity, it raises ``FloatingPointError`` naming the first such parameter index
and its shape, and *no parameter and no state is changed*: the training loop may catch the
error, call ``zero_grad()`` and skip the batch. With ``check_finite=False`` the check (on the GPU one
kernel over all gradients, else one reduction per gradient; a device synchronisation per step)
is skipped, and non-finite
gradients flow into the parameters as the arithmetic dictates.

Inside ``minitx.sync.DeferredChecks.deferring()`` (a training step that must not read the
device) the check cannot raise at once. It is then kept on the device: the step is *skipped*
there (no parameter or state array changes, as PyTorch's GradScaler skips a step with
infinite gradients), and the same FloatingPointError is raised, naming the step, when the
checks are next read. Adam and AdamW support this; the other optimizers do not. A float16
run's GradScaler uses the same skip, with its own flag (a gradient overflowed under the loss
scale), in place of the check and without an error: ``_step(skip=found_inf)``.
"""
from __future__ import annotations

import math
import numbers
from collections import defaultdict

import numpy as np

from minitx import backend, interop, kernels, sync
from minitx.autograd.grad_mode import enable_grad
from minitx.autograd.inplace import mark_modified, zero_gradients
from minitx.autograd.tensor import Tensor
from minitx.nn.parameter import is_lazy


class Optimizer:
    """Base class: parameter groups, ``zero_grad``, ``step``, ``state_dict``.

    Subclasses set ``defaults`` (hyperparameter name -> default value), implement
    ``_check_group(group)`` (raise ValueError for invalid hyperparameters) and either
    ``_update(p, g, state, group)`` (one parameter's step, on raw arrays: what most optimizers
    need) or the whole ``_step_group(group, items)``, where ``items`` lists ``(index, param)``
    for the parameters of the group that have a gradient.
    """

    def __init__(self, params, defaults: dict, check_finite: bool = True):
        self.defaults = dict(defaults)
        check_flag(type(self).__name__, "check_finite", check_finite)  # (a string "False" would read as True)
        self.check_finite = bool(check_finite)
        self.param_groups: list[dict] = []
        # parameter -> its state; a defaultdict as PyTorch's, so a subclass may write self.state[p]['key']
        self.state: defaultdict = defaultdict(dict)
        self._index_arrays: dict = {}  # (parameter indices, device) -> those indices as a device array

        if isinstance(params, Tensor):
            raise TypeError(f"{self._name}: params must be an iterable of Tensors or of dicts "
                            "(parameter groups), got a single Tensor; wrap it in a list")
        if isinstance(params, dict):
            raise TypeError(f"{self._name}: params must be an iterable of Tensors or of dicts; "
                            "got one dict: wrap the parameter group in a list")
        params = list(params)
        if not params:
            raise ValueError(f"{self._name}: got an empty parameter list")
        if all(isinstance(p, dict) for p in params):
            groups = params
        elif any(isinstance(p, dict) for p in params):
            raise TypeError(f"{self._name}: params mixes Tensors and dicts; give either a list "
                            "of Tensors or a list of parameter-group dicts")
        else:
            groups = [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    #: attributes caching device arrays made from the groups, each a dict made again when next
    #: needed: a copy of the optimizer (copy.deepcopy, pickle) starts them empty, since their keys
    #: name the original's objects (by id)
    _CACHES = ("_index_arrays",)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update({name: {} for name in self._CACHES})
        return state

    # ------------------------------------------------------------------ groups
    @property
    def _name(self) -> str:
        return type(self).__name__

    def add_param_group(self, group: dict) -> None:
        """Append a group: a dict with 'params' and, optionally, hyperparameters overriding
        the optimizer's defaults. The caller's dict is copied, not modified."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{self._name}: a parameter group must be a dict with a 'params' key, "
                            f"got {type(group).__name__}")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        start = sum(len(g["params"]) for g in self.param_groups)
        names = _names_of(params)  # model.named_parameters() gives (name, tensor) pairs
        if names is not None:
            params = [p for _, p in params]
        if self.param_groups and (names is None) != ("param_names" not in self.param_groups[0]):
            raise ValueError(f"{self._name}: parameter group {len(self.param_groups)} is "
                             f"{'with' if names is not None else 'without'} names and group 0 is not; give every "
                             "group (name, tensor) pairs (model.named_parameters()) or every group tensors")
        known = {id(p) for g in self.param_groups for p in g["params"]}
        for k, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{self._name}: parameter {start + k} is a {type(p).__name__}, "
                                "expected a minitx Tensor (or, for every parameter, a (name, Tensor) pair as "
                                "model.named_parameters() gives)")
            if not p.is_leaf and not p.retains_grad:  # backward never gives it a .grad: it would never move
                raise ValueError(f"{self._name}: can't optimize a non-leaf Tensor: parameter {start + k} (shape "
                                 f"{p.shape}) is computed from others (by '{p.grad_fn.name}'); optimize the leaf it "
                                 "comes from, or make it one: w = (minitx.randn(3) * 0.01).requires_grad_()")
            if is_lazy(p):  # (no shape yet: no state to make, nothing to update)
                raise ValueError(f"{self._name}: parameter {start + k} is uninitialized (a Lazy module's, whose "
                                 "shape its first forward sets); call the model once on a batch before building "
                                 "the optimizer")
            if p.dtype.name == "bfloat16":
                raise self._bfloat16_error(self._name, start + k)
            if p.dtype.kind != "f":
                raise TypeError(f"{self._name}: parameter {start + k} has dtype {p.dtype.name}; "
                                "only floating-point tensors can be optimized")
            if id(p) in known:
                raise ValueError(f"{self._name}: parameter {start + k} (shape {p.shape}) appears "
                                 "more than once; each parameter may belong to one group only")
            known.add(id(p))
        if not params:
            raise ValueError(f"{self._name}: parameter group {len(self.param_groups)} is empty")
        new = dict(self.defaults)
        new.update({k: v for k, v in group.items() if k != "params"})
        new["params"] = params
        if names is not None:
            new["param_names"] = names  # saved with the group, as PyTorch's
        self._check_group(new)
        self.param_groups.append(new)

    @staticmethod
    def _bfloat16_error(where: str, index: int) -> TypeError:
        """The refusal of a bfloat16 parameter: the fused update keeps float32 master weights
        beside bfloat16 gradients, and the reference path would round every small update away."""
        return TypeError(f"{where}: parameter {index} has dtype bfloat16; the optimizers update float16, float32 "
                         "and float64 parameters: keep the weights in float32 and compute in bfloat16 with "
                         "minitx.autocast('bfloat16')")

    def _check_group(self, group: dict) -> None:  # pragma: no cover - overridden
        pass

    def _indexed_params(self):
        """Yield (index, group, param) for every parameter, in index order."""
        index = 0
        for group in self.param_groups:
            for p in group["params"]:
                yield index, group, p
                index += 1

    # ------------------------------------------------------------------ stepping
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``p.grad = None`` (or fill them with zeros in place)."""
        zero_gradients((p for _, _, p in self._indexed_params()), set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient (parameters with grad None are skipped).

        ``closure``, as PyTorch's: a function that zeroes the gradients, computes the loss, calls
        backward and returns the loss. It is called first, with gradients recorded (also under
        no_grad), and step returns what it returned (None without one)."""
        loss = None
        if closure is not None:
            if not callable(closure):
                raise TypeError(f"{type(self).__name__}.step: closure must be a function that zeroes the gradients, "
                                f"computes the loss, calls backward and returns the loss; got {closure!r:.60}")
            with enable_grad():
                loss = closure()
        self._step()
        return loss

    def _step(self, skip=None) -> None:
        """step(); ``skip`` (a device boolean, from GradScaler: some gradient overflowed) leaves
        every parameter and state array as it is where True, in place of the NaN/inf check."""
        work = []  # (group, [(index, param), ...]) for the parameters that have a gradient
        flat = []
        index = 0
        for group in self.param_groups:
            items = []
            for p in group["params"]:
                if p.grad is not None:
                    if p.dtype.name == "bfloat16":  # cast after the optimizer took it (model.bfloat16())
                        raise self._bfloat16_error(f"{self._name}.step", index)
                    if p.grad.shape != p.shape:
                        raise ValueError(f"{self._name}.step: parameter {index} has shape {p.shape} "
                                         f"but its gradient has shape {p.grad.shape}")
                    items.append((index, p))
                index += 1
            work.append((group, items))
            flat.extend(items)
        checks = sync.deferring_checks()
        if checks is not None or skip is not None:  # skip: on the device, whether this step is skipped
            if not self.supports_skip:
                raise TypeError(f"{self._name}.step: a step inside DeferredChecks.deferring() must be able to "
                                "skip itself on the device; Adam and AdamW can, this optimizer cannot")
            if skip is None and self.check_finite and flat:
                skip = self._record_not_finite(flat, checks)
        elif self.check_finite and flat:
            self._raise_if_not_finite(flat)
        # the update writes into p.data: graphs that saved a parameter must refuse backward
        mark_modified(*(p for _, p in flat))
        with np.errstate(all="ignore"):  # a square past the dtype's range (g * g) is inf, silently as the ops
            for group, items in work:
                if items:
                    if skip is None:
                        self._step_group(group, items)
                    else:
                        self._step_group(group, items, skip=skip)

    supports_skip = False  # whether _step_group takes skip= (a device boolean: leave everything as it is)

    def _raise_if_not_finite(self, items) -> None:
        """Raise FloatingPointError, naming the first parameter whose gradient holds NaN or inf.
        One sync per device and dtype: on the kernel path one launch counts over every gradient
        (kernels.nonfinite_counts); otherwise one reduction per gradient, stacked."""
        groups: dict = {}
        for index, p in items:
            g = p.grad.data
            groups.setdefault((backend.get_array_module(g), g.dtype), []).append((index, p))
        bad = []  # (index, param) of every non-finite gradient, over all groups
        for (xp, _), entries in groups.items():
            grads = [p.grad.data for _, p in entries]
            if kernels.enabled(*grads):
                finite = kernels.nonfinite_counts(grads) == 0
            else:
                finite = backend.to_numpy(xp.stack([xp.isfinite(g).all() for g in grads]))
            bad += [entry for entry, ok in zip(entries, finite) if not ok]
        if bad:
            index, p = min(bad, key=lambda entry: entry[0])
            raise self._not_finite_error(index, p.shape)

    def _not_finite_error(self, index, shape) -> FloatingPointError:
        return FloatingPointError(
            f"{self._name}.step: the gradient of parameter {index} (shape {shape}) "
            "contains NaN or inf; no parameter was updated. Skip this batch "
            "(zero_grad()) or lower the learning rate; check_finite=False disables "
            "this check")

    def _record_not_finite(self, items, checks):
        """The NaN/inf check without a host read: a device boolean, True when some gradient is
        not finite, and the lowest such parameter index recorded in ``checks``."""
        xp = backend.get_array_module(items[0][1].grad.data)
        finite = finite_flags([p.grad.data for _, p in items])
        indices = self._device_indices(tuple(index for index, _ in items), items[0][1].grad.device)
        skip = ~finite.all()
        first_bad = indices[xp.argmin(finite)]  # argmin of booleans: the first False
        shapes = {index: p.shape for index, p in items}
        checks.record(f"{self._name}.step: non-finite gradient", skip, first_bad,
                      lambda index: self._not_finite_error(index, shapes.get(index)))
        return skip

    def _device_indices(self, indices: tuple, device):
        """Parameter indices as an int64 array on ``device``, uploaded once per set of parameters
        (a copy from the host at every step would make the step wait for it)."""
        key = (indices, device)
        array = self._index_arrays.get(key)
        if array is None:
            array = self._index_arrays[key] = backend.to_device(np.asarray(indices, dtype=np.int64), device)
        return array

    def _step_group(self, group: dict, items: list) -> None:
        """One step for the group's parameters that have a gradient, one parameter at a time:
        its gradient as the update takes it, its state (made at its first step), ``_update``."""
        for _, p in items:
            g = self._gradient(group, p)
            self._update(p.data, g, self._state_of(group, p), group)

    def _update(self, p, g, state: dict, group: dict) -> None:  # pragma: no cover - overridden
        """Update the raw array ``p`` (and ``state``) in place, given the gradient ``g``."""
        raise NotImplementedError

    def _gradient(self, group: dict, p):
        """p's gradient as the update takes it: negated when ``group['maximize']`` (ascend the
        objective), then weight decay: ``weight_decay * p`` added (the L2 penalty's gradient) or,
        when the group has ``decoupled_weight_decay`` set, p itself shrunk by
        ``lr * weight_decay`` in place (AdamW's decay; the gradient is left alone). ``p.grad``
        is never written: the user, clipping or another optimizer may read it after the step."""
        g = -p.grad.data if group["maximize"] else p.grad.data
        weight_decay = group.get("weight_decay", 0.0)  # (Rprop has none)
        if weight_decay != 0:
            if group.get("decoupled_weight_decay", False):
                p.data *= 1 - group["lr"] * weight_decay
            else:
                g = g + weight_decay * p.data
        return g

    def _state_of(self, group: dict, p) -> dict:
        """Parameter ``p``'s state, made at its first step with what ``_param_state_kinds``
        lists, each at its start: a count at 0, a fraction at 1, a rate at the group's lr, an
        array of zeros (of step sizes: each the group's lr) of the shape ``_state_shape`` says."""
        state = self.state.get(p)
        if not state:
            xp = backend.get_array_module(p.data)
            state = self.state[p] = {}
            for key, kind in self._param_state_kinds(group, p).items():
                if kind == "count":
                    state[key] = 0
                elif kind == "fraction":
                    state[key] = 1.0
                elif kind == "rate":
                    state[key] = float(group["lr"])
                else:
                    start = group["lr"] if kind == "rates" else 0
                    state[key] = xp.full(self._state_shape(p, key), start, dtype=p.dtype)
        return state

    # ------------------------------------------------------------------ saving
    def state_dict(self) -> dict:
        """{'state': [per-parameter dict, by index], 'param_groups': [hyperparameters + 'params']}

        State arrays are numpy copies, step counts ints (read from the device); 'params' in a
        group lists the indices of its parameters. Everything in it can be written with
        ``minitx.serialization.save``.
        """
        state = []
        for _, _, p in self._indexed_params():
            entry = {}
            for key, value in self.state.get(p, {}).items():
                if self.STATE.get(key) == "count":
                    value = int(backend.to_host(value))
                elif hasattr(value, "shape") and hasattr(value, "dtype") and not np.isscalar(value):
                    value = np.array(backend.to_numpy(value), copy=True)
                entry[key] = value
            state.append(entry)
        groups = []
        start = 0
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = list(range(start, start + len(group["params"])))
            start += len(group["params"])
            groups.append(saved)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` returned (possibly after save/load), or what a PyTorch
        optimizer's ``state_dict()`` returned, as it is (a run ported from PyTorch continues here).

        Checks first, changes after: the number of groups, the number of parameters in each
        group and the shape of every state array must match this optimizer, else ValueError
        (naming the parameter index and both shapes) and nothing is changed. Each parameter's
        state holds what its ``_param_state_kinds`` says (``STATE``, and Adam's amsgrad
        maximum), of the kind it says (a step count of 1.5 or an integer moment is refused,
        naming the parameter and the key). Arrays are copied onto
        each parameter's device and cast to its dtype.

        PyTorch's format (told by its groups' keys foreach, differentiable, ..., or by torch
        tensors in its state) differs from minitx's in what ``_from_pytorch`` translates:

        * 'state' maps a parameter's index to its state; a parameter it leaves out has taken
          no step (its state is made at its first step, as here);
        * the state holds torch tensors (read through DLPack, then copied); a step count is a
          float tensor, taken as an int (one that is not a whole number is refused); a count of
          0 (Adagrad makes every state when built) is a parameter that has taken no step;
          RMSprop, Adadelta and Rprop count steps that their update never reads, which are dropped;
        * its groups hold hyperparameters minitx has (taken; a tensor lr or beta as its float),
          keys that only choose how PyTorch runs its update, ``PYTORCH_RUN_KEYS`` (ignored), and
          keys that change the update and this optimizer has no setting for,
          ``PYTORCH_FIXED`` (Adam's decoupled_weight_decay): accepted at the value that
          computes what this optimizer computes, refused otherwise, naming the key and value.
          Other keys (a scheduler's 'initial_lr') stay in the group, as in minitx's format.
        """
        name = f"{self._name}.load_state_dict"
        if not isinstance(state_dict, dict) or "state" not in state_dict \
                or "param_groups" not in state_dict:
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups'")
        if _is_pytorchs(state_dict):
            state_dict = self._from_pytorch(name, state_dict)
        saved_groups = list(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}: number of parameter groups differs: "
                             f"{len(saved_groups)} in the state dict, {len(self.param_groups)} "
                             "in this optimizer")
        start = 0
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if not isinstance(saved, dict) or not isinstance(saved.get("params"), list):
                raise ValueError(f"{name}: parameter group {g} is {saved!r:.80}; expected a dict with a list "
                                 "of 'params'")
            n_saved, n_here = len(saved["params"]), len(group["params"])
            if n_saved != n_here:
                raise ValueError(f"{name}: parameter group {g} has {n_saved} parameters in the "
                                 f"state dict and {n_here} in this optimizer")
            if saved["params"] != list(range(start, start + n_here)):  # what state_dict() numbers them
                raise ValueError(f"{name}: parameter group {g} lists the parameters {saved['params']!r:.80}; "
                                 f"expected {start} to {start + n_here - 1} in order")
            start += n_here
        params = [p for _, _, p in self._indexed_params()]
        saved_state = state_dict["state"]
        if isinstance(saved_state, dict):  # also accept {index: state}, keys int or str
            saved_state = {int(k): v for k, v in saved_state.items()}
            bad = [i for i in saved_state if not 0 <= i < len(params)]
            if bad:
                raise ValueError(f"{name}: state for parameter {bad[0]}, but this optimizer has "
                                 f"{len(params)} parameters")
            saved_state = [saved_state.get(i, {}) for i in range(len(params))]
        elif len(saved_state) != len(params):
            raise ValueError(f"{name}: number of parameters differs: {len(saved_state)} in the "
                             f"state dict, {len(params)} in this optimizer")

        new_groups = []
        for saved, group in zip(saved_groups, self.param_groups):
            new = dict(group)
            new.update({k: (tuple(v) if k == "betas" else v)
                        for k, v in saved.items() if k != "params"})
            self._check_group(new)
            new_groups.append(new)

        kinds = [self._param_state_kinds(new, p) for new in new_groups for p in new["params"]]  # by index
        new_state = defaultdict(dict)  # by parameter, as self.state
        for index, (entry, p) in enumerate(zip(saved_state, params)):
            restored = {key: self._restored_state(name, index, p, key, value, kinds[index])
                        for key, value in self._checked_entry(name, index, entry, kinds[index]).items()}
            if restored:
                new_state[p] = restored
        # everything checked: now change the optimizer
        for group, new in zip(self.param_groups, new_groups):
            group.update(new)
        self.state = new_state
        self._state_restored()

    #: PyTorch's group keys that change its update and that this optimizer has no setting for,
    #: each with the value at which PyTorch computes what this optimizer computes
    PYTORCH_FIXED: dict = {}

    def _from_pytorch(self, name, state_dict) -> dict:
        """A PyTorch optimizer's state dict in minitx's format (see load_state_dict); the
        caller's dict is not changed. What this cannot translate is left for the checks after it."""
        groups = []
        for g, saved in enumerate(state_dict["param_groups"]):
            group = saved
            if isinstance(saved, dict):
                for key, fixed in self.PYTORCH_FIXED.items():
                    if key in saved and saved[key] != fixed:
                        raise ValueError(f"{name}: PyTorch's parameter group {g} has {key}={saved[key]!r}, which "
                                         f"changes the update; {self._name} has no {key} setting and computes what "
                                         f"{key}={fixed!r} does")
                group = {key: value if key == "params" else _hyperparameter(value) for key, value in saved.items()
                         if key not in PYTORCH_RUN_KEYS and key not in self.PYTORCH_FIXED}
            groups.append(group)
        state = state_dict["state"]
        if isinstance(state, dict):
            state = {index: self._entry_from_pytorch(name, index, entry) for index, entry in state.items()}
        return {"state": state, "param_groups": groups}

    def _entry_from_pytorch(self, name, index, entry):
        """One parameter's state from PyTorch: its tensors as arrays, its step count as an int."""
        if not isinstance(entry, dict):
            return entry
        converted = {}
        for key, value in entry.items():
            if key == "step" and key not in self.STATE:
                continue  # RMSprop's, Adadelta's, Rprop's: PyTorch counts steps that their update never reads
            if _is_torch_tensor(value):
                value = float(value) if self.STATE.get(key) in ("count", *SCALAR_KINDS) \
                    else interop.as_array(value.detach(), name)
            if self.STATE.get(key) == "count" and isinstance(value, float):  # a float tensor since torch 1.12
                if not value.is_integer():
                    raise ValueError(f"{name}: PyTorch's state '{key}' of parameter {index} is {value}; "
                                     "expected a whole number of steps")
                value = int(value)
            converted[key] = value
        if isinstance(converted.get("step"), int) and converted["step"] == 0:
            return {}  # made but not stepped (Adagrad makes every state when built): fresh, as minitx's
        return converted

    def _state_restored(self) -> None:
        """After load_state_dict replaced ``self.state``: a subclass that keeps part of its state
        elsewhere (Adam's step counts, on the device) takes it back here."""

    #: what a parameter's state holds once it has taken a step, key -> kind: "count" (a whole
    #: number of steps, >= 1), "array" (a finite float array of the parameter's shape),
    #: "squares" (the same, >= 0: a running mean of squares, or Adamax's maximum of |g|),
    #: "rates" (the same, >= 0: Rprop's step size per weight), "fraction" (a float from 0 to 1:
    #: NAdam's running product mu_product, ASGD's averaging weight mu) or "rate" (a float >= 0:
    #: ASGD's learning rate eta)
    STATE: dict = {}

    def _state_kinds(self, group) -> dict:
        """STATE for the parameters of ``group`` (a setting may add to it: Adam's amsgrad)."""
        return self.STATE

    def _param_state_kinds(self, group, p) -> dict:
        """_state_kinds for the parameter ``p`` of ``group`` (Adafactor's depend on p's dimensions)."""
        return self._state_kinds(group)

    def _state_shape(self, p, key) -> tuple:
        """The shape of the state array ``key`` of parameter ``p``: p's (Adafactor's factors differ)."""
        return p.shape

    def _checked_entry(self, name, index, entry, kinds) -> dict:
        """A saved per-parameter state: empty (the parameter has taken no step), or exactly the
        keys of ``kinds`` (its _param_state_kinds)."""
        if entry is None:
            return {}
        if not isinstance(entry, dict):
            raise TypeError(f"{name}: the state of parameter {index} is a {type(entry).__name__}, expected a dict")
        unknown = sorted(set(entry) - set(kinds))
        missing = sorted(set(kinds) - set(entry))
        if entry and (unknown or missing):
            raise ValueError(f"{name}: the state of parameter {index} has keys {sorted(entry)}; expected "
                             f"{sorted(kinds)}" + (f" (unknown: {unknown})" if unknown else "")
                             + (f" (missing: {missing})" if missing else ""))
        return entry

    def _restored_state(self, name, index, p, key, value, kinds):
        """One saved state value, checked against kinds[key], on p's device in p's dtype."""
        where = f"{name}: state '{key}' of parameter {index}"
        if kinds[key] == "count":
            # a count lives in an int64 array on the device (Adam's t)
            return check_count(name, f"state '{key}' of parameter {index}", value, low=1, high=np.iinfo(np.int64).max)
        if kinds[key] in SCALAR_KINDS:  # "fraction" from 0 to 1, "rate" >= 0
            check_number(name, f"state '{key}' of parameter {index}", value, low=0,
                         high=1 if kinds[key] == "fraction" else None)
            return float(value)
        shape = self._state_shape(p, key)
        if not (hasattr(value, "shape") and hasattr(value, "dtype")) or not backend.is_floating(value.dtype):
            what = np.dtype(value.dtype).name if hasattr(value, "dtype") else type(value).__name__
            raise TypeError(f"{where} is {what}; expected a float array of shape {shape}")
        if tuple(value.shape) != shape:
            raise ValueError(f"{where} has shape {tuple(value.shape)}, but "
                             + (f"the parameter has shape {p.shape}" if shape == p.shape
                                else f"expected {shape} for the parameter of shape {p.shape}"))
        host = np.array(backend.to_numpy(value), dtype=p.dtype, copy=True)
        if not np.isfinite(host.astype(np.float64)).all():  # every later update would be NaN
            raise ValueError(f"{where} holds NaN or inf; a run never saves one (it stops first)")
        if kinds[key] in NOT_NEGATIVE and (host < 0).any():
            raise ValueError(f"{where} holds negative values; {NOT_NEGATIVE[kinds[key]]}")
        return backend.to_device(host, p.device)

    def __repr__(self) -> str:
        lines = [f"{self._name}("]
        for g, group in enumerate(self.param_groups):
            hyper = ", ".join(f"{k}={v}" for k, v in group.items() if k != "params")
            lines.append(f"  group {g}: {len(group['params'])} parameters, {hyper}")
        return "\n".join(lines) + "\n)"


#: the kinds of STATE that are floats, not arrays
SCALAR_KINDS = ("fraction", "rate")

#: the array kinds of STATE that are never negative, each with why
NOT_NEGATIVE = {"squares": "it is a mean of squares (or a maximum of magnitudes)", "rates": "they are step sizes"}

#: PyTorch's group keys that choose how its update runs (a loop, one multi-tensor or one fused kernel;
#: a step CUDA graphs can capture; a step autograd can differentiate), not what it computes
PYTORCH_RUN_KEYS = ("foreach", "fused", "capturable", "differentiable")


def _names_of(params):
    """The names when ``params`` are (name, Tensor) pairs (model.named_parameters(); PyTorch takes
    them since 2.6), else None."""
    if params and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in params):
        return [name for name, _ in params]
    return None


def _is_torch_tensor(value) -> bool:
    """Whether ``value`` is a PyTorch tensor, told by its type's module (minitx never imports torch)."""
    return type(value).__module__.split(".")[0] == "torch"


def _is_pytorchs(state_dict) -> bool:
    """Whether an optimizer's state dict is PyTorch's: its groups hold PyTorch's run keys (every
    optimizer's does since torch 1.13), or its state holds torch tensors."""
    groups = [g for g in state_dict["param_groups"] if isinstance(g, dict)]
    state = state_dict["state"]
    entries = state.values() if isinstance(state, dict) else state
    return any(key in g for g in groups for key in PYTORCH_RUN_KEYS) \
        or any(_is_torch_tensor(v) for e in entries if isinstance(e, dict) for v in e.values())


def _hyperparameter(value):
    """A PyTorch group's value as minitx holds it: a one-element tensor (PyTorch takes lr and
    betas as tensors too) as its float, in a pair too."""
    if _is_torch_tensor(value) and value.numel() == 1:
        return float(value)
    if isinstance(value, (tuple, list)) and any(_is_torch_tensor(v) for v in value):
        return tuple(_hyperparameter(v) for v in value)
    return value


def finite_flags(arrays):
    """A device boolean per array (one array of them): whether it holds no NaN and no inf. No
    host read: the deferred NaN/inf check and GradScaler's overflow check keep it on the device.
    On the kernel path one launch counts over every array (kernels.nonfinite_flags); otherwise
    one reduction per array, stacked."""
    if kernels.enabled(*arrays):
        return kernels.nonfinite_flags(arrays)
    xp = backend.get_array_module(arrays[0])
    return xp.stack([xp.isfinite(a).all() for a in arrays])


# ---------------------------------------------------------------------- validation helpers
def check_number(opt: str, name: str, value, low=None, high=None, low_open=False, high_open=False):
    """Raise ValueError unless ``value`` is a finite real number within the given bounds."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "" if low is None else f"{low} {'<' if low_open else '<='} "
        hi = "" if high is None else f" {'<' if high_open else '<='} {high}"
        raise ValueError(f"{opt}: invalid {name} {value!r}; expected a finite number {lo}{name}{hi}")


def check_flag(opt: str, name: str, value) -> None:
    """Raise TypeError unless ``value`` is a bool (a NumPy bool too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{opt}: invalid {name} {value!r}; expected True or False")


def check_count(owner: str, name: str, value, low=0, high=None) -> int:
    """``value`` as an int, when it is a whole number (a Python or NumPy integer, not a bool) >=
    ``low`` (and <= ``high``); ValueError naming it otherwise (a restored step count of 1.5, say)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"from {low} to {high}"
        raise ValueError(f"{owner}: invalid {name} {value!r}; expected a whole number {bounds}")
    return int(value)
