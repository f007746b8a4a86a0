"""Masked-language-model pretraining of a TransformerEncoder on Multi30k's German and English text.

The text: every training sentence of both languages, each on its own as ``[CLS] s [SEP]``
(58,000 sequences); the validation sentences of both languages measure the masked-LM loss and
accuracy after each epoch, with one fixed masking. The test sets are never read. A joint BPE
tokenizer is learned on the training text; the encoder adds [MASK].

A run directory holds config.json, tokenizer.json, last.npz (model, optimizer, schedule, RNG,
position in the data), history.json and results.json. Training is step-based (``max_steps``):
the same configuration always gives the same model, and ``resume`` continues exactly.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

import minitx
from minitx import optim
from minitx import random as mrandom
from minitx.data import BPETokenizer, load_tokenizer
from minitx.encoder.data import EncoderVocab, fit, load_sentences, mlm_batches
from minitx.nn.encoder import IGNORE_INDEX, MaskedLanguageModel, TransformerEncoder
from minitx.serialization import save
from minitx.translate.training import load_checkpoint, log, resolve_device

MODEL_KEYS = ("d_model", "num_heads", "num_layers", "d_ff", "dropout", "max_len", "activation", "norm_first")

# key: default. A recipe changes some of them; keyword arguments (or CLI options) change any.
DEFAULTS = dict(
    data_dir=None, vocab_size=6000,
    d_model=128, num_heads=4, num_layers=3, d_ff=512, dropout=0.1, max_len=128, activation="relu", norm_first=True,
    mask_prob=0.15, lr=1e-3, warmup_steps=60, weight_decay=0.01, clip_norm=1.0, max_tokens=4096,
    max_steps=600, save_every=100, seed=0, device="cpu",
)
RECIPES = {
    # about 2.5 epochs of the 58,000 sentences; ~15 minutes on two (shared) CPU cores
    "cpu": {},
    # seconds: for tests and a first look
    "tiny": dict(vocab_size=400, d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=64, warmup_steps=2,
                 max_tokens=600, max_steps=4, save_every=2),
}
# may differ when a run is resumed: they change how often it saves, where it runs and where
# the data are read from, not what it learns (max_steps is the cosine schedule's length)
RESUME_MAY_CHANGE = ("save_every", "device", "data_dir")


def build_config(recipe="cpu", **overrides) -> dict:
    if recipe not in RECIPES:
        raise ValueError(f"unknown pretraining recipe {recipe!r}; choose from {sorted(RECIPES)}")
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown pretraining options {unknown}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **RECIPES[recipe], **{k: v for k, v in overrides.items() if v is not None}}


def build_model(config, vocab: EncoderVocab, device="cpu") -> MaskedLanguageModel:
    encoder = TransformerEncoder(vocab.size, **{k: config[k] for k in MODEL_KEYS}, pad_id=vocab.pad_id,
                                 device=device)
    return MaskedLanguageModel(encoder)


@minitx.no_grad()
def masked_lm_scores(model, batches) -> dict:
    """Mean cross-entropy and accuracy of the predictions at the masked positions."""
    was_training = model.training
    model.eval()
    loss_sum, correct, count = 0.0, 0, 0
    for batch in batches:
        chosen = batch.targets != IGNORE_INDEX
        logits = model(batch.inputs).numpy()[chosen].astype(np.float64)
        targets = batch.targets[chosen]
        shifted = logits - logits.max(-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        loss_sum -= float(log_probs[np.arange(len(targets)), targets].sum())
        correct += int((logits.argmax(-1) == targets).sum())
        count += len(targets)
    model.train(was_training)
    return {"val_loss": loss_sum / max(count, 1), "val_accuracy": correct / max(count, 1), "val_masked": count}


def pretrain(config: dict, output_dir, resume=False, overwrite=False, progress=True) -> dict:
    """Pretrain (or resume) the run in output_dir; returns results.json's content. A resumed
    run takes its saved configuration; ``config`` may then hold only some keys, and any of them
    that differs from the saved value must be in RESUME_MAY_CHANGE."""
    run_dir = Path(output_dir)
    config = _run_config(config, run_dir, resume, overwrite)
    if not 0 <= config["warmup_steps"] <= config["max_steps"]:
        raise ValueError(f"pretraining: warmup_steps ({config['warmup_steps']}) must be between 0 and max_steps "
                         f"({config['max_steps']}), the length of the cosine schedule")
    device = resolve_device(config["device"])
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(config, indent=2))
    minitx.manual_seed(config["seed"])
    started = time.perf_counter()

    train_text = load_sentences("train", config["data_dir"])
    val_text = load_sentences("val", config["data_dir"])
    tokenizer_path = run_dir / "tokenizer.json"
    if resume and tokenizer_path.exists():
        tokenizer = load_tokenizer(tokenizer_path)
    else:
        tokenizer = BPETokenizer.train(train_text, config["vocab_size"])
        tokenizer.save(tokenizer_path)
    vocab = EncoderVocab(tokenizer)
    train_ids, dropped = fit([vocab.sentence(s) for s in train_text], config["max_len"])
    val_ids, _ = fit([vocab.sentence(s) for s in val_text], config["max_len"])
    model = build_model(config, vocab, device)
    log(f"data: {len(train_ids)} training sentences (de + en; {dropped} longer than max_len left out), "
        f"{len(val_ids)} validation sentences; vocabulary {tokenizer.vocab_size} + [MASK]; "
        f"model: {model.num_parameters():,} parameters on {device}; {time.perf_counter() - started:.0f}s")

    opt = optim.AdamW(model.parameters(), lr=config["lr"], betas=(0.9, 0.98), eps=1e-9,
                      weight_decay=config["weight_decay"])
    schedule = optim.WarmupCosine(opt, peak_lr=config["lr"], warmup_steps=config["warmup_steps"],
                                  total_steps=config["max_steps"])
    val_batches = mlm_batches(val_ids, vocab, config["max_tokens"], config["seed"], 0, shuffle=False,
                              mask_prob=config["mask_prob"])

    def batches_for(seed, epoch):
        return mlm_batches(train_ids, vocab, config["max_tokens"], seed, epoch, mask_prob=config["mask_prob"])

    def loss_of(model, batch):
        return model.loss(batch.inputs, batch.targets)

    state = _interim_train_loop(model, opt, schedule, batches_for, loss_of, lambda m: masked_lm_scores(m, val_batches),
                                config, run_dir, resume, progress)
    history = json.loads((run_dir / "history.json").read_text())
    results = {"steps": state["step"], "train_seconds": round(state["train_seconds"], 1),
               "total_seconds": round(time.perf_counter() - started, 1), "parameters": model.num_parameters(),
               **{k: history[-1][k] for k in ("val_loss", "val_accuracy")}}
    (run_dir / "results.json").write_text(json.dumps(results, indent=2))
    log(f"pretraining done: {results['steps']} steps, validation masked-LM loss {results['val_loss']:.3f}, "
        f"accuracy {results['val_accuracy']:.3f}; {results['total_seconds']:.0f}s in all; run directory {run_dir}")
    return results


def _run_config(config, run_dir: Path, resume, overwrite) -> dict:
    """The run's configuration: a new one (refusing a directory that holds a run, unless
    overwrite), or the saved one with the given RESUME_MAY_CHANGE values."""
    saved_path = run_dir / "config.json"
    if resume:
        if not saved_path.exists():
            raise FileNotFoundError(f"cannot resume: {run_dir} holds no pretraining run (no config.json)")
        saved = json.loads(saved_path.read_text())
        refused = [f"{k} {saved.get(k)!r} (saved) != {v!r} (given)" for k, v in config.items()
                   if v != saved.get(k) and k not in RESUME_MAY_CHANGE]
        if refused:
            raise ValueError(f"cannot resume {run_dir} with other settings: {', '.join(refused)}; only "
                             f"{', '.join(RESUME_MAY_CHANGE)} may change on resume")
        return {**saved, **{k: config[k] for k in RESUME_MAY_CHANGE if k in config}}
    if saved_path.exists() and not overwrite:
        raise ValueError(f"{run_dir} already holds a pretraining run; continue it with --resume, choose another "
                         "--output-dir, or pass --overwrite to start again")
    for name in ("last.npz", "history.json", "results.json", "tokenizer.json"):
        (run_dir / name).unlink(missing_ok=True)
    return dict(config)


# ---------------------------------------------------------------- INTERIM
# INTERIM: a minimal step-based loop with checkpoints and exact resume, until the shared
# trainer (minitx/translate/training.py made reusable) lands on main; then it replaces this.
def _interim_train_loop(model, opt, schedule, batches_for, loss_of, evaluate, config, run_dir, resume, progress):
    from tqdm.auto import tqdm

    state = {"step": 0, "epoch": 0, "batch": 0, "train_seconds": 0.0}
    history = []
    last = run_dir / "last.npz"
    if resume and last.exists():
        state.update(load_checkpoint(last, model, opt, schedule))
        history = json.loads((run_dir / "history.json").read_text()) if (run_dir / "history.json").exists() else []
        log(f"resumed from {last} at step {state['step']}")

    def checkpoint():
        save({"model": model.state_dict(), "optimizer": opt.state_dict(), "schedule": schedule.state_dict(),
              "rng": mrandom.get_state(), "progress": dict(state), "config": config}, last)

    max_steps = config["max_steps"]
    loop_started = time.perf_counter() - state["train_seconds"]
    bar = tqdm(total=max_steps, initial=state["step"], unit="step", disable=not progress, mininterval=1.0)
    model.train()
    while state["step"] < max_steps:
        batches = batches_for(config["seed"], state["epoch"])
        epoch_loss, epoch_steps = 0.0, 0
        for b in range(state["batch"], len(batches)):
            loss = loss_of(model, batches[b])
            opt.zero_grad()
            loss.backward()
            if config["clip_norm"]:
                optim.clip_grad_norm_(model.parameters(), config["clip_norm"])
            opt.step()
            schedule.step()
            value = float(loss.item())
            if not math.isfinite(value):
                raise FloatingPointError(f"training loss became {value} at step {state['step'] + 1}")
            state["step"] += 1
            state["batch"] = b + 1
            state["train_seconds"] = time.perf_counter() - loop_started
            epoch_loss, epoch_steps = epoch_loss + value, epoch_steps + 1
            bar.update(1)
            bar.set_postfix(loss=f"{value:.3f}", epoch=state["epoch"] + 1, refresh=False)
            if config["save_every"] and state["step"] % config["save_every"] == 0:
                checkpoint()
            if state["step"] >= max_steps:
                break
        if state["batch"] >= len(batches):
            state["epoch"], state["batch"] = state["epoch"] + 1, 0
        record = {"epoch": state["epoch"] if state["batch"] == 0 else state["epoch"] + 1, "step": state["step"],
                  "train_loss": epoch_loss / max(epoch_steps, 1), **evaluate(model),
                  "seconds": round(state["train_seconds"], 1)}
        history.append(record)
        log("epoch {epoch} (step {step}): train loss {train_loss:.3f}, val loss {val_loss:.3f}, "
            "val accuracy {val_accuracy:.3f}".format(**record))
        checkpoint()
        (run_dir / "history.json").write_text(json.dumps(history, indent=2))
    bar.close()
    return state


def load_pretrained(run_dir, device="cpu"):
    """(config, MaskedLanguageModel, EncoderVocab) of a pretraining run, from last.npz."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.json").exists():
        raise FileNotFoundError(f"{run_dir} is not a pretraining run (no config.json)")
    config = json.loads((run_dir / "config.json").read_text())
    vocab = EncoderVocab(load_tokenizer(run_dir / "tokenizer.json"))
    model = build_model(config, vocab, resolve_device(device))
    load_checkpoint(run_dir / "last.npz", model)
    model.eval()
    return config, model, vocab
