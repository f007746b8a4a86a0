"""Pretrain a small encoder with masked-language modelling, watch it fill in blanks, then
fine-tune it with few labels and compare with the same encoder trained from scratch.

    python examples/pretrain_and_finetune.py                       # a small run: ~5 minutes on 2 CPU cores
    python examples/pretrain_and_finetune.py --run runs/encoder-mlm  # use a finished pretraining run

1. Pretraining: BERT's masking on Multi30k's German and English training sentences; the model
   predicts the hidden pieces from both sides of them.
2. Fill in the blank: one piece of a caption is replaced by [MASK]; the model's best guesses.
3. Few labels: is the English caption the German one's translation? 1,000 labelled pairs,
   the pretrained encoder against a fresh one, scored on 2,000 pairs from test2016.
4. The embeddings: the pieces nearest to a few words.
"""
from __future__ import annotations

import argparse
import tempfile

import numpy as np

import minitx
from minitx.encoder import finetuning, neighbours, pretraining

CAPTIONS = ["A dog is running through the grass .", "Ein Mann fährt Fahrrad auf der Straße .",
            "Two children are playing in the water ."]


@minitx.no_grad()
def fill_in(model, vocab, text, k=5):
    """Mask the middle piece of ``text``; (the pieces with the blank, the masked piece, the top-k guesses)."""
    ids = np.array([vocab.sentence(text)])
    position = ids.shape[1] // 2
    hidden = int(ids[0, position])
    ids[0, position] = vocab.mask_id
    logits = model(ids).numpy()[0, position]
    low, high = vocab.random_ids
    logits[:low] = logits[high:] = -np.inf  # guesses among the learned pieces (no specials, bytes or [MASK])
    guesses = [vocab.piece(i) for i in np.argsort(-logits)[:k]]
    return " ".join(vocab.piece(i) for i in ids[0, 1:-1]), vocab.piece(hidden), guesses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", help="a finished pretraining run (python -m minitx.encoder pretrain ...)")
    parser.add_argument("--steps", type=int, default=200, help="pretraining steps of the small run [200]")
    parser.add_argument("--labels", type=int, default=1000, help="labelled pairs for fine-tuning [1000]")
    parser.add_argument("--finetune-steps", type=int, default=150, help="fine-tuning steps of each model [150]")
    parser.add_argument("--data-dir", help="directory with the Multi30k .gz files")
    args = parser.parse_args()

    run = args.run
    if run is None:
        run = tempfile.mkdtemp(prefix="encoder-example-")
        print(f"1. pretraining a small encoder for {args.steps} steps in {run} (kept: pass --run {run} to reuse it)")
        config = pretraining.build_config("cpu", data_dir=args.data_dir, vocab_size=4000, d_model=64, num_layers=2,
                                          d_ff=256, max_steps=args.steps, warmup_steps=min(40, args.steps),
                                          save_every=0)
        pretraining.pretrain(config, run)
    _, model, vocab = pretraining.load_pretrained(run)

    print("\n2. fill in the blank (pieces; ▁ marks a space before the piece)")
    for text in CAPTIONS:
        shown, hidden, guesses = fill_in(model, vocab, text)
        print(f"   {shown}\n      hidden: {hidden}   guesses: {', '.join(guesses)}")

    print(f"\n3. parallel-sentence detection with {args.labels} labelled pairs")
    table = finetuning.compare(run, [args.labels], data_dir=args.data_dir, steps=args.finetune_steps,
                               warmup_steps=min(15, args.finetune_steps))
    print(finetuning.format_table(table))

    print("\n4. nearest pieces by cosine similarity of the embeddings")
    print(neighbours.report(neighbours.load_table(run), ["dog", "Hund", "red", "rot"], k=5))


if __name__ == "__main__":
    main()
