"""`Proxy`: the stand-in value a traced program computes with; `TracerBase`; `TraceError`.

Every operation on a Proxy (an operator, an attribute, a method call, a call of a wrapped
function) becomes a node of the tracer's graph and returns a new Proxy for its result.
Control flow cannot be recorded, so ``bool(proxy)`` and ``for v in proxy`` raise.
"""

from __future__ import annotations

import bisect
import dis
import inspect
import operator
from collections.abc import Callable, Iterator
from typing import Any

from hookgrad.fx._codegen import MAGIC_METHODS, REFLECTABLE_MAGIC_METHODS
from hookgrad.fx.graph import Graph
from hookgrad.fx.node import Argument, Node, Target

__all__ = ["TraceError", "TracerBase", "Proxy", "Attribute", "GraphAppendingTracer"]

_BASE_TYPES = (str, int, float, bool, complex, type(None), type(...), bytes)


class TraceError(ValueError):
    """A traced program did something a graph cannot record (control flow on a Proxy).

    Mirrors: ``torch.fx.proxy.TraceError``.
    """


class TracerBase:
    """What a Proxy needs from its tracer: node creation and argument conversion.

    Mirrors: ``torch.fx.proxy.TracerBase``.
    """

    graph: Graph
    record_stack_traces: bool = False
    trace_asserts: bool = False

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Insert a node into ``self.graph``. Mirrors: ``TracerBase.create_node``."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """Wrap `node` in a `Proxy`. Mirrors: ``torch.fx.proxy.TracerBase.proxy``."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record one operation and return the Proxy of its result.

        Arguments go through `create_arg` first (Proxies become their nodes).

        Mirrors: ``torch.fx.proxy.TracerBase.create_proxy``.
        """
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_arg must keep args a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Turn a traced value into a node argument (Proxies to nodes, containers recursively).

        Raises:
            NotImplementedError: for a value that cannot appear in a graph.

        Mirrors: ``torch.fx.proxy.TracerBase.create_arg``.
        """
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple):
            items = tuple(self.create_arg(e) for e in a)
            return type(a)(*items) if hasattr(a, "_fields") else items
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                key = self.create_arg(k)
                if isinstance(key, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[key] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, _BASE_TYPES) or _is_plain_value(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called by ``bool(proxy)``: raises, as control flow cannot be traced.

        Mirrors: ``torch.fx.proxy.TracerBase.to_bool``.
        """
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy) -> Iterator:
        """Called by ``iter(proxy)``: raises, as the length is unknown.

        Mirrors: ``torch.fx.proxy.TracerBase.iter``.
        """
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Proxy:
        """Called by ``**proxy``. Mirrors: ``torch.fx.proxy.TracerBase.keys``."""
        return Attribute(obj, "keys")()


def _is_plain_value(a: Any) -> bool:
    """dtypes, devices, memory formats, enums: values the emitter can print."""
    from hookgrad._backend import device  # noqa: PLC0415
    from hookgrad._dtypes import dtype  # noqa: PLC0415

    return isinstance(a, (dtype, device)) or type(a).__module__.startswith("enum")


class Proxy:
    """The value of one graph node during tracing.

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x: (x + 1).relu())
        >>> [n.op for n in gm.graph.nodes]
        ['placeholder', 'call_function', 'call_method', 'output']

    Mirrors: ``torch.fx.Proxy``.
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # Only reached for names a Proxy does not have: a tensor attribute or method.
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo: dict) -> Proxy:
        return Proxy(self.node, self.tracer)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        # ``a, b = proxy`` is allowed: the unpacking instruction tells how many values to take.
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            insts = list(dis.get_instructions(caller.f_code))
            idx = bisect.bisect_left([i.offset for i in insts], caller.f_lasti)
            if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        """``**proxy`` support. Mirrors: ``torch.fx.Proxy.keys``."""
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at module "
                           "scope")



class Attribute(Proxy):
    """``proxy.name``: recorded as ``getattr`` when used, or as a method call when called.

    Mirrors: ``torch.fx.proxy.Attribute``.
    """

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        # The getattr node is created lazily: ``x.relu()`` records only the method call.
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to `graph`: the tracer of Proxies built by hand on nodes.

    Mirrors: ``torch.fx.proxy.GraphAppendingTracer``.
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph


def _install_magic_methods() -> None:
    for method in MAGIC_METHODS:
        target = getattr(operator, method, None)
        if target is None:  # "div": Python 2's operator, kept in the emitter's table only
            continue

        def impl(*args: Any, _target: Callable = target, **kwargs: Any) -> Proxy:
            tracer = args[0].tracer
            return tracer.create_proxy("call_function", _target, args, kwargs)

        impl.__name__ = f"__{method.strip('_')}__"
        setattr(Proxy, impl.__name__, impl)
    for method in REFLECTABLE_MAGIC_METHODS:
        target = getattr(operator, method, None)
        if target is None:
            continue

        def rimpl(self: Proxy, rhs: Any, _target: Callable = target) -> Proxy:
            return self.tracer.create_proxy("call_function", _target, (rhs, self), {})

        rimpl.__name__ = f"__r{method.strip('_')}__"
        setattr(Proxy, rimpl.__name__, rimpl)


_install_magic_methods()
