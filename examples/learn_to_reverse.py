"""Watch a small Transformer learn to reverse digit strings, in about a minute on a CPU.

    python examples/learn_to_reverse.py              # reverse (the default)
    python examples/learn_to_reverse.py --task copy  # or copy

The model sees a digit string such as 3 1 4 1 5 and must write 5 1 4 1 3. It prints the loss
as it trains, then greedy translations of strings it never saw, the token accuracy, and its
cross-attention as a picture in characters: to write output position t the decoder should look
at source position L-1-t, so for reversal the bright cells run along the anti-diagonal.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import minitx
import minitx.functional as F
from minitx import optim
from minitx.nn import Transformer
from minitx.translate.decoding import greedy_decode

PAD, BOS, EOS = 0, 1, 2
VOCAB = 12  # PAD, BOS, EOS and the digits 0..8 as ids 3..11
MIN_LEN, MAX_LEN = 5, 8
SHADES = " .:-=+*#%@"  # attention weight 0 .. 1


def make_batch(rng, size, task):
    """Source digits [size, MAX_LEN] and targets <bos> + answer + <eos> [size, MAX_LEN + 2], PAD-padded."""
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, size)
    src = np.full((size, MAX_LEN), PAD)
    tgt = np.full((size, MAX_LEN + 2), PAD)
    for row, length in enumerate(lengths):
        digits = rng.integers(3, VOCAB, length)
        src[row, :length] = digits
        tgt[row, 0], tgt[row, length + 1] = BOS, EOS
        tgt[row, 1:length + 1] = digits[::-1] if task == "reverse" else digits
    return src, tgt


def build_model():
    """2+2 pre-norm layers, d_model 32: 44,044 parameters."""
    return Transformer(VOCAB, VOCAB, d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2,
                       d_ff=64, dropout=0.0, max_len=MAX_LEN + 2, norm_first=True, pad_id=PAD)


def train(model, task, steps=500, batch_size=64, seed=0, log_every=0):
    """Adam with warm-up + cosine decay; returns the loss of every step."""
    opt = optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = optim.WarmupCosine(opt, peak_lr=3e-3, warmup_steps=min(50, steps), total_steps=steps, min_lr=1e-4)
    rng = np.random.default_rng(seed)
    losses = []
    for step in range(1, steps + 1):
        src, tgt = make_batch(rng, batch_size, task)
        # teacher forcing: the decoder reads tgt[:, :-1] and is scored on predicting tgt[:, 1:]
        loss = F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
        losses.append(loss.item())
        if log_every and step % log_every == 0:
            print(f"step {step:4d}  loss {np.mean(losses[-log_every:]):.4f}  lr {opt.param_groups[0]['lr']:.2e}")
    return losses


def token_accuracy(model, task, size=500, seed=12345):
    """Greedy decoding on held-out strings (another random stream); digits and <eos> are judged."""
    src, tgt = make_batch(np.random.default_rng(seed), size, task)
    hyps = greedy_decode(model, src, BOS, EOS, PAD, max_len=MAX_LEN + 1)
    predicted = np.full((size, MAX_LEN + 1), PAD)
    for row, ids in enumerate(hyps):
        ids = (list(ids) + [EOS])[: MAX_LEN + 1]  # greedy_decode cuts <eos>: put it back
        predicted[row, : len(ids)] = ids
    reference = tgt[:, 1:]
    judged = reference != PAD
    return ((predicted == reference) & judged).sum() / judged.sum()


def show(ids):
    return " ".join(str(i - 3) for i in ids if i >= 3)


def attention_picture(model, src_row, out_ids):
    """Cross-attention of the last decoder layer, one character per cell, for its sharpest
    head: the one whose rows put the most weight on a single source position."""
    weights = []
    tgt_in = np.array([[BOS, *out_ids]])
    with minitx.no_grad():
        memory, src_mask = model.encode(src_row[None])
        model.decode(tgt_in, memory, src_mask, attention_weights=weights)
    heads = weights[-1].numpy()[0]  # [heads, output positions, source positions]
    head = int(heads.max(axis=2).mean(axis=1).argmax())
    grid = heads[head]
    length = int((src_row != PAD).sum())
    lines = [f"  head {head + 1} of {len(heads)}; source: " + " ".join(str(i - 3) for i in src_row[:length])]
    for t, row in enumerate(grid[: len(out_ids)]):
        cells = " ".join(SHADES[min(int(w * len(SHADES)), len(SHADES) - 1)] for w in row[:length])
        lines.append(f"  {'output ' + str(out_ids[t] - 3):>22s}:  {cells}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=("reverse", "copy"), default="reverse")
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()

    minitx.manual_seed(0)
    model = build_model()
    print(f"{args.task}: a {model.num_parameters():,}-parameter Transformer, {args.steps} steps of 64 strings")
    start = time.perf_counter()
    train(model, args.task, args.steps, log_every=max(args.steps // 10, 1))
    print(f"trained in {time.perf_counter() - start:.1f} s")

    model.eval()
    src, _ = make_batch(np.random.default_rng(7), 4, args.task)
    hyps = greedy_decode(model, src, BOS, EOS, PAD, max_len=MAX_LEN + 1)
    for row, ids in zip(src, hyps):
        print(f"  {show(row):>16s}  ->  {show(ids)}")
    print(f"greedy token accuracy on 500 new strings: {token_accuracy(model, args.task):.4f}")
    print("\nwhere the decoder looks while writing each output digit (brighter = more weight):")
    print(attention_picture(model, src[0], [i for i in hyps[0] if i >= 3]))


if __name__ == "__main__":
    main()
