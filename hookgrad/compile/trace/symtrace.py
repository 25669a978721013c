"""What a dynamic trace adds to the tracer: symbolic sizes and scalars, one node per API call.

NOTE [Dynamic traces]
A trace with a non-empty `DynamicPlan` (spec §6.3) must give a graph that is right for every
size its guards accept. Two things make it so:

* sizes of dynamic dimensions and dynamic scalar arguments reach the user's code as
  `symbolic.SymInt`/`SymFloat` (graph inputs fetched from the call: ``L['x'].size()[0]``,
  ``L['n']``); sizes of intermediate tensors are read at run time (`sym_size` nodes);
* every hookgrad function and tensor method the user's code calls becomes **one** graph node
  (`CompositeCall`) that re-runs the call at run time, with the run-time tensors and sizes.
  Shape parameters that hookgrad derives inside a call (``flatten``, ``expand_as``, a view's
  ``-1``) are therefore recomputed on every call instead of being baked in from the trace.
  Inside such a call nothing is recorded and only concrete numbers are seen.

Static traces do not use any of this (their graphs hold primitives, as before).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
import types
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.compile.trace.calls import object_leaf, record_call
from hookgrad.compile.core.dynamic import DynamicPlan
from hookgrad.compile.core.graph import placeholder
from hookgrad.compile.core.sources import Source
from hookgrad.compile.core.state import current_trace
from hookgrad.compile.core.symbolic import SymFloat, SymInt, is_sym, make_sym, plain, specialised
from hookgrad.compile.trace.patches import PatchGroup
from hookgrad.nn import functional as _F
from hookgrad.nn.modules.module import Module

__all__ = ["SymTrace", "SymSize", "sym_size", "sym_arguments", "desym", "GROUP"]


def sym_size(t: Tensor, dim: int) -> int:
    """Node target: a size of an intermediate tensor, read when the graph runs."""
    return t._data.shape[dim]


class SymTrace:
    """The symbolic side of one dynamic trace (`tracer.ActiveTrace.sym`)."""

    def __init__(self, trace: Any, plan: DynamicPlan) -> None:
        self.trace = trace
        self.plan = plan
        self._sizes: dict[tuple, Any] = {}

    # -------------------------------------------------------------- inputs
    def scalar_input(self, src: Source, value: Any) -> Any:
        rec = self.trace.rec
        node = placeholder(rec.graph, src.name())
        rec.placeholders.append((node, src, None))
        return make_sym(value, node, src.get, str(src))

    def shape(self, t: Tensor) -> tuple:
        tr = self.trace
        shape = t._data.shape
        rec = tr.rec
        if not tr.recording or tr.sub or rec.suspended:
            return shape
        if rec.is_intermediate(t):
            return tuple(self._intermediate(t, d, s) for d, s in enumerate(shape))
        src = tr.index.source_of(t)
        dims = self.plan.dims_of(src) if src is not None else ()
        if not dims:
            return shape
        return tuple(self._input(src, d, s) if d in dims else s for d, s in enumerate(shape))

    def _input(self, src: Source, d: int, size: int) -> Any:
        key = (str(src), d)
        hit = self._sizes.get(key)
        if hit is None:
            size_src = src.child(("dim", d))
            rec = self.trace.rec
            node = placeholder(rec.graph, size_src.name())
            rec.placeholders.append((node, size_src, None))
            hit = self._sizes[key] = make_sym(size, node, size_src.get, str(size_src))
        return hit

    def _intermediate(self, t: Tensor, d: int, size: int) -> Any:
        rec = self.trace.rec
        node = rec.node_of(t)
        key = (id(node), d)
        hit = self._sizes.get(key)
        if hit is None:
            size_node = rec.graph.call_function(sym_size, (node, d), name="sym_size")
            hit = self._sizes[key] = make_sym(size, size_node, None, f"{node.name}.size()[{d}]")
        return hit

    # -------------------------------------------------------------- composite calls
    def composite(self, fn: Any, args: tuple, kwargs: dict) -> Any:
        return record_call(self.trace, self.trace.rec, fn, args, kwargs)

    def module_forward(self, forward: Any, mod: Any, args: tuple, kwargs: dict) -> Any:
        """A hookgrad module's own ``forward``: one node, the module fetched from its source
        (hookgrad's module code reads sizes and builds tensors through internal functions
        that the composite wrappers do not see, so it must run whole, at run time)."""
        leaf = object_leaf(self.trace, mod)
        objects = {id(mod): leaf} if leaf is not mod else None
        return record_call(self.trace, self.trace.rec, forward, (mod, *args), kwargs,
                           objects=objects, user_code=True)


# ------------------------------------------------------------------ interception
def _active() -> Any:
    tr = current_trace()
    if tr is None or tr.sym is None or not tr.recording or tr.sub or tr.rec.suspended:
        return None
    return tr


def _wrap(real: Any) -> Any:
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = _active()
        if tr is None:  # not recorded here (a hook body, a composite's inside): guard values
            return real(*specialised(args), **specialised(kwargs)) \
                if _any_sym(args, kwargs) else real(*args, **kwargs)
        return tr.sym.composite(real, args, kwargs)
    return wrapper


def _wrap_forward(real: Any) -> Any:
    @functools.wraps(real)
    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        tr = _active()
        if tr is not None and self._modules:  # a container: its children's calls are traced
            return real(self, *args, **kwargs)
        if tr is None:
            return real(self, *specialised(args), **specialised(kwargs)) \
                if _any_sym(args, kwargs) else real(self, *args, **kwargs)
        return tr.sym.module_forward(real, self, args, kwargs)
    return forward


def _module_forwards() -> list[tuple[Any, str, Any]]:
    """The ``forward`` of every module class hookgrad defines (``hookgrad.nn``)."""
    table = []
    todo, seen = [Module], set()
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if id(sub) not in seen:
                seen.add(id(sub))
                todo.append(sub)
        if (cls.__module__.startswith("hookgrad.nn.")
                and isinstance(cls.__dict__.get("forward"), types.FunctionType)):
            table.append((cls, "forward", _wrap_forward(cls.__dict__["forward"])))
    return table


def _any_sym(args: tuple, kwargs: dict) -> bool:
    return any(is_sym(a) or (isinstance(a, (tuple, list)) and any(map(is_sym, a)))
               or (type(a) is slice and any(map(is_sym, (a.start, a.stop, a.step))))
               for a in (*args, *kwargs.values()))


class SymSize(Size):
    """A shape holding symbolic sizes: slices, sums and repeats keep them symbolic.

    Mirrors: ``torch.Size`` (of a dynamic-shape trace).
    """

    def __new__(cls, sizes: Any = ()) -> SymSize:
        return tuple.__new__(cls, sizes)  # no int check: the items may be `SymInt`s

    def __getitem__(self, item: Any) -> Any:
        out = tuple.__getitem__(self, item)
        return SymSize(out) if isinstance(item, slice) else out

    def __add__(self, other: Any) -> Any:
        return SymSize(tuple(self) + tuple(other)) if isinstance(other, tuple) \
            else NotImplemented

    def __radd__(self, other: Any) -> Any:
        return SymSize(tuple(other) + tuple(self)) if isinstance(other, tuple) \
            else NotImplemented

    def __reduce__(self) -> Any:
        return (Size, (tuple(plain(list(self))),))


def _shape(self: Tensor) -> Size:
    tr = current_trace()
    if tr is None or tr.sym is None:
        return Size(self._data.shape)
    shape = tr.sym.shape(self)
    return SymSize(shape) if any(map(is_sym, shape)) else Size(shape)


def _size(self: Tensor, dim: int | None = None) -> Any:
    shape = _shape(self)
    if dim is None:
        return shape
    _REAL["size"](self, dim)  # PyTorch's IndexError for a bad `dim`
    return shape[dim if dim >= 0 else dim + len(shape)]


def _numel(self: Tensor) -> Any:
    n: Any = 1
    for s in _shape(self):
        n = n * s
    return n


def _len(self: Tensor) -> int:
    n = _REAL["__len__"](self)
    shape = _shape(self)
    return int(shape[0]) if shape else n


def _iter(self: Tensor) -> Any:
    _len(self)  # specialises the leading size: the loop unrolls to a fixed count
    return _REAL["__iter__"](self)


def _builtin_len(obj: Any) -> Any:
    """``len(tensor)`` stays symbolic in a dynamic trace (as PyTorch's ``len`` of a tensor)."""
    if isinstance(obj, Tensor) and obj._data.ndim:
        return _shape(obj)[0]
    return _REAL_LEN(obj)


def _isinstance(obj: Any, classinfo: Any) -> bool:
    """``isinstance(k, float)`` in user code is True for a symbolic float argument, as for
    PyTorch's SymFloat under dynamo (the traced branch must be the eager one); hookgrad's own
    code still sees the symbolic class."""
    if _REAL_ISINSTANCE(obj, classinfo):
        return True
    return type(obj) in _SYM_TYPES and not sys._getframe(1).f_globals.get(
        "__name__", "").startswith("hookgrad.") and _REAL_ISINSTANCE(obj.value, classinfo)


def _range(*args: Any) -> range:
    return _REAL_RANGE(*(int(a) if is_sym(a) else a for a in args))


_REAL: dict[str, Any] = {}
_REAL_RANGE = builtins.range
_REAL_LEN = builtins.len
_REAL_ISINSTANCE = builtins.isinstance
_SYM_TYPES = (SymInt, SymFloat)  # (exact types: `is_sym` itself calls ``isinstance``)
_SIZE_METHODS = {"size": _size, "numel": _numel, "nelement": _numel, "__len__": _len,
                 "__iter__": _iter}
_OPERATORS = {f"__{n}__" for n in (
    "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv",
    "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "pow", "rpow", "ipow",
    "matmul", "rmatmul", "neg", "pos", "abs", "invert", "and", "rand", "or", "ror", "xor",
    "rxor", "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne", "getitem", "setitem")}
_KEEP = {"register_hook", "register_post_accumulate_grad_hook", "retain_grad", "requires_grad_",
         "backward", "item", "tolist", "numpy", "dim", "ndimension", "element_size",
         "data_ptr", "stride", "storage_offset", "is_contiguous", "is_floating_point",
         "is_complex", "is_signed", "get_device", "untyped_storage", "storage", "equal",
         "apply_", "map_", "is_set_to", "is_shared", "share_memory_",
         "pin_memory", "is_pinned", "type", "dim_order", "is_inference", "allclose"}
_FUNCTION_MODULES = ("hookgrad._functional", "hookgrad.nn", "hookgrad.linalg")


def _table() -> list[tuple[Any, str, Any]]:
    table: list[tuple[Any, str, Any]] = [(Tensor, "shape", property(_shape))]
    for name, fn in _SIZE_METHODS.items():
        _REAL[name] = Tensor.__dict__[name]
        table.append((Tensor, name, fn))
    for name, value in list(Tensor.__dict__.items()):
        if (isinstance(value, types.FunctionType) and name not in _KEEP
                and name not in _SIZE_METHODS
                and (not name.startswith("_") or name in _OPERATORS)):
            table.append((Tensor, name, _wrap(value)))
    owners = [sys.modules.get(n) for n in ("hookgrad", "hookgrad.linalg")]  # no upward import
    for owner in [o for o in owners if o is not None] + [_F]:
        for name, value in list(vars(owner).items()):
            if (isinstance(value, types.FunctionType) and not name.startswith("_")
                    and value.__module__.startswith(_FUNCTION_MODULES)
                    and not inspect.isgeneratorfunction(value)):
                table.append((owner, name, _wrap(value)))
    table.extend(_module_forwards())
    table.append((builtins, "range", _range))
    table.append((builtins, "len", _builtin_len))
    table.append((builtins, "isinstance", _isinstance))
    return table


GROUP = PatchGroup("symtrace", _table)


def sym_arguments(sym: SymTrace, fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments with the plan's dynamic scalars replaced by symbolic numbers."""
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()  # a default argument whose value changed is a dynamic scalar too
    for src in sym.plan.scalars.values():
        name = src.root[1]
        value = bound.arguments[name]
        if src.steps:
            i = src.steps[0][1]
            items = list(value)
            items[i] = sym.scalar_input(src, items[i])
            bound.arguments[name] = type(value)(items)
        else:
            bound.arguments[name] = sym.scalar_input(src, value)
    return bound.args, bound.kwargs


def _has_sym(value: Any) -> bool:
    if is_sym(value):
        return True
    if type(value) in (tuple, list):
        return any(_has_sym(v) for v in value)
    return type(value) is dict and any(_has_sym(v) for v in value.values())


def _desym_closures(value: Any, seen: set[int]) -> None:
    """Plain numbers in the closure cells of functions (hooks, lambdas) the region made: they
    run after the trace, where hookgrad's ops take numbers, not symbolic ones."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, functools.partial):
        for v in (value.func, *value.args, *value.keywords.values()):
            _desym_closures(v, seen)
    elif isinstance(value, types.FunctionType):
        for cell in value.__closure__ or ():
            try:
                content = cell.cell_contents
            except ValueError:
                continue
            if _has_sym(content):
                cell.cell_contents = plain(content)
            else:
                _desym_closures(content, seen)
    elif type(value) in (tuple, list):
        for v in value:
            _desym_closures(v, seen)
    elif type(value) is dict:
        for v in value.values():
            _desym_closures(v, seen)


def desym(trace: Any, result: Any) -> Any:
    """After a dynamic trace: plain numbers in what the region stored into the world, in the
    closures it made and in the value returned to the caller (the recipes already hold the
    symbolic nodes)."""
    seen: set[int] = set()
    for value in (result, *trace.seen_hooks, *trace.deferred_hooks):
        _desym_closures(value, seen)
    for ch in trace.snapshot.diff():
        _desym_closures(ch.new, seen)
        if not _has_sym(ch.new):
            continue
        if ch.kind in ("attr", "class"):
            setattr(ch.owner, ch.key, plain(ch.new))
        elif ch.kind == "cell":
            ch.owner.cell_contents = plain(ch.new)
        elif ch.kind == "global":
            ch.owner[ch.key] = plain(ch.new)
        elif ch.kind == "list":
            ch.owner[:] = plain(ch.new)
        elif ch.kind == "dict":
            ch.owner.update(plain(ch.new))
    return plain(result)
