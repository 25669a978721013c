"""Mirrors: ``torch.accelerator.graphs`` (graph capture needs an accelerator)."""

from __future__ import annotations

from typing import Any

from hookgrad.accelerator._none import NO_DEVICE

__all__ = ["Graph"]


class Graph:
    """Mirrors: ``torch.accelerator.Graph`` (cannot be created without an accelerator)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(NO_DEVICE)
