"""When a translation run reached a BLEU: its epoch models scored on test2016, each against the
training time at that epoch's end (history.json's ``seconds``, counted from the first step).

    python3 -m minitx.translate train --recipe gpu-best --device cuda --keep-epochs true --output-dir RUN
    PYTHONPATH=$PWD python3 benchmarks/time_to_bleu.py RUN [--target 40] [--all] [--out time.json]

The run must have kept its epoch models (``--keep-epochs true``; keeping them changes nothing it
learns). Epochs are scored in order, decoded as the run decodes its test set (its beam size and
length penalty), from ``--from-epoch`` or else the first epoch whose validation BLEU (greedy, when
the run measured it with ``--bleu-every``) is within ``--margin`` of the target; the scan stops at
the first epoch that reaches the target, unless ``--all``. The time to the target is that epoch's
training time: the model existed then, and a run that stops there (``--max-steps``) ends with it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install


def first_epoch_to_score(history, target, margin) -> int:
    """The first epoch whose validation BLEU is within ``margin`` of ``target``; the first epoch
    when the run measured none (or none came that close: then every epoch is scored)."""
    for record in history:
        if record.get("val_bleu") is not None and record["val_bleu"] >= target - margin:
            return record["epoch"]
    return history[0]["epoch"] if history else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("run", help="a run directory trained with --keep-epochs true")
    parser.add_argument("--target", type=float, default=40.0, help="the sacreBLEU to reach (default 40)")
    parser.add_argument("--margin", type=float, default=3.0,
                        help="start at the first epoch whose validation BLEU is this close to the target")
    parser.add_argument("--from-epoch", type=int, default=None, help="score from this epoch on")
    parser.add_argument("--all", action="store_true", help="score every epoch from the first, not just to the target")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", help="JSON path")
    args = parser.parse_args(argv)

    from minitx.data import load_pairs
    from minitx.serialization import read_json
    from minitx.translate.training import TEST_SPLIT, evaluate_split, load_run, read_run_config

    run = Path(args.run)
    history = [r for r in read_json(run / "history.json", list) if r.get("complete", True)]
    kept = {r["epoch"]: run / f"epoch-{r['epoch']}.npz" for r in history if (run / f"epoch-{r['epoch']}.npz").exists()}
    if not kept:
        raise SystemExit(f"time_to_bleu: {run} keeps no epoch-<n>.npz of its history's epochs; train it with "
                         f"--keep-epochs true")
    start = 1 if args.all else args.from_epoch or first_epoch_to_score(history, args.target, args.margin)
    missing = [r["epoch"] for r in history if r["epoch"] >= start and r["epoch"] not in kept]
    if missing:
        raise SystemExit(f"time_to_bleu: {run} lacks the models of epochs {missing[:8]} (kept: "
                         f"{sorted(kept)[:8]}...); was it trained with --keep-epochs true?")
    config = read_run_config(run)
    pairs = load_pairs(TEST_SPLIT, config["src_lang"], config["tgt_lang"], config["data_dir"])
    rows, reached = [], None
    print(f"{run}: test2016 {config['src_lang']}-{config['tgt_lang']}, beam {config['beam_size']}, target "
          f"{args.target:g}")
    print(f"{'epoch':>5} {'step':>6} {'training s':>10} {'val BLEU':>8} {'test BLEU':>9}")
    for record in history:
        if record["epoch"] < start:
            continue
        _, model, src_tok, tgt_tok = load_run(run, str(kept[record["epoch"]]), args.device)
        bleu = evaluate_split(model, src_tok, tgt_tok, pairs, config["beam_size"], config["length_penalty"],
                              progress=False, lang=config["tgt_lang"])["bleu"]
        rows.append({"epoch": record["epoch"], "step": record["step"], "seconds": record["seconds"],
                     "val_bleu": record.get("val_bleu"), "test_bleu": bleu})
        val = "-" if record.get("val_bleu") is None else f"{record['val_bleu']:.2f}"
        print(f"{record['epoch']:5d} {record['step']:6d} {record['seconds']:10.1f} {val:>8} {bleu:9.2f}")
        if reached is None and bleu >= args.target:
            reached = rows[-1]
            if not args.all:
                break
    if reached:
        print(f"reached {args.target:g} BLEU after epoch {reached['epoch']}: step {reached['step']}, "
              f"{reached['seconds']:.1f} s of training")
    else:
        print(f"did not reach {args.target:g} BLEU in the epochs scored")
    if args.out:
        Path(args.out).write_text(json.dumps({"run": str(run), "target": args.target, "beam_size": config["beam_size"],
                                              "epochs": rows, "reached": reached}, indent=1))
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
