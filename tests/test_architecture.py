"""Rules of docs/architecture.md: import layers (§3), size budget (§9), ``Mirrors:`` lines (§8).

Sources are read with ``ast``/``tokenize``; nothing here imports the modules it checks (except
the ``Mirrors:`` test, which inspects the public namespace).
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import tokenize
from pathlib import Path

import hookgrad

ROOT = Path(hookgrad.__file__).resolve().parent
PACKAGE = "hookgrad"
TOP = 99  # layer of modules that may import anything (and of `hookgrad` itself as a target)
DEFAULT_LAYER = 7  # a module missing from LAYERS is user-facing: nothing below may import it

# architecture.md §3, lowest first. Longest matching prefix wins; a package prefix ends with ".".
LAYERS: dict[str, int] = {
    "hookgrad._typing": 0, "hookgrad._config": 0, "hookgrad._runtime": 0, "hookgrad.utils.": 0,
    "hookgrad.utils": 0, "hookgrad._array_operators": 0, "hookgrad._namespace_proxy": 0,
    "hookgrad._ops.registry": 1, "hookgrad._ops._shapes": 1, "hookgrad._dtypes": 1,
    "hookgrad._backend": 1, "hookgrad._meta.": 1, "hookgrad._meta": 1,
    "hookgrad.return_types": 1, "hookgrad._memory_format": 1,
    "hookgrad._tensor": 2, "hookgrad._dispatch": 2, "hookgrad._bf16_bind": 2, "hookgrad._storage_layout": 2,
    "hookgrad._storage": 2,
    "hookgrad._ops.": 3, "hookgrad._ops": 3,
    "hookgrad._functional.": 4, "hookgrad._functional": 4, "hookgrad._tensor_methods": 4,
    "hookgrad._tensor_str": 4, "hookgrad._tensor_copy": 4, "hookgrad.linalg": 4,
    "hookgrad.autograd.": 5, "hookgrad.autograd": 5,
    "hookgrad.nn.": 6, "hookgrad.nn": 6, "hookgrad.optim.": 6, "hookgrad.optim": 6,
    "hookgrad.utils.data.": 6, "hookgrad.utils.data": 6, "hookgrad.utils.dlpack": 4,
    "hookgrad.utils.tensorboard.": 6, "hookgrad.utils.tensorboard": 6, "hookgrad.serialization": 6,
    "hookgrad._serialization.": 6, "hookgrad._serialization": 6,
    "hookgrad.func": 6, "hookgrad.utils.checkpoint": 6,
    "hookgrad.utils.checkpoint_selective": 6,
    "hookgrad._functorch._batched": 6, "hookgrad._functorch._rules": 6,
    "hookgrad._functorch.pytree_util": 6, "hookgrad._functorch.vmap": 6,
    "hookgrad._functorch.eager_transforms": 6, "hookgrad._functorch.jacobians": 6,
    "hookgrad._functorch.functional_call": 6, "hookgrad._functorch.apis": 6,
    "hookgrad._functorch.decompositions": 6, "hookgrad._functorch._autodiff": 6,
    "hookgrad._functorch._random": 6, "hookgrad._functorch.batch_norm_replacement": 6,
    "hookgrad._functorch._function_check": 6,
    "hookgrad.utils._python_dispatch": 2, "hookgrad.utils.weak": 2, "hookgrad.utils.flop_counter": 7,
    "hookgrad.utils.module_tracker": 7, "hookgrad.utils.model_zoo": 7,
    "hookgrad.hooktools.": 7, "hookgrad.hooktools": 7, "hookgrad.datasets": 7,
    "hookgrad.compile.": 7, "hookgrad.compile": 7, "hookgrad.package.": 7,
    "hookgrad.package": 7, "hookgrad.distributed.": 7, "hookgrad.distributed": 7,
    "hookgrad.futures": 7, "hookgrad.nn.parallel.": 7, "hookgrad.nn.parallel": 7,
    "hookgrad.testing.": TOP, "hookgrad.testing": TOP, "hookgrad.cli.": TOP,
    "hookgrad.cli": TOP, "hookgrad.__main__": TOP, "hookgrad": TOP,
    "hookgrad.run": TOP,  # like the CLI: installs the torch alias, then runs a user script
}

# (importing module, imported module) -> why the upward import is tolerated for now. Each entry
# is debt for the lead: the usual fix is importing the layer-4 function (``hookgrad._functional
# .*``) instead of the top-level namespace, which also avoids a partially initialised package.
IMPORT_ALLOWLIST: dict[tuple[str, str], str] = {}

# frozenset of modules in one import circle -> why it is tolerated for now
CYCLE_ALLOWLIST: dict[frozenset, str] = {}

# module -> reason it may exceed 500 code lines
MODULE_SIZE_ALLOWLIST: dict[str, str] = {}
# "module:qualname" -> reason it may exceed 60 code lines
FUNCTION_SIZE_ALLOWLIST: dict[str, str] = {
}

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MIRRORS_ALLOWLIST = Path(__file__).with_name("mirrors_allowlist.txt")


# ---------------------------------------------------------------------------------- helpers
def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer_of(module: str) -> int:
    """The layer of `module`: the longest matching entry of `LAYERS`, else `DEFAULT_LAYER`."""
    best, best_len = DEFAULT_LAYER, -1
    for prefix, layer in LAYERS.items():
        hit = module == prefix or (prefix.endswith(".") and module.startswith(prefix))
        if hit and len(prefix) > best_len:
            best, best_len = layer, len(prefix)
    return best


def code_lines(source: str) -> set[int]:
    """Line numbers holding code tokens: no blank lines, comments or docstrings (teenygrad).

    A logical line made only of string literals is documentation (a docstring or an attribute
    docstring), so it does not count either.
    """
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER}
    lines: set[int] = set()
    logical: list[tokenize.TokenInfo] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in skip:
            continue
        if tok.type != tokenize.NEWLINE:
            logical.append(tok)
            continue
        if not all(t.type == tokenize.STRING for t in logical):
            for t in logical:
                lines.update(range(t.start[0], t.end[0] + 1))
        logical = []
    return lines


@functools.cache
def _parsed(path: Path) -> tuple[ast.Module, frozenset[int]]:
    source = path.read_text()
    return ast.parse(source, filename=str(path)), frozenset(code_lines(source))


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, is_pkg: bool, node: ast.AST) -> list[str]:
    """Modules an import statement loads (``from pkg import sub`` names the submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    assert isinstance(node, ast.ImportFrom)
    src = _resolve(module, is_pkg, node)
    if src.split(".")[0] != PACKAGE:
        return []
    out = []
    for alias in node.names:
        sub = f"{src}.{alias.name}"
        out.append(sub if sub in MODULES else src)
    return out


def _imports(module: str, tree: ast.Module, is_pkg: bool) -> list[tuple[str, int, bool]]:
    """(imported module, line, lazy) for every hookgrad import outside TYPE_CHECKING blocks."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, lazy)
                continue
            visit_stmt(child, lazy)

    def visit_stmt(child: ast.AST, lazy: bool) -> None:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.extend((t, child.lineno, lazy) for t in _targets(module, is_pkg, child))
        fn = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        visit(child, lazy or isinstance(child, fn))

    visit(tree, False)
    return found


def _functions(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    out: list[tuple[str, ast.AST]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


# ---------------------------------------------------------------------------------- tests
def test_imports_only_go_down_the_layers():
    problems = []
    for module, path in MODULES.items():
        own = layer_of(module)
        if own == TOP:
            continue
        for target, line, lazy in _imports(module, _parsed(path)[0], path.name == "__init__.py"):
            theirs = layer_of(target)
            if theirs <= own or (module, target) in IMPORT_ALLOWLIST:
                continue
            kind = "lazy import" if lazy else "import"
            problems.append(f"{path.relative_to(ROOT.parent)}:{line}: layer {own} module "
                            f"{module} has an upward {kind} of {target} (layer {theirs})")
    assert not problems, "upward imports (architecture.md §3):\n" + "\n".join(problems)


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components of size > 1, iteratively (no recursion limit on deep chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.add(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def test_no_import_cycles_even_through_function_local_imports():
    # A function-local import that closes a circle only hides it (architecture.md §3): split the
    # modules instead. Modules of the TOP layer (tests' helpers, CLI) are outside the check.
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        if layer_of(module) == TOP:
            continue
        for target, _, _ in _imports(module, _parsed(path)[0], path.name == "__init__.py"):
            if target in MODULES and target != module and layer_of(target) != TOP:
                graph[module].add(target)
    cycles = [sorted(c) for c in _strongly_connected(graph)
              if frozenset(c) not in CYCLE_ALLOWLIST]
    assert not cycles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_module_over_500_code_lines():
    big = []
    for module, path in MODULES.items():
        n = len(_parsed(path)[1])
        if n > MAX_MODULE_LINES and module not in MODULE_SIZE_ALLOWLIST:
            big.append(f"{module}: {n} code lines")
    assert not big, "modules over the size budget (architecture.md §9):\n" + "\n".join(big)


def test_no_function_over_60_code_lines():
    long = []
    for module, path in MODULES.items():
        tree, lines = _parsed(path)
        for name, node in _functions(tree):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            n = len(lines.intersection(span))
            key = f"{module}:{name}"
            if n > MAX_FUNCTION_LINES and key not in FUNCTION_SIZE_ALLOWLIST:
                long.append(f"{key}: {n} code lines")
    assert not long, "functions over the size budget (architecture.md §9):\n" + "\n".join(long)


def _mirrors_allowlist() -> set[str]:
    names = set()
    for raw in MIRRORS_ALLOWLIST.read_text().splitlines():
        name = raw.split("#", 1)[0].strip()
        if name:
            names.add(name)
    return names


def public_objects_missing_mirrors() -> list[str]:
    """Public functions/classes of the ``hookgrad`` namespace whose docstring lacks Mirrors:."""
    missing = []
    for name in sorted(dir(hookgrad)):
        obj = getattr(hookgrad, name)
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if not getattr(obj, "__module__", "").startswith(PACKAGE):
            continue
        if "Mirrors:" not in (obj.__doc__ or ""):
            missing.append(name)
    return missing


def test_public_objects_have_mirrors_line():
    allowed = _mirrors_allowlist()
    missing = [n for n in public_objects_missing_mirrors() if n not in allowed]
    assert not missing, (
        "public hookgrad objects whose docstring has no 'Mirrors:' line (architecture.md §8); add "
        f"the line (allowlist: {MIRRORS_ALLOWLIST.name}): {missing}")


# Stages of the compile pipeline (docs/compile.md, "Stage packages"), earliest first: a stage
# may import its own or an earlier stage, never a later one (lazy imports included).
COMPILE_STAGES = {
    "core": 0,               # config, counters, exc, state, sources, the IR (graph), dynamic
    "effects": 1,            # world snapshots, attribute reads, blind writes, recipes, finalize
    "trace": 2,              # the bind recorder, interception, tracer, symbolic trace, hops
    "guards": 3,             # guard building and checking
    "codegen": 4,            # Python source and kernels for the inductor backend
    "backends": 5,           # eager / aot_eager / inductor, joint forward-backward programs
    "cache": 6,              # the per-code-object frame cache
    "compiled_autograd": 7,  # compiled autograd
}
COMPILE_TOP = 8              # hookgrad.compile itself, api, aot, explain: the front door


def compile_stage_of(module: str) -> int | None:
    """The stage of a hookgrad.compile module; None outside hookgrad.compile."""
    parts = module.split(".")
    if parts[:2] != ["hookgrad", "compile"]:
        return None
    if len(parts) == 2:
        return COMPILE_TOP
    return COMPILE_STAGES.get(parts[2], COMPILE_TOP)


def test_compile_stages_import_only_earlier_stages():
    stage_dirs = {p.name for p in (ROOT / "compile").iterdir()
                  if p.is_dir() and (p / "__init__.py").exists()}
    assert stage_dirs == set(COMPILE_STAGES), "every compile package needs a stage in the table"
    problems = []
    for module, path in MODULES.items():
        own = compile_stage_of(module)
        if own is None:
            continue
        for target, line, lazy in _imports(module, _parsed(path)[0], path.name == "__init__.py"):
            theirs = compile_stage_of(target)
            if theirs is not None and theirs > own:
                problems.append(f"{path.relative_to(ROOT.parent)}:{line}: stage {own} module "
                                f"{module} imports {target} (stage {theirs})")
    assert not problems, "compile stage order broken:\n" + "\n".join(problems)


_SAMPLE = '''from typing import TYPE_CHECKING
from hookgrad._tensor import Tensor
if TYPE_CHECKING:
    from hookgrad.nn import Module
def f():
    """doc
    more doc"""
    # comment

    import hookgrad.autograd
    return 1
'''


def test_architecture_checkers_themselves():
    found = _imports("hookgrad._dtypes", ast.parse(_SAMPLE), False)
    assert ("hookgrad._tensor", 2, False) in found
    assert ("hookgrad.autograd", 10, True) in found
    assert all(t != "hookgrad.nn" for t, _, _ in found)
    assert code_lines(_SAMPLE) == {1, 2, 3, 4, 5, 10, 11}
    assert code_lines("x = 1\n'doc'\ny = ('a'\n     'b')\n") == {1, 3, 4}
    assert layer_of("hookgrad._ops.pointwise") == 3 and layer_of("hookgrad._ops.registry") == 1
    assert layer_of("hookgrad.utils.data.dataset") == 6 and layer_of("hookgrad.utils.hooks") == 0
    assert layer_of("hookgrad.something_new") == DEFAULT_LAYER
