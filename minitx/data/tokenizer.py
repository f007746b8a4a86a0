"""What every minitx tokenizer has in common.

A tokenizer turns a sentence into a list of string *pieces* (``encode``) and
back (``decode``). Its :class:`~minitx.data.vocab.Vocab` then turns pieces
into integer ids. This base class adds the id-level helpers used by training
and translation code, so both tokenizers behave the same way:

* ``encode_ids(text, add_bos=False, add_eos=False)`` -> list of ids
* ``decode_ids(ids)`` -> text, dropping special ids and stopping at ``<eos>``
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from minitx.serialization import read_json, write_json

from .vocab import JSON_STYLE, Vocab, strip_special_ids


class Tokenizer:
    """Base class. Subclasses set :attr:`vocab` and implement encode/decode."""

    #: Name stored in the ``"kind"`` field of saved JSON files.
    KIND = "minitx.Tokenizer"
    #: Version of the saved JSON layout; bump it when the layout changes.
    FORMAT_VERSION = 1

    vocab: Vocab

    # --- to be provided by subclasses ----------------------------------------
    def encode(self, text: str) -> list[str]:
        raise NotImplementedError

    def decode(self, pieces: Sequence[str] | Sequence[int]) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> "Tokenizer":
        raise NotImplementedError

    # --- shared helpers --------------------------------------------------------
    def __len__(self) -> int:
        """Vocabulary size (specials included)."""
        return len(self.vocab)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def pad_id(self) -> int:
        return self.vocab.pad_id

    @property
    def bos_id(self) -> int:
        return self.vocab.bos_id

    @property
    def eos_id(self) -> int:
        return self.vocab.eos_id

    @property
    def unk_id(self) -> int:
        return self.vocab.unk_id

    def encode_ids(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Encode ``text`` to ids, optionally wrapped in ``<bos>`` ... ``<eos>``."""
        ids = self.vocab.encode(self.encode(text))
        if add_bos:
            ids.insert(0, self.vocab.bos_id)
        if add_eos:
            ids.append(self.vocab.eos_id)
        return ids

    def decode_ids(self, ids: Iterable[int]) -> str:
        """Turn model output ids into text.

        Everything from the first ``<eos>`` on is ignored, and ``<pad>``,
        ``<bos>`` and ``<unk>`` are dropped (an ``<unk>`` has no text to show).
        """
        return self.decode(strip_special_ids(ids))

    def save(self, path: str | Path) -> None:
        """Write the tokenizer (vocabulary included) as one JSON file."""
        write_json(path, self.to_dict(), **JSON_STYLE)

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        """Read a file written by :meth:`save` of the same tokenizer class."""
        return cls.from_dict(read_json(path), source=str(path))

    @classmethod
    def _check_header(cls, data: dict, source: str) -> None:
        """Reject JSON written by something else, or by a newer format."""
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind != cls.KIND:
            raise ValueError(
                f"{source} is not a {cls.__name__} file: its kind is {kind!r}, expected {cls.KIND!r}"
            )
        version = data.get("format_version")
        if version != cls.FORMAT_VERSION:
            raise ValueError(
                f"{source}: {cls.__name__} format version {version!r} is not supported "
                f"(this minitx reads version {cls.FORMAT_VERSION})"
            )


def check_sentences(texts, where: str) -> None:
    """A TypeError naming ``where`` when ``texts`` is one string: iterating it would give its
    characters, each then taken for a sentence (a vocabulary of letters, no merges), silently."""
    if isinstance(texts, (str, bytes)):
        shown = repr(texts[:40]) + ("..." if len(texts) > 40 else "")
        unit = "characters" if isinstance(texts, str) else "bytes"
        raise TypeError(f"{where} takes a list of sentences, got one {type(texts).__name__} of {len(texts)} "
                        f"{unit} ({shown}); pass a list of them (str.splitlines() cuts a text into lines)")


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load any minitx tokenizer file, choosing the class from its ``kind`` field."""
    # Imported here to avoid an import cycle (both modules import this one).
    from .bpe import BPETokenizer
    from .word import WordTokenizer

    data = read_json(path)
    for cls in (BPETokenizer, WordTokenizer):
        if data.get("kind") == cls.KIND:
            return cls.from_dict(data, source=str(path))
    raise ValueError(
        f"{path} is not a minitx tokenizer file (kind={data.get('kind')!r}; "
        f"expected {BPETokenizer.KIND!r} or {WordTokenizer.KIND!r})"
    )
