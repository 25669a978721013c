"""The user-level calls of a trace: which public call made which graph nodes.

The recorder sees primitives at `bind`; a backend handed a ``hookgrad.fx.GraphModule`` expects
the calls the user wrote (``x.relu()`` as a ``call_method``, ``y * 2`` as ``operator.mul`` with
the scalar kept, ``hookgrad.sin(a)``, ``F.linear``), as ``torch.compile`` hands a custom
backend. While a trace runs, the public functions of hookgrad's namespaces and the methods and
operators of `Tensor` are wrapped: an outermost call notes ``(first node, end, kind, target,
args, kwargs, result node)`` in ``rec.user_calls`` (tensors replaced by their nodes). The
fx converter (`backends.to_fx`) folds a note's nodes into one fx node when they form a closed
group; otherwise the primitives stay. Names another patch group owns are left to it, and a
trace with symbolic sizes (whose group wraps these same names) does not install this one: its
graph keeps the primitives.
"""

from __future__ import annotations

import dis
import inspect
import linecache
import operator
import sys
from typing import Any, NamedTuple

from hookgrad._tensor import Tensor
from hookgrad.compile.core.state import current_trace
from hookgrad.compile.trace.patches import GROUPS, PatchGroup
from hookgrad.compile.trace.value_shapes import user_call_break

__all__ = ["UserCall", "GROUP", "OPERATORS", "mark_user_line"]


class UserCall(NamedTuple):
    """One outermost public call of a trace and the node range it recorded."""

    start: int
    end: int
    kind: str  # call_function | call_method
    target: Any  # the public function, an ``operator`` function, or a method name
    args: tuple
    kwargs: dict
    result: Any  # the node bound to the returned tensor
    name: str | None = None  # the variable the caller stores the result in (dynamo's name)
    stack_trace: str | None = None  # the caller's line


# Tensor operator methods -> (operator function, reflected): what dynamo records for them.
OPERATORS: dict[str, tuple[Any, bool]] = {
    "__add__": (operator.add, False), "__radd__": (operator.add, True),
    "__sub__": (operator.sub, False), "__rsub__": (operator.sub, True),
    "__mul__": (operator.mul, False), "__rmul__": (operator.mul, True),
    "__truediv__": (operator.truediv, False), "__rtruediv__": (operator.truediv, True),
    "__floordiv__": (operator.floordiv, False), "__rfloordiv__": (operator.floordiv, True),
    "__mod__": (operator.mod, False), "__rmod__": (operator.mod, True),
    "__pow__": (operator.pow, False), "__rpow__": (operator.pow, True),
    "__matmul__": (operator.matmul, False), "__rmatmul__": (operator.matmul, True),
    "__and__": (operator.and_, False), "__rand__": (operator.and_, True),
    "__or__": (operator.or_, False), "__ror__": (operator.or_, True),
    "__xor__": (operator.xor, False), "__rxor__": (operator.xor, True),
    "__iadd__": (operator.iadd, False), "__isub__": (operator.isub, False),
    "__imul__": (operator.imul, False), "__itruediv__": (operator.itruediv, False),
    "__neg__": (operator.neg, False), "__pos__": (operator.pos, False),
    "__abs__": (operator.abs, False), "__invert__": (operator.invert, False),
    "__lt__": (operator.lt, False), "__le__": (operator.le, False),
    "__gt__": (operator.gt, False), "__ge__": (operator.ge, False),
    "__eq__": (operator.eq, False), "__ne__": (operator.ne, False),
    "__getitem__": (operator.getitem, False),
}

# Methods that are not computations on values: hooks, autograd entry points, host reads.
_SKIP_METHODS = frozenset({
    "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
    "requires_grad_", "item", "tolist", "numpy", "size", "dim", "numel", "stride",
    "data_ptr", "storage_offset", "untyped_storage", "is_contiguous", "element_size",
    "get_device", "nelement", "ndimension", "is_floating_point", "is_complex",
    "_version", "type", "is_shared", "share_memory_", "pin_memory", "is_pinned",
})

_PLAIN = (int, float, bool, str, type(None), slice, type(Ellipsis), complex)
_MISSING = object()
_DEPTH = [0]


def _plain_type(v: Any) -> bool:
    # dtypes, devices and memory formats are hookgrad objects without tensors in them
    return isinstance(v, _PLAIN) or type(v).__module__.startswith("hookgrad._") and \
        type(v).__name__ in ("dtype", "device", "memory_format", "layout")


def _to_nodes(value: Any, rec: Any, pre: dict) -> Any:
    """`value` with tensors replaced by their nodes; `_MISSING` if something is not expressible."""
    if isinstance(value, Tensor):
        node = pre.get(id(value)) or rec.values.get(id(value))
        if node is None and rec.sourced(value):  # an input only its metadata was read from
            node = rec.node_of(value)
        return _MISSING if node is None else node
    if type(value) in (tuple, list):  # (a named tuple or a Size: not rebuilt here)
        out = [_to_nodes(v, rec, pre) for v in value]
        return _MISSING if any(v is _MISSING for v in out) else type(value)(out)
    if isinstance(value, tuple) and all(type(v) is int for v in value):
        return tuple(value)  # a Size
    if isinstance(value, dict):
        out_d = {k: _to_nodes(v, rec, pre) for k, v in value.items()}
        return _MISSING if any(v is _MISSING for v in out_d.values()) else out_d
    return value if _plain_type(value) else _MISSING


def instances_in(value: Any, cls: type, out: list | None = None) -> list:
    """The `cls` instances inside `value`'s tuples, lists and dict values, in order (the call
    arguments a recorded call read: tensors here, graph nodes in `backends.to_fx`)."""
    out = [] if out is None else out
    if isinstance(value, cls):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            instances_in(v, cls, out)
    elif isinstance(value, dict):
        for v in value.values():
            instances_in(v, cls, out)
    return out


_OWN_DIR = __file__.rsplit("/compile/", 1)[0] + "/"  # the hookgrad package directory
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})
_STORED: dict[Any, dict[int, str]] = {}  # code -> offset in a call -> the name stored next


def _caller(frame: Any) -> tuple[str | None, str]:
    """(the variable the caller's next instruction stores into, its stack-trace line)."""
    code = frame.f_code
    table = _STORED.get(code)
    if table is None:
        ins = list(dis.get_instructions(code))
        # f_lasti is the calling instruction, or (CALL) its last inline cache entry: the next
        # instruction is the first one after it
        table = _STORED[code] = {}
        for a, b in zip(ins, ins[1:]):
            if b.opname in _STORES:
                for off in range(a.offset, b.offset):
                    table[off] = b.argval
    name = table.get(frame.f_lasti)
    # the line is the user's (hookgrad's own frames skipped, as dynamo skips torch's files)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    code, line = frame.f_code, frame.f_lineno
    src = linecache.getline(code.co_filename, line).strip()
    trace = f'  File "{code.co_filename}", line {line}, in {code.co_name}\n    {src}\n'
    return name, trace


def mark_user_line(node: Any) -> None:
    """Give a node recorded whole by another group (a composite such as ``F.linear``) the
    user's line and stored name, as a folded call gets them."""
    try:
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
            frame = frame.f_back
        name, node.meta["stack_trace"] = _caller(frame)
        if name:
            node.meta["stored_name"] = name
    except Exception:  # noqa: BLE001 - printing help only
        pass


def _note(rec: Any, start: int, kind: str, target: Any, args: tuple, kwargs: dict, pre: dict,
          result: Tensor, frame: Any) -> None:
    end = len(rec.graph.nodes)  # (before an input only read for its metadata gets a placeholder)
    fargs, fkwargs = _to_nodes(args, rec, pre), _to_nodes(kwargs, rec, pre)
    if fargs is _MISSING or fkwargs is _MISSING:
        return
    node = rec.values.get(id(result))
    if end > start:
        if node is not None:
            rec.user_calls.append(UserCall(start, end, kind, target, tuple(fargs), fkwargs,
                                             node, *_caller(frame)))
    elif node is None:
        # nothing recorded: a deterministic factory (``zeros_like(z)``, ``hookgrad.ones(3)``)
        # whose result the graph bakes as a constant if it uses it; fx re-runs the call
        # (its arguments are graph values or constants the guards hold). The result is kept
        # so its id stays its own.
        rec.factory_calls[id(result)] = (UserCall(start, start, kind, target, tuple(fargs),
                                                    fkwargs, None, *_caller(frame)), result)


def _wrapper(real: Any, kind: str, target: Any, reflected: bool) -> Any:
    name = target if isinstance(target, str) else getattr(target, "__name__", "")

    def call(*args: Any, **kwargs: Any) -> Any:
        trace = current_trace() if not _DEPTH[0] else None
        if trace is None or trace.sub or not trace.recording:
            return real(*args, **kwargs)
        rec = trace.rec
        why = user_call_break(name, rec, args, kwargs)
        if why is not None:  # an output shape that depends on values (`value_shapes`)
            trace.graph_break(why)
            return real(*args, **kwargs)
        values = rec.values
        pre = {id(t): values.get(id(t)) for t in instances_in((args, kwargs), Tensor)}
        start = len(rec.graph.nodes)
        _DEPTH[0] += 1
        try:
            result = real(*args, **kwargs)
        finally:
            _DEPTH[0] -= 1
        if isinstance(result, Tensor) and trace.recording:
            try:
                _note(rec, start, kind, target, args[::-1] if reflected else args, kwargs, pre,
                      result, sys._getframe(1))
            except Exception:  # noqa: BLE001 - an argument it cannot map: no note, no fold
                pass
        return result
    call.__name__ = getattr(real, "__name__", "call")
    call.__qualname__ = getattr(real, "__qualname__", call.__name__)
    call.__doc__ = getattr(real, "__doc__", None)
    call.__wrapped__ = real  # type: ignore[attr-defined]
    return call


def _owned_by_others() -> set[tuple[int, str]]:
    # built here with the earlier groups installed, exactly as their own first install would
    taken = set()
    for name in ("intercept", "calls"):
        taken |= {(id(p.owner), p.name) for p in GROUPS[name].ensure_built()}
    return taken


def _table() -> list[tuple[Any, str, Any]]:
    from hookgrad.fx._patcher import public_entries
    taken = _owned_by_others()
    out: list[tuple[Any, str, Any]] = []
    seen: set[str] = set()
    for klass in Tensor.__mro__[:-1]:
        for name, value in vars(klass).items():
            if name in seen or (id(Tensor), name) in taken or (id(klass), name) in taken:
                continue
            seen.add(name)
            if not inspect.isfunction(value):
                continue
            if name in OPERATORS:
                fn, reflected = OPERATORS[name]
                out.append((klass, name, _wrapper(value, "call_function", fn, reflected)))
            elif not name.startswith("_") and name not in _SKIP_METHODS:
                out.append((klass, name, _wrapper(value, "call_method", name, False)))
    for ns, name, fn in public_entries():
        if (id(ns), name) not in taken and not name.startswith("register_"):
            out.append((ns, name, _wrapper(fn, "call_function", fn, False)))
    return out


GROUP = PatchGroup("user_calls", _table)
