"""When a translation run reached a BLEU and stayed there: its epoch models scored on test2016,
each against the training time at that epoch's end (history.json's ``seconds``, counted from the
first step).

    python3 -m minitx.translate train --recipe gpu-best --device cuda --keep-epochs true --output-dir RUN
    PYTHONPATH=$PWD python3 benchmarks/time_to_bleu.py RUN [--target 40] [--hold K] [--all] [--out time.json]
    PYTHONPATH=$PWD python3 benchmarks/time_to_bleu.py RUN --scores RUN/time.json   # no decoding

Two figures, both printed and written:

* the time to the target (the headline): the training time of the first epoch from which every
  epoch to the run's last scores at or above the target; with ``--hold K``, of the first epoch
  that starts K epochs in a row at or above it (or as many as the run has left);
* the first crossing: the first epoch that scores at or above it, shown beside the headline.

Why not the first crossing alone: an epoch's test BLEU moves by a few tenths to over a point from
one epoch to the next (gpu-best on an H100: 39.00, 38.77, 40.10 at epochs 13-15; in bfloat16 on an
H200: 39.82, 41.24 at 17-18), so near the target one lucky epoch decides it, and the next epoch's
model may be below it again. From the epoch the headline names on, every model the run made
reaches the target: no single draw of the noise makes the figure, and the rule has no parameter
to choose, so it is the default. It costs decoding every epoch to the run's end (on an H100,
gpu-best's epochs 13 to 29, a few seconds each); ``--hold K`` stops the scan sooner, at
the price of trusting K epochs (K = 1 is the first crossing).

The run must have kept its epoch models (``--keep-epochs true``; keeping them changes nothing it
learns). Epochs are scored in order, decoded as the run decodes its test set (its beam size and
length penalty), from ``--from-epoch`` or else the first epoch whose validation BLEU (greedy, when
the run measured it with ``--bleu-every``) was last more than ``--margin`` below the target; the
scan stops once the headline is settled (at the run's last epoch, or K epochs in a row with
``--hold K``), or goes through every epoch from ``--from-epoch`` or the first with ``--all``.
Should the first epoch scored already reach the target, the epochs before it are scored too, back
to the first that does not. The time is that epoch's training time: the model existed then.
``--scores`` takes the test BLEU of the epochs an earlier ``--out`` recorded instead of decoding
(no models needed): the rule applied to a past scan; an epoch it did not score proves nothing.

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


def crossings(bleus, target, hold=None, last=None):
    """(first crossing, held) from ``bleus`` ({epoch: test BLEU} of the epochs scored): the first
    epoch scored at or above ``target``, and the first epoch e from which every epoch through
    ``last`` (the run's last epoch; None: the last scored) scored at or above it, or with ``hold``
    K every epoch from e through e + K - 1 (or ``last``, if sooner). An epoch not scored counts as
    below. None for either where the scores show none."""
    epochs = sorted(bleus)
    last = epochs[-1] if last is None and epochs else last
    first = next((epoch for epoch in epochs if bleus[epoch] >= target), None)
    for epoch in epochs:
        end = last if hold is None else min(epoch + hold - 1, last)
        if all(bleus.get(e, float("-inf")) >= target for e in range(epoch, end + 1)):
            return first, epoch
    return first, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("run", help="a run directory trained with --keep-epochs true")
    parser.add_argument("--target", type=float, default=40.0, help="the sacreBLEU to reach (default 40)")
    parser.add_argument("--hold", type=int, default=None, metavar="K",
                        help="the time to the target: the first of K epochs in a row at or above it (default: the "
                             "first epoch from which every epoch to the run's last is)")
    parser.add_argument("--margin", type=float, default=3.0,
                        help="start at the first epoch whose validation BLEU is this close to the target")
    parser.add_argument("--from-epoch", type=int, default=None, help="score from this epoch on")
    parser.add_argument("--all", action="store_true",
                        help="score every epoch from the first, not from --margin's guess to where the figure "
                             "is settled")
    parser.add_argument("--scores", metavar="JSON",
                        help="an earlier --out: apply the rule to the epochs it scored, decoding nothing")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", help="JSON path")
    args = parser.parse_args(argv)
    if args.hold is not None and args.hold < 1:
        parser.error("--hold must be at least 1")

    from minitx.serialization import read_json

    run = Path(args.run)
    history = [r for r in read_json(run / "history.json", list) if r.get("complete", True)]
    records = {r["epoch"]: r for r in history}
    last = history[-1]["epoch"]
    scored = {}

    def show(row):
        val = "-" if row.get("val_bleu") is None else f"{row['val_bleu']:.2f}"
        print(f"{row['epoch']:5d} {row['step']:6d} {row['seconds']:10.1f} {val:>8} {row['test_bleu']:9.2f}")

    def settled():
        return crossings({e: r["test_bleu"] for e, r in scored.items()}, args.target, args.hold, last)[1] is not None

    header = f"{'epoch':>5} {'step':>6} {'training s':>10} {'val BLEU':>8} {'test BLEU':>9}"
    if args.scores:
        recorded = read_json(args.scores)
        scored = {r["epoch"]: r for r in recorded["epochs"]}
        print(f"{run}: the test BLEU {args.scores} recorded, beam {recorded.get('beam_size', '?')}, target "
              f"{args.target:g}")
        print(header)
        for epoch in sorted(scored):
            show(scored[epoch])
        beam_size = recorded.get("beam_size")
    else:
        from minitx.data import load_pairs
        from minitx.translate.training import TEST_SPLIT, decoding, evaluate_split, load_run, read_run_config

        kept = {e: run / f"epoch-{e}.npz" for e in records if (run / f"epoch-{e}.npz").exists()}
        if not kept:
            raise SystemExit(f"time_to_bleu: {run} keeps no epoch-<n>.npz of its history's epochs; train it with "
                             f"--keep-epochs true")
        first = history[0]["epoch"]
        start = args.from_epoch or (first if args.all else first_epoch_to_score(history, args.target, args.margin))
        missing = [e for e in records if e >= start and e not in kept]
        if missing:
            raise SystemExit(f"time_to_bleu: {run} lacks the models of epochs {missing[:8]} (kept: "
                             f"{sorted(kept)[:8]}...); was it trained with --keep-epochs true?")
        config = read_run_config(run)
        pairs = load_pairs(TEST_SPLIT, config["src_lang"], config["tgt_lang"], config["data_dir"])
        beam_size = config["beam_size"]

        def score(epoch):
            record = records[epoch]
            _, model, src_tok, tgt_tok = load_run(run, str(kept[epoch]), args.device)
            bleu = evaluate_split(model, src_tok, tgt_tok, pairs, progress=False, lang=config["tgt_lang"],
                                  **decoding(config))["bleu"]
            scored[epoch] = {"epoch": epoch, "step": record["step"], "seconds": record["seconds"],
                             "val_bleu": record.get("val_bleu"), "test_bleu": bleu}
            show(scored[epoch])
            return bleu >= args.target

        print(f"{run}: test2016 {config['src_lang']}-{config['tgt_lang']}, beam {beam_size}, target {args.target:g}")
        print(header)
        for epoch in (e for e in records if e >= start):
            score(epoch)
            if not args.all and settled():
                break
        while scored and scored[min(scored)]["test_bleu"] >= args.target and min(scored) - 1 in kept:
            score(min(scored) - 1)  # the first epoch scored reached it already: so may earlier ones

    first, held = crossings({e: r["test_bleu"] for e, r in scored.items()}, args.target, args.hold, last)
    rule = (f"{args.hold} epochs in a row (or to the run's last, {last})" if args.hold
            else f"every epoch to the run's last ({last})")
    stay = f"for {args.hold} epochs in a row" if args.hold else f"to the run's last ({last})"
    if first is None:
        print(f"did not reach {args.target:g} BLEU in the epochs scored")
    else:
        row = scored[first]
        print(f"first crossing: epoch {first} ({row['test_bleu']:.2f}), step {row['step']}, "
              f"{row['seconds']:.1f} s of training")
    if held is not None:
        row = scored[held]
        span = (last if args.hold is None else min(held + args.hold - 1, last)) - held + 1  # the epochs it rests on
        print(f"time to {args.target:g} BLEU: epoch {held}, step {row['step']}, {row['seconds']:.1f} s of training "
              f"(the first epoch from which {rule} scored at or above {args.target:g}; {span} epoch(s))"
              + (": the run ended too soon after it to show that it stays" if span < (args.hold or 2) else ""))
    elif first is not None:
        unscored = [e for e in records if e > max(scored)]
        print(f"no epoch shown to stay at or above {args.target:g} BLEU {stay}"
              + (f": epochs {unscored[0]}-{unscored[-1]} not scored" if unscored else ""))
    if args.out:
        rows = [scored[e] for e in sorted(scored)]
        Path(args.out).write_text(json.dumps({
            "run": str(run), "target": args.target, "beam_size": beam_size, "hold": args.hold, "last_epoch": last,
            "epochs": rows, "first_crossing": scored[first] if first is not None else None,
            "held": scored[held] if held is not None else None}, indent=1))
    return 0 if held is not None else 1


if __name__ == "__main__":
    sys.exit(main())
