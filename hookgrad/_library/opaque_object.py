"""Mirrors: ``torch._library.opaque_object`` (hookgrad registers no opaque types)."""

from __future__ import annotations

from typing import Any

__all__ = ["is_opaque_reference_type"]


def is_opaque_reference_type(cls: Any) -> bool:
    """Mirrors: ``torch._library.opaque_object.is_opaque_reference_type``."""
    from hookgrad._opaque_base import OpaqueBase
    return isinstance(cls, type) and issubclass(cls, OpaqueBase)
