"""Mirrors: ``torch.utils.data._utils`` (the ``collate`` module tools extend)."""

from __future__ import annotations

from hookgrad.utils.data._utils import collate

__all__ = ["collate"]
