"""Mirrors ``torch._functorch.aot_autograd.aot_module_simplified`` (spec §9.3)."""

from __future__ import annotations

from hookgrad.compile.aot import aot_module_simplified

__all__ = ["aot_module_simplified"]
