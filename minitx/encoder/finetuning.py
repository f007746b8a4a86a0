"""Fine-tuning with few labels: parallel-sentence detection on Multi30k.

Given a German and an English caption, read together as ``[CLS] german [SEP] english [SEP]``,
is the English the German's translation (label 1) or the caption of another image (label 0)?
The labels come from Multi30k's alignment (line i of train.de and train.en), so no download
and no annotation is needed.

* training examples: the first ``labels`` examples of :func:`~minitx.encoder.data.detection_examples`
  over the *training* pairs (each pair once with its translation, once with another caption;
  a smaller budget is a prefix of a larger one);
* evaluation: all 2,000 examples over the 1,000 pairs of test_2016_flickr, which neither
  pretraining nor fine-tuning reads otherwise.

:func:`compare` fine-tunes, at each label budget, the pretrained encoder and the same
encoder with fresh weights (same architecture, tokenizer, steps and optimizer), and reports
the accuracy of both: what pretraining buys when labels are few.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import minitx
import minitx.functional as F
from minitx import optim
from minitx.data import load_pairs
from minitx.encoder.data import LANGS, EncoderVocab, classification_batches, detection_examples
from minitx.encoder.pretraining import build_model, load_pretrained
from minitx.nn.encoder import EncoderClassifier, EncoderModel
from minitx.serialization import read_json, write_json
from minitx.train import log, runs_data_dir, train_step

EVAL_SPLIT = "test_2016_flickr"
LABEL_BUDGETS = (200, 1000, 5000)
MIN_LABELS = 2  # the smallest budget: one example of each label
# The same recipe for every budget and both starting points: step-based, so a command always
# gives the same numbers.
DEFAULTS = dict(steps=300, batch_size=32, lr=3e-4, warmup_steps=30, weight_decay=0.01, clip_norm=1.0,
                pooling="cls", dropout=0.1, seed=0)
# what each setting is, for --help
HELP = dict(steps="optimizer steps at each label budget, for both starting points", batch_size="examples per batch",
            lr="the peak learning rate of the warm-up and cosine schedule", warmup_steps="linear warm-up steps",
            weight_decay="AdamW's weight decay", clip_norm="clip the gradients to this global norm (0: no clipping)",
            pooling="what the classifier reads: [CLS]'s vector (cls) or the mean of the tokens' (mean)",
            dropout="the classifier's dropout rate", seed="the random seed (examples, batches, the fresh encoder)")
# the settings that take one of a few words
CHOICES = dict(pooling=("cls", "mean"))


def _check_choices(config) -> None:
    """Each word setting is one of CHOICES: checked before anything is loaded."""
    for key, choices in CHOICES.items():
        if config[key] not in choices:
            raise ValueError(f"fine-tuning: {key} must be one of {', '.join(choices)}, got {config[key]!r}")


def _check_schedule(config) -> None:
    """Warm-up fits in the schedule: checked before anything is loaded (WarmupCosine's own error
    comes after the run and the data are read, and names no option)."""
    if not 0 <= config["warmup_steps"] <= config["steps"]:
        raise ValueError(f"fine-tuning: warmup_steps ({config['warmup_steps']}) must be between 0 and steps "
                         f"({config['steps']}), the cosine schedule's length; give a smaller --warmup-steps or a "
                         f"larger --steps")


def encode_examples(examples, vocab: EncoderVocab, max_len: int) -> tuple:
    """(ids of [CLS] de [SEP] en [SEP], labels), leaving out pairs longer than max_len."""
    encoded = [(vocab.pair(de, en), label) for de, en, label in examples]
    kept = [(ids, label) for ids, label in encoded if len(ids) <= max_len]
    return [ids for ids, _ in kept], [label for _, label in kept]


@minitx.no_grad()
def accuracy(model, batches) -> float:
    correct = total = 0
    with model.evaluating():
        for ids, labels in batches:
            correct += int((model(ids).numpy().argmax(-1) == labels).sum())
            total += len(labels)
    return correct / max(total, 1)


def finetune(encoder: EncoderModel, vocab: EncoderVocab, train, evaluation, config) -> dict:
    """Train a 2-class EncoderClassifier on ``train`` = (ids, labels) for config['steps'] steps
    (AdamW, warm-up then cosine decay) and measure its accuracy on ``evaluation``."""
    if not train[0]:
        raise ValueError("finetune: no training pair fits the model's max_len (or none was given)")
    if not (isinstance(config["steps"], int) and config["steps"] >= 1):
        raise ValueError(f"finetune: steps must be a whole number >= 1, got {config['steps']!r}")
    _check_schedule(config)
    minitx.manual_seed(config["seed"])
    model = EncoderClassifier(encoder, 2, pooling=config["pooling"], dropout=config["dropout"])
    opt = optim.AdamW(model.parameters(), lr=config["lr"], betas=(0.9, 0.98), eps=1e-9,
                      weight_decay=config["weight_decay"])
    schedule = optim.WarmupCosine(opt, peak_lr=config["lr"], warmup_steps=config["warmup_steps"],
                                  total_steps=config["steps"])
    def loss_fn(model, batch):
        ids, labels = batch
        return F.cross_entropy(model(ids), labels), len(labels)

    # a few minutes at most, so no checkpoints: the shared trainer's step, in a plain loop
    started, step, epoch = time.perf_counter(), 0, 0
    model.train()
    while step < config["steps"]:
        for batch in classification_batches(*train, config["batch_size"], vocab.pad_id, config["seed"], epoch):
            loss, _ = train_step(model, batch, loss_fn, opt, schedule, config["clip_norm"])
            step += 1
            if step == config["steps"]:
                break
        epoch += 1
    seconds = time.perf_counter() - started
    eval_batches = classification_batches(*evaluation, 64, vocab.pad_id, shuffle=False)
    return {"accuracy": round(accuracy(model, eval_batches), 4), "train_loss_last": round(loss, 4),
            # passes over the training set: an epoch is ceil(n / batch_size) steps, its short last batch one step
            "steps": step, "epochs": round(step / math.ceil(len(train[0]) / config["batch_size"]), 1),
            "seconds": round(seconds, 1)}


def compare(run_dir, budgets=LABEL_BUDGETS, output=None, data_dir=None, progress=True, **overrides) -> dict:
    """Fine-tune the pretrained encoder of run_dir and a fresh one at each label budget; the
    table (also written to ``output`` as JSON when given). ``progress``: bars for a download."""
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown fine-tuning options {unknown}; known: {sorted(DEFAULTS)}")
    config = {**DEFAULTS, **{k: v for k, v in overrides.items() if v is not None}}
    budgets = list(budgets)
    if not budgets or any(isinstance(b, bool) or not isinstance(b, int) or b < MIN_LABELS for b in budgets):
        raise ValueError(f"fine-tuning: each label budget must be a whole number >= {MIN_LABELS} (a translation "
                         f"and another caption), got {budgets}")
    _check_choices(config)
    _check_schedule(config)
    pre_config, _, vocab = load_pretrained(run_dir)
    # no --data-dir: the pretraining run's own, which must still be there (a moved one is named)
    if data_dir is None and pre_config.get("data_dir") is not None:
        data_dir = runs_data_dir(pre_config)
    max_len = pre_config["max_len"]
    train_pairs = load_pairs("train", *LANGS, data_dir, progress=progress)
    if max(budgets) > 2 * len(train_pairs):  # each pair gives two examples: ceil(budget / 2) pairs
        raise ValueError(f"a label budget of {max(budgets)} needs {math.ceil(max(budgets) / 2)} training pairs (each "
                         f"gives two examples); there are {len(train_pairs)}, enough for {2 * len(train_pairs)} labels")
    all_train = detection_examples(train_pairs, config["seed"], max(budgets))
    eval_pairs = load_pairs(EVAL_SPLIT, *LANGS, data_dir, progress=progress)
    evaluation = encode_examples(detection_examples(eval_pairs, config["seed"] + 1), vocab, max_len)
    # the baseline: always answering the majority class of the examples scored. Pairs longer than
    # max_len are left out after labelling, so it is 0.5 only when none (or as many of each label) is.
    scored, translations = len(evaluation[1]), sum(evaluation[1])
    if not scored:
        raise ValueError(f"no {EVAL_SPLIT} example fits the pretraining run's max_len {max_len}")
    chance = max(translations, scored - translations) / scored
    log(f"evaluation: {scored} {EVAL_SPLIT} examples ({translations} translations); chance (always the majority "
        f"class) {chance:.3f}")
    rows = []
    for budget in budgets:
        train = encode_examples(all_train[:budget], vocab, max_len)
        row = {"labels": budget, "used": len(train[0])}
        for start in ("pretrained", "scratch"):
            if start == "pretrained":
                encoder = load_pretrained(run_dir)[1].encoder
            else:  # the same architecture and vocabulary, fresh weights
                minitx.manual_seed(config["seed"])
                encoder = build_model(pre_config, vocab).encoder
            row[start] = finetune(encoder, vocab, train, evaluation, config)
            log(f"{budget} labels, {start}: accuracy {row[start]['accuracy']:.3f} "
                f"({row[start]['steps']} steps, {row[start]['seconds']:.0f}s)")
        rows.append(row)
    pretraining = read_json(Path(run_dir) / "results.json") if (Path(run_dir) / "results.json").exists() else None
    table = {"task": "parallel-sentence detection, [CLS] de [SEP] en [SEP], 2 classes",
             "evaluation": {"split": EVAL_SPLIT, "examples": scored, "translations": translations,
                            "chance": round(chance, 4)},
             "finetune": config, "pretraining": {"config": pre_config, "results": pretraining}, "rows": rows}
    if output:
        write_json(output, table, indent=2)
    return table


def format_table(table) -> str:
    """The accuracy table as Markdown, and the chance it is to be read against."""
    lines = ["| labelled pairs | from scratch | pretrained (MLM) |", "|---:|---:|---:|"]
    for row in table["rows"]:
        used = row.get("used", row["labels"])  # the budget's examples that fit max_len (a table from before: all)
        labels = f"{row['labels']:,}" + (f" ({used:,} fit max_len)" if used < row["labels"] else "")
        lines.append(f"| {labels} | {row['scratch']['accuracy']:.3f} | {row['pretrained']['accuracy']:.3f} |")
    evaluation = table["evaluation"]
    lines.append(f"\nchance {evaluation['chance']:.3f}: always answering the majority class of the "
                 f"{evaluation['examples']:,} {evaluation['split']} examples scored")
    return "\n".join(lines)

