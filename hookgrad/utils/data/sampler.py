"""Index samplers. Mirrors: ``torch.utils.data.sampler``.

NOTE [Data RNG]
Every random draw of ``hookgrad.utils.data`` goes through `_randperm` / `_randint` below, which
use hookgrad's generators (``hookgrad.randperm`` / ``hookgrad.randint``), which reproduce
PyTorch's CPU stream (NOTE [Random streams]); with the same draws in the same places as
PyTorch's samplers (and the loader iterator's base-seed draw), a shuffle equals torch's order
for the same seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sized
from typing import Any, Generic, TypeVar

from hookgrad._dtypes import int64
from hookgrad._functional.creation import empty
from hookgrad._functional.random import Generator, randint, randperm

__all__ = [
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


def _randperm(n: int, generator: Any = None) -> list[int]:
    """A random permutation of ``range(n)`` (see NOTE [Data RNG])."""
    return randperm(n, generator=generator).tolist()


def _randint(high: int, count: int, generator: Any = None) -> list[int]:
    """`count` integers drawn uniformly from ``[0, high)`` (see NOTE [Data RNG])."""
    return randint(0, high, (count,), dtype=int64, generator=generator).tolist()


def _fresh_generator() -> Any:
    """A generator seeded from the default one, as torch's samplers do without ``generator``."""
    seed = int(empty((), dtype=int64).random_().item())
    return Generator().manual_seed(seed)


class Sampler(Generic[_T_co]):
    """Base class: an iterable over dataset indices (or lists of indices).

    Subclasses implement ``__iter__`` and, where they can, ``__len__``.

    Mirrors: ``torch.utils.data.Sampler``.
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Yield ``0, 1, ..., len(data_source) - 1`` in order.

    Args:
        data_source: the dataset (only its length is used).

    Mirrors: ``torch.utils.data.SequentialSampler``.
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Yield a random permutation of the indices (or draws with replacement).

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw with replacement.
        num_samples: number of indices to yield (default ``len(data_source)``).
        generator: a ``hookgrad.Generator``; without one, each epoch seeds a fresh generator
            from the default one (so ``hookgrad.manual_seed`` makes it reproducible).

    Raises:
        TypeError: `replacement` is not a bool.
        ValueError: `num_samples` is not a positive integer.

    Mirrors: ``torch.utils.data.RandomSampler`` (NOTE [Data RNG]).
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                "replacement should be a boolean value, but got replacement="
                f"{self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got num_samples="
                f"{self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (the dataset's current length by default).

        Mirrors: ``torch.utils.data.RandomSampler.num_samples``.
        """
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _randint(n, 32, generator)
            yield from _randint(n, self.num_samples % 32, generator)
        else:
            for _ in range(self.num_samples // n):
                yield from _randperm(n, generator)
            yield from _randperm(n, generator)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """Yield the given indices in a random order.

    Args:
        indices: the indices to permute.
        generator: a ``hookgrad.Generator`` (default: the global one).

    Mirrors: ``torch.utils.data.SubsetRandomSampler``.
    """

    def __init__(self, indices: Any, generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[list[int]]):
    """Group the indices of another sampler into lists of `batch_size`.

    Args:
        sampler: any iterable of indices.
        batch_size: size of each batch.
        drop_last: drop the last batch if it is shorter than `batch_size`.

    Raises:
        ValueError: `batch_size` is not a positive int, or `drop_last` is not a bool.

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]

    Mirrors: ``torch.utils.data.BatchSampler``.
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"drop_last should be a boolean value, but got drop_last={drop_last}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[sampler_iter] * self.batch_size, strict=False):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size

# PyTorch's ``__all__`` also lists these
__all__ += ["WeightedRandomSampler"]
