"""Fused kernels vs the unfused CuPy reference vs PyTorch, op by op, on one GPU.

    PYTHONPATH=$PWD python3 benchmarks/bench_kernels.py [--out results.json]

Each op runs three ways on the same inputs: minitx with its fused kernel, minitx on the xp
reference path (``kernels.use_fused(False)``: the same op as plain CuPy array code), and
PyTorch's equivalent. Attention also runs as ``two-pass`` (its backward always as the dk/dv and
the dq kernels, ``kernels.use_one_pass_backward(False)``; ``fused`` takes the one-pass kernel
where one tile holds every key) and, where its dtype allows (bfloat16, or float32 with
``--tf32``), as ``mma``: forward and backward on the tensor cores
(``kernels.use_tensor_core_attention``; ``fused`` is then the CUDA-core kernels alone). Shapes
are those of a Multi30k batch (about 6k tokens, sentences of ~32 tokens, 8 heads, a 10k
vocabulary) at d_model 256 and 512.

Timing: CUDA events around each call, median of ``--repeat`` calls after ``--warmup``.
forward = the op's forward (graph recorded, as in training); backward = (forward + backward)
minus forward. Bandwidth: the bytes an op must at least read and write (inputs once, outputs
once) divided by the time, also as a percent of the device-to-device copy bandwidth measured
first (2 x bytes / time of a 256 MiB copy). Ratios > 1 mean the fused kernel is faster.
With ``--kernel-time`` each kernel's own GPU time is also set against a copy of the same bytes
(half read, half written), timed the same way: a kernel moving a few MB cannot reach the large
copy's bandwidth, and neither can a copy of its size (``%same``: that copy's time over the
kernel's, 100 = as fast as moving its bytes can be at that size), and the JSON lists every kernel
a call launched, with its time (``launches``: what a backward's time is made of).
Prints a table and writes JSON (default benchmarks/results/kernels-<gpu>-<date>.json).

``--device cpu`` is a smoke mode (tiny shapes, the kernels through the CPU emulation,
wall-clock timing): it checks this script, its numbers mean nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from anywhere, no install

import numpy as np  # noqa: E402

SIZES = {  # a Multi30k batch; --device cpu shrinks it
    "gpu": dict(tokens=6144, length=32, heads=8, vocab=10000, d_models=(256, 512)),
    "cpu": dict(tokens=24, length=4, heads=2, vocab=50, d_models=(8,)),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--out", help="JSON path (default benchmarks/results/kernels-<gpu>-<date>.json)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--dtype", choices=("float32", "float64", "bfloat16"), default="float32",
                        help="the arrays' dtype (bfloat16: the kernels keep it and compute in float32; the "
                             "reference path computes in float32; PyTorch in its bfloat16 ops; no Adam row)")
    parser.add_argument("--repeat", type=int, default=30, help="timed calls per measurement (median)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--tokens", type=int, help="tokens per batch (default 6144)")
    parser.add_argument("--only", nargs="*", default=None, help="run only benchmarks whose name contains one of these")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    parser.add_argument("--dry-run", action="store_true", help="list the benchmarks and byte counts, run nothing")
    parser.add_argument("--tf32", action="store_true",
                        help="float32 products on TF32 tensor cores (backend.allow_tf32; PyTorch's allow_tf32), "
                             "and the attention rows' mma path")
    parser.add_argument("--kernel-time", action="store_true",
                        help="also time the kernels alone (CUPTI, through PyTorch's profiler): the GPU time of the "
                             "launches a call makes, without the host's launch overhead, and the bandwidth from it")
    return parser.parse_args(argv)


# ---------------------------------------------------------------- timing


class Timer:
    """Median milliseconds of fn() over ``repeat`` samples: CUDA events for CuPy or PyTorch work,
    perf_counter on the CPU.

    A sample times ``block`` calls back to back between one pair of events and takes their mean.
    Where fn never waits for the device, a loop's next call is issued while the device still
    works on this one; a sample of one call, ended by a wait, charges fn the host's time to issue
    it as well, which a loop hides. So a training step, whose loop reads nothing back, is timed in
    blocks of steps (bench_train_step.py --block); a kernel, alone, one call a sample."""

    def __init__(self, kind, module=None):
        self.kind, self.module = kind, module

    def _once(self, fn, block):
        if self.kind in ("cupy", "torch"):
            cuda = self.module.cuda
            start, end = ((cuda.Event(), cuda.Event()) if self.kind == "cupy" else
                          (cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)))
            start.record()
            for _ in range(block):
                fn()
            end.record()
            end.synchronize()
            ms = cuda.get_elapsed_time(start, end) if self.kind == "cupy" else start.elapsed_time(end)
            return ms / block
        t0 = time.perf_counter()
        for _ in range(block):
            fn()
        return (time.perf_counter() - t0) * 1e3 / block

    def __call__(self, fn, warmup, repeat, block=1):
        for _ in range(warmup):
            fn()
        return statistics.median(self._once(fn, block) for _ in range(repeat))


def kernel_ms(fn, warmup, repeat, sync, launches=None):
    """GPU milliseconds of the kernels one fn() launches (summed, CUPTI through PyTorch's
    profiler, profile_train_step.kernel_view): the device's time, where the events around a call
    also count the host issuing it. None when the profiler is not there or fails. ``launches``,
    a list, receives [kernel name, ms, launches] per kernel of one call."""
    try:
        from profile_train_step import kernel_view

        for _ in range(warmup):
            fn()
        rows, _, _ = kernel_view(fn, repeat, sync)
    except Exception as error:  # a column left out, not the benchmark
        print(f"kernel time left out: {type(error).__name__}: {error}", file=sys.stderr)
        return None
    if launches is not None:
        launches.extend([name, ms, count] for name, ms, count in rows)
    return sum(ms for _, ms, _ in rows)


_SAME_SIZE_COPY_MS: dict[int, float | None] = {}


def same_size_copy_ms(cp, nbytes, warmup, repeat):
    """Kernel-alone milliseconds (kernel_ms) of a device-to-device copy of nbytes / 2 bytes, which
    reads and writes nbytes in all; measured once per size."""
    if nbytes not in _SAME_SIZE_COPY_MS:
        src = cp.ones(max(nbytes // 2, 1), dtype=cp.uint8)
        dst = cp.empty_like(src)
        _SAME_SIZE_COPY_MS[nbytes] = kernel_ms(lambda: dst.__setitem__(Ellipsis, src), warmup, repeat,
                                               cp.cuda.Device().synchronize)
    return _SAME_SIZE_COPY_MS[nbytes]


def copy_bandwidth(cp, repeat):
    """Device-to-device copy bandwidth in GB/s: 2 x bytes (read + write) / time."""
    src = cp.ones(64 * 2**20, dtype=cp.float32)  # 256 MiB
    dst = cp.empty_like(src)
    ms = Timer("cupy", cp)(lambda: dst.__setitem__(Ellipsis, src), 3, repeat)
    return 2 * src.nbytes / (ms * 1e-3) / 1e9


# ---------------------------------------------------------------- the three ways to run an op


def step_closures(op, inputs, dy):
    """(forward, forward + backward) closures of an op on leaf tensors (minitx or torch)."""
    def forward():
        op(*inputs)

    def forward_backward():
        for t in inputs:
            t.grad = None
        op(*inputs).backward(dy)
    return forward, forward_backward


def minitx_fns(op, arrays, device):
    import minitx

    inputs = [minitx.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = op(*inputs)
    dy = minitx.randn(*out.shape, device=device, dtype=out.dtype).data if out.ndim else None
    return step_closures(op, inputs, dy)


def torch_tensor(torch, array, device):
    """A leaf torch tensor with the array's values and dtype (bfloat16 via float32: torch reads no
    ml_dtypes array)."""
    if array.dtype.name == "bfloat16":
        return torch.tensor(array.astype(np.float32), device=device).to(torch.bfloat16).requires_grad_()
    return torch.tensor(array, device=device, requires_grad=True)


def torch_fns(torch, op, arrays, device):
    inputs = [torch_tensor(torch, a, device) for a in arrays]
    out = op(*inputs)
    return step_closures(op, inputs, torch.randn_like(out) if out.ndim else None)


# ---------------------------------------------------------------- the benchmarks


def benchmarks(s, dtype):
    """[(name, shape text, bytes forward, bytes backward, make arrays, minitx op, torch op)].

    The ops take tensors (minitx or torch); the other arguments (targets, masks, ids) are made
    per framework by ``consts`` so each op sees arrays on its own device.
    """
    import minitx.functional as F

    item = dtype.itemsize
    rng = np.random.default_rng(0)
    tokens, length, heads, vocab = s["tokens"], s["length"], s["heads"], s["vocab"]
    batch = tokens // length

    def randn(*shape):
        return rng.standard_normal(shape).astype(dtype)

    keep = rng.random((batch, length)) < 0.9
    keep[:, 0] = True
    targets = rng.integers(1, vocab, tokens)
    targets[rng.random(tokens) < 0.1] = 0  # padding, ignored
    out = []
    rows, cols = batch * heads * length, length
    out.append(("softmax scores", f"[{rows}, {cols}]", 2 * rows * cols * item, 3 * rows * cols * item,
                lambda: [randn(rows, cols)], lambda c: (lambda x: F.softmax(x)), lambda c: (lambda x: c.torch.softmax(x, -1))))
    out.append(("cross_entropy ls=0.1", f"[{tokens}, {vocab}]", tokens * vocab * item, 2 * tokens * vocab * item,
                lambda: [randn(tokens, vocab)],
                lambda c: (lambda x: F.cross_entropy(x, c.const(targets), ignore_index=0, label_smoothing=0.1)),
                lambda c: (lambda x: c.tF.cross_entropy(x, c.const(targets), ignore_index=0, label_smoothing=0.1))))
    for d in s["d_models"]:
        n, d_ff, dh = tokens * d, (2 if d <= 256 else 4) * d, d // heads
        out.append((f"layer_norm d={d}", f"[{tokens}, {d}]", 2 * n * item, 3 * n * item,
                    lambda d=d: [randn(tokens, d), randn(d), randn(d)], lambda c: (lambda x, w, b: F.layer_norm(x, w, b)),
                    lambda c, d=d: (lambda x, w, b: c.tF.layer_norm(x, (d,), w, b))))
        qkv = batch * heads * length * dh
        for causal in (False, True):
            kind = "causal" if causal else "key-padding"
            out.append((f"attention {kind} d={d}", f"[{batch}, {heads}, {length}, {dh}]",
                        (4 * qkv + batch * length) * item, 8 * qkv * item,
                        lambda dh=dh: [randn(batch, heads, length, dh) for _ in range(3)],
                        lambda c, causal=causal: _minitx_attention(F, c, keep, causal),
                        lambda c, causal=causal: _torch_attention(c, keep, causal)))
        out.append((f"dropout_add p=0.1 d={d}", f"[{tokens}, {d}]", 3 * n * item, 2 * n * item,
                    lambda d=d: [randn(tokens, d), randn(tokens, d)],
                    lambda c: (lambda x, r: F.dropout_add(x, r, 0.1)),
                    lambda c: (lambda x, r: r + c.tF.dropout(x, 0.1))))
        out.append((f"bias+relu+dropout d_ff={d_ff}", f"[{tokens}, {d_ff}]", 2 * tokens * d_ff * item,
                    4 * tokens * d_ff * item, lambda d_ff=d_ff: [randn(tokens, d_ff), randn(d_ff)],
                    lambda c: (lambda x, b: F.bias_act_dropout(x, b, "relu", 0.1)),
                    lambda c: (lambda x, b: c.tF.dropout(c.tF.relu(x + b), 0.1))))
        ids = rng.integers(0, vocab, (batch, length))
        out.append((f"embedding d={d}", f"{vocab} x {d}, {tokens} ids", 2 * tokens * d * item + 8 * tokens,
                    (vocab * d + 3 * tokens * d) * item + 8 * tokens, lambda d=d: [randn(vocab, d)],
                    lambda c, ids=ids: (lambda w: F.embedding(c.const(ids), w)),
                    lambda c, ids=ids: (lambda w: c.tF.embedding(c.const(ids), w))))
    return out


def _minitx_attention(F, c, keep, causal):
    mask = c.const(keep[:, None, None, :])
    return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=None if causal else mask, causal=causal)


def _torch_attention(c, keep, causal):
    mask = c.const(keep[:, None, None, :])
    if causal:
        return lambda q, k, v: c.tF.scaled_dot_product_attention(q, k, v, is_causal=True)
    return lambda q, k, v: c.tF.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class Frame:
    """One framework on one device: ``const`` puts a NumPy array there (no gradient)."""

    def __init__(self, name, device, torch=None):
        self.name, self.device, self.torch = name, device, torch
        self.tF = torch.nn.functional if torch is not None else None

    def const(self, array):
        if self.torch is not None:
            return self.torch.as_tensor(array, device=self.device)
        import minitx

        return minitx.tensor(array, device=self.device)


def adam_benchmark(s, dtype, presets=("seed004-small", "base")):
    """Parameter shapes of the Transformer presets (vocabulary s['vocab']) for the Adam step."""
    from minitx.nn.transformer import PRESETS

    out = []
    for name in presets:
        cfg = PRESETS[name]
        d, d_ff, v = cfg["d_model"], cfg["d_ff"], s["vocab"]
        layer = [(3 * d, d), (3 * d,), (d, d), (d,), (d_ff, d), (d_ff,), (d, d_ff), (d,)] + [(d,)] * 4
        cross = [(d, d), (d,), (2 * d, d), (2 * d,), (d, d), (d,), (d,), (d,)]
        shapes = [(v, d), (v, d), (v, d), (v,)] + layer * cfg["num_encoder_layers"] \
            + (layer + cross) * cfg["num_decoder_layers"]
        if cfg["positional"] == "learned":
            shapes += [(cfg["max_len"], d)] * 2
        if s["d_models"] == (8,):  # CPU smoke: keep the count, shrink the tensors
            shapes = [tuple(min(n, 8) for n in shape) for shape in shapes]
        out.append((f"adam step {name}", shapes))
    return out


def run_adam(frame, shapes, dtype, timer, args):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    if frame.torch is not None:
        torch = frame.torch
        params = [torch.tensor(a, device=frame.device, requires_grad=True) for a in arrays]
        for p in params:
            p.grad = torch.randn_like(p)
        try:
            opt = torch.optim.Adam(params, lr=1e-4, fused=frame.device != "cpu")
        except (TypeError, RuntimeError):
            opt = torch.optim.Adam(params, lr=1e-4, foreach=True)
        return timer(opt.step, args.warmup, args.repeat)
    import minitx
    from minitx import optim

    params = [minitx.tensor(a, device=frame.device, requires_grad=True) for a in arrays]
    for p in params:
        p.grad = minitx.randn(*p.shape, device=frame.device, dtype=dtype)
    opt = optim.Adam(params, lr=1e-4, check_finite=False)  # the update alone, as torch does it
    return timer(opt.step, args.warmup, args.repeat)


# ---------------------------------------------------------------- main


def main(argv=None):
    args = parse_args(argv)
    from minitx import backend

    dtype = backend.resolve_dtype(args.dtype)  # ml_dtypes' type for bfloat16
    sizes = dict(SIZES["gpu" if args.device == "cuda" else "cpu"])
    if args.tokens:
        sizes["tokens"] = args.tokens
    item = dtype.itemsize
    adams = adam_benchmark(sizes, dtype) if dtype.name != "bfloat16" else []  # master weights are float32
    if args.dry_run:
        for name, shape, bf, bb, *_ in benchmarks(sizes, dtype):
            print(f"{name:32s} {shape:28s} forward {bf / 1e6:9.2f} MB  backward {bb / 1e6:9.2f} MB")
        for name, shapes in adams:
            n = sum(int(np.prod(s)) for s in shapes)
            print(f"{name:32s} {len(shapes)} tensors, {n:,} values  {7 * n * item / 1e6:9.2f} MB")
        return 0

    from minitx import kernels

    frames, timers, cp = [], {}, None
    if args.device == "cuda":
        import cupy as cp

        gpu = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
        copy_gbps = copy_bandwidth(cp, args.repeat)
        timers["minitx"] = Timer("cupy", cp)
    else:
        gpu, copy_gbps = "cpu-emulation", float("nan")
        timers["minitx"] = Timer("cpu")
    backend.allow_tf32(args.tf32)
    fused_ctx = kernels.emulate_on_cpu if args.device == "cpu" else kernels.use_fused

    def fused_path(tensor_cores, one_pass=True):
        stack = contextlib.ExitStack()
        stack.enter_context(fused_ctx(True))
        stack.enter_context(kernels.use_tensor_core_attention(tensor_cores))
        stack.enter_context(kernels.use_one_pass_backward(one_pass))
        return stack

    paths = [("fused", lambda: fused_path(False)), ("reference", lambda: kernels.use_fused(False))]
    sample = cp.empty(0) if cp is not None else np.empty(0)
    mma_path = ("mma", lambda: fused_path(True)) \
        if kernels.tensor_core_attention_runs(kernels._runtime.backend_for(sample), dtype) else None
    two_pass_path = ("two-pass", lambda: fused_path(False, one_pass=False))  # attention's dk/dv and dq kernels
    minitx_frame = Frame("minitx", args.device)
    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("PyTorch not importable: its column is left out", file=sys.stderr)
        else:
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = args.tf32
            frames.append(Frame("torch", args.device, torch))
            timers["torch"] = Timer("torch" if args.device == "cuda" else "cpu", torch)

    results = []

    def record(name, shape, path, fwd, bwd, bf, bb, kernels_ms=None, launches=None):
        def gbps(nbytes, ms):
            return nbytes / (ms * 1e-3) / 1e9 if ms and ms > 0 else float("nan")
        row = dict(name=name, shape=shape, path=path, fwd_ms=fwd, bwd_ms=bwd, bytes_fwd=bf, bytes_bwd=bb,
                   fwd_GBps=gbps(bf, fwd), bwd_GBps=gbps(bb, bwd) if bwd is not None else None)
        row["fwd_pct_copy"] = 100 * row["fwd_GBps"] / copy_gbps
        row["bwd_pct_copy"] = 100 * row["bwd_GBps"] / copy_gbps if bwd is not None else None
        if kernels_ms is not None:  # (forward kernels, backward kernels): the bandwidth of the kernels alone
            for part, ms, nbytes in (("fwd", kernels_ms[0], bf), ("bwd", kernels_ms[1], bb)):
                row[f"{part}_kernel_ms"] = ms
                row[f"{part}_kernel_pct_copy"] = 100 * gbps(nbytes, ms) / copy_gbps if ms is not None else None
                copy_ms = same_size_copy_ms(cp, nbytes, args.warmup, args.repeat) if ms and nbytes else None
                row[f"{part}_kernel_pct_same_copy"] = 100 * copy_ms / ms if copy_ms else None
            row["launches"] = launches  # each kernel of forward, and of forward + backward
        results.append(row)
        print(f"  {name:32s} {path:9s} fwd {fwd:8.3f} ms" + (f"  bwd {bwd:8.3f} ms" if bwd is not None else ""),
              flush=True)

    def kernels_alone(fwd, fwd_bwd, sync, launches):
        """(forward, backward) kernel milliseconds with --kernel-time on a GPU, else None;
        launches gets {"forward": [...], "forward+backward": [...]} (kernel_ms's rows)."""
        if not (args.kernel_time and args.device == "cuda"):
            return None
        launches.update({"forward": [], "forward+backward": []})
        k_fwd = kernel_ms(fwd, args.warmup, args.repeat, sync, launches["forward"])
        k_all = kernel_ms(fwd_bwd, args.warmup, args.repeat, sync, launches["forward+backward"])
        return k_fwd, (None if k_fwd is None or k_all is None else max(k_all - k_fwd, 0.0))

    wanted = (lambda name: any(w in name for w in args.only)) if args.only else (lambda name: True)
    for name, shape, bf, bb, make_arrays, make_minitx, make_torch in benchmarks(sizes, dtype):
        if not wanted(name):
            continue
        arrays = make_arrays()
        extra = [two_pass_path] + ([mma_path] if mma_path else []) if name.startswith("attention") else []
        for path, ctx in paths + extra:
            with ctx():
                fwd, fwd_bwd = minitx_fns(make_minitx(minitx_frame), arrays, args.device)
                t_fwd = timers["minitx"](fwd, args.warmup, args.repeat)
                t_all = timers["minitx"](fwd_bwd, args.warmup, args.repeat)
                launches = {}
                alone = kernels_alone(fwd, fwd_bwd, cp.cuda.Device().synchronize if cp else None, launches)
            record(name, shape, path, t_fwd, max(t_all - t_fwd, 0.0), bf, bb, alone, launches)
        for frame in frames:
            fwd, fwd_bwd = torch_fns(frame.torch, make_torch(frame), arrays, args.device)
            t_fwd = timers["torch"](fwd, args.warmup, args.repeat)
            t_all = timers["torch"](fwd_bwd, args.warmup, args.repeat)
            launches = {}
            alone = kernels_alone(fwd, fwd_bwd, frame.torch.cuda.synchronize if args.device == "cuda" else None,
                                  launches)
            record(name, shape, "torch", t_fwd, max(t_all - t_fwd, 0.0), bf, bb, alone, launches)
    for name, shapes in adams:
        if not wanted(name):
            continue
        n = sum(int(np.prod(s)) for s in shapes)
        shape = f"{len(shapes)} tensors, {n:,} values"
        for path, ctx in paths:
            with ctx():
                record(name, shape, path, run_adam(minitx_frame, shapes, dtype, timers["minitx"], args),
                       None, 7 * n * item, 0)
        for frame in frames:
            record(name, shape, "torch", run_adam(frame, shapes, dtype, timers["torch"], args), None,
                   7 * n * item, 0)

    ratios = ratio_rows(results)
    print_table(results, ratios, gpu, copy_gbps)
    report = dict(device=gpu, date=datetime.datetime.now().isoformat(timespec="seconds"), dtype=args.dtype, tf32=args.tf32,
                  copy_GBps=copy_gbps, sizes=sizes, repeat=args.repeat, warmup=args.warmup,
                  torch_version=getattr(torch, "__version__", None), cupy_version=getattr(cp, "__version__", None),
                  results=results, ratios=ratios)
    out = Path(args.out) if args.out else default_out("kernels", gpu)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=float))
    print(f"wrote {out}")
    return 0


def default_out(kind, gpu):
    slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-").lower()
    return ROOT / "benchmarks" / "results" / f"{kind}-{slug}-{datetime.date.today().isoformat()}.json"


def ratio_rows(results):
    """Per benchmark and fast path (fused, and two-pass and mma where they ran): time of the
    reference (or torch) / time of that path."""
    by = {(r["name"], r["path"]): r for r in results}
    rows = []
    for name in dict.fromkeys(r["name"] for r in results):
        for path in ("fused", "two-pass", "mma"):
            fast = by.get((name, path))
            if fast is None:
                continue
            row = dict(name=name, path=path)
            for other in ("reference", "torch"):
                o = by.get((name, other))
                for part in ("fwd", "bwd"):
                    a, b = (o or {}).get(f"{part}_ms"), fast.get(f"{part}_ms")
                    row[f"{part}_vs_{other}"] = a / b if a is not None and b else None
            rows.append(row)
    return rows


def print_table(results, ratios, gpu, copy_gbps):
    def num(v, fmt):
        ok = isinstance(v, (int, float)) and v == v
        return format(v, fmt) if ok else "-".rjust(int(re.match(r"\d+", fmt).group()))
    print(f"\n{gpu}: device-to-device copy {copy_gbps:.0f} GB/s")
    head = f"{'benchmark':32s} {'shape':28s} {'path':9s} {'fwd ms':>8s} {'bwd ms':>8s} {'fwd GB/s':>9s} " \
           f"{'bwd GB/s':>9s} {'fwd %cp':>7s} {'bwd %cp':>7s}"
    print(head + "\n" + "-" * len(head))
    for r in results:
        print(f"{r['name']:32s} {r['shape']:28s} {r['path']:9s} {num(r['fwd_ms'], '8.3f')} {num(r['bwd_ms'], '8.3f')} "
              f"{num(r['fwd_GBps'], '9.1f')} {num(r['bwd_GBps'], '9.1f')} {num(r['fwd_pct_copy'], '7.1f')} "
              f"{num(r['bwd_pct_copy'], '7.1f')}")
    timed = [r for r in results if "fwd_kernel_ms" in r]
    if timed:  # --kernel-time: the kernels alone, without the host's launch overhead
        head = f"\n{'kernels alone (CUPTI)':32s} {'shape':28s} {'path':9s} {'fwd ms':>8s} {'bwd ms':>8s} " \
               f"{'fwd %cp':>7s} {'bwd %cp':>7s} {'fwd %same':>9s} {'bwd %same':>9s}"
        print(head + "\n" + "-" * (len(head) - 1))
        for r in timed:
            print(f"{r['name']:32s} {r['shape']:28s} {r['path']:9s} {num(r['fwd_kernel_ms'], '8.3f')} "
                  f"{num(r['bwd_kernel_ms'], '8.3f')} {num(r['fwd_kernel_pct_copy'], '7.1f')} "
                  f"{num(r['bwd_kernel_pct_copy'], '7.1f')} {num(r.get('fwd_kernel_pct_same_copy'), '9.1f')} "
                  f"{num(r.get('bwd_kernel_pct_same_copy'), '9.1f')}")
    head = f"\n{'speed-up of the fused kernels':32s} {'path':9s} {'fwd vs ref':>10s} {'bwd vs ref':>10s} " \
           f"{'fwd vs torch':>12s} {'bwd vs torch':>12s}"
    print(head + "\n" + "-" * (len(head) - 1))
    for r in ratios:
        print(f"{r['name']:32s} {r['path']:9s} {num(r['fwd_vs_reference'], '10.2f')} {num(r['bwd_vs_reference'], '10.2f')} "
              f"{num(r['fwd_vs_torch'], '12.2f')} {num(r['bwd_vs_torch'], '12.2f')}")


if __name__ == "__main__":
    sys.exit(main())
