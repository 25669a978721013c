"""Which sizes and scalars a trace treats as dynamic (spec §6.3, "automatic dynamic").

`FrameState` remembers, per code key, the sizes of every tensor argument and the value of every
int/float argument seen by its traces. When a new trace is needed and a size (or scalar) differs
from what an earlier trace saw, that dimension (or argument) is traced as dynamic from then on,
so shapes 3, 4, 5 give 1, 2, 2 frames as in PyTorch 2.13 (checked by experiment). Sizes 0 and 1
are always specialised (a dynamic dimension's guard requires a size >= 2), int arguments are not.
``dynamic=True`` (or ``config.assume_static_by_default = False``) makes every eligible dimension
and scalar dynamic from the first trace; ``dynamic=False`` never; `mark_dynamic`/`mark_static`
force a tensor's dimension either way. Parameters (``nn.Parameter``) stay static, as PyTorch's
``force_parameter_static_shapes``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core import config
from hookgrad.compile.core.sources import CallContext, Source

__all__ = ["FrameState", "DynamicPlan", "plan_for", "mark_dynamic", "mark_static",
           "maybe_mark_dynamic", "FRAME_STATES"]

_DYN = object()  # a scalar argument that changed: dynamic from now on


def _dims_attr(t: Tensor, name: str) -> set:
    return t.__dict__.get(name, set())


def mark_dynamic(t: Tensor, index: int | list | tuple, **_kwargs: Any) -> None:
    """Trace dimension(s) `index` of `t` as dynamic from the first compile.

    Mirrors: ``torch._dynamo.mark_dynamic``.
    """
    dims = set(index) if isinstance(index, (list, tuple)) else {index}
    t.__dict__.setdefault("_dynamo_dynamic_indices", set()).update(
        d % max(t._data.ndim, 1) for d in dims)


maybe_mark_dynamic = mark_dynamic


def mark_static(t: Any, index: int | list | tuple | None = None) -> None:
    """Keep dimension(s) `index` of `t` (all when None) static.

    Mirrors: ``torch._dynamo.mark_static``.
    """
    if not isinstance(t, Tensor):
        return
    dims = range(t._data.ndim) if index is None else (
        index if isinstance(index, (list, tuple)) else [index])
    t.__dict__.setdefault("_dynamo_static_indices", set()).update(
        d % max(t._data.ndim, 1) for d in dims)
    dyn = t.__dict__.get("_dynamo_dynamic_indices")
    if dyn:
        dyn.difference_update(t.__dict__["_dynamo_static_indices"])


class DynamicPlan:
    """What one trace treats as dynamic: tensor dims by source text, scalar argument sources."""

    def __init__(self) -> None:
        self.dims: dict[str, frozenset] = {}
        self.scalars: dict[str, Source] = {}
        self.tensor_sources: dict[str, Source] = {}

    def __bool__(self) -> bool:
        return bool(self.dims or self.scalars)

    def dims_of(self, src: Source) -> frozenset:
        return self.dims.get(str(src), frozenset())


class FrameState:
    """Sizes and scalar values the traces of one code key have seen."""

    def __init__(self) -> None:
        self.sizes: dict[str, list] = {}
        self.scalars: dict[str, Any] = {}

    def note_tensor(self, key: str, shape: tuple) -> list:
        seen = self.sizes.get(key)
        if seen is None:
            seen = self.sizes[key] = list(shape)
        elif len(seen) != len(shape):  # a rank change: every dimension becomes dynamic
            seen[:] = [None] * len(shape)
        else:
            for d, size in enumerate(shape):
                if seen[d] is not None and seen[d] != size:
                    seen[d] = None
        return seen

    def note_scalar(self, key: str, value: Any) -> bool:
        """Remember `value`; True once the argument has been seen with two values."""
        if key not in self.scalars:
            self.scalars[key] = value
            return False
        seen = self.scalars[key]
        if seen is not _DYN and (type(seen) is not type(value) or seen != value):
            self.scalars[key] = _DYN
        return self.scalars[key] is _DYN


FRAME_STATES: dict[Any, FrameState] = {}


def _candidates(ctx: CallContext, varargs: str | None) -> tuple[list, list]:
    """(tensor, scalar) arguments eligible for dynamism: top level and one level into
    tuple/list arguments (tensors) or the ``*args`` tuple (scalars)."""
    tensors: list[tuple[Source, Tensor]] = []
    scalars: list[tuple[Source, Any]] = []
    for name, value in ctx.args.items():
        src = Source(("L", name))
        if isinstance(value, Tensor):
            tensors.append((src, value))
        elif type(value) in (int, float):
            scalars.append((src, value))
        elif type(value) in (tuple, list):
            for i, item in enumerate(value):
                isrc = src.child(("item", i))
                if isinstance(item, Tensor):
                    tensors.append((isrc, item))
                elif name == varargs and type(item) in (int, float):
                    scalars.append((isrc, item))
    return [(s, t) for s, t in tensors if not t._is_param], scalars


def _varargs_name(fn: Any) -> str | None:
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_flags & 0x04:
        return None
    return code.co_varnames[code.co_argcount + code.co_kwonlyargcount]


def plan_for(key: Any, fn: Any, ctx: CallContext, dynamic: bool | None) -> DynamicPlan:
    """Record this call's sizes in the code key's `FrameState` and decide the trace's plan."""
    plan = DynamicPlan()
    state = FRAME_STATES.setdefault(key, FrameState())
    tensors, scalars = _candidates(ctx, _varargs_name(fn))
    everything = dynamic is True or (dynamic is None and not config.assume_static_by_default)
    automatic = dynamic is None and config.automatic_dynamic_shapes
    for src, t in tensors:
        shape = t._data.shape
        seen = state.note_tensor(str(src), shape)
        forced = _dims_attr(t, "_dynamo_dynamic_indices")
        static = _dims_attr(t, "_dynamo_static_indices")
        if dynamic is False:
            continue
        dims = frozenset(d for d, size in enumerate(shape)
                         if size >= 2 and d not in static
                         and (everything or d in forced or (automatic and seen[d] is None)))
        if dims:
            plan.dims[str(src)] = dims
            plan.tensor_sources[str(src)] = src
    for src, value in scalars:
        changed = state.note_scalar(str(src), value)
        if dynamic is not False and (everything or (automatic and changed)):
            plan.scalars[str(src)] = src
    return plan


def dynamic_tensor_check(src: Source, meta: tuple, dims: frozenset, layout: tuple) -> Any:
    """A TENSOR_MATCH whose dynamic dimensions only need a size >= 2 (0/1 specialise). A
    tensor traced contiguous must be contiguous (its strides follow from its sizes); any
    other layout is specialised to its exact strides."""
    kind, dtype, requires_grad, shape = meta
    strides, contiguous = layout
    exact = None if contiguous else strides
    rank = len(shape)
    fixed = tuple((d, s) for d, s in enumerate(shape) if d not in dims)
    dyn = tuple(sorted(dims))

    def check(ctx: CallContext) -> bool:
        t = src.get(ctx)
        if type(t) is not kind or t._requires_grad is not requires_grad:
            return False
        data = t._data
        got = data.shape
        if len(got) != rank or data.dtype != dtype:
            return False
        for d, s in fixed:
            if got[d] != s:
                return False
        for d in dyn:
            if got[d] < 2:
                return False
        if (data.strides != exact) if exact is not None else not data.flags.c_contiguous:
            return False
        static = t.__dict__.get("_dynamo_static_indices")
        return not (static and static & dims)
    sizes = ["s" if d in dims else s for d, s in enumerate(shape)]
    layout = "contiguous" if contiguous else f"byte strides={list(strides)}"
    return check, (f"TENSOR_MATCH {src} {dtype} requires_grad={requires_grad} "
                   f"size={sizes} (dynamic dims {list(dyn)} >= 2) {layout}")

