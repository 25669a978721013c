"""``hookgrad train --nproc 2 / --ddp / --comm-hook`` under a real mpiexec: one progress bar
and one report from rank 0, the same accuracy as one process, a rank-0 checkpoint that a
single process loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hookgrad
from hookgrad.cli.train import build_model
from tests.cli._run import _FINAL, run_cli
from tests.distributed.test_mpi import _need_mpi

pytestmark = pytest.mark.mpi
ROOT = Path(__file__).resolve().parents[2]


def _hookgrad_train(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "hookgrad", "train", *args], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_nproc_2_matches_one_process_and_checkpoint_loads(capsys, tmp_path):
    _need_mpi()
    single = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet")
    ck = tmp_path / "ck.pt"
    proc = _hookgrad_train("--model", "mlp", "--epochs", "2", "--nproc", "2",
                           "--checkpoint", str(ck))
    assert proc.returncode == 0, proc.stderr
    finals = _FINAL.findall(proc.stdout)
    assert len(finals) == 1  # one report, from rank 0
    assert abs(float(finals[0][0]) - single.accuracy) < 0.01
    assert proc.stderr.count("epoch 2/2") >= 1 and proc.stdout.count("epoch   2") == 1
    state = hookgrad.load(str(ck))
    model = build_model("mlp", (8, 8), 10)
    model.load_state_dict(state["model"])  # no "module." prefix: loads in one process
    assert state["epoch"] == 2


@pytest.mark.parametrize("hook", ["fp16", "powersgd"])
def test_comm_hooks_train(hook):
    _need_mpi()
    proc = _hookgrad_train("--model", "mlp", "--epochs", "2", "--nproc", "2", "--quiet",
                           "--comm-hook", hook)
    assert proc.returncode == 0, proc.stderr
    finals = _FINAL.findall(proc.stdout)
    assert len(finals) == 1 and float(finals[0][0]) > 0.85


def test_ddp_without_a_launcher_is_one_rank(capsys):
    _need_mpi()
    try:
        run = run_cli(capsys, "--model", "mlp", "--epochs", "1", "--quiet", "--ddp")
    finally:
        if hookgrad.distributed.is_initialized():
            hookgrad.distributed.destroy_process_group()
    plain = run_cli(capsys, "--model", "mlp", "--epochs", "1", "--quiet")
    assert run.rc == 0 and run.accuracy == plain.accuracy


def test_bad_nproc_is_a_user_error(capsys):
    run = run_cli(capsys, "--model", "mlp", "--nproc", "0")
    assert run.rc == 2 and "--nproc must be a positive number" in run.err


def test_a_last_batch_smaller_than_the_world_does_not_hang():
    _need_mpi()  # 1438 training samples: the last batch of 1437 holds a single sample
    proc = _hookgrad_train("--model", "mlp", "--epochs", "1", "--nproc", "2", "--quiet",
                           "--batch-size", "1437", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(_FINAL.findall(proc.stdout)) == 1
