"""Mirrors: ``torch._functorch.python_key`` (``functorch.make_fx`` is imported from here)."""

from __future__ import annotations

from hookgrad.fx.experimental.proxy_tensor import make_fx

__all__ = ["make_fx"]
