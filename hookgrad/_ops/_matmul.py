"""`mm_arrays`: the matrix product of two 2-D arrays (or a matrix and a vector), through BLAS.

NOTE [np.dot for matrix products]
NumPy's ``matmul`` (the ``@`` operator) hands only some layouts to BLAS: an inner dimension of
1 (the weight gradient of a batch-1 linear layer, ``grad.T @ x``, an outer product) runs its
own loop, 5x slower than ``np.dot`` for 256x1x784 (236 us against 49, 1 thread), and small
matrices pay more call overhead (0.9 us against 0.6 for 16x10x32). For 2-D operands ``np.dot``
is the same product and always calls BLAS (``gemm``/``gemv``/``ger``). Arrays of another backend
(NOTE [Backends]) keep their own ``@``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import QUIET_RESET, QUIET_SET, QUIET_STATE

_ndarray = np.ndarray
_dot = np.dot
_einsum = np.einsum


def mm_arrays(a: Any, b: Any) -> Any:
    """``a @ b`` for a 2-D `a` and a 2-D or 1-D `b` (``mm``/``mv``), through ``np.dot``."""
    token = QUIET_SET(QUIET_STATE)  # inf * 0 in a dot product: nan without a warning (inline:
    try:  # the hottest kernel; NOTE [Quiet impls])
        if type(a) is _ndarray and type(b) is _ndarray:
            return _dot(a, b)
        return a @ b
    finally:
        QUIET_RESET(token)


def bmm_arrays(a: Any, b: Any) -> Any:
    """``a @ b`` for stacks of matrices (``bmm``). An inner dimension of 1 is a stack of outer
    products (the per-sample weight gradients of ``vmap(grad)``): ``matmul`` runs its own slow
    loop there and a broadcast multiply is slower than NumPy's ``einsum``, which writes the same
    products (one multiplication each, identical values) about twice as fast into warm memory."""
    token = QUIET_SET(QUIET_STATE)
    try:
        if type(a) is _ndarray and type(b) is _ndarray and a.ndim == 3 and a.shape[2] == 1 \
                and b.ndim == 3 and b.shape[1] == 1 and a.dtype == b.dtype:
            return _einsum("bi,bj->bij", a[:, :, 0], b[:, 0, :])
        return a @ b
    finally:
        QUIET_RESET(token)


__all__ = ["mm_arrays", "bmm_arrays"]
