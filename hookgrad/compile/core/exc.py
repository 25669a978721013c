"""Compiler exceptions (also reachable as ``hookgrad._dynamo.exc``)."""

from __future__ import annotations

__all__ = ["Unsupported", "RecompileError", "BackendCompilerFailed", "FailOnRecompileLimitHit"]


class Unsupported(RuntimeError):
    """The traced code does something a graph cannot hold (raised under ``fullgraph=True``).

    Mirrors: ``torch._dynamo.exc.Unsupported``.
    """


class RecompileError(RuntimeError):
    """A recompile happened while ``config.error_on_recompile`` is set.

    Mirrors: ``torch._dynamo.exc.RecompileError``.
    """


class BackendCompilerFailed(RuntimeError):
    """The backend raised while compiling a graph.

    Mirrors: ``torch._dynamo.exc.BackendCompilerFailed``.
    """


class FailOnRecompileLimitHit(RuntimeError):
    """The recompile limit was reached while ``config.fail_on_recompile_limit_hit`` is set.

    Mirrors: ``torch._dynamo.exc.FailOnRecompileLimitHit``.
    """
