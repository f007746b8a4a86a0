"""Turning lists of token ids into padded training batches.

Sentences have different lengths, and a batch is padded to its longest one,
so batching sentences of similar length together wastes little compute on
padding. Batches are sized by a *token budget* rather than a fixed number of
sentences: many short sentences or a few long ones, the memory used is
about the same.

Typical use::

    keep, n_dropped = filter_by_length(src_ids, tgt_ids, max_len=100)
    print(f"dropped {n_dropped} pairs longer than 100 tokens")
    src_ids = [src_ids[i] for i in keep]; tgt_ids = [tgt_ids[i] for i in keep]
    for epoch in range(n_epochs):
        for indices in batch_by_tokens(src_ids, tgt_ids, max_tokens=4096, seed=0, epoch=epoch):
            batch = make_batch([src_ids[i] for i in indices], [tgt_ids[i] for i in indices],
                               indices=indices)
            ...
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .vocab import BOS_ID, EOS_ID, PAD_ID


def example_lengths(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    tgt_extra_tokens: int = 1,
) -> np.ndarray:
    """Padded-width contribution of each example: ``max(len(src), len(tgt) + tgt_extra_tokens)``.

    ``tgt_extra_tokens=1`` accounts for :func:`make_batch` adding ``<bos>`` to
    the decoder input and ``<eos>`` to the decoder target (both have length
    ``len(tgt) + 1``). Use 0 if your target sequences already hold them.
    """
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"src_ids has {len(src_ids)} examples but tgt_ids has {len(tgt_ids)}")
    return np.array(
        [max(len(s), len(t) + tgt_extra_tokens) for s, t in zip(src_ids, tgt_ids)],
        dtype=np.int64,
    ).reshape(-1)


def filter_by_length(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    max_len: int,
    max_tgt_len: int | None = None,
    min_len: int = 1,
) -> tuple[list[int], int]:
    """Indices of the examples whose lengths are within limits, and how many were dropped.

    Keeps example ``i`` when ``min_len <= len(src_ids[i]) <= max_len`` and
    ``min_len <= len(tgt_ids[i]) <= max_tgt_len`` (``max_tgt_len`` defaults
    to ``max_len``). Nothing is dropped silently: the caller gets the count
    and should report it.

    Returns:
        ``(kept_indices, n_dropped)``
    """
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"src_ids has {len(src_ids)} examples but tgt_ids has {len(tgt_ids)}")
    if max_tgt_len is None:
        max_tgt_len = max_len
    kept = [
        i
        for i, (s, t) in enumerate(zip(src_ids, tgt_ids))
        if min_len <= len(s) <= max_len and min_len <= len(t) <= max_tgt_len
    ]
    return kept, len(src_ids) - len(kept)


def batch_by_tokens(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    max_tokens: int,
    shuffle: bool = True,
    seed: int = 0,
    epoch: int = 0,
    bucket_size: int = 4096,
    max_batch_size: int | None = None,
    tgt_extra_tokens: int = 1,
    warn_oversize: bool = True,
) -> list[list[int]]:
    """Group example indices into batches of similar length under a token budget.

    The cost of a batch is its padded size ``batch_size * max(S, T)``, where
    ``S`` and ``T`` are the padded source and target widths (``T`` counting
    the ``<bos>``/``<eos>`` that :func:`make_batch` adds; see
    :func:`example_lengths`). Every batch has cost ``<= max_tokens``, except
    that an example too long to fit on its own still gets a batch of its own:
    such examples are counted and reported with a warning, never dropped.

    How batches are formed:

    * ``shuffle=True`` (training): the examples are shuffled, cut into buckets
      of ``bucket_size``, and each bucket is sorted by length; consecutive
      examples then fill batches greedily, and finally the batch order is
      shuffled. The randomness comes from ``(seed, epoch)``, so a given seed
      and epoch always give the same batches, and each epoch differs.
    * ``shuffle=False`` (evaluation): all examples are sorted by length (ties
      keep their original order) and batched in that order.

    Args:
        max_batch_size: optional cap on the number of examples per batch.
        warn_oversize: warn of the examples too long alone (False: the caller reports them once,
            with :func:`count_oversize`, where this runs every epoch).

    Returns:
        A list of batches, each a list of example indices. Each index appears
        in exactly one batch.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    if bucket_size < 1:
        raise ValueError(f"bucket_size must be positive, got {bucket_size}")
    if max_batch_size is not None and max_batch_size < 1:  # (below 1, every batch would silently hold one example)
        raise ValueError(f"batch_by_tokens: max_batch_size must be positive, or None for no cap; got {max_batch_size}")
    lengths = example_lengths(src_ids, tgt_ids, tgt_extra_tokens)
    rng = np.random.default_rng([seed, epoch]) if shuffle else None
    batches: list[list[int]] = []
    n_oversize = 0
    for bucket in _length_sorted_buckets(lengths, rng, bucket_size):
        filled, oversize = _fill_batches(bucket, lengths, max_tokens, max_batch_size)
        batches += filled
        n_oversize += oversize
    if n_oversize and warn_oversize:
        warnings.warn(
            f"{n_oversize} example(s) are longer than max_tokens={max_tokens} on their own; "
            f"each was put in a batch of its own",
            stacklevel=2,
        )
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def count_oversize(src_ids, tgt_ids, max_tokens: int, tgt_extra_tokens: int = 1) -> int:
    """How many examples are longer than ``max_tokens`` on their own: :func:`batch_by_tokens`
    gives each a batch of its own, past the budget."""
    return int((example_lengths(src_ids, tgt_ids, tgt_extra_tokens) > max_tokens).sum())


def _length_sorted_buckets(lengths: np.ndarray, rng, bucket_size: int) -> list:
    """The example indices in buckets, each sorted by length: with ``rng`` shuffled first and cut
    into buckets of ``bucket_size``, else one bucket of all. A stable sort keeps the shuffled
    (or original) order among equal lengths."""
    n = len(lengths)
    if rng is not None:
        order = rng.permutation(n)
        buckets = [order[start : start + bucket_size] for start in range(0, n, bucket_size)]
    else:
        buckets = [np.arange(n)]
    return [b[np.argsort(lengths[b], kind="stable")] for b in buckets]


def _fill_batches(bucket, lengths, max_tokens: int, max_batch_size) -> tuple:
    """(batches, how many were too long alone): the bucket's consecutive examples, greedily, each
    batch while ``batch_size * its longest <= max_tokens`` (and at most max_batch_size). An
    example too long even alone gets a batch of its own: the caller decides, it is only counted."""
    batches: list[list[int]] = []
    n_oversize = 0
    current: list[int] = []
    width = 0  # the longest example in `current`
    for index in bucket.tolist():
        length = int(lengths[index])
        if length > max_tokens:
            batches.append([index])
            n_oversize += 1
            continue
        new_width = max(width, length)
        full = (len(current) + 1) * new_width > max_tokens or (
            max_batch_size is not None and len(current) >= max_batch_size
        )
        if current and full:
            batches.append(current)
            current, new_width = [], length
        current.append(index)
        width = new_width
    if current:
        batches.append(current)
    return batches, n_oversize


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int = PAD_ID, length: int | None = None) -> np.ndarray:
    """Stack sequences into an int64 array ``[B, T]``, right-padded with ``pad_id``.

    ``T`` is the longest sequence, or ``length`` if given (which must fit them all).
    """
    longest = max((len(s) for s in seqs), default=0)
    if length is None:
        length = longest
    elif length < longest:
        raise ValueError(f"pad_batch: length={length} is shorter than the longest sequence ({longest}); nothing is cut")
    out = np.full((len(seqs), length), pad_id, dtype=np.int64)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = seq
    return out


@dataclass
class Batch:
    """One padded batch for a sequence-to-sequence model (teacher forcing).

    For a target sentence ``y``: the decoder reads ``tgt_in = <bos> y`` and
    learns to predict ``tgt_out = y <eos>``, one position ahead.

    Attributes:
        src: source ids, ``[B, S]`` int64, padded with ``pad_id``.
        tgt_in: decoder input, ``[B, T]`` int64.
        tgt_out: decoder target, ``[B, T]`` int64 (``pad_id`` where there is no target).
        n_src_tokens: non-pad tokens in ``src``.
        n_tgt_tokens: non-pad tokens in ``tgt_out`` (what the loss is averaged over).
        indices: the dataset indices of the examples, in row order (or None).
        pad_id: the padding id used.
    """

    src: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    n_src_tokens: int
    n_tgt_tokens: int
    indices: list[int] | None = None
    pad_id: int = PAD_ID

    def __len__(self) -> int:
        """Number of examples (rows)."""
        return self.src.shape[0]

    @property
    def src_mask(self) -> np.ndarray:
        """Boolean ``[B, S]``: True at real (non-pad) source tokens."""
        return self.src != self.pad_id

    @property
    def tgt_mask(self) -> np.ndarray:
        """Boolean ``[B, T]``: True where ``tgt_out`` holds a real target."""
        return self.tgt_out != self.pad_id


def static_shape(width: int, max_tokens: int, multiple: int = 8, limit: int | None = None) -> tuple:
    """(rows, columns) that every batch of padded width ``width`` is padded to, for a batcher
    that must emit a small, fixed set of shapes (a step captured once per shape, say).

    columns = ``width`` rounded up to a multiple of ``multiple``; rows = the most examples
    batch_by_tokens can put in a batch of any width that rounds to those columns, which is
    max_tokens // (columns - multiple + 1). The shapes are then one per multiple of ``multiple``
    up to the longest example: a few dozen at most. The padding is masked like any other.
    ``limit`` caps the columns (a model's positions), at the cost of one more shape."""
    if width < 1 or multiple < 1:
        raise ValueError(f"static_shape: width and multiple must be >= 1, got {width} and {multiple}")
    if limit is not None and width > limit:
        raise ValueError(f"static_shape: width {width} is over the limit {limit}")
    columns = -(-width // multiple) * multiple
    rows = max(1, max_tokens // (columns - multiple + 1))
    return rows, columns if limit is None else min(columns, limit)


def make_batch(
    src_seqs: Sequence[Sequence[int]],
    tgt_seqs: Sequence[Sequence[int]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    indices: Sequence[int] | None = None,
    shape: tuple | None = None,
) -> Batch:
    """Build a :class:`Batch` from unpadded id lists (without ``<bos>``/``<eos>``).

    The source is used as given; add ``<eos>`` to it beforehand if your model
    wants one. ``shape`` (rows, columns), e.g. from :func:`static_shape`: every
    array is padded to it, with rows of padding only after the real ones (the
    token counts stay those of the real examples).
    """
    if len(src_seqs) != len(tgt_seqs):
        raise ValueError(f"{len(src_seqs)} source sequences but {len(tgt_seqs)} target sequences")
    rows, columns = shape if shape is not None else (len(src_seqs), None)
    if rows < len(src_seqs):
        raise ValueError(f"make_batch: shape {shape} has fewer rows than the {len(src_seqs)} examples")
    padding = [[]] * (rows - len(src_seqs))
    src = pad_batch([*src_seqs, *padding], pad_id, columns)
    tgt_in = pad_batch([*([bos_id, *t] for t in tgt_seqs), *padding], pad_id, columns)
    tgt_out = pad_batch([*([*t, eos_id] for t in tgt_seqs), *padding], pad_id, columns)
    return Batch(
        src=src,
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        n_src_tokens=int(sum(len(s) for s in src_seqs)),
        n_tgt_tokens=int(sum(len(t) + 1 for t in tgt_seqs)),
        indices=None if indices is None else [int(i) for i in indices],
        pad_id=pad_id,
    )
