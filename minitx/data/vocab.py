"""A vocabulary: the two-way map between token strings and integer ids.

Every vocabulary in minitx starts with the same four special tokens, at fixed
ids, so that models, losses and batching code can rely on them without asking:

====  =========  ==========================================================
 id   token      meaning
====  =========  ==========================================================
 0    ``<pad>``  padding; ignored by the loss and masked out in attention
 1    ``<bos>``  beginning of sentence; the first decoder input
 2    ``<eos>``  end of sentence; the decoder learns to emit it to stop
 3    ``<unk>``  unknown token; stands in for anything not in the vocabulary
====  =========  ==========================================================

Ordinary tokens follow from id 4 on, in the order they were given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from minitx.serialization import read_json, write_json

#: how vocabulary and tokenizer files are written: readable, non-ASCII pieces kept as they are
JSON_STYLE = dict(ensure_ascii=False, indent=1)

PAD_TOKEN = "<pad>"
BOS_TOKEN = "<bos>"
EOS_TOKEN = "<eos>"
UNK_TOKEN = "<unk>"

#: The special tokens, in id order: ``SPECIAL_TOKENS[i]`` has id ``i``.
SPECIAL_TOKENS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

_VOCAB_KIND = "minitx.Vocab"
_VOCAB_FORMAT_VERSION = 1


class Vocab:
    """Token <-> id map with the four special tokens at ids 0..3.

    Args:
        tokens: the ordinary tokens, in the order they should get ids
            (the first one gets id 4). Duplicates, and tokens that spell a
            special token, are rejected: each string must have exactly one id,
            otherwise ``decode(encode(x))`` could not be trusted.

    Example:
        >>> v = Vocab(["a", "dog"])
        >>> v.encode(["a", "cat"])
        [4, 3]
        >>> v.decode([4, 5])
        ['a', 'dog']
    """

    pad_id = PAD_ID
    bos_id = BOS_ID
    eos_id = EOS_ID
    unk_id = UNK_ID
    pad_token = PAD_TOKEN
    bos_token = BOS_TOKEN
    eos_token = EOS_TOKEN
    unk_token = UNK_TOKEN
    special_tokens = SPECIAL_TOKENS

    def __init__(self, tokens: Iterable[str] = ()) -> None:
        self._id_to_token: list[str] = list(SPECIAL_TOKENS)
        self._token_to_id: dict[str, int] = {t: i for i, t in enumerate(SPECIAL_TOKENS)}
        for token in tokens:
            self._add(token)

    def _add(self, token: str) -> int:
        if not isinstance(token, str):
            raise TypeError(f"vocabulary tokens must be str, got {type(token).__name__}: {token!r}")
        if token in self._token_to_id:
            what = "a special token" if token in SPECIAL_TOKENS else "a duplicate"
            raise ValueError(f"token {token!r} is {what}; every token must appear once")
        new_id = len(self._id_to_token)
        self._id_to_token.append(token)
        self._token_to_id[token] = new_id
        return new_id

    # ------------------------------------------------------------------ lookups
    def __len__(self) -> int:
        return len(self._id_to_token)

    def __contains__(self, token: object) -> bool:
        return token in self._token_to_id

    def __iter__(self) -> Iterator[str]:
        """Iterate over all tokens (specials first) in id order."""
        return iter(self._id_to_token)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self._id_to_token == other._id_to_token

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)})"

    @property
    def tokens(self) -> list[str]:
        """All tokens in id order (a copy; index ``i`` is the token of id ``i``)."""
        return list(self._id_to_token)

    def token_to_id(self, token: str) -> int:
        """Id of ``token``, or :attr:`unk_id` if it is not in the vocabulary."""
        return self._token_to_id.get(token, UNK_ID)

    def id_to_token(self, index: int) -> str:
        """Token of id ``index``; raises IndexError for ids outside the vocabulary."""
        index = int(index)
        if not 0 <= index < len(self._id_to_token):
            raise IndexError(f"id {index} is outside the vocabulary (size {len(self)})")
        return self._id_to_token[index]

    def is_special(self, index: int) -> bool:
        """True for the ids of ``<pad>``, ``<bos>``, ``<eos>`` and ``<unk>``."""
        return 0 <= int(index) < len(SPECIAL_TOKENS)

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Map tokens to ids; unknown tokens become :attr:`unk_id`."""
        lookup = self._token_to_id.get
        return [lookup(t, UNK_ID) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Map ids back to token strings (specials included, as their names)."""
        return [self.id_to_token(i) for i in ids]

    # ------------------------------------------------------------- save / load
    def to_dict(self) -> dict:
        """A JSON-ready description; :meth:`from_dict` reverses it."""
        return {
            "kind": _VOCAB_KIND,
            "format_version": _VOCAB_FORMAT_VERSION,
            "special_tokens": list(SPECIAL_TOKENS),
            # Specials are fixed, so only the ordinary tokens are stored.
            "tokens": self._id_to_token[len(SPECIAL_TOKENS):],
        }

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> "Vocab":
        """Rebuild a vocabulary from :meth:`to_dict` output.

        ``source`` (e.g. a file name) is only used in error messages.
        """
        if not isinstance(data, dict) or data.get("kind") != _VOCAB_KIND:
            kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"{source} is not a minitx vocabulary (kind={kind!r}, expected {_VOCAB_KIND!r})")
        version = data.get("format_version")
        if version != _VOCAB_FORMAT_VERSION:
            raise ValueError(
                f"{source}: vocabulary format version {version!r} is not supported "
                f"(this minitx reads version {_VOCAB_FORMAT_VERSION})"
            )
        if list(data.get("special_tokens", [])) != list(SPECIAL_TOKENS):
            raise ValueError(f"{source}: special tokens {data.get('special_tokens')!r} differ from {list(SPECIAL_TOKENS)!r}")
        # a list, not any iterable: a string would give a vocabulary of its letters, a dict its keys
        tokens = json_field(data, "tokens", list, "a list of token strings", source, owner="the vocabulary's ")
        try:
            return cls(tokens)
        except (TypeError, ValueError) as error:  # a duplicate or a token that is not a string
            raise ValueError(f"{source}: the vocabulary's 'tokens': {error}") from None

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as UTF-8 JSON."""
        write_json(path, self.to_dict(), **JSON_STYLE)

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        """Read a vocabulary written by :meth:`save`."""
        return cls.from_dict(read_json(path), source=str(path))


def json_field(data: dict, key: str, kind: type, expected: str, source: str, owner: str = ""):
    """``data[key]`` when it is a ``kind`` (list, dict, bool: a JSON array, object, true/false),
    else a ValueError naming ``source``, the key (after ``owner``), what it holds and ``expected``.

    Files read here may be edited by hand: a missing key would be a bare KeyError naming no
    file, and a value of another type could load as something else without a word
    (``bool("false")`` is true, a string iterates as its letters)."""
    if key not in data:
        raise ValueError(f"{source}: {owner}{key!r} is missing; expected {expected}")
    value = data[key]
    if not isinstance(value, kind):
        raise ValueError(f"{source}: {owner}{key!r} is {shown_json(value)}; expected {expected}")
    return value


def shown_json(value) -> str:
    """``value`` as the JSON file spells it (cut at 80 characters), and its JSON type."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 80:
        text = text[:77] + "..."
    if value is None:
        return text
    kinds = ((bool, "a boolean"), (str, "a string"), ((int, float), "a number"), (list, "an array"),
             (dict, "an object"))
    return f"{text} ({next((name for types, name in kinds if isinstance(value, types)), type(value).__name__)})"


def strip_special_ids(ids: Sequence[int] | Iterable[int]) -> list[int]:
    """Drop ``<pad>``, ``<bos>`` and ``<unk>`` ids and cut at the first ``<eos>``.

    This is how a model's output ids are turned back into a sentence: the
    decoder may keep producing tokens after ``<eos>``, but they mean nothing.
    """
    kept = []
    for i in ids:
        i = int(i)
        if i == EOS_ID:
            break
        if 0 <= i < len(SPECIAL_TOKENS):
            continue
        kept.append(i)
    return kept
