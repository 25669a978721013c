"""The hooked ``Module.__call__`` path (spec §7.2–§7.5).

``Module.__call__`` itself only decides between the fast path (no hook anywhere: call
``forward``) and `call_with_hooks` below.

NOTE [Module call flow]
1. snapshot the backward hooks for this call (global first, then the module's) — before the
   forward pre-hooks run, so a backward hook registered by a pre-hook waits for the next call;
2. forward pre-hooks over a snapshot of (global, module);
3. wrap the Tensor positional args for full backward hooks / backward pre-hooks;
4. ``forward``;
5. forward hooks over a snapshot taken *now* (hooks registered in 2 or 4 run in this call);
6. wrap the outputs for full backward hooks; 7. attach legacy backward hooks.
On an ``Exception`` in 1–7, the always-call forward hooks that have not run yet run (global,
then module), their own exceptions become warnings, and the original exception is re-raised.
The ``with_kwargs``/``always_call`` flags are read live while iterating, as PyTorch reads its
side tables.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn.modules._backward_hook import BackwardHook, attach_legacy_hooks
from hookgrad.nn.modules._global_hooks import (
    GLOBAL_MODE,
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_forward_hooks,
    _global_forward_pre_hooks,
)
from hookgrad.utils.hooks import HookRegistry

__all__ = ["call_with_hooks", "has_global_call_hooks"]


def has_global_call_hooks() -> bool:
    """True when a global hook forces every module call onto the slow path."""
    return bool(
        _global_forward_pre_hooks
        or _global_forward_hooks
        or _global_backward_pre_hooks
        or _global_backward_hooks
    )


def _flag(registry: HookRegistry, hook_id: int, name: str) -> bool:
    entry = registry.flags.get(hook_id) if registry.flags else None
    return entry is not None and getattr(entry, name)


class _CallState:
    """What the always-call recovery phase needs to see (args/kwargs/result so far)."""

    __slots__ = ("args", "kwargs", "result", "called")

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args = args
        self.kwargs = kwargs
        self.result: Any = None
        self.called: set = set()


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """Run one module call with every hook (NOTE [Module call flow])."""
    st = _CallState(args, kwargs)
    try:
        return _inner(module, st)
    except Exception:
        _run_always_called(module, st)
        raise


def _inner(module: Any, st: _CallState) -> Any:
    full_hooks: list = []
    legacy_hooks: list = []
    pre_hooks: list = []
    if module._backward_pre_hooks or _global_backward_pre_hooks:
        pre_hooks = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
    if module._backward_hooks or _global_backward_hooks:
        full_hooks, legacy_hooks = _backward_hooks(module)
    if _global_forward_pre_hooks or module._forward_pre_hooks:
        _run_forward_pre_hooks(module, st)
    bw_hook = None
    if full_hooks or pre_hooks:
        bw_hook = BackwardHook(module, full_hooks, pre_hooks)
        st.args = bw_hook.setup_input_hook(st.args)
    st.result = module.forward(*st.args, **st.kwargs)
    if _global_forward_hooks or module._forward_hooks:
        _run_forward_hooks(module, st)
    if bw_hook:
        if not isinstance(st.result, (Tensor, tuple)):
            warnings.warn(
                "For backward hooks to be called, module output should be a Tensor or a tuple of "
                f"Tensors but received {type(st.result)}",
                UserWarning,
                stacklevel=4,
            )
        st.result = bw_hook.setup_output_hook(st.result)
    if legacy_hooks:
        attach_legacy_hooks(module, legacy_hooks, st.args, st.result)
    return st.result


def _backward_hooks(module: Any) -> tuple[list, list]:
    """(full, legacy) backward hooks of this call: global ones first (spec §7.2 step 1)."""
    full: list = []
    legacy: list = []
    if GLOBAL_MODE.is_full_backward_hook is True:
        full += _global_backward_hooks.values()
    if module._is_full_backward_hook is True:
        full += module._backward_hooks.values()
    if GLOBAL_MODE.is_full_backward_hook is False:
        legacy += _global_backward_hooks.values()
    if module._is_full_backward_hook is False:
        legacy += module._backward_hooks.values()
    return full, legacy


def _run_forward_pre_hooks(module: Any, st: _CallState) -> None:
    local = module._forward_pre_hooks
    items = (*_global_forward_pre_hooks.items(), *local.items())
    for hook_id, hook in items:
        if local.flags and _flag(local, hook_id, "with_kwargs"):
            res = hook(module, st.args, st.kwargs)
            if res is not None:
                if isinstance(res, tuple) and len(res) == 2:
                    st.args, st.kwargs = res
                else:
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {res}."
                    )
        else:
            res = hook(module, st.args)
            if res is not None:
                st.args = res if isinstance(res, tuple) else (res,)


def _run_forward_hooks(module: Any, st: _CallState) -> None:
    local = module._forward_hooks
    glob = _global_forward_hooks
    items = (*glob.items(), *local.items())
    for hook_id, hook in items:
        kw = False
        if local.flags or glob.flags:
            if _flag(local, hook_id, "always_call") or _flag(glob, hook_id, "always_call"):
                st.called.add(hook_id)
            kw = _flag(local, hook_id, "with_kwargs") or _flag(glob, hook_id, "with_kwargs")
        if kw:
            res = hook(module, st.args, st.kwargs, st.result)
        else:
            res = hook(module, st.args, st.result)
        if res is not None:
            st.result = res


_SILENCED = (
    "module forward hook with ``always_call=True`` raised an exception that was silenced as "
    "another error was raised in forward: {}"
)


def _run_always_called(module: Any, st: _CallState) -> None:
    """Recovery phase of spec §7.5 (global hooks get no kwargs: PyTorch 2.13 quirk)."""
    glob = _global_forward_hooks
    for hook_id, hook in list(glob.items()):
        if _flag(glob, hook_id, "always_call") and hook_id not in st.called:
            try:
                res = hook(module, st.args, st.result)
                if res is not None:
                    st.result = res
            except Exception as e:  # noqa: BLE001 - silenced into a warning, as PyTorch does
                warnings.warn("global " + _SILENCED.format(str(e)), UserWarning, stacklevel=4)
    local = module._forward_hooks
    for hook_id, hook in list(local.items()):
        if _flag(local, hook_id, "always_call") and hook_id not in st.called:
            try:
                if _flag(local, hook_id, "with_kwargs"):
                    res = hook(module, st.args, st.kwargs, st.result)
                else:
                    res = hook(module, st.args, st.result)
                if res is not None:
                    st.result = res
            except Exception as e:  # noqa: BLE001
                warnings.warn(_SILENCED.format(str(e)), UserWarning, stacklevel=4)
