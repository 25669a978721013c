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


def test_standard_normal_of_an_empty_shape_is_a_scalar(torch):
    for L in (torch, hookgrad):
        draw = L.distributions.utils._standard_normal((), dtype=L.float64, device="cpu")
        assert tuple(draw.shape) == () and draw.dtype == L.float64


def test_scalar_parameter_families_draw_scalars(torch):
    # Normal and StudentT with Python-number parameters have an empty batch shape
    for L in (torch, hookgrad):
        D = L.distributions
        for d in (D.Normal(0.0, 1.0), D.StudentT(3.0)):
            assert tuple(d.rsample().shape) == () and tuple(d.rsample((2,)).shape) == (2,)
