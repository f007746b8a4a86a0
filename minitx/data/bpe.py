"""Byte-pair encoding (BPE), written from scratch.

BPE builds a subword vocabulary bottom-up. It starts from single characters
and repeatedly *merges* the pair of adjacent symbols that occurs most often in
the training text into one new symbol ("t" + "h" -> "th", then "th" + "e" ->
"the", ...). The ordered list of merges is the whole model: to encode a new
word we split it into characters and replay the merges, earliest first.

How text is cut before BPE (pre-tokenization)
---------------------------------------------
Merges never cross a "word" boundary. :func:`pretokenize` cuts a string into
runs of letters, runs of digits, runs of punctuation/symbols, and whitespace.
A single space in front of a letter/digit/punctuation run stays attached to
it, and inside pieces a space is written as ``▁`` (U+2581), as SentencePiece
does::

    "Ein Hund, der läuft."  ->  "Ein" "▁Hund" "," "▁der" "▁läuft" "."

The cut is *lossless*: joining the pretokens gives back the input exactly,
whatever whitespace it holds (several spaces, tabs, newlines, a space at the
end). So ``decode(encode(text)) == text``.

Characters never seen in training (byte fallback)
-------------------------------------------------
The vocabulary always holds the 256 byte tokens ``<0x00>`` ... ``<0xFF>``.
A character that is not in the learned alphabet is written as the bytes of
its UTF-8 encoding, e.g. ``"€"`` -> ``<0xE2> <0x82> <0xAC>``. Therefore every
string (any Unicode) round-trips exactly, also at the id level, and ``<unk>``
is never produced by :meth:`BPETokenizer.encode_ids`. A literal ``▁`` in the
input is always byte-encoded, so it cannot be confused with the space marker.

Vocabulary layout (ids)::

    0..3     <pad> <bos> <eos> <unk>
    4..259   <0x00> ... <0xFF>
    260..    the alphabet (single characters, most frequent first)
    then     merged pieces, in the order they were learned

Training speed
--------------
Training counts each distinct word once (with its frequency), and after each
merge only updates the words that contain the merged pair: it keeps, for every
pair, its total count and the set of words containing it, and a heap to find
the most frequent pair. Ties are broken deterministically (by the symbol ids
of the pair, which are assigned deterministically), so the same input always
gives the same merges.
"""

from __future__ import annotations

import heapq
import re
import warnings
from collections import Counter
from typing import Iterable, Sequence

from .tokenizer import Tokenizer, check_sentences
from .vocab import SPECIAL_TOKENS, Vocab, json_field, shown_json

#: Marks a space inside pieces (U+2581 LOWER ONE EIGHTH BLOCK, as in SentencePiece).
WORD_BOUNDARY = "\u2581"

#: The 256 byte-fallback tokens; ``BYTE_TOKENS[b]`` stands for the byte value ``b``.
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
_BYTE_VALUE = {token: b for b, token in enumerate(BYTE_TOKENS)}
_SPECIALS = frozenset(SPECIAL_TOKENS)

# Every character is a whitespace (\s), a "word" character (\w: letters,
# digits, underscore) or something else (punctuation, symbols), so together
# these alternatives match every character of any string: nothing is lost.
_PRETOKEN_RE = re.compile(
    r" ?[^\W\d_]+"  # letters (any script), with the one space before them
    r"| ?\d+"  # digits
    r"| ?(?:[^\s\w]|_)+"  # punctuation and symbols (and '_')
    r"|\s+(?!\S)"  # whitespace, except a last space that belongs to the next word
    r"|\s+"  # any other whitespace (e.g. a tab right before a word)
)


def pretokenize(text: str) -> list[str]:
    """Cut ``text`` into the chunks BPE works on; ``"".join(result) == text``."""
    return _PRETOKEN_RE.findall(text)


def _char_to_bytes(char: str) -> list[str]:
    """Byte-fallback tokens for one character."""
    # 'surrogatepass' lets even lone surrogates (not valid text, but possible
    # in a Python str) round-trip.
    return [BYTE_TOKENS[b] for b in char.encode("utf-8", errors="surrogatepass")]


def _segments(word: str, alphabet: frozenset[str] | set[str]) -> list[list[str] | str]:
    """Split one pretoken into runs of known symbols and single unknown chars.

    Spaces become the ``▁`` marker. A run of known symbols is returned as a
    list (BPE then merges inside it); an unknown character is returned as a
    plain str (it will be byte-encoded, and merges never cross it).
    """
    parts: list[list[str] | str] = []
    run: list[str] = []
    for char in word:
        symbol = WORD_BOUNDARY if char == " " else char
        # A literal '▁' in the text is treated as unknown on purpose, so that
        # it is byte-encoded and decodes back to '▁', not to a space.
        if char != WORD_BOUNDARY and symbol in alphabet:
            run.append(symbol)
        else:
            if run:
                parts.append(run)
                run = []
            parts.append(char)
    if run:
        parts.append(run)
    return parts


class BPETokenizer(Tokenizer):
    """A byte-pair-encoding subword tokenizer with byte fallback.

    Build one with :meth:`train` (or :meth:`load`); the constructor takes
    an already-learned vocabulary and merge list.

    Args:
        vocab: the vocabulary (layout described in the module docstring).
        merges: learned merges, earliest first, as ``(left, right)`` pieces.

    Example:
        >>> tok = BPETokenizer.train(["a dog runs", "a dog sits"] * 5, vocab_size=280)
        >>> tok.encode("a dog")
        ['a', '▁dog']
        >>> tok.decode(tok.encode("a  dog!\\t")) == "a  dog!\\t"
        True
    """

    KIND = "minitx.BPETokenizer"
    FORMAT_VERSION = 1

    #: Encoding results per pretoken are cached up to this many entries.
    CACHE_SIZE = 200_000

    def __init__(self, vocab: Vocab, merges: Sequence[tuple[str, str]]) -> None:
        tokens = vocab.tokens
        n_base = len(SPECIAL_TOKENS) + len(BYTE_TOKENS)
        if tuple(tokens[len(SPECIAL_TOKENS):n_base]) != BYTE_TOKENS:
            raise ValueError("a BPE vocabulary must hold the 256 byte tokens right after the specials")
        self.vocab = vocab
        self.merges: list[tuple[str, str]] = [(str(a), str(b)) for a, b in merges]
        # The alphabet is every single-character token (specials and byte
        # tokens are longer than one character, merged pieces too).
        self.alphabet = frozenset(t for t in tokens[n_base:] if len(t) == 1)
        # rank = position in the merge list; a lower rank is applied first.
        self._ranks: dict[tuple[str, str], int] = {}
        for rank, (left, right) in enumerate(self.merges):
            if left + right not in vocab:
                raise ValueError(f"merge {rank} ({left!r} + {right!r}) makes a piece missing from the vocabulary")
            self._ranks.setdefault((left, right), rank)
        self._cache: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={len(self.vocab)}, merges={len(self.merges)})"

    # ----------------------------------------------------------------- training
    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        min_frequency: int = 2,
        show_progress: bool = False,
    ) -> "BPETokenizer":
        """Learn a BPE vocabulary of ``vocab_size`` tokens from ``texts``.

        Args:
            texts: training sentences (for a joint vocabulary, pass both
                languages, e.g. ``de_lines + en_lines``).
            vocab_size: total vocabulary size, counting the 4 specials and the
                256 byte tokens; must be at least 260. If the alphabet does
                not fit, the rarest characters are left to byte fallback.
            min_frequency: a pair must occur at least this often (counting
                repeats) to be merged. Training stops early, with a warning,
                if no such pair is left; the vocabulary is then smaller.
            show_progress: show a tqdm progress bar over the merges.
        """
        check_sentences(texts, "BPETokenizer.train")
        n_base = len(SPECIAL_TOKENS) + len(BYTE_TOKENS)
        if vocab_size < n_base:
            raise ValueError(f"vocab_size must be at least {n_base} (4 specials + 256 bytes), got {vocab_size}")
        if min_frequency < 1:
            raise ValueError(f"min_frequency must be >= 1, got {min_frequency}")

        # 1. Count distinct pretokens; everything below works on these types.
        word_counts: Counter[str] = Counter()
        for text in texts:
            word_counts.update(_PRETOKEN_RE.findall(text))
        # 2. The alphabet: most frequent characters first, as many as fit.
        alphabet = _alphabet(word_counts, vocab_size - n_base)
        # Symbols are handled as small ints during training (faster than str).
        symbol_of: dict[str, int] = {s: i for i, s in enumerate(alphabet)}
        text_of: list[str] = list(alphabet)
        # 3. Each word type as symbol ids, 4. the statistics of their adjacent pairs.
        pairs = _PairStatistics(*_symbol_words(word_counts, symbol_of), min_frequency)

        # 5. Merge the most frequent pair, again and again.
        merges: list[tuple[str, str]] = []
        n_tokens = n_base + len(alphabet)
        progress = _progress_bar(total=vocab_size - n_tokens, enabled=show_progress)
        while n_tokens < vocab_size:
            pair = pairs.most_frequent()
            if pair is None:
                break
            left, right = pair
            merged_text = text_of[left] + text_of[right]
            merges.append((text_of[left], text_of[right]))
            # Two different pairs can spell the same piece ("ab"+"c", "a"+"bc");
            # they then share one symbol (and one vocabulary entry).
            new = symbol_of.get(merged_text)
            if new is None:
                new = symbol_of[merged_text] = len(text_of)
                text_of.append(merged_text)
                n_tokens += 1
                progress.update(1)
            pairs.merge(pair, new)
        progress.close()

        if n_tokens < vocab_size:
            warnings.warn(
                f"BPE training stopped at {n_tokens} tokens (asked for {vocab_size}): "
                f"no pair occurs at least min_frequency={min_frequency} times any more",
                stacklevel=2,
            )
        # text_of = alphabet followed by the new pieces, in creation order.
        vocab = Vocab(list(BYTE_TOKENS) + text_of)
        return cls(vocab, merges)

    # ----------------------------------------------------------------- encoding
    def encode(self, text: str) -> list[str]:
        """Split ``text`` into pieces; ``decode(encode(text)) == text`` always."""
        pieces: list[str] = []
        cache = self._cache
        for word in _PRETOKEN_RE.findall(text):
            word_pieces = cache.get(word)
            if word_pieces is None:
                word_pieces = self._encode_word(word)
                if len(cache) >= self.CACHE_SIZE:
                    cache.clear()  # crude but bounded; hits are common again soon
                cache[word] = word_pieces
            pieces.extend(word_pieces)
        return pieces

    def _encode_word(self, word: str) -> list[str]:
        pieces: list[str] = []
        for part in _segments(word, self.alphabet):
            if isinstance(part, list):
                pieces.extend(self._apply_merges(part))
            else:
                pieces.extend(_char_to_bytes(part))
        return pieces

    def _apply_merges(self, symbols: list[str]) -> list[str]:
        """Standard greedy BPE: merge the lowest-rank pair until none applies."""
        ranks = self._ranks
        while len(symbols) > 1:
            best_rank, best_pair = None, None
            for pair in zip(symbols, symbols[1:]):
                rank = ranks.get(pair)
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best_pair = rank, pair
            if best_pair is None:
                break
            symbols = _merge_pair(symbols, best_pair[0], best_pair[1], best_pair[0] + best_pair[1])
        return symbols

    # ----------------------------------------------------------------- decoding
    def decode(self, pieces: Sequence[str] | Sequence[int]) -> str:
        """Join pieces (or ids) back into text.

        Byte tokens are collected and decoded as UTF-8; ``▁`` becomes a space;
        special tokens are dropped. (Use :meth:`decode_ids` for model output:
        it also stops at ``<eos>``.) Invalid byte sequences, which only a model
        can produce, become U+FFFD.
        """
        if len(pieces) and not isinstance(pieces[0], str):
            pieces = self.vocab.decode(pieces)
        out: list[str] = []
        pending = bytearray()
        for piece in pieces:
            byte = _BYTE_VALUE.get(piece)
            if byte is not None:
                pending.append(byte)
                continue
            if pending:
                out.append(_decode_bytes(pending))
                pending.clear()
            if piece not in _SPECIALS:
                out.append(piece.replace(WORD_BOUNDARY, " "))
        if pending:
            out.append(_decode_bytes(pending))
        return "".join(out)

    # ------------------------------------------------------------- save / load
    def to_dict(self) -> dict:
        return {
            "kind": self.KIND,
            "format_version": self.FORMAT_VERSION,
            "word_boundary": WORD_BOUNDARY,
            "vocab": self.vocab.to_dict(),
            "merges": [list(m) for m in self.merges],
        }

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> "BPETokenizer":
        cls._check_header(data, source)
        if data.get("word_boundary") != WORD_BOUNDARY:
            raise ValueError(f"{source}: unexpected word boundary marker {data.get('word_boundary')!r}")
        vocab = Vocab.from_dict(json_field(data, "vocab", dict, "a vocabulary object {...}", source), source=source)
        merges = json_field(data, "merges", list, "a list of merges, each [left, right]", source)
        for i, merge in enumerate(merges):
            # a merge of three pieces, or one string (which would be split into its letters)
            if not (isinstance(merge, list) and len(merge) == 2 and all(isinstance(m, str) for m in merge)):
                raise ValueError(f"{source}: 'merges' item {i} is {shown_json(merge)}; expected [left, right]: "
                                 "two strings")
        try:
            return cls(vocab, [tuple(m) for m in merges])
        except ValueError as error:  # the byte tokens out of place, a merge making no known piece
            raise ValueError(f"{source}: {error}") from None



def _alphabet(word_counts, size: int) -> list:
    """The ``size`` most frequent characters of the pretokens (ties by character); a space is
    the word boundary, and a literal boundary character is always byte-encoded."""
    char_counts: Counter[str] = Counter()
    for word, count in word_counts.items():
        for char in word:
            if char != WORD_BOUNDARY:
                char_counts[WORD_BOUNDARY if char == " " else char] += count
    by_frequency = sorted(char_counts, key=lambda ch: (-char_counts[ch], ch))
    return by_frequency[:size]


def _symbol_words(word_counts, symbol_of) -> tuple:
    """(words, freqs): each word type as a list of symbol ids, and how often it occurs.
    Characters outside the alphabet cut a word into independent segments; equal segments are
    pooled, and one-symbol segments dropped (they have no pair to merge)."""
    alphabet_set = frozenset(symbol_of)
    segment_counts: Counter[tuple[int, ...]] = Counter()
    for word, count in word_counts.items():
        for part in _segments(word, alphabet_set):
            if isinstance(part, list) and len(part) > 1:
                segment_counts[tuple(symbol_of[s] for s in part)] += count
    return [list(seg) for seg in segment_counts], list(segment_counts.values())


class _PairStatistics:
    """How often each adjacent symbol pair occurs (over all words, times their frequency), which
    words hold it, and a max-heap of the counts, kept current as pairs are merged.

    The heap holds negated counts; an entry goes stale when its pair's count changes (a fresh
    one is pushed then), and stale ones are skipped when popped."""

    def __init__(self, words, freqs, min_frequency):
        self.words, self.freqs, self.min_frequency = words, freqs, min_frequency
        self.counts: dict[tuple[int, int], int] = {}
        self.holders: dict[tuple[int, int], set[int]] = {}
        for w, (symbols, freq) in enumerate(zip(words, freqs)):
            for pair in zip(symbols, symbols[1:]):
                self.counts[pair] = self.counts.get(pair, 0) + freq
                self.holders.setdefault(pair, set()).add(w)
        self.heap = [(-c, pair) for pair, c in self.counts.items() if c >= min_frequency]
        heapq.heapify(self.heap)

    def most_frequent(self):
        """The pair with the highest count (ties: the smaller pair), or None when no pair occurs
        min_frequency times."""
        while self.heap:
            neg_count, pair = heapq.heappop(self.heap)
            if self.counts.get(pair) == -neg_count:
                return pair
        return None

    def merge(self, pair, new: int) -> None:
        """Replace ``pair`` by the symbol ``new`` in every word holding it, and update the counts:
        each word's old pairs leave the totals, its new ones join them."""
        left, right = pair
        touched: set[tuple[int, int]] = set()
        for w in self.holders.pop(pair):
            old_symbols = self.words[w]
            new_symbols = _merge_pair(old_symbols, left, right, new)
            self.words[w] = new_symbols
            freq = self.freqs[w]
            old_pairs = list(zip(old_symbols, old_symbols[1:]))
            new_pairs = list(zip(new_symbols, new_symbols[1:]))
            for p in old_pairs:
                self.counts[p] -= freq
            for p in new_pairs:
                self.counts[p] = self.counts.get(p, 0) + freq
            old_set, new_set = set(old_pairs), set(new_pairs)
            for p in old_set - new_set:
                if p != pair:
                    self.holders[p].discard(w)
            for p in new_set - old_set:
                self.holders.setdefault(p, set()).add(w)
            touched |= old_set
            touched |= new_set
        for p in touched:
            count = self.counts[p]
            if count <= 0:
                del self.counts[p]
                self.holders.pop(p, None)
            elif count >= self.min_frequency:
                heapq.heappush(self.heap, (-count, p))

def _merge_pair(symbols: list, left, right, merged) -> list:
    """Replace every non-overlapping ``left, right`` (scanning left to right)."""
    out = []
    i, n = 0, len(symbols)
    while i < n:
        if i < n - 1 and symbols[i] == left and symbols[i + 1] == right:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _decode_bytes(data: bytearray) -> str:
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


class _NoProgress:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return _NoProgress()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is a declared dependency, but stay usable without it
        return _NoProgress()
    # disable=None: no bar where stderr is no terminal (a log file would fill with \r frames)
    return tqdm(total=total, desc="BPE merges", unit="tok", disable=None)
