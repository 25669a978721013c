"""Mirrors: ``torch.backends.cpu``."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The vector ISA kernels were built for; NumPy dispatches on its own. Mirrors: ``torch.backends.cpu.get_cpu_capability``."""
    return "DEFAULT"
