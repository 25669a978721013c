"""Interception points installed only while a trace runs (spec §3.1 "interception").

The tracer runs the user's code on real tensors; these replacements let it see what `bind` does
not: hook registration and handle removal (side effects, spec §7), data-dependent Python and
printing (graph breaks, §9.1), and composite functions that count as one op (``F.linear``,
§5.3). (The dtype `bind` computes in reaches the recorder through the recorder protocol.) Each replacement does the real thing after
telling the active trace, so the traced call behaves exactly like the eager call.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any

from hookgrad import autograd as _autograd
from hookgrad._tensor import Tensor
from hookgrad.compile.module_hooks import REAL_SETUP
from hookgrad.compile.state import current_trace
from hookgrad.nn.modules._backward_hook import BackwardHook
from hookgrad.nn import functional as _F
from hookgrad.utils.hooks import RemovableHandle

__all__ = ["install", "uninstall"]

_DATA = "Data-dependent control flow on a tensor value (`item()`/`bool()`/`tolist()`)"
_BUILTIN = "Failed to trace builtin operator `{}` on a tensor"
_BACKWARD = "`backward()`/`autograd.grad` inside a compiled region"


def _breaking(name: str, real: Callable[..., Any], msg: str) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is not None:
            tr.graph_break(msg.format(name))
        return real(*args, **kwargs)
    return wrapper


def _registering(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: Tensor, hook: Callable[..., Any]) -> Any:
        tr = current_trace()
        if tr is None or not tr.recording:
            return real(self, hook)
        return tr.on_register(self, hook, kind, real)
    return wrapper


def _removing(real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: RemovableHandle) -> None:
        tr = current_trace()
        if tr is not None and tr.recording:
            tr.on_remove(self)
        real(self)
    return wrapper


def _composite(real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is None or not tr.recording or tr.rec.suspended:
            return real(*args, **kwargs)
        tr.rec.suspended += 1
        try:
            out = real(*args, **kwargs)
        finally:
            tr.rec.suspended -= 1
        tr.rec.record_composite(real, args, kwargs, out)
        return out
    return wrapper


def _bw_setup(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: Any, value: Any) -> Any:
        tr = current_trace()
        if tr is None or not tr.recording or tr.sub or tr.rec.suspended:
            return real(self, value)
        return tr.on_backward_hook_setup(self, kind, value, real)
    return wrapper


def _patch_table() -> list[tuple[Any, str, Any]]:
    table: list[tuple[Any, str, Any]] = []
    for name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__"):
        table.append((Tensor, name, _breaking(name, getattr(Tensor, name), _DATA)))
    for name in ("__repr__", "__format__"):  # object.__str__ calls __repr__
        table.append((Tensor, name, _breaking(name, getattr(Tensor, name), _BUILTIN)))
    table.append((Tensor, "backward", _breaking("backward", Tensor.backward, _BACKWARD)))
    for name in ("backward", "grad"):
        table.append((_autograd, name, _breaking(name, getattr(_autograd, name), _BACKWARD)))
    table.append((builtins, "print", _breaking("print", builtins.print, _BUILTIN)))
    table.append((Tensor, "register_hook", _registering("register_hook", Tensor.register_hook)))
    table.append((Tensor, "register_post_accumulate_grad_hook", _registering(
        "register_post_accumulate_grad_hook", Tensor.register_post_accumulate_grad_hook)))
    table.append((RemovableHandle, "remove", _removing(RemovableHandle.remove)))
    table.append((_F, "linear", _composite(_F.linear)))
    for kind, real in REAL_SETUP.items():
        table.append((BackwardHook, f"setup_{kind}_hook", _bw_setup(kind, real)))
    return table


_SAVED: list[list[tuple[Any, str, Any]]] = []


def install() -> None:
    """Apply the replacements (nested traces stack: only the outermost patches)."""
    if _SAVED:
        _SAVED.append([])
        return
    undo = []
    for owner, name, new in _patch_table():
        undo.append((owner, name, owner.__dict__[name] if isinstance(owner, type)
                     else getattr(owner, name)))
        setattr(owner, name, new)
    _SAVED.append(undo)


def uninstall() -> None:
    for owner, name, old in reversed(_SAVED.pop()):
        setattr(owner, name, old)
