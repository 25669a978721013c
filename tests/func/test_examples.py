"""The three torch.func tutorial programs in examples/ give PyTorch's results."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import hookgrad

ROOT = Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["func_per_sample_grads", "func_ensembling",
                                  "func_jacobians_hessians"])
def test_example_matches_torch(torch, name):
    mod = _load(name)
    ours, theirs = mod.run(hookgrad), mod.run(torch)
    assert ours.keys() == theirs.keys()
    for k in ours:
        a, b = ours[k], theirs[k]
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
