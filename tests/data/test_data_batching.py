"""Tests for token-budget batching, padding and Batch construction."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitx.data import Batch, batch_by_tokens, example_lengths, filter_by_length, make_batch, pad_batch


def make_data(lengths):
    """Fake id sequences with the given (src_len, tgt_len) pairs."""
    src = [list(range(5, 5 + s)) for s, _ in lengths]
    tgt = [list(range(7, 7 + t)) for _, t in lengths]
    return src, tgt


def batches_quietly(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return batch_by_tokens(*args, **kwargs)


length_pairs = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=200)


@settings(max_examples=150, deadline=None)
@given(
    length_pairs,
    st.integers(1, 400),
    st.booleans(),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(1, 50),
)
def test_batching_properties(lengths, max_tokens, shuffle, seed, epoch, bucket_size):
    src, tgt = make_data(lengths)
    batches = batches_quietly(
        src, tgt, max_tokens, shuffle=shuffle, seed=seed, epoch=epoch, bucket_size=bucket_size
    )
    # Every example appears exactly once.
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert all(len(b) > 0 for b in batches)
    # Padded cost within budget, except for singleton batches of oversize examples.
    widths = example_lengths(src, tgt)
    for b in batches:
        cost = len(b) * max(widths[i] for i in b)
        assert cost <= max_tokens or (len(b) == 1 and widths[b[0]] > max_tokens)
    # Same arguments, same batches.
    again = batches_quietly(
        src, tgt, max_tokens, shuffle=shuffle, seed=seed, epoch=epoch, bucket_size=bucket_size
    )
    assert again == batches


def test_cost_is_batch_size_times_longest_side():
    # src lengths 3, tgt lengths 5 (+1 for <bos>/<eos>) -> width 6 per example.
    src, tgt = make_data([(3, 5)] * 10)
    batches = batch_by_tokens(src, tgt, max_tokens=24, shuffle=False)
    assert [len(b) for b in batches] == [4, 4, 2]
    assert example_lengths(src, tgt, tgt_extra_tokens=0).tolist() == [5] * 10


def test_no_shuffle_sorts_by_length_and_keeps_ties_in_order():
    src, tgt = make_data([(5, 5), (1, 1), (5, 5), (2, 2), (1, 1)])
    batches = batch_by_tokens(src, tgt, max_tokens=1000, shuffle=False)
    assert batches == [[1, 4, 3, 0, 2]]


def test_similar_lengths_are_grouped():
    rng = np.random.default_rng(0)
    lengths = [(int(n), int(n)) for n in rng.integers(1, 50, size=2000)]
    src, tgt = make_data(lengths)
    batches = batch_by_tokens(src, tgt, max_tokens=500, seed=1)
    widths = example_lengths(src, tgt)
    padded = sum(len(b) * max(widths[i] for i in b) for b in batches)
    real = int(widths.sum())
    assert padded < 1.15 * real  # little padding thanks to sorting within buckets


def test_epochs_and_seeds_differ():
    src, tgt = make_data([(n % 30 + 1, n % 17 + 1) for n in range(500)])
    e0 = batch_by_tokens(src, tgt, max_tokens=200, seed=0, epoch=0)
    e1 = batch_by_tokens(src, tgt, max_tokens=200, seed=0, epoch=1)
    s1 = batch_by_tokens(src, tgt, max_tokens=200, seed=1, epoch=0)
    assert e0 == batch_by_tokens(src, tgt, max_tokens=200, seed=0, epoch=0)
    assert e0 != e1 and e0 != s1


def test_oversize_examples_get_own_batch_with_warning():
    src, tgt = make_data([(3, 3), (50, 2), (3, 3), (2, 80)])
    with pytest.warns(UserWarning, match="2 example"):
        batches = batch_by_tokens(src, tgt, max_tokens=20, shuffle=False)
    assert [1] in batches and [3] in batches
    assert sorted(i for b in batches for i in b) == [0, 1, 2, 3]


def test_max_batch_size():
    src, tgt = make_data([(2, 2)] * 25)
    batches = batch_by_tokens(src, tgt, max_tokens=10_000, max_batch_size=8, seed=3)
    assert sorted(len(b) for b in batches) == [1, 8, 8, 8]


@pytest.mark.parametrize("cap", [0, -4])
def test_a_cap_of_no_examples_is_an_error_not_batches_of_one(cap):
    src, tgt = make_data([(2, 2)] * 5)
    with pytest.raises(ValueError, match=f"batch_by_tokens: max_batch_size must be positive, or None for no cap; "
                                         f"got {cap}"):
        batch_by_tokens(src, tgt, max_tokens=10_000, max_batch_size=cap)


def test_bad_arguments():
    src, tgt = make_data([(1, 1)])
    with pytest.raises(ValueError):
        batch_by_tokens(src, tgt, max_tokens=0)
    with pytest.raises(ValueError, match="examples"):
        batch_by_tokens(src, tgt + tgt, max_tokens=10)


def test_empty_dataset():
    assert batch_by_tokens([], [], max_tokens=10) == []


def test_filter_by_length_counts_drops():
    src, tgt = make_data([(3, 3), (11, 2), (2, 12), (10, 10), (0, 4)])
    kept, dropped = filter_by_length(src, tgt, max_len=10)
    assert kept == [0, 3] and dropped == 3
    kept, dropped = filter_by_length(src, tgt, max_len=11, max_tgt_len=12, min_len=0)
    assert kept == [0, 1, 2, 3, 4] and dropped == 0


def test_pad_batch():
    out = pad_batch([[5, 6, 7], [8], []], pad_id=0)
    assert out.dtype == np.int64 and out.shape == (3, 3)
    assert out.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert pad_batch([[1]], pad_id=9, length=3).tolist() == [[1, 9, 9]]
    assert pad_batch([], pad_id=0).shape == (0, 0)
    with pytest.raises(ValueError):
        pad_batch([[1, 2]], length=1)


@given(st.lists(st.lists(st.integers(4, 100), max_size=10), min_size=1, max_size=8))
def test_pad_batch_property(seqs):
    out = pad_batch(seqs, pad_id=0)
    assert out.shape == (len(seqs), max(len(s) for s in seqs))
    for row, seq in zip(out, seqs):
        assert row[: len(seq)].tolist() == seq
        assert (row[len(seq):] == 0).all()


def test_make_batch_teacher_forcing_layout():
    batch = make_batch([[10, 11, 12], [13]], [[20, 21], [22, 23, 24]], pad_id=0, bos_id=1, eos_id=2,
                       indices=[7, 3])
    assert isinstance(batch, Batch) and len(batch) == 2
    assert batch.src.tolist() == [[10, 11, 12], [13, 0, 0]]
    assert batch.tgt_in.tolist() == [[1, 20, 21, 0], [1, 22, 23, 24]]
    assert batch.tgt_out.tolist() == [[20, 21, 2, 0], [22, 23, 24, 2]]
    assert batch.n_src_tokens == 4
    assert batch.n_tgt_tokens == 7 == int(batch.tgt_mask.sum())
    assert batch.src_mask.tolist() == [[True, True, True], [True, False, False]]
    assert batch.indices == [7, 3]
    assert batch.src.dtype == batch.tgt_in.dtype == batch.tgt_out.dtype == np.int64


def test_pad_batch_refuses_a_length_that_would_cut_a_sequence_naming_itself():
    with pytest.raises(ValueError, match=r"pad_batch: length=2 is shorter than the longest sequence \(3\)"):
        pad_batch([[5, 6, 7], [5]], length=2)
    assert pad_batch([[5, 6, 7], [5]], length=4).tolist() == [[5, 6, 7, 0], [5, 0, 0, 0]]
