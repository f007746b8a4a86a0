"""When a translation run reached a BLEU: its epoch models scored on test2016, each against the
training time at that epoch's end (history.json's ``seconds``, counted from the first step).

    python3 -m minitx.translate train --recipe gpu-best --device cuda --keep-epochs true --output-dir RUN
    PYTHONPATH=$PWD python3 benchmarks/time_to_bleu.py RUN [--target 40] [--all] [--out time.json]

The run must have kept its epoch models (``--keep-epochs true``; keeping them changes nothing it
learns). Epochs are scored in order, decoded as the run decodes its test set (its beam size and
length penalty), from ``--from-epoch`` or else the first epoch whose validation BLEU (greedy, when
the run measured it with ``--bleu-every``) was last more than ``--margin`` below the target; the
scan stops at the first epoch that reaches the target, unless ``--all`` (every epoch from
``--from-epoch`` or the first). Should the first epoch scored already reach it, the epochs before
it are scored too, back to the first that does. The time to the target is that epoch's training
time: the model existed then, and a run that stops there (``--max-steps``) ends with it.

The trainer's clock runs through each epoch's end (validation loss, checkpoints and, with
``--bleu-every``, the validation BLEU's decoding), so a run trained with ``--bleu-every 0`` gives
the time its recipe takes; one with ``--bleu-every 1`` is slower by its decoding.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install


def first_epoch_to_score(history, target, margin) -> int:
    """The epoch after the last one whose validation BLEU (where the run measured it) lies more
    than ``margin`` below ``target``: no earlier epoch is likely to reach it. The first epoch
    when none was measured that low."""
    low = [r["epoch"] for r in history if r.get("val_bleu") is not None and r["val_bleu"] < target - margin]
    return max(low) + 1 if low else (history[0]["epoch"] if history else 1)


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
    from minitx.translate.training import TEST_SPLIT, decoding, evaluate_split, load_run, read_run_config

    run = Path(args.run)
    history = [r for r in read_json(run / "history.json", list) if r.get("complete", True)]
    kept = {r["epoch"]: run / f"epoch-{r['epoch']}.npz" for r in history if (run / f"epoch-{r['epoch']}.npz").exists()}
    if not kept:
        raise SystemExit(f"time_to_bleu: {run} keeps no epoch-<n>.npz of its history's epochs; train it with "
                         f"--keep-epochs true")
    first = history[0]["epoch"]
    start = args.from_epoch or (first if args.all else first_epoch_to_score(history, args.target, args.margin))
    missing = [r["epoch"] for r in history if r["epoch"] >= start and r["epoch"] not in kept]
    if missing:
        raise SystemExit(f"time_to_bleu: {run} lacks the models of epochs {missing[:8]} (kept: "
                         f"{sorted(kept)[:8]}...); was it trained with --keep-epochs true?")
    config = read_run_config(run)
    pairs = load_pairs(TEST_SPLIT, config["src_lang"], config["tgt_lang"], config["data_dir"])
    records = {r["epoch"]: r for r in history}
    scored = {}

    def score(epoch):
        record = records[epoch]
        _, model, src_tok, tgt_tok = load_run(run, str(kept[epoch]), args.device)
        bleu = evaluate_split(model, src_tok, tgt_tok, pairs, progress=False, lang=config["tgt_lang"],
                              **decoding(config))["bleu"]
        scored[epoch] = {"epoch": epoch, "step": record["step"], "seconds": record["seconds"],
                         "val_bleu": record.get("val_bleu"), "test_bleu": bleu}
        val = "-" if record.get("val_bleu") is None else f"{record['val_bleu']:.2f}"
        print(f"{epoch:5d} {record['step']:6d} {record['seconds']:10.1f} {val:>8} {bleu:9.2f}")
        return bleu >= args.target

    print(f"{run}: test2016 {config['src_lang']}-{config['tgt_lang']}, beam {config['beam_size']}, target "
          f"{args.target:g}")
    print(f"{'epoch':>5} {'step':>6} {'training s':>10} {'val BLEU':>8} {'test BLEU':>9}")
    reached = None
    for epoch in (e for e in records if e >= start):
        if score(epoch) and reached is None:
            reached = epoch
            if not args.all:
                break
    while reached == min(scored, default=None) and reached - 1 in kept and score(reached - 1):
        reached -= 1  # the first epoch scored reached it already: so may earlier ones
    rows = [scored[e] for e in sorted(scored)]
    reached = scored[reached] if reached is not None else None
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
