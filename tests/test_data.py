"""`hookgrad.utils.data`: datasets, samplers, collation and the DataLoader.

Shuffled orders cannot equal torch's (different RNG stream, NOTE [Data RNG]): shuffling is
tested for determinism under a seeded generator, for coverage and for batch shapes; everything
deterministic (sequential batches, collation, lengths, errors) is compared with torch.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import hookgrad
from hookgrad.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
    random_split,
)
from tests.optim._oracle import plain, same_as_torch

Point = namedtuple("Point", ["x", "y"])


def _xy(lib, n=10):
    x = lib.arange(n * 3, dtype=lib.float32).reshape(n, 3)
    y = lib.arange(n)
    return x, y


def _sequential_scenario(lib, log):
    ds = lib.utils.data.TensorDataset(*_xy(lib))
    for kwargs in ({"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": 1},
                   {"batch_size": None}):
        loader = lib.utils.data.DataLoader(ds, **kwargs)
        log.append((len(loader), [plain(b) for b in loader]))
    return len(ds)


@pytest.mark.oracle
def test_sequential_batches_match_torch(torch):
    same_as_torch(_sequential_scenario, torch)


class _Samples:
    """A dataset of mixed Python/NumPy samples (any class with __getitem__/__len__ works)."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"t": self.lib.full((2,), float(i)), "f": i / 2, "i": i, "b": i % 2 == 0,
                "s": f"s{i}", "np": np.full(3, i, dtype=np.float32), "npf": np.float32(i),
                "pair": (i, float(i)), "lst": [i, i + 1], "pt": Point(i, -i)}


@pytest.mark.oracle
def test_default_collate_matches_torch(torch):
    def scenario(lib, log):
        batches = list(lib.utils.data.DataLoader(_Samples(lib), batch_size=3))
        return [{k: plain(v) for k, v in b.items()} for b in batches], [
            {k: type(v).__name__ for k, v in b.items()} for b in batches]

    same_as_torch(scenario, torch)


@pytest.mark.oracle
def test_default_collate_errors_match_torch(torch):
    def scenario(lib, log):
        for bad in ([object(), object()], [[1, 2], [3]]):
            try:
                lib.utils.data.default_collate(bad)
            except (TypeError, RuntimeError) as exc:
                log.append((type(exc).__name__, str(exc).split(";")[0]))

    same_as_torch(scenario, torch)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "kwargs",
    [
        {"shuffle": True, "sampler": [0, 1]},
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_sampler": [[0]], "drop_last": True},
        {"batch_size": None, "drop_last": True},
        {"num_workers": -1},
        {"prefetch_factor": 2},
        {"persistent_workers": True},
        {"timeout": -1},
    ],
)
def test_dataloader_option_errors_match_torch(torch, kwargs):
    def scenario(lib, log):
        lib.utils.data.DataLoader(lib.utils.data.TensorDataset(*_xy(lib)), **kwargs)

    _, result = same_as_torch(scenario, torch)
    assert result[0] == "E"


def test_shuffle_is_deterministic_for_a_seeded_generator_and_covers_everything():
    ds = TensorDataset(*_xy(hookgrad, 23))

    def epoch(seed):
        loader = DataLoader(ds, batch_size=5, shuffle=True,
                            generator=hookgrad.Generator().manual_seed(seed))
        return [b[1].tolist() for b in loader], [tuple(b[0].shape) for b in loader]

    first, shapes = epoch(7)
    assert epoch(7)[0] == first
    assert epoch(8)[0] != first
    assert sorted(sum(first, [])) == list(range(23))
    assert first != [list(range(i, min(i + 5, 23))) for i in range(0, 23, 5)]
    assert shapes == [(5, 3)] * 4 + [(3, 3)]


def test_shuffle_reshuffles_every_epoch_and_follows_manual_seed():
    ds = TensorDataset(hookgrad.arange(50))
    loader = DataLoader(ds, batch_size=50, shuffle=True)
    hookgrad.manual_seed(0)
    a, b = (next(iter(loader))[0].tolist() for _ in range(2))
    assert a != b and sorted(a) == sorted(b) == list(range(50))
    hookgrad.manual_seed(0)
    assert next(iter(loader))[0].tolist() == a


def test_drop_last_and_len_with_shuffle():
    ds = TensorDataset(hookgrad.arange(10))
    loader = DataLoader(ds, batch_size=4, shuffle=True, drop_last=True,
                        generator=hookgrad.Generator().manual_seed(1))
    batches = [b[0].tolist() for b in loader]
    assert len(loader) == 2 and [len(b) for b in batches] == [4, 4]


def test_random_sampler_with_replacement_and_num_samples():
    g = hookgrad.Generator().manual_seed(3)
    sampler = RandomSampler(range(4), replacement=True, num_samples=70, generator=g)
    draws = list(sampler)
    assert len(sampler) == len(draws) == 70 and set(draws) <= {0, 1, 2, 3}
    sampler = RandomSampler(range(4), num_samples=10, generator=g)
    draws = list(sampler)
    assert len(draws) == 10 and sorted(draws[:4]) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(4), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(4), replacement=1)


@pytest.mark.oracle
def test_batch_and_sequential_samplers_match_torch(torch):
    def scenario(lib, log):
        data = lib.utils.data
        for drop_last in (False, True):
            bs = data.BatchSampler(data.SequentialSampler(range(7)), 3, drop_last)
            log.append((len(bs), list(bs)))
        for bad in ({"batch_size": 0, "drop_last": False}, {"batch_size": 2, "drop_last": 1}):
            try:
                data.BatchSampler(range(3), **bad)
            except ValueError as exc:
                log.append(str(exc))

    same_as_torch(scenario, torch)


def test_subset_random_sampler_and_custom_batch_sampler():
    sampler = SubsetRandomSampler([10, 20, 30], generator=hookgrad.Generator().manual_seed(0))
    assert sorted(sampler) == [10, 20, 30] and len(sampler) == 3
    ds = TensorDataset(hookgrad.arange(6))
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, False))
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]
    assert len(loader) == 2


@pytest.mark.oracle
def test_subset_and_concat_match_torch(torch):
    def scenario(lib, log):
        data = lib.utils.data
        ds = data.TensorDataset(*_xy(lib, 6))
        sub = data.Subset(ds, [4, 0, 2])
        log.append((len(sub), plain(sub[1]), [plain(s) for s in sub.__getitems__([0, 2])]))
        cat = ds + data.TensorDataset(*_xy(lib, 2))
        log.append((len(cat), plain(cat[6]), plain(cat[-1]), cat.cumulative_sizes))
        return [plain(b) for b in data.DataLoader(sub, batch_size=2)]

    same_as_torch(scenario, torch)


@pytest.mark.oracle
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.34, 0.33, 0.33], [0.5, 0.5]])
def test_random_split_lengths_match_torch(torch, lengths):
    def sizes(lib):
        gen = lib.Generator().manual_seed(0)
        return [len(s) for s in lib.utils.data.random_split(range(10), lengths, generator=gen)]

    assert sizes(hookgrad) == sizes(torch)


def test_random_split_is_a_deterministic_partition():
    def split(seed):
        parts = random_split(range(30), [0.3, 0.3, 0.4],
                             generator=hookgrad.Generator().manual_seed(seed))
        return [list(p) for p in parts]

    parts = split(5)
    assert split(5) == parts and split(6) != parts
    assert sorted(sum(parts, [])) == list(range(30))
    assert all(isinstance(p, Subset) for p in random_split(range(4), [2, 2]))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(4), [2, 3])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [1.0, 0.0])


def test_iterable_dataset_batches_and_len():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    loader = DataLoader(Stream(), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    loader = DataLoader(Stream(), batch_size=3, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]] and len(loader) == 2
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_collate_fn_getitems_and_frozen_attributes():
    class Batched(Dataset):
        def __len__(self):
            return 4

        def __getitems__(self, indices):
            return [("batched", i) for i in indices]

    loader = DataLoader(Batched(), batch_size=3, collate_fn=lambda batch: batch)
    assert list(loader) == [[("batched", 0), ("batched", 1), ("batched", 2)], [("batched", 3)]]
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 2
    assert default_collate([OrderedDict(a=1), OrderedDict(a=2)])["a"].tolist() == [1, 2]
    assert ConcatDataset([range(2), range(3)])[3] == 1


def test_pin_memory_without_accelerator_warns_as_pytorch_on_every_iter(torch):
    """Found running minGPT's Trainer (``DataLoader(pin_memory=True)`` on a CPU machine)."""
    import warnings

    def caught(lib, **kwargs):
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4.)),
                                           batch_size=2, **kwargs)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(2):
                list(loader)
        return [(x.category, str(x.message)) for x in w]

    for kwargs in ({}, {"pin_memory": True}, {"pin_memory": True, "pin_memory_device": "cpu"},
                   {"pin_memory_device": "cpu"}):
        assert caught(hookgrad, **kwargs) == caught(torch, **kwargs)
