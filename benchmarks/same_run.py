"""Are two training runs the same run? The proof that a seed means one model, and that a killed
run resumed with --resume ends where the uninterrupted one does.

    python benchmarks/same_run.py RUN_A RUN_B [--json OUT.json]

Compares, in each run directory: the model, optimizer, schedule, RNG and step counters of
last.npz and the model of best.npz, every array bit for bit; the losses in history.json; the test
translations; the scores in results.json. Wall-clock fields (seconds) are not compared. Prints
one line per item and, for arrays that differ, how many tensors and the largest difference.
Exit code 0 only if everything compared is identical.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

from minitx.serialization import load

CLOCK_KEYS = {"seconds", "train_seconds", "eval_seconds", "total_seconds"}


def flatten(tree, prefix=""):
    """{path: leaf} for nested dicts and lists, wall-clock entries left out."""
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            if key not in CLOCK_KEYS:
                out.update(flatten(value, f"{prefix}/{key}"))
        return out
    if isinstance(tree, (list, tuple)):
        out = {}
        for i, value in enumerate(tree):
            out.update(flatten(value, f"{prefix}[{i}]"))
        return out
    return {prefix: tree}


def compare_trees(a, b):
    """(differing paths, largest |a - b| over float arrays that differ)."""
    fa, fb = flatten(a), flatten(b)
    differing = sorted(set(fa) ^ set(fb))
    largest = 0.0
    for path in sorted(set(fa) & set(fb)):
        x, y = fa[path], fb[path]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                differing.append(path)
                if x.shape == y.shape and x.dtype.kind == "f":
                    largest = max(largest, float(np.nanmax(np.abs(x.astype(np.float64) - y))))
        elif x != y and not (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y)):
            differing.append(path)
    return differing, largest


def compare_runs(run_a: Path, run_b: Path) -> dict:
    report = {}

    def item(name, differing, largest=0.0, total=None):
        report[name] = {"same": not differing, "differing": len(differing), "first": differing[:3],
                        "largest_difference": largest, "compared": total}

    for checkpoint, parts in (("last.npz", ("model", "optimizer", "schedule", "rng", "progress")),
                              ("best.npz", ("model",))):
        if not (run_a / checkpoint).exists() or not (run_b / checkpoint).exists():
            report[checkpoint] = {"same": False, "missing": True}
            continue
        sa, sb = load(run_a / checkpoint), load(run_b / checkpoint)
        for part in parts:
            differing, largest = compare_trees(sa.get(part), sb.get(part))
            item(f"{checkpoint} {part}", differing, largest, len(flatten(sa.get(part))))
    for name in ("history.json", "results.json"):
        if (run_a / name).exists() and (run_b / name).exists():
            a, b = (json.loads((run / name).read_text()) for run in (run_a, run_b))
            differing, largest = compare_trees(a, b)
            item(name, differing, largest, len(flatten(a)))
        else:
            report[name] = {"same": False, "missing": True}
    translations = sorted({p.name for run in (run_a, run_b) for p in run.glob("*.hyp.*")})
    if not translations:  # train always writes them: without any, the runs did not finish
        report["test translations (*.hyp.*)"] = {"same": False, "missing": True}
    for hyp in translations:
        a, b = (run / hyp for run in (run_a, run_b))
        if not (a.exists() and b.exists()):
            report[hyp] = {"same": False, "missing": True}
            continue
        lines_a, lines_b = a.read_text().splitlines(), b.read_text().splitlines()
        item(hyp, [f"line {i + 1}" for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y]
             + (["line count"] if len(lines_a) != len(lines_b) else []), total=len(lines_a))
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--json", type=Path, help="write the report here as JSON")
    args = parser.parse_args(argv)
    report = compare_runs(args.run_a, args.run_b)
    print(f"{args.run_a} vs {args.run_b}")
    for name, r in report.items():
        if r.get("missing"):
            print(f"  {name:28s} MISSING in one run")
        elif r["same"]:
            print(f"  {name:28s} identical ({r['compared']} compared)")
        else:
            print(f"  {name:28s} DIFFERS: {r['differing']} of {r['compared']}, e.g. {r['first']}, "
                  f"largest difference {r['largest_difference']:.3g}")
    if args.json:
        args.json.write_text(json.dumps({"a": str(args.run_a), "b": str(args.run_b), "items": report}, indent=1))
    return 0 if all(r["same"] for r in report.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
