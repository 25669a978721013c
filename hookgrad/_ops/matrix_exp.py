"""``linalg_matrix_exp`` (``LinalgMatrixExpBackward0``) and ``linalg_solve_ex``
(``LinalgSolveExBackward0``, ``A X = B``: ``grad_B = solve(A^T, G)``, ``grad_A = -grad_B X^T``).

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


# ---------------------------------------------------------------- linalg_solve_ex
def _is_vector(b_shape: tuple, a_shape: tuple) -> bool:
    """ATen's rule: `B` is a (batch of) vector(s) when 1-d or shaped like ``A[..., 0]``."""
    return len(b_shape) == 1 or tuple(b_shape) == tuple(a_shape)[:-1]


def _solve_impl(A: Any, B: Any) -> Any:
    xp = namespace_of(A)
    vector = _is_vector(B.shape, A.shape)
    b = B[..., None] if vector else B
    x = xp.linalg.solve(A, xp.broadcast_to(b, (*A.shape[:-2], *b.shape[-2:])) if
                        b.ndim < A.ndim else b)
    return x[..., 0] if vector else x


def _solve_grad_b(grad: Tensor, A: Tensor, B_shape: tuple) -> Tensor:
    return bind(SOLVE, (A.transpose(-2, -1), grad), {}).sum_to_size(tuple(B_shape))


def _solve_grad_a(grad: Tensor, A: Tensor, result: Tensor, B_shape: tuple) -> Tensor:
    gb = bind(SOLVE, (A.transpose(-2, -1), grad), {})
    if _is_vector(B_shape, tuple(A.shape)):
        gb, x = gb.unsqueeze(-1), result.unsqueeze(-1)
    else:
        x = result
    ga = -(gb @ x.transpose(-2, -1))
    return ga.sum_to_size(tuple(A.shape))


SOLVE = defop(
    "linalg_solve_ex",
    impl=_solve_impl,
    inputs=("A", "B"),
    saves=("A", "result"),
    node_name="LinalgSolveExBackward0",
    vjp={"A": _solve_grad_a, "B": _solve_grad_b},
    jvp={"A": lambda t, A, result, B_shape: _solve_tangent_a(t, A, result, B_shape),
         "B": lambda t, A: bind(SOLVE, (A, t), {})},
)


def _solve_tangent_a(t: Tensor, A: Tensor, result: Tensor, B_shape: tuple) -> Tensor:
    vector = _is_vector(B_shape, tuple(A.shape))
    x = result.unsqueeze(-1) if vector else result
    out = -bind(SOLVE, (A, t @ x), {})
    return out.squeeze(-1) if vector else out


__all__ += ["SOLVE"]
