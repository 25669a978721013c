"""PowerSGD's random projections are PyTorch's: the hook seeds a forked generator with the
state's shared seed and draws with ``randn`` as PyTorch's hook does, so a seeded DDP program
with PowerSGD compresses to PyTorch's gradients and leaves the global stream where PyTorch's
leaves it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import load_torch

PROGRAM = str(Path(__file__).with_name("powersgd_program.py"))
ROOT = str(Path(__file__).resolve().parents[2])


def _run(alias: bool, *args: str) -> list[list[float]]:
    cmd = [sys.executable, *(["-m", "hookgrad.run"] if alias else []), PROGRAM, *args]
    proc = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [[float(v) for v in line.split()] for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_powersgd_compresses_to_pytorchs_gradients(mode):
    load_torch()
    ours, theirs = _run(True, mode), _run(False, mode)
    assert len(ours) == len(theirs) == 6
    np.testing.assert_allclose(ours[:-1], theirs[:-1], rtol=2e-5)
    assert ours[-1] == theirs[-1]  # the hook's draws were made on a fork
