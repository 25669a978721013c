"""`Flatten` and `Unflatten`."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


def _wrap(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one (a view when possible: ``ViewBackward0``).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Flatten()(torch.ones(2, 3, 4)).shape
        torch.Size([2, 12])

    Mirrors: ``torch.nn.Flatten``.
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        if hasattr(input, "flatten"):
            return input.flatten(self.start_dim, self.end_dim)  # type: ignore[attr-defined]
        shape = tuple(input.shape)
        if not shape:
            return input.reshape(1)  # type: ignore[attr-defined]
        start, end = _wrap(self.start_dim, len(shape)), _wrap(self.end_dim, len(shape))
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if start == end:
            return input
        new = shape[:start] + (-1,) + shape[end + 1:]
        return input.reshape(*new)  # type: ignore[attr-defined]

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim `dim` into `unflattened_size` (``ViewBackward0``).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Unflatten(1, (2, 5))(torch.ones(3, 10)).shape
        torch.Size([3, 2, 5])

    Mirrors: ``torch.nn.Unflatten`` (integer dims; named-tensor form not supported).
    """

    NamedShape = tuple

    def __init__(self, dim: int | str, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input: Any) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        f"unflattened_size must be tuple of ints, but found element of type "
                        f"{type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        if hasattr(input, "unflatten"):
            return input.unflatten(self.dim, self.unflattened_size)  # type: ignore[attr-defined]
        shape = tuple(input.shape)
        d = _wrap(self.dim, len(shape))
        sizes = tuple(self.unflattened_size)
        return input.view(*shape[:d], *sizes, *shape[d + 1:])  # type: ignore[attr-defined]

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
