"""`GraphModule`: an ``nn.Module`` whose ``forward`` is generated from a `Graph`.

The generated source is compiled with ``exec`` and installed as ``forward`` on a class made for
this instance (as torch does), so a call goes through ``Module.__call__``: the GraphModule's own
hooks fire, and every ``self.<sub>(...)`` in the code is an ordinary submodule call whose hooks
fire too.
"""

from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.fx._codegen import PythonCode
from hookgrad.fx.graph import Graph
from hookgrad.nn import Module, Parameter

__all__ = ["GraphModule"]

_COUNTER = itertools.count()


def _forward_from_src(src: str, globals_: dict[str, Any]) -> Any:
    # A distinct fake file name per compilation, registered with linecache, so tracebacks and
    # `inspect.getsource` show the generated line.
    filename = f"<eval_with_key>.{next(_COUNTER)}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(globals_)
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102 - this is the code generator
    return namespace["forward"]


def _walk_to(root: Module, path: list[str], create: bool) -> Module | None:
    """The module at `path` below `root` (empty modules created on the way if `create`)."""
    mod = root
    for item in path:
        nxt = getattr(mod, item, None)
        if nxt is None and create:
            nxt = Module()
            setattr(mod, item, nxt)
        if not isinstance(nxt, Module):
            return None
        mod = nxt
    return mod


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Install ``from_module.<target>`` on `to_module` at the same dotted path."""
    *prefix, field = target.split(".")
    for item in prefix:
        f, t = getattr(from_module, item), getattr(to_module, item, None)
        if f is t:
            return  # a parent of this attribute is already installed
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    _assign(to_module, field, getattr(from_module, field))


def _assign(to_module: Module, field: str, value: Any) -> None:
    # A plain tensor on the path of a get_attr becomes a buffer, so it follows state_dict/to().
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


class GraphModule(Module):
    """A Module generated from a `Graph`: ``code`` is its ``forward``'s source.

    Args:
        root: a Module whose attributes named by ``get_attr``/``call_module`` nodes are copied
            (keeping their dotted hierarchy), or a dict from dotted path to object.
        graph: the graph to run.
        class_name: the name shown by ``repr`` and ``print_readable``.

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) * 2)
        >>> print(gm.code.strip())
        def forward(self, x):
            relu = hookgrad.relu(x);  x = None
            mul = relu * 2;  relu = None
            return mul

    Mirrors: ``torch.fx.GraphModule``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # Each instance gets its own class, so `forward` can be installed on it.
        if not getattr(cls, "_is_instance_class", False):
            cls = type(cls.__name__, (cls,), {"_is_instance_class": True})
        return super().__new__(cls)

    def __init__(self, root: Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node.name} referenced target {node.target} "
                                           "but that target was not provided in ``root``!")
                    targets.append(node.target)
            # Shallow paths first, so a parent given explicitly is installed before children.
            for target in sorted(targets, key=lambda t: t.count(".")):
                *prefix, field = target.split(".")
                _assign(_walk_to(self, prefix, create=True), field, root[target])
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta: dict[str, Any] = getattr(root, "meta", {}) if isinstance(root, Module) else {}
        self._tracer_cls = graph._tracer_cls
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph; assigning one recompiles ``forward``. Mirrors: ``GraphModule.graph``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The source of the generated ``forward``. Mirrors: ``GraphModule.code``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``code`` and ``forward`` from ``graph`` (call after editing the graph).

        Mirrors: ``torch.fx.GraphModule.recompile``.
        """
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        type(self).forward = _forward_from_src(python_code.src, python_code.globals)
        return python_code

    # ------------------------------------------------------------------ submodules
    def to_folder(self, folder: Any, module_name: str = "FxModule") -> None:
        """Write this module as an importable package (see `_to_folder`).

        Mirrors: ``torch.fx.GraphModule.to_folder``.
        """
        from hookgrad.fx._to_folder import write_folder  # noqa: PLC0415 - rarely used

        write_folder(self, folder, module_name)

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install `m` at dotted path `target`, creating empty parents; False on a clash.

        Mirrors: ``torch.fx.GraphModule.add_submodule``.
        """
        *prefix, field = target.split(".")
        mod: Any = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at `target`; False if there is none.

        Mirrors: ``torch.fx.GraphModule.delete_submodule``.
        """
        *prefix, field = target.split(".")
        mod = _walk_to(self, prefix, create=False)
        if mod is None or not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module``/``get_attr`` node uses.

        Mirrors: ``torch.fx.GraphModule.delete_all_unused_submodules``.
        """
        used: set[str] = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":  # a called module keeps all of its children
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    # ------------------------------------------------------------------ printing, copying
    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The generated code as a class definition, nested GraphModules included.

        Mirrors: ``torch.fx.GraphModule.print_readable``.
        """
        out = _readable(self, type(self).__name__)
        if print_output:
            print(out)
        return out

    def __str__(self) -> str:
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo: dict) -> GraphModule:
        res = object.__new__(type(self).__bases__[0]._instance_class(type(self).__name__))
        memo[id(self)] = res
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        res.__dict__.update(copy.deepcopy(state, memo))
        res.graph = copy.deepcopy(self.graph, memo)
        return res

    @classmethod
    def _instance_class(cls, name: str) -> type:
        return type(name, (cls,), {"_is_instance_class": True})

    def __reduce__(self) -> tuple:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild, (type(self).__name__, state, self.graph))


def _rebuild(class_name: str, state: dict, graph: Graph) -> GraphModule:
    """Unpickle a `GraphModule`: restore its state and regenerate ``forward`` from `graph`."""
    res = object.__new__(GraphModule._instance_class(class_name))
    res.__setstate__(state)
    res.graph = graph
    return res


def _readable(gm: GraphModule, name: str) -> str:
    lines = gm.graph.python_code(root_module="self", verbose=True).src.lstrip("\n").split("\n")
    code = f"class {name}(torch.nn.Module):\n" + "\n".join("    " + ln if ln.strip() else ""
                                                           for ln in lines)
    subs = [_readable(m, n) for n, m in gm.named_children() if isinstance(m, GraphModule)]
    if subs:
        code += "\n".join("    " + ln if ln.strip() else ln for ln in "\n".join(subs).split("\n"))
    return code
