"""Run a scenario ``fn(lib, log)`` on hookgrad and on torch and compare plain-data outcomes."""

from __future__ import annotations

from typing import Any


def plain(x: Any) -> Any:
    """Tensors become ``("T", values, dtype)``; containers are converted recursively."""
    if hasattr(x, "tolist") and hasattr(x, "requires_grad"):
        return ("T", x.tolist(), str(x.dtype))
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def outcome(fn: Any, lib: Any) -> tuple:
    """``(log, result)`` or ``(log, ("E", type name, message))``."""
    log: list = []
    try:
        result = fn(lib, log)
    except Exception as exc:  # noqa: BLE001 - the exception is the observation
        return plain(log), ("E", type(exc).__name__, str(exc))
    return plain(log), plain(result)


def same_as_torch(fn: Any, torch: Any) -> tuple:
    """Assert hookgrad and torch agree on `fn`; return hookgrad's outcome."""
    import hookgrad

    mine, theirs = outcome(fn, hookgrad), outcome(fn, torch)
    assert mine == theirs
    return mine
