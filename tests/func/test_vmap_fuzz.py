"""The vmap sweep: every op of the OpSpec table under random vmap configurations, against
PyTorch's per-sample loop and torch.func.vmap (``tests/func/_vmap_sweep.py``, docs/func.md).

CI runs a fixed prefix of the cases under a time budget; the long mode covers every op with
several configurations each::

    HOOKGRAD_VMAP_FUZZ_N=20000 python3 -m pytest -q tests/func/test_vmap_fuzz.py

(``HOOKGRAD_VMAP_FUZZ_SEED`` moves the first case; a failure names its case number.)
"""

from __future__ import annotations

import os

import pytest

from tests.func._budget import run_cases
from tests.func._vmap_sweep import PAIRS, check

N = int(os.environ.get("HOOKGRAD_VMAP_FUZZ_N", "600"))
START = int(os.environ.get("HOOKGRAD_VMAP_FUZZ_SEED", "0"))
BUDGET_S = float(os.environ.get("HOOKGRAD_VMAP_FUZZ_SECONDS", "20" if "HOOKGRAD_VMAP_FUZZ_N"
                                not in os.environ else "1e9"))


@pytest.mark.oracle
def test_vmap_of_every_op_matches_torch(torch):
    assert len(PAIRS) > 1000  # the table is there
    run_cases(check, torch, START, N, BUDGET_S, 100)
