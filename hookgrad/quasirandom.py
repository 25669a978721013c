"""``torch.quasirandom``: Sobol' low-discrepancy sequences.

`SobolEngine` follows PyTorch's engine step for step: 30-bit direction numbers per dimension
(Joe and Kuo's primitive polynomials and initial numbers, the table PyTorch builds in), a
Gray-code walk that XORs one direction number per point, points ``quasi / 2**30``, and the first
point (all zeros unscrambled) handed out before the walk. Unscrambled sequences therefore equal
PyTorch's. Scrambling applies a random lower-triangular binary matrix with unit diagonal to each
dimension's direction numbers and a random digital shift, drawn as PyTorch draws them from
PyTorch's random stream (seeded by ``seed``), so scrambled sequences equal PyTorch's too.

The direction-number table is read from SciPy's copy of it (``scipy.stats``), so SobolEngine
needs SciPy installed (an ``ImportError`` says so otherwise).

Mirrors: ``torch.quasirandom.SobolEngine``.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

import numpy as np

from hookgrad._dtypes import float32, get_default_dtype, int64
from hookgrad._functional.creation import tensor
from hookgrad._functional.random import Generator, randint
from hookgrad._tensor import Tensor

__all__ = ["SobolEngine"]


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray]:
    try:
        stats = importlib.import_module("scipy.stats")
    except ImportError as e:  # pragma: no cover - scipy is installed with the test extra
        raise ImportError("hookgrad.quasirandom.SobolEngine reads Joe and Kuo's direction "
                          "numbers from SciPy: pip install scipy") from e
    data = np.load(os.path.join(os.path.dirname(stats.__file__),
                                "_sobol_direction_numbers.npz"))
    return data["poly"], data["vinit"]


def _direction_numbers(dimension: int, bits: int) -> np.ndarray:
    """(dimension, bits) int64 direction numbers, each ``m_j << (bits - 1 - j)``."""
    poly, vinit = _table()
    v = np.ones((dimension, bits), dtype=np.int64)
    for d in range(1, dimension):
        p = int(poly[d])
        degree = p.bit_length() - 1
        v[d, :degree] = vinit[d, :degree]
        for j in range(degree, bits):
            new = v[d, j - degree] ^ (v[d, j - degree] << degree)
            for k in range(1, degree):
                if (p >> (degree - k)) & 1:
                    new ^= v[d, j - k] << k
            v[d, j] = new
    return v << (bits - 1 - np.arange(bits, dtype=np.int64))


def _walk(quasi: np.ndarray, n: int, state: np.ndarray, start: int) -> tuple[np.ndarray, ...]:
    """`n` Gray-code steps from point number `start`: (points as integers, new quasi)."""
    out = np.empty((n, quasi.shape[0]), dtype=np.int64)
    quasi = quasi.copy()
    for i in range(n):
        count = start + i
        bit = (~count & (count + 1)).bit_length() - 1  # the lowest zero bit of count
        quasi ^= state[:, bit]
        out[i] = quasi
    return out, quasi


class SobolEngine:
    """Draws points of a (possibly scrambled) Sobol' sequence in ``[0, 1)^dimension``.

    Args:
        dimension: number of coordinates, 1 .. 21201.
        scramble: apply a random linear matrix scramble and digital shift.
        seed: seed of the scramble's generator (None: the default generator).

    Example:
        >>> import hookgrad as torch
        >>> torch.quasirandom.SobolEngine(2).draw(4)
        tensor([[0.0000, 0.0000],
                [0.5000, 0.5000],
                [0.7500, 0.2500],
                [0.2500, 0.7500]])

    Mirrors: ``torch.quasirandom.SobolEngine``.
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed, self.scramble, self.dimension = seed, scramble, dimension
        state = _direction_numbers(dimension, self.MAXBIT)
        shift = np.zeros(dimension, dtype=np.int64)
        if scramble:
            state, shift = self._scrambled(state)
        self.sobolstate = tensor(state, dtype=int64)
        self.shift = tensor(shift, dtype=int64)
        self.quasi = self.shift.clone()
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scrambled(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = None if self.seed is None else Generator().manual_seed(self.seed)
        bits = self.MAXBIT
        shift_bits = np.asarray(randint(2, (self.dimension, bits), generator=g).tolist())
        shift = shift_bits @ (np.int64(1) << np.arange(bits, dtype=np.int64))
        ltm = np.tril(np.asarray(randint(2, (self.dimension, bits, bits),
                                         generator=g).tolist()), -1)
        ltm[:, np.arange(bits), np.arange(bits)] = 1  # unit diagonal: an invertible scramble
        weights = np.int64(1) << (bits - 1 - np.arange(bits, dtype=np.int64))
        digits = (state[:, :, None] & weights) != 0  # (dim, column, bit) most significant first
        mixed = np.einsum("dpk,djk->djp", ltm, digits.astype(np.int64)) & 1
        return (mixed * weights).sum(-1).astype(np.int64), shift.astype(np.int64)

    def _points(self, n: int, start: int) -> np.ndarray:
        q = np.asarray(self.quasi.tolist(), dtype=np.int64).reshape(self.dimension)
        ints, q = _walk(q, n, np.asarray(self.sobolstate.tolist(), dtype=np.int64), start)
        self.quasi = tensor(q, dtype=int64)
        return ints / 2.0 ** self.MAXBIT

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next `n` points, shape ``(n, dimension)`` (default dtype: the default float)."""
        dtype = get_default_dtype() if dtype is None else dtype
        first = np.asarray(self._first_point.tolist()).reshape(1, -1)
        if self.num_generated == 0:
            values = first if n == 1 else np.concatenate([first, self._points(n - 1, 0)])
        else:
            values = self._points(n, self.num_generated - 1)
        self.num_generated += n
        result = tensor(values.reshape(n, self.dimension), dtype=dtype or float32)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``2**m`` points; the total drawn must stay a power of 2."""
        n = 2 ** m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please "
                "use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point."""
        self.quasi = self.shift.clone()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip `n` points (as drawing them would)."""
        if n > 0:
            start = 0 if self.num_generated == 0 else self.num_generated - 1
            steps = n - 1 if self.num_generated == 0 else n
            self._points(steps, start)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
