"""``python -m bench --peers``: which peers run, and how the table shows them (no timing)."""

from __future__ import annotations

import importlib.util

import pytest

from bench import peers
from bench import run as R


def _results(with_peers: bool) -> dict:
    row = {"unit": "us/hook", "hookgrad": 2.0, "torch": 4.0, "ratio": 0.5,
           "first_value_agrees": True}
    results = {"workloads": {"chain_hooks": row}}
    if with_peers:
        row.update({"autograd": 6.0, "autograd_ratio": 1.5, "mygrad": None,
                    "mygrad_error": "Unavailable: MyGrad: no chain_hooks"})
        results.update(peers=["autograd", "mygrad"], peer_notes=["Chainer: not supported, why"],
                       peer_labels={"autograd": {"chain_hooks": "workaround"}, "mygrad": {}})
    return results


def test_table_without_peers_keeps_its_columns():
    lines = R.format_table(_results(False)).splitlines()
    assert lines[0] == "| workload | unit | hookgrad | PyTorch | ratio | same first loss |"
    assert lines[2] == "| chain_hooks | us/hook | 2 | 4 | 0.5 | True |"
    assert len(lines) == 3


def test_table_with_peers_has_columns_per_peer_labels_dashes_and_notes():
    lines = R.format_table(_results(True)).splitlines()
    assert lines[0] == ("| workload | unit | hookgrad | PyTorch | ratio | HIPS autograd | "
                        "HIPS autograd ratio | MyGrad | MyGrad ratio | same first loss |")
    assert lines[1].count("|") == lines[0].count("|")
    assert lines[2] == ("| chain_hooks | us/hook | 2 | 4 | 0.5 | 6 | 1.5 (workaround) | - | - | "
                        "True |")
    assert lines[3:] == ["- Chainer: not supported, why"]  # an unavailable workload is no failure


def test_a_failing_peer_is_reported_as_a_failure():
    results = _results(True)
    results["workloads"]["chain_hooks"]["mygrad_error"] = "RuntimeError: boom"
    assert "(mygrad failed: RuntimeError: boom)" in R.format_table(results)


def test_peers_not_installed_are_left_out_with_a_note(monkeypatch):
    monkeypatch.setitem(peers.PEERS, "absent", peers.Peer("no_such_peer_lib_xyz", "x", "Absent"))
    names, notes = peers.installed()
    assert "absent" not in names
    assert any(note.startswith("Absent: not installed") for note in notes)
    assert R._lib_names(with_peers=False)[0] == R._lib_names()[0]
    assert not set(R._lib_names()[0]) & set(peers.PEERS)


def test_first_values_agree_against_torch():
    assert R._first_values_agree({"hookgrad": 1.0, "torch": 1.0, "autograd": 1.0000001})
    assert not R._first_values_agree({"hookgrad": 1.0, "torch": 1.0, "mygrad": 1.1})
    assert R._first_values_agree({"hookgrad": 1.0}) is None


@pytest.mark.slow
def test_a_quick_peers_run_times_every_installed_peer():
    names, _ = peers.installed()
    if not names or importlib.util.find_spec("torch") is None:
        pytest.skip("needs PyTorch and at least one peer installed")
    results = R.run(["hvp"], quick=True, with_peers=True)
    row = results["workloads"]["hvp"]
    assert results["peers"] == names
    assert row["first_value_agrees"] is True
    if "autograd" in names:
        assert row["autograd"] > 0 and row["autograd_ratio"] > 0
    if "mygrad" in names:  # no higher-order gradients
        assert row["mygrad"] is None and R._unavailable(row, "mygrad")
