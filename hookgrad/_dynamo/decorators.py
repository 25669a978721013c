"""`allow_in_graph` / `disallow_in_graph`: mark functions for the compiler.

Mirrors: ``torch._dynamo.allow_in_graph`` / ``disallow_in_graph`` (einops marks its functions
at import time). hookgrad's compiler records primitives at ``bind``, so every Python function is
traced through whatever its marking; the marks are kept (`is_allowed_in_graph`) and the function
is returned unchanged, as PyTorch returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["allow_in_graph", "disallow_in_graph", "is_allowed_in_graph", "assume_constant_result"]

_ALLOWED: dict[int, Any] = {}
_DISALLOWED: dict[int, Any] = {}


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` (or each of a list of functions) as allowed in compiled graphs.

    Example:
        >>> f = lambda x: x
        >>> allow_in_graph(f) is f, is_allowed_in_graph(f)
        (True, True)

    Mirrors: ``torch._dynamo.allow_in_graph``.
    """
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError(f"allow_in_graph expects a callable, but got {type(fn)}")
    _DISALLOWED.pop(id(fn), None)
    _ALLOWED[id(fn)] = fn
    return fn


def disallow_in_graph(fn: Callable[..., Any]) -> Any:
    """Undo `allow_in_graph` for `fn`. Mirrors: ``torch._dynamo.disallow_in_graph``."""
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError(f"disallow_in_graph expects a callable, but got {type(fn)}")
    _ALLOWED.pop(id(fn), None)
    _DISALLOWED[id(fn)] = fn
    return fn


def is_allowed_in_graph(fn: Any) -> bool:
    """Whether `fn` was marked by `allow_in_graph` (and not unmarked since)."""
    return id(fn) in _ALLOWED


def assume_constant_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` as returning the same value on every call, so a compiler may fold it.

    Eagerly the mark is all there is: `fn` comes back itself with ``_dynamo_marked_constant``
    set, as PyTorch's does (transformers marks its helpers at import time). hookgrad's tracer
    calls `fn` while tracing like any Python function and guards what the trace reads.

    Example:
        >>> f = lambda: 3
        >>> assume_constant_result(f) is f, f._dynamo_marked_constant
        (True, True)

    Mirrors: ``torch._dynamo.assume_constant_result``.
    """
    fn._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return fn
