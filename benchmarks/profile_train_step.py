"""Where a minitx training step spends its time on the GPU: the kernels, and the host.

    PYTHONPATH=$PWD python3 benchmarks/profile_train_step.py [--preset base] [--steps 5] [--graphs]
        [--precision fp32|tf32|bf16] [--torch [eager|default|reduce-overhead]] [--ops]

The step is bench_train_step.py's (forward, label-smoothed cross-entropy, backward, clipping,
Adam) on its Multi30k-like batch; ``--torch`` profiles its PyTorch twin instead (eagerly, or
through torch.compile in that mode), so the two kernel tables can be set side by side. Two views
of the same steps, after warm-up:

1. Kernels, through PyTorch's profiler (CUPTI sees every kernel of the process, CuPy's too):
   each kernel's GPU time per step, launches per step, and the share of the step's wall time the
   GPU was busy. Busy near 100%: the kernels are the cost. Far below: the host is (Python,
   launches, waits for the device).
2. The host, through cProfile: the functions with the most time per step, own time and with
   callees. Time in cupy's device-to-host copies (``get``, ``tolist``, ``item``) is the host
   waiting for the GPU: a synchronisation.

Needs CuPy and, for the kernel view, PyTorch with CUDA. Writes JSON with ``--out``.

``--ops`` shows instead what one eager step asks for, on any device: each op's forward and
backward calls, grouped by op and dtypes, with the bytes of their inputs and outputs. It needs no
GPU and reads the step's structure, not its speed: under ``--precision bf16`` every cast is an
``Astype`` row, and an op given two floating dtypes (which the fused kernels refuse, so it runs
its reference code) shows as such. The bytes are sizes, not traffic: a view (Reshape, Transpose)
moves none. What differs from the GPU's step: on NumPy a 16-bit product computes in float32 (its
backward too), and cross_entropy's logits are cast up first (on the GPU its kernels read them as
they are); and while the view's backward hook is registered, the engine calls each op's backward
itself instead of letting it add into a running sum (LayerNorm's backward_adding, Embedding's
backward_into), so those show as plain backward calls.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install

from bench_train_step import (make_batch, minitx_graphs_step, minitx_step, model_settings, set_precision,  # noqa: E402
                              torch_step)


def kernel_view(step, steps, sync):
    """[(kernel name, ms per step, launches per step)], busy share, wall ms per step."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        sync()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        wall_ms = (time.perf_counter() - start) * 1e3 / steps
    totals = collections.defaultdict(lambda: [0.0, 0])
    busy_us = 0.0
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            us = event.device_time_total if hasattr(event, "device_time_total") else event.cuda_time_total
            totals[event.name][0] += us
            totals[event.name][1] += 1
            busy_us += us
    rows = sorted(((name, us / 1e3 / steps, count / steps) for name, (us, count) in totals.items()),
                  key=lambda r: -r[1])
    return rows, busy_us / 1e3 / steps / wall_ms, wall_ms


def op_view(step):
    """One call of ``step`` as its ops: [(pass, op, input dtypes -> output dtypes, calls, MB)],
    most bytes first. Forward rows count each op's inputs and output; backward rows its upstream
    gradient and the gradients it returns."""
    from minitx.autograd import engine, function

    def short(dtype):
        return {"float32": "f32", "float64": "f64", "bfloat16": "bf16", "float16": "f16", "int64": "i64",
                "bool": "bool"}.get(dtype.name, dtype.name)

    counts = collections.defaultdict(lambda: [0, 0])

    def forward(fn, inputs, output):
        key = ("forward", type(fn).__name__, ",".join(short(t.dtype) for t in inputs) + " -> " + short(output.dtype))
        counts[key][0] += 1
        counts[key][1] += output.nbytes + sum(t.data.nbytes for t in inputs)

    def backward(fn, dy, grads):
        returned = ",".join("-" if g is None else short(g.dtype) for g in grads)
        key = ("backward", type(fn).__name__, short(dy.dtype) + " -> " + returned)
        counts[key][0] += 1
        counts[key][1] += dy.nbytes + sum(g.nbytes for g in grads if g is not None)

    function.forward_hooks.append(forward)
    engine.backward_hooks.append(backward)
    try:
        step()
    finally:
        function.forward_hooks.remove(forward)
        engine.backward_hooks.remove(backward)
    return sorted(((*key, n, nbytes / 1e6) for key, (n, nbytes) in counts.items()), key=lambda r: (r[0] != "forward", -r[4]))


def host_view(step, steps, sync, top):
    profiler = cProfile.Profile()
    sync()
    profiler.enable()
    for _ in range(steps):
        step()
    sync()
    profiler.disable()
    stats = pstats.Stats(profiler)
    rows = []
    for (path, line, name), (calls, _, own, cumulative, _) in stats.stats.items():
        rows.append({"function": f"{Path(path).name}:{line}({name})", "calls_per_step": calls / steps,
                     "own_ms": own * 1e3 / steps, "cumulative_ms": cumulative * 1e3 / steps})
    by_own = sorted(rows, key=lambda r: -r["own_ms"])[:top]
    by_cumulative = sorted(rows, key=lambda r: -r["cumulative_ms"])[:top]
    return by_own, by_cumulative


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--preset", default="base", help="a Transformer preset or a recipe (as bench_train_step)")
    parser.add_argument("--tokens", type=int, default=6144)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: the host view alone, of the NumPy step")
    parser.add_argument("--graphs", action="store_true",
                        help="profile the step replayed from a CUDA graph (bench_train_step's 'minitx graphs'; "
                             "needs nvmath-python): the kernels the replay runs, and how busy they keep the GPU")
    parser.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="fp32",
                        help="tf32: float32 products on TF32 tensor cores; bf16: forward and loss under autocast "
                             "to bfloat16 (minitx's or PyTorch's)")
    parser.add_argument("--torch", nargs="?", const="eager", choices=("eager", "default", "reduce-overhead"),
                        help="profile PyTorch's twin of the step instead: eagerly, or torch.compile in that mode")
    parser.add_argument("--ops", action="store_true",
                        help="instead of timing: the ops of one eager step by dtypes, with their bytes (any device)")
    parser.add_argument("--out", help="JSON path")
    args = parser.parse_args(argv)
    if (args.graphs or args.torch) and args.device != "cuda":
        parser.error("--graphs and --torch need --device cuda")
    if args.graphs and args.torch:
        parser.error("--graphs is minitx's replay; for PyTorch's, --torch reduce-overhead")
    if args.ops and (args.graphs or args.torch):
        parser.error("--ops reads minitx's eager step: leave out --graphs and --torch")

    cfg = dict(model_settings(args.preset), src_vocab=args.vocab, tgt_vocab=args.vocab)
    src, tgt = make_batch(args.tokens, args.length, args.vocab)
    torch = __import__("torch") if args.torch else None
    set_precision(args.precision, torch)
    autocast = "bfloat16" if args.precision == "bf16" else None
    if args.torch:
        step, params = torch_step(torch, cfg, src, tgt, "cuda", None if args.torch == "eager" else args.torch,
                                  autocast=autocast)
    else:
        make = minitx_graphs_step if args.graphs else minitx_step
        step, params = make(cfg, src, tgt, args.device, autocast=autocast)
    report = {"preset": args.preset, "batch": list(tgt.shape), "params": params, "steps": args.steps,
              "device": args.device, "graphs": args.graphs, "precision": args.precision,
              "of": f"torch {args.torch}" if args.torch else "minitx"}
    if args.device == "cuda":
        import cupy

        sync = torch.cuda.synchronize if args.torch else cupy.cuda.get_current_stream().synchronize
        report["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    else:
        def sync():
            pass
    if args.ops:
        rows = op_view(step)
        report["ops"] = [{"pass": p, "op": op, "dtypes": d, "calls": n, "mb": mb} for p, op, d, n, mb in rows]
        for which in ("forward", "backward"):
            mine = [r for r in rows if r[0] == which]
            print(f"\n{which}: {sum(r[3] for r in mine)} op calls, {sum(r[4] for r in mine):.1f} MB read and written")
            for _, op, dtypes, n, mb in mine:
                print(f"{n:6d} {mb:10.2f} MB  {op:28s} {dtypes}")
        if args.out:
            Path(args.out).write_text(json.dumps(report, indent=1))
        return
    for _ in range(max(args.warmup, 2 if args.graphs else 0)):  # graphs: an eager step, then the capture
        step()

    kernels = None
    if args.device == "cuda":
        try:
            kernels, busy, wall_ms = kernel_view(step, args.steps, sync)
        except ImportError:
            print("no PyTorch: the kernel view is left out")
    if kernels is not None:
        report.update(wall_ms=wall_ms, busy=busy, kernel_ms=sum(r[1] for r in kernels),
                      launches=sum(r[2] for r in kernels),
                      kernels=[{"name": n, "ms": ms, "launches": c} for n, ms, c in kernels])
        print(f"{args.preset} ({report['of']}, {args.precision}): {wall_ms:.1f} ms per step, GPU busy {100 * busy:.0f}% "
              f"({report['kernel_ms']:.1f} ms of kernels, {report['launches']:.0f} launches per step)")
        print(f"{'ms/step':>8} {'share':>6} {'launches':>8}  kernel")
        for name, ms, count in kernels[:args.top]:
            print(f"{ms:8.2f} {100 * ms / wall_ms:5.1f}% {count:8.0f}  {name[:100]}")

    by_own, by_cumulative = host_view(step, args.steps, sync, args.top)
    report.update(host_by_own=by_own, host_by_cumulative=by_cumulative)
    for title, rows, key in (("host, own time", by_own, "own_ms"), ("host, with callees", by_cumulative,
                                                                    "cumulative_ms")):
        print(f"\n{title} (ms per step, calls per step)")
        for r in rows:
            print(f"{r[key]:8.2f} {r['calls_per_step']:8.0f}  {r['function']}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
