"""Operations whose output *shape* depends on tensor values (``nonzero``, ``unique``, boolean
masks): a graph break when a graph value or an input reaches them while a trace runs (most
public functions are patched here; `user_calls` asks `user_call_break` about the ones it
wraps itself, the recorder asks `value_shaped` about each primitive).

The trace runs the user's code on real tensors, so a count read from such a result
(``len(x.nonzero())``, ``x[x > 0].shape[0]``) becomes a plain Python number in the graph, and
several of these functions compute their result outside `bind` (it would be baked as a
constant tensor). Either way a later call would reuse the first call's numbers, so the region
runs eagerly instead, as PyTorch's dynamo does by default
(``capture_dynamic_output_shape_ops=False``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.state import current_trace

__all__ = ["value_shape_table", "value_shaped", "user_call_break", "known"]

_REASON = "`{}` on a graph value or an input: its output shape depends on tensor values"
_ALWAYS = ("nonzero", "argwhere", "unique", "unique_consecutive", "masked_select", "bincount")


def _called_by_user() -> bool:
    """The nearest caller outside the compile machinery's wrappers is user code (hookgrad's
    own functions use masks inside ops whose output shapes do not depend on values)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            "hookgrad.compile."):
        frame = frame.f_back
    return frame is None or not frame.f_globals.get("__name__", "").startswith("hookgrad.")


def known(rec: Any, t: Any) -> bool:
    """`t` is a graph value or an input of `rec` (or of the graph around a hook body)."""
    while rec is not None:
        if rec.is_traced(t) or rec.sourced(t):
            return True
        rec = rec.outer
    return False


def _tensors(value: Any) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _breaking(name: str, real: Callable[..., Any], picks: Callable[..., list]) -> Any:
    """`real`, breaking the graph first when a tensor `picks(args, kwargs)` names is known."""
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording:
            rec = tr.active_recorder()
            if not rec.suspended and any(known(rec, t) for t in picks(args, kwargs)) \
                    and _called_by_user():
                tr.graph_break(_REASON.format(name))
        return real(*args, **kwargs)
    return wrapper


def _all_tensors(args: tuple, kwargs: dict) -> list:
    return _tensors(list(args) + list(kwargs.values()))


def _repeats(args: tuple, kwargs: dict) -> list:
    """``repeat_interleave(input, repeats)`` / ``repeat_interleave(repeats)``: the repeats."""
    if "repeats" in kwargs:
        return _tensors(kwargs["repeats"])
    return _tensors(args[1] if len(args) > 1 else args[:1])


def _where(args: tuple, kwargs: dict) -> list:
    """``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    return _tensors(args[0]) if len(args) == 1 and not kwargs else []


# primitives recorded through `bind` whose output shape depends on values; ``index`` only
# with a boolean (or byte) mask among its indices
_PRIMS = frozenset({"masked_select", "unique_consecutive", "nonzero", "unique", "argwhere"})


def value_shaped(prim: Any, inputs: tuple) -> str | None:
    """Why recording `prim` on `inputs` must break the graph (None: it need not)."""
    name = prim.name
    if name in _PRIMS:
        return _REASON.format(name)
    if name == "index" and any(t.dtype.name in ("bool", "uint8") for t in inputs[1:]
                               if isinstance(t, Tensor)):
        return _REASON.format("boolean-mask indexing")
    return None


def value_shape_table() -> list[tuple[Any, str, Any]]:
    top = sys.modules.get("hookgrad")  # the public namespace users call (no upward import)
    table: list[tuple[Any, str, Any]] = []
    for owner in (top, Tensor):
        for name in _ALWAYS:
            real = getattr(owner, name, None)
            if callable(real):
                table.append((owner, name, _breaking(name, real, _all_tensors)))
    return table


# public calls that keep their user-level graph node (`user_calls` wraps them, so they are not
# patched here): checked from `user_calls`' wrapper, on the outermost call
_USER_CHECKS = {"repeat_interleave": _repeats, "where": _where}


def user_call_break(name: str, rec: Any, args: tuple, kwargs: dict) -> str | None:
    """Why an outermost user call of `name` must break the graph (None: it need not)."""
    picks = _USER_CHECKS.get(name)
    if picks is not None and any(known(rec, t) for t in picks(args, kwargs)):
        return _REASON.format(name)
    return None
