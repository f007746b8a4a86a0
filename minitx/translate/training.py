"""Training a translation Transformer on Multi30k: data, model, loop, checkpoints, evaluation.

A run lives in one directory:

    config.json         the full configuration (recipe + options), written at the start
    tokenizer.src.json  tokenizers (one file when the vocabulary is joint, then both names exist)
    tokenizer.tgt.json
    last.npz            the newest state: model, optimizer, schedule, RNG, position in the data;
                        written every ``save_every`` steps and at each epoch's end
    best.npz            the model with the lowest validation loss so far
    epoch-<n>.npz       the model after epoch n (the last ``average_last`` are kept, for averaging)
    averaged.npz        the average of those, when average_last > 1
    history.json        per-epoch metrics;  results.json: the final test scores

``--resume`` reloads last.npz and continues exactly where it stopped: the same batches in
the same order (they depend only on seed and epoch), the same optimizer moments and rates.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

import minitx
import minitx.functional as F
from minitx import backend, optim
from minitx import random as mrandom
from minitx.data import (BPETokenizer, WordTokenizer, batch_by_tokens, filter_by_length, load_pairs,
                         load_tokenizer, make_batch)
from minitx.nn import Transformer
from minitx.serialization import load, save
from minitx.translate.evaluation import bleu_scores, translate_sentences

TEST_SPLIT = "test_2016_flickr"


def log(message: str) -> None:
    """Progress messages go to stderr, so translations on stdout stay clean."""
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- pieces of a run


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if minitx.cuda.is_available() else "cpu"
    return backend.check_device(name)


def build_tokenizers(config, train_pairs, run_dir: Path):
    """Train the tokenizers on the training text (or load them from the run directory)."""
    src_path, tgt_path = run_dir / "tokenizer.src.json", run_dir / "tokenizer.tgt.json"
    if src_path.exists() and tgt_path.exists():
        return load_tokenizer(src_path), load_tokenizer(tgt_path)
    sources = [s for s, _ in train_pairs]
    targets = [t for _, t in train_pairs]
    if config["tokenizer"] == "bpe":
        if config["joint_vocab"]:
            src_tok = tgt_tok = BPETokenizer.train(sources + targets, config["vocab_size"])
        else:
            src_tok = BPETokenizer.train(sources, config["vocab_size"])
            tgt_tok = BPETokenizer.train(targets, config["vocab_size"])
    elif config["tokenizer"] == "word":
        if config["joint_vocab"]:
            src_tok = tgt_tok = WordTokenizer.train(sources + targets, config["min_freq"], config["lowercase"])
        else:
            src_tok = WordTokenizer.train(sources, config["min_freq"], config["lowercase"])
            tgt_tok = WordTokenizer.train(targets, config["min_freq"], config["lowercase"])
    else:
        raise ValueError(f"unknown tokenizer {config['tokenizer']!r}; choose 'bpe' or 'word'")
    src_tok.save(src_path)
    tgt_tok.save(tgt_path)
    return src_tok, tgt_tok


def build_model(config, src_vocab: int, tgt_vocab: int, pad_id: int, device: str) -> Transformer:
    shared = {"pad_id": pad_id, "device": device}
    if config["preset"]:
        return Transformer.from_preset(config["preset"], src_vocab, tgt_vocab, **shared)
    share = config["share_embeddings"] and src_vocab == tgt_vocab
    return Transformer(
        src_vocab, tgt_vocab, d_model=config["d_model"], num_heads=config["num_heads"],
        num_encoder_layers=config["encoder_layers"], num_decoder_layers=config["decoder_layers"],
        d_ff=config["d_ff"], dropout=config["dropout"], attention_dropout=config["attention_dropout"],
        max_len=config["max_len"], positional=config["positional"], share_embeddings=share,
        tie_output=config["tie_output"], output_bias=config["output_bias"], norm_first=config["norm_first"],
        activation=config["activation"], **shared)


def build_optimizer(config, model):
    betas = tuple(config["betas"])
    kinds = {"adam": optim.Adam, "adamw": optim.AdamW}
    if config["optimizer"] not in kinds:
        raise ValueError(f"unknown optimizer {config['optimizer']!r}; choose from {sorted(kinds)}")
    opt = kinds[config["optimizer"]](model.parameters(), lr=config["lr"], betas=betas, eps=config["eps"],
                                     weight_decay=config["weight_decay"])
    kind = config["schedule"]
    if kind == "inverse_sqrt":
        schedule = optim.WarmupInverseSqrt(opt, peak_lr=config["lr"], warmup_steps=max(1, config["warmup_steps"]))
    elif kind == "noam":
        schedule = optim.NoamSchedule(opt, d_model=model.d_model, warmup_steps=max(1, config["warmup_steps"]))
    elif kind == "cosine":
        total = config["max_steps"]
        if not total:
            raise ValueError("schedule 'cosine' needs max_steps (the length of the decay)")
        schedule = optim.WarmupCosine(opt, peak_lr=config["lr"], warmup_steps=config["warmup_steps"],
                                      total_steps=total)
    elif kind == "constant":
        schedule = None
    else:
        raise ValueError(f"unknown schedule {kind!r}; choose inverse_sqrt, noam, cosine or constant")
    return opt, schedule


def encode_pairs(pairs, src_tok, tgt_tok):
    return ([src_tok.encode_ids(s) for s, _ in pairs], [tgt_tok.encode_ids(t) for _, t in pairs])


def load_checkpoint(path: Path, model, optimizer=None, schedule=None) -> dict:
    """Restore a checkpoint into model (and optimizer, schedule); returns its 'progress'."""
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    state = load(path)
    if not isinstance(state, dict) or "model" not in state:
        raise ValueError(f"{path} is a minitx file but not a translation checkpoint (no 'model' entry)")
    try:
        model.load_state_dict(state["model"])
    except (KeyError, ValueError) as error:
        raise ValueError(f"checkpoint {path} does not match this model: {error}") from None
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    if schedule is not None and state.get("schedule"):
        schedule.load_state_dict(state["schedule"])
    if "rng" in state:
        mrandom.set_state(state["rng"])
    return state.get("progress", {})


def average_checkpoints(paths) -> dict:
    """The elementwise mean of the models in several checkpoints (same architecture), summed
    in float64."""
    total = None
    for path in paths:
        model_state = load(path)["model"]
        if total is None:
            first, total = path, {k: v.astype(np.float64) for k, v in model_state.items()}
            continue
        if set(model_state) != set(total) or any(model_state[k].shape != total[k].shape for k in total):
            raise ValueError(f"average_checkpoints: {path} holds a different model than {first} "
                             "(other parameter names or shapes)")
        for k, v in model_state.items():
            total[k] += v
    return {k: (v / len(paths)).astype(np.float32) for k, v in total.items()}


@minitx.no_grad()
def validation_loss(model, batches, pad_id) -> float:
    """Mean per-token cross-entropy (no label smoothing) over the batches."""
    model.eval()
    total, count = 0.0, 0
    for batch in batches:
        logits = model(batch.src, batch.tgt_in)
        loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=pad_id, reduction="sum")
        total += float(loss.item())
        count += batch.n_tgt_tokens
    model.train()
    return total / max(count, 1)


def evaluate_split(model, src_tok, tgt_tok, pairs, beam_size, length_penalty, progress=True) -> dict:
    """Translate a split and score it; returns the BLEU dict plus the translations."""
    from tqdm.auto import tqdm

    bar = tqdm(total=len(pairs), desc="translating", unit="sent", leave=False, disable=not progress)
    hyps, report = translate_sentences(model, src_tok, tgt_tok, [s for s, _ in pairs], beam_size=beam_size,
                                       length_penalty=length_penalty, progress=bar)
    bar.close()
    scores = bleu_scores(hyps, [t for _, t in pairs])
    scores.update(report)
    scores["translations"] = hyps
    return scores


def _json_safe(config) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in config.items()}


# ---------------------------------------------------------------- the training loop


def train(config: dict, resume: bool = False, progress: bool = True) -> dict:
    """Run (or resume) a training run; returns the final results dict."""
    from tqdm.auto import tqdm

    run_dir = Path(config["output_dir"])
    if resume:
        if not (run_dir / "config.json").is_file():
            raise FileNotFoundError(f"cannot resume: {run_dir} has no config.json, so it is not a minitx translation "
                                    "run; check --output-dir, or train without --resume to start a new run")
        saved = json.loads((run_dir / "config.json").read_text())
        # a resumed run keeps its configuration; only how long it runs may change
        for key in ("epochs", "max_steps", "time_limit"):
            if config.get(key) is not None and config[key] != saved.get(key):
                saved[key] = config[key]
        config = saved
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(_json_safe(config), indent=2))
    device = resolve_device(config["device"])
    minitx.manual_seed(config["seed"])
    started = time.perf_counter()

    train_pairs = load_pairs("train", config["src_lang"], config["tgt_lang"], config["data_dir"])
    val_pairs = load_pairs("val", config["src_lang"], config["tgt_lang"], config["data_dir"])
    src_tok, tgt_tok = build_tokenizers(config, train_pairs, run_dir)
    pad, bos, eos = tgt_tok.pad_id, tgt_tok.bos_id, tgt_tok.eos_id
    model = build_model(config, src_tok.vocab_size, tgt_tok.vocab_size, pad, device)
    opt, schedule = build_optimizer(config, model)
    max_len = model.max_len  # a preset brings its own
    train_src, train_tgt = encode_pairs(train_pairs, src_tok, tgt_tok)
    val_src, val_tgt = encode_pairs(val_pairs, src_tok, tgt_tok)
    kept, dropped = filter_by_length(train_src, train_tgt, max_len, max_tgt_len=max_len - 1)
    train_src, train_tgt = [train_src[i] for i in kept], [train_tgt[i] for i in kept]
    # validation batches go through the same positions: a longer pair would not fit the model
    val_kept, val_dropped = filter_by_length(val_src, val_tgt, max_len, max_tgt_len=max_len - 1)
    val_src, val_tgt = [val_src[i] for i in val_kept], [val_tgt[i] for i in val_kept]
    log(f"data: {len(train_pairs)} training pairs ({dropped} longer than max_len {max_len} left out), "
        f"{len(val_pairs)} validation pairs ({val_dropped} left out of the loss); "
        f"vocabulary {src_tok.vocab_size} / {tgt_tok.vocab_size} ({config['tokenizer']}); "
        f"{time.perf_counter() - started:.1f}s")
    log(f"model: {model.num_parameters():,} parameters on {device}")

    progress_state = {"step": 0, "epoch": 0, "batch": 0, "best_val_loss": math.inf, "train_seconds": 0.0}
    history = []
    if resume and (run_dir / "last.npz").exists():
        progress_state.update(load_checkpoint(run_dir / "last.npz", model, opt, schedule))
        if (run_dir / "history.json").exists():
            history = json.loads((run_dir / "history.json").read_text())
        log(f"resumed from {run_dir / 'last.npz'} at step {progress_state['step']} "
            f"(epoch {progress_state['epoch'] + 1}, batch {progress_state['batch']})")

    def checkpoint(path):
        save({"model": model.state_dict(), "optimizer": opt.state_dict(),
              "schedule": schedule.state_dict() if schedule else {}, "rng": mrandom.get_state(),
              "progress": dict(progress_state), "config": _json_safe(config)}, path)

    val_batches = [make_batch([val_src[i] for i in idx], [val_tgt[i] for i in idx], pad, bos, eos)
                   for idx in batch_by_tokens(val_src, val_tgt, config["max_tokens"], shuffle=False)]
    limit_seconds = config["time_limit"] * 60 if config["time_limit"] else None
    max_steps = config["max_steps"]
    stop_reason = None
    loop_started = time.perf_counter() - progress_state["train_seconds"]
    model.train()

    for epoch in range(progress_state["epoch"], config["epochs"]):
        progress_state["epoch"] = epoch
        batches = batch_by_tokens(train_src, train_tgt, config["max_tokens"], shuffle=True, seed=config["seed"],
                                  epoch=epoch)
        skip = progress_state["batch"]
        bar = tqdm(total=len(batches), initial=skip, desc=f"epoch {epoch + 1}/{config['epochs']}", unit="batch",
                   disable=not progress, mininterval=1.0, dynamic_ncols=True)
        window_tokens, window_start, epoch_loss, epoch_tokens = 0, time.perf_counter(), 0.0, 0
        for b in range(skip, len(batches)):
            idx = batches[b]
            batch = make_batch([train_src[i] for i in idx], [train_tgt[i] for i in idx], pad, bos, eos)
            logits = model(batch.src, batch.tgt_in)
            loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=pad,
                                   label_smoothing=config["label_smoothing"])
            opt.zero_grad()
            loss.backward()
            if config["clip_norm"]:
                optim.clip_grad_norm_(model.parameters(), config["clip_norm"])
            opt.step()
            if schedule is not None:
                schedule.step()
            loss_value = float(loss.item())
            if not math.isfinite(loss_value):
                raise FloatingPointError(f"training loss became {loss_value} at step {progress_state['step'] + 1}; "
                                         "lower the learning rate or raise warmup_steps")
            progress_state["step"] += 1
            progress_state["batch"] = b + 1
            tokens = batch.n_src_tokens + batch.n_tgt_tokens
            window_tokens += tokens
            epoch_loss += loss_value * batch.n_tgt_tokens
            epoch_tokens += batch.n_tgt_tokens
            bar.update(1)
            now = time.perf_counter()
            bar.set_postfix(loss=f"{loss_value:.3f}", tok_s=f"{window_tokens / max(now - window_start, 1e-9):.0f}",
                            lr=f"{opt.param_groups[0]['lr']:.2e}", refresh=False)
            progress_state["train_seconds"] = now - loop_started
            if progress_state["step"] % config["save_every"] == 0:
                checkpoint(run_dir / "last.npz")
            if max_steps and progress_state["step"] >= max_steps:
                stop_reason = f"reached max_steps {max_steps}"
            elif limit_seconds and progress_state["train_seconds"] >= limit_seconds:
                stop_reason = f"reached the time limit of {config['time_limit']} minutes"
            if stop_reason:
                break
        bar.close()
        epoch_done = progress_state["batch"] >= len(batches)
        if epoch_done:
            progress_state["batch"] = 0
            progress_state["epoch"] = epoch + 1

        val_loss = validation_loss(model, val_batches, pad)
        record = {"epoch": epoch + 1, "step": progress_state["step"], "complete": epoch_done,
                  "train_loss": epoch_loss / max(epoch_tokens, 1), "val_loss": val_loss,
                  "val_ppl": math.exp(min(val_loss, 50)), "seconds": round(progress_state["train_seconds"], 1)}
        if config["bleu_every"] and (epoch + 1) % config["bleu_every"] == 0:
            subset = val_pairs[: config["bleu_val_sentences"]] if config["bleu_val_sentences"] else val_pairs
            record["val_bleu"] = evaluate_split(model, src_tok, tgt_tok, subset, 1, 0.6, progress)["bleu"]
            model.train()
        history.append(record)
        log("epoch {epoch}: train loss {train_loss:.3f}, val loss {val_loss:.3f}, val ppl {val_ppl:.1f}".format(**record)
            + (f", val BLEU {record['val_bleu']:.2f}" if "val_bleu" in record else "")
            + f" ({record['seconds']:.0f}s of training)")
        if val_loss < progress_state["best_val_loss"]:
            progress_state["best_val_loss"] = val_loss
            save({"model": model.state_dict(), "config": _json_safe(config)}, run_dir / "best.npz")
        checkpoint(run_dir / "last.npz")
        if epoch_done and config["average_last"] > 1:
            save({"model": model.state_dict(), "config": _json_safe(config)}, run_dir / f"epoch-{epoch + 1}.npz")
            stale = run_dir / f"epoch-{epoch + 1 - config['average_last']}.npz"
            if stale.exists():
                stale.unlink()
        (run_dir / "history.json").write_text(json.dumps(history, indent=2))
        if stop_reason:
            break
    log(f"training stopped: {stop_reason or 'all epochs done'} after {progress_state['step']} steps, "
        f"{progress_state['train_seconds']:.0f}s")

    return finish(config, model, src_tok, tgt_tok, run_dir, progress_state, started, progress)


def finish(config, model, src_tok, tgt_tok, run_dir: Path, progress_state, started, progress=True) -> dict:
    """Pick the final model (averaged, else best by validation loss), score it on the test
    split, show one translation, and write results.json."""
    epoch_files = sorted(run_dir.glob("epoch-*.npz"), key=lambda p: int(p.stem.split("-")[1]))
    chosen = "best"
    if config["average_last"] > 1 and len(epoch_files) >= 2:
        save({"model": average_checkpoints(epoch_files), "config": _json_safe(config)}, run_dir / "averaged.npz")
        chosen = "averaged"
        log(f"averaged the last {len(epoch_files)} epoch checkpoints into {run_dir / 'averaged.npz'}")
    load_checkpoint(run_dir / f"{chosen}.npz", model)
    test_pairs = load_pairs(TEST_SPLIT, config["src_lang"], config["tgt_lang"], config["data_dir"])
    eval_started = time.perf_counter()
    scores = evaluate_split(model, src_tok, tgt_tok, test_pairs, config["beam_size"], config["length_penalty"],
                            progress)
    example_src, example_ref = test_pairs[0]
    results = {
        "split": TEST_SPLIT, "direction": f"{config['src_lang']}-{config['tgt_lang']}", "checkpoint": chosen,
        "bleu": scores["bleu"], "bleu_lowercase": scores["bleu_lowercase"], "signature": scores["signature"],
        "beam_size": config["beam_size"], "steps": progress_state["step"],
        "train_seconds": round(progress_state["train_seconds"], 1),
        "eval_seconds": round(time.perf_counter() - eval_started, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
        "parameters": model.num_parameters(), "device": model.device,
        "example": {"source": example_src, "reference": example_ref, "translation": scores["translations"][0]},
    }
    (run_dir / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    (run_dir / f"{TEST_SPLIT}.hyp.{config['tgt_lang']}").write_text("\n".join(scores["translations"]) + "\n")
    print(f"\nsource:      {example_src}\nreference:   {example_ref}\ntranslation: {scores['translations'][0]}")
    print(f"\n{TEST_SPLIT} {results['direction']} ({chosen} checkpoint, beam {config['beam_size']}): "
          f"BLEU {scores['bleu']:.2f} (lowercased {scores['bleu_lowercase']:.2f})")
    print(f"sacreBLEU signature: {scores['signature']}")
    print(f"total time {results['total_seconds']:.0f}s (training {results['train_seconds']:.0f}s); "
          f"run directory {run_dir}{os.sep}")
    return results


def load_run(run_dir, checkpoint="best", device="auto"):
    """(config, model, src_tokenizer, tgt_tokenizer) of a finished or running run."""
    run_dir = Path(run_dir)
    config_path = run_dir / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"{run_dir} is not a minitx translation run (no config.json)")
    config = json.loads(config_path.read_text())
    src_tok = load_tokenizer(run_dir / "tokenizer.src.json")
    tgt_tok = load_tokenizer(run_dir / "tokenizer.tgt.json")
    model = build_model(config, src_tok.vocab_size, tgt_tok.vocab_size, tgt_tok.pad_id, resolve_device(device))
    path = Path(checkpoint) if str(checkpoint).endswith(".npz") else run_dir / f"{checkpoint}.npz"
    load_checkpoint(path, model)
    model.eval()
    return config, model, src_tok, tgt_tok
