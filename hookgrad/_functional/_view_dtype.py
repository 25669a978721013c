"""``Tensor.view(dtype)``: the same bytes read as another dtype.

Mirrors: ``torch.Tensor.view(dtype)``. As in PyTorch the result shares memory and the version
counter with `self` but is not an autograd view and never requires grad (the op is not
differentiable); with a different element size the last dim must have stride 1 and is scaled,
and PyTorch's RuntimeErrors name what is not divisible. ``bfloat16`` arrays hold PyTorch's
2-byte bit patterns (NOTE [bfloat16] in _bf16_bind.py), so views to and from it are exact.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor


def view_dtype(self: Tensor, dt: Any) -> Tensor:
    """`self`'s memory as `dt` (see the module docstring)."""
    src = self._data
    old, new = src.dtype.itemsize, dt.np.itemsize
    if old != new:
        what = (f"to view {self.dtype.scalar_type} as {dt.scalar_type} (different element "
                "sizes)")
        if src.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if new > old:
            ratio = new // old
            if src.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{src.shape[-1]}")
            if self.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {self.storage_offset()}")
            for d in range(src.ndim - 1):
                if self.stride(d) % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, "
                                       f"but got {self.stride(d)}")
    out = Tensor._make(src.view(dt.np))
    out._version_counter = self._vc()  # one memory, one counter (PyTorch shares it too)
    out._storage_array = self._storage_data()  # and one storage: offsets count from its start
    return out
