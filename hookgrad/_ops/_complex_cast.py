"""Casting a complex array to a real dtype: the real part, with PyTorch's one-time warning."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["complex_to_real"]

_WARNED = [False]


def complex_to_real(arr: Any) -> Any:
    """``arr.real``; the first time, PyTorch's UserWarning that the imaginary part is dropped
    (PyTorch warns once per process, from its copy kernel)."""
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=2)
    return arr.real
