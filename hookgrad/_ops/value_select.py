"""Reductions that pick one element per line: ``mode`` and ``nanmedian`` (whole tensor and
along a dimension).

Mirrors: ``torch.mode`` (``ModeBackward0``), ``torch.nanmedian`` (``NanmedianBackward0`` for the
whole tensor, ``NanmedianBackward1`` along `dim`). As in PyTorch the gradient goes to the picked
element (``value_selecting_reduction_backward``); the whole-tensor median shares it evenly among
the elements equal to the result (``evenly_distribute_backward``).

Ties: PyTorch's CPU kernels pick among equal values with ``nth_element`` (median) or a sort
(mode); hookgrad sorts stably, which gives PyTorch's indices for mode and for median without
ties. The index chosen among tied medians may differ from PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._ops._stdsort import MAX_EMULATED, sort_by_less
from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import zeros_of
from hookgrad._tensor import Tensor


def _lines(self: Any, dim: int) -> tuple[np.ndarray, tuple]:
    """`self` as a NumPy (rows, n) array of the lines along `dim`, and the rows' shape."""
    arr = _backend.to_numpy(self)
    if arr.ndim == 0:
        return arr.reshape(1, 1), ()
    moved = np.moveaxis(arr, dim, -1)
    return moved.reshape(-1, moved.shape[-1]), moved.shape[:-1]


def _finish(self: Any, vals: np.ndarray, idx: np.ndarray, rows: tuple, dim: int,
            keepdim: bool) -> tuple:
    xp = _backend.namespace_of(self)
    v, i = vals.reshape(rows), idx.reshape(rows)
    if keepdim and self.ndim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return xp.asarray(v.astype(self.dtype)), xp.asarray(i.astype(np.int64))


def _mode_line_nan(line: np.ndarray) -> int:
    """ATen's mode of a line: ``std::sort`` by ``<`` (NaN stays where the algorithm happens to
    leave it), then the first longest run of ``==`` values, its last entry."""

    vals, idx = sort_by_less(line.tolist())
    best, best_i, run = 0, 0, 0
    for k in range(len(line)):
        run += 1
        if k == len(line) - 1 or vals[k] != vals[k + 1]:
            if run > best:
                best, best_i = run, idx[k]
            run = 0
    return int(best_i)


def _mode_line(line: np.ndarray) -> int:
    # std::sort is an insertion sort (stable) up to 16 elements: beyond that, or with NaN,
    # the order among equal values is replayed (NOTE [Tie order] in _stdsort.py)
    if (len(line) > 16 and len(line) <= MAX_EMULATED) or (
            line.dtype.kind == "f" and np.isnan(line).any()):
        return _mode_line_nan(line)
    order = np.argsort(line, kind="stable")  # NaNs last; each NaN is its own value
    sv = line[order]
    starts = np.ones(len(sv), dtype=bool)
    starts[1:] = sv[1:] != sv[:-1]
    group = np.cumsum(starts) - 1
    best = int(np.argmax(np.bincount(group)))  # first maximum: the smallest such value
    return int(order[np.nonzero(group == best)[0][-1]])  # its last occurrence


def _mode(self: Any, dim: int = -1, keepdim: bool = False) -> tuple:
    lines, rows = _lines(self, dim)
    if lines.shape[1] == 0:
        raise IndexError("mode(): Expected reduction dim 0 to have non-zero size.")
    idx = np.array([_mode_line(r) for r in lines], dtype=np.int64)
    vals = lines[np.arange(len(lines)), idx]
    return _finish(self, vals, idx, rows, dim, keepdim)


def _nanmedian_dim(self: Any, dim: int = -1, keepdim: bool = False) -> tuple:
    lines, rows = _lines(self, dim)
    order = np.argsort(lines, axis=-1, kind="stable")  # NaNs sort last
    valid = (~np.isnan(lines)).sum(-1) if lines.dtype.kind == "f" else np.full(
        len(lines), lines.shape[1])
    k = np.maximum((valid - 1) // 2, 0)
    idx = order[np.arange(len(lines)), k]
    vals = lines[np.arange(len(lines)), idx]
    return _finish(self, vals, idx, rows, dim, keepdim)


def _nanmedian(self: Any) -> Any:
    xp = _backend.namespace_of(self)
    arr = _backend.to_numpy(self).reshape(-1)
    if arr.dtype.kind == "f":
        arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return xp.asarray(np.array(np.nan, dtype=self.dtype))
    return xp.asarray(np.sort(arr)[(arr.size - 1) // 2])


def select_backward(grad: Tensor, self_shape: tuple, indices: Tensor, dim: int,
                    keepdim: bool) -> Tensor:
    """Zeros of `self_shape` with `grad` at `indices` (``value_selecting_reduction_backward``)."""
    if not self_shape:
        return grad.reshape(())
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return bind(P["scatter"], (zeros_of(grad, self_shape), indices, grad), {"dim": dim})


def _select_jvp(t: Tensor, result1: Tensor, dim: int, keepdim: bool) -> Tensor:
    if t.ndim == 0:
        return t
    idx = result1 if keepdim else result1.unsqueeze(dim)
    out = bind(P["gather"], (t, idx), {"dim": dim})
    return out if keepdim else out.squeeze(dim)


def select_op(name: str, impl: Any, node: str, params: tuple = ("dim", "keepdim")) -> None:
    """Register a reduction returning (values, indices) whose gradient goes to the picked
    elements (``value_selecting_reduction_backward``)."""
    defop(
        name,
        impl=impl,
        params=params,
        num_outputs=2,
        nondifferentiable_outputs=(1,),
        saves=("result1",),
        node_name=node,
        vjp={"self": lambda grads, self_shape, result1, dim, keepdim: select_backward(
            grads[0], self_shape, result1, dim, keepdim)},
        jvp={"self": lambda t, result1, dim, keepdim: (_select_jvp(t, result1, dim, keepdim),
                                                       None)},
    )


select_op("mode", _mode, "ModeBackward0")
select_op("nanmedian_dim", _nanmedian_dim, "NanmedianBackward1")


def _evenly(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """`grad` shared among the elements equal to `result` (NaN matching NaN), written into
    zeros as ATen's ``masked_fill_``: where nothing matches (a result written in place since)
    the gradient is 0, not 0 * inf."""
    mask = (self == result) | (self.isnan() & result.isnan())
    share = grad / mask.to(grad.dtype).sum()
    return zeros_of(grad, tuple(self.shape)).masked_fill(mask, share)  # type: ignore


defop(
    "nanmedian",
    impl=_nanmedian,
    saves=("self", "result"),
    node_name="NanmedianBackward0",
    vjp={"self": _evenly},
    jvp={"self": lambda t, self, result: _evenly_read(t, self, result)},
)


def _evenly_read(t: Tensor, self: Tensor, result: Tensor) -> Tensor:
    mask = ((self == result) | (self.isnan() & result.isnan())).to(t.dtype)
    return (mask * t).sum() / mask.sum()


# vmap: `dim` is a logical dimension, shifted past the batch dimension (as max_dim / sort)
from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import dim_params as _dim_params  # noqa: E402

_batches(["mode", "nanmedian_dim"], _dim_params("dim", none_all=False))

# meta: the results' metadata without the host kernel
from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["mode", "nanmedian_dim"], _meta_shapes.select)
_meta_shapes.shapes(["nanmedian"], _meta_shapes.scalar)
