"""Private helpers of torch.distributions.utils that libraries import."""

from __future__ import annotations

import numpy as np

import hookgrad
from hookgrad.distributions.utils import _standard_normal


def test_standard_normal_shape_dtype_and_spread(torch):
    ours = _standard_normal((4000, 3), dtype=hookgrad.float64, device="cpu")
    theirs = torch.distributions.utils._standard_normal((4000, 3), dtype=torch.float64,
                                                        device="cpu")
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == hookgrad.float64
    assert not ours.requires_grad
    np.testing.assert_allclose(ours.numpy().mean(0), 0.0, atol=0.06)
    np.testing.assert_allclose(ours.numpy().std(0), 1.0, atol=0.05)
    assert _standard_normal(hookgrad.Size([2]), hookgrad.float32, None).dtype == hookgrad.float32
