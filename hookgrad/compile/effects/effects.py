"""The side-effect log of a trace and its replay after the graph ran (spec §7.1).

Entries are kept in program order. Hook registrations and handle removals are logged when they
happen (the interceptors see them); mutations of pre-existing Python state are found by diffing
a snapshot (`world`) at the end of the trace and appended after them.
"""

from __future__ import annotations

from typing import Any

from hookgrad.compile.effects.recipes import Recipe, RunState

__all__ = ["TensorHook", "HandleRemove", "SetAttr", "SetContents", "ListExtend", "DictUpdate",
           "SetCell", "SetGlobal"]


class Effect:
    def replay(self, run: RunState) -> None:
        raise NotImplementedError


class TensorHook(Effect):
    """``t.register_hook(h)`` on a sourced tensor: register again on every call (spec §8.1)."""

    def __init__(self, tensor: Recipe, kind: str, hook: Any, slot: int) -> None:
        self.tensor, self.kind, self.hook, self.slot = tensor, kind, hook, slot
        self.hook_recipe: Recipe | None = None  # set when the trace ends (hook recipes)

    def replay(self, run: RunState) -> None:
        t = self.tensor.build(run)
        assert self.hook_recipe is not None
        run.slots[self.slot] = getattr(t, self.kind)(self.hook_recipe.build(run))

    def __repr__(self) -> str:
        return f"TensorHook({self.tensor!r}.{self.kind}({self.hook_recipe!r}) -> slot {self.slot})"


class HandleRemove(Effect):
    """``h.remove()`` on a handle that existed before the call (spec §7.4, D)."""

    def __init__(self, handle: Recipe) -> None:
        self.handle = handle

    def replay(self, run: RunState) -> None:
        self.handle.build(run).remove()


class SetAttr(Effect):
    def __init__(self, owner: Recipe, name: str, value: Recipe | None) -> None:
        self.owner, self.name, self.value = owner, name, value

    def replay(self, run: RunState) -> None:
        obj = self.owner.build(run)
        if self.value is None:
            if self.name in vars(obj):
                delattr(obj, self.name)
        else:
            setattr(obj, self.name, self.value.build(run))

    def __repr__(self) -> str:
        return f"SetAttr({self.owner!r}.{self.name} = {self.value!r})"


class SetContents(Effect):
    """A pre-existing list or dict whose contents changed: set them to the traced result."""

    def __init__(self, owner: Recipe, value: Recipe) -> None:
        self.owner, self.value = owner, value

    def replay(self, run: RunState) -> None:
        obj = self.owner.build(run)
        new = self.value.build(run)
        if isinstance(obj, list):
            obj[:] = new
        else:
            obj.clear()
            obj.update(new)

    def __repr__(self) -> str:
        return f"SetContents({self.owner!r} <- {self.value!r})"


class ListExtend(Effect):
    """Items appended to a pre-existing list (``append``/``extend`` kept the old prefix)."""

    def __init__(self, owner: Recipe, items: list[Recipe]) -> None:
        self.owner, self.items = owner, items

    def replay(self, run: RunState) -> None:
        self.owner.build(run).extend(r.build(run) for r in self.items)

    def __repr__(self) -> str:
        return f"ListExtend({self.owner!r} += {self.items!r})"


class DictUpdate(Effect):
    """Keys set or deleted in a pre-existing dict (`None` recipe: delete)."""

    def __init__(self, owner: Recipe, items: list[tuple[Any, Recipe | None]]) -> None:
        self.owner, self.items = owner, items

    def replay(self, run: RunState) -> None:
        d = self.owner.build(run)
        for key, recipe in self.items:
            if recipe is None:
                d.pop(key, None)
            else:
                d[key] = recipe.build(run)

    def __repr__(self) -> str:
        return f"DictUpdate({self.owner!r}, {[k for k, _ in self.items]!r})"


class SetCell(Effect):
    def __init__(self, cell: Recipe, value: Recipe) -> None:
        self.cell, self.value = cell, value

    def replay(self, run: RunState) -> None:
        self.cell.build(run).cell_contents = self.value.build(run)


class SetGlobal(Effect):
    def __init__(self, globals_dict: dict, name: str, value: Recipe | None) -> None:
        self.globals, self.name, self.value = globals_dict, name, value

    def replay(self, run: RunState) -> None:
        if self.value is None:
            self.globals.pop(self.name, None)
        else:
            self.globals[self.name] = self.value.build(run)

    def __repr__(self) -> str:
        return f"SetGlobal({self.name} = {self.value!r})"
