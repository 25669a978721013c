"""Sorted-search and membership functions: ``searchsorted``, ``bucketize``, ``isin``,
``unravel_index`` and the deprecated inclusive ``range``.

Mirrors: ``torch.searchsorted``, ``torch.bucketize``, ``torch.isin``, ``torch.unravel_index``,
``torch.range``. Results are integer indices or masks, so none is differentiable.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from hookgrad._dtypes import check_kernel, get_default_dtype, int32, int64
from hookgrad._functional.creation import tensor
from hookgrad._tensor import Tensor


def _arr(x: Any) -> np.ndarray:
    if not isinstance(x, Tensor):
        return np.asarray(x)
    x = x.detach()
    # bfloat16 values compare exactly as float32 (NumPy has no bfloat16 of its own)
    return (x.float() if str(x.dtype) == "torch.bfloat16" else x).numpy()


def _index_dtype(out_int32: bool) -> Any:
    return np.int32 if out_int32 else np.int64


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: Any = None, sorter: Any = None,
                 out: Any = None) -> Tensor:
    """Insertion indices along the last dim. Mirrors: ``torch.searchsorted``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if _batched(sorted_sequence, input, sorter):
        return _search_by_counting(sorted_sequence, input, sorter, right, out_int32)
    seq, vals = _arr(sorted_sequence), _arr(input)
    if sorter is not None:
        seq = np.take_along_axis(seq, _arr(sorter), -1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        res = np.searchsorted(seq, vals, side=how)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                               "the first N-1 dimensions of boundaries tensor and input value "
                               "tensor must match")
        flat_s, flat_v = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        res = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(flat_s, flat_v)])
        res = res.reshape(vals.shape)
    return Tensor._make(np.asarray(res, dtype=_index_dtype(out_int32)))


def _batched(*xs: Any) -> bool:
    """Whether a value is a vmap BatchedTensor (its values cannot be read on the host)."""
    return any(getattr(x, "_bt_value", None) is not None for x in xs)


def _search_by_counting(seq: Tensor, vals: Any, sorter: Any, right: bool,
                        out_int32: bool) -> Tensor:
    """searchsorted under vmap, by tensor ops that batch: the insertion index of v in a sorted
    row is the count of the row's entries below v (left) or at most v (right)."""
    if sorter is not None:
        seq = seq.take_along_dim(sorter, -1)  # type: ignore[attr-defined]
    if not isinstance(vals, Tensor):
        vals = tensor(vals, dtype=seq.dtype)
    if seq.dim() > 1 and tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           "must match")
    rows = seq.unsqueeze(-2) if seq.dim() > 1 else seq  # type: ignore[attr-defined]
    v = vals.unsqueeze(-1)  # type: ignore[attr-defined]
    below = (rows <= v) if right else (rows < v)
    return below.sum(-1).to(int32 if out_int32 else int64)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Any = None) -> Tensor:
    """Bucket indices of `input` in 1-D `boundaries`. Mirrors: ``torch.bucketize``."""
    nd = boundaries.dim() if isinstance(boundaries, Tensor) else np.ndim(boundaries)
    if nd != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({nd})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Membership mask of `elements` in `test_elements`. Mirrors: ``torch.isin``."""
    if isinstance(elements, Tensor):
        check_kernel("isin", elements._data.dtype)
    res = np.isin(_arr(elements), _arr(test_elements), invert=invert)
    return Tensor._make(np.asarray(res, dtype=np.bool_))


def unravel_index(indices: Tensor, shape: Any) -> tuple:
    """Flat indices as a tuple of coordinate tensors. Mirrors: ``torch.unravel_index``."""
    if isinstance(indices, Tensor) and indices.is_floating_point():
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{str(indices.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    idx = _arr(indices)
    n = int(np.prod(shape))
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise RuntimeError("index out of bounds")
    coords = np.unravel_index(np.where(idx < 0, idx + n, idx), shape)
    return tuple(Tensor._make(np.asarray(c, dtype=np.int64)) for c in coords)


def range(start: float = 0, end: Any = None, step: float = 1, *, out: Any = None,  # noqa: A001
          dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated inclusive range ``[start, end]``. Mirrors: ``torch.range``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    count = int(np.floor((float(end) - float(start)) / float(step))) + 1
    data = float(start) + float(step) * np.arange(max(count, 0), dtype=np.float64)
    return tensor(data, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


FUNCTIONS = {"searchsorted": searchsorted, "bucketize": bucketize, "isin": isin,
             "unravel_index": unravel_index, "range": range}
