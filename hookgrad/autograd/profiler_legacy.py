"""The legacy profiler entry point: the same CPU `profile` as ``torch.autograd.profiler``.

Mirrors: ``torch.autograd.profiler_legacy``.
"""

from __future__ import annotations

from hookgrad.autograd.profiler import profile

__all__ = ["profile"]
