"""Argument checks of ``to(...)`` shared by ``Tensor.to`` and ``nn.Module.to``: PyTorch's
parser refuses unknown keywords, a non-``memory_format`` ``memory_format`` and two dtypes."""

from __future__ import annotations

from typing import Any

from hookgrad import _backend
from hookgrad._memory_format import format_name

__all__ = ["check_to_kwargs", "check_one_dtype", "parse_device"]

_TO_KWARGS = frozenset({"dtype", "device", "copy", "non_blocking", "memory_format"})


def check_to_kwargs(kwargs: dict) -> None:
    """PyTorch's parser for ``to(...)`` keywords (Tensor.to and Module.to)."""
    for name in kwargs:
        if name not in _TO_KWARGS:
            raise TypeError("to() received an invalid combination of arguments - got an "
                            f"unexpected keyword argument '{name}'")
    format_name(kwargs.get("memory_format"))


def check_one_dtype(seen: Any) -> None:
    """No ``to(...)`` overload takes two dtypes (``to(torch.float64, torch.float32)``)."""
    if seen is not None:
        raise TypeError("to() received an invalid combination of arguments - got (torch.dtype, "
                        "torch.dtype), but expected one dtype")


def parse_device(dev: Any) -> Any:
    """A device argument; a malformed string is PyTorch's RuntimeError, not a ValueError."""
    try:
        out = dev if isinstance(dev, _backend.device) else _backend.device(dev)
    except ValueError:
        raise RuntimeError(f"Invalid device string: '{dev}'") from None
    if out.index is not None and out.index < 0:
        raise RuntimeError(f"Invalid device string: '{dev}'")
    return out
