"""`bind`: the one entry point through which every primitive runs (architecture.md principle 3).

Layer 2. ``bind`` unwraps tensors, calls the primitive's array implementation, wraps the results
and notifies the recorders in `STATE.recorders` (grad recording, forward AD, tracing). Nothing in
here knows what a recorder does.

NOTE [In-place protocol]
`bind_inplace` runs an op out of place into a fresh output ``out``, lets recorders see it
(``record_inplace``: the grad recorder saves a copy of the target's pre-op value if a rule needs
it), writes the result into the target's array (so views and the base see it), bumps the shared
version counter, then lets recorders move the autograd identity from ``out`` to the target
(``rebase``). This reproduces PyTorch's observable behaviour: the target gets the new ``grad_fn``
(``MulBackward0`` for ``mul_``), hooks registered before the op stay with the old node, saved
tensors of earlier nodes see the version bump.

NOTE [Function door]
A custom ``autograd.Function`` (and the identity node that module backward hooks pass tensors
through, PyTorch's ``BackwardHookFunction``) runs user Python instead of a primitive, so it
cannot go through `bind`. `record_function` is its door: the Function's forward runs with grad
mode off (its ops pass `bind` like any others but build no graph), then every recorder on the
thread's stack is told which Function produced which outputs from which inputs.

NOTE [Write door]
A few writes into tensor memory are not primitives: optimizer updates (NumPy math on the
parameters' arrays, NOTE [In-place optimizer math]), ``.grad`` accumulation, random fills, the
``out=`` copy, ``mark_dirty`` of custom Functions, embedding's max_norm renormalisation, LR
values held in tensors. Each goes through `note_write`, so the version counter and the
recorders see every mutation of tensor data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import check_same_device
from hookgrad._config import STATE
from hookgrad._dtypes import RESTRICTED_NP as _RESTRICTED
from hookgrad import _bf16_bind as _bf16
from hookgrad._dtypes import BF16_NP as _BF16_NP
from hookgrad._dtypes import bfloat16 as _BF16
from hookgrad._dtypes import check_kernel
from hookgrad._dtypes import dtype as _dtype
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import Tensor
from hookgrad.utils import _python_dispatch as _pd  # TorchDispatchMode interception

_ndarray = np.ndarray
_make = Tensor._make
_MODES = _pd.ACTIVE  # [number of pushed dispatch modes]: the one check on the hot path
_EMPTY: dict = {}
# vmap's interpreter (hookgrad/_functorch/_batched.py), set while a vmap level is open; it
# raises `_MODES[0]` too, so the hot path keeps its one check (NOTE [vmap on the door]).
INTERPRETER: list = [None]
# CPU autocast's handler while CPU autocast is enabled (it also raises `_MODES[0]` then), and
# its casts for composites of PyTorch's lists (`autocast_float32`, `autocast_lower`)
AUTOCAST: list = [None, None, None]


def autocast_float32(t: Any) -> Any:
    """`t` as CPU autocast hands it to a composite op of PyTorch's float32 list (a narrow
    floating tensor cast to float32 inside an enabled region; `t` itself otherwise)."""
    return t if AUTOCAST[0] is None else AUTOCAST[1](t)


def autocast_lower(t: Any) -> Any:
    """`t` as CPU autocast hands it to a composite op of PyTorch's lower-precision list (a
    float32 tensor cast to the autocast dtype inside an enabled region; `t` otherwise)."""
    return t if AUTOCAST[0] is None else AUTOCAST[2](t)


def _as_array(res: Any) -> Any:
    # NumPy reductions return NumPy scalars; tensors always hold arrays. Arrays of another
    # backend (NOTE [Backends]) are kept as they are.
    if type(res) is _ndarray or not isinstance(res, _SCALARS):
        return res
    return np.asarray(res)


_SCALARS = (np.generic, int, float, bool, complex)


def _arrays(inputs: tuple, cast: _dtype | None) -> list:
    if cast is None:
        return [t._data for t in inputs]
    target = cast.np
    return [t._data if t._data.dtype == target else _cast(t._data, target) for t in inputs]


def _cast(a: Any, target: Any) -> Any:
    out = a.astype(target)
    # NumPy's copy of an expanded (stride-0) array can come out in any dim order; PyTorch's
    # computes in TensorIterator's (NOTE [Elementwise result layout]; _ops/_layout.py installs it)
    if 0 in a.strides and out.ndim > 1 and CAST_LAYOUT[0] is not None:
        return CAST_LAYOUT[0](out, (a,))
    return out


CAST_LAYOUT: list = [None]


def bind(prim: Primitive, inputs: tuple, params: dict = _EMPTY, cast: _dtype | None = None) -> Any:
    """Run `prim` on tensors `inputs` with non-tensor `params`; return a Tensor or a tuple.

    `cast` is the computation dtype chosen by type promotion (PyTorch computes ``int + float``
    in the promoted type without a graph node for the cast; the engine casts gradients back).
    """
    if _MODES[0]:  # --- a TorchDispatchMode is pushed somewhere (utils/_python_dispatch.py)
        if AUTOCAST[0] is not None:  # CPU autocast casts first (hookgrad/amp/_cpu_policy.py)
            res = AUTOCAST[0](prim, inputs, params, cast)
            if res is not _pd.MISS:
                return res
        if INTERPRETER[0] is not None:  # vmap sits above dispatch modes, as in PyTorch
            res = INTERPRETER[0](prim, inputs, params, cast)
            if res is not _pd.MISS:
                return res
        res = _pd.dispatch(prim, inputs, params, cast)
        if res is not _pd.MISS:
            return res
    try:  # free unless raised (3.11): a non-tensor input is PyTorch's TypeError, not ours
        # (NOTE [Restricted kernels]: one set lookup on the first operand's dtype)
        if cast is not None:
            if cast is _BF16:  # NOTE [bfloat16]: computed in float32, rounded
                res = _bf16.run(prim, inputs, params, cast, _cast)
            else:
                arrays = _arrays(inputs, cast)
                if arrays[0].dtype in _RESTRICTED:
                    check_kernel(prim.name, arrays[0].dtype)
                if len(arrays) > 1:
                    _same_device(arrays)
                res = prim.impl(*arrays, **params)
        elif len(inputs) == 1:  # the common arities spelled out: no list built per call
            a = inputs[0]._data
            if a.dtype in _RESTRICTED:
                res = _restricted(prim, inputs, params)
            else:
                res = prim.impl(a, **params)
        elif len(inputs) == 2:
            a, b = inputs[0]._data, inputs[1]._data
            if type(a) is not type(b):  # arrays of two backends (NOTE [Backends])
                check_same_device((a, b))
            if a.dtype in _RESTRICTED or b.dtype is _BF16_NP:
                res = _restricted(prim, inputs, params)
            else:
                res = prim.impl(a, b, **params)
        else:
            arrays = [t._data for t in inputs]
            _same_device(arrays)
            res = _restricted(prim, inputs, params)
    except AttributeError:
        reject_non_tensors(prim, inputs)
        raise
    single = prim.num_outputs == 1
    if single:
        if prim.layout is not None:  # NOTE [Elementwise result layout] (_ops/_layout.py)
            res = prim.layout(res, inputs)
        outs: tuple = (_make(res if type(res) is _ndarray else _as_array(res)),)
    else:
        if prim.layout is not None:
            res = prim.layout(res, inputs)
        outs = tuple(_make(r if type(r) is _ndarray else _as_array(r)) for r in res)
    if prim.view:
        mark_views(inputs[0], outs, prim, params)
    for rec in STATE.recorders:
        rec.record(prim, inputs, params, outs, cast)
    return outs[0] if single else outs


def _restricted(prim: Primitive, inputs: tuple, params: dict) -> Any:
    """`prim`'s result on operands of which one may be bfloat16 (NOTE [bfloat16] in
    _bf16_bind.py) or the first one of a dtype with few kernels (NOTE [Restricted kernels])."""
    arrays = [t._data for t in inputs]
    for a in arrays:
        if a.dtype is _BF16_NP:
            return _bf16.run(prim, inputs, params, None, _cast)
    if arrays and arrays[0].dtype in _RESTRICTED:
        check_kernel(prim.name, arrays[0].dtype)
    return prim.impl(*arrays, **params)


def reject_non_tensors(prim: Primitive, inputs: tuple) -> None:
    """PyTorch's TypeError for an input of `prim` that is not a tensor (checked on failure)."""
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            name = prim.inputs[i] if i < len(prim.inputs) else "input"
            raise TypeError(f"{prim.name}(): argument '{'input' if name == 'self' else name}' "
                            f"(position {i + 1}) must be Tensor, not {type(t).__name__}")


def _same_device(arrays: list) -> None:
    first = type(arrays[0])
    for a in arrays:
        if type(a) is not first:
            check_same_device(arrays)
            return


def mark_views(src: Tensor, outs: tuple, prim: Primitive, params: dict) -> None:
    """Make `outs` views of `src`'s base: shared version counter, replayable view chain."""
    base = src._base if src._base is not None else src
    vc = src._vc()
    chain = src._view_chain
    # (through the root base, as PyTorch: a view of a leaf that is itself a view need not)
    no_graph = base._requires_grad and not STATE.grad_enabled
    for i, out in enumerate(outs):
        out._base = base
        out._version_counter = vc
        out._view_chain = chain + ((prim, params, i),)
        out._view_version = vc.value
        if no_graph and out._data.dtype.kind in "fcV":  # V: bfloat16
            out._requires_grad = True
            out._view_no_graph = True


# NOTE [Restricted kernels]
# PyTorch has CPU kernels for only some ops on uint16/uint32/uint64 and complex dtypes
# (`_dtypes.UNSIGNED_MISSING` and `COMPLEX_MISSING` list the primitives without one). `bind`
# tests the first operand's dtype against those five NumPy dtypes (one frozenset lookup per
# call) and raises PyTorch's exception before running a primitive PyTorch could not run.


# NOTE [Views made without a graph]
# A view of a tensor that requires grad, taken with grad mode off (``no_grad``,
# ``inference_mode``), requires grad in PyTorch (a view requires grad when its base does) but is
# a leaf without ``grad_fn`` and without a gradient of its own: ops on it record nodes whose
# edge towards it is empty, so backward reaches neither it nor its base, hooks on it never run
# and ``retain_grad`` is a no-op. ``_view_no_graph`` marks such a view; `gradient_edge` gives it
# no accumulator, and ``requires_grad_(True)`` (its own flag) gives it one.


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    # PyTorch's canCast: no float -> integral, no non-bool -> bool.
    if src.kind == "f" and dst.kind in "iub" or src.kind == "c" and dst.kind != "c":
        return False
    return not (src.kind != "b" and dst.kind == "b")


def bind_inplace(
    prim: Primitive, target: Tensor, inputs: tuple, params: dict = _EMPTY,
    cast: _dtype | None = None,
) -> Tensor:
    """Run `prim` and write its result into `target` (see NOTE [In-place protocol])."""
    if _MODES[0]:  # --- a TorchDispatchMode is pushed somewhere (utils/_python_dispatch.py)
        if INTERPRETER[0] is not None:
            res = INTERPRETER[0](prim, inputs, params, cast, target)
            if res is not _pd.MISS:
                return res
        res = _pd.dispatch(prim, inputs, params, cast, target)
        if res is not _pd.MISS:
            return res
    tdata = target._data
    if 0 in tdata.strides and prim.name not in _UNCHECKED_SELF and _overlaps(tdata):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    for t in inputs:
        # a fill reads a 0-d value tensor as a number first (``value.item()``): no overlap
        if t is not target and _may_share(tdata, t._data) and _partial_overlap(tdata, t._data) \
                and not (t._data.ndim == 0 and prim.name in _FILLS):
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )
    if tdata.dtype in _RESTRICTED:
        check_kernel(prim.name, tdata.dtype)
    try:
        if cast is _BF16 or any(t._data.dtype is _BF16_NP for t in inputs):  # NOTE [bfloat16]
            res = _bf16.run(prim, inputs, params, cast, _cast)
        else:
            res = prim.impl(*_arrays(inputs, cast), **params)
    except AttributeError:
        reject_non_tensors(prim, inputs)
        raise
    res = res if type(res) is _ndarray else _as_array(res)
    if res.shape != tdata.shape:
        raise RuntimeError(
            f"output with shape {list(tdata.shape)} doesn't match the broadcast shape "
            f"{list(res.shape)}"
        )
    if res.dtype != tdata.dtype and not _can_cast(res.dtype, tdata.dtype):
        from hookgrad._dtypes import from_numpy_dtype

        raise RuntimeError(
            f"result type {from_numpy_dtype(res.dtype).scalar_type} can't be cast to the "
            f"desired output type {target.dtype.scalar_type}"
        )
    out = _make(res)
    recorders = STATE.all_recorders
    for rec in recorders:
        rec.record_inplace(prim, inputs, params, out, target, cast)
    np.copyto(tdata, res, casting="unsafe")
    target._vc().value += 1
    for rec in recorders:
        rec.rebase(target, out)
    return target


def note_write(target: Tensor) -> None:
    """The door for data written outside any primitive (NOTE [Write door]).

    Bumps `target`'s shared version counter, as an in-place op would, and tells the recorders.
    """
    target._vc().value += 1
    for rec in STATE.all_recorders:
        rec.record_write(target)


def record_function(fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
    """Tell the recorders that custom Function `fn_cls` made `outputs` (NOTE [Function door])."""
    for rec in STATE.all_recorders:
        rec.record_function(fn_cls, inputs, outputs)


# PyTorch lets fills and index_put_ write overlaps (masked_fill_ and index_put_ warn)
_FILLS = frozenset({"fill_", "fill_scalar_", "zero_", "masked_fill", "masked_fill_tensor",
                    "index_put"})
# in-place ops whose kernel does not check the written tensor for internal overlap: the fills,
# threshold_ (ATen builds its TensorIterator with set_check_mem_overlap(false)), tril_/triu_
# and index_fill_
_UNCHECKED_SELF = _FILLS | {"threshold_", "tril", "triu", "index_fill",
                            "index_fill_tensor"}
_may_share = np.may_share_memory  # a bounds test: cheap, and False for unrelated arrays


def has_internal_overlap(arr: Any) -> bool:
    """Whether `arr` has several elements at one memory location (an expanded tensor)."""
    return 0 in arr.strides and _overlaps(arr)


def is_dense(arr: Any) -> bool:
    """Whether `arr` is non-overlapping and dense (a permutation of a contiguous array)."""
    return _dense(arr)


def _dense(arr: Any) -> bool:
    expected = arr.itemsize
    for st, n in sorted((abs(st), n) for st, n in zip(arr.strides, arr.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def _partial_overlap(out: Any, inp: Any) -> bool:
    """PyTorch's ``get_overlap_status(out, inp) == PARTIAL`` for arrays sharing a buffer.

    Only dense, non-overlapping arrays are compared (others are "too hard" and allowed): their
    byte ranges overlap without being the same range with the same strides.
    """
    if type(out) is not _ndarray or type(inp) is not _ndarray:
        return False
    if out.size == 0 or inp.size == 0 or not (_dense(out) and _dense(inp)):
        return False
    a0 = out.__array_interface__["data"][0]
    b0 = inp.__array_interface__["data"][0]
    a1, b1 = a0 + out.nbytes, b0 + inp.nbytes
    if a0 == b0 and a1 == b1:
        return out.strides != inp.strides
    return a0 < b1 and b0 < a1


def _overlaps(arr: Any) -> bool:
    """PyTorch's internal-overlap test: a stride-0 dim of size > 1 (an expanded tensor)."""
    # (an empty array has nothing to overlap, whatever strides NumPy gave it)
    return arr.size != 0 and any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape))



__all__ = ["autocast_float32", "autocast_lower", "bind", "bind_inplace", "has_internal_overlap", "is_dense", "mark_views", "note_write", "record_function",
           "reject_non_tensors"]
