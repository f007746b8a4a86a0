"""Fixtures for the encoder application's tests: a small subset of the real Multi30k files and
no network (both from the translation tests' kit), and a tiny pretraining run on the subset."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "translate"))
from translate_kit import DATA_DIR, _refuse_network, no_network, write_subset  # noqa: E402,F401

from minitx.data import multi30k  # noqa: E402

LINES = {"train": 300, "val": 20, "test_2016_flickr": 20}


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """The first LINES lines of each de/en split, as a data directory of its own."""
    if not all((DATA_DIR / f"{split}.{lang}.gz").is_file() for split in LINES for lang in ("de", "en")):
        pytest.skip(f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run this test)")
    return write_subset(tmp_path_factory.mktemp("multi30k-encoder"), LINES)


@pytest.fixture(scope="session")
def tiny_run(data_dir, tmp_path_factory):
    """A pretraining run of the 'tiny' recipe (four steps) on the subset."""
    from minitx.encoder.pretraining import build_config, pretrain

    run_dir = tmp_path_factory.mktemp("encoder-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multi30k, "_urlopen", _refuse_network)
        pretrain(build_config("tiny", data_dir=str(data_dir)), run_dir, progress=False)
    return run_dir
