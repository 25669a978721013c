"""Kill a process in the middle of `hookgrad.save`: the old checkpoint stays whole and the
temporaries the killed saves leave are cleaned up by the next save to the same path."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import hookgrad
from hookgrad.utils import _safe_write

REPO = Path(__file__).resolve().parents[2]
SAVER = """
import sys, hookgrad
path = sys.argv[1]
big = hookgrad.ones(4_000_000)
i = 0
while True:
    i += 1
    hookgrad.save({"step": i, "w": big * i}, path)
    print(i, flush=True)
"""


def _kill_mid_save(path: Path, saves_before_kill: int, delay: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SAVER, str(path)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        for _ in range(saves_before_kill):
            assert proc.stdout.readline(), "saver died early"
        time.sleep(delay)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()


def test_kills_mid_save_leave_a_whole_checkpoint_and_no_temp_pile(tmp_path):
    path = tmp_path / "ck.pt"
    hookgrad.save({"step": 0, "w": hookgrad.zeros(4_000_000)}, str(path))
    for k, delay in enumerate((0.0, 0.01, 0.03, 0.07)):
        _kill_mid_save(path, 1 + k % 2, delay)
        state = hookgrad.load(str(path))  # whole: either the old or a new checkpoint
        assert float(state["w"][0]) == state["step"]
        # each new saver removes what the killed one before it left: at most one remains
        assert len([n for n in os.listdir(tmp_path) if _safe_write.TEMP_MARK in n]) <= 1
    hookgrad.save({"step": -1, "w": hookgrad.ones(1)}, str(path))
    assert [n for n in os.listdir(tmp_path) if _safe_write.TEMP_MARK in n] == []
    assert os.listdir(tmp_path) == ["ck.pt"]
