"""Timeouts of the multi-process tests, scaled to the machine's load.

A loaded 2-core machine runs each rank many times slower than an idle one: fixed timeouts made
a rank give up (and leave no result) in runs that were merely slow. `scaled` stretches a
timeout by the load per core (at most 4x) and by ``HOOKGRAD_TIMEOUT_SCALE``; checks of how fast
a failure is *noticed* (well below the group timeout) keep their fixed bounds.
"""

from __future__ import annotations

import os


def scaled(seconds: float) -> float:
    """`seconds` times the load factor (1 to 4) times ``HOOKGRAD_TIMEOUT_SCALE`` (default 1)."""
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        per_core = 1.0
    factor = min(max(per_core, 1.0), 4.0) * float(os.environ.get("HOOKGRAD_TIMEOUT_SCALE", "1"))
    return seconds * factor
