"""Weak references keyed by object identity. Mirrors: ``torch.utils.weak``.

Tensors define ``__eq__`` elementwise and their hash is their identity, so the standard
``weakref.WeakKeyDictionary`` (which compares keys with ``==``) cannot hold them. These
containers compare keys by ``is`` instead; tools use them to attach metadata to tensors and
modules without keeping them alive (activation loggers, memory trackers, compile caches).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]

WeakRef = weakref.ref


class WeakIdRef(weakref.ref):
    """A weak reference that hashes and compares by the referent's identity.

    Mirrors ``torch.utils.weak.WeakIdRef``. The id is taken eagerly: after the referent dies the
    reference still hashes the same, so it can be found (and removed) in a dict. Two dead
    references are equal only when they are the same object, because a new object may reuse
    a dead one's id.
    """

    __slots__ = ("_id",)

    def __init__(self, key: Any, callback: Any = None) -> None:
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, weakref.ref):
            return NotImplemented
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq


class _WeakHashRef(weakref.ref):
    """A weak reference hashed with the referent's own ``__hash__`` but compared by identity
    (``torch.utils.weak._WeakHashRef``), for keys whose hash is not their id."""

    __slots__ = ("_id",)

    def __init__(self, key: Any, callback: Any = None) -> None:
        self._id = hash(key)
        super().__init__(key, callback)

    __hash__ = WeakIdRef.__hash__
    __eq__ = WeakIdRef.__eq__
    __ne__ = WeakIdRef.__ne__


class WeakIdKeyDictionary(MutableMapping):
    """A mapping whose keys are held weakly and compared by identity.

    Mirrors ``torch.utils.weak.WeakIdKeyDictionary``: an entry disappears when its key is
    collected. ``ref_type`` chooses the reference class (``WeakIdRef`` by default).
    """

    def __init__(self, dict: Any = None, ref_type: type = WeakIdRef) -> None:  # noqa: A002
        self.data: dict[weakref.ref, Any] = {}
        self.ref_type = ref_type
        self_ref = weakref.ref(self)

        def remove(k: weakref.ref) -> None:
            owner = self_ref()
            if owner is not None:
                owner.data.pop(k, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    # -- mapping protocol ------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        return self.data[self.ref_type(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key: Any) -> None:
        del self.data[self.ref_type(key)]

    def __contains__(self, key: object) -> bool:
        try:
            r = self.ref_type(key)
        except TypeError:  # not weakly referenceable, so it cannot be a key
            return False
        return r in self.data

    def __len__(self) -> int:
        return sum(1 for r in list(self.data) if r() is not None)

    def __iter__(self) -> Iterator[Any]:
        # a snapshot: a key collected while the caller iterates is skipped, never an error
        for r in list(self.data):
            obj = r()
            if obj is not None:
                yield obj

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    def items(self) -> Any:
        return _Items(self)

    def values(self) -> Any:
        return [v for _, v in _Items(self)]

    def keyrefs(self) -> list[weakref.ref]:
        """The weak references used as keys (may include dead ones not yet removed)."""
        return list(self.data)

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self.data.get(self.ref_type(key), default)
        except TypeError:
            return default

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def pop(self, key: Any, *args: Any) -> Any:
        return self.data.pop(self.ref_type(key), *args)

    def popitem(self) -> tuple[Any, Any]:
        while True:
            r, value = self.data.popitem()
            obj = r()
            if obj is not None:
                return obj, value

    def update(self, dict: Any = None, **kwargs: Any) -> None:  # noqa: A002
        source = dict.items() if isinstance(dict, Mapping) else (dict or ())
        for k, v in source:
            self[k] = v
        if kwargs:
            self.update(kwargs)

    def copy(self) -> WeakIdKeyDictionary:
        new = type(self)(ref_type=self.ref_type)
        for k, v in self.items():
            new[k] = v
        return new

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> WeakIdKeyDictionary:
        from copy import deepcopy  # noqa: PLC0415 - rarely used

        new = type(self)(ref_type=self.ref_type)
        for k, v in self.items():
            new[k] = deepcopy(v, memo)
        return new

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, Mapping):
            return NotImplemented
        new = self.copy()
        new.update(other)
        return new

    def __ior__(self, other: Any) -> WeakIdKeyDictionary:
        self.update(other)
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}


class _Items:
    """Live (key, value) pairs of a `WeakIdKeyDictionary`, skipping collected keys."""

    def __init__(self, owner: WeakIdKeyDictionary) -> None:
        self._owner = owner

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        for r, v in list(self._owner.data.items()):
            obj = r()
            if obj is not None:
                yield obj, v

    def __len__(self) -> int:
        return len(self._owner)


# PyTorch keeps this name for the common case: tensors as keys.
WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor. Mirrors ``torch.utils.weak.TensorWeakRef``."""

    __slots__ = ("ref",)

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"TensorWeakRef expects a Tensor, got {type(tensor).__name__}")
        self.ref = weakref.ref(tensor)

    def __call__(self) -> Tensor | None:
        return self.ref()
