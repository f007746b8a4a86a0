"""The command line, ``python -m minitx.translate {train,translate,evaluate,recipes}``, and the heatmap script."""
import importlib.util
import json

import pytest
from translate_kit import (REPO, copy_run, no_network, run_module, subset_dir, tiny_model,  # noqa: F401
                           tiny_run)

from minitx.translate import training
from minitx.translate.evaluation import translate_sentences
from minitx.translate.__main__ import main
from minitx.translate.recipes import DEFAULTS, RECIPES


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
    assert set(printed) == {"defaults", "cpu-quick", "seed004-small", "gpu-best"}


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
    calls = []
    monkeypatch.setattr(training, "train", lambda config, resume, progress: calls.append((config, resume, progress)))
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
    assert config["norm_first"] is DEFAULTS["norm_first"]       # nor in the recipe: the default


def test_resume_keeps_the_saved_settings_unless_given(capsys, captured_train, tmp_path):
    """--resume passes on only the options given: the default recipe's epochs, max_steps and
    time_limit must not replace those of a run trained with another recipe."""
    run_main(capsys, "train", "--resume", "--output-dir", tmp_path)
    run_main(capsys, "train", "--resume", "--output-dir", tmp_path, "--max-steps", 5000)
    assert [call[0] for call in captured_train] == [{"output_dir": str(tmp_path)},
                                                    {"output_dir": str(tmp_path), "max_steps": 5000}]
    assert all(call[1] for call in captured_train)
