"""Meta shape rules of the primitives whose kernels run on host values (NOTE [Meta backend]).

Layer 3. Most kernels are NumPy calls that a meta array answers by itself (``hookgrad._meta``).
A few read their inputs' values on the host instead (LAPACK-style loops, per-line selections,
series): on a backend without data they would raise. `shapes` declares, once per primitive,
the metadata of its results; the primitive's kernel then answers a meta input with fresh
arrays of those shapes, dtypes and layouts, without running, at any size, as PyTorch's meta
kernels do. The layouts are the ``cpu`` kernels' (which follow PyTorch's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._backend import backend_of, has_data, namespace_of
from hookgrad._ops.registry import PRIMITIVES

__all__ = ["shapes", "empty", "fortran"]

# a result: (shape, dtype) or (shape, dtype, "F") for matrices stored column by column
Result = tuple


def fortran(a: np.ndarray) -> np.ndarray:
    """`a` with each matrix stored column by column (LAPACK's layout, PyTorch's strides)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


def empty(xp: Any, result: Result) -> Any:
    shape, dtype = result[0], result[1]
    if len(result) > 2 and len(shape) >= 2:  # column-major matrices
        flipped = shape[:-2] + (shape[-1], shape[-2])
        return xp.swapaxes(xp.empty(flipped, dtype=dtype), -1, -2)
    return xp.empty(shape, dtype=dtype)


def shapes(names: list[str], rule: Callable[..., Any]) -> None:
    """Declare `rule(*arrays, **params)` (a `Result`, or a list of them for several outputs) as
    the meta results of each primitive in `names` (or the meta array itself)."""
    for name in names:
        prim = PRIMITIVES[name]
        kernel = prim.impl

        def impl(*arrays: Any, _kernel: Any = kernel, **params: Any) -> Any:
            first = arrays[0]
            if type(first) is np.ndarray or has_data(first):
                return _kernel(*arrays, **params)
            xp = namespace_of(first)
            out = rule(*arrays, **params)
            if isinstance(out, list):
                return tuple(empty(xp, r) for r in out)
            return empty(xp, out) if isinstance(out, tuple) else out

        impl.__name__ = getattr(kernel, "__name__", name)
        object.__setattr__(prim, "impl", impl)  # the record is frozen; meta rules are late


# ------------------------------------------------------------------------------------ rules
def _dims(shape: tuple) -> tuple:
    *batch, m, n = shape
    return tuple(batch), m, n, min(m, n)


def lu_factor(A: Any, **_: Any) -> list:
    batch, m, n, k = _dims(tuple(A.shape))
    return [(tuple(A.shape), A.dtype, "F"), (batch + (k,), np.int32), (batch, np.int32)]


def lu_parts(A: Any, *_: Any, **__: Any) -> list:
    """(L, U, P) of a packed LU or of the matrix itself."""
    batch, m, n, k = _dims(tuple(A.shape))
    return [(batch + (m, k), A.dtype), (batch + (k, n), A.dtype), (batch + (m, m), A.dtype)]


def lu_solve(LU: Any, pivots: Any, B: Any, left: bool = True, **_: Any) -> Result:
    batch = np.broadcast_shapes(tuple(LU.shape)[:-2], tuple(B.shape)[:-2])
    shape = tuple(batch) + tuple(B.shape)[-2:]
    return (shape, B.dtype, "F") if left else (shape, B.dtype)


def select(self: Any, dim: int = -1, keepdim: bool = False) -> list:
    """mode / nanmedian along `dim`: values and int64 indices."""
    shape = list(self.shape)
    if shape:
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
    return [(tuple(shape), self.dtype), (tuple(shape), np.int64)]


def scalar(self: Any, **_: Any) -> Result:
    return (), self.dtype


def like_self(self: Any, *_: Any, **__: Any) -> Result:
    return tuple(self.shape), self.dtype


def kept_layout(self: Any, *_: Any, **__: Any) -> Any:
    """A clone of `self` by PyTorch's ``preserve_format`` rule (``put`` writes into one)."""
    return backend_of(self).empty_for(self, "preserve_format", self.dtype)


def broadcast(x: Any, q: Any, **_: Any) -> Result:
    return tuple(np.broadcast_shapes(x.shape, q.shape)), np.result_type(x.dtype, q.dtype)
