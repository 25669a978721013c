"""``torch.poisson`` and ``torch.binomial``: count samples from hookgrad's generator.

Draws come from the generator's NumPy stream (``generator=`` or the default one, so
``manual_seed`` makes them repeatable); they are not PyTorch's stream. Checks, dtypes,
broadcasting and the recorded nodes are PyTorch's (`hookgrad._ops.random_counts`).

Mirrors: ``torch.poisson``, ``torch.binomial``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._functional.random import _rng
from hookgrad._ops.random_counts import BINOMIAL, POISSON
from hookgrad._tensor import Tensor

__all__ = ["poisson", "binomial"]


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(_backend.backend_of(t._data).to_host(t._data), dtype=np.float64)


def _as_tensor_like(t: Tensor, values: np.ndarray) -> Tensor:
    backend = _backend.backend_of(t._data)
    return Tensor._make(backend.from_host(np.array(values, dtype=t.dtype.np)))


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson(`input`) counts, in `input`'s floating dtype (``PoissonBackward0``: zero gradient).

    Mirrors: ``torch.poisson``.
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{input.dtype.scalar_type}'")
    rate = _host(input)
    if not (rate >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    finite = np.isfinite(rate)
    draws = np.asarray(_rng(generator).poisson(np.where(finite, rate, 0.0)), dtype=np.float64)
    # PyTorch's kernel casts an infinite rate's draw through int64: the lowest int64
    draws = np.where(finite, draws, float(np.iinfo(np.int64).min))
    return bind(POISSON, (input, _as_tensor_like(input, draws)), {})


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial(`count`, `prob`) successes, broadcast, in `count`'s dtype.

    A probability outside [0, 1] is clamped into it and a negative count draws 0, as
    PyTorch's sampler does; the node raises if backward reaches it (PyTorch's
    ``NotImplemented``).

    Mirrors: ``torch.binomial``.
    """
    for t, what in ((count, "count"), (prob, "prob")):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {what}, got: "
                             f"{t.dtype.scalar_type}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.scalar_type} but expected "
                           f"{count.dtype.scalar_type}")
    n, p = np.broadcast_arrays(_host(count), _host(prob))
    p = np.clip(np.nan_to_num(p, nan=0.0), 0.0, 1.0)
    trials = np.where(np.isfinite(n) & (n > 0), np.floor(np.nan_to_num(n)), 0).astype(np.int64)
    draws = np.asarray(_rng(generator).binomial(trials, p), dtype=np.float64)
    draws = np.where(np.isnan(n), np.nan, draws)
    return bind(BINOMIAL, (count, prob, _as_tensor_like(count, draws)), {})
