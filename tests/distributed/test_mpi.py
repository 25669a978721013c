"""The scenarios of spec §11.5 mirrored under a real ``mpiexec -n 2`` (MPI backend), plus faults
that end a rank. One mpiexec run covers every scenario (about 2-4 s); every run has a timeout
so a hang fails fast. Skips without mpiexec/mpi4py unless CI or HOOKGRAD_REQUIRE_ORACLE=1."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

from hookgrad.testing.distributed import mpiexec, run_mpi
from tests.distributed._timeouts import scaled
from tests.distributed.expectations import check_launched
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


def _read(out: Path, n: int = 2, proc=None) -> list:
    """Every rank's result file; a missing one fails naming the rank, with the launch's
    output (which scenario each rank was in, any traceback)."""
    results = []
    for r in range(n):
        path = Path(f"{out}.rank{r}.json")
        log = "" if proc is None else f"\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}"
        assert path.exists(), f"rank {r} produced no result{log}"
        results.append(json.loads(path.read_text()))
    return results


@pytest.fixture(scope="module")
def mpi_results(tmp_path_factory):
    _need_mpi()
    out = tmp_path_factory.mktemp("mpi") / "scenarios"
    proc = run_mpi(RUNNER, 2, [str(out)], timeout=scaled(240),
                   env={"GROUP_TIMEOUT": str(scaled(60))})
    results = _read(out, proc=proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return results


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_under_mpiexec(mpi_results, name):
    check_launched(name, mpi_results)


def _fault(tmp_path, kind):
    _need_mpi()
    out = tmp_path / kind
    start = time.monotonic()
    proc = run_mpi(RUNNER, 2, [str(out), "--fault", kind], timeout=scaled(60),
                   env={"FAULT_TIMEOUT": "30"})
    return proc, out, time.monotonic() - start


@pytest.mark.parametrize(("kind", "reason"), [
    ("raise", "(it raised ValueError: rank 1 fails on purpose)"), ("exit", "(exited)")])
def test_a_rank_that_leaves_fails_its_peer_at_once_naming_it(tmp_path, kind, reason):
    # the group timeout is 30 s: the peer must fail on rank 1's exit notice, not the timeout
    proc, out, seconds = _fault(tmp_path, kind)
    r0 = json.loads(Path(f"{out}.rank0.json").read_text())
    assert not r0["ok"] and r0["type"] == "DistBackendError", r0
    assert r0["error"].startswith("[rank 0] all_reduce (collective #"), r0
    assert "failed: rank 1 left after" in r0["error"] and r0["error"].endswith(reason)
    assert r0["seconds"] < 15, r0  # far below the 30 s group timeout
    assert (proc.returncode != 0) == (kind == "raise")


def test_a_rank_that_leaves_fails_a_receive_from_it_naming_it(tmp_path):
    proc, out, seconds = _fault(tmp_path, "p2p")  # group timeout 30 s
    r0 = json.loads(Path(f"{out}.rank0.json").read_text())
    assert not r0["ok"] and r0["type"] == "DistBackendError", r0
    assert r0["error"] == "[rank 0] recv (tag 0) failed: rank 1 left (exited)", r0
    assert r0["seconds"] < 15, r0


def test_a_rank_killed_mid_step_ends_the_launch_naming_it(tmp_path):
    # mpiexec's default cleanup kills the other ranks at once (no hang, no timeout); the
    # launch's one-line summary names the killed rank from the pid files the ranks wrote
    proc, out, seconds = _fault(tmp_path, "kill")
    # ends, no hang (the launch's start-up is slower on a loaded machine)
    assert proc.returncode != 0 and seconds < scaled(55), (proc.returncode, seconds)
    assert proc.lost_rank is not None and proc.lost_rank.startswith("rank 1 (pid "), proc.stdout
    assert "was killed by signal 9 (SIGKILL)" in proc.lost_rank
    results = _read(out)
    assert not results[1]["ok"]  # never finished
    assert not results[0]["ok"]  # stopped, or failed naming rank 1 if it outlived it
    if results[0]["error"] != "started":
        assert "rank 1" in results[0]["error"], results[0]


def test_collectives_in_different_orders_fail_on_every_rank(tmp_path):
    proc, out, _ = _fault(tmp_path, "skip")
    results = _read(out, proc=proc)
    assert all(not r["ok"] for r in results), results
    for r in results:
        assert r["error"].startswith("collective mismatch: rank 0 called all_reduce"), r
        assert "rank 1 called barrier" in r["error"]
