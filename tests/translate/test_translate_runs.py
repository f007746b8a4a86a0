"""Run directories and configurations: refusing to reuse a run, overwrite, what resume may change,
checks of the saved tokenizers, presets with overrides, shared embeddings, validation."""
import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from translate_kit import (SMALL, TINY, assert_same_state, copy_run, no_network, small_subset_dir,  # noqa: F401
                           subset_dir, tiny_run)

from minitx.data import load_tokenizer, make_batch
from minitx.nn import Transformer
from minitx.serialization import load
from same_state import assert_near_float32
from minitx.train import json_safe
import minitx.train
from minitx.translate import recipes, training
from minitx.translate.recipes import (DEFAULTS, MODEL_ARGS, RECIPES, build_config, preset_settings,
                                      validate_config)


def small_config(data_dir, run_dir, **changes):
    return build_config(None, data_dir=data_dir and str(data_dir), output_dir=str(run_dir), **{**SMALL, **changes})


def snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


# ------------------------------------------------------------------ an output directory that holds a run


@pytest.mark.parametrize("name", ["config.json", "best.npz", "last.npz", "epoch-3.npz", "history.json"])
def test_new_run_refuses_a_directory_that_holds_a_run(tmp_path, name):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / name).write_text("from an earlier run")
    before = snapshot(run_dir)
    with pytest.raises(ValueError, match=r"already holds a training run.*--resume.*--output-dir.*--overwrite"):
        training.train(small_config(tmp_path / "no-data", run_dir), progress=False)
    assert snapshot(run_dir) == before


def test_overwrite_deletes_the_earlier_run_and_nothing_else(small_subset_dir, tiny_run, tmp_path, capsys):
    """The earlier run: a joint 1000-token vocabulary and a stale epoch checkpoint. The new run
    has separate 400-token vocabularies: it must train its own tokenizers (not reuse the old
    ones), and leave no stale file to average or evaluate."""
    run_dir = copy_run(tiny_run, tmp_path / "run")
    shutil.copy(run_dir / "best.npz", run_dir / "epoch-7.npz")
    (run_dir / "results.json").write_text("{}")
    (run_dir / "notes.txt").write_text("mine")
    config = small_config(small_subset_dir, run_dir, joint_vocab=False, average_last=2)
    training.train(config, overwrite=True, progress=False)
    log = capsys.readouterr().err
    assert "overwrite: deleted the 6 files of the earlier run" in log
    assert (run_dir / "notes.txt").read_text() == "mine"
    assert not (run_dir / "epoch-7.npz").exists() and not (run_dir / "averaged.npz").exists()
    src_tok = load_tokenizer(run_dir / "tokenizer.src.json")
    tgt_tok = load_tokenizer(run_dir / "tokenizer.tgt.json")
    assert src_tok.vocab_size == tgt_tok.vocab_size == 400 and src_tok.to_dict() != tgt_tok.to_dict()
    assert "vocabulary 400 / 400" in log
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["vocab_size"] == 400 and saved["joint_vocab"] is False
    assert saved["built"]["src_vocab"] == saved["built"]["tgt_vocab"] == 400
    # separate vocabularies of the same size: the default share_embeddings quietly does not share
    assert saved["share_embeddings"] is False and saved["built"]["transformer"]["share_embeddings"] is False
    assert "separate vocabularies: share_embeddings is off" in log
    _, model, _, _ = training.load_run(run_dir, "last", device="cpu")
    assert model.src_embed is not model.tgt_embed
    assert json.loads((run_dir / "results.json").read_text())["checkpoint"] == "best"


def test_a_failed_start_leaves_nothing_behind(small_subset_dir, tiny_run, tmp_path, monkeypatch):
    """No data: no run directory is made, so the same command (with the data) is not refused
    afterwards; an --overwrite that fails to start leaves the earlier run as it was."""
    from minitx.data import DataNotFoundError

    monkeypatch.delenv("MINITX_DATA_DIR", raising=False)  # (the data would be found there)

    run_dir = tmp_path / "run"
    with pytest.raises(DataNotFoundError):
        training.train(small_config(tmp_path / "no-data", run_dir), progress=False)
    assert not run_dir.exists()
    training.train(small_config(small_subset_dir, run_dir), progress=False)
    assert (run_dir / "results.json").is_file()

    earlier = copy_run(tiny_run, tmp_path / "earlier")
    before = snapshot(earlier)
    with pytest.raises(DataNotFoundError):
        training.train(small_config(tmp_path / "no-data", earlier), overwrite=True, progress=False)
    assert snapshot(earlier) == before


@pytest.mark.parametrize("split", ["train", "val"])
def test_a_split_with_no_pair_that_fits_max_len_is_refused_before_training(small_subset_dir, tmp_path, split):
    """No training pair would train 0 steps (loss 0, ppl 1); no validation pair would make every
    validation loss a mean of nothing. Both are refused, naming --max-len and the counts, and
    nothing is written."""
    from minitx.data import multi30k

    data = tmp_path / "data"
    shutil.copytree(small_subset_dir, data)
    for lang in ("de", "en"):  # that split's sentences made longer than max_len 64
        lines = multi30k.read_lines(data / f"{split}.{lang}.gz")
        with gzip.open(data / f"{split}.{lang}.gz", "wt", encoding="utf-8") as f:
            f.writelines(" ".join([line] * 12) + "\n" for line in lines)
    run_dir = tmp_path / "run"
    which = {"train": "training", "val": "validation"}[split]
    pairs = len(multi30k.read_lines(data / f"{split}.de.gz"))
    with pytest.raises(ValueError, match=rf"no {which} pair fits max_len 64: of the {pairs} pairs of .*{split}.de.gz "
                                         rf"and {split}.en.gz, {pairs} are longer .*; give a larger --max-len"):
        training.train(small_config(data, run_dir), progress=False)
    assert not run_dir.exists()


def test_pairs_longer_than_max_tokens_are_one_notice_not_a_python_warning(small_subset_dir, tmp_path, capsys, recwarn):
    """Each is a batch of its own: said once, as the run's other notices are (a UserWarning with
    its source line came each time batches were made)."""
    training.train(small_config(small_subset_dir, tmp_path / "run", max_tokens=10), progress=False)
    err = capsys.readouterr().err
    assert err.count("pairs are longer than max_tokens 10 on their own") == 1, err
    assert re.search(r"data: \d+ training and \d+ validation pairs are longer than max_tokens 10 on their own .*: "
                     r"each is a batch of its own, past the budget; a larger --max-tokens batches them", err)
    assert not [w for w in recwarn if "max_tokens" in str(w.message)]


def test_resume_and_overwrite_exclude_each_other(tmp_path):
    with pytest.raises(ValueError, match="choose one"):
        training.train(small_config(tmp_path, tmp_path / "run"), resume=True, overwrite=True)


@pytest.mark.parametrize("change, message", [
    ({"vocab_size": 800}, "the source vocabulary has 1000 tokens, but vocab_size is 800"),
    ({"joint_vocab": False, "share_embeddings": False}, "the tokenizers are one joint vocabulary, but joint_vocab "
                                                        "is false"),
    ({"tokenizer": "word"}, "the source tokenizer is a BPETokenizer, but tokenizer is 'word'"),
])
def test_resume_checks_the_saved_tokenizers_against_the_config(tiny_run, subset_dir, tmp_path, monkeypatch, change,
                                                                message):
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))  # the run's data
    run_dir = copy_run(tiny_run, tmp_path / "run", **change)
    before = snapshot(run_dir)
    with pytest.raises(ValueError, match="do not match its config.json") as info:
        training.train({"output_dir": str(run_dir)}, resume=True, progress=False)
    assert message in str(info.value)
    assert snapshot(run_dir) == before


# ------------------------------------------------------------------ what resume may change


def test_resume_refuses_options_that_change_the_run(tiny_run, tmp_path):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    before = snapshot(run_dir)
    given = {"output_dir": str(run_dir), "lr": 0.5, "d_model": 64, "tokenizer": "word", "epochs": 9,
             "beam_size": 3}
    with pytest.raises(ValueError, match="cannot resume") as info:
        training.train(given, resume=True, progress=False)
    message = str(info.value)
    for part in ("lr 0.003 (saved) != 0.5 (given)", "d_model 32 (saved) != 64 (given)",
                 "tokenizer 'bpe' (saved) != 'word' (given)"):
        assert part in message
    assert "epochs 3" not in message and "beam_size 1" not in message
    assert snapshot(run_dir) == before


def resume_config(saved, given, run_dir):
    """The translation run's resume rule, as RunLifecycle applies it."""
    return minitx.train.resume_config(saved, given, run_dir, training.may_change_on_resume(saved),
                                      recipes.DEFAULTS, recipes.EXTRA_KEYS)


def test_resume_config_allows_the_harmless_options_and_reports_them(tmp_path):
    saved = json_safe(build_config(None, **TINY))
    changed = {"epochs": 20, "max_steps": 50, "time_limit": 2.5, "save_every": 0, "bleu_every": 2,
               "bleu_val_sentences": 10, "device": "auto", "beam_size": 4, "length_penalty": 1.0, "beam_search": "fairseq",
               "average_last": 3, "data_dir": "/elsewhere", "sync_every": 10, "cuda_graphs": True,
               "keep_epochs": True, "patience": 5}
    assert set(changed) == set(training.RESUME_MAY_CHANGE)
    config, changes = resume_config(saved, {**saved, **changed, "betas": (0.9, 0.98)}, tmp_path)
    assert changes == {key: (saved[key], value) for key, value in changed.items()}
    assert {key: config[key] for key in changed} == changed
    # everything else counts, even a key the Python API passes with its default value
    for key, value in {"seed": 2, "max_tokens": 100, "label_smoothing": 0.0, "src_lang": "fr", "dropout": 0.3,
                       "betas": (0.9, 0.999), "recipe": "cpu-quick", "warmup_steps": 31}.items():
        with pytest.raises(ValueError, match=f"{key} .* \\(saved\\) != "):
            resume_config(saved, {key: value}, tmp_path)
    # the cosine schedule decays over max_steps: there it changes the run
    cosine = dict(saved, schedule="cosine", max_steps=100)
    with pytest.raises(ValueError, match=r"max_steps 100 \(saved\) != 200 \(given\)"):
        resume_config(cosine, {"max_steps": 200}, tmp_path)


# ------------------------------------------------------------------ save_every, validation, the model built


def test_save_every_zero_saves_at_the_end_of_each_epoch(small_subset_dir, tmp_path):
    run_dir = tmp_path / "run"
    training.train(small_config(small_subset_dir, run_dir, save_every=0), progress=False)
    assert load(run_dir / "last.npz")["progress"]["step"] == SMALL["max_steps"]
    results = json.loads((run_dir / "results.json").read_text())
    assert {"empty", "truncated", "capped", "length_penalty"} <= set(results)  # decoding counts are recorded
    assert all(type(results[key]) is int and results[key] >= 0 for key in ("truncated", "capped"))


def test_resuming_a_run_at_its_step_limit_trains_no_further_step(small_subset_dir, tmp_path):
    run_dir = tmp_path / "run"
    training.train(small_config(small_subset_dir, run_dir), progress=False)
    before = load(run_dir / "last.npz")
    results = training.train({"output_dir": str(run_dir)}, resume=True, progress=False)
    after = load(run_dir / "last.npz")
    assert results["steps"] == after["progress"]["step"] == SMALL["max_steps"]
    for name, value in before["model"].items():
        np.testing.assert_array_equal(after["model"][name], value)


def test_a_resume_below_the_step_reached_is_refused_and_leaves_the_run_as_it_was(small_subset_dir, tmp_path):
    """--resume --max-steps N below the step reached stopped at once and wrote max_steps N into
    config.json (a resume refused for fewer epochs had rewritten config.json too)."""
    run_dir = tmp_path / "run"
    training.train(small_config(small_subset_dir, run_dir), progress=False)
    before = snapshot(run_dir)
    with pytest.raises(ValueError, match=r"last.npz: progress: the run is at step 2, past max_steps 1; resume it with "
                                         r"max_steps 2 or more"):
        training.train({"output_dir": str(run_dir), "max_steps": 1}, resume=True, progress=False)
    assert snapshot(run_dir) == before


def test_a_resume_refuses_other_data_naming_both_digests(small_subset_dir, tmp_path, monkeypatch, capsys):
    from minitx.data.multi30k import read_lines
    from translate_kit import write_gz_lines

    other = tmp_path / "other"
    shutil.copytree(small_subset_dir, other)
    lines = read_lines(other / "train.en.gz")
    write_gz_lines(other / "train.en.gz", lines[:-1] + ["A different last sentence."])
    run_dir = tmp_path / "run"
    monkeypatch.setenv("MINITX_DATA_DIR", str(small_subset_dir))  # config.json's data_dir stays null
    training.train(small_config(None, run_dir, max_steps=1), progress=False)
    config = json.loads((run_dir / "config.json").read_text())
    recorded = config["data_sha256"]["train"]
    assert config["data_read_from"]["train"].startswith(str(small_subset_dir / "train.de.gz"))
    monkeypatch.setenv("MINITX_DATA_DIR", str(other))
    with pytest.raises(ValueError) as info:
        training.train({"output_dir": str(run_dir), "max_steps": 2}, resume=True, progress=False)
    message = str(info.value)
    read_now = minitx.train.data_digest(list(zip(read_lines(other / "train.de.gz"), lines[:-1] + [
        "A different last sentence."])))
    assert f"The train data read now have SHA-256 {read_now} ({other / 'train.de.gz'}, " in message
    assert f"the run's have {recorded} ({small_subset_dir / 'train.de.gz'}, " in message
    assert "val data" not in message  # (the same)
    # the same pairs from another place resume, and say so
    shutil.copy(small_subset_dir / "train.en.gz", other / "train.en.gz")
    capsys.readouterr()
    training.train({"output_dir": str(run_dir), "max_steps": 2}, resume=True, progress=False)
    assert f"the train data are read from {other / 'train.de.gz'}" in capsys.readouterr().err


def test_a_relative_data_dir_is_recorded_whole_and_a_moved_one_is_named(small_subset_dir, tmp_path, monkeypatch,
                                                                       capsys):
    """--data-dir relative to where the run started is recorded absolute (evaluate and a resume
    from elsewhere find it); a run's data_dir no longer there is an error that says to give
    --data-dir, and other data under a data_dir is refused advising --data-dir alone."""
    from minitx.translate.__main__ import main

    data = tmp_path / "data"
    shutil.copytree(small_subset_dir, data)
    run_dir = tmp_path / "run"
    monkeypatch.chdir(tmp_path)
    training.train(small_config("data", run_dir, max_steps=1), progress=False)
    assert json.loads((run_dir / "config.json").read_text())["data_dir"] == str(data)
    monkeypatch.chdir(run_dir)
    assert main(["evaluate", "--run", str(run_dir), "--no-progress"]) == 0
    data.rename(tmp_path / "moved")
    capsys.readouterr()
    for argv in (["evaluate", "--run", str(run_dir), "--no-progress"],
                 ["train", "--output-dir", str(run_dir), "--resume", "--max-steps", "2", "--no-progress"]):
        assert main(argv) == 2
        assert (f"the run's data directory {data} (data_dir in its config.json) is not there (from {run_dir}); "
                "give --data-dir where its Multi30k files are now") in capsys.readouterr().err
    (tmp_path / "moved").rename(data)
    from minitx.data.multi30k import read_lines
    from translate_kit import write_gz_lines

    lines = read_lines(data / "train.en.gz")
    write_gz_lines(data / "train.en.gz", lines[:-1] + ["A different last sentence."])
    with pytest.raises(ValueError, match=r"trained on other data.*Give the run's data \(--data-dir\), or start"):
        training.train({"output_dir": str(run_dir), "max_steps": 2}, resume=True, progress=False)


def test_a_run_saved_before_data_digests_resumes_and_records_one(small_subset_dir, tmp_path, capsys):
    run_dir = tmp_path / "run"
    training.train(small_config(small_subset_dir, run_dir, max_steps=1), progress=False)
    config = json.loads((run_dir / "config.json").read_text())
    digests = config.pop("data_sha256")
    del config["data_read_from"]
    (run_dir / "config.json").write_text(json.dumps(config))
    capsys.readouterr()
    training.train({"output_dir": str(run_dir), "max_steps": 2}, resume=True, progress=False)
    assert "records no digest of the run's data" in capsys.readouterr().err
    assert json.loads((run_dir / "config.json").read_text())["data_sha256"] == digests


@pytest.mark.parametrize("missing", ["tokenizer.src.json", "tokenizer.tgt.json"])
def test_a_resume_refuses_a_missing_tokenizer_naming_it(small_subset_dir, tmp_path, missing):
    run_dir = tmp_path / "run"
    training.train(small_config(small_subset_dir, run_dir, max_steps=1), progress=False)
    (run_dir / missing).unlink()
    before = snapshot(run_dir)
    with pytest.raises(FileNotFoundError, match=f"cannot resume {run_dir}: its {missing} is missing"):
        training.train({"output_dir": str(run_dir), "max_steps": 2}, resume=True, progress=False)
    assert snapshot(run_dir) == before
    # translate and evaluate name it too (not a bare [Errno 2])
    with pytest.raises(FileNotFoundError, match=f"cannot use the run {run_dir}: its {missing} is missing .*; "
                                                "restore it from a copy of the run"):
        training.load_run(run_dir, "best", device="cpu")


def test_final_names_the_checkpoint_the_run_chose(tmp_path):
    run_dir = tmp_path
    assert training.checkpoint_path(run_dir) == run_dir / "best.npz"  # no results yet
    (run_dir / "results.json").write_text(json.dumps({"checkpoint": "averaged"}))
    assert training.checkpoint_path(run_dir, "final") == run_dir / "averaged.npz"
    assert training.checkpoint_path(run_dir, "last") == run_dir / "last.npz"
    assert training.checkpoint_path(run_dir, "elsewhere/x.npz") == Path("elsewhere/x.npz")
    assert training.checkpoint_path(run_dir, "./x.npz") == Path("x.npz")  # a path: as given
    assert training.checkpoint_path(run_dir, "x.npz") == run_dir / "x.npz"  # a bare file name: the run's
    assert training.checkpoint_path(run_dir, "epoch-4") == run_dir / "epoch-4.npz"
    for other in ("history.json", str(run_dir / "history.json"), "runs/best", ""):  # not a .npz, not a name
        with pytest.raises(ValueError, match=f"checkpoint '{re.escape(other)}' is neither a .npz file nor the name"):
            training.checkpoint_path(run_dir, other)


@pytest.mark.parametrize("change, message", [
    ({"save_every": -1}, "save_every must be an integer >= 0, got -1"),
    ({"lr": 0.0}, "lr must be a number > 0"),
    ({"vocab_size": -5}, "vocab_size must be a positive integer"),
    ({"schedule": "linear"}, "schedule must be one of inverse_sqrt, noam, cosine, plateau, constant"),
    ({"optimizer": "sgd"}, "optimizer must be one of adam, adamw"),
    ({"positional": "rotary"}, "positional must be one of"),
    ({"activation": "tanh"}, "activation must be one of relu, gelu"),
    ({"tokenizer": "chars"}, "tokenizer must be one of bpe, word"),
    ({"preset": "huge"}, "preset must be one of"),
    ({"src_lang": "xx"}, "unknown Multi30k language 'xx'"),
    ({"tgt_lang": "de"}, "source and target language are both 'de'"),
    ({"d_model": 31}, "num_heads 2 does not divide d_model 31"),
    ({"dropout": 1.5}, "dropout must be a number in [0, 1)"),
    ({"beam_size": 0}, "beam_size must be a positive integer"),
    ({"max_steps": 0}, "max_steps must be a positive integer or None"),
    ({"time_limit": -1}, "time_limit must be a number of minutes > 0"),
    ({"betas": (0.9, 1.5)}, "betas must be two numbers in [0, 1)"),
    ({"device": "tpu"}, "device must be 'auto', 'cpu' or 'cuda'"),
    ({"joint_vocab": False, "share_embeddings": True}, "share_embeddings needs one joint vocabulary"),
    ({"schedule": "cosine"}, "schedule 'cosine' needs max_steps"),
    ({"lowercase": True}, "lowercase is the word tokenizer's, but tokenizer is 'bpe'; for lowercased BPE text use "
                          "text 'moses-lowercase'"),
    ({"cuda_graphs": True, "device": "cpu"}, "cuda_graphs captures steps on a GPU, but device is 'cpu'"),
    ({"cuda_graphs": True, "accumulate": 2}, "cuda_graphs captures one batch per step, but accumulate is 2"),
    ({"cuda_graphs": "yes"}, "cuda_graphs must be"),
    ({"attention_kernels": "tensor-cores", "device": "cpu"}, "attention_kernels 'tensor-cores' runs on a GPU"),
    ({"attention_kernels": "tensor-cores", "precision": "fp32"}, "attention_kernels 'tensor-cores' takes bfloat16 "
                                                                 "or TF32 operands, but precision is 'fp32'"),
    ({"attention_kernels": "tensor"}, "attention_kernels must be one of cuda-cores, tensor-cores"),
    ({"d_modle": 64}, "unknown configuration keys ['d_modle']"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"length_penalty": float("nan")}, "length_penalty must be a number >= 0, got nan"),
])
def test_invalid_configurations_are_refused_before_anything_is_written(tmp_path, change, message):
    config = {**build_config(None, output_dir=str(tmp_path / "run"), **TINY), "max_steps": None, **change}
    with pytest.raises(ValueError, match="invalid configuration") as info:
        validate_config(config)
    assert message in str(info.value)
    with pytest.raises(ValueError):
        training.train(config, progress=False)
    assert not (tmp_path / "run").exists()


def test_recipes_are_steps_or_epochs_never_minutes():
    for name, recipe in RECIPES.items():
        assert "time_limit" not in recipe, name
        assert build_config(name)["time_limit"] is None and (recipe.get("max_steps") or recipe.get("epochs")), name


@pytest.mark.parametrize("recipe", ["cpu-quick", "cpu-long"])
def test_a_recipe_and_a_seed_train_the_same_model_twice(small_subset_dir, tmp_path, recipe):
    """Shrunk through overrides (a tiny model, three steps), but with the recipe's own limits
    otherwise: nothing depends on the clock, so both runs hold the same checkpoints."""
    shrink = dict(vocab_size=400, d_model=32, num_heads=2, encoder_layers=1, decoder_layers=1, d_ff=64, max_len=64,
                  max_tokens=600, max_steps=3, save_every=2, beam_size=1, device="cpu",
                  data_dir=str(small_subset_dir))
    for name in ("a", "b"):
        training.train(build_config(recipe, output_dir=str(tmp_path / name), **shrink), progress=False)
    for checkpoint in ("last.npz", "best.npz"):
        a, b = load(tmp_path / "a" / checkpoint), load(tmp_path / "b" / checkpoint)
        for part in ("model", "optimizer", "schedule", "rng"):
            if part in a:
                assert_same_state(a[part], b[part], f"{checkpoint}/{part}")
    assert load(tmp_path / "a" / "last.npz")["progress"]["step"] == 3


def test_every_recipe_is_valid():
    for name in [None, *RECIPES]:
        validate_config(build_config(name))


@pytest.mark.parametrize("recipe", [None, *RECIPES])
def test_the_model_built_is_the_model_recorded(recipe):
    """The model a configuration builds is the one it records, preset or not."""
    config = build_config(recipe)
    model = training.build_model(config, 50, 60 if not config["share_embeddings"] else 50, 0, "cpu")
    for key, arg in MODEL_ARGS.items():
        if key in ("attention_dropout", "activation_dropout") and config[key] is None:
            assert model.config[arg] == config["dropout"]
        else:
            assert model.config[arg] == config[key], key


def test_the_published_recipe_draws_fairseqs_embeddings_and_older_runs_keep_xavier():
    model = training.build_model(build_config("multi30k-tiny-published"), 50, 50, 0, "cpu")
    assert model.config["embed_init"] == "normal" and model.config["output_bias"] is False
    assert model.output_bias is None and not model.src_embed.weight.numpy()[0].any()
    saved = {k: v for k, v in build_config("multi30k-tiny").items() if k != "embed_init"}  # a run from before it
    assert training._upgrade_saved(saved)["embed_init"] == "xavier"


def test_preset_keeps_its_settings_and_applies_overrides(monkeypatch):
    plain = build_config("seed004-small")
    assert Transformer.from_preset("seed004-small", 50, 60).config == \
        training.build_model(plain, 50, 60, 0, "cpu").config
    assert {k: plain[k] for k in ("num_heads", "d_ff", "max_len", "positional", "share_embeddings")} == \
        {"num_heads": 8, "d_ff": 512, "max_len": 100, "positional": "learned", "share_embeddings": False}
    calls = []
    original = Transformer.from_preset.__func__

    def spy(cls, name, src_vocab, tgt_vocab, **overrides):
        calls.append((name, {k: v for k, v in overrides.items() if k not in ("pad_id", "device")}))
        return original(cls, name, src_vocab, tgt_vocab, **overrides)

    monkeypatch.setattr(Transformer, "from_preset", classmethod(spy))
    config = build_config("seed004-small", dropout=0.3, d_model=512)
    model = training.build_model(config, 50, 60, 0, "cpu")
    assert calls == [("seed004-small", {"d_model": 512, "dropout": 0.3})]
    assert model.config["d_model"] == 512 and model.config["dropout"] == 0.3 and model.config["num_heads"] == 8


def test_a_preset_chosen_as_an_option_brings_its_settings_below_the_recipe():
    config = build_config("gpu-best", preset="base")
    assert config["dropout"] == RECIPES["gpu-best"]["dropout"]  # the recipe's own model settings win
    assert config["max_len"] == 256  # the preset's, where the recipe has none
    # the preset builds no shared or tied embeddings, and the configuration says so
    assert preset_settings("base")["share_embeddings"] is False and DEFAULTS["share_embeddings"] is True
    assert config["share_embeddings"] is False and config["tie_output"] is False


def test_share_embeddings_follows_the_vocabulary():
    assert build_config(None)["share_embeddings"] is True
    assert build_config(None, joint_vocab=False)["share_embeddings"] is False  # the default: quietly off
    assert build_config("seed004-small")["share_embeddings"] is False
    with pytest.raises(ValueError, match="share_embeddings needs one joint vocabulary"):
        validate_config(build_config(None, joint_vocab=False, share_embeddings=True))  # asked for: an error


def test_validation_loss_restores_the_mode():
    model = Transformer(30, 30, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                        max_len=16)
    rng = np.random.default_rng(0)
    batch = make_batch([rng.integers(4, 30, 5).tolist()], [rng.integers(4, 30, 6).tolist()], 0, 1, 2)
    for mode in (False, True):
        model.train(mode)
        assert np.isfinite(training.validation_loss(model, [batch], 0))
        assert model.training is mode and all(m.training is mode for m in model.modules())


def test_a_preset_run_from_before_built_was_recorded_still_loads(tiny_run, tmp_path):
    """Older config.json files of preset runs hold the DEFAULTS' model keys, though the preset
    was built unchanged: load_run builds the preset's model again, not those keys'."""
    from minitx.serialization import save

    run_dir = copy_run(tiny_run, tmp_path / "old", preset="seed004-small", joint_vocab=True)
    config = json.loads((run_dir / "config.json").read_text())
    del config["built"]
    assert config["num_heads"] != 8  # the tiny run's own keys: not what the preset builds
    (run_dir / "config.json").write_text(json.dumps(config))
    built = Transformer.from_preset("seed004-small", 1000, 1000, pad_id=0)
    save({"model": built.state_dict()}, run_dir / "best.npz")
    _, model, _, _ = training.load_run(run_dir, device="cpu")
    assert model.config == built.config


# ------------------------------------------------------------------ how the steps run: static shapes, sync-free


def test_static_shapes_and_a_sync_free_step_train_the_same_run(small_subset_dir, tmp_path):
    """With static shapes every batch has one of a few padded shapes; reading the device every
    step or every 5 steps gives the same checkpoint bit for bit (sync_every may change on resume)."""
    states = []
    for every in (None, 5):
        run_dir = tmp_path / f"sync-{every}"
        training.train(small_config(small_subset_dir, run_dir, static_shapes=True, sync_every=every, max_steps=3),
                       progress=False)
        state = load(run_dir / "last.npz")
        state["progress"].pop("train_seconds")
        state["config"].pop("sync_every"), state["config"].pop("output_dir")
        for record in state.get("history", []):
            record.pop("seconds")
        states.append(state)
    assert_same_state(states[0], states[1])


def test_bf16_and_fp16_runs_train_with_float32_weights_near_the_float32_run(small_subset_dir, tmp_path):
    """--precision bf16 and fp16: the training step under minitx.autocast (fp16's with a loss
    scaler, whose state last.npz keeps); the checkpoint's weights stay float32, and two steps
    land near the float32 run's (bfloat16 and float16 round the products)."""
    saved = {}
    for precision in ("fp32", "bf16", "fp16"):
        run_dir = tmp_path / precision
        training.train(small_config(small_subset_dir, run_dir, precision=precision), progress=False)
        saved[precision] = load(run_dir / "last.npz")
    assert_near_float32(saved)


# ------------------------------------------------------------------ a run directory is one consistent record


def test_a_resume_refuses_a_config_json_edited_after_training(tiny_run, subset_dir, tmp_path, monkeypatch):
    """config.json said max_tokens 2000 and activation relu when last.npz was trained; edited by
    hand, a resume would go on with other settings and exit 0. Now it names the file and fields."""
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))  # the run's data
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    config.update(max_tokens=100, activation="gelu")
    (run_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"last.npz was trained with another configuration than .*config.json holds: "
                                         r"activation 'relu' in the checkpoint, 'gelu' in config.json; max_tokens 2000"):
        training.train({"output_dir": str(run_dir), "epochs": 4}, resume=True, progress=False)


def test_a_checkpoint_of_the_other_direction_names_the_languages_first_and_the_data_digests_short(tiny_run):
    """A de-en run's last.npz replaced by an en-de one: the languages come first, the digests of the data
    (64 hex digits each) last, by split and cut to 12."""
    config = json.loads((tiny_run / "config.json").read_text())
    other = {**config, "src_lang": config["tgt_lang"], "tgt_lang": config["src_lang"],
             "data_sha256": {split: "ab" * 32 for split in config["data_sha256"]}}
    with pytest.raises(ValueError, match=r"holds: src_lang 'en' in the checkpoint, 'de' in config.json; tgt_lang 'de' "
                                         r"in the checkpoint, 'en' in config.json; the data read \(data_sha256\): "
                                         r"train abababababab\.\.\. in the checkpoint, [0-9a-f]{12}\.\.\. in config.json, "
                                         r"val abababababab\.\.\. in the checkpoint, [0-9a-f]{12}\.\.\. in config.json\. "
                                         r"Restore"):
        training.check_run_files(tiny_run / "last.npz", {"config": other}, config, None, None)


def run_from_before(run, run_dir, older):
    """A copy of ``run`` in ``run_dir`` as a version before the settings ``older`` would have
    written it: without them in config.json and in the checkpoints' configs."""
    from minitx.serialization import save

    shutil.copytree(run, run_dir)
    config = {k: v for k, v in json.loads((run_dir / "config.json").read_text()).items() if k not in older}
    (run_dir / "config.json").write_text(json.dumps(config))
    for name in ("last.npz", "best.npz"):
        state = load(run_dir / name)
        state["config"] = {k: v for k, v in state["config"].items() if k not in older}
        save(state, run_dir / name)
    return run_dir


def test_a_run_from_before_newer_settings_resumes_as_it_ran(tiny_run, subset_dir, tmp_path):
    """A run whose config.json and checkpoints predate precision, static_shapes and accumulate
    resumes (float32, its batches as they came, one batch a step) and keeps what it had."""
    run_dir = run_from_before(tiny_run, tmp_path / "run", ("precision", "static_shapes", "accumulate",
                                                           "attention_kernels"))
    epochs = json.loads((run_dir / "history.json").read_text())[-1]["epoch"]
    training.train({"output_dir": str(run_dir), "epochs": epochs + 1, "data_dir": str(subset_dir)}, resume=True,
                   progress=False)
    resumed = json.loads((run_dir / "config.json").read_text())
    assert (resumed["precision"], resumed["static_shapes"], resumed["accumulate"]) == ("fp32", False, 1)
    assert resumed["attention_kernels"] == "cuda-cores"
    assert json.loads((run_dir / "history.json").read_text())[-1]["epoch"] == epochs + 1


def test_a_checkpoint_of_another_run_is_refused_naming_the_runs_own_files(tiny_run, tmp_path):
    """--checkpoint given as a path into another run: the refusal names the config.json it was
    compared with (the --run's), not the checkpoint's own directory's."""
    run_dir, other = copy_run(tiny_run, tmp_path / "run"), copy_run(tiny_run, tmp_path / "other")
    config = json.loads((run_dir / "config.json").read_text())
    config["activation"] = "gelu"
    (run_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=re.escape(f"{other / 'best.npz'} was trained with another configuration "
                                                   f"than {run_dir / 'config.json'} holds: activation 'relu'")):
        training.load_run(run_dir, str(other / "best.npz"), device="cpu")


def test_translate_refuses_tokenizers_changed_after_training(tiny_run, tmp_path):
    """Two pieces of the BPE vocabulary swapped in tokenizer.src.json: the ids would mean other
    pieces, and the translations would silently be wrong. The checkpoint's digest catches it."""
    run_dir = copy_run(tiny_run, tmp_path / "run")
    for name in ("tokenizer.src.json", "tokenizer.tgt.json"):  # one joint vocabulary, saved twice
        data = json.loads((run_dir / name).read_text())
        tokens = data["vocab"]["tokens"] if "vocab" in data else data["tokens"]
        tokens[300], tokens[301] = tokens[301], tokens[300]
        (run_dir / name).write_text(json.dumps(data))
    with pytest.raises(ValueError, match="best.npz was trained with other tokenizers than .* holds in "
                                         "tokenizer.src.json and tokenizer.tgt.json"):
        training.load_run(run_dir, "best", device="cpu")


@pytest.mark.parametrize("static, graphs, device, accumulate, nvmath, precision, expected", [
    # auto (None) on a GPU with nvmath-python: captured steps on static shapes
    (None, None, "cuda", 1, True, "fp32", (True, True, None)),
    (None, None, "cuda", 1, True, "tf32", (True, True, None)),
    # auto where a graph cannot be captured: eager, the batches as they come, and why
    (None, None, "cuda", 1, False, "fp32", (False, False, "CUDA graphs off: nvmath-python is not installed "
                                                          "(pip install nvmath-python)")),
    (None, None, "cuda", 2, True, "fp32", (False, False, "CUDA graphs off: accumulate is 2")),
    (False, None, "cuda", 1, True, "fp32", (False, False, "CUDA graphs off: static_shapes is false")),
    (None, None, "cuda", 1, True, "bf16", (True, True, None)),
    (None, None, "cuda", 1, True, "fp16", (True, True, None)),
    (None, None, "cpu", 1, True, "fp32", (False, False, None)),
    # what the configuration sets holds; graphs set on bring static shapes with them
    (None, True, "cuda", 1, True, "bf16", (True, True, None)),
    (False, True, "cuda", 1, True, "fp32", (False, True, None)),
    (None, False, "cuda", 1, True, "fp32", (False, False, None)),
    (True, None, "cpu", 1, True, "fp32", (True, False, None)),
    (True, False, "cuda", 1, True, "fp32", (True, False, None)),
])
def test_step_mode_chooses_captured_steps_on_static_shapes_where_they_work(monkeypatch, static, graphs, device,
                                                                           accumulate, nvmath, precision, expected):
    monkeypatch.setattr(training.blas, "available", lambda: nvmath)
    config = dict(DEFAULTS, static_shapes=static, cuda_graphs=graphs, accumulate=accumulate, precision=precision)
    assert training.step_mode(config, device) == expected


def test_a_run_records_its_static_shapes_and_precision_choices(small_subset_dir, tmp_path):
    """static_shapes and precision auto are resolved when the run starts and written to
    config.json, so a resume on another machine (or without nvmath-python) batches and computes
    as the run began."""
    run_dir = tmp_path / "auto"
    training.train(small_config(small_subset_dir, run_dir, max_steps=1), progress=False)
    config = json.loads((run_dir / "config.json").read_text())
    assert config["static_shapes"] is False and config["cuda_graphs"] is None  # the CPU: eager, as the batches come
    assert config["precision"] == "fp32"  # the CPU has no TF32
    assert config["attention_kernels"] == "cuda-cores"


@pytest.mark.parametrize("given, device, precision, asked, expected", [
    (None, "cuda", "tf32", False, "cuda-cores"),     # the default until hardware has timed the tensor cores
    (None, "cuda", "tf32", True, "tensor-cores"),    # MINITX_ATTENTION_MMA=1
    (None, "cuda", "bf16", True, "tensor-cores"),
    (None, "cuda", "fp32", True, "cuda-cores"),      # exact float32: no tensor-core operands
    (None, "cpu", "bf16", True, "cuda-cores"),       # a CPU run (its attention is NumPy's)
    ("tensor-cores", "cuda", "bf16", False, "tensor-cores"),
    ("cuda-cores", "cuda", "bf16", True, "cuda-cores"),
])
def test_attention_kernels_are_chosen_at_the_start_and_recorded(monkeypatch, given, device, precision, asked,
                                                                expected):
    monkeypatch.setenv("MINITX_ATTENTION_MMA", "1" if asked else "0")
    monkeypatch.setattr(training, "_tensor_cores_present", lambda: True)
    config = dict(DEFAULTS, attention_kernels=given, precision=precision)
    assert training.attention_kernels(config, device) == expected


@pytest.mark.parametrize("device, precision, present", [("cuda", "fp32", True), ("cpu", "bf16", True),
                                                        ("cuda", "bf16", False)])
def test_tensor_core_attention_where_it_cannot_run_is_refused(monkeypatch, device, precision, present):
    """precision auto resolved to fp32 (a GPU without TF32), a CPU run (device auto on a machine
    without a GPU), a GPU older than compute capability 8.0: the run stops before training instead
    of recording kernels it would not use."""
    monkeypatch.setattr(training, "_tensor_cores_present", lambda: present)
    config = dict(DEFAULTS, attention_kernels="tensor-cores", precision=precision)
    with pytest.raises(ValueError, match=f"'tensor-cores' needs a GPU of compute capability 8.0 or above and "
                                         f"precision tf32 or bf16; this run has device '{device}' and precision "
                                         f"'{precision}'"):
        training.attention_kernels(config, device)
    if not present:  # auto on such a GPU: the CUDA cores, whatever the environment asks
        monkeypatch.setenv("MINITX_ATTENTION_MMA", "1")
        assert training.attention_kernels(dict(config, attention_kernels=None), device) == "cuda-cores"


def test_a_resume_keeps_the_attention_kernels_its_run_chose(tiny_run, tmp_path):
    """The kernels change the numbers (P rounded to bfloat16 or TF32 on the tensor cores): a resume
    may not switch them, and a run from before the option resumes on the CUDA cores it used."""
    run_dir = copy_run(tiny_run, tmp_path / "run")
    with pytest.raises(ValueError, match="attention_kernels 'cuda-cores' \\(saved\\) != 'tensor-cores' \\(given\\)"):
        training.train({"output_dir": str(run_dir), "attention_kernels": "tensor-cores"}, resume=True,
                       progress=False)
    old = {k: v for k, v in json.loads((run_dir / "config.json").read_text()).items() if k != "attention_kernels"}
    assert training._upgrade_saved(old)["attention_kernels"] == "cuda-cores"


def test_a_run_from_before_newer_settings_still_loads_for_translation(tiny_run, tmp_path):
    """translate and evaluate (load_run) compare config.json with the checkpoint's config after
    upgrading both: a run older than precision, static_shapes and attention_kernels loads, and its
    configuration comes back with the values it ran with."""
    run_dir = run_from_before(tiny_run, tmp_path / "run", ("precision", "static_shapes", "attention_kernels"))
    loaded, model, _, _ = training.load_run(run_dir, "best", device="cpu")
    assert loaded["attention_kernels"] == "cuda-cores" and loaded["precision"] == "fp32" and model is not None


def _script(name, *args):
    """benchmarks/<name> run with ``args``, its exit code and output kept (some must fail)."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / name
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True)


def test_keep_epochs_keeps_every_epoch_model_and_time_to_bleu_scores_them(small_subset_dir, tmp_path):
    """keep_epochs keeps epoch-<n>.npz of every epoch (averaging still takes the last
    average_last), and benchmarks/time_to_bleu.py scores them on test2016 in order."""
    kept, plain = tmp_path / "kept", tmp_path / "plain"
    for run_dir, keep in ((kept, True), (plain, False)):
        training.train(small_config(small_subset_dir, run_dir, epochs=3, max_steps=None, average_last=2,
                                    keep_epochs=keep), progress=False)
    assert sorted(p.name for p in kept.glob("epoch-*.npz")) == ["epoch-1.npz", "epoch-2.npz", "epoch-3.npz"]
    assert sorted(p.name for p in plain.glob("epoch-*.npz")) == ["epoch-2.npz", "epoch-3.npz"]
    # the same training either way: the averaged model is the last two epochs' in both
    np.testing.assert_array_equal(*(load(d / "averaged.npz")["model"]["src_embed.weight"] for d in (kept, plain)))

    out = tmp_path / "time.json"
    done = _script("time_to_bleu.py", kept, "--all", "--target", "0", "--device", "cpu", "--out", out)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    history = json.loads((kept / "history.json").read_text())
    assert [r["epoch"] for r in report["epochs"]] == [1, 2, 3]
    assert [r["seconds"] for r in report["epochs"]] == [r["seconds"] for r in history]
    assert report["held"] == report["first_crossing"] == report["epochs"][0]
    assert "first crossing: epoch 1" in done.stdout and "time to 0 BLEU: epoch 1," in done.stdout
    # epoch 3 reaches it, so the earlier ones are scored too
    back = _script("time_to_bleu.py", kept, "--from-epoch", "3", "--target", "0", "--device", "cpu")
    assert back.returncode == 0 and "time to 0 BLEU: epoch 1," in back.stdout
    unreachable = _script("time_to_bleu.py", kept, "--target", "101", "--device", "cpu")
    assert unreachable.returncode == 1 and "did not reach 101 BLEU" in unreachable.stdout
    refused = _script("time_to_bleu.py", plain, "--all", "--device", "cpu")
    assert refused.returncode == 1 and "lacks the models of epochs [1]" in refused.stderr
    # keep_epochs turned off at a resume: the next epoch end leaves only the last average_last
    training.train({"output_dir": str(kept), "epochs": 4, "keep_epochs": False}, resume=True, progress=False)
    assert sorted(p.name for p in kept.glob("epoch-*.npz")) == ["epoch-3.npz", "epoch-4.npz"]


def test_a_config_from_before_precision_and_static_shapes_resumes_as_it_ran():
    """Those runs computed in float32 on the batches as they came: a resume keeps that, where
    the defaults (None) would now choose TF32 and static shapes on a GPU."""
    old = {key: value for key, value in json_safe(build_config(None, **TINY)).items()
           if key not in ("precision", "static_shapes")}
    upgraded = training._upgrade_saved(old)
    assert upgraded["precision"] == "fp32" and upgraded["static_shapes"] is False
    recorded = dict(old, precision="bf16", static_shapes=True)
    assert training._upgrade_saved(recorded) == recorded


def _time_to_bleu():
    """benchmarks/time_to_bleu.py as a module (benchmarks/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "time_to_bleu", Path(__file__).resolve().parents[2] / "benchmarks" / "time_to_bleu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_time_to_bleu_starts_after_the_last_epoch_measured_far_below_the_target():
    """Validation BLEU measured every 5 epochs: 36.9 at epoch 10 is more than 3 below 40, so
    epochs 11-14 (unmeasured) may be the first to reach it and are scored; none measured: all."""
    module = _time_to_bleu()
    history = [{"epoch": e, **({"val_bleu": {5: 30.0, 10: 36.9, 15: 38.0}[e]} if e % 5 == 0 else {})}
               for e in range(1, 16)]
    assert module.first_epoch_to_score(history, 40, 3) == 11
    assert module.first_epoch_to_score([{"epoch": e} for e in range(1, 4)], 40, 3) == 1


def test_time_to_bleu_counts_from_the_epoch_after_which_bleu_stays_at_the_target():
    """A noisy test BLEU (the H100 run's 39.00, 38.77, 40.10 at epochs 13-15, then made up): one
    lucky epoch is the first crossing, not the time to the target. The headline is the first epoch
    from which every epoch to the run's last reaches it, or with ``hold`` K, K epochs in a row (as
    many as the run has left); epochs not scored prove nothing, so no figure where they are needed."""
    crossings = _time_to_bleu().crossings
    bleus = {13: 39.00, 14: 38.77, 15: 40.10, 16: 39.60, 17: 40.30, 18: 40.50, 19: 40.20, 20: 41.00}
    assert crossings(bleus, 40, last=20) == (15, 17)
    assert crossings(bleus, 40, hold=1, last=20) == (15, 15)  # K = 1: the first crossing
    assert crossings(bleus, 40, hold=2, last=20) == (15, 17)
    assert crossings({**bleus, 20: 39.9}, 40, last=20) == (15, None)  # the last epoch fell back
    assert crossings({**bleus, 20: 39.9}, 40, hold=3, last=20) == (15, 17)
    assert crossings(bleus, 40, hold=10, last=20) == (15, 17)  # the run ends first: its rest suffices
    assert crossings(bleus, 40, last=25) == (15, None)  # epochs 21-25 not scored
    assert crossings({13: 39.0, 14: 38.77, 15: 40.10}, 40, last=29) == (15, None)  # the recorded scan
    assert crossings(bleus, 42, last=20) == (None, None)
    assert crossings({1: 40.0, 2: 40.0}, 40, last=2) == (1, 1)  # at the target counts


def test_time_to_bleu_rescores_a_recorded_scan_without_its_models(tmp_path):
    """--scores: the rule applied to the epochs an earlier --out recorded (the models long gone);
    both figures printed and written. A scan that stopped at its first crossing shows no epoch
    from which the BLEU stayed at the target: said, exit 1."""
    run = tmp_path / "run"
    run.mkdir()
    history = [{"epoch": e, "step": 100 * e, "seconds": 2.0 * e, "complete": True} for e in range(1, 21)]
    (run / "history.json").write_text(json.dumps(history + [{"epoch": 21, "step": 2050, "seconds": 42.5,
                                                            "complete": False}]))
    bleus = {13: 39.00, 14: 38.77, 15: 40.10, 16: 39.60, 17: 40.30, 18: 40.50, 19: 40.20, 20: 41.00}
    rows = [{"epoch": e, "step": 100 * e, "seconds": 2.0 * e, "val_bleu": None, "test_bleu": b}
            for e, b in bleus.items()]
    (run / "time.json").write_text(json.dumps({"run": "/tmp/gone", "target": 40.0, "beam_size": 5, "epochs": rows}))
    out = tmp_path / "again.json"
    done = _script("time_to_bleu.py", run, "--scores", run / "time.json", "--out", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "first crossing: epoch 15 (40.10), step 1500, 30.0 s of training" in done.stdout
    assert "time to 40 BLEU: epoch 17, step 1700, 34.0 s of training" in done.stdout
    report = json.loads(out.read_text())
    assert report["first_crossing"]["epoch"] == 15 and report["held"]["epoch"] == 17
    assert report["hold"] is None and report["last_epoch"] == 20 and report["epochs"] == rows
    held3 = _script("time_to_bleu.py", run, "--scores", run / "time.json", "--hold", "3")
    assert "time to 40 BLEU: epoch 17" in held3.stdout and "3 epochs in a row" in held3.stdout
    assert "; 4 epoch(s))" in done.stdout and "ended too soon" not in done.stdout  # epochs 17-20
    held10 = _script("time_to_bleu.py", run, "--scores", run / "time.json", "--hold", "10")
    assert "; 4 epoch(s)): the run ended too soon after it to show that it stays" in held10.stdout

    (run / "time.json").write_text(json.dumps({"epochs": rows[:3]}))  # stopped at the first crossing
    short = _script("time_to_bleu.py", run, "--scores", run / "time.json")
    assert short.returncode == 1 and "first crossing: epoch 15 (40.10)" in short.stdout
    assert "no epoch shown to stay at or above 40 BLEU to the run's last (20): epochs 16-20 not scored" \
        in short.stdout


def test_sweep_trains_runs_over_seeds_side_by_side_and_tables_them(small_subset_dir, tmp_path):
    """benchmarks/sweep.py: two runs x two seeds, two at a time; the same command again trains
    nothing; a run without results resumes; a run that fails is named and fails the sweep."""
    tiny = (f"--vocab-size 400 --d-model 32 --num-heads 2 --encoder-layers 1 --decoder-layers 1 --d-ff 64 "
            f"--max-tokens 600 --epochs 1 --max-steps 2 --bleu-every 0 --beam-size 1 --device cpu "
            f"--data-dir {small_subset_dir}")
    out = tmp_path / "sweep"
    args = [out, "--parallel", "2", "--seeds", "1", "2", "--train-args", tiny,
            "--run", "a: --dropout 0.1", "--run", "b: --dropout 0.2"]
    first = _script("sweep.py", *args)
    assert first.returncode == 0, first.stdout + first.stderr
    report = json.loads((out / "sweep.json").read_text())
    assert [r["run"] for r in report["runs"]] == ["a-s1", "a-s2", "b-s1", "b-s2"]
    assert all(r["finished"] and r["exit_code"] == 0 for r in report["runs"])
    for name in ("a", "b"):
        runs = [r for r in report["runs"] if r["name"] == name]
        summary = next(s for s in report["summary"] if s["name"] == name)
        bleus = [r["bleu"] for r in runs]
        assert summary["finished"] == 2 and summary["bleu"]["spread"] == round(max(bleus) - min(bleus), 2)
    assert json.loads((out / "a-s2" / "config.json").read_text())["seed"] == 2
    again = _script("sweep.py", *args)
    assert again.returncode == 0 and "started" not in again.stdout
    (out / "b-s1" / "results.json").unlink()
    resumed = _script("sweep.py", *args)
    assert resumed.returncode == 0 and "started b-s1" in resumed.stdout and "started a-s1" not in resumed.stdout
    assert "resume" in (out / "b-s1.log").read_text()
    failed = _script("sweep.py", out, "--train-args", tiny, "--run", "bad: --dropout 1.5")
    assert failed.returncode == 1 and "bad-s0" in failed.stdout and "not finished: exit 2" in failed.stdout


def test_an_interrupted_sweep_has_its_runs_save_and_stop(small_subset_dir, tmp_path):
    """SIGINT to the sweep alone (as `timeout -s INT` or a `kill -INT` may send it), twice: it passes the
    signal on, each running run saves last.npz and stops, the table lists the runs as not
    finished, the sweep exits 130, and no run goes on training behind it."""
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import time

    endless = (f"--vocab-size 400 --d-model 32 --num-heads 2 --encoder-layers 1 --decoder-layers 1 --d-ff 64 "
               f"--max-tokens 600 --epochs 100000 --max-steps 100000000 --bleu-every 0 --beam-size 1 --device cpu "
               f"--data-dir {small_subset_dir}")
    out = tmp_path / "sweep"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "sweep.py"
    sweep = subprocess.Popen([sys.executable, str(script), str(out), "--parallel", "2", "--seeds", "1", "2",
                              "--train-args", endless, "--run", "a: --dropout 0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    logs = [out / f"a-s{seed}.log" for seed in (1, 2)]
    try:
        deadline = time.monotonic() + 240
        while not all(log.exists() and "epoch 1:" in log.read_text() for log in logs):
            assert sweep.poll() is None and time.monotonic() < deadline, "the runs never finished an epoch"
            time.sleep(0.2)
        sweep.send_signal(signal.SIGINT)  # to the sweep's process only: its runs are in its own group
        time.sleep(0.3)
        sweep.send_signal(signal.SIGINT)  # again, while it waits for its runs to save: ignored
        stdout, stderr = sweep.communicate(timeout=120)
    finally:  # whatever failed, nothing of it trains on
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 130, stdout + stderr
    assert "the same command goes on where this stopped" in stderr
    report = json.loads((out / "sweep.json").read_text())
    assert [(r["run"], r["finished"], r["exit_code"]) for r in report["runs"]] == [("a-s1", False, 130),
                                                                                  ("a-s2", False, 130)]
    for seed in (1, 2):
        assert (out / f"a-s{seed}" / "last.npz").exists() and not (out / f"a-s{seed}" / "results.json").exists()
        assert "saved" in (out / f"a-s{seed}.log").read_text()


def test_patience_stops_a_translation_run_and_is_logged(small_subset_dir, tmp_path, monkeypatch, capsys):
    """patience 1 with a validation loss that rises at every epoch end: the run stops after
    epoch 2 of 4, says why, and finishes (test translation, results.json) as any run."""
    losses = iter([1.0, 2.0, 3.0, 4.0, 5.0])
    monkeypatch.setattr(training, "validation_loss", lambda model, batches, pad_id: next(losses))
    run_dir = tmp_path / "run"
    results = training.train(small_config(small_subset_dir, run_dir, epochs=4, max_steps=None, patience=1),
                             progress=False)
    history = json.loads((run_dir / "history.json").read_text())
    assert [r["epoch"] for r in history] == [1, 2] and [r["val_loss"] for r in history] == [1.0, 2.0]
    assert "training stopped: the validation loss has not improved for 1 epoch (patience 1)" in \
        capsys.readouterr().err
    assert "bleu" in results and (run_dir / "results.json").exists()


def test_a_run_without_progress_bars_downloads_without_them(small_subset_dir, tmp_path, monkeypatch):
    """--no-progress reached the training's bars but not a download's (six bars on a fresh cache)."""
    asked = []
    real = training.ensure_files

    def recording(*args, **kwargs):
        asked.append(kwargs.get("progress", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "ensure_files", recording)
    training.train(small_config(small_subset_dir, tmp_path / "run", max_steps=1), progress=False)
    assert asked == [False, False, False]  # train, val and the test split


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.pop("src_lang"), r"the settings \['src_lang'\] are missing"),
    (lambda c: c.pop("tokenizer"), r"the settings \['tokenizer'\] are missing"),
    (lambda c: c.pop("beam_size"), r"the settings \['beam_size'\] are missing"),
    (lambda c: (c.pop("data_dir"), c.pop("length_penalty")), r"the settings \['length_penalty', 'data_dir'\] are missing"),
    (lambda c: (c.pop("built"), c.update(preset="huge")), r"unknown preset 'huge'"),
    (lambda c: (c.pop("built"), c.update(preset=["base"])), r"unknown preset \['base'\]"),
])
def test_a_config_json_edited_by_hand_is_refused_naming_it(tmp_path, edit, message):
    """translate and evaluate read these settings of config.json (to decode, to find the data):
    one missing was a KeyError, an unknown preset an error naming no file (a list one a TypeError)."""
    config = json_safe(dict(build_config(None, output_dir=str(tmp_path), **TINY), built={"src_vocab": 1000}))
    edit(config)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path / 'config.json'))} is not a run's "
                                         rf"configuration: {message}"):
        training.read_run_config(tmp_path)
