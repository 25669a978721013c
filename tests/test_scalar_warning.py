"""``float()``/``complex()`` of a tensor that requires grad: PyTorch's once-per-process
UserWarning (``item()``, ``int()`` and ``bool()`` stay silent), checked in fresh processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CASES = ["[float(b), float(b), complex(a)]", "complex(b)",
         "[int(b), bool(b), b.item(), b.tolist(), float(b.detach()), format(b, '.3f')]",
         # under no_grad: silent, and the once-flag is not spent (LBFGS.step reads its loss so)
         "exec('with lib.no_grad(): float(b)')", "exec('with lib.no_grad(): float(b)'); float(b)"]
SCRIPT = """
import sys, warnings
lib = __import__(sys.argv[1])
a = lib.tensor(2.0, requires_grad=True)
b = a * 2
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {case}
for w in caught:
    print(w.category.__name__, str(w.message).split(" (Triggered internally")[0].replace("\\n", " | "))
"""


def _run(lib: str, case: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(case=case), lib], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.splitlines()


@pytest.mark.oracle
def test_scalar_conversion_warnings_match_torch(torch):
    for case in CASES:
        assert _run("hookgrad", case) == _run("torch", case), case
