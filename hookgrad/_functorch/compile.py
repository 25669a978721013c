"""Mirrors ``functorch.compile`` (``nop``)."""

from __future__ import annotations

from typing import Any

__all__ = ["nop"]


def nop(gm: Any, example_inputs: Any = None) -> Any:
    """The compiler that compiles nothing: returns the graph's own callable.

    Mirrors: ``functorch.compile.nop``.
    """
    return gm.forward if hasattr(gm, "forward") else gm
