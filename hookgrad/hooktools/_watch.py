"""How a `HookTrace` watches module calls, optimizer steps, backward passes and hook registrations
in each library, using only public hook API on PyTorch objects.

- Module calls and optimizer steps: global hooks (``register_module_forward_pre_hook``,
  ``register_module_forward_hook``, ``register_optimizer_step_pre/post_hook``), the same in both
  libraries. They return None, so they change nothing.
- PyTorch backward passes and tensor-hook registrations: a ``torch.overrides.TorchFunctionMode``
  (``Tensor.backward``, ``autograd.backward``/``grad`` and ``Tensor.register_hook`` /
  ``register_post_accumulate_grad_hook`` all dispatch ``__torch_function__``).
- hookgrad backward passes: the trace is a backward observer of ``hookgrad.autograd`` while it
  is open; its registrations are seen by `hookgrad.utils.hooks.add_registration_observer`.
Nothing stays installed once the trace closes, so tracing costs nothing when no trace is open.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from hookgrad.autograd import _api

__all__ = ["install", "internal"]

_ROOT_ARGS = ("self", "tensors", "outputs")


def internal(fn: Any) -> Any:
    """A plain-function copy of one of the trace's own hooks, marked so that it is never
    traced nor listed as silent."""

    def hook(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    hook.__hookgrad_trace_internal__ = True  # type: ignore[attr-defined]
    return hook


def _bind(func: Any, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    try:
        bound = inspect.signature(func).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # let the call itself raise the library's error
        return (args[0] if args else None), kwargs.get("inputs")
    roots = next((bound[k] for k in _ROOT_ARGS if k in bound), None)
    return roots, bound.get("inputs")


def _global_hooks(lib: Any, trace: Any) -> list:
    mm = sys.modules[f"{lib.__name__}.nn.modules.module"]
    om = sys.modules[f"{lib.__name__}.optim.optimizer"]
    return [mm.register_module_forward_pre_hook(internal(trace.on_module_pre)),
            mm.register_module_forward_hook(internal(trace.on_module_post)),
            # always_call: runs also when forward raised, so the call depth stays right
            mm.register_module_forward_hook(internal(trace.on_module_exit), always_call=True),
            om.register_optimizer_step_pre_hook(internal(trace.on_step_pre)),
            om.register_optimizer_step_post_hook(internal(trace.on_step_post))]


def _hookgrad_backward(trace: Any) -> Any:
    """Register the trace as a backward observer (NOTE [Backward observers] in autograd._api);
    returns the observer, to be removed when the trace closes."""

    def observer(call: Any) -> Any:
        return trace.run_backward(call.api, call.roots, call.inputs, call.run)

    _api.add_backward_observer(observer)
    return observer


def _torch_mode(torch: Any, trace: Any) -> Any:
    from torch.overrides import TorchFunctionMode

    backward_apis = {torch.Tensor.backward: "backward", torch.autograd.backward: "backward",
                     torch.autograd.grad: "grad"}
    register_apis = {torch.Tensor.register_hook: "tensor",
                     torch.Tensor.register_post_accumulate_grad_hook: "post_accumulate"}

    class _TraceMode(TorchFunctionMode):
        """Sees PyTorch's backward calls and tensor-hook registrations for the trace."""

        def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                               kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            api = backward_apis.get(func)
            if api is not None:
                roots, inputs = _bind(func, args, kwargs)
                return trace.run_backward(api, roots, inputs, lambda: func(*args, **kwargs))
            kind = register_apis.get(func)
            if kind is not None and len(args) == 2 and not kwargs:
                args = (args[0], trace.wrap_registration(args[0], args[1], kind))
            return func(*args, **kwargs)

    return _TraceMode()


def install(lib: Any, trace: Any) -> Any:
    """Start watching `lib`; returns a function that stops watching."""
    handles = _global_hooks(lib, trace)
    observer = None
    mode = None
    if lib.__name__ == "torch":
        mode = _torch_mode(lib, trace)
        mode.__enter__()
        trace.torch_mode = mode
    else:
        observer = _hookgrad_backward(trace)

    def uninstall() -> None:
        if mode is not None:
            mode.__exit__(None, None, None)
            trace.torch_mode = None
        if observer is not None:
            _api.remove_backward_observer(observer)
        for h in handles:
            h.remove()

    return uninstall
