"""Identity guards: tensor inputs keep the identities the trace saw (spec §6.1; PyTorch's
DUPLICATE_INPUT and NO_TENSOR_ALIASING guards)."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.sources import Source, is_constant

__all__ = ["identity_guards", "MAX_DEPTH"]

MAX_DEPTH = 6  # argument containers are guarded item by item down to this depth


def identity_guards(gs: Any, trace: Any) -> None:
    """Tensor inputs keep the identities the trace saw (PyTorch: DUPLICATE_INPUT and
    NO_TENSOR_ALIASING guards). A tensor reached by several sources (``f(t, t)``, a parameter
    passed as an argument) is one placeholder, fetched from its first source, so the others
    must hold that object again; tensors the trace saw as distinct (``x is y`` read in the
    region, an in-place write through one of them) must stay distinct. One guard compares
    which of the sources hold the same object."""
    index = trace.index
    obj_of = {id(src): value for src, value in index.by_id.values()}
    entries: dict[str, tuple[Source, Any]] = {}
    for _node, src, meta in trace.rec.placeholders:
        if meta is None:
            continue
        value = obj_of[id(src)]
        entries.setdefault(str(src), (src, value))
        for other in index.aliases.get(id(value), ()):
            entries.setdefault(str(other), (other, value))
    for name, value in trace.ctx.args.items():
        for src, t in _argument_tensors(Source(("L", name)), value, 0):
            entries.setdefault(str(src), (src, t))
    if len(entries) < 2:
        return
    srcs = tuple(src for src, _v in entries.values())
    want = _identity_pattern([v for _s, v in entries.values()])
    n = len(srcs)
    if want == tuple(range(n)):  # all distinct (the common case): one set
        gs.add(lambda ctx: len({id(s.get(ctx)) for s in srcs}) == n,
               f"the tensor inputs {[str(s) for s in srcs][:4]}... are distinct objects")
    else:
        gs.add(lambda ctx: _identity_pattern([s.get(ctx) for s in srcs]) == want,
               f"the tensor inputs {[str(s) for s in srcs][:4]}... keep their identities")


def _identity_pattern(values: list) -> tuple:
    """For each value, the position of the first value that is the same object."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(id(v), i) for i, v in enumerate(values))


def _argument_tensors(src: Source, value: Any, depth: int) -> list:
    if isinstance(value, Tensor):
        return [(src, value)]
    out: list = []
    if isinstance(value, (list, tuple, dict)) and depth < MAX_DEPTH:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if is_constant(key):
                out += _argument_tensors(src.child(("item", key)), item, depth + 1)
    return out
