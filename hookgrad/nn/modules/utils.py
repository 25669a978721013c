"""Argument helpers layers and tools import from ``nn.modules.utils``.

Mirrors: ``torch.nn.modules.utils`` (``_single``, ``_pair``, ``_triple``, ``_quadruple``,
``_ntuple``, ``_reverse_repeat_tuple``, ``consume_prefix_in_state_dict_if_present``).
"""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any, Callable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A parser turning a scalar into an `n`-tuple (iterables pass through as tuples)."""
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple:
    """Reverse `t` and repeat each element `n` times (conv padding for ``F.pad``)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Strip `prefix` from the keys (and metadata keys) of `state_dict`, in place.

    Mirrors: ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``.
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
