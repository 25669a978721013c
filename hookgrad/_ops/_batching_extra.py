"""Batching rules of strided views, index writes, ``take``, group norm, matrix functions,
``_trilinear``, unpooling and packing (see ``_batching.py``).

Layer 3. Same calling convention as the other rule modules: physical inputs with the batch at
dimension 0, `flags` saying which are batched, physical outputs returned.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import hookgrad._ops.layers  # noqa: F401  (max_unpool primitives get rules below)
import hookgrad._ops.matrix_exp  # noqa: F401  (linalg_matrix_exp, linalg_solve_ex)
import hookgrad._ops.nn_module_ops  # noqa: F401  (_trilinear)
import hookgrad._ops.normalization  # noqa: F401  (native_group_norm)
import hookgrad._ops.packing  # noqa: F401  (_pack_padded_sequence and its backward)
import hookgrad._ops.rnn  # noqa: F401  (mkldnn_rnn_layer)
import hookgrad._ops.ctc  # noqa: F401  (_ctc_loss and its backward)
import hookgrad._ops.frexp_unique  # noqa: F401  (unique_consecutive)
import hookgrad._ops.scatter_reduce  # noqa: F401  (index_reduce, put)
import hookgrad._ops.value_select  # noqa: F401  (nanmedian)
from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops import _batching_shape  # noqa: F401  (its index rule is wrapped below)
from hookgrad._ops._batching import (
    align, batches, expand_batch, guard_index, logical_ndim, out_of_range, shift_dim,
)
from hookgrad._ops._batching_nn import _none_means_loop, leading
from hookgrad._ops.registry import PRIMITIVES, Primitive
from hookgrad._tensor import Tensor

__all__: list[str] = []

_MASK = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
         "support this because for each batch this would return a differently shaped Tensor. "
         "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
         "feature.")


_DYNAMIC = ("vmap: We do not support batching operators that can output dynamic shape. "
            "Attempted to vmap over aten::{}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")


def _arange(size: int, like: Any) -> Tensor:
    return Tensor._make(np.arange(size, dtype=np.int64)).to(like.dtype)


# ------------------------------------------------------------------------------ strided views
def _as_strided(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    """Sample i reads the logical geometry from its own start (PyTorch's rule: offset
    ``+ i * x.stride(batch_dim)``), so the batch stride goes in front."""
    x = args[0]
    data = x._data
    step = data.strides[0] // data.itemsize if data.ndim else 0
    new = {**params, "size": (size,) + tuple(params["size"]),
           "stride": (step,) + tuple(params["stride"]),
           "self_geometry": tuple(s // data.itemsize for s in data.strides)}
    return bind(prim, (x,), new, cast)


# ------------------------------------------------------------------------------- index writes
def _index_add(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    """Batch and indexed dimension merged into one: each sample's indices offset into it."""
    x, index, src = (expand_batch(a, f, size) for a, f in zip(args, flags))
    nd = x.dim() - 1
    if not nd or src.dim() != x.dim():
        return None  # 0-d samples: the loop
    d = shift_dim(params["dim"], nd)
    xm, sm = x.movedim(d, 1), src.movedim(d, 1)
    n, rest = xm.shape[1], tuple(xm.shape[2:])
    idx = index.reshape((size, -1))
    k = idx.shape[1]
    idx = offset_rows(idx, n, size)
    out = bind(prim, (xm.reshape((size * n,) + rest), idx.reshape((size * k,)),
                      sm.reshape((size * k,) + rest)), {**params, "dim": 0}, cast)
    return out.reshape((size, n) + rest).movedim(1, d)


def offset_rows(idx: Any, n: int, size: int) -> Any:
    """Row i of `idx` ``(B, k)`` (positions in ``[0, n)``) moved to ``i * n + idx`` in the
    merged ``B * n`` range. A position outside ``[0, n)`` (which the surface checked only for
    sample 0) becomes ``B * n``, out of the merged range, so the primitive raises its
    IndexError instead of writing into a neighbouring sample."""
    moved = idx + (_arange(size, idx) * n).reshape((size, 1))
    return moved + out_of_range(idx, n) * (size * n - moved)


def _put(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
         level: int) -> Any:
    """``put`` on the physical tensor (it writes through the flat view, batch first): each
    sample's flat indices (negative ones wrapped, as put does) offset into its own block."""
    x, index, src = (expand_batch(a, f, size) for a, f in zip(args, flags))
    n = max(math.prod(tuple(x.shape)[1:]), 1)
    idx = index.reshape((size, -1))
    idx = idx + (idx < 0).to(idx.dtype) * n
    return bind(prim, (x, offset_rows(idx, n, size), src), params, cast)


def _is_mask(i: Any) -> bool:
    return str(getattr(i, "dtype", "")).endswith("bool")


def _index_put(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    """``x[i, j] = v`` with unbatched indices: a full slice for the batch dimension in front,
    values aligned to the indexed result (NumPy's placement of separated index dims kept)."""
    x, v = expand_batch(args[0], flags[0], size), args[1]
    per = per_sample_indices(params["indices"], level, size)
    if per is not None:
        return index_put_batched(prim, x, v, flags[1], per, params, cast, size)
    indices = tuple(params["indices"])
    used = [k for k, i in enumerate(indices) if i is not None]
    adv = max((1 if _is_mask(indices[k]) else indices[k].ndim for k in used), default=0)
    consumed = sum(indices[k].ndim if _is_mask(indices[k]) else 1 for k in used)
    rank = x.dim() - 1 - consumed + adv  # the logical rank of x[indices]
    separated = bool(used) and used != list(range(used[0], used[-1] + 1))
    if separated:  # NumPy puts the index dims first, before the batch dimension
        v = align(expand_batch(v, flags[1], size), rank).movedim(0, adv)
    elif flags[1]:
        v = align(v, rank)
    return bind(prim, (x, v), {**params, "indices": (None,) + indices}, cast)


def _take(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
          level: int) -> Any:
    """Each sample's flat view gathered at its indices (negative ones wrapped, as take does)."""
    x, index = args
    flat = expand_batch(x, flags[0], size).reshape((size, -1))
    n = flat.shape[1]
    idx = expand_batch(index, flags[1], size)
    shape = tuple(idx.shape)
    idx = idx.reshape((size, -1))
    idx = idx + (idx < 0).to(idx.dtype) * n
    if flags[1]:  # a per-sample index below -n must raise, not wrap twice
        idx = guard_index(idx, n)
    out = bind(PRIMITIVES["gather"], (flat, idx), {"dim": 1, "sparse_grad": False}, cast)
    return out.reshape(shape)


def _masked_select(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                   size: int, level: int) -> Any:
    if flags[1]:
        raise RuntimeError(_MASK)
    x, mask = args
    nd = max(logical_ndim(x, True), mask.dim())
    out = bind(prim, (align(x, nd), mask), params, cast)
    return out.reshape((size, -1))


# ---------------------------------------------------------------------------- normalisation
def _group_norm(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    """The batch folded into N; per-sample affine parameters applied after normalising."""
    x, w, b = args
    x = expand_batch(x, flags[0], size)
    n = params["N"]
    shape = tuple(x.shape)
    affine_batched = flags[1] or flags[2]
    empty = Tensor._make(namespace_of(x._data).empty((0,), dtype=x._data.dtype))
    ws = (empty, empty) if affine_batched else (w, b)
    out, mean, rstd = bind(prim, (x.reshape((size * n,) + shape[2:]),) + ws,
                           {**params, "N": size * n}, cast)
    out = out.reshape(shape)
    if affine_batched:
        tail = (1,) * (len(shape) - 3)
        for t, f, mul in ((w, flags[1], True), (b, flags[2], False)):
            if t.numel() == 0 and not f:
                continue
            t = t.reshape((size, 1, shape[2]) + tail) if f else t.reshape((shape[2],) + tail)
            out = out * t if mul else out + t
    g = params["group"]
    return out, mean.reshape((size, n, g)), rstd.reshape((size, n, g))


# ------------------------------------------------------------------------- matrix functions
def _solve(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
           level: int) -> Any:
    """``solve(A, B)``: B's vector-ness read from the logical shapes, batch dims aligned."""
    A, B = args
    la = logical_ndim(A, flags[0])
    b_shape = tuple(B.shape)[1:] if flags[1] else tuple(B.shape)
    a_shape = tuple(A.shape)[1:] if flags[0] else tuple(A.shape)
    vector = len(b_shape) == 1 or b_shape == a_shape[:-1]
    if vector:
        B = B.unsqueeze(-1)
    lb = logical_ndim(B, flags[1]) if not vector else len(b_shape) + 1
    rank = max(la, lb)
    A = align(A, rank) if flags[0] else A
    B = align(B, rank) if flags[1] else B
    if not flags[0]:
        A = expand_batch(A, False, size)
    out = bind(prim, (A, B), params, cast)
    return out.squeeze(-1) if vector else out


# ------------------------------------------------------------------------------- _trilinear
def _trilinear(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    """The einsum equation with a fresh letter for the batch on batched operands and output."""
    eq = params["equation"]
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                  if c not in eq)
    lhs, out = eq.split("->")
    ops = [(letter + o if f else o) for o, f in zip(lhs.split(","), flags)]
    return bind(prim, tuple(args), {**params, "equation": ",".join(ops) + "->" + letter + out},
                cast)


# ---------------------------------------------------------------------------------- packing
def _pack(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
          level: int) -> Any:
    """The vmap batch moved behind the (time, sequence) dims: packed rows carry it along."""
    x = args[0]
    return bind(prim, (x.movedim(0, 2),), params, cast).movedim(1, 0)


def _unpack(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            level: int) -> Any:
    g = args[0]
    want = tuple(params["input_size"])
    new = {**params, "input_size": want[:2] + (size,) + want[2:]}
    return bind(prim, (g.movedim(0, 1),), new, cast).movedim(2, 0)


# ------------------------------------------------------------------------------ LSTM layer
def _lstm_layer(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    """Shared weights: the batch folded into the layer's N. The workspace (an opaque buffer
    read only by the array-mode backward of the folded call, which an outer ``grad``
    records) is returned split evenly over the samples; the per-sample backward of
    ``vmap(grad)`` recomputes the recurrence with ops and never reads it."""
    x, w0, w1, w2, w3, hx, cx = args
    if any(flags[1:5]) or params.get("batch_sizes"):
        return None  # per-sample weights or packed input: the loop
    xb = expand_batch(x, flags[0], size)
    t, n = xb.shape[1], xb.shape[2]
    folded = xb.movedim(0, 1).reshape((t, size * n) + tuple(xb.shape[3:]))
    h = expand_batch(hx, flags[5], size).reshape((size * n, -1))
    c = expand_batch(cx, flags[6], size).reshape((size * n, -1))
    y, hy, cy, ws = bind(prim, (folded, w0, w1, w2, w3, h, c), params, cast)
    return (y.reshape((t, size, n, -1)).movedim(1, 0), hy.reshape((size, n, -1)),
            cy.reshape((size, n, -1)), ws.reshape((size, -1)))


batches(["mkldnn_rnn_layer"], _none_means_loop(_lstm_layer))
batches(["_pack_padded_sequence"], _pack)
batches(["_pack_padded_sequence_backward"], _unpack)
_PLAIN_INDEX = PRIMITIVES["index"].batch


def _index(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
           level: int) -> Any:
    per = per_sample_indices(params["indices"], level, size)
    if per is None:
        return _PLAIN_INDEX(prim, args, flags, params, cast, size, level)
    return index_batched(prim, expand_batch(args[0], flags[0], size), per, params, cast)


batches(["index"], _index)
batches(["as_strided"], _as_strided)
batches(["index_add", "index_reduce"], _none_means_loop(_index_add))
batches(["put"], _put)
batches(["index_put"], _index_put)
batches(["take"], _take)
batches(["masked_select"], _masked_select)
batches(["native_group_norm"], _group_norm)
batches(["linalg_solve_ex"], _solve)
batches(["linalg_matrix_exp"], leading(2))
batches(["_trilinear"], _trilinear)
batches(["max_unpool2d"], leading(2))
batches(["max_unpool3d"], leading(3))


# ------------------------------------------------------------------- per-sample index tensors
_BOOL_INDEX = ("vmap: We do not support batching operators that can support dynamic shape. "
               "Attempting to batch over indexing with a boolean mask.")


def per_sample_indices(indices: Any, level: int, size: int) -> tuple | None:
    """``x[i]`` with index tensors batched at `level`: the physical index tuple, with the
    sample number as a leading index (None when no index tensor is batched).

    The ``indices`` param holds host arrays read from the logical tensors (sample 0's values
    for a batched one); its ``originals`` are the tensors themselves, so they are used here.
    Returns ``(indices, ishape_rank, first_position, contiguous)``.
    """
    originals = getattr(indices, "originals", ())
    if not any(getattr(o, "_bt_level", None) == level for o in originals):
        return None
    positions = [k for k, i in enumerate(indices) if i is not None]
    out, keep, p = list(indices), [], 0
    for o in originals:
        batched = getattr(o, "_bt_level", None) == level
        if str(o.dtype).endswith("bool"):
            if batched:
                raise RuntimeError(_BOOL_INDEX)
            p += o.dim()
            continue
        pos = positions[p]
        p += 1
        if batched:
            out[pos] = o._bt_value
    rank = max(out[k].dim() - 1 if isinstance(out[k], Tensor) else np.ndim(out[k])
               for k in positions)
    for k in positions:
        e = out[k]
        if isinstance(e, Tensor):  # per-sample: (B, *ishape) padded to (B, 1.., *ishape)
            e = e.reshape((size,) + (1,) * (rank + 1 - e.dim()) + tuple(e.shape)[1:])
            # a placeholder when batched at an outer level too (its originals entry rules)
            out[k] = np.asarray(e._data)
        keep.append(e if isinstance(e, Tensor) else Tensor._make(np.asarray(e)))
    lead = np.arange(size, dtype=np.int64).reshape((size,) + (1,) * rank)
    from hookgrad._ops.indexing import with_originals

    new = with_originals((lead,) + tuple(out), [Tensor._make(lead)] + keep)
    contiguous = positions == list(range(positions[0], positions[-1] + 1))
    return new, rank, positions[0], contiguous


def index_batched(prim: Primitive, x: Any, per: tuple, params: dict, cast: Any) -> Any:
    """``index`` with per-sample index tensors (`per` from `per_sample_indices`)."""
    new, rank, first, contiguous = per
    out = bind(prim, (x,), {**params, "indices": new}, cast)
    if contiguous and first:  # the index dims come first; logically they follow `first` dims
        n = out.dim()
        order = [0] + list(range(1 + rank, 1 + rank + first)) + list(range(1, 1 + rank)) + \
            list(range(1 + rank + first, n))
        out = out.permute(tuple(order))
    return out


def index_put_batched(prim: Primitive, x: Any, v: Any, vflag: bool, per: tuple, params: dict,
                      cast: Any, size: int) -> Any:
    """``index_put`` with per-sample index tensors: values laid out as the physical result."""
    new, rank, first, contiguous = per
    probe = bind(PRIMITIVES["index"], (x,), {"indices": new})  # the physical result's shape
    n = probe.dim()
    v = align(expand_batch(v, vflag, size), n - 1)
    if contiguous and first:
        order = [0] + list(range(1 + first, 1 + first + rank)) + list(range(1, 1 + first)) + \
            list(range(1 + first + rank, n))
        v = v.permute(tuple(order))
    return bind(prim, (x, v), {**params, "indices": new}, cast)


# ------------------------------------------------------------- value selections, dynamic shapes
def whole_median(target: str) -> Any:
    """The whole-tensor median (``median``, ``nanmedian``): each sample's flat values, reduced
    by the dim variant `target` along dimension 1 (empty samples raise that variant's
    IndexError, as PyTorch's rule does)."""

    def rule(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
        n = math.prod(tuple(args[0].shape)[1:])
        if not n:  # the message of the dim variant PyTorch's rule calls
            raise IndexError("median(): Expected reduction dim 1 to have non-zero size.")
        flat = args[0].reshape((size, n))
        return bind(PRIMITIVES[target], (flat,), {"dim": 1, "keepdim": False}, cast)[0]

    return rule


def _dynamic(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
    """An output size read from the values: PyTorch's vmap refuses it (so does this rule)."""
    raise RuntimeError(_DYNAMIC.format(prim.name))


batches(["nanmedian"], whole_median("nanmedian_dim"))
batches(["unique_consecutive"], _dynamic)


# ------------------------------------------------------------------------------------ CTC loss
def _ctc_fold(args: list, flags: list, size: int, params: dict) -> tuple:
    """The batch folded into the loss's N: log-probs ``(T, B*N, C)``, targets ``(B*N, S)``
    (padded) or the samples' concatenations one after another, lengths repeated per sample."""
    lp, tg = (expand_batch(a, f, size) for a, f in zip(args, flags))
    t, n, c = tuple(lp.shape)[1:]
    lp = lp.permute((1, 0, 2, 3)).reshape((t, size * n, c))
    tg = tg.reshape((size * n, tg.shape[-1]) if tg.dim() == 3 else (-1,))
    new = {**params, "input_lengths": tuple(params["input_lengths"]) * size,
           "target_lengths": tuple(params["target_lengths"]) * size}
    return lp, tg, new, n


def _ctc(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
         level: int) -> Any:
    lp, tg, new, n = _ctc_fold(args, flags, size, params)
    nll, alpha = bind(prim, (lp, tg), new, cast)
    return nll.reshape((size, n)), alpha.reshape((size, n) + tuple(alpha.shape)[1:])


def _ctc_backward(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                  level: int) -> Any:
    """grad, nll ``(N,)`` and alpha ``(N, T, L)`` fold B into N like the forward's inputs."""
    lp, tg, new, n = _ctc_fold(args[1:3], flags[1:3], size, params)
    grad, nll, alpha = (expand_batch(a, f, size) for a, f in
                        ((args[0], flags[0]), (args[3], flags[3]), (args[4], flags[4])))
    fold = tuple(b.reshape((size * n,) + tuple(b.shape)[2:]) for b in (grad, nll, alpha))
    g = bind(prim, (fold[0], lp, tg, fold[1], fold[2]), new, cast)
    t, c = g.shape[0], g.shape[2]
    return g.reshape((t, size, n, c)).permute((1, 0, 2, 3))


batches(["_ctc_loss"], _ctc)
batches(["_ctc_loss_backward"], _ctc_backward)
