"""Tests for minitx.data.vocab.Vocab and the shared tokenizer helpers."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitx.data import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, Vocab, strip_special_ids


def test_special_ids_are_fixed():
    v = Vocab(["hello", "world"])
    assert (v.pad_id, v.bos_id, v.eos_id, v.unk_id) == (0, 1, 2, 3)
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert v.tokens[:4] == list(SPECIAL_TOKENS) == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert [v.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3]
    assert len(v) == 6
    assert len(Vocab()) == 4


def test_lookup_both_ways_and_unknown():
    v = Vocab(["a", "dog"])
    assert v.token_to_id("a") == 4 and v.token_to_id("dog") == 5
    assert v.token_to_id("cat") == v.unk_id
    assert v.encode(["dog", "cat", "a"]) == [5, 3, 4]
    assert v.decode([4, 5, 2]) == ["a", "dog", "<eos>"]
    assert "dog" in v and "cat" not in v
    assert v.is_special(3) and not v.is_special(4)
    with pytest.raises(IndexError):
        v.id_to_token(6)


def test_duplicates_and_special_names_are_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(["a", "b", "a"])
    with pytest.raises(ValueError, match="special"):
        Vocab(["a", "<unk>"])


@given(st.lists(st.text(min_size=1), unique=True).filter(lambda ts: not set(ts) & set(SPECIAL_TOKENS)))
def test_encode_decode_inverse(tokens):
    v = Vocab(tokens)
    assert v.decode(v.encode(tokens)) == tokens
    assert len(v) == 4 + len(tokens)


def test_save_load_roundtrip(tmp_path):
    v = Vocab(["über", "straße", "ß", "\t", " "])
    path = tmp_path / "sub" / "vocab.json"
    v.save(path)
    assert Vocab.load(path) == v
    assert "straße" in path.read_text(encoding="utf-8")  # stored readably


def test_load_wrong_kind_names_the_file(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"kind": "something else", "tokens": []}))
    with pytest.raises(ValueError, match="other.json"):
        Vocab.load(path)
    path.write_text("not json at all")
    with pytest.raises(ValueError, match="other.json"):
        Vocab.load(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="other.json"):
        Vocab.load(path)


def test_load_rejects_other_format_version(tmp_path):
    data = Vocab(["a"]).to_dict()
    data["format_version"] = 999
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="version"):
        Vocab.load(path)


def test_strip_special_ids():
    assert strip_special_ids([1, 5, 0, 6, 3, 7, 2, 8, 9]) == [5, 6, 7]
    assert strip_special_ids([]) == []
    assert strip_special_ids([2, 5]) == []


@pytest.mark.parametrize("tokens, pattern", [
    ("missing", r"'tokens' is missing; expected a list of token strings"),
    ("ab", r"""'tokens' is "ab" \(a string\); expected a list of token strings"""),
    (None, r"'tokens' is null; expected a list"),
    (["a", "a"], r"'tokens': token 'a' is a duplicate"),
    (["<pad>"], r"'tokens': token '<pad>' is a special token"),
])
def test_load_names_the_file_and_key_of_bad_tokens(tmp_path, tokens, pattern):
    data = Vocab(["a"]).to_dict()
    if tokens == "missing":
        del data["tokens"]
    else:
        data["tokens"] = tokens
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"^{str(path)}: .*{pattern}"):
        Vocab.load(path)
