"""Pointwise ops vs the oracle: type promotion, Python scalars on either side, dtype errors."""

from __future__ import annotations

import pytest

import hookgrad
from tests.ops._pointwise_helpers import check

pytestmark = pytest.mark.oracle


_NAN, _INF = float("nan"), float("inf")


def _f32(lib, values=(0.5, -1.5, 2.0)):
    return lib.tensor(list(values), requires_grad=True)


def _i64(lib):
    return lib.tensor([1, -2, 3])


def _b(lib):
    return lib.tensor([True, False, True])


PROMOTION = {
    "int_plus_float_scalar": lambda lib: _i64(lib) + 1.5,
    "int_div_int": lambda lib: _i64(lib) / lib.tensor([2, 4, 8]),
    "int_div_scalar": lambda lib: _i64(lib) / 2,
    "int_times_bool": lambda lib: _i64(lib) * _b(lib),
    "bool_plus_bool": lambda lib: _b(lib) + _b(lib),
    "f32_plus_f64_0d": lambda lib: _f32(lib) + lib.tensor(2.0, dtype=lib.float64),
    "f32_plus_f64_1d": lambda lib: _f32(lib) + lib.ones(3, dtype=lib.float64),
    "f64_0d_plus_int_1d": lambda lib: lib.tensor(2.5, dtype=lib.float64) + _i64(lib),
    "int_pow_float": lambda lib: _i64(lib) ** 0.5,
    "int_pow_int": lambda lib: _i64(lib) ** 2,
    "int_pow_int_tensor": lambda lib: _i64(lib) ** lib.tensor([2, -1, 0]),
    "int_base_int_tensor": lambda lib: 2 ** _i64(lib),
    "float_base_int_tensor": lambda lib: 2.5 ** _i64(lib),
    "float_pow_int_tensor": lambda lib: _f32(lib) ** lib.tensor([2, 3, 1]),
    "sqrt_int": lambda lib: lib.sqrt(_i64(lib)),
    "sigmoid_int": lambda lib: lib.sigmoid(_i64(lib)),
    "exp_bool": lambda lib: lib.exp(_b(lib)),
    "abs_int": lambda lib: lib.abs(_i64(lib)),
    "sign_bool": lambda lib: lib.sign(_b(lib)),
    "floor_int": lambda lib: lib.floor(_i64(lib)),
    "square_bool": lambda lib: lib.square(_b(lib)),
    "relu_int": lambda lib: lib.relu(_i64(lib)),
    "hardtanh_int": lambda lib: lib.nn.functional.hardtanh(_i64(lib)),
    "eq_int_float": lambda lib: _i64(lib) == 1.0,
    "lt_int_float_tensor": lambda lib: _i64(lib) < _f32(lib),
    "eq_none": lambda lib: _f32(lib) == None,  # noqa: E711 - torch returns False
    "ne_string": lambda lib: _f32(lib) != "a",
    "maximum_int_float": lambda lib: lib.maximum(_i64(lib), _f32(lib)),
    "clamp_int_float": lambda lib: lib.clamp(_i64(lib), 0.5),
    "clamp_int_int": lambda lib: lib.clamp(_i64(lib), 0),
    "clamp_f32_f64_tensor": lambda lib: lib.clamp(_f32(lib), lib.zeros(3, dtype=lib.float64)),
    "where_scalars_float": lambda lib: lib.where(_i64(lib) > 0, 1.0, 0.0),
    "where_scalars_int": lambda lib: lib.where(_i64(lib) > 0, 1, 0),
    "where_int_float": lambda lib: lib.where(_i64(lib) > 0, _i64(lib), 0.5),
    "where_f32_f64": lambda lib: lib.where(_b(lib), _f32(lib), lib.zeros(3, dtype=lib.float64)),
    "masked_fill_int_float": lambda lib: _i64(lib).masked_fill(_b(lib), 2.5),
    "masked_fill_f64_value": lambda lib: _f32(lib).masked_fill(
        _b(lib), lib.tensor(2.0, dtype=lib.float64)),
    "atan2_int": lambda lib: lib.atan2(_i64(lib), _i64(lib)),
    "addcmul_mixed": lambda lib: lib.addcmul(_f32(lib), _i64(lib), _i64(lib), value=0.5),
    "floor_divide_int": lambda lib: lib.floor_divide(_i64(lib), 2),
    "floor_divide_negative": lambda lib: lib.tensor([-7, 7, -7]) // lib.tensor([2, -2, -2]),
    "remainder_int": lambda lib: lib.tensor([-7, 7, -7]) % lib.tensor([2, -2, 3]),
    "fmod_int": lambda lib: lib.fmod(lib.tensor([-7, 7, -7]), lib.tensor([2, -2, 3])),
    "div_trunc_int": lambda lib: lib.div(lib.tensor([-7, 7, -7]), 2, rounding_mode="trunc"),
    "div_floor_int_float": lambda lib: lib.div(_i64(lib), 2.0, rounding_mode="floor"),
    "remainder_float": lambda lib: lib.tensor([-7.5, 7.5, -0.25]) % 2.0,
    "floor_divide_float_zero": lambda lib: lib.floor_divide(
        lib.tensor([5.0, -5.0, 0.0]), lib.tensor([0.0, 0.0, 0.0])),
    "bitwise_and_int_bool": lambda lib: _i64(lib) & _b(lib),
    "bitwise_or_scalar": lambda lib: _b(lib) | True,
    "rand_scalar": lambda lib: 5 & _i64(lib),
    "invert_int": lambda lib: ~_i64(lib),
    "invert_bool": lambda lib: ~_b(lib),
    "logical_and_float_int": lambda lib: lib.logical_and(_f32(lib), _i64(lib)),
    "isnan_int": lambda lib: lib.isnan(_i64(lib)),
    "isinf_special": lambda lib: lib.isinf(lib.tensor([1.0, float("inf"), float("nan")])),
    "sign_nan": lambda lib: lib.sign(lib.tensor([float("nan"), -0.0, -2.0])),
    "round_half_even": lambda lib: lib.round(lib.tensor([0.5, 1.5, 2.5, -0.5, -1.5])),
    "round_decimals": lambda lib: lib.round(lib.tensor([1.2345, -2.675, 0.125]), decimals=2),
    "isclose_special": lambda lib: lib.isclose(
        lib.tensor([1.0, _NAN, _INF, 1.0]), lib.tensor([1.0 + 1e-6, _NAN, _INF, 1.1]),
        equal_nan=True),
    "allclose": lambda lib: [lib.allclose(_f32(lib), _f32(lib) + 1e-7),
                             lib.allclose(_f32(lib), _f32(lib) + 1e-3)],
    "equal": lambda lib: [lib.equal(_f32(lib), _f32(lib)), lib.equal(_f32(lib), lib.ones(2)),
                          lib.equal(_i64(lib), lib.tensor([1.0, -2.0, 3.0]))],
    "nan_to_num": lambda lib: lib.nan_to_num(lib.tensor([1.0, _NAN, _INF, -_INF]), posinf=9.0),
    "round_negative_decimals": lambda lib: lib.round(lib.tensor([1234.5, -2675.0]), decimals=-2),
}


@pytest.mark.parametrize("name", sorted(PROMOTION))
def test_promotion_matches_torch(torch, name):
    check(PROMOTION[name], hookgrad, torch)


SCALARS = {
    "radd": lambda lib: 2 + _f32(lib),
    "rsub": lambda lib: 2 - _f32(lib),
    "rsub_int_tensor": lambda lib: 2.5 - _i64(lib),
    "rmul": lambda lib: 2 * _f32(lib),
    "rdiv": lambda lib: 2 / _f32(lib),
    "rdiv_int": lambda lib: 2 / _i64(lib),
    "rpow": lambda lib: 2 ** _f32(lib),
    "rpow_zero_base": lambda lib: 0 ** _f32(lib),
    "rpow_one_base": lambda lib: 1 ** _f32(lib),
    "rfloordiv": lambda lib: 2.0 // _f32(lib),
    "rmod": lambda lib: 2.0 % _f32(lib),
    "pow_zero": lambda lib: _f32(lib) ** 0,
    "pow_one": lambda lib: _f32(lib) ** 1,
    "pow_bool": lambda lib: _f32(lib) ** True,
    "sub_alpha": lambda lib: lib.sub(_f32(lib), _f32(lib), alpha=2),
    "add_alpha_scalar": lambda lib: lib.add(_f32(lib), 3, alpha=0.5),
    "rsub_alpha": lambda lib: lib.rsub(_f32(lib), 2.0, alpha=3),
    "where_scalar_input": lambda lib: lib.where(_f32(lib) > 0, 2.0, _f32(lib)),
    "clamp_scalar_and_0d_tensor": lambda lib: lib.clamp(_f32(lib), 0.1, lib.tensor(0.5)),
    "lerp_scalar_weight": lambda lib: lib.lerp(_f32(lib), lib.ones(3), 0.25),
    "mod_scalar": lambda lib: _f32(lib) % 0.3,
    "floordiv_scalar": lambda lib: _f32(lib) // 0.3,
    "div_floor_scalar": lambda lib: lib.div(_f32(lib), 0.3, rounding_mode="floor"),
    "div_trunc_tensor": lambda lib: lib.div(_f32(lib), _f32(lib, (0.3, 0.4, -0.7)),
                                            rounding_mode="trunc"),
}


def _leaves(out):
    seen, stack, found = set(), [out.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return found


@pytest.mark.parametrize("name", sorted(SCALARS))
def test_scalar_operands_match_torch(torch, name):
    check(SCALARS[name], hookgrad, torch)


@pytest.mark.parametrize("name", sorted(n for n in SCALARS if "floordiv" not in n
                                        and "rmod" not in n))
def test_scalar_operand_gradients_match_torch(torch, name):
    def grads(lib):
        out = SCALARS[name](lib)
        if not out.requires_grad:
            return out
        leaves = _leaves(out)
        return lib.autograd.grad(out.sum(), leaves, allow_unused=True)

    check(grads, hookgrad, torch)


ERRORS = {
    "neg_bool": lambda lib: -_b(lib),
    "sub_bools": lambda lib: _b(lib) - _b(lib),
    "abs_bool": lambda lib: lib.abs(_b(lib)),
    "relu_bool": lambda lib: lib.relu(_b(lib)),
    "gelu_int": lambda lib: lib.nn.functional.gelu(_i64(lib)),
    "leaky_relu_int": lambda lib: lib.nn.functional.leaky_relu(_i64(lib)),
    "softplus_int": lambda lib: lib.nn.functional.softplus(_i64(lib)),
    "elu_int": lambda lib: lib.nn.functional.elu(_i64(lib)),
    "silu_bool": lambda lib: lib.nn.functional.silu(_b(lib)),
    "frac_int": lambda lib: lib.frac(_i64(lib)),
    "floor_bool": lambda lib: lib.floor(_b(lib)),
    "pow_int_negative": lambda lib: _i64(lib) ** -1,
    "int_floor_divide_zero": lambda lib: lib.floor_divide(_i64(lib), 0),
    "int_remainder_zero": lambda lib: _i64(lib) % 0,
    "int_fmod_zero": lambda lib: lib.fmod(_i64(lib), 0),
    "bool_floor_divide": lambda lib: _b(lib) // _b(lib),
    "bitwise_and_float": lambda lib: _f32(lib) & _f32(lib),
    "invert_float": lambda lib: ~_f32(lib),
    "div_bad_mode": lambda lib: lib.div(_f32(lib), 2.0, rounding_mode="foo"),
    "clamp_no_bounds": lambda lib: lib.clamp(_f32(lib)),
    "maximum_scalar": lambda lib: lib.maximum(_f32(lib), 2.0),
    "where_long_condition": lambda lib: lib.where(_i64(lib), _f32(lib), _f32(lib)),
    "masked_fill_uint8_mask": lambda lib: _f32(lib).masked_fill(
        lib.ones(3, dtype=lib.uint8), 1.0),
    "masked_fill_1d_value": lambda lib: _f32(lib).masked_fill(_b(lib), lib.ones(1)),
    "lerp_int": lambda lib: lib.lerp(_i64(lib), _i64(lib), 0.5),
    "lerp_dtype_mismatch": lambda lib: lib.lerp(_f32(lib), lib.ones(3, dtype=lib.float64), 0.5),
    "addcdiv_int": lambda lib: lib.addcdiv(_i64(lib), _i64(lib), _i64(lib)),
    "gelu_bad_approximate": lambda lib: lib.nn.functional.gelu(_f32(lib), approximate="foo"),
    "hardtanh_bad_bounds": lambda lib: lib.nn.functional.hardtanh(_f32(lib), 2.0, 1.0),
    "fill_1d_value": lambda lib: _f32(lib).detach().fill_(lib.ones(2)),
    "int_div_inplace": lambda lib: _i64(lib).div_(2),
    "int_sqrt_inplace": lambda lib: _i64(lib).sqrt_(),
    "int_add_float_inplace": lambda lib: _i64(lib).add_(1.5),
    "isclose_mixed_dtype": lambda lib: lib.isclose(_f32(lib), lib.ones(3, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check(ERRORS[name], hookgrad, torch)


def test_nn_functional_names_exist():
    from hookgrad._functional import pointwise

    for name in pointwise.NN_FUNCTIONAL:
        assert callable(getattr(pointwise, name)), name
