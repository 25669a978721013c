"""The budgeted case loop shared by the func fuzzers (a prefix of numbered cases in CI, any
range in the long mode)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def run_cases(check: Callable[[int, Any], str | None], torch: Any, start: int, n: int,
              budget_s: float, least: int) -> None:
    """Run cases `start`.. of `check` until `n` ran or `budget_s` passed; at least
    ``min(n, least)`` must run, and every difference fails the test (the first ten shown)."""
    t0 = time.monotonic()
    failures, ran = [], 0
    for k in range(start, start + n):
        if time.monotonic() - t0 > budget_s:
            break
        ran += 1
        msg = check(k, torch)
        if msg:
            failures.append(msg)
    assert ran >= min(n, least)
    assert not failures, f"{len(failures)} of {ran} cases differ:\n" + "\n".join(failures[:10])


def budget_from_env(prefix: str, n: int, seconds: float) -> tuple[int, int, float]:
    """(cases, first case, seconds) from ``<prefix>_N``/``_SEED``/``_SECONDS``: CI's short
    budget by default; naming a case count switches the time limit off (the long mode)."""
    long_mode = f"{prefix}_N" in os.environ
    return (int(os.environ.get(f"{prefix}_N", str(n))),
            int(os.environ.get(f"{prefix}_SEED", "0")),
            float(os.environ.get(f"{prefix}_SECONDS", "1e9" if long_mode else str(seconds))))
