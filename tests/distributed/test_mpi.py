"""The scenarios of spec §11.5 mirrored under a real ``mpiexec -n 2`` (MPI backend), plus faults
that end a rank. One mpiexec run covers every scenario (about 2-4 s); every run has a timeout
so a hang fails fast. Skips without mpiexec/mpi4py unless CI or HOOKGRAD_REQUIRE_ORACLE=1."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from hookgrad.testing.distributed import mpiexec, run_mpi
from tests.distributed.expectations import check
from tests.distributed.scenarios import SCENARIOS

RUNNER = str(Path(__file__).with_name("mpi_runner.py"))
REQUIRED = os.environ.get("HOOKGRAD_REQUIRE_ORACLE") == "1" or bool(os.environ.get("CI"))

pytestmark = pytest.mark.mpi


def _need_mpi():
    if mpiexec() is None or importlib.util.find_spec("mpi4py") is None:
        if REQUIRED:
            pytest.fail("MPI tests required (CI / HOOKGRAD_REQUIRE_ORACLE=1) but mpiexec or "
                        "mpi4py is missing: pip install 'hookgrad[mpi]'")
        pytest.skip("mpiexec / mpi4py not installed (pip install 'hookgrad[mpi]')")


def _read(out: Path, n: int = 2) -> list:
    return [json.loads(Path(f"{out}.rank{r}.json").read_text()) for r in range(n)]


@pytest.fixture(scope="module")
def mpi_results(tmp_path_factory):
    _need_mpi()
    out = tmp_path_factory.mktemp("mpi") / "scenarios"
    proc = run_mpi(RUNNER, 2, [str(out)], timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _read(out)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_under_mpiexec(mpi_results, name):
    per_rank = [r[name] for r in mpi_results]
    for rank, r in enumerate(per_rank):
        assert r["ok"], f"rank {rank}: {r['error']}\n{r.get('trace', '')}"
    check(name, [r["result"] for r in per_rank])


def _fault(tmp_path, kind):
    _need_mpi()
    out = tmp_path / kind
    proc = run_mpi(RUNNER, 2, [str(out), "--fault", kind], timeout=60)
    return proc, out


def test_a_raising_rank_gives_a_timeout_naming_it(tmp_path):
    proc, out = _fault(tmp_path, "raise")
    assert proc.returncode != 0  # rank 1 exited with an error
    r0 = json.loads(Path(f"{out}.rank0.json").read_text())
    assert not r0["ok"] and r0["type"] == "DistBackendError"
    assert "timed out after 3 s waiting for rank 1" in r0["error"]


def test_collectives_in_different_orders_fail_on_every_rank(tmp_path):
    proc, out = _fault(tmp_path, "skip")
    results = _read(out)
    assert all(not r["ok"] for r in results), results
    for r in results:
        assert r["error"].startswith("collective mismatch: rank 0 called all_reduce"), r
        assert "rank 1 called barrier" in r["error"]
