"""The strict test backend (NOTE [Strict backend] in hookgrad/testing/strict_backend.py)."""

from __future__ import annotations

import pytest

from hookgrad.testing import strict_backend


@pytest.fixture(scope="module")
def strict():
    """Register the ``strict`` device for the tests of one module."""
    strict_backend.register()
    yield strict_backend.DEVICE_TYPE
    strict_backend.unregister()
