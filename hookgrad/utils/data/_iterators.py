"""The iterator objects ``iter(DataLoader)`` returns.

Mirrors: ``torch.utils.data.dataloader._BaseDataLoaderIter`` and its subclasses. Training
frameworks (Lightning) test ``isinstance(it, _BaseDataLoaderIter)`` to know that an iterator
belongs to a DataLoader, and read ``_num_yielded``. ``iter(loader)`` is a
`_SingleProcessDataLoaderIter` without workers and a `_MultiProcessingDataLoaderIter` with them,
as in PyTorch; both load in the calling process (the workers are in-process, see `_workers`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from hookgrad._dtypes import int64
from hookgrad._functional.creation import empty

__all__ = ["_BaseDataLoaderIter", "_SingleProcessDataLoaderIter",
           "_MultiProcessingDataLoaderIter", "_collate_fn_t", "_worker_init_fn_t"]

_T = TypeVar("_T")
_collate_fn_t = Callable[[list[_T]], Any]
_worker_init_fn_t = Callable[[int], None]


def _warn_pin_memory(loader: Any) -> None:
    """PyTorch's warnings, on every ``iter(loader)``, for pinned memory that cannot be used
    (hookgrad has no accelerator, so ``pin_memory=True`` always draws the second one)."""
    pin = getattr(loader, "pin_memory", False)
    if pin and getattr(loader, "pin_memory_device", ""):
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as "
                      f"the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                      stacklevel=3)
    if pin:
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", stacklevel=3)


class _BaseDataLoaderIter:
    """One pass over a `DataLoader` (``len`` and the count of batches yielded so far).

    Mirrors: ``torch.utils.data.dataloader._BaseDataLoaderIter``.
    """

    def __init__(self, loader: Any, batches: Iterator[Any]) -> None:
        self._dataset = loader.dataset
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._batches = batches
        _warn_pin_memory(loader)
        # PyTorch draws the workers' base seed from the loader's generator on every iter(),
        # even without workers; drawing it keeps the random stream in step with PyTorch's
        self._base_seed = int(empty((), dtype=int64).random_(  # type: ignore[attr-defined]
            generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __next__(self) -> Any:
        data = next(self._batches)
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader: Any, first_iter: bool = False) -> None:
        self._num_yielded = 0

    def __getstate__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a loader that reads in the calling process.

    Mirrors: ``torch.utils.data.dataloader._SingleProcessDataLoaderIter``.
    """


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a loader with workers (in-process ones here; see the module docstring).

    Mirrors: ``torch.utils.data.dataloader._MultiProcessingDataLoaderIter``.
    """

    def _shutdown_workers(self) -> None:
        """Nothing to stop: hookgrad's workers are not processes."""
