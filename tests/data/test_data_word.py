"""Tests for the word-level tokenizer."""

import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitx.data import BPETokenizer, Vocab, WordTokenizer, load_tokenizer

TEXTS = [
    "A dog runs in the park.",
    "A dog, a cat and a bird!",
    "The dog's ball is red.",
    "Two dogs run.",
]


def test_splits_punctuation_and_lowercases():
    tok = WordTokenizer.train(TEXTS, min_freq=1)
    assert tok.encode("A dog, running!") == ["a", "dog", ",", "running", "!"]
    assert tok.encode("The dog's ball.") == ["the", "dog", "'", "s", "ball", "."]
    cased = WordTokenizer.train(TEXTS, min_freq=1, lowercase=False)
    assert cased.encode("A Dog.") == ["A", "Dog", "."]
    assert "A" in cased.vocab and "a" in cased.vocab


def test_a_single_string_is_refused_as_the_training_text():
    """Iterated, one str would give a vocabulary of its letters, silently."""
    with pytest.raises(TypeError, match=r"WordTokenizer.train takes a list of sentences, got one str"):
        WordTokenizer.train(" ".join(TEXTS), min_freq=1)


def test_min_freq_and_unknown_words():
    tok = WordTokenizer.train(TEXTS, min_freq=2)
    # "a" appears 4 times, "dog" 3 times; "park" once.
    assert "a" in tok.vocab and "dog" in tok.vocab
    assert "park" not in tok.vocab
    ids = tok.encode_ids("a park")
    assert ids == [tok.vocab.token_to_id("a"), tok.unk_id]


def test_vocab_order_is_by_frequency_then_alphabetical():
    tok = WordTokenizer.train(["b a", "a c", "c"], min_freq=1)
    assert tok.vocab.tokens[4:] == ["a", "c", "b"]


def test_max_size():
    tok = WordTokenizer.train(TEXTS, min_freq=1, max_size=6)
    assert len(tok.vocab) == 6


def test_ids_with_bos_eos_and_decode_ids():
    tok = WordTokenizer.train(TEXTS, min_freq=1)
    ids = tok.encode_ids("A dog runs.", add_bos=True, add_eos=True)
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
    # decode_ids strips specials and stops at the first <eos>.
    assert tok.decode_ids(ids + [tok.vocab.token_to_id("cat"), tok.pad_id]) == "a dog runs ."


def test_decode_joins_with_spaces_not_lossless():
    tok = WordTokenizer.train(TEXTS, min_freq=1)
    text = "A  dog,runs!"
    assert tok.decode(tok.encode(text)) == "a dog , runs !"
    assert tok.decode(tok.encode_ids("a dog")) == "a dog"


@given(st.text())
def test_decode_is_a_fixed_point_after_one_round(text):
    # Not lossless, but stable: re-encoding decoded text changes nothing.
    tok = WordTokenizer(Vocab(), lowercase=True)
    once = tok.decode(tok.encode(text))
    assert tok.decode(tok.encode(once)) == once


def test_save_load(tmp_path):
    tok = WordTokenizer.train(TEXTS, min_freq=1, lowercase=False)
    path = tmp_path / "word.json"
    tok.save(path)
    loaded = WordTokenizer.load(path)
    assert loaded.lowercase is False
    assert loaded.vocab == tok.vocab
    for text in TEXTS:
        assert loaded.encode_ids(text) == tok.encode_ids(text)
    assert isinstance(load_tokenizer(path), WordTokenizer)


def test_load_wrong_kind(tmp_path):
    path = tmp_path / "bpe.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny corpus runs out of merges; irrelevant here
        BPETokenizer.train(TEXTS, vocab_size=300).save(path)
    with pytest.raises(ValueError, match="bpe.json"):
        WordTokenizer.load(path)
    vocab_path = tmp_path / "vocab.json"
    Vocab(["a"]).save(vocab_path)
    with pytest.raises(ValueError, match="vocab.json"):
        WordTokenizer.load(vocab_path)
    with pytest.raises(ValueError, match="vocab.json"):
        load_tokenizer(vocab_path)


@pytest.mark.parametrize("edit, pattern", [
    (lambda d: d.update(lowercase="false"), r"""'lowercase' is "false" \(a string\); expected true or false"""),
    (lambda d: d.update(lowercase=0), r"'lowercase' is 0 \(a number\); expected true or false"),
    (lambda d: d.update(lowercase=None), r"'lowercase' is null; expected true or false"),
    (lambda d: d.pop("lowercase"), r"'lowercase' is missing; expected true or false"),
    (lambda d: d.pop("vocab"), r"'vocab' is missing; expected a vocabulary"),
    (lambda d: d["vocab"].update(tokens="dog"), r"""the vocabulary's 'tokens' is "dog" \(a string\); expected a list"""),
    (lambda d: d["vocab"].update(tokens={"a": 4}), r"""the vocabulary's 'tokens' is \{"a": 4\} \(an object\)"""),
    (lambda d: d["vocab"]["tokens"].append("dog"), r"'tokens': token 'dog' is a duplicate"),
    (lambda d: d["vocab"]["tokens"].append(5), r"'tokens': vocabulary tokens must be str, got int: 5"),
])
def test_a_damaged_file_is_refused_naming_the_file_the_key_and_what_it_holds(tmp_path, edit, pattern):
    """A hand-edited "lowercase": "false" loaded as true (a non-empty string), and a token list
    given as one string as a vocabulary of its letters: each is refused, naming the file and key."""
    data = WordTokenizer.train(TEXTS).to_dict()
    edit(data)
    path = tmp_path / "word.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for load in (WordTokenizer.load, load_tokenizer):
        with pytest.raises(ValueError, match=rf"^{str(path)}: .*{pattern}"):
            load(path)
