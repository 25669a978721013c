"""Mirrors ``torch._dynamo.utils`` (``counters``)."""

from __future__ import annotations

from hookgrad.compile.counters import counters

__all__ = ["counters"]
