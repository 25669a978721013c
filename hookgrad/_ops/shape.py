"""View and copy primitives (PyTorch docs: "Indexing, Slicing, Joining, Mutating Ops").

Primitives declared with ``view=True`` return NumPy views of their input: they share memory and
the version counter with it (see `_dispatch.mark_views`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor


def _view_impl(self: Any, size: tuple) -> Any:
    out = self.view()
    try:
        out.shape = size
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


defop("view", impl=_view_impl, params=("size",), view=True,
      vjp={"self": lambda grad, self_shape: grad.reshape(self_shape)}, jvp="linear")

defop("expand", impl=lambda self, size: np.broadcast_to(self, size), params=("size",), view=True,
      vjp={"self": lambda grad, self_shape: grad.sum_to_size(self_shape)}, jvp="linear")


def _as_strided_backward(grad: Any, self_shape: tuple, size: tuple, stride: tuple,
                         storage_offset: int) -> Any:
    """Scatter-add `grad` into the input's memory positions (handles overlapping views)."""
    g = grad._data
    xp = _backend.namespace_of(g)
    numel = int(np.prod(self_shape)) if self_shape else 1
    pos = xp.full(size, storage_offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + xp.arange(n, dtype=np.int64).reshape(shape) * s
    out = xp.zeros(numel, dtype=g.dtype)
    xp.add.at(out, pos.reshape(-1), g.reshape(-1))
    return Tensor._make(out.reshape(self_shape))


defop("as_strided",
      impl=lambda self, size, stride, storage_offset=0: _backend.as_strided(
          self, size, stride, storage_offset),
      params=("size", "stride", "storage_offset"), view=True,
      vjp={"self": _as_strided_backward}, jvp="linear")

defop("clone", impl=lambda self, memory_format=None: self.copy(), params=("memory_format",),
      vjp={"self": lambda grad: grad}, jvp="linear")

defop("_to_copy", impl=lambda self, dtype: self.astype(dtype.np), params=("dtype",),
      node_name="ToCopyBackward0",
      vjp={"self": lambda grad, self_dtype: grad.to(self_dtype)}, jvp="linear")

def zeros_like_array(t: Any) -> Tensor:
    """A constant zero tensor shaped like `t` (its derivative is zero, so no graph needed)."""
    return Tensor._make(_backend.namespace_of(t._data).zeros_like(t._data))


defop("copy_", impl=lambda self, src: np.broadcast_to(src, self.shape).astype(self.dtype),
      inputs=("self", "src"), node_name="CopyBackwards",
      vjp={"self": lambda grad: zeros_like_array(grad),
           "src": lambda grad, src_shape, src_dtype: grad.sum_to_size(src_shape).to(src_dtype)},
      jvp={"self": lambda t: t * 0, "src": lambda t, self_shape: t.expand(self_shape)})

defop("unsqueeze", impl=lambda self, dim: np.expand_dims(self, dim), params=("dim",), view=True,
      vjp={"self": lambda grad, dim: grad.squeeze(dim)}, jvp="linear")

defop("squeeze_dim", impl=lambda self, dim: np.squeeze(self, axis=dim) if dim else self.view(),
      params=("dim",), view=True, node_name="SqueezeBackward1",
      vjp={"self": lambda grad, self_shape: grad.reshape(self_shape)}, jvp="linear")
