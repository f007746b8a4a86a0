"""A training step captured once per batch shape as a CUDA graph, and replayed.

A sync-free step (``train_step`` with ``checks``, docs/gpu-step.md) is the same sequence of kernel
launches every time its batch has the same shape. A CUDA graph records that sequence once (the
*capture*, on a stream in capture mode: Python runs the step, the GPU runs nothing) and replays it
with one launch from Python, so no interpreter sits between the kernels. What a replay runs is
what the capture recorded: the launches with their arguments, pointers and scalars, as they
were. So whatever a step reads that changes from one step to the next must be in device memory,
written before each replay:

=================  ====================================================================
the batch          copied into the shape's static input arrays (the capture read those)
the learning rate  ``optimizer.write_lr()``; written before the capture too, so the
                   step's own write, done only when the rate changed, records nothing
dropout masks      each dropout call's offset is the capture's; the kernels add a base
                   read from device memory (``kernels.philox_memory``), set to how far the
                   run's offsets have moved on since the capture, so a replay draws the
                   masks the eager step in its place would have drawn
Adam's t, checks   on the device already, advanced by the step itself (in the graph)
=================  ====================================================================

``StepGraphs(...)(batch)`` is called like ``train_step(..., checks=checks)`` and gives the same
bits. The first batch of a shape runs eagerly: it compiles the kernels and fills every cache (work
tables, index arrays, optimizer state) that a capture must find full. The second is captured,
then replayed; every later one is replayed. The graphs start over (warm-ups, captures) when the
run's Philox seed changes or its offsets are set back, and when anything a graph took as it was
at its capture changed between two steps (``StepGraphs.given``): an array it reads or writes was
replaced (a parameter's ``p.data = ...``, the optimizer's state after its ``load_state_dict``),
where the old graphs would go on with the old arrays; or a number its kernels take as an
argument moved (a group setting other than the rate, the loss scaler's factors after its
``load_state_dict``), or a module's training flag, which a replay would keep as captured. A recorder does the capturing: ``CudaGraphs`` on a
GPU; tests/train/_rerun_graphs.py models one on the CPU (it reruns the step as a replay would
run it), which is how this module is tested without a GPU.
"""
from __future__ import annotations

import dataclasses
import operator
import warnings

import numpy as np

from minitx import blas
from minitx import random as mrandom
from minitx.autograd.engine import HookHandle
from minitx.kernels import philox_memory
from minitx.kernels._runtime import backend_for
from minitx.train.loop import train_step


@dataclasses.dataclass
class Captured:
    """One shape's graph: its static batch, the recorder's graph, the Philox seed it was captured
    under and the device memory its dropout kernels read that seed and base from, the offset of
    its first dropout call at capture and how many calls it makes."""
    static: object
    graph: object
    seed: int
    philox: object
    first_offset: int
    calls: int


def array_fields(batch) -> list:
    """The names of the batch's NumPy array fields (the ones a replay copies)."""
    if not dataclasses.is_dataclass(batch) or isinstance(batch, type):
        raise TypeError(f"StepGraphs: a batch must be a dataclass holding its arrays (as minitx.data.Batch), "
                        f"got {type(batch).__name__}")
    return [f.name for f in dataclasses.fields(batch) if isinstance(getattr(batch, f.name), np.ndarray)]


def shape_key(batch) -> tuple:
    """What makes two batches one graph: the type, and each array field's shape and dtype."""
    return (type(batch),) + tuple((name, getattr(batch, name).shape, getattr(batch, name).dtype.str)
                                  for name in array_fields(batch))


class StepGraphs:
    """train_step(model, batch, loss_fn, optimizer, schedule, clip_norm, checks, scaler), one
    graph per batch shape (see the module docstring). ``weight_of(batch)`` is the weight
    ``loss_fn`` returns for a batch (a replay runs no Python: it cannot ask loss_fn). Only the batch's
    array fields are copied in before a replay: its other fields (a token count as an int) are the
    capture's, so loss_fn may use them for the weight alone; a number the loss is computed with
    must be an array field (a 0-d array)."""

    def __init__(self, model, loss_fn, optimizer, checks, weight_of, schedule=None, clip_norm: float = 0.0,
                 scaler=None, recorder=None):
        if checks is None:
            raise ValueError("StepGraphs: a captured step must be sync-free: give it a sync.DeferredChecks")
        if not optimizer.supports_skip:
            raise TypeError(f"StepGraphs: {type(optimizer).__name__} cannot skip a step on the device; "
                            "a captured step needs Adam or AdamW")
        # a replay reads the learning rate from device memory, every other setting as captured
        moved = [key for key in (schedule._moves() if hasattr(schedule, "_moves") else ()) if key != "lr"]
        if moved:
            raise ValueError(f"StepGraphs: {type(schedule).__name__} moves the optimizer's {', '.join(moved)} at "
                             "every step, but a captured step replays its capture's (kernel arguments; only the "
                             "learning rate is read from device memory); build the schedule with "
                             "cycle_momentum=False, or run eager steps (cuda_graphs off)")
        self.model, self.loss_fn, self.optimizer, self.checks = model, loss_fn, optimizer, checks
        self.weight_of, self.schedule, self.clip_norm, self.scaler = weight_of, schedule, clip_norm, scaler
        self.recorder = recorder if recorder is not None else CudaGraphs()
        self.device = next(iter(model.parameters())).device
        self.graphs: dict = {}  # shape_key -> None (warmed up) or Captured
        # the model's tensors that the optimizer does not hold (buffers, frozen parameters: read too)
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        self.tensors = [t for t in {id(t): t for t in (*model.parameters(), *model.buffers())}.values()
                        if id(t) not in held]
        self.modules = list(model.modules())  # (their training flags: dropout runs or not, decided at capture)
        self.parameters = list({id(p): p for p in model.parameters()}.values())  # (requires_grad, hooks)
        self.starts_in_a_row = 0  # steps in a row that found given() changed (none replayed between)
        self.taken = None  # given() as the last step left it
        self.captures = 0  # graphs captured so far, again after a start-over too

    def __call__(self, batch):
        """One step on ``batch``: (loss as a device scalar, weight)."""
        key = shape_key(batch)
        changed = not self._unchanged()
        self.starts_in_a_row = self.starts_in_a_row + 1 if changed else 0
        if self.starts_in_a_row == 3:
            warnings.warn("StepGraphs: what the graphs take as given changed before each of the last 3 steps "
                          "(a setting the schedule moves, say), so each started over and ran eagerly: the "
                          "graphs are doing nothing", RuntimeWarning, stacklevel=2)
        if changed or any(self._outdated(captured) for captured in self.graphs.values() if captured is not None):
            # reseeded, random state restored, arrays replaced or settings moved: start over, warm-ups
            # too (a load may leave parameters without state, which a capture would make inside the graph)
            self.graphs.clear()
        if key in self.graphs and self.graphs[key] is not None:
            loss = self._replay(self.graphs[key], batch)  # (a replay runs no Python that changes given())
        else:
            before = self.given()  # (on a warm-up or capture only)
            if key not in self.graphs:
                self.graphs[key] = None
                loss, _ = self._step(batch)
            else:
                self.graphs[key] = self._capture(batch)
                loss = self._replay(self.graphs[key], batch)
            self.taken = self.given()  # what the warm-up or capture left (before the schedule moves anything)
            if not _same(self.taken[:2], before[:2]):
                self.graphs = {key: self.graphs[key]}  # the step itself (its loss_fn) changed it: the others are stale
        if self.schedule is not None:
            self.schedule.step()
        return loss, self.weight_of(batch)

    def _step(self, batch):
        with self.recorder.products():
            return train_step(self.model, batch, self.loss_fn, self.optimizer, None, self.clip_norm, self.checks,
                              self.scaler)

    def held(self) -> tuple:
        """(shapes captured, bytes their graphs' memory holds): the price of the graphs, each
        replaying into the memory its capture allocated."""
        captured = [c for c in self.graphs.values() if c is not None]
        return len(captured), self.recorder.held_bytes([c.graph for c in captured])

    def given(self) -> tuple:
        """What the graphs take as their capture left it: (the arrays they read and write, the
        numbers the capture decided by, the count of hooks). The arrays: the model's parameters
        and buffers, the optimizer's parameters and state, the loss scaler's scale and growth
        count (each compared by identity: values written into them are what a replay reads). The
        numbers: each group's parameters (by identity) and settings but the rate (kernel
        arguments; a replay reads the rate from device memory), each module's training flag (a
        replay draws the dropout masks its capture drew, or none), each parameter's
        requires_grad (a frozen one gets no gradient and no update), the scaler's factors and
        interval. The hooks put on modules and leaf tensors so far (HookHandle.changes): a
        hook's Python runs at capture only."""
        optimizer, scaler = self.optimizer, self.scaler
        groups = optimizer.param_groups
        arrays = [t.data for t in self.tensors] + [p.data for group in groups for p in group["params"]]
        arrays += [value for group in groups for p in group["params"] for value in optimizer.state.get(p, {}).values()
                   if hasattr(value, "shape")]
        numbers = [([id(p) for p in group["params"]], {key: value for key, value in group.items()
                                                       if key not in ("params", "lr")}) for group in groups]
        numbers.append([module.training for module in self.modules])
        numbers.append([p.requires_grad for p in self.parameters])
        if scaler is not None:
            arrays += [scaler._scale, scaler._growth_tracker]
            numbers.append((scaler._growth_factor, scaler._backoff_factor, scaler._growth_interval))
        return arrays, numbers, HookHandle.changes  # (hooks on a step's own tensors move the count in the step)

    def _unchanged(self) -> bool:
        """Whether given() is as the last step left it."""
        return self.taken is None or _same(self.given(), self.taken)

    def _outdated(self, captured: Captured) -> bool:
        """Whether the run's Philox stream has left the graph behind: another seed (the graph's
        kernels read the old one's memory), or offsets set back before its capture's."""
        return (captured.seed != mrandom.philox_seed()
                or mrandom.philox_offset(self.device) < captured.first_offset)

    def _capture(self, batch) -> Captured:
        names = array_fields(batch)  # the host batch's: the static copies are device arrays
        static = dataclasses.replace(batch, **{name: self.recorder.copy(getattr(batch, name)) for name in names})
        seed = mrandom.philox_seed()
        philox = philox_memory(backend_for(getattr(static, names[0])), seed)
        self.optimizer.write_lr()
        first = mrandom.philox_offset(self.device)
        graph = self.recorder.capture(lambda: self._step(static)[0])
        calls = mrandom.philox_offset(self.device) - first
        mrandom.set_philox_offset(self.device, first)  # the capture ran nothing: its offsets are the first replay's
        self.captures += 1
        return Captured(static, graph, seed, philox, first, calls)

    def _replay(self, captured: Captured, batch):
        for name in array_fields(batch):
            self.recorder.copy_in(getattr(captured.static, name), getattr(batch, name))
        self.optimizer.write_lr()
        first = mrandom.philox_offset(self.device)
        mrandom.set_philox_offset(self.device, first + captured.calls)
        if not captured.calls:
            return self.recorder.launch(captured.graph)
        captured.philox[1:] = first - captured.first_offset  # every call's offset moves on by this much
        try:
            return self.recorder.launch(captured.graph)
        finally:
            captured.philox[1:] = 0  # eager calls draw from their own offsets


def _same(given, taken) -> bool:
    """Whether two given()s are the same: each array the same object, each number equal (a group
    entry that is an array, replaced by another, counts as changed, not as an ambiguous truth)."""
    (arrays, numbers, *hooks), (then_arrays, then_numbers, *then_hooks) = given, taken
    if hooks != then_hooks or len(arrays) != len(then_arrays) or not all(map(operator.is_, arrays, then_arrays)):
        return False
    try:
        return bool(numbers == then_numbers)
    except (ValueError, TypeError):
        return False


class CudaGraphs:
    """The recorder on a GPU: cupy.cuda.Graph, captured on a stream of its own and replayed on the
    current stream, after the work queued there. Matrix products go through minitx.blas (CuPy's
    refuse capture), in the eager steps too, so that both run the same products.

    Memory: a replay writes where its capture allocated, so what a capture allocates stays in
    its memory pool as long as the graph lives. The graphs of one recorder share one pool
    (``shared_pool``): a capture may reuse what an earlier capture freed (that graph's
    temporaries, its gradients once the next step dropped them), as one capture reuses its
    own. That is safe because the graphs never run at once, every replay writes such memory
    before it reads it (the kernels' pointer tables too: every use copies them in again), and
    what a graph leaves for later (its outputs) stays alive, so no capture takes it. But a later
    capture may have put its temporaries where an earlier graph's outputs were written, so the
    caller must read a replay's outputs before the next replay of any graph (the Trainer adds
    the loss into its device sum at once). The pool then holds about the largest graph's memory
    instead of the sum of all (one per batch shape).
    """

    def __init__(self, shared_pool: bool = True):
        import cupy

        if not blas.available():
            raise ImportError("CUDA graphs need nvmath-python (pip install nvmath-python, or minitx[cuda13]): "
                              "CuPy's own matrix products refuse to be captured")
        self.cp = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.pool = cupy.cuda.MemoryPool() if shared_pool else None

    def products(self):
        return blas.use_cublas(True)

    def copy(self, host):
        return self.cp.asarray(host)

    def copy_in(self, static, host):
        static.set(host, stream=self.cp.cuda.get_current_stream())  # in stream order: no wait for the GPU

    def capture(self, fn):
        from minitx.kernels._runtime import cupy_backend

        cp = self.cp
        pool = self.pool or cp.cuda.MemoryPool()
        before = _device_caches()  # a cache that starts over during the capture frees nothing the graph reads
        cp.cuda.get_current_stream().synchronize()  # the eager steps before it have finished
        with self.stream, cp.cuda.using_allocator(pool.malloc):
            blas.bind_to_current_stream()
            cupy_backend().reserve_pinned()  # the capture's pointer tables take pinned memory allocated now
            self.stream.begin_capture()
            try:
                outputs = fn()
            finally:
                graph = self.stream.end_capture()
        # what the graph reads and nothing else may hold: kept with it, freed with it
        return graph, outputs, [pool, *before, *_device_caches()]

    def held_bytes(self, graphs) -> int:
        """The bytes the graphs' memory pools hold (their captures' allocations, kept): each
        pool counted once."""
        pools = {id(recorded[2][0]): recorded[2][0] for recorded in graphs}
        return sum(int(pool.total_bytes()) for pool in pools.values())

    def launch(self, recorded):
        graph, outputs, _ = recorded
        graph.launch(stream=self.cp.cuda.get_current_stream())
        return outputs


def _device_caches() -> list:
    """What the kernels' launchers keep on the device and a graph may have baked in (pointer and
    work tables, layouts, Philox words): each cache starts over when it grows past its bound,
    which must not free an array a graph reads, so a graph keeps what was there at its capture."""
    from minitx.kernels import _launch
    from minitx.kernels._runtime import cupy_backend

    return [dict(cupy_backend().pointer_tables), dict(_launch.KEPT)]
