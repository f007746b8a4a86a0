"""From reference to kernel, timed: every rung of the softmax and layer-norm ladders on one GPU.

    PYTHONPATH=$PWD python3 benchmarks/bench_ladder.py [--dtype float32] [--repeat 50]

Rows, per shape: the reference (the NumPy formula run as CuPy array code), the rungs of
minitx/kernels/ladder (v1 one thread per row; v2 a block per row, shared-memory tree
reductions; v3 a warp per row, warp shuffles, one pass), and the kernel minitx uses
(softmax.cu / layer_norm.cu). docs/kernel-ladder.md walks through them.

Timing: CUDA events around each call, median of ``--repeat`` calls after ``--warmup``.
GB/s: the bytes the op must at least move (x read once, y written once) over the time.
``x ref`` is the speed-up over the reference, ``x prev`` over the row above.

Without CuPy and a GPU the script says so and exits 0. ``--cpu`` runs tiny shapes through
the CPU emulation instead: it checks this script, its numbers mean nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install

from bench_kernels import Timer  # noqa: E402

SHAPES = {  # (rows, cols): attention scores of a Multi30k batch, a 10k vocabulary, model widths
    "gpu": {"softmax": [(49152, 32), (8192, 1024), (6144, 10000)],
            "layer_norm": [(6144, 256), (6144, 512), (1024, 4096)]},
    "cpu": {"softmax": [(5, 40)], "layer_norm": [(5, 40)]},
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu", action="store_true",
                        help="tiny shapes through the CPU emulation (checks the script; numbers mean nothing)")
    return parser.parse_args(argv)


def candidates(xp, ladder_name):
    """(name, fn) for the reference, every rung and the product kernel of one ladder."""
    from minitx import kernels
    from minitx.kernels import ladder

    if ladder_name == "softmax":
        def reference(x):
            e = xp.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        rungs = [(r, lambda x, r=r: ladder.softmax(r, x)) for r in ladder.RUNGS["softmax"]]
        return [("reference", reference), *rungs, ("softmax.cu", kernels.softmax_forward)]

    def reference(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / xp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    rungs = [(r, lambda x, r=r: ladder.layer_norm(r, x)) for r in ladder.RUNGS["layer_norm"]]
    return [("reference", reference), *rungs, ("layer_norm.cu", kernels.layer_norm_forward)]


def main(argv=None):
    args = parse_args(argv)
    if args.cpu:
        import numpy as xp

        timer, sizes = Timer("cpu"), SHAPES["cpu"]
    else:
        from minitx import kernels

        if not kernels.available():
            print("bench_ladder: skipped, it needs CuPy and a CUDA GPU (--cpu checks the script)")
            return 0
        import cupy as xp

        timer, sizes = Timer("cupy", xp), SHAPES["gpu"]
    print(f"{'op':<10} {'rows x cols':>13} {'rung':<14} {'us':>10} {'GB/s':>8} {'x ref':>7} {'x prev':>7}")
    for ladder_name, shapes in sizes.items():
        for rows, cols in shapes:
            x = xp.random.default_rng(0).standard_normal((rows, cols)).astype(args.dtype)
            moved = 2 * x.nbytes
            ref_ms = prev_ms = None
            for name, fn in candidates(xp, ladder_name):
                ms = timer(lambda fn=fn: fn(x), args.warmup, args.repeat)
                ref_ms = ref_ms or ms
                prev = f"{prev_ms / ms:7.2f}" if prev_ms else f"{'-':>7}"
                print(f"{ladder_name:<10} {f'{rows}x{cols}':>13} {name:<14} {ms * 1e3:10.1f} "
                      f"{moved / (ms * 1e-3) / 1e9:8.1f} {ref_ms / ms:7.2f} {prev}")
                prev_ms = ms
    return 0


if __name__ == "__main__":
    sys.exit(main())
