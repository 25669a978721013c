"""Shared helpers of the serialization tests: byte round trips and tensor facts."""

from __future__ import annotations

import io
from typing import Any

import numpy as np


def saved(lib: Any, obj: Any, **kwargs: Any) -> bytes:
    """The bytes `lib.save` writes for `obj`."""
    buf = io.BytesIO()
    lib.save(obj, buf, **kwargs)
    return buf.getvalue()


def loaded(lib: Any, data: bytes, **kwargs: Any) -> Any:
    """`lib.load` of `data`."""
    return lib.load(io.BytesIO(data), **kwargs)


def facts(t: Any) -> tuple:
    """What must survive a round trip: class name, dtype, shape, strides, offset, values."""
    arr = np.asarray(t.detach().float().numpy() if str(t.dtype) == "torch.bfloat16"
                     else t.detach().numpy())
    return (type(t).__name__, str(t.dtype), tuple(t.shape), tuple(t.stride()),
            t.storage_offset(), bool(t.requires_grad), arr.tolist())


def sharing(ts: list) -> list:
    """Which tensors share a storage with which (pairs of indices)."""
    ptrs = [t.untyped_storage().data_ptr() for t in ts]
    return [(i, j) for i in range(len(ts)) for j in range(i + 1, len(ts)) if ptrs[i] == ptrs[j]]


def walk(x: Any) -> Any:
    """Containers with tensors replaced by `facts` (dict types kept by name)."""
    if hasattr(x, "requires_grad") and hasattr(x, "stride"):
        return facts(x)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [walk(v) for v in x])
    if isinstance(x, dict):
        return (type(x).__name__, [(k, walk(v)) for k, v in x.items()])
    return x
