"""Training configurations: the options, their defaults, named recipes, and validation.

A run's configuration is DEFAULTS, updated by the model preset's settings (when a preset is
chosen), by the recipe, then by the options given (command line or keywords); it is written
to ``<output_dir>/config.json`` so the run can be resumed and reproduced. ``validate_config``
checks a whole configuration before anything is written.
"""
from __future__ import annotations

import inspect
import math
import re

from minitx import optim
from minitx.amp import PRECISIONS
from minitx.data import BPETokenizer, WordTokenizer
from minitx.data.multi30k import LANGUAGES
from minitx.nn.transformer import PRESETS, Transformer
from minitx.sync import GPU_SYNC_EVERY
from minitx.train import DATA_KEYS
from minitx.translate.text import TEXT_FORMS

# The choices of the configuration, each one table: name -> (what it builds, one line of help).
# The command line's choices and help and the construction (training.build_tokenizers,
# training.build_optimizer) all read these.
TOKENIZERS = {
    "bpe": (BPETokenizer, "lossless subwords"),
    "word": (WordTokenizer, "words and punctuation, lowercased only with lowercase=true (the seed004-small "
                            "recipe sets it)"),
}
OPTIMIZERS = {
    "adam": (optim.Adam, "weight decay as an L2 term of the gradient"),
    "adamw": (optim.AdamW, "decoupled weight decay"),
}
PLATEAU_FACTOR, PLATEAU_PATIENCE = 0.5, 1  # the 'plateau' schedule: halve the lr after two flat epochs
SCHEDULES = {  # each builder takes (optimizer, config, d_model)
    "inverse_sqrt": (lambda opt, config, d_model: optim.WarmupInverseSqrt(
        opt, peak_lr=config["lr"], warmup_steps=max(1, config["warmup_steps"])),
        "linear warm-up to lr, then 1/sqrt"),
    "noam": (lambda opt, config, d_model: optim.NoamSchedule(
        opt, d_model=d_model, warmup_steps=max(1, config["warmup_steps"])),
        "the paper's, scaled by d_model (lr unused)"),
    "cosine": (lambda opt, config, d_model: optim.WarmupCosine(
        opt, peak_lr=config["lr"], warmup_steps=config["warmup_steps"], total_steps=config["max_steps"]),
        "linear warm-up, then a cosine decay to 0 at max_steps (needs max_steps)"),
    "plateau": (lambda opt, config, d_model: optim.ReduceLROnPlateau(
        opt, factor=PLATEAU_FACTOR, patience=PLATEAU_PATIENCE),
        "lr from the start, halved when two epochs in a row bring no lower validation loss; no warm-up"),
    "constant": (lambda opt, config, d_model: None, "lr throughout"),
}


def _choices_help(table) -> str:
    return "; ".join(f"'{name}': {text}" for name, (_, text) in table.items())


# key: (default, one line of help). DEFAULTS and HELP below are read from this table; the
# command line makes one --option per key (underscores become dashes), with this help text.
OPTIONS = {
    # data
    "src_lang": ("de", "source language (en, de, fr, cs)"),
    "tgt_lang": ("en", "target language (en, de, fr, cs)"),
    "data_dir": (None, "directory with the Multi30k .gz files (else $MINITX_DATA_DIR, the cache, or a download)"),
    "text": ("as-is", "the text's form before tokenizing: " + "; ".join(f"'{name}': {text}" for name, text in
                                                                   TEXT_FORMS.items())),
    "tokenizer": ("bpe", _choices_help(TOKENIZERS)),
    "vocab_size": (8000, "BPE: total vocabulary size (the 4 specials and 256 byte tokens included)"),
    "joint_vocab": (True, "one vocabulary learned on both languages (needed by share_embeddings)"),
    "min_freq": (2, "word tokenizer: keep words seen at least this often"),
    "lowercase": (False, "word tokenizer: lowercase the text"),
    # model
    "preset": (None, "start from a Transformer preset's settings (seed004-small, base); "
                     "model options given here still apply"),
    "d_model": (256, "model width"),
    "num_heads": (4, "attention heads (must divide d_model)"),
    "encoder_layers": (3, "encoder layers"),
    "decoder_layers": (3, "decoder layers"),
    "d_ff": (1024, "feed-forward hidden width"),
    "dropout": (0.1, "dropout on embeddings and residual branches (and, by default, the two below)"),
    "attention_dropout": (None, "dropout on attention weights (None: same as dropout)"),
    "activation_dropout": (None, "dropout on the feed-forward's hidden activations (None: same as dropout)"),
    "positional": ("sinusoidal", "position encoding: 'sinusoidal' or 'learned'"),
    "share_embeddings": (True, "one embedding table for both languages; only with joint_vocab (with separate "
                               "vocabularies the default quietly turns it off)"),
    "tie_output": (True, "the output layer reuses the target embedding matrix"),
    "output_bias": (True, "a bias on the output layer"),
    "embed_init": ("xavier", "the embedding tables' initialization: 'xavier' (uniform, as every matrix) or 'normal' "
                             "(N(0, 1/d_model), the padding row 0: fairseq's)"),
    "norm_first": (False, "pre-norm layers (LayerNorm before each sublayer) instead of post-norm"),
    "activation": ("relu", "feed-forward activation: 'relu' or 'gelu'"),
    "max_len": (128, "positions of the model, in tokens; longer training pairs are left out"),
    "source_eos": (False, "end every source sentence with <eos> in the model's input (fairseq's data do)"),
    # optimization
    "optimizer": ("adam", _choices_help(OPTIMIZERS)),
    "lr": (1e-3, "peak learning rate (after warm-up); unused by the 'noam' schedule, which scales by d_model"),
    "betas": ((0.9, 0.98), "Adam's beta1 and beta2"),
    "eps": (1e-9, "Adam's epsilon"),
    "weight_decay": (0.0, "weight decay (L2 for adam, decoupled for adamw)"),
    "schedule": ("inverse_sqrt", _choices_help(SCHEDULES)),
    "warmup_steps": (1000, "steps of linear learning-rate warm-up"),
    "label_smoothing": (0.1, "label smoothing of the training loss (0: none)"),
    "clip_norm": (1.0, "clip the gradients' global norm to this (0: no clipping)"),
    "max_tokens": (4096, "padded tokens per batch: batch_size * max(src_len, tgt_len)"),
    "accumulate": (1, "batches per optimizer step, their gradients accumulated: the step of a batch of "
                      "accumulate * max_tokens tokens in the memory of one"),
    "epochs": (10, "epochs to train (an upper bound when max_steps or time_limit stops earlier)"),
    "max_steps": (None, "stop after this many optimizer steps (None: no limit)"),
    "time_limit": (None, "stop after this many MINUTES of training (the loop only; None: no limit); your own "
                         "cap, never set by a recipe (recipes are steps or epochs)"),
    "seed": (1, "random seed: initialization, batch order, dropout"),
    "device": ("auto", "'auto' (the GPU when usable), 'cpu' or 'cuda'"),
    # how the steps run on the device (not what they compute: the same bits either way)
    "sync_every": (None, "read the device back (loss, checks) every N steps instead of every step: the step "
                         "itself never waits for the GPU, and a failed check still stops the run naming its "
                         f"step (None: {GPU_SYNC_EVERY} on the GPU, every step on the CPU)"),
    "static_shapes": (None, "pad every batch to one of a few fixed shapes (width to a multiple of 8, rows to "
                            "the most that width allows); the padding is masked, the losses unchanged (None: "
                            "on where the steps are captured as CUDA graphs; a run records its choice)"),
    "cuda_graphs": (None, "on the GPU, capture each batch shape's step as a CUDA graph and replay it (the same "
                          "bits; needs nvmath-python and accumulate 1; best with static_shapes; None: on where "
                          "the run is on a GPU, nvmath-python is installed, accumulate is 1 and shapes are static)"),
    "precision": (None, "the training step's precision: " + "; ".join(f"'{name}': {text}" for name, text in
                                                                        PRECISIONS.items())
                  + " (None: tf32 on a GPU with TF32 tensor cores, fp32 elsewhere; a run records its choice)"),
    "attention_kernels": (None, "on the GPU, the fused attention's kernels: 'cuda-cores' (attention.cu) or "
                                "'tensor-cores' (attention_mma.cu: mma.sync, on compute capability 8.0+ in precision "
                                "tf32 or bf16; slower than the CUDA cores at Multi30k's sizes) (auto: tensor-cores under "
                                "MINITX_ATTENTION_MMA=1 where they can run, cuda-cores otherwise; a run records its "
                                "choice and keeps it when resumed)"),
    # evaluation and checkpoints
    "bleu_every": (1, "epochs between validation BLEU measurements (0: never; lowercased BLEU where the text "
                      "form is lowercase)"),
    "bleu_val_sentences": (None, "validation sentences used for BLEU during training (None: all)"),
    "save_every": (200, "steps between 'last' checkpoints (0: only at the end of each epoch); a killed run "
                        "loses at most this many steps"),
    "patience": (0, "stop once this many epochs in a row have ended without a lower validation loss "
                    "(fairseq's --patience; 0: never)"),
    "average_last": (0, "average the last N epoch checkpoints at the end (0 or 1: off)"),
    "keep_epochs": (False, "keep every epoch's model (epoch-<n>.npz), not only the last average_last: "
                           "benchmarks/time_to_bleu.py scores them to find when a run reached a BLEU"),
    "beam_size": (5, "beam width for the final test translation (1: greedy)"),
    "length_penalty": (0.6, "beam search length penalty alpha: scores divided by ((5 + n) / 6) ^ alpha (gnmt) or "
                            "n ^ alpha (fairseq), n the tokens with <eos>"),
    "beam_search": ("gnmt", "the beam search: 'gnmt' (finished hypotheses keep their places in the beam until all "
                            "are finished; Wu et al.'s length penalty) or 'fairseq' (fairseq's: finished ones leave "
                            "the beam, which goes on with beam_size live ones until beam_size have finished)"),
    "output_dir": (None, "the run directory (default: runs/<recipe>-<src>-<tgt>)"),
}
DEFAULTS = {key: default for key, (default, _) in OPTIONS.items()}
HELP = {key: text for key, (_, text) in OPTIONS.items()}

# options whose values are a fixed set (None is also allowed for those in _MAY_BE_NONE)
CHOICES = {
    "text": tuple(TEXT_FORMS),
    "tokenizer": tuple(TOKENIZERS),
    "beam_search": ("gnmt", "fairseq"),
    "positional": ("sinusoidal", "learned"),
    "embed_init": ("xavier", "normal"),
    "activation": ("relu", "gelu"),
    "optimizer": tuple(OPTIMIZERS),
    "schedule": tuple(SCHEDULES),
    "preset": tuple(sorted(PRESETS)),
    "precision": tuple(PRECISIONS),
    "attention_kernels": ("cuda-cores", "tensor-cores"),
}
# no preset; the device's precision and attention kernels (translate.training)
_MAY_BE_NONE = ("preset", "precision", "attention_kernels")

# configuration key -> Transformer argument: the one mapping used to build every model,
# from a preset or not
MODEL_ARGS = {
    "d_model": "d_model", "num_heads": "num_heads", "encoder_layers": "num_encoder_layers",
    "decoder_layers": "num_decoder_layers", "d_ff": "d_ff", "dropout": "dropout",
    "attention_dropout": "attention_dropout", "activation_dropout": "activation_dropout", "max_len": "max_len",
    "positional": "positional",
    "share_embeddings": "share_embeddings", "tie_output": "tie_output", "output_bias": "output_bias",
    "norm_first": "norm_first", "activation": "activation", "embed_init": "embed_init",
}

# Transformer-Tiny's settings, which the two multi30k-tiny recipes below share
_TINY = dict(
    vocab_size=10000, d_model=128, num_heads=4, encoder_layers=4, decoder_layers=4, d_ff=256,
    dropout=0.3, label_smoothing=0.1, lr=5e-3, schedule="inverse_sqrt", warmup_steps=2000,
    max_tokens=8192, epochs=300, max_steps=8000, average_last=10, bleu_every=0, save_every=200,
    beam_size=5,
)

# Every recipe is a number of steps or epochs, so the same recipe and seed train the same model
# on any machine; --time-limit is the user's own cap, never part of a recipe.
RECIPES = {
    # A small pre-norm model with one shared 5k BPE vocabulary, no dropout (it only slows
    # learning in three epochs), small batches (many updates) at a high learning rate, for 850
    # steps (about three epochs; epochs=100 is only an upper bound). Its runs: results/README.md.
    "cpu-quick": dict(
        vocab_size=5000, d_model=256, num_heads=4, encoder_layers=2, decoder_layers=2, d_ff=1024,
        norm_first=True, dropout=0.0, lr=2e-3, warmup_steps=150, max_tokens=1600, epochs=100,
        max_steps=850, bleu_every=0, save_every=100, beam_size=4,
    ),
    # cpu-quick's model one layer deeper on each side, with dropout 0.1 and larger batches, for
    # 1,650 steps (about eight epochs); the run ends on the better, by validation loss, of the
    # best epoch and the last three averaged. Its runs: results/README.md.
    "cpu-long": dict(
        vocab_size=5000, d_model=256, num_heads=4, encoder_layers=3, decoder_layers=3, d_ff=1024,
        norm_first=True, dropout=0.1, lr=1.5e-3, warmup_steps=300, max_tokens=2500, epochs=100,
        max_steps=1650, average_last=3, bleu_every=0, save_every=100, beam_size=4,
    ),
    # The PyTorch seq2seq tutorial's Transformer (9M parameters): word-level lowercased
    # vocabularies per language, learned positions, Adam at a constant 5e-4, 10 epochs. The
    # model settings come from the Transformer preset of the same name.
    "seed004-small": dict(
        tokenizer="word", lowercase=True, min_freq=2, joint_vocab=False, preset="seed004-small",
        lr=5e-4, betas=(0.9, 0.999), eps=1e-8, schedule="constant", warmup_steps=0, label_smoothing=0.0,
        clip_norm=1.0, max_tokens=3000, epochs=10, beam_size=1,
    ),
    # The paper's base model (6+6 layers, d_model 512, 8 heads, d_ff 2048, dropout 0.1,
    # post-norm; 56.4M parameters with this recipe's 8k vocabulary and an embedding per language) trained as the seed recipes
    # do, English-German with ReduceLROnPlateau: Adam at 1e-4 from the first step, halved when
    # two epochs in a row bring no lower validation loss, three epochs (pass --epochs for more).
    "base": dict(
        preset="base", src_lang="en", tgt_lang="de", lr=1e-4, schedule="plateau", warmup_steps=0, max_tokens=4096, epochs=3,
        save_every=100, beam_size=5,
    ),
    # One GPU, best BLEU: cpu-long's pre-norm model twice as wide (d_model 512, d_ff 2048, 8
    # heads, 3+3 layers, 24.6M parameters, one shared 5k BPE vocabulary), strong dropout (0.3,
    # also on the attention weights), label smoothing, batches of 4,096 tokens, warm-up and a
    # cosine decay over 4,000 steps (about 29 epochs), the better of the best and the last five
    # epochs averaged, beam 5. It replaced an earlier gpu-best (the paper's base model) that
    # learned far more slowly; both runs, and this recipe's, are in results/README.md.
    "gpu-best": dict(
        vocab_size=5000, d_model=512, num_heads=8, encoder_layers=3, decoder_layers=3, d_ff=2048,
        norm_first=True, dropout=0.3, lr=1e-3, schedule="cosine", warmup_steps=600, max_tokens=4096,
        epochs=100, max_steps=4000, average_last=5, bleu_every=0, save_every=100, beam_size=5,
    ),
    # Transformer-Tiny's model and schedule (Wu et al. 2021, LividWo/Revisit-MMT, the best published
    # text-only Multi30k scores) on minitx's text and defaults: 4+4 post-norm layers, d_model 128,
    # d_ff 256, 4 heads (about 2.6M parameters with a 10k joint vocabulary), all embeddings shared,
    # dropout 0.3 (minitx's: also on the attention weights and the feed-forward's activations),
    # label smoothing 0.1, Adam at 0.005 with 2,000 warm-up steps then 1/sqrt, 8,000 updates of
    # about 8k tokens, the last 10 epochs averaged, beam 5; the text cased, as Multi30k writes it.
    "multi30k-tiny": _TINY,
    # The same as Wu et al. trained it, where it differs from multi30k-tiny: the text lowercased and
    # Moses-tokenized (the multi30k-wmt18 release's *.lc.norm.tok.* files, BPE learned on them),
    # dropout 0.3 on the embeddings and residual branches only (fairseq's attention and activation
    # dropout are 0), fairseq's Adam epsilon 1e-8 and gradient clipping at 25, fairseq's embeddings
    # (drawn from N(0, 1/d_model); no bias on the output layer), sources ending in <eos> as
    # fairseq's data do, and fairseq's beam search, its scores divided by the length (length
    # penalty 1). Their 41.02 (en-de) is the lowercased, Moses-tokenized BLEU
    # that evaluate prints beside sacreBLEU's; this recipe's and multi30k-tiny's runs are in
    # results/README.md.
    "multi30k-tiny-published": dict(_TINY, text="moses-lowercase", attention_dropout=0.0, activation_dropout=0.0,
                                    eps=1e-8, clip_norm=25.0, embed_init="normal", output_bias=False,
                                    source_eos=True, length_penalty=1.0, beam_search="fairseq"),
}


def preset_settings(name: str) -> dict:
    """The model settings a Transformer preset builds, as configuration keys (the preset's own
    values, and the Transformer's defaults for what it leaves out)."""
    if not isinstance(name, str) or name not in PRESETS:  # (a list from an edited config.json is unhashable)
        raise ValueError(f"unknown preset {name!r}; choose from {sorted(PRESETS)}")
    signature = inspect.signature(Transformer.__init__).parameters
    arguments = {arg: signature[arg].default for arg in MODEL_ARGS.values()}
    arguments.update(PRESETS[name])
    return {key: arguments[arg] for key, arg in MODEL_ARGS.items()}


def model_arguments(config: dict) -> dict:
    """The Transformer keyword arguments of a configuration (through MODEL_ARGS)."""
    return {arg: config[key] for key, arg in MODEL_ARGS.items()}


def build_config(recipe: str | None = None, **overrides) -> dict:
    """DEFAULTS, then the preset's model settings (when the recipe or the overrides choose a
    preset), then RECIPES[recipe], then overrides (None values in overrides are ignored).

    share_embeddings needs one joint vocabulary: when joint_vocab is false and
    share_embeddings only comes from DEFAULTS, it is turned off here; when the recipe or the
    overrides ask for both, validate_config refuses the configuration.
    """
    if recipe is not None and recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {sorted(RECIPES)}")
    unknown = sorted(k for k in overrides if k not in DEFAULTS)
    if unknown:
        raise ValueError(f"unknown configuration keys {unknown}")
    given = {k: v for k, v in overrides.items() if v is not None}
    recipe_values = RECIPES.get(recipe, {})
    preset = given.get("preset", recipe_values.get("preset"))
    config = dict(DEFAULTS)
    if preset is not None:
        config.update(preset_settings(preset))
    config.update(recipe_values)
    config.update(given)
    explicit = set(given) | set(recipe_values) | ({"share_embeddings"} if preset is not None else set())
    if config["share_embeddings"] and config["joint_vocab"] is False and "share_embeddings" not in explicit:
        config["share_embeddings"] = False  # separate vocabularies: one table would mix them
    config["recipe"] = recipe
    if config["output_dir"] is None:
        config["output_dir"] = f"runs/{recipe or 'custom'}-{config['src_lang']}-{config['tgt_lang']}"
    return config


# ---------------------------------------------------------------- validation

# keys a configuration may hold besides DEFAULTS': the recipe's name, and what a run recorded: 'built'
# (the model built), data_sha256 (the SHA-256 of the training and validation pairs it trains on, which a
# resume must read again) and data_read_from (their files)
EXTRA_KEYS = ("recipe", "built", *DATA_KEYS)

_POSITIVE_INTS = ("vocab_size", "min_freq", "d_model", "num_heads", "encoder_layers", "decoder_layers", "d_ff",
                  "max_len", "max_tokens", "epochs", "beam_size", "accumulate")
_NON_NEGATIVE_INTS = ("warmup_steps", "bleu_every", "save_every", "average_last", "patience")
_OPTIONAL_POSITIVE_INTS = ("max_steps", "bleu_val_sentences", "sync_every")
_BOOLEANS = ("joint_vocab", "lowercase", "share_embeddings", "tie_output", "output_bias", "norm_first",
             "keep_epochs", "source_eos")
_OPTIONAL_BOOLEANS = ("static_shapes", "cuda_graphs")  # None: chosen for the device (translate.training.step_mode)
_PROBABILITIES = ("dropout", "label_smoothing")  # in [0, 1)
_DEVICES = re.compile(r"auto|cpu|cuda(:0)?")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def validate_config(config: dict, only=None) -> None:
    """Raise ValueError naming every invalid setting of a whole configuration (unknown or
    missing keys, values outside their set, wrong types, out-of-range numbers, settings that
    contradict each other). Every command validates through it before anything is written:
    train the whole configuration; translate and evaluate, with ``only``, just the options
    given (say {"length_penalty": nan}), checked as part of a configuration of DEFAULTS."""
    if only is not None:
        config, only = {**DEFAULTS, **config}, set(only)
    _check_keys(config)
    problems = _value_problems(config) + _contradictions(config)  # [(key or keys, message)]
    if only is not None:
        problems = [(keys, message) for keys, message in problems
                    if only & ({keys} if isinstance(keys, str) else set(keys))]
    if problems:
        raise ValueError("invalid configuration: " + "; ".join(message for _, message in problems))


def _check_keys(config) -> None:
    """Every key known, none missing."""
    problems = []
    unknown = sorted(k for k in config if k not in DEFAULTS and k not in EXTRA_KEYS)
    missing = sorted(k for k in DEFAULTS if k not in config)
    if unknown:
        problems.append(f"unknown configuration keys {unknown}")
    if missing:
        problems.append(f"missing configuration keys {missing}")
    if problems:
        raise ValueError("invalid configuration: " + "; ".join(problems))


def _value_problems(config) -> list:
    """Each value on its own: in its set, of its type, in its range."""
    problems = []

    def bad(key, expected):
        problems.append((key, f"{key} must be {expected}, got {config[key]!r}"))

    for key in ("src_lang", "tgt_lang"):
        if config[key] not in LANGUAGES:
            problems.append((key, f"{key}: unknown Multi30k language {config[key]!r}; valid languages: "
                                  f"{', '.join(LANGUAGES)}"))
    for key, values in CHOICES.items():
        if config[key] not in values and not (key in _MAY_BE_NONE and config[key] is None):
            bad(key, "one of " + ", ".join(values) + (" (or None)" if key in _MAY_BE_NONE else ""))
    if config.get("recipe") is not None and config["recipe"] not in RECIPES:
        bad("recipe", "one of " + ", ".join(sorted(RECIPES)) + " (or None)")
    for key in _POSITIVE_INTS:
        if not (_is_int(config[key]) and config[key] >= 1):
            bad(key, "a positive integer")
    for key in _NON_NEGATIVE_INTS:
        if not (_is_int(config[key]) and config[key] >= 0):
            bad(key, "an integer >= 0")
    for key in _OPTIONAL_POSITIVE_INTS:
        if config[key] is not None and not (_is_int(config[key]) and config[key] >= 1):
            bad(key, "a positive integer or None")
    if not (_is_int(config["seed"]) and config["seed"] >= 0):
        bad("seed", "an integer >= 0")
    for key in _BOOLEANS:
        if not isinstance(config[key], bool):
            bad(key, "true or false")
    for key in _OPTIONAL_BOOLEANS:
        if config[key] is not None and not isinstance(config[key], bool):
            bad(key, "true, false or None (auto)")
    for key in _PROBABILITIES:
        if not (_is_number(config[key]) and 0 <= config[key] < 1):
            bad(key, "a number in [0, 1)")
    for key in ("attention_dropout", "activation_dropout"):
        if config[key] is not None and not (_is_number(config[key]) and 0 <= config[key] < 1):
            bad(key, "a number in [0, 1) or None")
    for key in ("lr", "eps"):
        if not (_is_number(config[key]) and config[key] > 0):
            bad(key, "a number > 0")
    for key in ("weight_decay", "clip_norm"):
        if not (_is_number(config[key]) and config[key] >= 0):
            bad(key, "a number >= 0")
    if not (_is_number(config["length_penalty"]) and config["length_penalty"] >= 0):
        bad("length_penalty", "a number >= 0")
    if config["time_limit"] is not None and not (_is_number(config["time_limit"]) and config["time_limit"] > 0):
        bad("time_limit", "a number of minutes > 0, or None")
    betas = config["betas"]
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2 and all(_is_number(b) and 0 <= b < 1 for b in betas)):
        bad("betas", "two numbers in [0, 1)")
    if not (isinstance(config["device"], str) and _DEVICES.fullmatch(config["device"])):
        bad("device", "'auto', 'cpu' or 'cuda'")
    for key in ("data_dir", "output_dir"):
        if config[key] is not None and not isinstance(config[key], str):
            bad(key, "a path (a string)")
    if config["tokenizer"] == "bpe" and _is_int(config["vocab_size"]) and 1 <= config["vocab_size"] < 260:
        bad("vocab_size", "at least 260 for BPE (4 specials + 256 bytes)")
    if _is_int(config["max_len"]) and config["max_len"] == 1:   # (below 1: a positive integer, said above)
        bad("max_len", "at least 2 (<bos> and one token)")
    return problems


def _contradictions(config) -> list:
    """Settings that are each valid but cannot go together."""
    problems = []
    if config["src_lang"] == config["tgt_lang"]:
        problems.append((("src_lang", "tgt_lang"), f"source and target language are both {config['src_lang']!r}; "
                         "choose two different languages"))
    if _is_int(config["d_model"]) and _is_int(config["num_heads"]) and config["num_heads"] >= 1 \
            and config["d_model"] % config["num_heads"]:
        problems.append((("num_heads", "d_model"), f"num_heads {config['num_heads']} does not divide d_model "
                         f"{config['d_model']}"))
    if config["share_embeddings"] is True and config["joint_vocab"] is False:
        problems.append((("share_embeddings", "joint_vocab"), "share_embeddings needs one joint vocabulary, but "
                         "joint_vocab is false (two separate vocabularies); set share_embeddings false, or "
                         "joint_vocab true"))
    if config["lowercase"] is True and config["tokenizer"] == "bpe":  # (it would be ignored: BPE keeps every byte)
        problems.append((("lowercase", "tokenizer"), "lowercase is the word tokenizer's, but tokenizer is 'bpe'; for "
                         "lowercased BPE text use text 'moses-lowercase' (the published systems' text)"))
    if config["schedule"] == "cosine" and config["max_steps"] is None:
        problems.append((("schedule", "max_steps"), "schedule 'cosine' needs max_steps (the length of the decay)"))
    if config["cuda_graphs"] is True and config["device"] == "cpu":
        problems.append((("cuda_graphs", "device"), "cuda_graphs captures steps on a GPU, but device is 'cpu'"))
    if config["attention_kernels"] == "tensor-cores" and config["device"] == "cpu":
        problems.append((("attention_kernels", "device"), "attention_kernels 'tensor-cores' runs on a GPU, but "
                         "device is 'cpu'"))
    if config["attention_kernels"] == "tensor-cores" and config["precision"] in ("fp32", "fp16"):
        problems.append((("attention_kernels", "precision"), f"attention_kernels 'tensor-cores' takes bfloat16 or "
                         f"TF32 operands, but precision is {config['precision']!r}; use tf32 or bf16"))
    if config["cuda_graphs"] is True and _is_int(config["accumulate"]) and config["accumulate"] != 1:
        problems.append((("cuda_graphs", "accumulate"), f"cuda_graphs captures one batch per step, but accumulate "
                         f"is {config['accumulate']}"))
    return problems
