"""`biject_to` and `transform_to`: the transform from unconstrained space onto a constraint.

`biject_to(c)` is a bijection (for reparametrised inference); `transform_to(c)` need only be
onto (it may be cheaper, e.g. softmax for the simplex). Both look the constraint's class up
in a table that users extend with ``register``.

Mirrors: ``torch.distributions.constraint_registry``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from hookgrad.distributions import _transforms_more as more
from hookgrad.distributions import constraints
from hookgrad.distributions import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to transform factories.

    Mirrors: ``torch.distributions.constraint_registry.ConstraintRegistry``.
    """

    def __init__(self) -> None:
        self._registry: dict[type, Callable] = {}

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Register `factory(constraint) -> Transform` for a constraint class (or instance);
        usable as a decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> T.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*cs: Any) -> Callable:
    def decorate(factory: Callable) -> Callable:
        for c in cs:
            biject_to.register(c, factory)
            transform_to.register(c, factory)
        return factory
    return decorate


@_both(constraints.real)
def _to_real(constraint: Any) -> T.Transform:
    return T.identity_transform


biject_to.register(constraints.independent, lambda c: T.IndependentTransform(
    biject_to(c.base_constraint), c.reinterpreted_batch_ndims))
transform_to.register(constraints.independent, lambda c: T.IndependentTransform(
    transform_to(c.base_constraint), c.reinterpreted_batch_ndims))


@_both(constraints.positive, constraints.nonnegative)
def _to_positive(constraint: Any) -> T.Transform:
    return T.ExpTransform()


@_both(constraints.greater_than, constraints.greater_than_eq)
def _to_greater_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _to_interval(constraint: Any) -> T.Transform:
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, numbers.Number) and low == 0 and isinstance(high, numbers.Number) \
            and high == 1:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(low, high - low)])


biject_to.register(constraints.simplex, lambda c: T.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: T.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: T.LowerCholeskyTransform())
biject_to.register(constraints.corr_cholesky, lambda c: T.CorrCholeskyTransform())
transform_to.register(constraints.corr_cholesky, lambda c: T.CorrCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda c: more.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite,
                      lambda c: more.PositiveDefiniteTransform())
biject_to.register(constraints.cat, lambda c: more.CatTransform(
    [biject_to(x) for x in c.cseq], c.dim, c.lengths))
transform_to.register(constraints.cat, lambda c: more.CatTransform(
    [transform_to(x) for x in c.cseq], c.dim, c.lengths))
biject_to.register(constraints.stack, lambda c: more.StackTransform(
    [biject_to(x) for x in c.cseq], c.dim))
transform_to.register(constraints.stack, lambda c: more.StackTransform(
    [transform_to(x) for x in c.cseq], c.dim))
