"""Fixtures for the encoder application's tests: a small gzipped subset of the real Multi30k
files (found through MINITX_DATA_DIR or <repo>/../shared/data/multi30k), a tiny pretraining
run on it, and no network."""
import gzip
import os
import urllib.error
from pathlib import Path

import pytest

from minitx.data import multi30k

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", REPO.parent / "shared" / "data" / "multi30k"))
LINES = {"train": 300, "val": 20, "test_2016_flickr": 20}


def _refuse_network(url, *args, **kwargs):
    raise urllib.error.URLError(f"the tests are offline (tried to open {url})")


@pytest.fixture(autouse=True)
def no_network(monkeypatch, tmp_path):
    monkeypatch.setattr(multi30k, "_urlopen", _refuse_network)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """The first LINES lines of each de/en split, as a data directory of its own."""
    if not all((DATA_DIR / f"{split}.{lang}.gz").is_file() for split in LINES for lang in ("de", "en")):
        pytest.skip(f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run this test)")
    dest = tmp_path_factory.mktemp("multi30k-encoder")
    for split, count in LINES.items():
        for lang in ("de", "en"):
            with gzip.open(dest / f"{split}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in multi30k.read_lines(DATA_DIR / f"{split}.{lang}.gz")[:count])
    return dest


@pytest.fixture(scope="session")
def tiny_run(data_dir, tmp_path_factory):
    """A pretraining run of the 'tiny' recipe (four steps) on the subset."""
    from minitx.encoder.pretraining import build_config, pretrain

    run_dir = tmp_path_factory.mktemp("encoder-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multi30k, "_urlopen", _refuse_network)
        pretrain(build_config("tiny", data_dir=str(data_dir)), run_dir, overwrite=True, progress=False)
    return run_dir
