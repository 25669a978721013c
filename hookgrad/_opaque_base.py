"""Mirrors: ``torch._opaque_base`` (the base class of custom opaque objects)."""

from __future__ import annotations

__all__ = ["OpaqueBase"]


class OpaqueBase:
    """Base class of objects ops may carry opaquely. Mirrors: ``torch._opaque_base.OpaqueBase``."""
