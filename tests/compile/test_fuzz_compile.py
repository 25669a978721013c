"""Differential fuzzer: random programs run eagerly and compiled must be indistinguishable.

Each seeded program (`fuzz_programs.generate`) mixes ops, a module with forward/backward hooks,
tensor hooks on inputs and intermediates, node hooks, post-accumulate hooks, saved-tensor
hooks, handle removal, ``retain_grad``, ``detach``/``.data``/tensor copies, Python side
effects (lists, dicts, attributes, closures), globals mutated between calls, a module
``forward`` replaced between calls, data-dependent branches, raises and shape changes. It is
called several times with new values (and shapes) eagerly, under each backend (``eager``,
``aot_eager``, ``inductor``), under compiled autograd and under two custom backends that run
the ``hookgrad.fx.GraphModule`` they receive (its ``forward``, and ``fx.Interpreter``); outputs,
gradients, retained gradients, hook logs and side effects must match call by call.

CI runs a short budget; ``HOOKGRAD_FUZZ_N=2000 python3 -m pytest tests/compile/test_fuzz_compile.py``
runs 2,000 programs (``HOOKGRAD_FUZZ_SEED`` moves the first seed). Every failure found becomes a
minimised regression test in ``test_soundness.py`` (or ``test_leaf_order.py``).
"""

from __future__ import annotations

import os
import time

import hookgrad
from tests.compile.fuzz_programs import run_program

_N = int(os.environ.get("HOOKGRAD_FUZZ_N", "0"))
_SEED = int(os.environ.get("HOOKGRAD_FUZZ_SEED", "0"))
_CI_BUDGET_S = 12.0  # short mode: as many programs as fit (at least 20)


def test_random_programs_match_eager():
    failures: list[str] = []
    start = time.perf_counter()
    n = 0
    limit = _N or 10_000
    while n < limit:
        if not _N and n >= 20 and time.perf_counter() - start > _CI_BUDGET_S:
            break
        failures += run_program(hookgrad, _SEED + n)
        n += 1
    assert not failures, f"{len(failures)} failing runs over {n} programs: {failures[:20]}"


# seeds whose programs failed before the fixes (each also has a minimised case in
# test_soundness.py or, for the leaf hook order of 460, test_leaf_order.py)
_FOUND = (9, 27, 85, 151, 169, 189, 460, 1072, 1092, 1731)


def test_programs_the_fuzzer_found():
    failures = [f for seed in _FOUND for f in run_program(hookgrad, seed)]
    assert not failures, failures
