"""Differential fuzzer of state changes between calls (`fuzz_state_programs`): module
attributes, submodules and parameters, globals, cells, defaults, partials, classes, enum and
dtype settings, input layouts, aliasing and kinds, grad mode around the call, random seeds,
hooks added and removed, value-dependent numbers and shapes, returned structures and
exceptions on some calls change from call to call; every compiled call (``eager``,
``aot_eager``, ``inductor`` and a custom backend running the ``hookgrad.fx.GraphModule``) must
equal the eager call.

CI runs a short budget; ``HOOKGRAD_FUZZ_STATE_N=3000 python3 -m pytest
tests/compile/test_fuzz_state.py`` runs 3,000 programs (``HOOKGRAD_FUZZ_STATE_SEED`` moves the
first seed). Failures found become minimised cases in ``test_soundness_inputs.py`` and
``test_soundness_world.py``.
"""

from __future__ import annotations

import os
import time

import hookgrad
from tests.compile.fuzz_state_programs import run_state_program

_N = int(os.environ.get("HOOKGRAD_FUZZ_STATE_N", "0"))
_SEED = int(os.environ.get("HOOKGRAD_FUZZ_STATE_SEED", "0"))
_CI_BUDGET_S = 8.0  # short mode: as many programs as fit (at least 10)


def test_state_changes_between_calls_match_eager():
    failures: list[str] = []
    start = time.perf_counter()
    n = 0
    limit = _N or 10_000
    while n < limit:
        if not _N and n >= 10 and time.perf_counter() - start > _CI_BUDGET_S:
            break
        failures += run_state_program(hookgrad, _SEED + n)
        n += 1
    assert not failures, f"{len(failures)} failing runs over {n} programs: {failures[:20]}"
