"""``arange`` and ``linspace`` values bit for bit as PyTorch's CPU kernels compute them.

Layer 3 (NumPy only; called by `creation` and the affine_grid op). NOTE [Range factory rounding]
PyTorch fills ranges with one fused multiply-add per element (GCC contracts
``start + step * idx`` into an FMA in its AVX2 kernels), and ``arange`` additionally runs a
vector loop: for every full pair of 32-byte vectors it computes a base ``start + step * idx``
and then ``base + j * step`` per lane. NumPy has no FMA, so `fma` below is exact emulation with
error-free transformations (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
proved algorithms using rounding to odd", 2008). With that, values equal PyTorch's on AVX2/AVX512
CPUs for ranges up to PyTorch's parallel grain size (32768 elements); beyond it PyTorch splits
the range by thread count and the last bit of some elements may differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_GRAIN = 32768
_VEC_BYTES = 32


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * x  # Veltkamp: 2**27 + 1
    hi = c - (c - x)
    return hi, x - hi


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` rounded to odd: an inexact result gets an odd last bit."""
    s, err = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    away = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & even, away, s)


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """Correctly rounded ``a * b + c`` in float64."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        ph, pl = _two_prod(a, b)
        th, tl = _two_sum(c, ph)
        out = th + _round_odd_sum(tl, pl)
    plain = a * b + c
    return np.where(np.isfinite(out), out, plain)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """Correctly rounded ``a * b + c`` in float32 (the float64 product is exact)."""
    p = np.asarray(a, dtype=np.float32).astype(np.float64) * np.asarray(b, dtype=np.float32)
    with np.errstate(all="ignore"):
        s = _round_odd_sum(p, np.asarray(c, dtype=np.float32).astype(np.float64))
    return s.astype(np.float32)


# ------------------------------------------------------------------------------- arange
def arange_size(start: Any, end: Any, step: Any, integral_out64: bool) -> int:
    """Element count, with PyTorch's checks and its int64-specific formula."""
    if integral_out64:
        if step == 0:
            raise RuntimeError("step must be nonzero")
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0:  # a fractional step truncated to 0 fails in PyTorch's argument parser
            raise ValueError("step must be nonzero")
        _check_range(xs, xe, xst)
        sgn = (xst > 0) - (xst < 0)
        # same signs after the check, so floor division equals C++'s truncating division
        return (xe - xs + xst - sgn) // xst
    if step == 0:
        raise RuntimeError("step must be nonzero")
    _check_range(start, end, step)
    size = math.ceil((float(end) - float(start)) / float(step))
    if size > 2**63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return int(size)


def _check_range(start: Any, end: Any, step: Any) -> None:
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_num(start)} -> {_num(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def arange_values(start: Any, step: Any, n: int, np_dtype: np.dtype) -> np.ndarray:
    """The values of PyTorch's ``arange_kernel`` (scalar and vector paths)."""
    np_dtype = np.dtype(np_dtype)
    idx = np.arange(n, dtype=np.int64)
    if np_dtype.kind in "iub":
        # integral accumulate type is int64: start/step are truncated first
        vals = int(start) + int(step) * idx
        return vals.astype(np_dtype)
    half = np_dtype == np.float16
    fma = fma32 if half else fma64
    acc = np.float32 if half else np.float64
    start, step = acc(start), acc(step)
    width = _VEC_BYTES // np_dtype.itemsize
    out = fma(step, idx.astype(acc), start).astype(np_dtype)  # scalar path: one FMA per element
    vec_end = (n // (2 * width)) * 2 * width if n <= _GRAIN else 0
    if vec_end:
        lanes = np.arange(width, dtype=acc)
        bases = fma(step, np.arange(0, vec_end, width, dtype=acc), start).astype(np_dtype)
        vec = fma(lanes[None, :], step, bases.astype(acc)[:, None])
        out[:vec_end] = vec.reshape(-1).astype(np_dtype)
    return out


# ------------------------------------------------------------------------------- linspace
def linspace_values(start: Any, end: Any, steps: int, np_dtype: np.dtype) -> np.ndarray:
    """The values of PyTorch's ``linspace_kernel`` (first half from start, second from end)."""
    np_dtype = np.dtype(np_dtype)
    if steps == 0:
        return np.zeros(0, dtype=np_dtype)
    if steps == 1:
        return np.asarray([start], dtype=np.float64).astype(np_dtype)
    idx = np.arange(steps, dtype=np.int64)
    first = idx < steps // 2
    back = steps - idx - 1
    if np_dtype.kind in "iub":
        s, e = _to_integral(start, np_dtype), _to_integral(end, np_dtype)
        step = (float(e) - float(s)) / (steps - 1)
        vals = np.where(first, fma64(step, idx, float(s)), fma64(-step, back, float(e)))
        return np.trunc(vals).astype(np_dtype)
    if np_dtype == np.float16:
        return _linspace_half(start, end, steps, idx, first, back)
    acc = np_dtype.type
    fma = fma32 if np_dtype == np.float32 else fma64
    s, e = acc(start), acc(end)
    step = (e - s) / acc(steps - 1)
    vals = np.where(first, fma(step, idx.astype(acc), s), fma(-step, back.astype(acc), e))
    return vals.astype(np_dtype)


def _to_integral(x: Any, np_dtype: np.dtype) -> int:
    return int(np.asarray(math.trunc(x)).astype(np_dtype))


def _linspace_half(start: Any, end: Any, steps: int, idx: np.ndarray, first: np.ndarray,
                   back: np.ndarray) -> np.ndarray:
    # c10::Half arithmetic rounds to half after every operator: no fusion, many roundings
    h, f = np.float16, np.float32
    s, e = h(start), h(end)
    step = h(f(h(f(e) - f(s))) / f(h(steps - 1)))
    a = (f(s) + (f(step) * idx.astype(h).astype(f)).astype(h).astype(f)).astype(h)
    b = (f(e) - (f(step) * back.astype(h).astype(f)).astype(h).astype(f)).astype(h)
    return np.where(first, a, b)
