"""ATen-level entry points PyTorch exposes on ``torch``: ``native_layer_norm``,
``native_group_norm``, ``native_batch_norm`` (the normalisation primitives with their saved
statistics), ``native_norm`` (sparse only in PyTorch), ``native_dropout``, ``frobenius_norm``,
``nuclear_norm``, ``unsafe_split_with_sizes``, ``detach_copy`` and ``segment_reduce``.

Mirrors: the ``torch`` functions of the same names.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
import hookgrad._functional.shape as S
from hookgrad._dispatch import bind
from hookgrad._dtypes import bool_
from hookgrad._ops import normalization as _N
from hookgrad._ops._shapes import normalize_dim
from hookgrad._surface.spectral_ops import svdvals
from hookgrad._tensor import Tensor
from hookgrad.nn._functional_norm import _or_empty
from hookgrad.nn.functional import dropout as _dropout

__all__ = ["native_layer_norm", "native_group_norm", "native_batch_norm", "native_norm",
           "native_dropout", "frobenius_norm", "nuclear_norm", "unsafe_split_with_sizes",
           "detach_copy", "segment_reduce"]


def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple:
    """(output, mean, rstd). Mirrors: ``torch.native_layer_norm``."""
    args = (input, _or_empty(weight, input), _or_empty(bias, input))
    return bind(_N.NATIVE_LAYER_NORM, args,
                {"normalized_shape": tuple(normalized_shape), "eps": eps})


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple:
    """(output, mean, rstd) per (sample, group). Mirrors: ``torch.native_group_norm``."""
    args = (input, _or_empty(weight, input), _or_empty(bias, input))
    return bind(_N.NATIVE_GROUP_NORM, args,
                {"N": N, "C": C, "HxW": HxW, "group": group, "eps": eps})


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple:
    """(output, save_mean, save_invstd). Mirrors: ``torch.native_batch_norm``."""
    args = (input, _or_empty(weight, input), _or_empty(bias, input),
            _or_empty(running_mean, input), _or_empty(running_var, input))
    return bind(_N.NATIVE_BATCH_NORM, args,
                {"training": training, "momentum": momentum, "eps": eps})


def native_norm(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Mirrors: ``torch.native_norm``, which PyTorch implements for sparse tensors only: a dense
    input raises NotImplementedError there, and here."""
    raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the 'CPU' "
                              "backend.")


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple:
    """(output, keep mask). Mirrors: ``torch.native_dropout`` (PyTorch's random stream)."""
    if not train or p == 0:
        return input.clone(), C.ones(tuple(input.shape), dtype=bool_)
    out = _dropout(input, p, True)
    mask = out.detach() != 0 if p < 1 else C.zeros(tuple(input.shape), dtype=bool_)
    return out, mask


WARNED: list = []


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """2-norm over `dim` (at most 2 dims). Mirrors: ``torch.frobenius_norm``."""
    if not WARNED:  # PyTorch's TORCH_WARN_ONCE
        WARNED.append(True)
        warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT "
                      "compatibility. It will be removed in a future PyTorch release. Please use "
                      "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                      stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return input.norm(2, dims, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False, *,
                 out: Any = None) -> Tensor:
    """Sum of singular values. Mirrors: ``torch.nuclear_norm``."""
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = (input.dim() - 2, input.dim() - 1) if dim is None else (
        normalize_dim(int(dim[0]), input.dim()), normalize_dim(int(dim[1]), input.dim()))
    moved = input.movedim((d0, d1), (-2, -1))
    res = svdvals(moved).sum(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            res = res.unsqueeze(d)
    return res


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """Mirrors: ``torch.unsafe_split_with_sizes`` (``split_with_sizes`` without view tracking)."""
    return tuple(S.split(input, list(split_sizes), dim))


def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """A detached copy. Mirrors: ``torch.detach_copy``."""
    return input.detach().clone()


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Any = None, offsets: Tensor | None = None, axis: int = 0,
                   unsafe: bool = False, initial: Any = None) -> Tensor:
    """Reduce consecutive segments of `data` along `axis`. Mirrors: ``torch.segment_reduce``.

    Built from ``narrow`` and reductions, so differentiable; an empty segment gives `initial`
    (or the reduction's empty value: 0 for sum, NaN for mean, -inf/+inf for max/min)."""
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    ax = normalize_dim(int(axis), data.dim())
    sizes = (np.diff(np.asarray(offsets.numpy())) if lengths is None
             else np.asarray(lengths.numpy())).reshape(-1)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    parts = []
    for s, n in zip(starts.tolist(), sizes.tolist()):
        seg = data.narrow(ax, s, n)
        if n == 0:
            empty = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "max": float("-inf"),
                     "min": float("inf")}[reduce] if initial is None else initial
            shape = list(data.shape)
            shape[ax] = 1
            parts.append(C.full(tuple(shape), empty, dtype=data.dtype).squeeze(ax))
            continue
        red = {"sum": lambda t: t.sum(ax), "mean": lambda t: t.mean(ax),
               "max": lambda t: t.amax(ax), "min": lambda t: t.amin(ax),
               "prod": lambda t: t.prod(ax)}[reduce](seg)
        if initial is not None and reduce in ("sum", "prod", "max", "min"):
            red = {"sum": lambda r: r + initial, "prod": lambda r: r * initial,
                   "max": lambda r: r.clamp(min=initial),
                   "min": lambda r: r.clamp(max=initial)}[reduce](red)
        parts.append(red)
    return S.stack(parts, ax)


METHODS = {"unsafe_split_with_sizes": unsafe_split_with_sizes}
