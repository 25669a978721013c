"""Datasets and dataset combinators. Mirrors: ``torch.utils.data.dataset``."""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from hookgrad._functional.random import Generator, default_generator, randperm  # noqa: F401
from hookgrad._tensor import Tensor  # noqa: F401 - PyTorch's module exports these names too
from hookgrad.utils.data.sampler import _randperm

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset", "random_split",
]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``).

    ``dataset_a + dataset_b`` is a `ConcatDataset`.

    Mirrors: ``torch.utils.data.Dataset``.
    """

    def __getitem__(self, index: Any) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co]):
    """A stream-style dataset: subclasses implement ``__iter__``.

    Mirrors: ``torch.utils.data.IterableDataset`` (no worker sharding: hookgrad's DataLoader
    loads in the calling process).
    """

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset[tuple]):
    """Samples are ``tuple(t[index] for t in tensors)``.

    Args:
        *tensors: tensors with the same size in dimension 0.

    Raises:
        AssertionError: the first dimensions differ.

    Example:
        >>> import hookgrad
        >>> ds = TensorDataset(hookgrad.zeros(4, 2), hookgrad.arange(4))
        >>> len(ds), ds[1][1].item()
        (4, 1)

    Mirrors: ``torch.utils.data.TensorDataset``.
    """

    def __init__(self, *tensors: Any) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset[_T_co]):
    """The concatenation of several map-style datasets.

    Args:
        datasets: the datasets, in order (none may be an `IterableDataset`).

    Raises:
        AssertionError: `datasets` is empty or holds an `IterableDataset`.

    Mirrors: ``torch.utils.data.ConcatDataset``.
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes: list[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)  # type: ignore[arg-type]
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> _T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class Subset(Dataset[_T_co]):
    """The samples of `dataset` at `indices`.

    Args:
        dataset: the whole dataset.
        indices: the selected indices, in order.

    Mirrors: ``torch.utils.data.Subset``.
    """

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator: Any = None
                 ) -> list[Subset]:
    """Split `dataset` at random into non-overlapping `Subset`s.

    Args:
        dataset: the dataset to split.
        lengths: lengths of the splits, or fractions summing to 1 (each floor(frac * len),
            the remainder handed out one by one, round-robin).
        generator: a ``hookgrad.Generator`` (default: the global one).

    Returns:
        One `Subset` per length.

    Raises:
        ValueError: a fraction outside [0, 1], or lengths not summing to ``len(dataset)``.

    Example:
        >>> import hookgrad
        >>> a, b = random_split(range(10), [0.3, 0.7], generator=hookgrad.Generator())
        >>> len(a), len(b)
        (3, 7)

    Mirrors: ``torch.utils.data.random_split`` (NOTE [Data RNG]).
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))  # type: ignore[arg-type]
        remainder = len(dataset) - sum(subset_lengths)  # type: ignore[arg-type]
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(int(sum(lengths)), generator)
    splits, offset = [], 0
    for length in lengths:
        splits.append(Subset(dataset, indices[offset:offset + int(length)]))
        offset += int(length)
    return splits

# PyTorch's ``__all__`` also lists these
__all__ += ["StackDataset", "ChainDataset"]
