"""Runtime bodies of the hook higher-order operators of spec §4.

``register_hook`` (compiled autograd off): registers the traced hook body on the intermediate
and returns the tensor itself. ``register_hook_deferred`` (compiled autograd on): registers a
trampoline that calls, at backward time, the hook the call's `RunState` holds in a slot (filled
after the graph ran, spec §8.4), so the hook is neither traced nor guarded in the forward.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.state import current_run

__all__ = ["register_hook", "register_hook_deferred", "make_trampoline", "store_handle"]


def store_handle(slot: int, handle: Any) -> None:
    """Keep the `RemovableHandle` of a registration made in a compiled call in the call's `slot`
    (where the side-effect replay finds it); a negative slot keeps nothing."""
    run = current_run()
    if run is not None and slot >= 0:
        run.slots[slot] = handle


def register_hook(t: Tensor, body: Any, *free: Tensor, handle_slot: int = -1) -> Tensor:
    """Register ``grad -> body(grad, *free)`` on `t`; return `t` (aliasing kept)."""
    # a body graph runs as a function (its ``forward``): as a module call it would fire
    # global module hooks, which an eager hook never does
    body = getattr(body, "forward", body)
    if free:
        def hook(grad: Tensor) -> Any:
            return body(grad, *free)
    else:
        hook = body
    store_handle(handle_slot, t.register_hook(hook))
    return t


def register_hook_deferred(t: Tensor, slot: int, kind: str, handle_slot: int = -1) -> Tensor:
    """Register a trampoline to ``run.hooks[slot]`` (the call's BackwardState); return `t`."""
    store_handle(handle_slot, getattr(t, kind)(make_trampoline(current_run().hooks, slot)))
    return t


def make_trampoline(hooks: list, slot: int) -> Any:
    """The function registered for a deferred hook: calls ``hooks[slot]`` when fired."""
    def deferred_hook(arg: Any) -> Any:
        return hooks[slot](arg)
    return deferred_hook
