"""OpSpecs: activations (``nn.functional`` signatures) and comparison/selection ops.

Activation inputs straddle each kink but stay away from it (the chance that a uniform draw lands
within gradcheck's step of a kink is negligible); the exact kink values are compared with
PyTorch in ``tests/ops/test_pointwise_nonsmooth.py``. Comparisons, logical and bitwise ops
return bool or integer tensors: they only get forward checks.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec._pointwise_common import (
    away,
    binary,
    const_arg,
    fixed,
    mask,
    unary,
    x,
)


def _F(name: str, **fixed_kw: Any) -> Any:
    return lambda lib, *args, **kw: getattr(lib.nn.functional, name)(*args, **fixed_kw, **kw)


def _F_inplace(name: str, **fixed_kw: Any) -> Any:
    """``F.<name>(t.clone(), inplace=True)``: the in-place node on a non-leaf."""
    return lambda lib, t, **kw: getattr(lib.nn.functional, name)(
        t.clone(), inplace=True, **fixed_kw, **kw)


def _fn(name: str) -> Any:
    return lambda lib, *args, **kw: getattr(lib, name)(*args, **kw)


def _inplace(name: str) -> Any:
    return lambda lib, t, *args, **kw: getattr(t.clone(), name + "_")(*args, **kw)


_WIDE = unary(-4.0, 4.0)
_NO_GRAD = dict(gradcheck=False, gradgradcheck=False, forward_ad=False)

ACTIVATIONS = [
    OpSpec("relu", _fn("relu"), unary(make=away), prims=("relu", "threshold_backward")),
    OpSpec("relu_", _inplace("relu"), unary(make=away, empty=False), prims=("relu",)),
    OpSpec("F.relu_inplace", _F_inplace("relu"), unary(make=away, empty=False),
           prims=("relu",)),
    OpSpec("F.leaky_relu", _F("leaky_relu"),
           unary(make=away) + unary(make=away, kwargs={"negative_slope": 0.2})[:1],
           prims=("leaky_relu", "leaky_relu_backward")),
    OpSpec("F.rrelu_eval", _F("rrelu", training=False), unary(make=away),
           prims=("rrelu_with_noise_eval", "leaky_relu_backward")),
    OpSpec("F.leaky_relu_inplace", _F_inplace("leaky_relu", negative_slope=0.1),
           unary(make=away, empty=False), prims=("leaky_relu_",)),
    OpSpec("F.threshold", _F("threshold", threshold=0.5, value=-1.0),
           unary(make=lambda s: away(s, 0.6, 2.0)), prims=("threshold",)),
    OpSpec("F.threshold_inplace", _F_inplace("threshold", threshold=0.5, value=-1.0),
           unary(make=lambda s: away(s, 0.6, 2.0), empty=False), prims=("threshold_",)),
    OpSpec("F.elu", _F("elu"), unary(make=away) + [
        Sample((Arg((3,), make=away((3,))),), {"alpha": 1.5}, "alpha")],
        prims=("elu", "elu_backward")),
    OpSpec("F.elu_inplace", _F_inplace("elu", alpha=0.7), unary(make=away, empty=False),
           prims=("elu_",)),
    OpSpec("F.selu", _F("selu"), unary(make=away), prims=("elu",)),
    OpSpec("F.selu_inplace", _F_inplace("selu"), unary(make=away, empty=False),
           prims=("elu_",)),
    OpSpec("F.celu", _F("celu"), unary(make=away) + [
        Sample((Arg((3,), make=away((3,))),), {"alpha": 0.5}, "alpha")], prims=("celu",)),
    OpSpec("F.celu_inplace", _F_inplace("celu", alpha=2.0), unary(make=away, empty=False),
           prims=("celu_",)),
    OpSpec("F.gelu", _F("gelu"), _WIDE + unary(-4.0, 4.0, kwargs={"approximate": "tanh"}),
           prims=("gelu",)),
    OpSpec("F.silu", _F("silu"), _WIDE, prims=("silu",)),
    OpSpec("F.silu_inplace", _F_inplace("silu"), unary(empty=False), prims=("silu",)),
    OpSpec("F.mish", _F("mish"), _WIDE, prims=("mish",)),
    OpSpec("F.softplus", _F("softplus"), _WIDE + unary(
        make=lambda s: away(s, 0.6, 2.0), kwargs={"beta": 2.0, "threshold": 1.0}),
        prims=("softplus", "softplus_backward")),
    OpSpec("sigmoid", _fn("sigmoid"), _WIDE, prims=("sigmoid",)),
    OpSpec("sigmoid_", _inplace("sigmoid"), unary(empty=False), prims=("sigmoid",)),
    OpSpec("logit", _fn("logit"), unary(0.1, 0.9) + [
        Sample((x((3, 4), 0.0, 1.0),), {"eps": 0.2}, "eps")], prims=("logit",)),
    OpSpec("F.hardtanh", _F("hardtanh"), unary(make=lambda s: away(s, 0.2, 1.8)) + [
        Sample((Arg((3, 4), make=away((3, 4), 0.2, 1.8)),), {"min_val": -0.5, "max_val": 0.7},
               "bounds")], prims=("hardtanh",)),
    OpSpec("F.hardtanh_inplace", _F_inplace("hardtanh"),
           unary(make=lambda s: away(s, 0.2, 1.8), empty=False), prims=("hardtanh",)),
    OpSpec("F.relu6", _F("relu6"), [Sample((x((3, 4), -3.0, 9.0),), name="2d")],
           prims=("hardtanh",)),
    # PyTorch has no double backward for hardsigmoid (its gradient's node is NotImplemented);
    # hookgrad differentiates it (zero in the input, the mask in the incoming gradient).
    OpSpec("F.hardsigmoid", _F("hardsigmoid"), _WIDE, prims=("hardsigmoid",
                                                            "hardsigmoid_backward")),
    OpSpec("F.hardswish", _F("hardswish"), _WIDE, prims=("hardswish", "hardswish_backward")),
    OpSpec("F.hardshrink", _F("hardshrink"), unary(make=lambda s: away(s, 0.1, 2.0)),
           prims=("hardshrink",)),
    OpSpec("F.softshrink", _F("softshrink"), unary(make=lambda s: away(s, 0.1, 2.0)) + [
        Sample((Arg((3,), make=away((3,), 0.1, 2.0)),), {"lambd": 1.0}, "lambd")],
        prims=("softshrink",)),
    OpSpec("F.softsign", _F("softsign"), unary(make=away), prims=("abs", "add", "div")),
    OpSpec("F.tanhshrink", _F("tanhshrink"), unary(), prims=("tanh", "sub")),
    OpSpec("F.logsigmoid", _F("logsigmoid"), unary(-4.0, 4.0, make=away),
           prims=("log_sigmoid",)),
]


def _cmp(name: str) -> list[OpSpec]:
    samples = binary() + [Sample((x((3, 4)), const_arg(0.5)), name="scalar")]
    return [OpSpec(name, _fn(name), samples, prims=(name,), grad_fn=False, **_NO_GRAD)]


def _ints(shape: tuple[int, ...]) -> Arg:
    return Arg(shape, dtype="int64", low=-8, high=8, requires_grad=False)


_BOOL_PAIR = [Sample((mask((3, 4)), mask((3, 4))), name="bool"),
              Sample((_ints((2, 3)), _ints((3,))), name="int_bcast")]

COMPARISON = [
    *_cmp("eq"), *_cmp("ne"), *_cmp("lt"), *_cmp("le"), *_cmp("gt"), *_cmp("ge"),
    OpSpec("eq_ties", _fn("eq"), [Sample((Arg((4,), make=fixed([1.0, 2.0, 3.0, 4.0])),
                                          Arg((4,), make=fixed([1.0, 0.0, 3.0, 5.0]))))],
           prims=("eq",), grad_fn=False, **_NO_GRAD),
    *[OpSpec(name, _fn(name), binary() + _BOOL_PAIR, prims=(name,), grad_fn=False, **_NO_GRAD)
      for name in ("logical_and", "logical_or", "logical_xor")],
    OpSpec("logical_not", _fn("logical_not"), unary(), prims=("logical_not",), grad_fn=False,
           **_NO_GRAD),
    *[OpSpec(name, _fn(name), [Sample((Arg((5,), make=fixed(
        [0.0, float("nan"), float("inf"), -float("inf"), 1.5])),), name="special")] + unary(),
        prims=(name,), grad_fn=False, **_NO_GRAD) for name in ("isnan", "isinf", "isfinite")],
    *[OpSpec(name, _fn(name), _BOOL_PAIR, prims=(name,), grad_fn=False, **_NO_GRAD)
      for name in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    OpSpec("isclose", _fn("isclose"), [
        Sample((x((3, 4)), x((3, 4))), name="random"),
        Sample((Arg((4,), make=fixed([1.0, float("nan"), float("inf"), 2.0])),
                Arg((4,), make=fixed([1.0 + 1e-9, float("nan"), float("inf"), 2.1]))),
               {"equal_nan": True}, "special")], prims=("isclose",), grad_fn=False, **_NO_GRAD),
    OpSpec("bitwise_not", _fn("bitwise_not"), [Sample((mask((3,)),), name="bool"),
                                               Sample((_ints((3,)),), name="int")],
           prims=("bitwise_not",), grad_fn=False, **_NO_GRAD),
]

_COND = [
    Sample((mask((3, 4)), x((3, 4)), x((3, 4))), name="same"),
    Sample((mask((2, 3)), x((3,)), x((2, 1))), name="bcast"),
    Sample((mask(()), x(()), x(())), name="0d"),
    Sample((mask((0, 3)), x((3,)), x((0, 3))), name="empty"),
]

SELECTION = [
    OpSpec("where", _fn("where"), _COND, prims=("where",)),
    OpSpec("where_scalar_other", lambda lib, c, t: lib.where(c, t, 0.0),
           [Sample((mask((3, 4)), x((3, 4))), name="s")], prims=("where",)),
    OpSpec("where_scalar_input", lambda lib, c, t: lib.where(c, 1.5, t),
           [Sample((mask((2, 3)), x((3,))), name="bcast")], prims=("where",)),
    OpSpec("masked_fill", lambda lib, t, m, v: t.masked_fill(m, v), [
        Sample((x((3, 4)), mask((3, 4)), const_arg(2.5)), name="scalar"),
        Sample((x((3, 4)), mask((4,)), const_arg(-1.0)), name="bcast_mask"),
        Sample((x((3, 4)), mask((3, 4)), x(())), name="tensor_value"),
        Sample((x(()), mask(()), x(())), name="0d")],
        prims=("masked_fill", "masked_fill_tensor")),
    OpSpec("masked_fill_", lambda lib, t, m, v: t.clone().masked_fill_(m, v), [
        Sample((x((3, 4)), mask((3, 4)), const_arg(2.5)), name="scalar"),
        Sample((x((3, 4)), mask((3, 4)), x(())), name="tensor_value")],
        prims=("masked_fill", "masked_fill_tensor")),
    OpSpec("clamp_scalar", _fn("clamp"), [
        Sample((x((3, 4)),), {"min": -0.5, "max": 0.7}, "both"),
        Sample((x((3, 4)),), {"min": -0.5}, "min"), Sample((x((3, 4)),), {"max": 0.5}, "max"),
        Sample((x(()),), {"min": 0.3, "max": 0.9}, "0d"),
        Sample((x((0, 2)),), {"min": 0.0}, "empty")], prims=("clamp",)),
    OpSpec("clamp_tensor", lambda lib, t, lo, hi: lib.clamp(t, lo, hi), [
        Sample((x((3, 4)), x((3, 4), -1.5, 0.0), x((3, 4), 0.0, 1.5)), name="same"),
        Sample((x((2, 3)), x((3,), -1.0, 0.0), x((2, 1), 0.0, 1.0)), name="bcast"),
        Sample((x((4,)), x((4,), 0.5, 1.5), x((4,), -1.5, -0.5)), name="min_gt_max")],
        prims=("clamp_tensor",)),
    OpSpec("clamp_tensor_min", lambda lib, t, lo: lib.clamp(t, min=lo),
           binary(), prims=("clamp_tensor_min",)),
    OpSpec("clamp_tensor_max", lambda lib, t, hi: lib.clamp(t, max=hi),
           binary(), prims=("clamp_tensor_max",)),
    OpSpec("clamp_", _inplace("clamp"), [Sample((x((3, 4)), const_arg(-0.5), const_arg(0.5)),
                                                name="scalar"),
                                         Sample((x((3, 4)), x((4,)), x((3, 1))), name="tensor")],
           prims=("clamp", "clamp_tensor")),
    OpSpec("clamp_min", _fn("clamp_min"), [Sample((x((3, 4)), const_arg(0.2)), name="scalar")]
           + binary(), prims=("clamp_min", "clamp_min_tensor")),
    OpSpec("clamp_max", _fn("clamp_max"), [Sample((x((3, 4)), const_arg(0.2)), name="scalar")]
           + binary(), prims=("clamp_max", "clamp_max_tensor")),
    OpSpec("clamp_min_", _inplace("clamp_min"), [Sample((x((3, 4)), const_arg(0.2)), name="s")],
           prims=("clamp_min",)),
    OpSpec("maximum", _fn("maximum"), binary(), prims=("maximum",)),
    OpSpec("minimum", _fn("minimum"), binary(), prims=("minimum",)),
    OpSpec("fmax", _fn("fmax"), binary(), prims=("fmax",)),
    OpSpec("fmin", _fn("fmin"), binary(), prims=("fmin",)),
    # Ties: PyTorch splits the gradient in half (not differentiable there: no gradcheck).
    *[OpSpec(name + "_ties", _fn(name), [
        Sample((Arg((4,), make=fixed([1.0, 2.0, -3.0, 0.5])),
                Arg((4,), make=fixed([1.0, 0.0, -3.0, 2.0]))), name="ties")],
        prims=(name,), gradcheck=False, gradgradcheck=False) for name in ("maximum", "minimum")],
]



def _grad_of(name: str, **kw: Any) -> Any:
    """The gradient of ``F.<name>`` with ``create_graph=True``: PyTorch's ``*_backward`` op."""
    def fn(lib: Any, t: Any, g: Any) -> Any:
        out = getattr(lib.nn.functional, name)(t, **kw)
        return lib.autograd.grad(out, t, g, create_graph=True)[0]

    return fn


def _grad_samples(make: Any = away) -> list[Sample]:
    return [Sample((Arg((3, 4), make=make((3, 4))), x((3, 4))), name="2d"),
            Sample((Arg((), make=make(())), x(())), name="0d")]


# The backward ops get their own specs: value, node name (``ThresholdBackwardBackward0``...)
# and double backward through the gradient.
BACKWARD = [
    OpSpec("threshold_backward", _grad_of("relu"), _grad_samples(), prims=("threshold_backward",),
           forward_ad=False),
    OpSpec("leaky_relu_backward", _grad_of("leaky_relu", negative_slope=0.2), _grad_samples(),
           prims=("leaky_relu_backward",), forward_ad=False),
    OpSpec("hardtanh_backward", _grad_of("hardtanh"),
           _grad_samples(lambda s: away(s, 0.2, 1.8)), prims=("hardtanh_backward",),
           forward_ad=False),
    OpSpec("hardshrink_backward", _grad_of("hardshrink"),
           _grad_samples(lambda s: away(s, 0.1, 2.0)), prims=("hardshrink_backward",),
           forward_ad=False),
    OpSpec("softshrink_backward", _grad_of("softshrink"),
           _grad_samples(lambda s: away(s, 0.1, 2.0)), prims=("softshrink_backward",),
           forward_ad=False),
    OpSpec("sigmoid_backward", _grad_of("sigmoid"), _grad_samples(), prims=("sigmoid_backward",),
           forward_ad=False),
    OpSpec("tanh_backward", _grad_of("tanh"), _grad_samples(), prims=("tanh_backward",),
           forward_ad=False),
    OpSpec("gelu_backward", _grad_of("gelu"), _grad_samples(), prims=("gelu_backward",),
           forward_ad=False),
    OpSpec("gelu_backward_tanh", _grad_of("gelu", approximate="tanh"), _grad_samples(),
           prims=("gelu_backward",), forward_ad=False),
    OpSpec("elu_backward", _grad_of("elu", alpha=0.7), _grad_samples(),
           prims=("elu_backward",), forward_ad=False),
    OpSpec("elu_backward_result", lambda lib, t, g: lib.autograd.grad(
        lib.nn.functional.elu(t * 1, alpha=0.7, inplace=True), t, g, create_graph=True)[0],
        _grad_samples(), prims=("elu_backward",), forward_ad=False),
    OpSpec("softplus_backward", _grad_of("softplus", beta=2.0, threshold=1.0),
           _grad_samples(lambda s: away(s, 0.6, 2.0)), prims=("softplus_backward",),
           forward_ad=False),
    OpSpec("hardswish_backward", _grad_of("hardswish"), [
        Sample((x((3, 4), -4.0, 4.0), x((3, 4))), name="2d")], prims=("hardswish_backward",),
        forward_ad=False),
]

SPECS = [*ACTIVATIONS, *COMPARISON, *SELECTION, *BACKWARD]
