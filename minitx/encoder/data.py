"""Text for the encoder: Multi30k sentences for masked-LM pretraining, and translation pairs
labelled for parallel-sentence detection (is the English caption the German one's translation?).

An encoder reads ids of a BPE tokenizer plus one id of its own, [MASK] (``tokenizer.vocab_size``,
after every tokenizer id). The tokenizer's <bos> and <eos> serve as BERT's [CLS] and [SEP]:

    a sentence:  [CLS] s [SEP]             a pair:  [CLS] german [SEP] english [SEP]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minitx.data import BYTE_TOKENS, SPECIAL_TOKENS, BPETokenizer, batch_by_tokens, pad_batch
from minitx.nn.encoder import MaskedBatch, mask_tokens

#: the languages of the pretraining text and of the detection pairs (German first in a pair)
LANGS = ("de", "en")
MASK_TOKEN = "[MASK]"


@dataclass(frozen=True)
class EncoderVocab:
    """The encoder's ids on top of a tokenizer: the tokenizer's, then [MASK]."""

    tokenizer: BPETokenizer

    @property
    def size(self) -> int:
        return self.tokenizer.vocab_size + 1

    @property
    def mask_id(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_id

    @property
    def cls_id(self) -> int:
        return self.tokenizer.bos_id

    @property
    def sep_id(self) -> int:
        return self.tokenizer.eos_id

    @property
    def random_ids(self) -> tuple:
        """The ids BERT's random replacement draws from: the learned pieces (not the specials,
        nor the byte-fallback tokens, which the text almost never uses)."""
        first = len(SPECIAL_TOKENS) + len(BYTE_TOKENS)
        return (first, self.tokenizer.vocab_size)

    def sentence(self, text: str) -> list:
        return [self.cls_id, *self.tokenizer.encode_ids(text), self.sep_id]

    def pair(self, first: str, second: str) -> list:
        return [self.cls_id, *self.tokenizer.encode_ids(first), self.sep_id, *self.tokenizer.encode_ids(second),
                self.sep_id]

    def piece(self, index: int) -> str:
        return MASK_TOKEN if index == self.mask_id else self.tokenizer.vocab.id_to_token(index)

    def mask(self, ids: np.ndarray, rng: np.random.Generator, mask_prob=0.15) -> MaskedBatch:
        return mask_tokens(ids, rng, self.mask_id, self.random_ids, special_ids=(self.cls_id, self.sep_id),
                           pad_id=self.pad_id, mask_prob=mask_prob)


def sentences(pairs: list) -> list:
    """Every sentence of a split's (German, English) pairs: the German lines, then the English
    ones (the order a run's data_sha256 digests)."""
    return [de for de, _ in pairs] + [en for _, en in pairs]


def fit(sequences: list, max_len: int) -> tuple:
    """(the sequences of at most max_len ids, how many were longer and left out)."""
    kept = [s for s in sequences if len(s) <= max_len]
    return kept, len(sequences) - len(kept)


def mlm_batches(sequences: list, vocab: EncoderVocab, max_tokens: int, seed: int, epoch: int,
                shuffle=True, mask_prob=0.15, warn_oversize=True) -> list:
    """One epoch of masked batches: token-budget batches of similar length (shuffled by
    (seed, epoch)), each masked with its own generator seeded by (seed, epoch, batch index),
    so an epoch's batches, masks included, depend on nothing else. ``warn_oversize``: as
    batch_by_tokens takes it."""
    groups = batch_by_tokens(sequences, sequences, max_tokens, shuffle=shuffle, seed=seed, epoch=epoch,
                             tgt_extra_tokens=0, warn_oversize=warn_oversize)
    return [vocab.mask(pad_batch([sequences[i] for i in idx], vocab.pad_id), np.random.default_rng([seed, epoch, b]),
                       mask_prob)
            for b, idx in enumerate(groups)]


def detection_examples(pairs: list, seed: int, count: int | None = None) -> list:
    """Labelled (german, english, label) examples from translation pairs: label 1 when the
    English is the German's translation, 0 when it is the English of another pair (chosen at
    random). Pairs are taken in a random order (from seed), each twice: with its translation,
    then with another caption, so the labels are balanced. ``count`` keeps the first count
    examples; a smaller count gives a prefix of a larger one (nested label budgets)."""
    n = len(pairs)
    if n < 2:
        raise ValueError(f"detection_examples: need at least 2 pairs to draw other captions from, got {n}")
    total = 2 * n if count is None else count
    if not 0 < total <= 2 * n:
        raise ValueError(f"detection_examples: count must be in 1..{2 * n} (each of the {n} pairs twice), got {count}")
    rng = np.random.default_rng(seed)
    order, offsets = rng.permutation(n), rng.integers(1, n, n)  # offset >= 1: never the pair itself
    examples = []
    for k in range(total):
        i = int(order[k // 2])
        if k % 2 == 0:
            examples.append((pairs[i][0], pairs[i][1], 1))
        else:
            examples.append((pairs[i][0], pairs[(i + int(offsets[i])) % n][1], 0))
    return examples


def classification_batches(sequences: list, labels: list, batch_size: int, pad_id: int, seed: int = 0,
                           epoch: int = 0, shuffle=True) -> list:
    """(ids [B, L], labels [B]) batches of ``batch_size`` examples, in an order shuffled by
    (seed, epoch), or in the given order."""
    order = np.random.default_rng([seed, epoch]).permutation(len(sequences)) if shuffle \
        else np.arange(len(sequences))
    return [(pad_batch([sequences[i] for i in chunk], pad_id), np.array([labels[i] for i in chunk], dtype=np.int64))
            for chunk in (order[start:start + batch_size] for start in range(0, len(order), batch_size))]
