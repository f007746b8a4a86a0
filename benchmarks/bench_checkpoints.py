"""How long a training run's checkpoint stops its steps, and how long the save itself takes:
written by the training thread itself, or handed to the Trainer's writer thread
(minitx.train.checkpoints.CheckpointWriter).

    PYTHONPATH=$PWD python3 benchmarks/bench_checkpoints.py [--preset gpu-best] [--device cuda]
        [--saves 4] [--apart 1.5] [--dir /tmp/ckpt-bench] [--out result.json]

A full checkpoint (last.npz: the model and Adam's two moments, about 12 bytes a parameter) of
the preset's model (bench_train_step's vocabulary of 10,000 unless --vocab), saved ``--saves``
times each way, one after another in ``--dir`` (the disk a run writes to is what is measured):

* ``in the step``: save_checkpoint as the Trainer with write_in_background=False calls it: the
  state copied to the host, encoded, checksummed, written and fsynced, all before the next step;
* ``handed over``: the same call with a CheckpointWriter: the training thread copies the state
  to the host and queues it, and goes on. Between two saves the steps go on for ``--apart``
  seconds (a sleep here; gpu-best's 100 steps between its saves take about that), so the writer
  keeps up, as in a run; with ``--apart 0`` the saves queue and a hand-over past two waiting
  waits for the oldest write.

Two times for each save, in milliseconds, the median over the saves in the table (each save's in
the JSON):

* ``steps blocked``: from the call to save_checkpoint until it returns, the time the training
  thread (and so the steps) waits. Handed over, this is the copy to the host and the hand-over;
* ``whole save``: from the same call until the save's file is on disk (the writer notes when each
  job it was handed ends; in the step, the call returns then, so both times are one). Handed
  over, the steps do not wait for it, but the disk and a CPU core are busy that long, the state's
  host copy is held that long, and a kill inside it loses that checkpoint; with ``--apart 0`` it
  includes the wait behind the saves queued before it.

The ratio printed is of the steps' blocked time only: in the step over handed over.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install

from bench_train_step import model_settings  # noqa: E402


def build(preset, vocab, device):
    """The preset's model with Adam's moments filled (one step on constant gradients)."""
    import minitx
    from minitx import optim
    from minitx.nn import Transformer

    cfg = dict(model_settings(preset), src_vocab=vocab, tgt_vocab=vocab)
    minitx.manual_seed(0)
    model = Transformer(cfg.pop("src_vocab"), cfg.pop("tgt_vocab"), device=device, **cfg)
    params = list(model.parameters())
    opt = optim.Adam(params, lr=1e-3)
    for p in params:
        p.grad = minitx.full(p.shape, 1e-3, device=device, dtype=p.dtype)
    opt.step()
    return model, opt, sum(p.numpy().size for p in params)


class TimedWriter:
    """A CheckpointWriter whose jobs note when they end: ``done[i]``, the perf_counter when the
    i-th save handed over was on disk (the writer runs its jobs in order, one at a time)."""

    def __init__(self):
        from minitx.train.checkpoints import CheckpointWriter

        self.writer, self.done = CheckpointWriter(), []

    def submit(self, job):
        def timed():
            job()
            self.done.append(time.perf_counter())
        self.writer.submit(timed)

    def close(self):
        self.writer.close()


def time_saves(model, opt, directory, saves, background, apart):
    """(ms the training thread was held by each save, ms from each save's start until its file
    was on disk)."""
    from minitx.train.checkpoints import save_checkpoint

    writer = TimedWriter() if background else None
    starts, returns = [], []
    for i in range(saves):
        if i and background:
            time.sleep(apart)  # the steps between two saves
        starts.append(time.perf_counter())
        save_checkpoint(Path(directory) / f"last-{i}.npz", model, opt, progress={"step": i}, writer=writer)
        returns.append(time.perf_counter())
    if writer is not None:
        writer.close()
    on_disk = writer.done if writer is not None else returns  # in the step: written when the call returns
    blocked = [(r - s) * 1e3 for s, r in zip(starts, returns)]
    return blocked, [(d - s) * 1e3 for s, d in zip(starts, on_disk)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--preset", default="gpu-best", help="a Transformer preset or a recipe (as bench_train_step)")
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--saves", type=int, default=4)
    parser.add_argument("--apart", type=float, default=1.5, help="seconds of steps between two saves handed over")
    parser.add_argument("--dir", help="where to write (default: a temporary directory, removed after)")
    parser.add_argument("--out", help="JSON path")
    args = parser.parse_args(argv)
    if args.saves < 1:
        parser.error("--saves must be at least 1")

    model, opt, n_params = build(args.preset, args.vocab, args.device)
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        rows = {}
        for label, background in (("in the step", False), ("handed over", True)):
            blocked, wall = time_saves(model, opt, directory, args.saves, background, args.apart)
            rows[label] = {"blocked_ms": statistics.median(blocked), "each_blocked_ms": blocked,
                           "wall_ms": statistics.median(wall), "each_wall_ms": wall}
        size = sum(p.stat().st_size for p in Path(directory).glob("last-*.npz")) / args.saves
    print(f"{args.preset} on {args.device}: {n_params:,} parameters, a full checkpoint {size / 1e6:.0f} MB, "
          f"{args.saves} saves each way, {args.apart:g} s apart when handed over")
    print(f"{'':12s} {'steps blocked':>18s} {'whole save':>24s}")
    print(f"{'':12s} {'(call to return)':>18s} {'(call to file on disk)':>24s}   median of {args.saves}")
    for label, row in rows.items():
        print(f"{label:12s} {row['blocked_ms']:15.0f} ms {row['wall_ms']:21.0f} ms")
    ratio = rows["in the step"]["blocked_ms"] / max(rows["handed over"]["blocked_ms"], 1e-9)
    print(f"the steps wait {ratio:.1f}x less for a checkpoint handed over; its whole save still takes "
          f"{rows['handed over']['wall_ms']:.0f} ms, on the writer thread")
    if args.out:
        Path(args.out).write_text(json.dumps({"preset": args.preset, "device": args.device, "params": n_params,
                                              "checkpoint_bytes": size, "saves": args.saves, "apart_s": args.apart,
                                              "results": rows,
                                              "ratio": ratio}, indent=1))


if __name__ == "__main__":
    main()
