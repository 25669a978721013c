"""Bucket assignment (contracts/distributed.md §4.2): which gradients travel together."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024
MAXSIZE = sys.maxsize


def compute_bucket_assignment_by_size(tensors: Sequence[Any], limits: Sequence[int]
                                      ) -> tuple[list[list[int]], list[int]]:
    """Group tensor indices into buckets of at most ``limits[k]`` bytes (k-th bucket per group).

    Tensors are grouped by ``(dtype, device)``; each is appended to its group's open bucket,
    which closes as soon as its size reaches its cap (the crossing tensor stays in it). Buckets
    come back sorted by their smallest tensor index, with the cap each one used.

    Example:
        >>> import hookgrad
        >>> ts = [hookgrad.zeros(2), hookgrad.zeros(2, dtype=hookgrad.float64), hookgrad.zeros(2)]
        >>> compute_bucket_assignment_by_size(ts, [MAXSIZE])[0]
        [[0, 2], [1]]

    Mirrors: ``torch.distributed._compute_bucket_assignment_by_size``.
    """
    open_buckets: dict[tuple, tuple[list[int], int, int]] = {}  # key -> (indices, bytes, k)
    counts: dict[tuple, int] = {}
    done: list[tuple[list[int], int]] = []
    for i, t in enumerate(tensors):
        key = (str(t.dtype), str(t.device))
        indices, size, k = open_buckets.get(key, ([], 0, counts.get(key, 0)))
        indices.append(i)
        size += t.numel() * t.element_size()
        cap = limits[min(k, len(limits) - 1)]
        if size >= cap:
            done.append((indices, cap))
            counts[key] = k + 1
            open_buckets.pop(key, None)
        else:
            open_buckets[key] = (indices, size, k)
    for key, (indices, _, k) in open_buckets.items():
        done.append((indices, limits[min(k, len(limits) - 1)]))
    done.sort(key=lambda b: b[0][0])
    return [b[0] for b in done], [b[1] for b in done]


def bucket_caps(bucket_cap_mb: float | None,
                bucket_cap_mb_list: list[float] | None = None) -> list[int]:
    """Byte caps of buckets 0, 1, ... (the last repeats) for DDP's arguments (§4.1):
    ``[1 MiB, 25 MiB]`` by default, ``[X, X]`` for ``bucket_cap_mb=X``, or the explicit list."""
    if bucket_cap_mb_list is not None:
        if not bucket_cap_mb_list or any(not x > 0 for x in bucket_cap_mb_list):
            raise ValueError("bucket_cap_mb_list must be a non-empty list of positive sizes")
        return [int(x * 1024 * 1024) for x in bucket_cap_mb_list]
    if bucket_cap_mb is None:
        return [_DEFAULT_FIRST_BUCKET_BYTES, _DEFAULT_BUCKET_BYTES]
    cap = int(bucket_cap_mb * 1024 * 1024)
    return [cap, cap]
