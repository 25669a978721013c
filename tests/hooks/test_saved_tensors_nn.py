"""Saved-tensor hooks on nn ops see what PyTorch saves, in PyTorch's pack order."""

from __future__ import annotations

import pytest

import hookgrad


def _packs(lib, fn):
    log = []

    def pack(t):
        log.append((tuple(t.shape), str(t.dtype).replace("torch.", "")))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(lib)
    saved = y.grad_fn._saved_result1.tolist()
    y.sum().backward()
    return log, saved


@pytest.mark.oracle
def test_max_pool_saves_input_then_indices_like_torch(torch):
    def fn(lib):
        x = lib.arange(32.0).reshape(1, 2, 4, 4).requires_grad_()
        return lib.nn.functional.max_pool2d(x, 2)

    assert _packs(hookgrad, fn) == _packs(torch, fn)
