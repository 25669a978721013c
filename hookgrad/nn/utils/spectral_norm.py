"""Spectral normalization on forward pre-hooks (the original API).

`spectral_norm(module)` keeps the raw weight as ``weight_orig``, two power-iteration vectors as
buffers ``weight_u``/``weight_v``, and registers a `SpectralNorm` forward pre-hook that sets
``weight = weight_orig / sigma`` before every forward (one more power iteration per forward in
training mode), plus PyTorch's state-dict version hooks. Mirrors: ``torch.nn.utils.spectral_norm``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from hookgrad._functional import linalg as _linalg
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn import functional as F
from hookgrad.nn.modules.conv import ConvTranspose1d, ConvTranspose2d
from hookgrad.nn.modules.conv3d import ConvTranspose3d
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)
_TRANSPOSED = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)


def default_dim(module: Module) -> int:
    """1 for transposed convolutions (their output channels are dim 1), else 0."""
    return 1 if isinstance(module, _TRANSPOSED) else 0


class SpectralNorm:
    """The forward pre-hook dividing ``<name>_orig`` by its largest singular value.

    Mirrors: ``torch.nn.utils.spectral_norm.SpectralNorm``.
    """

    _version = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """`weight` as ``[size(dim), -1]``."""
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.dim())  # type: ignore
                                          if d != self.dim])
        return mat.reshape(mat.size(0), -1)  # type: ignore[attr-defined]

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``weight_orig / (u . W v)``, after power iterations updating ``u``/``v`` in place."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(_linalg.mv(mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(_linalg.mv(mat, v), dim=0, eps=self.eps, out=u)
                u, v = u.clone(), v.clone()
        sigma = _linalg.dot(u, _linalg.mv(mat, v))
        return weight / sigma  # type: ignore[operator]

    def remove(self, module: Module) -> None:
        """Put ``<name>`` back as one parameter holding the current normalized weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        """Reparametrize ``module.<name>`` and register the hooks.

        Raises:
            RuntimeError: a second spectral norm on the same parameter.
            ValueError: the parameter is None.
        """
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Accepts state dicts of the pre-version-1 layout (``weight`` instead of ``weight_v``).

    Mirrors: ``torch.nn.utils.spectral_norm.SpectralNormLoadStateDictPreHook``.
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                 missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) \
                and key not in state_dict:
            return
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        raise NotImplementedError("hookgrad: loading a spectral_norm state dict saved before "
                                  "PyTorch 1.1 (without weight_v) is not supported")


class SpectralNormStateDictHook:
    """Records the layout version in the state dict's metadata.

    Mirrors: ``torch.nn.utils.spectral_norm.SpectralNormStateDictHook``.
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict, prefix: str,
                 local_metadata: dict) -> None:
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Apply spectral normalization to ``module.<name>`` (see the module docstring).

    Example:
        >>> import hookgrad as torch
        >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 2))
        >>> sorted(k for k, _ in m.named_buffers())
        ['weight_u', 'weight_v']

    Mirrors: ``torch.nn.utils.spectral_norm``.
    """
    SpectralNorm.apply(module, name, n_power_iterations,
                       default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Remove the spectral-norm hooks of ``module.<name>``.

    Raises:
        ValueError: no spectral norm on `name`.

    Mirrors: ``torch.nn.utils.remove_spectral_norm``.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for table, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in table.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del table[k]
                break
    return module
