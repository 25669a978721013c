"""``slice_inverse``: undo a ``slice`` by viewing the slice's memory with its base's geometry.

Mirrors: ``torch.slice_inverse`` and ``torch.Tensor.slice_inverse``. PyTorch's kernel ignores
``dim``/``start``/``end``/``step`` (they describe the slice for functionalization) and returns
``self.as_strided(src.size(), src.stride(), src.storage_offset())``; so does this, and the
gradient is the ``as_strided`` one (node ``AsStridedBackward0``, not ``SliceInverseBackward0``).
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["slice_inverse"]


def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """A view of `input`'s memory shaped like `src` (the tensor `input` was sliced from).

    Mirrors: ``torch.slice_inverse``.
    """
    return input.as_strided(tuple(src.shape), src.stride(), src.storage_offset())


METHODS = {"slice_inverse": slice_inverse}
