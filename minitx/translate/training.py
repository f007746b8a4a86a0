"""Training a translation Transformer on Multi30k: tokenizers, data, model, loss, evaluation.

The loop, checkpoints, resume and averaging are the general trainer's (minitx.train); this
module supplies what is particular to translation.

A run lives in one directory:

    config.json         the full configuration (recipe + options), written when training starts
                        (the directory is made only then, once the data, tokenizers and model
                        are ready); its "built" entry records the vocabularies and the model built
    tokenizer.src.json  tokenizers (one file when the vocabulary is joint, then both names exist)
    tokenizer.tgt.json
    last.npz            the newest state: model, optimizer, schedule, RNG, position in the data;
                        written every ``save_every`` steps and at each epoch's end
    best.npz            the model with the lowest validation loss so far
    epoch-<n>.npz       the model after epoch n (the last ``average_last`` are kept, for averaging;
                        all of them with keep_epochs)
    averaged.npz        the average of those, when average_last > 1 (the final model if its
                        validation loss is lower than best.npz's)
    history.json        per-epoch metrics;  results.json: the final test scores

``--resume`` reloads last.npz and continues exactly where it stopped: the same batches in
the same order (they depend only on seed and epoch), the same optimizer moments and rates.
A new run refuses a directory that already holds one, unless ``overwrite`` deletes its files.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from pathlib import Path

import minitx
import minitx.functional as F
from minitx import amp, blas, kernels
from minitx.backend import resolve_device
from minitx.data import (BPETokenizer, WordTokenizer, batch_by_tokens, count_oversize, ensure_files, example_lengths,
                         filter_by_length, load_tokenizer, make_batch, read_pairs, static_shape)
from minitx.nn import Transformer
from minitx.serialization import load, read_json
from minitx.sync import GPU_SYNC_EVERY
from minitx.train import (APPLICATION_FILES, APPLICATION_PATTERNS, TRAINER_FILES, TRAINER_PATTERNS, RunLifecycle,
                          Trainer, TrainingInterrupted, check_data, json_safe, load_checkpoint, log, log_data_read,
                          mean_loss, resolve_data_dir, write_json)
from minitx.translate.evaluation import (MOSES_HINT, bleu_scores, moses_available, report_lines,
                                        translate_sentences)
from minitx.translate.text import TextForm
from minitx.translate.recipes import (DEFAULTS, EXTRA_KEYS, MODEL_ARGS, OPTIMIZERS, SCHEDULES, TOKENIZERS,
                                      model_arguments, preset_settings, validate_config)

TEST_SPLIT = "test_2016_flickr"


# ---------------------------------------------------------------- pieces of a run


def build_tokenizers(config, train_pairs):
    """Train the (source, target) tokenizers of recipes.TOKENIZERS on the training text: one
    object when the vocabulary is joint."""
    tokenizer_class, _ = TOKENIZERS[config["tokenizer"]]
    options = ((config["vocab_size"],) if tokenizer_class is BPETokenizer
               else (config["min_freq"], config["lowercase"]))
    sources = [s for s, _ in train_pairs]
    targets = [t for _, t in train_pairs]
    if config["joint_vocab"]:
        src_tok = tgt_tok = tokenizer_class.train(sources + targets, *options)
    else:
        src_tok, tgt_tok = tokenizer_class.train(sources, *options), tokenizer_class.train(targets, *options)
    return src_tok, tgt_tok


def _saved_tokenizers(run_dir: Path, action: str, advice: str) -> tuple:
    """(source, target) tokenizers of a run; a missing file is an error naming it, saying that
    ``action`` cannot go on without it, and ``advice``."""
    paths = [Path(run_dir) / "tokenizer.src.json", Path(run_dir) / "tokenizer.tgt.json"]
    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"cannot {action} {run_dir}: its {' and '.join(missing)} "
                                f"{'is' if len(missing) == 1 else 'are'} missing (a run writes both tokenizers "
                                f"before its config.json); {advice}")
    return tuple(load_tokenizer(path) for path in paths)


def load_run_tokenizers(config, run_dir: Path):
    """The run's saved tokenizers, checked against its configuration (the kind, joint or
    separate vocabularies, the vocabulary sizes, lowercasing). A missing file is an error: a run
    writes both before its config.json, and one learned again here would not be written back, so
    the finished run could not translate. (Refused, not learned again: a BPE learned again is the
    same only on the same data, and a run killed before its first checkpoint has no digest of
    its tokenizers to prove it.)"""
    src_tok, tgt_tok = _saved_tokenizers(run_dir, "resume", "restore the file, or start a new run (another "
                                                            "--output-dir, or --overwrite)")
    problems = []
    wanted, _ = TOKENIZERS[config["tokenizer"]]
    for side, tok in (("source", src_tok), ("target", tgt_tok)):
        if not isinstance(tok, wanted):
            problems.append(f"the {side} tokenizer is a {type(tok).__name__}, but tokenizer is {config['tokenizer']!r}")
    joint = src_tok.to_dict() == tgt_tok.to_dict()
    if joint != config["joint_vocab"]:
        problems.append("the tokenizers are " + ("one joint vocabulary" if joint else "two separate vocabularies")
                        + f", but joint_vocab is {str(config['joint_vocab']).lower()}")
    built = config.get("built") or {}
    for side, tok, key in (("source", src_tok, "src_vocab"), ("target", tgt_tok, "tgt_vocab")):
        if config["tokenizer"] == "bpe" and tok.vocab_size != config["vocab_size"] \
                and not (tok.vocab_size < config["vocab_size"] and built.get(key) == tok.vocab_size):
            # (a BPE vocabulary may stop short of vocab_size; the run then recorded its real size)
            problems.append(f"the {side} vocabulary has {tok.vocab_size} tokens, but vocab_size is "
                            f"{config['vocab_size']}")
        elif config["tokenizer"] == "word" and key in built and tok.vocab_size != built[key]:
            problems.append(f"the {side} vocabulary has {tok.vocab_size} tokens, but the run built "
                            f"{built[key]}")
        if isinstance(tok, WordTokenizer) and tok.lowercase != config["lowercase"]:
            problems.append(f"the {side} tokenizer has lowercase={str(tok.lowercase).lower()}, but lowercase is "
                            f"{str(config['lowercase']).lower()}")
    if problems:
        raise ValueError(f"the tokenizers in {run_dir} do not match its config.json: " + "; ".join(problems)
                         + ". Start a new run (another --output-dir, or --overwrite)")
    if joint:
        tgt_tok = src_tok  # one vocabulary, one object (as when it was trained)
    return src_tok, tgt_tok


def build_model(config, src_vocab: int, tgt_vocab: int, pad_id: int, device: str) -> Transformer:
    """The configuration's model. Every model setting goes through recipes.MODEL_ARGS; with a
    preset, the settings that differ from the preset's own are passed as its overrides (so
    the result is the model the configuration describes, preset or not)."""
    shared = {"pad_id": pad_id, "device": device}
    arguments = model_arguments(config)
    if config["preset"]:
        own = model_arguments(preset_settings(config["preset"]))
        overrides = {arg: value for arg, value in arguments.items() if value != own[arg]}
        return Transformer.from_preset(config["preset"], src_vocab, tgt_vocab, **overrides, **shared)
    return Transformer(src_vocab, tgt_vocab, **arguments, **shared)


def build_optimizer(config, model):
    """(optimizer, schedule or None) of a validated configuration, from recipes.OPTIMIZERS and
    recipes.SCHEDULES."""
    optimizer_class, _ = OPTIMIZERS[config["optimizer"]]
    opt = optimizer_class(model.parameters(), lr=config["lr"], betas=tuple(config["betas"]), eps=config["eps"],
                          weight_decay=config["weight_decay"])
    build_schedule, _ = SCHEDULES[config["schedule"]]
    return opt, build_schedule(opt, config, model.d_model)


def encode_pairs(pairs, src_tok, tgt_tok, source_eos=False):
    """(source ids, target ids) of the pairs; a blank side (empty, or spaces only) is no ids, as
    translate_sentences reads a blank line; with ``source_eos`` each source that is not empty ends
    with <eos>, as the model then reads it."""
    src = [src_tok.encode_ids(s) if s.strip() else [] for s, _ in pairs]
    if source_eos:
        src = [ids + [src_tok.eos_id] if ids else ids for ids in src]
    return src, [tgt_tok.encode_ids(t) if t.strip() else [] for _, t in pairs]


def encode_fitting(pairs, src_tok, tgt_tok, max_len: int, source_eos=False) -> tuple:
    """(source ids, target ids, how many pairs were too long, [(index, side)] of the pairs with an
    empty side) of the pairs that fit a model of max_len positions (the target also needs its
    <bos>); side is 0 where the source is empty, else 1. Both kinds are left out."""
    src, tgt = encode_pairs(pairs, src_tok, tgt_tok, source_eos)
    kept, dropped = filter_by_length(src, tgt, max_len, max_tgt_len=max_len - 1)  # (min_len 1: empty too)
    empty = [(i, 0 if not s else 1) for i, (s, t) in enumerate(zip(src, tgt)) if not s or not t]
    return [src[i] for i in kept], [tgt[i] for i in kept], dropped - len(empty), empty


def validation_loss(model, batches, pad_id) -> float:
    """Mean per-token cross-entropy (no label smoothing) over the batches, in eval mode; the
    model's mode (training or eval) is restored afterwards."""
    def summed(model, batch):
        logits = model(batch.src, batch.tgt_in)
        return F.cross_entropy(logits, batch.tgt_out, ignore_index=pad_id, reduction="sum"), batch.n_tgt_tokens

    return mean_loss(model, batches, summed)


def evaluate_split(model, src_tok, tgt_tok, pairs, beam_size, length_penalty, progress=True, lang=None,
                   text=None, search="gnmt", source_eos=False) -> dict:
    """Translate a split and score it against its references as the corpus writes them; returns
    the BLEU dict plus the translations. ``text``: the run's TextForm (None: as-is); ``search``
    and ``source_eos``: as translate_sentences takes them. With ``lang`` (the target language)
    and sacremoses installed, also the published tables' BLEU."""
    from tqdm.auto import tqdm

    # disable=None: no bar where stderr is no terminal (a log file would fill with \r frames)
    bar = tqdm(total=len(pairs), desc="translating", unit="sent", leave=False, disable=None if progress else True)
    try:
        hyps, report, written = translate_sentences(model, src_tok, tgt_tok, [s for s, _ in pairs],
                                                    beam_size=beam_size, length_penalty=length_penalty, progress=bar,
                                                    text=text, search=search, model_form=True, source_eos=source_eos)
    finally:  # (cleared on Ctrl-C too, so the message that follows starts its own line)
        bar.close()
    # a model that writes the published form is scored on its own tokens (evaluation.moses_bleu);
    # a word tokenizer's are not Moses's (and its output was detokenized): its text is tokenized again
    published = written if text is not None and text.form == "moses-lowercase" and not isinstance(
        tgt_tok, WordTokenizer) else None
    scores = bleu_scores(hyps, [t for _, t in pairs], lang if lang is not None and moses_available() else None,
                         hypothesis_tokens=published)
    scores.update(report)
    scores["translations"] = hyps
    return scores


# ---------------------------------------------------------------- run directories

# the files a run writes (and --overwrite deletes): the trainer's, the tokenizers, the results,
# the plot command's curves, the test translations; any of them means the directory holds a run.
# (APPLICATION_FILES also holds a pretraining run's tokenizer.json: an --overwrite of one leaves
# nothing of it behind)
RUN_FILES = (*TRAINER_FILES, *APPLICATION_FILES)
RUN_PATTERNS = (*TRAINER_PATTERNS, *APPLICATION_PATTERNS)

# may change when a run is resumed: they change how long it runs, how often it saves or is
# measured, where it runs and how it is finally decoded, not what it learns
RESUME_MAY_CHANGE = ("epochs", "max_steps", "time_limit", "patience", "save_every", "bleu_every",
                     "bleu_val_sentences", "device", "beam_size", "length_penalty", "beam_search", "average_last",
                     "data_dir", "sync_every", "cuda_graphs", "keep_epochs")
# None (auto) in a new run's configuration is resolved for the device when the run starts and
# written to config.json as chosen
RESOLVED_AT_START = ("precision", "static_shapes", "attention_kernels")


def _upgrade_saved(config: dict) -> dict:
    """A config.json written before runs recorded what they built (no 'built' key) described
    a preset's model wrongly: the preset was built unchanged, its model keys were not used.
    Those keys get the preset's values, so the same model is built again. One written before
    precision or static_shapes existed ran in float32 on the batches as they came, and one written
    before attention_kernels existed on attention.cu's kernels: it gets those values, not the
    defaults (which a new run resolves for its device). One written before activation_dropout
    existed dropped the feed-forward's activations at the rate of dropout (None says so), one
    written before beam_search existed decoded with the gnmt search, and one written before
    embed_init or source_eos existed drew its embeddings as every matrix (xavier) and read its
    sources without <eos>."""
    if config.get("preset") and "built" not in config:
        config = {**config, **preset_settings(config["preset"])}
    return {"precision": "fp32", "static_shapes": False, "attention_kernels": "cuda-cores",
            "activation_dropout": None, "beam_search": "gnmt", "embed_init": "xavier", "source_eos": False, **config}


def _describe_embeddings(config, model) -> str:
    if model.config["share_embeddings"]:
        words = "one embedding table shared by both languages (joint vocabulary)"
    elif not config["joint_vocab"]:
        words = "separate source and target embeddings (separate vocabularies: share_embeddings is off)"
    else:
        words = "separate source and target embeddings"
    return words + (", output layer tied to the target embedding" if model.config["tie_output"] else "")


# ---------------------------------------------------------------- the training loop


def train(config: dict, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict:
    """Run (or resume) a training run; returns the final results dict.

    A new run (resume False) needs a complete configuration (build_config); it is validated
    before anything is written, and a directory that already holds a run is refused unless
    ``overwrite`` deletes that run's files (RUN_FILES, epoch-*.npz, *.hyp.*) first.

    ``resume=True`` continues the run in config["output_dir"] with its saved config.json.
    ``config`` may then be partial ({"output_dir": ..., "max_steps": 5000}) or complete: every
    key it holds is compared with the saved value (minitx.train.resume_config); a different value is
    allowed for RESUME_MAY_CHANGE (and logged), for any other key it is an error. The saved
    tokenizers are checked against the configuration.

    The run's life (those rules, the device, when files are written) is minitx.train's
    RunLifecycle; the loop, checkpoints and averaging its Trainer. This function supplies the
    translation parts: tokenizers, data, model, the label-smoothed loss, validation BLEU.
    """
    if resume:  # an auto (None) setting a run resolved at its start stays as the run chose it
        config = {key: value for key, value in config.items() if not (key in RESOLVED_AT_START and value is None)}
    run = RunLifecycle(config["output_dir"], config, kind="translation", resume=resume, overwrite=overwrite,
                       defaults=DEFAULTS, extra_keys=EXTRA_KEYS, may_change=may_change_on_resume,
                       validate=validate_config, upgrade=_upgrade_saved, files=RUN_FILES, patterns=RUN_PATTERNS,
                       start_files=("tokenizer.src.json", "tokenizer.tgt.json"))
    config = run.config if resume else dict(run.config, built=None)  # 'built' is filled in once the model is
    run.config = config
    started = time.perf_counter()
    # everything that can fail (data, tokenizers, model) comes before the run directory is touched
    data, files = _load_data(config, from_run=resume and "data_dir" not in run.changes, progress=progress)
    check_data(config, {split: data[split] for split in ("train", "val")},
               {split: ", ".join(str(path) for path in files[split]) for split in ("train", "val")},
               run.run_dir if resume else None)
    text = text_form(config)
    learned = {split: text.pairs(data[split]) for split in ("train", "val")}  # what the model reads and writes
    tokenizers = load_run_tokenizers(config, run.run_dir) if resume else build_tokenizers(config, learned["train"])
    src_tok, tgt_tok = tokenizers
    model, opt, schedule = _build_model_and_optimizer(config, src_tok, tgt_tok, run.device)
    # recorded in config.json: a resume batches and computes alike
    config["precision"] = config["precision"] or amp.default_precision(run.device)
    config["static_shapes"], cuda_graphs, note = step_mode(config, run.device)
    config["attention_kernels"] = attention_kernels(config, run.device)
    if run.device == "cuda":
        log(f"steps: {'captured as CUDA graphs' if cuda_graphs else 'eager'}, "
            f"{'static' if config['static_shapes'] else 'batch'} shapes, precision {config['precision']}, "
            f"attention on the {config['attention_kernels'].replace('-', ' ')}" + (f" ({note})" if note else ""))
    encoded = _encode_data(config, learned, files, src_tok, tgt_tok, model, started)

    last = run.run_dir / "last.npz"
    if resume and last.exists():  # the checkpoint must be this directory's: its config and tokenizers
        check_run_files(last, load(last), config, src_tok, tgt_tok)
    run.begin(lambda run_dir: (src_tok.save(run_dir / "tokenizer.src.json"),
                               tgt_tok.save(run_dir / "tokenizer.tgt.json")))
    trainer = _make_trainer(config, run.run_dir, model, opt, schedule, encoded, data["val"], src_tok, tgt_tok,
                            progress, cuda_graphs, text)
    # every attention of the run (in bf16 its evaluation and decoding stay float32: the CUDA cores)
    with kernels.use_tensor_core_attention(config["attention_kernels"] == "tensor-cores"):
        run.fit(trainer)
        try:
            return finish(config, trainer, src_tok, tgt_tok, data["test"], text, started, progress)
        except KeyboardInterrupt as stop:
            if isinstance(stop, TrainingInterrupted):
                raise
            raise TrainingInterrupted(f"interrupted while the final model was chosen and evaluated; the training is "
                                      f"saved ({trainer.path('last.npz')} at step {trainer.progress['step']}), and "
                                      f"a resume finishes the run") from None


def attention_kernels(config, device: str) -> str:
    """The attention kernels a run on ``device`` uses: what the configuration says, else
    'tensor-cores' where MINITX_ATTENTION_MMA asks for them and the run can take them (a GPU of
    compute capability 8.0 or above, precision tf32 or bf16), else 'cuda-cores'. (A CPU run's
    attention is NumPy's either way.) 'tensor-cores' asked for where they cannot run is an error:
    a run must not record kernels it did not use."""
    fits = device == "cuda" and config["precision"] in ("tf32", "bf16") and _tensor_cores_present()
    if config["attention_kernels"] == "tensor-cores" and not fits:
        raise ValueError("attention_kernels 'tensor-cores' needs a GPU of compute capability 8.0 or above and "
                         f"precision tf32 or bf16; this run has device {device!r} and precision "
                         f"{config['precision']!r}")
    if config["attention_kernels"] is not None:
        return config["attention_kernels"]
    return "tensor-cores" if fits and kernels.tensor_core_attention_allowed() else "cuda-cores"


def _tensor_cores_present() -> bool:
    """Whether the current GPU's tensor cores take bfloat16 and TF32 operands (compute capability
    8.0 and above)."""
    import cupy  # noqa: PLC0415 (only asked on a GPU)

    return int(cupy.cuda.Device().compute_capability) >= 80


def may_change_on_resume(saved: dict) -> tuple:
    """RESUME_MAY_CHANGE, less max_steps when it is the length of a cosine schedule's decay."""
    return tuple(key for key in RESUME_MAY_CHANGE if not (key == "max_steps" and saved.get("schedule") == "cosine"))


def sync_every(config, device: str):
    """How often the Trainer reads the device back: the configured N, else every
    sync.GPU_SYNC_EVERY steps on the GPU (so no step waits for it) and every step on the CPU
    (where a read costs nothing)."""
    if config["sync_every"] is not None:
        return config["sync_every"]
    return GPU_SYNC_EVERY if device == "cuda" else None


def step_mode(config, device: str) -> tuple:
    """(static_shapes, cuda_graphs, note) of a run on ``device``. What the configuration sets
    holds; where it says None (auto), the step is captured as a CUDA graph (same bits, fewer
    launches) wherever that works: on a GPU, with nvmath-python, one batch per step, on static
    shapes (one graph per shape, so a few dozen graphs at most). ``note`` says why auto left the
    graphs off on a GPU."""
    graphs, static = config["cuda_graphs"], config["static_shapes"]
    lacks = None
    if device == "cuda" and graphs is None:
        lacks = ("nvmath-python is not installed (pip install nvmath-python)" if not blas.available() else
                 f"accumulate is {config['accumulate']}" if config["accumulate"] != 1 else
                 "static_shapes is false" if static is False else None)
    if static is None:
        static = bool(graphs) or (device == "cuda" and graphs is None and lacks is None)
    if graphs is None:
        graphs = device == "cuda" and lacks is None
    return static, graphs, None if lacks is None else f"CUDA graphs off: {lacks}"


def decoding(config) -> dict:
    """How a run's translations are made, as keywords of translate_sentences and evaluate_split:
    its beam, length penalty and search, its text form, and whether its sources end with <eos>
    (``config``: as train or load_run gives it, upgraded)."""
    return dict(beam_size=config["beam_size"], length_penalty=config["length_penalty"],
                search=config["beam_search"], text=text_form(config), source_eos=config["source_eos"])


def text_form(config) -> TextForm:
    """The run's text form (a config.json written before ``text`` existed: as-is); a word
    tokenizer that lowercases makes its translations lowercase in any form."""
    return TextForm(config.get("text", "as-is"), config["src_lang"], config["tgt_lang"],
                    lowercase_output=config["tokenizer"] == "word" and config["lowercase"])


def _load_data(config, from_run=False, progress=True) -> tuple:
    """({split: pairs}, {split: (source file, target file)}) of the train, val and test splits:
    the test split too, so that a damaged test file is an error before training, not after it.
    Logs the directory they were read from. config["data_dir"] is made absolute (minitx.train's
    resolve_data_dir, as pretraining's), so that the run finds it again from another directory;
    ``from_run``: it is the resumed run's own (config.json's), not given to this command.
    ``progress``: a download's bars."""
    resolve_data_dir(config, from_run)
    langs = config["src_lang"], config["tgt_lang"]
    files = {split: ensure_files(name, langs, config["data_dir"], progress=progress)
             for split, name in (("train", "train"), ("val", "val"), ("test", TEST_SPLIT))}
    data = {split: read_pairs(split, paths) for split, paths in files.items()}
    log_data_read(files, config["data_dir"], from_run)
    return data, files


def _build_model_and_optimizer(config, src_tok, tgt_tok, device) -> tuple:
    """(model, optimizer, schedule), seeded; records what was built in config["built"]."""
    minitx.manual_seed(config["seed"])
    model = build_model(config, src_tok.vocab_size, tgt_tok.vocab_size, tgt_tok.pad_id, device)
    config["built"] = {"src_vocab": src_tok.vocab_size, "tgt_vocab": tgt_tok.vocab_size,
                       "parameters": model.num_parameters(), "transformer": json_safe(model.config)}
    log(f"model: {model.num_parameters():,} parameters on {device}; {_describe_embeddings(config, model)}")
    return (model, *build_optimizer(config, model))


def _encode_data(config, data, files, src_tok, tgt_tok, model, started) -> dict:
    """The training and validation pairs as ids, those that fit the model's positions (``files``:
    each split's files, _load_data's, named in the log)."""
    fitting = functools.partial(encode_fitting, src_tok=src_tok, tgt_tok=tgt_tok, max_len=model.max_len,
                                source_eos=config["source_eos"])
    train_src, train_tgt, dropped, empty = fitting(data["train"])
    # validation batches go through the same positions: a longer pair would not fit the model
    val_src, val_tgt, val_dropped, val_empty = fitting(data["val"])
    eos = " with the source's <eos>" if config["source_eos"] else ""
    # refused before anything is written: no training pair trains 0 steps, and no validation pair
    # makes the validation loss a mean of nothing, on which no epoch can be chosen as the best
    for split, kept, longer, blank, where in (("training", train_src, dropped, empty, files["train"]),
                                              ("validation", val_src, val_dropped, val_empty, files["val"])):
        if not kept:
            raise ValueError(f"no {split} pair fits max_len {model.max_len}: of the {longer + len(blank)} pairs of "
                             f"{where[0]} and {where[1].name}, {longer} are longer (the source{eos}, or the target "
                             f"with <bos>) and {len(blank)} have an empty side; give a larger --max-len")
    log(f"data: {len(data['train'])} training pairs ({dropped} longer than max_len {model.max_len}{eos}"
        f"{_empty_note(empty, files['train'])} left out), "
        f"{len(data['val'])} validation pairs ({val_dropped}{_empty_note(val_empty, files['val'])} left out of the "
        "loss); "
        f"vocabulary {src_tok.vocab_size} / {tgt_tok.vocab_size} ({config['tokenizer']}); "
        f"{time.perf_counter() - started:.1f}s")
    # said once here, where batch_by_tokens would warn of them at every epoch (the batches are
    # made with warn_oversize=False)
    oversize = [count_oversize(src, tgt, config["max_tokens"]) for src, tgt in ((train_src, train_tgt),
                                                                                 (val_src, val_tgt))]
    if any(oversize):
        log(f"data: {oversize[0]} training and {oversize[1]} validation pairs are longer than max_tokens "
            f"{config['max_tokens']} on their own (the longer side, with <bos> or <eos>): each is a batch of its own, "
            "past the budget; a larger --max-tokens batches them")
    return {"train": (train_src, train_tgt), "val": (val_src, val_tgt)}


def _empty_note(empty, files) -> str:
    """How many pairs have an empty side (an empty line: a misaligned corpus, say), and the first
    one's file and line; "" when none."""
    if not empty:
        return ""
    index, side = empty[0]
    return f", {len(empty)} with an empty source or target line (first: {files[side]} line {index + 1})"


def _make_trainer(config, run_dir, model, opt, schedule, encoded, val_pairs, src_tok, tgt_tok, progress,
                  cuda_graphs, text) -> Trainer:
    """The Trainer of a translation run: its batches, the label-smoothed loss, the validation
    loss and BLEU (of ``val_pairs`` as the corpus writes them, read and written in the run's
    ``text`` form); its steps captured as CUDA graphs where ``cuda_graphs`` (step_mode)."""
    pad = tgt_tok.pad_id
    train_src, train_tgt = encoded["train"]
    val_src, val_tgt = encoded["val"]
    shape_of = ((lambda width: static_shape(width, config["max_tokens"], limit=model.max_len))
                if config["static_shapes"] else None)
    # (the pairs longer than max_tokens alone were reported once, by _encode_data)
    val_batches = PairBatches(val_src, val_tgt, batch_by_tokens(val_src, val_tgt, config["max_tokens"], shuffle=False,
                                                                warn_oversize=False), tgt_tok, shape_of)

    def batches(seed, epoch):
        order = batch_by_tokens(train_src, train_tgt, config["max_tokens"], shuffle=True, seed=seed, epoch=epoch,
                                warn_oversize=False)
        return PairBatches(train_src, train_tgt, order, tgt_tok, shape_of)

    precision = amp.step_precision(config["precision"], model.device)  # a fresh context per step

    def loss_fn(model, batch):
        with precision():
            logits = model(batch.src, batch.tgt_in)
            loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=pad,
                                   label_smoothing=config["label_smoothing"])
        return loss, batch.n_tgt_tokens

    def evaluate(model, epoch):
        if not (config["bleu_every"] and epoch % config["bleu_every"] == 0):
            return {}
        subset = val_pairs[: config["bleu_val_sentences"]] if config["bleu_val_sentences"] else val_pairs
        scores = evaluate_split(model, src_tok, tgt_tok, subset, progress=progress,
                                **{**decoding(config), "beam_size": 1, "search": "gnmt"})  # greedy
        # a lowercase run's cased BLEU compares lowercase with cased references: its lowercased one
        return {"val_bleu": scores["bleu_lowercase" if text.lowercase else "bleu"]}

    return Trainer(run_dir, model, opt, loss_fn, batches, schedule=schedule,
                   validation_loss=lambda m: validation_loss(m, val_batches, pad), evaluate=evaluate,
                   epochs=config["epochs"], max_steps=config["max_steps"], time_limit=config["time_limit"],
                   save_every=config["save_every"], average_last=config["average_last"],
                   keep_epochs=config["keep_epochs"], patience=config["patience"],
                   clip_norm=config["clip_norm"], seed=config["seed"], accumulate=config["accumulate"],
                   extra={"config": json_safe(config), "tokenizers": tokenizer_digest(src_tok, tgt_tok)},
                   throughput=lambda batch: batch.n_src_tokens + batch.n_tgt_tokens, progress=progress,
                   sync_every=sync_every(config, model.device), scaler=amp.loss_scaler(config["precision"]),
                   cuda_graphs=cuda_graphs, weight_of=lambda batch: batch.n_tgt_tokens)


class PairBatches:
    """The batches of one pass over encoded pairs: ``order`` lists each batch's pair indices;
    a batch's tensors are made only when it is used (a resumed epoch skips the rest).
    ``shape_of(width)``, when given, is the (rows, columns) a batch of that padded width is
    padded to (static shapes)."""

    def __init__(self, src, tgt, order, tgt_tok, shape_of=None):
        self.src, self.tgt, self.order, self.tgt_tok, self.shape_of = src, tgt, order, tgt_tok, shape_of

    def __len__(self):
        return len(self.order)

    def __getitem__(self, part: slice):
        """The batches ``part`` of these (a resumed epoch starts at its saved batch)."""
        return PairBatches(self.src, self.tgt, self.order[part], self.tgt_tok, self.shape_of)

    def __iter__(self):
        tok = self.tgt_tok
        for idx in self.order:
            src, tgt = [self.src[i] for i in idx], [self.tgt[i] for i in idx]
            shape = None
            if self.shape_of is not None:
                shape = self.shape_of(int(example_lengths(src, tgt).max()))
            yield make_batch(src, tgt, tok.pad_id, tok.bos_id, tok.eos_id, shape=shape)


def finish(config, trainer, src_tok, tgt_tok, test_pairs, text, started, progress=True) -> dict:
    """Load the final model (Trainer.choose_final: best.npz, or averaged.npz when its
    validation loss is lower), score it on the test split, show one translation, and write
    results.json."""
    run_dir, model, progress_state = trainer.run_dir, trainer.model, trainer.progress
    chosen, candidates = trainer.choose_final()
    eval_started = time.perf_counter()
    scores = evaluate_split(model, src_tok, tgt_tok, test_pairs, progress=progress, lang=config["tgt_lang"],
                            **decoding(config))
    for message in report_lines(scores, model.max_len, config["source_eos"]):
        log(f"{TEST_SPLIT}: {message}")
    example_src, example_ref = test_pairs[0]
    results = {
        "split": TEST_SPLIT, "direction": f"{config['src_lang']}-{config['tgt_lang']}", "checkpoint": chosen,
        "text": text.form,
        "val_loss": {name: round(loss, 5) for name, loss in candidates.items()},
        "bleu": scores["bleu"], "bleu_lowercase": scores["bleu_lowercase"], "signature": scores["signature"],
        "bleu_tokens_lowercase": scores["bleu_tokens_lowercase"], "signature_tokens": scores["signature_tokens"],
        **{key: scores[key] for key in ("bleu_moses_lowercase", "signature_moses") if key in scores},
        "beam_size": config["beam_size"], "length_penalty": config["length_penalty"],
        "beam_search": config["beam_search"],
        "empty": scores["empty"], "truncated": scores["truncated"], "capped": scores["capped"],
        "steps": progress_state["step"],
        "train_seconds": round(progress_state["train_seconds"], 1),
        "eval_seconds": round(time.perf_counter() - eval_started, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
        "parameters": model.num_parameters(), "device": model.device,
        "example": {"source": example_src, "reference": example_ref, "translation": scores["translations"][0]},
    }
    write_json(run_dir / "results.json", results, indent=2, ensure_ascii=False)
    # UTF-8 as the corpus and results.json, not the locale's encoding (cp1252 on Windows has no "ř")
    (run_dir / f"{TEST_SPLIT}.hyp.{config['tgt_lang']}").write_text("\n".join(scores["translations"]) + "\n",
                                                                    encoding="utf-8")
    print(f"\nsource:      {example_src}\nreference:   {example_ref}\ntranslation: {scores['translations'][0]}")
    search = ", fairseq search" if config["beam_search"] == "fairseq" else ""
    print(f"\n{TEST_SPLIT} {results['direction']} ({chosen} checkpoint, beam {config['beam_size']}{search}): "
          f"BLEU {scores['bleu']:.2f} (lowercased {scores['bleu_lowercase']:.2f}; the tutorials' lowercased-token "
          f"BLEU {scores['bleu_tokens_lowercase']:.2f})")
    print(f"sacreBLEU signature: {scores['signature']}")
    print(moses_line(scores))
    if text.score_note():
        print(text.score_note())
    # (total_seconds: this command's, from its start; train_seconds: the run's, every resume's steps included)
    print(f"this command took {results['total_seconds']:.0f}s; the run trained for {results['train_seconds']:.0f}s in "
          f"all; run directory {run_dir}{os.sep}")
    return results


def moses_line(scores) -> str:
    """The published tables' BLEU as one line, or how to get it."""
    if "bleu_moses_lowercase" not in scores:
        return MOSES_HINT
    return f"lowercased, Moses-tokenized BLEU {scores['bleu_moses_lowercase']:.2f}, as the published Multi30k " \
           f"tables measure it ({scores['signature_moses']})"


def checkpoint_path(run_dir, checkpoint="final") -> Path:
    """The file a checkpoint name stands for: "final" is the model the finished run chose and
    scored (results.json's "checkpoint"; "best" while the run has no results), else "best",
    "last", "averaged", "epoch-<n>" (the run's <name>.npz), or a .npz file: a bare file name
    (best.npz) is the run's, a path (./best.npz, other/best.npz) is taken as given."""
    run_dir, checkpoint = Path(run_dir), str(checkpoint)
    if checkpoint.endswith(".npz"):
        return Path(checkpoint) if "/" in checkpoint or os.sep in checkpoint else run_dir / checkpoint
    if not checkpoint or Path(checkpoint).name != checkpoint or Path(checkpoint).suffix:
        raise ValueError(f"checkpoint {str(checkpoint)!r} is neither a .npz file nor the name of one in the run "
                         "directory (final, best, last, averaged, epoch-<n>)")
    if checkpoint == "final":
        results = run_dir / "results.json"
        checkpoint = read_json(results).get("checkpoint", "best") if results.exists() else "best"
        if checkpoint not in ("best", "last", "averaged"):
            raise ValueError(f"{results} names the checkpoint {checkpoint!r}; expected best, last or averaged")
    return run_dir / f"{checkpoint}.npz"


def tokenizer_digest(src_tok, tgt_tok) -> str:
    """SHA-256 of both tokenizers' contents. Every checkpoint records the digest of the tokenizers
    it was trained with, so tokenizer files edited or swapped after training are caught."""
    payload = json.dumps([src_tok.to_dict(), tgt_tok.to_dict()], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def check_run_files(path, state: dict, config: dict, src_tok, tgt_tok, run_dir=None) -> None:
    """Raise ValueError, naming the files and each field, when the checkpoint ``state`` (read from
    ``path``) was trained with another configuration or other tokenizers than the run directory's
    config.json and tokenizer files hold (``run_dir``; None: the checkpoint's own directory, which
    a --checkpoint given as a path need not be). Keys that may change on resume are not compared,
    nor 'built' (what the others built), and a checkpoint written before checkpoints recorded
    these is trusted as before."""
    path = Path(path)
    run_dir = path.parent if run_dir is None else Path(run_dir)
    saved = state.get("config")
    if isinstance(saved, dict):  # (one from before a setting existed trained as the defaults or the upgrade say)
        saved = {**json_safe(DEFAULTS), **json_safe(_upgrade_saved(saved))}
        now = {**json_safe(DEFAULTS), **json_safe(_upgrade_saved(config))}  # config.json upgraded alike
        # data_sha256 is compared only where both hold it: a run from before digests were recorded
        # records one from its first resume on, its earlier checkpoints not
        differing = [key for key in sorted(set(saved) | set(now))
                     if key not in (*RESUME_MAY_CHANGE, "output_dir", "built", "data_read_from")
                     and saved.get(key) != now.get(key) and not (key == "data_sha256" and None in (saved.get(key),
                                                                                                   now.get(key)))]
        if differing:
            # the settings a reader knows first (the languages, the model), the data's digests last and short
            differing.sort(key=lambda key: key == "data_sha256")
            raise ValueError(f"{path} was trained with another configuration than {run_dir / 'config.json'} "
                             "holds: " + "; ".join(_differing_setting(key, saved.get(key), now.get(key))
                                                   for key in differing)
                             + ". Restore the run's config.json, or start a new run")
    digest = state.get("tokenizers")
    if digest is not None and digest != tokenizer_digest(src_tok, tgt_tok):
        raise ValueError(f"{path} was trained with other tokenizers than {run_dir} holds in tokenizer.src.json "
                         "and tokenizer.tgt.json (their contents changed after training). Restore them, or start a "
                         "new run")


def _differing_setting(key, in_checkpoint, in_config) -> str:
    """One setting that differs, both values: a data digest by its split and first 12 hex digits."""
    if key == "data_sha256" and isinstance(in_checkpoint, dict) and isinstance(in_config, dict):
        splits = [split for split in sorted(set(in_checkpoint) | set(in_config))
                  if in_checkpoint.get(split) != in_config.get(split)]
        return ("the data read (data_sha256): " + ", ".join(
            f"{split} {str(in_checkpoint.get(split))[:12]}... in the checkpoint, {str(in_config.get(split))[:12]}... "
            "in config.json" for split in splits))
    return f"{key} {in_checkpoint!r} in the checkpoint, {in_config!r} in config.json"


# The settings besides the model's that using a run reads (to decode, to find its data), which every
# config.json has held: a file without one was edited, and its default would be a guess (the
# languages) where a KeyError later would name neither the file nor the key. (Settings added since
# are filled in by _upgrade_saved.)
USED_SETTINGS = ("src_lang", "tgt_lang", "tokenizer", "lowercase", "preset", "beam_size", "length_penalty", "data_dir")


def read_run_config(run_dir) -> dict:
    """The config.json of a translation run, checked as train checks a configuration (after
    the upgrade of an older file): a JSON object of valid settings, the model's and the
    USED_SETTINGS all there (a file written before a setting existed may lack it; its default
    stands in). Anything else is a ValueError naming the file and the settings. Returned
    upgraded (_upgrade_saved): a setting added since the run was made holds the value it ran with."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a minitx translation run (no config.json)")
    config = read_json(path)
    if isinstance(config, dict) and "mask_prob" in config:  # (told by what the run says it is, not by its files)
        raise ValueError(f"{run_dir} is a masked-LM pretraining run (python -m minitx.encoder), not a translation run")
    try:
        upgraded = _upgrade_saved(config)  # (inside: an edited "preset" is refused naming the file)
        missing = sorted(key for key in MODEL_ARGS if key not in upgraded)
        if missing:
            raise ValueError(f"the model's settings {missing} are missing")
        missing = [key for key in USED_SETTINGS if key not in upgraded]
        if missing:
            raise ValueError(f"the settings {missing} are missing")
        validate_config({**DEFAULTS, **upgraded})
    except ValueError as error:
        raise ValueError(f"{path} is not a run's configuration: {error}") from None
    return upgraded


def load_run(run_dir, checkpoint="final", device="auto"):
    """(config, model, src_tokenizer, tgt_tokenizer) of a finished or running run; the
    checkpoint is named as in :func:`checkpoint_path`."""
    run_dir = Path(run_dir)
    config = read_run_config(run_dir)
    src_tok, tgt_tok = _saved_tokenizers(run_dir, "use the run", "restore it from a copy of the run: the model's ids "
                                                                 "mean nothing without it")
    model = build_model(config, src_tok.vocab_size, tgt_tok.vocab_size, tgt_tok.pad_id, resolve_device(device))
    path = checkpoint_path(run_dir, checkpoint)
    state = load_checkpoint(path, model)
    check_run_files(path, state, config, src_tok, tgt_tok, run_dir)
    model.eval()
    return config, model, src_tok, tgt_tok
