"""``grid_sample``/``affine_grid`` and ``torch.grid_sampler*``: values and gradients of larger
random cases in float32 and float64, argument errors and warnings, against PyTorch.
(Per-mode gradchecks are the OpSpecs in ``hookgrad/testing/_opspec/nn_extra.py``.)"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib

MODES = list(itertools.product(("bilinear", "nearest", "bicubic"),
                               ("zeros", "border", "reflection"), (False, True)))


def _run(lib, x, g, **kw):
    xt, gt = to_lib(lib, x, True), to_lib(lib, g, True)
    out = lib.nn.functional.grid_sample(xt, gt, **kw)
    gout = to_lib(lib, np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(x.dtype))
    out.backward(gout)
    return out.detach().numpy(), xt.grad.numpy(), gt.grad.numpy()


@pytest.mark.parametrize("mode,pad,align", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample_matches_torch(torch, mode, pad, align, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 6)).astype(dtype)
    g = rng.uniform(-1.5, 1.5, (2, 4, 7, 2)).astype(dtype)
    g[0, 0, :3] = [[-1, -1], [1, 1], [0, 0]]  # corners and centre exactly
    kw = {"mode": mode, "padding_mode": pad, "align_corners": align}
    tol = 1e-4 if dtype == "float32" else 1e-10
    for h, t in zip(_run(hookgrad, x, g, **kw), _run(torch, x, g, **kw)):
        assert h.dtype == t.dtype
        np.testing.assert_allclose(h, t, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode,pad,align", [m for m in MODES if m[0] != "bicubic"])
def test_grid_sample_5d_matches_torch(torch, mode, pad, align):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 3, 4, 5))
    g = rng.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
    kw = {"mode": mode, "padding_mode": pad, "align_corners": align}
    for h, t in zip(_run(hookgrad, x, g, **kw), _run(torch, x, g, **kw)):
        np.testing.assert_allclose(h, t, atol=1e-10, rtol=1e-10)


def test_affine_grid_then_sample(torch):
    rng = np.random.default_rng(3)
    theta = rng.standard_normal((2, 2, 3))
    x = rng.standard_normal((2, 3, 4, 5))
    res = []
    for lib in (torch, hookgrad):
        th = to_lib(lib, theta, True)
        grid = lib.nn.functional.affine_grid(th, [2, 3, 6, 7], align_corners=False)
        out = lib.nn.functional.grid_sample(to_lib(lib, x), grid, align_corners=False)
        out.sum().backward()
        res.append((grid.grad_fn.name(), out.detach().numpy(), th.grad.numpy()))
    assert res[0][0] == res[1][0] == "AffineGridGeneratorBackward0"
    np.testing.assert_allclose(res[1][1], res[0][1], atol=1e-10)
    np.testing.assert_allclose(res[1][2], res[0][2], atol=1e-10)


def test_torch_level_names(torch):
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal((1, 2, 3, 4)), rng.uniform(-1, 1, (1, 2, 2, 2))
    for name in ("grid_sampler", "grid_sampler_2d"):
        h = getattr(hookgrad, name)(to_lib(hookgrad, x), to_lib(hookgrad, g), 2, 2, True)
        t = getattr(torch, name)(to_lib(torch, x), to_lib(torch, g), 2, 2, True)
        np.testing.assert_allclose(h.numpy(), t.numpy(), atol=1e-12)
    x3, g3 = rng.standard_normal((1, 2, 3, 4, 2)), rng.uniform(-1, 1, (1, 2, 2, 2, 3))
    h = hookgrad.grid_sampler_3d(to_lib(hookgrad, x3), to_lib(hookgrad, g3), 0, 1, False)
    t = torch.grid_sampler_3d(to_lib(torch, x3), to_lib(torch, g3), 0, 1, False)
    np.testing.assert_allclose(h.numpy(), t.numpy(), atol=1e-12)
    th = rng.standard_normal((2, 3, 4))
    h = hookgrad.affine_grid_generator(to_lib(hookgrad, th), [2, 1, 2, 3, 4], True)
    t = torch.affine_grid_generator(to_lib(torch, th), [2, 1, 2, 3, 4], True)
    np.testing.assert_allclose(h.numpy(), t.numpy(), atol=1e-12)


def _sampler_calls(lib):
    x = lib.zeros(1, 2, 3, 4)
    return [
        lambda: lib.grid_sampler(x, lib.zeros(1, 2, 2, 3), 0, 0, False),
        lambda: lib.grid_sampler(x, lib.zeros(2, 2, 2, 2), 0, 0, False),
        lambda: lib.grid_sampler(x, lib.zeros(1, 2, 2), 0, 0, False),
        lambda: lib.grid_sampler(lib.zeros(1, 2, 0, 4), lib.zeros(1, 2, 2, 2), 0, 0, False),
        lambda: lib.grid_sampler(x, lib.zeros(1, 2, 2, 2, dtype=lib.float64), 0, 0, False),
        lambda: lib.grid_sampler(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), 2, 0, False),
        lambda: lib.grid_sampler_2d(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), 0, 0,
                                    False),
        lambda: lib.grid_sampler(x.long(), lib.zeros(1, 2, 2, 2).long(), 0, 0, False),
        lambda: lib.nn.functional.grid_sample(x, lib.zeros(1, 2, 2, 2), mode="area"),
        lambda: lib.nn.functional.grid_sample(x, lib.zeros(1, 2, 2, 2), padding_mode="wrap"),
        lambda: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3).long(), [1, 1, 2, 2], False),
        lambda: lib.nn.functional.affine_grid(lib.zeros(1, 3, 4), [1, 1, 2, 2], False),
        lambda: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), [1, 1, 2, 2, 2], False),
        lambda: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), [1, 1, 2], False),
        lambda: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), [1, 0, 2, 2], False),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_sampler_calls(hookgrad), _sampler_calls(torch)):
        assert err(h) == err(t)


def test_warnings_and_forward_ad(torch):
    for lib in (torch, hookgrad):
        F = lib.nn.functional
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            F.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        with pytest.warns(UserWarning, match="unit-size grids"):
            F.affine_grid(lib.zeros(1, 2, 3), [1, 1, 1, 2], align_corners=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            F.affine_grid(lib.zeros(1, 2, 3), [1, 1, 1, 2], align_corners=False)
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(lib.zeros(1, 1, 2, 2), lib.ones(1, 1, 2, 2))
            with pytest.raises(NotImplementedError, match="forward AD with grid_sampler_2d"):
                F.grid_sample(x, lib.zeros(1, 1, 1, 2), align_corners=False)
