"""``linalg_matrix_exp`` (``LinalgMatrixExpBackward0``).

Layer 3. Forward: scaling and squaring with a degree-18 Taylor polynomial (the scaled matrix has
infinity norm at most 1/2, so the truncation error is below float64 rounding), computed in
float64. Both derivative rules use the block-matrix identity
``exp([[X, E], [0, X]]) = [[exp(X), L(X, E)], [0, exp(X)]]`` where ``L`` is the Fréchet
derivative: the tangent is ``L(A, T)`` and the gradient is ``L(A^T, G)``. They call the
primitive itself, so higher derivatives work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._rules import api
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

_TAYLOR_DEGREE = 18


def _expm(a: Any) -> Any:
    xp = namespace_of(a)
    x = a.astype(np.float64)
    n = x.shape[-1]
    norm = float(xp.abs(x).sum(axis=-1).max()) if x.size else 0.0
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = x / (2.0**squarings)
    eye = xp.broadcast_to(xp.eye(n), x.shape)
    term, out = eye, eye.copy()
    for k in range(1, _TAYLOR_DEGREE + 1):
        term = xp.matmul(term, x) / k
        out = out + term
    for _ in range(squarings):
        out = xp.matmul(out, out)
    return out.astype(a.dtype)


def _frechet(a: Tensor, e: Tensor) -> Tensor:
    """``L(a, e)``: the upper-right block of ``exp([[a, e], [0, a]])``."""
    n = a.shape[-1]
    zeros = a.new_zeros(tuple(a.shape))  # type: ignore[attr-defined]
    upper = _cat([a, e], -1)
    lower = _cat([zeros, a], -1)
    big = bind(MATRIX_EXP, (_cat([upper, lower], -2),), {})
    return big[..., :n, n:]


def _cat(ts: list, dim: int) -> Tensor:
    return api().cat(ts, dim)


MATRIX_EXP = defop(
    "linalg_matrix_exp",
    impl=_expm,
    saves=("self",),
    vjp={"self": lambda grad, self: _frechet(self.transpose(-2, -1), grad)},
    jvp={"self": lambda t, self: _frechet(self, t)},
)

__all__ = ["MATRIX_EXP"]
