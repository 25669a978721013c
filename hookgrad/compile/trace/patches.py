"""The one table of callables patched while a trace runs, and its one install rule.

Three groups feed it: `intercept` (hook registration, data-dependent Python, composites),
`calls` (random factories, fills, ``Function.apply``, host randomness and clocks) and
`symtrace` (the symbolic-shape wrappers, only when a trace has symbolic sizes), installed in
that order. Each group is built once, on its first install, from what is there then (so a later
group wraps an earlier group's wrappers); installing saves each owner's own current value and
sets the wrapper, uninstalling restores them in reverse order.
A nested trace installs only the groups not already in place, so an enclosing trace's
layering is kept and an inner uninstall leaves the outer trace's patches alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Patch", "PatchGroup", "install", "uninstall", "GROUPS"]


@dataclass(frozen=True)
class Patch:
    """One replacement: ``setattr(owner, name, new)`` while a trace runs."""

    owner: Any
    name: str
    new: Any


@dataclass
class PatchGroup:
    """A named list of patches, built by `build` on first use."""

    name: str
    build: Callable[[], list[tuple[Any, str, Any]]]
    patches: list[Patch] = field(default_factory=list)
    built: bool = False

    def __post_init__(self) -> None:
        GROUPS[self.name] = self

    def ensure_built(self) -> list[Patch]:
        if not self.built:
            self.patches = [Patch(o, n, v) for o, n, v in self.build()]
            self.built = True
        return self.patches


GROUPS: dict[str, PatchGroup] = {}  # every group by name (a group may defer to another's names)
_SAVED: list[list[tuple[Any, str, Any]]] = []
_ACTIVE: set[str] = set()  # names of the groups patched in now


def _current(owner: Any, name: str) -> Any:
    # a class's own attribute (not one inherited), so restoring never copies a base's value
    return owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)


def install(groups: list[PatchGroup]) -> None:
    """Patch every group in; `uninstall` undoes exactly this call."""
    undo = []
    for group in groups:
        if group.name in _ACTIVE:  # an enclosing trace's install: its layering stays as is
            continue
        # built lazily, after the groups before it are patched in: a later group wraps the
        # earlier group's wrapper (symtrace's ``Tensor.item`` still breaks the graph)
        for p in group.ensure_built():
            undo.append((p.owner, p.name, _current(p.owner, p.name)))
            setattr(p.owner, p.name, p.new)
        _ACTIVE.add(group.name)
        undo.append((_ACTIVE, group.name, None))
    _SAVED.append(undo)


def uninstall() -> None:
    """Restore what the most recent `install` replaced."""
    for owner, name, old in reversed(_SAVED.pop()):
        if owner is _ACTIVE:
            _ACTIVE.discard(name)
        else:
            setattr(owner, name, old)
