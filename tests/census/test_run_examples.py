"""``python -m hookgrad.run`` runs unmodified PyTorch programs with PyTorch's results.

Each program under examples/ is written for ``import torch``. It runs once through the one-liner
(a subprocess, so the alias covers the whole interpreter) and once in this process on the real
PyTorch; the numbers they print must agree.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]\d+)?")


def _one_liner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hookgrad.run", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def _numbers(text: str) -> list[float]:
    # the "max |hook - loop|" lines report float32 rounding noise: compared by size only
    return [float(v) for line in text.splitlines() if "hook - loop" not in line
            for v in NUMBER.findall(line)]


@pytest.mark.oracle
@pytest.mark.parametrize("script", ["gpt_char.py", "per_sample_grads.py"])
def test_example_matches_pytorch(torch, script, capsys):
    got = _one_liner(str(ROOT / "examples" / script))
    assert got.returncode == 0, got.stderr
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    try:  # the GPT script sets PyTorch's global TF32 flags, as such scripts do
        runpy.run_path(str(ROOT / "examples" / script), run_name="__main__")
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    ref = capsys.readouterr().out
    ours, theirs = _numbers(got.stdout), _numbers(ref)
    assert len(ours) == len(theirs) > 3
    # float32 training: Adam divides each update by sqrt(v), so last-bit differences between
    # BLAS kernels (they differ by CPU) grow over the steps; 1e-3 still catches any wrong op
    assert ours == pytest.approx(theirs, rel=1e-3, abs=1e-5)
    assert [ln for ln in got.stdout.splitlines() if "sample:" in ln] == [
        ln for ln in ref.splitlines() if "sample:" in ln]


def test_one_liner_passes_argv_and_runs_modules(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys, torch, torch.nn.functional as F\n"
                      "print(torch.__name__, sys.argv[1:], F.relu(torch.tensor([-1.0, 2.0])).tolist())\n")
    out = _one_liner(str(script), "a", "--b")
    assert out.returncode == 0, out.stderr
    # the package answers to PyTorch's name (pyro asserts ``torch.__name__ == "torch"``)
    assert out.stdout.strip() == "torch ['a', '--b'] [0.0, 2.0]"
    assert out.stderr == ""
    usage = _one_liner()
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_alias_survives_garbage_collection_and_exit_is_silent():
    code = ("import gc\nfrom hookgrad.testing._as_torch import as_torch\n"
            "a = as_torch(); a.__enter__(); del a; gc.collect()\n"
            "import torch, torch.nn\nprint(torch.__name__, torch.nn.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.split() == ["torch", "hookgrad.nn"]


def test_alias_context_restores_modules():
    from hookgrad.testing._as_torch import as_torch
    before = sys.modules.get("torch")
    with as_torch() as hg:
        import torch as aliased
        assert aliased is hg and hg.__name__ == "torch"
        with as_torch():  # a nested alias leaves the outer one's name in place
            pass
        assert hg.__name__ == "torch"
    assert sys.modules.get("torch") is before
    assert hg.__name__ == "hookgrad" and hg.__spec__.name == "hookgrad"
