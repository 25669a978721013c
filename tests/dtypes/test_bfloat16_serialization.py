"""bfloat16 checkpoints cross between PyTorch and hookgrad with their dtype and exact bits:
``torch.save``/``load`` (zip and legacy formats, state dicts of modules converted with
``.to(bfloat16)``) and safetensors files (each library in its own process)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hookgrad

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
VALUES = [1.5, -2.25, 3e38, 1e-38, float("inf"), 0.1, -0.0, 65504.0]


def _bits(lib, t) -> list:
    return t.detach().contiguous().view(lib.int16).tolist()


@pytest.mark.parametrize("legacy", [False, True])
def test_pytorch_checkpoint_loads_as_bfloat16_with_its_bits(torch, legacy):
    g = torch.Generator().manual_seed(0)
    t = torch.tensor(VALUES, dtype=torch.bfloat16)
    sd = {"w": t, "m": torch.randn(3, 4, generator=g).bfloat16(), "view": t[1:7:2]}
    buf = io.BytesIO()
    torch.save(sd, buf, _use_new_zipfile_serialization=not legacy)
    ours = hookgrad.load(io.BytesIO(buf.getvalue()))
    assert {k: str(v.dtype) for k, v in ours.items()} == {k: str(v.dtype) for k, v in sd.items()}
    assert {k: _bits(hookgrad, v) for k, v in ours.items()} == \
        {k: _bits(torch, v) for k, v in sd.items()}
    assert (ours["view"].storage_offset(), ours["view"].stride()) == (1, (2,))


def test_hookgrad_checkpoint_loads_in_pytorch_with_its_bits(torch):
    m = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 4), hookgrad.nn.LayerNorm(4))
    m = m.to(hookgrad.bfloat16)
    buf = io.BytesIO()
    hookgrad.save(m.state_dict(), buf)
    theirs = torch.load(io.BytesIO(buf.getvalue()))
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4)).bfloat16()
    ref.load_state_dict(theirs)
    assert {k: str(v.dtype) for k, v in theirs.items()} == {k: "torch.bfloat16" for k in theirs}
    assert {k: _bits(torch, v) for k, v in ref.state_dict().items()} == \
        {k: _bits(hookgrad, v) for k, v in m.state_dict().items()}
    # bytes of the storage are the 2-byte patterns
    w = m[0].weight
    assert bytes(w.untyped_storage()) == bytes(theirs["0.weight"].untyped_storage())


SAVE = """
import sys, torch
from safetensors.torch import save_file
t = torch.tensor({values}, dtype=torch.bfloat16)
save_file({{"t": t, "m": (t[:4] * 3).reshape(2, 2).contiguous()}}, sys.argv[1])
"""

LOAD = """
import json, sys, torch
from safetensors.torch import load_file
out = {k: [str(v.dtype), v.view(torch.int16).tolist()] for k, v in sorted(load_file(sys.argv[1]).items())}
print(json.dumps(out))
"""


def _run(lib: str, code: str, path: Path) -> str:
    script = path.with_name(f"{lib}_{abs(hash(code))}.py")
    script.write_text(code)
    lead = [sys.executable] if lib == "torch" else [sys.executable, "-m", "hookgrad.run"]
    proc = subprocess.run(lead + [str(script), str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize(("writer", "reader"), [("torch", "hookgrad"), ("hookgrad", "torch")])
def test_safetensors_bfloat16_round_trip(tmp_path, writer, reader):
    pytest.importorskip("safetensors")
    path = tmp_path / "bf16.safetensors"
    _run(writer, SAVE.format(values=[v for v in VALUES if v != float("inf")] + [1e39]), path)
    got = json.loads(_run(reader, LOAD, path))
    ref = json.loads(_run(writer, LOAD, path))
    assert got == ref
    assert got["t"][0] == "torch.bfloat16"
