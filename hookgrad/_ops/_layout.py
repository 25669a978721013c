"""Result layouts of elementwise ops, as PyTorch's TensorIterator chooses them.

Layer 3 (NumPy and the registry only).

NOTE [Elementwise result layout]
PyTorch allocates the result of an elementwise op with the dim order TensorIterator's
``reorder_dimensions`` derives from the inputs: each input is restrided to the result's shape
(stride 0 along broadcast dims), and dims are insertion-sorted from fastest to slowest by the
first input whose strides for the two dims are both non-zero and differ. NumPy's ``order="K"``
decides otherwise when inputs disagree or hold stride-0 dims (an ``expand``-ed operand can come
out column-major), so results of such inputs are copied into PyTorch's order. When every input
is C-contiguous both libraries give a row-major result, and the check is one flag per input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _dispatch
from hookgrad._memory_format import as_format, suggest
from hookgrad._ops.registry import PRIMITIVES

_ndarray = np.ndarray


def reorder_dims(shape: tuple, ops: list) -> list:
    """Dims from fastest to slowest as TensorIterator sorts them (`ops`: element strides)."""
    def should_swap(d0: int, d1: int) -> int:
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def strides_for(res: Any, perm: list) -> tuple:
    """Byte strides of a dense array of `res`'s shape whose dims run fastest-first as `perm`."""
    out = [0] * res.ndim
    step = res.itemsize
    for d in perm:
        out[d] = step
        step *= res.shape[d]
    return tuple(out)


def with_layout(res: Any, perm: list) -> Any:
    """A copy of `res` laid out densely in the dim order `perm` (fastest first)."""
    slow = perm[::-1]
    inv = [0] * len(slow)
    for i, d in enumerate(slow):
        inv[d] = i
    return np.ascontiguousarray(res.transpose(slow)).transpose(inv)


def _restrided(a: Any, shape: tuple) -> list:
    lead = len(shape) - a.ndim
    item = a.itemsize
    return [0] * lead + [0 if n == 1 else st // item for n, st in zip(a.shape, a.strides)]


def same_layout(res: Any, want: tuple) -> bool:
    """Whether `res` has strides `want` where it matters (dims of size 1 never do)."""
    return all(n == 1 or s == w for n, s, w in zip(res.shape, res.strides, want))


def iterator_layout(res: Any, arrays: Any) -> Any:
    """`res` (NumPy's result of an elementwise op of `arrays`) in PyTorch's layout."""
    if type(res) is not _ndarray or res.ndim < 2 or res.size == 0:
        return res
    shape = res.shape
    first = arrays[0] if arrays else None
    if type(first) is _ndarray and first.shape == shape and first.flags.c_contiguous \
            and res.flags.c_contiguous:
        return res  # the common case of the branch below, without building its lists
    arrs = [a for a in arrays if type(a) is _ndarray and 0 < a.ndim <= res.ndim]
    if not arrs:
        return res
    first = arrs[0]
    if first.shape == shape and all(st or n == 1 for st, n in zip(first.strides, shape)):
        # the first input has no broadcast dim: it decides every pair of dims, so the
        # result is dense in its dim order (what ``empty_like``'s order "K" allocates)
        if first.flags.c_contiguous and res.flags.c_contiguous:
            return res
        out = np.empty_like(first, dtype=res.dtype)
        if same_layout(res, out.strides):
            return res
        out[...] = res
        return out
    ops = [_restrided(a, shape) for a in arrs]
    perm = reorder_dims(res.shape, ops)
    if same_layout(res, strides_for(res, perm)):
        return res
    return with_layout(res, perm)


def like_empty_like(res: Any, like: Any) -> Any:
    """`res` laid out as ATen's ``empty_like(like)`` (memory format ``Preserve``): `like`'s
    strides when it is dense, else dense in its dim order with broadcast dims kept in place
    (``infer_dense_strides``, TensorIterator's order of one operand)."""
    if like.ndim < 2 or like.flags.c_contiguous or type(res) is not _ndarray:
        return res
    return iterator_layout(res, (like,))


def _fix(res: Any, inputs: tuple) -> Any:
    # the hot path: row-major inputs give a row-major result in both libraries
    for t in inputs:
        d = t._data
        if type(d) is not _ndarray or not d.flags.c_contiguous:
            return iterator_layout(res, [t._data for t in inputs])
    return res


def _contiguous(res: Any, inputs: tuple) -> Any:
    if type(res) is _ndarray:
        if not res.flags.c_contiguous:
            return np.ascontiguousarray(res)
        # row-major already; a kept dim of size 1 may still carry NumPy's stride, not PyTorch's
        return as_format(res, "contiguous_format") if 1 in res.shape else res
    if type(res) in (tuple, list):  # several outputs (max_dim, var_mean, native_layer_norm)
        return type(res)(_contiguous(r, inputs) for r in res)
    return res


# NOTE [Contiguous results]
# PyTorch allocates the results of reductions (and their index outputs), of the normalizations
# and softmaxes (which run on ``input.contiguous()``) and of ``masked_fill`` (a contiguous clone
# filled in place) row-major whatever the input's layout; NumPy keeps the input's dim order.
CONTIGUOUS = (
    "sum_dim", "mean_dim", "prod_dim_int", "var", "std", "var_mean", "std_mean", "nansum",
    "count_nonzero", "logsumexp", "all", "any", "amax", "amin", "max_dim", "min_dim", "argmax",
    "argmin", "linalg_vector_norm", "norm", "_softmax", "_log_softmax", "native_layer_norm",
    "masked_fill", "masked_fill_tensor",
)

# elementwise primitives whose result is allocated by a TensorIterator over all their inputs
ELEMENTWISE = (
    "add", "sub", "mul", "div", "div_mode", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "maximum",
    "minimum", "fmax", "fmin", "fmod_tensor", "remainder_tensor", "floor_divide", "pow_tensor",
    "lerp", "lerp_tensor", "addcmul", "addcdiv", "where", "clamp_tensor", "clamp_max_tensor",
    "clamp_min_tensor", "clamp_tensor_max", "clamp_tensor_min",
)


def _lay(res: Any, name: str, ndim: int) -> Any:
    if type(res) is _ndarray:
        return as_format(res, name) if res.ndim == ndim else res
    if type(res) in (tuple, list):  # (out, indices), (out, mean, invstd): the N-D ones
        return type(res)(_lay(r, name, ndim) for r in res)
    return res


def _follow_any(res: Any, inputs: tuple) -> Any:
    # the first input in a channels-last format decides: the input of a layer, or for a
    # convolution its weight, or for a backward kernel the indices/input beside a gradient
    # that is expanded (the gradient of ``sum()``) and so suggests nothing
    for t in inputs:
        data = t._data
        if type(data) is _ndarray and not data.flags.c_contiguous:
            name = suggest(data)
            if name != "contiguous_format":
                return _lay(res, name, data.ndim)
    return res


def _follow_all(res: Any, inputs: tuple) -> Any:
    # cat: the inputs' common suggested format, row-major when they disagree
    names = {suggest(t._data) for t in inputs}
    if len(names) != 1 or "contiguous_format" in names:
        return res
    return _lay(res, names.pop(), inputs[0]._data.ndim)


# NOTE [Channels-last results]
# PyTorch's CPU kernels of the per-channel layers run in the memory format the input suggests
# (``suggest_memory_format``) and allocate their result, and for most of them their input
# gradient, in it: a channels_last input gives a channels_last result. NumPy's kernels here
# compute row-major, so these results are copied into the suggested format. Upsampling, pixel
# shuffle and constant padding give channels-last results but row-major gradients.
FOLLOW_ANY = (
    "convolution", "convolution_backward_input",
    "native_batch_norm", "native_group_norm", "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
    "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward", "max_pool3d_with_indices", "max_pool3d_with_indices_backward",
    "avg_pool3d", "avg_pool3d_backward", "_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward",
    "adaptive_max_pool3d", "adaptive_max_pool3d_backward", "upsample_nearest2d",
    "_upsample_nearest_exact2d", "upsample_bilinear2d", "upsample_bicubic2d",
    "upsample_nearest3d", "_upsample_nearest_exact3d", "upsample_trilinear3d", "pixel_shuffle",
    "pixel_unshuffle", "constant_pad_nd", "reflection_pad2d", "reflection_pad3d",
    "replication_pad2d", "replication_pad3d", "_prelu_kernel", "upsample_nearest2d_backward",
    "_upsample_nearest_exact2d_backward", "upsample_bilinear2d_backward",
    "upsample_bicubic2d_backward", "upsample_nearest3d_backward",
    "_upsample_nearest_exact3d_backward", "upsample_trilinear3d_backward",
)


def install() -> None:
    """Give the elementwise primitives their layout step (`bind` runs it on their result)."""
    for names, step in ((FOLLOW_ANY, _follow_any), (("cat",), _follow_all)):
        for name in names:
            prim = PRIMITIVES.get(name)
            if prim is not None and prim.layout is None:
                object.__setattr__(prim, "layout", step)
    for name in ELEMENTWISE:
        prim = PRIMITIVES.get(name)
        if prim is not None:
            object.__setattr__(prim, "layout", _fix)  # the record is frozen; set once at import
    _dispatch.CAST_LAYOUT[0] = iterator_layout  # operands cast for type promotion
    for name in CONTIGUOUS:
        prim = PRIMITIVES.get(name)
        if prim is not None:
            object.__setattr__(prim, "layout", _contiguous)


__all__ = ["reorder_dims", "strides_for", "with_layout", "iterator_layout", "install"]
