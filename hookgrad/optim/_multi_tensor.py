"""The multi-tensor (``foreach``/``fused``) side of the optimizers: flag checks and list helpers.

PyTorch's ``foreach`` path applies each step of an update to the whole list of a group's tensors
(``_foreach_mul_``, ``_foreach_lerp_``...), and its ``fused`` path (on CPU: Adam, AdamW, SGD,
Adagrad) runs the whole update per element in one kernel. On NumPy both mean the same thing:
the work that does not depend on the tensor is done once per group (the step counters are all
advanced first, then the bias corrections are computed once per distinct step value), and each
parameter's arrays then go through the update in one pass while they are in cache. The
arithmetic per element is the single-tensor path's, so every flag agrees with PyTorch's within
float rounding (the oracle tests compare each flag with PyTorch's same flag).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.optim.optimizer import _bump

__all__ = ["check_fused", "advance_steps", "per_step"]


def check_fused(fused: Any, foreach: Any, differentiable: bool) -> None:
    """PyTorch's constructor checks for ``fused=True`` (CPU tensors are supported).

    Raises:
        RuntimeError: with ``differentiable=True`` or ``foreach=True`` (PyTorch's messages).
    """
    if not fused:
        return
    if differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def advance_steps(state_steps: list[Tensor]) -> list[float]:
    """Add one to every ``state["step"]`` (bumping each version) and return the new values."""
    out = []
    for step_t in state_steps:
        step_t._data += 1
        _bump(step_t)
        out.append(float(step_t._data))
    return out


def per_step(steps: list[float], scalars: Callable[[float], Any]) -> list[Any]:
    """``scalars(step)`` for each step value, computed once per distinct value."""
    memo: dict[float, Any] = {}
    out = []
    for s in steps:
        v = memo.get(s)
        if v is None:
            v = memo[s] = scalars(s)
        out.append(v)
    return out
