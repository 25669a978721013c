"""Argument validation on in both libraries, as the family tests compare its errors."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _validation_on(torch):
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)
