"""``nn.CrossMapLRN2d`` (legacy window, its own gradient formula, node name, errors) and
``nn.utils.convert_conv{2,3}d_weight_memory_format`` against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("channels", [1, 3, 7])
def test_crossmap_lrn2d(torch, size, channels):
    x = np.random.default_rng(size).standard_normal((2, channels, 3, 2))
    g = np.cos(x)
    res = []
    for lib in (torch, hookgrad):
        m = lib.nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)
        t = to_lib(lib, x, True)
        out = m(t)
        back = err(lambda: out.backward(to_lib(lib, g)))
        res.append((out.detach().numpy(), back, None if back else t.grad.numpy(),
                    out.grad_fn.name(), repr(m), list(m.state_dict())))
    for a, b in zip(*res):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
        else:
            assert b == a


def test_crossmap_lrn2d_checks(torch):
    for lib in (torch, hookgrad):
        assert lib.nn.modules.normalization.CrossMapLRN2d is lib.nn.CrossMapLRN2d
    assert err(lambda: hookgrad.nn.CrossMapLRN2d(3)(hookgrad.ones(2, 3, 4))) == err(
        lambda: torch.nn.CrossMapLRN2d(3)(torch.ones(2, 3, 4)))


def test_convert_weight_memory_format(torch):
    for lib in (torch, hookgrad):
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.Sequential(
            lib.nn.ConvTranspose2d(4, 2, 2)), lib.nn.Linear(3, 3), lib.nn.Conv3d(1, 2, 2))
        ref = [p.detach().clone() for p in net.parameters()]
        out = lib.nn.utils.convert_conv2d_weight_memory_format(net, lib.channels_last)
        assert out is net
        assert net[0].weight.is_contiguous(memory_format=lib.channels_last)
        assert net[1][0].weight.is_contiguous(memory_format=lib.channels_last)
        assert net[3].weight.is_contiguous()
        lib.nn.utils.memory_format.convert_conv3d_weight_memory_format(net, lib.channels_last_3d)
        assert net[3].weight.is_contiguous(memory_format=lib.channels_last_3d)
        assert isinstance(net[0].weight, lib.nn.Parameter)
        assert all(lib.equal(a, b) for a, b in zip(ref, net.parameters()))
