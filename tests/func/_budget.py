"""The budgeted case loop shared by the func fuzzers (a prefix of numbered cases in CI, any
range in the long mode)."""

from __future__ import annotations

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
