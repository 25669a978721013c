"""Shared fixtures: the PyTorch oracle, hypothesis profiles, and global-state reset."""

from __future__ import annotations

import os
import warnings

import pytest
from hypothesis import settings

import hookgrad
from hookgrad._config import GLOBAL, STATE, set_grad_mode
from hookgrad._surface import cfuncs_native as _cfuncs_native
from hookgrad._surface import cfuncs_scatter as _cfuncs_scatter

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=25)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REQUIRE_ORACLE = os.environ.get("HOOKGRAD_REQUIRE_ORACLE") == "1"

# float() of a tensor that requires grad warns once per process (as in PyTorch); under
# filterwarnings=error the first such call would fail whichever test ran first, so the suite
# starts with the warning given. tests/test_scalar_warning.py checks it in fresh processes.
hookgrad._tensor.SCALAR_WARNED[0] = True
# The same for PyTorch's once-per-process "index_reduce() is in beta" and "frobenius_norm is
# deprecated" warnings: hookgrad's are marked given here, PyTorch's in `load_torch`.
_cfuncs_scatter.WARNED.append(True)
_cfuncs_native.WARNED.append(True)
_TORCH_ONCE_GIVEN: list = []


def load_torch():
    """Import the oracle, or skip (fail under HOOKGRAD_REQUIRE_ORACLE=1)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        if REQUIRE_ORACLE:
            pytest.fail("PyTorch oracle required (HOOKGRAD_REQUIRE_ORACLE=1) but not installed")
        pytest.skip("PyTorch oracle not installed")
    if not _TORCH_ONCE_GIVEN:
        _TORCH_ONCE_GIVEN.append(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.zeros(1).index_reduce(0, torch.tensor([0]), torch.ones(1), "prod")
            torch.frobenius_norm(torch.ones(1), (0,))
    return torch


@pytest.fixture
def torch():
    """The real PyTorch module (the oracle)."""
    return load_torch()


@pytest.fixture(autouse=True)
def _reset_global_state():
    """Global hook registries and modes leaking between tests is the classic hook-test bug."""
    yield
    set_grad_mode(True)
    STATE.inference_mode = False
    STATE.saved_hooks_stack.clear()
    STATE.saved_hooks_disabled_msg = None
    STATE.graph_task_stack.clear()
    GLOBAL.dual_level = -1
    hookgrad.set_default_dtype(hookgrad.float32)
    for reset in RESETTERS:
        reset()
    try:
        import torch as _torch
    except ImportError:
        return
    _torch.set_grad_enabled(True)
    _torch.set_default_dtype(_torch.float32)


# Subsystems with global registries append a callable here from their own conftest/test module.
RESETTERS: list = []
