"""Tensor methods real libraries call that hookgrad lacked (issue 21).

Mirrors: ``torch.Tensor.fill_diagonal_`` (pytorch-metric-learning masks self-pairs with it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor

__all__ = ["fill_diagonal_", "install"]


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Write `fill_value` on the main diagonal in place (for a tall matrix, `wrap` restarts
    the diagonal below every block of ``cols + 1`` rows, as PyTorch's storage-stride walk does).

    Example:
        >>> import hookgrad as torch
        >>> torch.zeros(2, 2).fill_diagonal_(5.0)
        tensor([[5., 0.],
                [0., 5.]])

    Mirrors: ``torch.Tensor.fill_diagonal_``.
    """
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    index = (np.arange(n),) * self.dim()
    self[tuple(_creation.tensor(i) for i in index)] = fill_value
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        # PyTorch fills the wrapped part in a second write (a second version bump), walking
        # the rows below the square block in steps of cols + 1 elements
        rows, cols = self.shape
        flat = np.arange((cols + 1) * cols, rows * cols, cols + 1)
        self[_creation.tensor(flat // cols), _creation.tensor(flat % cols)] = fill_value
    return self


def install() -> None:
    """Attach the methods to `Tensor` where it has none of that name."""
    if not hasattr(Tensor, "fill_diagonal_"):
        Tensor.fill_diagonal_ = fill_diagonal_  # type: ignore[attr-defined]
