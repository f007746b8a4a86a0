"""minitx.utils.data against torch.utils.data: the same batches (values, dtypes, shapes, nesting)
without shuffling, from map-style and iterable datasets, through batch samplers; the same lengths,
split sizes, signatures and refusals; and the random samplers checked by what they must draw,
from minitx's seeded generator (repeated by manual_seed, resumed by get_state/set_state) or from
a minitx.Generator of their own."""
import collections
import inspect
import json

import numpy as np
import pytest

import minitx
from minitx import random as mrandom
from minitx.utils import data
from minitx.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                               RandomSampler, SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                               WeightedRandomSampler, default_collate, random_split)
from torch_reference import import_torch

Point = collections.namedtuple("Point", "x y")


@pytest.fixture
def torch():
    return import_torch()


def assert_same(ours, theirs, torch):
    """A batch of ours equals PyTorch's: tensors of the same shape, dtype and values, in the
    same containers (lists, dicts, namedtuples), and the same plain values elsewhere."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, minitx.Tensor), f"expected a tensor, got {ours!r}"
        assert ours.shape == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, (list, tuple, dict)):
        assert type(ours) is type(theirs)
        if isinstance(theirs, dict):
            assert list(ours) == list(theirs)
            ours, theirs = list(ours.values()), list(theirs.values())
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, torch)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def assert_loaders_same(ours, theirs, torch):
    """Two loaders give the same number of batches, as ``len`` says and as iterated, equal one by one."""
    assert len(ours) == len(theirs)
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(a, b, torch)


def assert_refused_alike(ours, theirs):
    """Both calls raise the same type of error, ours with PyTorch's message (prefixed with the
    class where PyTorch's does not name it)."""
    with pytest.raises(Exception) as their_error:
        theirs()
    with pytest.raises(type(their_error.value)) as our_error:
        ours()
    assert str(our_error.value).endswith(str(their_error.value))


def samples():
    """Python datasets of each kind of sample default_collate knows (fresh arrays each call)."""
    rng = np.random.default_rng(0)
    return {
        "tuples": [(i, i / 3, rng.standard_normal(2).astype(np.float32), np.int32(i), f"s{i}") for i in range(7)],
        "dicts": [{"x": rng.integers(0, 9, (2, 3)), "label": i % 2 == 0, "w": np.float64(i)} for i in range(7)],
        "namedtuples": [Point(np.arange(3) + i, [i, -i]) for i in range(7)],
        "numbers": [1, 2.5, 3, 4],  # the first sample's type decides: float32, as torch.tensor([1, 2.5])
        "floats": [2.5, 1, 3.0],
    }


@pytest.mark.parametrize("batch_size", [1, 3, 4, None])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("kind", list(samples()))
def test_batches_equal_pytorchs(torch, kind, batch_size, drop_last):
    if batch_size is None and drop_last:
        return
    data = samples()[kind]
    assert_loaders_same(DataLoader(data, batch_size=batch_size, drop_last=drop_last),
                        torch.utils.data.DataLoader(data, batch_size=batch_size, drop_last=drop_last), torch)


def streams(torch, data, with_len=True):
    """The same samples as a minitx and a PyTorch IterableDataset, with or without a ``len``."""
    def stream(base):
        methods = {"__iter__": lambda self: iter(data)}
        if with_len:
            methods["__len__"] = lambda self: len(data)
        return type("Stream", (base,), methods)()

    return stream(IterableDataset), stream(torch.utils.data.IterableDataset)


@pytest.mark.parametrize("batch_size", [1, 3, 4, None])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("kind", ["tuples", "dicts", "numbers"])
def test_iterable_datasets_batch_as_pytorchs(torch, kind, batch_size, drop_last):
    if batch_size is None and drop_last:
        return
    ours, theirs = streams(torch, samples()[kind])
    assert_loaders_same(DataLoader(ours, batch_size=batch_size, drop_last=drop_last),
                        torch.utils.data.DataLoader(theirs, batch_size=batch_size, drop_last=drop_last), torch)
    (ours_a, theirs_a), (ours_b, theirs_b) = streams(torch, range(5)), streams(torch, range(10, 13))
    assert_loaders_same(DataLoader(ours_a + ours_b, batch_size=batch_size, drop_last=drop_last),
                        torch.utils.data.DataLoader(theirs_a + theirs_b, batch_size=batch_size, drop_last=drop_last),
                        torch)


def test_iterable_datasets_without_len_and_their_refusals(torch):
    ours, theirs = streams(torch, list(range(7)), with_len=False)
    loader = DataLoader(ours, batch_size=3)
    assert [b.tolist() for b in loader] == [b.tolist() for b in torch.utils.data.DataLoader(theirs, batch_size=3)]
    assert list(ours) == list(range(7)) and loader.sampler is None
    for dataset in (ours, theirs):
        with pytest.raises(TypeError):
            len(dataset)
    with pytest.raises(TypeError, match="Stream has no len"):
        len(loader)
    DataLoader(ours, shuffle=False)  # False is as good as unspecified, as in PyTorch
    for option in ({"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0, 1]]}):
        assert_refused_alike(lambda: DataLoader(ours, **option), lambda: torch.utils.data.DataLoader(theirs, **option))
    with pytest.raises(NotImplementedError, match="Empty must define __iter__"):
        iter(type("Empty", (IterableDataset,), {})())
    with pytest.raises(TypeError, match="ConcatDataset: got an IterableDataset .* at index 1"):
        ConcatDataset([range(2), ours])
    with pytest.raises(TypeError, match="ChainDataset: expected IterableDatasets, got range at index 0"):
        ChainDataset([range(2), ours])


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("sampler", [range(10), [4, 2, 9, 0, 1], []], ids=["range", "list", "empty"])
def test_batch_sampler_and_batch_sampler_loaders_equal_pytorchs(torch, sampler, drop_last):
    ours, theirs = BatchSampler(sampler, 3, drop_last), torch.utils.data.BatchSampler(sampler, 3, drop_last)
    assert len(ours) == len(theirs) and list(ours) == list(theirs)
    values = samples()["dicts"] * 2
    ours = DataLoader(values, batch_sampler=BatchSampler(sampler, 3, drop_last))
    theirs = torch.utils.data.DataLoader(values, batch_sampler=torch.utils.data.BatchSampler(sampler, 3, drop_last))
    assert_loaders_same(ours, theirs, torch)
    assert (ours.batch_size, ours.drop_last) == (theirs.batch_size, theirs.drop_last) == (None, False)
    batches = [[5], [0, 3, 1], [2, 2]]  # any iterable of lists of indices
    assert_loaders_same(DataLoader(values, batch_sampler=batches),
                        torch.utils.data.DataLoader(values, batch_sampler=batches), torch)


def test_the_loader_batches_through_a_batch_sampler():
    """A few of the cases compared with PyTorch above, written out: they hold where torch is absent."""
    loader = DataLoader(range(11), batch_size=3, drop_last=True)
    assert isinstance(loader.batch_sampler, BatchSampler) and isinstance(loader.sampler, SequentialSampler)
    assert list(loader.batch_sampler) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(loader) == 3
    assert DataLoader(range(10), batch_size=None).batch_sampler is None
    stream = type("Stream", (IterableDataset,), {"__iter__": lambda self: iter(range(11))})()
    assert list(stream) == list(range(11))  # list() takes len()'s TypeError as "no length"
    assert [b.tolist() for b in DataLoader(stream, batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert [b.tolist() for b in DataLoader(stream, batch_size=3)][-1] == [9, 10]
    with pytest.raises(ValueError, match="DataLoader: batch_sampler option is mutually exclusive with .* drop_last"):
        DataLoader(range(4), batch_sampler=[[0]], drop_last=True)


# calls PyTorch refuses, each written once for a module m: minitx.utils.data or torch.utils.data
REFUSED = {
    "batch_sampler+batch_size": lambda m: m.DataLoader(range(4), batch_sampler=[[0]], batch_size=2),
    "batch_sampler+shuffle": lambda m: m.DataLoader(range(4), batch_sampler=[[0]], shuffle=True),
    "batch_sampler+sampler": lambda m: m.DataLoader(range(4), batch_sampler=[[0]], sampler=[0]),
    "batch_sampler+drop_last": lambda m: m.DataLoader(range(4), batch_sampler=[[0]], drop_last=True),
    "batch_size 0": lambda m: m.DataLoader(range(4), batch_size=0),
    "drop_last 1": lambda m: m.DataLoader(range(4), drop_last=1),
    "BatchSampler batch_size True": lambda m: m.BatchSampler(range(4), True, False),
    "BatchSampler batch_size 2.0": lambda m: m.BatchSampler(range(4), 2.0, False),
    "RandomSampler replacement 1": lambda m: m.RandomSampler(range(4), replacement=1),
    "RandomSampler num_samples 0": lambda m: m.RandomSampler(range(4), num_samples=0),
    "RandomSampler empty": lambda m: m.RandomSampler(range(0)),
    "WeightedRandomSampler num_samples -1": lambda m: m.WeightedRandomSampler([1.0, 2.0], -1),
    "WeightedRandomSampler replacement 0": lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, replacement=0),
    "WeightedRandomSampler 2-d": lambda m: m.WeightedRandomSampler([[1.0, 2.0], [3.0, 4.0]], 2),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refusals_equal_pytorchs(torch, name):
    assert_refused_alike(lambda: REFUSED[name](data), lambda: REFUSED[name](torch.utils.data))


def test_signatures_are_pytorchs(torch):
    """The arguments have PyTorch's names in PyTorch's order, so positional calls port too
    (of DataLoader's, pin_memory_device, deprecated, and in_order, for workers, are left out)."""
    for name in ("DataLoader", "BatchSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
                 "random_split", "ChainDataset", "ConcatDataset"):
        ours = list(inspect.signature(getattr(data, name)).parameters)
        theirs = list(inspect.signature(getattr(torch.utils.data, name)).parameters)
        assert ours == [p for p in theirs if p not in ("pin_memory_device", "in_order")], name
    assert set(data.__all__) <= set(dir(torch.utils.data))


@pytest.mark.parametrize("batch_size, drop_last", [(4, False), (4, True), (10, False), (32, True), (None, False)])
def test_tensor_dataset_equals_pytorchs(torch, batch_size, drop_last):
    x = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
    y = np.arange(10) % 3
    ours = DataLoader(TensorDataset(minitx.tensor(x), minitx.tensor(y)), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                         batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs) == len(list(ours))
    for a, b in zip(ours, theirs):
        assert isinstance(a, tuple) == isinstance(b, tuple)
        assert_same(list(a), list(b), torch)


def test_collate_refuses_what_pytorchs_refuses(torch):
    for batch in ([np.array(["a", "b"])] * 2, [object()] * 2, [[1, 2], [3]]):
        with pytest.raises((TypeError, RuntimeError)) as theirs:
            torch.utils.data.default_collate(batch)
        with pytest.raises(type(theirs.value), match="default_collate"):
            default_collate(batch)


@pytest.mark.parametrize("n, lengths", [(10, [3, 7]), (30, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
                                        (10, [0.33, 0.33, 0.34]), (7, [0.25] * 4), (1, [1])])
def test_random_split_sizes_equal_pytorchs(torch, n, lengths):
    theirs = [len(s) for s in torch.utils.data.random_split(range(n), lengths)]
    splits = random_split(range(n), lengths)
    assert [len(s) for s in splits] == theirs
    drawn = [i for s in splits for i in s]
    assert sorted(drawn) == list(range(n))  # disjoint and covering


def test_random_split_warns_and_refuses_as_pytorch():
    with pytest.warns(UserWarning, match="index 2 is 0"):
        random_split(range(2), [0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match=r"sum to 9, not to the dataset's length 10"):
        random_split(range(10), [4, 5])
    with pytest.raises(ValueError, match="index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, 1.5, -1.0])


def test_random_split_refuses_counts_that_overlap_or_leave_out(torch):
    """PyTorch checks only the lengths' sum: [6, -1, 5] of 10 gives splits sharing a sample (one
    drawn twice) and [12, -2] none wrong; minitx refuses a negative count, and one not whole."""
    shared = torch.utils.data.random_split(range(10), [6, -1, 5])
    assert len([i for part in shared for i in part]) == 11  # PyTorch's: a sample in two splits
    for lengths in ([6, -1, 5], [12, -2]):
        with pytest.raises(ValueError, match=r"random_split: length at index 1 is -\d; each length should be a "
                                             r"sample count >= 0"):
            random_split(range(10), lengths)
    with pytest.raises(ValueError, match="length at index 0 is 2.5; each length should be a sample count"):
        random_split(range(10), [2.5, 7.5])
    assert [len(part) for part in random_split(range(5), np.array([2, 3]))] == [2, 3]  # NumPy ints are counts


def epochs(loader, n=2):
    return [[int(i) for batch in loader for i in batch] for _ in range(n)]


def test_shuffle_repeats_under_manual_seed():
    loader = DataLoader(range(50), batch_size=8, shuffle=True)
    minitx.manual_seed(3)
    first, second = epochs(loader)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second  # each epoch draws a new order
    minitx.manual_seed(3)
    assert epochs(DataLoader(range(50), batch_size=8, shuffle=True)) == [first, second]
    minitx.manual_seed(3)
    assert [s.indices for s in random_split(range(50), [0.5, 0.5])] == [first[:25], first[25:]]


def test_get_state_between_epochs_resumes_the_order():
    loader = DataLoader(range(20), batch_size=3, shuffle=True)
    minitx.manual_seed(0)
    epochs(loader, 1)
    state = json.loads(json.dumps(mrandom.get_state()))  # as a checkpoint keeps it
    after = epochs(loader, 2)
    minitx.manual_seed(99)
    mrandom.set_state(state)
    assert epochs(loader, 2) == after


def test_random_sampler_visits_num_samples_indices():
    minitx.manual_seed(2)
    rounds = list(RandomSampler(range(5), num_samples=12))
    assert len(rounds) == len(RandomSampler(range(5), num_samples=12)) == 12
    assert sorted(rounds[:5]) == sorted(rounds[5:10]) == list(range(5)) and len(set(rounds[10:])) == 2
    minitx.manual_seed(2)
    assert list(RandomSampler(range(5), num_samples=12)) == rounds
    drawn = list(RandomSampler(range(10), replacement=True, num_samples=5000))
    assert len(drawn) == 5000 and set(drawn) == set(range(10))
    counts = np.bincount(drawn)
    assert np.abs(counts - 500).max() < 5 * np.sqrt(500 * 0.9)  # uniform, within 5 standard errors


def test_subset_random_sampler_permutes_the_indices():
    indices = [7, 3, 11, 0, 5]
    sampler = SubsetRandomSampler(indices)
    minitx.manual_seed(4)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == sorted(indices) and first != second and len(sampler) == 5
    minitx.manual_seed(4)
    assert [list(sampler), list(sampler)] == [first, second]
    minitx.manual_seed(4)
    loader = DataLoader(range(20), sampler=sampler, batch_size=2)
    assert [i for batch in loader for i in batch.tolist()] == first


def test_weighted_random_sampler_draws_with_the_weights():
    weights = [1.0, 0.0, 3.0, 6.0]
    minitx.manual_seed(5)
    drawn = list(WeightedRandomSampler(weights, 40_000))
    counts = np.bincount(drawn, minlength=4)
    expected = 40_000 * np.array(weights) / 10
    assert counts[1] == 0  # a weight of 0: never drawn
    assert (np.abs(counts - expected) < 5 * np.sqrt(expected * (1 - expected / 40_000)) + 1).all()
    minitx.manual_seed(5)
    assert list(WeightedRandomSampler(weights, 40_000)) == drawn
    for _ in range(50):
        once = list(WeightedRandomSampler(weights, 3, replacement=False))
        assert sorted(once) == [0, 2, 3]  # distinct, and never the weight 0
    assert len(WeightedRandomSampler(weights, 7)) == 7


def test_weighted_random_sampler_without_replacement_refuses_weight_zero_draws(torch):
    """PyTorch's sampler then draws an index of weight 0 too; minitx refuses, weight 0 meaning never."""
    assert 1 in list(torch.utils.data.WeightedRandomSampler([1.0, 0.0, 3.0, 6.0], 4, replacement=False))
    with pytest.raises(ValueError, match=r"WeightedRandomSampler: cannot draw num_samples=4 distinct indices "
                                         r"\(replacement=False\) from 3 weights > 0"):
        WeightedRandomSampler([1.0, 0.0, 3.0, 6.0], 4, replacement=False)


@pytest.mark.parametrize("weights, what", [([2.0, -1.0], "a negative weight"), ([0.0, 0.0], "only weights of 0"),
                                           ([1.0, float("nan")], "a NaN or infinite weight"),
                                           ([1.0, float("inf")], "a NaN or infinite weight"), ([], "no weights")])
def test_weighted_random_sampler_refuses_weights_that_are_no_chances_when_made(weights, what):
    """PyTorch's sampler takes them and fails at the first epoch, in multinomial's name."""
    with pytest.raises(ValueError, match=rf"^WeightedRandomSampler: weights must be finite, >= 0 and not all 0 "
                                         rf"\(each sample's chance\), got {what}$"):
        WeightedRandomSampler(weights, 2)


RANDOM_SAMPLERS = {
    "RandomSampler": lambda g: RandomSampler(range(30), generator=g),
    "RandomSampler(replacement)": lambda g: RandomSampler(range(30), replacement=True, num_samples=40, generator=g),
    "SubsetRandomSampler": lambda g: SubsetRandomSampler(list(range(0, 60, 2)), generator=g),
    "WeightedRandomSampler": lambda g: WeightedRandomSampler(np.arange(30.0), 40, generator=g),
    "WeightedRandomSampler(no replacement)": lambda g: WeightedRandomSampler(np.arange(30.0), 20, False, g),
    "random_split": lambda g: [i for part in random_split(range(30), [0.5, 0.5], generator=g) for i in part],
}


@pytest.mark.parametrize("name", RANDOM_SAMPLERS)
def test_a_generator_gives_a_sampler_its_own_repeatable_draws(name):
    """Seeded alike, two generators give the same orders, whatever the global generator drew; the
    global generator is left as it was; other seeds give other orders."""
    make = RANDOM_SAMPLERS[name]
    minitx.manual_seed(0)
    first = list(make(minitx.Generator().manual_seed(1)))
    minitx.manual_seed(9)
    minitx.randn(5)
    before = mrandom.get_state()
    assert list(make(minitx.Generator().manual_seed(1))) == first
    assert mrandom.get_state() == before
    assert list(make(minitx.Generator().manual_seed(2))) != first


def test_loaders_with_generators_shuffle_apart_and_resume():
    def loader(seed):
        return DataLoader(range(30), batch_size=4, shuffle=True, generator=minitx.Generator().manual_seed(seed))

    alone = epochs(loader(1), 3)
    a, b = loader(1), loader(2)
    interleaved = []
    for _ in range(3):  # b's epochs between a's do not move a's orders
        interleaved += epochs(a, 1)
        epochs(b, 1)
    assert interleaved == alone and epochs(loader(2), 1) != alone[:1]
    g = minitx.Generator().manual_seed(1)
    shuffled = DataLoader(range(30), batch_size=4, shuffle=True, generator=g)
    epochs(shuffled, 1)
    state = json.loads(json.dumps(g.get_state()))  # between epochs, as a checkpoint keeps it
    g.set_state(minitx.Generator().manual_seed(3).get_state())
    assert epochs(shuffled, 2) != alone[1:]
    g.set_state(state)
    assert epochs(shuffled, 2) == alone[1:]


@pytest.mark.parametrize("name, value", [("batch_size", 3), ("sampler", [0]), ("batch_sampler", [[0]]),
                                         ("drop_last", True), ("dataset", range(9)), ("persistent_workers", False)])
def test_what_a_loader_batches_by_is_not_set_after_init(torch, name, value):
    """Set after __init__, batch_size and the rest would change nothing (the batches are cut by the
    batch sampler __init__ made): refused, as PyTorch refuses them; collate_fn may be set."""
    assert_refused_alike(lambda: setattr(DataLoader(range(6), batch_size=2), name, value),
                         lambda: setattr(torch.utils.data.DataLoader(range(6), batch_size=2), name, value))
    loader = DataLoader(range(6), batch_size=2)
    loader.collate_fn = sum
    assert list(loader) == [1, 5, 9] and len(loader) == 3


def test_an_epochs_iterator_has_the_loaders_len(torch):
    """iter(loader) has a len, the loader's (PyTorch's iterator has one), and still yields each batch once."""
    for options in ({"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None}):
        ours, theirs = DataLoader(range(10), **options), torch.utils.data.DataLoader(range(10), **options)
        epoch = iter(ours)
        assert len(epoch) == len(iter(theirs)) == len(ours)
        assert iter(epoch) is epoch
        assert [np.asarray(b).tolist() for b in epoch] == [np.asarray(b).tolist() for b in theirs]
    with pytest.raises(TypeError, match="Stream has no len"):
        len(iter(DataLoader(streams(torch, range(3), with_len=False)[0], batch_size=2)))


def test_sampler_and_its_length():
    loader = DataLoader(range(10), batch_size=4, sampler=[9, 0, 5])
    assert [b.tolist() for b in loader] == [[9, 0, 5]] and len(loader) == 1
    assert isinstance(DataLoader(range(3), shuffle=True).sampler, RandomSampler)


def test_datasets():
    parts = ConcatDataset([range(3), [10, 11]])
    assert len(parts) == 5 and [parts[i] for i in range(5)] == [0, 1, 2, 10, 11] and parts[-1] == 11
    assert list(Subset(range(10), [7, 2])) == [7, 2]

    class Squares(Dataset):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 3

    both = Squares() + Squares()
    assert isinstance(both, ConcatDataset) and [both[i] for i in range(6)] == [0, 1, 4, 0, 1, 4]


def test_a_dataset_without_len_is_read_as_pytorchs(torch):
    """A Dataset subclass with __getitem__ alone has no len(): a TypeError, as in PyTorch (whose
    Dataset has no __len__), so list(ds) reads it up to its IndexError instead of failing."""
    def three(base):
        def getitem(self, i):
            if i >= 3:
                raise IndexError(i)
            return i * i
        return type("Squares", (base,), {"__getitem__": getitem})()

    ours, theirs = three(Dataset), three(torch.utils.data.Dataset)
    assert list(ours) == list(theirs) == [0, 1, 4]
    for dataset in (ours, theirs):
        with pytest.raises(TypeError):
            len(dataset)
    with pytest.raises(TypeError, match="Squares has no len"):
        len(DataLoader(ours, batch_size=2))


def test_errors_name_the_class_and_the_reason():
    class Empty(Dataset):
        pass

    with pytest.raises(NotImplementedError, match="Empty must define __getitem__"):
        Empty()[0]
    with pytest.raises(ValueError, match=r"TensorDataset: .*sizes \[3, 4\]"):
        TensorDataset(minitx.zeros(3, 2), minitx.zeros(4))
    with pytest.raises(ValueError, match="DataLoader: num_workers=2 .* calling process"):
        DataLoader(range(4), num_workers=2)
    with pytest.raises(ValueError, match="DataLoader: batch_size=None .* drop_last"):
        DataLoader(range(4), batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="BatchSampler: batch_size should be a positive integer"):
        BatchSampler(range(4), 0, False)
    with pytest.raises(ValueError, match="DataLoader: sampler option is mutually exclusive with shuffle"):
        DataLoader(range(4), shuffle=True, sampler=[0])
    DataLoader(range(4), pin_memory=True)  # accepted, and nothing to do


@pytest.mark.parametrize("kw, message", [(dict(batch_size=0), "batch_size should be a positive integer value, "
                                                               "but got batch_size=0"),
                                         (dict(batch_size=-1), "batch_size should be .* but got batch_size=-1"),
                                         (dict(batch_size=2.0), "batch_size should be .* but got batch_size=2.0"),
                                         (dict(batch_size=3, drop_last=1), "drop_last should be a boolean value, "
                                                                           "but got drop_last=1")])
def test_the_loaders_batch_arguments_are_refused_in_its_name(kw, message):
    """Not in the name of the BatchSampler it makes, which the user never called (PyTorch's does that)."""
    with pytest.raises(ValueError, match=f"^DataLoader: {message}"):
        DataLoader(range(10), **kw)


@pytest.mark.parametrize("name", [*RANDOM_SAMPLERS, "DataLoader"])
def test_a_generator_that_is_not_minitxs_is_refused_where_it_is_given(name):
    """A torch.Generator (what ported code passes) or a number is refused at construction, naming the
    class and what to pass; it used to pass there and fail at the first batch, naming neither."""
    torch = import_torch()
    make = RANDOM_SAMPLERS.get(name, lambda g: DataLoader(range(10), batch_size=4, shuffle=True, generator=g))
    where = name.split("(")[0]
    for wrong in (torch.Generator().manual_seed(0), 0):
        with pytest.raises(TypeError, match=rf"^{where}: generator should be a minitx.Generator or None, got "
                                            rf"{type(wrong).__module__}\.{type(wrong).__qualname__}; .*"
                                            r"minitx.Generator\(\).manual_seed\(n\)"):
            make(wrong)


@pytest.mark.parametrize("option, value", [("num_workers", 2), ("timeout", 5.0), ("worker_init_fn", print),
                                           ("multiprocessing_context", "spawn"), ("prefetch_factor", 2),
                                           ("persistent_workers", True)])
def test_worker_options_take_only_pytorchs_defaults(option, value):
    loader = DataLoader(range(4))
    assert (loader.num_workers, loader.timeout, loader.worker_init_fn, loader.multiprocessing_context,
            loader.prefetch_factor, loader.persistent_workers) == (0, 0, None, None, None, False)
    with pytest.raises(ValueError, match=f"DataLoader: {option}=.* is not supported: it sets .* calling process"):
        DataLoader(range(4), **{option: value})


@pytest.mark.gpu
def test_gpu_tensors_stay_on_the_gpu():
    x = minitx.arange(12, device="cuda").reshape(6, 2)
    xb, yb = next(iter(DataLoader(TensorDataset(x, x.sum(axis=1)), batch_size=4)))
    assert xb.device == yb.device == x.device and xb.shape == (4, 2)
    np.testing.assert_array_equal(xb.numpy(), np.arange(8).reshape(4, 2))
