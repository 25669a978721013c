"""Dependency discovery: ``import`` statements found by AST, globals referenced by a pickle."""

from __future__ import annotations

import ast
import contextlib
import pickletools
from collections.abc import Iterator
from typing import Any

_STRING_OPS = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"})
_MEMO_GETS = frozenset({"BINGET", "LONG_BINGET", "GET"})


def resolve_name(name: str | None, package: str, level: int) -> str:
    """Absolute name of a relative import (CPython's ``importlib._bootstrap._resolve_name``)."""
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        raise ValueError("attempted relative import beyond top-level package")
    base = bits[0]
    return f"{base}.{name}" if name else base


class _ImportVisitor(ast.NodeVisitor):
    """Collects ``(module, attribute or None)`` pairs, de-duplicated in first-seen order."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.references: dict[tuple[str, str | None], bool] = {}

    def _absolute(self, name: str | None, level: int) -> str:
        return resolve_name(name, self.package, level) if level > 0 else (name or "")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.references[(alias.name, None)] = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        name = self._absolute(node.module, node.level or 0)
        for alias in node.names:
            self.references[(name, None if alias.name == "*" else alias.name)] = True

    def visit_Call(self, node: ast.Call) -> None:
        if getattr(node.func, "id", None) == "__import__":
            # non-literal arguments: the call is not statically resolvable, skip it
            with contextlib.suppress(Exception):
                self._dunder_import(node)
        # Like PyTorch, arguments of calls are not searched further (``f(__import__("x"))``
        # contributes nothing), so both exporters see the same dependencies.

    def _dunder_import(self, node: ast.Call) -> None:
        name = node.args[0].value  # type: ignore[attr-defined]
        fromlist: list[str] = []
        level = 0
        if len(node.args) > 3:
            fromlist = [v.value for v in node.args[3].elts]  # type: ignore[attr-defined]
        if len(node.args) > 4:
            level = node.args[4].value  # type: ignore[attr-defined]
        for kw in node.keywords:
            if kw.arg == "fromlist" and len(node.args) <= 3:
                fromlist = [v.value for v in kw.value.elts]  # type: ignore[attr-defined]
            elif kw.arg == "level" and len(node.args) <= 4:
                level = kw.value.value  # type: ignore[attr-defined]
        if not fromlist:
            self.references[(name, None)] = True
            parent = name.rsplit(".", 1)[0]
            if parent != name:
                self.references[(self._absolute(parent, level), None)] = True
            return
        name = self._absolute(name, level)
        for item in fromlist:
            self.references[(name, None if item == "*" else item)] = True


def source_references(src: str, package: str) -> list[tuple[str, str | None]]:
    """``(module, attr)`` pairs imported by `src`, a module whose package is `package`.

    Raises ``SyntaxError``/``ValueError`` for unparsable source or a bad relative import.
    """
    visitor = _ImportVisitor(package)
    visitor.visit(ast.parse(src))
    return list(visitor.references)


def pickle_globals(data: bytes, protocol: int) -> Iterator[tuple[str, str]]:
    """``(module, attribute)`` of every global a pickle loads, in opcode order."""
    if protocol == 3:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name == "GLOBAL":
                module, _, field = str(arg).partition(" ")
                yield module, field
        return
    # Protocol 4 pushes the two names as strings (or memo fetches of earlier strings) right
    # before STACK_GLOBAL; remember the last two.
    memo: dict[int, Any] = {}
    memo_count = 0
    module: Any = None
    field: Any = None
    for opcode, arg, _ in pickletools.genops(data):
        if opcode.name in _STRING_OPS:
            module, field = field, arg
            memo[memo_count] = arg
        elif opcode.name in _MEMO_GETS:
            module, field = field, memo.get(arg)
        elif opcode.name == "MEMOIZE":
            memo_count += 1
        elif opcode.name == "STACK_GLOBAL" and isinstance(module, str):
            yield module, str(field)
