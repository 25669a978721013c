"""`RemovableHandle` and `HookRegistry`: the one storage used by every hook surface.

Layer 0: imports nothing from hookgrad.

NOTE [Hook storage]
Every ``register_*`` method in hookgrad stores its hook in a `HookRegistry`, an `OrderedDict`
keyed by handle id (so code that reads ``module._forward_hooks`` as PyTorch exposes it keeps
working), plus a per-id `HookEntry` with the per-hook flags PyTorch keeps in parallel dicts
(``with_kwargs``, ``always_call``). Iteration for *running* hooks goes through `snapshot()`:
the set of hooks of one step is fixed when the step starts, so a hook that removes or adds hooks
does not change the current step (PyTorch's snapshot rule, spec §1.3).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["RemovableHandle", "HookRegistry", "HookEntry", "unserializable_hook"]


class RemovableHandle:
    """A handle that removes one hook from its registry (and from extra side tables).

    Holds only weak references to the dicts, so a handle never keeps a tensor, node or module
    alive. Ids come from one class-wide counter shared by every hook kind.

    Mirrors: ``torch.utils.hooks.RemovableHandle``.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        """Remove the hook; silent if already removed or if the owner is gone."""
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __getstate__(self) -> tuple:
        if not self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state: tuple) -> None:
        if state[0] is None:
            # Same trick as PyTorch: a dead registry unpickles to a fresh empty one.
            self.hooks_dict_ref = weakref.ref(OrderedDict())
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = ()
        if len(state) >= 3:
            self.extra_dict_ref = tuple(
                weakref.ref(d) for d in state[2] if d is not None
            )

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"


@dataclass(frozen=True, slots=True)
class HookEntry:
    """One registered hook with the flags PyTorch keeps in side tables."""

    fn: Callable[..., Any]
    with_kwargs: bool = False
    always_call: bool = False


class HookRegistry(OrderedDict):
    """Ordered hooks of one kind: ``id -> fn`` (PyTorch's OrderedDict view) plus flags.

    `add` is the only way hookgrad code registers a hook, so "create handle, store, return
    handle" is written once.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.flags: OrderedDict[int, HookEntry] = OrderedDict()

    def add(
        self,
        fn: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Store `fn` and return its handle; ``prepend`` puts it first."""
        handle = RemovableHandle(self, extra_dict=self.flags)
        self[handle.id] = fn
        if with_kwargs or always_call:
            self.flags[handle.id] = HookEntry(fn, with_kwargs, always_call)
        if prepend:
            self.move_to_end(handle.id, last=False)
        return handle

    def entries(self) -> list[tuple[int, HookEntry]]:
        """A snapshot of ``(id, entry)`` pairs in call order (see NOTE [Hook storage])."""
        flags = self.flags
        return [(hid, flags.get(hid) or HookEntry(fn)) for hid, fn in self.items()]

    def snapshot(self) -> list[Callable[..., Any]]:
        """A snapshot of the hook functions in call order."""
        return list(self.values())

    def ids_with(self, flag: str) -> OrderedDict:
        """PyTorch-style side table: ids whose entry has `flag` set (``with_kwargs``...)."""
        return OrderedDict(
            (hid, True) for hid, e in self.flags.items() if getattr(e, flag) and hid in self
        )

    def __reduce__(self) -> tuple:
        return (self.__class__, (list(self.items()),), {"flags": self.flags})

    def __setstate__(self, state: dict) -> None:
        self.flags = state["flags"]


def hook_name(fn: Any) -> str:
    """The name PyTorch interpolates in hook error messages (``'<lambda>'``, ``'<unknown>'``)."""
    return getattr(fn, "__name__", "<unknown>")


def iter_live(registry: HookRegistry | None) -> Iterator[Callable[..., Any]]:
    """Iterate a snapshot of a possibly-absent registry."""
    if registry:
        yield from list(registry.values())


def unserializable_hook(f: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a hook as unserializable (kept for API parity).

    Mirrors: ``torch.utils.hooks.unserializable_hook``.
    """
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f
