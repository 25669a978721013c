"""``collate`` with a type -> function map, the form tools extend for their own sample types.

Mirrors: ``torch.utils.data._utils.collate``. ``collate(batch, collate_fn_map=...)`` looks the
first element's type up in the map (exact type, then ``isinstance`` in insertion order), else
recurses into mappings, namedtuples and sequences. ``default_collate`` and ``default_convert``
are hookgrad's (`hookgrad.utils.data._collate`), which follow the same rules with the default
map.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._dtypes import float64
from hookgrad._functional.creation import as_tensor, tensor
from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor
from hookgrad.utils.data._collate import (
    _rebuild_mapping,
    _rebuild_sequence,
    default_collate,
    default_convert,
)

__all__ = ["collate", "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn", "default_collate_fn_map",
           "default_collate", "default_convert", "np_str_obj_array_pattern",
           "default_collate_err_msg_format"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def collate(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    """Collate `batch` with `collate_fn_map`. Mirrors: ``torch.utils.data._utils.collate.collate``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch],
                                                  collate_fn_map=collate_fn_map) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        cols = [collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return cols if isinstance(elem, tuple) else _rebuild_sequence(elem, cols)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    """Stack tensors along a new dim 0. Mirrors: ``...collate.collate_tensor_fn``."""
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    """Mirrors: ``...collate.collate_numpy_array_fn``."""
    if np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    """Mirrors: ``...collate.collate_numpy_scalar_fn``."""
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    """Mirrors: ``...collate.collate_float_fn``."""
    return tensor(batch, dtype=float64)


def collate_int_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Tensor:
    """Mirrors: ``...collate.collate_int_fn``."""
    return tensor(batch)


def collate_str_fn(batch: Any, *, collate_fn_map: dict | None = None) -> Any:
    """Mirrors: ``...collate.collate_str_fn``."""
    return batch


default_collate_fn_map: dict[Any, Callable] = {
    Tensor: collate_tensor_fn, np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn, float: collate_float_fn,
    int: collate_int_fn, str: collate_str_fn, bytes: collate_str_fn,
}
