"""Mirrors: ``torch.utils.data.backward_compatibility`` (a deprecated no-op worker hook)."""

from __future__ import annotations

import warnings

__all__ = ["worker_init_fn"]


def worker_init_fn(worker_id: int) -> None:
    """Did per-worker datapipe sharding; `DataLoader` now does it itself, so this only warns.
    Mirrors: ``torch.utils.data.backward_compatibility.worker_init_fn``."""
    warnings.warn("Usage of `backward_compatibility.worker_init_fn` is deprecated as "
                  "`DataLoader` automatically applies sharding in every worker",
                  FutureWarning, stacklevel=2)
