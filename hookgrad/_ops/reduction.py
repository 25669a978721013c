"""Reduction primitives (PyTorch docs: "Reduction Ops")."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._ops._shapes import normalize_dims, sum_to_dims
from hookgrad._ops.registry import defop


def _expand_back(grad: Any, self_shape: tuple, dim: Any, keepdim: bool) -> Any:
    """Broadcast a reduced gradient back to the input shape."""
    if not keepdim and dim is not None and len(self_shape) > 0:
        for d in normalize_dims(dim, len(self_shape)):
            grad = grad.unsqueeze(d)
    elif not keepdim and len(self_shape) > 0:
        grad = grad.reshape((1,) * len(self_shape))
    return grad.expand(self_shape)


def _sum_impl(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    axes = None if dim is None else normalize_dims(dim, self.ndim)
    if self.ndim == 0:
        axes = None
    out_dtype = None if dtype is None else dtype.np
    if out_dtype is None and self.dtype.kind in "biu":
        out_dtype = np.int64
    return np.sum(self, axis=axes, keepdims=keepdim, dtype=out_dtype)


defop("sum", impl=lambda self, dtype=None: _sum_impl(self, None, False, dtype),
      params=("dtype",),
      vjp={"self": lambda grad, self_shape: grad.expand(self_shape)}, jvp="linear")

defop("sum_dim", impl=_sum_impl, params=("dim", "keepdim", "dtype"), node_name="SumBackward1",
      vjp={"self": lambda grad, self_shape, dim, keepdim: _expand_back(grad, self_shape, dim,
                                                                       keepdim)},
      jvp="linear")


def _sum_to_size_impl(self: Any, size: tuple) -> Any:
    dims, lead = sum_to_dims(self.shape, size)
    out = np.sum(self, axis=dims, keepdims=True) if dims else self
    return out.reshape(size) if lead or out.shape != tuple(size) else out


defop("sum_to_size", impl=_sum_to_size_impl, params=("size",),
      node_name="SumBackward1",
      vjp={"self": lambda grad, self_shape: grad.expand(self_shape)}, jvp="linear")
