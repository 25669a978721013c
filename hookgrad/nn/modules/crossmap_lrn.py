"""Legacy cross-channel local response normalisation, published at PyTorch's path
``nn.modules.normalization``.

Mirrors: ``torch.nn.CrossMapLRN2d`` (computed by `hookgrad.nn.modules._functions.CrossMapLRN2d`,
as PyTorch's by its Function of that name).
"""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn.modules import _functions
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.module import Module

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(Module):
    """``x / (k + alpha / size * sum of squares over nearby channels) ** beta`` on 4-d input.

    Mirrors: ``torch.nn.CrossMapLRN2d``.
    """

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return _functions.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


publish("hookgrad.nn.modules.normalization", globals(), __all__)
