"""minitx.utils.data against torch.utils.data: the same batches (values, dtypes, shapes, nesting)
without shuffling, the same lengths and split sizes; and the shuffles drawn from minitx's seeded
generator: repeated by manual_seed, resumed by get_state/set_state."""
import collections
import json

import numpy as np
import pytest

import minitx
from minitx import random as mrandom
from minitx.utils.data import (ConcatDataset, DataLoader, Dataset, RandomSampler, Subset, TensorDataset,
                               default_collate, random_split)
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
    ours = DataLoader(data, batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(data, batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(a, b, torch)


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
    with pytest.raises(ValueError, match="DataLoader: batch_size should be a positive integer"):
        DataLoader(range(4), batch_size=0)
    with pytest.raises(ValueError, match="DataLoader: sampler option is mutually exclusive with shuffle"):
        DataLoader(range(4), shuffle=True, sampler=[0])
    DataLoader(range(4), pin_memory=True)  # accepted, and nothing to do


@pytest.mark.gpu
def test_gpu_tensors_stay_on_the_gpu():
    x = minitx.arange(12, device="cuda").reshape(6, 2)
    xb, yb = next(iter(DataLoader(TensorDataset(x, x.sum(axis=1)), batch_size=4)))
    assert xb.device == yb.device == x.device and xb.shape == (4, 2)
    np.testing.assert_array_equal(xb.numpy(), np.arange(8).reshape(4, 2))
