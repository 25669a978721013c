"""`python -m bench.bounds`: the profile behind a workload's ratio (no timing asserted)."""

from __future__ import annotations

from bench import bounds


def _leaf() -> int:
    return 1


def _three_calls() -> int:
    return _leaf() + _leaf() + _leaf()


def test_call_counts_are_exact():
    # the step itself plus three Python calls inside it; len() is one C call
    python_calls, c_calls = bounds._calls(lambda: _three_calls() + len("ab"))
    assert python_calls == 1 + 1 + 3
    assert c_calls == 1


def test_one_workload_report_has_every_column(capsys):
    bounds.main(["chain_hooks"])
    out = capsys.readouterr().out
    header, rule, row = out.splitlines()[:3]
    assert header.startswith("| workload | time | GC share | Python calls/step")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "chain_hooks" and cells[1].endswith("us/hook")
    assert int(cells[3]) > 1000 and int(cells[4]) > 0  # 100 hooks and 200 ops per step
    assert "most own time under cProfile" in out


def test_no_names_means_every_eager_workload(monkeypatch):
    seen = []
    monkeypatch.setattr(bounds, "bound", lambda name: seen.append(name) or {
        "time": "1 us/op", "gc": "0.0%", "python calls/step": 1, "C calls/step": 1, "top": []})
    bounds.main([])
    assert seen == bounds.EAGER
