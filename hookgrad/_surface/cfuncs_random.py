"""``torch.poisson`` and ``torch.binomial``: count samples by PyTorch's samplers.

Draws follow PyTorch's kernels on PyTorch's random stream (`hookgrad._functional._random_kernels`,
NOTE [Random streams]), so a seeded call gives PyTorch's counts. Checks, dtypes, broadcasting
and the recorded nodes are PyTorch's (`hookgrad._ops.random_counts`).

Mirrors: ``torch.poisson``, ``torch.binomial``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._dispatch import bind
from hookgrad._functional import _random_kernels as K
from hookgrad._functional.random import _gen
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
    if input.is_meta:  # shapes only: nothing to draw
        return bind(POISSON, (input, input), {})
    rate = _host(input)
    if not (rate >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    finite = np.isfinite(rate)
    draws = K.poisson(_gen(generator), np.where(finite, rate, 0.0))
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
    if count.is_meta or prob.is_meta:  # shapes only: nothing to draw
        from hookgrad._surface.shape_ops import broadcast_tensors  # noqa: PLC0415
        c, p_ = broadcast_tensors(count, prob)
        return bind(BINOMIAL, (count, prob, c), {})
    n, p = np.broadcast_arrays(_host(count), _host(prob))
    work = count.dtype.np
    # PyTorch's sampler in the count's precision; a NaN count has no draw (it gives NaN)
    n_safe = np.where(np.isnan(n), 0.0, n).astype(work)
    draws = K.binomial(_gen(generator), n_safe, p.astype(work)).astype(np.float64)
    draws = np.where(np.isnan(n), np.nan, draws)
    return bind(BINOMIAL, (count, prob, _as_tensor_like(count, draws)), {})
