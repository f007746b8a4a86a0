"""Fuzz a run's restore with edited checkpoints: valid files whose contents a hand changed.

    python tools/fuzz_restore.py [--files 2000] [--seed 0]

tools/fuzz_checkpoints.py damages the bytes of a file; this one keeps every file intact and
edits what it says. A small run (an MLP with dropout, Adam, a warm-up schedule, test_trainer.py's
task) stops after 9 steps; its last.npz is loaded, and each fuzzed copy changes one entry
anywhere in it, drawn from a seeded generator:

* a number or an array replaced by a value of another kind (a string, None, a list, a dict,
  a bool, 1.5 for a count, NaN, inf, a negative or huge number, an int array for a float one,
  an array of another shape);
* an entry removed, or an unknown one added beside it;
* two entries of one dict or list exchanged.

Each copy is saved whole and the Trainer resumes from it and trains three more steps. It must
either refuse with a ValueError that names last.npz, or run: the edit was a no-op (an entry
exchanged with itself, a key removed that the run's own value fills) or one no check can tell
from a real run (a logged loss or time, the random generators' numbers, the epoch's running
loss sum, one parameter's state emptied, which reads as a parameter that has had no gradient). Any
other exception -- a TypeError, KeyError, OverflowError from deep inside, or a ValueError that
does not say which file -- is a failure. The script prints the outcomes per kind of edit and
the entries that were accepted, and exits 1 on any failure. tests/test_restore_fuzz.py runs a
few hundred of the same edits in CI.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import io
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's minitx

import minitx  # noqa: E402
from minitx import nn, optim  # noqa: E402
from minitx.serialization import load, save  # noqa: E402
from minitx.train import Trainer, mean_loss  # noqa: E402

REFUSED, RAN = "refused naming the file", "ran"

# ---------------------------------------------------------------------- the run
_rng = np.random.default_rng(0)
X = _rng.normal(size=(48, 4)).astype(np.float32)
Y = (X @ _rng.normal(size=(4, 1)) + 0.1 * _rng.normal(size=(48, 1))).astype(np.float32)


def batches(seed, epoch):
    order = np.random.default_rng([seed, epoch]).permutation(len(X))
    return [(minitx.tensor(X[order[i:i + 8]]), minitx.tensor(Y[order[i:i + 8]])) for i in range(0, len(X), 8)]


def loss_fn(model, batch):
    x, y = batch
    error = model(x) - y
    return (error * error).sum() / len(y), len(y)


def make_trainer(run_dir, max_steps):
    minitx.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
    opt = optim.Adam(model.parameters(), lr=0.02)
    schedule = optim.WarmupInverseSqrt(opt, peak_lr=0.02, warmup_steps=4)
    validation = [(minitx.tensor(X[:16]), minitx.tensor(Y[:16]))]
    return Trainer(run_dir, model, opt, loss_fn, batches, schedule=schedule, epochs=3, max_steps=max_steps,
                   save_every=3, clip_norm=1.0, seed=7, progress=False,
                   validation_loss=lambda m: mean_loss(m, validation, loss_fn))


def stopped_state(directory: Path) -> dict:
    """last.npz of the run stopped after 9 steps (one epoch and a half)."""
    make_trainer(directory, max_steps=9).fit()
    return load(directory / "last.npz")


# ---------------------------------------------------------------------- edits
def _places(node, path=()):
    """(path, value) of every entry below ``node`` (dict keys and list indices)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield path + (key,), value
        yield from _places(value, path + (key,))


def _replacements(value):
    """Values of other kinds, and edge values of the same kind, for ``value``."""
    out = ["x", None, [], {}, True, 1.5, -1, 2 ** 70, math.nan, math.inf, -math.inf, 0]
    if isinstance(value, np.ndarray):
        out += [value.astype(np.int64), value.reshape(-1)[:1], np.full_like(value, np.nan),
                np.zeros(value.shape + (2,), value.dtype), value.astype(np.float64)]
    return out


def edit(rng, state):
    """One edited copy of ``state`` and the words for what changed."""
    state = copy.deepcopy(state)
    places = list(_places(state))
    path, value = places[int(rng.integers(len(places)))]
    parent = state
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    where = "/".join(map(str, path))
    kind = int(rng.integers(4))
    if kind == 0 or kind == 1:
        options = _replacements(value)
        parent[key] = options[int(rng.integers(len(options)))]
        return state, "replaced", f"{where} = {_short(parent[key])}"
    if kind == 2:
        if isinstance(parent, dict):
            del parent[key]
            return state, "removed", where
        parent.append(copy.deepcopy(parent[key]))
        return state, "added", f"{where} repeated at the end"
    siblings = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
    other = siblings[int(rng.integers(len(siblings)))]
    parent[key], parent[other] = parent[other], parent[key]
    return state, "exchanged", f"{where} <-> {other}"


def _short(value) -> str:
    if isinstance(value, np.ndarray):
        return f"array {value.dtype} {value.shape}"
    return repr(value)[:40]


# ---------------------------------------------------------------------- running
def outcome(run_dir: Path) -> str:
    """What resuming from run_dir/last.npz and training 3 steps did: REFUSED, RAN, or a failure."""
    trainer = make_trainer(run_dir, max_steps=12)
    try:
        trainer.resume()
        trainer.fit()
    except ValueError as e:  # CheckpointError included
        return REFUSED if str(run_dir / "last.npz") in str(e) else f"ValueError without the file: {str(e)[:150]}"
    except Exception as e:  # a failure, to report
        return f"{type(e).__name__}: {str(e)[:150]}"
    return RAN


def fuzz(files: int, seed: int, directory: Path):
    """Yield (kind of edit, what changed, outcome) for ``files`` edited checkpoints."""
    rng = np.random.default_rng(seed)
    state = stopped_state(directory / "stopped")
    for i in range(files):
        edited, kind, what = edit(rng, state)
        run_dir = directory / f"edited-{i}"
        run_dir.mkdir()
        save(edited, run_dir / "last.npz")
        yield kind, what, outcome(run_dir)
        for path in sorted(run_dir.iterdir()):
            path.unlink()
        run_dir.rmdir()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="how many edited checkpoints (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    table = collections.defaultdict(collections.Counter)
    failures, ran = collections.Counter(), collections.Counter()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):  # the runs' logs
        for kind, what, result in fuzz(args.files, args.seed, Path(tmp)):
            ok = result in (REFUSED, RAN)
            table[kind][result if ok else "FAILURE"] += 1
            if not ok:
                failures[f"{what}: {result}"] += 1
            elif result == RAN:
                ran[what.split(" ")[0]] += 1
    columns = [REFUSED, RAN, "FAILURE"]
    print(f"{args.files} edited checkpoints, seed {args.seed}, {time.perf_counter() - started:.1f} s\n")
    print(f"| {'edit':<10} | " + " | ".join(columns) + " |")
    print(f"|{'-' * 12}|" + "|".join("-" * (len(c) + 2) for c in columns) + "|")
    for kind in sorted(table):
        print(f"| {kind:<10} | " + " | ".join(f"{table[kind][c]:>{len(c)}}" for c in columns) + " |")
    print("\nedited entries the run took (most common):")
    for what, count in ran.most_common(15):
        print(f"  x{count}: {what}")
    for failure, count in failures.most_common(30):
        print(f"FAILURE x{count}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
