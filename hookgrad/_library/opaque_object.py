"""Mirrors: ``torch._library.opaque_object`` (hookgrad registers no opaque types)."""

from __future__ import annotations

from typing import Any

__all__ = ["is_opaque_reference_type"]


def is_opaque_reference_type(cls: Any) -> bool:
    """Whether `cls` (a type or a registered name) is a registered opaque reference type.

    PyTorch answers True only for types passed to ``register_opaque_type`` (and their
    subclasses); hookgrad has no such registry, so no type is one (a bare ``OpaqueBase``
    subclass is not one in PyTorch either).

    Mirrors: ``torch._library.opaque_object.is_opaque_reference_type``.
    """
    return False
