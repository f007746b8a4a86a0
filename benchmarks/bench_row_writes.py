"""A loop writing the rows of a buffer, recorded: written into the buffer, or into a copy per row.

    python benchmarks/bench_row_writes.py [--lengths 50 200 800] [--rounds 3] [--keep-rows]

The loop a learner writes for a recurrent network::

    h = minitx.zeros(T, B, H)
    for t in range(1, T):
        h[t] = tanh(h[t - 1] @ W + x[t] @ U)
    h.sum().backward()

Each ``h[t] = ...`` is a recorded write. Computed out of place, it copies the whole buffer, and
the graph keeps every copy until backward: O(T^2) memory and time. ``writes.in_place`` lets the
write go into h's own array where nothing reads the row's old values (see
minitx/autograd/writes.py). This script runs the loop both ways in one process, alternately
(``in_place`` forced off for the copy), and prints, per length T: the forward's and backward's
median times, the peak of memory traced by tracemalloc over forward and backward, and the ratios.
Both ways give the same gradients, bit for bit (checked at each length). ``--keep-rows`` keeps
each row's view too, as a loop collecting its outputs does (``outs.append(h[t])``, stacked at the
end for the loss): each view goes stale at the next write.
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

import minitx
import minitx.functional as F
from minitx.ops import indexing


def loop(T: int, B: int, H: int, D: int, traced: bool, keep_rows: bool = False):
    """(forward seconds, backward seconds, peak traced bytes or None, W's gradient)."""
    rng = np.random.default_rng(0)
    W = minitx.tensor(rng.standard_normal((H, H)) * 0.1, requires_grad=True)
    U = minitx.tensor(rng.standard_normal((D, H)) * 0.1, requires_grad=True)
    x = minitx.tensor(rng.standard_normal((T, B, D)))
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    h = minitx.zeros(T, B, H, dtype="float64")
    outs = []
    for t in range(1, T):
        h[t] = F.tanh(h[t - 1] @ W + x[t] @ U)
        if keep_rows:
            outs.append(h[t])
    loss = F.stack(outs).sum() if keep_rows else h.sum()
    forward = time.perf_counter()
    loss.backward()
    ended = time.perf_counter()
    peak = None
    if traced:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return forward - started, ended - forward, peak, W.grad.numpy().copy()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[50, 200, 800])
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each way, alternately")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--inputs", type=int, default=32)
    parser.add_argument("--keep-rows", action="store_true", help="outs.append(h[t]) at each step, stacked at the end")
    args = parser.parse_args(argv)
    real = indexing.in_place
    ways = {"in place": real, "copy per row": lambda x, index: False}
    kept = ", each row's view kept" if args.keep_rows else ""
    print(f"B={args.batch}, H={args.hidden}, D={args.inputs}, float64{kept}; medians of {args.rounds} runs (ms), "
          "peak traced memory (MiB) from a run of its own")
    print("| T | buffer MiB | forward: in place | forward: copies | backward: in place | backward: copies "
          "| peak: in place | peak: copies | copies ÷ in place (forward + backward) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for T in args.lengths:
            times = {name: [] for name in ways}
            grads, peaks = {}, {}
            for _ in range(args.rounds):
                for name, rule in ways.items():
                    indexing.in_place = rule
                    fwd, bwd, _, grad = loop(T, args.batch, args.hidden, args.inputs, False, args.keep_rows)
                    times[name].append((fwd, bwd))
                    grads[name] = grad
            for name, rule in ways.items():
                indexing.in_place = rule
                peaks[name] = loop(T, args.batch, args.hidden, args.inputs, True, args.keep_rows)[2]
            if not np.array_equal(grads["in place"], grads["copy per row"]):
                raise SystemExit(f"T={T}: the two ways gave different gradients")
            med = {name: (statistics.median(f for f, _ in v), statistics.median(b for _, b in v))
                   for name, v in times.items()}
            ratio = sum(med["copy per row"]) / sum(med["in place"])
            buffer = T * args.batch * args.hidden * 8 / 2 ** 20
            print(f"| {T} | {buffer:.2f} | {med['in place'][0] * 1e3:.0f} | {med['copy per row'][0] * 1e3:.0f} "
                  f"| {med['in place'][1] * 1e3:.0f} | {med['copy per row'][1] * 1e3:.0f} "
                  f"| {peaks['in place'] / 2 ** 20:.1f} | {peaks['copy per row'] / 2 ** 20:.1f} | {ratio:.1f} |")
    finally:
        indexing.in_place = real


if __name__ == "__main__":
    main()
