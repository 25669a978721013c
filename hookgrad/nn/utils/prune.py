"""Pruning on forward pre-hooks. Mirrors: ``torch.nn.utils.prune``.

Built as PyTorch builds it: pruning ``module.weight`` moves the parameter to ``weight_orig``,
adds a ``weight_mask`` buffer, sets the plain attribute ``weight = weight_orig * weight_mask``
and registers the pruning method itself as a forward pre-hook that recomputes that product
before every forward. Pruning the same tensor again combines the methods in a
`PruningContainer` (each later method only sees the still-unpruned entries). `remove` makes the
pruning permanent: ``weight`` becomes a parameter again, holding the masked values.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._functional import random as _random
from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module
from hookgrad.nn.utils.convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A pruning method: computes a mask, and is the forward pre-hook that applies it.

    Mirrors: ``torch.nn.utils.prune.BasePruningMethod``.
    """

    _tensor_name: str
    PRUNING_TYPE = "unstructured"

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask of `t`, starting from `default_mask`."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig``."""
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Any = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)`` (see module docstring).

        Raises:
            AssertionError: importance scores shaped unlike the tensor.
        """
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """`t` times its mask (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        mask = _creation.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=mask)  # type: ignore[operator]

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter with the masked values."""
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type, module: Module, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """The new method, merged with an existing pruning hook on `name` (whose hook is removed)."""
    old = [(k, h) for k, h in module._forward_pre_hooks.items()
           if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(old) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                             f"module {module}. Use a PruningContainer.")
    for k, _ in old:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not old:
        return method
    previous = old[0][1]
    if isinstance(previous, PruningContainer):
        previous.add_pruning_method(method)
        return previous
    container = PruningContainer(previous)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """Successive pruning methods on one tensor; the last one decides among what is left.

    Mirrors: ``torch.nn.utils.prune.PruningContainer``.
    """

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append `method`.

        Raises:
            TypeError: not a pruning method.
            ValueError: it prunes another tensor.
        """
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found "
                f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        n_dims = t.dim()
        if method.PRUNING_TYPE == "unstructured":
            slc: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            dim = method.dim if method.dim >= 0 else n_dims + method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(n_dims))
        elif method.PRUNING_TYPE == "global":
            slc = tuple(slice(None) for _ in range(n_dims))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones). Mirrors: ``torch.nn.utils.prune.Identity``."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries chosen at random.

    Mirrors: ``torch.nn.utils.prune.RandomUnstructured``.
    """

    def __init__(self, amount: float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[_random.rand_like(t).view(-1).topk(k).indices] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              amount: float) -> BasePruningMethod:
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value.

    Mirrors: ``torch.nn.utils.prune.L1Unstructured``.
    """

    def __init__(self, amount: float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[t.abs().view(-1).topk(k, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, index: Any) -> Tensor:
    mask = _creation.zeros_like(t)
    mask[tuple(index if d == dim or d == dim + t.dim() else slice(None)
               for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random.

    Mirrors: ``torch.nn.utils.prune.RandomStructured``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        if k == 0:
            return default_mask
        prob = _random.rand(size)
        keep = prob > prob.sort().values[k - 1]  # the k-th smallest (kthvalue)
        mask = _channel_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest `n`-norm.

    Mirrors: ``torch.nn.utils.prune.LnStructured``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        if k == 0:
            return default_mask
        dims = list(range(t.dim()))
        dims.remove(dims[self.dim])
        norm = t.norm(p=self.n, dim=dims)  # type: ignore[attr-defined]
        mask = _channel_mask(t, self.dim, norm.topk(size - k, largest=True).indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero. Mirrors: ``torch.nn.utils.prune.CustomFromMask``."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)  # type: ignore[operator]

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              mask: Tensor) -> BasePruningMethod:
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Mirrors: ``torch.nn.utils.prune.identity``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Mirrors: ``torch.nn.utils.prune.random_unstructured``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune the `amount` (count or fraction) smallest-magnitude entries of ``module.<name>``.

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.nn.utils import prune
        >>> m = torch.nn.Linear(2, 1)
        >>> with torch.no_grad():
        ...     _ = m.weight.copy_(torch.tensor([[0.1, -2.0]]))
        >>> _ = prune.l1_unstructured(m, "weight", amount=1)
        >>> m.weight_mask.tolist(), prune.is_pruned(m)
        ([[0.0, 1.0]], True)

    Mirrors: ``torch.nn.utils.prune.l1_unstructured``.
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Mirrors: ``torch.nn.utils.prune.random_structured``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Mirrors: ``torch.nn.utils.prune.ln_structured``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Any, pruning_method: type, importance_scores: Any = None,
                        **kwargs: Any) -> None:
    """Prune across several tensors at once: the method ranks all their entries together, and
    each tensor gets its share of the global mask as a `CustomFromMask`.

    Raises:
        TypeError: `parameters` not iterable, scores not a dict, or a non-unstructured method.

    Mirrors: ``torch.nn.utils.prune.global_unstructured``.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    scores = importance_scores if importance_scores is not None else {}
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default = parameters_to_vector([getattr(m, n + "_mask", _creation.ones_like(getattr(m, n)))
                                    for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(relevant, default)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final[pointer:pointer + n].view_as(param))
        pointer += n


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Mirrors: ``torch.nn.utils.prune.custom_from_mask``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent and drop its hook.

    Raises:
        ValueError: `name` is not pruned.

    Mirrors: ``torch.nn.utils.prune.remove``.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    """Whether `module` or a submodule has a pruning hook.

    Mirrors: ``torch.nn.utils.prune.is_pruned``.
    """
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


# ---------------------------------------------------------------- argument checks
def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count(amount: Any, size: int) -> int:
    """Entries to prune; an integer amount larger than `size` is an error."""
    k = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={size}")
    return int(k)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
