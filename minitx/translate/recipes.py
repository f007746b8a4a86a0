"""Training configurations: the defaults, and named recipes that override some of them.

A run's configuration is DEFAULTS, updated by the recipe, updated by command-line options;
it is written to ``<output_dir>/config.json`` so the run can be resumed and reproduced.
"""
from __future__ import annotations

DEFAULTS = dict(
    # data
    src_lang="de", tgt_lang="en", data_dir=None,
    tokenizer="bpe",          # 'bpe' (lossless subwords) or 'word' (lowercased words, like the tutorials)
    vocab_size=8000,          # BPE: total size (specials and 256 byte tokens included)
    joint_vocab=True,         # BPE: one vocabulary learned on both languages
    min_freq=2,               # word tokenizer: keep words seen this often
    lowercase=False,          # word tokenizer: lowercase the text
    # model
    preset=None, d_model=256, num_heads=4, encoder_layers=3, decoder_layers=3, d_ff=1024,
    dropout=0.1, attention_dropout=None, positional="sinusoidal", share_embeddings=True,
    tie_output=True, output_bias=True, norm_first=False, activation="relu", max_len=128,
    # optimization
    optimizer="adam", lr=1e-3, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.0,
    schedule="inverse_sqrt",  # 'inverse_sqrt' (linear warm-up to lr, then 1/sqrt), 'noam', 'cosine', 'constant'
    warmup_steps=1000, label_smoothing=0.1, clip_norm=1.0,
    max_tokens=4096,          # padded tokens per batch: batch_size * max(src_len, tgt_len)
    epochs=10, max_steps=None, time_limit=None,  # time_limit in minutes (training loop only)
    seed=1, device="auto",
    # evaluation and checkpoints
    bleu_every=1,             # epochs between validation BLEU (0: never)
    bleu_val_sentences=None,  # validation sentences used for BLEU during training (None: all)
    save_every=200,           # steps between 'last' checkpoints (a killed run loses at most this many)
    average_last=0,           # average the last N epoch checkpoints at the end (0: off)
    beam_size=5, length_penalty=0.6,
    output_dir=None,
)

RECIPES = {
    # Two CPU cores, under ten minutes in all: a small pre-norm model with one shared 5k BPE
    # vocabulary, no dropout (it only slows learning in three epochs), small batches (many
    # updates) at a high learning rate; training stops after 900 steps or 8 minutes.
    "cpu-quick": dict(
        vocab_size=5000, d_model=256, num_heads=4, encoder_layers=2, decoder_layers=2, d_ff=1024,
        norm_first=True, dropout=0.0, lr=2e-3, warmup_steps=150, max_tokens=1600, epochs=100,
        max_steps=900, time_limit=8, bleu_every=0, save_every=100, beam_size=4,
    ),
    # The PyTorch seq2seq tutorial's Transformer (9M parameters): word-level lowercased
    # vocabularies per language, learned positions, Adam at a constant 5e-4, 10 epochs.
    "seed004-small": dict(
        tokenizer="word", lowercase=True, min_freq=2, joint_vocab=False, preset="seed004-small",
        lr=5e-4, betas=(0.9, 0.999), eps=1e-8, schedule="constant", warmup_steps=0, label_smoothing=0.0,
        clip_norm=1.0, max_tokens=3000, epochs=10, beam_size=1,
    ),
    # One GPU, best BLEU: joint BPE, shared and tied embeddings, strong dropout, label
    # smoothing, warm-up + inverse square root, beam 5, averaged checkpoints. No dropout on the
    # attention weights, so attention runs as the fused kernel (it has none).
    "gpu-best": dict(
        vocab_size=10000, d_model=512, num_heads=8, encoder_layers=6, decoder_layers=6, d_ff=2048,
        dropout=0.3, attention_dropout=0.0, lr=7e-4, warmup_steps=4000, max_tokens=8192, epochs=60,
        time_limit=15, bleu_every=5, average_last=5, beam_size=5, save_every=500,
    ),
}


def build_config(recipe: str | None = None, **overrides) -> dict:
    """DEFAULTS + RECIPES[recipe] + overrides (None values in overrides are ignored)."""
    if recipe is not None and recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {sorted(RECIPES)}")
    config = dict(DEFAULTS)
    config.update(RECIPES.get(recipe, {}))
    unknown = sorted(k for k in overrides if k not in DEFAULTS)
    if unknown:
        raise ValueError(f"unknown configuration keys {unknown}")
    config.update({k: v for k, v in overrides.items() if v is not None})
    config["recipe"] = recipe
    if config["output_dir"] is None:
        config["output_dir"] = f"runs/{recipe or 'custom'}-{config['src_lang']}-{config['tgt_lang']}"
    return config
