"""Compiled autograd (spec §10): backward passes captured per graph structure and hook layout.

While enabled, every ``backward()`` (not ``grad()``, not ``create_graph=True``) is walked once
(`ca_capture.collect`): the key of its graph structure and hook layout, and its runtime inputs
(seeds, saved tensors, leaves, sizes, numeric parameters, hook objects, packed saved values).
A new key is a *capture* (``counters["compiled_autograd"]["captures"]``): the backward graph is
built from the key (`ca_graph.build_graph`) and handed to the compiler function once. Every pass
then calls the compiled callable with its runtime inputs, so new hook objects, new sizes or new
scalars never re-capture, while a compiler that traces hooks (``hookgrad.compile``) still
recompiles its own artifact when a hook's code changes (guards on ``__code__``).

NOTE [Compiled autograd execution]
The graph's generated code *is* the backward pass: per node, in the eager engine's order, the
hook calls, the node's backward operator and the routing of gradients (`ca_ops`). The call runs
with grad mode off, inside a `GraphTask` pushed on the thread's stack so that
``queue_callback``, ``current_graph_task_id`` and ``will_engine_execute_node`` work inside
hooks, and marks ``in_compiled_autograd_region()``; a backward started inside it (re-entrant)
runs eagerly. Unless ``retain_graph``, each node's saved values are freed right after it runs
(and the runtime inputs that held them dropped), as the eager engine frees them.

Nodes that are not a primitive's (a custom ``autograd.Function``'s, ``CopySlices``, a
compiled function's) are called through ``call_backward`` with the node as a runtime input.
What the graph does not express runs on the eager engine, never wrongly
(``counters["compiled_autograd_fallback"][reason]``): ``backward(inputs=...)`` and anomaly mode.
``grad()`` and ``create_graph=True`` passes are not routed here at all (spec §10.1).

Hooks are collected when the pass starts (as PyTorch's compiled autograd does): a hook
registered *during* the pass on a node that has not run yet fires in eager mode but not here.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from hookgrad._config import STATE, set_grad_mode
from hookgrad.autograd import _api
from hookgrad.autograd.engine import GraphTask
from hookgrad.compile.compiled_autograd import ca_ops
from hookgrad.compile.core import config
from hookgrad.compile.compiled_autograd.ca_capture import Collected, Fallback, collect
from hookgrad.compile.compiled_autograd.ca_graph import CompiledAutogradGraph
from hookgrad.compile.core.counters import counters
from hookgrad.compile.core.exc import RecompileError
from hookgrad.compile.cache.frame import CA_STATE

__all__ = ["enable", "disable", "reset_compiled_autograd", "CompiledAutogradGraph",
           "in_compiled_autograd_region"]

_log = logging.getLogger(__name__)
_COMPILERS: list[Callable[..., Any]] = []  # enabled contexts, innermost last
_CACHE: dict[Any, Any] = {}


class _ThreadState(threading.local):
    """Per thread, as backward passes are: what is requested and what is running."""

    def __init__(self) -> None:
        self.requested: list = []  # compiler of the backward() call being validated
        self.running: list[bool] = []  # compiled graphs running (a nested backward: eager)


_TLS = _ThreadState()
_IDS = [0]
# The compiler used when ``config.compiled_autograd`` is on without an `enable` context: set by
# `hookgrad.compile.api` at import (``compile(backend="inductor", fullgraph=True, dynamic=True)``).
DEFAULT_COMPILER: list[Callable[..., Any]] = []


def install_for_config() -> None:
    """Watch backward passes (`_ca_observer` passes them through while CA is off)."""
    _install()


def _install() -> None:
    _api.add_backward_observer(_ca_observer)
    if _execute not in _api.BACKWARD_EXECUTORS:
        _api.BACKWARD_EXECUTORS.append(_execute)


def _uninstall() -> None:
    _api.remove_backward_observer(_ca_observer)
    if _execute in _api.BACKWARD_EXECUTORS:
        _api.BACKWARD_EXECUTORS.remove(_execute)


def reset_compiled_autograd() -> None:
    """Forget every capture (also done by ``hookgrad._dynamo.reset``).

    Mirrors: ``torch._dynamo.compiled_autograd.reset``.
    """
    _CACHE.clear()
    _IDS[0] = 0


def in_compiled_autograd_region() -> bool:
    """Whether a compiled-autograd graph is running.

    Mirrors: ``torch._dynamo.compiled_autograd.in_compiled_autograd_region``.
    """
    return bool(_TLS.running)


def _ca_observer(call: _api.BackwardCall) -> Any:
    """Decides which passes compiled autograd takes (NOTE [Backward observers] in _api)."""
    compilers = _COMPILERS or (DEFAULT_COMPILER if config.compiled_autograd else [])
    if not compilers:  # the config switch was turned off: stop watching
        _uninstall()
    if call.api != "backward" or call.create_graph or _TLS.running or not compilers:
        return call.run()  # grad(), re-entrant or higher-order backward, or CA off: eager
    requested = _TLS.requested
    requested.append(compilers[-1])
    try:
        return call.run()  # validation in `_api._backward`, then `_execute`
    finally:
        requested.pop()


def _fallback(reason: str) -> bool:
    counters["compiled_autograd_fallback"][reason] += 1
    _log.debug("compiled autograd: eager engine for this pass: %s", reason)
    return False


def _execute(roots: list, seeds: list, retain_graph: bool, targets: Any) -> bool:
    """The backward executor (NOTE [Backward executors] in _api): True when it ran the pass."""
    requested = _TLS.requested
    if not requested or requested[-1] is None:
        return False
    compiler = requested[-1]
    requested[-1] = None  # backward() calls made by hooks are not this request
    if targets is not None:
        return _fallback("backward(inputs=...) prunes the graph")
    try:
        col = collect(roots, seeds)
    except Fallback as e:
        return _fallback(str(e))
    # Keyed by structure only: a later context with another compiler reuses the graph compiled
    # first (PyTorch 2.13 does the same; ``reset()`` forgets it).
    compiled = _CACHE.get(col.key)
    if compiled is None:
        if _CACHE and config.error_on_recompile:
            raise RecompileError("Recompiling function compiled_autograd graph: the autograd "
                                 "graph structure or hook layout changed")
        counters["compiled_autograd"]["captures"] += 1
        _IDS[0] += 1
        compiled = _CACHE[col.key] = compiler(CompiledAutogradGraph(col.key, _IDS[0]))
    _run(compiled, col, retain_graph)
    return True


def _run(compiled: Any, col: Collected, retain_graph: bool) -> None:
    task = GraphTask(False, retain_graph, True)
    task.deps = col.deps
    prev = STATE.grad_enabled
    set_grad_mode(False)
    STATE.graph_task_stack.append(task)
    running = _TLS.running
    running.append(True)
    passes = ca_ops.PASSES.stack
    passes.append((col.nodes, not retain_graph))  # freed node by node (`node_done`)
    try:
        compiled(col.inputs, col.sizes, col.scalars, col.hooks, col.packed)
    finally:
        passes.pop()
        running.pop()
        STATE.graph_task_stack.pop()
        set_grad_mode(prev)


@contextlib.contextmanager
def enable(compiler_fn: Callable[..., Any], dynamic: bool = True) -> Iterator[None]:
    """Route every ``backward()`` in the block through compiled autograd.

    Mirrors: ``torch._dynamo.compiled_autograd._enable``.
    """
    _COMPILERS.append(compiler_fn)
    CA_STATE.enabled_depth += 1
    if len(_COMPILERS) == 1:
        _install()
    try:
        yield
    finally:
        CA_STATE.enabled_depth -= 1
        in_order = _COMPILERS[-1] is compiler_fn
        _COMPILERS.reverse()
        _COMPILERS.remove(compiler_fn)  # leave the stack consistent even when out of order
        _COMPILERS.reverse()
        if not _COMPILERS and not config.compiled_autograd:
            _uninstall()
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
    _uninstall()
    depth, CA_STATE.enabled_depth = CA_STATE.enabled_depth, 0
    try:
        yield
    finally:
        _COMPILERS.extend(saved)
        CA_STATE.enabled_depth = depth
        if _COMPILERS:
            _install()
