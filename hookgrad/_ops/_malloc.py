"""Keep glibc's allocator from handing freed heap memory back to the OS between training steps.

NOTE [glibc heap trimming]
A training step allocates and frees many NumPy temporaries of 0.1-10 MB. glibc serves those
above its mmap threshold with fresh ``mmap`` pages, and returns free memory at the top of the
heap to the OS once it exceeds the trim threshold; either way the next step touches new pages,
and every page costs a fault and a zeroing. glibc raises both thresholds by itself as large
blocks are freed, but in a whole training program (new batches, ``.item()`` calls, evaluation)
it kept trimming: a nanoGPT step took about 8,500 page faults and ran ~20% slower than the same
step repeated in the benchmark harness, where earlier allocations had already raised the
thresholds. Setting the thresholds to the values glibc's own adjustment tops out at (mmap above
32 MiB, trim above 64 MiB of free heap) removes the faults (2 per step) and the gap, and bounds
the memory kept: at most 64 MiB of free heap stays mapped.

Done once at import, on glibc only, and not when the user set any ``MALLOC_*_`` tunable or
``HOOKGRAD_MALLOC_TUNE=0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # what glibc's dynamic adjustment pairs with it

_USER_TUNABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_MMAP_MAX_", "GLIBC_TUNABLES")


def tune() -> bool:
    """Set glibc's mmap and trim thresholds (NOTE [glibc heap trimming]); True if it did."""
    if os.environ.get("HOOKGRAD_MALLOC_TUNE", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if any(name in os.environ for name in _USER_TUNABLES):
        return False  # the user chose the allocator's policy
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


TUNED = tune()

__all__ = ["tune", "TUNED", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]
