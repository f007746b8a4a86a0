"""RunLifecycle (minitx.train.lifecycle): a run's life in order, for any application."""
import json

import pytest

from minitx.train import RunLifecycle
from minitx.train.lifecycle import check_resume_or_overwrite

DEFAULTS = {"device": "cpu", "steps": 3}


def test_resume_and_overwrite_exclude_each_other():
    with pytest.raises(ValueError, match="--resume .* --overwrite .*: choose one"):
        check_resume_or_overwrite(True, True)
    with pytest.raises(ValueError, match="choose one"):
        RunLifecycle("unused", dict(DEFAULTS), kind="test", resume=True, overwrite=True, defaults=DEFAULTS)


def test_nothing_is_written_before_begin_and_begin_writes_the_config(tmp_path):
    run_dir = tmp_path / "run"
    run = RunLifecycle(run_dir, dict(DEFAULTS), kind="test", defaults=DEFAULTS,
                       validate=lambda config: None)
    assert not run_dir.exists() and run.device == "cpu"
    run.begin(lambda directory: (directory / "vocab.json").write_text("{}"))
    assert json.loads((run_dir / "config.json").read_text()) == DEFAULTS
    assert (run_dir / "vocab.json").exists()


def test_the_configuration_is_validated_once_and_a_resumed_one_is_the_saved_one(tmp_path):
    seen = []
    RunLifecycle(tmp_path, dict(DEFAULTS), kind="test", defaults=DEFAULTS, validate=seen.append).begin()
    resumed = RunLifecycle(tmp_path, {"device": "cpu"}, kind="test", resume=True, defaults=DEFAULTS,
                           validate=seen.append)
    assert seen == [DEFAULTS, DEFAULTS] and resumed.config == DEFAULTS and resumed.changes == {}
    with pytest.raises(ValueError, match="cannot resume .* steps 3 \\(saved\\) != 4 \\(given\\)"):
        RunLifecycle(tmp_path, {"steps": 4}, kind="test", resume=True, defaults=DEFAULTS)


def test_a_new_run_takes_the_defaults_and_refuses_a_setting_it_does_not_have(tmp_path):
    """A new run's configuration is the defaults updated by what is given, as a resumed one's
    is: a key left out (device) was a KeyError, and a mistyped one (stpes) was written to
    config.json, where every resume then refused it."""
    run = RunLifecycle(tmp_path / "run", {"steps": 5}, kind="test", defaults=DEFAULTS)
    assert run.config == {"device": "cpu", "steps": 5} and run.device == "cpu"
    with pytest.raises(ValueError, match="a test run has no setting 'stpes'; its settings are device, steps"):
        RunLifecycle(tmp_path / "other", {"stpes": 5}, kind="test", defaults=DEFAULTS)
    assert not (tmp_path / "other").exists()
    RunLifecycle(tmp_path / "more", {"steps": 5, "recipe": "x"}, kind="test", defaults=DEFAULTS,
                 extra_keys=("recipe",))  # an application's extra keys are settings too
    with pytest.raises(ValueError, match="its settings are device, recipe, steps"):
        RunLifecycle(tmp_path / "more", {"stpes": 5}, kind="test", defaults=DEFAULTS, extra_keys=("recipe",))


def test_the_temporary_files_of_an_interrupted_write_are_cleared(tmp_path):
    """A kill between a write's temporary file and its rename leaves .<name>.<random>.tmp: begin()
    deletes such leftovers (on resume and for a new run alike), and nothing else."""
    (tmp_path / ".last.npz.k2j3.tmp").write_bytes(b"half a checkpoint")
    (tmp_path / "keep.txt").write_text("not ours")
    RunLifecycle(tmp_path, dict(DEFAULTS), kind="test", defaults=DEFAULTS).begin()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "keep.txt"]


def test_a_resume_of_a_run_that_lost_its_config_json_says_so(tmp_path):
    """A directory holding last.npz is a run whose config.json is gone, not "not a minitx run"."""
    from minitx.train.rundir import read_saved_config

    with pytest.raises(FileNotFoundError, match="has no config.json, so it is not a minitx training run"):
        read_saved_config(tmp_path)
    (tmp_path / "last.npz").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"^cannot resume: .* holds last.npz but no config.json, which a resume "
                                                r"reads the run's settings from; restore it"):
        read_saved_config(tmp_path)
