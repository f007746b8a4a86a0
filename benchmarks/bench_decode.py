"""How fast a trained run translates: its model decodes a Multi30k split (test2016 by default)
as ``evaluate`` does (its beam size and length penalty, batches sorted by length), timed
``--repeats`` times; prints seconds, sentences/s and a digest of the translations, so two trees
or two settings that must translate alike can be compared, and say so when they do not.

    PYTHONPATH=$PWD python3 benchmarks/bench_decode.py RUN [--beam-size K] [--sentences N] [--device cpu]

PyTorch has no beam search of its own to run beside it: this compares minitx with minitx (a
commit against another, greedy against beam), and the digest says whether the outputs are the
same strings.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install


def digest(translations) -> str:
    """The first 16 hex digits of the SHA-256 of the translations, one per line."""
    return hashlib.sha256("\n".join(translations).encode("utf-8")).hexdigest()[:16]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("run", help="a run directory made by train")
    parser.add_argument("--checkpoint", default="final", help="as evaluate's --checkpoint (default: final)")
    parser.add_argument("--split", default="test_2016_flickr")
    parser.add_argument("--beam-size", type=int, default=None, help="default: the run's beam_size (1: greedy)")
    parser.add_argument("--sentences", type=int, default=None, help="the split's first N sentences (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="timed decodes of the same sentences (median)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.repeats < 1 or (args.sentences is not None and args.sentences < 1):
        parser.error("--repeats and --sentences take numbers >= 1")

    from minitx.data import load_pairs
    from minitx.translate.evaluation import translate_sentences
    from minitx.translate.training import decoding, load_run

    config, model, src_tok, tgt_tok = load_run(args.run, args.checkpoint, args.device)
    pairs = load_pairs(args.split, config["src_lang"], config["tgt_lang"], config.get("data_dir"))
    sources = [source for source, _ in pairs[:args.sentences]]
    beam_size = args.beam_size if args.beam_size is not None else config["beam_size"]
    seconds, digests = [], set()
    for _ in range(args.repeats):
        started = time.perf_counter()
        # every decoding step reads its log-probabilities on the host: no work is left in flight
        translations, _ = translate_sentences(model, src_tok, tgt_tok, sources,
                                              **{**decoding(config), "beam_size": beam_size})
        seconds.append(time.perf_counter() - started)
        digests.add(digest(translations))
    if len(digests) > 1:
        print(f"bench_decode: the {args.repeats} decodes translated differently: {sorted(digests)}", file=sys.stderr)
        return 1
    median = statistics.median(seconds)
    figures = {"run": str(args.run), "split": args.split, "sentences": len(sources), "beam_size": beam_size,
               "device": args.device, "seconds": [round(s, 3) for s in seconds], "median_seconds": round(median, 3),
               "sentences_per_second": round(len(sources) / median, 1), "digest": digests.pop()}
    print(f"{'sentences':>9} {'beam':>4} {'median s':>9} {'sent/s':>8}  digest")
    print(f"{figures['sentences']:>9} {beam_size:>4} {median:>9.2f} {figures['sentences_per_second']:>8.1f}  "
          f"{figures['digest']}   (runs: {', '.join(f'{s:.2f}' for s in seconds)} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
