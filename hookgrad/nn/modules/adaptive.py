"""Adaptive softmax. Mirrors: ``torch.nn.modules.adaptive`` (``nn.AdaptiveLogSoftmaxWithLoss``).

Frequent classes (the shortlist) are scored by the ``head`` layer, which also scores one entry
per cluster of rarer classes; a class in cluster ``i`` gets the head's log-probability of the
cluster plus its log-probability within the cluster from ``tail[i]`` (a two-layer projection
whose hidden width shrinks by ``div_value`` per cluster).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from hookgrad._functional import nn_ops as _nn
from hookgrad._functional.shape import cat
from hookgrad._tensor import Tensor
from hookgrad.nn.modules.container import ModuleList, Sequential
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation for large output spaces (Grave et al., 2016).

    Mirrors: ``torch.nn.AdaptiveLogSoftmaxWithLoss``.
    """

    in_features: int
    n_classes: int
    cutoffs: list[int]
    div_value: float
    head_bias: bool
    head: Linear
    tail: ModuleList

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, width, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every tail projection."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:  # type: ignore[misc]
            i2h.reset_parameters()
            h2o.reset_parameters()

    @staticmethod
    def _check(input: Tensor, target: Tensor) -> None:
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        self._check(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)  # type: ignore[attr-defined]
        target = target_ if batched else target_.unsqueeze(0)  # type: ignore[attr-defined]
        n = target.size(0)
        output = input.new_zeros(n)  # type: ignore[attr-defined]
        head_index = target.clone()  # type: ignore[attr-defined]  # shortlist rows keep theirs
        covered = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = mask.nonzero().reshape(-1)  # type: ignore[attr-defined]
            covered += rows.numel()
            if i == 0 or rows.numel() == 0:
                continue
            logits = self.tail[i - 1](input.index_select(0, rows))  # type: ignore
            local = _nn.log_softmax(logits, 1).gather(  # type: ignore[attr-defined]
                1, (target[mask] - bounds[i]).unsqueeze(1)).squeeze(1)
            output = output.index_copy(0, rows, local)  # type: ignore[attr-defined]
            head_index = head_index.index_fill(0, rows, self.shortlist_size + i - 1)  # type: ignore
        if covered != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = _nn.log_softmax(self.head(input), 1)
        output = output + head.gather(1, head_index.unsqueeze(1)).squeeze()  # type: ignore
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)  # type: ignore

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head = _nn.log_softmax(head_output, 1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = _nn.log_softmax(self.tail[i](input), 1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))  # type: ignore
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row (``log_prob(input).argmax(1)``, cheaper when the
        head's best is in the shortlist)."""
        head_output = self.head(input)
        output = head_output.argmax(1)  # type: ignore[attr-defined]
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return self._get_full_log_prob(input, head_output).argmax(1)  # type: ignore
        full = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = full.argmax(1)  # type: ignore[attr-defined]
        return output
