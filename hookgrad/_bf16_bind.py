"""How `bind` runs a primitive on bfloat16 tensors: compute in float32, round the result.

Layer 2 (NumPy and the dtype table only), called by `hookgrad._dispatch`.

NOTE [bfloat16]
A bfloat16 tensor holds an array of ml_dtypes' ``bfloat16`` NumPy dtype: 2 bytes per element,
the upper half of a float32, so ``view(torch.int16)``, storages and checkpoints see PyTorch's
bit patterns. NumPy itself knows little about that dtype (its kind is ``"V"``, most ufuncs and
every LAPACK/FFT routine refuse it), and PyTorch's CPU kernels do not compute in it either:
each bfloat16 kernel loads its operands into float32 (the "opmath" type), computes there and
rounds the result once, to nearest even, when it stores it. Reductions accumulate in float32,
matrix products go through float32 accumulators. `bind` therefore never hands a bfloat16 array
to a primitive's implementation: `run` widens the operands, runs the implementation on float32
arrays, and rounds the float32 results the op would give in bfloat16.

Which operands are widened how follows TensorIterator's casts: when type promotion makes
bfloat16 the computation dtype (``cast``), a dimensioned operand of another dtype is first
cast to bfloat16 (an int64 tensor holding 257 takes part as 256), while a 0-dim operand (a
Python number or a CPU scalar tensor) is read at float32 precision without that rounding.

Which results are rounded: every float32 result when the computation dtype is bfloat16; with no
promotion (unary ops, ops whose operands must agree), the float32 results when the first
operand is bfloat16 (``layer_norm`` of a bfloat16 input with float32 weights gives bfloat16, as
PyTorch's mixed-type kernels do) or when a bfloat16 operand meets no dimensioned float32 one.
A primitive given an explicit ``dtype`` (``_to_copy``, ``sum(dtype=...)``) already made the
dtype asked for and is left alone. View primitives run on the bfloat16 array itself: they move
no values, and their result must alias the input's memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import BF16_NP, bfloat16, check_kernel

_F32 = np.dtype(np.float32)


def widen(a: Any) -> Any:
    """`a` as float32 when it is a bfloat16 array (exact), else `a` itself."""
    return a.astype(_F32) if a.dtype is BF16_NP else a


def _round(res: Any, single: bool) -> Any:
    if single:
        return res.astype(BF16_NP) if getattr(res, "dtype", None) is _F32 else res
    return type(res)(r.astype(BF16_NP) if getattr(r, "dtype", None) is _F32 else r for r in res)


def run(prim: Any, inputs: tuple, params: dict, cast: Any, cast_fn: Any) -> Any:
    """The result arrays of `prim` on `inputs`, computed as NOTE [bfloat16] says.

    `cast_fn(array, np_dtype)` is `bind`'s cast (it keeps PyTorch's layout of expanded arrays).
    """
    if prim.view:  # views (select, slice, transpose...) alias the bfloat16 array itself
        return prim.impl(*[t._data for t in inputs], **params)
    if inputs and inputs[0]._data.dtype is BF16_NP:  # PyTorch's kernels without bfloat16
        check_kernel(prim.name, BF16_NP)
    arrays = []
    if cast is bfloat16:
        for t in inputs:
            a = t._data
            if a.dtype is not BF16_NP and a.ndim:
                a = cast_fn(a, BF16_NP)
            arrays.append(a.astype(_F32) if a.dtype is not _F32 else a)
        rounds = True
    elif cast is not None:  # promotion away from bfloat16 (to float32, float64, complex...)
        target = cast.np
        arrays = [t._data if t._data.dtype == target else cast_fn(t._data, target)
                  for t in inputs]
        rounds = False
    else:
        seen_f32 = False
        for t in inputs:
            a = t._data
            if a.dtype is BF16_NP:
                a = a.astype(_F32)
            elif a.dtype is _F32 and a.ndim:
                seen_f32 = True
            arrays.append(a)
        rounds = params.get("dtype") is None and (
            inputs[0]._data.dtype is BF16_NP or not seen_f32)
    res = prim.impl(*arrays, **params)
    return _round(res, prim.num_outputs == 1) if rounds else res
