"""One graph node for a whole hookgrad call (`CompositeCall`), and the factories that need it.

A composite node re-runs a hookgrad function or tensor method at run time with the run-time
tensors and symbolic numbers put back into their places in the call's arguments (the other
arguments are kept as they were, so dtypes, devices and generators never go through generated
source). Two users:

* dynamic traces record every call this way (NOTE [Dynamic traces] in `symtrace`);
* every trace records *random* tensor factories this way (``randn``, ``rand_like``, in-place
  random fills, ``empty``...), as PyTorch's graphs hold them as nodes: a random factory draws
  fresh numbers on every call, from the same generator and in the same order as the eager
  call, instead of baking the trace's draw into the graph (so do the
  random functionals: ``dropout`` and its kin, ``rrelu``, ``gumbel_softmax``; and seeding).
  Python's and NumPy's own randomness and clock reads cannot be recomputed by a graph: they
  are graph breaks (spec §3.1).
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

from hookgrad._dtypes import Size
from hookgrad._tensor import Tensor
from hookgrad.autograd.function import Function
from hookgrad.compile.core.graph import placeholder
from hookgrad.compile.core.state import current_trace
from hookgrad.compile.core.symbolic import is_sym, plain, specialised
from hookgrad.compile.trace.patches import PatchGroup
from hookgrad.nn import functional as _F

__all__ = ["CompositeCall", "SourcedObject", "record_call", "object_leaf", "GROUP"]


class _Hole:
    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


class _SizeT(tuple):
    """Template of a ``torch.Size`` argument (holes cannot go through ``Size``'s checks)."""


def _fill(template: Any, values: tuple) -> Any:
    kind = type(template)
    if kind is _Hole:
        return values[template.i]
    if kind is tuple or kind is list:
        return kind(_fill(v, values) for v in template)
    if kind is _SizeT:
        return Size([_fill(v, values) for v in template])
    if kind is dict:
        return {k: _fill(v, values) for k, v in template.items()}
    if kind is slice:
        return slice(_fill(template.start, values), _fill(template.stop, values),
                     _fill(template.step, values))
    return template


class CompositeCall:
    """Node target: one hookgrad call, re-run with the node's run-time values in its holes."""

    __slots__ = ("fn", "template", "__name__")

    def __init__(self, fn: Any, template: tuple) -> None:
        self.fn, self.template = fn, template
        # an identifier, so the emitter can name the target (a user lambda is ``<lambda>``)
        name = "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "call"))
        self.__name__ = name.strip("_") or "call"

    def __call__(self, *values: Any) -> Any:
        args, kwargs = _fill(self.template, values)
        return self.fn(*args, **kwargs)


def _split(value: Any, leaves: list, tensors: list, objects: dict) -> Any:
    leaf = objects.get(id(value)) if objects else None
    if leaf is not None or isinstance(value, Tensor) or is_sym(value):
        leaves.append(leaf if leaf is not None else value)
        if isinstance(value, Tensor):
            tensors.append(value)
        return _Hole(len(leaves) - 1)
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_split(v, leaves, tensors, objects) for v in value)
    if isinstance(value, Size):
        return _SizeT(_split(v, leaves, tensors, objects) for v in value)
    if kind is dict:
        return {k: _split(v, leaves, tensors, objects) for k, v in value.items()}
    if kind is slice:
        return slice(_split(value.start, leaves, tensors, objects),
                     _split(value.stop, leaves, tensors, objects),
                     _split(value.step, leaves, tensors, objects))
    return value


def _has_tensor(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    return isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value)


_USER_CODE = ("Python side effects inside a custom autograd.Function or a module forward that "
              "runs as one node (they would happen twice on later calls)")


def _effects_mark(trace: Any) -> tuple:
    return len(trace.effects), len(trace.seen_hooks), len(trace.snapshot.diff())


def record_call(trace: Any, rec: Any, fn: Any, args: tuple, kwargs: dict,
                always: bool = False, objects: dict | None = None,
                user_code: bool = False) -> Any:
    """Run ``fn(*args, **kwargs)`` (concrete numbers, nothing recorded inside) and record it
    as one `CompositeCall` node of `rec`'s graph (`always`: even without tensors, for calls
    whose effect is the point, such as seeding the generator; `objects`: id of an argument ->
    its `SourcedObject`, for arguments fetched from their sources at run time; `user_code`:
    the call runs user Python, whose side effects make it a graph break)."""
    if rec is not trace.rec:  # a hook body's sub-graph: symbolic numbers of the outer graph
        args, kwargs = specialised(args), specialised(kwargs)  # become guarded constants
    leaves: list[Any] = []
    tensors: list[Tensor] = []
    template = _split((args, kwargs), leaves, tensors, objects or {})
    mark = _effects_mark(trace) if user_code else None
    rec.suspended += 1
    try:
        result = fn(*plain(args), **plain(kwargs))
    finally:
        rec.suspended -= 1
    if not trace.recording or rec.suspended:
        return result
    if mark is not None and _effects_mark(trace) != mark:
        # the node re-runs this call on every compiled call: its side effects must not also
        # be replayed from the log, so such a call stays eager
        trace.graph_break(_USER_CODE)
        return result
    if not (always or _has_tensor(result) or (result is None and tensors)):
        return result  # a Python answer (``is_contiguous()``...): nothing to record
    if type(result) in (tuple, list) and trace.sym is not None and rec is trace.rec:
        _fix_piece_count(trace, leaves)
    try:
        nodes = tuple(rec.node_of(x) if isinstance(x, Tensor) else x.node for x in leaves)
    except Exception as e:  # noqa: BLE001 - an untracked tensor: the recorder's graph break
        rec._untracked(e)
        return result
    return _record(rec, fn, template, nodes, tensors, result)


def _fix_piece_count(trace: Any, leaves: list) -> None:
    """A call returning a sequence (``split``, ``chunk``, ``unbind``) whose length the traced
    code then iterates over: its length follows the sizes and numbers it got, so those are
    specialised (guarded, or a break for an intermediate's size): the unrolled loop stays
    right. (Named tuples, ``max(dim)`` and the like, have a fixed length and never get here.)"""
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            specialised(trace.sym.shape(leaf))
        elif is_sym(leaf):
            specialised(leaf)


class SourcedObject:
    """A pre-existing object (a module) passed to a composite call: a graph input fetched from
    its source on every call, so instances sharing one artifact each run their own."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


def object_leaf(trace: Any, obj: Any) -> Any:
    """`obj` as a composite-call argument: a `SourcedObject` when it has a source (its graph
    input made once per trace), else `obj` itself (kept as a constant)."""
    src = trace.index.source_of(obj)
    if src is None or trace.sub:
        return obj
    inputs = trace.__dict__.setdefault("_object_inputs", {})
    node = inputs.get(str(src))
    if node is None:
        node = inputs[str(src)] = placeholder(trace.rec.graph, src.name())
        trace.rec.placeholders.append((node, src, None))
    return SourcedObject(node)


def _record(rec: Any, fn: Any, template: Any, nodes: tuple, tensors: list, result: Any) -> Any:
    node = rec.graph.call_function(CompositeCall(fn, template), nodes)
    given = {id(t) for t in tensors}
    if isinstance(result, Tensor):
        if id(result) not in given:
            rec.bind_value(result, node)
    elif isinstance(result, (tuple, list)):
        for j, out in enumerate(result):
            if isinstance(out, Tensor) and id(out) not in given:
                rec._multi[id(out)] = (node, j)
                rec.keep.append(out)
    return result


# ------------------------------------------------------------------ factories in every trace
# Deterministic factories with constant arguments (``ones(3)``, ``tensor(W)``) stay baked
# into static graphs as constants (the backends fold them; PyTorch counts them as ops, so
# hookgrad's op count is one lower there). Random ones, and ``empty`` (filled in place next),
# must run on every call. Dynamic traces record every call anyway (`symtrace`).
_FACTORIES = (
    "empty", "empty_like", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
    "randint_like", "normal", "bernoulli", "multinomial", "poisson")
_FILLS = ("uniform_", "normal_", "bernoulli_", "random_", "exponential_", "cauchy_",
          "log_normal_", "geometric_", "new_empty")


def _factory(real: Any, always: bool = False, user_code: bool = False,
             draws: Any = None) -> Any:
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is None:
            return real(*args, **kwargs)
        rec = tr.active_recorder()
        if not tr.recording or rec.suspended:  # runs eagerly: plain (guarded) numbers
            return real(*specialised(args), **specialised(kwargs))
        if draws is not None and not draws(args, kwargs):  # no randomness: nothing to record
            return real(*args, **kwargs)
        return record_call(tr, rec, real, args, kwargs, always, user_code=user_code)
    return wrapper


def _function_apply(real: Any) -> Any:
    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        bound = functools.partial(real, cls)
        bound.__name__ = f"{cls.__name__}_apply"  # type: ignore[attr-defined]
        return _factory(bound, user_code=True)(*args, **kwargs)
    return classmethod(apply)


_SEEDING = ("manual_seed", "seed", "set_rng_state")
_RANDOM_FUNCTIONAL = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                      "feature_alpha_dropout", "rrelu", "gumbel_softmax")


def _dropout_draws(args: tuple, kwargs: dict) -> bool:
    """Whether ``F.dropout(input, p, training, inplace)`` draws a mask: not in evaluation mode
    or with ``p=0``, where it returns `input` itself (PyTorch's ``_dropout`` too), so the
    trace records nothing for it. `p` and `training` are Python values the trace read, so
    they are guarded (soundness rule 2); a symbolic `p` keeps the node."""
    p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
    training = args[2] if len(args) > 2 else kwargs.get("training", True)
    if type(p) not in (int, float) or type(training) is not bool:
        return True
    return training and p != 0.0


_DRAWS = {"dropout": _dropout_draws}


def _table() -> list[tuple[Any, str, Any]]:
    table = []
    top = sys.modules.get("hookgrad")  # the public namespace users call (no upward import)
    for owner, names in ((top, _FACTORIES), (_F, _RANDOM_FUNCTIONAL)):
        for name in names:
            real = getattr(owner, name, None)
            if callable(real):
                draws = _DRAWS.get(name) if owner is _F else None
                table.append((owner, name, _factory(real, draws=draws)))
    for owner in (top, sys.modules.get("hookgrad.random")):  # seeding: replayed in order
        for name in _SEEDING:
            real = getattr(owner, name, None)
            if owner is not None and callable(real):
                table.append((owner, name, _factory(real, always=True)))
    for name in _FILLS:
        real = Tensor.__dict__.get(name)
        if callable(real):
            table.append((Tensor, name, _factory(real)))
    # a custom autograd.Function: one node that runs ``apply`` (forward, ctx, backward) as
    # eager does, instead of a graph break
    table.append((Function, "apply", _function_apply(Function.__dict__["apply"].__func__)))
    return table


# ------------------------------------------------------------------ host randomness and clocks
_HOST = {"random": ("random", "uniform", "randint", "randrange", "choice", "choices", "sample",
                    "shuffle", "gauss", "normalvariate", "getrandbits", "seed", "betavariate",
                    "expovariate", "triangular"),
         "time": ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic",
                  "monotonic_ns", "process_time"),
         "numpy.random": ("rand", "randn", "random", "random_sample", "randint", "uniform",
                          "normal", "choice", "permutation", "shuffle", "seed")}
_HOST_BREAK = "Python or NumPy randomness / a clock read inside a compiled region (`{}`)"


def _host(module: str, name: str, real: Any) -> Any:
    """A value the graph cannot recompute (spec §3.1: random, ``time.*``): a graph break when
    the user's code asks (hookgrad's own bookkeeping may read clocks freely)."""
    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = current_trace()
        if tr is not None and tr.recording and not sys._getframe(1).f_globals.get(
                "__name__", "").startswith("hookgrad."):
            tr.graph_break(_HOST_BREAK.format(f"{module}.{name}"))
        return real(*args, **kwargs)
    return wrapper


def _host_table() -> list[tuple[Any, str, Any]]:
    table = []
    for module, names in _HOST.items():
        mod = importlib.import_module(module)
        for name in names:
            real = getattr(mod, name, None)
            if callable(real):
                table.append((mod, name, _host(module, name, real)))
    return table


GROUP = PatchGroup("calls", lambda: _table() + _host_table())
