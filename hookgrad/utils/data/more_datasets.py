"""Datasets and samplers added by the census, published in ``hookgrad.utils.data``.

Mirrors: ``torch.utils.data.ChainDataset``, ``StackDataset``, ``WeightedRandomSampler``,
``distributed.DistributedSampler`` (``DistributedSampler`` is in `hookgrad.utils.data.distributed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from hookgrad._dtypes import float64
from hookgrad._functional import creation as C
from hookgrad._functional import random as R
from hookgrad.utils.data.dataset import Dataset, IterableDataset
from hookgrad.utils.data.sampler import Sampler

__all__ = ["ChainDataset", "StackDataset", "WeightedRandomSampler"]


class ChainDataset(IterableDataset):
    """Iterate several iterable datasets one after another. Mirrors: ``torch.utils.data.ChainDataset``."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset):
    """Zip datasets of equal length into tuples (positional) or dicts (keywords).

    Mirrors: ``torch.utils.data.StackDataset``.
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        parts = list(args) or list(kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(self._length != len(d) for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args if args else kwargs

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class WeightedRandomSampler(Sampler[int]):
    """Draw `num_samples` indices with probabilities proportional to `weights`.

    Mirrors: ``torch.utils.data.WeightedRandomSampler``.
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = C.as_tensor(weights, dtype=float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        rand = R.multinomial(self.weights, self.num_samples, self.replacement,
                             generator=self.generator)
        yield from iter(rand.tolist())

    def __len__(self) -> int:
        return self.num_samples


def _publish() -> None:
    from hookgrad.utils import data
    for name in __all__:
        cls = globals()[name]
        setattr(data, name, cls)
    from hookgrad.utils.data import dataset, distributed, sampler
    data.distributed = distributed
    data.DistributedSampler = distributed.DistributedSampler
    dataset.ChainDataset, dataset.StackDataset = ChainDataset, StackDataset
    sampler.WeightedRandomSampler = WeightedRandomSampler


_publish()
