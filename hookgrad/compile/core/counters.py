"""Compilation statistics (also ``hookgrad._dynamo.utils.counters``)."""

from __future__ import annotations

from collections import Counter, defaultdict

__all__ = ["counters"]

#: ``counters["graph_break"][reason]``, ``counters["compiled_autograd"]["captures"]``,
#: ``counters["stats"]["calls_captured"]``... Not cleared by ``reset()``.
counters: defaultdict[str, Counter] = defaultdict(Counter)
