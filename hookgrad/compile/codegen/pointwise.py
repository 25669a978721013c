"""The elementwise lowering table: forward and VJP expressions of the primitives the generated
code computes inline (NOTE [Pointwise templates]).

NOTE [Pointwise templates]
Each entry maps a primitive to source templates over ``{a}``/``{b}`` (the inputs, in order),
``{r}`` (the result) and ``{g}`` (the gradient of the result). Numeric constants are written
``{c0}``/``{c1}``/``{c2}``: NumPy code formats them as Python ints (weak scalars under NEP 50,
so a float32 operand stays float32); Numba kernels format them as scalars of the kernel's
dtype, so the kernel computes in that dtype as eager does. The same text works on arrays
(NumPy) and on scalars (a Numba kernel's loop body); where the two differ (a select) the entry
gives a scalar form. The formulas are those of the primitives' own VJP rules, written out.
A primitive's entry applies only to the calls `lowerable` accepts (params it handles).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pointwise", "POINTWISE", "lowerable", "forward_expr", "vjp_expr"]


@dataclass(frozen=True)
class Pointwise:
    """Templates of one elementwise primitive (see the NOTE)."""

    fwd: str
    vjp: tuple[str, ...]  # one per input
    scalar_vjp: tuple[str, ...] = ()  # Numba-kernel forms where they differ from `vjp`
    uses_result: bool = False
    params: dict[str, Any] = field(default_factory=dict)  # params that must have these values


POINTWISE: dict[str, Pointwise] = {
    "add": Pointwise("({a} + {b})", ("{g}", "{g}"), params={"alpha": 1}),
    "sub": Pointwise("({a} - {b})", ("{g}", "(-{g})"), params={"alpha": 1}),
    "mul": Pointwise("({a} * {b})", ("({g} * {b})", "({g} * {a})")),
    "div": Pointwise("({a} / {b})", ("({g} / {b})", "(-{g} * ({a} / {b} / {b}))")),
    "neg": Pointwise("(-{a})", ("(-{g})",)),
    "tanh": Pointwise("np.tanh({a})", ("({g} * ({c1} - {r} * {r}))",), uses_result=True),
    "exp": Pointwise("np.exp({a})", ("({g} * {r})",), uses_result=True),
    "log": Pointwise("np.log({a})", ("({g} / {a})",)),
    "sigmoid": Pointwise("({c1} / ({c1} + np.exp(-{a})))", ("({g} * ({c1} - {r}) * {r})",),
                         uses_result=True),
    "relu": Pointwise("np.maximum({a}, {c0})", ("np.where({r} > {c0}, {g}, {c0})",),
                      scalar_vjp=("({g} if {r} > {c0} else {c0})",), uses_result=True),
    "sqrt": Pointwise("np.sqrt({a})", ("({g} / ({c2} * {r}))",), uses_result=True),
    "sin": Pointwise("np.sin({a})", ("({g} * np.cos({a}))",)),
    "cos": Pointwise("np.cos({a})", ("({g} * -np.sin({a}))",)),
    "abs": Pointwise("np.abs({a})", ("({g} * np.sign({a}))",)),
    "pow": Pointwise("({a} ** {e})", ("({g} * ({e} * {a} ** ({e} - 1)))",)),
    "reciprocal": Pointwise("({c1} / {a})", ("(-{g} * ({r} * {r}))",), uses_result=True),
}

_NUMPY_CONSTS = {"c0": "0", "c1": "1", "c2": "2"}


def lowerable(prim: Any, params: dict) -> bool:
    """True when `POINTWISE` covers this call of `prim` (its params have the handled values)."""
    entry = POINTWISE.get(prim.name)
    if entry is None or len(entry.vjp) != len(prim.inputs):
        return False
    if prim.name == "pow":  # a Python number exponent; 0 has its own rule (a zero gradient)
        e = params.get("exponent")
        return type(e) in (int, float) and e != 0 and len(params) == 1
    for name, value in params.items():
        if name not in entry.params or entry.params[name] != value:
            return False
    return True


def forward_expr(name: str, args: list[str], params: dict,
                 consts: dict[str, str] | None = None) -> str:
    """The forward expression of primitive `name` on the argument expressions `args`."""
    return POINTWISE[name].fwd.format(**_fields(args, "", "", params, consts))


def vjp_expr(name: str, k: int, args: list[str], result: str, grad: str, params: dict,
             consts: dict[str, str] | None = None, scalar: bool = False) -> str:
    """The gradient expression of input `k` of primitive `name`."""
    entry = POINTWISE[name]
    table = entry.scalar_vjp if scalar and entry.scalar_vjp else entry.vjp
    return table[k].format(**_fields(args, result, grad, params, consts))


def _fields(args: list[str], result: str, grad: str, params: dict,
            consts: dict[str, str] | None) -> dict:
    out = dict(consts or _NUMPY_CONSTS)
    out["e"] = repr(params.get("exponent"))
    out.update(zip("ab", args))
    out["r"], out["g"] = result, grad
    return out
