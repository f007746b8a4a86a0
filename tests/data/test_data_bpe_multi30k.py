"""BPE on the real Multi30k training data: lossless on every line, requested vocabulary size.

Needs the raw Multi30k files: set MINITX_DATA_DIR, or keep them at
<repo>/../shared/data/multi30k. Skipped otherwise (no download in tests).
"""

import os
from pathlib import Path

import pytest

from minitx.data import BPETokenizer, load_pairs

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", REPO.parent / "shared" / "data" / "multi30k"))
VOCAB_SIZE = 8000

pytestmark = pytest.mark.skipif(
    not (DATA_DIR / "train.de.gz").is_file() or not (DATA_DIR / "train.en.gz").is_file(),
    reason=f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run these tests)",
)


@pytest.fixture(scope="module")
def train_pairs():
    return load_pairs("train", "de", "en", data_dir=DATA_DIR, download=False)


@pytest.fixture(scope="module")
def joint_tok(train_pairs):
    # One joint German+English vocabulary, trained once on the full training set.
    texts = [de for de, _ in train_pairs] + [en for _, en in train_pairs]
    return BPETokenizer.train(texts, vocab_size=VOCAB_SIZE)


def test_vocab_size_as_requested(joint_tok):
    assert len(joint_tok.vocab) == VOCAB_SIZE
    assert len(set(joint_tok.vocab.tokens)) == VOCAB_SIZE


@pytest.mark.parametrize("side", ["de", "en"])
def test_every_training_line_round_trips(joint_tok, train_pairs, side):
    lines = [de if side == "de" else en for de, en in train_pairs]
    assert len(lines) == 29000
    failures = []
    for line in lines:
        ids = joint_tok.encode_ids(line)
        if joint_tok.decode_ids(ids) != line or joint_tok.decode(joint_tok.encode(line)) != line:
            failures.append(line)
    assert failures == []
    # All characters were seen in training, so no byte fallback and no <unk> is needed.
    assert not any(joint_tok.unk_id in joint_tok.encode_ids(line) for line in lines[:2000])


def test_quirky_lines_are_kept_and_round_trip(joint_tok, train_pairs):
    # train.de has lines with trailing spaces, double spaces and a tab (see the data README).
    quirky = [de for de, _ in train_pairs if de != de.rstrip() or "  " in de or "\t" in de]
    assert len(quirky) >= 40
    for line in quirky:
        assert joint_tok.decode_ids(joint_tok.encode_ids(line)) == line


@pytest.mark.parametrize("split", ["val", "test_2016_flickr"])
def test_held_out_lines_round_trip(joint_tok, split):
    for de, en in load_pairs(split, "de", "en", data_dir=DATA_DIR, download=False):
        for line in (de, en):
            assert joint_tok.decode_ids(joint_tok.encode_ids(line)) == line


def test_subwords_are_reasonably_compact(joint_tok, train_pairs):
    # Sanity check that merges were learned: far fewer pieces than characters.
    sample = [en for _, en in train_pairs[:1000]]
    n_chars = sum(len(s) for s in sample)
    n_pieces = sum(len(joint_tok.encode(s)) for s in sample)
    assert n_pieces < n_chars / 3

