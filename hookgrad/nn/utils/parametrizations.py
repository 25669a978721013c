"""Parametrizations built on `hookgrad.nn.utils.parametrize`: `weight_norm` and `spectral_norm`.

The modern replacements of the forward-pre-hook APIs, built as PyTorch builds them: state-dict
keys become ``parametrizations.weight.original0``/``original1`` (weight norm: the norm ``g`` and
the direction ``v``) or ``parametrizations.weight.original`` plus the power-iteration buffers
``parametrizations.weight.0._u``/``_v`` (spectral norm). Mirrors:
``torch.nn.utils.parametrizations``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import linalg as _linalg
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module
from hookgrad.nn.utils import parametrize
from hookgrad.nn.utils._orthogonal import orthogonal
from hookgrad.nn.utils.spectral_norm import default_dim
from hookgrad.nn.utils.weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    """``weight = v * g / ||v||`` from ``(g, v)``; ``right_inverse`` splits a weight."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization as a parametrization (``original0`` = g, ``original1`` = v).

    Old state dicts with ``<name>_g``/``<name>_v`` keys load through a pre-hook, as in PyTorch.

    Example:
        >>> import hookgrad as torch
        >>> m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2))
        >>> sorted(m.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']

    Mirrors: ``torch.nn.utils.parametrizations.weight_norm``.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                    missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat_hook)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, sigma estimated by power iteration (buffers ``_u``, ``_v``)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = mat.new_empty(h).normal_(0, 1)  # type: ignore[attr-defined]
            v = mat.new_empty(w).normal_(0, 1)  # type: ignore[attr-defined]
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim())  # type: ignore
                                                if d != self.dim))
        return weight.flatten(1)  # type: ignore[attr-defined]

    def _power_method(self, mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(_linalg.mv(mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(_linalg.mv(mat.H, self._u), dim=0, eps=self.eps,  # type: ignore
                                      out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _linalg.dot(u, _linalg.mv(mat, v))  # PyTorch: vdot (equal for real tensors)
        return weight / sigma  # type: ignore[operator]

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization as a parametrization.

    Raises:
        ValueError: no parameter or buffer `name`.

    Mirrors: ``torch.nn.utils.parametrizations.spectral_norm``.
    """
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations,
                                    default_dim(module) if dim is None else dim, eps))
    return module
