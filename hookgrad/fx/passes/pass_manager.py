"""The older pass manager: passes are plain callables, run once each in list order.

``loop_pass``/``inplace_wrapper``/``log_hook`` wrap passes; ``these_before_those_pass_constraint``
compares passes after unwrapping them (so a looped pass still matches its base pass).

Mirrors: ``torch.fx.passes.pass_manager``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from inspect import unwrap
from typing import Any

from hookgrad.fx.passes.infra.pass_manager import (_validate_schedule,
                                                     this_before_that_pass_constraint)
from hookgrad.nn.modules.module import Module

__all__ = ["PassManager", "inplace_wrapper", "log_hook", "loop_pass",
           "these_before_those_pass_constraint", "this_before_that_pass_constraint"]

Pass = Callable[..., Any]


def inplace_wrapper(fn: Callable[[Module], Any]) -> Callable[[Module], Module]:
    """Make a pass that edits its module in place return the module.

    Mirrors: ``torch.fx.passes.pass_manager.inplace_wrapper``.
    """

    @wraps(fn)
    def wrapped_fn(gm: Module) -> Module:
        fn(gm)
        return gm

    return wrapped_fn


def log_hook(fn: Callable[[Module], Any], level: int = 20) -> Callable[[Module], Any]:
    """Log the module after the pass at ``level``.

    Mirrors: ``torch.fx.passes.pass_manager.log_hook``.
    """
    import logging  # noqa: PLC0415 - only when a pass is logged

    @wraps(fn)
    def wrapped_fn(gm: Module) -> Any:
        result = fn(gm)
        logging.getLogger(__name__).log(level, "Ran pass %s\t Return value: %s", fn, result)
        return result

    return wrapped_fn


def loop_pass(base_pass: Pass, n_iter: int | None = None,
              predicate: Callable[[Any], bool] | None = None) -> Pass:
    """Run ``base_pass`` ``n_iter`` times, or while ``predicate(module)`` holds (exactly one).

    Mirrors: ``torch.fx.passes.pass_manager.loop_pass``.
    """
    if (n_iter is not None) == (predicate is not None):
        raise AssertionError("Exactly one of `n_iter`or `predicate` must be specified.")

    @wraps(base_pass)
    def new_pass(source: Any) -> Any:
        output = source
        if n_iter is not None and n_iter > 0:
            for _ in range(n_iter):
                output = base_pass(output)
        elif predicate is not None:
            while predicate(output):
                output = base_pass(output)
        else:
            raise RuntimeError(f"loop_pass must be given positive int n_iter (given {n_iter}) "
                               f"xor predicate (given {predicate})")
        return output

    return new_pass


def these_before_those_pass_constraint(these: Pass, those: Pass) -> Callable[[Pass, Pass], bool]:
    """A constraint saying ``these`` runs before ``those``, compared after unwrapping.

    Mirrors: ``torch.fx.passes.pass_manager.these_before_those_pass_constraint``.
    """

    def depends_on(a: Pass, b: Pass) -> bool:
        return unwrap(a) != those or unwrap(b) != these

    return depends_on


class PassManager:
    """Runs plain callables in list order after checking the constraints.

    Mirrors: ``torch.fx.passes.pass_manager.PassManager``.
    """

    _validated: bool = False

    def __init__(self, passes: list[Pass] | None = None,
                 constraints: list[Callable[..., Any]] | None = None) -> None:
        self.passes = passes or []
        self.constraints = constraints or []

    @classmethod
    def build_from_passlist(cls, passes: list[Pass]) -> PassManager:
        """A manager running ``passes`` (no constraints)."""
        return PassManager(passes)

    def add_pass(self, _pass: Pass) -> None:
        """Append a pass."""
        self.passes.append(_pass)
        self._validated = False

    def add_constraint(self, constraint: Callable[..., Any]) -> None:
        """Append a constraint."""
        self.constraints.append(constraint)
        self._validated = False

    def remove_pass(self, _passes: list[str]) -> None:
        """Drop the passes whose ``__name__`` is listed."""
        if _passes is None:
            return
        self.passes = [p for p in self.passes if p.__name__ not in _passes]
        self._validated = False

    def replace_pass(self, _target: Pass, _replacement: Pass) -> None:
        """Replace every pass named like ``_target`` by ``_replacement``."""
        self.passes = [_replacement if p.__name__ == _target.__name__ else p
                       for p in self.passes]
        self._validated = False

    def validate(self) -> None:
        """Raise RuntimeError if the pass order breaks a constraint."""
        if self._validated:
            return
        for constraint in self.constraints:
            _validate_schedule(constraint, self.passes)
        self._validated = True

    def __call__(self, source: Any) -> Any:
        self.validate()
        out = source
        for _pass in self.passes:
            out = _pass(out)
        return out
