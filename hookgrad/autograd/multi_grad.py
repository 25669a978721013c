"""``register_multi_grad_hook``: one callback over the gradients of several tensors (spec §6.1).

NOTE [Multi-grad hooks]
Built only from ordinary `Tensor.register_hook` hooks, exactly as PyTorch builds it, so the
inner hooks sit in each tensor's hook list at their registration position, see gradients after
earlier hooks transformed them, and never replace a gradient. State is keyed by the id of the
running graph task, so nested backward passes keep separate counts and buffers. One PyTorch
quirk is kept on purpose: the expected call count of mode ``"all"`` is a single shared value,
recomputed on the first inner-hook call of every pass (a nested pass may overwrite it).
One difference, on purpose: PyTorch's hooks hold the watched tensors' nodes strongly, so a hook
on ``a`` keeps the graph of another watched tensor alive; hookgrad holds them weakly (a dead
node cannot be part of a running pass, so the counts are the same).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from hookgrad.autograd._edges import get_gradient_edge
from hookgrad.autograd._node import GradientEdge
from hookgrad.autograd.engine import current_graph_task, will_engine_execute_node
from hookgrad.utils.hooks import RemovableHandle

__all__ = ["register_multi_grad_hook", "_MultiHandle"]

_MODES = ("all", "any")


class _MultiHandle(RemovableHandle):
    """Removes every tensor hook of one multi-grad hook; has no ``id`` of its own.

    Mirrors: ``torch.autograd.graph._MultiHandle``.
    """

    handles: tuple[RemovableHandle, ...]

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[RemovableHandle, ...]:  # type: ignore[override]
        return self.handles

    def __setstate__(self, state: tuple[RemovableHandle, ...]) -> None:  # type: ignore[override]
        self.handles = state

    def __repr__(self) -> str:
        return f"<_MultiHandle handles={len(self.handles)}>"


def _node_resolver(t: Any) -> Callable[[], Any]:
    """A weak way back to the node a gradient for `t` flows into (see NOTE [Multi-grad hooks]).

    Raises PyTorch's AssertionError now if there is no such node. A leaf's accumulator is looked
    up again at call time (it is cached weakly, and a live one is the one in the running graph).
    """
    if isinstance(t, GradientEdge):
        return weakref.ref(t.node)
    node = get_gradient_edge(t).node if t.requires_grad else None
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    if t.grad_fn is not None:
        return weakref.ref(node)
    leaf = weakref.ref(t)

    def accumulator() -> Any:
        x = leaf()
        return None if x is None else get_gradient_edge(x).node

    return accumulator


def register_multi_grad_hook(
    tensors: Sequence[Any], fn: Callable[..., Any], *, mode: str = "all"
) -> RemovableHandle:
    """Register `fn` to run once the gradients of `tensors` are computed in a backward pass.

    Mode ``"all"``: ``fn(grads: list[Tensor | None]) -> None`` runs once per pass, after every
    tensor whose gradient this pass computes has received it, with ``None`` for the others
    (tensors outside the graph or not needed for the requested ``inputs``). It runs from inside
    the last of those tensors' hooks. Mode ``"any"``: ``fn(grad: Tensor) -> None`` runs once per
    pass with the first gradient computed among `tensors`. The return value of `fn` is ignored
    and gradients cannot be modified (see NOTE [Multi-grad hooks]).

    Args:
        tensors: The tensors to watch.
        fn: The callback.
        mode: ``"all"`` or ``"any"``.

    Returns:
        A handle whose ``remove()`` removes every underlying tensor hook.

    Raises:
        ValueError: For an unknown mode.
        AssertionError: Mode ``"all"`` with a tensor that does not require grad.
        RuntimeError: Mode ``"all"`` with a leaf tensor under ``autograd.grad`` (PyTorch limit).

    Example:
        >>> import hookgrad as torch
        >>> a = torch.ones(2, requires_grad=True); b = torch.ones(2, requires_grad=True)
        >>> h = torch.autograd.graph.register_multi_grad_hook(
        ...     (a, b), lambda gs: print([g is not None for g in gs]))
        >>> (a * 2).sum().backward()
        [True, False]

    Mirrors: ``torch.autograd.graph.register_multi_grad_hook``.
    """
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    register = _register_all if mode == "all" else _register_any
    return _MultiHandle(register(tensors, fn))


def _register_all(tensors: Sequence[Any], fn: Callable[..., Any]) -> tuple:
    nb_calls: list = [None]  # shared across passes on purpose (NOTE [Multi-grad hooks])
    nodes = [_node_resolver(t) for t in tensors]
    n = len(tensors)
    token = object()

    def get_inner_hook(idx: int) -> Callable[[Any], None]:
        def inner_hook(grad: Any) -> None:
            state = _task_state(token)
            if state is None:
                state = _task_state(token, [0, [None] * n])
            curr = state[0]
            state[0] = curr + 1
            if curr == 0:
                alive = (node() for node in nodes)
                nb_calls[0] = sum(will_engine_execute_node(g) for g in alive if g is not None)
            state[1][idx] = grad
            if curr == nb_calls[0] - 1:
                buf = state[1]
                _task_state(token, None)
                fn(buf)

        return inner_hook

    return tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))


def _register_any(tensors: Sequence[Any], fn: Callable[..., Any]) -> tuple:
    token = object()

    def wrapped_fn(grad: Any) -> None:
        if _task_state(token) is None:
            _task_state(token, True)
            fn(grad)

    wrapped_fn.__name__ = getattr(fn, "__name__", "wrapped_fn")
    return tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)


_MISSING = object()


def _task_state(token: object, value: Any = _MISSING) -> Any:
    """Per-graph-task state of one multi-grad hook: read it, or set it when `value` is given.

    Kept on the running `GraphTask` itself, so it dies with the pass (PyTorch keys module-level
    dicts by task id and can leak entries; hookgrad cannot).
    """
    task = current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    states = task.hook_state
    if value is _MISSING:
        return None if states is None else states.get(token)
    if states is None:
        states = task.hook_state = {}
    states[token] = value
    return value
