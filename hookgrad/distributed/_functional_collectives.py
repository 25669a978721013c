"""Functional collectives' waiting point.

Mirrors: ``torch.distributed._functional_collectives.wait_tensor`` (transformers imports it at
load time). hookgrad's collectives complete before they return (no ``AsyncCollectiveTensor``),
so waiting on a tensor returns it: the blocking CPU semantics PyTorch documents.
"""

from __future__ import annotations

from hookgrad._tensor import Tensor

__all__ = ["wait_tensor"]


def wait_tensor(tensor: Tensor) -> Tensor:
    """Wait on a collective's result (already complete in hookgrad) and return it.

    Example:
        >>> import hookgrad
        >>> t = hookgrad.ones(2)
        >>> wait_tensor(t) is t
        True

    Mirrors: ``torch.distributed._functional_collectives.wait_tensor``.
    """
    return tensor
