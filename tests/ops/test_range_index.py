"""A Python ``range`` is a sequence index, as in PyTorch (found with "What is torch.nn really?",
whose ``nll`` is ``-input[range(target.shape[0]), target].mean()``)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

INDICES = [(range(3), [0, 1, 2]), range(2), (slice(None), range(1, 3)), (range(0),),
           (range(4), [2, 1, 0, 0]), (Ellipsis, range(2, 0, -1))]


@pytest.mark.parametrize("index", INDICES, ids=str)
def test_read_write_and_gradient_match(torch, index):
    def run(lib):
        x = lib.arange(12., requires_grad=True)
        y = x.reshape(4, 3)
        out = y[index]
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        z = lib.zeros(4, 3)
        z[index] = 1.0
        return out.detach().numpy(), x.grad.numpy(), z.numpy()
    for got, want in zip(run(hookgrad), run(torch)):
        np.testing.assert_array_equal(got, want)
