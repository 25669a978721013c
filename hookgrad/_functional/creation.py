"""Tensor factories. Mirrors ``torch.tensor``, ``torch.zeros`` ... (CPU; dtype/device kwargs)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import device as _device
from hookgrad._backend import namespace_for
from hookgrad._dtypes import STATE, dtype, from_numpy_dtype, infer_dtype, to_dtype
from hookgrad._tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "empty_like", "arange", "linspace", "eye", "scalar_tensor",
]


def _xp(device: Any) -> Any:
    return namespace_for(_device(device) if device is not None else _device("cpu"))


def _finish(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _unwrap_nested(data: Any) -> Any:
    """Lists of tensors become lists of arrays (``torch.tensor([t1, t2])``)."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Copy `data` into a new leaf tensor. Mirrors: ``torch.tensor``."""
    xp = _xp(device)
    data = _unwrap_nested(data)
    d = to_dtype(dtype) if dtype is not None else infer_dtype(data)
    arr = xp.array(data, dtype=d.np, copy=True)
    return _finish(arr, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Share memory with a NumPy array / tensor when possible. Mirrors: ``torch.as_tensor``."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)  # type: ignore[attr-defined]
    if isinstance(data, np.ndarray) and (dtype is None or to_dtype(dtype).np == data.dtype):
        from_numpy_dtype(data.dtype)
        return Tensor._make(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """Share memory with `ndarray`. Mirrors: ``torch.from_numpy``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    from_numpy_dtype(ndarray.dtype)
    return Tensor._make(ndarray)


def _shape(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = tuple(int(s) for s in size)
    for s in out:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(out)}"
            )
    return out


def _dt(dtype_: Any) -> dtype:
    return STATE.default_dtype if dtype_ is None else to_dtype(dtype_)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    """Mirrors: ``torch.zeros``."""
    return _finish(_xp(device).zeros(_shape(size), dtype=_dt(dtype).np), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.ones``."""
    return _finish(_xp(device).ones(_shape(size), dtype=_dt(dtype).np), requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.empty`` (zero-filled: uninitialised memory is never exposed)."""
    return _finish(_xp(device).zeros(_shape(size), dtype=_dt(dtype).np), requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.full`` (dtype inferred from `fill_value` like PyTorch)."""
    if dtype is None:
        dtype = infer_dtype(fill_value)
    arr = _xp(device).full(_shape((size,)), fill_value, dtype=to_dtype(dtype).np)
    return _finish(arr, requires_grad)


def _like_dtype(t: Tensor, dtype_: Any) -> Any:
    return t._data.dtype if dtype_ is None else to_dtype(dtype_).np


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.zeros_like``."""
    xp = _xp(device) if device is not None else _xp_of(input)
    return _finish(xp.zeros(input._data.shape, dtype=_like_dtype(input, dtype)), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.ones_like``."""
    xp = _xp(device) if device is not None else _xp_of(input)
    return _finish(xp.ones(input._data.shape, dtype=_like_dtype(input, dtype)), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.empty_like`` (zero-filled)."""
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.full_like``."""
    xp = _xp(device) if device is not None else _xp_of(input)
    arr = xp.full(input._data.shape, fill_value, dtype=_like_dtype(input, dtype))
    return _finish(arr, requires_grad)


def _xp_of(t: Tensor) -> Any:
    from hookgrad._backend import namespace_of

    return namespace_of(t._data)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.arange`` (int64 for integer arguments, else the default dtype)."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_int = all(isinstance(v, int) and not isinstance(v, bool) for v in vals)
        d = to_dtype("int64") if is_int else STATE.default_dtype
    else:
        d = to_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    arr = _xp(device).arange(n, dtype=np.float64) * step + start
    return _finish(arr.astype(d.np), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.linspace``."""
    arr = _xp(device).linspace(float(start), float(end), int(steps), dtype=np.float64)
    return _finish(arr.astype(_dt(dtype).np), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.eye``."""
    return _finish(_xp(device).eye(n, m, dtype=_dt(dtype).np), requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.scalar_tensor``."""
    return _finish(_xp(device).asarray(s, dtype=_dt(dtype).np), requires_grad)


def _new(name: str) -> Any:
    fns = {"new_zeros": zeros, "new_ones": ones, "new_empty": empty}
    fn = fns[name]

    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
        return fn(*size, dtype=dtype if dtype is not None else self.dtype,
                  requires_grad=requires_grad)

    method.__name__ = name
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=dtype if dtype is not None else self.dtype,
                requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return tensor(data, dtype=dtype if dtype is not None else self.dtype,
                  requires_grad=requires_grad)


METHODS = {
    "new_zeros": _new("new_zeros"), "new_ones": _new("new_ones"), "new_empty": _new("new_empty"),
    "new_full": new_full, "new_tensor": new_tensor,
}
