"""A word-level tokenizer, like the one in the classic PyTorch translation tutorials.

Text is (optionally) lowercased and cut into words and single punctuation
marks; each distinct token seen at least ``min_freq`` times in training gets
an id, and everything else becomes ``<unk>``.

This tokenizer is **not lossless**: :meth:`WordTokenizer.decode` joins tokens
with single spaces, so ``"Hello, world!"`` comes back as ``"hello , world !"``
(case and the original spacing are gone, rare words are ``<unk>``);
:func:`detokenize` then gives ``"hello, world!"``. It is here as a simple
baseline; use :class:`~minitx.data.bpe.BPETokenizer` when the exact text matters.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from .tokenizer import Tokenizer, check_sentences
from .vocab import Vocab, json_field

# A token is a run of word characters (letters, digits, '_'), or a single
# character that is neither a word character nor whitespace (punctuation).
# So "don't." -> "don", "'", "t", "."
_WORD_RE = re.compile(r"\w+|[^\w\s]")


class WordTokenizer(Tokenizer):
    """Split on whitespace and punctuation; one id per known word.

    Args:
        vocab: the vocabulary.
        lowercase: lowercase text before splitting (must match training).
    """

    KIND = "minitx.WordTokenizer"
    FORMAT_VERSION = 1

    def __init__(self, vocab: Vocab, lowercase: bool = True) -> None:
        self.vocab = vocab
        self.lowercase = bool(lowercase)

    def __repr__(self) -> str:
        return f"WordTokenizer(vocab_size={len(self.vocab)}, lowercase={self.lowercase})"

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        min_freq: int = 2,
        lowercase: bool = True,
        max_size: int | None = None,
    ) -> "WordTokenizer":
        """Build the vocabulary from ``texts``.

        Args:
            texts: training sentences.
            min_freq: keep tokens seen at least this many times.
            lowercase: lowercase everything (fewer, more frequent tokens).
            max_size: optional cap on the vocabulary size, specials included;
                the most frequent tokens are kept.

        Tokens are ordered by decreasing frequency, ties alphabetically, so
        the result does not depend on the order of ``texts``.
        """
        check_sentences(texts, "WordTokenizer.train")
        if min_freq < 1:
            raise ValueError(f"min_freq must be >= 1, got {min_freq}")
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(split_words(text, lowercase))
        kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        if max_size is not None:
            n_special = len(Vocab.special_tokens)
            if max_size < n_special:
                raise ValueError(f"max_size must be at least {n_special} (the special tokens), got {max_size}")
            kept = kept[: max_size - n_special]
        return cls(Vocab(kept), lowercase=lowercase)

    def encode(self, text: str) -> list[str]:
        """Split ``text`` into word and punctuation tokens (lowercased if set).

        The tokens are returned as strings even when they are not in the
        vocabulary; :meth:`encode_ids` maps those to ``<unk>``.
        """
        return split_words(text, self.lowercase)

    def decode(self, tokens: Sequence[str] | Sequence[int]) -> str:
        """Join tokens (or ids) with single spaces; special tokens are dropped.

        Not lossless: see the module docstring.
        """
        if len(tokens) and not isinstance(tokens[0], str):
            tokens = self.vocab.decode(tokens)
        return " ".join(t for t in tokens if t not in Vocab.special_tokens)

    def to_dict(self) -> dict:
        return {
            "kind": self.KIND,
            "format_version": self.FORMAT_VERSION,
            "lowercase": self.lowercase,
            "vocab": self.vocab.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> "WordTokenizer":
        cls._check_header(data, source)
        vocab = Vocab.from_dict(json_field(data, "vocab", dict, "a vocabulary object {...}", source), source=source)
        # checked, not bool(): a hand-edited "false" (a string) would lowercase
        return cls(vocab, lowercase=json_field(data, "lowercase", bool, "true or false", source))


# detokenize: no space before closing marks, none after opening ones; a joiner between two
# words is glued to both ("t - shirt" -> "t-shirt", "don ' t" -> "don't")
_CLOSING = set(".,!?;:%)]}")
_OPENING = set("([{")
_JOINERS = set("'-/")


def detokenize(text: str) -> str:
    """Spaced word tokens (WordTokenizer.decode's output) back to ordinary text, as far as
    spacing goes: ``"a man , in a t - shirt , doesn ' t smile ."`` ->
    ``"a man, in a t-shirt, doesn't smile."``. Straight double quotes alternate between
    opening and closing. Splitting the result again gives the same tokens (only spaces next
    to punctuation are removed), so token-level scores are unchanged by it."""
    tokens = text.split()
    out, quote_open = [], False
    for i, token in enumerate(tokens):
        glue = False  # no space before this token
        if token in _CLOSING or (out and tokens[i - 1] in _OPENING):
            glue = True
        elif token == '"':
            glue, quote_open = quote_open, not quote_open
        elif out and tokens[i - 1] == '"' and quote_open:
            glue = True  # just after an opening quote
        if token in _JOINERS and 0 < i < len(tokens) - 1 and _is_word(tokens[i - 1]) and _is_word(tokens[i + 1]):
            glue = True
        elif i >= 2 and tokens[i - 1] in _JOINERS and _is_word(tokens[i - 2]) and _is_word(token):
            glue = True
        out.append(token if glue or not out else " " + token)
    return "".join(out)


def _is_word(token: str) -> bool:
    return bool(re.fullmatch(r"\w+", token))


def split_words(text: str, lowercase: bool = True) -> list[str]:
    """The word tokenizer's tokens of ``text``: runs of word characters and single
    punctuation marks (``_WORD_RE``), after lowercasing if asked."""
    if lowercase:
        text = text.lower()
    return _WORD_RE.findall(text)
