"""Shared helpers for the pointwise oracle tests: run one scenario on both libraries and
describe every result (value, dtype, shape, grad_fn name, requires_grad, or exception type)."""

from __future__ import annotations

from typing import Any

import numpy as np


def describe(x: Any) -> Any:
    """A comparable summary of a scenario's result."""
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [describe(v) for v in x]
    if hasattr(x, "grad_fn") and hasattr(x, "dtype"):
        fn = x.grad_fn
        if getattr(x, "_is_zerotensor", lambda: False)():  # PyTorch's lazy zero gradients
            arr = np.zeros(tuple(x.shape))
        else:
            arr = np.asarray(x.detach().tolist())
        return ("tensor", str(x.dtype).replace("torch.", ""), tuple(x.shape),
                None if fn is None else fn.name(), bool(x.requires_grad), arr)
    return x


def outcome(fn: Any, lib: Any) -> Any:
    """`fn(lib)` described, or the exception type if it raises."""
    try:
        return describe(fn(lib))
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return ("raises", type(e).__name__)


def assert_same(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Recursive comparison with float tolerance for arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            np.testing.assert_allclose(a.astype(float), b.astype(float), rtol=rtol, atol=atol,
                                       equal_nan=True)
        else:
            assert a.tolist() == b.tolist()
        return
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y, rtol, atol)
        return
    if isinstance(a, float) and isinstance(b, float):
        assert a == b or (np.isnan(a) and np.isnan(b)) or abs(a - b) <= atol + rtol * abs(b)
        return
    assert a == b, (a, b)


def check(fn: Any, hookgrad: Any, torch: Any, **tol: float) -> None:
    """Run `fn` on both libraries and compare the described outcomes."""
    assert_same(outcome(fn, hookgrad), outcome(fn, torch), **tol)
