"""The operations a backward rule computes with: `ARRAY_OPS` on raw arrays, `TENSOR_OPS` on Tensors.

Layer 3 (imports Tensor, `bind` and the backend seam).

NOTE [Rule operations]
A derivative rule is written once, against an operations namespace it takes as its ``ops``
argument (NOTE [Rule arguments] in registry.py). Two objects implement the namespace:

- `ARRAY_OPS` computes on the arrays of the backend, with no Tensor objects and no graph. The rule
  receives ``grad`` and its saved values as arrays; the generated caller (NOTE [Rule plans])
  unwraps them and wraps the returned array into a tensor with no history.
- `TENSOR_OPS` runs hookgrad ops (Tensor methods and `bind`): differentiable, and every op is
  seen by the recorders on the thread's stack (grad recording under ``create_graph``, forward AD,
  a tracer, compiled autograd).

Which one a rule gets is decided by the *engine*, once per graph task: arrays when the pass builds
no graph (``create_graph=False``) and no recorder on the thread's stack ``sees_backward``; hookgrad
ops otherwise. A passive recorder therefore never changes which code runs, and a tracer sees
exactly the rule's operations. Rules called outside the engine (forward AD reusing a VJP formula,
a node applied by hand) get `TENSOR_OPS`. No rule reads global state to pick its operations.

Each operation computes what the hookgrad op of the same name computes, on the same operand
dtypes, so that both namespaces give the same values (bit-identical where the array operation is
the NumPy call the op's impl makes; tests/autograd/test_rule_operations.py checks every OpSpec).
Mixed-dtype binary operations follow PyTorch's promotion in both. ``ops.graph`` is True for
`TENSOR_OPS`: a rule may consult it only where PyTorch's formula itself differs when the result
must be differentiable (e.g. statistics recomputed from the input instead of read from saved,
non-differentiable outputs); each such place says why.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._dtypes import from_numpy_dtype, result_type_of
from hookgrad._ops._elementwise import quiet, unbroadcast_arr
from hookgrad._ops._layout import iterator_layout
from hookgrad._ops._matmul import mm_arrays
from hookgrad._ops.registry import PRIMITIVES, Primitive
from hookgrad._tensor import Tensor

_make = Tensor._make
_ndarray = np.ndarray
_EMPTY: dict = {}


_SCALARS = (np.generic, int, float, bool, complex)


def as_array(res: Any) -> Any:
    """`res` as an array: NumPy returns scalars for 0-d results, tensors always hold arrays.
    Arrays of another backend (NOTE [Backends]) are kept as they are."""
    if type(res) is _ndarray or not isinstance(res, _SCALARS):
        return res
    return np.asarray(res)


def expand_arr(a: Any, shape: tuple) -> Any:
    """``broadcast_to(a, shape)``: a read-only view repeating `a` along its size-1 dims.

    NumPy's ``broadcast_to`` spends about 2 us in Python code per call, more than the rules
    that use it on small tensors; a C-contiguous NumPy array is viewed directly with zero
    strides instead (other arrays go through their namespace's ``broadcast_to``).
    """
    if type(a) is not np.ndarray or not a.flags.c_contiguous:
        return namespace_of(a).broadcast_to(a, shape)
    lead = len(shape) - a.ndim
    strides = (0,) * lead + tuple(
        0 if n == 1 and m != 1 else st
        for st, n, m in zip(a.strides, a.shape, shape[lead:], strict=True))
    out = np.ndarray(shape, a.dtype, a, 0, strides)
    out.flags.writeable = False  # as broadcast_to: elements share memory
    return out


def _promoted(a: Any, b: Any) -> tuple[Any, Any]:
    """`a`, `b` cast to PyTorch's result dtype when two arrays of different dtypes meet.

    NumPy promotes ``float32`` with a 0-d ``float64`` to ``float64``; PyTorch keeps ``float32``
    (a 0-d tensor is a lower priority tier). Python numbers are left to NumPy's weak-scalar rule,
    which agrees with PyTorch's for the float operands of derivative formulas.
    """
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if da is None or db is None or da == db:
        return a, b
    dims, zero = [], []
    for d, x in ((da, a), (db, b)):
        (dims if x.ndim else zero).append(from_numpy_dtype(d))
    target = result_type_of(dims, zero, []).np
    return (a if da == target else a.astype(target)), (b if db == target else b.astype(target))


def _count(shape: tuple, axis: tuple) -> int:
    n = 1
    for d in axis:
        n *= shape[d]
    return n


_mul = quiet(np.multiply)
_div = quiet(np.true_divide)
_exp = quiet(np.exp)



class _Held:
    """An array where a layout step expects a tensor (it reads only ``_data``)."""

    __slots__ = ("_data",)

    def __init__(self, data: Any) -> None:
        self._data = data

class ArrayOps:
    """Rule operations on raw arrays: no tensors, no graph (NOTE [Rule operations])."""

    graph = False

    @staticmethod
    def data(x: Any) -> Any:
        """The raw array of a rule value (itself here), for masks and other constants."""
        return x

    @staticmethod
    def const(arr: Any) -> Any:
        """A raw array (a mask, a constant) as a rule value with no history."""
        return arr

    @staticmethod
    def call(prim: Primitive, inputs: tuple, params: dict = _EMPTY) -> Any:
        """Primitive `prim` on `inputs`: its array impl, exactly what `bind` would compute."""
        res = prim.impl(*inputs, **params) if params else prim.impl(*inputs)
        if prim.layout is not None:  # the result layout step `bind` runs too
            res = prim.layout(res, tuple(_Held(a) for a in inputs))
        if prim.num_outputs == 1:
            return res if type(res) is _ndarray else as_array(res)
        return tuple(as_array(r) for r in res)

    @staticmethod
    def mm(a: Any, b: Any) -> Any:
        """Matrix product of two matrices (``Tensor.mm``; NOTE [np.dot for matrix products])."""
        return mm_arrays(a, b)

    @staticmethod
    def bmm(a: Any, b: Any) -> Any:
        """Batched matrix product (``Tensor.bmm``)."""
        return a @ b

    @staticmethod
    def mT(a: Any) -> Any:
        """The last two dims swapped (``Tensor.mT``; ``t()`` of a matrix)."""
        return a.swapaxes(-1, -2)

    @staticmethod
    def t(a: Any) -> Any:
        """Transpose of a matrix, a vector or a 0-d array as itself (``Tensor.t``)."""
        return a.T

    @staticmethod
    def transpose(a: Any, d0: int, d1: int) -> Any:
        """Two dims swapped (``Tensor.transpose``)."""
        return a.swapaxes(d0, d1)

    @staticmethod
    def outer(a: Any, b: Any) -> Any:
        """Outer product of two vectors (``Tensor.outer``)."""
        return _mul(a[:, None], b)

    @staticmethod
    def mv(a: Any, v: Any) -> Any:
        """Matrix-vector product (``Tensor.mv``)."""
        return mm_arrays(a, v)

    @staticmethod
    def sum(a: Any, dims: Sequence[int], keepdim: bool = False) -> Any:
        """Sum over `dims` (``Tensor.sum(dims, keepdim)``; a 0-d array is its own sum)."""
        res = a.sum(axis=tuple(dims) if a.ndim else None, keepdims=keepdim)
        return res if type(res) is _ndarray else as_array(res)

    @staticmethod
    def sum_to_size(a: Any, shape: Sequence[int]) -> Any:
        """Sum broadcast dims away down to `shape` (no-op when equal; ``Tensor.sum_to_size``)."""
        if a.shape == shape and type(a) is _ndarray:
            return a
        return unbroadcast_arr(a, tuple(shape))

    @staticmethod
    def reshape(a: Any, shape: Sequence[int]) -> Any:
        """``Tensor.reshape``."""
        return a.reshape(shape)

    @staticmethod
    def expand(a: Any, shape: Sequence[int]) -> Any:
        """A broadcast view of `a` at `shape` (``Tensor.expand``)."""
        return expand_arr(a, tuple(shape))

    @staticmethod
    def flip(a: Any, dim: int) -> Any:
        """``Tensor.flip(dim)`` (a copy, as PyTorch's: no negative strides leak into grads)."""
        return namespace_of(a).flip(a, dim).copy()

    @staticmethod
    def cumsum(a: Any, dim: int) -> Any:
        """``Tensor.cumsum(dim)``."""
        return namespace_of(a).cumsum(a, axis=dim)

    @staticmethod
    def mul(a: Any, b: Any) -> Any:
        """``a * b`` with PyTorch's type promotion."""
        if type(a) is not _ndarray or type(b) is not _ndarray or a.dtype is not b.dtype:
            a, b = _promoted(a, b)
        res = _mul(a, b)
        return res if type(res) is _ndarray else as_array(res)

    @staticmethod
    def div(a: Any, b: Any) -> Any:
        """``a / b`` with PyTorch's type promotion (inf/nan without warnings)."""
        if type(b) in (int, float) and type(a) is _ndarray and 0 in a.strides and a.size:
            # a broadcast view (``expand``, mean's backward): PyTorch's result is a fresh
            # tensor in TensorIterator's layout, not a view (NOTE [Elementwise result layout])
            return iterator_layout(_div(a, b), (a,))
        if type(a) is not _ndarray or type(b) is not _ndarray or a.dtype is not b.dtype:
            a, b = _promoted(a, b)
        res = _div(a, b)
        return res if type(res) is _ndarray else as_array(res)

    @staticmethod
    def sub(a: Any, b: Any) -> Any:
        """``a - b`` with PyTorch's type promotion."""
        a, b = _promoted(a, b)
        return as_array(a - b)

    @staticmethod
    def exp(a: Any) -> Any:
        """``Tensor.exp``."""
        return as_array(_exp(a))

    @staticmethod
    def where(mask: Any, a: Any, b: Any) -> Any:
        """``where(mask, a, b)`` for a raw boolean `mask`; the result has `a`'s dtype."""
        xp = namespace_of(a)
        return xp.where(mask, a, b).astype(a.dtype, copy=False)

    @staticmethod
    def add(a: Any, b: Any) -> Any:
        """``a + b`` with PyTorch's type promotion."""
        a, b = _promoted(a, b)
        return as_array(a + b)

    @staticmethod
    def sign(a: Any) -> Any:
        """``Tensor.sign``."""
        return namespace_of(a).sign(a)

    @staticmethod
    def abs(a: Any) -> Any:
        """``Tensor.abs``."""
        return namespace_of(a).abs(a)

    @staticmethod
    def pow(a: Any, exponent: float) -> Any:
        """``Tensor.pow`` by a number: the ``pow`` primitive's impl."""
        return as_array(PRIMITIVES["pow"].impl(a, exponent))

    @staticmethod
    def mean(a: Any, dims: Sequence[int] | None, keepdim: bool = False) -> Any:
        """Mean over `dims` (None: every dim), as the ``mean`` impl: the sum over the count."""
        axis = None if dims is None else tuple(dims)
        n = a.size if axis is None else _count(a.shape, axis)
        return as_array(_div(a.sum(axis=axis, keepdims=keepdim), n))

    @staticmethod
    def masked_fill(a: Any, mask: Any, value: float) -> Any:
        """`a` with `value` where the raw boolean `mask` holds (``Tensor.masked_fill``)."""
        return namespace_of(a).where(mask, value, a).astype(a.dtype, copy=False)

    @staticmethod
    def zeros_like(a: Any) -> Any:
        """Zeros of `a`'s shape and dtype, with no history."""
        return namespace_of(a).zeros_like(a)

    @staticmethod
    def cat(parts: Sequence[Any], dim: int) -> Any:
        """``hookgrad.cat``."""
        return namespace_of(parts[0]).concatenate(tuple(parts), axis=dim)

    @staticmethod
    def narrow(a: Any, dim: int, start: int, length: int) -> Any:
        """``Tensor.narrow``."""
        index = [slice(None)] * a.ndim
        index[dim] = slice(start, start + length)
        return a[tuple(index)]

    @staticmethod
    def cumprod(a: Any, dim: int) -> Any:
        """``Tensor.cumprod(dim)``."""
        return namespace_of(a).cumprod(a, axis=dim)

    @staticmethod
    def unsqueeze(a: Any, dim: int) -> Any:
        """``Tensor.unsqueeze``."""
        return namespace_of(a).expand_dims(a, dim)

    @staticmethod
    def scatter_zeros(shape: Sequence[int], dim: int, index: Any, src: Any) -> Any:
        """Zeros of `shape` with `src` written at the raw `index` along `dim`
        (``src.new_zeros(shape).scatter(dim, index, src)``)."""
        xp = namespace_of(src)
        out = xp.zeros(tuple(shape), dtype=src.dtype)
        xp.put_along_axis(out, index, src, axis=dim)
        return out

    @staticmethod
    def embed(src: Any, shape: Sequence[int], prim: Primitive, params: dict) -> Any:
        """Zeros of `shape` with `src` written into the view ``prim(zeros, **params)`` (the
        gradient of a view primitive: select, slice, diagonal)."""
        out = namespace_of(src).zeros(tuple(shape), dtype=src.dtype)
        prim.impl(out, **params)[...] = src
        return out


class TensorOps:
    """Rule operations as hookgrad ops: differentiable, seen by recorders (NOTE [Rule operations]).

    Tensor methods are looked up at call time (layer 4 installs them on `Tensor`).
    """

    graph = True

    @staticmethod
    def data(x: Any) -> Any:
        """The raw array of a rule value, for masks and other constants."""
        d = x._data
        if type(d) is not np.ndarray and isinstance(d, np.ndarray):
            d.__array__()  # a vmap sample's metadata refuses the read (NOTE [vmap and rules])
        return d

    @staticmethod
    def const(arr: Any) -> Any:
        """A raw array (a mask, a constant) as a tensor with no history."""
        return _make(arr)

    @staticmethod
    def call(prim: Primitive, inputs: tuple, params: dict = _EMPTY) -> Any:
        """Primitive `prim` on `inputs` through `bind` (recorded, differentiable)."""
        return bind(prim, tuple(inputs), params)

    @staticmethod
    def mm(a: Any, b: Any) -> Any:
        """``Tensor.mm`` (matrices)."""
        return a.mm(b)

    @staticmethod
    def bmm(a: Any, b: Any) -> Any:
        """``Tensor.bmm`` (batches of matrices)."""
        return a.bmm(b)

    @staticmethod
    def mT(a: Any) -> Any:
        """The last two dims swapped (``transpose(-2, -1)``)."""
        return a.transpose(-2, -1)

    @staticmethod
    def t(a: Any) -> Any:
        """Transpose of a matrix (``Tensor.t``: ``TBackward0``)."""
        return a.t()

    @staticmethod
    def transpose(a: Any, d0: int, d1: int) -> Any:
        """``Tensor.transpose``."""
        return a.transpose(d0, d1)

    @staticmethod
    def outer(a: Any, b: Any) -> Any:
        """``Tensor.outer``."""
        return a.outer(b)

    @staticmethod
    def mv(a: Any, v: Any) -> Any:
        """``Tensor.mv``."""
        return a.mv(v)

    @staticmethod
    def sum(a: Any, dims: Sequence[int], keepdim: bool = False) -> Any:
        """``Tensor.sum(dims, keepdim)``."""
        return a.sum(tuple(dims), keepdim)

    @staticmethod
    def sum_to_size(a: Any, shape: Sequence[int]) -> Any:
        """``Tensor.sum_to_size`` (no op at all when the shapes agree)."""
        return a if a._data.shape == tuple(shape) else a.sum_to_size(tuple(shape))

    @staticmethod
    def reshape(a: Any, shape: Sequence[int]) -> Any:
        """``Tensor.reshape``."""
        return a.reshape(tuple(shape))

    @staticmethod
    def expand(a: Any, shape: Sequence[int]) -> Any:
        """``Tensor.expand``."""
        return a.expand(tuple(shape))

    @staticmethod
    def flip(a: Any, dim: int) -> Any:
        """``Tensor.flip(dim)``."""
        return a.flip(dim)

    @staticmethod
    def cumsum(a: Any, dim: int) -> Any:
        """``Tensor.cumsum(dim)``."""
        return a.cumsum(dim)

    @staticmethod
    def mul(a: Any, b: Any) -> Any:
        """``a * b``."""
        return a * b

    @staticmethod
    def div(a: Any, b: Any) -> Any:
        """``a / b``."""
        return a / b

    @staticmethod
    def sub(a: Any, b: Any) -> Any:
        """``a - b``."""
        return a - b

    @staticmethod
    def exp(a: Any) -> Any:
        """``Tensor.exp``."""
        return a.exp()

    @staticmethod
    def where(mask: Any, a: Any, b: Any) -> Any:
        """``a.where(mask, b)`` for a raw boolean `mask` (a constant for autograd)."""
        return a.where(_make(mask), b)

    @staticmethod
    def add(a: Any, b: Any) -> Any:
        """``a + b``."""
        return a + b

    @staticmethod
    def sign(a: Any) -> Any:
        """``Tensor.sign``."""
        return a.sign()

    @staticmethod
    def abs(a: Any) -> Any:
        """``Tensor.abs``."""
        return a.abs()

    @staticmethod
    def pow(a: Any, exponent: float) -> Any:
        """``Tensor.pow`` by a number."""
        return a.pow(exponent)

    @staticmethod
    def mean(a: Any, dims: Sequence[int] | None, keepdim: bool = False) -> Any:
        """``Tensor.mean`` (None: every dim)."""
        return a.mean() if dims is None else a.mean(tuple(dims), keepdim)

    @staticmethod
    def masked_fill(a: Any, mask: Any, value: float) -> Any:
        """``Tensor.masked_fill`` with a raw boolean `mask` (a constant)."""
        return a.masked_fill(_make(mask), value)

    @staticmethod
    def zeros_like(a: Any) -> Any:
        """A constant zero tensor like `a` (PyTorch's ``zeros_like``: no graph attached)."""
        return _make(namespace_of(a._data).zeros_like(a._data))

    @staticmethod
    def cat(parts: Sequence[Any], dim: int) -> Any:
        """``hookgrad.cat`` (looked up at call time: the public API sits above this layer)."""
        return sys.modules["hookgrad"].cat(list(parts), dim)

    @staticmethod
    def narrow(a: Any, dim: int, start: int, length: int) -> Any:
        """``Tensor.narrow``."""
        return a.narrow(dim, start, length)

    @staticmethod
    def cumprod(a: Any, dim: int) -> Any:
        """``Tensor.cumprod(dim)``."""
        return a.cumprod(dim)

    @staticmethod
    def unsqueeze(a: Any, dim: int) -> Any:
        """``Tensor.unsqueeze``."""
        return a.unsqueeze(dim)

    @staticmethod
    def scatter_zeros(shape: Sequence[int], dim: int, index: Any, src: Any) -> Any:
        """``src.new_zeros(shape).scatter(dim, index, src)`` for a raw `index`."""
        return src.new_zeros(tuple(shape)).scatter(dim, _make(index), src)

    @staticmethod
    def embed(src: Any, shape: Sequence[int], prim: Primitive, params: dict) -> Any:
        """Zeros of `shape` (a constant) with `src` copied into the view ``prim(zeros)``:
        ``copy_`` records the write, so the result is differentiable in `src`."""
        d = src._data
        out = _make(namespace_of(d).zeros(tuple(shape), dtype=d.dtype))
        bind(prim, (out,), params).copy_(src)
        return out


class RecordedOps(TensorOps):
    """Hookgrad ops (seen by recorders) that pick the formulas of a pass building no graph.

    A tracer that turns a rule into code for arrays (the compiled backward, NOTE [Traced
    derivatives] in hookgrad/compile/codegen/derivative.py) must record what the rule computes
    with `ARRAY_OPS`, not its differentiable variant: ``graph`` is False. A rule whose array
    formula needs raw arrays (in-place NumPy calls) then fails on these tensors or returns an
    untracked value, and the tracer falls back to calling the rule.
    """

    graph = False


ARRAY_OPS = ArrayOps()
TENSOR_OPS = TensorOps()
RECORDED_OPS = RecordedOps()

# TensorOps operations that are exactly one Tensor method: once layer 4 has installed the
# methods, `bind_tensor_methods` puts the methods themselves on the class (one Python frame less
# per operation on the create_graph path; the wrappers above document them and serve until then).
_DIRECT = {"mm": "mm", "bmm": "bmm", "mv": "mv", "outer": "outer", "t": "t",
           "transpose": "transpose", "flip": "flip", "cumsum": "cumsum", "cumprod": "cumprod",
           "unsqueeze": "unsqueeze", "narrow": "narrow", "exp": "exp", "sign": "sign",
           "abs": "abs", "pow": "pow", "mul": "__mul__", "div": "__truediv__", "sub": "__sub__",
           "add": "__add__"}


def bind_tensor_methods() -> None:
    """Replace the one-method wrappers of `TensorOps` by the Tensor methods (idempotent)."""
    if getattr(TensorOps, "_direct", False):
        return
    for op, method in _DIRECT.items():
        fn = getattr(Tensor, method, None)
        if fn is None:  # pragma: no cover - layer 4 not imported yet
            return
        setattr(TensorOps, op, staticmethod(fn))
    TensorOps._direct = True  # type: ignore[attr-defined]


__all__ = ["ARRAY_OPS", "TENSOR_OPS", "RECORDED_OPS", "ArrayOps", "TensorOps", "RecordedOps",
           "as_array", "expand_arr",
           "bind_tensor_methods"]
