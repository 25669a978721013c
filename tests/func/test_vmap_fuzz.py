"""The vmap sweep: every op of the OpSpec table under random vmap configurations, against
PyTorch's per-sample loop and torch.func.vmap (``tests/func/_vmap_sweep.py``, docs/func.md).

CI runs a fixed prefix of the cases under a time budget; the long mode covers every op with
several configurations each::

    HOOKGRAD_VMAP_FUZZ_N=20000 python3 -m pytest -q tests/func/test_vmap_fuzz.py

(``HOOKGRAD_VMAP_FUZZ_SEED`` moves the first case; a failure names its case number.)
"""

from __future__ import annotations


import pytest

from tests.func._budget import budget_from_env, run_cases
from tests.func._vmap_sweep import PAIRS, check

N, START, BUDGET_S = budget_from_env("HOOKGRAD_VMAP_FUZZ", 600, 20)


@pytest.mark.oracle
def test_vmap_of_every_op_matches_torch(torch):
    assert len(PAIRS) > 1000  # the table is there
    run_cases(check, torch, START, N, BUDGET_S, 100)
