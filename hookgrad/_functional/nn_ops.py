"""``softmax`` and ``log_softmax``. Mirrors the ``torch`` functions of the same names.

``torch.nn.functional.softmax``/``log_softmax`` (with the deprecated implicit ``dim``) are built on
these by `hookgrad.nn.functional`; `_get_softmax_dim` is PyTorch's helper for that default.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

from hookgrad._dispatch import bind
from hookgrad._functional.sorting import numpy_aliases
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["softmax", "log_softmax"]



def _softmax_like(name: str, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)  # type: ignore[attr-defined]  (ToCopyBackward0, as in PyTorch)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(
            f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}"
        )
    ndim = input._data.ndim
    d = normalize_dim(operator.index(dim), ndim)
    if input._data.dtype.kind not in "fV":
        if input._data.size == 0:  # ATen returns before dispatching on the dtype
            return Tensor._make(input._data.copy())
        kernel = "lastdim_kernel_impl" if d == max(ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(
            f"\"{name}_{kernel}\" not implemented for '{input.dtype.scalar_type}'"
        )
    return bind(P["_" + name], (input,), {"dim": d})


@numpy_aliases
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed with the max subtracted.

    Args:
        input: a floating-point tensor.
        dim: the dim that sums to one.
        dtype: cast `input` to this dtype first (a ``ToCopyBackward0`` node, as in PyTorch).

    Mirrors: ``torch.softmax`` (``SoftmaxBackward0``, which saves the result).
    """
    return _softmax_like("softmax", input, dim, dtype)


@numpy_aliases
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``: the log of `softmax`, computed stably.

    Mirrors: ``torch.log_softmax`` (``LogSoftmaxBackward0``, which saves the result).
    """
    return _softmax_like("log_softmax", input, dim, dtype)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's default dim for ``F.softmax(x)`` without ``dim`` (deprecated; warns)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning, stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


METHODS = {"softmax": softmax, "log_softmax": log_softmax}
