"""The oracle: every scenario marked ``oracle`` gives the same result on hookgrad (threads
backend) as on PyTorch 2.13 with gloo and 2 spawned processes (one run, ~15 s)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hookgrad
from hookgrad.testing.distributed import run_ranks
from tests.conftest import load_torch
from tests.distributed._compare import assert_same, scenario_warnings
from tests.distributed.scenarios import ORACLE, SCENARIOS

pytestmark = pytest.mark.oracle
RUNNER = str(Path(__file__).with_name("torch_runner.py"))


@pytest.fixture(scope="module")
def torch_results(tmp_path_factory):
    load_torch()
    out = tmp_path_factory.mktemp("gloo") / "oracle"
    for _attempt in range(2):  # gloo itself occasionally hangs in a barrier here (60 s timeout)
        proc = subprocess.run([sys.executable, RUNNER, str(out)], capture_output=True,
                              text=True, timeout=240, check=False)
        if proc.returncode == 0:
            break
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(Path(f"{out}.rank{r}.json").read_text()) for r in range(2)]


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_same_as_pytorch_gloo(torch_results, name):
    with scenario_warnings():
        ours = json.loads(json.dumps(
            run_ranks(lambda rank, world: SCENARIOS[name](hookgrad, rank, world), 2),
            default=str))
    for rank in range(2):
        theirs = torch_results[rank][name]
        assert theirs["ok"], f"torch rank {rank}: {theirs['error']}"
        assert_same(ours[rank], theirs["result"], tol=1e-4)
