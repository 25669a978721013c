"""``torch._subclasses.fake_tensor``: `is_fake`, and the classes that hookgrad does not have.

Mirrors: ``torch._subclasses.fake_tensor``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException", "is_fake"]

_REASON = "hookgrad has no fake tensors (compile traces real tensors with symbolic sizes)"


def is_fake(x: Any) -> bool:
    """False: no hookgrad value is a fake tensor.

    Mirrors: ``torch._subclasses.fake_tensor.is_fake``.
    """
    return False


class UnsupportedFakeTensorException(RuntimeError):
    """Mirrors ``torch._subclasses.fake_tensor.UnsupportedFakeTensorException``."""


class FakeTensor:
    """Mirrors ``torch._subclasses.fake_tensor.FakeTensor``; constructing one raises.

    `isinstance(x, FakeTensor)` is False for every hookgrad tensor, as for real PyTorch tensors.
    """

    __hookgrad_unsupported__ = _REASON

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(_REASON)


class FakeTensorMode:
    """Mirrors ``torch._subclasses.fake_tensor.FakeTensorMode``; constructing one raises."""

    __hookgrad_unsupported__ = _REASON

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(_REASON)
