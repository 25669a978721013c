"""Fixtures of the package tests: fixture modules on sys.path and both packaging libraries."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import load_torch

FIXTURES = Path(__file__).with_name("fixtures")
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))


def package_lib(name: str) -> SimpleNamespace:
    """``torch.package`` or ``hookgrad.package`` plus the names tests need from each."""
    if name == "torch":
        torch = load_torch()
        import torch.package as pkg
        from torch.package import _mangling
        from torch.package.package_exporter import PackagingErrorReason
        return SimpleNamespace(name="torch", pkg=pkg, mangling=_mangling,
                               reason=PackagingErrorReason, lib=torch, prefix="torch_package")
    import hookgrad
    import hookgrad.package as pkg
    from hookgrad.package import _mangling
    from hookgrad.package.package_exporter import PackagingErrorReason
    return SimpleNamespace(name="hookgrad", pkg=pkg, mangling=_mangling,
                           reason=PackagingErrorReason, lib=hookgrad, prefix="hookgrad_package")


@pytest.fixture(params=["hookgrad", "torch"])
def lib(request):
    """Each test runs on hookgrad.package and on torch.package (the oracle)."""
    return package_lib(request.param)
