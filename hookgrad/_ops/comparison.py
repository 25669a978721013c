"""Primitives: comparison family (see design.md §4)."""

from __future__ import annotations
