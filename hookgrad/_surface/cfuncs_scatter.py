"""``scatter_reduce``, ``index_reduce`` and ``put`` with PyTorch's argument checks.

Mirrors: ``torch.scatter_reduce``, ``torch.index_reduce``, ``torch.put`` and the Tensor methods
``scatter_reduce(_)``, ``index_reduce(_)``, ``put(_)``. The primitives live in
``hookgrad._ops.scatter_reduce``.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad import _backend
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional import shape as _shape
from hookgrad._functional._gather import _scatter_checks
from hookgrad._ops import scatter_reduce as _sr
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._surface.install import _type_name
from hookgrad._tensor import Tensor

__all__ = ["scatter_reduce", "index_reduce", "put"]


def _sr_args(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
             include_self: bool) -> tuple:
    d = normalize_dim(int(dim), self._data.ndim)
    if _sr.ALIASES.get(reduce, reduce) not in _sr.REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError("scatter_reduce(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    _scatter_checks(self, d, index, src, "scatter")
    if _sr.ALIASES.get(reduce, reduce) == "mean" and self._data.dtype.kind == "b":
        raise NotImplementedError(
            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")
    return (self, index, src), {"dim": d, "reduce": reduce, "include_self": bool(include_self)}


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True, out: Any = None) -> Tensor:
    """Reduce `src` into a copy of `input` at `index` along `dim`. Mirrors: ``torch.scatter_reduce``."""
    inputs, params = _sr_args(input, dim, index, src, reduce, include_self)
    return _out(bind(P["scatter_reduce"], inputs, params), out)


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """Mirrors: ``torch.Tensor.scatter_reduce_``."""
    _shape.check_writable(self)
    inputs, params = _sr_args(self, dim, index, src, reduce, include_self)
    return bind_inplace(P["scatter_reduce"], self, inputs, params)


WARNED = []


def _ir_args(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
             include_self: bool) -> tuple:
    if not WARNED:  # PyTorch's TORCH_WARN_ONCE: once per process
        WARNED.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = normalize_dim(int(dim), self._data.ndim)
    if index._data.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {_type_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_type_name(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_type_name(self.dtype)}) and source "
                           f"({_type_name(source.dtype)}) must have the same scalar type")
    s_shape, x_shape = tuple(source.shape), tuple(self.shape)
    n = index._data.size
    if d < len(s_shape) and n != s_shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({s_shape[d]}), for dim: {d}")
    if len(s_shape) != len(x_shape) or any(
            a != b for k, (a, b) in enumerate(zip(s_shape, x_shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x_shape)} "
                           f"source.shape = {list(s_shape)}")
    size = x_shape[d] if x_shape else 1
    arr = _backend.to_numpy(index._data) if _backend.has_data(index._data) else None
    if arr is not None and arr.size and ((arr < 0) | (arr >= size)).any():  # (meta: no values)  # negative ones too, as PyTorch
        raise IndexError("index out of range in self")
    if self._data.dtype.kind == "b" and self._data.ndim <= 1:
        # ATen's kernel for one dim ("index_func_") dispatches on every type but bool; the
        # one for more dims takes bool too, but its mean divides with div_floor
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    if self._data.dtype.kind == "b" and not include_self:  # its initial fill has no bool
        raise NotImplementedError(
            "\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'")
    if self._data.dtype.kind == "b" and reduce == "mean":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    return (self, index, source), {"dim": d, "reduce": reduce,
                                   "include_self": bool(include_self)}


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out: Any = None) -> Tensor:
    """Reduce rows of `source` into `input` at `index`. Mirrors: ``torch.index_reduce``."""
    inputs, params = _ir_args(input, dim, index, source, reduce, include_self)
    return _out(bind(P["index_reduce"], inputs, params), out)


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """Mirrors: ``torch.Tensor.index_reduce_``."""
    _shape.check_writable(self)
    inputs, params = _ir_args(self, dim, index, source, reduce, include_self)
    return bind_inplace(P["index_reduce"], self, inputs, params)


def _put_args(self: Tensor, index: Tensor, source: Tensor) -> tuple:
    if index._data.dtype.kind not in "iu" or index._data.dtype.itemsize != 8:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_type_name(self.dtype)} and source.dtype = "
                           f"{_type_name(source.dtype)}")
    if source._data.size != index._data.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {index._data.size}")
    n = self._data.size
    if not _backend.has_data(index._data):
        return index  # a meta index has no values to check
    arr = _backend.to_numpy(index._data)
    bad = arr[(arr < -n) | (arr >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{n} elements.")
    if arr.size and (arr < 0).any():  # only negative ones: under vmap `arr` is sample 0's,
        index = index + (index < 0).to(index.dtype) * n  # another's bad index must stay bad
    return index


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Write `source` at flat positions `index`. Mirrors: ``torch.put``."""
    index = _put_args(input, index, source)
    return bind(P["put"], (input, index, source), {"accumulate": bool(accumulate)})


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Mirrors: ``torch.Tensor.put_``."""
    _shape.check_writable(self)
    index = _put_args(self, index, source)
    return bind_inplace(P["put"], self, (self, index, source), {"accumulate": bool(accumulate)})


def _out(res: Tensor, out: Any) -> Tensor:
    if out is None:
        return res
    return out.copy_(res)


METHODS = {"scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
           "index_reduce": index_reduce, "index_reduce_": index_reduce_, "put": put,
           "put_": put_}
