"""`swap_tensors`: exchange the contents of two tensor objects, keeping their identities."""

from __future__ import annotations

import copyreg
import weakref
from typing import Any

__all__ = ["swap_tensors"]


def swap_tensors(t1: Any, t2: Any) -> None:
    """Make `t1` hold what `t2` held and vice versa (class, attributes, data, autograd state).

    Both objects keep their identity, so references held elsewhere (an optimizer's param list,
    a module attribute) now see the other content.

    Raises:
        RuntimeError: a tensor is weakly referenced, or the two classes' slots differ.

    Example:
        >>> import hookgrad as torch
        >>> a, b = torch.zeros(2), torch.ones(3)
        >>> torch.utils.swap_tensors(a, b)
        >>> a.tolist(), b.tolist()
        ([1.0, 1.0, 1.0], [0.0, 0.0])

    Mirrors: ``torch.utils.swap_tensors`` (PyTorch also checks C++ use counts; hookgrad has
    none to check).
    """
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(t1.__class__))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(t2.__class__)):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")

    def swap_attr(name: str) -> None:
        tmp = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, tmp)

    swap_attr("__class__")
    swap_attr("__dict__")
    for slot in _all_slots(type(t1)) - {"__dict__", "__weakref__"}:
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        if has1 and has2:
            swap_attr(slot)
        elif has1:
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif has2:
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)


def _all_slots(cls: type) -> set:
    """Every ``__slots__`` entry along the MRO (``copyreg`` leaves out the dunder ones)."""
    out: set = set()
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        out.update((slots,) if isinstance(slots, str) else slots)
    return out
