"""Gradient clipping. Mirrors: ``torch.nn.utils.clip_grad``.

Norms are computed on the gradient arrays in the gradients' dtype under ``no_grad`` (clipping is
never differentiated); the scaling is an in-place multiply, so each ``.grad`` keeps its identity
and bumps its version, as in PyTorch.
"""

from __future__ import annotations

import warnings

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _params(parameters: Any) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # float16 dots are not BLAS


def _norm(arr: Any, norm_type: float) -> Any:
    if norm_type == 2.0 and type(arr) is np.ndarray and arr.dtype in _BLAS_FLOATS:
        flat = arr.reshape(-1)  # the 2-norm as one BLAS dot: no |a| or a**2 temporaries
        return np.sqrt(np.dot(flat, flat))
    xp = namespace_of(arr)
    a = xp.abs(arr.reshape(-1))
    if norm_type == math.inf:
        return a.max() if a.size else xp.asarray(0, arr.dtype)
    if norm_type == -math.inf:
        return a.min()
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=arr.dtype)
    return (a ** norm_type).sum(dtype=arr.dtype) ** (1.0 / norm_type)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    """The `norm_type`-norm of the norms of `tensors` (as if concatenated).

    Raises:
        RuntimeError: if the norm is not finite and `error_if_nonfinite`.

    Mirrors: ``torch.nn.utils.get_total_norm``.
    """
    tensors = _params(tensors)
    norm_type = float(norm_type)
    if not tensors:
        from hookgrad._functional.creation import tensor

        return tensor(0.0)
    xp = namespace_of(tensors[0]._data)
    norms = xp.stack([_norm(t._data, norm_type) for t in tensors])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return Tensor._make(xp.asarray(total, dtype=tensors[0]._data.dtype))


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale the gradients in place so their total norm is at most `max_norm`.

    Args:
        parameters: tensors (or one tensor) whose ``.grad`` is clipped.
        max_norm: the maximum total norm.
        norm_type: the p of the p-norm (``inf`` for the max norm).
        error_if_nonfinite: raise if the total norm is nan or inf.
        foreach: accepted for compatibility.

    Returns:
        The total norm before clipping (a 0-d tensor).

    Mirrors: ``torch.nn.utils.clip_grad_norm_``.
    """
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    coef = float(max_norm) / (float(total.item()) + 1e-6)
    coef = min(coef, 1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef)  # type: ignore[attr-defined]
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient in place to ``[-clip_value, clip_value]``.

    Mirrors: ``torch.nn.utils.clip_grad_value_``.
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)  # type: ignore[attr-defined]


def clip_grad_norm(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    """Deprecated spelling of `clip_grad_norm_` (warns ``FutureWarning``, then clips).

    Mirrors: ``torch.nn.utils.clip_grad.clip_grad_norm``.
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)

# PyTorch's ``__all__`` also lists these
__all__ += ["clip_grad_norm"]
