"""Mirrors ``torch._functorch.aot_autograd.aot_module_simplified`` (spec §9.3)."""

from __future__ import annotations

import itertools

from hookgrad.compile.aot import aot_module_simplified

__all__ = ["aot_module_simplified", "AOT_COUNTER"]

# PyTorch numbers its AOT compilations from this counter and its compiled-autograd tests read
# ``next(AOT_COUNTER)``; hookgrad provides the counter for such harness code (its own graph
# numbering does not draw from it)
AOT_COUNTER = itertools.count()
