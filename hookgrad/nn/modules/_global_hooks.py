"""Global module hooks: registries that apply to every `Module` (spec §7.6, §8.4, §10).

The registries are module-level `HookRegistry` objects that are never rebound (the call path
imports them once); `reset_global_hooks` clears them in place. PyTorch keeps the
``with_kwargs``/``always_call`` flags in parallel dicts; here they are the registry's per-entry
flags (see NOTE [Hook storage] in `hookgrad.utils.hooks`).

NOTE [Global backward-hook mode]
Like PyTorch, the first global backward hook decides the process-wide mode: full
(``register_module_full_backward_hook``) or legacy (``register_module_backward_hook``). The mode
is sticky: removing every global hook does not reset it, and registering the other kind then
raises. Only the test-suite resetter clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad.utils.hooks import HookRegistry, RemovableHandle

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

_global_forward_pre_hooks: HookRegistry = HookRegistry()
_global_forward_hooks: HookRegistry = HookRegistry()
_global_backward_pre_hooks: HookRegistry = HookRegistry()
_global_backward_hooks: HookRegistry = HookRegistry()
_global_parameter_registration_hooks: HookRegistry = HookRegistry()
_global_buffer_registration_hooks: HookRegistry = HookRegistry()
_global_module_registration_hooks: HookRegistry = HookRegistry()

_GLOBAL_REGISTRIES = (
    _global_forward_pre_hooks,
    _global_forward_hooks,
    _global_backward_pre_hooks,
    _global_backward_hooks,
    _global_parameter_registration_hooks,
    _global_buffer_registration_hooks,
    _global_module_registration_hooks,
)


class _Mode:
    """Holder of the sticky global backward-hook mode (NOTE [Global backward-hook mode])."""

    is_full_backward_hook: bool | None = None


GLOBAL_MODE = _Mode()

_MIXED_GLOBAL = (
    "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
    "Please use only one of them."
)


def _claim_backward_mode(full: bool) -> None:
    """Fix the sticky global backward-hook mode to `full` (NOTE [Global backward-hook mode]);
    raise if the other kind of global backward hook was registered first."""
    if GLOBAL_MODE.is_full_backward_hook is (not full):
        raise RuntimeError(_MIXED_GLOBAL)
    GLOBAL_MODE.is_full_backward_hook = full


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a forward pre-hook run before every module's own pre-hooks.

    The hook is called as ``hook(module, args) -> None | new_args``: ``None`` keeps ``args``,
    a tuple replaces them, any other value becomes the single positional argument.

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_forward_pre_hook``.
    """
    return _global_forward_pre_hooks.add(hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Register a forward hook run after every module's ``forward``, before its own hooks.

    The hook is called as ``hook(module, args, output) -> None | new_output`` or, with
    ``with_kwargs=True``, ``hook(module, args, kwargs, output)``. A non-``None`` return replaces
    the output. With ``always_call=True`` it also runs when the call raises (see
    ``Module.register_forward_hook``); in that recovery phase PyTorch 2.13 calls it without
    ``kwargs`` even when ``with_kwargs=True`` (reproduced).

    Args:
        hook: the callable above.
        with_kwargs: pass the keyword arguments given to ``forward``.
        always_call: run the hook even if an exception is raised.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_forward_hook``.
    """
    return _global_forward_hooks.add(hook, with_kwargs=with_kwargs, always_call=always_call)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a legacy (non-full) backward hook for every module (deprecated).

    The hook is called as ``hook(module, grad_input, grad_output) -> None | tuple`` with the
    gradients of the *last autograd node* of each module's forward (see
    ``Module.register_backward_hook``).

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Raises:
        RuntimeError: if a global full backward hook was ever registered.

    Mirrors: ``torch.nn.modules.module.register_module_backward_hook``.
    """
    _claim_backward_mode(full=False)
    return _global_backward_hooks.add(hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a backward pre-hook run for every module before its own backward pre-hooks.

    The hook is called as ``hook(module, grad_output) -> None | tuple``; a returned tuple of the
    same length replaces ``grad_output`` for later hooks and for the module's backward.

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_full_backward_pre_hook``.
    """
    return _global_backward_pre_hooks.add(hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a full backward hook run for every module before its own full backward hooks.

    The hook is called as ``hook(module, grad_input, grad_output) -> None | tuple``; a returned
    tuple of the same length replaces ``grad_input``.

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Raises:
        RuntimeError: if a global legacy backward hook was ever registered.

    Mirrors: ``torch.nn.modules.module.register_module_full_backward_hook``.
    """
    _claim_backward_mode(full=True)
    return _global_backward_hooks.add(hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, buffer) -> None | new_buffer`` run on buffer registration.

    Fires from ``register_buffer`` and buffer attribute assignment, also for ``None``; a
    non-``None`` return is stored instead (without re-validation).

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_buffer_registration_hook``.
    """
    return _global_buffer_registration_hooks.add(hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, submodule) -> None | new_submodule`` run on registration.

    Fires from ``add_module``/``register_module`` and submodule attribute assignment, also for
    ``None``; a non-``None`` return is stored instead.

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_module_registration_hook``.
    """
    return _global_module_registration_hooks.add(hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, param) -> None | new_param`` run on parameter registration.

    Fires from ``register_parameter`` and ``Parameter`` attribute assignment, but not for
    ``None``; a non-``None`` return is stored instead (without re-validation).

    Args:
        hook: the callable above.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.nn.modules.module.register_module_parameter_registration_hook``.
    """
    return _global_parameter_registration_hooks.add(hook)


def run_registration_hooks(registry: HookRegistry, module: Any, name: str, value: Any) -> Any:
    """Chain the registration hooks of `registry`; each sees the previous one's value."""
    for hook in list(registry.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def reset_global_hooks() -> None:
    """Clear every global registry and the sticky mode (test isolation only)."""
    for registry in _GLOBAL_REGISTRIES:
        registry.clear()
        registry.flags.clear()
    GLOBAL_MODE.is_full_backward_hook = None
