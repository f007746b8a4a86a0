"""``GradScaler``: the dynamic loss scale of float16 training (PyTorch's torch.amp.GradScaler).

Why: float16 has 5 exponent bits. Its largest value is 65504, its smallest normal one 6.1e-5
and its smallest subnormal one 2^-24 = 6e-8: a gradient below that is 0. The backward pass of a
float16 product computes the gradients in float16, and in a deep network many are that small, so
they vanish before they reach the float32 master weights. Multiplying the loss by a scale S
multiplies every gradient of the backward pass by S (the chain rule is linear in the loss's
gradient) and lifts them into float16's range; the step divides them by S again, in float32,
where they fit. Too large an S overflows the largest gradients to inf instead: the step is then
skipped and S is halved. So S is found as the run goes: it grows after ``growth_interval``
clean steps in a row, probing for the largest S that does not overflow.

The math, with g the gradients of the scaled loss S * L (what backward leaves in ``.grad``):

    scale(L)    = S * L
    unscale_    g = g * float32(1 / S)                          (in place, in g's float32)
                found_inf = some g holds NaN or inf (after unscaling)
    step        the optimizer's step, skipped where found_inf
    update      found_inf:   S = S * backoff_factor,  tracker = 0
                else:        tracker = tracker + 1; when it reaches growth_interval,
                             S = S * growth_factor (unless that is inf in float32), tracker = 0

S is float32, the tracker int32, each product computed in float64 and rounded once to float32,
as PyTorch's CPU and CUDA kernels do; the arithmetic follows theirs bit for bit.

Sync-free: S, the tracker and found_inf stay on the device. An optimizer that can skip its step
on the device (Adam, AdamW: Optimizer.supports_skip) takes found_inf as its skip flag, the same
flag the deferred NaN/inf check (minitx.sync) gives it: no host read in a plain step or inside
``DeferredChecks.deferring()``. Another optimizer (SGD) costs one host read to decide whether to
step, and cannot step inside deferring() (TypeError, as without a scaler).

    scaler = GradScaler()
    with minitx.autocast("float16"):
        loss = F.cross_entropy(model(src, tgt_in), tgt_out)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)                       # optional: clipping needs the true gradients
    optim.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)                           # skipped when some gradient overflowed
    scaler.update()
"""
from __future__ import annotations

import numpy as np

from minitx import backend, sync
from minitx.autograd.inplace import mark_modified
from minitx.autograd.tensor import Tensor
from minitx.optim.clip import scale_all
from minitx.optim.optimizer import check_count, check_number, finite_flags

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"  # an optimizer's stage since the last update()
_KEYS = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")  # PyTorch's
_FLOAT32_MAX = float(np.finfo(np.float32).max)  # S is a float32


class GradScaler:
    """The dynamic loss scale (see the module docstring), with PyTorch's defaults and methods:
    scale, unscale_, step, update, get_scale, state_dict, load_state_dict, is_enabled, and the
    settings' get_/set_growth_factor, get_/set_backoff_factor, get_/set_growth_interval. ``enabled=False``
    makes every method pass through (scale returns the loss, step steps), for one code path
    with and without float16.

    Differences from PyTorch's: ``scale`` takes one loss tensor (not nested outputs); and the
    overflow check reads the gradients after unscaling (PyTorch's reads them before: the same
    but for a finite gradient that unscaling pushes past float32's range, which PyTorch lets
    through). As in PyTorch, a skipped step does not count in Adam's step count t (t lives on
    the device, where the skip is decided).
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True, *, device=None):
        """``device``: PyTorch's torch.amp.GradScaler names one ("cuda" or "cpu"); taken by name
        only, and it chooses nothing (S lives where the loss is). In the first place it is refused:
        that place is init_scale's, as in torch.cuda.amp.GradScaler, and reading the numbers after
        a device there one place on would silently mean other settings."""
        if isinstance(init_scale, str):
            raise TypeError(f"GradScaler: got {init_scale!r} for init_scale, the first argument; PyTorch's "
                            "torch.amp.GradScaler takes the device first, this one takes it by name only: "
                            f"GradScaler(device={init_scale!r}), or leave it out (the scale lives on the loss's "
                            "device)")
        if device is not None and device not in ("cpu", "cuda"):
            raise ValueError(f"GradScaler: unknown device {device!r}; expected 'cpu' or 'cuda' (or None)")
        check_number("GradScaler", "init_scale", init_scale, low=0, high=_FLOAT32_MAX, low_open=True)
        check_number("GradScaler", "growth_factor", growth_factor, low=1, low_open=True)
        check_number("GradScaler", "backoff_factor", backoff_factor, low=0, high=1, low_open=True, high_open=True)
        self._growth_interval = check_count("GradScaler", "growth_interval", growth_interval, low=1)
        if not isinstance(enabled, bool):
            raise TypeError(f"GradScaler: enabled must be True or False, got {enabled!r}")
        self._enabled = enabled
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._init_scale, self._init_growth_tracker = float(np.float32(init_scale)), 0
        self._scale = self._growth_tracker = None  # device scalars, made by the first scale()
        self._optimizers: dict = {}  # id(optimizer) -> {"stage": ..., "found_inf": device boolean}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, loss):
        """loss * S (a Tensor op: backward then gives gradients times S)."""
        if not isinstance(loss, Tensor):
            raise TypeError(f"GradScaler.scale: expected the loss Tensor, got {type(loss).__name__}")
        if not self._enabled:
            return loss
        if not backend.is_floating(loss.dtype):
            raise TypeError(f"GradScaler.scale: the loss has dtype {loss.dtype.name}; expected a float tensor")
        self._on_device(loss.device)
        return loss * Tensor(self._scale.copy())  # a copy: the product may keep it, and update() writes S

    def _on_device(self, device) -> None:
        """S and the tracker on ``device``: made at the first scale(), moved if the loss moved."""
        if self._scale is None:
            xp = backend.xp_for(device)
            self._scale = xp.full((), self._init_scale, dtype=np.float32)
            self._growth_tracker = xp.full((), self._init_growth_tracker, dtype=np.int32)
        elif backend.device_of(self._scale) != device:
            self._scale = backend.to_device(self._scale, device)
            self._growth_tracker = backend.to_device(self._growth_tracker, device)

    def _stage(self, optimizer, method) -> dict:
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{method}: no scale yet; call scaler.scale(loss).backward() first")
        return self._optimizers.setdefault(id(optimizer), {"stage": _READY})

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by S in place and note whether one overflowed. Call it
        before anything that needs the true gradients (clipping); step() calls it otherwise."""
        if not self._enabled:
            return
        state = self._stage(optimizer, "unscale_")
        if state["stage"] != _READY:
            raise RuntimeError("GradScaler.unscale_: " + ("already called on this optimizer since the last update()"
                                                          if state["stage"] == _UNSCALED else "called after step()"))
        grads = []
        for index, _, p in optimizer._indexed_params():
            if p.grad is None:
                continue
            if p.grad.dtype.name not in ("float32", "float64"):
                raise ValueError(f"GradScaler.unscale_: the gradient of parameter {index} is {p.grad.dtype.name}; "
                                 "the parameters (the master weights) must be float32 or float64, and autocast "
                                 "computes in float16 inside")
            grads.append(p.grad.data)
        xp = backend.get_array_module(self._scale)
        found_inf = xp.zeros((), dtype=bool)
        with np.errstate(all="ignore"):  # a scale backed off to 0 makes inf: the check below sees it
            inv_scale = (1.0 / self._scale.astype(np.float64)).astype(np.float32)
            if grads:
                mark_modified(*grads)  # scaled in place: a graph that saved one must not use it unawares
                scale_all(grads, inv_scale)
                found_inf = ~finite_flags(grads).all()
        state.update(stage=_UNSCALED, found_inf=found_inf)

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (unless done), then the optimizer's step, skipped where a gradient overflowed.
        As PyTorch's: extra arguments go to ``optimizer.step``, whose result is returned (None
        where the step is skipped), and a closure is refused while the scaler is enabled."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: a closure is not supported while the scaler is enabled (as in "
                               "PyTorch); compute the loss and call scaler.scale(loss).backward() before step")
        state = self._stage(optimizer, "step")
        if state["stage"] == _STEPPED:
            raise RuntimeError("GradScaler.step: already called on this optimizer since the last update()")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        found_inf = state["found_inf"]
        result = None
        if optimizer.supports_skip or sync.deferring_checks() is not None:  # (the latter raises for SGD)
            if args or kwargs:  # (the step decides on the device whether it runs: nothing to pass along)
                raise TypeError(f"GradScaler.step: {type(optimizer).__name__}'s step is skipped on the device where a "
                                f"gradient overflowed, and takes no arguments then; got {len(args) + len(kwargs)}")
            optimizer._step(skip=found_inf)
        elif not backend.to_host(found_inf):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Back S off when a gradient of this iteration overflowed, else count a clean step and
        grow S after ``growth_interval`` of them; or set S to ``new_scale``. Ends the iteration."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("GradScaler.update: no scale yet; call scaler.scale(loss).backward() first")
        xp = backend.get_array_module(self._scale)
        if new_scale is not None:
            check_number("GradScaler.update", "new_scale", new_scale, low=0, high=_FLOAT32_MAX, low_open=True)
            self._scale[...] = np.float32(new_scale)
        else:
            found = [s["found_inf"] for s in self._optimizers.values() if "found_inf" in s]
            if not found:
                raise RuntimeError("GradScaler.update: no optimizer was unscaled or stepped since the last update()")
            found_inf = xp.stack(found).any()
            successful = self._growth_tracker + 1
            grow = ~found_inf & (successful >= self._growth_interval)
            wide = self._scale.astype(np.float64)
            with np.errstate(over="ignore"):  # grown to inf in float32: where() keeps the scale then
                grown = (wide * self._growth_factor).astype(np.float32)
            backed_off = (wide * self._backoff_factor).astype(np.float32)
            self._scale[...] = xp.where(found_inf, backed_off, xp.where(grow & xp.isfinite(grown), grown, self._scale))
            self._growth_tracker[...] = xp.where(found_inf | grow, 0, successful)
        self._optimizers = {}

    def get_scale(self) -> float:
        """S as a Python float (a host read); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(backend.to_host(self._scale))

    # PyTorch's getters and setters of the schedule's settings; a setter checks its value as the
    # constructor does (PyTorch's take any), and the change applies from the next update()
    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor) -> None:
        check_number("GradScaler.set_growth_factor", "new_factor", new_factor, low=1, low_open=True)
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor) -> None:
        check_number("GradScaler.set_backoff_factor", "new_factor", new_factor, low=0, high=1, low_open=True,
                     high_open=True)
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval) -> None:
        """A tracker that already counts new_interval clean steps or more is kept at new_interval - 1:
        the next clean step grows S, as PyTorch's (whose tracker counts on past it), and state_dict()
        stays one that load_state_dict takes (its tracker below the interval)."""
        self._growth_interval = check_count("GradScaler.set_growth_interval", "new_interval", new_interval, low=1)
        self._init_growth_tracker = min(self._init_growth_tracker, self._growth_interval - 1)
        if self._growth_tracker is not None:  # (on the device: no host read)
            xp = backend.get_array_module(self._growth_tracker)
            self._growth_tracker[...] = xp.minimum(self._growth_tracker, self._growth_interval - 1)

    def state_dict(self) -> dict:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker
        (one host read); empty when disabled."""
        if not self._enabled:
            return {}
        tracker = self._init_growth_tracker if self._growth_tracker is None else int(backend.to_host(self._growth_tracker))
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what state_dict() returned (all five values, checked first: ValueError naming
        the one that does not fit, and nothing changed)."""
        if not self._enabled:
            return
        name = "GradScaler.load_state_dict"
        if not isinstance(state_dict, dict) or not state_dict:
            raise ValueError(f"{name}: expected the dict of a GradScaler's state_dict(), got {state_dict!r:.80} "
                             "(a disabled scaler saves an empty one)")
        if sorted(state_dict) != sorted(_KEYS):
            raise ValueError(f"{name}: the state has keys {sorted(state_dict)}; expected {sorted(_KEYS)}")
        check_number(name, "scale", state_dict["scale"], low=0, high=_FLOAT32_MAX, low_open=True)
        check_number(name, "growth_factor", state_dict["growth_factor"], low=1, low_open=True)
        check_number(name, "backoff_factor", state_dict["backoff_factor"], low=0, high=1, low_open=True,
                     high_open=True)
        interval = check_count(name, "growth_interval", state_dict["growth_interval"], low=1)
        tracker = check_count(name, "_growth_tracker", state_dict["_growth_tracker"])
        if tracker >= interval:
            raise ValueError(f"{name}: _growth_tracker {tracker} must count below growth_interval {interval}")
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = interval
        self._init_scale, self._init_growth_tracker = float(np.float32(state_dict["scale"])), tracker
        if self._scale is not None:
            self._scale[...] = self._init_scale
            self._growth_tracker[...] = tracker

    def __repr__(self) -> str:
        return (f"GradScaler(scale={self.get_scale()}, growth_factor={self._growth_factor}, "
                f"backoff_factor={self._backoff_factor}, growth_interval={self._growth_interval}, "
                f"enabled={self._enabled})")
