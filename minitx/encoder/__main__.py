"""Command line: ``python -m minitx.encoder {pretrain,finetune,neighbours}``.

    python -m minitx.encoder pretrain --recipe cpu --output-dir runs/encoder-mlm     # 600 steps
    python -m minitx.encoder pretrain --output-dir runs/encoder-mlm --resume         # continue a stopped run
    python -m minitx.encoder finetune --run runs/encoder-mlm --labels 200 1000 5000 --output table.json
    python -m minitx.encoder neighbours --run runs/encoder-mlm --words Hund dog --analogy woman man boy
    python -m minitx.encoder neighbours --run runs/cpu-quick-de-en                    # a translation run's

finetune compares, at each label budget, the pretrained encoder with the same encoder trained
from scratch on parallel-sentence detection, and prints the accuracy table.
"""
from __future__ import annotations

import argparse
import os
import sys

from minitx import cli
from minitx.encoder import finetuning, neighbours, pretraining


def _typed(key, default):
    """The option's converter: booleans as cli.boolean reads them, numbers within
    pretraining.RANGES (argparse makes a refusal a usage error naming the option, exit code 2),
    the rest as text."""
    if isinstance(default, bool):
        return cli.boolean
    if not isinstance(default, (int, float)):
        return str
    return cli.number(type(default), **pretraining.RANGES.get(key, dict(low=0)))


def shown(value) -> str:
    """A default as the options spell it: true, false, none."""
    return str(value).lower() if value is None or isinstance(value, bool) else str(value)


def _add_options(parser, title, defaults, helps, choices, recipes=None):
    """An option for each setting in ``defaults``: its help (``helps``), a word setting's
    ``choices`` listed and checked by argparse, and the default, with the ``recipes``' own values
    where they differ from it."""
    group = parser.add_argument_group(title)
    for key, default in defaults.items():
        changed = ", ".join(f"{name} {shown(values[key])}" for name, values in (recipes or {}).items()
                            if key in values)
        text = f"{helps[key]} [default {shown(default)}" + (f"; recipes: {changed}]" if changed else "]")
        group.add_argument("--" + key.replace("_", "-"), type=_typed(key, default), default=None,
                           choices=choices.get(key), metavar=None if key in choices else key.upper(),
                           help=text.replace("%", "%%"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitx.encoder", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    pre = commands.add_parser("pretrain", help="masked-LM pretraining on Multi30k de + en text")
    pre.add_argument("--recipe", default=None, choices=sorted(pretraining.RECIPES),
                     help="named settings: cpu (600 steps) or tiny (seconds, for a first look) [default cpu; "
                          "with --resume: the run's, and another is refused]")
    pre.add_argument("--output-dir", required=True, help="the run directory")
    pre.add_argument("--resume", action="store_true", help="continue the run in --output-dir exactly")
    pre.add_argument("--overwrite", action="store_true",
                     help="delete the run in --output-dir (a translation run's files too) and start again")
    pre.add_argument("--no-progress", action="store_true", help="no progress bars")
    _add_options(pre, "configuration (default: the recipe's value; with --resume, only save_every, device, "
                      "data_dir and sync_every may differ from the run's)", pretraining.DEFAULTS, pretraining.HELP,
                 pretraining.CHOICES, pretraining.RECIPES)

    fine = commands.add_parser("finetune", help="few-label parallel-sentence detection: pretrained vs scratch")
    fine.add_argument("--run", required=True, help="a pretraining run directory")
    fine.add_argument("--labels", type=cli.number(int, low=finetuning.MIN_LABELS), nargs="+",
                      default=list(finetuning.LABEL_BUDGETS),
                      help="label budgets (labelled pairs) [default 200 1000 5000]")
    fine.add_argument("--output", help="write the table as JSON here")
    fine.add_argument("--data-dir", help="directory with the Multi30k .gz files [default: the run's]")
    fine.add_argument("--no-progress", action="store_true", help="no progress bars (a download's)")
    _add_options(fine, "fine-tuning (the same for every budget and both starting points)", finetuning.DEFAULTS,
                 finetuning.HELP, finetuning.CHOICES)

    near = commands.add_parser("neighbours", help="nearest pieces by cosine similarity, and analogies")
    near.add_argument("--run", required=True, help="a pretraining run or a translation run directory")
    near.add_argument("--words", nargs="*", help=f"words to look up [default {' '.join(neighbours.DEFAULT_WORDS)}]")
    near.add_argument("--analogy", nargs=3, action="append", metavar=("A", "B", "C"),
                      help="pieces nearest to A - B + C (repeatable)")
    near.add_argument("-k", type=cli.positive_int, default=8, help="neighbours per word [default 8]")
    near.add_argument("--side", default="src", choices=("src", "tgt"), help="translation runs: which embedding")

    args = parser.parse_args(argv)
    args.config_before = cli.config_stamp(args.output_dir) if args.command == "pretrain" else None

    def continue_with():  # only pretraining leaves a run to continue
        if args.command != "pretrain":
            return None
        return cli.resume_line(parser.prog, "pretrain", args.output_dir, args.resume, args.config_before)

    return cli.run_command(parser.prog, args.command, lambda: _run(args), continue_with)


def _run(args) -> int:
    if args.command == "pretrain":
        options = {k: getattr(args, k) for k in pretraining.DEFAULTS if getattr(args, k) is not None}
        # a resumed run keeps its saved configuration; only the options given (a --recipe too) are
        # compared with it
        if args.resume:
            config = {**options, **({} if args.recipe is None else {"recipe": args.recipe})}
        else:
            config = pretraining.build_config(args.recipe or "cpu", **options)
        pretraining.pretrain(config, args.output_dir, resume=args.resume, overwrite=args.overwrite,
                             progress=not args.no_progress)
    elif args.command == "finetune":
        if args.output is not None and os.path.isdir(args.output):
            raise ValueError(f"--output {args.output} is a directory; give the path of the JSON file to write")
        options = {k: getattr(args, k) for k in finetuning.DEFAULTS}
        table = finetuning.compare(args.run, args.labels, args.output, args.data_dir,
                                   progress=not args.no_progress, **options)
        print(finetuning.format_table(table))
    else:
        table = neighbours.load_table(args.run, args.side)
        words = neighbours.DEFAULT_WORDS if args.words is None and not args.analogy else (args.words or ())
        analogies = args.analogy or (neighbours.DEFAULT_ANALOGIES if args.words is None else ())
        print(neighbours.report(table, words, analogies, args.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
