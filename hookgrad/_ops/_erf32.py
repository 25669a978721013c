"""A fast float32 ``erf`` for GELU: one rational function, NumPy ufuncs only.

SciPy's ``erf`` computes every float32 element in double precision through a branchy scalar
loop (about 15 ns an element); GELU on a 768x512 activation spent 4 ms in it per call, 30x
PyTorch's whole GELU. For float32 a single odd/even rational approximation on [-4, 4] (beyond
it erf is +-1 in float32) is enough: the coefficients are the published minimax fit used by
XLA and Eigen for their float32 ``erf``; against a double-precision erf it is within 4.5e-7
absolute (8 ulp near 0, 2 ulp near +-1). Evaluated in place with ufuncs it costs about 20
passes over the array (0.8 ms for the 768x512 activation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# numerator (odd powers 13, 11, ..., 1) and denominator (even powers 8, 6, ..., 0), Horner order
_ALPHA = tuple(np.float32(c) for c in (
    -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
    -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
    -1.60960333262415e-02))
_BETA = tuple(np.float32(c) for c in (
    -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
    -7.37332916720468e-03, -1.42647390514189e-02))


def erf_float32(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``erf(x * scale)`` for a float32 NumPy array, as a new float32 array."""
    t = np.multiply(x, np.float32(scale), dtype=np.float32)
    np.clip(t, np.float32(-4.0), np.float32(4.0), out=t)
    x2 = np.multiply(t, t)
    p = np.multiply(x2, _ALPHA[0])
    for c in _ALPHA[1:-1]:
        np.add(p, c, out=p)
        np.multiply(p, x2, out=p)
    np.add(p, _ALPHA[-1], out=p)
    np.multiply(p, t, out=p)
    q = np.multiply(x2, _BETA[0])
    for c in _BETA[1:-1]:
        np.add(q, c, out=q)
        np.multiply(q, x2, out=q)
    np.add(q, _BETA[-1], out=q)
    return np.divide(p, q, out=p)


def is_plain_float32(x: Any) -> bool:
    """Whether `x` is a NumPy float32 array with a dimension (where `erf_float32` applies; a 0-d
    array's arithmetic returns scalars, which cannot be written in place)."""
    return type(x) is np.ndarray and x.dtype == np.float32 and x.ndim > 0


__all__ = ["erf_float32", "is_plain_float32"]
