"""`EmbeddingBag` and ``F.embedding_bag``: sums, means or maxima of bags of embeddings.

Mirrors: ``torch.nn.EmbeddingBag`` (published at ``nn.modules.sparse``) and
``torch.nn.functional.embedding_bag``. Composed of hookgrad ops (an `embedding` lookup, then
``index_add`` per bag, or a per-bag ``max``), so gradients and hooks come from those ops; the
graph's node names therefore differ from PyTorch's single ``EmbeddingBagBackward0``. Values and
gradients equal PyTorch's, including `padding_idx` entries (left out of every bag and of a
mean's count), empty bags (zeros), `per_sample_weights` (``mode="sum"`` only) and
`include_last_offset`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn import init
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["EmbeddingBag"]


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool
          ) -> tuple[Tensor, np.ndarray, int]:
    """The flat indices, each position's bag number and the number of bags."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        rows, cols = input.shape
        return input.reshape(-1), np.repeat(np.arange(rows), cols), rows
    if input.dim() != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = np.asarray(offsets.tolist(), dtype=np.int64)
    if len(starts) and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    n = input.shape[0]
    num_bags = len(starts) - 1 if include_last_offset else len(starts)
    ends = np.append(starts[1:], n)[:num_bags] if num_bags else starts[:0]
    bag = np.full(n, -1, dtype=np.int64)
    for b in range(num_bags):
        bag[starts[b]:ends[b]] = b
    return input, bag, num_bags


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce each bag of looked-up rows of `weight` to one row (see module docstring).

    Example:
        >>> import hookgrad as torch
        >>> w = torch.arange(6.0).reshape(3, 2)
        >>> torch.nn.functional.embedding_bag(torch.tensor([0, 1, 2]), w, torch.tensor([0, 2]))
        tensor([[1., 2.],
                [4., 5.]])

    Mirrors: ``torch.nn.functional.embedding_bag``.
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(  # checked before the mode, as in PyTorch
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not "
            f"None, then it must have the same shape as the input ({input.shape})")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    flat, bag, num_bags = _bags(input, offsets, include_last_offset)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    keep = bag >= 0
    if padding_idx is not None:
        keep &= np.asarray(flat.tolist(), dtype=np.int64).reshape(-1) != padding_idx
    pos = _creation.tensor(np.nonzero(keep)[0].astype(np.int64))
    rows = F.embedding(flat.index_select(0, pos), weight, None, max_norm, norm_type,
                       scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1).index_select(0, pos).unsqueeze(1)
    owner = bag[keep]
    if mode == "max":
        return _bag_max(rows, owner, num_bags, weight)
    out = _creation.zeros(num_bags, weight.shape[1], dtype=weight.dtype)
    out = out.index_add(0, _creation.tensor(owner), rows)
    if mode == "mean":
        counts = np.maximum(np.bincount(owner, minlength=num_bags), 1)
        out = out / _creation.tensor(counts.astype(np.float64), dtype=weight.dtype).unsqueeze(1)
    return out


def _bag_max(rows: Tensor, owner: np.ndarray, num_bags: int, weight: Tensor) -> Tensor:
    """Per-bag elementwise maximum (the gradient goes to the row holding it); empty bags 0."""
    out = []
    for b in range(num_bags):
        members = np.nonzero(owner == b)[0]
        if members.size == 0:
            out.append(_creation.zeros(weight.shape[1], dtype=weight.dtype))
        else:
            out.append(rows.index_select(0, _creation.tensor(members)).max(0).values)
    if not out:
        return _creation.zeros(0, weight.shape[1], dtype=weight.dtype)
    from hookgrad._functional.shape import stack

    return stack(out)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, without the per-row intermediate.

    Args:
        num_embeddings: size of the table.
        embedding_dim: size of each vector.
        max_norm: renormalise looked-up rows to at most this norm.
        norm_type: the p of the p-norm for `max_norm`.
        scale_grad_by_freq: scale gradients by the inverse frequency of the indices.
        mode: ``"sum"``, ``"mean"`` (default) or ``"max"``.
        sparse: accepted; gradients are dense.
        _weight: an initial weight (shape ``(num_embeddings, embedding_dim)``).
        include_last_offset: `offsets` has one more entry, the end of the last bag.
        padding_idx: entries with this index are left out of their bag; its row starts at 0.

    The weight is initialised from N(0, 1).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.EmbeddingBag(10, 3, mode="sum")(torch.tensor([[1, 2], [3, 4]])).shape
        torch.Size([2, 3])

    Mirrors: ``torch.nn.EmbeddingBag``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, (
                    "padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], (
                "Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse = mode, sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """N(0, 1) initialisation, padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from hookgrad.autograd.grad_mode import no_grad

            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{**self.__dict__, "mode": repr(self.mode)})

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag holding `embeddings` (frozen by default).

        Mirrors: ``torch.nn.EmbeddingBag.from_pretrained``.
        """
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


publish("hookgrad.nn.modules.sparse", globals(), ["EmbeddingBag"])
publish("hookgrad.nn.functional", globals(), ["embedding_bag"])
