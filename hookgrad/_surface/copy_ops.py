"""The ``*_copy`` variants of the view ops, the signal windows and ``logspace``.

Mirrors: ``torch.view_copy``, ``permute_copy``, ``as_strided_copy``, ... (each the view op followed by a contiguous
copy, so the result never shares memory with the input), ``torch.hann_window``,
``hamming_window``, ``blackman_window``, ``bartlett_window``, ``kaiser_window``, ``logspace``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from hookgrad._dtypes import get_default_dtype
from hookgrad._functional.creation import tensor
from hookgrad._legacy import contiguous_format
from hookgrad._tensor import Tensor

_VIEWS = {
    "alias_copy": lambda x: x.view(x.shape),
    "diagonal_copy": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    "expand_copy": lambda x, size, *, implicit=False: x.expand(*size),
    "permute_copy": lambda x, dims: x.permute(*dims),
    "select_copy": lambda x, dim, index: x.select(dim, index),
    "slice_copy": lambda x, dim=0, start=None, end=None, step=1: x.narrow(
        dim, *_span(x.shape[dim], start, end))[(slice(None),) * (dim % x.dim())
                                              + (slice(None, None, step),)],
    "squeeze_copy": lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim),
    "t_copy": lambda x: x.t(),
    "transpose_copy": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "unfold_copy": lambda x, dimension, size, step: _unfold(x, dimension, size, step),
    "unsqueeze_copy": lambda x, dim: x.unsqueeze(dim),
    "view_copy": lambda x, size: x.view(size) if not hasattr(size, "is_floating_point")
    else x.view(size),
    "narrow_copy": lambda x, dim, start, length: x.narrow(dim, start, length),
    "as_strided_copy": lambda x, size, stride, storage_offset=None: x.as_strided(
        size, stride, storage_offset),
}
_MULTI = {
    "split_copy": lambda x, split_size, dim=0: x.split(split_size, dim),
    "split_with_sizes_copy": lambda x, split_sizes, dim=0: x.split(list(split_sizes), dim),
    "unbind_copy": lambda x, dim=0: x.unbind(dim),
}


def _unfold(x: Tensor, dim: int, size: int, step: int) -> Tensor:
    """Windows of `size` every `step` along `dim`, as a strided view (appended last dim)."""
    nd = max(x.dim(), 1)
    dim = dim % nd
    n = x.shape[dim] if x.dim() else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, strides = list(x.shape), list(x.stride())
    if not x.dim():
        return x.reshape(1)
    shape[dim] = (n - size) // step + 1
    st = strides[dim]
    strides[dim] = st * step
    return x.as_strided(shape + [size], strides + [st], x.storage_offset())


def _span(n: int, start: Any, end: Any) -> tuple[int, int]:
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start, end = max(0, min(start, n)), max(0, min(end, n))
    return start, max(0, end - start)


def _copy(x: Tensor) -> Tensor:
    return x.clone(memory_format=contiguous_format)


def _single(name: str, view: Callable) -> Callable:
    def fn(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Tensor:
        return _copy(view(input, *args, **kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A contiguous copy of the view. Mirrors: ``torch.{name}``."
    return fn


def _multi(name: str, view: Callable) -> Callable:
    def fn(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> tuple:
        return tuple(_copy(v) for v in view(input, *args, **kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Contiguous copies of the views. Mirrors: ``torch.{name}``."
    return fn


COPIES = {**{n: _single(n, v) for n, v in _VIEWS.items()},
          **{n: _multi(n, v) for n, v in _MULTI.items()}}


def _window(name: str, values: Callable[[np.ndarray, int], np.ndarray]) -> Callable:
    def fn(window_length: int, periodic: bool = True, *args: Any, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: Any = None) -> Tensor:
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        dtype = get_default_dtype() if dtype is None else dtype
        if window_length <= 1:
            data = np.ones(window_length)
        else:
            n = window_length + 1 if periodic else window_length
            data = values(np.arange(n, dtype=np.float64), n, *args)[:window_length]
        return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {name.split('_')[0]} window. Mirrors: ``torch.{name}``."
    return fn


def _cosine(a: float, b: float, c: float = 0.0) -> Callable:
    return lambda k, n: a - b * np.cos(2 * math.pi * k / (n - 1)) + c * np.cos(
        4 * math.pi * k / (n - 1))


def _bartlett(k: np.ndarray, n: int) -> np.ndarray:
    return 1 - np.abs(2 * k / (n - 1) - 1)


def _hamming(k: np.ndarray, n: int, alpha: float = 0.54, beta: float = 0.46) -> np.ndarray:
    return alpha - beta * np.cos(2 * math.pi * k / (n - 1))


def _kaiser(k: np.ndarray, n: int, beta: float = 12.0) -> np.ndarray:
    return np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (n - 1) - 1) ** 2, 0, None))) / np.i0(beta)


WINDOWS = {
    "hann_window": _window("hann_window", _cosine(0.5, 0.5)),
    "hamming_window": _window("hamming_window", _hamming),
    "blackman_window": _window("blackman_window", _cosine(0.42, 0.5, 0.08)),
    "bartlett_window": _window("bartlett_window", _bartlett),
    "kaiser_window": _window("kaiser_window", _kaiser),
}


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Any = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``. Mirrors: ``torch.logspace``."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    data = np.power(float(base), np.linspace(float(start), float(end), steps))
    return tensor(data, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


FUNCTIONS = {**COPIES, **WINDOWS, "logspace": logspace}
