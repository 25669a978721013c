"""Batching rules of matmul, convolution, pooling, normalisation and losses (``_batching.py``).

Layer 3. Matrix products fold the batch into a broadcast ``matmul``; a convolution with a
per-sample input folds the batch into N, and one with per-sample weights into groups (the
grouped-convolution trick); pooling-like ops fold every leading dimension into N; losses run
unreduced on the batch and reduce each sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad._ops.linalg_decomp  # noqa: F401  (its primitives get rules below)
import hookgrad._ops.linalg_spectral  # noqa: F401  (eigh, svd, qr: rules below)
import hookgrad._ops.special_fns  # noqa: F401  (i0, ndtri, erfcx...: rules below)
from hookgrad._dispatch import bind
from hookgrad._ops._batching import align, batches, broadcasting, expand_batch, logical_ndim, loop
from hookgrad._ops.registry import PRIMITIVES, Primitive
from hookgrad._tensor import Tensor

__all__: list[str] = []


# ------------------------------------------------------------------------- matrix products
def batched_mm(a: Any, b: Any, fa: bool, fb: bool, size: int) -> Any:
    """``(B, n, k) @ (k, m)`` and kin as one 2-D product where possible (NumPy's stacked
    matmul is far slower than one BLAS call; both batched: one ``bmm``, whose kernel runs the
    outer products of a per-sample weight gradient, k == 1, as an einsum)."""
    mm = PRIMITIVES["mm"]
    if fa and not fb:
        B, n, k = a.shape
        return bind(mm, (a.reshape((B * n, k)), b)).reshape((B, n, b.shape[1]))
    if fb and not fa:
        B, k, m = b.shape
        flat = b.movedim(0, 1).reshape((k, B * m))
        return bind(mm, (a, flat)).reshape((a.shape[0], B, m)).movedim(1, 0)
    return bind(PRIMITIVES["bmm"], (a, b))  # (its kernel runs outer products, k = 1, as einsum)


def _mm(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
        level: int) -> Any:
    a, b = args
    if prim.name == "mm":
        return batched_mm(a, b, flags[0], flags[1], size)
    if prim.name == "mv":
        if flags[0] and not flags[1]:
            B, n, k = a.shape
            return bind(PRIMITIVES["mv"], (a.reshape((B * n, k)), b)).reshape((B, n))
        if flags[1] and not flags[0]:
            # ``A @ v_i`` for every sample is the rows of ``V @ A^T``: one BLAS product (a
            # jacrev's vjp of ``mv`` maps the basis rows through ``A^T`` exactly so)
            return bind(PRIMITIVES["mm"], (b, bind(PRIMITIVES["t"], (a,))))
        # both per sample: one stacked product, without matmul's expand/reshape chain
        return bind(PRIMITIVES["bmm"], (a, b.unsqueeze(-1))).squeeze(-1)
    if prim.name == "dot":
        return (align(a, 1) * b if flags[0] else a * b).sum(-1)
    return a @ b  # bmm: a broadcast matmul of rank-4 stacks


def _addmm(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
           level: int) -> Any:
    c, m1, m2 = args
    if prim.name == "addmm":
        if not flags[1] and not flags[2]:
            prod = expand_batch(bind(PRIMITIVES["mm"], (m1, m2)), False, size)
        else:
            prod = batched_mm(m1, m2, flags[1], flags[2], size)
    else:
        prod = m1 @ m2 if flags[1] or flags[2] else expand_batch(m1 @ m2, False, size)
    rank = 2 if prim.name == "addmm" else 3
    alpha, beta = params.get("alpha", 1), params.get("beta", 1)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    c = align(c, rank) if flags[0] else c
    return prod + (c * beta if beta != 1 else c)


# --------------------------------------------------------------------------- convolution
def _fold_n(x: Any) -> tuple[Any, tuple]:
    shape = tuple(x.shape)
    return x.reshape((shape[0] * shape[1],) + shape[2:]), shape[:2]


def _to_groups(x: Any, size: int, batched: bool) -> Any:
    """(B, N, C, ...) -> (N, B*C, ...); an unbatched (N, C, ...) is expanded first."""
    x = expand_batch(x, batched, size)
    s = tuple(x.shape)
    return x.movedim(0, 1).reshape((s[1], s[0] * s[2]) + s[3:])


def _from_groups(y: Any, size: int) -> Any:
    s = tuple(y.shape)
    return y.reshape((s[0], size, s[1] // size) + s[2:]).movedim(1, 0)


def _conv(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
          level: int) -> Any:
    x, w, bias = args
    if not flags[1] and not flags[2]:
        flat, lead = _fold_n(x)
        y = bind(prim, (flat, w, bias), params, cast)
        return y.reshape(lead + tuple(y.shape)[1:])
    if params["transposed"]:
        return None
    w = expand_batch(w, flags[1], size)
    ws = tuple(w.shape)
    if flags[2] or bias.numel():  # a missing bias is an empty constant
        bias = expand_batch(bias, flags[2], size).reshape((size * ws[1],))
    y = bind(prim, (_to_groups(x, size, flags[0]), w.reshape((size * ws[1],) + ws[2:]), bias),
             {**params, "groups": params["groups"] * size}, cast)
    return _from_groups(y, size)


def _conv_input_grad(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                     size: int, level: int) -> Any:
    g, w = args
    if flags[1] or params["transposed"]:
        return None
    flat, lead = _fold_n(g)
    want = (lead[0] * lead[1],) + tuple(params["input_size"])[1:]
    y = bind(prim, (flat, w), {**params, "input_size": want}, cast)
    return y.reshape(lead + tuple(y.shape)[1:])


def _conv_weight_grad(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                      size: int, level: int) -> Any:
    g, x = args
    if params["transposed"]:
        return None
    ws = tuple(params["weight_size"])
    y = bind(prim, (_to_groups(g, size, flags[0]), _to_groups(x, size, flags[1])),
             {**params, "weight_size": (size * ws[0],) + ws[1:],
              "groups": params["groups"] * size}, cast)
    return y.reshape((size,) + ws)


def _none_means_loop(rule: Any) -> Any:
    """A rule returning None for a case it does not cover hands the call to the loop."""

    def wrapped(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
        out = rule(prim, args, flags, params, cast, size, level)
        if out is None:
            return loop(prim, args, flags, params, cast, size, level)
        return out

    return wrapped


# --------------------------------------------------------------- pooling-like (fold leading)
def leading(core: int, *size_params: str) -> Any:
    """Ops on ``(*lead, *core dims)`` that treat one leading dim as N: fold every leading dim."""

    def rule(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
        xs = [expand_batch(a, f, size) if hasattr(a, "dim") and not a._absent else a
              for a, f in zip(args, flags)]
        lead = tuple(xs[0].shape)[:xs[0].dim() - core]
        n = 1
        for d in lead:
            n *= d
        folded = tuple(x.reshape((n,) + tuple(x.shape)[len(lead):])
                       if hasattr(x, "dim") and not x._absent else x for x in xs)
        new = dict(params)
        for p in size_params:
            if params.get(p) is not None:
                new[p] = (n,) + tuple(params[p])[len(params[p]) - core:]
        out = bind(prim, folded, new, cast)
        if isinstance(out, tuple):
            return tuple(o.reshape(lead + tuple(o.shape)[1:]) for o in out)
        return out.reshape(lead + tuple(out.shape)[1:])

    return rule


def _batch_into_n(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                  size: int, level: int) -> Any:
    """Ops on ``(N, C, *)`` whose samples are independent (``channel_shuffle``): the batch dim
    folds into N, whatever the rank."""
    x = expand_batch(args[0], flags[0], size)
    shape = tuple(x.shape)
    out = bind(prim, (x.reshape((shape[0] * shape[1],) + shape[2:]),), params, cast)
    return out.reshape(shape)


# ------------------------------------------------------------------------- normalisation
def _layer_norm(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    if flags[1] or flags[2]:
        return None
    return bind(prim, tuple(args), params, cast)


_BN_UNBATCHED_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on how "
    "to patch your module to work with vmap")


def _batch_norm(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    """Per-sample batch norm: B folded into N (eval) or into the channels (training)."""
    x, w, b, rm, rv = args
    if params["training"] and flags[0] and ((rm.numel() and not flags[3]) or
                                            (rv.numel() and not flags[4])):
        raise RuntimeError(_BN_UNBATCHED_STATS)  # a batched update of an unbatched buffer
    if any(flags[1:]):
        return None
    if not params["training"]:
        flat, lead = _fold_n(x)
        out, m, r = bind(prim, (flat, w, b, rm, rv), params, cast)
        return (out.reshape(lead + tuple(out.shape)[1:]), expand_batch(m, False, size),
                expand_batch(r, False, size))
    if rm.numel() or rv.numel():
        return None  # batched running stats, updated per sample: the loop
    c = x.shape[2]
    folded = _to_groups(x, size, True)
    w2 = w.repeat((size,)) if w.numel() else w
    b2 = b.repeat((size,)) if b.numel() else b
    out, m, r = bind(prim, (folded, w2, b2, rm, rv), params, cast)
    return _from_groups(out, size), m.reshape((size, c)), r.reshape((size, c))


def _embedding_grad(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                    size: int, level: int) -> Any:
    """Per-sample table gradients: each sample's indices offset into one stacked table."""
    g, idx = expand_batch(args[0], flags[0], size), expand_batch(args[1], flags[1], size)
    pad = params.get("padding_idx")
    if pad is not None and pad >= 0:
        return None
    n = params["num_weights"]
    offs = bind(PRIMITIVES["_nn_mul_scalar"], (_arange(idx, size),), {"other": n})
    shifted = idx + offs.reshape((size,) + (1,) * (idx.dim() - 1))
    out = bind(prim, (g, shifted), {**params, "num_weights": n * size}, cast)
    return out.reshape((size, n) + tuple(out.shape)[1:])


def _arange(idx: Any, size: int) -> Any:
    return Tensor._make(np.arange(size, dtype=idx._data.dtype))


# ---------------------------------------------------------------------------------- losses
def _unreduced(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
               level: int) -> Any:
    """Elementwise losses: unreduced on the aligned batch, then each sample reduced."""
    nd = max(logical_ndim(a, f) for a, f in zip(args, flags))
    xs = tuple(align(expand_batch(a, f, size), nd) for a, f in zip(args, flags))
    out = bind(prim, xs, {**params, "reduction": 0}, cast)
    red = params.get("reduction", 1)
    if red == 0 or not nd:
        return out
    dims = tuple(range(1, out.dim()))
    return out.mean(dims) if red == 1 else out.sum(dims)


def _nll(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
         level: int) -> Any:
    """(N, C) and (N, C, H, W) inputs: the batch folded into N, unreduced, each sample reduced."""
    x, target = expand_batch(args[0], flags[0], size), expand_batch(args[1], flags[1], size)
    if x.dim() != (3 if prim.name == "nll_loss" else 5):
        return None
    xs, ts = tuple(x.shape), tuple(target.shape)
    loss = bind(prim, (x.reshape((size * xs[1],) + xs[2:]), target.reshape((-1,) + ts[2:])),
                {**params, "reduction": 0}, cast).reshape(ts)
    red = params.get("reduction", 1)
    if red == 0:
        return loss
    dims = tuple(range(1, len(ts)))
    if red == 2:
        return loss.sum(dims)
    valid = target != params.get("ignore_index", -100)
    w = params.get("weight")
    if w is not None and not getattr(w, "_absent", False):
        safe = target.clamp(0, xs[2] - 1).reshape((-1,))
        den = (w.index_select(0, safe).reshape(ts) * valid).sum(dims)
    else:
        den = valid.sum(dims).to(loss.dtype)
    return loss.sum(dims) / den


batches(["mm", "mv", "dot", "bmm"], _mm)
batches(["channel_shuffle"], _batch_into_n)
batches(["addmm", "baddbmm"], _addmm)
batches(["convolution"], _none_means_loop(_conv))
batches(["convolution_backward_input"], _none_means_loop(_conv_input_grad))
batches(["convolution_backward_weight"], _none_means_loop(_conv_weight_grad))
batches(["max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d",
         "adaptive_max_pool2d", "upsample_nearest2d", "upsample_bilinear2d",
         "upsample_bicubic2d", "_upsample_nearest_exact2d", "pixel_shuffle", "pixel_unshuffle",
         "reflection_pad2d", "replication_pad2d"], leading(3))
batches(["max_pool2d_with_indices_backward", "avg_pool2d_backward",
         "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d_backward"],
        leading(3, "self_size"))
batches(["max_pool3d_with_indices", "avg_pool3d", "_adaptive_avg_pool3d",
         "adaptive_max_pool3d", "upsample_nearest3d", "upsample_trilinear3d",
         "_upsample_nearest_exact3d", "reflection_pad3d", "replication_pad3d"], leading(4))
batches(["avg_pool3d_backward", "_adaptive_avg_pool3d_backward"], leading(4, "self_size"))
batches(["upsample_nearest1d", "upsample_linear1d", "_upsample_nearest_exact1d",
         "reflection_pad1d", "replication_pad1d"], leading(2))
# matrix functions accept any leading dims, so the batch dim is one more of them
batches(["linalg_inv_ex", "linalg_det", "linalg_logabsdet", "linalg_cholesky_ex",
         "_linalg_det_sign"], leading(2))
batches(["linalg_eigh", "linalg_svd", "linalg_qr"], leading(2))
batches(list(hookgrad._ops.special_fns.SPECIAL), broadcasting)
batches(["native_layer_norm"], _none_means_loop(_layer_norm))
batches(["native_batch_norm"], _none_means_loop(_batch_norm))
batches(["embedding_dense_backward"], _none_means_loop(_embedding_grad))
batches(["upsample_nearest1d_backward", "upsample_linear1d_backward",
         "_upsample_nearest_exact1d_backward"], leading(2, "input_size"))
batches(["upsample_nearest2d_backward", "upsample_bilinear2d_backward",
         "upsample_bicubic2d_backward", "_upsample_nearest_exact2d_backward"],
        leading(3, "input_size"))
batches(["upsample_nearest3d_backward", "upsample_trilinear3d_backward",
         "_upsample_nearest_exact3d_backward"], leading(4, "input_size"))
batches(["max_pool3d_with_indices_backward", "adaptive_max_pool3d_backward"], leading(4))
batches(["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
         "binary_cross_entropy_with_logits"], _unreduced)
batches(["nll_loss", "nll_loss2d"], _none_means_loop(_nll))


def _broadcasting_matrices(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                           size: int, level: int) -> Any:
    # ops that broadcast their inputs' leading dims: the batch dim leads, ranks aligned
    nd = max(a.dim() - (1 if f else 0) for a, f in zip(args, flags))
    xs = [align(expand_batch(a, f, size), nd) for a, f in zip(args, flags)]
    return bind(prim, tuple(xs), params, cast)


import hookgrad._ops.linalg_triangular  # noqa: E402, F401  (its primitive gets a rule here)

batches(["linalg_solve_triangular"], _broadcasting_matrices)


# ---------------------------------------------------- spatial transformer, fractional pools
def _affine_grid(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                 level: int) -> Any:
    """theta ``(B, N, 2|3, 3|4)``: B folded into N, and into the ``size`` parameter's N."""
    (theta,) = args
    flat, lead = _fold_n(theta)
    out_size = (lead[0] * lead[1],) + tuple(params["size"])[1:]
    y = bind(prim, (flat,), {**params, "size": out_size}, cast)
    return y.reshape(lead + tuple(y.shape)[1:])


# input and grid (and the pools' samples / indices) all lead with N: the batch joins it
batches(["grid_sampler_2d", "grid_sampler_2d_backward", "fractional_max_pool2d",
         "fractional_max_pool2d_backward"], leading(3))
batches(["grid_sampler_3d", "grid_sampler_3d_backward", "fractional_max_pool3d",
         "fractional_max_pool3d_backward"], leading(4))
batches(["affine_grid_generator"], _affine_grid)
