"""``torch.hash_tensor``: an xor reduction of the elements' 64-bit patterns (a uint64 result)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dtypes import check_kernel
from hookgrad._ops._checks import check_tensor
from hookgrad._functional.sorting import reduce_dims
from hookgrad._tensor import Tensor

__all__ = ["hash_tensor"]


def hash_tensor(input: Tensor, dim: Any = None, *, keepdim: bool = False,
                mode: int = 0) -> Tensor:
    """The xor of every element's bits after widening to 64 bits (float64, int64 or uint64).

    Example:
        >>> import hookgrad as torch
        >>> torch.hash_tensor(torch.tensor([[1, 2], [3, 4]]), dim=1)
        tensor([3, 7], dtype=torch.uint64)

    Mirrors: ``torch.hash_tensor`` (mode 0, the only one PyTorch has).
    """
    check_tensor(input, "hash_tensor")
    if mode != 0:
        raise RuntimeError(f"hash_tensor only support mode=0 (xor_reduction), got {mode}")
    data = np.asarray(input.detach().numpy())
    check_kernel("hash_tensor", data.dtype)
    axes = reduce_dims(dim, data.ndim) if dim is not None else None
    if axes is None and data.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in axes or ():
        if data.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    kind = data.dtype.kind
    wide = data.astype(np.float64 if kind in "fcV" else np.int64)
    bits = np.ascontiguousarray(wide).view(np.uint64)
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim)
    return Tensor._make(np.asarray(out, dtype=np.uint64))
