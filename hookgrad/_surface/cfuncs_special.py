"""Orthogonal polynomials of ``torch.special`` and the Hurwitz ``zeta``.

Mirrors: ``torch.special.chebyshev_polynomial_t/u/v/w``, ``shifted_chebyshev_polynomial_*``,
``hermite_polynomial_h/he``, ``laguerre_polynomial_l``, ``legendre_polynomial_p`` (no gradient:
PyTorch records no node for them) and ``torch.special.zeta``. The polynomials follow PyTorch's
kernels: a negative degree gives 0, a degree is truncated to an integer, the endpoints +-1 have
closed forms, high degrees inside (-1, 1) use the trigonometric forms of the Chebyshev
polynomials, and otherwise the three-term recurrence runs up to the largest degree present.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import hookgrad._functional.creation as C
from hookgrad._dispatch import bind
from hookgrad._dtypes import get_default_dtype
from hookgrad._functional._common import result_type
from hookgrad._ops import zeta as _zeta  # noqa: F401  (registers special_zeta)
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__: list[str] = []  # torch.special only (installed on hookgrad.special)

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]


def _recur(x: np.ndarray, n: np.ndarray, p0: Any, p1: Any,
           step: Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]) -> np.ndarray:
    """p_n(x) by ``p_{k+1} = step(x, p_k, p_{k-1}, k)``, each element to its own degree."""
    out = np.where(n == 0, p0, 0.0) + np.where(n == 1, p1, 0.0)
    top = int(n.max()) if n.size else 0
    p, q = np.broadcast_to(p0, x.shape).astype(x.dtype), np.broadcast_to(p1, x.shape)
    for k in range(1, top):
        p, q = q, step(x, q, p, k)
        out = np.where(n == k + 1, q, out)
    return out


def _odd(n: np.ndarray) -> np.ndarray:
    return n % 2 == 1


def _cheb(kind: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    first = {"t": x, "u": x + x, "v": x + x - 1, "w": x + x + 1}[kind]
    out = _recur(x, n, 1.0, first, lambda x, q, p, k: (x + x) * q - p)
    inside = (np.abs(x) < 1) & (n > (6 if kind == "t" else 8))
    with np.errstate(all="ignore"):
        th = np.arccos(np.clip(x, -1, 1))
        trig = {
            "t": np.cos(n * th),
            "u": np.where(np.sin(th) != 0, np.sin((n + 1) * th) / np.sin(th),
                          (n + 1) * np.cos((n + 1) * th) / x),
            "v": np.where(np.sin(th / 2) != 1, np.cos((n + 0.5) * th) / np.cos(th / 2),
                          np.where(_odd(n), -(n + n + 1), n + n + 1)),
            "w": np.where(np.cos(th / 2) != 1, np.sin((n + 0.5) * th) / np.sin(th / 2),
                          np.where(x > 0, n + n + 1, np.where(_odd(n), -1.0, 1.0))),
        }[kind]
    out = np.where(inside, trig, out)
    sign = np.where(_odd(n), -1.0, 1.0)
    edge = {"t": np.where(x > 0, 1.0, sign), "u": np.where(x > 0, n + 1, sign * (n + 1)),
            "v": np.where(x > 0, 1.0, sign * (n + n + 1)),
            "w": np.where(x > 0, n + n + 1, sign)}[kind]
    return np.where(np.abs(x) == 1, edge, out)


def _poly(name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    if name.startswith("shifted_chebyshev"):
        return _cheb(name[-1], x + x - 1, n)
    if name.startswith("chebyshev"):
        return _cheb(name[-1], x, n)
    if name == "hermite_polynomial_h":
        return _recur(x, n, 1.0, x + x, lambda x, q, p, k: (x + x) * q - 2 * k * p)
    if name == "hermite_polynomial_he":
        return _recur(x, n, 1.0, x, lambda x, q, p, k: x * q - k * p)
    if name == "laguerre_polynomial_l":
        out = _recur(x, n, 1.0, 1 - x, lambda x, q, p, k: ((2 * k + 1 - x) * q - k * p) / (k + 1))
        return np.where(x == 0, 1.0, out)
    out = _recur(x, n, 1.0, x, lambda x, q, p, k: ((2 * k + 1) * x * q - k * p) / (k + 1))
    edge = np.where((x > 0) | (n == 0), 1.0, np.where(_odd(n), -1.0, 1.0))
    return np.where(np.abs(x) == 1, edge, out)


def _polynomial(name: str) -> Callable:
    def fn(input: Any, n: Any, *, out: Any = None) -> Tensor:
        dt = result_type(input, n)
        if not dt.is_floating_point:
            dt = get_default_dtype()
        x = _values(input).astype(dt.np)
        deg = np.trunc(_values(n).astype(np.float64))
        x, deg = np.broadcast_arrays(x, deg)
        with np.errstate(all="ignore"):
            res = np.where(deg < 0, 0.0, _poly(name, x, np.where(deg < 0, 0, deg)))
        result = C.tensor(np.asarray(res).astype(dt.np))
        return result if out is None else out.copy_(result)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Mirrors: ``torch.special.{name}`` (no gradient, as in PyTorch)."
    return fn


def _values(v: Any) -> np.ndarray:
    return np.asarray(v.detach().numpy()) if isinstance(v, Tensor) else np.asarray(v)


def zeta(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Hurwitz zeta ``sum_k (k + other)^-input``. Mirrors: ``torch.special.zeta``."""
    dt = result_type(input, other)
    if not dt.is_floating_point:
        dt = get_default_dtype()
    x = input.to(dt) if isinstance(input, Tensor) else C.tensor(input, dtype=dt)
    q = other.to(dt) if isinstance(other, Tensor) else C.tensor(other, dtype=dt)
    x, q = _broadcast(x, q)
    res = bind(P["special_zeta"], (x, q), {})
    return res if out is None else out.copy_(res)


def _broadcast(x: Tensor, q: Tensor) -> tuple[Tensor, Tensor]:
    shape = np.broadcast_shapes(tuple(x.shape), tuple(q.shape))
    return (x if tuple(x.shape) == shape else x.expand(shape),
            q if tuple(q.shape) == shape else q.expand(shape))


SPECIAL = {name: _polynomial(name) for name in NAMES}
SPECIAL["zeta"] = zeta
