"""Helpers of the meta-device tests: what a tensor's metadata is, as a comparable value."""

from __future__ import annotations

from typing import Any

import pytest

from hookgrad._meta import _layout


def info(t: Any) -> Any:
    """(shape, dtype, strides, storage offset, device type, is_meta) of tensors (nested)."""
    if isinstance(t, (tuple, list)):
        return [info(x) for x in t]
    if not hasattr(t, "shape"):
        return t
    return (tuple(t.shape), str(t.dtype), tuple(t.stride()), t.storage_offset(),
            t.device.type, t.is_meta)


def shape_info(t: Any) -> Any:
    """(shape, dtype, device type) of tensors (nested): where strides may differ by design."""
    if isinstance(t, (tuple, list)):
        return [shape_info(x) for x in t]
    return (tuple(t.shape), str(t.dtype), t.device.type)


@pytest.fixture(params=["stand-ins", "rules"])
def mode(request: Any, monkeypatch: Any) -> str:
    """Run a test twice: small inputs on real stand-ins, and with every input counted as large
    (shape rules and one-element view stand-ins only: what a huge tensor gets)."""
    if request.param == "rules":
        monkeypatch.setattr(_layout, "SMALL", 0)
    return request.param
