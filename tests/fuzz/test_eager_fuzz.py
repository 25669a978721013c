"""Differential fuzzing of the eager engine against PyTorch (docs/fuzzing.md).

Seeded random programs (`_generate`) run on both libraries (`_program.run`); their logs of
values, strides, autograd flags, hook calls, saved-tensor pack/unpack calls, warnings and
exception types must agree. CI runs a short prefix of the seeds; the long mode is::

    HOOKGRAD_FUZZ_N=5000 python3 -m pytest -q tests/fuzz/test_eager_fuzz.py

(``HOOKGRAD_FUZZ_SEED`` moves the first seed, ``HOOKGRAD_FUZZ_OPS`` restricts the ops drawn to
those whose names match a regular expression). A failure prints the minimised program, ready to
paste into ``test_regressions.py``.
"""

from __future__ import annotations

import os
import pprint
import time
import warnings

import pytest

import hookgrad
from tests.fuzz._catalogue_nn import OPS_NN
from tests.fuzz._generate import generate, minimise, op_names
from tests.fuzz._program import diff, run

pytestmark = pytest.mark.oracle

N = int(os.environ.get("HOOKGRAD_FUZZ_N", "400"))
START = int(os.environ.get("HOOKGRAD_FUZZ_SEED", "0"))
# a regular expression over op names: a long run focused on one family ("pool|conv", "loss")
NAMES = op_names(os.environ.get("HOOKGRAD_FUZZ_OPS", "^(?!(%s)$)" % "|".join(OPS_NN)))
# CI budget: the seeds are a fixed prefix, cut short only on a very slow machine
BUDGET_S = float(os.environ.get("HOOKGRAD_FUZZ_SECONDS", "25" if "HOOKGRAD_FUZZ_N" not in
                                os.environ else "1e9"))


def _fails(torch, program: dict) -> str | None:
    try:
        return diff(run(hookgrad, program), run(torch, program))
    except Exception as e:  # a crash of the runner itself is a failure too
        return f"runner raised {type(e).__name__}: {e}"


def test_eager_matches_torch_on_random_programs(torch):
    failures = []
    start = time.monotonic()
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # programs trigger deprecation warnings on purpose
        for seed in range(START, START + N):
            if time.monotonic() - start > BUDGET_S:
                break
            program = generate(seed, torch, NAMES)
            ran += 1
            if _fails(torch, program):
                failures.append(program)
        report = []
        for program in failures[:3]:
            small = minimise(program, lambda p: _fails(torch, p) is not None)
            report.append(f"seed {program['seed']}:\n{pprint.pformat(small)}\n"
                          f"{_fails(torch, small)}")
    assert not failures, (f"{len(failures)} of {ran} programs differ from PyTorch; minimised:\n"
                          + "\n\n".join(report))
