"""Differential fuzzer: random programs run eagerly and compiled must be indistinguishable.

Each seeded program (`fuzz_programs.generate`) mixes ops, a module with forward/backward
(pre-)hooks (``with_kwargs``, ``always_call``, global module hooks, hooks registered inside),
tensor hooks on inputs and intermediates, node hooks, post-accumulate hooks, saved-tensor
hooks entered inside and around the call, handle removal inside and between calls,
``retain_grad``, ``detach``/``.data``/tensor copies, grad-mode blocks and ``requires_grad``
flips, in-place ops on views and on inputs, Python side effects (lists, dicts, closures,
class and module attributes), globals mutated between calls, a module ``forward`` replaced
between calls, data-dependent branches, raises (in the body and in hooks) after side effects
and shape changes. It is called several times with new values (and shapes) eagerly, under
each backend (``eager``, ``aot_eager``, ``inductor``), under compiled autograd and under two
custom backends that run the ``hookgrad.fx.GraphModule`` they receive (its ``forward``, and
``fx.Interpreter``); outputs, gradients, retained gradients, hook logs and side effects must
match call by call (a float32 difference is looked at again in float64, where rounding alone
vanishes). hookgrad's eager run is also compared with PyTorch's eager run of the same program
(in float64), so the fuzzer catches eager differences too.

CI runs a short budget; ``HOOKGRAD_FUZZ_N=3000 python3 -m pytest tests/compile/test_fuzz_compile.py``
runs 3,000 programs (``HOOKGRAD_FUZZ_SEED`` moves the first seed). Every failure found becomes a
minimised regression test in ``test_fuzz_regressions.py`` (earlier ones: ``test_soundness.py``,
``test_leaf_order.py``).
"""

from __future__ import annotations

import os
import time

import hookgrad
from tests.compile.fuzz_programs import run_program

_N = int(os.environ.get("HOOKGRAD_FUZZ_N", "0"))
_SEED = int(os.environ.get("HOOKGRAD_FUZZ_SEED", "0"))
_CI_BUDGET_S = 12.0  # short mode: as many programs as fit (at least 20)


def test_random_programs_match_eager(torch):
    failures: list[str] = []
    start = time.perf_counter()
    n = 0
    limit = _N or 10_000
    while n < limit:
        if not _N and n >= 20 and time.perf_counter() - start > _CI_BUDGET_S:
            break
        failures += run_program(hookgrad, _SEED + n, torch)
        n += 1
    assert not failures, f"{len(failures)} failing runs over {n} programs: {failures[:20]}"


# seeds whose programs (of the current generator) failed before the fixes; each also has a
# minimised case in test_fuzz_regressions.py or test_leaf_order.py
_FOUND = (98, 179, 204, 243, 378, 399, 443, 3380)


def test_programs_the_fuzzer_found(torch):
    failures = [f for seed in _FOUND for f in run_program(hookgrad, seed, torch)]
    assert not failures, failures
