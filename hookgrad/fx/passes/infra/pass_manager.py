"""`PassManager`: run passes in an order that satisfies their constraints, until nothing changes.

A constraint is ``depends_on(a, b) -> bool``: False means ``a`` may not run before ``b``.
Passes are ordered by a topological sort over the pairs a constraint forbids (first come,
first served among the free ones), and the whole list runs up to ``steps`` times, stopping
early after a round in which no pass reported a change.

Mirrors: ``torch.fx.passes.infra.pass_manager``.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable
from functools import wraps
from typing import Any

from hookgrad.fx.graph_module import GraphModule
from hookgrad.fx.passes.infra.pass_base import PassResult
from hookgrad.nn.modules.module import Module

__all__ = ["PassManager", "pass_result_wrapper", "this_before_that_pass_constraint"]

Pass = Callable[..., Any]
Constraint = Callable[[Pass, Pass], bool]


def _pass_name(fn: Pass) -> str:
    return fn.__name__ if inspect.isfunction(fn) else type(fn).__name__


def pass_result_wrapper(fn: Pass | None) -> Pass | None:
    """Make a pass that returns None or a module return a `PassResult` (``modified=True``).

    Mirrors: ``torch.fx.passes.infra.pass_manager.pass_result_wrapper``.
    """
    if fn is None:
        return None

    @wraps(fn)
    def wrapped_fn(gm: Module) -> PassResult | None:
        result = fn(gm)
        if result is None:
            return PassResult(gm, True)
        if isinstance(result, PassResult):
            return result
        if isinstance(result, Module):
            return PassResult(result, True)
        return None

    if not inspect.isfunction(fn):
        wrapped_fn.__name__ = type(fn).__name__
    return wrapped_fn


def this_before_that_pass_constraint(this: Pass, that: Pass) -> Constraint:
    """A constraint saying ``this`` runs before ``that``.

    Mirrors: ``torch.fx.passes.infra.pass_manager.this_before_that_pass_constraint``.
    """

    def depends_on(a: Pass, b: Pass) -> bool:
        return a != that or b != this

    return depends_on


def _validate_schedule(constraint: Constraint, passes: list[Pass]) -> None:
    for i, a in enumerate(passes):
        for j, b in enumerate(passes[i + 1:]):
            if not constraint(a, b):
                raise RuntimeError(
                    f"pass schedule constraint violated. Expected {a} before {b} but found "
                    f"{a} at index {i} and {b} at index {j} in pass list.")


def _topological_sort(passes: list[Pass], constraints: list[Constraint]) -> list[Pass]:
    if not constraints:
        return passes
    must_follow: dict[Pass, list[Pass]] = {p: [] for p in passes}
    waiting_on = dict.fromkeys(passes, 0)
    ready: deque[Pass] = deque()
    for a in passes:
        for b in passes:
            if a == b:
                continue
            for constraint in constraints:
                if not constraint(a, b):  # a may not run before b
                    must_follow[b].append(a)
                    waiting_on[a] += 1
        if waiting_on[a] == 0:
            ready.append(a)
    done: set[Pass] = set()
    order: list[Pass] = []
    while ready:
        p = ready.popleft()
        order.append(p)
        done.add(p)
        for n in must_follow[p]:
            if n not in done:
                waiting_on[n] -= 1
                if waiting_on[n] == 0:
                    ready.append(n)
    cycle = [p for p, count in waiting_on.items() if count != 0]
    if cycle:
        raise RuntimeError(f"Circular dependency detected within the following passes: {cycle}")
    return order


class PassManager:
    """Collects passes and constraints, orders them and runs them (see the module doc).

    Mirrors: ``torch.fx.passes.infra.pass_manager.PassManager``.
    """

    _validated: bool = False
    steps: int = 1

    def __init__(self, passes: list[Pass] | None = None,
                 constraints: list[Constraint] | None = None, steps: int | None = None,
                 run_checks_after_each_pass: bool = False,
                 suppress_check_failures: bool = False) -> None:
        self.passes = passes or []
        self.constraints = constraints or []
        if steps:
            self.steps = steps
        self.run_checks_after_each_pass = run_checks_after_each_pass
        self.suppress_check_failures = suppress_check_failures

    def add_pass(self, _pass: Pass) -> None:
        """Append a pass (the schedule is validated again before the next run)."""
        self.passes.append(_pass)
        self._validated = False

    def add_constraint(self, constraint: Constraint) -> None:
        """Append a constraint."""
        self.constraints.append(constraint)
        self._validated = False

    def validate_constraints(self) -> None:
        """Raise RuntimeError if the current pass order breaks a constraint."""
        if self._validated:
            return
        for constraint in self.constraints:
            _validate_schedule(constraint, self.passes)
        self._validated = True

    def solve_constraints(self) -> None:
        """Reorder the passes to satisfy every constraint (RuntimeError on a cycle)."""
        self.passes = _topological_sort(self.passes, self.constraints)
        self._validated = True

    def add_checks(self, check: Callable[[Module], None]) -> None:
        """Use ``check(module)`` before the passes (and after each, if asked)."""
        if len(inspect.signature(check).parameters) != 1:
            raise TypeError("PassManager check function should only take in one variable, a "
                            "module")
        self.check = check  # type: ignore[method-assign]

    def check(self, module: Module) -> None:
        """No checks by default."""

    def __call__(self, module: Module) -> PassResult:
        if not self._validated:
            self.solve_constraints()
        self.check(module)
        overall_modified = False
        for _ in range(self.steps):
            modified = False
            for i, fn in enumerate(self.passes):
                try:
                    result = fn(module)
                    if not isinstance(result, PassResult) and not hasattr(result,
                                                                          "graph_module"):
                        raise TypeError(
                            f"The result of the pass {_pass_name(fn)} should be type "
                            "PassResult.Please wrap it with pass_result_wrapper()")
                    module = result.graph_module
                    modified = modified or result.modified
                    if isinstance(module, GraphModule):
                        module.recompile()
                    if self.run_checks_after_each_pass:
                        self.check(module)
                except Exception as e:
                    before = [_pass_name(p) for p in self.passes[:i]]
                    raise Exception(  # noqa: TRY002 - PyTorch raises a bare Exception here
                        f"An error occurred when running the '{_pass_name(fn)}' pass after "
                        f"the following passes: {before}") from e
            overall_modified = overall_modified or modified
            if not modified:
                break
        return PassResult(module, overall_modified)
