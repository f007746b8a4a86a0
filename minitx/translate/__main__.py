"""Command line: ``python -m minitx.translate {train,translate,evaluate,recipes}`` (also ``minitx-translate``).

    python -m minitx.translate train --recipe cpu-quick          # train, then score test2016
    echo "Ein Hund rennt." | python -m minitx.translate translate --run runs/cpu-quick-de-en
    python -m minitx.translate evaluate --run runs/cpu-quick-de-en --beam-size 5
"""
from __future__ import annotations

import argparse
import json
import sys

from minitx.translate.recipes import DEFAULTS, RECIPES, build_config


def _boolean(text: str) -> bool:
    words = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
    if text.lower() not in words:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return words[text.lower()]


def _option_type(default):
    if isinstance(default, bool):
        return _boolean
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    return str


# options whose default is None but whose values are numbers
_NUMERIC = {"max_steps": int, "time_limit": float, "attention_dropout": float, "bleu_val_sentences": int}


def _add_config_options(parser):
    group = parser.add_argument_group("configuration (defaults come from the recipe)")
    for key, default in DEFAULTS.items():
        flag = "--" + key.replace("_", "-")
        if key == "betas":
            group.add_argument(flag, type=float, nargs=2, default=None, metavar=("B1", "B2"))
        else:
            kind = _NUMERIC.get(key) or _option_type(default)
            group.add_argument(flag, type=kind, default=None, metavar=key.upper())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitx.translate",
                                     description="Train and use Transformer translation models on Multi30k.")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a model, then score it on test2016")
    train.add_argument("--recipe", choices=sorted(RECIPES), default="cpu-quick")
    train.add_argument("--resume", action="store_true", help="continue the run in --output-dir from last.npz")
    train.add_argument("--no-progress", action="store_true", help="no progress bars")
    _add_config_options(train)

    translate = commands.add_parser("translate", help="translate lines from a file or stdin to stdout")
    translate.add_argument("--run", required=True, help="a run directory made by train")
    translate.add_argument("--checkpoint", default="best", help="best, last, averaged, or a .npz path")
    translate.add_argument("--input", default="-", help="a text file, one sentence per line ('-': stdin)")
    translate.add_argument("--beam-size", type=int, default=5)
    translate.add_argument("--length-penalty", type=float, default=0.6)
    translate.add_argument("--device", default="auto")

    evaluate = commands.add_parser("evaluate", help="sacreBLEU of a run on a split")
    evaluate.add_argument("--run", required=True)
    evaluate.add_argument("--checkpoint", default="best")
    evaluate.add_argument("--split", default="test_2016_flickr")
    evaluate.add_argument("--beam-size", type=int, default=5)
    evaluate.add_argument("--length-penalty", type=float, default=0.6)
    evaluate.add_argument("--data-dir", default=None)
    evaluate.add_argument("--device", default="auto")
    evaluate.add_argument("--no-progress", action="store_true")

    commands.add_parser("recipes", help="print the recipes and their settings")

    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (ValueError, FileNotFoundError) as error:
        # a bad option, data file, run directory or checkpoint (CheckpointError is a ValueError,
        # DataNotFoundError a FileNotFoundError): the message says what to do, a traceback would not
        print(f"{parser.prog} {args.command}: error: {error}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.command == "recipes":
        print(json.dumps({"defaults": DEFAULTS, **RECIPES}, indent=2, default=list))
        return 0
    if args.command == "train":
        from minitx.translate.training import train as run_training

        overrides = {key: getattr(args, key) for key in DEFAULTS}
        if overrides["betas"] is not None:
            overrides["betas"] = tuple(overrides["betas"])
        config = build_config(args.recipe, **overrides)
        if args.resume:
            # the run keeps its saved config.json; pass on only the options given here, or the
            # recipe's epochs/max_steps/time_limit would silently replace the run's own
            config = {"output_dir": config["output_dir"], **{k: v for k, v in overrides.items() if v is not None}}
        run_training(config, resume=args.resume, progress=not args.no_progress)
        return 0
    return _use_model(args)


def _use_model(args) -> int:
    from minitx.data import load_pairs
    from minitx.translate.evaluation import translate_sentences
    from minitx.translate.training import evaluate_split, load_run

    config, model, src_tok, tgt_tok = load_run(args.run, args.checkpoint, args.device)
    if args.command == "translate":
        stream = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
        with stream:
            lines = [line.rstrip("\r\n") for line in stream]
        outputs, report = translate_sentences(model, src_tok, tgt_tok, lines, beam_size=args.beam_size,
                                              length_penalty=args.length_penalty)
        for line in outputs:
            print(line)
        if report["empty"]:
            print(f"translate: {report['empty']} empty line(s) were left empty", file=sys.stderr)
        return 0
    pairs = load_pairs(args.split, config["src_lang"], config["tgt_lang"], args.data_dir or config["data_dir"])
    scores = evaluate_split(model, src_tok, tgt_tok, pairs, args.beam_size, args.length_penalty,
                            not args.no_progress)
    print(f"{args.split} {config['src_lang']}-{config['tgt_lang']} ({args.checkpoint}, beam {args.beam_size}): "
          f"BLEU {scores['bleu']:.2f}")
    print(f"sacreBLEU signature: {scores['signature']}")
    print(f"lowercased BLEU {scores['bleu_lowercase']:.2f} ({scores['signature_lowercase']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
