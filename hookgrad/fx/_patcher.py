"""The one table of callables patched while a symbolic trace runs, with one install rule.

hookgrad tensors have no ``__torch_function__``, so a call such as ``hookgrad.relu(proxy)`` is
seen by patching the public namespaces' functions with proxy-aware wrappers for the duration of
the trace (as torch.fx patches ``wrap``-ed and autowrapped globals). Every patch goes through
`Patcher.patch` and every patch is undone, in reverse order, when the ``with`` block exits,
whatever happens inside it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from hookgrad.fx._names import PUBLIC_NAMESPACES
from hookgrad.fx.proxy import Proxy

__all__ = ["Patcher", "find_proxy", "patch_public", "proxy_aware", "public_entries"]

# Public functions that inspect their argument rather than compute with it: they must see the
# Proxy itself (``hookgrad.is_tensor(proxy)`` is False, as in torch).
_NOT_TRACED = frozenset({"is_tensor", "is_storage", "typename", "is_grad_enabled",
                         "is_inference_mode_enabled", "get_default_dtype", "compile", "load",
                         "save", "manual_seed", "set_grad_enabled"})

_MISSING = object()


class Patcher:
    """Records each patch so that leaving the ``with`` block restores the original value.

    Mirrors: ``torch.fx._symbolic_trace._Patcher``.
    """

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any, bool]] = []
        self.visited: set[tuple[int, str]] = set()

    def patch(self, owner: Any, name: str, new: Any) -> None:
        """Set ``owner[name]`` (a dict) or ``owner.name`` to `new` until exit."""
        is_dict = isinstance(owner, dict)
        old = owner.get(name, _MISSING) if is_dict else owner.__dict__.get(name, _MISSING)
        self._undo.append((owner, name, old, is_dict))
        if is_dict:
            owner[name] = new
        else:
            setattr(owner, name, new)

    def __enter__(self) -> Patcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            owner, name, old, is_dict = self._undo.pop()
            if is_dict:
                owner.pop(name, None) if old is _MISSING else owner.__setitem__(name, old)
            elif old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)


def find_proxy(*values: Any) -> Proxy | None:
    """The first `Proxy` inside `values` (searching tuples, lists and dicts)."""
    stack = list(values)
    while stack:
        v = stack.pop(0)
        if isinstance(v, Proxy):
            return v
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return None


class _ProxyAware:
    """A patched public function. It compares and hashes equal to the function it stands for,
    so code running while the patch is in place (tracer overrides, a Transformer's
    ``if target == hookgrad.sigmoid``) still recognises it."""

    def __init__(self, orig: Callable[..., Any], mark_wrapped: bool) -> None:
        self.__fx_original__ = orig
        self._mark_wrapped = mark_wrapped
        functools.update_wrapper(self, orig)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return self.__fx_original__(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", self.__fx_original__, args, kwargs)
        if self._mark_wrapped:
            out.node.meta["is_wrapped"] = True
        return out

    def __eq__(self, other: object) -> bool:
        return other is self or other is self.__fx_original__

    def __hash__(self) -> int:
        return hash(self.__fx_original__)

    def __repr__(self) -> str:
        return repr(self.__fx_original__)


# (id(orig), mark_wrapped) -> (orig, wrapper). `orig` is kept so an id reused by another
# function after `orig` died cannot return a stale wrapper.
_WRAPPERS: dict[tuple[int, bool], tuple[Any, Callable[..., Any]]] = {}


def proxy_aware(orig: Callable[..., Any], mark_wrapped: bool) -> Callable[..., Any]:
    """`orig`, but recorded as a ``call_function`` node when any argument is a Proxy.

    `mark_wrapped` sets ``node.meta["is_wrapped"]`` (functions named by `wrap` or autowrapped),
    which makes the emitted code re-register them with `wrap` so a retrace keeps them leaves.
    """
    key = (id(orig), mark_wrapped)
    cached = _WRAPPERS.get(key)
    if cached is not None and cached[0] is orig:
        return cached[1]
    wrapper = _ProxyAware(orig, mark_wrapped)
    if len(_WRAPPERS) > 10_000:  # user functions come and go; public ones are re-made cheaply
        _WRAPPERS.clear()
    _WRAPPERS[key] = (orig, wrapper)
    return wrapper


_ENTRIES: list[tuple[Any, str, Any]] = []


def public_entries() -> list[tuple[Any, str, Any]]:
    """``(namespace module, name, function)`` for every public function the tracer patches."""
    if not _ENTRIES:
        for ns_name in PUBLIC_NAMESPACES:
            ns = sys.modules.get(ns_name)
            for name, obj in list(vars(ns).items()) if ns is not None else ():
                if (name.startswith("_") or name in _NOT_TRACED or isinstance(obj, type)
                        or not callable(obj) or not hasattr(obj, "__name__")
                        or type(obj).__name__ not in ("function", "builtin_function_or_method")):
                    continue
                _ENTRIES.append((ns, name, obj))
    return _ENTRIES


def patch_public(patcher: Patcher) -> None:
    """Make every public function proxy-aware until `patcher` exits."""
    for ns, name, fn in public_entries():
        patcher.patch(ns, name, proxy_aware(fn, mark_wrapped=False))
