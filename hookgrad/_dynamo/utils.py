"""Mirrors ``torch._dynamo.utils`` (``counters``)."""

from __future__ import annotations

from hookgrad.compile.core.counters import counters

__all__ = ["counters"]
