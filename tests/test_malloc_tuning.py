"""NOTE [glibc heap trimming]: hookgrad's one-time allocator tuning at import, and its opt-outs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hookgrad._ops import _malloc


def _tuned_in_child(env: dict) -> str:
    code = "import hookgrad._ops._malloc as m; print(m.TUNED)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_opt_outs_leave_the_allocator_alone(monkeypatch):
    import os

    base = {k: v for k, v in os.environ.items()
            if k not in _malloc._USER_TUNABLES and k != "HOOKGRAD_MALLOC_TUNE"}
    import platform

    if platform.libc_ver()[0] == "glibc":
        assert _tuned_in_child(base) == "True"
    assert _tuned_in_child({**base, "HOOKGRAD_MALLOC_TUNE": "0"}) == "False"
    assert _tuned_in_child({**base, "MALLOC_TRIM_THRESHOLD_": "1000000"}) == "False"


def test_thresholds_are_glibcs_own_maximum():
    assert _malloc.MMAP_THRESHOLD == 32 * 2**20
    assert _malloc.TRIM_THRESHOLD == 2 * _malloc.MMAP_THRESHOLD
