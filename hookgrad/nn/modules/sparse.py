"""`Embedding`."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn import functional as F
from hookgrad.nn import init
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`.

    Args:
        num_embeddings: size of the table.
        embedding_dim: size of each vector.
        padding_idx: this row is initialised to zeros and gets no gradient.
        max_norm: renormalise looked-up rows to at most this norm.
        norm_type: the p of the p-norm for `max_norm`.
        scale_grad_by_freq: scale gradients by the inverse frequency of the indices.
        sparse: accepted; gradients are dense.
        _weight: an initial weight (shape ``(num_embeddings, embedding_dim)``).
        _freeze: do not require grad.

    The weight is initialised from N(0, 1).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Embedding(10, 3)(torch.tensor([[1, 2]])).shape
        torch.Size([1, 2, 3])

    Mirrors: ``torch.nn.Embedding``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < self.num_embeddings, (
                    "Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                assert padding_idx >= -self.num_embeddings, (
                    "Padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            from hookgrad._functional.creation import empty

            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], (
                "Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """N(0, 1) initialisation, padding row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)  # type: ignore[index]

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding holding `embeddings` (frozen by default).

        Mirrors: ``torch.nn.Embedding.from_pretrained``.
        """
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
