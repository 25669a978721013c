"""`CosineSimilarity` and `PairwiseDistance`. Mirrors: ``torch.nn.modules.distance``."""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along `dim` (norms clamped to `eps`).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.CosineSimilarity(dim=0)(torch.tensor([1.0, 0.0]), torch.tensor([2.0, 0.0]))
        tensor(1.)

    Mirrors: ``torch.nn.CosineSimilarity``.
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dim.

    Mirrors: ``torch.nn.PairwiseDistance``.
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
