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
import os
import sys
from collections.abc import Callable
from typing import Any

from hookgrad import autograd as _autograd
from hookgrad._config import STATE
from hookgrad._tensor import Tensor
from hookgrad.autograd._node import Node
from hookgrad.compile.trace.calls import record_call
from hookgrad.compile.trace.module_hooks import REAL_SETUP
from hookgrad.compile.trace.patches import PatchGroup
from hookgrad.compile.trace import user_calls
from hookgrad.compile.trace.value_shapes import known as _known, value_shape_table
from hookgrad.compile.core.sources import is_constant
from hookgrad.compile.core.state import current_trace
from hookgrad.nn.modules._backward_hook import BackwardHook
from hookgrad.nn import functional as _F
from hookgrad.utils.hooks import RemovableHandle

__all__ = ["GROUP"]

_DATA = "Data-dependent control flow on a tensor value (`item()`/`bool()`/`tolist()`)"
_BUILTIN = "Failed to trace builtin operator `{}` on a tensor"
_BACKWARD = BACKWARD_BREAK = "`backward()`/`autograd.grad` inside a compiled region"
_ADDRESS = "`Tensor.{}` read inside a compiled region (a memory address is not a graph value)"
_VERSION = "`Tensor._version` read inside a compiled region (a per-call counter)"
_RNG_STATE = ("`{}` inside a compiled region (the state is a per-call value; restored from a "
              "constant it would replay the first call's draws)")
# per-call actions on autograd state that a graph cannot replay on later calls (soundness rule
# "every per-call action is replayed on every call": what cannot be replayed breaks the graph)
_NODE_HOOK = "`grad_fn.{}` inside a compiled region (a per-call hook on an autograd node)"
_RETAIN = "`retain_grad()` on a non-leaf tensor inside a compiled region"
_FLIP = "`requires_grad_()` on a graph value or an input inside a compiled region"


def _from_user(depth: int = 2) -> bool:
    """The caller is user code, not hookgrad's own machinery (which registers node hooks for
    module backward hooks under a suspended recorder)."""
    return not sys._getframe(depth).f_globals.get("__name__", "").startswith("hookgrad.")


def _node_hook(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: Any, fn: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and not tr.rec.suspended and _from_user():
            tr.graph_break(_NODE_HOOK.format(name))
        return real(self, fn)
    return wrapper


def _retaining(real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: Tensor) -> None:
        tr = current_trace()
        if tr is not None and tr.recording and not (self._grad_fn is None
                                                    and self._requires_grad):
            tr.graph_break(_RETAIN)  # (on a leaf that requires grad it is a no-op)
        return real(self)
    return wrapper


def _flipping(real: Callable[..., Any]) -> Callable[..., Any]:
    """Setting ``requires_grad`` makes a graph value a new leaf without `bind`: a graph cannot
    replay it on later calls, so it breaks the graph (soundness rule 3)."""
    @functools.wraps(real)
    def wrapper(self: Tensor, *args: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording:
            rec = tr.active_recorder()
            if not rec.suspended and _known(rec, self):
                tr.graph_break(_FLIP)
        return real(self, *args)
    return wrapper


def _grad_reading(real: Callable[..., Any]) -> Callable[..., Any]:
    """Reading ``t.grad`` reads state a later call may have changed (None, then a tensor after
    a backward): noted, so the guards check whether it is None (a tensor is a graph input)."""
    @functools.wraps(real)
    def wrapper(self: Tensor) -> Any:
        value = real(self)
        tr = current_trace()
        if tr is not None and tr.recording and tr.attr_reads is not None:
            tr.attr_reads.note_grad(self, value is None)
        return value
    return wrapper


def _grad_fn_reading(real: Callable[..., Any]) -> Callable[..., Any]:
    """``t.grad_fn`` / ``t.is_leaf`` of an input: noted, so the guards check whether it has a
    ``grad_fn`` (the metadata guard does not: a compiled layer gets a leaf, then non-leaves)."""
    @functools.wraps(real)
    def wrapper(self: Tensor) -> Any:
        value = real(self)
        tr = current_trace()
        if tr is not None and tr.recording and tr.attr_reads is not None and _from_user():
            tr.attr_reads.note_grad_fn(self, self._grad_fn is None)
        return value
    return wrapper


# global settings user code may branch on, not part of the cache key (grad mode, default
# dtype and deterministic algorithms are): each value read is guarded
_SETTINGS = ("get_num_threads", "get_num_interop_threads", "is_anomaly_enabled",
             "is_anomaly_check_nan_enabled", "get_default_device", "is_warn_always_enabled",
             "get_float32_matmul_precision", "get_deterministic_debug_mode",
             "is_deterministic_algorithms_warn_only_enabled", "is_autocast_enabled",
             "get_autocast_dtype", "is_autocast_cpu_enabled", "get_autocast_cpu_dtype",
             "is_inference_mode_enabled")


def _setting_reading(real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(*args: Any) -> Any:
        value = real(*args)
        tr = current_trace()
        if tr is not None and tr.recording and tr.attr_reads is not None and _from_user() \
                and is_constant(args) and is_constant(value):
            tr.attr_reads.note_setting(real, args, value)
        return value
    return wrapper


def environ_value(key: str) -> Any:
    """``os.environ.get(key)``: the guard of an environment variable the region read."""
    return os.environ.get(key)


def _environ_reading(real: Callable[..., Any]) -> Callable[..., Any]:
    """``os.environ[key]`` (also through ``get``, ``in`` and ``os.getenv``) in user code: the
    value read, or its absence, is guarded like a global setting."""
    @functools.wraps(real)
    def __getitem__(self: Any, key: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and tr.attr_reads is not None \
                and self is os.environ and isinstance(key, str):
            try:
                value = real(self, key)
            except KeyError:
                value = None
            tr.attr_reads.note_setting(environ_value, (key,), value)
        return real(self, key)
    return __getitem__


_GRAD_WRITE = ("`.grad` of a pre-existing tensor assigned inside a compiled region (a "
               "per-call write the graph does not replay: `zero_grad()`, `p.grad = None`)")


def _grad_writing(real: Callable[..., Any]) -> Callable[..., Any]:
    """``t.grad = ...`` / ``del t.grad`` on an input or a graph value is state the graph would
    not write again on later calls (``optimizer.zero_grad()`` compiled alone kept the first
    call's ``None`` only once): a graph break."""
    @functools.wraps(real)
    def wrapper(self: Tensor, *value: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and not (value and value[0] is self._grad):
            # (``p.grad *= 2`` sets the same tensor back after the recorded in-place op)
            rec = tr.active_recorder()
            if not rec.suspended and not rec.lenient and (
                    _known(rec, self) or tr.index.source_of(self) is not None):
                tr.graph_break(_GRAD_WRITE)
        return real(self, *value)
    return wrapper


def _detaching(real: Callable[..., Any]) -> Callable[..., Any]:
    """``detach()`` / ``.data`` make a tensor without `bind`: a graph value or an input
    detached becomes a graph node (never a constant holding the trace call's values)."""
    @functools.wraps(real)
    def wrapper(self: Tensor) -> Tensor:
        tr = current_trace()
        if tr is None or not tr.recording:
            return real(self)
        rec = tr.active_recorder()
        if rec.suspended or not _known(rec, self):
            return real(self)
        return record_call(tr, rec, real, (self,), {})
    return wrapper


def _copying(real: Callable[..., Any]) -> Callable[..., Any]:
    """``hookgrad.tensor(t)``, ``as_tensor``, ``t.new_tensor(u)`` copy tensor values without
    `bind`: with a graph value or an input among the arguments, one graph node re-runs them."""
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is None or not tr.recording:
            return real(*args, **kwargs)
        rec = tr.active_recorder()
        if rec.suspended or not any(_known(rec, t) for t in _tensors_in((args, kwargs))):
            return real(*args, **kwargs)
        return record_call(tr, rec, real, args, kwargs)
    return wrapper


def _deepcopying(real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(self: Tensor, memo: dict) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and _known(tr.active_recorder(), self):
            tr.graph_break("`copy.deepcopy` of a graph value or an input inside a compiled "
                           "region")
        return real(self, memo)
    return wrapper


def _tensors_in(value: Any) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []


def _data_of(t: Tensor) -> Tensor:
    """``t.data`` as a callable (a graph node target)."""
    return _REAL_DATA.fget(t)


_REAL_DATA = Tensor.__dict__["data"]


def _breaking(name: str, real: Callable[..., Any], msg: str) -> Callable[..., Any]:
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is not None:
            tr.graph_break(msg.format(name))
        return real(*args, **kwargs)
    return wrapper


def _user_breaking(name: str, real: Callable[..., Any], msg: str) -> Callable[..., Any]:
    """Like `_breaking`, for user code only (hookgrad's own code reads addresses freely)."""
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and _from_user():
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
        node = tr.rec.values.get(id(out)) if isinstance(out, Tensor) else None
        if node is not None and node.target is real:
            user_calls.mark_user_line(node)
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
    top = sys.modules.get("hookgrad")  # the public namespace users call (no upward import)
    for name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__"):
        table.append((Tensor, name, _breaking(name, getattr(Tensor, name), _DATA)))
    for name in ("__repr__", "__format__"):  # object.__str__ calls __repr__
        table.append((Tensor, name, _breaking(name, getattr(Tensor, name), _BUILTIN)))
    table.append((Tensor, "backward", _breaking("backward", Tensor.backward, _BACKWARD)))
    for name in _SETTINGS:
        if callable(getattr(top, name, None)):
            table.append((top, name, _setting_reading(getattr(top, name))))
    environ = type(os.environ)
    table.append((environ, "__getitem__", _environ_reading(environ.__getitem__)))
    for name in ("data_ptr", "untyped_storage", "storage_offset"):
        table.append((Tensor, name, _user_breaking(name, getattr(Tensor, name), _ADDRESS)))
    ver = Tensor.__dict__["_version"]
    table.append((Tensor, "_version", property(_user_breaking("_version", ver.fget, _VERSION))))
    for owner in (top, sys.modules.get("hookgrad.random")):
        if owner is not None and callable(getattr(owner, "get_rng_state", None)):
            table.append((owner, "get_rng_state", _breaking(
                "get_rng_state", owner.get_rng_state, _RNG_STATE)))
    gen = getattr(top, "Generator", None)
    if gen is not None and callable(getattr(gen, "get_state", None)):
        table.append((gen, "get_state", _breaking("Generator.get_state",
                                                  gen.__dict__["get_state"], _RNG_STATE)))
    for name in ("backward", "grad"):
        table.append((_autograd, name, _breaking(name, getattr(_autograd, name), _BACKWARD)))
    table.append((builtins, "print", _breaking("print", builtins.print, _BUILTIN)))
    table.append((Tensor, "register_hook", _registering("register_hook", Tensor.register_hook)))
    table.append((Tensor, "register_post_accumulate_grad_hook", _registering(
        "register_post_accumulate_grad_hook", Tensor.register_post_accumulate_grad_hook)))
    table.append((RemovableHandle, "remove", _removing(RemovableHandle.remove)))
    table.append((Tensor, "detach", _detaching(Tensor.detach)))
    table.append((Tensor, "data", property(_detaching(_data_of), _REAL_DATA.fset)))
    table.append((Tensor, "__deepcopy__", _deepcopying(Tensor.__deepcopy__)))
    table.append((Tensor, "new_tensor", _copying(Tensor.new_tensor)))
    for name in ("tensor", "as_tensor", "asarray"):
        if callable(getattr(top, name, None)):
            table.append((top, name, _copying(getattr(top, name))))
    table.append((Tensor, "retain_grad", _retaining(Tensor.retain_grad)))
    table.append((Tensor, "requires_grad_", _flipping(Tensor.requires_grad_)))
    gp = Tensor.__dict__["grad"]
    table.append((Tensor, "grad", property(_grad_reading(gp.fget), _grad_writing(gp.fset),
                                           _grad_writing(gp.fdel))))
    for name in ("grad_fn", "is_leaf"):
        prop = Tensor.__dict__[name]
        table.append((Tensor, name, property(_grad_fn_reading(prop.fget), prop.fset,
                                             prop.fdel)))
    rg = Tensor.__dict__["requires_grad"]
    table.append((Tensor, "requires_grad", property(rg.fget, _flipping(rg.fset))))
    for name in ("register_hook", "register_prehook"):
        table.append((Node, name, _node_hook(name, Node.__dict__[name])))
    table.append((_F, "linear", _composite(_F.linear)))
    table.extend(value_shape_table())
    for kind, real in REAL_SETUP.items():
        table.append((BackwardHook, f"setup_{kind}_hook", _bw_setup(kind, real)))
    return table


GROUP = PatchGroup("intercept", _patch_table)
