"""Splitting a region at its ``backward()`` call: the statements before it compile on their own.

NOTE [Resume after a backward break]
A region that calls ``backward()`` (a training step: forward, loss, ``loss.backward()``,
optimizer step) breaks the graph there (the side-effect log is replayed after a graph, so it
cannot hold effects that must happen in between a backward pass's hooks). A break stops the
recording and the rest of the call runs eagerly (NOTE [Execution tracing]); without more, every
later call ran the whole step eagerly. PyTorch's dynamo compiles the bytecode before the break
as a graph and the bytecode after it as a *resume function* it compiles again. hookgrad traces by
executing, so it splits the source instead: when the break happened inside a top-level statement
of the region's function, the statements before it become a function of the region's own
parameters returning the local names the rest reads (compiled as a region of its own, with its
own guards and cache), and the statement that broke and everything after it become a function of
those names (run eagerly, as the call after a break always ran). Both functions are made from the
function's own syntax tree, with its globals, closure cells, defaults, file name and line
numbers, so running one after the other *is* running the function; the split is refused (the
call stays eager) for anything where that could differ:

- a generator or coroutine, a lambda, source that cannot be read;
- ``nonlocal``, cell variables (a nested function closing over a local), ``locals()``/``vars()``/
  ``eval``/``exec``/``super``/``__class__`` and frame reads (``sys._getframe``,
  ``inspect.currentframe``), ``del`` of a local;
- a ``return`` before the break statement, or a name the rest reads that the statements before
  it do not bind on every path (only unconditional top-level assignments, imports and
  definitions count).
"""

from __future__ import annotations

import __future__
import ast
import inspect
import textwrap
import types
import weakref
from typing import Any

__all__ = ["Split", "split_at"]

_REFUSED_NAMES = frozenset({"locals", "vars", "eval", "exec", "super", "__class__",
                            "_getframe", "currentframe", "globals"})
_GEN_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class Split:
    """A function run as ``rest(*head(...))``: `head` compiled, `rest` plain Python."""

    def __init__(self, head: Any, rest: Any) -> None:
        self.head = head
        self.rest = rest

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        return self.rest(*self.head(*args, **kwargs))


def _tree_of(fn: Any) -> ast.FunctionDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # (a lambda's line, a def inside an expression)
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    fdef = tree.body[0]
    # (the code's first line is its first decorator's)
    first = min([d.lineno for d in fdef.decorator_list] + [fdef.lineno])
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - first)
    return fdef if fdef.name == fn.__code__.co_name else None


def _own_nodes(stmts: list) -> list:
    """Every node of `stmts`, not looking inside nested functions, lambdas or classes."""
    out, todo = [], list(stmts)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(getattr(node, "decorator_list", []))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _refused(fdef: ast.FunctionDef) -> bool:
    for node in ast.walk(fdef):
        if isinstance(node, (ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.Delete)):
            return True
        if isinstance(node, ast.Name) and node.id in _REFUSED_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _REFUSED_NAMES:
            return True
    return False


def _bound_on_every_path(stmts: list) -> set:
    """Names the top-level statements `stmts` bind whenever they finish normally."""
    names: set = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                names.update(e.id for e in elts if isinstance(e, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(
                stmt.target, ast.Name):
            names.add(stmt.target.id)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            names.add(stmt.name)
    return names


def _mentioned(stmts: list) -> set:
    """Every identifier the statements `stmts` may bind (any mention counts)."""
    names: set = set()
    for node in _own_nodes(stmts):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        for field in ("name", "rest"):  # defs, classes, except handlers, match captures
            value = getattr(node, field, None)
            if isinstance(value, str):
                names.add(value)
    return names


def _handoff(fn: Any, fdef: ast.FunctionDef, k: int) -> list | None:
    """The locals bound before statement `k` that the statements from `k` on read, or None
    when one of them may be unbound there (bound on some paths only)."""
    code = fn.__code__
    local = set(code.co_varnames)
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) \
        + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    bound = set(code.co_varnames[:nargs]) | _bound_on_every_path(fdef.body[:k])
    maybe = _mentioned(fdef.body[:k])
    read = {n.id for n in _own_nodes(fdef.body[k:])
            if isinstance(n, ast.Name) and n.id in local}
    if any(n in maybe and n not in bound for n in read):
        return None
    # a local neither bound before `k` nor mentioned there is unbound at `k` in `fn` as well,
    # and a local of the rest (assigned there)
    return sorted(read & bound)


def _strip(args: ast.arguments) -> ast.arguments:
    """The parameters without annotations or defaults (the functions get fn's default values)."""
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    return args


def _functions(fn: Any, fdef: ast.FunctionDef, k: int, names: list) -> tuple:
    loc = fdef.body[k]
    ret = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()))
    ast.copy_location(ret, loc)
    ast.fix_missing_locations(ret)
    head = ast.FunctionDef(fdef.name, _strip(fdef.args), [*fdef.body[:k], ret], [], None)
    rest_name = f"hookgrad_resume_in_{fdef.name}_at_{loc.lineno}"
    rest_args = ast.arguments([], [ast.arg(n) for n in names], None, [], [], None, [])
    rest = ast.FunctionDef(rest_name, rest_args, fdef.body[k:], [], None)
    globals_ = [s for s in _own_nodes(fdef.body) if isinstance(s, ast.Global)]
    if globals_:  # a declaration holds for the whole of `fn`: write it into both functions
        head.body = [*globals_, *head.body]
        rest.body = [*globals_, *rest.body]
    # the source read now must be the code that runs: `fn` itself, compiled again beside them
    check = ast.FunctionDef("hookgrad_resume_check", fdef.args, fdef.body, [], None)
    free = list(fn.__code__.co_freevars)
    outer_args = ast.arguments([], [ast.arg(n) for n in free], None, [], [], None, [])
    # the free names are the outer function's locals, so the inner functions close over them
    # (their cells are then replaced by the original function's own cells)
    touch = [ast.Expr(ast.Name(n, ast.Load())) for n in free]
    outer = ast.FunctionDef("hookgrad_resume_outer", outer_args,
                            [check, head, rest, *touch, ast.Pass()], [], None)
    for node in (check, head, rest, outer):
        ast.copy_location(node, fdef)
        node.type_params = []
    module = ast.fix_missing_locations(ast.Module([outer], []))
    flags = fn.__code__.co_flags & __future__.annotations.compiler_flag
    outer_code = compile(module, fn.__code__.co_filename, "exec", flags=flags,
                         dont_inherit=True).co_consts[0]
    codes = {c.co_name: c for c in outer_code.co_consts if isinstance(c, types.CodeType)}
    if not _same_code(codes["hookgrad_resume_check"], fn.__code__):
        raise ValueError("the source file no longer holds this code")
    return codes[fdef.name], codes[rest_name]


def _same_code(a: Any, b: Any) -> bool:
    """Same bytecode, names and constants (nested code alike), whatever the line table."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != (
            b.co_code, b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    return all(_same_code(x, y) if isinstance(x, types.CodeType) and isinstance(y, types.CodeType)
               else type(x) is type(y) and x == y and repr(x) == repr(y)  # (0.0, -0.0)
               for x, y in zip(a.co_consts, b.co_consts))


def _make(fn: Any, code: Any, defaults: bool) -> Any:
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(cells[n] for n in code.co_freevars) or None
    new = types.FunctionType(code, fn.__globals__, code.co_name,
                             fn.__defaults__ if defaults else None, closure)
    if defaults:
        new.__kwdefaults__ = fn.__kwdefaults__
        new.__qualname__ = fn.__qualname__
    else:
        new.__qualname__ = f"{fn.__qualname__}.<locals>.{code.co_name}"
    new.__module__ = fn.__module__
    return new


_SPLITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def split_at(fn: Any, line: int | None, compile_head: Any, key: Any = ()) -> Split | None:
    """`fn` split before the top-level statement holding `line`, or None (NOTE above).

    `compile_head(head_function)` compiles the statements before it. One split per function,
    line and `key` (the compile options): a retrace of `fn` (a guard failed) that breaks at the
    same line reuses it, so the head keeps its own cache entries.
    """
    if line is None or not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return None
    made = _SPLITS.setdefault(fn, {})
    if (line, key) not in made:
        made[(line, key)] = _split(fn, line, compile_head)
    return made[(line, key)]


def _split(fn: Any, line: int, compile_head: Any) -> Split | None:
    code = fn.__code__
    if code.co_flags & _GEN_FLAGS or code.co_cellvars:
        return None
    fdef = _tree_of(fn)
    if fdef is None or _refused(fdef):
        return None
    k = next((i for i, s in enumerate(fdef.body) if s.lineno <= line <= s.end_lineno), None)
    if not k:  # not found, or nothing before the statement that broke
        return None
    if any(isinstance(n, ast.Return) for n in _own_nodes(fdef.body[:k])):
        return None
    names = _handoff(fn, fdef, k)
    if names is None:
        return None
    try:
        head_code, rest_code = _functions(fn, fdef, k, names)
    except (SyntaxError, ValueError, KeyError):
        return None
    return Split(compile_head(_make(fn, head_code, True)), _make(fn, rest_code, False))
