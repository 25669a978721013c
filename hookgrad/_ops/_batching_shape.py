"""Batching rules of views, reshapes, joins and indexing (see ``_batching.py``).

Layer 3. Each rule rewrites the op's size or dimension parameters for a physical tensor whose
dimension 0 is the batch, and calls the same primitive through `bind`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._ops._batching import align, batches, expand_batch, guard_index, shift_dim, zero_d
from hookgrad._ops.registry import PRIMITIVES, Primitive
from hookgrad._tensor import Tensor

__all__: list[str] = []


def _sized(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
           level: int) -> Any:
    """view / _unsafe_view / _reshape_alias: the batch dimension in front of the size."""
    want = (size,) + tuple(params["size"])
    try:
        return bind(prim, (args[0],), {**params, "size": want}, cast)
    except RuntimeError:
        # the sample's layout allowed the view, but under nested levels the physical value
        # interleaves an outer batch dimension with the sample's dims: its values, reshaped
        return args[0].reshape(want)


def _expand(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            level: int) -> Any:
    want = tuple(params["size"])
    x = align(args[0], len(want))
    return bind(prim, (x,), {**params, "size": (size,) + want}, cast)


def _unsqueeze(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    x = args[0]
    return bind(prim, (x,), {**params, "dim": shift_dim(params["dim"], x.dim())}, cast)


def _squeeze(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
    x = args[0]
    dims = tuple(i + 1 for i, n in enumerate(tuple(x.shape)[1:]) if n == 1)
    return bind(PRIMITIVES["squeeze_dims"], (x,), {"dim": dims}, cast)


def _t(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
       level: int) -> Any:
    x = args[0]
    if x.dim() < 3:
        return bind(PRIMITIVES["alias"], (x,), {}, cast)
    return bind(PRIMITIVES["transpose"], (x,), {"dim0": 1, "dim1": 2}, cast)


def _permute(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
    x = args[0]
    nd = x.dim() - 1
    dims = (0,) + tuple(shift_dim(d, nd) for d in params["dims"])
    return bind(prim, (x,), {**params, "dims": dims}, cast)


def _sum_to_size(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                 level: int) -> Any:
    x = args[0]
    want = tuple(params["size"])
    nd = x.dim() - 1
    padded = (1,) * (nd - len(want)) + want
    out = bind(prim, (x,), {**params, "size": (size,) + padded}, cast)
    return out.reshape((size,) + want) if len(padded) != len(want) else out


def _repeat(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            level: int) -> Any:
    reps = tuple(params["repeats"])
    x = align(args[0], len(reps))
    return bind(prim, (x,), {**params, "repeats": (1,) + reps}, cast)


def _roll(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
          level: int) -> Any:
    x = args[0]
    dims = params.get("dims")
    if dims is None or (type(dims) in (list, tuple) and not dims):
        flat = bind(prim, (x.reshape((size, -1)),), {**params, "dims": (1,)}, cast)
        return flat.reshape(tuple(x.shape))
    dims = (dims,) if isinstance(dims, int) else dims
    return bind(prim, (x,), {**params, "dims": tuple(shift_dim(d, x.dim() - 1) for d in dims)},
                cast)


def _joined(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            level: int) -> Any:
    """cat / stack: every input gets the batch dimension, the join dimension shifts."""
    nd = max(a.dim() - (1 if f else 0) for a, f in zip(args, flags))
    xs = tuple(expand_batch(a, f, size) for a, f in zip(args, flags))
    new = dict(params)
    new["dim"] = shift_dim(params["dim"], nd + 1 if prim.name == "stack" else nd)
    return bind(prim, xs, new, cast)


def _same_rank_dim(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                   size: int, level: int) -> Any:
    """gather / scatter / scatter_add: all inputs batched, `dim` shifted; a per-sample index
    guarded (`guard_index`)."""
    nd = max(a.dim() - (1 if f else 0) for a, f in zip(args, flags))
    xs = tuple(expand_batch(a, f, size) for a, f in zip(args, flags))
    if flags[1]:
        d = shift_dim(params["dim"], nd)
        n = xs[0].shape[d] if xs[0].dim() > 1 else 1
        xs = (xs[0], guard_index(xs[1], n)) + xs[2:]
    if not nd:  # 0-d samples
        return zero_d(prim, list(xs), [True] * len(xs), params, cast, size, ("dim",))
    return bind(prim, xs, {**params, "dim": shift_dim(params["dim"], nd)}, cast)


def _index_select(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                  size: int, level: int) -> Any:
    x, index = args
    if x.dim() - (1 if flags[0] else 0) == 0:  # 0-d samples: one element to pick
        shift_dim(params["dim"], 0)
        col = expand_batch(x, flags[0], size).unsqueeze(1)
        idx = expand_batch(index, flags[1], size).reshape((size, 1))
        return bind(PRIMITIVES["gather"], (col, idx), {"dim": 1, "sparse_grad": False}).reshape(
            (size,))
    if flags[1]:  # a per-sample index: a gather along the (shifted) dimension
        nd = x.dim() - (1 if flags[0] else 0)
        x = expand_batch(x, flags[0], size)
        d = shift_dim(params["dim"], nd)
        shape = [1] * x.dim()
        shape[0], shape[d] = size, index.shape[-1] if index.dim() > 1 else 1
        idx = guard_index(index.reshape(tuple(shape)), x.shape[d])
        want = list(x.shape)
        want[d] = idx.shape[d]
        return bind(PRIMITIVES["gather"], (x, idx.expand(tuple(want))),
                    {"dim": d, "sparse_grad": False})
    return bind(prim, (x, index), {**params, "dim": shift_dim(params["dim"], x.dim() - 1)}, cast)


def _index(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
           level: int) -> Any:
    """``x[i, j]`` with unbatched indices: a full slice for the batch dimension in front."""
    indices = tuple(params["indices"])
    out = bind(prim, (args[0],), {**params, "indices": (None,) + indices}, cast)
    used = [k for k, i in enumerate(indices) if i is not None]
    if used and used != list(range(used[0], used[-1] + 1)):
        # separated advanced indices put their dims first, before the batch (NumPy rules)
        adv = max(getattr(indices[k], "ndim", 0) for k in used)
        return out.movedim(adv, 0)
    return out


def _embedding(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    weight, indices = args
    if flags[0]:  # per-sample tables: offset each sample's indices into one stacked table
        n = weight.shape[1]
        idx = expand_batch(indices, flags[1], size)
        offs = bind(PRIMITIVES["_nn_mul_scalar"], (_arange_like(idx, size),), {"other": n})
        flat = weight.reshape((size * n,) + tuple(weight.shape[2:]))
        return bind(prim, (flat, idx + offs.reshape((size,) + (1,) * (idx.dim() - 1))),
                    params, cast)
    return bind(prim, (weight, indices), params, cast)


def _arange_like(idx: Any, size: int) -> Any:
    return Tensor._make(np.arange(size, dtype=idx._data.dtype))


def _fill_tensor(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                 level: int) -> Any:
    x, value = expand_batch(args[0], flags[0], size), args[1]
    if not flags[1]:
        return bind(prim, (x, value), params, cast)
    return value.reshape((size,) + (1,) * (x.dim() - 1)).expand(tuple(x.shape)).clone()


def _copy(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
          level: int) -> Any:
    """copy_ / fill_ (out of place): the source broadcast to the batched target."""
    x = expand_batch(args[0], flags[0], size)
    src = align(args[1], x.dim() - 1) if flags[1] else args[1]
    return bind(prim, (x, src), params, cast)


batches(["copy_", "fill_"], _copy)
batches(["view", "_unsafe_view", "_reshape_alias"], _sized)
batches(["expand"], _expand)
batches(["unsqueeze"], _unsqueeze)
batches(["squeeze"], _squeeze)
batches(["t"], _t)
batches(["permute"], _permute)
batches(["sum_to_size"], _sum_to_size)
batches(["repeat"], _repeat)
batches(["roll"], _roll)
batches(["cat", "stack"], _joined)
batches(["gather", "scatter", "scatter_add", "scatter_value"], _same_rank_dim)
batches(["index_select"], _index_select)
batches(["index"], _index)
batches(["embedding"], _embedding)
batches(["fill_tensor"], _fill_tensor)
