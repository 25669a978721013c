"""The version gate of ``torch.utils.tensorboard`` (no packaging dependency)."""

from __future__ import annotations

import re


def too_old(version: str | None) -> bool:
    """True when `version` is missing or below 1.15 (TensorBoard's first PyTorch-ready release)."""
    if not version:
        return True
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    return tuple(parts + [0] * (2 - len(parts))) < (1, 15)
