"""Compiled autograd (spec §10): backward passes captured per graph structure and hook layout.

While enabled, every ``backward()`` computes a cache key from the autograd graph it is about to
run (node types, edges, the kinds and positions of hooks, whether each leaf's ``.grad`` is set,
dtypes and ranks; never sizes, scalars or hook objects). A new key is a *capture*
(``counters["compiled_autograd"]["captures"]``): a `CompiledAutogradGraph` is handed to the
compiler function. Every backward then calls the compiled callable with the current hook objects
as runtime inputs, so new hook objects never re-capture, while a compiler that inlines hooks
(``hookgrad.compile``) still recompiles its artifact when a hook's code changes (guards on
``__code__``).

NOTE [Compiled autograd execution]
The captured graph's ``forward`` executes the backward pass with the eager engine (hookgrad's
backward rules are hookgrad ops, so a compiler tracing it records them, hooks inlined). Its
artifacts are used for bookkeeping, not executed: `CompiledAutogradGraph` sets
``_hookgrad_run_original`` and the compiled call runs the engine. This keeps every hook's
semantics and side effects exact; a straight-line executor for CA graphs is future work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd import _api
from hookgrad.compile import config
from hookgrad.compile.counters import counters
from hookgrad.compile.exc import RecompileError
from hookgrad.compile.frame import CA_STATE
from hookgrad.compile.graph import Graph
from hookgrad.utils.hooks import hooks_info

__all__ = ["enable", "disable", "reset_compiled_autograd", "CompiledAutogradGraph",
           "in_compiled_autograd_region"]

_COMPILERS: list[Callable[..., Any]] = []  # enabled contexts, innermost last
_CACHE: dict[Any, Any] = {}
_PENDING: list[Callable[[], Any]] = []  # the backward call each running CA graph executes
_IDS = [0]
# The compiler used when ``config.compiled_autograd`` is on without an `enable` context: set by
# `hookgrad.compile.api` at import (``compile(backend="inductor", fullgraph=True, dynamic=True)``).
DEFAULT_COMPILER: list[Callable[..., Any]] = []


def install_for_config() -> None:
    """Watch backward passes (`_ca_observer` passes them through while CA is off)."""
    _api.add_backward_observer(_ca_observer)


def reset_compiled_autograd() -> None:
    """Forget every capture (``hookgrad._dynamo.reset``)."""
    _CACHE.clear()
    _IDS[0] = 0


def in_compiled_autograd_region() -> bool:
    return bool(_PENDING)


class CompiledAutogradGraph:
    """What the compiler function receives: ``forward(hooks)`` runs one backward pass.

    Mirrors: the ``GraphModule`` compiled autograd hands to its compiler.
    """

    _hookgrad_run_original = True

    def __init__(self, key: tuple) -> None:
        _IDS[0] += 1
        self.id = _IDS[0]
        self.key = key
        self.graph = Graph()  # structure: one call node per autograd node, hooks marked
        for name, hooks, _leaf, _edges in key:
            self.graph.call_function(_node_stub, (), name=name)
            for kind in hooks:
                self.graph.call_function(_call_hook, (), name="call_hook",
                                         kwargs={"hook_type": kind})

    def forward(self, hooks: list) -> Any:
        return _PENDING[-1]()

    def __call__(self, hooks: list) -> Any:
        return self.forward(hooks)


def _node_stub() -> None:
    return None


def _call_hook(*args: Any, hook_type: str = "") -> None:
    return None


def _walk(roots: list) -> list:
    order: list = []
    seen: set[int] = set()
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return order


def graph_key(roots: list) -> tuple[tuple, list]:
    """(cache key, hook objects in key order) of the graph below `roots` (spec §10.2)."""
    order = _walk(roots)
    pos = {id(n): i for i, n in enumerate(order)}
    key: list = []
    hooks: list = []
    for node in order:
        infos = hooks_info(node)
        hooks.extend(h.fn for h in infos)
        var = getattr(node, "variable", None)
        leaf = None if var is None else (var.grad is None, var.dtype, var.dim())
        edges = tuple(pos.get(id(n), -1) for n, _ in node.next_functions)
        key.append((node.name(), tuple(h.kind for h in infos), leaf, edges))
    return tuple(key), hooks


def _ca_observer(call: _api.BackwardCall) -> Any:
    """The backward observer of compiled autograd (NOTE [Backward observers] in autograd._api)."""
    compilers = _COMPILERS or (DEFAULT_COMPILER if config.compiled_autograd else [])
    if not compilers:  # the config switch was turned off: stop watching
        _api.remove_backward_observer(_ca_observer)
    if call.api != "backward" or call.create_graph or _PENDING or not compilers:
        return call.run()  # grad(), re-entrant or higher-order backward, or CA off: eager
    tensors = call.roots
    roots = [t.grad_fn for t in ((tensors,) if isinstance(tensors, Tensor) else tensors)]
    key, hooks = graph_key(roots)
    compiled = _CACHE.get(key)
    if compiled is None:
        if _CACHE and config.error_on_recompile:
            raise RecompileError("Recompiling function compiled_autograd graph: the autograd "
                                 "graph structure or hook layout changed")
        counters["compiled_autograd"]["captures"] += 1
        compiled = _CACHE[key] = compilers[-1](CompiledAutogradGraph(key))
    _PENDING.append(call.run)
    try:
        compiled(hooks)
    finally:
        _PENDING.pop()
    return None


@contextlib.contextmanager
def enable(compiler_fn: Callable[..., Any], dynamic: bool = True) -> Iterator[None]:
    """Route every ``backward()`` in the block through compiled autograd.

    Mirrors: ``torch._dynamo.compiled_autograd._enable``.
    """
    _COMPILERS.append(compiler_fn)
    CA_STATE.enabled_depth += 1
    if len(_COMPILERS) == 1:
        _api.add_backward_observer(_ca_observer)
    try:
        yield
    finally:
        CA_STATE.enabled_depth -= 1
        in_order = _COMPILERS[-1] is compiler_fn
        _COMPILERS.reverse()
        _COMPILERS.remove(compiler_fn)  # leave the stack consistent even when out of order
        _COMPILERS.reverse()
        if not _COMPILERS and not config.compiled_autograd:
            _api.remove_backward_observer(_ca_observer)
        if not in_order:
            raise AssertionError("Nested Compiled Autograd Contexts must return before their "
                                 "parent context")


@contextlib.contextmanager
def disable() -> Iterator[None]:
    """Run backward passes in the block with the eager engine.

    Mirrors: ``torch._dynamo.compiled_autograd._disable``.
    """
    saved = list(_COMPILERS)
    _COMPILERS.clear()
    _api.remove_backward_observer(_ca_observer)
    depth, CA_STATE.enabled_depth = CA_STATE.enabled_depth, 0
    try:
        yield
    finally:
        _COMPILERS.extend(saved)
        CA_STATE.enabled_depth = depth
        if _COMPILERS:
            _api.add_backward_observer(_ca_observer)
