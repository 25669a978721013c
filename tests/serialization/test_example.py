"""examples/finetune_from_pytorch.py runs: PyTorch weights in, fine-tuned checkpoint out."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "finetune_from_pytorch.py"


@pytest.mark.oracle
def test_finetune_example_round_trips_through_pytorch(torch, tmp_path, capsys):
    main = runpy.run_path(str(EXAMPLE))["main"]
    result = main(["--out", str(tmp_path), "--steps", "8"])
    out = capsys.readouterr().out
    assert "written by torch.save" in out and "predicts the same" in out
    assert result["steps"] == 8
    ckpt = torch.load(result["checkpoint"], weights_only=True)
    assert ckpt["step"] == 8 and set(ckpt["model"]) == {"0.weight", "0.bias", "2.weight",
                                                         "2.bias"}
    assert ckpt["optimizer"]["state"][0]["step"].item() == 8.0
