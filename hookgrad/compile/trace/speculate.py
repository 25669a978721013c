"""Speculative trace of a hook registered on an intermediate, compiled autograd off (spec §8.3).

The hook body runs once on a stand-in gradient (ones of the intermediate's shape and dtype, grad
mode off as in backward) under its own recorder, which makes a child graph
``(grad, *freevars) -> grad_or_None``. A side-effect barrier (a snapshot of everything the trace
and the hook can reach) rejects a body that mutates state that existed before it started.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

from hookgrad._config import add_recorder, remove_recorder
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.compile.core.graph import Graph, GraphModule, compile_module, placeholder
from hookgrad.compile.trace.recorder import TraceRecorder, UntrackedTensor
from hookgrad.compile.core.sources import SourceIndex
from hookgrad.compile.core.state import ImpureHook, SpeculationFailed
from hookgrad.compile.effects.world import WorldSnapshot

__all__ = ["speculate_hook", "UNSAFE"]

UNSAFE = ("HOP: Unsafe side effect: Mutating a variable from outside the scope of this HOP is "
          "not supported (a hook on an intermediate tensor mutated pre-existing state)")


def _no_closure() -> None:
    return None


# (lists and dicts: the snapshot sees their mutation, which fails the speculation as PyTorch's
# "Unsafe side effect" does; a fresh one is harmless)
_PURE_OWNERS = (Tensor, np.ndarray, np.generic, int, float, complex, str, bytes, tuple,
                frozenset, type, types.ModuleType, list, dict)


def _watching(chained: Any, impure: list) -> Any:
    """A profile function noting C methods called on objects that may hold state."""
    def profile(frame: Any, event: str, arg: Any) -> None:
        if chained is not None:
            chained(frame, event, arg)
        if event == "c_call" and not frame.f_globals.get("__name__", "").startswith(
                ("hookgrad.", "numpy")):  # (hookgrad's own bookkeeping is not the body's)
            owner = getattr(arg, "__self__", None)
            if owner is not None and not isinstance(owner, _PURE_OWNERS):
                # raised before the C method runs: the speculation leaves no trace of it
                impure.append(f"{type(owner).__name__}.{getattr(arg, '__name__', '?')}")
                raise ImpureHook(f"a hook body called {impure[0]}")
    return profile


def speculate_hook(trace: Any, t: Tensor, hook: Any) -> tuple[GraphModule, list[Tensor]]:
    """Trace `hook` into a sub-graph; return it and the outer tensors it reads (freevars).

    Raises `SpeculationFailed` (with the world restored) when the body cannot be kept.
    """
    hook_index = SourceIndex(_no_closure, {"hook": hook})
    snapshot = WorldSnapshot([trace.index, hook_index])
    graph = Graph()
    sub = TraceRecorder(graph, None)
    sub.outer = trace.rec
    sub.grad_mode = False  # the body runs (and replays) in backward, under no_grad
    grad = Tensor._make(np.ones(t._data.shape, dtype=t._data.dtype))
    sub.bind_value(grad, placeholder(graph, "grad"))
    trace.sub.append(sub)
    remove_recorder(trace.rec)
    add_recorder(sub)
    impure: list = []
    old_profile = sys.getprofile()
    sys.setprofile(_watching(old_profile, impure))
    try:
        with no_grad():
            result = hook(grad)
        out = sub.node_of(result) if isinstance(result, Tensor) else None
    except ImpureHook:
        snapshot.restore()
        raise
    except (SpeculationFailed, UntrackedTensor) as e:
        snapshot.restore()
        raise SpeculationFailed(str(e)) from None
    except Exception as e:  # noqa: BLE001 - any failure of the body: keep eager semantics
        snapshot.restore()
        raise SpeculationFailed(f"hook body failed while being traced: {e!r}") from None
    finally:
        sys.setprofile(old_profile)
        remove_recorder(sub)
        add_recorder(trace.rec)
        trace.sub.pop()
    if result is not None and not isinstance(result, Tensor):
        raise SpeculationFailed("a tensor hook returned a non-tensor value")
    if snapshot.diff():
        snapshot.restore()
        raise SpeculationFailed(UNSAFE)
    if impure:
        raise ImpureHook(f"a hook body called {impure[0]}")
    if trace.sym is not None and any(c._data.ndim for c in sub.constants.values()):
        # a tensor the body made outside `bind` (``ones_like(g)``) has the trace call's shape:
        # with symbolic sizes it would be stale on the next shape, so the hook stays eager
        raise SpeculationFailed("a hook body made a constant tensor in a dynamic-shape trace")
    graph.output(out)
    return compile_module(graph, dict(sub.constants)), list(sub.free_order)
