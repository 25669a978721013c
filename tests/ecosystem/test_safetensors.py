"""safetensors files cross between PyTorch and hookgrad: ``safetensors.torch.save_file`` in one
library, ``load_file`` / ``safe_open`` (memory-mapped through ``UntypedStorage.from_file``,
``asarray`` of a storage and ``Tensor.view(dtype=)``) in the other. Each side runs in its own
process, hookgrad's under ``python -m hookgrad.run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("safetensors")
pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]

SAVE = """
import sys, numpy as np, torch
from safetensors.torch import save_file
rng = np.random.default_rng(0)
t = {"w": torch.tensor(rng.normal(size=(3, 4)).astype(np.float32)),
     "d": torch.tensor(rng.normal(size=(5,))),
     "i": torch.arange(6).reshape(2, 3), "u": torch.arange(7, dtype=torch.uint8),
     "b": torch.tensor([True, False, True]), "h": torch.ones(2, 2, dtype=torch.float16) / 3,
     "s": torch.tensor(2.5), "e": torch.zeros(0, 3)}
t["v"] = t["w"][:, 1]  # a non-contiguous view is saved by value
save_file({k: v.contiguous() for k, v in t.items()}, sys.argv[1], metadata={"who": torch.__name__})
"""

LOAD = """
import json, sys, torch
from safetensors import safe_open
from safetensors.torch import load_file
out = {}
for k, v in sorted(load_file(sys.argv[1]).items()):
    out[k] = [str(v.dtype), list(v.shape), v.float().tolist()]
with safe_open(sys.argv[1], framework="pt") as f:
    out["meta"] = f.metadata()
    out["slice"] = f.get_slice("w")[1:, :2].tolist()
    out["keys"] = sorted(f.keys())
w = load_file(sys.argv[1])["w"]
w.add_(1)  # a private mapping: the file does not change
out["again"] = load_file(sys.argv[1])["w"].tolist()
print(json.dumps(out))
"""


def _run(lib: str, code: str, path: Path) -> str:
    script = path.with_name(f"{lib}_{abs(hash(code))}.py")
    script.write_text(code)
    lead = [sys.executable] if lib == "torch" else [sys.executable, "-m", "hookgrad.run"]
    proc = subprocess.run(lead + [str(script), str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize(("writer", "reader"), [("torch", "hookgrad"), ("hookgrad", "torch")])
def test_files_cross_between_the_libraries(tmp_path, writer, reader):
    path = tmp_path / "x.safetensors"
    _run(writer, SAVE, path)
    got = json.loads(_run(reader, LOAD, path).splitlines()[-1])
    want_path = tmp_path / "ref.safetensors"  # the reference: PyTorch writes and reads
    _run("torch", SAVE, want_path)
    want = json.loads(_run("torch", LOAD, want_path).splitlines()[-1])
    assert got.pop("meta") == {"who": "torch"}  # the alias is named torch in scripts too
    want.pop("meta")
    assert got == want
