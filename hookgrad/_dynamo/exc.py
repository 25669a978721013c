"""Mirrors ``torch._dynamo.exc``."""

from __future__ import annotations

from hookgrad.compile.core.exc import (
    BackendCompilerFailed,
    FailOnRecompileLimitHit,
    RecompileError,
    Unsupported,
)

__all__ = ["Unsupported", "RecompileError", "BackendCompilerFailed", "FailOnRecompileLimitHit"]
