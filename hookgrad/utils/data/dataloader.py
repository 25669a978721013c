"""`DataLoader`: batches of samples from a dataset. Mirrors: ``torch.utils.data.DataLoader``.

Loading happens in the calling process. With ``num_workers > 0`` no processes are started, but
each batch is loaded as the PyTorch worker that would load it: with that worker's seeded
generators, `get_worker_info` and ``worker_init_fn`` (`_workers`), in PyTorch's order.
"""

from __future__ import annotations

import itertools
import logging
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from hookgrad.utils.data._collate import default_collate, default_convert
from hookgrad.utils.data._iterators import (  # noqa: F401 - PyTorch's names in this module
    _BaseDataLoaderIter,
    _collate_fn_t,
    _MultiProcessingDataLoaderIter,
    _SingleProcessDataLoaderIter,
    _worker_init_fn_t,
)
from hookgrad.utils.data._workers import Worker, check_worker_number, current_worker
from hookgrad.utils.data.datapipe import IterDataPipe, MapDataPipe  # noqa: F401 - torch's too
from hookgrad.utils.data.dataset import Dataset, IterableDataset  # noqa: F401 - torch's too
from hookgrad.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "ExceptionWrapper"]

logger = logging.getLogger(__name__)
_EXHAUSTED = object()  # a worker's stream has no batch left


def get_worker_info() -> Any:
    """The `WorkerInfo` of the loader worker now loading (``id``, ``num_workers``, ``seed``,
    ``dataset``), or None in the main process. hookgrad's workers run in the calling process
    (`_workers`), so the answer is that of the worker whose load is running.

    Mirrors: ``torch.utils.data.get_worker_info``.
    """
    return current_worker()


class ExceptionWrapper:
    """An exception and its formatted traceback, re-raised later with where it happened.

    Mirrors: ``torch._utils.ExceptionWrapper`` (exported by ``torch.utils.data.dataloader``).
    """

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]  # not exc_info itself: a traceback keeps frames alive
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        """Raise a new exception of the wrapped type carrying the original traceback text."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type that cannot be built from one message
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError shows the traceback text unquoted."""

    def __repr__(self) -> str:
        return self

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


class _InfiniteConstantSampler(Sampler[None]):
    """Yields ``None`` forever: the index sampler of an `IterableDataset`."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a map-style `Dataset` (anything with ``__getitem__``/``__len__``) or an
            `IterableDataset`.
        batch_size: samples per batch; ``None`` disables automatic batching.
        shuffle: reshuffle at every epoch (a `RandomSampler` with `generator`).
        sampler: the index order (exclusive with `shuffle`).
        batch_sampler: yields lists of indices (exclusive with batch_size/shuffle/sampler/
            drop_last).
        num_workers: how many (in-process) workers load batches, in turn.
        collate_fn: merges a list of samples (default `default_collate`, or `default_convert`
            without automatic batching).
        pin_memory: accepted for parity (no effect on the CPU backend).
        drop_last: drop the last incomplete batch.
        timeout: must be non-negative (unused in-process).
        worker_init_fn: called with the worker id when each worker starts (as that worker).
        multiprocessing_context: accepted for parity.
        generator: the ``hookgrad.Generator`` used by the default `RandomSampler`.
        prefetch_factor: only valid with ``num_workers > 0``.
        persistent_workers: only valid with ``num_workers > 0``.
        pin_memory_device: accepted for parity.
        in_order: accepted for parity.

    Raises:
        ValueError: the option combinations torch rejects, with torch's messages.

    Example:
        >>> import hookgrad
        >>> from hookgrad.utils.data import TensorDataset
        >>> loader = DataLoader(TensorDataset(hookgrad.arange(5)), batch_size=2)
        >>> [b[0].tolist() for b in loader], len(loader)
        ([[0, 1], [2, 3], [4]], 3)

    Mirrors: ``torch.utils.data.DataLoader`` (single process; see module docstring).
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        check_worker_number(num_workers)

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__dict__.get("_DataLoader__initialized", False) and attr in _FROZEN:
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is "
                "initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            batches = self._iter_stream() if self._is_iterable else self._iter_map()
            return _SingleProcessDataLoaderIter(self, batches)
        kept = self.__dict__.get("_persistent_iterator")
        if self.persistent_workers and kept is not None:
            # PyTorch reuses a persistent iterator: no new base seed, the workers go on
            kept._reset(self)
            kept._batches = self._worker_batches(kept._workers)
            return kept
        it = _MultiProcessingDataLoaderIter(self, iter(()))
        it._workers = [Worker(w, self.num_workers, it._base_seed, self.dataset,
                              self.worker_init_fn) for w in range(self.num_workers)]
        it._batches = self._worker_batches(it._workers)
        if self.persistent_workers:
            self.__dict__["_persistent_iterator"] = it
        return it

    def _worker_batches(self, workers: list) -> Iterator[Any]:
        """Batches loaded by in-process workers in PyTorch's order (see `_workers`)."""
        if not self._is_iterable:
            fetch = self._fetch_indices
            for k, indices in enumerate(self._index_sampler):
                yield workers[k % len(workers)].run(fetch, indices)
            return
        streams = [w.run(iter, self.dataset) for w in workers]
        active = list(range(len(workers)))
        turn = 0
        while active:
            w = turn % len(workers)
            turn += 1
            if w not in active:
                continue
            batch = workers[w].run(self._next_stream_batch, streams[w])
            if batch is _EXHAUSTED:
                active.remove(w)
            else:
                yield batch

    def _fetch_indices(self, indices: Any) -> Any:
        if not self._auto_collation:
            return self.collate_fn(self.dataset[indices])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]
        return self.collate_fn(data)

    def _next_stream_batch(self, it: Iterator[Any]) -> Any:
        if not self._auto_collation:
            item = next(it, _EXHAUSTED)
            return item if item is _EXHAUSTED else self.collate_fn(item)
        batch_size = self.batch_sampler.batch_size
        batch = list(itertools.islice(it, batch_size))
        if not batch or (self.batch_sampler.drop_last and len(batch) < batch_size):
            return _EXHAUSTED
        return self.collate_fn(batch)

    def _iter_map(self) -> Iterator[Any]:
        for indices in self._index_sampler:
            yield self._fetch_indices(indices)

    def _iter_stream(self) -> Iterator[Any]:
        it = iter(self.dataset)
        while (batch := self._next_stream_batch(it)) is not _EXHAUSTED:
            yield batch

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor: int | None,
                          persistent_workers: bool) -> None:
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to disable "
            "multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing.let num_workers "
            "> 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    if shuffle not in {False, None}:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
            f"shuffle={shuffle}"
        )
    if sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified sampler option, but got "
            f"sampler={sampler}"
        )
    if batch_sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
            f"got batch_sampler={batch_sampler}"
        )

# PyTorch's ``__all__`` also lists these
__all__ += ["default_collate", "default_convert"]
