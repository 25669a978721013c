"""In-place pointwise ops vs the oracle: values, grad_fn names, gradients, version counter, the
leaf error, and what saved-tensor hooks see (pack order of every pointwise node)."""

from __future__ import annotations

import pytest

import hookgrad
from tests.ops._pointwise_helpers import assert_same, check

pytestmark = pytest.mark.oracle

_X = [0.5, -1.5, 2.0, 0.25]


def _leaf(lib):
    return lib.tensor(_X, requires_grad=True)


INPLACE = {
    "relu_": lambda t, lib: t.relu_(),
    "torch.relu_": lambda t, lib: lib.relu_(t),
    "F.relu_inplace": lambda t, lib: lib.nn.functional.relu(t, inplace=True),
    "sigmoid_": lambda t, lib: t.sigmoid_(),
    "tanh_": lambda t, lib: t.tanh_(),
    "exp_": lambda t, lib: t.exp_(),
    "log_": lambda t, lib: t.abs().log_(),
    "sqrt_": lambda t, lib: t.abs().sqrt_(),
    "abs_": lambda t, lib: t.abs_(),
    "neg_": lambda t, lib: t.neg_(),
    "pow_scalar_": lambda t, lib: t.pow_(2),
    "pow_tensor_": lambda t, lib: t.abs().pow_(lib.tensor([1.0, 2.0, 0.5, 3.0])),
    "square_": lambda t, lib: t.square_(),
    "clamp_": lambda t, lib: t.clamp_(-1.0, 1.0),
    "clamp_min_": lambda t, lib: t.clamp_min_(0.3),
    "clamp_max_": lambda t, lib: t.clamp_max_(0.3),
    "clamp_tensor_": lambda t, lib: t.clamp_(min=lib.zeros(4)),
    "masked_fill_": lambda t, lib: t.masked_fill_(lib.tensor([True, False, True, False]), 1.0),
    "masked_fill_tensor_": lambda t, lib: t.masked_fill_(
        lib.tensor([True, False, True, False]), lib.tensor(3.0)),
    "fill_": lambda t, lib: t.fill_(2.0),
    "fill_tensor_": lambda t, lib: t.fill_(lib.tensor(2.0)),
    "zero_": lambda t, lib: t.zero_(),
    "addcmul_": lambda t, lib: t.addcmul_(lib.ones(4), lib.full((4,), 2.0), value=0.5),
    "addcdiv_": lambda t, lib: t.addcdiv_(lib.ones(4), lib.full((4,), 2.0), value=0.5),
    "lerp_": lambda t, lib: t.lerp_(lib.ones(4), 0.3),
    "lerp_tensor_": lambda t, lib: t.lerp_(lib.ones(4), lib.full((4,), 0.7)),
    "mul_": lambda t, lib: t.mul_(lib.full((4,), 3.0)),
    "mul_scalar_": lambda t, lib: t.mul_(3),
    "div_": lambda t, lib: t.div_(lib.full((4,), 3.0)),
    "div_floor_": lambda t, lib: t.div_(0.3, rounding_mode="floor"),
    "add_": lambda t, lib: t.add_(lib.ones(4), alpha=2),
    "sub_": lambda t, lib: t.sub_(1.5),
    "iadd": lambda t, lib: t.__iadd__(1.0),
    "imul": lambda t, lib: t.__imul__(2.0),
    "ipow": lambda t, lib: t.__ipow__(2),
    "leaky_relu_": lambda t, lib: lib.nn.functional.leaky_relu_(t, 0.2),
    "elu_": lambda t, lib: lib.nn.functional.elu(t, alpha=0.5, inplace=True),
    "selu_": lambda t, lib: lib.nn.functional.selu(t, inplace=True),
    "celu_": lambda t, lib: lib.nn.functional.celu(t, inplace=True),
    "hardtanh_": lambda t, lib: lib.nn.functional.hardtanh_(t, -1.0, 1.0),
    "relu6_": lambda t, lib: lib.nn.functional.relu6(t, inplace=True),
    "threshold_": lambda t, lib: lib.nn.functional.threshold(t, 0.3, 5.0, inplace=True),
    "silu_": lambda t, lib: lib.nn.functional.silu(t, inplace=True),
    "mish_": lambda t, lib: lib.nn.functional.mish(t, inplace=True),
    "hardsigmoid_": lambda t, lib: lib.nn.functional.hardsigmoid(t, inplace=True),
    "hardswish_": lambda t, lib: lib.nn.functional.hardswish(t, inplace=True),
    "floor_": lambda t, lib: t.floor_(),
    "round_": lambda t, lib: t.round_(),
    "sign_": lambda t, lib: t.sign_(),
    "remainder_": lambda t, lib: t.remainder_(0.3),
    "fmod_tensor_": lambda t, lib: t.fmod_(lib.full((4,), 0.3)),
    "logit_": lambda t, lib: t.sigmoid().logit_(),
    "asinh_": lambda t, lib: t.asinh_(),
}


def _scenario(op):
    """Apply `op` to a non-leaf; report value, node, version bump and input gradient."""
    def run(lib):
        x = _leaf(lib)
        t = x * 1
        before = t._version
        out = op(t, lib)
        assert out is t
        bumped = t._version - before
        try:
            (g,) = lib.autograd.grad(t.sum(), x)
        except Exception as e:  # noqa: BLE001 - compared by type
            g = ("raises", type(e).__name__)
        return t, bumped, g

    return run


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_torch(torch, name):
    check(_scenario(INPLACE[name]), hookgrad, torch)


@pytest.mark.parametrize("name", ["relu_", "sigmoid_", "clamp_", "mul_", "pow_scalar_", "fill_",
                                  "zero_", "masked_fill_", "addcmul_", "lerp_", "exp_"])
def test_inplace_on_leaf_requiring_grad_raises(torch, name):
    def run(lib):
        return INPLACE[name](_leaf(lib), lib)

    check(run, hookgrad, torch)


@pytest.mark.parametrize("name", ["relu_", "sigmoid_", "clamp_", "mul_", "fill_", "zero_"])
def test_inplace_on_leaf_under_no_grad(torch, name):
    def run(lib):
        x = _leaf(lib)
        with lib.no_grad():
            INPLACE[name](x, lib)
        return x, x._version

    check(run, hookgrad, torch)


def test_inplace_leaky_relu_negative_slope_backward_raises(torch):
    def run(lib):
        x = _leaf(lib)
        y = lib.nn.functional.leaky_relu(x * 1, -0.1, inplace=True)
        return lib.autograd.grad(y.sum(), x)

    check(run, hookgrad, torch)


def test_inplace_then_saved_value_error(torch):
    """An in-place op on a value another node saved makes that backward fail (version check)."""
    def run(lib):
        x = _leaf(lib)
        t = x * 1
        y = t.sigmoid()  # saves its result y
        y.mul_(2)
        return lib.autograd.grad(y.sum(), x)

    check(run, hookgrad, torch)


# ---------------------------------------------------------------- saved-tensor hooks
PACKS = {
    "mul": lambda a, b, lib: a * b,
    "div": lambda a, b, lib: a / b,
    "pow_scalar": lambda a, b, lib: a ** 2,
    "pow_tensor": lambda a, b, lib: a.abs() ** b,
    "rpow": lambda a, b, lib: 2 ** a,
    "exp": lambda a, b, lib: a.exp(),
    "log": lambda a, b, lib: a.abs().log(),
    "sqrt": lambda a, b, lib: a.abs().sqrt(),
    "relu": lambda a, b, lib: a.relu(),
    "sigmoid": lambda a, b, lib: a.sigmoid(),
    "tanh": lambda a, b, lib: a.tanh(),
    "gelu": lambda a, b, lib: lib.nn.functional.gelu(a),
    "atan2": lambda a, b, lib: lib.atan2(a, b),
    "maximum": lambda a, b, lib: lib.maximum(a, b),
    "where": lambda a, b, lib: lib.where(a > 0, a, b),
    "clamp_tensor": lambda a, b, lib: lib.clamp(a, b, b + 1),
    "lerp_tensor": lambda a, b, lib: lib.lerp(a, b, a.sigmoid()),
    "addcmul": lambda a, b, lib: lib.addcmul(a, a, b),
    "addcdiv": lambda a, b, lib: lib.addcdiv(a, a, b),
    "fmod_tensor": lambda a, b, lib: lib.fmod(a, b),
    "div_floor": lambda a, b, lib: lib.div(a, b, rounding_mode="floor"),
    "masked_fill_tensor": lambda a, b, lib: a.masked_fill(a > 0, b.sum()),
    "relu_inplace": lambda a, b, lib: (a * 1).relu_(),
    "mul_inplace": lambda a, b, lib: (a * 1).mul_(b),
    "pow_tensor_inplace": lambda a, b, lib: (a.abs() + 1).pow_(b),
    "leaky_relu_inplace": lambda a, b, lib: lib.nn.functional.leaky_relu(a * 1, inplace=True),
}


def _pack_log(op, constant_b=False):
    """Which tensors the pack hook sees, named by identity with the scenario's tensors."""
    def run(lib):
        a = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        b = lib.tensor([1.5, 0.5, -1.0], requires_grad=not constant_b)
        seen = []

        def pack(t):
            seen.append(t)
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = op(a, b, lib)
        names = []
        for t in seen:
            if t is a or t.data_ptr() == a.data_ptr():
                names.append("a")
            elif t is b or t.data_ptr() == b.data_ptr():
                names.append("b")
            elif t.data_ptr() == out.data_ptr():
                names.append("out")
            else:
                names.append(("other", tuple(t.shape)))
        return out.grad_fn.name(), names

    return run


@pytest.mark.parametrize("name", sorted(PACKS))
def test_saved_tensor_pack_order_matches_torch(torch, name):
    check(_pack_log(PACKS[name]), hookgrad, torch)


@pytest.mark.parametrize("name", ["mul", "pow_tensor", "atan2", "lerp_tensor", "addcdiv",
                                  "clamp_tensor", "maximum", "div_floor"])
def test_saved_tensor_pack_with_constant_operand_matches_torch(torch, name):
    check(_pack_log(PACKS[name], constant_b=True), hookgrad, torch)


def test_saved_attributes_match_torch(torch):
    def run(lib):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        F = lib.nn.functional
        return [
            (x ** 2).grad_fn._saved_exponent,
            (2 ** x).grad_fn._saved_self,
            x.clamp(0, 1).grad_fn._saved_min,
            x.clamp(0.5).grad_fn._saved_max,
            F.leaky_relu(x).grad_fn._saved_negative_slope,
            F.gelu(x, approximate="tanh").grad_fn._saved_approximate,
            lib.logit(x).grad_fn._saved_eps,
            F.softplus(x, beta=2).grad_fn._saved_beta,
            F.hardtanh(x, -0.5, 0.5).grad_fn._saved_max_val,
            lib.lerp(x, x, 0.25).grad_fn._saved_weight,
            lib.addcmul(x, x, x, value=3).grad_fn._saved_value,
            lib.div(x, 2.0, rounding_mode="floor").grad_fn._saved_rounding_mode,
        ]

    assert_same(run(hookgrad), run(torch))
