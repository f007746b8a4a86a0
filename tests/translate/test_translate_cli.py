"""The command line, ``python -m minitx.translate {train,translate,evaluate,recipes}``, and the heatmap script."""
import importlib.util
import json
import re

import pytest
from translate_kit import (REPO, copy_run, no_network, run_module, small_subset_dir, subset_dir,  # noqa: F401
                           tiny_model, tiny_run)

from minitx.data import ensure_files, read_pairs
from minitx.serialization import load, save
from minitx.translate import training
from minitx.translate.evaluation import translate_sentences
from minitx.translate.__main__ import main
from minitx.translate.recipes import DEFAULTS, HELP, RECIPES, build_config


def flag(key):
    return "--" + key.replace("_", "-")


def run_main(capsys, *argv):
    """(exit code, stdout, stderr) of the command line run in this process."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:  # argparse: --help, or a bad option
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ evaluate and translate (subprocesses)


def test_evaluate_prints_sacrebleu_scores_with_signatures(tiny_run, subset_dir, tmp_path):
    done = run_module(["evaluate", "--run", tiny_run, "--split", "test_2016_flickr", "--beam-size", 1,
                       "--device", "cpu", "--no-progress"], subset_dir, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("test_2016_flickr de-en (best, beam 1): BLEU ")
    assert lines[1].startswith("sacreBLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert lines[2].startswith("lowercased BLEU ") and "nrefs:1|case:lc|" in lines[2]
    assert lines[3].startswith("lowercased-token BLEU ") and "tok:none|smooth:none" in lines[3]
    # the same greedy translations as the run's own final evaluation
    results = json.loads((tiny_run / "results.json").read_text())
    assert f"BLEU {results['bleu']:.2f}" in lines[0] and f"BLEU {results['bleu_lowercase']:.2f}" in lines[2]


def test_translate_reads_stdin_line_by_line(tiny_run, tiny_model, subset_dir, tmp_path):
    lines = ["Ein Hund rennt.", "", "Zwei Männer spielen Fußball.", "   ", "Eine Frau liest."]
    done = run_module(["translate", "--run", tiny_run, "--beam-size", 1, "--device", "cpu"], subset_dir, tmp_path,
                      stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    outputs = done.stdout.split("\n")
    assert outputs[-1] == "" and len(outputs) - 1 == len(lines)  # one output line per input line
    _, model, src_tok, tgt_tok = tiny_model
    expected, _ = translate_sentences(model, src_tok, tgt_tok, lines)
    assert outputs[:-1] == expected and expected[1] == expected[3] == "" and expected[0]
    assert "translate: 2 empty line(s) were left empty" in done.stderr


def test_corrupt_checkpoint_is_named_without_a_traceback(tiny_run, subset_dir, tmp_path):
    run_dir = copy_run(tiny_run, tmp_path / "corrupt")
    (run_dir / "best.npz").write_bytes(b"PK\x03\x04 these bytes are not a checkpoint" * 10)
    done = run_module(["translate", "--run", run_dir, "--device", "cpu"], subset_dir, tmp_path, stdin="Ein Hund.\n")
    assert done.returncode == 2 and done.stdout == ""
    assert "error:" in done.stderr and str(run_dir / "best.npz") in done.stderr
    assert "not a minitx checkpoint, or it is truncated or corrupt" in done.stderr
    assert "Traceback" not in done.stderr


def test_plot_attention_draws_or_asks_for_matplotlib(tiny_run, subset_dir, tmp_path):
    out = tmp_path / "heads.png"
    done = run_module([REPO / "examples" / "plot_attention.py", "--run", tiny_run, "--out", out,
                       "Ein Mann fährt Fahrrad."], subset_dir, tmp_path, module=None)
    if importlib.util.find_spec("matplotlib") is None:
        assert done.returncode == 1
        assert 'plot_attention needs matplotlib: pip install "minitx[plot]"' in done.stderr
        assert not out.exists()
    else:
        assert done.returncode == 0, done.stderr
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"saved {out}" in done.stdout


# ------------------------------------------------------------------ errors, in this process


@pytest.mark.parametrize("argv, message", [
    (["train", "--src-lang", "xx"], "unknown Multi30k language 'xx'; valid languages: en, de, fr, cs"),
    (["train", "--tgt-lang", "de"], "source and target language are both 'de'"),
    (["train", "--resume"], "has no config.json, so it is not a minitx translation run"),
    (["translate", "--run", "."], "is not a minitx translation run (no config.json)"),
])
def test_command_line_errors_are_one_clear_line(capsys, tmp_path, argv, message):
    if argv[0] == "train":  # each fails before any data is read
        argv = argv + ["--output-dir", tmp_path / "run", "--data-dir", tmp_path, "--no-progress"]
    else:
        argv = [a if a != "." else tmp_path for a in argv]
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert err.startswith(f"python -m minitx.translate {argv[0]}: error: ") and message in err


def test_unknown_split_lists_the_valid_ones(capsys, tiny_run):
    code, _, err = run_main(capsys, "evaluate", "--run", tiny_run, "--split", "test_2099", "--device", "cpu")
    assert code == 2
    assert "unknown Multi30k split 'test_2099'; valid splits: train, val, test_2016_flickr" in err


def test_unknown_recipe_lists_the_recipes(capsys):
    code, _, err = run_main(capsys, "train", "--recipe", "gpu-worst")
    assert code == 2 and "invalid choice: 'gpu-worst'" in err
    for name in RECIPES:
        assert name in err


@pytest.mark.parametrize("change, key", [
    ({"d_model": 48}, "src_embed.weight"),            # a shape differs
    ({"encoder_layers": 2}, "encoder_layers.1."),    # keys are missing
])
def test_checkpoint_of_another_architecture_names_a_key(tiny_run, tmp_path, change, key):
    run_dir = copy_run(tiny_run, tmp_path / "other", **change)
    with pytest.raises(ValueError) as info:
        training.load_run(run_dir, device="cpu")
    assert str(run_dir / "best.npz") in str(info.value) and "does not match this model" in str(info.value)
    assert key in str(info.value)


# ------------------------------------------------------------------ options


def test_recipes_command_prints_the_recipes_as_json(capsys):
    code, out, _ = run_main(capsys, "recipes")
    assert code == 0
    printed = json.loads(out)
    assert printed == json.loads(json.dumps({"defaults": DEFAULTS, **RECIPES}))  # tuples print as lists
    assert set(printed) == {"defaults", "cpu-quick", "cpu-long", "seed004-small", "base", "gpu-best", "multi30k-tiny",
                            "multi30k-tiny-published"}


@pytest.mark.parametrize("module, argv", [("minitx.translate", ["recipes"]),
                                          ("minitx.encoder", ["neighbours", "--run", "RUN", "--words", "Hund"])])
def test_a_reader_that_closed_stdout_ends_the_command_quietly(tiny_run, module, argv):
    """``recipes | head -2`` printed 'error: [Errno 32] Broken pipe' and exited 2: a closed stdout
    now ends the command as it ends Unix tools, silently with 141 (128 + SIGPIPE). The read end is
    closed before the command starts, so every write fails, however short the output."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", module, *[str(tiny_run) if a == "RUN" else a for a in argv]],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_the_translating_bar_is_cleared_on_ctrl_c_and_not_drawn_into_a_log(capsys, monkeypatch):
    """The Ctrl-C message came glued to the bar's line: the bar is closed (its line cleared) on
    the way out; and where stderr is no terminal there is no bar at all."""
    import sys

    def interrupted(*args, progress, **kwargs):
        progress.update(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "translate_sentences", interrupted)
    pairs = [("Ein Hund.", "A dog.")] * 3
    with pytest.raises(KeyboardInterrupt):
        training.evaluate_split(None, None, None, pairs, beam_size=1, length_penalty=0.0)
    assert capsys.readouterr().err == ""  # (capsys's stderr is no terminal)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with pytest.raises(KeyboardInterrupt):
        training.evaluate_split(None, None, None, pairs, beam_size=1, length_penalty=0.0)
    err = capsys.readouterr().err
    assert "translating" in err and err.endswith("\r")  # cleared: what follows starts at the line's start


def test_train_help_lists_every_configuration_key(capsys):
    code, out, _ = run_main(capsys, "train", "--help")
    assert code == 0
    for key in DEFAULTS:
        assert flag(key) in out, key
    for option in ("--d-model", "--label-smoothing", "--max-tokens", "--recipe", "--resume", "--no-progress"):
        assert option in out


@pytest.fixture
def captured_train(monkeypatch):
    """Replace training by a recorder of the configuration the command line builds."""
    class Calls(list):
        overwrite = []  # the overwrite argument of each call

    calls = Calls()

    def record(config, resume, progress, overwrite=False):
        calls.append((config, resume, progress))
        calls.overwrite.append(overwrite)

    calls.overwrite = []
    monkeypatch.setattr(training, "train", record)
    return calls


def test_every_option_reaches_the_configuration(capsys, captured_train):
    given = {"d_model": 64, "lr": 2e-4, "label_smoothing": 0.0, "max_tokens": 123, "joint_vocab": False,
             "share_embeddings": False, "max_steps": 7, "time_limit": 1.5, "attention_dropout": 0.05,
             "bleu_val_sentences": 50, "betas": (0.8, 0.9), "data_dir": "/data/m30k", "preset": "base",
             "tokenizer": "word", "epochs": 2}
    argv = []
    for key, value in given.items():
        argv += [flag(key), *(value if isinstance(value, tuple) else [value])]
    code, _, _ = run_main(capsys, "train", "--recipe", "gpu-best", "--no-progress", *argv)
    assert code == 0
    (config, resume, progress), = captured_train
    assert not resume and not progress
    for key, value in given.items():
        assert config[key] == value and type(config[key]) is type(value), key
    assert config["dropout"] == RECIPES["gpu-best"]["dropout"]  # not given: from the recipe
    assert config["norm_first"] is RECIPES["gpu-best"]["norm_first"] is not DEFAULTS["norm_first"]
    assert config["activation"] == DEFAULTS["activation"]      # nor in the recipe: the default


@pytest.mark.parametrize("word, value", [("true", True), ("off", False), ("auto", None), ("AUTO", None)])
def test_static_shapes_and_cuda_graphs_read_true_false_or_auto(capsys, captured_train, word, value):
    code, _, _ = run_main(capsys, "train", "--no-progress", "--static-shapes", word, "--cuda-graphs", word)
    assert code == 0
    (config, _, _), = captured_train
    assert config["static_shapes"] is value and config["cuda_graphs"] is value


@pytest.mark.parametrize("word, value", [("bf16", "bf16"), ("auto", None)])
def test_precision_reads_a_name_or_auto(capsys, captured_train, word, value):
    code, _, _ = run_main(capsys, "train", "--no-progress", "--precision", word)
    assert code == 0
    (config, _, _), = captured_train
    assert config["precision"] == value


def test_a_bad_precision_names_the_choices(capsys, captured_train):
    code, _, err = run_main(capsys, "train", "--no-progress", "--precision", "fast")
    assert code == 2 and "expected one of fp32, tf32, bf16, fp16 or auto, got 'fast'" in err and not captured_train


def test_a_bad_cuda_graphs_value_names_the_three_choices(capsys, captured_train):
    code, _, err = run_main(capsys, "train", "--no-progress", "--cuda-graphs", "maybe")
    assert code == 2 and "expected true, false or auto, got 'maybe'" in err and not captured_train


def test_resume_keeps_the_saved_settings_unless_given(capsys, captured_train, tmp_path):
    """--resume passes on only the options given: the default recipe's epochs, max_steps and
    time_limit must not replace those of a run trained with another recipe."""
    run_main(capsys, "train", "--resume", "--output-dir", tmp_path)
    run_main(capsys, "train", "--resume", "--output-dir", tmp_path, "--max-steps", 5000)
    assert [call[0] for call in captured_train] == [{"output_dir": str(tmp_path)},
                                                    {"output_dir": str(tmp_path), "max_steps": 5000}]
    assert all(call[1] for call in captured_train)


def test_train_help_explains_every_option_with_its_defaults(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside the texts compared below
    code, out, _ = run_main(capsys, "train", "--help")
    assert code == 0
    text = " ".join(out.split())
    for key in DEFAULTS:
        assert HELP[key] and " ".join(HELP[key].split()) in text, key
    assert "stop after this many MINUTES of training" in text
    assert "never set by a recipe (recipes are steps or epochs) [default none]" in text  # time_limit
    assert ("[default none; recipes: cpu-quick 850, cpu-long 1650, gpu-best 4000, multi30k-tiny 8000, "
            "multi30k-tiny-published 8000]") in text
    assert ("[default 256; recipes: base 512, gpu-best 512, multi30k-tiny 128, multi30k-tiny-published 128]"
            in text)  # d_model, via a preset too
    assert "[default 4; recipes: seed004-small 8, base 8, gpu-best 8]" in text  # num_heads
    assert "a run records its choice) [default auto]" in text  # static_shapes
    assert "--overwrite" in text and "--schedule {inverse_sqrt,noam,cosine,plateau,constant}" in text


def test_translate_and_evaluate_help_texts(capsys):
    for command in ("translate", "evaluate"):
        code, out, _ = run_main(capsys, command, "--help")
        assert code == 0 and "default: the run's beam_size" in " ".join(out.split())


# ------------------------------------------------------------------ run directories and resume


def test_overwrite_is_passed_on_and_excludes_resume(capsys, tiny_run, tmp_path, captured_train):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--resume", "--overwrite", "--no-progress")
    assert code == 2 and "choose one" in err
    code, _, _ = run_main(capsys, "train", "--output-dir", run_dir, "--overwrite", "--no-progress")
    assert code == 0 and captured_train.overwrite == [True]


def test_new_run_into_an_old_run_directory_is_one_clear_error(capsys, tiny_run, tmp_path):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    code, out, err = run_main(capsys, "train", "--output-dir", run_dir, "--no-progress", "--vocab-size", 3000)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "already holds a training run" in err and "--resume" in err and "--overwrite" in err
    assert json.loads((run_dir / "config.json").read_text())["vocab_size"] == 1000  # untouched


def test_resume_refuses_options_that_change_the_run_naming_both_values(capsys, tiny_run, tmp_path):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    before = (run_dir / "config.json").read_text()
    code, _, err = run_main(capsys, "train", "--resume", "--output-dir", run_dir, "--no-progress", "--dropout", 0.5,
                            "--label-smoothing", 0.2, "--max-steps", 500, "--recipe", "cpu-quick",
                            "--share-embeddings", "false")
    assert code == 2 and len(err.splitlines()) == 1
    for part in ("dropout 0.1 (saved) != 0.5 (given)", "label_smoothing 0.1 (saved) != 0.2 (given)",
                 "recipe none (saved) != 'cpu-quick' (given)", "share_embeddings true (saved) != false (given)"):
        assert part in err
    assert "max_steps" not in err.split("Only")[0]
    assert (run_dir / "config.json").read_text() == before


def test_preset_recipe_with_model_overrides_builds_them(capsys, captured_train):
    code, _, _ = run_main(capsys, "train", "--recipe", "seed004-small", "--dropout", 0.3, "--d-model", 512)
    assert code == 0
    (config, _, _), = captured_train
    model = training.build_model(config, 50, 60, 0, "cpu")
    assert model.config["d_model"] == config["d_model"] == 512
    assert model.config["dropout"] == config["dropout"] == 0.3
    assert model.config["num_heads"] == config["num_heads"] == 8       # the preset's, recorded as built
    assert model.config["positional"] == config["positional"] == "learned"


# ------------------------------------------------------------------ bad values: one line, exit 2, nothing written


@pytest.mark.parametrize("argv, message", [
    (["train", "--beam-size", 0], "argument --beam-size: must be >= 1, got 0"),
    (["train", "--schedule", "linear"], "argument --schedule: invalid choice: 'linear'"),
    (["train", "--tokenizer", "chars"], "argument --tokenizer: invalid choice: 'chars'"),
    (["train", "--preset", "huge"], "argument --preset: invalid choice: 'huge'"),
    (["translate", "--run", "x", "--beam-size", -1], "argument --beam-size: must be >= 1, got -1"),
    (["evaluate", "--run", "x", "--beam-size", 0], "argument --beam-size: must be >= 1, got 0"),
])
def test_options_outside_their_values_are_refused_by_the_parser(capsys, argv, message):
    code, _, err = run_main(capsys, *argv)
    assert code == 2 and message in err


@pytest.mark.parametrize("argv, message", [
    (["--lr", 0], "lr must be a number > 0"),
    (["--save-every", -1], "save_every must be an integer >= 0, got -1"),
    (["--vocab-size", -5], "vocab_size must be a positive integer"),
    (["--joint-vocab", "false", "--share-embeddings", "true"], "share_embeddings needs one joint vocabulary"),
    (["--d-model", 30, "--num-heads", 4], "num_heads 4 does not divide d_model 30"),
])
def test_invalid_configuration_writes_nothing(capsys, tmp_path, argv, message):
    run_dir = tmp_path / "run"
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--no-progress", *argv)
    assert code == 2 and len(err.splitlines()) == 1 and message in err
    assert err.startswith("python -m minitx.translate train: error: invalid configuration")
    assert not run_dir.exists()


def test_missing_gpu_is_one_line_and_writes_nothing(capsys, tmp_path, monkeypatch):
    from minitx import backend

    monkeypatch.setattr(backend, "cuda_available", lambda: False)
    run_dir = tmp_path / "run"
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--no-progress", "--device", "cuda")
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "device 'cuda' requested but CuPy with a GPU is not available" in err
    assert not run_dir.exists()


def test_diverging_training_is_one_line(capsys, tmp_path, monkeypatch):
    def diverge(config, resume, progress, overwrite=False):
        raise FloatingPointError("training loss became nan at step 3; lower the learning rate or raise warmup_steps")

    monkeypatch.setattr(training, "train", diverge)
    code, _, err = run_main(capsys, "train", "--output-dir", tmp_path / "run", "--no-progress")
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("python -m minitx.translate train: error: training loss became nan at step 3")


# ------------------------------------------------------------------ translate and evaluate: the run's decoding, counts


def test_translate_counts_cut_sources_and_capped_outputs(capsys, tiny_run, tmp_path, recwarn):
    """A model that never ends a sentence (one output bias made huge): each output reaches the
    length cap; one source is also longer than the model's positions. Both counts are one
    stderr line each, like the empty-line count, and no warning is raised."""
    run_dir = copy_run(tiny_run, tmp_path / "run")
    state = load(run_dir / "best.npz")
    state["model"]["output_bias"][10] = 100.0
    save(state, run_dir / "best.npz")
    source = tmp_path / "input.de"
    source.write_text("Ein Hund.\n" + " ".join(["Ein Hund rennt über die Wiese."] * 30) + "\n\n", encoding="utf-8")
    code, out, err = run_main(capsys, "translate", "--run", run_dir, "--input", source, "--beam-size", 1,
                              "--device", "cpu")
    assert code == 0 and len(out.splitlines()) == 3
    assert err.splitlines() == [
        "translate: 1 empty line(s) were left empty",
        "translate: 1 sentence(s) longer than the model's max_len 64 tokens were cut to fit",
        "translate: 2 translation(s) reached the length cap (source length + 50, at most 63 tokens) without "
        "ending and were cut there"]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("ends", ["\n", "\r\n"])
def test_translate_reads_its_input_lines_as_the_corpus_reader(ends, tmp_path, monkeypatch):
    """Split on "\n" only, as read_lines splits Multi30k: a lone "\r" or another Unicode line break
    inside a sentence keeps it one line (universal newlines made two lines, and two translations,
    of one), from a file, from stdin's bytes and from a text stream a caller set."""
    import io
    import sys

    from minitx.translate.__main__ import _read_input

    text = ends.join(["Ein Hund\rläuft.", "Zwei\u2028Katzen.", "", "Ende"]) + ends
    expected = ["Ein Hund\rläuft.", "Zwei\u2028Katzen.", "", "Ende"]
    source = tmp_path / "input.de"
    source.write_bytes(text.encode("utf-8"))
    assert _read_input(str(source)) == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    assert _read_input("-") == expected
    monkeypatch.setattr(sys, "stdin", io.StringIO(text, newline=""))  # (no .buffer: text already)
    assert _read_input("-") == expected


def test_translate_reads_a_byte_order_mark_as_no_part_of_line_one(capsys, tiny_run, tmp_path):
    """A file saved with a UTF-8 byte-order mark (Notepad, PowerShell's Out-File): line 1 is
    read, and translated, as the same sentence without it."""
    from minitx.translate.__main__ import _read_input

    outputs = []
    for name, start in (("plain.de", b""), ("bom.de", b"\xef\xbb\xbf")):
        source = tmp_path / name
        source.write_bytes(start + "Ein Hund.\nEin Hund.\n".encode("utf-8"))
        assert _read_input(str(source)) == ["Ein Hund.", "Ein Hund."]
        code, out, _ = run_main(capsys, "translate", "--run", tiny_run, "--input", source, "--beam-size", 1,
                                "--device", "cpu")
        assert code == 0
        outputs.append(out.splitlines())
    assert outputs[1] == outputs[0] and outputs[1][0] == outputs[1][1]


def test_translate_and_evaluate_decode_as_the_run_does(capsys, tiny_run, subset_dir, tmp_path, monkeypatch):
    from minitx.translate import evaluation

    run_dir = copy_run(tiny_run, tmp_path / "run", beam_size=3, length_penalty=1.5, beam_search="fairseq")
    calls = []

    def fake_translate(model, src_tok, tgt_tok, lines, beam_size, length_penalty, search, **kwargs):
        calls.append((beam_size, length_penalty, search))
        return ["x"] * len(lines), {"empty": 0, "truncated": 0, "capped": 0}

    def fake_evaluate(model, src_tok, tgt_tok, pairs, beam_size, length_penalty, progress=True, lang=None,
                      text=None, search=None, source_eos=False):
        calls.append((beam_size, length_penalty, search))
        return {"bleu": 1.0, "bleu_lowercase": 2.0, "bleu_tokens_lowercase": 3.0, "signature": "s",
                "signature_lowercase": "t", "signature_tokens": "u", "empty": 0, "truncated": 0, "capped": 0}

    monkeypatch.setattr(evaluation, "translate_sentences", fake_translate)
    monkeypatch.setattr(training, "evaluate_split", fake_evaluate)
    source = tmp_path / "input.de"
    source.write_text("Ein Hund.\n", encoding="utf-8")
    common = ["--run", run_dir, "--device", "cpu"]
    assert run_main(capsys, "translate", *common, "--input", source)[0] == 0
    assert run_main(capsys, "translate", *common, "--input", source, "--beam-size", 2, "--length-penalty", 0,
                    "--beam-search", "gnmt")[0] == 0
    code, out, _ = run_main(capsys, "evaluate", *common, "--data-dir", subset_dir, "--no-progress")
    assert code == 0 and "(best, beam 3, fairseq search): BLEU 1.00" in out
    assert calls == [(3, 1.5, "fairseq"), (2, 0.0, "gnmt"), (3, 1.5, "fairseq")]


@pytest.mark.parametrize("command, option, value, message", [
    ("train", "--seed", -1, "seed must be an integer >= 0, got -1"),
    ("train", "--max-len", 0, "max_len must be a positive integer, got 0\n"),   # (once: not 'at least 2' too)
    ("train", "--max-len", 1, "max_len must be at least 2 (<bos> and one token), got 1"),
    ("train", "--length-penalty", "nan", "length_penalty must be a number >= 0, got nan"),
    ("translate", "--length-penalty", "nan", "length_penalty must be a number >= 0, got nan"),
    ("evaluate", "--length-penalty", "inf", "length_penalty must be a number >= 0, got inf"),
    ("evaluate", "--device", "tpu", "device must be 'auto', 'cpu' or 'cuda', got 'tpu'"),
])
def test_every_command_validates_options_alike_before_anything_is_written(capsys, tiny_run, tmp_path, command,
                                                                          option, value, message):
    """One validation (validate_config) for all commands: a bad value is refused with the same
    message by train (no run directory is made) and by translate/evaluate (no model is loaded)."""
    where = ["--output-dir", tmp_path / "run", "--data-dir", tmp_path] if command == "train" else ["--run", tiny_run]
    code, _, err = run_main(capsys, command, *where, option, value, "--no-progress" if command != "translate" else
                            "--device=cpu")
    assert code == 2 and f"error: invalid configuration: {message}" in err
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ Ctrl-C


def test_ctrl_c_saves_the_run_and_says_how_to_resume(capsys, small_subset_dir, tmp_path, monkeypatch):
    """A SIGINT during the first step: the step ends, last.npz is saved, the command exits 130
    without a traceback and prints the command that continues the run, which finishes it."""
    import signal

    import minitx.optim

    clip = minitx.optim.clip_grad_norm_

    def press_ctrl_c_then_clip(*args, **kwargs):
        monkeypatch.setattr(minitx.optim, "clip_grad_norm_", clip)  # once
        signal.raise_signal(signal.SIGINT)
        return clip(*args, **kwargs)

    monkeypatch.setattr(minitx.optim, "clip_grad_norm_", press_ctrl_c_then_clip)
    run_dir = tmp_path / "run dir"
    argv = ["train", "--output-dir", run_dir, "--data-dir", small_subset_dir, "--vocab-size", 400, "--d-model", 32,
            "--num-heads", 2, "--encoder-layers", 1, "--decoder-layers", 1, "--d-ff", 64, "--max-len", 64,
            "--max-tokens", 600, "--max-steps", 2, "--beam-size", 1, "--device", "cpu", "--no-progress"]
    code, _, err = run_main(capsys, *argv)
    assert code == 130 and "Traceback" not in err
    assert f"interrupted: saved {run_dir / 'last.npz'} at step 1" in err
    assert f"continue it with: python -m minitx.translate train --output-dir '{run_dir}' --resume" in err
    assert load(run_dir / "last.npz")["progress"]["step"] == 1
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--resume", "--no-progress")
    assert code == 0, err
    assert json.loads((run_dir / "results.json").read_text())["steps"] == 2


def small_train_argv(run_dir, data_dir):
    return ["train", "--output-dir", run_dir, "--data-dir", data_dir, "--vocab-size", 400, "--d-model", 32,
            "--num-heads", 2, "--encoder-layers", 1, "--decoder-layers", 1, "--d-ff", 64, "--max-len", 64,
            "--max-tokens", 600, "--max-steps", 1, "--beam-size", 1, "--device", "cpu", "--no-progress"]


@pytest.mark.parametrize("earlier", [False, True], ids=["empty", "over-an-earlier-run"])
def test_ctrl_c_while_a_run_starts_leaves_a_directory_a_new_run_takes(capsys, small_subset_dir, tmp_path,
                                                                       monkeypatch, earlier):
    """Ctrl-C between the tokenizers and config.json: no resume command is printed (there is no
    run of this command to continue), a resume says to start a new run, and a new run starts."""
    import minitx.train.lifecycle as lifecycle

    run_dir = tmp_path / "run"
    argv = small_train_argv(run_dir, small_subset_dir)
    if earlier:  # --overwrite of a finished run, stopped before it deleted anything
        assert run_main(capsys, *argv)[0] == 0
        argv.append("--overwrite")

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    # with an earlier run: before its files are deleted; else: once the tokenizers are written
    name = "start_new_run" if earlier else "write_json"
    original = getattr(lifecycle, name)
    monkeypatch.setattr(lifecycle, name, ctrl_c)
    code, _, err = run_main(capsys, *argv)
    assert code == 130 and "nothing was saved" in err and "continue it with" not in err
    monkeypatch.setattr(lifecycle, name, original)
    if earlier:
        return
    assert sorted(p.name for p in run_dir.iterdir()) == ["tokenizer.src.json", "tokenizer.tgt.json"]
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--resume", "--no-progress")
    assert code == 2 and "has no config.json, so it is not a minitx translation run" in err and "start a new run" in err
    code, _, err = run_main(capsys, *argv)
    assert code == 0, err
    assert "the files of a start interrupted before it wrote config.json: a new run starts there" in err


def test_ctrl_c_after_training_says_the_training_is_saved_and_a_resume_finishes(capsys, small_subset_dir, tmp_path,
                                                                                monkeypatch):
    """Ctrl-C while the final model is chosen and tested: last.npz holds every step, so the line
    says so (not 'nothing was saved') and gives the resume, which finishes the run."""
    import minitx.translate.training as training

    run_dir = tmp_path / "run"
    argv = small_train_argv(run_dir, small_subset_dir)

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    original = training.finish
    monkeypatch.setattr(training, "finish", ctrl_c)
    code, _, err = run_main(capsys, *argv)
    assert code == 130, err
    assert f"the training is saved ({run_dir / 'last.npz'} at step 1)" in err and "nothing was saved" not in err
    assert "continue it with:" in err and "--resume" in err
    monkeypatch.setattr(training, "finish", original)
    code, _, err = run_main(capsys, "train", "--output-dir", run_dir, "--resume", "--no-progress")
    assert code == 0, err
    assert (run_dir / "results.json").exists()


# ------------------------------------------------------------------ plot


def test_plot_draws_the_runs_curves_into_a_png(capsys, tiny_run, tmp_path):
    pytest.importorskip("matplotlib")
    output = tmp_path / "figures" / "runs" / "curves.png"  # (a directory not there yet is made: a bare
    code, out, err = run_main(capsys, "plot", "--run", tiny_run, "--output", output)  # "[Errno 2]" before)
    assert code == 0, err
    assert out.strip() == f"saved {output}" and output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plotted_learning_rate_is_the_schedules(tiny_run):
    """The tiny run's inverse-square-root schedule, written out: a linear warm-up to lr over
    warmup_steps, then lr * sqrt(warmup_steps / step)."""
    from minitx.translate.plotting import learning_rates

    config = json.loads((tiny_run / "config.json").read_text())
    assert config["schedule"] == "inverse_sqrt"
    peak, warmup = config["lr"], config["warmup_steps"]
    expected = [peak * min(t / warmup, (warmup / t) ** 0.5) for t in range(1, 101)]
    assert learning_rates(config, 100) == pytest.approx(expected, rel=1e-12)
    # and the optimizer of the finished run holds the rate of the step after its last
    last = load(tiny_run / "last.npz")
    rate = last["optimizer"]["param_groups"][0]["lr"]
    assert learning_rates(config, last["progress"]["step"] + 1)[-1] == pytest.approx(rate, rel=1e-12)


def test_the_plotted_plateau_learning_rate_replays_the_validation_losses():
    """'plateau' halves lr after two complete epochs in a row without a lower validation loss;
    an incomplete epoch's loss is not counted (as in the trainer)."""
    from minitx.translate.plotting import learning_rates

    config = build_config("base")
    history = [{"step": 10 * e, "complete": e < 5, "val_loss": loss} for e, loss in
               enumerate([3.0, 2.5, 2.6, 2.7, 2.8], start=1)]  # counted, the 5th would halve lr again
    lr = config["lr"]
    assert learning_rates(config, 55, history) == [lr] * 40 + [lr / 2] * 15


def test_plot_without_matplotlib_says_what_to_install(capsys, tiny_run, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    code, _, err = run_main(capsys, "plot", "--run", tiny_run)
    assert code == 2 and 'plot needs matplotlib: pip install "minitx[plot]"' in err


def test_evaluate_writes_its_scores_and_translations_where_output_says(capsys, tiny_run, subset_dir, tmp_path):
    """--output: the printed scores, the decoding settings and the translations as JSON (it printed only)."""
    path = tmp_path / "scores" / "beam1.json"
    code, out, err = run_main(capsys, "evaluate", "--run", tiny_run, "--data-dir", subset_dir, "--beam-size", "1",
                              "--no-progress", "--output", path)
    assert code == 0 and f"evaluate: wrote {path}" in err
    record = json.loads(path.read_text(encoding="utf-8"))
    assert f"BLEU {record['bleu']:.2f}" in out.splitlines()[0] and record["signature"] in out
    assert {k: record[k] for k in ("split", "direction", "beam_size", "beam_search")} == \
        {"split": "test_2016_flickr", "direction": "de-en", "beam_size": 1, "beam_search": "gnmt"}
    assert record["checkpoint"].endswith("best.npz")
    results = json.loads((tiny_run / "results.json").read_text())  # the run's own greedy evaluation
    assert record["bleu"] == results["bleu"] and record["translations"][0] == results["example"]["translation"]
    assert len(record["translations"]) == len(read_pairs("test_2016_flickr", ensure_files(
        "test_2016_flickr", ("de", "en"), subset_dir, progress=False)))


def test_evaluate_also_prints_the_published_metric(capsys, tiny_run, subset_dir):
    """With sacremoses installed, evaluate prints the published tables' BLEU (lowercased,
    Moses-tokenized) with its signature; without it, how to get it."""
    from minitx.translate.evaluation import MOSES_HINT, moses_available

    code, out, err = run_main(capsys, "evaluate", "--run", tiny_run, "--data-dir", subset_dir, "--beam-size", "1",
                              "--no-progress")
    assert code == 0
    assert f"evaluate: data read from {subset_dir}" in err  # where it scored (a run's own data_dir, or a search's)
    if moses_available():
        assert re.search(r"lowercased, Moses-tokenized BLEU \d+\.\d\d, as the published Multi30k tables measure it "
                         r"\(.*tok:none.*MosesTokenizer\(lang='en'\)\)", out)
    else:
        assert MOSES_HINT in out
