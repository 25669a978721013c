"""`F.affine_grid` gives PyTorch's grid bit for bit (found with the Spatial Transformer tutorial:
an identity transform puts grid points on pixel centres, where one ulp moves a point to the
other side of the centre and grid_sample's gradient for the localisation net changes)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("spatial", [(28, 28), (7, 5), (1, 3), (13, 31), (3, 6, 5)])
@pytest.mark.filterwarnings("ignore:Since version 1.3.0")
def test_grid_is_bit_equal(torch, dtype, align_corners, spatial):
    rng = np.random.default_rng(len(spatial) * 100 + spatial[-1])
    d = len(spatial)
    theta = rng.standard_normal((2, d, d + 1)).astype(dtype)
    identity = np.eye(d, d + 1, dtype=dtype)[None]
    for th in (theta, identity):
        size = (len(th), 1, *spatial)
        want = torch.nn.functional.affine_grid(torch.tensor(th), size, align_corners)
        got = hookgrad.nn.functional.affine_grid(hookgrad.tensor(th), size, align_corners)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_identity_transform_gradient_through_grid_sample(torch):
    img = np.random.default_rng(0).random((2, 1, 12, 12)).astype(np.float32)

    def run(lib):
        theta = lib.tensor([[[1.0, 0, 0], [0, 1, 0]]] * 2, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, (2, 1, 12, 12), align_corners=False)
        out = lib.nn.functional.grid_sample(lib.tensor(img), grid, align_corners=False)
        (out * lib.arange(144.).reshape(12, 12)).sum().backward()
        return theta.grad.numpy()
    np.testing.assert_allclose(run(hookgrad), run(torch), rtol=1e-5, atol=1e-5)
