"""The general trainer (minitx.train) on a model that is not a Transformer: files written
whole, exact resume after kills at any moment, Ctrl-C, the finish on its own."""
import json
import os

import numpy as np
import pytest

import minitx
from minitx.train import write_json


class Killed(BaseException):
    """A kill: nothing in the trainer may catch it (as with SIGKILL, no handler runs)."""


def test_json_files_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "history.json"
    write_json(path, [{"epoch": 1}], indent=2)
    before = path.read_bytes()

    def fsync_then_die(fd):
        raise Killed()

    monkeypatch.setattr(os, "fsync", fsync_then_die)
    with pytest.raises(Killed):
        write_json(path, [{"epoch": 1}, {"epoch": 2}], indent=2)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]  # no temporary file left
    monkeypatch.undo()
    write_json(path, [{"epoch": 1}, {"epoch": 2}], indent=2)
    assert json.loads(path.read_text()) == [{"epoch": 1}, {"epoch": 2}]
