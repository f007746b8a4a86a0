"""Training runs of the translation application: learning, exact resume, bad data and configurations."""
import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from translate_kit import (REPO, SMALL, TINY, TINY_EPOCHS, assert_same_state, no_network,  # noqa: F401
                           small_subset_dir, subset_dir, tiny_run, write_gz_lines)

import minitx
import minitx.optim
from minitx.data import (DataNotFoundError, batch_by_tokens, default_cache_dir, filter_by_length, load_pairs,
                         load_tokenizer, make_batch, multi30k)
from minitx.serialization import load
from minitx.translate import training
from minitx.translate.recipes import RECIPES, build_config


def initial_val_loss(run_dir, data_dir):
    """The validation loss of the run's model before its first step: same seed, same construction."""
    config = json.loads((run_dir / "config.json").read_text())
    src_tok, tgt_tok = load_tokenizer(run_dir / "tokenizer.src.json"), load_tokenizer(run_dir / "tokenizer.tgt.json")
    minitx.manual_seed(config["seed"])
    model = training.build_model(config, src_tok.vocab_size, tgt_tok.vocab_size, tgt_tok.pad_id, "cpu")
    src, tgt = training.encode_pairs(load_pairs("val", "de", "en", data_dir), src_tok, tgt_tok)
    kept, _ = filter_by_length(src, tgt, config["max_len"], max_tgt_len=config["max_len"] - 1)
    src, tgt = [src[i] for i in kept], [tgt[i] for i in kept]
    batches = [make_batch([src[i] for i in idx], [tgt[i] for i in idx], tgt_tok.pad_id, tgt_tok.bos_id,
                          tgt_tok.eos_id) for idx in batch_by_tokens(src, tgt, config["max_tokens"], shuffle=False)]
    return training.validation_loss(model, batches, tgt_tok.pad_id)


def test_tiny_model_lowers_validation_loss(tiny_run, subset_dir):
    history = json.loads((tiny_run / "history.json").read_text())
    assert [h["epoch"] for h in history] == list(range(1, TINY_EPOCHS + 1))
    assert all(h["complete"] for h in history)
    start = initial_val_loss(tiny_run, subset_dir)
    losses = [h["val_loss"] for h in history]
    # an untrained model is about uniform over the 1000 tokens (ln 1000 = 6.9), or worse
    assert start > 6.0
    assert losses[0] < start - 0.5, (start, losses)
    assert losses[-1] < losses[0], losses
    assert all(math.isfinite(h["train_loss"]) for h in history)


def test_run_directory_holds_what_the_docstring_promises(tiny_run):
    for name in ("config.json", "tokenizer.src.json", "tokenizer.tgt.json", "last.npz", "best.npz",
                 "history.json", "results.json", "test_2016_flickr.hyp.en"):
        assert (tiny_run / name).is_file(), name
    results = json.loads((tiny_run / "results.json").read_text())
    assert results["split"] == "test_2016_flickr" and results["direction"] == "de-en"
    assert results["signature"].startswith("nrefs:1|case:mixed")
    assert 0.0 <= results["bleu"] <= 100.0
    hyps = (tiny_run / "test_2016_flickr.hyp.en").read_text().split("\n")[:-1]
    assert len(hyps) == 100
    progress = load(tiny_run / "last.npz")["progress"]
    assert progress["epoch"] == TINY_EPOCHS and progress["batch"] == 0
    assert progress["step"] == json.loads((tiny_run / "history.json").read_text())[-1]["step"]


# ------------------------------------------------------------------ resume


RESUME = dict(TINY, max_tokens=300, save_every=3, dropout=0.2, warmup_steps=4, bleu_every=0)


def resume_config(data_dir, run_dir, max_steps):
    return build_config(None, data_dir=str(data_dir), output_dir=str(run_dir), max_steps=max_steps, epochs=1,
                        **RESUME)


class Killed(KeyboardInterrupt):
    """Ctrl-C in the middle of a training step."""


def kill_during_step(monkeypatch, step):
    """Make the training step number ``step`` raise midway (after backward, before the update)."""
    calls = {"n": 0}
    clip = minitx.optim.clip_grad_norm_

    def clip_then_maybe_die(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == step:
            raise Killed()
        return clip(*args, **kwargs)

    monkeypatch.setattr(minitx.optim, "clip_grad_norm_", clip_then_maybe_die)


def test_killed_run_resumes_to_exactly_the_uninterrupted_state(subset_dir, tmp_path):
    """Run A trains 12 steps in one go. Run B is killed during step 8 (the batches of one epoch
    are far more than 12), loses the steps after its last save, then resumes to 12 steps.
    With dropout on, only a restored RNG state gives the same masks, hence the same weights."""
    total, kill_at, save_every = 12, 8, RESUME["save_every"]
    training.train(resume_config(subset_dir, tmp_path / "a", total), progress=False)

    with pytest.MonkeyPatch.context() as patch, pytest.raises(Killed):
        kill_during_step(patch, kill_at)
        training.train(resume_config(subset_dir, tmp_path / "b", total), progress=False)
    saved = load(tmp_path / "b" / "last.npz")["progress"]
    assert saved["epoch"] == 0 and saved["batch"] == saved["step"]  # killed mid-epoch
    assert 0 <= (kill_at - 1) - saved["step"] < save_every  # at most save_every completed steps lost
    assert not (tmp_path / "b" / "results.json").exists()

    training.train(resume_config(subset_dir, tmp_path / "b", total), resume=True, progress=False)
    state_a, state_b = load(tmp_path / "a" / "last.npz"), load(tmp_path / "b" / "last.npz")
    assert state_b["progress"]["step"] == total
    for part in ("model", "optimizer", "schedule", "rng"):
        assert_same_state(state_a[part], state_b[part], part)
    results_a = json.loads((tmp_path / "a" / "results.json").read_text())
    results_b = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results_a["example"] == results_b["example"] and results_a["bleu"] == results_b["bleu"]


def test_a_run_killed_before_its_final_validation_finishes_when_resumed(subset_dir, tmp_path):
    """The last step's checkpoint is written (step 6, save_every 3), then the kill comes in
    the validation that would write best.npz: the resumed run records the epoch, writes
    best.npz and scores it as the uninterrupted run does."""
    total = 6
    training.train(resume_config(subset_dir, tmp_path / "a", total), progress=False)

    class Died(BaseException):
        """A kill (SIGKILL): no handler runs."""

    def die(*args):
        raise Died()

    with pytest.MonkeyPatch.context() as patch, pytest.raises(Died):
        patch.setattr(training, "validation_loss", die)
        training.train(resume_config(subset_dir, tmp_path / "b", total), progress=False)
    assert load(tmp_path / "b" / "last.npz")["progress"]["step"] == total
    assert not (tmp_path / "b" / "best.npz").exists()
    training.train(resume_config(subset_dir, tmp_path / "b", total), resume=True, progress=False)
    for name in ("last.npz", "best.npz"):
        a, b = load(tmp_path / "a" / name), load(tmp_path / "b" / name)
        assert_same_state(a["model"], b["model"], name)
    results_a = json.loads((tmp_path / "a" / "results.json").read_text())
    results_b = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results_a["val_loss"] == results_b["val_loss"] and results_a["example"] == results_b["example"]
    history = json.loads((tmp_path / "b" / "history.json").read_text())
    assert [h["step"] for h in history] == [total]


def test_resume_may_extend_a_finished_run(subset_dir, tmp_path, capsys):
    """A run stopped by max_steps continues when resumed with a larger max_steps, keeping its
    other settings; a changed lr would change the run, so it is refused (naming both values)
    before anything is written, and the change that is allowed is logged."""
    training.train(resume_config(subset_dir, tmp_path, 3), progress=False)
    saved = (tmp_path / "config.json").read_text()
    with pytest.raises(ValueError, match=r"lr 0\.003 \(saved\) != 1\.0 \(given\)"):
        training.train(dict(resume_config(subset_dir, tmp_path, 5), lr=1.0), resume=True, progress=False)
    assert (tmp_path / "config.json").read_text() == saved
    capsys.readouterr()
    training.train(resume_config(subset_dir, tmp_path, 5), resume=True, progress=False)
    assert "resume: max_steps changed from 3 to 5" in capsys.readouterr().err
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["max_steps"] == 5 and config["lr"] == RESUME["lr"]
    # the record of the stop at step 3, inside epoch 1, gives way to the stop at 5: a run that never stopped at 3
    assert [h["step"] for h in json.loads((tmp_path / "history.json").read_text())] == [5]


def test_resume_without_a_run_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config.json.*not a minitx translation run"):
        training.train(build_config(None, output_dir=str(tmp_path / "nothing-here")), resume=True)


# ------------------------------------------------------------------ bad data and configurations


@pytest.mark.parametrize("download", [True, False], ids=["offline", "download-off"])
def test_missing_data_says_where_to_put_the_files(tmp_path, monkeypatch, download):
    nowhere = tmp_path / "no-such-dir"
    monkeypatch.setenv("MINITX_DATA_DIR", str(nowhere))
    with pytest.raises(DataNotFoundError) as info:
        if download:
            training.train(build_config(None, output_dir=str(tmp_path / "run"), **TINY), progress=False)
        else:
            load_pairs("train", "de", "en", download=False)
    message = str(info.value)
    for expected in (str(nowhere), str(default_cache_dir()), "MINITX_DATA_DIR", "--data-dir", "train.de.gz"):
        assert expected in message
    assert (f"downloading {multi30k.URL_TEMPLATE.format(split='train', lang='de')} failed"
            if download else "download=False") in message


def test_a_data_dir_given_that_lacks_a_file_is_an_error_naming_it(tmp_path, monkeypatch, subset_dir, capsys):
    from minitx.translate.__main__ import main

    partial = tmp_path / "partial"
    shutil.copytree(subset_dir, partial)
    (partial / "train.en.gz").unlink()
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))  # which holds it: not read in its place
    run_dir = tmp_path / "run"
    code = main(["train", "--recipe", "cpu-quick", "--data-dir", str(partial), "--output-dir", str(run_dir),
                 "--no-progress", "--device", "cpu", "--max-steps", "1", "--d-model", "16", "--num-heads", "2",
                 "--d-ff", "16", "--vocab-size", "400", "--bleu-every", "0"])  # (short, were the file read elsewhere)
    err = capsys.readouterr().err
    assert code == 2 and f"the data directory {partial} (data_dir, --data-dir) has no file train.en.gz" in err
    assert not run_dir.exists()


def test_pairs_with_an_empty_side_are_counted_apart_naming_the_first(subset_dir, tmp_path, capsys):
    from minitx.data.multi30k import read_lines

    data = tmp_path / "data"
    shutil.copytree(subset_dir, data)
    german = read_lines(data / "train.de.gz")
    # lines 1001-1300, some blank rather than empty: translate reads a blank line as an empty one, and so does training
    write_gz_lines(data / "train.de.gz", german[:1000] + ["", "   ", "\t"] * 100 + german[1300:])
    english = read_lines(data / "val.en.gz")
    write_gz_lines(data / "val.en.gz", english[:9] + [""] + english[10:])  # line 10
    config = build_config(None, data_dir=str(data), output_dir=str(tmp_path / "run"),
                          **{**TINY, "max_steps": 1, "epochs": 1})
    training.train(config, progress=False)
    log = capsys.readouterr().err
    assert (f" longer than max_len 64, 300 with an empty source or target line (first: {data / 'train.de.gz'} "
            "line 1001) left out)") in log
    assert f"1 with an empty source or target line (first: {data / 'val.en.gz'} line 10) left out of the loss" in log
    too_long = int(log.split(" training pairs (")[1].split(" longer")[0])
    assert f"data: read from {data} (--data-dir)" in log  # (pretraining logs the same line: log_data_read)
    assert too_long < 300  # the long pairs alone, not the empty ones


def test_unequal_line_counts_name_both_files(tmp_path):
    write_gz_lines(tmp_path / "train.de.gz", ["Ein Hund.", "Eine Katze.", "Ein Mann."])
    write_gz_lines(tmp_path / "train.en.gz", ["A dog.", "A cat."])
    for split in ("val", "test_2016_flickr"):  # (a data directory given holds every split read)
        write_gz_lines(tmp_path / f"{split}.de.gz", ["Ein Hund."])
        write_gz_lines(tmp_path / f"{split}.en.gz", ["A dog."])
    with pytest.raises(ValueError, match=r"train.de.gz has 3 lines but .*train.en.gz has 2"):
        training.train(build_config(None, data_dir=str(tmp_path), output_dir=str(tmp_path / "run"), **TINY),
                       progress=False)


# a run in which every test translation holds a letter no 8-bit Western code page has (Czech's ř)
_RUN_WRITING_CZECH = """
import sys
from minitx.translate import training
from minitx.translate.recipes import build_config

translate = training.translate_sentences
def with_czech(*args, **kwargs):
    hyps, report, written = translate(*args, **kwargs)
    return [h + " \\u0159" for h in hyps], report, written
training.translate_sentences = with_czech
training.train(build_config(None, **eval(sys.argv[1])), progress=False)
"""


def test_the_test_translations_are_written_as_utf8_whatever_the_locale(small_subset_dir, tmp_path):
    """The hypothesis file is UTF-8, as every other file of a run and the corpus are: written in the
    locale's encoding (Windows' cp1252, a C locale's ASCII), a translation with a character that
    encoding lacks killed the run at its very end."""
    run_dir = tmp_path / "run"
    config = dict(SMALL, data_dir=str(small_subset_dir), output_dir=str(run_dir))
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), LC_ALL="C", LANG="C",
               PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", PYTHONIOENCODING="utf-8")  # (stdout is the terminal's)
    done = subprocess.run([sys.executable, "-c", _RUN_WRITING_CZECH, repr(config)], capture_output=True, text=True,
                          encoding="utf-8", env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (run_dir / "test_2016_flickr.hyp.en").read_bytes().decode("utf-8").splitlines()
    assert len(lines) == 10 and all(line.endswith(" \u0159") for line in lines)


@pytest.mark.parametrize("overrides, message", [
    ({"recipe": "no-such-recipe"}, r"unknown recipe 'no-such-recipe'; choose from \['base', 'cpu-long', 'cpu-quick'"),
    ({"d_modle": 64}, r"unknown configuration keys \['d_modle'\]"),
])
def test_build_config_rejects_unknown_names(overrides, message):
    with pytest.raises(ValueError, match=message):
        build_config(**overrides)


def test_recipes_only_use_known_keys():
    for name in RECIPES:
        config = build_config(name)
        direction = f"{config['src_lang']}-{config['tgt_lang']}"  # de-en unless the recipe says (base: en-de)
        assert config["recipe"] == name and config["output_dir"] == f"runs/{name}-{direction}"
