"""DataLoader workers (``num_workers > 0``) load what PyTorch's worker processes load: each
worker's torch/random/NumPy generators seeded as PyTorch seeds them, `get_worker_info`,
``worker_init_fn``, the batch-to-worker order, iterable datasets sharded by worker, and
persistent workers carrying their streams across epochs (found with a dataset that augments
with ``torch.rand`` inside ``__getitem__``: hookgrad drew from the main stream)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import hookgrad


def _scenario(lib, workers, **kwargs):
    D = lib.utils.data

    class Augmented(D.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            info = D.get_worker_info()
            return (i, -1 if info is None else info.id, lib.rand(2), random.random(),
                    float(np.random.rand()))

    class Stream(D.IterableDataset):
        def __iter__(self):
            info = D.get_worker_info()
            lo, step = (0, 1) if info is None else (info.id, info.num_workers)
            for i in range(lo, 7, step):
                yield i, lib.randint(0, 100, (1,))

    def init_fn(wid):  # runs in the worker (a child process in PyTorch): reseeds its stream
        info = D.get_worker_info()
        assert info.id == wid and info.seed == lib.initial_seed()
        lib.manual_seed(info.seed + 7 * info.num_workers)

    lib.manual_seed(3)
    random.seed(3)
    np.random.seed(3)
    out = []
    loader = D.DataLoader(Augmented(), batch_size=3, shuffle=True, num_workers=workers,
                          worker_init_fn=init_fn, **kwargs)
    for _ in range(2):
        for i, wid, r, py, npy in loader:
            out.append((i.tolist(), wid.tolist(), r.tolist(), py.tolist(), npy.tolist()))
    for i, r in D.DataLoader(Stream(), batch_size=2, num_workers=workers):
        out.append((i.tolist(), r.view(-1).tolist()))
    out.append(lib.rand(3).tolist())  # the main stream after all of it
    return out, D.get_worker_info()


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("persistent", [False, True])
def test_worker_randomness_and_order_match(torch, workers, persistent):
    if persistent and workers == 0:
        pytest.skip("persistent_workers needs workers")
    kwargs = {"persistent_workers": True} if persistent else {}
    want = _scenario(torch, workers, **kwargs)
    got = _scenario(hookgrad, workers, **kwargs)
    assert got == want


def test_worker_info_is_read_only_and_prints_as_pytorch(torch):
    from torch.utils.data._utils.worker import WorkerInfo as TorchInfo

    from hookgrad.utils.data._workers import WorkerInfo
    a, b = TorchInfo(id=1, num_workers=2, seed=5, dataset=None), \
        WorkerInfo(id=1, num_workers=2, seed=5, dataset=None)
    assert repr(a) == repr(b)
    for info in (a, b):
        with pytest.raises(AttributeError):
            info.id = 3


@pytest.mark.parametrize("workers", [0, 1, 64])
def test_too_many_workers_warn_as_pytorch(torch, workers):
    import warnings

    def caught(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.utils.data.DataLoader([1, 2], num_workers=workers)
        return [(x.category, str(x.message)) for x in w]
    assert caught(hookgrad) == caught(torch)
