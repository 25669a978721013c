"""Indexing primitives: advanced indexing, ``index_put``, gather/scatter, ``index_select``...

NOTE [Index params]
Integer index *tensors* of ``gather``/``scatter``/``index_select``/``index_add``/``take`` are
inputs (non-differentiable), as in PyTorch's schemas, so they are saved like any tensor.
Advanced indexing (``index``/``index_put``) takes ``indices``, a tuple with ``None`` for a dim
that is not indexed and an int64 array otherwise (boolean masks already expanded to their
``nonzero`` indices, as PyTorch's ``index`` does): a variable-length mix of tensors and
``None`` is a parameter, not a list of inputs. Impls move the arrays to the data's namespace.
All impls return fresh arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._ops._layout import reorder_dims
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import zeros_of
from hookgrad._tensor import Tensor

_INT = "integer indices are not differentiable"
_MASK = "boolean masks are not differentiable"


class IndexTuple(tuple):
    """An ``indices`` param that also carries the index tensors as the caller gave them.

    ``originals`` (tensors: a boolean mask unexpanded, a list as an int64 tensor) are what the
    node saves, so saved-tensor hooks pack what PyTorch's ``IndexBackward0`` packs; the tuple
    itself holds the expanded int64 arrays the impls use (NOTE [Index params]).
    """

    originals: tuple = ()


def with_originals(indices: tuple, originals: list) -> IndexTuple:
    out = IndexTuple(indices)
    out.originals = tuple(originals)
    return out


def np_index(indices: tuple, xp: Any = np) -> tuple:
    """The array-library index tuple for an ``indices`` param (NOTE [Index params])."""
    return tuple(slice(None) if i is None else xp.asarray(i) for i in indices)


def const(arr: Any) -> Tensor:
    return Tensor._make(arr)


# ---------------------------------------------------------------------------- index / index_put
def _index_impl(self: Any, indices: tuple) -> Any:
    res = self[np_index(indices, _backend.namespace_of(self))]
    if res.ndim < 2:
        return res
    perm = _index_layout(self, indices, res.shape)
    if res.strides == _strides_for(res, perm):
        return res
    return _with_layout(res, perm)


def _strides_for(res: Any, perm: list) -> tuple:
    out = [0] * res.ndim
    step = res.itemsize
    for d in perm:
        out[d] = step
        step *= res.shape[d]
    return tuple(out)


# NOTE [Index result layout]
# PyTorch computes ``x[..., idx, ...]`` with a TensorIterator over the source restrided to the
# result's shape (stride 0 along the index dims) and each index tensor restrided likewise (stride 0
# along the other dims); the output takes the dim order TensorIterator's ``reorder_dimensions``
# derives from those operands. Non-adjacent indices are first moved to the front. NumPy lays the
# result out otherwise (``x[:, [0, 1]]`` comes out column-major), so `_index_impl` reproduces
# PyTorch's ordering and copies into it: strides and ``is_contiguous`` then match, and with them
# what ``contiguous()``/``view`` do with the result.
def _index_layout(self: Any, indices: tuple, shape: tuple) -> list:
    """Dims of the result from fastest to slowest, as PyTorch's TensorIterator orders them."""
    dims = [d for d, i in enumerate(indices) if i is not None]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    item = self.itemsize
    src = [st // item for st in self.strides]
    idx = [i for i in indices if i is not None]
    ishape = np.broadcast_shapes(*[i.shape for i in idx])
    if adjacent:
        before, after = src[: dims[0]], src[dims[-1] + 1 :]
    else:  # the indexed dims go to the front, the others keep their order
        before, after = [], [src[d] for d in range(self.ndim) if d not in dims]
    k = len(ishape)
    ops = [before + [0] * k + after]
    for i in idx:
        b = np.broadcast_to(i, ishape)
        ops.append([0] * len(before) + [st // b.itemsize for st in b.strides] + [0] * len(after))
    return reorder_dims(shape, ops)


def _with_layout(res: Any, perm: list) -> Any:
    xp = _backend.namespace_of(res)
    slow = perm[::-1]
    buf = xp.empty(tuple(res.shape[d] for d in slow), dtype=res.dtype)
    out = buf.transpose(tuple(int(j) for j in np.argsort(slow)))
    out[...] = res
    return out


def _index_put_impl(self: Any, values: Any, indices: tuple, accumulate: bool = False) -> Any:
    xp = _backend.namespace_of(self)
    out = xp.array(self, order="K")  # PyTorch clones with the input's layout
    idx = np_index(indices, xp)
    if accumulate:
        xp.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def index_put_tensor(self: Tensor, values: Tensor, indices: tuple, accumulate: bool) -> Tensor:
    return bind(P["index_put"], (self, values), {"indices": indices, "accumulate": accumulate})


def index_tensor(self: Tensor, indices: tuple) -> Tensor:
    return bind(P["index"], (self,), {"indices": indices})


defop(
    "index",
    impl=_index_impl,
    params=("indices",),
    vjp={
        "self": lambda grad, self_shape, indices: index_put_tensor(
            zeros_of(grad, self_shape), grad, indices, True
        )
    },
    jvp="linear",
)


def _index_put_self(grad: Tensor, indices: tuple, accumulate: bool) -> Tensor:
    if accumulate:
        return grad
    return index_put_tensor(grad, zeros_of(grad, ()), indices, False)


defop(
    "index_put",
    impl=_index_put_impl,
    inputs=("self", "values"),
    params=("indices", "accumulate"),
    vjp={
        "self": _index_put_self,
        "values": lambda grad, indices, values_shape: index_tensor(grad, indices).sum_to_size(
            values_shape
        ),
    },
    jvp="linear",
)


# ---------------------------------------------------------------------------- gather / scatter
def scatter_index(index: Any, dim: int) -> tuple:
    """Full index tuple addressing ``self[..., index[i], ...]`` for every position i of index."""
    xp = _backend.namespace_of(index)
    out = []
    for d, n in enumerate(index.shape):
        if d == dim:
            out.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            out.append(xp.arange(n).reshape(shape))
    return tuple(out)


def _at_least_1d(fn: Any, out_like_index: bool = False) -> Any:
    """Run an impl on 1-D reshapes of 0-d inputs (PyTorch allows 0-d gather/scatter)."""

    def impl(self: Any, index: Any, *rest: Any, **params: Any) -> Any:
        if self.ndim > 0 and index.ndim > 0:
            return fn(self, index, *rest, **params)
        rest = tuple(
            r.reshape(-1) if getattr(r, "ndim", 0) == 0 and hasattr(r, "ndim") else r for r in rest
        )
        out = fn(self.reshape(-1), index.reshape(-1), *rest, **params)
        return out.reshape(index.shape if out_like_index else self.shape)

    return impl


def _gather(self: Any, index: Any, dim: int, sparse_grad: bool = False) -> Any:
    return self[scatter_index(index, dim)]


def _scatter(self: Any, index: Any, src: Any, dim: int) -> Any:
    out = self.copy()
    out[scatter_index(index, dim)] = src[tuple(slice(0, n) for n in index.shape)]
    return out


def _scatter_value(self: Any, index: Any, dim: int, value: Any) -> Any:
    out = self.copy()
    out[scatter_index(index, dim)] = value
    return out


def _scatter_add(self: Any, index: Any, src: Any, dim: int) -> Any:
    out = self.copy()
    xp = _backend.namespace_of(self)
    xp.add.at(out, scatter_index(index, dim), src[tuple(slice(0, n) for n in index.shape)])
    return out


def scatter_value_tensor(self: Tensor, index: Tensor, dim: int, value: Any) -> Tensor:
    return bind(P["scatter_value"], (self, index), {"dim": dim, "value": value})


def gather_tensor(self: Tensor, index: Tensor, dim: int) -> Tensor:
    return bind(P["gather"], (self, index), {"dim": dim})


defop(
    "gather",
    impl=_at_least_1d(_gather, True),
    inputs=("self", "index"),
    params=("dim", "sparse_grad"),
    saves=("index", "self"),  # PyTorch's GatherBackward0 saves self too (its pack calls)
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad, self_shape, index, dim, self: bind(
            P["scatter_add"], (zeros_of(grad, self_shape), index, grad), {"dim": dim}
        )
    },
    jvp="linear",
)

defop(
    "scatter",
    impl=_at_least_1d(_scatter),
    inputs=("self", "index", "src"),
    params=("dim",),
    saves=("index",),
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad, index, dim: scatter_value_tensor(grad, index, dim, 0),
        "src": lambda grad, index, dim: gather_tensor(grad, index, dim),
    },
    jvp="linear",
)

defop(
    "scatter_value",
    impl=_at_least_1d(_scatter_value),
    inputs=("self", "index"),
    params=("dim", "value"),
    saves=("index",),
    node_name="ScatterBackward1",
    nondifferentiable={"index": _INT},
    vjp={"self": lambda grad, index, dim: scatter_value_tensor(grad, index, dim, 0)},
    jvp={"self": lambda t, index, dim: scatter_value_tensor(t, index, dim, 0)},
)

defop(
    "scatter_add",
    impl=_at_least_1d(_scatter_add),
    inputs=("self", "index", "src"),
    params=("dim",),
    saves=("index",),
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad: grad,
        "src": lambda grad, index, dim: gather_tensor(grad, index, dim),
    },
    jvp="linear",
)


# ---------------------------------------------------------------------------- index_select & co
def _dim_index(dim: int, index: Any) -> tuple:
    return (slice(None),) * dim + (index,)


def _index_select(self: Any, index: Any, dim: int) -> Any:
    if self.ndim == 0:
        return self.reshape(-1)[index.reshape(-1)].reshape(())
    return _backend.namespace_of(self).take(self, index.reshape(-1), axis=dim)


def _index_add(self: Any, index: Any, source: Any, dim: int, alpha: Any = 1) -> Any:
    out = self.copy()
    src = source if alpha == 1 else source * alpha
    xp = _backend.namespace_of(self)
    if self.ndim == 0:
        flat = out.reshape(-1)
        xp.add.at(flat, index.reshape(-1), src.reshape(-1))
        return flat.reshape(())
    xp.add.at(out, _dim_index(dim, index.reshape(-1)), src)
    return out


def _index_add_source(
    grad: Tensor, index: Tensor, dim: int, alpha: Any, source_shape: tuple, source: Tensor
) -> Tensor:
    g = bind(P["index_select"], (grad, index), {"dim": dim})
    if alpha != 1:
        g = g * alpha
    return g.reshape(source_shape) if tuple(g.shape) != tuple(source_shape) else g


defop(
    "index_select",
    impl=_index_select,
    inputs=("self", "index"),
    params=("dim",),
    saves=("index",),
    nondifferentiable={"index": _INT},
    vjp={
        "self": lambda grad, self_shape, index, dim: bind(
            P["index_add"],
            (
                zeros_of(grad, self_shape),
                index,
                grad.reshape(_index_select_grad_shape(self_shape, index, dim)),
            ),
            {"dim": dim, "alpha": 1},
        )
    },
    jvp="linear",
)


def _index_select_grad_shape(self_shape: tuple, index: Tensor, dim: int) -> tuple:
    if not self_shape:
        return (index.numel(),)
    return self_shape[:dim] + (index.numel(),) + self_shape[dim + 1 :]


defop(
    "index_add",
    impl=_index_add,
    inputs=("self", "index", "source"),
    params=("dim", "alpha"),
    saves=("index", "source"),  # as PyTorch's IndexAddBackward0 (source for its sizes)
    nondifferentiable={"index": _INT},
    vjp={"self": lambda grad: grad, "source": _index_add_source},
    jvp="linear",
)


def _masked_select(self: Any, mask: Any) -> Any:
    b, m = _backend.namespace_of(self).broadcast_arrays(self, mask)
    return b[m]


def _masked_select_grad(grad: Tensor, self_shape: tuple, mask: Tensor, self: Tensor) -> Tensor:
    m = mask._data
    xp = _backend.namespace_of(m)
    shape = np.broadcast_shapes(tuple(self_shape), m.shape)
    if not shape:  # 0-d: NumPy has no nonzero of a 0-d array
        return index_put_tensor(zeros_of(grad, (1,)), grad, (xp.nonzero(m.reshape(1))[0],),
                                False).reshape(())
    where = xp.nonzero(xp.broadcast_to(m, shape))
    out = index_put_tensor(zeros_of(grad, shape), grad, tuple(where), False)
    return out.sum_to_size(self_shape) if shape != tuple(self_shape) else out


defop(
    "masked_select",
    impl=_masked_select,
    inputs=("self", "mask"),
    saves=("mask", "self"),  # PyTorch's MaskedSelectBackward0 saves self too
    nondifferentiable={"mask": _MASK},
    vjp={"self": _masked_select_grad},
    jvp="linear",
)


def _take_grad(grad: Tensor, self_shape: tuple, index: Tensor, self: Tensor) -> Tensor:
    numel = int(np.prod(self_shape)) if self_shape else 1
    flat = zeros_of(grad, (numel,))
    idx = (index._data.reshape(-1),)
    return index_put_tensor(flat, grad.reshape(-1), idx, True).reshape(self_shape)


defop(
    "take",
    impl=lambda self, index: _backend.namespace_of(self).array(  # row-major, as PyTorch's
        self.reshape(-1)[index], order="C"),
    inputs=("self", "index"),
    saves=("index", "self"),  # PyTorch's TakeBackward0 saves self too
    nondifferentiable={"index": _INT},
    vjp={"self": _take_grad},
    jvp="linear",
)

__all__ = [
    "np_index",
    "index_tensor",
    "index_put_tensor",
    "scatter_index",
    "gather_tensor",
    "scatter_value_tensor",
    "const",
]
