"""Transforms built from others: positive-definite matrices, concatenated and stacked
transforms, and a distribution's CDF as a transform.

Mirrors: the ``PositiveDefiniteTransform``, ``CatTransform``, ``StackTransform`` and
``CumulativeDistributionTransform`` of ``torch.distributions.transforms``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions import constraints
from hookgrad.distributions._transform_base import Transform
from hookgrad.distributions._transforms_elementwise import LowerCholeskyTransform
from hookgrad.distributions import _lower

__all__ = ["CatTransform", "CumulativeDistributionTransform", "PositiveDefiniteTransform",
           "StackTransform"]


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones, ``L L^T`` of the
    `LowerCholeskyTransform` of the input.

    Mirrors: ``torch.distributions.transforms.PositiveDefiniteTransform``.
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(_lower.linalg.cholesky(y))


class CatTransform(Transform):
    """Each of `tseq` applied to its slice (of `lengths`) along `dim`, results concatenated.

    Mirrors: ``torch.distributions.transforms.CatTransform``.
    """

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError("lengths must match the number of transforms")
        self.dim = dim

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, x: Tensor, inverse: bool) -> Tensor:
        parts, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            piece = x.narrow(self.dim, start, length)
            parts.append(t.inv(piece) if inverse else t(piece))
            start += length
        return _lower.cat(parts, dim=self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return self._map(x, False)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._map(y, True)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        hg = _lower
        parts, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            xs, ys = x.narrow(self.dim, start, length), y.narrow(self.dim, start, length)
            ladj = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                from hookgrad.distributions.utils import _sum_rightmost
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
            start += length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        return hg.cat(parts, dim=dim) if dim < 0 else sum(parts)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Each of `tseq` applied to its slice along `dim`, results stacked.

    Mirrors: ``torch.distributions.transforms.StackTransform``.
    """

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z: Tensor) -> list:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        return _lower.stack([t(v) for v, t in zip(self._slices(x), self.transforms)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return _lower.stack([t.inv(v) for v, t in zip(self._slices(y), self.transforms)],
                           self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return _lower.stack([t.log_abs_det_jacobian(a, b) for a, b, t in zip(
            self._slices(x), self._slices(y), self.transforms)], self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's CDF as a map to the unit interval (its log-Jacobian is ``log_prob``).

    Mirrors: ``torch.distributions.transforms.CumulativeDistributionTransform``.
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
