"""`OnDevice`: hookgrad with its factories defaulting to another device (scenarios take a lib)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import hookgrad

_FACTORIES = ("tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "rand",
              "randn", "randint", "as_tensor")


class OnDevice:
    """Proxy of the `hookgrad` module whose tensor factories default to `device`."""

    def __init__(self, device: str) -> None:
        self._device = device

    def __getattr__(self, name: str) -> Any:
        value = getattr(hookgrad, name)
        if name in _FACTORIES:
            @functools.wraps(value)
            def make(*args: Any, **kwargs: Any) -> Any:
                kwargs.setdefault("device", self._device)
                return value(*args, **kwargs)
            return make
        return value


def host(x: Any) -> Any:
    """Tensors (nested in tuples/lists) as NumPy arrays on the host; other values unchanged."""
    if isinstance(x, hookgrad.Tensor):
        assert x.device.type == x.device.type  # (device checked by the callers)
        return hookgrad._backend.to_numpy(x.detach()._data)
    if isinstance(x, (tuple, list)):
        return [host(i) for i in x]
    return x


def assert_same_values(a: Any, b: Any) -> None:
    if isinstance(a, (list, tuple)):
        assert type(b) is type(a) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same_values(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), type(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        # (not bit for bit: NumPy arrays sum rows through BLAS, other backends with ``sum``,
        # NOTE [Row sums through BLAS]; a few training steps amplify that rounding to ~1e-6)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        assert a == b or (a is None and b is None)
