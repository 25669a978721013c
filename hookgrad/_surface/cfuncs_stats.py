"""NaN-ignoring order statistics and the mode: ``nanmedian``, ``nanquantile``, ``mode``.

Mirrors: ``torch.nanmedian``, ``torch.nanquantile``, ``torch.mode`` and their Tensor methods.
``nanquantile`` is a composite in PyTorch too (sort + gather-style reads, its node is the last
view op), so it is written here with sort and gather, line by line counting the non-NaN values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.indexing as I
import hookgrad._functional.reduction as R
import hookgrad._functional.shape as S
from hookgrad import return_types as _return_types
from hookgrad._dispatch import bind
from hookgrad._ops import value_select as _vs  # noqa: F401  (registers mode / nanmedian)
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._surface.reduce_ops import RETURN_TYPES as _RT
from hookgrad._tensor import Tensor

__all__ = ["nanmedian", "nanquantile", "mode"]

RETURN_TYPES = {"nanmedian": _return_types._make("nanmedian", ("values", "indices"))}


def _dim(input: Tensor, dim: Any, name: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"dim={type(dim).__name__}")
    return normalize_dim(int(dim), input.dim())


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """Lower median ignoring NaNs. Mirrors: ``torch.nanmedian``."""
    bad_dtype = input._data.dtype.kind == "b"  # ATen's median kernels have no bool instance
    if dim is None:
        if bad_dtype and input._data.size:
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        return bind(P["nanmedian"], (input,), {})
    d = _dim(input, dim, "nanmedian")
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    if bad_dtype:
        raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    v, i = bind(P["nanmedian_dim"], (input,), {"dim": d, "keepdim": bool(keepdim)})
    return RETURN_TYPES["nanmedian"]((v, i))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """Most frequent value along `dim` (smallest on ties; its last index). Mirrors: ``torch.mode``."""
    d = _dim(input, dim, "mode")
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    v, i = bind(P["mode"], (input,), {"dim": d, "keepdim": bool(keepdim)})
    return _RT["mode"]((v, i))


def _check_q(input: Tensor, q: Any) -> tuple[list, bool]:
    if input.dtype.is_floating_point is False:
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qs, scalar = q.reshape(-1).tolist(), q.dim() == 0
    else:
        qs, scalar = [float(q)], True
    for v in qs:
        if not 0 <= v <= 1:
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return qs, scalar


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> Tensor:
    """Quantiles ignoring NaNs (a line of NaNs gives NaN). Mirrors: ``torch.nanquantile``."""
    qs, scalar = _check_q(input, q)
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    x = input.reshape(-1) if dim is None else (input.reshape(1) if input.dim() == 0 else input)
    d = 0 if dim is None else _dim(input, dim, "nanquantile") if input.dim() else 0
    if x.shape[d] == 0:
        raise IndexError("quantile() input tensor must be non-empty")
    srt = R.sort(x, d).values  # NaNs last
    valid = (~srt.isnan()).sum(d, keepdim=True)  # non-NaN count per line (int64)
    outs = [_line_quantile(srt, valid, v, d, interpolation) for v in qs]
    res = outs[0] if scalar else S.stack(outs, 0)
    if keepdim:
        if dim is None:
            res = res.reshape(([] if scalar else [len(outs)]) + [1] * input.dim())
        elif input.dim():
            res = res.unsqueeze(d + (0 if scalar else 1))
    elif dim is not None and input.dim() == 0:
        res = res.reshape(() if scalar else (len(outs),))
    return res


def _line_quantile(srt: Tensor, valid: Tensor, q: float, d: int, how: str) -> Tensor:
    dt = srt._data.dtype
    vn = valid.numpy()
    pos = np.maximum(dt.type(q) * (vn - 1).astype(dt), 0).astype(dt)  # PyTorch's ranks, in dtype
    lo, hi = np.floor(pos), np.ceil(pos)
    if how == "lower":
        hi = lo
    elif how == "higher":
        lo = hi
    elif how == "nearest":
        lo = hi = np.round(pos)  # round-half-even, as PyTorch's
    a = I.gather(srt, d, C.tensor(lo.astype(np.int64)))
    b = I.gather(srt, d, C.tensor(hi.astype(np.int64)))
    if how in ("lower", "higher", "nearest"):
        res = a
    else:
        frac = np.where(hi != lo, 0.5, 0.0) if how == "midpoint" else pos - lo
        res = a + (b - a) * C.tensor(frac.astype(dt))
    empty = C.tensor(vn == 0)
    res = res.masked_fill(empty, math.nan)
    return res.squeeze(d)


METHODS = {"nanmedian": nanmedian, "nanquantile": nanquantile, "mode": mode}
