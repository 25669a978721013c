"""``torch.cpu.amp``: the deprecated CPU spellings warn and then act as ``torch.amp`` with "cpu"."""

from __future__ import annotations

import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenario(L):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx = L.cpu.amp.autocast()
        scaler = L.cpu.amp.GradScaler()
    x = L.ones(2, 3)
    with ctx:
        inner = ((x @ x.T).dtype, L.is_autocast_enabled("cpu"), L.get_autocast_dtype("cpu"))
    return ([(w.category.__name__, str(w.message)) for w in caught], str(inner[0]), inner[1],
            str(inner[2]), L.is_autocast_enabled("cpu"), type(scaler).__name__,
            scaler.is_enabled(), ctx.device, str(ctx.fast_dtype))


def test_cpu_amp_matches_pytorch(torch):
    assert _scenario(hookgrad) == _scenario(torch)
