"""Every error of every command is one stderr line: exit 2 for a user mistake, 1 for a run
that failed otherwise (a lost or killed rank, an internal error), documented in --help."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import hookgrad.cli.train as train_module
from hookgrad.cli import main
from hookgrad.testing.distributed import BannerFilter, lost_rank_message
from tests.cli._run import run_cli
from tests.distributed.test_mpi import _need_mpi

ROOT = Path(__file__).resolve().parents[2]
BANNER = """
===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   PID 4242 RUNNING AT vm
=   EXIT CODE: 9
=   CLEANING UP REMAINING PROCESSES
=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
===================================================================================
YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
This typically refers to a problem with your application.
Please see the FAQ page for debugging suggestions
"""


def _one_line(err: str, prefix: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith(prefix) and "Traceback" not in err, err
    return lines[0]


def _cli(*args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "hookgrad", *args], capture_output=True,
                          text=True, timeout=timeout, env=full, cwd=ROOT, check=False)


def test_an_internal_error_is_one_line_with_exit_code_1(capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(train_module, "train", broken)
    run = run_cli(capsys, "--model", "mlp", "--epochs", "1", "--quiet")
    assert run.rc == 1
    line = _one_line(run.err, "hookgrad train: error: the run failed: ZeroDivisionError: ")
    assert line.endswith("division by zero")


def test_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit codes: 0 success; 2 a user mistake" in text and "1 a run that failed" in text


def test_trace_report_folder_that_cannot_be_written_is_one_line(capsys, tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    blocker = tmp_path / "file"
    blocker.write_text("")
    rc = main(["trace", "--out", str(blocker / "out"), str(script)])
    err = capsys.readouterr().err
    assert rc == 2
    _one_line(err, "hookgrad trace: error: cannot write the report to ")


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04garbage", b""])
def test_package_inspect_errors_are_one_line(capsys, tmp_path, content):
    path = tmp_path / "a.pt"
    path.write_bytes(content)
    assert main(["package", "inspect", str(path)]) == 2
    _one_line(capsys.readouterr().err, "hookgrad package inspect: error: ")


@pytest.mark.parametrize("scale", [1e200, 1e308])
def test_features_beyond_float32_are_one_line_exit_2_in_a_real_process(tmp_path, scale):
    # a real process: the NumPy overflow warnings of the float32 cast would print there
    # (pytest's warning capture hides them in-process)
    data = tmp_path / "huge.npz"
    rng = np.random.default_rng(0)
    np.savez(data, x=rng.random((60, 4)) * scale, y=np.arange(60) % 3)
    proc = _cli("train", "--model", "mlp", "--epochs", "1", "--quiet", "--data", str(data))
    assert proc.returncode == 2, proc.stderr
    _one_line(proc.stderr, f"hookgrad train: error: {data}: x must fit in float32")


def test_large_float32_features_train_without_warnings(tmp_path):
    data = tmp_path / "big.npz"
    rng = np.random.default_rng(0)
    np.savez(data, x=(rng.random((60, 4)) * 3e38).astype(np.float32), y=np.arange(60) % 3)
    proc = _cli("train", "--model", "mlp", "--epochs", "1", "--quiet", "--data", str(data))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_nonfinite_loss_is_one_line_exit_2_in_a_real_process():
    proc = _cli("train", "--model", "cnn", "--epochs", "1", "--optimizer", "sgd", "--lr", "1e9")
    assert proc.returncode == 2, proc.stderr
    # text mode reads the progress bar's carriage returns as line ends: its frames (redrawn
    # in place on a terminal) come first, then the one error line
    *frames, last = proc.stderr.splitlines()
    assert all(not f.strip() or f.startswith("epoch 1/1:") for f in frames), proc.stderr
    _one_line(last + "\n", "hookgrad train: error: loss became nan in epoch 1")


def test_warnings_during_a_command_are_one_line():
    from hookgrad.cli.main import _one_line_warnings

    text = _one_line_warnings("hookgrad train")("first\nsecond", UserWarning, "f.py", 3)
    assert text == "hookgrad train: warning: UserWarning: first\n"


def test_banner_filter_folds_mpich_banner_into_one_line_naming_the_rank(tmp_path):
    out: list[str] = []
    f = BannerFilter(out.append)
    for line in ["epoch 1\n", *BANNER.splitlines(keepends=True), "\n", "after\n"]:
        f.feed(line)
    f.close()
    assert out == ["epoch 1\n", "\n", "after\n"]
    (tmp_path / "4242").write_text("1")
    assert lost_rank_message(f.banner, str(tmp_path)) == (
        "rank 1 (pid 4242) was killed by signal 9 (SIGKILL); mpiexec stopped the other ranks "
        "before they could report")
    assert lost_rank_message("all fine\n", str(tmp_path)) is None


def test_nonfinite_loss_under_nproc_2_is_one_line_exit_2():
    _need_mpi()
    proc = _cli("train", "--model", "mlp", "--epochs", "1", "--quiet", "--nproc", "2",
                "--optimizer", "sgd", "--lr", "1e6")
    assert proc.returncode == 2, proc.stderr
    _one_line(proc.stderr, "hookgrad train: error: loss became nan in epoch 1")
    assert "BAD TERMINATION" not in proc.stdout


def test_a_rank_killed_mid_training_fails_the_launch_in_one_line_exit_1():
    _need_mpi()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hookgrad", "train", "--model", "mlp",
                             "--epochs", "30", "--quiet", "--nproc", "2"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "HOOKGRAD_TEST_LAUNCHER": "marker"})
    try:
        deadline, found = time.monotonic() + 90, None
        while time.monotonic() < deadline:  # until rank 1 joined the group (its pid file)
            time.sleep(0.3)
            found = found or _rank_pid_marker(1)
            if found and (Path(found[1]) / str(found[0])).exists():
                break
        assert found is not None, "rank 1 never started"
        pid = found[0]
        time.sleep(1.0)  # mid-training
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)  # no hang: ends at once
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, (out, err)
    line = _one_line(err, "hookgrad train: error: the run failed: RuntimeError: rank 1 (pid ")
    assert f"pid {pid}) was killed by signal 9 (SIGKILL)" in line
    assert "BAD TERMINATION" not in out and "final test accuracy" not in out


def _rank_pid_marker(rank: int) -> tuple[int, str] | None:
    """(pid, rank directory) of ``rank`` of the launch marked by this test's environment."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"PMI_RANK={rank}".encode() in environ and b"HOOKGRAD_TEST_LAUNCHER=marker" in environ:
            rank_dir = [e for e in environ if e.startswith(b"HOOKGRAD_RANK_DIR=")]
            if rank_dir:
                return int(entry), rank_dir[0].split(b"=", 1)[1].decode()
    return None
