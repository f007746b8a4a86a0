"""The encoder application: its data (framing, masked batches per (seed, epoch), labelled
detection pairs), pretraining runs (files, exact resume, refusals), fine-tuning's table,
embedding neighbours and analogies, and the command line."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minitx.data import BPETokenizer
from minitx.encoder import __main__ as cli
from minitx.encoder import finetuning, neighbours, pretraining
from minitx.encoder.data import EncoderVocab, classification_batches, detection_examples, mlm_batches
from minitx.nn.encoder import IGNORE_INDEX, MaskedLanguageModel
from minitx.serialization import load
from same_state import assert_near_float32

TEXT = ["a dog runs on the grass", "ein Hund rennt auf dem Gras", "two men play ball", "zwei Männer spielen Ball",
        "a woman in a red dress", "eine Frau in einem roten Kleid"] * 3


@pytest.fixture(scope="module")
def vocab():
    return EncoderVocab(BPETokenizer.train(TEXT, 370))


# ---------------------------------------------------------------- data


def test_the_encoder_vocabulary_adds_mask_after_the_tokenizer(vocab):
    tok = vocab.tokenizer
    assert vocab.mask_id == tok.vocab_size and vocab.size == tok.vocab_size + 1
    assert vocab.piece(vocab.mask_id) == "[MASK]"
    assert vocab.sentence("a dog") == [tok.bos_id, *tok.encode_ids("a dog"), tok.eos_id]
    assert vocab.pair("ein Hund", "a dog") == [tok.bos_id, *tok.encode_ids("ein Hund"), tok.eos_id,
                                               *tok.encode_ids("a dog"), tok.eos_id]
    low, high = vocab.random_ids
    assert high == vocab.mask_id and all(not tok.vocab.id_to_token(i).startswith("<") for i in range(low, high))


def test_masked_batches_depend_only_on_seed_and_epoch(vocab):
    sequences = [vocab.sentence(s) for s in TEXT]
    first = mlm_batches(sequences, vocab, 40, seed=3, epoch=1)
    again = mlm_batches(sequences, vocab, 40, seed=3, epoch=1)
    other = mlm_batches(sequences, vocab, 40, seed=3, epoch=2)
    assert all(np.array_equal(a.inputs, b.inputs) and np.array_equal(a.targets, b.targets)
               for a, b in zip(first, again))
    assert len(first) != len(other) or any(not np.array_equal(a.inputs, b.inputs) for a, b in zip(first, other))
    # every sentence once per epoch: the targets, with the unmasked ids put back, are the sentences
    rows = []
    for batch in first:
        original = np.where(batch.targets != IGNORE_INDEX, batch.targets, batch.inputs)
        original = np.where(batch.inputs == vocab.mask_id, batch.targets, original)
        rows += [tuple(r[r != vocab.pad_id]) for r in original]
        pad = batch.inputs == vocab.pad_id
        assert (batch.targets[pad] == IGNORE_INDEX).all()
        assert (batch.targets[:, 0] == IGNORE_INDEX).all()  # [CLS] is never masked
    assert sorted(rows) == sorted(tuple(s) for s in sequences)


def _bernoulli_masking(ids, rng, vocab, mask_prob=0.15):
    """mask_tokens' draws before the at-least-one rule (the masking of the recorded runs)."""
    maskable = ~np.isin(ids, [vocab.pad_id, vocab.mask_id, vocab.cls_id, vocab.sep_id])
    chosen = maskable & (rng.random(ids.shape) < mask_prob)
    action = rng.random(ids.shape)
    inputs = ids.copy()
    inputs[chosen & (action < 0.8)] = vocab.mask_id
    randomized = chosen & (action >= 0.8) & (action < 0.9)
    inputs[randomized] = rng.integers(*vocab.random_ids, int(randomized.sum()))
    return inputs, np.where(chosen, ids, IGNORE_INDEX)


def test_every_masked_batch_has_a_masked_position_and_batches_that_had_one_are_unchanged(vocab):
    """A batch of one short sentence often draws no masked position (the loss then has nothing
    to predict and pretraining stopped there, on every resume too): such a batch gets one more,
    drawn after the usual draws, so any batch that had one is masked exactly as before."""
    short = np.array([vocab.sentence("a dog")])
    outcomes = {True: 0, False: 0}
    for seed in range(200):
        batch = vocab.mask(short, np.random.default_rng(seed))
        inputs, targets = _bernoulli_masking(short, np.random.default_rng(seed), vocab)
        had_one = bool((targets != IGNORE_INDEX).any())
        outcomes[had_one] += 1
        if had_one:
            assert np.array_equal(batch.inputs, inputs) and np.array_equal(batch.targets, targets), seed
        else:
            assert batch.n_masked == 1, seed
            chosen = batch.targets != IGNORE_INDEX
            assert (batch.targets[chosen] == short[chosen]).all() and (batch.inputs[~chosen] == short[~chosen]).all()
    assert min(outcomes.values()) > 20, outcomes  # both kinds of batch were seen
    sequences = [vocab.sentence(s) for s in TEXT]
    assert all(b.n_masked >= 1 for b in mlm_batches(sequences, vocab, 8, seed=0, epoch=0))
    # nothing maskable (only [CLS] [SEP]): nothing to choose, no error
    assert vocab.mask(np.array([[vocab.cls_id, vocab.sep_id]]), np.random.default_rng(0)).n_masked == 0


def test_detection_examples_are_balanced_nested_and_correctly_labelled():
    pairs = [(f"de{i}", f"en{i}") for i in range(50)]
    examples = detection_examples(pairs, seed=0)
    assert len(examples) == 100 and sum(label for *_, label in examples) == 50
    for de, en, label in examples:
        assert (de[2:] == en[2:]) == (label == 1)  # a negative is never the pair's own translation
    assert detection_examples(pairs, seed=0, count=30) == examples[:30]
    assert detection_examples(pairs, seed=1) != examples
    for bad in (0, 101):
        with pytest.raises(ValueError, match="count must be in 1..100"):
            detection_examples(pairs, seed=0, count=bad)


def test_classification_batches_cover_every_example_once():
    sequences = [[1, 5, 2], [1, 6, 7, 2], [1, 8, 2], [1, 9, 9, 9, 2], [1, 4, 2]]
    batches = classification_batches(sequences, [0, 1, 0, 1, 1], 2, pad_id=0, seed=0, epoch=0)
    assert [len(labels) for _, labels in batches] == [2, 2, 1]
    seen = sorted(tuple(int(i) for i in row if i) for ids, _ in batches for row in ids)
    assert seen == sorted(tuple(s) for s in sequences)
    ordered = classification_batches(sequences, [0, 1, 0, 1, 1], 5, pad_id=0, shuffle=False)
    assert ordered[0][1].tolist() == [0, 1, 0, 1, 1]


# ---------------------------------------------------------------- pretraining runs


def test_a_pretraining_run_holds_its_files_and_a_loadable_model(tiny_run):
    assert {p.name for p in tiny_run.iterdir()} >= {"config.json", "tokenizer.json", "last.npz", "history.json",
                                                    "results.json"}
    results = json.loads((tiny_run / "results.json").read_text())
    assert results["steps"] == pretraining.RECIPES["tiny"]["max_steps"]
    config, model, vocab = pretraining.load_pretrained(tiny_run)
    assert isinstance(model, MaskedLanguageModel) and model.encoder.vocab_size == vocab.size
    history = json.loads((tiny_run / "history.json").read_text())
    assert history[-1]["step"] == results["steps"] and 0 <= history[-1]["val_accuracy"] <= 1


class Killed(KeyboardInterrupt):
    pass


def test_a_killed_run_resumes_to_exactly_the_uninterrupted_state(data_dir, tmp_path, monkeypatch):
    config = pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=5, save_every=2)
    pretraining.pretrain(config, tmp_path / "whole", progress=False)
    calls = []
    loss = MaskedLanguageModel.loss

    def dies_at_step_4(self, *args):
        calls.append(1)
        if len(calls) == 4:
            raise Killed
        return loss(self, *args)

    with monkeypatch.context() as mp:
        mp.setattr(MaskedLanguageModel, "loss", dies_at_step_4)
        with pytest.raises(Killed):
            pretraining.pretrain(config, tmp_path / "killed", progress=False)
    assert load(tmp_path / "killed" / "last.npz")["progress"]["step"] == 2  # saved every 2 steps
    pretraining.pretrain({}, tmp_path / "killed", resume=True, progress=False)
    whole, resumed = load(tmp_path / "whole" / "last.npz"), load(tmp_path / "killed" / "last.npz")
    for part in ("model", "optimizer"):
        flat_a, flat_b = _flatten(whole[part]), _flatten(resumed[part])
        assert flat_a.keys() == flat_b.keys()
        for key in flat_a:
            assert np.array_equal(flat_a[key], flat_b[key]), f"{part}/{key}"


def _flatten(state, prefix=""):
    out = {}
    for key, value in (state.items() if isinstance(state, dict) else enumerate(state)):
        if isinstance(value, (dict, list)):
            out.update(_flatten(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = np.asarray(value)
    return out


def test_a_run_of_one_sentence_batches_trains_past_the_batches_bernoulli_masking_left_empty(data_dir, tmp_path):
    """max_tokens 20: one or two sentences a batch; batches the Bernoulli draws leave without a
    masked position get one, and the run trains to max_steps."""
    config = pretraining.build_config("tiny", data_dir=str(data_dir), max_tokens=20, max_steps=80, save_every=80)
    pretraining.pretrain(config, tmp_path, progress=False)
    assert json.loads((tmp_path / "results.json").read_text())["steps"] == 80


def test_empty_lines_are_left_out_of_pretraining(data_dir, tmp_path):
    """An empty line is [CLS] [SEP], nothing to mask; sorted by length they fill batches of
    their own, which no masking can give a target."""
    import gzip
    import shutil

    from minitx.data.multi30k import read_lines

    blank = tmp_path / "blank-lines"
    shutil.copytree(data_dir, blank)
    for lang in ("de", "en"):
        lines = read_lines(blank / f"train.{lang}.gz") + [""] * 40
        (blank / f"train.{lang}.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    config = pretraining.build_config("tiny", data_dir=str(blank), max_tokens=20, max_steps=30, save_every=30)
    assert pretraining.pretrain(config, tmp_path / "run", progress=False)["steps"] == 30


def test_runs_refuse_what_would_change_them(data_dir, tmp_path):
    with pytest.raises(ValueError, match="warmup_steps \\(2\\) must be between 0 and max_steps \\(1\\)"):
        pretraining.pretrain(pretraining.build_config("tiny", max_steps=1), tmp_path, progress=False)
    config = pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2)
    pretraining.pretrain(config, tmp_path, progress=False)
    with pytest.raises(ValueError, match="already holds a training run"):
        pretraining.pretrain(config, tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"lr 0.001 \(saved\) != 0.5 \(given\)"):
        pretraining.pretrain({"lr": 0.5}, tmp_path, resume=True, progress=False)
    with pytest.raises(FileNotFoundError, match="not a minitx pretraining run"):
        pretraining.pretrain({}, tmp_path / "nothing", resume=True, progress=False)
    with pytest.raises(ValueError, match="unknown pretraining recipe"):
        pretraining.build_config("huge")
    with pytest.raises(ValueError, match=r"unknown pretraining options \['layers'\]"):
        pretraining.build_config("tiny", layers=3)


def test_a_resume_refuses_other_data_and_an_interrupted_start_leaves_a_directory_a_run_takes(data_dir, tmp_path,
                                                                                              monkeypatch, capsys):
    """As translation runs: a pretraining run records its data's digest and a resume on other
    sentences is refused; a start stopped before config.json (only tokenizer.json there) prints
    no --resume, and a new run starts there; a pretraining run --overwrite started in a
    translation run's directory deletes that run's files (its tokenizers too) and loads as what
    it is."""
    import gzip
    import shutil

    import minitx.train.lifecycle as lifecycle
    from minitx.data.multi30k import read_lines

    other = tmp_path / "other"
    shutil.copytree(data_dir, other)
    changed = read_lines(other / "train.en.gz")[:-1] + ["A different last sentence."]
    (other / "train.en.gz").write_bytes(gzip.compress(("\n".join(changed) + "\n").encode("utf-8")))
    run = tmp_path / "run"
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), run, progress=False)
    assert set(json.loads((run / "config.json").read_text())["data_sha256"]) == {"train", "val"}
    with pytest.raises(ValueError, match=r"trained on other data.*The train data read now"):
        pretraining.pretrain({"data_dir": str(other)}, run, resume=True, progress=False)
    pretraining.load_pretrained(run)  # (the recorded digests are part of a run's configuration)

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    started = tmp_path / "started"
    monkeypatch.setattr(lifecycle, "write_json", ctrl_c)  # (config.json's write: the tokenizer is written)
    argv = ["pretrain", "--recipe", "tiny", "--output-dir", str(started), "--data-dir", str(data_dir),
            "--max-steps", "2", "--no-progress"]
    capsys.readouterr()
    assert cli.main(argv) == 130
    assert "continue it with" not in capsys.readouterr().err
    assert sorted(p.name for p in started.iterdir()) == ["tokenizer.json"]
    monkeypatch.undo()
    assert cli.main(argv) == 0
    translation = tmp_path / "was-translation"
    translation.mkdir()
    for name in ("tokenizer.src.json", "tokenizer.tgt.json", "history.png", "test_2016_flickr.hyp.en", "notes.txt"):
        (translation / name).write_text("{}")
    (translation / "config.json").write_text(json.dumps({"src_lang": "de", "tgt_lang": "en"}))
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), translation,
                         overwrite=True, progress=False)
    assert pretraining.load_pretrained(translation)
    left = {p.name for p in translation.iterdir()}
    assert not left & {"tokenizer.src.json", "tokenizer.tgt.json", "history.png", "test_2016_flickr.hyp.en"}
    assert "notes.txt" in left  # (not a run's file: left alone)


# ---------------------------------------------------------------- fine-tuning


def test_finetuning_compares_pretrained_and_scratch_at_each_budget(tiny_run, tmp_path):
    output = tmp_path / "table.json"
    table = finetuning.compare(tiny_run, [4, 8], output, steps=2, batch_size=4, warmup_steps=1)
    assert json.loads(output.read_text()) == table
    assert [row["labels"] for row in table["rows"]] == [4, 8]
    assert table["evaluation"]["examples"] <= 2 * 20
    for row in table["rows"]:
        for start in ("pretrained", "scratch"):
            assert row[start]["steps"] == 2 and 0 <= row[start]["accuracy"] <= 1
    text = finetuning.format_table(table)
    row = table["rows"][1]
    fit = "" if row["used"] == 8 else f" ({row['used']} fit max_len)"
    assert f"| 8{fit} | {row['scratch']['accuracy']:.3f} | {row['pretrained']['accuracy']:.3f} |" in text
    with pytest.raises(ValueError, match="each label budget must be a whole number >= 2"):
        finetuning.compare(tiny_run, [1])
    with pytest.raises(ValueError, match="unknown fine-tuning options"):
        finetuning.compare(tiny_run, [4], epochs=3)


def test_the_table_says_how_many_of_a_budgets_labels_fit_max_len():
    """A budget of 20 of which 8 examples fit trained on 8: the table said 20."""
    scores = {"scratch": {"accuracy": 0.5}, "pretrained": {"accuracy": 0.75}}
    table = {"rows": [{"labels": 20, "used": 8, **scores}, {"labels": 40, "used": 40, **scores},
                      {"labels": 60, **scores}],  # (a table written before rows said what they used)
             "evaluation": {"chance": 0.5, "examples": 10, "split": "val"}}
    lines = finetuning.format_table(table).splitlines()
    assert lines[2:5] == ["| 20 (8 fit max_len) | 0.500 | 0.750 |", "| 40 | 0.500 | 0.750 |", "| 60 | 0.500 | 0.750 |"]


@pytest.mark.parametrize("batch_size, epochs", [(32, 3.0), (6, 1.5), (3, 1.0)])
def test_finetunings_epochs_count_passes_over_the_training_set(tiny_run, batch_size, epochs):
    """8 examples, 3 steps: batches of 32 make each step a pass (it said steps * 32 / 8); of 6,
    a pass is 2 steps (the short last batch one step; it said 3 * 6 / 8 = 2.25); of 3, 3 steps."""
    config, model, vocab = pretraining.load_pretrained(tiny_run)
    pairs = [("ein Hund", "a dog"), ("zwei Männer", "two men"), ("eine Frau", "a woman"), ("ein Ball", "a ball")]
    train = finetuning.encode_examples(detection_examples(pairs, 0), vocab, config["max_len"])
    assert len(train[0]) == 8
    result = finetuning.finetune(model.encoder, vocab, train, train, {**finetuning.DEFAULTS, "steps": 3,
                                                                      "warmup_steps": 1, "batch_size": batch_size})
    assert result["steps"] == 3 and result["epochs"] == epochs


def test_the_pretrained_start_is_the_checkpoint_and_scratch_is_not(tiny_run, monkeypatch):
    """compare hands finetune the saved encoder weights for 'pretrained' and fresh ones for 'scratch'."""
    saved = load(tiny_run / "last.npz")["model"]
    starts = []

    def record(encoder, vocab, train, evaluation, config):
        starts.append(encoder.state_dict())
        return {"accuracy": 0.5, "steps": 0, "seconds": 0.0}

    monkeypatch.setattr(finetuning, "finetune", record)
    finetuning.compare(tiny_run, [4])
    pretrained, scratch = starts
    assert all(np.array_equal(pretrained[k], saved[f"encoder.{k}"]) for k in pretrained)
    assert not np.array_equal(scratch["embed.weight"], saved["encoder.embed.weight"])


def test_the_chance_reported_is_the_majority_class_of_the_examples_scored(tiny_run, monkeypatch):
    """Pairs longer than max_len are left out after labelling, so the examples scored need not be
    half translations (the tiny run's max_len 64 keeps an odd number of them): the table's
    chance is always answering their majority class, not 0.5."""
    monkeypatch.setattr(finetuning, "finetune", lambda *args: {"accuracy": 0.5, "steps": 0, "seconds": 0.0})
    table = finetuning.compare(tiny_run, [4])
    config, _, vocab = pretraining.load_pretrained(tiny_run)
    from minitx.data import load_pairs

    _, labels = finetuning.encode_examples(
        detection_examples(load_pairs(finetuning.EVAL_SPLIT, "de", "en", config["data_dir"]), 1), vocab,
        config["max_len"])
    majority = max(sum(labels), len(labels) - sum(labels)) / len(labels)
    assert majority != 0.5  # (the case this test is about)
    assert table["evaluation"] == {"split": finetuning.EVAL_SPLIT, "examples": len(labels),
                                   "translations": sum(labels), "chance": round(majority, 4)}
    assert f"chance {majority:.3f}: always answering the majority class of the {len(labels)} " \
        in finetuning.format_table(table)


def test_finetune_refuses_a_warm_up_longer_than_its_steps_before_loading_anything(tmp_path, capsys):
    """--steps below the default --warmup-steps 30 failed after the run and the data were read,
    with WarmupCosine's message naming neither option."""
    assert cli.main(["finetune", "--run", str(tmp_path / "no-run"), "--labels", "20", "--steps", "10"]) == 2
    err = capsys.readouterr().err
    assert "error: fine-tuning: warmup_steps (30) must be between 0 and steps (10)" in err, err
    assert "--warmup-steps" in err and "--steps" in err


# ---------------------------------------------------------------- neighbours


def test_neighbours_and_analogies_on_a_known_table(vocab):
    tok = vocab.tokenizer
    ids = {w: tok.encode_ids(" " + w) for w in ("dog", "Hund", "ball", "Ball", "red")}
    assert all(len(v) == 1 for v in ids.values()), ids  # whole-word pieces in this small vocabulary
    rng = np.random.default_rng(0)
    matrix = np.zeros((vocab.size, 6))
    matrix[:, 4:] = rng.normal(0, 1, (vocab.size, 2))  # every other piece: orthogonal to the probes
    matrix[ids["dog"]] = matrix[ids["Hund"]] = [1, 0, 0, 0, 0, 0]
    matrix[ids["Hund"]] += [0, 0.1, 0, 0, 0, 0]
    matrix[ids["ball"]] = [0, 0, 1, 0, 0, 0]
    matrix[ids["Ball"]] = [1, 0, 1, 0, 0, 0]
    matrix[ids["red"]] = [0, 0, 0, 1, 0, 0]
    matrix[vocab.mask_id] = matrix[4] = matrix[tok.pad_id] = [1, 0, 0, 0, 0, 0]  # never candidates
    table = neighbours.EmbeddingTable(matrix, tok, "test")
    found = table.neighbours("dog", k=3)
    assert found["pieces"] == ["▁dog"] and found["neighbours"][0][0] == "▁Hund"
    assert found["neighbours"][0][1] == pytest.approx(1 / np.sqrt(1.01))
    assert all(piece not in ("▁dog", "[MASK]", "<pad>", "<0x00>") for piece, _ in found["neighbours"])
    # Ball - ball + red = (1, 0, 0, 1): dog/Hund first
    answers = table.analogy("Ball", "ball", "red", k=2)["answers"]
    assert {piece for piece, _ in answers} == {"▁dog", "▁Hund"}
    text = neighbours.report(table, ["dog"], [("Ball", "ball", "red")], k=2)
    assert "dog = ▁dog: ▁Hund 1.00" in text and "Ball - ball + red ~ ▁" in text


def test_a_word_of_several_pieces_is_their_mean(vocab):
    tok = vocab.tokenizer
    word = "Grasdogs"
    pieces = tok.encode_ids(" " + word)
    assert len(pieces) > 1
    matrix = np.random.default_rng(1).normal(size=(vocab.size, 4))
    table = neighbours.EmbeddingTable(matrix, tok, "test")
    vector, ids = table.lookup(word)
    assert ids == pieces and np.allclose(vector, matrix[pieces].mean(0))
    assert "(mean of" in neighbours.report(table, [word], k=2)


@pytest.mark.parametrize("word", ["日本", "", "   "])
def test_a_word_of_no_learned_piece_is_refused_not_looked_up_as_the_space_marker(vocab, word):
    """'日本' (letters the tokenizer never saw: '▁' and byte tokens), '' and spaces (the lone '▁')
    printed the neighbours of '▁' as theirs."""
    table = neighbours.EmbeddingTable(np.random.default_rng(1).normal(size=(vocab.size, 4)), vocab.tokenizer, "test")
    with pytest.raises(ValueError, match=f"neighbours: word {word!r} has no learned piece \\(the tokenizer spells it ▁"):
        table.lookup(word)
    # a word of unseen and seen letters: the seen pieces, without the lone '▁'
    vector, ids = table.lookup("日dog")
    assert [table.piece(i) for i in ids] == ["d", "og"]  # ('▁', three byte tokens, 'd', 'og')


def test_a_word_of_no_learned_piece_is_reported_and_the_others_still_looked_up(vocab):
    """One emoji among the words aborted the whole command."""
    table = neighbours.EmbeddingTable(np.random.default_rng(1).normal(size=(vocab.size, 4)), vocab.tokenizer, "test")
    lines = neighbours.report(table, ["dog", "🐶", "red"], [("dog", "🐶", "red"), ("dog", "red", "dog")], k=2)
    lines = lines.splitlines()[1:]
    assert lines[0].startswith("dog = ") and lines[2].startswith("red = ")
    assert lines[1].startswith("🐶: skipped: word '🐶' has no learned piece (the tokenizer spells it ▁")
    assert lines[3].startswith("dog - 🐶 + red: skipped: word '🐶' has no learned piece")
    assert lines[4].startswith("dog - red + dog ~ ")


def test_tables_load_from_pretraining_and_translation_runs(tiny_run, data_dir, tmp_path):
    table = neighbours.load_table(tiny_run)
    _, model, vocab = pretraining.load_pretrained(tiny_run)
    assert np.array_equal(table.matrix, model.encoder.embed.weight.numpy())
    from minitx.translate.recipes import build_config
    from minitx.translate.training import train

    run = tmp_path / "translation"
    train(build_config(None, output_dir=str(run), data_dir=str(data_dir), vocab_size=400, d_model=16, num_heads=2,
                       encoder_layers=1, decoder_layers=1, d_ff=32, max_len=64, max_tokens=600, epochs=1,
                       max_steps=1, bleu_every=0, beam_size=1, device="cpu"), progress=False)
    table = neighbours.load_table(run)
    assert "shared by both languages" in table.source and table.matrix.shape == (400, 16)
    # a pretraining run's tokenizer.json beside it (left by an --overwrite before it deleted both
    # kinds' files): the run is still what its config.json says
    shutil.copy(tiny_run / "tokenizer.json", run / "tokenizer.json")
    assert "translation model" in neighbours.load_table(run).source
    with pytest.raises(FileNotFoundError, match="neither a pretraining run"):
        neighbours.load_table(tmp_path)


# ---------------------------------------------------------------- command line


def test_the_command_line(tiny_run, data_dir, tmp_path, capsys):
    assert cli.main(["neighbours", "--run", str(tiny_run), "--words", "Hund", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("Hund = ")
    assert cli.main(["pretrain", "--recipe", "tiny", "--output-dir", str(tmp_path / "run"), "--data-dir",
                     str(data_dir), "--max-steps", "2", "--no-progress"]) == 0
    assert json.loads((tmp_path / "run" / "config.json").read_text())["max_steps"] == 2
    logged = re.search(r"vocabulary (\S+) \+ \[MASK\]", capsys.readouterr().err)
    assert logged and logged.group(1).isdigit(), "the log printed the vocabulary size's expression"
    assert cli.main(["pretrain", "--output-dir", str(tmp_path / "run"), "--resume", "--d-model", "8"]) == 2
    assert "d_model 16 (saved) != 8 (given)" in capsys.readouterr().err
    # another recipe is refused, as translation refuses it; the run's own is taken, and the last
    # line gives the run's training time beside this command's
    assert cli.main(["pretrain", "--output-dir", str(tmp_path / "run"), "--resume", "--recipe", "cpu"]) == 2
    assert "recipe 'tiny' (saved) != 'cpu' (given)" in capsys.readouterr().err
    assert cli.main(["pretrain", "--output-dir", str(tmp_path / "run"), "--resume", "--recipe", "tiny",
                     "--no-progress"]) == 0
    assert re.search(r"this command took \d+s; the run trained for \d+s in all", capsys.readouterr().err)
    assert cli.main(["finetune", "--run", str(tmp_path / "run"), "--labels", "4", "--steps", "1",
                     "--warmup-steps", "0", "--batch-size", "4"]) == 0
    assert capsys.readouterr().out.startswith("| labelled pairs | from scratch | pretrained (MLM) |")


def test_pretraining_logs_where_its_data_were_read_from(data_dir, tmp_path, monkeypatch, capsys):
    """As translation's train does: the directory the data were read from, and how it was chosen,
    is in the log, where config.json alone recorded it."""
    argv = ["pretrain", "--recipe", "tiny", "--output-dir", str(tmp_path / "given"), "--data-dir", str(data_dir),
            "--max-steps", "2", "--no-progress"]
    capsys.readouterr()
    assert cli.main(argv) == 0
    assert f"data: read from {data_dir} (--data-dir)" in capsys.readouterr().err
    monkeypatch.setenv("MINITX_DATA_DIR", str(data_dir))
    pretraining.pretrain(pretraining.build_config("tiny", max_steps=2), tmp_path / "searched", progress=False)
    assert f"data: read from {data_dir} ($MINITX_DATA_DIR)" in capsys.readouterr().err


def test_the_example_runs_on_a_finished_run(tiny_run):
    example = Path(__file__).resolve().parents[2] / "examples" / "pretrain_and_finetune.py"
    env = dict(os.environ, PYTHONPATH=str(example.parents[1]), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(example), "--run", str(tiny_run), "--labels", "8",
                           "--finetune-steps", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert sum("hidden: " in line and "guesses: " in line for line in lines) == 3
    assert "| labelled pairs | from scratch | pretrained (MLM) |" in lines
    assert any(line.startswith("dog = ") for line in lines)


def test_a_start_that_fails_building_the_model_leaves_no_run(data_dir, tmp_path):
    """num_heads that does not divide d_model fails when the model is built: nothing may be
    written before that, so the same directory takes a corrected run without --overwrite."""
    run_dir = tmp_path / "run"
    bad = pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2, num_heads=3)
    with pytest.raises(ValueError):
        pretraining.pretrain(bad, run_dir, progress=False)
    assert not run_dir.exists() or not any(run_dir.iterdir())
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), run_dir, progress=False)


def test_a_max_len_that_keeps_no_sentence_is_refused_before_the_run_directory_is_touched(data_dir, tmp_path,
                                                                                          capsys):
    """No training sentence within max_len used to end in a ZeroDivisionError after config.json
    and tokenizer.json were written (a rerun then refused, a resume failed again); no validation
    sentence, in a validation loss of 0 reported as the run's result."""
    import gzip
    import shutil

    run_dir = tmp_path / "run"
    argv = ["pretrain", "--recipe", "tiny", "--output-dir", str(run_dir), "--data-dir", str(data_dir),
            "--max-len", "3", "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "error: pretraining: no training sentence fits max_len 3 (600 longer, [CLS] and [SEP] included; 0 " \
           "empty lines); give a larger max_len\n" in err, err
    assert not run_dir.exists() or not any(run_dir.iterdir())
    long_val = tmp_path / "long-val"
    shutil.copytree(data_dir, long_val)
    for lang in ("de", "en"):
        (long_val / f"val.{lang}.gz").write_bytes(gzip.compress((" ".join(["ein sehr langer Satz"] * 30) + "\n\n")
                                                                .encode("utf-8")))
    with pytest.raises(ValueError, match=r"no validation sentence fits max_len 64 \(2 longer, \[CLS\] and \[SEP\] "
                                         r"included; 2 empty lines\); give a larger max_len or sentences that are not "
                                         "empty"):
        pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(long_val)), run_dir, progress=False)
    assert not run_dir.exists() or not any(run_dir.iterdir())
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), run_dir,
                         progress=False)


def test_validation_scores_of_no_masked_position_are_nan_not_zero(tiny_run):
    _, model, vocab = pretraining.load_pretrained(tiny_run)
    unmasked = mlm_batches([[vocab.cls_id, vocab.sep_id]], vocab, 100, seed=0, epoch=0, shuffle=False)
    scores = pretraining.masked_lm_scores(model, unmasked)
    assert scores["val_masked"] == 0 and np.isnan(scores["val_loss"]) and np.isnan(scores["val_accuracy"])


def test_a_run_without_its_tokenizer_is_reported_as_incomplete(tiny_run, tmp_path, capsys):
    """A missing tokenizer.json was a bare '[Errno 2] No such file or directory' line."""
    import shutil

    run_dir = tmp_path / "no-tokenizer"
    shutil.copytree(tiny_run, run_dir)
    (run_dir / "tokenizer.json").unlink()
    message = f"{run_dir} is an incomplete pretraining run: tokenizer.json is missing"
    for argv in (["finetune", "--run", str(run_dir), "--labels", "4", "--steps", "1", "--warmup-steps", "0"],
                 ["pretrain", "--output-dir", str(run_dir), "--resume", "--no-progress"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Errno" not in err, err


@pytest.mark.parametrize("which", ["validation", "training"])
def test_a_start_whose_batches_fail_leaves_no_run(which, data_dir, tmp_path, monkeypatch):
    """The masked batches (validation's and the first epoch's) are built before the run
    directory is written: an error there leaves a directory a corrected run takes."""
    def fails(*args, shuffle=True, **kwargs):
        if shuffle == (which == "training"):  # (validation's batches are not shuffled)
            raise ValueError("no batches today")
        return mlm_batches(*args, shuffle=shuffle, **kwargs)

    run_dir = tmp_path / "run"
    with monkeypatch.context() as mp:
        mp.setattr(pretraining, "mlm_batches", fails)
        with pytest.raises(ValueError, match="no batches today"):
            pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), run_dir,
                                 progress=False)
    assert not run_dir.exists() or not any(run_dir.iterdir())
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=2), run_dir,
                         progress=False)


def test_the_smallest_vocabulary_holds_one_learned_piece(data_dir, tmp_path):
    """4 specials + 256 byte tokens + 1 learned piece (BERT's random replacements draw from the
    learned pieces): 261 trains, 260 is refused naming vocab_size before anything is written."""
    with pytest.raises(ValueError, match="pretraining: vocab_size must be >= 261, got 260"):
        pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), vocab_size=260),
                             tmp_path / "260", progress=False)
    assert not (tmp_path / "260").exists()
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), vocab_size=261, max_steps=2),
                         tmp_path / "261", progress=False)
    assert pretraining.load_pretrained(tmp_path / "261")[2].random_ids == (260, 261)


@pytest.mark.parametrize("argv, message", [
    (["finetune", "--run", "nowhere", "--batch-size", "-4"], "argument --batch-size: must be >= 1, got -4"),
    (["finetune", "--run", "nowhere", "--steps", "0"], "argument --steps: must be >= 1, got 0"),
    (["pretrain", "--output-dir", "nowhere", "--lr", "0"], "argument --lr: must be > 0, got 0"),
    (["pretrain", "--output-dir", "nowhere", "--max-len", "1"], "argument --max-len: must be >= 3, got 1"),
    (["pretrain", "--output-dir", "nowhere", "--vocab-size", "260"], "argument --vocab-size: must be >= 261, got 260"),
    (["pretrain", "--output-dir", "nowhere", "--dropout", "nan"], "argument --dropout: must be >= 0 and < 1, got nan"),
    (["pretrain", "--output-dir", "nowhere", "--max-steps", "ten"], "argument --max-steps: expected an integer, got 'ten'"),
    # one rule for the label budgets (0 said ">= 1", then 1 "at least 2")
    (["finetune", "--run", "nowhere", "--labels", "0"], "argument --labels: must be >= 2, got 0"),
    (["finetune", "--run", "nowhere", "--labels", "1"], "argument --labels: must be >= 2, got 1"),
    (["finetune", "--run", "nowhere", "--pooling", "max"], "argument --pooling: invalid choice: 'max' (choose from "
                                                            "'cls', 'mean')"),
    (["pretrain", "--output-dir", "nowhere", "--activation", "swish"], "argument --activation: invalid choice"),
    (["pretrain", "--output-dir", "nowhere", "--precision", "fp64"], "argument --precision: invalid choice"),
])
def test_numeric_options_are_checked_before_anything_runs(capsys, argv, message):
    """A bad number, or a word not among an option's choices, is a usage error (exit 2) naming
    the option, before any data is read; a negative batch size used to loop forever, and
    --pooling max failed only once the run and the data were loaded."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_a_label_budget_past_the_training_pairs_names_the_pairs_it_needs(tiny_run):
    """Each pair gives two examples: 601 labels need 301 pairs (it said 300, beside 'there are 300')."""
    with pytest.raises(ValueError, match=r"a label budget of 601 needs 301 training pairs \(each gives two examples\); "
                                         r"there are 300, enough for 600 labels"):
        finetuning.compare(tiny_run, [4, 601], steps=1, warmup_steps=0)
    with pytest.raises(ValueError, match=r"each label budget must be a whole number >= 2 .*, got \[4, 1\]"):
        finetuning.compare(tiny_run, [4, 1])


def test_sentences_longer_than_max_tokens_are_one_notice_not_a_python_warning(data_dir, tmp_path, capsys,
                                                                              recwarn):
    pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), max_tokens=5, max_steps=2),
                         tmp_path / "run", progress=False)
    err = capsys.readouterr().err
    assert err.count("sentences are longer than max_tokens 5 on their own") == 1, err
    assert not [w for w in recwarn if "max_tokens" in str(w.message)]


def test_every_option_says_what_it_is_and_lists_its_choices(capsys):
    for command, defaults in (("pretrain", pretraining.DEFAULTS), ("finetune", finetuning.DEFAULTS)):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for key in defaults:
            option = "--" + key.replace("_", "-")
            assert re.search(re.escape(option) + r" \S+ \w", text), f"{option} has no description"
    assert "--pooling {cls,mean}" in text
    with pytest.raises(ValueError, match="fine-tuning: pooling must be one of cls, mean, got 'max'"):
        finetuning.compare("nowhere", [4], pooling="max")  # (before the run is looked for)


def test_pretraining_in_bf16_and_fp16_keeps_float32_weights_near_the_float32_run(data_dir, tmp_path):
    """--precision bf16 and fp16: the masked-LM step under minitx.autocast (fp16's with a loss
    scaler, saved in last.npz); the weights stay float32 and land near the float32 run's after the
    tiny recipe's four steps."""
    saved = {}
    for precision in ("fp32", "bf16", "fp16"):
        pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), precision=precision),
                             tmp_path / precision, progress=False)
        saved[precision] = load(tmp_path / precision / "last.npz")
    assert_near_float32(saved)
    with pytest.raises(ValueError, match="pretraining: precision must be one of fp32, tf32, bf16, fp16, got 'fp8'"):
        pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(data_dir), precision="fp8"),
                             tmp_path / "fp8", progress=False)


def test_reading_the_device_back_every_few_steps_trains_the_same_run(data_dir, tmp_path):
    """sync_every 2 (the loss and the checks read back every other step, as a GPU run does by
    default every sync.GPU_SYNC_EVERY) gives the checkpoint of reading every step, bit for bit;
    it may change on resume."""
    states = []
    for every in (0, 2):
        config = pretraining.build_config("tiny", data_dir=str(data_dir), max_steps=5, sync_every=every)
        pretraining.pretrain(config, tmp_path / str(every), progress=False)
        states.append(load(tmp_path / str(every) / "last.npz"))
    for part in ("model", "optimizer"):
        flat_a, flat_b = _flatten(states[0][part]), _flatten(states[1][part])
        assert flat_a.keys() == flat_b.keys()
        for key in flat_a:
            assert np.array_equal(flat_a[key], flat_b[key]), f"{part}/{key}"
    assert states[0]["progress"]["epoch_loss"] == states[1]["progress"]["epoch_loss"]
    pretraining.pretrain({"sync_every": 3, "max_steps": 5}, tmp_path / "2", resume=True, progress=False)
