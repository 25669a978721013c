"""`GradBucket`: what a DDP communication hook receives for one bucket of one iteration."""

from __future__ import annotations

from typing import Any


class GradBucket:
    """A flat gradient buffer plus per-parameter views into it (contracts/distributed.md §6).

    Mirrors: ``torch.distributed.GradBucket``.
    """

    def __init__(self, index: int, buffer: Any, gradients: list[Any], parameters: list[Any],
                 is_last: bool) -> None:
        self._index, self._buffer = index, buffer
        self._gradients, self._parameters = gradients, parameters
        self._is_last = is_last

    def index(self) -> int:
        """Bucket index (0 = launched first). Mirrors: ``GradBucket.index``."""
        return self._index

    def buffer(self) -> Any:
        """The flat 1-D gradient buffer. Mirrors: ``GradBucket.buffer``."""
        return self._buffer

    def gradients(self) -> list[Any]:
        """Per-parameter views into the buffer. Mirrors: ``GradBucket.gradients``."""
        return list(self._gradients)

    def parameters(self) -> list[Any]:
        """The parameters, in `gradients` order. Mirrors: ``GradBucket.parameters``."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """True for the last bucket launched in the iteration. Mirrors: ``GradBucket.is_last``."""
        return self._is_last

    def set_buffer(self, buffer: Any) -> None:
        """Replace the buffer (same numel, dtype may change). Mirrors: ``GradBucket.set_buffer``."""
        self._buffer = buffer

    def __repr__(self) -> str:
        return (f"GradBucket(index={self._index}, numel={self._buffer.numel()}, "
                f"params={len(self._parameters)}, is_last={self._is_last})")
