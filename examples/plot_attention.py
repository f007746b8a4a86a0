"""Draw a trained model's cross-attention: one heatmap per head, source tokens on x, target on y.

    pip install "minitx[plot]"           # matplotlib
    python examples/plot_attention.py --run runs/cpu-quick-de-en "Ein Mann fährt Fahrrad."

Saves attention-layer<L>.png in the run directory (or --out).
"""
import argparse
from pathlib import Path

import numpy as np

import minitx
from minitx.translate.decoding import greedy_decode
from minitx.translate.training import decoding, load_run


def attention_for(model, src_tok, tgt_tok, sentence, config):
    """Greedy translation, then one teacher-forced pass over it to read every layer's
    cross-attention weights [heads, target, source]; the sentence as the run reads it (its
    text form; an <eos> at its end where the run's sources have one)."""
    how = decoding(config)
    src_ids = src_tok.encode_ids(how["text"].source([sentence])[0])
    if not src_ids:
        raise SystemExit("plot_attention: the sentence is empty")
    if how["source_eos"]:
        src_ids.append(src_tok.eos_id)
    src = np.array([src_ids])
    out_ids = greedy_decode(model, src, tgt_tok.bos_id, tgt_tok.eos_id, tgt_tok.pad_id)[0]
    tgt_in = np.array([[tgt_tok.bos_id] + out_ids])
    weights = []
    with minitx.no_grad():
        memory, src_mask = model.encode(src)
        model.decode(tgt_in, memory, src_mask, attention_weights=weights)
    src_labels = [src_tok.vocab.id_to_token(i) for i in src_ids]
    # row t of the weights is the step that predicted output token t (or <eos> at the end)
    tgt_labels = [tgt_tok.vocab.id_to_token(i) for i in out_ids] + ["<eos>"]
    return [w.numpy()[0] for w in weights], src_labels, tgt_labels, how["text"].output([tgt_tok.decode_ids(out_ids)])[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--checkpoint", default="final", help="final (the run's chosen model), best, last, "
                        "averaged, or a .npz path")
    parser.add_argument("--layer", type=int, default=-1, help="decoder layer (default: the last)")
    parser.add_argument("--out", default=None)
    parser.add_argument("sentence")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit('plot_attention needs matplotlib: pip install "minitx[plot]"') from None

    config, model, src_tok, tgt_tok = load_run(args.run, args.checkpoint, device="cpu")
    layers, src_labels, tgt_labels, translation = attention_for(model, src_tok, tgt_tok, args.sentence, config)
    layer = args.layer % len(layers)
    heads = layers[layer]
    cols = min(4, len(heads))
    rows = (len(heads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols + 1, 3.0 * rows + 1), squeeze=False)
    for h, ax in enumerate(axes.flat):
        if h >= len(heads):
            ax.axis("off")
            continue
        ax.imshow(heads[h], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {h + 1}", fontsize=9)
        ax.set_xticks(range(len(src_labels)), src_labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(tgt_labels)), tgt_labels, fontsize=7)
    fig.suptitle(f"{args.sentence}\n→ {translation}   (decoder layer {layer + 1})", fontsize=9)
    fig.tight_layout()
    out = Path(args.out) if args.out else Path(args.run) / f"attention-layer{layer + 1}.png"
    if not out.suffix:
        out = out.with_suffix(".png")  # (matplotlib adds it to a name without one: print the file it writes)
    fig.savefig(out, dpi=120)
    print(f"translation: {translation}\nsaved {out}")


if __name__ == "__main__":
    main()
