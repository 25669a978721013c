"""vmap of grid_sample / affine_grid / fractional max pooling (batching rules that fold the vmap
dim into N), values and gradients against torch.func.vmap."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _data(lib):
    rng = np.random.default_rng(0)
    t = lambda *s: lib.tensor(rng.uniform(-1, 1, s))  # noqa: E731
    return {"x": t(3, 2, 2, 5, 6), "grid": t(3, 2, 4, 3, 2), "x3": t(3, 1, 2, 4, 4, 4),
            "grid3": t(3, 1, 2, 3, 2, 3), "theta": t(3, 2, 2, 3), "theta3": t(3, 2, 3, 4),
            "samples": lib.tensor(rng.uniform(0, 1, (3, 2, 2, 2))),
            "samples3": lib.tensor(rng.uniform(0, 1, (3, 1, 2, 3)))}


def _cases(lib):
    F = lib.nn.functional
    d = _data(lib)
    vm = lib.func.vmap
    out = {}
    for mode in ("bilinear", "nearest", "bicubic"):
        f = lambda x, g, m=mode: F.grid_sample(x, g, mode=m, padding_mode="border",  # noqa: E731
                                               align_corners=False)
        out[f"grid_{mode}"] = vm(f)(d["x"], d["grid"])
        out[f"grid_{mode}_unbatched_x"] = vm(f, in_dims=(None, 0))(d["x"][0], d["grid"])
    out["grid3"] = vm(lambda x, g: F.grid_sample(x, g, align_corners=True))(d["x3"], d["grid3"])
    out["affine"] = vm(lambda th: F.affine_grid(th, [2, 1, 4, 5], align_corners=False))(
        d["theta"])
    out["affine3"] = vm(lambda th: F.affine_grid(th, [2, 1, 3, 4, 2], align_corners=True))(
        d["theta3"])
    pool = lambda x, s: F.fractional_max_pool2d(x, 2, output_size=(3, 3),  # noqa: E731
                                                _random_samples=s)
    out["frac2d"] = vm(pool)(d["x"][:, :, :, :5, :5], d["samples"])
    pool3 = lambda x, s: F.fractional_max_pool3d(x, 2, output_size=(2, 2, 2),  # noqa: E731
                                                 _random_samples=s)
    out["frac3d"] = vm(pool3)(d["x3"], d["samples3"])

    def loss(x, g):
        return (F.grid_sample(x, g, align_corners=False) ** 2).sum()

    gx, gg = vm(lib.func.grad(loss, argnums=(0, 1)))(d["x"], d["grid"])
    out["grid_grad_x"], out["grid_grad_grid"] = gx, gg
    gp = vm(lib.func.grad(lambda x, s: (pool(x, s) ** 2).sum()))(d["x"][:, :, :, :5, :5],
                                                                  d["samples"])
    out["frac_grad"] = gp
    return {k: v.detach().numpy() for k, v in out.items()}


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # torch.func's own fallback
def test_spatial_vmap_matches_torch_func(torch):
    ours, theirs = _cases(hookgrad), _cases(torch)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12, err_msg=key)
