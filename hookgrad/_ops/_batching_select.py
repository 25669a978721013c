"""Batching rules of the value selections, scans and index writes of ``select_scan.py``
(``kthvalue``, ``median``, ``cummax``, ``logcumsumexp``, ``rot90``, ``index_copy``,
``index_fill``, ``masked_scatter``), of ``torch.unique``'s primitives and of the
double-backward tie (see ``_batching.py`` for the calling convention).

Layer 3. Index writes merge the batch and the indexed dimension (as ``index_add``'s rule): a
per-sample index outside its sample's range is moved out of the merged range without reading
a value, so the kernel raises, and the error is PyTorch's vmap RuntimeError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._ops.select_scan  # noqa: F401  (its primitives get rules below)
import hookgrad._ops._double_backward  # noqa: F401  (_backward_tie)
import hookgrad._ops._no_derivative  # noqa: F401  (_unique2, unique_dim)
from hookgrad._dispatch import bind
from hookgrad._ops._batching import (
    align, batches, dim_params, expand_batch, guard_index, logical_ndim, shift_dim,
)
from hookgrad._ops._batching_extra import _dynamic, offset_rows, whole_median
from hookgrad._ops._batching_nn import _none_means_loop
from hookgrad._ops.registry import PRIMITIVES, Primitive

__all__: list[str] = []


# ------------------------------------------------------------------------- selections, scans
def _tie(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
         level: int) -> Any:
    """The value passes through: both inputs carry the batch, the tie is kept."""
    xs = tuple(expand_batch(a, f, size) for a, f in zip(args, flags))
    return bind(prim, xs, params, cast)


# ------------------------------------------------------------------------------ index writes
def _vmap_error(exc: IndexError) -> RuntimeError:
    return RuntimeError(str(exc))


def _merged_index(index: Any, n: int, size: int, wrap: bool) -> Any:
    """Per-sample positions ``(B, k)`` as positions in the merged ``B * n`` range; with `wrap`
    a negative one counts from its sample's end (index_fill accepts ``[-n, n)``)."""
    idx = index.reshape((size, -1))
    if wrap:
        idx = idx + (idx < 0).to(idx.dtype) * n
    return offset_rows(idx, n, size)


def _index_write(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                 level: int) -> Any:
    """index_copy / index_fill / index_fill_tensor: batch and indexed dimension merged."""
    name = prim.name
    x = expand_batch(args[0], flags[0], size)
    index = expand_batch(args[1], flags[1], size)
    nd = x.dim() - 1
    zero = not nd
    if zero:  # a 0-d sample acts as a 1-element vector
        shift_dim(params["dim"], 0)  # range check
        x, d = x.unsqueeze(1), 1
    else:
        d = shift_dim(params["dim"], nd)
    xm = x.movedim(d, 1)
    n, rest = xm.shape[1], tuple(xm.shape[2:])
    idx = _merged_index(index, n, size, wrap=name != "index_copy")
    k = idx.shape[1]
    base = xm.reshape((size * n,) + rest)
    flat = idx.reshape((size * k,))
    new = {**params, "dim": 0}
    try:
        if name == "index_copy":
            src = expand_batch(args[2], flags[2], size)
            if logical_ndim(src, True) != nd:
                return None  # a source of another rank: the loop
            src = src.reshape((size, 1)) if zero else src.movedim(d, 1)
            out = bind(prim, (base, flat, src.reshape((size * k,) + rest)), new, cast)
        elif name == "index_fill_tensor" and flags[2]:  # per-sample values: fill a mask
            ones = bind(PRIMITIVES["index_fill"], (base.new_zeros(tuple(base.shape)), flat),
                        {"dim": 0, "value": 1}, cast)
            value = args[2].reshape((size,) + (1,) * (len(rest) + 1)).to(base.dtype)
            mask = ones.reshape((size, n) + rest) != 0
            out = bind(PRIMITIVES["where"], (mask, value, xm), {}, cast)
            return out.reshape((size,)) if zero else out.movedim(1, d)
        else:
            out = bind(prim, (base, flat) + tuple(args[2:]), new, cast)
    except IndexError as exc:  # a sample's position outside its range
        raise _vmap_error(exc) from None
    out = out.reshape((size, n) + rest)
    return out.reshape((size,)) if zero else out.movedim(1, d)


def _masked_scatter(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                    size: int, level: int) -> Any:
    """Each sample's masked positions take its own source's values in order: position j is
    the j-th set element of the sample's mask, gathered from the sample's flat source. A
    sample with more set elements than source values raises PyTorch's RuntimeError."""
    x, mask, src = args
    nd = max(logical_ndim(x, flags[0]), logical_ndim(mask, flags[1]))
    xb = align(x, nd) if flags[0] else x
    mb = align(mask, nd) if flags[1] else mask
    xe = expand_batch(xb, flags[0], size)
    me = expand_batch(mb, flags[1], size)
    full = tuple(np.broadcast_shapes(tuple(xe.shape), tuple(me.shape)))
    xe, me = xe.expand(full), me.expand(full)
    sflat = expand_batch(src, flags[2], size).reshape((size, -1))
    m = sflat.shape[1]
    if not m:
        return None  # no source value at all: the loop (and its error where a mask is set)
    mflat = me.reshape((size, -1)).long()
    pos = (mflat.cumsum(1) - 1) * mflat  # unset positions read value 0 (then dropped)
    try:
        picked = bind(PRIMITIVES["gather"], (sflat, guard_index(pos, m)),
                      {"dim": 1, "sparse_grad": False}, cast)
    except IndexError:
        raise RuntimeError("Number of elements of source < number of ones in mask") from None
    return bind(PRIMITIVES["where"], (me, picked.reshape(full), xe), {}, cast)


# ------------------------------------------------------------------------------ declarations
batches(["cummax", "cummin", "logcumsumexp", "kthvalue", "median_dim"],
        dim_params("dim", none_all=False))
batches(["rot90"], dim_params("dims", none_all=False))
batches(["median"], whole_median("median_dim"))
batches(["_backward_tie"], _tie)
batches(["_unique2", "unique_dim"], _dynamic)
batches(["index_copy", "index_fill", "index_fill_tensor"], _none_means_loop(_index_write))
batches(["masked_scatter"], _none_means_loop(_masked_scatter))
