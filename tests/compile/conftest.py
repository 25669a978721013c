"""Compiler tests: fresh compiled state around every test, for hookgrad and the oracle."""

from __future__ import annotations

import pytest

import hookgrad
from hookgrad._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _fresh_compiler():
    hookgrad._dynamo.reset()
    counters.clear()
    yield
    hookgrad._dynamo.reset()
    counters.clear()
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        return
    torch._dynamo.reset()
