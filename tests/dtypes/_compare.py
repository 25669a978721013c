"""Run one scenario on PyTorch and on hookgrad and compare what it gives, or raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import hookgrad


def outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple:
    """``("ok", value as plain data)`` or ``(exception type name, message)``."""
    try:
        return ("ok", plain(lib, fn(lib)))
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return (type(e).__name__, str(e))


def plain(lib: Any, value: Any) -> Any:
    """Tensors as (dtype name, shape, values) so both libraries' results compare with ==."""
    if isinstance(value, lib.Tensor):
        arr = value.detach().cpu().resolve_conj().numpy() if lib is not hookgrad else \
            value.detach().numpy()
        return (str(value.dtype), tuple(value.shape), _values(arr))
    if isinstance(value, lib.dtype):
        return str(value)
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [plain(lib, v) for v in value]
    if isinstance(value, np.ndarray):
        return _values(value)
    return value


def _values(arr: np.ndarray) -> Any:
    if arr.dtype.kind == "c":  # rounded: NumPy and PyTorch's complex kernels differ in ulps
        return np.round(arr.astype(np.complex128), 5).tolist()
    if arr.dtype.kind == "f":
        return np.round(arr.astype(np.float64), 5).tolist()
    return arr.tolist()


def same(torch: Any, fn: Callable[[Any], Any]) -> None:
    """Assert that `fn` gives the same on both (for errors: the same exception type)."""
    ours, theirs = outcome(hookgrad, fn), outcome(torch, fn)
    if ours[0] != "ok" and theirs[0] != "ok":
        assert ours[0] == theirs[0], (ours, theirs)
        return
    assert ours == theirs
