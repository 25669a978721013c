"""View primitives, copies and joins (PyTorch docs: "Indexing, Slicing, Joining, Mutating Ops").

NOTE [View primitives]
Primitives declared with ``view=True`` return array *views* of their input (shared memory), so
`_dispatch.mark_views` can share the version counter and record the view chain. NumPy returns
read-only views for ``broadcast_to`` and ``diagonal``; ``diagonal`` is therefore built with
`strided` so that writing through it reaches the base, as in PyTorch. Non-view primitives must
return fresh arrays (``np.flip`` is a view in NumPy, so its impl copies).

NOTE [View gradients]
The gradient of a view op w.r.t. its input is "zeros of the input's shape with the gradient
written into the viewed region". `embed` writes it with an in-place ``copy_`` into a view of the
zero tensor: a plain copy under ``backward()``, and under ``create_graph=True`` a recorded
``CopySlices`` node, so double backward flows through it with no extra primitive (PyTorch uses
dedicated ``*_backward`` ops for the same job).

NOTE [Storage offsets]
PyTorch's ``as_strided`` counts offsets and strides in storage elements. hookgrad has no storage
object: the ``as_strided`` primitive counts its ``storage_offset`` from the first element of its
input array (memory strides in elements), and ``hookgrad._functional.shape.as_strided``
translates PyTorch's absolute offsets, measured from the first element of the view's base. For a
base tensor (the usual input, e.g. a view regenerated after an in-place op) both agree.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from hookgrad._ops._complex_cast import complex_to_real
from hookgrad import _backend
from hookgrad._backend import move
from hookgrad._dispatch import bind
from hookgrad._memory_format import as_format, check_rank, copy_as, format_name
from hookgrad._ops._layout import iterator_layout
from hookgrad._ops.registry import PRIMITIVES, Primitive, defop
from hookgrad._tensor import Tensor


# ---------------------------------------------------------------------------- helpers
def zeros_of(like: Tensor, shape: tuple) -> Tensor:
    """A constant zero tensor with `like`'s dtype and device (no graph: its derivative is 0)."""
    d = like._data
    return Tensor._make(_backend.namespace_of(d).zeros(tuple(shape), dtype=d.dtype))


def embed(grad: Any, shape: tuple, prim: Any, params: dict, ops: Any) -> Any:
    """Zeros of `shape` with `grad` copied into the view ``prim(zeros, **params)``
    (NOTE [View gradients]; `ops` as handed to the rule, NOTE [Rule operations])."""
    return ops.embed(grad, shape, prim, params)


def materialize(grads: tuple, like: tuple) -> list:
    """Replace missing output gradients of a multi-output op by zeros (PyTorch does the same)."""
    ref = next(g for g in grads if g is not None)
    return [
        g if g is not None else zeros_of(ref, shape) for g, shape in zip(grads, like, strict=False)
    ]


class _Interface:
    """Array-interface holder used to build a strided view at a byte offset (NumPy)."""

    def __init__(self, interface: dict, base: Any) -> None:
        self.__array_interface__ = interface
        self.base = base


def strided(arr: Any, size: tuple, stride: tuple, offset: int) -> Any:
    """A writable view of `arr`'s memory: element `stride`s, `offset` elements from arr[0...]."""
    item = arr.itemsize
    if type(arr) is np.ndarray:
        interface = dict(arr.__array_interface__)
        ptr, readonly = interface["data"]
        interface.update(
            shape=tuple(size),
            strides=tuple(s * item for s in stride),
            data=(ptr + offset * item, readonly),
        )
        interface.pop("mask", None)
        out = np.asarray(_Interface(interface, arr))
        out.dtype = arr.dtype
        return out
    return _backend.as_strided(arr, size, stride, offset)  # other backends (NOTE [Backends])


def element_strides(arr: Any) -> tuple:
    return tuple(s // arr.itemsize for s in arr.strides)


def positions(size: tuple, stride: tuple, offset: int) -> np.ndarray:
    """Memory position (in elements) of every element of a strided layout, shaped `size`."""
    pos = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride, strict=False)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + np.arange(n, dtype=np.int64).reshape(shape) * s
    return pos


def strided_index(
    self_shape: tuple, self_geometry: tuple, size: tuple, stride: tuple, offset: int
) -> np.ndarray:
    """For each element of an ``as_strided`` output, the flat (C-order) index of the input
    element at the same memory position, or -1 where the output reaches outside the input."""
    in_pos = positions(self_shape, self_geometry, 0).ravel()
    out_pos = positions(size, stride, offset)
    if out_pos.size == 0:
        return out_pos
    lo = min(int(in_pos.min(initial=0)), int(out_pos.min()))
    hi = max(int(in_pos.max(initial=0)), int(out_pos.max())) + 1
    inv = np.full(hi - lo, -1, dtype=np.int64)
    inv[in_pos - lo] = np.arange(in_pos.size, dtype=np.int64)
    return inv[out_pos - lo]


def variadic(base: Primitive, n: int, rule: Any, cache: dict) -> Primitive:
    """`base` with `n` tensor inputs (``tensors0``...): one VJP rule per input from ``rule(i)``.

    The op table holds one-input `base` for completeness checks; calls with other arities use
    an unregistered copy with the same name and node name, validated by `defop`.
    """
    prim = cache.get(n)
    if prim is None:
        if n == 1:
            prim = base
        else:
            names = tuple(f"tensors{i}" for i in range(n))
            tmp = f"{base.name}#{n}"
            defop(
                tmp,
                impl=base.impl,
                inputs=names,
                params=base.params,
                vjp={name: rule(i) for i, name in enumerate(names)},
                jvp=base.jvp,
                node_name=base.node_name,
            )
            # the result layout step too (NOTE [Channels-last results]: cat's)
            prim = dataclasses.replace(PRIMITIVES.pop(tmp), name=base.name, layout=base.layout)
        cache[n] = prim
    return prim


# ---------------------------------------------------------------------------- reshaping views
def _view_impl(self: Any, size: tuple) -> Any:
    out = self.view()
    try:
        out.shape = size
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


def _reshape_grad(grad: Any, self_shape: tuple, ops: Any) -> Any:
    # an ``ops`` rule (NOTE [Rule operations]): a plain backward reshapes the raw array, a view
    # exactly when ``Tensor.reshape`` would view it (both ask NumPy's shape assignment), with
    # no tensor, dispatch or view bookkeeping per view node (2.5 us of each)
    return ops.reshape(grad, self_shape)


defop(
    "view", impl=_view_impl, params=("size",), view=True, vjp={"self": _reshape_grad}, jvp="linear"
)

# reshape of a non-contiguous tensor that can be viewed: PyTorch's ``_reshape_alias`` view
defop(
    "_reshape_alias", impl=_view_impl, params=("size",), view=True,
    node_name="ReshapeAliasBackward0", vjp={"self": _reshape_grad}, jvp="linear"
)

defop(
    "_unsafe_view",
    impl=lambda self, size: self.reshape(size),
    params=("size",),
    node_name="UnsafeViewBackward0",
    vjp={"self": _reshape_grad},
    jvp="linear",
)

defop(
    "alias", impl=lambda self: self.view(), view=True, vjp={"self": lambda grad: grad}, jvp="linear"
)


def _expand_impl(self: Any, size: tuple) -> Any:
    # A writable strided view (NumPy's broadcast_to is read-only): PyTorch allows writing
    # through non-overlapping views of an expanded tensor; in-place ops on the overlapping
    # tensor itself are refused before they run (`check_writable`, `bind_inplace`).
    lead = len(size) - self.ndim
    strides = element_strides(self)
    stride = (0,) * lead + tuple(
        0 if n == 1 and s != 1 else st
        for n, s, st in zip(self.shape, size[lead:], strides, strict=False)
    )
    return strided(self, size, stride, 0)


defop(
    "expand",
    impl=_expand_impl,
    params=("size",),
    view=True,
    vjp={"self": lambda grad, self_shape: grad.sum_to_size(self_shape)},
    jvp="linear",
)

defop(
    "unsqueeze",
    impl=lambda self, dim: np.expand_dims(self, dim),
    params=("dim",),
    view=True,
    vjp={"self": lambda grad, dim: grad.squeeze(dim)},
    jvp="linear",
)


def _squeeze_impl(self: Any, dim: Any = None) -> Any:
    if dim is None:
        dims: tuple = tuple(i for i, s in enumerate(self.shape) if s == 1)
    else:
        ds = (dim,) if isinstance(dim, int) else dim
        dims = tuple(d for d in ds if self.ndim and self.shape[d] == 1)
    return np.squeeze(self, axis=dims) if dims else self.view()


defop(
    "squeeze",
    impl=lambda self: _squeeze_impl(self),
    view=True,
    vjp={"self": _reshape_grad},
    jvp="linear",
)
defop(
    "squeeze_dim",
    impl=_squeeze_impl,
    params=("dim",),
    view=True,
    node_name="SqueezeBackward1",
    vjp={"self": _reshape_grad},
    jvp="linear",
)
defop(
    "squeeze_dims",
    impl=_squeeze_impl,
    params=("dim",),
    view=True,
    node_name="SqueezeBackward2",
    vjp={"self": _reshape_grad},
    jvp="linear",
)

# ---------------------------------------------------------------------------- dim-order views
defop(
    "transpose",
    impl=lambda self, dim0, dim1: np.swapaxes(self, dim0, dim1) if self.ndim else self.view(),
    params=("dim0", "dim1"),
    view=True,
    vjp={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
    jvp="linear",
)

def _t_grad(grad: Any, ops: Any) -> Any:
    return ops.t(grad)  # with ARRAY_OPS: the transposed array, without view tracking


defop("t", impl=lambda self: self.T, view=True, vjp={"self": _t_grad}, jvp="linear")


def _permute_grad(grad: Tensor, dims: tuple) -> Tensor:
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return grad.permute(inverse)


defop(
    "permute",
    impl=lambda self, dims: np.transpose(self, dims),
    params=("dims",),
    view=True,
    vjp={"self": _permute_grad},
    jvp="linear",
)


# ---------------------------------------------------------------------------- slicing views
def _select_impl(self: Any, dim: int, index: int) -> Any:
    # The trailing Ellipsis keeps a 0-d result an array view instead of a NumPy scalar.
    return self[(slice(None),) * dim + (index, Ellipsis)]


def _slice_impl(self: Any, dim: int, start: int, end: int, step: int = 1) -> Any:
    return self[(slice(None),) * dim + (slice(start, end, step),)]


defop(
    "select",
    impl=_select_impl,
    params=("dim", "index"),
    view=True,
    vjp={
        "self": lambda grad, self_shape, dim, index, ops: embed(
            grad, self_shape, PRIMITIVES["select"], {"dim": dim, "index": index}, ops
        )
    },
    jvp="linear",
)

defop(
    "slice",
    impl=_slice_impl,
    params=("dim", "start", "end", "step"),
    view=True,
    node_name="SliceBackward0",
    vjp={
        "self": lambda grad, self_shape, dim, start, end, step, ops: embed(
            grad, self_shape, PRIMITIVES["slice"],
            {"dim": dim, "start": start, "end": end, "step": step}, ops,
        )
    },
    jvp="linear",
)


def _unbind_impl(self: Any, dim: int) -> tuple:
    return tuple(_select_impl(self, dim, i) for i in range(self.shape[dim]))


def _unbind_grad(grads: tuple, self_shape: tuple, dim: int) -> Tensor:
    piece = self_shape[:dim] + self_shape[dim + 1 :]
    return stack_tensors(materialize(grads, (piece,) * len(grads)), dim)


defop(
    "unbind",
    impl=_unbind_impl,
    params=("dim",),
    view=True,
    num_outputs=-1,
    vjp={"self": _unbind_grad},
    jvp="linear",
)


def split_bounds(length: int, sizes: tuple) -> list:
    out, start = [], 0
    for s in sizes:
        out.append((start, start + s))
        start += s
    return out


def sizes_of_split(length: int, split_size: int) -> tuple:
    """PyTorch's pieces for ``split(split_size)``: equal pieces, a smaller last one."""
    if split_size == 0:
        return (0,) if length == 0 else ()
    count = max(-(-length // split_size), 1)
    return tuple(min(split_size, length - i * split_size) for i in range(count))


def _split_sizes_impl(self: Any, split_sizes: tuple, dim: int) -> tuple:
    return tuple(_slice_impl(self, dim, a, b) for a, b in split_bounds(0, split_sizes))


def _split_grad(grads: tuple, self_shape: tuple, dim: int, sizes: tuple) -> Tensor:
    shapes = [self_shape[:dim] + (s,) + self_shape[dim + 1 :] for s in sizes]
    return cat_tensors(materialize(grads, tuple(shapes)), dim)


defop(
    "split",
    impl=lambda self, split_size, dim: _split_sizes_impl(
        self, sizes_of_split(self.shape[dim], split_size), dim
    ),
    params=("split_size", "dim"),
    view=True,
    num_outputs=-1,
    vjp={
        "self": lambda grads, self_shape, split_size, dim: _split_grad(
            grads, self_shape, dim, sizes_of_split(self_shape[dim], split_size)
        )
    },
    jvp="linear",
)

defop(
    "split_with_sizes",
    impl=_split_sizes_impl,
    params=("split_sizes", "dim"),
    view=True,
    num_outputs=-1,
    vjp={
        "self": lambda grads, self_shape, split_sizes, dim: _split_grad(
            grads, self_shape, dim, split_sizes
        )
    },
    jvp="linear",
)


def diagonal_geometry(shape: tuple, strides: tuple, offset: int, dim1: int, dim2: int) -> tuple:
    """``(size, stride, start)`` of ``diagonal(offset, dim1, dim2)`` in memory elements."""
    if offset >= 0:
        length = max(min(shape[dim1], shape[dim2] - offset), 0)
        start = offset * strides[dim2] if length else 0
    else:
        length = max(min(shape[dim1] + offset, shape[dim2]), 0)
        start = -offset * strides[dim1] if length else 0
    keep = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    size = tuple(shape[d] for d in keep) + (length,)
    stride = tuple(strides[d] for d in keep) + (strides[dim1] + strides[dim2],)
    return size, stride, start


def _diagonal_impl(self: Any, offset: int, dim1: int, dim2: int) -> Any:
    size, stride, start = diagonal_geometry(self.shape, element_strides(self), offset, dim1, dim2)
    return strided(self, size, stride, start)


defop(
    "diagonal",
    impl=_diagonal_impl,
    params=("offset", "dim1", "dim2"),
    view=True,
    vjp={
        "self": lambda grad, self_shape, offset, dim1, dim2, ops: embed(
            grad, self_shape, PRIMITIVES["diagonal"],
            {"offset": offset, "dim1": dim1, "dim2": dim2}, ops,
        )
    },
    jvp="linear",
)


# ---------------------------------------------------------------------------- as_strided
def _as_strided_impl(
    self: Any, size: tuple, stride: tuple, storage_offset: int = 0, self_geometry: tuple = ()
) -> Any:
    return strided(self, size, stride, storage_offset)


def _as_strided_vjp(
    grad: Tensor,
    self_shape: tuple,
    size: tuple,
    stride: tuple,
    storage_offset: int,
    self_geometry: tuple,
) -> Tensor:
    """Scatter-add the gradient to the input elements at the same memory positions."""
    idx = strided_index(self_shape, self_geometry, size, stride, storage_offset).ravel()
    flat = grad.reshape(-1)
    valid = idx >= 0
    if not valid.all():
        flat = bind(PRIMITIVES["index"], (flat,), {"indices": (np.nonzero(valid)[0],)})
        idx = idx[valid]
    numel = math.prod(self_shape)
    out = bind(
        PRIMITIVES["index_put"],
        (zeros_of(grad, (numel,)), flat),
        {"indices": (idx,), "accumulate": True},
    )
    return out.reshape(self_shape)


def _as_strided_jvp(
    t: Tensor,
    self_shape: tuple,
    size: tuple,
    stride: tuple,
    storage_offset: int,
    self_geometry: tuple,
) -> Tensor:
    # Tangents may have another memory layout than the primal: map by logical position.
    idx = strided_index(self_shape, self_geometry, size, stride, storage_offset)
    flat = t.reshape(-1)
    return bind(PRIMITIVES["index"], (flat,), {"indices": (np.maximum(idx, 0),)})


defop(
    "as_strided",
    impl=_as_strided_impl,
    params=("size", "stride", "storage_offset", "self_geometry"),
    view=True,
    vjp={"self": _as_strided_vjp},
    jvp={"self": _as_strided_jvp},
)


# ---------------------------------------------------------------------------- copies
def _clone_impl(self: Any, memory_format: Any = None) -> Any:
    name = format_name(memory_format)
    check_rank(name, self.ndim)
    # preserve_format keeps a dense, non-overlapping layout (strides and all) and otherwise
    # takes the format the strides suggest (an expanded input: row-major)
    return copy_as(self, name)


defop(
    "clone",
    impl=_clone_impl,
    params=("memory_format",),
    vjp={"self": lambda grad: grad},
    jvp="linear",
)

def _to_copy_impl(self: Any, dtype: Any, device: Any = None, source: Any = None,
                  memory_format: Any = None) -> Any:
    if self.dtype.kind == "c" and not dtype.is_complex:
        self = complex_to_real(self)
    # NaN/inf/out-of-range floats to integers wrap silently in PyTorch's casts: no warning
    with np.errstate(invalid="ignore", over="ignore"):
        out = (self if device is None else move(self, device)).astype(dtype.np)
    name = format_name(memory_format)
    if name != "preserve_format":
        return as_format(out, name)
    if type(out) is np.ndarray and out.ndim > 1 and 0 in self.strides:
        # NumPy copies an expanded array in any dim order; PyTorch in TensorIterator's
        return iterator_layout(out, (self,))
    return out


def _to_copy_vjp(grad: Any, self_dtype: Any, source: Any) -> Any:
    # a copy to another device sends its gradient back to the source device; a real input
    # gets the real part of a complex gradient (PyTorch's handle_r_to_c)
    if grad.is_complex() and not self_dtype.is_complex:
        grad = grad.real
    return grad.to(self_dtype) if source is None else grad.to(source, self_dtype)


defop(
    "_to_copy",
    impl=_to_copy_impl,
    params=("dtype", "device", "source", "memory_format"),
    node_name="ToCopyBackward0",
    vjp={"self": _to_copy_vjp},
    jvp="linear",
)


def zeros_like_array(t: Any) -> Tensor:
    """A constant zero tensor shaped like `t` (its derivative is zero, so no graph needed)."""
    return zeros_of(t, t._data.shape)


def _copy_impl(self: Any, src: Any) -> Any:
    if src.dtype.kind == "c" and self.dtype.kind != "c":
        src = complex_to_real(src)
    return np.broadcast_to(src, self.shape).astype(self.dtype)


def _copy_src_vjp(grad: Any, src_shape: Any, src_dtype: Any) -> Any:
    if grad.is_complex() and not src_dtype.is_complex:
        grad = grad.real  # a real source of a complex copy gets the real part
    return grad.sum_to_size(src_shape).to(src_dtype)


defop(
    "copy_",
    impl=_copy_impl,
    inputs=("self", "src"),
    node_name="CopyBackwards",
    vjp={
        "self": lambda grad: zeros_like_array(grad),
        "src": _copy_src_vjp,
    },
    jvp={"self": lambda t: zeros_like_array(t), "src": lambda t, self_shape: t.expand(self_shape)},
)

# ``fill_.Tensor``: what ``x[idx] = scalar`` runs (PyTorch shows FillBackward3).
defop(
    "fill_",
    # a NaN value cast to an integral dtype: ATen's cast, without NumPy's warning
    impl=_backend.NUMPY.quiet(lambda self, value: np.full_like(self, value)),
    inputs=("self", "value"),
    node_name="FillBackward3",
    vjp={
        "self": lambda grad: zeros_like_array(grad),
        "value": lambda grad, value_dtype: grad.sum().to(value_dtype),
    },
    jvp={
        "self": lambda t: zeros_like_array(t),
        "value": lambda t, self_shape: t.expand(self_shape),
    },
)


# ---------------------------------------------------------------------------- cat / stack
def _cat_impl(*tensors: Any, dim: int, sizes: tuple = ()) -> Any:
    # A size of None marks a legacy 1-D empty input, which PyTorch skips.
    kept = [t for t, s in zip(tensors, sizes, strict=False) if s is not None]
    xp = _backend.namespace_of(kept[0])
    # PyTorch allocates the result contiguous (NumPy would follow the inputs' layout)
    return xp.ascontiguousarray(xp.concatenate(kept, axis=dim))


def _cat_rule(i: int) -> Any:
    def rule(grad: Tensor, dim: int, sizes: tuple) -> Tensor:
        if sizes[i] is None:  # a skipped legacy empty input
            return zeros_of(grad, (0,))
        start = sum(s for s in sizes[:i] if s is not None)
        return grad.narrow(dim, start, sizes[i])

    return rule


def _stack_impl(*tensors: Any, dim: int) -> Any:
    xp = _backend.namespace_of(tensors[0])
    return xp.ascontiguousarray(xp.stack(tensors, axis=dim))  # contiguous, as PyTorch's


def _stack_rule(i: int) -> Any:
    return lambda grad, dim: grad.select(dim, i)


CAT = defop(
    "cat",
    impl=_cat_impl,
    inputs=("tensors",),
    params=("dim", "sizes"),
    vjp={"tensors": _cat_rule(0)},
    jvp="linear",
)
STACK = defop(
    "stack",
    impl=_stack_impl,
    inputs=("tensors",),
    params=("dim",),
    vjp={"tensors": _stack_rule(0)},
    jvp="linear",
)
_CAT_VARIANTS: dict = {}
_STACK_VARIANTS: dict = {}


def legacy_empty(tensors: Any) -> list:
    """Which inputs of ``cat`` are legacy 1-D empty tensors that PyTorch skips."""
    flags = [t._data.ndim == 1 and t._data.shape[0] == 0 for t in tensors]
    if all(flags):
        return [False] * len(flags)
    return flags


def cat_tensors(tensors: Any, dim: int, cast: Any = None) -> Tensor:
    """``cat`` of already validated tensors along a non-negative `dim` (rules use this too)."""
    sizes = tuple(
        None if skip else t._data.shape[dim]
        for t, skip in zip(tensors, legacy_empty(tensors), strict=False)
    )
    prim = variadic(CAT, len(tensors), _cat_rule, _CAT_VARIANTS)
    return bind(prim, tuple(tensors), {"dim": dim, "sizes": sizes}, cast)


def stack_tensors(tensors: Any, dim: int, cast: Any = None) -> Tensor:
    """``stack`` of already validated tensors along a non-negative `dim`."""
    prim = variadic(STACK, len(tensors), _stack_rule, _STACK_VARIANTS)
    return bind(prim, tuple(tensors), {"dim": dim}, cast)


__all__ = [
    "zeros_of",
    "embed",
    "materialize",
    "strided",
    "element_strides",
    "positions",
    "strided_index",
    "variadic",
    "diagonal_geometry",
    "sizes_of_split",
    "split_bounds",
    "cat_tensors",
    "stack_tensors",
    "zeros_like_array",
]
