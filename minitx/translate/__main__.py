"""Command line: ``python -m minitx.translate {train,translate,evaluate,recipes,plot}`` (also ``minitx-translate``).

    python -m minitx.translate train --recipe cpu-quick          # train, then score test2016
    echo "Ein Hund rennt." | python -m minitx.translate translate --run runs/cpu-quick-de-en
    python -m minitx.translate evaluate --run runs/cpu-quick-de-en --beam-size 5
    python -m minitx.translate train --recipe cpu-quick --resume  # continue it (e.g. with --max-steps 2000)
    python -m minitx.translate plot --run runs/cpu-quick-de-en     # loss, BLEU, learning rate: history.png

A new run refuses an --output-dir that already holds one: --resume continues it, --overwrite
deletes it first. translate and evaluate decode with the run's own beam_size and
length_penalty unless --beam-size / --length-penalty are given.
"""
from __future__ import annotations

import argparse
import json
import sys

from minitx import cli
from minitx.translate.recipes import CHOICES, DEFAULTS, HELP, RECIPES, build_config, validate_config

DEFAULT_RECIPE = "cpu-quick"


def _option_type(default):
    """How a configuration option's text is read; the values themselves are checked by
    validate_config, with every other setting, before anything runs."""
    if isinstance(default, bool):
        return cli.boolean
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    return str


# options whose default is None but whose values are numbers
_NUMERIC = {"max_steps": int, "time_limit": float, "attention_dropout": float, "activation_dropout": float,
            "bleu_val_sentences": int, "sync_every": int, "beam_size": cli.positive_int}
# options whose default is None (auto) but whose values are true or false
_AUTO_BOOLEAN = ("static_shapes", "cuda_graphs")
# options whose default is None (auto) but whose values are one of CHOICES
_AUTO_CHOICE = ("precision", "attention_kernels")


def _choice_or_auto(choices):
    def read(text):
        if text == "auto":
            return None
        if text not in choices:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(choices)} or auto, got {text!r}")
        return text
    return read


def _shown(value, key=None) -> str:
    if value is None:
        return "auto" if key in _AUTO_BOOLEAN + _AUTO_CHOICE else "none"
    return str(value).lower() if isinstance(value, bool) else (
        " ".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value))


def _help_text(key: str) -> str:
    """HELP[key], the default, and the recipes' own values where they differ from it."""
    recipes = {name: build_config(name)[key] for name in RECIPES if key != "output_dir"}
    changed = ", ".join(f"{name} {_shown(v, key)}" for name, v in recipes.items() if v != DEFAULTS[key])
    if key == "output_dir":
        return HELP[key]
    text = f"{HELP[key]} [default {_shown(DEFAULTS[key], key)}" + (f"; recipes: {changed}]" if changed else "]")
    return text.replace("%", "%%")


def _add_config_options(parser):
    group = parser.add_argument_group(
        "configuration", "Each option's default comes from the recipe: [default X; recipes: NAME Y] shows the "
        f"general default and the recipes that change it (--recipe defaults to {DEFAULT_RECIPE}). With --resume, "
        "only options that do not change the run may differ from its config.json.")
    for key, default in DEFAULTS.items():
        flag = "--" + key.replace("_", "-")
        if key == "betas":
            group.add_argument(flag, type=float, nargs=2, default=None, metavar=("B1", "B2"), help=_help_text(key))
        elif key in _AUTO_CHOICE:
            group.add_argument(flag, type=_choice_or_auto(CHOICES[key]), default=None,
                               metavar="{" + ",".join((*CHOICES[key], "auto")) + "}", help=_help_text(key))
        else:
            kind = cli.boolean_or_auto if key in _AUTO_BOOLEAN else _NUMERIC.get(key) or _option_type(default)
            choices = CHOICES.get(key)  # shown as {a,b,...} in place of a metavar
            group.add_argument(flag, type=kind, default=None, choices=choices,
                               metavar=None if choices else key.upper(), help=_help_text(key))


def _add_run_options(parser):
    """The options of the commands that use a trained run (translate, evaluate)."""
    parser.add_argument("--run", required=True, help="a run directory made by train")
    parser.add_argument("--checkpoint", default="final",
                        help="final (the model the finished run chose and scored: best or averaged), best, last, "
                             "averaged, epoch-<n> (kept for averaging), or a .npz file (a bare name such as "
                             "best.npz is the run's; a path, ./best.npz, is taken as given)")
    parser.add_argument("--beam-size", type=cli.positive_int, default=None,
                        help="beam width, 1: greedy (default: the run's beam_size)")
    parser.add_argument("--length-penalty", type=float, default=None,
                        help="beam length penalty (default: the run's length_penalty)")
    parser.add_argument("--beam-search", choices=CHOICES["beam_search"], default=None,
                        help="the beam search, gnmt or fairseq (default: the run's beam_search)")
    parser.add_argument("--device", default="auto", help="'auto', 'cpu' or 'cuda'")
    return parser


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitx.translate",
                                     description="Train and use Transformer translation models on Multi30k.")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a model, then score it on test2016")
    train.add_argument("--recipe", choices=sorted(RECIPES), default=None,
                       help=f"named settings (default {DEFAULT_RECIPE}); 'recipes' prints them")
    train.add_argument("--resume", action="store_true",
                       help="continue the run in --output-dir from last.npz, with its saved config.json")
    train.add_argument("--overwrite", action="store_true",
                       help="delete the run already in --output-dir (tokenizers, checkpoints, history, results; "
                            "a pretraining run's too) and start a new one")
    train.add_argument("--no-progress", action="store_true", help="no progress bars")
    _add_config_options(train)

    translate = _add_run_options(
        commands.add_parser("translate", help="translate lines from a file or stdin to stdout"))
    translate.add_argument("--input", default="-", help="a text file, one sentence per line ('-': stdin)")

    evaluate = _add_run_options(commands.add_parser("evaluate", help="sacreBLEU of a run on a split"))
    evaluate.add_argument("--split", default="test_2016_flickr", help="a Multi30k split")
    evaluate.add_argument("--data-dir", default=None, help="the Multi30k files (default: the run's data_dir)")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.add_argument("--output", default=None,
                          help="also write the scores, the decoding settings and the translations to this JSON file")

    commands.add_parser("recipes", help="print the recipes and their settings")

    plot = commands.add_parser("plot", help="draw a run's loss, BLEU and learning-rate curves into a PNG "
                                            "(needs matplotlib: pip install \"minitx[plot]\")")
    plot.add_argument("--run", required=True, help="a run directory made by train")
    plot.add_argument("--output", default=None, help="the PNG file (default: <run>/history.png)")

    args = parser.parse_args(argv)

    def continue_with():  # the resume command, where an interrupted train left a run to continue
        run_dir = getattr(args, "run_dir", None)
        return None if run_dir is None else cli.resume_line(parser.prog, "train", run_dir, args.resume,
                                                            args.config_before)

    return cli.run_command(parser.prog, args.command, lambda: _run(args), continue_with)


def _run(args) -> int:
    if args.command == "recipes":
        print(json.dumps({"defaults": DEFAULTS, **RECIPES}, indent=2, default=list))
        return 0
    if args.command == "plot":
        from minitx.translate.plotting import plot_history

        print(f"saved {plot_history(args.run, args.output)}")
        return 0
    if args.command == "train":
        from minitx.train.lifecycle import check_resume_or_overwrite
        from minitx.translate.training import train as run_training

        overrides = {key: getattr(args, key) for key in DEFAULTS}
        if overrides["betas"] is not None:
            overrides["betas"] = tuple(overrides["betas"])
        check_resume_or_overwrite(args.resume, args.overwrite)
        if args.resume:
            # the run keeps its saved config.json; pass on only the options given here (the run
            # refuses those that would change it), or the recipe's epochs/max_steps/time_limit
            # would silently replace the run's own
            output_dir = build_config(args.recipe or DEFAULT_RECIPE, **overrides)["output_dir"]
            config = {"output_dir": output_dir, **{k: v for k, v in overrides.items() if v is not None}}
            if args.recipe is not None:
                config["recipe"] = args.recipe
        else:
            config = build_config(args.recipe or DEFAULT_RECIPE, **overrides)  # (train validates it, once)
        args.run_dir, args.config_before = config["output_dir"], cli.config_stamp(config["output_dir"])
        run_training(config, resume=args.resume, progress=not args.no_progress, overwrite=args.overwrite)
        return 0
    return _use_model(args)


def _read_input(name) -> list:
    """The lines of --input (a file, or '-': stdin) without their line ends, and without the
    byte-order mark some editors write first (it is not part of line 1's sentence); text that is
    not UTF-8 is an error naming the input and the line."""
    from minitx.data.multi30k import text_lines, utf8_text

    if name == "-" and not hasattr(sys.stdin, "buffer"):  # a stream of text already (one a caller set)
        text = sys.stdin.read().removeprefix("\ufeff")
    else:
        with sys.stdin.buffer if name == "-" else open(name, "rb") as stream:
            text = utf8_text(stream.read(), "stdin" if name == "-" else name)  # (less a byte-order mark)
    # the lines as the corpus reader splits them: a lone "\r" inside a sentence makes neither two
    # lines of it nor two translations
    return text_lines(text)


def _use_model(args) -> int:
    from minitx.data import ensure_files, read_pairs
    from minitx.translate.evaluation import report_lines, translate_sentences
    from minitx.train import runs_data_dir
    from minitx.translate.training import checkpoint_path, decoding, evaluate_split, load_run, moses_line

    given = {key: getattr(args, key) for key in ("beam_size", "length_penalty", "beam_search", "device", "data_dir")
             if getattr(args, key, None) is not None}
    validate_config(given, only=given)  # as train validates them, before anything is loaded
    config, model, src_tok, tgt_tok = load_run(args.run, args.checkpoint, args.device)
    # decoded as the run itself decodes, but for the options given here
    how = decoding(config)
    how.update({key: value for key, value in (("beam_size", args.beam_size), ("length_penalty", args.length_penalty),
                                              ("search", args.beam_search)) if value is not None})
    text = how["text"]
    if args.command == "translate":
        lines = _read_input(args.input)
        outputs, report = translate_sentences(model, src_tok, tgt_tok, lines, **how)
        for line in outputs:
            print(line)
        for message in report_lines(report, model.max_len, how["source_eos"]):
            print(f"translate: {message}", file=sys.stderr)
        return 0
    data_dir = args.data_dir if args.data_dir is not None or config["data_dir"] is None else runs_data_dir(config)
    files = ensure_files(args.split, (config["src_lang"], config["tgt_lang"]), data_dir, progress=not args.no_progress)
    pairs = read_pairs(args.split, files)
    print(f"evaluate: data read from {files[0].parent}", file=sys.stderr)  # (the search may have found another)
    scores = evaluate_split(model, src_tok, tgt_tok, pairs, progress=not args.no_progress, lang=config["tgt_lang"],
                            **how)
    for message in report_lines(scores, model.max_len, how["source_eos"]):
        print(f"evaluate: {message}", file=sys.stderr)
    print(f"{args.split} {config['src_lang']}-{config['tgt_lang']} ({checkpoint_path(args.run, args.checkpoint).stem}, "
          f"beam {how['beam_size']}{', fairseq search' if how['search'] == 'fairseq' else ''}): BLEU {scores['bleu']:.2f}")
    print(f"sacreBLEU signature: {scores['signature']}")
    if text.score_note():
        print(text.score_note())
    print(f"lowercased BLEU {scores['bleu_lowercase']:.2f} ({scores['signature_lowercase']})")
    print(f"lowercased-token BLEU {scores['bleu_tokens_lowercase']:.2f} as the PyTorch tutorials compute it "
          f"({scores['signature_tokens']})")
    print(moses_line(scores))
    if args.output:
        _write_scores(args.output, args.split, config, checkpoint_path(args.run, args.checkpoint), how, scores)
    return 0


def _write_scores(path, split, config, checkpoint, how, scores) -> None:
    """evaluate's scores as JSON, with what they are of: results.json's fields for a split scored
    again (another checkpoint, beam or search), and every translation, in the split's order."""
    from pathlib import Path

    from minitx.serialization import write_json

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"split": split, "direction": f"{config['src_lang']}-{config['tgt_lang']}", "checkpoint": str(checkpoint),
              "text": how["text"].form, "beam_size": how["beam_size"], "length_penalty": how["length_penalty"],
              "beam_search": how["search"],
              **{key: value for key, value in scores.items() if key != "translations"},
              "translations": scores["translations"]}
    write_json(path, record, indent=2, ensure_ascii=False)
    print(f"evaluate: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
