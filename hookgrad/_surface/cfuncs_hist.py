"""Histograms: ``histc``, ``histogram``, ``histogramdd`` (float inputs; results carry no graph).

Mirrors: ``torch.histc``, ``torch.histogram``, ``torch.histogramdd`` and the Tensor methods
``histc``/``histogram``. Bin edges are computed as PyTorch's ``linspace`` computes them (in the
input's dtype, from both ends), and a value is placed by comparing it with those edges, so a
value on an edge lands in the same bin as in PyTorch. Difference: PyTorch's ``histogram``
result has a ``NotImplemented`` node when the input requires grad; hookgrad's has none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._functional.creation as C
from hookgrad import return_types as _return_types
from hookgrad._tensor import Tensor

__all__ = ["histc", "histogram", "histogramdd"]

RETURN_TYPES = {
    "histogram": _return_types._make("histogram", ("hist", "bin_edges")),
    "histogramdd": _return_types._make("histogramdd", ("hist", "bin_edges")),
}


def _np(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def linspace_like_torch(lo: Any, hi: Any, steps: int, dtype: Any) -> np.ndarray:
    """PyTorch's CPU ``linspace``: the first half counts up from `lo`, the rest down from `hi`."""
    lo, hi = dtype.type(lo), dtype.type(hi)
    if steps == 1:
        return np.array([lo], dtype=dtype)
    step = dtype.type((hi - lo) / dtype.type(steps - 1))
    i = np.arange(steps)
    half = steps // 2
    up = (lo + step * i.astype(dtype)).astype(dtype)
    down = (hi - step * (steps - 1 - i).astype(dtype)).astype(dtype)
    return np.where(i < half, up, down).astype(dtype)


def _check_float(input: Tensor, name: str) -> None:
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{_type(input._data.dtype)}'")


def _type(dt: np.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(dt), str(dt))


def _fmt(v: float) -> str:
    return f"{v:g}"


def _counts(points: np.ndarray, edges: list[np.ndarray], weight: np.ndarray | None) -> np.ndarray:
    """Weighted counts of `points` (M, N) in the grid of `edges`; the last edge closes its bin."""
    shape = tuple(max(len(e) - 1, 0) for e in edges)
    out = np.zeros(shape, dtype=points.dtype)
    keep = np.ones(len(points), dtype=bool)
    pos = []
    for k, e in enumerate(edges):
        col = points[:, k]
        if len(e) < 2:
            keep &= False
            pos.append(np.zeros(len(col), dtype=np.int64))
            continue
        inside = (col >= e[0]) & (col <= e[-1])
        b = np.searchsorted(e, col, side="right") - 1
        b = np.where(col == e[-1], len(e) - 2, b)
        keep &= inside
        pos.append(np.clip(b, 0, len(e) - 2))
    w = np.ones(len(points), dtype=points.dtype) if weight is None else weight
    if shape and all(shape):
        np.add.at(out, tuple(p[keep] for p in pos), w[keep])
    return out


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0, *,
          out: Any = None) -> Tensor:
    """Equal-width histogram between `min` and `max` (data range when both are 0).

    Mirrors: ``torch.histc``."""
    _check_float(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = _np(input).reshape(-1)
    dt = x.dtype
    lo, hi = dt.type(min), dt.type(max)
    if lo == hi and x.size:
        lo, hi = x.min(), x.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = linspace_like_torch(lo, hi, bins + 1, dt)
    res = C.tensor(_counts(x.reshape(-1, 1), [edges], None))
    return res if out is None else out.copy_(res)


def _auto_range(col: np.ndarray, rng: Any, k: int, dt: np.dtype) -> tuple:
    if rng is not None:
        lo, hi = dt.type(rng[2 * k]), dt.type(rng[2 * k + 1])
    elif col.size:
        lo, hi = col.min(), col.max()
    else:
        lo, hi = dt.type(0), dt.type(1)
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(lo)} "
                           f"max {_fmt(hi)} for dimension {k}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{_fmt(lo)}, {_fmt(hi)}] "
                           "is not finite")
    if lo == hi:
        lo, hi = lo - dt.type(0.5), hi + dt.type(0.5)
    return lo, hi


def _edges(points: np.ndarray, bins: Any, rng: Any) -> list[np.ndarray]:
    n = points.shape[1]
    dt = points.dtype
    if isinstance(bins, (int, np.integer)):
        bins = [int(bins)] * n
    bins = list(bins)
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if rng is not None and len(rng) != 2 * n:
        raise RuntimeError("torch.histogramdd: expected 2 range values per dimension")
    edges = []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dim() != 1:
                raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, "
                                   f"but got {b.dim()} dimensions in the bins tensor for "
                                   f"dimension {k}")
            edges.append(_np(b).astype(dt))
            continue
        if int(b) <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for "
                               f"dimension {k}")
        lo, hi = _auto_range(points[:, k], rng, k, dt)
        edges.append(linspace_like_torch(lo, hi, int(b) + 1, dt))
    return edges


def _dd(input: Tensor, bins: Any, range: Any, weight: Any, density: bool) -> tuple:
    _check_float(input, "histogramdd")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    x = _np(input)
    points = x.reshape(-1, x.shape[-1])
    w = None
    if weight is not None:
        if tuple(weight.shape) != tuple(x.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(x.shape)} and "
                               f"weight with shape {list(weight.shape)}")
        w = _np(weight).reshape(-1).astype(x.dtype)
    edges = _edges(points, bins, range)
    hist = _counts(points, edges, w)
    if density:
        total = hist.sum()
        for k, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[k] = -1
            hist = hist / np.diff(e).reshape(shape)
        hist = hist / total
    return C.tensor(hist.astype(x.dtype)), [C.tensor(e) for e in edges]


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,
              density: bool = False, out: Any = None) -> Any:
    """Histogram of all elements: (hist, bin_edges). Mirrors: ``torch.histogram``."""
    _check_float(input, "histogram_cpu")
    flat = input.reshape(-1, 1)
    w = None if weight is None else weight.reshape(-1)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the "
                           "same shape as the input tensor excluding its innermost dimension")
    hist, edges = _dd(flat, [bins], range, w, density)
    return RETURN_TYPES["histogram"]((hist, edges[0]))


def histogramdd(input: Tensor, bins: Any, *, range: Any = None, weight: Any = None,
                density: bool = False, out: Any = None) -> Any:
    """N-dimensional histogram of the points in `input`'s last dimension: (hist, bin_edges).

    Mirrors: ``torch.histogramdd``."""
    hist, edges = _dd(input, bins, range, weight, density)
    return RETURN_TYPES["histogramdd"]((hist, tuple(edges)))


METHODS = {"histc": histc, "histogram": histogram}
