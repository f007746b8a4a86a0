"""A walk through both command lines with bad values of every option and damaged versions of
every file they read: each ends with a one-line message naming the option or file (exit code 2),
or with Ctrl-C's line and 130; never a traceback, never a hang (each case runs under a time
limit), never a run started on a value no check looked at.

The cases run in this process (main(argv), as ``python -m`` calls it); the Ctrl-C cases raise
KeyboardInterrupt where a user's Ctrl-C would land (in training, in decoding), and one sends a
real SIGINT to a pretraining subprocess."""
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from translate_kit import REPO, _refuse_network, no_network, subset_dir, tiny_run  # noqa: F401

import minitx.encoder.__main__ as encoder_cli
import minitx.translate.__main__ as translate_cli
from minitx.data import multi30k
from minitx.encoder import finetuning, pretraining
from minitx.serialization import load, save
from minitx.translate import training
from minitx.translate.recipes import CHOICES, DEFAULTS

CASE_SECONDS = 60


@contextlib.contextmanager
def time_limit(seconds):
    def stop(signum, frame):
        raise TimeoutError(f"the command ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def invoke(main, argv, capsys):
    """(exit code, stdout, stderr) of ``main(argv)``, as the program would end."""
    capsys.readouterr()
    with time_limit(CASE_SECONDS):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def ends_with_a_message(code, err, *names, expected_code=2):
    """The ending every failure must have: the code, no traceback, and a message naming one of
    ``names`` (an option or a file)."""
    assert "Traceback" not in err, err
    assert code == expected_code, (code, err)
    assert any(str(name) in err for name in names), f"no mention of {names} in: {err}"


@pytest.fixture(scope="module")
def encoder_run(subset_dir, tmp_path_factory):
    """A pretraining run of the 'tiny' recipe, 4 steps, on the translation tests' subset."""
    run_dir = tmp_path_factory.mktemp("encoder-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multi30k, "_urlopen", _refuse_network)
        pretraining.pretrain(pretraining.build_config("tiny", data_dir=str(subset_dir), max_steps=4), run_dir,
                             progress=False)
    return run_dir


# ---------------------------------------------------------------- every option, bad values

def _bad_values(key, default):
    if key in CHOICES:
        return ["bogus"]
    if isinstance(default, bool):
        return ["maybe"]
    if key in ("src_lang", "tgt_lang"):
        return ["xx"]
    if key in ("data_dir", "output_dir", "device"):
        return []  # paths and devices: the file cases below
    if key == "betas":
        return [["0.9", "1.5"], ["nan", "0.9"]]
    return ["-1", "nan", "abc", "1e999"]


TRAIN_CASES = [(key, value) for key, default in DEFAULTS.items() for value in _bad_values(key, default)]


@pytest.mark.parametrize("key, value", TRAIN_CASES, ids=[f"{k}={v}" for k, v in TRAIN_CASES])
def test_train_refuses_each_bad_option_value_before_anything_runs(key, value, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINITX_DATA_DIR", str(tmp_path / "no-data"))  # a value let through would fail later
    values = value if isinstance(value, list) else [value]
    code, _, err = invoke(translate_cli.main, ["train", "--output-dir", tmp_path / "run", f"--{key.replace('_', '-')}",
                                               *values], capsys)
    ends_with_a_message(code, err, f"--{key.replace('_', '-')}", key)
    assert not (tmp_path / "run").exists()  # nothing written


ENCODER_CASES = [("pretrain", key, value) for key, default in pretraining.DEFAULTS.items()
                 for value in (["maybe"] if isinstance(default, bool) else ["-1", "nan", "abc"])
                 if isinstance(default, (int, float)) and key != "seed" or isinstance(default, bool)] + \
                [("finetune", key, value) for key, default in finetuning.DEFAULTS.items()
                 if isinstance(default, (int, float)) and key != "seed" for value in ("-1", "nan", "abc")]


@pytest.mark.parametrize("command, key, value", ENCODER_CASES, ids=[f"{c}-{k}={v}" for c, k, v in ENCODER_CASES])
def test_the_encoder_refuses_each_bad_option_value(command, key, value, tmp_path, capsys):
    where = ["--output-dir", tmp_path / "run"] if command == "pretrain" else ["--run", tmp_path / "run"]
    code, _, err = invoke(encoder_cli.main, [command, *where, f"--{key.replace('_', '-')}", value], capsys)
    ends_with_a_message(code, err, f"--{key.replace('_', '-')}")


@pytest.mark.parametrize("argv, names", [
    (["translate", "--run", "R", "--beam-size", "0"], ["--beam-size"]),
    (["evaluate", "--run", "R", "--length-penalty", "nan"], ["length_penalty"]),
    (["evaluate", "--run", "R", "--length-penalty", "-1"], ["length_penalty"]),
    (["translate", "--run", "R", "--device", "tpu"], ["tpu"]),
    (["translate", "--run", "R", "--checkpoint", "nowhere"], ["nowhere"]),
    (["evaluate", "--run", "R", "--split", "holiday_photos"], ["holiday_photos"]),
], ids=["beam-0", "penalty-nan", "penalty-negative", "device", "checkpoint", "split"])
def test_the_run_commands_refuse_bad_options(argv, names, tiny_run, capsys):
    argv = [tiny_run if a == "R" else a for a in argv]
    code, _, err = invoke(translate_cli.main, argv, capsys)
    ends_with_a_message(code, err, *names)


@pytest.mark.parametrize("command", ["translate", "evaluate"])
def test_the_run_commands_name_a_pretraining_run_as_one(command, encoder_run, capsys):
    code, _, err = invoke(translate_cli.main, [command, "--run", encoder_run], capsys)
    ends_with_a_message(code, err, encoder_run)
    assert f"{encoder_run} is a masked-LM pretraining run (python -m minitx.encoder), not a translation run" in err


def test_a_new_run_into_another_kind_of_run_says_so_and_advises_no_resume(encoder_run, tiny_run, capsys):
    """translate train into a pretraining run's directory, and pretrain into a translation run's:
    refused naming the other kind, without the --resume that the resume would refuse."""
    for main, argv, run in ((translate_cli.main, ["train", "--output-dir"], encoder_run),
                            (encoder_cli.main, ["pretrain", "--output-dir"], tiny_run)):
        code, _, err = invoke(main, [*argv, run, "--no-progress"], capsys)
        ends_with_a_message(code, err, run)
        assert "already holds a run of another kind" in err and "--resume" not in err, err


def test_an_overwrite_of_a_pretraining_run_leaves_none_of_its_files(encoder_run, subset_dir, tmp_path, capsys):
    """translate train --overwrite of a pretraining run deletes its tokenizer.json too, and the
    encoder's neighbours reads the new run as the translation run it is."""
    run = tmp_path / "run"
    shutil.copytree(encoder_run, run)
    (run / "notes.txt").write_text("mine")
    code, _, err = invoke(translate_cli.main, [
        "train", "--output-dir", run, "--overwrite", "--data-dir", subset_dir, "--vocab-size", 400, "--d-model", 16,
        "--num-heads", 2, "--encoder-layers", 1, "--decoder-layers", 1, "--d-ff", 32, "--max-tokens", 600,
        "--epochs", 1, "--max-steps", 1, "--bleu-every", 0, "--beam-size", 1, "--device", "cpu", "--no-progress"],
        capsys)
    assert code == 0, err
    assert not (run / "tokenizer.json").exists() and (run / "notes.txt").read_text() == "mine"
    code, out, err = invoke(encoder_cli.main, ["neighbours", "--run", run, "--words", "Hund", "-k", 2], capsys)
    assert code == 0 and "the translation model's src embeddings" in out, err


@pytest.mark.parametrize("argv, names", [
    (["neighbours", "--run", "E", "-k", "-3"], ["-k"]),
    (["neighbours", "--run", "E", "-k", "0"], ["-k"]),
    (["finetune", "--run", "E", "--labels", "0"], ["--labels"]),
    (["finetune", "--run", "E", "--output", "DIR"], ["--output"]),
    (["finetune", "--run", "T", "--steps", "2", "--warmup-steps", "0"], ["translation run"]),
    (["neighbours", "--run", "nowhere"], ["nowhere"]),
    (["pretrain", "--output-dir", "T", "--resume"], ["T"]),
    (["pretrain", "--output-dir", "NEW", "--device", "cuda", "--recipe", "tiny"], ["cuda"]),
    (["pretrain", "--output-dir", "NEW", "--norm-first", "yes!"], ["--norm-first"]),
], ids=["k-negative", "k-0", "labels-0", "output-dir", "finetune-translation-run", "no-run",
        "pretrain-on-translation-run", "cuda-without-gpu", "norm-first"])
def test_the_encoder_commands_end_with_a_message(argv, names, encoder_run, tiny_run, tmp_path, capsys, monkeypatch):
    from minitx import backend

    monkeypatch.setattr(backend, "cuda_available", lambda: False)
    places = {"E": encoder_run, "T": tiny_run, "DIR": tmp_path, "NEW": tmp_path / "new"}
    argv = [places.get(a, a) for a in argv]
    names = [str(places.get(n, n)) for n in names]
    code, _, err = invoke(encoder_cli.main, argv, capsys)
    ends_with_a_message(code, err, *names)


# ---------------------------------------------------------------- damaged files

def _damage(run, name, text):
    path = run / name
    if text is None:
        path.unlink()
    elif text == "DIRECTORY":
        path.unlink()
        path.mkdir()
    else:
        path.write_text(text)


def _config_without(key):
    def text(run):
        config = json.loads((run / "config.json").read_text())
        del config[key]
        return json.dumps(config)
    return text


def _config_with(**changes):
    def text(run):
        return json.dumps({**json.loads((run / "config.json").read_text()), **changes})
    return text


DAMAGED = {
    "config-array": ("config.json", "[]"),
    "config-empty": ("config.json", "{}"),
    "config-truncated": ("config.json", lambda run: (run / "config.json").read_text()[:-40]),
    "config-missing-key": ("config.json", _config_without("d_model")),
    "config-bad-value": ("config.json", _config_with(d_model=-5)),
    "config-missing-language": ("config.json", _config_without("src_lang")),
    "config-missing-beam-size": ("config.json", _config_without("beam_size")),
    "config-directory": ("config.json", "DIRECTORY"),
    "config-gone": ("config.json", None),
    "results-array": ("results.json", "[]"),
    "results-bad-checkpoint": ("results.json", '{"checkpoint": "../../elsewhere"}'),
    "tokenizer-truncated": ("tokenizer.src.json", lambda run: (run / "tokenizer.src.json").read_text()[:100]),
    "tokenizer-array": ("tokenizer.tgt.json", "[]"),
    "tokenizer-no-merges": ("tokenizer.src.json", lambda run: json.dumps(
        {k: v for k, v in json.loads((run / "tokenizer.src.json").read_text()).items() if k != "merges"})),
    "checkpoint-garbage": ("best.npz", "not a checkpoint"),
}


@pytest.fixture
def damaged_run(tiny_run, tmp_path, request):
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    name, text = DAMAGED[request.param]
    _damage(run, name, text(run) if callable(text) else text)
    return run, name


@pytest.mark.parametrize("damaged_run", sorted(DAMAGED), indirect=True)
@pytest.mark.parametrize("command", ["translate", "evaluate"])
def test_translate_and_evaluate_name_the_damaged_file(command, damaged_run, capsys, monkeypatch):
    run, name = damaged_run
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("Ein Hund.\n"))
    code, _, err = invoke(translate_cli.main, [command, "--run", run, "--checkpoint", "best"
                                               if name == "best.npz" else "final"], capsys)
    ends_with_a_message(code, err, name)


@pytest.mark.parametrize("history, pattern", [
    ("[]", "no epoch record"), ("{}", "JSON array"), ('[{"step": 1}]', "record 0"), ("[1, 2]", "record 0"),
    ('[{"step": "x", "train_loss": 1, "val_loss": 2}]', "record 0"), ("[{", "not valid JSON")])
def test_plot_names_a_malformed_history(history, pattern, tiny_run, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    (run / "history.json").write_text(history)
    code, _, err = invoke(translate_cli.main, ["plot", "--run", run], capsys)
    ends_with_a_message(code, err, "history.json")
    assert pattern in err


def test_translate_names_an_input_that_is_not_a_file(tiny_run, tmp_path, capsys):
    for where in (tmp_path, tmp_path / "missing.txt"):
        code, _, err = invoke(translate_cli.main, ["translate", "--run", tiny_run, "--input", where], capsys)
        ends_with_a_message(code, err, where)


def test_translate_names_an_input_that_is_not_utf8_and_its_line(tiny_run, tmp_path, capsys, monkeypatch):
    import io

    text = "Ein Hund.\nZwei Hunde.\nDrei M\xe4nner.\n".encode("latin-1")  # line 3: ä in Latin-1
    (tmp_path / "latin1.txt").write_bytes(text)
    code, _, err = invoke(translate_cli.main, ["translate", "--run", tiny_run, "--input", tmp_path / "latin1.txt"],
                          capsys)
    ends_with_a_message(code, err, f"{tmp_path / 'latin1.txt'} is not UTF-8 text: line 3 has the invalid byte 0xe4")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, _, err = invoke(translate_cli.main, ["translate", "--run", tiny_run], capsys)
    ends_with_a_message(code, err, "stdin is not UTF-8 text: line 3 has the invalid byte 0xe4")


@pytest.mark.parametrize("edit, name", [
    (lambda s: s["optimizer"]["state"][0].update(step=1.5), "optimizer"),
    (lambda s: s["progress"].update(batch=10 ** 6), "progress"),
    (lambda s: s.pop("progress"), "progress"),
])
def test_resume_names_a_damaged_state(edit, name, tiny_run, subset_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))  # the run's data
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    state = load(run / "last.npz")
    edit(state)
    save(state, run / "last.npz")
    code, _, err = invoke(translate_cli.main, ["train", "--output-dir", run, "--resume", "--no-progress",
                                               "--epochs", "4"], capsys)
    ends_with_a_message(code, err, "last.npz")
    assert name in err


def test_pretraining_names_a_damaged_config(encoder_run, tmp_path, capsys):
    for text in ("[]", "{", '{"vocab_size": 400}'):
        run = tmp_path / f"run{len(text)}"
        shutil.copytree(encoder_run, run)
        (run / "config.json").write_text(text)
        for argv in (["pretrain", "--output-dir", run, "--resume"], ["neighbours", "--run", run],
                     ["finetune", "--run", run, "--steps", "2", "--warmup-steps", "0"]):
            code, _, err = invoke(encoder_cli.main, argv, capsys)
            ends_with_a_message(code, err, "config.json")


# ---------------------------------------------------------------- Ctrl-C

def test_ctrl_c_in_training_says_where_the_run_is_and_how_to_continue(tmp_path, capsys, monkeypatch):
    from minitx.train import TrainingInterrupted

    def interrupted(config, **kwargs):  # a run that started (its config.json written), then saved and stopped
        (tmp_path / "my run").mkdir()
        (tmp_path / "my run" / "config.json").write_text("{}")
        raise TrainingInterrupted(f"interrupted: saved {config['output_dir']}/last.npz at step 7")

    monkeypatch.setattr(training, "train", interrupted)
    code, _, err = invoke(translate_cli.main, ["train", "--output-dir", tmp_path / "my run"], capsys)
    ends_with_a_message(code, err, "last.npz at step 7", expected_code=130)
    assert f"continue it with: python -m minitx.translate train --output-dir '{tmp_path / 'my run'}' --resume" in err


@pytest.mark.parametrize("command", ["translate", "evaluate"])
def test_ctrl_c_while_decoding_says_nothing_was_saved(command, tiny_run, capsys, monkeypatch):
    import minitx.translate.evaluation as evaluation

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluation, "translate_sentences", interrupted)
    monkeypatch.setattr(training, "translate_sentences", interrupted)  # evaluate's, through evaluate_split
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("Ein Hund.\n"))
    code, _, err = invoke(translate_cli.main, [command, "--run", tiny_run], capsys)
    ends_with_a_message(code, err, "interrupted; nothing was saved", expected_code=130)
    assert "continue it with" not in err


def test_ctrl_c_in_finetuning_ends_with_its_line(encoder_run, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(finetuning, "compare", interrupted)
    code, _, err = invoke(encoder_cli.main, ["finetune", "--run", encoder_run], capsys)
    ends_with_a_message(code, err, "python -m minitx.encoder finetune: interrupted", expected_code=130)


def test_a_real_sigint_stops_pretraining_with_its_checkpoint_and_the_resume_line(subset_dir, tmp_path):
    """SIGINT to `python -m minitx.encoder pretrain`: last.npz is saved, one line says where, the
    next says how to continue, exit code 130, no traceback."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "minitx.encoder", "pretrain", "--recipe", "tiny", "--output-dir", str(run),
               "--data-dir", str(subset_dir), "--max-steps", "100000", "--save-every", "1", "--no-progress"]
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True,
                               env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    deadline = time.time() + 120
    while not (run / "last.npz").exists() and time.time() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert f"interrupted: saved {run / 'last.npz'} at step" in err
    assert "continue it with: python -m minitx.encoder pretrain --output-dir" in err and "--resume" in err
    assert np.isfinite(load(run / "last.npz")["progress"]["step"])
