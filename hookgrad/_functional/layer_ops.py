"""``torch.baddbmm`` (and ``Tensor.baddbmm``): a batched ``addmm`` with its own node.

Layer 4.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._ops import layers as _L
from hookgrad._tensor import Tensor

__all__ = ["baddbmm"]


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices.

    `input` broadcasts to ``[B, N, P]``; ``beta=0`` ignores it (nan in it does not propagate).

    Returns:
        ``[B, N, P]`` (``BaddbmmBackward0``, saving ``batch1`` and ``batch2``).

    Raises:
        RuntimeError: on non-3-d batches or mismatched sizes (PyTorch's messages).

    Example:
        >>> import hookgrad as torch
        >>> torch.baddbmm(torch.zeros(1, 1, 1), torch.ones(1, 1, 2), torch.ones(1, 2, 1)).tolist()
        [[[2.0]]]

    Mirrors: ``torch.baddbmm``.
    """
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, p) = tuple(batch1.shape), tuple(batch2.shape)
    if b != b2 or k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
            f"[{b2}, {k2}].")
    if batch1.dtype != batch2.dtype or input.dtype != batch1.dtype:
        raise RuntimeError("expected scalar type for all of input, batch1 and batch2 to agree")
    try:
        np.broadcast_shapes(tuple(input.shape), (b, n, p))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({p}) must match the existing size "
                           f"({tuple(input.shape)[-1]}) at non-singleton dimension 2") from None
    return bind(_L.BADDBMM, (input, batch1, batch2), {"beta": beta, "alpha": alpha})


METHODS = {"baddbmm": baddbmm}
