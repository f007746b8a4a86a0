"""A CUDA graph's contract, modelled on the CPU, for testing minitx.train.graphs without a GPU.

A real capture runs the step's Python and none of its kernels; each replay runs the kernels
alone, with the arguments of the capture. The model: ``capture`` runs the step once for real
(standing for the capture and the first replay together, which the driver always does back to
back on one batch), and each later ``launch`` reruns it the way a replay would run it:

* every dropout call takes the offset it took at capture (the Philox counter is set back to the
  capture's), and the kernels add the base the driver wrote into device memory;
* nothing the host would decide anew may change: a rerun that writes the optimizer's learning
  rate itself fails (a graph would have replayed the capture's value, or nothing), and so does a
  replay after any other group setting moved (beta1 under a cycling schedule, weight decay, ...):
  the kernels take those as arguments, so a graph would replay the capture's (the loss scaler's
  factors too, and the model's training flags: a capture in training mode replays its dropout);
  and so does one after the parameters' or the optimizer's state arrays were
  replaced (a graph would go on reading and updating the old ones);
* a rerun must launch the kernels the capture launched (kernel, grid, block, scalar arguments):
  a graph replays the capture's launches, whatever the host would decide now (a parameter
  frozen, a hook added or removed, the fused kernels switched off).
"""
import contextlib

import numpy as np

from minitx.kernels import cpu_harness

from minitx import random as mrandom


class RerunGraphs:
    def __init__(self, optimizer, scaler=None, model=None, device="cpu"):
        self.optimizer, self.scaler, self.model, self.device = optimizer, scaler, model, device
        self.launches = 0  # launches that reran the step (not the first, which the capture ran)

    def products(self):
        return contextlib.nullcontext()

    def copy(self, host):
        return host.copy()

    def copy_in(self, static, host):
        static[...] = host

    def capture(self, fn):
        first = mrandom.philox_offset(self.device)
        with _launches() as launched:
            outputs = fn()
        return {"fn": fn, "first": first, "outputs": outputs, "ran": False, "settings": self._settings(),
                "state": self._state_arrays(), "launches": launched}

    def _state_arrays(self) -> list:
        """The arrays the captured kernels read and update: the parameters and their state."""
        return [p.data for group in self.optimizer.param_groups for p in group["params"]] + [
            value for group in self.optimizer.param_groups for p in group["params"]
            for value in self.optimizer.state.get(p, {}).values() if hasattr(value, "shape")]

    def _settings(self) -> list:
        """What the captured kernels take as numbers: every group setting but the rate, the
        scaler's factors and interval; and what the capture decided by the model's training
        flags (whether dropout draws a mask)."""
        settings = [{key: value for key, value in group.items() if key not in ("params", "lr")}
                    for group in self.optimizer.param_groups]
        if self.scaler is not None:
            settings.append((self.scaler._growth_factor, self.scaler._backoff_factor, self.scaler._growth_interval))
        if self.model is not None:
            settings.append([module.training for module in self.model.modules()])
        return settings

    def held_bytes(self, graphs) -> int:
        """A rerun keeps no memory of its own (a CUDA graph's pool holds its capture's arrays)."""
        return 0

    def launch(self, graph):
        if not graph["ran"]:  # the capture's run was this replay's
            graph["ran"] = True
            return graph["outputs"]
        if any(a is not b for a, b in zip(self._state_arrays(), graph["state"], strict=True)):
            raise AssertionError("the parameters' or the optimizer's state arrays were replaced since the capture; "
                                 "a CUDA graph would go on reading and updating the old ones")
        if self._settings() != graph["settings"]:
            raise AssertionError(f"the optimizer's or the scaler's settings moved since the capture ({graph['settings']} -> "
                                 f"{self._settings()}); a CUDA graph replays the capture's")
        after = mrandom.philox_offset(self.device)
        written = [entry[1] for entry in self.optimizer._lr_arrays.values()]
        mrandom.set_philox_offset(self.device, graph["first"])
        try:
            with _launches() as launched:
                outputs = graph["fn"]()
        finally:
            mrandom.set_philox_offset(self.device, after)
        if launched != graph["launches"]:
            raise AssertionError(f"the step launched other kernels than its capture ({len(graph['launches'])} "
                                 f"launches then, {len(launched)} now) since the capture; a CUDA graph replays "
                                 "the capture's")
        if [entry[1] for entry in self.optimizer._lr_arrays.values()] != written:
            raise AssertionError("the step wrote its learning rate inside a replay; a CUDA graph would have "
                                 "replayed the capture's rate (write_lr must come before the launch)")
        self.launches += 1
        return outputs


@contextlib.contextmanager
def _launches():
    """The kernel launches made inside: (kernel, dtype, grid, block, scalar arguments by value)."""
    launched, launch = [], cpu_harness.CpuBackend.launch

    def recording(self, filename, kernel, dtype, grid, block, args, **kwargs):
        launched.append((kernel, np.dtype(dtype).str, tuple(grid), tuple(block),
                         tuple(a.item() if isinstance(a, np.generic) else a is None for a in args)))
        return launch(self, filename, kernel, dtype, grid, block, args, **kwargs)

    cpu_harness.CpuBackend.launch = recording
    try:
        yield launched
    finally:
        cpu_harness.CpuBackend.launch = launch
