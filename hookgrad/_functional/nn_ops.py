"""Public ops: nn_ops family. Mirrors the torch functions of the same names."""

from __future__ import annotations

__all__: list[str] = []

METHODS: dict = {}
