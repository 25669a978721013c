"""``nn.parallel.scatter_gather``: PyTorch's errors for CPU targets; other devices split."""

from __future__ import annotations

from importlib import import_module

import numpy as np
import pytest

import hookgrad
from hookgrad.testing import strict_backend


def _errors(lib):
    sg = import_module(f"{lib.__name__}.nn.parallel.scatter_gather")
    x = lib.tensor(np.arange(12.0).reshape(6, 2))
    out = []
    for call in (lambda: sg.scatter(x, [None, None]), lambda: sg.scatter(x, ["cpu", "cpu"]),
                 lambda: sg.gather([x, x], None), lambda: sg.gather([x, x], "cpu")):
        try:
            call()
            out.append(None)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.oracle
def test_cpu_targets_raise_pytorch_errors(torch):
    assert _errors(hookgrad) == _errors(torch)


def test_scatter_and_gather_across_another_backend():
    from hookgrad.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs

    strict_backend.register()
    try:
        x = hookgrad.tensor(np.arange(12.0).reshape(6, 2))
        pieces = scatter((x, {"k": x * 2}, "tag"), ["strict", "strict", "strict"])
        assert [p[2] for p in pieces] == ["tag"] * 3
        assert all(p[0].device.type == "strict" and p[0].shape == (2, 2) for p in pieces)
        assert pieces[1][1]["k"].cpu().tolist() == [[8.0, 10.0], [12.0, 14.0]]
        back = gather([p[0] for p in pieces], "strict")
        assert back.cpu().tolist() == x.tolist()
        args, kwargs = scatter_kwargs((x,), {"k": x}, ["strict", "strict"])
        assert len(args) == len(kwargs) == 2 and kwargs[1]["k"].shape == (3, 2)
    finally:
        strict_backend.unregister()
