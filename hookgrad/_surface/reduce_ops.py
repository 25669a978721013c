"""Order statistics, distances and binning built on ``sort``, ``gather`` and reductions.

Mirrors: ``torch.median``, ``kthvalue``, ``quantile``, ``cummax``, ``cdist``, ... (real dtypes).
Values reach their gradient through ``sort``/``gather``, so it flows to the selected elements
as PyTorch's does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.pointwise as P
import hookgrad._functional.reduction as R
import hookgrad._functional.shape as S
from hookgrad._dtypes import check_kernel
from hookgrad import return_types as _return_types
from hookgrad._dispatch import bind
from hookgrad._ops import select_scan as _select_scan  # noqa: F401  (registers the primitives)
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as _PRIMS
from hookgrad._tensor import Tensor

RETURN_TYPES = {name: _return_types._make(name, fields) for name, fields in [
    ("kthvalue", ("values", "indices")), ("median", ("values", "indices")),
    ("mode", ("values", "indices")), ("aminmax", ("min", "max")),
    ("cummax", ("values", "indices")), ("cummin", ("values", "indices"))]}


def _rt(name: str, *items: Tensor) -> Any:
    return RETURN_TYPES[name](items)


__all__ = ["kthvalue", "median", "quantile", "aminmax", "cummax", "cummin", "logcumsumexp",
           "dist", "cdist", "pdist", "renorm", "cov", "corrcoef"]


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """k-th smallest along `dim`: (values, indices). Mirrors: ``torch.kthvalue``."""
    n = input.shape[dim] if input.dim() else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim % input.dim()} to have "
                         "non-zero size.")
    if not 1 <= k <= n:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if input.dtype.is_floating_point is False and input._data.dtype.kind == "b":
        raise NotImplementedError('"kthvalue_cpu" not implemented for \'Bool\'')
    d = dim % input.dim() if input.dim() else 0
    v, i = bind(_PRIMS["kthvalue"], (input,), {"k": k, "dim": d, "keepdim": bool(keepdim)})
    return _rt("kthvalue", v, i)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """Lower median (of all elements, or (values, indices) along `dim`). Mirrors: ``torch.median``."""
    check_kernel("median", input._data.dtype)
    bad_dtype = input._data.dtype.kind == "b"
    if dim is None:
        if bad_dtype and input._data.size:  # an empty input is ATen's NaN cast, before dispatch
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        return bind(_PRIMS["median"], (input,), {})
    d = normalize_dim(dim, input._data.ndim)  # the dim's IndexError comes first, then its size
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    if bad_dtype:
        raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    v, i = bind(_PRIMS["median_dim"], (input,), {"dim": d, "keepdim": bool(keepdim)})
    return _rt("median", v, i)


def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Tensor:
    """Quantiles with PyTorch's interpolation modes. Mirrors: ``torch.quantile``."""
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else dim % max(x.dim(), 1)
    srt = R.sort(x, d).values
    n = x.shape[d]
    qs = q.tolist() if isinstance(q, Tensor) else q
    scalar = not isinstance(qs, list)
    outs = [_one_quantile(srt, float(v), d, n, interpolation) for v in ([qs] if scalar else qs)]
    res = outs[0] if scalar else S.stack(outs, 0)
    if keepdim:
        if dim is None:
            res = res.reshape(([] if scalar else [len(outs)]) + [1] * input.dim())
        else:
            res = res.unsqueeze(d + (0 if scalar else 1))
    return res


def _one_quantile(srt: Tensor, q: float, d: int, n: int, how: str) -> Tensor:
    if not 0 <= q <= 1:
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    pos = q * (n - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    a, b = srt.select(d, lo), srt.select(d, hi)
    frac = pos - lo
    if how == "lower":
        return a
    if how == "higher":
        return b
    if how == "nearest":
        return a if round(pos) == lo else b  # round-half-even, as PyTorch's
    if how == "midpoint":
        return a + (b - a) * 0.5 if hi != lo else a
    if how != "linear":
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {how}")
    return a + (b - a) * frac if hi != lo else a


def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """(min, max) in one call. Mirrors: ``torch.aminmax``."""
    return _rt("aminmax", R.amin(input, () if dim is None else dim, keepdim),
               R.amax(input, () if dim is None else dim, keepdim))


def _cum_extreme(input: Tensor, dim: int, name: str) -> Any:
    if input._data.size == 0:  # ATen wraps the dim only for a non-empty input
        axis = dim % input._data.ndim if -input._data.ndim <= dim < input._data.ndim else 0
    else:
        axis = normalize_dim(dim, input._data.ndim)
    return _rt(name, *bind(_PRIMS[name], (input,), {"dim": axis}))


def cummax(input: Tensor, dim: int) -> Any:
    """Running maximum and its index along `dim`. Mirrors: ``torch.cummax``."""
    return _cum_extreme(input, dim, "cummax")


def cummin(input: Tensor, dim: int) -> Any:
    """Running minimum and its index along `dim`. Mirrors: ``torch.cummin``."""
    return _cum_extreme(input, dim, "cummin")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) computed stably. Mirrors: ``torch.logcumsumexp``."""
    if input._data.dtype.kind not in "fcV":
        raise NotImplementedError('"logcumsumexp_out_cpu" not implemented for '
                                  f"'{input.dtype.scalar_type}'")
    return bind(_PRIMS["logcumsumexp"], (input,), {"dim": normalize_dim(dim, input._data.ndim)})


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """p-norm of input - other. Mirrors: ``torch.dist``."""
    from hookgrad._functional.linalg import vector_norm
    return vector_norm(input - other, p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """Pairwise p-norm distances between rows of `x1` and `x2`. Mirrors: ``torch.cdist``."""
    from hookgrad._functional.linalg import vector_norm
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, p, -1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """Distances between all row pairs i < j. Mirrors: ``torch.pdist``."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    i, j = np.triu_indices(input.shape[0], 1)
    from hookgrad._functional.linalg import vector_norm
    a, b = input[C.from_numpy(i.astype(np.int64))], input[C.from_numpy(j.astype(np.int64))]
    return vector_norm(a - b, p, -1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Rescale each slice along `dim` whose p-norm exceeds `maxnorm`. Mirrors: ``torch.renorm``."""
    from hookgrad._functional.linalg import vector_norm
    others = [d for d in range(input.dim()) if d != dim % input.dim()]
    norms = vector_norm(input, p, others, True)
    scale = P.where(norms > maxnorm, maxnorm / (norms + 1e-7), C.ones_like(norms))
    return input * scale


def cov(input: Tensor, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
    """Covariance of the rows (variables) over the columns (observations). Mirrors: ``torch.cov``."""
    x = input.reshape(1, -1) if input.dim() < 2 else input
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights
    if w is None:
        n = x.shape[1]
        xc = x - x.mean(1, keepdim=True)
        c = (xc @ xc.t().conj_physical()) / max(n - correction, 0)
    else:
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        xc = x - avg
        norm = wsum - correction * ((w * aweights).sum() / wsum if aweights is not None else 1)
        c = ((xc * w) @ xc.t().conj_physical()) / P.clamp(norm, min=0)
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows. Mirrors: ``torch.corrcoef``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = P.sqrt(c.diagonal())
    return P.clamp(c / d.unsqueeze(1) / d.unsqueeze(0), -1, 1)
