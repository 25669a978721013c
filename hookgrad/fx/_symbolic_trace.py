"""`Tracer` and `symbolic_trace`: run a program on Proxies and record what it does.

Interception points while tracing (all installed by one `Patcher`, all undone afterwards):
``Module.__call__`` (a leaf module becomes one ``call_module`` node, others are traced through,
their hooks included), ``Module.__getattr__`` (parameters become ``get_attr`` nodes), the
public functions of ``hookgrad``/``nn.functional``/``linalg`` (a call with a Proxy argument
becomes a ``call_function`` node whose target is that public function), and the functions named
by `wrap` or found in the autowrap modules.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from itertools import chain
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.fx._names import public_functions
from hookgrad.fx._patcher import Patcher, patch_public, proxy_aware
from hookgrad.fx._trace_root import bind_inputs, collect_tensor_attrs, type_hints
from hookgrad.fx._wrap import PH, PHBase, _wrapped_fns_to_patch, wrap  # noqa: F401 - re-exported
from hookgrad.fx.graph import Graph
from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.node import Argument, Node
from hookgrad.fx.proxy import Proxy, TracerBase
from hookgrad.nn import Module, Parameter, Sequential

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "ParameterProxy"]

_orig_module_call = Module.__call__
_orig_module_getattr = Module.__getattr__

class ParameterProxy(Proxy):
    """A parameter's Proxy that answers shape questions with the real values.

    Used when ``param_shapes_constant=True``. Mirrors: ``torch.fx.proxy.ParameterProxy``.
    """

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Tensor) -> None:
        super().__init__(node, tracer)
        self.param, self.name = param, name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self, dim: int | None = None) -> Any:
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


class Tracer(TracerBase):
    """Records a Module or function as a `Graph` by running it on Proxies.

    Args:
        autowrap_modules: modules whose public functions are recorded as leaf calls when
            the traced code calls them through its globals (``math`` by default).
        autowrap_functions: further functions to record as leaf calls.
        param_shapes_constant: parameter shapes are read as constants, not traced.

    Mirrors: ``torch.fx.Tracer``.
    """

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_function_ids: set[int] = {
            id(value) for name, value in chain.from_iterable(
                m.__dict__.items() for m in autowrap_modules)
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search: list[Any] = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.root: Module = Module()
        self.tensor_attrs: dict[int, str] = {}

    # ------------------------------------------------------------------ overridable policy
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Built-in ``hookgrad.nn`` modules (but not ``Sequential``) are leaves.

        Mirrors: ``torch.fx.Tracer.is_leaf_module``.
        """
        module = type(m).__module__
        return module.startswith("hookgrad.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """The dotted path of `mod` in the root. Mirrors: ``Tracer.path_of_module``."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward: Callable[..., Any], args: tuple,
                    kwargs: dict) -> Any:
        """A leaf becomes a ``call_module`` node; any other module is traced through.

        Mirrors: ``torch.fx.Tracer.call_module``.
        """
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A parameter read in ``forward`` becomes a ``get_attr`` Proxy (cached per name).

        Mirrors: ``torch.fx.Tracer.getattr``.
        """
        if not isinstance(attr_val, Parameter):
            return attr_val
        for name, p in self.root.named_parameters():
            if attr_val is p:
                if name not in parameter_proxy_cache:
                    factory = None
                    if self.param_shapes_constant:
                        def factory(node: Node, n: str = name, v: Any = attr_val) -> Proxy:
                            return ParameterProxy(self, node, n, v)
                    parameter_proxy_cache[name] = self.create_proxy(
                        "get_attr", name, (), {}, proxy_factory_fn=factory)
                return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Argument:
        """Parameters, buffers and submodules become ``get_attr`` nodes; other tensors become
        ``_tensor_constant<N>`` attributes of the root.

        Mirrors: ``torch.fx.Tracer.create_arg``.
        """
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            # A named tuple built from traced values: its construction becomes a node.
            return self.create_node("call_function", type(a),
                                    tuple(self.create_arg(e) for e in a), {})
        if isinstance(a, Module):
            for name, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                qualname = self.get_fresh_qualname("_tensor_constant")
                setattr(self.root, qualname, a)
                self.tensor_attrs[id(a)] = qualname
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix: str) -> str:
        """An unused attribute name ``<prefix><N>`` on the root. Mirrors: the torch method."""
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    # ------------------------------------------------------------------ tracing
    def trace(self, root: Module | Callable[..., Any],
              concrete_args: dict[str, Any] | tuple | None = None) -> Graph:
        """Trace `root` and return its graph (``self.root`` holds the module traced).

        Mirrors: ``torch.fx.Tracer.trace``.
        """
        if isinstance(root, Module):
            self.root, fn = root, type(root).forward
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root, fn = Module(), root
        self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
        self.tensor_attrs = collect_tensor_attrs(self.root)
        fn_globals = getattr(fn, "__globals__", {})
        return_type = type_hints(fn).get("return")
        fn, args = bind_inputs(self, fn, isinstance(root, Module), concrete_args)
        cache: dict[str, Any] = {}
        try:
            with Patcher() as patcher:
                self._install(patcher, fn_globals, cache)
                result = fn(*args)
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=return_type)
        finally:
            self.submodule_paths = None
        return self.graph

    def _install(self, patcher: Patcher, fn_globals: dict[str, Any], cache: dict) -> None:
        tracer = self
        public_functions()  # built before the namespaces are patched

        def module_getattr_wrapper(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, _orig_module_getattr(mod, attr), cache)

        def module_call_wrapper(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return _orig_module_call(mod, *args, **kwargs)

            fwd = getattr(getattr(mod, "forward", mod), "__globals__", {})
            _autowrap_globals(patcher, fwd, tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        patcher.patch(Module, "__getattr__", module_getattr_wrapper)
        patcher.patch(Module, "__call__", module_call_wrapper)
        patch_public(patcher)
        for (_, name), frame_globals in _wrapped_fns_to_patch.items():
            if name not in frame_globals and hasattr(builtins, name):
                orig = getattr(builtins, name)  # e.g. wrap("len")
            else:
                orig = getattr(frame_globals[name], "__fx_original__", frame_globals[name])
            patcher.patch(frame_globals, name, proxy_aware(orig, True))
        _autowrap_globals(patcher, fn_globals, self._autowrap_function_ids)
        for module in self._autowrap_search:
            _autowrap_globals(patcher, module.__dict__, self._autowrap_function_ids)


def _autowrap_globals(patcher: Patcher, frame_dict: dict[str, Any], ids: set[int]) -> None:
    """Patch the globals of traced code: autowrap functions, and public hookgrad functions
    imported by name (``from hookgrad import relu``)."""
    key = (id(frame_dict), "")
    if key in patcher.visited:
        return
    patcher.visited.add(key)
    public = public_functions()
    for name, value in list(frame_dict.items()):
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        if id(value) in ids:
            patcher.patch(frame_dict, name, proxy_aware(value, mark_wrapped=True))
        elif id(value) in public and getattr(value, "__fx_original__", None) is None:
            patcher.patch(frame_dict, name, proxy_aware(value, mark_wrapped=False))


def symbolic_trace(root: Module | Callable[..., Any],
                   concrete_args: dict[str, Any] | None = None) -> GraphModule:
    """Trace `root` into a `GraphModule` whose ``forward`` computes what `root` computes.

    Args:
        root: a Module or a function.
        concrete_args: arguments to specialise on (their values are baked into the graph,
            checked by assertions at run time); `PH` keeps one as an input.

    Raises:
        TraceError: when the program branches on, or iterates over, a traced value.

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x, y: torch.relu(x) * y)
        >>> [(n.op, n.target) for n in gm.graph.nodes][1:3] == [
        ...     ("placeholder", "y"), ("call_function", torch.relu)]
        True

    Mirrors: ``torch.fx.symbolic_trace``.
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

