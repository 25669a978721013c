"""The one Graph-to-source emitter (architecture.md §11): ``Graph.python_code`` is this module.

The generated ``forward`` is straight-line Python: one statement per node, each value dropped
(``x = None``) right after its last use so that intermediates are freed as early as in eager
code. Operators print as operators (``add = x + y``), methods as methods, submodules and
attributes as ``self.<path>``; other callables become globals of the generated code.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hookgrad._tensor import Tensor
from hookgrad.fx._kinds import check_covers
from hookgrad.fx._names import CUSTOM_BUILTINS, Namespace, public_functions, qualified_name
from hookgrad.fx.node import Node

if TYPE_CHECKING:
    from hookgrad.fx.graph import Graph

__all__ = ["PythonCode", "python_code", "format_target", "REFLECTABLE_MAGIC_METHODS",
           "MAGIC_METHODS", "INPLACE_METHODS"]

REFLECTABLE_MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
MAGIC_METHODS = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}", **REFLECTABLE_MAGIC_METHODS,
}
INPLACE_METHODS = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


@dataclass
class PythonCode:
    """Generated source and the globals it must run with.

    Mirrors: ``torch.fx.graph.PythonCode``.
    """

    src: str
    globals: dict[str, Any]


def format_target(base: str, target: str) -> str:
    """``self`` + ``"seq.0.lin"`` -> ``getattr(self.seq, "0").lin``."""
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


def _resolves_from_hookgrad(path: str, obj: Any) -> bool:
    """True when the dotted ``hookgrad.`` path names ``obj`` (torch prints anything found under
    ``torch`` by its path, private modules such as ``torch._C`` included)."""
    if not path.startswith("hookgrad.") or path.startswith("hookgrad.compile."):
        # compile's own helpers stay globals: generated code calls them on every step
        return False
    value: Any = sys.modules.get("hookgrad")
    for atom in path.split(".")[1:]:
        value = getattr(value, atom, None)
        if value is None:
            return False
    return value is obj


class _Emitter:
    """State of one emission: globals, their names, and the body lines."""

    def __init__(self, namespace: Namespace) -> None:
        package = sys.modules["hookgrad"]
        # ``torch`` too: reprs of dtypes and sizes print as ``torch.float32``.
        self.globals: dict[str, Any] = {**CUSTOM_BUILTINS, "hookgrad": package,
                                        "torch": package, "device": package.device}
        self.namespace = namespace
        self.wrapped: dict[str, None] = {}

    def add_global(self, hint: str, obj: Any) -> str:
        if public_functions().get(id(obj)) == hint or _resolves_from_hookgrad(hint, obj):
            return hint  # resolvable through the ``hookgrad`` global, as torch's are
        name = self.namespace.create_name(hint, obj)
        if self.globals.get(name, obj) is not obj:
            raise AssertionError(f"Global name {name} already assigned to different object")
        self.globals[name] = obj
        return name

    def repr(self, arg: Any) -> str:
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            cls = self.add_global(qualified_name(type(arg)), type(arg))
            return f"{cls}{tuple(arg)!r}"
        if isinstance(arg, Tensor):
            return f"torch.Tensor(size={list(arg.shape)}, dtype={str(arg.dtype).split('.')[-1]})"
        if isinstance(arg, tuple):
            inner = ", ".join(self.repr(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({self.repr(arg.start)}, {self.repr(arg.stop)}, {self.repr(arg.step)})"
        return repr(arg)

    def type_repr(self, o: Any) -> str:
        """`` : <type>`` for a node annotated with a class (empty for anything else)."""
        if not isinstance(o, type):
            return ""
        if o.__module__ == "builtins":
            return f" : {o.__qualname__}"
        package = sys.modules["hookgrad"]
        if getattr(package, o.__name__, None) is o:
            return f" : torch.{o.__name__}"  # as torch prints it; ``torch`` is a global here
        return f" : {self.add_global(f'{o.__module__}.{o.__qualname__}', o)}"

    def args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.repr(a) for a in args] + [f"{k} = {self.repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    # ---------------------------------------------------------------- one method per node kind
    def placeholder(self, node: Node, root: str, free_vars: list[str]) -> str | None:
        default = f" = {self.repr(node.args[0])}" if node.args else ""
        free_vars.append(f"{node.target}{self.type_repr(node.type)}{default}")
        raw = node.target.replace("*", "")
        return f"{node.name} = {raw}" if raw != node.name else None

    def get_attr(self, node: Node, root: str, free_vars: list[str]) -> str:
        return f"{node.name} = {format_target(root, node.target)}"

    def call_method(self, node: Node, root: str, free_vars: list[str]) -> str:
        call = format_target(self.repr(node.args[0]), node.target)
        return f"{node.name} = {call}({self.args(node.args[1:], node.kwargs)})"

    def call_module(self, node: Node, root: str, free_vars: list[str]) -> str:
        call = format_target(root, node.target)
        return f"{node.name} = {call}({self.args(node.args, node.kwargs)})"

    def call_function(self, node: Node, root: str, free_vars: list[str]) -> str:
        target, args = node.target, node.args
        if getattr(target, "__module__", "") == "_operator":
            name = target.__name__
            if name in MAGIC_METHODS:
                return f"{node.name} = " + MAGIC_METHODS[name].format(*map(self.repr, args))
            if name in INPLACE_METHODS:
                stmt = INPLACE_METHODS[name].format(*map(self.repr, args))
                return f"{stmt};  {node.name} = {self.repr(args[0])}"
        fn = self.add_global(qualified_name(target), target)
        if (fn == "getattr" and len(args) == 2 and isinstance(args[1], str)
                and args[1].isidentifier()):
            return f"{node.name} = {format_target(self.repr(args[0]), args[1])}"
        if node.meta.get("is_wrapped", False):
            self.wrapped.setdefault(fn)
        return f"{node.name} = {fn}({self.args(args, node.kwargs)})"

    def output(self, node: Node, root: str, free_vars: list[str]) -> str:
        return f"return {self.repr(node.args[0])}"


_KIND_EMITTERS = {op: getattr(_Emitter, op) for op in (
    "placeholder", "get_attr", "call_function", "call_method", "call_module", "output")}
check_covers(_KIND_EMITTERS, "the fx emitter")


# torch.fx's dtype abbreviations in annotated code (``"f32[2, 3]"``)
_DTYPE_ABBRS = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128"}


def annotation(node: Node) -> str | None:
    """``"f32[2, 3]"`` for a node whose meta holds an example value or tensor metadata (as
    ``python_code(verbose=True)`` prints it), else None."""
    meta = node.meta
    val = meta.get("val", meta.get("tensor_meta", meta.get("example_value")))
    dtype, shape = getattr(val, "dtype", None), getattr(val, "shape", None)
    if dtype is None or shape is None:
        return None
    abbr = _DTYPE_ABBRS.get(str(dtype).split(".")[-1])
    return None if abbr is None else f'"{abbr}[{", ".join(str(int(d)) for d in shape)}]"'


def _trace_summary(trace: str) -> str:
    """``File: path:line in fn, code: source`` from the last frame of a stack trace."""
    lines = [ln for ln in trace.strip().split("\n") if ln.strip()]
    for i in range(len(lines) - 1, -1, -1):
        head = lines[i].strip()
        if head.startswith("File "):
            parts = head.split('"')
            where = parts[1] if len(parts) > 2 else "?"
            rest = parts[-1].replace(", line ", "").split(", in ")
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f"File: {where}:{rest[0]} in {rest[-1]}, code: {code}"
    return trace.strip().split("\n")[-1]


def _last_uses(nodes: list[Node]) -> dict[Node, list[Node]]:
    """For each node, the values whose last reader it is (freed right after it runs)."""
    seen: set[Node] = set()
    out: dict[Node, list[Node]] = {}
    for node in reversed(nodes):
        for inp in node._input_nodes:
            if inp not in seen:
                seen.add(inp)
                out.setdefault(node, []).append(inp)
    return out


def python_code(graph: Graph, root_module: str = "self", verbose: bool = False) -> PythonCode:
    """Emit ``def forward(self, ...)`` for `graph` (`verbose`: annotate values with their
    dtype and shape from ``meta``, as ``print_readable`` shows them).

    Mirrors: ``torch.fx.Graph.python_code``.
    """
    em = _Emitter(graph._graph_namespace.copy())
    nodes = list(graph.nodes)
    last = _last_uses(nodes)
    free_vars: list[str] = []
    body: list[str] = []
    prev_trace: str | None = None
    for node in nodes:
        line = _KIND_EMITTERS[node.op](em, node, root_module, free_vars)
        if verbose and node.op not in ("placeholder", "output"):
            # a comment where the user's source line changes, after a blank line (torch's
            # summaries; tests that compare printed graphs strip the comments, not the blanks)
            trace = node.meta.get("stack_trace") or ""
            if trace and trace != prev_trace:
                body.append(f"\n# {_trace_summary(trace)}\n")
            elif not trace and prev_trace != "":
                body.append("\n# No stacktrace found for following nodes\n")
            prev_trace = trace
        note = annotation(node) if verbose and node.op != "output" else None
        if note is not None and node.op == "placeholder":
            free_vars[-1] = free_vars[-1].replace(f"{node.target}{em.type_repr(node.type)}",
                                                  f"{node.target}: {note}", 1)
        elif note is not None and line is not None:
            line = line.replace(f"{node.name} = ", f"{node.name}: {note} = ", 1)
        if node.op == "placeholder":
            if line is not None:
                body.append(line + "\n")
            continue
        dead = list(last.get(node, []))
        if node.op != "output" and not node.users:
            dead.append(node)
        tail = ";  " + " = ".join([n.name for n in dead] + ["None"]) if dead and \
            node.op != "output" else ""
        body.append(line + tail + "\n")
    if not any(n.op == "output" for n in nodes):
        body.append("pass\n")
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    # Spelled as torch spells it; resolvable through the ``hookgrad`` global.
    wrap_name = "hookgrad.fx._symbolic_trace.wrap"
    wraps = "\n".join(f'{wrap_name}("{name}")' for name in em.wrapped)
    signature = ", ".join([root_module, *free_vars])
    out_type = next((em.type_repr(n.type) for n in nodes if n.op == "output"), "")
    returns = f" -> {out_type[3:]}" if out_type else ""
    src = f"\n{wraps}\n\ndef forward({signature}){returns}:\n{code}"
    return PythonCode(src, em.globals)

