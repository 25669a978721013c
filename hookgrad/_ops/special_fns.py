"""Inverse-normal, scaled-complementary-error and Bessel special functions as elementwise primitives.

Layer 3. Values from SciPy's ufuncs (``scipy.special``), which NumPy lacks; without SciPy they
raise a RuntimeError naming it. (The gamma family and ``erfinv`` are
`hookgrad._ops.pointwise_gamma`'s, which need no SciPy.) The derivative rules are PyTorch's
(``derivatives.yaml``):

- ``special_ndtri``: ``sqrt(2 pi) * exp(ndtri(x)^2 / 2)``; ``special_erfcx``:
  ``2 x erfcx(x) - 2 / sqrt(pi)``;
- ``i0``: ``i1``; ``special_i0e``: ``i1e - sign * i0e``; ``special_i1``: ``i0 - i1 / x``
  (1/2 at 0); ``special_i1e``: ``i0e - i1e (sign + 1 / x)`` (1/2 at 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._ops._special import _SCIPY
from hookgrad._ops._host_kernel import on_host
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

__all__ = ["SPECIAL"]


def _scipy(fn: str) -> Any:
    def impl(x: Any, *args: Any) -> Any:
        if _SCIPY is None:
            raise RuntimeError(f"hookgrad computes {fn} with SciPy (scipy.special), which is "
                               "not installed")
        out = getattr(_SCIPY, fn)(*args, x) if args else getattr(_SCIPY, fn)(x)
        return np.asarray(out, dtype=x.dtype)
    return impl


SPECIAL: dict[str, Any] = {}


def _p(name: str, x: Tensor, n: int | None = None) -> Tensor:
    return bind(SPECIAL[name], (x,), {} if n is None else {"n": n})


def _unary(name: str, scipy_name: str, rule: Any, node: str | None = None) -> None:
    SPECIAL[name] = defop(name, impl=on_host(_scipy(scipy_name)), saves=("self",),
                          vjp={"self": lambda grad, self: grad * rule(self)},
                          jvp="elementwise", **({"node_name": node} if node else {}))


def _unary_r(name: str, scipy_name: str, rule: Any, node: str | None = None) -> None:
    """As `_unary` for rules that reuse the result (PyTorch saves both self and result)."""
    SPECIAL[name] = defop(name, impl=on_host(_scipy(scipy_name)), saves=("self", "result"),
                          vjp={"self": lambda grad, self, result: grad * rule(self, result)},
                          jvp="elementwise", **({"node_name": node} if node else {}))


_SQRT_2PI = math.sqrt(2 * math.pi)


def _i1_grad(x: Tensor, r: Tensor) -> Tensor:
    safe = x.where(x != 0, 1.0)
    return (_p("i0", x) - r / safe).where(x != 0, 0.5)


def _i1e_grad(x: Tensor, r: Tensor) -> Tensor:
    safe = x.where(x != 0, 1.0)
    return (_p("special_i0e", x) - r * (x.sign() + 1 / safe)).where(x != 0, 0.5)


_unary("special_ndtri", "ndtri", lambda x: _SQRT_2PI * (_p("special_ndtri", x) ** 2 / 2).exp())
_unary_r("special_erfcx", "erfcx", lambda x, r: 2 * x * r - 2 / math.sqrt(math.pi))
_unary("i0", "i0", lambda x: _p("special_i1", x))
_unary_r("special_i0e", "i0e", lambda x, r: _p("special_i1e", x) - x.sign() * r,
         "SpecialI0EBackward0")
_unary_r("special_i1", "i1", _i1_grad)
_unary_r("special_i1e", "i1e", _i1e_grad, "SpecialI1EBackward0")
