"""Gradients at non-smooth and special points vs the oracle: kinks, ties, bounds, zeros, nan and
inf, first and second order."""

from __future__ import annotations

import pytest

import hookgrad
from tests.ops._pointwise_helpers import check

pytestmark = pytest.mark.oracle

_NAN = float("nan")
_INF = float("inf")
KINKS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0]


def _x(lib, values=KINKS):
    return lib.tensor(values, requires_grad=True)


def _F(lib):
    return lib.nn.functional


UNARY = {
    "relu": lambda lib, x: lib.relu(x),
    "abs": lambda lib, x: x.abs(),
    "sign": lambda lib, x: x.sign(),
    "leaky_relu": lambda lib, x: _F(lib).leaky_relu(x, 0.1),
    "elu": lambda lib, x: _F(lib).elu(x, 0.7),
    "celu": lambda lib, x: _F(lib).celu(x, 0.7),
    "selu": lambda lib, x: _F(lib).selu(x),
    "hardtanh": lambda lib, x: _F(lib).hardtanh(x),
    "hardtanh_bounds": lambda lib, x: _F(lib).hardtanh(x, -0.5, 0.5),
    "relu6": lambda lib, x: _F(lib).relu6(x),
    "hardsigmoid": lambda lib, x: _F(lib).hardsigmoid(x),
    "hardswish": lambda lib, x: _F(lib).hardswish(x),
    "threshold": lambda lib, x: _F(lib).threshold(x, 0.5, -2.0),
    "hardshrink": lambda lib, x: _F(lib).hardshrink(x, 0.5),
    "softshrink": lambda lib, x: _F(lib).softshrink(x, 0.5),
    "softplus_threshold": lambda lib, x: _F(lib).softplus(x, beta=2.0, threshold=1.0),
    "clamp": lambda lib, x: x.clamp(-0.5, 1.0),
    "clamp_min": lambda lib, x: x.clamp(min=0.0),
    "clamp_max": lambda lib, x: x.clamp(max=0.5),
    "clamp_min_fn": lambda lib, x: lib.clamp_min(x, 0.5),
    "clamp_max_fn": lambda lib, x: lib.clamp_max(x, -0.5),
    "clamp_inverted": lambda lib, x: x.clamp(1.0, -1.0),
    "sqrt_at_zero": lambda lib, x: x.abs().sqrt(),
    "pow_2": lambda lib, x: x ** 2,
    "pow_half": lambda lib, x: x.abs() ** 0.5,
    "pow_zero": lambda lib, x: x ** 0,
    "pow_negative": lambda lib, x: x ** -1,
    "rpow_zero_base": lambda lib, x: 0 ** x,
    "rpow_negative_base": lambda lib, x: (-2.0) ** x,
    "floor": lambda lib, x: x.floor(),
    "round": lambda lib, x: x.round(),
    "frac": lambda lib, x: x.frac(),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "log": lambda lib, x: x.log(),
    "logit": lambda lib, x: lib.logit(x * 0.25),
    "logit_eps": lambda lib, x: lib.logit(x * 0.25, eps=0.2),
    "atan2_origin": lambda lib, x: lib.atan2(x, x * 0),
    "div_by_zero": lambda lib, x: x / x.detach().clamp(0, 0),
    "where_inf_branch": lambda lib, x: lib.where(x > 0, x.log(), x),
    "masked_fill": lambda lib, x: x.masked_fill(x == 0, 1.0),
    "mish": lambda lib, x: _F(lib).mish(x),
    "gelu": lambda lib, x: _F(lib).gelu(x),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "logsigmoid": lambda lib, x: _F(lib).logsigmoid(x),
}

SPECIAL = [0.0, _NAN, _INF, -_INF, 1e30, -1e30]


def _first(op, values):
    def run(lib):
        x = _x(lib, values)
        y = op(lib, x)
        (g,) = lib.autograd.grad(y.sum(), x, allow_unused=True)
        return y, g

    return run


def _second(op, values):
    def run(lib):
        x = _x(lib, values)
        y = op(lib, x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        if not g.requires_grad:
            return g, None
        (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True)
        return g, gg

    return run


@pytest.mark.parametrize("name", sorted(UNARY))
def test_kink_gradients_match_torch(torch, name):
    check(_first(UNARY[name], KINKS), hookgrad, torch)


# PyTorch has no double backward for hardsigmoid (hookgrad differentiates it); logsigmoid's
# gradient is a composite here (``MulBackward0``, not ``LogSigmoidBackwardBackward0``).
_SECOND = sorted(n for n in UNARY if n not in ("hardsigmoid", "logsigmoid"))


@pytest.mark.parametrize("name", _SECOND)
def test_kink_second_derivatives_match_torch(torch, name):
    check(_second(UNARY[name], KINKS), hookgrad, torch)


# gelu is left out: PyTorch's vectorized erf gives gelu(inf) = nan, NumPy/SciPy give inf.
_SPECIAL_OPS = ["relu", "abs", "sign", "leaky_relu", "elu", "hardtanh", "clamp", "sigmoid",
                "logsigmoid",
                "softplus_threshold", "mish", "hardswish", "threshold", "pow_2", "floor",
                "frac"]


@pytest.mark.parametrize("name", _SPECIAL_OPS)
def test_nan_and_inf_match_torch(torch, name):
    check(_first(UNARY[name], SPECIAL), hookgrad, torch)


BINARY = {
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "clamp_tensor": lambda lib, a, b: lib.clamp(a, b, b + 1),
    "clamp_tensor_inverted": lambda lib, a, b: lib.clamp(a, b + 1, b),
    "clamp_min_tensor": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max_tensor": lambda lib, a, b: lib.clamp_max(a, b),
    "pow_tensor": lambda lib, a, b: a.abs() ** b,
    "fmod": lambda lib, a, b: lib.fmod(a, b.abs() + 0.5),
    "remainder": lambda lib, a, b: lib.remainder(a, b.abs() + 0.5),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "lerp": lambda lib, a, b: lib.lerp(a, b, b.abs() / 2),
}

# Ties (equal entries), a nan on either side, zeros for pow's base and exponent.
_A = [1.0, 2.0, _NAN, 0.5, 0.0, -1.0, 0.0]
_B = [1.0, _NAN, 3.0, -0.5, 0.0, -1.0, 2.0]


def _pair(op):
    def run(lib):
        a, b = _x(lib, _A), _x(lib, _B)
        y = op(lib, a, b)
        return y, lib.autograd.grad(y.sum(), (a, b), allow_unused=True)

    return run


@pytest.mark.parametrize("name", sorted(BINARY))
def test_ties_and_nan_gradients_match_torch(torch, name):
    check(_pair(BINARY[name]), hookgrad, torch)


def test_maximum_ties_split_gradient_in_half():
    a = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    b = hookgrad.tensor([1.0, 0.0], requires_grad=True)
    hookgrad.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0] and b.grad.tolist() == [0.5, 0.0]


def test_relu_gradient_requires_grad_under_create_graph(torch):
    """PyTorch's relu gradient stays connected to the result (its derivative there is 0)."""
    def run(lib):
        x = _x(lib)
        (g,) = lib.autograd.grad(lib.relu(x).sum(), x, create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)

    check(run, hookgrad, torch)
