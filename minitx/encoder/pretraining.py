"""Masked-language-model pretraining of an EncoderModel on Multi30k's German and English text.

The text: every training sentence of both languages, each on its own as ``[CLS] s [SEP]``
(58,000 sequences); the validation sentences of both languages measure the masked-LM loss and
accuracy after each epoch, with one fixed masking. The test sets are never read. A joint BPE
tokenizer is learned on the training text; the encoder adds [MASK].

The loop, checkpoints, exact resume and the run directory's rules are the shared trainer's
(:mod:`minitx.train`): a run directory holds config.json, tokenizer.json, last.npz (model,
optimizer, schedule, RNG, position in the data), best.npz, history.json and results.json.
Training is step-based (``max_steps``): the same configuration always gives the same model,
and ``resume`` continues exactly.
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import minitx
from minitx import amp, cli, optim
from minitx.data import (BYTE_TOKENS, SPECIAL_TOKENS, BPETokenizer, count_oversize, ensure_files, load_tokenizer,
                         read_pairs)
from minitx.encoder.data import LANGS, EncoderVocab, fit, mlm_batches, sentences
from minitx.nn.encoder import IGNORE_INDEX, EncoderModel, MaskedLanguageModel
from minitx.backend import resolve_device
from minitx.serialization import read_json
from minitx.sync import GPU_SYNC_EVERY
from minitx.train import (APPLICATION_FILES, APPLICATION_PATTERNS, DATA_KEYS, TRAINER_FILES, TRAINER_PATTERNS,
                          RunLifecycle, Trainer, check_data, json_safe, load_checkpoint, log, log_data_read,
                          resolve_data_dir, write_json)

MODEL_KEYS = ("d_model", "num_heads", "num_layers", "d_ff", "dropout", "max_len", "activation", "norm_first")

# key: default. A recipe changes some of them; keyword arguments (or CLI options) change any.
DEFAULTS = dict(
    data_dir=None, vocab_size=6000,
    d_model=128, num_heads=4, num_layers=3, d_ff=512, dropout=0.1, max_len=128, activation="relu", norm_first=True,
    mask_prob=0.15, lr=1e-3, warmup_steps=60, weight_decay=0.01, clip_norm=1.0, max_tokens=4096,
    max_steps=600, save_every=100, seed=0, device="cpu", precision="fp32", sync_every=0,
)
# what each setting is, for --help
HELP = dict(
    data_dir="directory with the Multi30k .gz files (none: $MINITX_DATA_DIR, the cache, or a download)",
    vocab_size="the joint BPE vocabulary learned on the training text (the encoder adds [MASK])",
    d_model="the width of the encoder (embeddings and every layer)", num_heads="attention heads per layer",
    num_layers="encoder layers", d_ff="the feed-forward layers' inner width", dropout="dropout rate",
    max_len="the longest sequence, [CLS] and [SEP] included (longer sentences are left out)",
    activation="the feed-forward activation", norm_first="pre-norm (true) or post-norm (false) layers",
    mask_prob="the share of tokens masked for the masked-LM loss (BERT's 0.15)",
    lr="the peak learning rate of the warm-up and cosine schedule", warmup_steps="linear warm-up steps",
    weight_decay="AdamW's weight decay", clip_norm="clip the gradients to this global norm (0: no clipping)",
    max_tokens="tokens per batch (padding included)", max_steps="optimizer steps (the cosine schedule's length)",
    save_every="write last.npz every N steps (and at each epoch's end)", seed="the random seed",
    device="where to train: cpu, cuda, or auto (the GPU when one is usable)",
    precision="the precision of the matrix products",
    sync_every="read the device back every N steps (0: every step on the CPU, every 50 on a GPU)",
)
# the settings that take one of a few words (the command line lists them, and refuses others at once)
CHOICES = dict(activation=("relu", "gelu"), precision=tuple(amp.PRECISIONS), device=("cpu", "cuda", "auto"))
RECIPES = {
    # 2.2 epochs of the 58,000 sentences (269 batches each); its run is in results/README.md
    "cpu": {},
    # seconds: for tests and a first look
    "tiny": dict(vocab_size=400, d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=64, warmup_steps=2,
                 max_tokens=600, max_steps=4, save_every=2),
}
#: the numeric settings' ranges (pretraining's and finetuning's, as keyword arguments of
#: minitx.cli.number); a number not listed is a count or a rate >= 0. The command line refuses a
#: value outside them before anything runs, and every configuration is checked against them.
RANGES = {
    **{key: dict(low=1) for key in ("steps", "batch_size", "d_model", "num_heads", "num_layers", "d_ff",
                                    "max_tokens", "max_steps")},
    # the specials, the 256 byte tokens and at least one learned piece (BERT's random
    # replacement draws from the learned pieces: EncoderVocab.random_ids)
    "vocab_size": dict(low=len(SPECIAL_TOKENS) + len(BYTE_TOKENS) + 1),
    "max_len": dict(low=3),  # [CLS], one piece, [SEP]
    "lr": dict(low=0, low_open=True), "dropout": dict(low=0, high=1, high_open=True),
    "mask_prob": dict(low=0, low_open=True, high=1, high_open=True),
}
# the settings a config.json saved by an older minitx may lack (their defaults fill them)
ADDED_LATER = ("precision", "sync_every")
# a configuration's keys beside the settings: the recipe it was built from (a resume given another
# is refused, as a translation run's), and the data's digests (check_data)
EXTRA_KEYS = ("recipe", *DATA_KEYS)
# may differ when a run is resumed: they change how often it saves or reads the device back,
# where it runs and where the data are read from, not what it learns (max_steps is the cosine
# schedule's length)
RESUME_MAY_CHANGE = ("save_every", "device", "data_dir", "sync_every")
# what a new run refuses to overwrite (and --overwrite deletes): the trainer's files and ours, and a
# translation run's (APPLICATION_FILES: an --overwrite of one leaves nothing of it behind)
RUN_FILES = TRAINER_FILES + APPLICATION_FILES
RUN_PATTERNS = TRAINER_PATTERNS + APPLICATION_PATTERNS


def build_config(recipe="cpu", **overrides) -> dict:
    if recipe not in RECIPES:
        raise ValueError(f"unknown pretraining recipe {recipe!r}; choose from {sorted(RECIPES)}")
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown pretraining options {unknown}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **RECIPES[recipe], **{k: v for k, v in overrides.items() if v is not None}, "recipe": recipe}


def build_model(config, vocab: EncoderVocab, device="cpu") -> MaskedLanguageModel:
    encoder = EncoderModel(vocab.size, **{k: config[k] for k in MODEL_KEYS}, pad_id=vocab.pad_id, device=device)
    return MaskedLanguageModel(encoder)


@minitx.no_grad()
def masked_lm_scores(model, batches) -> dict:
    """Mean cross-entropy and accuracy of the predictions at the masked positions."""
    loss_sum, correct, count = 0.0, 0, 0
    with model.evaluating():
        for batch in batches:
            chosen = batch.targets != IGNORE_INDEX
            logits = model(batch.inputs).numpy()[chosen].astype(np.float64)
            targets = batch.targets[chosen]
            shifted = logits - logits.max(-1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
            loss_sum -= float(log_probs[np.arange(len(targets)), targets].sum())
            correct += int((logits.argmax(-1) == targets).sum())
            count += len(targets)
    # no masked position: no score (NaN), never a perfect-looking loss of 0
    return {"val_loss": loss_sum / count if count else math.nan, "val_accuracy": correct / count if count else math.nan,
            "val_masked": count}


def _validate(config) -> None:
    for key, default in DEFAULTS.items():
        value = config[key]
        if isinstance(default, bool) or key == "norm_first":
            if not isinstance(value, bool):
                raise ValueError(f"pretraining: {key} must be true or false, got {value!r}")
        elif isinstance(default, (int, float)):
            try:
                cli.number(type(default), **RANGES.get(key, dict(low=0)))(str(value))
            except argparse.ArgumentTypeError as error:
                raise ValueError(f"pretraining: {key} {error}") from None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(default, int)
                                                                                  and not isinstance(value, int)):
                raise ValueError(f"pretraining: {key} must be {'an integer' if isinstance(default, int) else 'a number'}"
                                 f", got {value!r}")
    if config.get("recipe") is not None and config["recipe"] not in RECIPES:
        raise ValueError(f"pretraining: recipe must be one of {', '.join(sorted(RECIPES))}, got {config['recipe']!r}")
    for key, choices in CHOICES.items():
        if key != "device" and config[key] not in choices:  # (the device is resolve_device's to check)
            raise ValueError(f"pretraining: {key} must be one of {', '.join(choices)}, got {config[key]!r}")
    if not 0 <= config["warmup_steps"] <= config["max_steps"]:
        raise ValueError(f"pretraining: warmup_steps ({config['warmup_steps']}) must be between 0 and max_steps "
                         f"({config['max_steps']}), the length of the cosine schedule")


def pretrain(config: dict, output_dir, resume=False, overwrite=False, progress=True) -> dict:
    """Pretrain (or resume) the run in output_dir with the shared trainer (minitx.train);
    returns results.json's content. A resumed run takes its saved configuration; ``config``
    may then hold only some keys, and any of them that differs from the saved value must be in
    RESUME_MAY_CHANGE."""
    run = RunLifecycle(output_dir, config, kind="pretraining", resume=resume, overwrite=overwrite, defaults=DEFAULTS,
                       extra_keys=EXTRA_KEYS, may_change=RESUME_MAY_CHANGE, validate=_validate, files=RUN_FILES,
                       patterns=RUN_PATTERNS, added_later=ADDED_LATER, start_files=("tokenizer.json",))
    config, run_dir, device = run.config, run.run_dir, run.device
    started = time.perf_counter()

    # everything that can fail (data, tokenizer, model) comes before the run directory is touched.
    # data_dir as translation records it: absolute (a resume or fine-tuning from elsewhere finds
    # it), and a resume's own checked to be there (a moved one is named). Each split's files are
    # found once, so the sentences are read from the files logged and recorded in data_read_from
    from_run = resume and "data_dir" not in run.changes
    resolve_data_dir(config, from_run)
    files = {split: ensure_files(split, LANGS, config["data_dir"], progress=progress) for split in ("train", "val")}
    train_text, val_text = (sentences(read_pairs(split, files[split])) for split in ("train", "val"))
    log_data_read(files, config["data_dir"], from_run)
    read_from = {split: ", ".join(str(path) for path in paths) for split, paths in files.items()}
    check_data(config, {"train": train_text, "val": val_text}, read_from, run_dir if resume else None)
    tokenizer_path = run_dir / "tokenizer.json"
    tokenizer = _run_tokenizer(run_dir) if resume else BPETokenizer.train(train_text, config["vocab_size"])
    minitx.manual_seed(config["seed"])
    vocab = EncoderVocab(tokenizer)
    train_ids, dropped = fit([vocab.sentence(s) for s in train_text], config["max_len"])
    val_ids, val_dropped = fit([vocab.sentence(s) for s in val_text], config["max_len"])
    # an empty line is [CLS] [SEP], nothing to mask: a batch of only such lines would have no target
    empty, val_empty = (sum(len(ids) == 2 for ids in split) for split in (train_ids, val_ids))
    train_ids, val_ids = [ids for ids in train_ids if len(ids) > 2], [ids for ids in val_ids if len(ids) > 2]
    for split, kept, longer, blank in (("training", train_ids, dropped, empty),
                                       ("validation", val_ids, val_dropped, val_empty)):
        if not kept:  # nothing to train on, or a validation loss of nothing
            raise ValueError(f"pretraining: no {split} sentence fits max_len {config['max_len']} ({longer} longer, "
                             f"[CLS] and [SEP] included; {blank} empty lines); give a larger max_len"
                             + (" or sentences that are not empty" if blank else ""))
    # said once here, where batch_by_tokens would warn of them at every epoch
    oversize = [count_oversize(ids, ids, config["max_tokens"], tgt_extra_tokens=0) for ids in (train_ids, val_ids)]
    if any(oversize):
        log(f"data: {oversize[0]} training and {oversize[1]} validation sentences are longer than max_tokens "
            f"{config['max_tokens']} on their own: each is a batch of its own, past the budget; a larger --max-tokens "
            "batches them")
    val_batches = mlm_batches(val_ids, vocab, config["max_tokens"], config["seed"], 0, shuffle=False,
                              mask_prob=config["mask_prob"], warn_oversize=False)

    def batches(seed, epoch):
        return mlm_batches(train_ids, vocab, config["max_tokens"], seed, epoch, mask_prob=config["mask_prob"],
                           warn_oversize=False)

    # step-based: enough epochs for max_steps (an epoch's batch count varies a little)
    epochs = math.ceil(config["max_steps"] / len(batches(config["seed"], 0))) + 1
    model = build_model(config, vocab, device)
    run.begin(lambda run_dir: tokenizer.save(tokenizer_path))
    log(f"data: {len(train_ids)} training sentences (de + en; {dropped} longer than max_len left out"
        f"{f', {empty} empty lines' if empty else ''}), "
        f"{len(val_ids)} validation sentences ({val_dropped} longer{f', {val_empty} empty' if val_empty else ''} "
        f"left out); vocabulary {tokenizer.vocab_size} + [MASK]; "
        f"model: {model.num_parameters():,} parameters on {device}; {time.perf_counter() - started:.0f}s")

    opt = optim.AdamW(model.parameters(), lr=config["lr"], betas=(0.9, 0.98), eps=1e-9,
                      weight_decay=config["weight_decay"])
    schedule = optim.WarmupCosine(opt, peak_lr=config["lr"], warmup_steps=config["warmup_steps"],
                                  total_steps=config["max_steps"])
    precision = amp.step_precision(config["precision"], device)

    def loss_fn(model, batch):
        with precision():
            return model.loss(batch.inputs, batch.targets), batch.n_masked

    scores = {}  # one pass over the validation batches gives the loss and the accuracy

    def validation_loss(model):
        scores.update(masked_lm_scores(model, val_batches))
        return scores["val_loss"]

    # sync_every 0: every step's loss read back on the CPU (free there), every sync.GPU_SYNC_EVERY on a GPU
    sync_every = config["sync_every"] or (GPU_SYNC_EVERY if device == "cuda" else None)
    trainer = Trainer(run_dir, model, opt, loss_fn, batches, validation_loss=validation_loss, schedule=schedule,
                      evaluate=lambda model, epoch: {"val_accuracy": scores["val_accuracy"]}, epochs=epochs,
                      max_steps=config["max_steps"], save_every=config["save_every"], clip_norm=config["clip_norm"],
                      seed=config["seed"], extra={"config": json_safe(config)}, progress=progress,
                      scaler=amp.loss_scaler(config["precision"]), sync_every=sync_every)
    run.fit(trainer)
    last = trainer.history[-1]
    results = {"steps": trainer.progress["step"], "train_seconds": round(trainer.progress["train_seconds"], 1),
               "total_seconds": round(time.perf_counter() - started, 1), "parameters": model.num_parameters(),
               "val_loss": last["val_loss"], "val_accuracy": last["val_accuracy"]}
    write_json(run_dir / "results.json", results, indent=2)
    # (total_seconds: this command's; train_seconds: the run's, every resume's steps included)
    log(f"pretraining done: {results['steps']} steps, validation masked-LM loss {results['val_loss']:.3f}, "
        f"accuracy {results['val_accuracy']:.3f}; this command took {results['total_seconds']:.0f}s; the run trained "
        f"for {results['train_seconds']:.0f}s in all; run directory {run_dir}")
    return results


def _run_tokenizer(run_dir):
    """The run's tokenizer.json, or an error saying the run is incomplete (not a bare [Errno 2])."""
    path = Path(run_dir) / "tokenizer.json"
    if not path.exists():
        raise FileNotFoundError(f"{run_dir} is an incomplete pretraining run: {path.name} is missing, and its model's "
                                f"ids mean nothing without it; pretrain a new run (another --output-dir, or --overwrite)")
    return load_tokenizer(path)


def load_pretrained(run_dir, device="cpu"):
    """(config, MaskedLanguageModel, EncoderVocab) of a pretraining run: its model after the
    last step (last.npz)."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.json").exists():
        raise FileNotFoundError(f"{run_dir} is not a pretraining run (no config.json)")
    config = read_json(run_dir / "config.json")
    # (told by what the run says it is, its configuration, not by the files beside it)
    if isinstance(config, dict) and "mask_prob" not in config and "src_lang" in config:
        raise ValueError(f"{run_dir} is a translation run; give a pretraining run (python -m minitx.encoder pretrain)")
    missing = sorted(set(DEFAULTS) - set(config) - set(ADDED_LATER))
    unknown = sorted(set(config) - set(DEFAULTS) - set(EXTRA_KEYS))
    if missing or unknown:
        raise ValueError(f"{run_dir / 'config.json'} is not a pretraining run's configuration (it lacks "
                         f"{missing} or holds {unknown})")
    config = {key: value for key, value in {**DEFAULTS, **config}.items() if key not in EXTRA_KEYS}
    try:
        _validate(config)
    except ValueError as error:
        raise ValueError(f"{run_dir / 'config.json'}: {error}") from None
    vocab = EncoderVocab(_run_tokenizer(run_dir))
    model = build_model(config, vocab, resolve_device(device))
    load_checkpoint(run_dir / "last.npz", model)
    model.eval()
    return config, model, vocab
