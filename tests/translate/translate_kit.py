"""Shared helpers and fixtures for the Multi30k translation tests (imported by the test_translate_* files).

One tiny model (d_model 32, one encoder and one decoder layer, a 1000-token joint BPE) is trained
once per session on a gzipped subset of the real Multi30k files and reused by most tests. Nothing
here touches the network: downloads are made to fail, in this process and in subprocesses.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

from minitx.data import multi30k
from same_state import assert_same_state  # noqa: F401  (the translation tests import it from here)

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", REPO.parent / "shared" / "data" / "multi30k"))
SPLIT_LINES = {"train": 2000, "val": 150, "test_2016_flickr": 100}
SMALL_SPLIT_LINES = {"train": 300, "val": 20, "test_2016_flickr": 10}

# The tiny configuration: a few seconds per epoch on two CPU cores.
TINY = dict(vocab_size=1000, d_model=32, num_heads=2, encoder_layers=1, decoder_layers=1, d_ff=64, max_len=64,
            dropout=0.1, lr=3e-3, warmup_steps=30, max_tokens=2000, bleu_every=0, beam_size=1, save_every=20,
            device="cpu")
TINY_EPOCHS = 3
# Two steps of a tiny model on the small subset (a 400-token BPE: 300 sentences hold enough pairs).
SMALL = dict(TINY, vocab_size=400, max_tokens=600, epochs=1, max_steps=2)

_memo = {}


def _once(key, make):
    """make() once per session, even when several test modules import the same fixture."""
    if key not in _memo:
        _memo[key] = make()
    return _memo[key]


def _refuse_network(url, *args, **kwargs):
    raise urllib.error.URLError(f"the tests are offline (tried to open {url})")


@pytest.fixture(autouse=True)
def no_network(monkeypatch, tmp_path):
    """No download can happen, and the cache directory is private to the test."""
    monkeypatch.setattr(multi30k, "_urlopen", _refuse_network)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def write_gz_lines(path, lines):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def write_subset(dest: Path, split_lines=None, langs=("de", "en")) -> Path:
    """The first lines of the real files, as a Multi30k data directory of its own."""
    dest.mkdir(parents=True, exist_ok=True)
    for split, count in (split_lines or SPLIT_LINES).items():
        for lang in langs:
            lines = multi30k.read_lines(DATA_DIR / f"{split}.{lang}.gz")[:count]
            write_gz_lines(dest / f"{split}.{lang}.gz", lines)
    return dest


@pytest.fixture(scope="session")
def subset_dir(tmp_path_factory):
    if not all((DATA_DIR / f"{split}.{lang}.gz").is_file() for split in SPLIT_LINES for lang in ("de", "en")):
        pytest.skip(f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run this test)")
    return _once("subset", lambda: write_subset(tmp_path_factory.mktemp("multi30k-subset")))


@pytest.fixture(scope="session")
def small_subset_dir(subset_dir, tmp_path_factory):
    """An even smaller data directory (SMALL_SPLIT_LINES), for tests that train a few steps
    from scratch and only check what the run directory holds."""
    return _once("small-subset", lambda: write_subset(tmp_path_factory.mktemp("multi30k-small"), SMALL_SPLIT_LINES))


@pytest.fixture(scope="session")
def tiny_run(subset_dir, tmp_path_factory):
    """The run directory of the tiny model, trained for TINY_EPOCHS epochs. The data is found
    through MINITX_DATA_DIR (data_dir stays None in config.json), as a user would set it up."""
    from minitx.translate.recipes import build_config
    from minitx.translate.training import train

    def make():
        run_dir = tmp_path_factory.mktemp("tiny-run")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("MINITX_DATA_DIR", str(subset_dir))
            mp.setenv("XDG_CACHE_HOME", str(run_dir / "xdg-cache"))
            mp.setattr(multi30k, "_urlopen", _refuse_network)
            train(build_config(None, epochs=TINY_EPOCHS, output_dir=str(run_dir), **TINY), progress=False)
        return run_dir

    return _once("tiny-run", make)


@pytest.fixture(scope="session")
def tiny_model(tiny_run):
    """(config, model, src_tokenizer, tgt_tokenizer) of the tiny run's best checkpoint."""
    from minitx.translate.training import load_run

    return _once("tiny-model", lambda: load_run(tiny_run, "best", device="cpu"))


def copy_run(run_dir: Path, dest: Path, **config_changes) -> Path:
    """A copy of a run's config, tokenizers and best checkpoint, with config.json edited."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.src.json", "tokenizer.tgt.json", "best.npz"):
        shutil.copy(run_dir / name, dest / name)
    config = json.loads((run_dir / "config.json").read_text())
    config.update(config_changes)
    (dest / "config.json").write_text(json.dumps(config))
    return dest


def run_module(args, data_dir, cwd, stdin=None, module="minitx.translate"):
    """``python -m <module> args`` (or a script path) in a subprocess that cannot reach the network."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               MINITX_DATA_DIR=str(data_dir), XDG_CACHE_HOME=str(Path(cwd) / "xdg-cache"),
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9", no_proxy="")
    command = [sys.executable, *(["-m", module] if module else []), *map(str, args)]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


