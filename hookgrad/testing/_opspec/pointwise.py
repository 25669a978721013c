"""OpSpecs: the pointwise family (arithmetic, powers, rounding, division, math functions).

Activations and comparison/selection ops are in `_pointwise_nn`; `SPECS` gathers both. Python
scalars on either side of an operator, in-place variants (run on a clone so the leaf may
require grad) and the overloads PyTorch records with different nodes (``PowBackward0/1/2``,
``FmodBackward0/1``...) each get their own spec.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec._pointwise_common import (
    away,
    binary,
    const_arg,
    fixed,
    off_grid,
    unary,
    x,
)


def _method(name: str, **fixed: Any) -> Any:
    return lambda lib, t, *args, **kw: getattr(t, name)(*args, **fixed, **kw)


def _inplace(name: str) -> Any:
    """Run ``t.clone().<name>_(...)``: the clone lets a leaf that requires grad take part."""
    return lambda lib, t, *args, **kw: getattr(t.clone(), name + "_")(*args, **kw)


def _fn(name: str) -> Any:
    return lambda lib, *args, **kw: getattr(lib, name)(*args, **kw)


_POS = dict(low=0.1, high=2.0)
_NO_GRAD_CHECKS = dict(gradcheck=False, gradgradcheck=False, forward_ad=False)
# In-place specs have no zero-size sample: PyTorch itself refuses to write into the clone of a
# zero-size tensor made from NumPy (its strides are all 0: "more than one element ...").
_SCALAR_SAMPLES = [Sample((x((3, 4)), const_arg(2.5)), name="float"),
                   Sample((x((3, 4)), const_arg(3)), name="int"),
                   Sample((x(()), const_arg(-1.5)), name="0d")]

ARITH = [
    OpSpec("add", _fn("add"), binary() + [Sample((x((2, 3)), x((3,))), {"alpha": 2}, "alpha")],
           prims=("add",)),
    OpSpec("add_scalar", lambda lib, t, s: t + s, _SCALAR_SAMPLES, prims=("add",)),
    OpSpec("radd_scalar", lambda lib, t, s: s + t, _SCALAR_SAMPLES, prims=("add",)),
    OpSpec("sub", _fn("sub"), binary() + [Sample((x((2, 3)), x((3,))), {"alpha": 0.5}, "alpha")],
           prims=("sub",)),
    OpSpec("rsub_scalar", lambda lib, t, s: s - t, _SCALAR_SAMPLES, prims=("rsub",)),
    OpSpec("rsub", _fn("rsub"), [Sample((x((3, 4)), const_arg(2.0)), {"alpha": 3}, "alpha")],
           prims=("rsub",)),
    OpSpec("mul", _fn("mul"), binary(), prims=("mul",)),
    OpSpec("mul_scalar", lambda lib, t, s: t * s, _SCALAR_SAMPLES, prims=("mul",)),
    OpSpec("div", _fn("div"), binary(make_b=away), prims=("div",)),
    OpSpec("div_scalar", lambda lib, t, s: t / s, _SCALAR_SAMPLES, prims=("div",)),
    OpSpec("rdiv_scalar", lambda lib, t, s: s / t, [
        Sample((Arg((3, 4), make=away((3, 4))), const_arg(2.0)), name="float")],
        prims=("div", "reciprocal", "mul")),
    OpSpec("neg", _fn("neg"), unary(), prims=("neg",)),
    OpSpec("exp", _fn("exp"), unary(), prims=("exp",)),
    # in-place arithmetic on a clone
    OpSpec("add_", _inplace("add"), [Sample((x((2, 3)), x((3,))), {"alpha": 2}, "alpha"),
                                     Sample((x((3,)), const_arg(1.5)), name="scalar")],
           prims=("add",)),
    OpSpec("sub_", _inplace("sub"), [Sample((x((2, 3)), x((3,))), name="bcast")],
           prims=("sub",)),
    OpSpec("mul_", _inplace("mul"), [Sample((x((2, 3)), x((3,))), name="bcast"),
                                     Sample((x((3,)), const_arg(2)), name="scalar")],
           prims=("mul",)),
    OpSpec("div_", _inplace("div"), [Sample((x((2, 3)), Arg((3,), make=away((3,)))),
                                            name="bcast")], prims=("div",)),
    OpSpec("neg_", _inplace("neg"), unary(empty=False), prims=("neg",)),
    OpSpec("exp_", _inplace("exp"), unary(empty=False), prims=("exp",)),
]

POW = [
    OpSpec("pow_scalar_exponent", lambda lib, t, e: t ** e, [
        Sample((x((3, 4)), const_arg(2)), name="square"),
        Sample((x((3, 4)), const_arg(3)), name="cube"),
        Sample((x((3, 4), **_POS), const_arg(0.5)), name="sqrt"),
        Sample((x((3, 4), **_POS), const_arg(-1.5)), name="negative"),
        Sample((x((3, 4)), const_arg(0)), name="zero"),
        Sample((x((), **_POS), const_arg(2.5)), name="0d"),
        Sample((x((0, 2)), const_arg(2)), name="empty")], prims=("pow",)),
    OpSpec("pow_tensor", _fn("pow"), binary(a=(0.5, 2.0)), prims=("pow_tensor",)),
    OpSpec("pow_scalar_base", lambda lib, t, b: b ** t, [
        Sample((x((3, 4)), const_arg(2)), name="int_base"),
        Sample((x((3, 4)), const_arg(0.7)), name="float_base"),
        Sample((x(()), const_arg(3.0)), name="0d")], prims=("pow_scalar",)),
    OpSpec("square", _fn("square"), unary(), prims=("pow",)),
    OpSpec("pow_", lambda lib, t, e: t.clone().pow_(e), [
        Sample((x((3,)), const_arg(2)), name="scalar"),
        Sample((x((3,), **_POS), x((3,))), name="tensor")], prims=("pow", "pow_tensor")),
    OpSpec("float_power", _fn("float_power"), [Sample((x((3,), **_POS), const_arg(2)), name="s")],
           prims=("pow",)),
]

_GRID = off_grid
ROUNDING = [
    OpSpec("floor", _fn("floor"), unary(make=_GRID), prims=("floor",)),
    OpSpec("ceil", _fn("ceil"), unary(make=_GRID), prims=("ceil",)),
    OpSpec("trunc", _fn("trunc"), unary(make=_GRID), prims=("trunc",)),
    OpSpec("round", _fn("round"), unary(make=_GRID), prims=("round",)),
    OpSpec("round_decimals", _fn("round"),
           unary(make=lambda s: off_grid(s, 0.1), kwargs={"decimals": 1}),
           prims=("round_decimals",)),
    OpSpec("frac", _fn("frac"), unary(make=_GRID), prims=("frac",)),
    OpSpec("floor_", _inplace("floor"), unary(make=_GRID, empty=False), prims=("floor",)),
]

_DIVISOR = [Sample((x((3, 4), 0.1, 3.0), Arg((3, 4), make=away((3, 4), 0.6, 1.7))), name="same"),
            Sample((x((2, 3), -3.0, 3.0), Arg((3,), make=away((3,), 0.6, 1.7))), name="bcast"),
            Sample((x((), 0.1, 3.0), Arg((), make=away((), 0.6, 1.7))), name="0d"),
            Sample((x((0, 3)), Arg((3,), make=away((3,), 0.6, 1.7))), name="empty")]

DIVISION = [
    OpSpec("fmod_scalar", _fn("fmod"), [Sample((x((3, 4)), const_arg(0.7)), name="s"),
                                        Sample((x(()), const_arg(-0.7)), name="0d")],
           prims=("fmod",)),
    OpSpec("fmod_tensor", _fn("fmod"), _DIVISOR, prims=("fmod_tensor",)),
    OpSpec("remainder_scalar", _fn("remainder"), [Sample((x((3, 4)), const_arg(0.7)), name="s")],
           prims=("remainder",)),
    OpSpec("mod_operator", lambda lib, t, s: t % s, [Sample((x((3, 4)), const_arg(0.7)), name="s")],
           prims=("remainder",)),
    OpSpec("remainder_tensor", _fn("remainder"), _DIVISOR, prims=("remainder_tensor",)),
    # remainder(Scalar, Tensor) and floor_divide have no derivative in PyTorch either.
    OpSpec("rmod_scalar", lambda lib, t, s: s % t, [
        Sample((Arg((3, 4), make=away((3, 4))), const_arg(2.0)), name="s")],
        prims=("remainder_scalar",), **_NO_GRAD_CHECKS),
    OpSpec("floor_divide", _fn("floor_divide"), _DIVISOR, prims=("floor_divide",),
           **_NO_GRAD_CHECKS),
    OpSpec("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), _DIVISOR,
           prims=("div_mode",)),
    OpSpec("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), _DIVISOR,
           prims=("div_mode",)),
]

MISC = [
    OpSpec("lerp_scalar", _fn("lerp"), binary(kwargs={"weight": 0.3}) + [
        Sample((x((3,)), x((3,))), {"weight": 0.8}, "big_weight")], prims=("lerp",)),
    OpSpec("lerp_tensor", _fn("lerp"), [
        Sample((x((3, 4)), x((3, 4)), x((3, 4), 0.0, 1.0)), name="same"),
        Sample((x((2, 3)), x((3,)), x((2, 1), 0.0, 1.0)), name="bcast"),
        Sample((x(()), x(()), x(())), name="0d")], prims=("lerp_tensor",)),
    OpSpec("lerp_", _inplace("lerp"), [Sample((x((3,)), x((3,)), const_arg(0.3)), name="s")],
           prims=("lerp",)),
    OpSpec("addcmul", _fn("addcmul"), [
        Sample((x((3, 4)), x((3, 4)), x((3, 4))), {"value": 0.5}, "same"),
        Sample((x((2, 3)), x((3,)), x((2, 1))), name="bcast"),
        Sample((x(()), x(()), x(())), {"value": 2}, "0d")], prims=("addcmul",)),
    OpSpec("addcdiv", _fn("addcdiv"), [
        Sample((x((3, 4)), x((3, 4)), Arg((3, 4), make=away((3, 4)))), {"value": 0.5}, "same"),
        Sample((x((2, 3)), x((3,)), Arg((2, 1), make=away((2, 1)))), name="bcast"),
        Sample((x(()), x(()), Arg((), make=away(()))), name="0d")], prims=("addcdiv",)),
    OpSpec("addcmul_", _inplace("addcmul"), [Sample((x((3,)), x((3,)), x((3,))), name="s")],
           prims=("addcmul",)),
    OpSpec("addcdiv_", _inplace("addcdiv"), [
        Sample((x((3,)), x((3,)), Arg((3,), make=away((3,)))), name="s")], prims=("addcdiv",)),
    OpSpec("fill", _fn("fill"), [Sample((x((3,)), const_arg(2.0)), name="scalar"),
                                 Sample((x((3, 2)), x(())), name="tensor")],
           prims=("fill", "fill_tensor")),
    OpSpec("fill_", _inplace("fill"), [Sample((x((3,)), const_arg(2.0)), name="scalar"),
                                       Sample((x((3, 2)), x(())), name="tensor")],
           prims=("fill_scalar_", "fill_")),
    OpSpec("zero_", _inplace("zero"), unary(empty=False), prims=("zero_",)),
]


def _math(name: str, low: float = -2.0, high: float = 2.0, make: Any = None,
          inplace: bool = True, extra: tuple[str, ...] = ()) -> list[OpSpec]:
    """Spec of ``lib.<name>`` plus (by default) its in-place ``Tensor.<name>_``."""
    specs = [OpSpec(name, _fn(name), unary(low, high, make), prims=(name, *extra))]
    if inplace:
        specs.append(OpSpec(name + "_", _inplace(name), unary(low, high, make, empty=False),
                            prims=(name, *extra)))
    return specs


MATH = [
    *_math("exp2"), *_math("expm1"), *_math("log", 0.1, 2.0), *_math("log2", 0.1, 2.0),
    *_math("log10", 0.1, 2.0), *_math("log1p", -0.5, 2.0), *_math("sqrt", 0.1, 2.0),
    *_math("rsqrt", 0.2, 2.0), *_math("reciprocal", make=away), *_math("abs", make=away),
    *_math("sign"), *_math("sin"), *_math("cos"), *_math("tan", -1.2, 1.2),
    *_math("asin", -0.9, 0.9), *_math("acos", -0.9, 0.9), *_math("atan"), *_math("sinh"),
    *_math("cosh"), *_math("tanh", extra=("tanh_backward",)), *_math("erf"), *_math("erfc"),
    *_math("asinh", inplace=False), *_math("acosh", 1.1, 3.0, inplace=False),
    *_math("atanh", -0.9, 0.9, inplace=False),
    # PyTorch has no derivative for the in-place inverse hyperbolics (backward raises).
    OpSpec("asinh_", _inplace("asinh"), unary(), prims=("asinh_",), **_NO_GRAD_CHECKS),
    OpSpec("acosh_", _inplace("acosh"), unary(1.1, 3.0), prims=("acosh_",), **_NO_GRAD_CHECKS),
    OpSpec("atanh_", _inplace("atanh"), unary(-0.9, 0.9), prims=("atanh_",), **_NO_GRAD_CHECKS),
    OpSpec("atan2", _fn("atan2"), binary(make_b=away), prims=("atan2",)),
    OpSpec("nan_to_num", _fn("nan_to_num"), unary() + [
        Sample((Arg((5,), make=fixed([1.0, float("nan"), float("inf"), -float("inf"), -2.0])),),
               {"nan": 0.5, "posinf": 3.0}, "special")], prims=("nan_to_num",)),
    OpSpec("abs_operator", lambda lib, t: abs(t), unary(make=away), prims=("abs",)),
]


def _all() -> list[OpSpec]:
    from hookgrad.testing._opspec._pointwise_nn import SPECS as NN_SPECS

    return [*ARITH, *POW, *ROUNDING, *DIVISION, *MISC, *MATH, *NN_SPECS]


SPECS = _all()
