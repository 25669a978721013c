"""PyTorch's CPU sampling kernels on NumPy arrays, drawing from an `MTEngine`.

Each function returns the values PyTorch writes for the same generator state, in the order its
kernels visit elements (row-major for the contiguous results these return; `in_memory_order`
places values of an in-place fill on a strided view). See NOTE [PyTorch's random stream].
"""

from __future__ import annotations

import numpy as np

from hookgrad._functional._mt_engine import MTEngine

__all__ = ["bernoulli_scalar", "bernoulli_tensor", "cauchy", "exponential", "geometric",
           "in_memory_order", "integers", "log_normal", "multinomial", "normal", "randperm",
           "uniform"]

_F32, _F64, _LD = np.float32, np.float64, np.longdouble


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _fma(x: np.ndarray, scale: float, shift: float, work: type) -> np.ndarray:
    """``x * scale + shift`` rounded once in ``work`` precision (the kernels are contracted)."""
    if work is _F32:
        return (x.astype(_F64) * _F64(_F32(scale)) + _F64(_F32(shift))).astype(_F32)
    return (x.astype(_LD) * _LD(scale) + _LD(shift)).astype(_F64)


def uniform(eng: MTEngine, shape: tuple, np_dtype: np.dtype, low: float, high: float
            ) -> np.ndarray:
    """``uniform_(low, high)``: ``low + x * (high - low)`` for one uniform per element."""
    n = _size(shape)
    if np_dtype == _F64:
        x = eng.uniform_f64(n)
        out = _fma(x, _F64(high) - _F64(low), low, _F64)
    else:
        # float16/bfloat16 draw and compute in float32, then round (PyTorch's reduced types)
        lo, hi = _F32(low), _F32(high)
        out = _fma(eng.uniform_f32(n), _F32(hi - lo), lo, _F32).astype(np_dtype, copy=False)
        if np_dtype != _F32:
            # a value that rounds up to `high` in the narrow type wraps to `low`, as PyTorch's
            narrow = np.dtype(np_dtype).type
            out[out == narrow(high)] = narrow(low)
    return out.astype(np_dtype, copy=False).reshape(shape)


def normal(eng: MTEngine, shape: tuple, np_dtype: np.dtype, mean: float, std: float,
           contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)``: the block fill for contiguous tensors of 16+ elements, one
    cached double normal per element otherwise."""
    n = _size(shape)
    if n >= 16 and contiguous:
        if np_dtype == _F32:
            out = eng.normal_fill_f32(n, mean, std)
        else:
            out = eng.normal_fill_generic(n, mean, std, np.dtype(np_dtype))
    else:
        z = eng.normal_doubles(n)
        out = (z.astype(_LD) * _LD(std) + _LD(mean)).astype(_F64)
    return out.astype(np_dtype, copy=False).reshape(shape)


def integers(eng: MTEngine, shape: tuple, np_dtype: np.dtype, low: int, high: int,
             wide_ok: bool = True) -> np.ndarray:
    """``random_(low, high)``: ``word % range + low``; 64-bit words for ranges of 2**32 and up
    (for the dtypes that can hold them)."""
    n = _size(shape)
    span = high - low
    words = eng.words64(n) if span >= 1 << 32 and wide_ok else eng.words(n)
    vals = (words % np.uint64(span)).astype(object if span >= 1 << 63 else np.int64) + low
    return np.asarray(vals).astype(np_dtype).reshape(shape)


def bernoulli_scalar(eng: MTEngine, shape: tuple, p: float) -> np.ndarray:
    """``bernoulli_(p)``: a double uniform below ``p`` (PyTorch's portable kernel)."""
    return (eng.uniform_f64(_size(shape)) < p).reshape(shape)


def bernoulli_tensor(eng: MTEngine, probs: np.ndarray) -> np.ndarray:
    """``bernoulli_(p_tensor)`` for ``probs`` already broadcast to the output's shape: double
    probabilities compare double uniforms, other dtypes float uniforms."""
    n = probs.size
    flat = np.ascontiguousarray(probs).ravel()
    if probs.dtype == _F64:
        u = eng.uniform_f64(n)
    else:
        u = eng.uniform_f32(n)
        flat = flat.astype(_F32)
    return (u < flat).reshape(probs.shape)


def exponential(eng: MTEngine, shape: tuple, lambd: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape)).astype(_LD)
    return (_LD(-1.0) / _LD(lambd) * np.log1p(-u)).astype(_F64).reshape(shape)


def cauchy(eng: MTEngine, shape: tuple, median: float, sigma: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape))
    t = np.tan((np.pi * (u - 0.5)).astype(_LD)).astype(_F64)
    return (median + sigma * t).reshape(shape)


def log_normal(eng: MTEngine, shape: tuple, mean: float, std: float) -> np.ndarray:
    z = eng.normal_doubles(_size(shape)) * std + mean
    return np.exp(z.astype(_LD)).astype(_F64).reshape(shape)


def geometric(eng: MTEngine, shape: tuple, p: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape)).astype(_LD)
    ratio = (np.log(u).astype(_F64) / np.log1p(_LD(-p)).astype(_F64))
    return np.ceil(ratio).reshape(shape)


def randperm(eng: MTEngine, n: int) -> np.ndarray:
    """Fisher-Yates from the front: swap ``i`` with ``i + word % (n - i)``."""
    perm = np.arange(n, dtype=np.int64)
    if n < 2:
        return perm
    picks = eng.words(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
    out = perm.tolist()
    for i, z in enumerate(picks.tolist()):
        j = i + z
        out[i], out[j] = out[j], out[i]
    return np.asarray(out, dtype=np.int64)


def multinomial(eng: MTEngine, rows: np.ndarray, num_samples: int, replacement: bool
                ) -> np.ndarray:
    """Indices per row of ``rows`` (2-D, the input's dtype), PyTorch's two algorithms."""
    if not replacement or num_samples == 1:
        # keys p / Exponential(1), drawn in the input's dtype; the largest keys win (PyTorch
        # takes this path for a single draw with replacement too)
        q = exponential(eng, rows.shape, 1.0).astype(rows.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        return np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for r, row in enumerate(rows):
        cum = np.cumsum(row.astype(_F64)).astype(rows.dtype)
        total = _F64(cum[-1])
        cum = (cum.astype(_F64) / total).astype(rows.dtype)
        u = eng.uniform_f64(num_samples)
        out[r] = np.searchsorted(cum.astype(_F64), u, side="left")
    return np.minimum(out, rows.shape[1] - 1)


def in_memory_order(view: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Arrange ``values`` (drawn in order) over ``view``'s elements by increasing address, the
    order PyTorch's iterator visits a strided output in."""
    if view.flags.c_contiguous or view.size < 2:
        return values.reshape(view.shape)
    offsets = np.zeros(view.shape, np.int64)
    for axis, stride in enumerate(view.strides):
        shape = [1] * view.ndim
        shape[axis] = view.shape[axis]
        offsets = offsets + (np.arange(view.shape[axis], dtype=np.int64) * stride).reshape(shape)
    order = np.argsort(offsets.ravel(), kind="stable")
    out = np.empty(view.size, values.dtype)
    out[order] = values.ravel()
    return out.reshape(view.shape)
