"""Default batch assembly. Mirrors: ``torch.utils.data._utils.collate``."""

from __future__ import annotations

import collections
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._dtypes import float64
from hookgrad._functional.creation import as_tensor, tensor
from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_ERR_FORMAT = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays/scalars into tensors inside any container; leave the rest alone.

    Used as the collate function when automatic batching is off (``batch_size=None``).

    Mirrors: ``torch.utils.data.default_convert``.
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(elem: Any, values: dict) -> Any:
    """A mapping of `elem`'s type holding `values` (plain dict if the type refuses)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem: Any, values: list) -> Any:
    """A sequence of `elem`'s type holding `values` (plain list if the type refuses)."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _collate_tensor(batch: list) -> Tensor:
    return stack(batch, 0)


def _collate_ndarray(batch: list) -> Any:
    if _np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERR_FORMAT.format(batch[0].dtype))
    return default_collate([as_tensor(b) for b in batch])


_COLLATE_FNS: dict[Any, Callable[[list], Any]] = {
    Tensor: _collate_tensor,
    np.ndarray: _collate_ndarray,
    (np.bool_, np.number, np.object_): lambda batch: as_tensor(np.asarray(batch)),
    float: lambda batch: tensor(batch, dtype=float64),
    int: lambda batch: tensor(batch),
    str: lambda batch: batch,
    bytes: lambda batch: batch,
}


def default_collate(batch: list) -> Any:
    """Merge a list of samples into a batch, recursively.

    Tensors are stacked along a new dimension 0; NumPy arrays and scalars become tensors;
    Python floats become a float64 tensor, ints an int64 tensor (bools a bool tensor); strings
    stay a list; mappings, namedtuples and sequences are collated field by field (tuples give
    lists, as torch does).

    Args:
        batch: the samples of one batch.

    Returns:
        The collated batch.

    Raises:
        TypeError: an element type it cannot collate.
        RuntimeError: sequences of different lengths.

    Example:
        >>> import hookgrad
        >>> out = default_collate([(hookgrad.zeros(2), 1), (hookgrad.ones(2), 2)])
        >>> out[0].shape, out[1].tolist()
        (torch.Size([2, 2]), [1, 2])

    Mirrors: ``torch.utils.data.default_collate``.
    """
    elem = batch[0]
    elem_type = type(elem)
    fn = _COLLATE_FNS.get(elem_type)
    if fn is None:
        fn = next((f for t, f in _COLLATE_FNS.items() if isinstance(elem, t)), None)
    if fn is not None:
        return fn(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch])
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(default_collate(list(samples)) for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(samples) for samples in zip(*batch, strict=False)]
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _rebuild_sequence(elem, [default_collate(samples) for samples in transposed])
    raise TypeError(_ERR_FORMAT.format(elem_type))
