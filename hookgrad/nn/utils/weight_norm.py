"""Weight normalization on forward pre-hooks (the original, deprecated API).

`weight_norm(module)` replaces ``weight`` by two parameters, ``weight_g`` (the norm over every
dim but `dim`) and ``weight_v`` (the direction), and registers a `WeightNorm` forward pre-hook
that recomputes ``weight = weight_v * weight_g / ||weight_v||`` before every forward, exactly
as PyTorch does. Mirrors: ``torch.nn.utils.weight_norm``.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter, UninitializedParameter  # noqa: F401 - torch exports it here

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]

T_module = TypeVar("T_module", bound=Module)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The `pow`-norm of `v` over every dim but `dim`, shaped to broadcast against `v` (``dim
    = -1``: the norm of the whole tensor).

    Mirrors: ``torch.norm_except_dim``.
    """
    if dim == -1:
        return v.norm(pow)  # type: ignore[attr-defined]
    n = v.dim()
    if dim == 0:
        shape = (v.size(0),) + (1,) * (n - 1)
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(shape)  # type: ignore
    if dim == n - 1:
        shape = (1,) * (n - 1) + (v.size(n - 1),)
        return v.contiguous().view(-1, v.size(n - 1)).norm(pow, 0).view(shape)  # type: ignore
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)  # type: ignore


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))``.

    Mirrors: ``torch._weight_norm`` (PyTorch's fused CPU kernel shows one
    ``WeightNormInterfaceBackward0`` node; hookgrad composes it, with the same values and
    gradients).
    """
    return v * (g / norm_except_dim(v, 2, dim))  # type: ignore[operator]


class WeightNorm:
    """The forward pre-hook recomputing ``<name>`` from ``<name>_g`` and ``<name>_v``.

    Mirrors: ``torch.nn.utils.weight_norm.WeightNorm``.
    """

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """``_weight_norm(v, g, dim)``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Reparametrize ``module.<name>`` and register the hook (warns: deprecated).

        Raises:
            RuntimeError: a second weight norm on the same parameter.
        """
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put ``<name>`` back as one parameter holding the current weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Apply weight normalization to ``module.<name>`` (see the module docstring).

    Example:
        >>> import warnings, hookgrad as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
        >>> tuple(m.weight_g.shape), tuple(m.weight_v.shape)
        ((2, 1), (2, 3))

    Mirrors: ``torch.nn.utils.weight_norm``.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Remove the weight-norm hook of ``module.<name>``.

    Raises:
        ValueError: no weight norm on `name`.

    Mirrors: ``torch.nn.utils.remove_weight_norm``.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
