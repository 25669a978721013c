"""``scatter_reduce``, ``index_reduce`` and ``put``: reductions of many sources into one slot.

Mirrors: ``torch.scatter_reduce`` (nodes ``ScatterReduceBackward0``), ``torch.index_reduce``
(``IndexReduceBackward0``) and ``torch.put`` (``PutBackward0``). The gradient formulas are
PyTorch's (``scatter_reduce_backward``): amax/amin share the gradient evenly among the tied
winners, prod treats a single zero per slot exactly, and with ``include_self=False`` the
slots that received a source give ``self`` no gradient. The rules call these primitives and
other Tensor ops, so they are differentiable again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._memory_format import empty_for
from hookgrad._ops.indexing import scatter_index
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import zeros_of
from hookgrad._tensor import Tensor

_INT = "an integer index tensor"
REDUCES = ("sum", "prod", "mean", "amax", "amin")
# PyTorch's forward also takes the legacy "max"/"min"; its backward then refuses them
ALIASES = {"max": "amax", "min": "amin"}


def _identity(reduce: str, dtype: Any) -> Any:
    """The value a slot starts from when ``include_self=False`` (the reduction's neutral)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


@_backend.NUMPY.quiet  # NaN and inf inputs reduce silently, as ATen's kernels
def _scatter_reduce(self: Any, index: Any, src: Any, dim: int, reduce: str,
                    include_self: bool = True) -> Any:
    xp = _backend.namespace_of(self)
    if self.ndim == 0 or index.ndim == 0:  # PyTorch treats 0-d operands as 1-element vectors
        out = _scatter_reduce(self.reshape(-1), index.reshape(-1), src.reshape(-1), 0, reduce,
                              include_self)
        return out.reshape(self.shape)
    reduce = ALIASES.get(reduce, reduce)
    where = scatter_index(index, dim)
    vals = src[tuple(slice(0, n) for n in index.shape)]
    out = self.copy()
    if not include_self:
        out[where] = _identity(reduce, out.dtype)
    getattr(xp, _UFUNC[reduce]).at(out, where, vals)
    if reduce == "mean":
        count = xp.ones(self.shape, dtype=np.int64) if include_self else xp.zeros(
            self.shape, dtype=np.int64)
        xp.add.at(count, where, 1)
        hit = count > 0
        if out.dtype.kind == "f":
            out[hit] = out[hit] / count[hit]
        else:
            out[hit] = xp.floor_divide(out[hit], count[hit])
        out[~hit] = self[~hit]
    return out


def scatter_reduce_tensor(self: Tensor, index: Tensor, src: Tensor, dim: int, reduce: str,
                          include_self: bool) -> Tensor:
    return bind(P["scatter_reduce"], (self, index, src),
                {"dim": dim, "reduce": reduce, "include_self": include_self})


def _scatter_zero(t: Tensor, index: Tensor, dim: int) -> Tensor:
    return bind(P["scatter_value"], (t, index), {"dim": dim, "value": 0})


def _gather(t: Tensor, index: Tensor, dim: int) -> Tensor:
    return bind(P["gather"], (t, index), {"dim": dim})


def _scatter_add(t: Tensor, index: Tensor, src: Tensor, dim: int) -> Tensor:
    return bind(P["scatter_add"], (t, index, src), {"dim": dim})


def _src_view(src: Tensor, index: Tensor) -> Tensor:
    """The part of `src` the op reads (index's extent in every dimension)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _pad_like(g: Tensor, src: Tensor) -> Tensor:
    """Grow a gradient of the read part of `src` back to `src`'s shape with zeros."""
    if tuple(g.shape) == tuple(src.shape):
        return g
    out = src.detach() * 0
    out[tuple(slice(0, n) for n in g.shape)] = g
    return out


def _grads(grad: Tensor, self: Tensor, index: Tensor, src: Tensor, result: Tensor, dim: int,
           reduce: str, include_self: bool) -> tuple[Tensor, Tensor]:
    """(grad_self, grad_src) of PyTorch's ``scatter_reduce_backward``."""
    if reduce not in REDUCES:
        raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if self.ndim == 0 or index.ndim == 0:
        gs, gv = _grads(grad.reshape(-1), self.reshape(-1), index.reshape(-1),
                        src.reshape(-1), result.reshape(-1), 0, reduce, include_self)
        return gs.reshape(self.shape), gv.reshape(src.shape)
    src_r = _src_view(src, index)
    if reduce == "sum":
        g_self, g_src = grad, _gather(grad, index, dim)
    elif reduce == "mean":
        n = grad.detach() * 0 + (1 if include_self else 0)
        n = _scatter_add(n, index, src_r.detach() * 0 + 1, dim)
        n = n.masked_fill(n == 0, 1)
        g_self = grad / n
        g_src = _gather(g_self, index, dim)
    elif reduce == "prod":
        g_self, g_src = _prod_grads(grad, self, index, src_r, result, dim, include_self)
    else:
        value = _gather(result, index, dim)
        self_hit = (self == result).to(grad.dtype)
        src_hit = (src_r == value).to(grad.dtype)
        share = grad / _scatter_add(self_hit, index, src_hit, dim)
        g_self = self_hit * share
        g_src = src_hit * _gather(share, index, dim)
    if not include_self:
        g_self = _scatter_zero(g_self, index, dim)
    return g_self, _pad_like(g_src, src)


def _prod_grads(grad: Tensor, self: Tensor, index: Tensor, src: Tensor, result: Tensor,
                dim: int, include_self: bool) -> tuple[Tensor, Tensor]:
    # a zero factor is replaced by 1 to get the product of the others exactly (no 0/0)
    masked_self = self.masked_fill(self == 0, 1)
    g_self = grad * scatter_reduce_tensor(masked_self, index, src, dim, "prod",
                                          include_self) / masked_self
    src_zero = src == 0
    zeros = _gather(_scatter_add(self.detach() * 0, index, src_zero.to(self.dtype), dim),
                    index, dim)
    single = src_zero & (zeros == 1)
    masked_src_result = scatter_reduce_tensor(self, index, src.masked_fill(single, 1), dim,
                                              "prod", include_self)
    g_src = (_gather(grad * masked_src_result, index, dim)).where(
        single, _gather(grad * result, index, dim) / src.masked_fill(src_zero, 1))
    return g_self, g_src


def _sr_self(grad: Tensor, self: Tensor, index: Tensor, src: Tensor, result: Tensor, dim: int,
             reduce: str, include_self: bool) -> Tensor:
    return _grads(grad, self, index, src, result, dim, reduce, include_self)[0]


def _sr_src(grad: Tensor, self: Tensor, index: Tensor, src: Tensor, result: Tensor, dim: int,
            reduce: str, include_self: bool) -> Tensor:
    return _grads(grad, self, index, src, result, dim, reduce, include_self)[1]


_SR_PARAMS = ("dim", "reduce", "include_self")

defop(
    "scatter_reduce",
    impl=_scatter_reduce,
    inputs=("self", "index", "src"),
    params=_SR_PARAMS,
    saves=("index", "self", "src", "result"),  # PyTorch packs the index first
    node_name="ScatterReduceBackward0",
    nondifferentiable={"index": _INT},
    vjp={"self": _sr_self, "src": _sr_src},
    jvp={
        # the op is piecewise multilinear: its JVP is the VJP's transpose, written directly
        "self": lambda t, self, index, src, result, dim, reduce, include_self: _jvp(
            t, None, self, index, src, result, dim, reduce, include_self),
        "src": lambda t, self, index, src, result, dim, reduce, include_self: _jvp(
            None, t, self, index, src, result, dim, reduce, include_self),
    },
)


def _jvp(t_self: Tensor | None, t_src: Tensor | None, self: Tensor, index: Tensor, src: Tensor,
         result: Tensor, dim: int, reduce: str, include_self: bool) -> Tensor | None:
    """Tangent of the output: the same local weights as the VJP, applied forwards."""
    if reduce == "prod":
        return None  # PyTorch's scatter_reduce_jvp leaves prod's tangent undefined
    one = result.detach() * 0 + 1
    w_self, w_src = _grads(one, self, index, src, result, dim, reduce, include_self)
    out = result.detach() * 0
    if t_self is not None:
        out = out + w_self * t_self
    if t_src is not None:
        contrib = (w_src * t_src)
        out = _scatter_add(out, index, _src_view(contrib, index), dim)
    return out


# ---------------------------------------------------------------------------- index_reduce
def _no_jvp(name: str) -> Any:
    raise NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not been "
        "implemented yet.")


def expand_index(index: Any, dim: int, shape: tuple) -> Any:
    """A 1-D index along `dim` as a full scatter index of `shape` (source's shape)."""
    view = [1] * len(shape)
    if shape:
        view[dim] = -1
    return index.reshape(view) if not shape else _broadcast(index.reshape(view), shape)


def _broadcast(arr: Any, shape: tuple) -> Any:
    if isinstance(arr, Tensor):
        return arr.expand(shape)
    return _backend.namespace_of(arr).broadcast_to(arr, shape)


@_backend.NUMPY.quiet  # NaN and inf inputs reduce silently, as ATen's kernels
def _index_reduce(self: Any, index: Any, source: Any, dim: int, reduce: str,
                  include_self: bool = True) -> Any:
    full = expand_index(index, dim, source.shape)
    return _scatter_reduce(self, full, source, dim, reduce, include_self)


def _ir_grads(grad: Tensor, self: Tensor, index: Tensor, source: Tensor, result: Tensor,
              dim: int, reduce: str, include_self: bool) -> tuple[Tensor, Tensor]:
    full = expand_index(index, dim, tuple(source.shape)).contiguous()
    return _grads(grad, self, full, source, result, dim, reduce, include_self)


defop(
    "index_reduce",
    impl=_index_reduce,
    inputs=("self", "index", "source"),
    params=_SR_PARAMS,
    saves=("index", "self", "source", "result"),  # PyTorch packs the index first
    node_name="IndexReduceBackward0",
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad, self, index, source, result, dim, reduce, include_self: _ir_grads(
            grad, self, index, source, result, dim, reduce, include_self)[0],
        "source": lambda grad, self, index, source, result, dim, reduce, include_self: _ir_grads(
            grad, self, index, source, result, dim, reduce, include_self)[1],
    },
    # PyTorch has no forward-mode formula for index_reduce: it raises NotImplementedError
    jvp={"self": lambda t: _no_jvp("index_reduce"), "source": lambda t: _no_jvp("index_reduce")},
)


# ---------------------------------------------------------------------------- put
def _put(self: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    xp = _backend.namespace_of(self)
    out = self.copy()
    flat = out.reshape(-1)  # a view: `out` is a fresh contiguous copy
    idx = index.reshape(-1)
    vals = source.reshape(-1)
    if accumulate:
        xp.add.at(flat, idx, vals)
    else:
        flat[idx] = vals
    if type(self) is np.ndarray and not self.flags.c_contiguous:
        kept = empty_for(self, "preserve_format")  # PyTorch writes into a clone of `self`
        kept[...] = out
        return kept
    return out


def put_tensor(self: Tensor, index: Tensor, source: Tensor, accumulate: bool) -> Tensor:
    return bind(P["put"], (self, index, source), {"accumulate": accumulate})


defop(
    "put",
    impl=_put,
    inputs=("self", "index", "source"),
    params=("accumulate",),
    saves=("source", "index"),  # PyTorch's PutBackward0 packs source, then index
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad, index, accumulate: grad if accumulate else put_tensor(
            grad, index, zeros_of(grad, tuple(index.shape)), False),
        "source": lambda grad, index, source: grad.reshape(-1)[index.reshape(-1)].reshape(
            source.shape),
    },
    jvp="linear",
)


# vmap: like scatter_add, every input batched in front and `dim` shifted
from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching_shape import _same_rank_dim  # noqa: E402

_batches(["scatter_reduce"], _same_rank_dim)

# meta: the results' metadata without the host kernel
from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["scatter_reduce", "index_reduce"], _meta_shapes.like_self)
_meta_shapes.shapes(["put"], _meta_shapes.kept_layout)
