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


class Floats:
    """Floating values, equal to others within float32 rounding (NumPy's kernels and PyTorch's
    differ in the last bits, and pocketfft computes in double where PyTorch uses float)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Floats) and self.arr.shape == other.arr.shape and bool(
            np.allclose(self.arr, other.arr, rtol=2e-5, atol=2e-5, equal_nan=True))

    def __repr__(self) -> str:
        return f"Floats({self.arr.tolist()!r})"


def _values(arr: np.ndarray) -> Any:
    if arr.dtype.kind in "fc":
        return Floats(arr)
    return arr.tolist()


def same(torch: Any, fn: Callable[[Any], Any]) -> None:
    """Assert that `fn` gives the same on both (for errors: the same exception type)."""
    ours, theirs = outcome(hookgrad, fn), outcome(torch, fn)
    if ours[0] != "ok" and theirs[0] != "ok":
        assert ours[0] == theirs[0], (ours, theirs)
        return
    assert ours == theirs, f"hookgrad: {ours!r:.600}\n   torch: {theirs!r:.600}"
