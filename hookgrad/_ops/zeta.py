"""The Hurwitz zeta function ``zeta(x, q) = sum_k (k + q)^-x``.

Mirrors: ``torch.special.zeta`` (node ``SpecialZetaBackward0``: the gradient w.r.t. `other` is
``-x * zeta(x + 1, q)``; w.r.t. `self` PyTorch raises NotImplementedError, and so does this).
Values by Cephes' Euler-Maclaurin summation (the algorithm PyTorch's CPU kernel uses), written
for whole arrays: a fixed number of terms, then the tail's asymptotic series.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

# Cephes' coefficients (2k)! / B_2k of the Euler-Maclaurin tail
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18)


def hurwitz_zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Elementwise Hurwitz zeta in float64 with Cephes' special values."""
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        # terms k = 0..n-1 with n such that q + n > 9 (at least 9 terms, as Cephes)
        n = int(max(9, np.ceil(np.nanmax(9 - q, initial=0.0)) + 1)) if q.size else 9
        s = np.zeros(x.shape)
        for k in range(n):
            s = s + (q + k) ** -x
        w = q + n
        b = w ** -x
        # Cephes' sum includes the term at w; then the integral and half-term corrections
        s = s + b + b * w / (x - 1) - 0.5 * b
        a, kk, bb = np.ones(x.shape), 0.0, b
        for coef in _A:
            a = a * (x + kk)
            bb = bb / w
            s = s + a * bb / coef
            kk += 1
            a = a * (x + kk)
            bb = bb / w
            kk += 1
        s = np.where(x == 1, np.inf, s)
        s = np.where(x < 1, np.nan, s)
        bad_q = q <= 0
        s = np.where(bad_q & (q == np.floor(q)), np.inf, s)
        s = np.where(bad_q & (q != np.floor(q)) & (x != np.floor(x)), np.nan, s)
    return s


def _zeta(self: Any, other: Any) -> Any:
    xp = _backend.namespace_of(self)
    x, q = _backend.to_numpy(self), _backend.to_numpy(other)
    dt = np.result_type(x, q)
    return xp.asarray(hurwitz_zeta(x, q).astype(dt))


def zeta_tensor(x: Tensor, q: Tensor) -> Tensor:
    return bind(P["special_zeta"], (x, q), {})


def _no_self_grad(grad: Any) -> Any:
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _no_jvp() -> Any:
    raise NotImplementedError("Trying to use forward AD with special_zeta that does not support "
                              "it because it has not been implemented yet.")


def _q_grad(grad: Tensor, self: Tensor, other: Tensor, other_shape: tuple) -> Tensor:
    g = grad * -self * zeta_tensor(self + 1, other)
    return g.sum_to_size(other_shape)


defop(
    "special_zeta",
    impl=_zeta,
    inputs=("self", "other"),
    saves=("self", "other"),
    vjp={"self": _no_self_grad, "other": _q_grad},
    # PyTorch has no forward-mode formula for special_zeta
    jvp={"self": lambda t: _no_jvp(), "other": lambda t: _no_jvp()},
)


from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import broadcasting as _broadcasting  # noqa: E402

_batches(["special_zeta"], _broadcasting)  # elementwise

# meta: the results' metadata without the host kernel
from hookgrad._ops import _meta_shapes  # noqa: E402

_meta_shapes.shapes(["special_zeta"], _meta_shapes.broadcast)
