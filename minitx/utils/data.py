"""Datasets and a DataLoader with PyTorch's names and behaviour (``torch.utils.data``), so that

    from minitx.utils.data import DataLoader, TensorDataset, random_split

ports a training loop by renaming torch to minitx::

    train, val = random_split(TensorDataset(x, y), [0.9, 0.1])
    for epoch in range(n_epochs):
        for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
            ...

A *dataset* is anything with ``len(ds)`` and ``ds[i]`` (a map-style dataset; a Python list
is one), or an IterableDataset, which yields its samples in an order of its own (a stream).
A *sampler* says in which order a map-style dataset's indices are visited (SequentialSampler,
RandomSampler, SubsetRandomSampler, WeightedRandomSampler); a BatchSampler cuts that order, or
an iterable dataset's stream, into batches; and the DataLoader *collates* each batch: the
samples' tensors, arrays and numbers are stacked into tensors with a new first axis, field by field.

What differs from PyTorch:

* everything runs in the calling process: ``num_workers`` can only be 0, and ``timeout``,
  ``worker_init_fn``, ``multiprocessing_context``, ``prefetch_factor`` and ``persistent_workers``
  only their defaults; ``pin_memory`` is accepted and ignored (minitx has no page-locked host
  memory); there is no ``get_worker_info`` (an IterableDataset is read by one process);
* the random draws come from a ``generator=`` (a ``minitx.Generator``, CPU only) or, without
  one, from minitx's seeded global CPU generator (``minitx.random``): ``minitx.manual_seed``
  repeats them, and a state saved between epochs (``minitx.random.get_state()``, or the
  generator's ``get_state()``) resumes the same order. The numbers are not PyTorch's;
* WeightedRandomSampler with ``replacement=False`` refuses more ``num_samples`` than it has
  weights > 0 (PyTorch's then draws indices of weight 0 as well);
* random_split refuses a negative or fractional sample count (PyTorch's checks only the sum,
  so ``[6, -1, 5]`` of 10 gives splits sharing a sample);
* over an IterableDataset the loader's ``sampler`` is None (PyTorch's: an endless sampler of
  Nones), and nothing warns when the dataset yields more samples than its ``len`` said;
* collated mappings come back as plain dicts; there is no DistributedSampler or StackDataset.
"""
from __future__ import annotations

import bisect
import collections.abc
import itertools
import math
import warnings

import numpy as np

from minitx.autograd import Tensor, tensor
from minitx.autograd.tensor import named
from minitx.creation import as_tensor, multinomial, randint, randperm
from minitx.functional import stack
from minitx.random import Generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DataLoader", "default_collate", "default_convert"]


# ---------------------------------------------------------------- datasets


class Dataset:
    """Base of map-style datasets: a subclass defines ``__getitem__(index)`` (one sample) and
    ``__len__`` (how many). ``a + b`` chains two datasets into a ConcatDataset."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index), returning one sample")

    def __len__(self):
        # a TypeError, as for any object without a len: list(ds) and len-probing code take that as
        # "unknown length" and go on (a NotImplementedError broke them; PyTorch's Dataset has no __len__)
        raise TypeError(f"{type(self).__name__} has no len(): a Dataset must define __len__(), the number of "
                        f"samples")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base of iterable datasets: a subclass defines ``__iter__``, yielding the samples in an order
    of its own (lines read from a file, samples made on the fly), where indexing makes no sense.
    A DataLoader batches them as they come, so it takes no sampler and no shuffle. ``len`` is
    there only where a subclass defines ``__len__``. ``a + b`` chains two into a ChainDataset."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__(), yielding the samples")

    def __len__(self):
        # a TypeError, as for any object without a len (list() asks for one and takes that as "unknown")
        raise TypeError(f"{type(self).__name__} has no len(): it is an IterableDataset without __len__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: the i-th row of each tensor, say inputs and labels."""

    def __init__(self, *tensors):
        for k, t in enumerate(tensors):  # (a tensor or an array: what has rows to index)
            if not getattr(t, "shape", ()):
                raise TypeError(f"TensorDataset: tensor {k} must be a tensor with a first axis (one row per sample), "
                                f"got {type(t).__name__}{' of shape ()' if hasattr(t, 'shape') else ''}")
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
        for i, dataset in enumerate(self.datasets):
            if isinstance(dataset, IterableDataset):
                raise TypeError(f"ConcatDataset: got an IterableDataset ({type(dataset).__name__}) at index {i}, "
                                f"which has no indices; chain iterable datasets with ChainDataset")
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


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets one after the other, each read as the chain gets to it."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableDataset):
                raise TypeError(f"ChainDataset: expected IterableDatasets, got {type(dataset).__name__} at index {i}; "
                                f"join map-style datasets with ConcatDataset")

    def __iter__(self):
        return itertools.chain.from_iterable(self.datasets)

    def __len__(self):
        return sum(len(dataset) for dataset in self.datasets)


def random_split(dataset, lengths, generator=None) -> list:
    """Split ``dataset`` at random into non-overlapping Subsets of the given ``lengths``.

    ``lengths`` are sample counts (ints >= 0) summing to ``len(dataset)``, or fractions summing to 1:
    each split then gets ``floor(fraction * len(dataset))`` samples and the remainder is dealt
    out one by one from the first split on (PyTorch's rule, so the sizes equal PyTorch's).
    The permutation comes from ``generator`` (a minitx.Generator: ``Generator().manual_seed(42)``
    fixes the split whatever else is drawn) or minitx's CPU generator (``minitx.manual_seed``
    repeats it).
    """
    _check_generator("random_split", generator)
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
    # PyTorch checks only the sum, and then slices by the running total: a negative length makes
    # two splits overlap (a sample in both, say train and validation) or leaves samples out
    for i, length in enumerate(lengths):
        if not hasattr(length, "__index__") or length < 0:
            raise ValueError(f"random_split: length at index {i} is {length!r}; each length should be a "
                             f"sample count >= 0 (an int), or all of them fractions summing to 1")
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {list(lengths)} sum to {sum(lengths)}, not to the dataset's "
                         f"length {n}")
    order = randperm(n, device="cpu", generator=generator).tolist()
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
    """The indices in a random order, drawn anew every epoch when its first index is asked for
    (as PyTorch's RandomSampler draws).

    ``num_samples`` indices are visited (default: ``len(data_source)``). Without ``replacement``
    each round is a permutation of all the indices (the last round cut short); with it, each
    index is drawn on its own, so some repeat and others are left out. The draws come from
    ``generator`` (a minitx.Generator) or, without one, minitx's global CPU generator.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        _check_bool(type(self).__name__, "replacement", replacement, TypeError)
        _check_count(type(self).__name__, "num_samples", self.num_samples)
        _check_generator(type(self).__name__, generator)

    @property
    def num_samples(self) -> int:
        """How many indices an epoch visits."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            yield from randint(n, (self.num_samples,), device="cpu", generator=self.generator).tolist()
            return
        for start in range(0, self.num_samples, n):
            yield from randperm(n, device="cpu", generator=self.generator).tolist()[:self.num_samples - start]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order every epoch: say, the training part of a
    dataset split by hand, with ``SubsetRandomSampler(val_indices)`` for the rest."""

    def __init__(self, indices, generator=None):
        _check_generator(type(self).__name__, generator)
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in randperm(len(self.indices), device="cpu", generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``0 .. len(weights) - 1`` per epoch, index i drawn with a chance
    proportional to ``weights[i]`` (they need not sum to 1); weight each sample 1 / (its class's
    count), say, to see rare classes as often as common ones.

    With ``replacement=False`` the indices drawn in an epoch are distinct, so there can be no
    more of them than weights > 0: a weight of 0 means "never", and minitx refuses what would
    break that (PyTorch's then draws indices of weight 0 too). The draws come from
    ``generator`` (a minitx.Generator) or, without one, minitx's global CPU generator.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_count(type(self).__name__, "num_samples", num_samples)
        _check_bool(type(self).__name__, "replacement", replacement, ValueError)
        _check_generator(type(self).__name__, generator)
        weights = as_tensor(weights, dtype="float64", device="cpu")
        if weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given weights have "
                             f"shape {weights.shape}")
        values = weights.numpy()
        bad = ("no weights" if values.size == 0 else "a NaN or infinite weight" if not np.isfinite(values).all()
               else "a negative weight" if (values < 0).any() else "only weights of 0" if not values.sum() > 0
               else None)
        if bad is not None:
            raise ValueError(f"WeightedRandomSampler: weights must be finite, >= 0 and not all 0 (each sample's "
                             f"chance), got {bad}")  # (found here, not at the first draw an epoch later)
        drawable = int(np.count_nonzero(values > 0))
        if not replacement and num_samples > drawable:
            raise ValueError(f"WeightedRandomSampler: cannot draw num_samples={num_samples} distinct indices "
                             f"(replacement=False) from {drawable} weights > 0; draw at most {drawable}, or "
                             f"pass replacement=True")
        self.weights, self.num_samples, self.replacement, self.generator = weights, num_samples, replacement, generator

    def __iter__(self):
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """What ``sampler`` yields, in lists of ``batch_size``: the DataLoader's batches of indices (and,
    over an IterableDataset, of the samples themselves). ``drop_last`` drops a last list that
    comes out shorter."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_count(type(self).__name__, "batch_size", batch_size)
        _check_bool(type(self).__name__, "drop_last", drop_last, ValueError)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        items = iter(self.sampler)
        while batch := list(itertools.islice(items, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


def _check_count(where: str, name, value) -> None:
    """PyTorch's check of a count (batch_size, num_samples): a whole number > 0, and not a bool.
    ``where``: the class or function the user called (DataLoader, not the BatchSampler it makes)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{where}: {name} should be a positive integer value, but got {name}={value!r}")


def _check_bool(where: str, name, value, error) -> None:
    """PyTorch's check of a flag (replacement, drop_last), with the error type its class raises."""
    if not isinstance(value, bool):
        raise error(f"{where}: {name} should be a boolean value, but got {name}={value!r}")


def _check_generator(where: str, generator) -> None:
    """A ``generator=`` checked where it is given, not at the first draw (an epoch later, say):
    None or a CPU minitx.Generator. PyTorch's torch.Generator, which ported code passes, cannot
    drive minitx's draws."""
    if generator is None or (isinstance(generator, Generator) and generator.device == "cpu"):
        return
    if isinstance(generator, Generator):
        raise ValueError(f"{where}: generator draws on {generator.device!r}; the samplers draw on the CPU: "
                         "expected a CPU minitx.Generator or None")
    raise TypeError(f"{where}: generator should be a minitx.Generator or None, got "
                    f"{type(generator).__module__}.{type(generator).__qualname__}; for a fixed order write "
                    "generator=minitx.Generator().manual_seed(n)")


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
    if isinstance(elem, (float, int)):
        with named("default_collate"):  # (a batch of a number and a string)
            return tensor(batch, dtype="float64" if isinstance(elem, float) else None)
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


# DataLoader's options for PyTorch's worker processes: PyTorch's default and what each sets up.
# minitx loads every batch in the calling process, so it accepts the defaults (they ask for
# nothing) and refuses other values, which would set up workers that are not there.
_WORKER_OPTIONS = {
    "num_workers": (0, "how many worker processes load batches"),
    "timeout": (0, "how long to wait for a worker's batch"),
    "worker_init_fn": (None, "what each worker process runs first"),
    "multiprocessing_context": (None, "how the worker processes are started"),
    "prefetch_factor": (None, "how many batches each worker loads ahead"),
    "persistent_workers": (False, "whether the worker processes outlive an epoch"),
}


def _check_single_process(workers: dict) -> None:
    """Refuse each worker option that is not at PyTorch's default, saying what it would set up."""
    for name, value in workers.items():
        default, sets = _WORKER_OPTIONS[name]
        if value != default:
            raise ValueError(f"DataLoader: {name}={value!r} is not supported: it sets {sets}, and minitx loads "
                             f"batches in the calling process (no worker processes); use {name}={default!r}")


class DataLoader:
    """Batches of ``dataset``, one epoch per iteration: ``for xb, yb in loader: ...``.

    Every batch is built one way: a BatchSampler cuts the sampler's indices (or an
    IterableDataset's samples) into lists, and ``collate_fn`` turns each list into a batch.

    Args:
        dataset: a map-style dataset (``len`` and ``[i]``), or an IterableDataset, whose samples
            are batched as they come (so it takes no shuffle, sampler or batch_sampler).
        batch_size: samples per batch; None gives the samples one by one, each through
            ``default_convert`` (no new batch axis).
        shuffle: visit the samples in a new random order every epoch (a RandomSampler).
        sampler: an iterable of indices to visit instead (then leave ``shuffle`` False).
        batch_sampler: an iterable of lists of indices, one list per batch (then leave
            batch_size, shuffle, sampler and drop_last at their defaults).
        num_workers: only 0: minitx loads in the calling process, so an epoch's order and its
            random draws are those of one readable loop.
        collate_fn: turns a list of samples into a batch (default: ``default_collate``).
        pin_memory: accepted for ported code and ignored: minitx has no page-locked host memory.
        drop_last: drop the last batch when it holds fewer than ``batch_size`` samples.
        timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers:
            set up PyTorch's worker processes; only their defaults are accepted, as there are none.
        generator: a minitx.Generator for shuffle's orders (default: minitx's global CPU generator).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False):
        workers = {"num_workers": num_workers, "timeout": timeout, "worker_init_fn": worker_init_fn,
                   "multiprocessing_context": multiprocessing_context, "prefetch_factor": prefetch_factor,
                   "persistent_workers": persistent_workers}
        _check_single_process(workers)
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # the dataset's own order: nothing may choose indices
            unspecified = {"shuffle": None if shuffle in (None, False) else shuffle, "sampler": sampler,
                           "batch_sampler": batch_sampler}
            for name, value in unspecified.items():
                if value is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                     f"{name}={value}")
        if shuffle is not None and not isinstance(shuffle, (int, np.integer, np.bool_)):  # ("no" reads as True)
            raise TypeError(f"DataLoader: shuffle should be a boolean value, but got shuffle={shuffle!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size = None  # the batch sampler decides the batches' sizes
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")
        _check_generator("DataLoader", generator)
        if batch_size is not None:  # (checked here, not by the BatchSampler made below, which the user never called)
            _check_count("DataLoader", "batch_size", batch_size)
            _check_bool("DataLoader", "drop_last", drop_last, ValueError)
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None:
            batch_sampler = BatchSampler(dataset if self._iterable else sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_convert if batch_sampler is None else default_collate
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler, self.collate_fn = sampler, batch_sampler, collate_fn
        self.pin_memory = pin_memory
        vars(self).update(workers)  # kept as PyTorch keeps them: loader.num_workers is 0
        self._initialized = True

    # what __init__ built the batches from: set afterwards, they would change nothing (the batch
    # sampler is already made), so they are refused, as PyTorch refuses them
    _SET_AT_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")

    def __setattr__(self, name, value):
        if name in self._SET_AT_INIT and vars(self).get("_initialized"):
            raise ValueError(f"DataLoader: {name} attribute should not be set after DataLoader is initialized")
        super().__setattr__(name, value)

    def __iter__(self):
        """One epoch: each batch (each sample, with batch_size=None) through ``collate_fn``."""
        if self._iterable:  # the samples as they come, batched or one by one
            gathered = self.dataset if self.batch_sampler is None else self.batch_sampler
        elif self.batch_sampler is None:
            gathered = (self.dataset[index] for index in self.sampler)
        else:
            gathered = ([self.dataset[i] for i in indices] for indices in self.batch_sampler)
        return _Epoch(map(self.collate_fn, gathered), self)

    def __len__(self):
        """The number of batches in an epoch (of samples, with batch_size=None). Over an
        IterableDataset it is counted from the dataset's ``len``: a TypeError where it has none."""
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.dataset if self._iterable else self.sampler)


class _Epoch:
    """One epoch's batches, as ``iter(loader)`` gives them: an iterator whose ``len`` is the
    loader's, as PyTorch's is, for code that sizes a progress bar or a schedule from
    ``len(iter(loader))`` (a bare map has no len)."""

    def __init__(self, batches, loader):
        self._batches, self._loader = batches, loader

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self):
        return len(self._loader)
