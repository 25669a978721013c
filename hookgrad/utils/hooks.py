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

import warnings

import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "RemovableHandle", "HookRegistry", "HookEntry", "HookInfo", "hooks_info", "remove_all_hooks",
    "unserializable_hook", "warn_if_has_hooks",
]


class RemovableHandle:
    """A handle that removes one hook from its registry (and from extra side tables).

    Holds only weak references to the dicts, so a handle never keeps a tensor, node or module
    alive. Ids come from one class-wide counter shared by every hook kind.

    Mirrors: ``torch.utils.hooks.RemovableHandle``.
    """

    # Slots: one handle is made per registered hook, and tensor hooks are registered per
    # step in many training loops.
    __slots__ = ("hooks_dict_ref", "id", "extra_dict_ref", "__weakref__")

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if extra_dict is None:  # the common case (one per tensor hook): skip the type tests
            return
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


_new = object.__new__
_weakref = weakref.ref
_REGISTRATION_OBSERVERS: list[Callable[[Any, Callable[..., Any]], Callable[..., Any]]] = []


def add_registration_observer(observer: Callable[[Any, Callable[..., Any]], Any]) -> None:
    """Call ``observer(registry, fn) -> fn`` on every hook registered from now on.

    hookgrad extension used by `hookgrad.hooktools.HookTrace` to wrap hooks registered while a
    trace is open; the returned function is what gets stored.
    """
    _REGISTRATION_OBSERVERS.append(observer)


def remove_registration_observer(observer: Callable[[Any, Callable[..., Any]], Any]) -> None:
    if observer in _REGISTRATION_OBSERVERS:
        _REGISTRATION_OBSERVERS.remove(observer)


_od_setitem = OrderedDict.__setitem__
_od_delitem = OrderedDict.__delitem__


class HookRegistry(OrderedDict):
    """Ordered hooks of one kind: ``id -> fn`` (PyTorch's OrderedDict view) plus flags.

    `add` is the only way hookgrad code registers a hook, so "create handle, store, return
    handle" is written once.
    """

    # ``flags`` is created on first read (`__getattr__`), and there is no ``__init__`` of our
    # own: most registries (one per hooked tensor, made on the forward path) never hold a
    # flagged hook.
    flags: OrderedDict[int, HookEntry]
    # Bumped by every mutation (adding, removing, reordering hooks): compiled code guards on
    # ``(registry, _version)`` in O(1) and compares hooks only when it moved (compile.md §6.5).
    _version = 0

    def __setitem__(self, key: Any, value: Any) -> None:
        _od_setitem(self, key, value)
        self._version += 1

    def __delitem__(self, key: Any) -> None:
        _od_delitem(self, key)
        self._version += 1

    def pop(self, *args: Any) -> Any:
        value = OrderedDict.pop(self, *args)
        self._version += 1
        return value

    def popitem(self, last: bool = True) -> tuple:
        item = OrderedDict.popitem(self, last)
        self._version += 1
        return item

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def move_to_end(self, key: Any, last: bool = True) -> None:
        OrderedDict.move_to_end(self, key, last)
        self._version += 1

    def __getattr__(self, name: str) -> Any:
        if name == "flags":
            flags = self.flags = OrderedDict()
            return flags
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def add_plain(self, fn: Callable[..., Any]) -> RemovableHandle:
        """`add` without options: the path of ``Tensor.register_hook`` (no keyword parsing)."""
        for observe in _REGISTRATION_OBSERVERS:
            fn = observe(self, fn)
        # ``RemovableHandle(self)`` spelled out: the same fields, without the call machinery
        # (one handle per tensor hook, registered on the forward path).
        handle = _new(RemovableHandle)
        handle.hooks_dict_ref = _weakref(self)
        hid = handle.id = RemovableHandle.next_id
        RemovableHandle.next_id = hid + 1
        handle.extra_dict_ref = ()
        _od_setitem(self, hid, fn)  # `__setitem__` inline: no Python frame per tensor hook
        self._version += 1
        return handle

    def add(
        self,
        fn: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Store `fn` and return its handle; ``prepend`` puts it first."""
        for observe in _REGISTRATION_OBSERVERS:  # empty unless a tool such as HookTrace is on
            fn = observe(self, fn)
        if with_kwargs or always_call:
            handle = RemovableHandle(self, extra_dict=self.flags)
            self.flags[handle.id] = HookEntry(fn, with_kwargs, always_call)
        else:  # no side-table entry to clean up: skip the second weak reference
            handle = RemovableHandle(self)
        _od_setitem(self, handle.id, fn)  # `__setitem__` inline (module hooks: per forward)
        self._version += 1
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

    def clear(self) -> None:
        """Remove every hook (and its flags)."""
        super().clear()
        self.flags.clear()
        self._version += 1

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


class HookInfo(NamedTuple):
    """One registered hook, as listed by `hooks_info`."""

    kind: str  #: the hook table: ``"backward_hooks"``, ``"pre_hooks"``, ``"forward_hooks"``...
    id: int  #: the id of the `RemovableHandle` that was returned for it
    fn: Callable[..., Any]
    with_kwargs: bool = False
    always_call: bool = False


def _registries(obj: Any) -> Iterator[tuple[str, HookRegistry]]:
    """Every `HookRegistry` reachable from `obj`, with its kind (attribute name sans ``_``)."""
    seen: set[int] = set()
    names: list[str] = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, HookRegistry) and id(value) not in seen:
            seen.add(id(value))
            yield name.lstrip("_"), value
    observed = getattr(obj, "_observed_hook_registries", None)  # a Node: its tensors' hooks
    if callable(observed):
        for kind, registry in observed():
            if id(registry) not in seen:
                seen.add(id(registry))
                yield kind, registry


def hooks_info(obj: Any) -> list[HookInfo]:
    """List every hook registered on a tensor, a graph node, a module or an optimizer.

    hookgrad extension (PyTorch has no public equivalent). Each entry gives the hook table it
    lives in (``kind``: for a tensor ``"backward_hooks"`` and ``"post_accumulate_grad_hooks"``;
    for a node ``"pre_hooks"``, ``"post_hooks"``, plus ``"tensor_hooks[<output_nr>]"`` and (for
    an AccumulateGrad) ``"post_accumulate_grad_hooks"`` for the tensor hooks that fire at that
    node; for a module ``"forward_hooks"``, ... as in PyTorch's
    attribute names), the handle id and the function, in call order within each table.
    Global module hooks and ``retain_grad`` are not listed (they are not stored on `obj`).

    Args:
        obj: Any object that keeps its hooks in `HookRegistry` attributes.

    Returns:
        A list of `HookInfo`.

    Example:
        >>> import hookgrad
        >>> a = hookgrad.ones(2, requires_grad=True)
        >>> h = a.register_hook(lambda g: None)
        >>> [(i.kind, i.id == h.id) for i in hookgrad.utils.hooks_info(a)]
        [('backward_hooks', True)]

    Mirrors: nothing in PyTorch (hookgrad extension).
    """
    out = []
    for kind, registry in _registries(obj):
        flags = registry.flags
        for hid, fn in registry.items():
            entry = flags.get(hid)
            out.append(HookInfo(kind, hid, fn, bool(entry and entry.with_kwargs),
                                bool(entry and entry.always_call)))
    return out


def remove_all_hooks(obj: Any) -> int:
    """Remove every hook `hooks_info` lists for `obj`; returns how many were removed.

    hookgrad extension. Handles of removed hooks stay valid (removing again is a no-op). For a
    node this includes the tensor hooks of its outputs, since those fire at the node.

    Args:
        obj: A tensor, node, module or optimizer.

    Returns:
        The number of hooks removed.

    Mirrors: nothing in PyTorch (hookgrad extension).
    """
    removed = 0
    for _, registry in list(_registries(obj)):
        removed += len(registry)
        registry.clear()
    return removed


def unserializable_hook(f: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a hook as unserializable (kept for API parity).

    Mirrors: ``torch.utils.hooks.unserializable_hook``.
    """
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def warn_if_has_hooks(tensor: Any) -> None:
    """Warn for each backward hook on `tensor` that pickling will drop.

    Hooks decorated with `unserializable_hook` are expected to be dropped and stay silent.

    Mirrors: ``torch.utils.hooks.warn_if_has_hooks``.
    """
    hooks = tensor._backward_hooks
    if hooks:
        for key in hooks:
            hook = hooks[key]
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If "
                              "this is expected, you can decorate the function with "
                              "@torch.utils.hooks.unserializable_hook to suppress this warning",
                              stacklevel=2)
