"""Run ``hookgrad train`` in-process and collect what a user would see."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from hookgrad.cli import main

_FINAL = re.compile(r"^final test accuracy: (\d\.\d{4}) on (.+)$", re.M)
_EPOCH = re.compile(r"^epoch +(\d+) +loss (\S+) +train acc (\S+) +test acc (\S+) +\(", re.M)


@dataclass
class Run:
    rc: int
    out: str
    err: str

    @property
    def accuracy(self) -> float:
        return float(_FINAL.search(self.out).group(1))

    @property
    def source(self) -> str:
        return _FINAL.search(self.out).group(2)

    @property
    def epochs(self) -> list[tuple[int, float, float, float]]:
        return [(int(e), float(a), float(b), float(c)) for e, a, b, c in _EPOCH.findall(self.out)]


def run_cli(capsys: Any, *args: str) -> Run:
    """``hookgrad train ARGS`` through `hookgrad.cli.main`; argparse exits become return codes."""
    try:
        rc = main(["train", *args])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return Run(rc, out, err)


def write_npz(path: Any, n: int = 60, shape: tuple = (4,), classes: int = 3, seed: int = 0,
              **overrides: Any) -> str:
    """A small, learnable data set: class means differ along the features."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.standard_normal((n, *shape)).astype(np.float32)
    x += y.reshape(-1, *([1] * len(shape))) * 3.0
    arrays = {"x": x, "y": y, **overrides}
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})
    return str(path)
