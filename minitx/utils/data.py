"""Datasets and a DataLoader with PyTorch's names and behaviour (``torch.utils.data``), so that

    from minitx.utils.data import DataLoader, TensorDataset, random_split

ports a training loop by renaming torch to minitx::

    train, val = random_split(TensorDataset(x, y), [0.9, 0.1])
    for epoch in range(n_epochs):
        for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
            ...

A *dataset* is anything with ``len(ds)`` and ``ds[i]`` (a map-style dataset; a Python list
is one). The *sampler* says in which order the indices are visited; the DataLoader cuts that
order into batches and *collates* each batch: the samples' tensors, arrays and numbers are
stacked into tensors with a new first axis, field by field.

What differs from PyTorch:

* everything runs in the calling process: ``num_workers`` can only be 0, and
  ``pin_memory`` is accepted and ignored (minitx has no page-locked host memory);
* the shuffles draw from minitx's seeded CPU generator (``minitx.random``), not from a
  ``generator=`` argument: ``minitx.manual_seed`` repeats them, and a state saved with
  ``minitx.random.get_state()`` between epochs resumes the same order;
* no IterableDataset and no ``batch_sampler``; collated mappings come back as plain dicts.
"""
from __future__ import annotations

import bisect
import collections.abc
import itertools
import math
import warnings

import numpy as np

from minitx.autograd import Tensor, tensor
from minitx.creation import as_tensor, randperm
from minitx.functional import stack

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "DataLoader", "default_collate", "default_convert"]


# ---------------------------------------------------------------- datasets


class Dataset:
    """Base of map-style datasets: a subclass defines ``__getitem__(index)`` (one sample) and
    ``__len__`` (how many). ``a + b`` chains two datasets into a ConcatDataset."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index), returning one sample")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__(), the number of samples")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: the i-th row of each tensor, say inputs and labels."""

    def __init__(self, *tensors):
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) > 1:
            raise ValueError(f"TensorDataset: the tensors' first axes differ (sizes {sizes}); each tensor "
                             f"needs one row per sample")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("ConcatDataset: absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)  # the first dataset ending after index
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]

    def __len__(self):
        return self.cumulative_sizes[-1]


def random_split(dataset, lengths) -> list:
    """Split ``dataset`` at random into non-overlapping Subsets of the given ``lengths``.

    ``lengths`` are sample counts summing to ``len(dataset)``, or fractions summing to 1:
    each split then gets ``floor(fraction * len(dataset))`` samples and the remainder is dealt
    out one by one from the first split on (PyTorch's rule, so the sizes equal PyTorch's).
    The permutation comes from minitx's CPU generator: ``minitx.manual_seed`` repeats it.
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1")
        counts = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {list(lengths)} sum to {sum(lengths)}, not to the dataset's "
                         f"length {n}")
    order = randperm(n, device="cpu").tolist()
    return [Subset(dataset, order[end - length:end]) for end, length in zip(itertools.accumulate(lengths), lengths)]


# ---------------------------------------------------------------- samplers


class Sampler:
    """Base of the samplers: iterating one gives the dataset indices of one epoch, in order."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__(), yielding dataset indices")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1, every epoch."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation of the indices every epoch, drawn from minitx's CPU generator when
    the epoch's first index is asked for (as PyTorch's RandomSampler draws)."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        yield from randperm(len(self.data_source), device="cpu").tolist()

    def __len__(self):
        return len(self.data_source)


# ---------------------------------------------------------------- collating


_TEXT_KINDS = "SUO"  # NumPy dtype kinds of strings, bytes and objects, which no tensor holds


def default_collate(batch):
    """A list of samples as one batch, with PyTorch's ``default_collate`` rules:

    * tensors are stacked (``minitx.stack``, so they stay on their device); NumPy arrays
      become tensors first and NumPy scalars keep their dtype;
    * Python ints (and bools) make an int64 (bool) tensor, and Python floats a float64 one,
      as PyTorch's (its ``torch.tensor(batch, dtype=torch.float64)``); the first sample's type
      decides, so ``[1, 2.5]`` gives float32, as ``tensor([1, 2.5])``;
    * dicts, tuples, named tuples and lists are collated field by field (a tuple gives a
      list, as PyTorch's does); strings are not collated: the batch's strings come back as
      they were gathered (a list of them, or a tuple for a field of tuple samples).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in _TEXT_KINDS:
            raise TypeError(_collate_error(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):  # before float: np.float64 is a float
        return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype="float64")
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple keeps its type
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(field) for field in zip(*batch)]
    raise TypeError(_collate_error(type(elem)))


def _collate_error(found) -> str:
    return f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {found}"


def default_convert(data):
    """One sample as the DataLoader gives it with ``batch_size=None`` (PyTorch's
    ``default_convert``): NumPy arrays and scalars become tensors, dicts, tuples and lists are
    converted field by field (a tuple gives a list), and the rest, Python numbers included,
    stays as it is."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.bool_, np.number)) and data.dtype.kind not in _TEXT_KINDS:
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


# ---------------------------------------------------------------- the loader


class DataLoader:
    """Batches of ``dataset``, one epoch per iteration: ``for xb, yb in loader: ...``.

    Args:
        dataset: a map-style dataset (``len`` and ``[i]``).
        batch_size: samples per batch; None gives the samples one by one, each through
            ``default_convert`` (no new batch axis).
        shuffle: visit the samples in a new random order every epoch (a RandomSampler).
        sampler: an iterable of indices to visit instead (then leave ``shuffle`` False).
        drop_last: drop the last batch when it holds fewer than ``batch_size`` samples.
        collate_fn: turns a list of samples into a batch (default: ``default_collate``).
        num_workers: only 0: minitx loads in the calling process, so an epoch's order and its
            random draws are those of one readable loop.
        pin_memory: accepted for ported code and ignored: minitx has no page-locked host memory.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, num_workers=0, collate_fn=None,
                 pin_memory=False, drop_last=False):
        if num_workers != 0:
            raise ValueError(f"DataLoader: num_workers={num_workers!r} is not supported: minitx loads batches in "
                             f"the calling process (no worker processes); use num_workers=0")
        if batch_size is None:
            if drop_last:
                raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually "
                                 "exclusive with drop_last")
        elif isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
        if collate_fn is None:
            collate_fn = default_convert if batch_size is None else default_collate
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.collate_fn = sampler, collate_fn
        self.num_workers, self.pin_memory = num_workers, pin_memory

    def __iter__(self):
        if self.batch_size is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        indices = []
        for index in self.sampler:
            indices.append(index)
            if len(indices) == self.batch_size:
                yield self.collate_fn([self.dataset[i] for i in indices])
                indices = []
        if indices and not self.drop_last:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        """The number of batches in an epoch."""
        n = len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
