"""`Distribution`: the base class (shapes, argument/support validation, sampling helpers).

Mirrors: ``torch.distributions.distribution.Distribution``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from hookgrad._dtypes import Size, get_default_dtype
from hookgrad._functional import creation as _creation
from hookgrad._ops._shapes import broadcast_shapes
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.distributions import constraints

__all__ = ["Distribution", "broadcast_all", "lazy_property", "set_default_validate_args"]


class lazy_property:  # noqa: N801 - PyTorch's name
    """Computed on first access, then stored in the instance. Mirrors: ``distributions.utils.lazy_property``."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def broadcast_all(*values: Any) -> tuple:
    """Numbers become tensors, then all are broadcast together.

    Mirrors: ``torch.distributions.utils.broadcast_all``.
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = first.dtype if first is not None else get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else _creation.tensor(v, dtype=dtype) for v in values]
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    # a tensor already of the common shape is returned itself (``broadcast_tensors`` does so)
    return tuple(t if tuple(t.shape) == tuple(shape) else t.expand(shape) for t in tensors)


def set_default_validate_args(value: bool) -> None:
    """Turn argument validation on or off for new distributions.

    Mirrors: ``torch.distributions.Distribution.set_default_validate_args``.
    """
    if value not in (True, False):
        raise ValueError
    # a class attribute, as in PyTorch: pyro reads ``Distribution._validate_args`` and an
    # instance built without ``validate_args`` follows later changes of the default
    Distribution._validate_args = value


class Distribution:
    """Base of the probability distributions. Mirrors: ``torch.distributions.Distribution``."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: constraints.Constraint | None = None
    _validate_args = __debug__

    set_default_validate_args = staticmethod(set_default_validate_args)

    def __init__(self, batch_shape: Any = Size(), event_shape: Any = Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        for param, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # not given: derived from the other parametrisation
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A view of this distribution with a larger batch shape (no new parameters)."""
        raise NotImplementedError

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement rsample")

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}.")
        actual = value.size()
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual} vs "
                    f"{expected}.")
        support = self.support
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{type(self).__name__}({args})"


def expand_params(dist: Distribution, cls: type, batch_shape: Any, _instance: Any,
                  names: tuple, event_shape: Any = Size()) -> Any:
    """``dist.expand(batch_shape)`` for a distribution whose state is the tensors `names`
    (each expanded to ``batch_shape`` + its trailing event dims); validation is not re-run."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        value = dist.__dict__.get(name)
        if value is None:
            continue
        extra = tuple(value.shape[len(dist.batch_shape):])
        setattr(new, name, value.expand(tuple(batch_shape) + extra))
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
