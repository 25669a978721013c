"""Mirrors ``torch._functorch`` paths used with compilation (``compile.nop``, ``aot_autograd``)."""

from __future__ import annotations

from hookgrad._functorch import aot_autograd, compile

__all__ = ["aot_autograd", "compile"]
