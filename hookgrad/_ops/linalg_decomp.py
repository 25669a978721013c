"""Matrix inverse, determinant, log-|determinant| and Cholesky factor, with derivative rules.

Layer 3. Forward on the array namespace's ``linalg``; the rules call these primitives
themselves (through `bind`), so higher derivatives work:

- ``linalg_inv_ex`` (``LinalgInvExBackward0``): ``dA = -R^T G R^T`` with ``R = A^{-1}``.
- ``linalg_det`` (``LinalgDetBackward0``): ``dA = G det(A) A^{-T}`` (needs A invertible).
- ``linalg_logabsdet`` (node ``LinalgSlogdetBackward0``, the differentiable output of
  ``slogdet``): ``dA = G A^{-T}``.
- ``linalg_cholesky_ex`` (``LinalgCholeskyExBackward0``): with ``L = chol(A)``,
  ``dA = sym(L^{-T} Phi(L^T G) L^{-1})``, ``Phi`` = lower triangle with the diagonal halved.
"""

from __future__ import annotations

from typing import Any


from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._rules import NO_TANGENT
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

__all__ = ["INV", "DET", "LOGABSDET", "CHOLESKY", "DET_SIGN"]


def _t(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _inv_impl(a: Any) -> Any:
    return namespace_of(a).linalg.inv(a)


INV = defop(
    "linalg_inv_ex",
    impl=_inv_impl,
    inputs=("A",),
    saves=("result",),
    node_name="LinalgInvExBackward0",
    vjp={"A": lambda grad, result: -(_t(result) @ grad @ _t(result))},
    jvp={"A": lambda t, result: -(result @ t @ result)},
)


def _det_impl(a: Any) -> Any:
    return namespace_of(a).linalg.det(a)


def _scale(g: Tensor) -> Tensor:
    return g.unsqueeze(-1).unsqueeze(-1)


DET = defop(
    "linalg_det",
    impl=_det_impl,
    inputs=("A",),
    saves=("A", "result"),
    node_name="LinalgDetBackward0",
    vjp={"A": lambda grad, A, result: _scale(grad * result) * _t(bind(INV, (A,), {}))},
    jvp={"A": lambda t, A, result: result * (bind(INV, (A,), {}) @ t).diagonal(0, -2, -1)
         .sum(-1)},
)


def _logabsdet_impl(a: Any) -> Any:
    xp = namespace_of(a)
    # asarray: a backend's slogdet may hand back its named tuple's fields unconverted
    return xp.asarray(xp.linalg.slogdet(a)[1])


# The sign half of ``slogdet``: a primitive of its own so that transforms (vmap) see its read
# of the values; piecewise constant, so no input is differentiable through it.
DET_SIGN = defop(
    "_linalg_det_sign",
    impl=lambda A: namespace_of(A).linalg.slogdet(A)[0],
    inputs=("A",),
    nondifferentiable={"A": "the sign of a determinant is piecewise constant (zero gradient)"},
    jvp=NO_TANGENT,
)


LOGABSDET = defop(
    "linalg_logabsdet",
    impl=_logabsdet_impl,
    inputs=("A",),
    saves=("A",),
    node_name="LinalgSlogdetBackward0",
    vjp={"A": lambda grad, A: _scale(grad) * _t(bind(INV, (A,), {}))},
    jvp={"A": lambda t, A: (bind(INV, (A,), {}) @ t).diagonal(0, -2, -1).sum(-1)},
)


def _cholesky_impl(a: Any) -> Any:
    return namespace_of(a).linalg.cholesky(a)


def _phi(x: Tensor) -> Tensor:
    return x.tril() - 0.5 * x.triu().tril()  # triu().tril(): the diagonal, as a matrix


def _cholesky_vjp(grad: Tensor, result: Tensor) -> Tensor:
    linv = bind(INV, (result,), {})
    ga = _t(linv) @ _phi(_t(result) @ grad) @ linv
    return 0.5 * (ga + _t(ga))


def _cholesky_jvp(t: Tensor, result: Tensor) -> Tensor:
    linv = bind(INV, (result,), {})
    return result @ _phi(linv @ t @ _t(linv))


CHOLESKY = defop(
    "linalg_cholesky_ex",
    impl=_cholesky_impl,
    inputs=("A",),
    saves=("result",),
    node_name="LinalgCholeskyExBackward0",
    vjp={"A": _cholesky_vjp},
    jvp={"A": _cholesky_jvp},
)

