"""Creation from Python objects and buffers, strided empties, and ``gradient``.

Mirrors: ``torch.asarray``, ``torch.frombuffer``, ``torch.empty_strided``,
``torch.empty_permuted`` and ``torch.gradient`` (central differences in the interior, one-sided
of order 1 or 2 at the edges, uniform or coordinate spacing; written with slicing and
arithmetic, so differentiable as PyTorch's composite is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.shape as S
from hookgrad._dtypes import from_numpy_dtype, get_default_dtype, int64
from hookgrad._storage import TypedStorage, _StorageBase
from hookgrad._ops._shapes import normalize_dim
from hookgrad._runtime import fill_uninitialized_
from hookgrad._tensor import Tensor

__all__ = ["asarray", "frombuffer", "empty_strided", "empty_permuted", "gradient"]


def _np_dtype(dtype: Any) -> np.dtype:
    return np.dtype(dtype.np)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """A tensor sharing `obj`'s memory when possible. Mirrors: ``torch.asarray``."""
    if isinstance(obj, Tensor):
        out = obj if dtype is None else obj.to(dtype)
        if copy and out is obj:
            out = obj.clone()
    elif isinstance(obj, _StorageBase):
        out = _from_storage(obj, dtype, copy)
    elif isinstance(obj, np.ndarray):
        if copy is False and dtype is not None and _np_dtype(dtype) != obj.dtype:
            raise ValueError(f"can't alias tensor with dtype '{_scalar(obj.dtype)}' into dtype "
                             f"'{_scalar(_np_dtype(dtype))}'.")
        out = C.from_numpy(obj.copy() if copy else obj)
        out = out if dtype is None else out.to(dtype)
    else:
        out = C.tensor(obj, dtype=dtype)
    if requires_grad:
        if out is obj:
            out = obj.detach()
        out.requires_grad_(True)
    return out


def _from_storage(store: _StorageBase, dtype: Any, copy: bool | None) -> Tensor:
    """The storage's bytes as a 1-d tensor of `dtype` (a typed storage's own dtype by default,
    int64 for untyped bytes, as PyTorch), sharing the memory. ``copy=False`` raises PyTorch's
    ValueError; ``copy=True`` copies (PyTorch 2.13 aliases the storage anyway: a departure)."""
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if dtype is None:
        dtype = store.dtype if isinstance(store, TypedStorage) else int64
    raw = store._array.reshape(-1, order="A").view(np.uint8)
    data = raw.view(_np_dtype(dtype))
    if copy:
        return C.from_numpy(data.copy())
    out = Tensor._make(data)
    out._storage_array = store._array  # NOTE [Storage arrays]: one storage with the source
    return out


def _scalar(dt: np.dtype) -> str:
    return from_numpy_dtype(dt).scalar_type


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over a Python buffer's bytes (shared). Mirrors: ``torch.frombuffer``."""
    npdt = _np_dtype(dtype)
    length = memoryview(buffer).nbytes
    item = npdt.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % item:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    arr = np.frombuffer(buffer, dtype=npdt, count=count, offset=offset)
    out = C.from_numpy(arr)
    return out.requires_grad_(True) if requires_grad else out


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """Uninitialised (here: zeroed) tensor with the given strides. Mirrors: ``torch.empty_strided``."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    need = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    store = C.zeros(need, dtype=dtype)
    fill_uninitialized_(store._data)
    out = store.as_strided(size, stride).detach()
    return out.requires_grad_(True) if requires_grad else out


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """Tensor of `size` laid out in memory in the order `physical_layout`.

    Mirrors: ``torch.empty_permuted``."""
    size, perm = tuple(int(s) for s in size), tuple(int(p) for p in physical_layout)
    if len(size) != len(perm):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(perm)}")
    if sorted(perm) != list(range(len(size))):
        raise RuntimeError("Dimension out of range or repeated in physical_layout")
    stride, acc = [0] * len(size), 1
    for d in reversed(perm):
        stride[d] = acc
        acc *= size[d]
    return empty_strided(size, stride, dtype=dtype, requires_grad=requires_grad)


def _dims_and_spacing(input: Tensor, spacing: Any, dim: Any) -> tuple[list[int], list]:
    nd = input.dim()
    dims = list(range(nd)) if dim is None else (
        [normalize_dim(int(dim), nd)] if isinstance(dim, int) else
        [normalize_dim(int(d), nd) for d in dim])
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            what = ("since dim argument was not given" if dim is None else
                    "since dim argument was given")
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {nd}', {what}, but got a list of length "
                f"{len(spacing)}")
        spaces = list(spacing)
    else:
        spaces = [spacing] * len(dims)
    return dims, spaces


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple:
    """Estimated derivative along each of `dim`. Mirrors: ``torch.gradient``."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, spaces = _dims_and_spacing(input, spacing, dim)
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    out = []
    for d, h in zip(dims, spaces):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        if isinstance(h, Tensor):
            out.append(_nonuniform(x, d, h.to(x.dtype), edge_order))
        else:
            out.append(_uniform(x, d, float(h), edge_order))
    return tuple(out)


def _sl(x: Tensor, d: int, start: int, length: int) -> Tensor:
    return x.narrow(d, start if start >= 0 else x.shape[d] + start, length)


def _uniform(x: Tensor, d: int, h: float, order: int) -> Tensor:
    n = x.shape[d]
    inner = (_sl(x, d, 2, n - 2) - _sl(x, d, 0, n - 2)) / (2 * h)
    if order == 1:
        first = (_sl(x, d, 1, 1) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1, 1) - _sl(x, d, -2, 1)) / h
    else:
        first = (-1.5 * _sl(x, d, 0, 1) + 2 * _sl(x, d, 1, 1) - 0.5 * _sl(x, d, 2, 1)) / h
        last = (0.5 * _sl(x, d, -3, 1) - 2 * _sl(x, d, -2, 1) + 1.5 * _sl(x, d, -1, 1)) / h
    return S.cat([first, inner, last], d)


def _along(v: Tensor, d: int, nd: int) -> Tensor:
    shape = [1] * nd
    shape[d] = -1
    return v.reshape(shape)


def _nonuniform(x: Tensor, d: int, coords: Tensor, order: int) -> Tensor:
    n, nd = x.shape[d], x.dim()
    dx = coords[1:] - coords[:-1]
    a_, b_ = _along(dx[:-1], d, nd), _along(dx[1:], d, nd)  # left and right steps
    inner = (-b_ / (a_ * (a_ + b_)) * _sl(x, d, 0, n - 2)
             + (b_ - a_) / (a_ * b_) * _sl(x, d, 1, n - 2)
             + a_ / (b_ * (a_ + b_)) * _sl(x, d, 2, n - 2))
    if order == 1:
        first = (_sl(x, d, 1, 1) - _sl(x, d, 0, 1)) / _along(dx[:1], d, nd)
        last = (_sl(x, d, -1, 1) - _sl(x, d, -2, 1)) / _along(dx[-1:], d, nd)
    else:
        h1, h2 = _along(dx[:1], d, nd), _along(dx[1:2], d, nd)
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * _sl(x, d, 0, 1)
                 + (h1 + h2) / (h1 * h2) * _sl(x, d, 1, 1)
                 - h1 / (h2 * (h1 + h2)) * _sl(x, d, 2, 1))
        g1, g2 = _along(dx[-2:-1], d, nd), _along(dx[-1:], d, nd)
        last = (g2 / (g1 * (g1 + g2)) * _sl(x, d, -3, 1)
                - (g1 + g2) / (g1 * g2) * _sl(x, d, -2, 1)
                + (2 * g2 + g1) / (g2 * (g1 + g2)) * _sl(x, d, -1, 1))
    return S.cat([first, inner, last], d)

