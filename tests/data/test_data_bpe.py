"""Tests for the from-scratch BPE tokenizer (small corpora; see test_data_bpe_multi30k.py for real data)."""

import json
import os
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minitx.data import BYTE_TOKENS, WORD_BOUNDARY, BPETokenizer, WordTokenizer, load_pairs, load_tokenizer, pretokenize
from minitx.data import bpe as bpe_module

CORPUS = [
    "Ein Hund läuft über die Straße.",
    "Zwei Männer spielen Fußball im Park.",
    "A dog runs across the street.",
    "Two men are playing soccer in the park.",
    "Eine Frau mit einem grünen Hut isst ein Eis.",
    "A woman in a green hat eats an ice cream.",
    "Café, crème brûlée and naïve résumés!",
    "Kinder spielen  im\tSchnee,   lachen...",
] * 3


@pytest.fixture(scope="module")
def small_tok():
    return BPETokenizer.train(CORPUS, vocab_size=400)


def quiet_train(texts, vocab_size, **kwargs):
    """Train, ignoring the 'stopped early' warning that tiny corpora trigger."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BPETokenizer.train(texts, vocab_size, **kwargs)


# ------------------------------------------------------------ pretokenization
@given(st.text())
def test_pretokenize_is_lossless(text):
    assert "".join(pretokenize(text)) == text


def test_pretokenize_examples():
    assert pretokenize("Ein Hund, der läuft.") == ["Ein", " Hund", ",", " der", " läuft", "."]
    assert pretokenize("a  b") == ["a", " ", " b"]
    assert pretokenize("a\tb ") == ["a", "\t", "b", " "]
    assert pretokenize("in 2016!") == ["in", " 2016", "!"]


# ------------------------------------------------------------ round trips
ROUND_TRIP_CASES = [
    "",
    " ",
    "   leading and trailing   ",
    "a\tb\t\tc\n\nd\r\n",
    "Straße ÄÖÜ äöü ß é è ê ñ",
    "price: 5€ — “quoted” 日本語 😀",
    "literal ▁ marker and ▁▁double",
    "specials <pad> <bos> <eos> <unk> <0x41>",
    "Kinder spielen  im\tSchnee,   lachen...",
]


@pytest.mark.parametrize("text", ROUND_TRIP_CASES)
def test_round_trip_examples(small_tok, text):
    pieces = small_tok.encode(text)
    assert small_tok.decode(pieces) == text
    ids = small_tok.encode_ids(text)
    assert small_tok.unk_id not in ids  # byte fallback: never <unk>
    assert small_tok.decode(ids) == text
    assert small_tok.decode_ids(ids) == text
    assert small_tok.decode_ids(small_tok.encode_ids(text, add_bos=True, add_eos=True)) == text


@settings(max_examples=300)
@given(st.text())
def test_round_trip_arbitrary_text(small_tok, text):
    ids = small_tok.encode_ids(text)
    assert small_tok.decode(small_tok.encode(text)) == text
    assert small_tok.decode_ids(ids) == text
    assert all(0 <= i < len(small_tok.vocab) for i in ids)


@settings(max_examples=100)
@given(st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs", "Cc", "So"])))
def test_round_trip_unicode_heavy(small_tok, text):
    assert small_tok.decode_ids(small_tok.encode_ids(text)) == text


def test_unseen_characters_use_bytes(small_tok):
    pieces = small_tok.encode("€")
    assert pieces == ["<0xE2>", "<0x82>", "<0xAC>"]
    # A literal marker character is byte-encoded too, so it is not read as a space.
    assert small_tok.encode("▁") == ["<0xE2>", "<0x96>", "<0x81>"]


def test_spaces_become_word_boundary_marker(small_tok):
    pieces = small_tok.encode("Ein Hund  läuft")
    assert "".join(pieces) == "Ein▁Hund▁▁läuft"
    assert all(" " not in p for p in pieces)


def test_decode_drops_specials_and_stops_at_eos(small_tok):
    ids = small_tok.encode_ids("Ein Hund")
    assert small_tok.decode_ids([small_tok.bos_id, *ids, small_tok.eos_id, *ids]) == "Ein Hund"
    assert small_tok.decode_ids([small_tok.pad_id, *ids, small_tok.unk_id]) == "Ein Hund"


def test_invalid_bytes_from_a_model_do_not_crash(small_tok):
    ids = [small_tok.vocab.token_to_id("<0xFF>"), small_tok.vocab.token_to_id("<0xE2>")]
    assert small_tok.decode_ids(ids) == "\ufffd\ufffd"


# ------------------------------------------------------------ training
def test_vocab_size_and_layout(small_tok):
    tokens = small_tok.vocab.tokens
    assert len(tokens) == 400
    assert tokens[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert tuple(tokens[4:260]) == BYTE_TOKENS
    assert len(set(tokens)) == len(tokens)
    # every merge produces a vocabulary piece
    assert all(a + b in small_tok.vocab for a, b in small_tok.merges)


def test_training_is_deterministic_and_order_independent_of_ties():
    a = BPETokenizer.train(CORPUS, vocab_size=350)
    b = BPETokenizer.train(list(CORPUS), vocab_size=350)
    assert a.merges == b.merges and a.vocab == b.vocab
    # Word counts, not sentence order, drive training.
    c = BPETokenizer.train(list(reversed(CORPUS)), vocab_size=350)
    assert c.merges == a.merges


def test_small_vocab_truncates_alphabet_and_still_round_trips():
    tok = BPETokenizer.train(CORPUS, vocab_size=270)
    assert len(tok.vocab) == 270
    assert len(tok.alphabet) == 10
    for text in CORPUS:
        assert tok.decode_ids(tok.encode_ids(text)) == text


def test_too_small_vocab_size_rejected():
    with pytest.raises(ValueError, match="260"):
        BPETokenizer.train(CORPUS, vocab_size=100)


def test_a_single_string_is_refused_as_the_training_text():
    """One str is not a list of sentences: iterated, its characters would each be a sentence (an
    alphabet and no merges, with a misleading 'stopped early' warning at best)."""
    with pytest.raises(TypeError, match=r"BPETokenizer.train takes a list of sentences, got one str of 68 characters"):
        BPETokenizer.train(" ".join(CORPUS[:2]), vocab_size=300)


def test_early_stop_warns():
    with pytest.warns(UserWarning, match="stopped"):
        tok = BPETokenizer.train(["ab ab", "cd"], vocab_size=1000)
    assert len(tok.vocab) < 1000


def test_min_frequency():
    # "xy" occurs once: merged only when min_frequency allows it.
    assert quiet_train(["xy"], 1000, min_frequency=2).merges == []
    assert quiet_train(["xy"], 1000, min_frequency=1).merges == [("x", "y")]


def naive_train(texts, vocab_size, min_frequency=2):
    """Reference BPE: recount every pair before every merge (slow but obviously right).

    It uses the same alphabet, segment splitting and tie-breaking (by the
    creation order of the symbols) as the real trainer.
    """
    n_base = 4 + 256
    word_counts = Counter(w for t in texts for w in pretokenize(t))
    char_counts = Counter()
    for word, count in word_counts.items():
        for ch in word:
            if ch != WORD_BOUNDARY:
                char_counts[WORD_BOUNDARY if ch == " " else ch] += count
    alphabet = sorted(char_counts, key=lambda ch: (-char_counts[ch], ch))[: vocab_size - n_base]
    order = {s: i for i, s in enumerate(alphabet)}
    words = []
    for word, count in word_counts.items():
        for part in bpe_module._segments(word, set(alphabet)):
            if isinstance(part, list) and len(part) > 1:
                words.append([part, count])
    merges = []
    n_tokens = n_base + len(alphabet)
    while n_tokens < vocab_size:
        pairs = Counter()
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        candidates = [(-c, order[a], order[b], (a, b)) for (a, b), c in pairs.items() if c >= min_frequency]
        if not candidates:
            break
        a, b = min(candidates)[3]
        merges.append((a, b))
        if a + b not in order:
            order[a + b] = len(order)
            n_tokens += 1
        for entry in words:
            entry[0] = bpe_module._merge_pair(entry[0], a, b, a + b)
    return merges


def test_incremental_training_matches_naive_reference():
    merges = quiet_train(CORPUS, 420).merges
    assert merges == naive_train(CORPUS, 420)


REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", REPO.parent / "shared" / "data" / "multi30k"))


@pytest.mark.skipif(
    not (DATA_DIR / "val.de.gz").is_file() or not (DATA_DIR / "val.en.gz").is_file(),
    reason=f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run this test)",
)
def test_incremental_training_matches_naive_reference_on_real_text():
    pairs = load_pairs("val", "de", "en", data_dir=DATA_DIR, download=False)
    texts = [de for de, _ in pairs[:400]] + [en for _, en in pairs[:400]]
    assert BPETokenizer.train(texts, vocab_size=520).merges == naive_train(texts, 520)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(alphabet="abcab ,.\tä", max_size=30), max_size=12),
    st.integers(min_value=260, max_value=320),
    st.integers(min_value=1, max_value=3),
)
def test_incremental_training_matches_naive_on_random_corpora(texts, vocab_size, min_frequency):
    tok = quiet_train(texts, vocab_size, min_frequency=min_frequency)
    assert tok.merges == naive_train(texts, vocab_size, min_frequency)
    for text in texts:
        assert tok.decode_ids(tok.encode_ids(text)) == text


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=10), st.text())
def test_train_on_arbitrary_text_then_round_trip(texts, other):
    tok = quiet_train(texts, 300, min_frequency=1)
    for text in texts + [other]:
        assert tok.decode_ids(tok.encode_ids(text)) == text


def test_encoding_replays_training_segmentation():
    # On the training words themselves, greedy rank-ordered merging
    # usually reproduces whole frequent words.
    tok = quiet_train(["the cat the hat the mat"] * 5, vocab_size=300)
    assert tok.encode("the cat") == ["the", "▁cat"]


# ------------------------------------------------------------ save / load
@pytest.fixture(scope="module")
def saved_and_loaded(small_tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("bpe") / "bpe.json"
    small_tok.save(path)
    return path, BPETokenizer.load(path)


def test_save_load_file_contents(saved_and_loaded, small_tok):
    path, loaded = saved_and_loaded
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["kind"] == "minitx.BPETokenizer" and data["format_version"] == 1
    assert loaded.vocab == small_tok.vocab and loaded.merges == small_tok.merges
    assert loaded.alphabet == small_tok.alphabet
    assert isinstance(load_tokenizer(path), BPETokenizer)


@settings(max_examples=200)
@given(st.text())
def test_save_load_gives_identical_encodings(saved_and_loaded, small_tok, text):
    _, loaded = saved_and_loaded
    assert loaded.encode(text) == small_tok.encode(text)
    assert loaded.encode_ids(text) == small_tok.encode_ids(text)


def test_load_wrong_kind_names_the_file(tmp_path):
    path = tmp_path / "words.json"
    WordTokenizer.train(CORPUS).save(path)
    with pytest.raises(ValueError, match="words.json"):
        BPETokenizer.load(path)
    path.write_text("{oops")
    with pytest.raises(ValueError, match="words.json"):
        BPETokenizer.load(path)


def test_load_newer_format_rejected(tmp_path, small_tok):
    data = small_tok.to_dict()
    data["format_version"] = 2
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="version"):
        BPETokenizer.load(path)


def test_the_earliest_learned_merge_applies_first():
    """BPE replays the merges in the order they were learned, not the order the pairs appear:
    with b+c learned before a+b, "abc" is a | bc, and "abcab" merges its own a+b afterwards."""
    from minitx.data import Vocab

    tok = BPETokenizer(Vocab([*BYTE_TOKENS, "a", "b", "c", "bc", "ab"]), [("b", "c"), ("a", "b")])
    assert tok.encode("abc") == ["a", "bc"]
    assert tok.encode("abcab") == ["a", "bc", "ab"]
    assert BPETokenizer(Vocab([*BYTE_TOKENS, "a", "b", "c", "bc", "ab"]), [("a", "b"), ("b", "c")]).encode("abc") \
        == ["ab", "c"]


def _merge_joined(data):
    data["merges"][0] = "".join(data["merges"][0])  # ["▁", "t"] written as one string "▁t"


@pytest.mark.parametrize("edit, pattern", [
    (lambda d: d.pop("merges"), r"'merges' is missing; expected a list of merges"),
    (lambda d: d.update(merges=None), r"'merges' is null; expected a list of merges"),
    (lambda d: d.update(merges="a b"), r"""'merges' is "a b" \(a string\); expected a list of merges"""),
    (lambda d: d["merges"][0].append("x"), r"""'merges' item 0 is \[.*, "x"\] \(an array\); expected \[left, right\]: two strings"""),
    (lambda d: d["merges"][3].pop(), r"""'merges' item 3 is \[".*"\] \(an array\); expected \[left, right\]: two strings"""),
    (lambda d: d["merges"].__setitem__(1, [1, 2]), r"'merges' item 1 is \[1, 2\] \(an array\); expected \[left, right\]"),
    (_merge_joined, r"""'merges' item 0 is ".*" \(a string\); expected \[left, right\]"""),
    (lambda d: d["merges"].append(["q", "z"]), r"merge \d+ \('q' \+ 'z'\) makes a piece missing"),
    (lambda d: d.pop("vocab"), r"'vocab' is missing; expected a vocabulary"),
    (lambda d: d["vocab"].pop("tokens"), r"the vocabulary's 'tokens' is missing; expected a list of token strings"),
    (lambda d: d["vocab"].update(tokens="".join(d["vocab"]["tokens"])), r"""'tokens' is ".* \(a string\); expected a list"""),
    (lambda d: d["vocab"]["tokens"].append(d["vocab"]["tokens"][-1]), r"'tokens': token '.*' is a duplicate"),
    (lambda d: d["vocab"]["tokens"].__delitem__(0), r"the 256 byte tokens right after the specials"),
])
def test_a_damaged_file_is_refused_naming_the_file_the_key_and_what_it_holds(tmp_path, small_tok, edit, pattern):
    """A hand-edited or damaged tokenizer file: a ValueError naming the file, the key, what it holds
    and what was expected (not a bare KeyError, an unpacking error, or a tokenizer silently other)."""
    data = json.loads(json.dumps(small_tok.to_dict()))
    edit(data)
    path = tmp_path / "bpe.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for load in (BPETokenizer.load, load_tokenizer):
        with pytest.raises(ValueError, match=rf"^{str(path)}: .*{pattern}"):
            load(path)
