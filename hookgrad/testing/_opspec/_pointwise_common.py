"""Sample builders shared by the pointwise OpSpec modules.

Every elementwise op gets a 2-D sample, a 0-d sample and a zero-size sample; binary ops add
broadcasting pairs (a row against a matrix, a column against a row, a 0-d tensor against a
vector). Domains keep gradcheck away from kinks and singularities: `away` draws values whose
magnitude is bounded below, `off_grid` keeps rounding ops away from their jumps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, Sample

Maker = Callable[[np.random.Generator], np.ndarray]


def away(shape: tuple[int, ...], low: float = 0.5, high: float = 2.0) -> Maker:
    """Random signs, magnitudes in ``[low, high]``: no zeros (abs, reciprocal, divisors)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        sign = rng.choice([-1.0, 1.0], size=shape)
        return np.asarray(sign * rng.uniform(low, high, size=shape), dtype=np.float64)

    return make


def off_grid(shape: tuple[int, ...], step: float = 1.0) -> Maker:
    """Values ``k * step + f`` with ``f`` in ``[0.1, 0.4] * step``: far from integer and half
    steps, where rounding ops jump."""

    def make(rng: np.random.Generator) -> np.ndarray:
        k = rng.integers(-3, 3, size=shape)
        f = rng.uniform(0.1, 0.4, size=shape)
        return np.asarray((k + f) * step, dtype=np.float64)

    return make


def fixed(values: Any) -> Maker:
    """Exactly these values (kinks, ties, boundaries)."""
    arr = np.asarray(values, dtype=np.float64)
    return lambda rng: arr.copy()


def x(shape: tuple[int, ...], low: float = -2.0, high: float = 2.0, **kw: Any) -> Arg:
    return Arg(shape, low=low, high=high, **kw)


def unary(low: float = -2.0, high: float = 2.0, make: Callable[[tuple], Maker] | None = None,
          kwargs: dict | None = None, empty: bool = True) -> list[Sample]:
    """2-D, 0-d and (optionally) zero-size samples for a one-input op."""
    kw = kwargs or {}
    shapes = [((3, 4), "2d"), ((), "0d")] + ([((0, 3), "empty")] if empty else [])
    return [
        Sample((Arg(s, low=low, high=high, make=make(s) if make else None),), kw, name)
        for s, name in shapes
    ]


def binary(a: tuple[float, float] = (-2.0, 2.0), b: tuple[float, float] = (-2.0, 2.0),
           make_b: Callable[[tuple], Maker] | None = None, kwargs: dict | None = None,
           empty: bool = True) -> list[Sample]:
    """Same-shape, broadcasting, 0-d and zero-size pairs for a two-input op."""
    kw = kwargs or {}
    pairs = [((3, 4), (3, 4), "same"), ((2, 3), (3,), "bcast_row"),
             ((2, 1), (1, 3), "bcast_outer"), ((), (3,), "0d_vs_1d"), ((), (), "0d")]
    if empty:
        pairs.append(((0, 3), (3,), "empty"))
    return [
        Sample((Arg(sa, low=a[0], high=a[1]),
                Arg(sb, low=b[0], high=b[1], make=make_b(sb) if make_b else None)), kw, name)
        for sa, sb, name in pairs
    ]


def const_arg(value: Any) -> Arg:
    """A non-tensor argument (a Python scalar passed as is)."""
    return Arg(None, value=value)


def mask(shape: tuple[int, ...]) -> Arg:
    return Arg(shape, dtype="bool", requires_grad=False)


__all__ = ["away", "off_grid", "fixed", "x", "unary", "binary", "const_arg", "mask"]
