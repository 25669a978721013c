"""``hookgrad trace SCRIPT [ARGS...]`` in a subprocess, on a hookgrad script and a torch script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    import {lib} as torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    spare = torch.nn.Linear(4, 4)
    spare.register_forward_hook(lambda m, a, o: None)
    model[2].register_full_backward_hook(lambda m, gi, go: None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.register_step_post_hook(lambda o, a, k: None)
    for step in range(int(sys.argv[1])):
        out = model(torch.ones(2, 4))
        out.register_hook(lambda g: g * 2)
        out.sum().backward()
        opt.step()
        opt.zero_grad()
    print("script done", sys.argv[1:])
""")


def run_cli(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "hookgrad", "trace", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


def _check_report(report, steps):
    data = json.loads((report / "trace.json").read_text())
    kinds = [e["kind"] for e in data["events"]]
    assert kinds == ["tensor", "module.backward", "optimizer.step_post"] * steps
    assert [e["target"] for e in data["events"][:3]] == [
        "tensor[2, 3] (BackwardHookFunctionBackward)", "2", "SGD"]
    assert data["events"][0]["replaced"] is True
    silent = [(s["kind"], s["owner"], s["reason"]) for s in data["silent"]]
    assert silent == [("module.forward", "Linear", "module_not_called")]
    page = (report / "index.html").read_text()
    assert "Firing timeline" in page and "module_not_called" in page
    dot = (report / "graph.dot").read_text()
    assert f"tensor #{3 * (steps - 1)}" in dot  # the last step's tensor hook, numbered
    assert "2.weight [3, 8]" in dot


@pytest.mark.parametrize("lib", ["hookgrad", "torch"])
def test_trace_script_writes_report(tmp_path, lib, request):
    if lib == "torch":
        request.getfixturevalue("torch")  # the oracle: skip (or fail) without torch
    (tmp_path / "train.py").write_text(SCRIPT.format(lib=lib))
    run = run_cli(tmp_path, "--out", "rep", "train.py", "2")
    assert run.returncode == 0, run.stderr
    assert "script done ['2']" in run.stdout
    assert "hookgrad trace: 6 hook firings, 1 silent hooks" in run.stdout
    _check_report(tmp_path / "rep", 2)


def test_missing_script_and_bad_arguments(tmp_path):
    run = run_cli(tmp_path, "missing.py")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == ["hookgrad trace: error: no such script: missing.py"]
    run = run_cli(tmp_path, "--bogus", "x.py")
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    run = run_cli(tmp_path)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1


def test_script_exception_reported_with_traceback(tmp_path):
    (tmp_path / "bad.py").write_text(textwrap.dedent("""
        import hookgrad
        x = hookgrad.ones(2, requires_grad=True)
        x.register_hook(lambda g: None)

        def fail():
            raise KeyError("oops")

        fail()
    """))
    run = run_cli(tmp_path, "--out", "rep", "bad.py")
    assert run.returncode == 1
    assert run.stderr.startswith("Traceback (most recent call last):")
    assert 'bad.py", line 9' in run.stderr and "KeyError: 'oops'" in run.stderr
    assert "runpy" not in run.stderr and "trace_cmd" not in run.stderr
    data = json.loads((tmp_path / "rep" / "trace.json").read_text())
    assert "KeyError" in data["error"]
    assert [s["reason"] for s in data["silent"]] == ["no_backward"]


def test_script_exit_code_is_kept(tmp_path):
    (tmp_path / "exit3.py").write_text("import sys\nsys.exit(3)\n")
    assert run_cli(tmp_path, "--out", "rep", "exit3.py").returncode == 3
    (tmp_path / "exit0.py").write_text("import sys\nsys.exit()\n")
    assert run_cli(tmp_path, "--out", "rep", "exit0.py").returncode == 0
