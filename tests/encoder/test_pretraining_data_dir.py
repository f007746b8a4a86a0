"""Where a pretraining run reads its data, as a translation run does (minitx.train's
resolve_data_dir, runs_data_dir and check_data): a relative --data-dir is recorded absolute, a
run's data_dir no longer there is named with what to do, and other data is refused; older
config.json files still resume and fine-tune."""
import gzip
import json
import shutil

import pytest

from minitx.data.multi30k import read_lines
from minitx.encoder import __main__ as cli
from minitx.encoder import finetuning, pretraining

FINETUNE = ["--labels", "4", "--steps", "1", "--warmup-steps", "0", "--batch-size", "4"]


def _moved_message(data, cwd):
    return (f"the run's data directory {data} (data_dir in its config.json) is not there (from {cwd}); "
            "give --data-dir where its Multi30k files are now")


def _change_last_sentence(path):
    lines = read_lines(path)[:-1] + ["A different last sentence."]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))


@pytest.fixture
def relative_run(data_dir, tmp_path, monkeypatch):
    """A two-step run started in tmp_path with --data-dir data (a relative path); then the
    working directory is the run's own, so 'data' no longer names the data from there."""
    shutil.copytree(data_dir, tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["pretrain", "--recipe", "tiny", "--output-dir", "run", "--data-dir", "data", "--max-steps", "2",
                     "--no-progress"]) == 0
    monkeypatch.chdir(tmp_path / "run")
    return tmp_path / "run", tmp_path / "data"


def test_a_relative_data_dir_is_recorded_whole_and_found_from_another_directory(relative_run, capsys):
    run, data = relative_run
    assert json.loads((run / "config.json").read_text())["data_dir"] == str(data)
    capsys.readouterr()
    assert cli.main(["pretrain", "--output-dir", str(run), "--resume", "--no-progress"]) == 0
    assert f"data: read from {data} (the run's data_dir)" in capsys.readouterr().err
    assert json.loads((run / "results.json").read_text())["steps"] == 2  # (done: a resume trains no step more)
    assert cli.main(["finetune", "--run", str(run), *FINETUNE]) == 0


def test_a_moved_data_dir_is_named_with_what_to_do(relative_run, tmp_path, capsys):
    """A resume, and fine-tuning, given no --data-dir read the run's own data_dir: gone, it is an
    error that says to give --data-dir (not the given-directory error, which advised leaving out
    the --data-dir nobody gave); with --data-dir where the files are now, both go on."""
    run, data = relative_run
    data.rename(tmp_path / "moved")
    capsys.readouterr()
    for argv in (["pretrain", "--output-dir", str(run), "--resume", "--no-progress"],
                 ["finetune", "--run", str(run), *FINETUNE]):
        assert cli.main(argv) == 2
        assert _moved_message(data, run) in capsys.readouterr().err
    assert cli.main(["pretrain", "--output-dir", str(run), "--resume", "--no-progress",
                     "--data-dir", "../moved"]) == 0
    assert json.loads((run / "config.json").read_text())["data_dir"] == str(tmp_path / "moved")
    assert cli.main(["finetune", "--run", str(run), *FINETUNE]) == 0  # (the run's data_dir is the new one)


def test_other_data_in_the_runs_data_dir_is_refused(relative_run):
    run, data = relative_run
    _change_last_sentence(data / "train.en.gz")
    with pytest.raises(ValueError, match=r"trained on other data.*The train data read now.*Give the run's data "
                                         r"\(--data-dir\), or start a new run"):
        pretraining.pretrain({}, run, resume=True, progress=False)


def test_an_older_config_without_digests_and_with_a_relative_data_dir_resumes_and_fine_tunes(data_dir, tmp_path,
                                                                                               monkeypatch, capsys):
    """A config.json saved before data digests, precision and sync_every were recorded, with
    data_dir as typed (relative): from where it was started it loads, fine-tunes and resumes; the
    resume records the digests and the data_dir absolute from then on."""
    shutil.copytree(data_dir, tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    pretraining.pretrain(pretraining.build_config("tiny", data_dir="data", max_steps=2), run, progress=False)
    config = json.loads((run / "config.json").read_text())
    digests = config["data_sha256"]
    for key in ("data_sha256", "data_read_from", "precision", "sync_every"):
        del config[key]
    (run / "config.json").write_text(json.dumps({**config, "data_dir": "data"}))
    assert pretraining.load_pretrained(run)[0]["data_dir"] == "data"
    assert finetuning.compare(run, [4], steps=1, warmup_steps=0, batch_size=4)["rows"][0]["labels"] == 4
    capsys.readouterr()
    pretraining.pretrain({}, run, resume=True, progress=False)
    assert "records no digest of the run's data" in capsys.readouterr().err
    config = json.loads((run / "config.json").read_text())
    assert config["data_sha256"] == digests and config["data_dir"] == str(tmp_path / "data")

