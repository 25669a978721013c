"""``torch.fx.experimental.symbolic_shapes``: the shape predicates model code calls.

Model and export code asks these questions of sizes that may be symbolic under a tracer
(``guard_or_false(x.shape[0] == 1)``). hookgrad's sizes are plain ints, also while compiling
(a new shape recompiles), so every predicate has its concrete answer: the value itself.

Mirrors: ``torch.fx.experimental.symbolic_shapes`` (the predicates on concrete values).
"""

from __future__ import annotations

from typing import Any

__all__ = ["guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false",
           "guard_size_oblivious", "expect_true", "sym_eq", "free_symbols",
           "free_unbacked_symbols", "has_free_symbols", "is_concrete_int", "is_concrete_bool"]


def guard_or_false(a: Any) -> bool:
    """Mirrors: ``symbolic_shapes.guard_or_false`` (a concrete condition is its value)."""
    return bool(a)


def guard_or_true(a: Any) -> bool:
    """Mirrors: ``symbolic_shapes.guard_or_true``."""
    return bool(a)


def statically_known_true(x: Any) -> bool:
    """Mirrors: ``symbolic_shapes.statically_known_true``."""
    return bool(x)


def statically_known_false(x: Any) -> bool:
    """Mirrors: ``symbolic_shapes.statically_known_false``."""
    return not bool(x)


def guard_size_oblivious(expr: Any) -> bool:
    """Mirrors: ``symbolic_shapes.guard_size_oblivious``."""
    return bool(expr)


def expect_true(a: Any, skip: int = 0) -> bool:
    """Mirrors: ``symbolic_shapes.expect_true``."""
    return bool(a)


def sym_eq(x: Any, y: Any) -> bool:
    """Equality that recurses into lists and tuples. Mirrors: ``symbolic_shapes.sym_eq``."""
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return len(x) == len(y) and all(sym_eq(a, b) for a, b in zip(x, y))
    return bool(x == y)


def free_symbols(val: Any) -> set:
    """The symbols `val` depends on: none, sizes are concrete. Mirrors:
    ``symbolic_shapes.free_symbols``."""
    return set()


def free_unbacked_symbols(x: Any) -> set:
    """Mirrors: ``symbolic_shapes.free_unbacked_symbols`` (none)."""
    return set()


def has_free_symbols(val: Any) -> bool:
    """Mirrors: ``symbolic_shapes.has_free_symbols`` (False)."""
    return False


def is_concrete_int(a: Any) -> bool:
    """Whether `a` is a plain int (a bool is one, as in Python). Mirrors:
    ``symbolic_shapes.is_concrete_int``."""
    return isinstance(a, int)


def is_concrete_bool(a: Any) -> bool:
    """Mirrors: ``symbolic_shapes.is_concrete_bool``."""
    return isinstance(a, bool)
