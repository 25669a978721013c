"""gather/scatter, index_select/index_add, take, take_along_dim, masked_select.

Mirrors the ``torch`` functions of the same names; re-exported by `hookgrad._functional.indexing`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import check_kernel
from hookgrad import _backend
from hookgrad._ops._checks import tensor_arguments
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional import shape as _shape
from hookgrad._functional._common import to_tensor_like
from hookgrad._ops._shapes import broadcast_shapes, normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor


def _check_index(name: str, index: Tensor) -> None:
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_bounds(index: Any, size: int, dim: int, negative_ok: bool = False) -> None:
    if not _backend.has_data(index):  # a meta index: no values to check
        return
    arr = _backend.to_numpy(index)
    if arr.size == 0:
        return
    low = -size if negative_ok else 0
    bad = arr[(arr < low) | (arr >= size)]
    if bad.size:
        raise RuntimeError(
            f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with size {size}"
        )


def _nd(shape: tuple) -> tuple:
    return shape if shape else (1,)


# ---------------------------------------------------------------------------- gather / scatter
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.gather``."""
    _check_index("gather", index)
    d = normalize_dim(int(dim), input._data.ndim)
    _check_gather_shapes(input, index, d)
    _check_bounds(index._data, _nd(input._data.shape)[d], d)
    return bind(P["gather"], (input, index), {"dim": d, "sparse_grad": sparse_grad})


def _check_gather_shapes(input: Tensor, index: Tensor, d: int) -> None:
    if max(index._data.ndim, 1) != max(input._data.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    si, ss = _nd(index._data.shape), _nd(input._data.shape)
    for k, (a, b) in enumerate(zip(si, ss, strict=False)):
        if k != d and a > b:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(si)} to be no larger "
                f"than self {list(ss)} apart from dimension {d}"
            )


def _scatter_checks(self: Tensor, d: int, index: Tensor, src: Tensor | None, name: str) -> None:
    _check_index(name, index)
    if max(index._data.ndim, 1) != max(self._data.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    si, ss = _nd(index._data.shape), _nd(self._data.shape)
    too_big = any(k != d and a > b for k, (a, b) in enumerate(zip(si, ss, strict=False)))
    if src is not None:
        if src._data.dtype != self._data.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        sr = _nd(src._data.shape)
        too_big = too_big or any(a > b for a, b in zip(si, sr, strict=False))
        if too_big:
            raise RuntimeError(
                f"Expected index {list(si)} to be no larger than self {list(ss)} apart from "
                f"dimension {d} and to be no larger size than src {list(sr)}"
            )
    elif too_big:
        raise RuntimeError(
            f"Expected index {list(si)} to be no larger than self {list(ss)} apart from "
            f"dimension {d}"
        )
    _check_bounds(index._data, ss[d], d)


def _scatter_call(
    self: Tensor, dim: int, index: Tensor, src: Any, value: Any, reduce: Any, add: bool = False
) -> tuple:
    if reduce is not None:
        raise NotImplementedError("hookgrad: scatter(reduce=...) is not supported")
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    d = normalize_dim(int(dim), self._data.ndim)
    if src is not None and not isinstance(src, Tensor):
        value, src = src, None
    if src is None:
        if add:
            raise TypeError("scatter_add(): argument 'src' must be Tensor")
        _scatter_checks(self, d, index, None, "scatter")
        return P["scatter_value"], (self, index), {"dim": d, "value": value}
    _scatter_checks(self, d, index, src, "scatter_add" if add else "scatter")
    return P["scatter_add" if add else "scatter"], (self, index, src), {"dim": d}


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: Any = None,
) -> Tensor:
    """Mirrors: ``torch.scatter`` (tensor `src`: ``ScatterBackward0``; scalar: ``...1``)."""
    prim, inputs, params = _scatter_call(input, dim, index, src, value, reduce)
    return bind(prim, inputs, params)


def scatter_(
    self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Tensor:
    """Mirrors: ``torch.Tensor.scatter_``."""
    _shape.check_writable(self)
    prim, inputs, params = _scatter_call(self, dim, index, src, value, reduce)
    return bind_inplace(prim, self, inputs, params)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Mirrors: ``torch.scatter_add``."""
    prim, inputs, params = _scatter_call(input, dim, index, src, None, None, add=True)
    return bind(prim, inputs, params)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.scatter_add_``."""
    _shape.check_writable(self)
    prim, inputs, params = _scatter_call(self, dim, index, src, None, None, add=True)
    return bind_inplace(prim, self, inputs, params)


# ---------------------------------------------------------------------------- index_select & co
@tensor_arguments
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Mirrors: ``torch.index_select``."""
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index("index_select", index)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError("index_select() received an invalid combination of arguments - got "
                        f"dim={type(dim).__name__}, but expected int")
    d = normalize_dim(dim, input._data.ndim)
    if input._data.ndim == 0 and index._data.size != 1:
        raise RuntimeError(
            "index_select(): Index to scalar can have only 1 value, got "
            f"{index._data.size} value(s)"
        )
    size = _nd(input._data.shape)[d]
    arr = _backend.to_numpy(index._data) if _backend.has_data(index._data) else np.zeros(0)
    bad = arr[(arr < 0) | (arr >= size)]  # (a meta index has no values to check)
    if bad.size and (input._data.ndim <= 1 or d == 0):  # PyTorch's kernels for these check
        raise IndexError("index out of range in self")  # with their own error (probed)
    if bad.size:
        raise RuntimeError(
            f"INDICES element is out of DATA bounds, id={int(bad.reshape(-1)[0])} axis_dim={size}"
        )
    if input._data.ndim <= 1:  # PyTorch's 1-D path has no wide unsigned kernel
        check_kernel("index_select_1d", input._data.dtype)
    return bind(P["index_select"], (input, index), {"dim": d})


def _index_add_call(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any) -> tuple:
    _check_index("index_add", index)
    d = normalize_dim(int(dim), self._data.ndim)
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_word(self)}) and source ({_word(source)}) "
            "must have the same scalar type"
        )
    n = index._data.size
    src_shape = _nd(source._data.shape)
    if self._data.ndim and src_shape[d] != n:
        raise RuntimeError(
            f"index_add_(): Number of indices ({n}) should be equal to "
            f"source.size(dim): ({src_shape[d]}), for dim: {d}"
        )
    ss = self._data.shape
    if self._data.ndim and any(
        k != d and a != b for k, (a, b) in enumerate(zip(ss, src_shape, strict=False))
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(ss)} source.shape = "
            f"{list(source._data.shape)}"
        )
    if self._data.ndim <= 1:  # PyTorch's 1-d kernel checks with its own IndexError
        arr = _backend.to_numpy(index._data)
        if arr.size and ((arr < 0) | (arr >= _nd(ss)[d])).any():
            raise IndexError("index out of range in self")
    _check_bounds(index._data, _nd(ss)[d], d)
    return (self, index, source), {"dim": d, "alpha": alpha}


def _word(t: Tensor) -> str:
    return t.type().replace("torch.", "").replace("Tensor", "")


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """Mirrors: ``torch.index_add``."""
    inputs, params = _index_add_call(input, dim, index, source, alpha)
    return bind(P["index_add"], inputs, params)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """Mirrors: ``torch.Tensor.index_add_``."""
    _shape.check_writable(self)
    inputs, params = _index_add_call(self, dim, index, source, alpha)
    return bind_inplace(P["index_add"], self, inputs, params)


def take(input: Tensor, index: Tensor) -> Tensor:
    """Mirrors: ``torch.take`` (indices into the flattened tensor)."""
    _check_index("take", index)
    n = input._data.size
    arr = _backend.to_numpy(index._data)
    bad = arr[(arr < -n) | (arr >= n)]
    if bad.size:
        raise IndexError(
            f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
            f"tensor of {n} elements."
        )
    return bind(P["take"], (input, index))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Mirrors: ``torch.take_along_dim`` (broadcasts, then ``gather``)."""
    if dim is None:
        return gather(_shape.view(input, -1), 0, _shape.view(indices, -1))
    d = normalize_dim(int(dim), input._data.ndim)
    if input._data.ndim != indices._data.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same "
            f"number of dimensions, but got {input._data.ndim} dimensions for "
            f"input, and {indices._data.ndim} dimensions for indices"
        )
    sizes = list(input._data.shape)
    sizes[d] = indices._data.shape[d]
    idx = _shape.broadcast_to(indices, broadcast_shapes(sizes, indices._data.shape))
    isizes = list(indices._data.shape)
    isizes[d] = input._data.shape[d]
    src = _shape.broadcast_to(input, broadcast_shapes(isizes, input._data.shape))
    return gather(src, d, idx)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """Mirrors: ``torch.masked_select``."""
    mask = to_tensor_like(mask, input)
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    broadcast_shapes(mask._data.shape, input._data.shape)  # PyTorch's operand order
    return bind(P["masked_select"], (input, mask))


METHODS = {
    "gather": gather,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "index_select": index_select,
    "index_add": index_add,
    "index_add_": index_add_,
    "take": take,
    "take_along_dim": take_along_dim,
    "masked_select": masked_select,
}
