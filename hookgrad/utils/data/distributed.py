"""`DistributedSampler`: each replica reads its own shard of the (shuffled) indices.

Mirrors: ``torch.utils.data.distributed.DistributedSampler``; the shuffle uses a generator
seeded with ``seed + epoch`` so every replica draws the same permutation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from hookgrad._functional import random as R
from hookgrad.utils.data.dataset import Dataset
from hookgrad.utils.data.sampler import Sampler

__all__ = ["DistributedSampler", "Dataset", "Sampler"]


def _default_group() -> tuple[int, int]:
    import importlib
    dist = importlib.import_module("hookgrad.distributed")
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    """Mirrors: ``torch.utils.data.distributed.DistributedSampler``."""

    def __init__(self, dataset: Dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            world, me = _default_group()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)  # type: ignore[arg-type]
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = R.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = R.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Reseed the shuffle for a new epoch."""
        self.epoch = epoch
