"""nn.init: gains, fans, bounds and distributions (random streams differ from PyTorch's)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from hookgrad.nn import init

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("selu",)])
def test_calculate_gain_matches_torch(torch, args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_calculate_gain_errors(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.nn.init.calculate_gain("foo")
        with pytest.raises(ValueError, match="negative_slope True not a valid number"):
            lib.nn.init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(3, 4), (5, 3, 2), (6, 4, 3, 3)])
def test_fan_in_and_fan_out_matches_torch(torch, shape):
    assert init._calculate_fan_in_and_fan_out(hookgrad.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_needs_two_dims():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(hookgrad.empty(3))


def _stats(t):
    a = t.detach().numpy()
    return a.min(), a.max(), a.mean(), a.std()


def test_fills_and_simple_distributions():
    hookgrad.manual_seed(0)
    t = hookgrad.empty(300, 200, requires_grad=True)
    lo, hi, mean, std = _stats(init.uniform_(t, -2.0, 3.0))
    assert -2 <= lo and hi <= 3 and abs(mean - 0.5) < 0.05
    assert t.is_leaf and t.requires_grad  # filled under no_grad
    _, _, mean, std = _stats(init.normal_(t, 1.0, 2.0))
    assert abs(mean - 1.0) < 0.03 and abs(std - 2.0) < 0.03
    assert init.constant_(t, 0.25).detach().numpy().tolist()[0][:2] == [0.25, 0.25]
    assert init.zeros_(t).abs().sum().item() == 0
    assert init.ones_(t).sum().item() == 300 * 200
    np.testing.assert_array_equal(init.eye_(hookgrad.empty(2, 3)).numpy(), np.eye(2, 3))
    lo, hi, mean, std = _stats(init.trunc_normal_(hookgrad.empty(20000), 0.0, 1.0, -1.0, 2.0))
    assert -1 <= lo and hi <= 2 and abs(mean - 0.2297) < 0.03


@pytest.mark.parametrize("fn,kwargs,expected_std", [
    ("xavier_uniform_", {}, math.sqrt(2.0 / (400 + 300))),
    ("xavier_normal_", {"gain": 2.0}, 2.0 * math.sqrt(2.0 / (400 + 300))),
    ("kaiming_uniform_", {"a": math.sqrt(5)}, 1 / math.sqrt(3 * 400)),
    ("kaiming_normal_", {"nonlinearity": "relu"}, math.sqrt(2.0 / 400)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2.0 / 300)),
])
def test_scaled_initialisers(fn, kwargs, expected_std):
    hookgrad.manual_seed(1)
    t = getattr(init, fn)(hookgrad.empty(300, 400), **kwargs)
    lo, hi, mean, std = _stats(t)
    assert abs(std - expected_std) < 0.02 * expected_std
    if "uniform" in fn:
        bound = math.sqrt(3) * expected_std
        assert -bound <= lo and hi <= bound


def test_kaiming_errors_and_zero_element_warning(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(2, 2), mode="fan_avg")
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_normal_(lib.empty(0, 3))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3)])
def test_orthogonal(shape):
    t = init.orthogonal_(hookgrad.empty(*shape), gain=2.0)
    m = t.detach().numpy().reshape(shape[0], -1)
    small = min(m.shape)
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-4)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(hookgrad.empty(3))
