"""Where a pretraining run reads its data, as a translation run does (minitx.train's
resolve_data_dir, runs_data_dir and check_data): a relative --data-dir is recorded absolute, a
run's data_dir no longer there is named with what to do, and other data is refused; older
config.json files still resume and fine-tune; the files are looked up once."""
import gzip
import json
import shutil

import pytest

from minitx.data import multi30k
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


def test_each_split_is_looked_up_once_and_a_download_hears_no_progress(data_dir, tmp_path, monkeypatch):
    """The sentences are read from the files that are logged and recorded (data_read_from), found
    once: they were looked up twice, and the first look-up downloaded with progress bars whatever
    ``progress`` said (--no-progress drew them)."""
    monkeypatch.delenv("MINITX_DATA_DIR", raising=False)
    monkeypatch.setattr(multi30k, "KNOWN_SHA256", {})  # (the subset is not the release: no checksum to check)
    downloads = []

    def download_file(split, lang, dest_dir=None, progress=True):  # the subset's file, as a download
        downloads.append((split, lang, progress))
        dest_dir.mkdir(parents=True, exist_ok=True)
        return shutil.copy(data_dir / multi30k.file_name(split, lang), dest_dir)

    searches = []  # each look-up of a split's files searches the data directories once

    def find_data_dir(data_dir=None, files=()):
        searches.append(tuple(files))
        return search(data_dir, files)

    search = multi30k.find_data_dir
    monkeypatch.setattr(multi30k, "download_file", download_file)
    monkeypatch.setattr(multi30k, "find_data_dir", find_data_dir)
    run = tmp_path / "run"
    pretraining.pretrain(pretraining.build_config("tiny", max_steps=2), run, progress=False)
    assert sorted(downloads) == [(split, lang, False) for split in ("train", "val") for lang in ("de", "en")]
    assert sorted(searches) == [(f"{split}.de.gz", f"{split}.en.gz") for split in ("train", "val")]
    cache = multi30k.default_cache_dir()
    assert json.loads((run / "config.json").read_text())["data_read_from"] == {
        split: f"{cache / f'{split}.de.gz'}, {cache / f'{split}.en.gz'}" for split in ("train", "val")}


def test_finetune_downloads_without_progress_bars_when_told(data_dir, tmp_path, monkeypatch):
    """finetune --no-progress reaches the download of the splits it reads (train and the test
    split) as pretrain's does; without it, the download draws its bars."""
    run = tmp_path / "run"
    pretraining.pretrain(pretraining.build_config("tiny", max_steps=2, data_dir=str(data_dir)), run, progress=False)
    config = json.loads((run / "config.json").read_text())
    config["data_dir"] = None  # as a run that found its data by searching: finetune searches (and downloads) too
    (run / "config.json").write_text(json.dumps(config))
    monkeypatch.delenv("MINITX_DATA_DIR", raising=False)
    monkeypatch.setattr(multi30k, "KNOWN_SHA256", {})
    monkeypatch.setattr(multi30k, "default_cache_dir", lambda: tmp_path / "cache")
    downloads = []

    def download_file(split, lang, dest_dir=None, progress=True):
        downloads.append((split, lang, progress))
        dest_dir.mkdir(parents=True, exist_ok=True)
        return shutil.copy(data_dir / multi30k.file_name(split, lang), dest_dir)

    monkeypatch.setattr(multi30k, "download_file", download_file)
    for flags, progress in (([], True), (["--no-progress"], False)):
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        downloads.clear()
        assert cli.main(["finetune", "--run", str(run), *FINETUNE, *flags]) == 0
        assert sorted(downloads) == [(split, lang, progress) for split in (finetuning.EVAL_SPLIT, "train")
                                     for lang in ("de", "en")]
