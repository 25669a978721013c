"""The lowering table: inline source of the primitives generated code computes, forward and
backward alike (NOTE [Pointwise templates]).

NOTE [Pointwise templates]
Each entry maps a primitive to the source of its *forward* computation over ``{a}``/``{b}``
(the inputs, in order) and its params by name (``{exponent}``, ``{threshold}``...). Numeric
constants are written ``{c0}``/``{c1}``/``{c2}``: NumPy code formats them as Python ints (weak
scalars under NEP 50, so a float32 operand stays float32); Numba kernels format them, and the
numeric params, as scalars of the kernel's dtype, so the kernel computes in that dtype as eager
does. ``array`` is the form on NumPy arrays (None: NumPy code calls the primitive's impl,
exactly as eager does), ``scalar`` the form in a Numba kernel's loop body (None: the primitive
cannot be fused; ``SAME``: the array form works on scalars too). Each form computes what the
primitive's impl computes. A primitive's entry applies only to the calls `lowerable` accepts.

There are no derivative templates: a backward is the forward lowering of the primitives the op
table's own VJP rules call (NOTE [Traced derivatives] in derivative.py), so the entries for the
backward primitives those rules use (``tanh_backward``, ``threshold_backward``, ``sign``,
``sum_to_size``...) are forward entries like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Lowering", "POINTWISE", "SAME", "lowerable", "forward_expr"]

SAME = "same"


@dataclass(frozen=True)
class Lowering:
    """Inline forms of one primitive (see the NOTE)."""

    array: str | None
    scalar: str | None = SAME
    params: dict[str, Any] = field(default_factory=dict)  # params that must have these values
    free: tuple[str, ...] = ()  # params written into the source (Python numbers)


_ELEMENTWISE = {
    "add": Lowering("({a} + {b})", params={"alpha": 1}),
    "sub": Lowering("({a} - {b})", params={"alpha": 1}),
    "mul": Lowering("({a} * {b})"),
    "div": Lowering("({a} / {b})"),
    "neg": Lowering("(-{a})"),
    "tanh": Lowering("np.tanh({a})"),
    "exp": Lowering("np.exp({a})"),
    "log": Lowering("np.log({a})"),
    "sigmoid": Lowering("({c1} / ({c1} + np.exp(-{a})))"),
    "relu": Lowering("np.maximum({a}, {c0})"),
    "sqrt": Lowering("np.sqrt({a})"),
    "sin": Lowering("np.sin({a})"),
    "cos": Lowering("np.cos({a})"),
    "abs": Lowering("np.abs({a})"),
    "pow": Lowering("({a} ** {exponent})", free=("exponent",)),
    "reciprocal": Lowering("({c1} / {a})"),
    # the primitives the rules above call (activation_backward.py, pointwise_math.py)
    "tanh_backward": Lowering("({a} * ({c1} - {b} * {b}))"),
    "sigmoid_backward": Lowering("({a} * ({c1} - {b}) * {b})"),
    # NumPy code calls eager's impl (a multiplication by the mask when the gradient is
    # finite): ``np.where`` was 5x slower on a 64x256 ReLU gradient in a training step
    "threshold_backward": Lowering(None, "({c0} if {b} <= {threshold} else {a})",
                                   free=("threshold",)),
    # PyTorch's sign of nan is 0: the impl on arrays, the definition (0 < x) - (x < 0) on scalars
    "sign": Lowering(None, "({c1} if {a} > {c0} else (-{c1} if {a} < {c0} else {c0}))"),
}
# shape primitives and matrix products the rules call: NumPy code only (a fused group has one
# shape). A view is written as a reshape: a derivative is traced on contiguous stand-ins, where
# ``reshape`` records ``view``; on a gradient of another layout eager's ``reshape`` copies
# instead, and so does NumPy's (same values, no error).
_SHAPES = {
    "t": Lowering("{a}.T", None),
    "mm": Lowering("np.dot({a}, {b})", None),  # eager's ``mm_arrays`` (its error state: BLAS
                                               # raises no floating-point flags)
    "view": Lowering("{a}.reshape({size})", None, free=("size",)),
    # a read-only broadcast view (the generated code never writes into a gradient)
    "expand": Lowering("_expand({a}, {size})", None, free=("size",)),
    "_unsafe_view": Lowering("{a}.reshape({size})", None, free=("size",)),
    "sum_to_size": Lowering("_unb({a}, {size})", None, free=("size",)),
}
POINTWISE: dict[str, Lowering] = {**_ELEMENTWISE, **_SHAPES}

_NUMPY_CONSTS = {"c0": "0", "c1": "1", "c2": "2"}
_NUMBERS = (int, float)


def lowerable(prim: Any, params: dict, scalar: bool = False) -> bool:
    """True when `POINTWISE` has an inline form of this call of `prim` (in a Numba kernel with
    `scalar`): its params have the handled values."""
    entry = POINTWISE.get(prim.name)
    if entry is None or (entry.scalar if scalar else entry.array) is None:
        return False
    for name, value in params.items():
        if name in entry.free:
            if type(value) not in (_NUMBERS if scalar else _NUMBERS + (tuple,)):
                return False
        elif name not in entry.params or entry.params[name] != value:
            return False
    return all(name in params for name in entry.free)


def forward_expr(name: str, args: list[str], params: dict, consts: dict[str, str] | None = None,
                 number: Any = repr) -> str:
    """The inline source of primitive `name` on the argument sources `args`: the array form,
    or with `consts` (the kernel's constant names) the scalar form, its numeric params written
    by `number`."""
    entry = POINTWISE[name]
    form = entry.array if consts is None or entry.scalar == SAME else entry.scalar
    fields = dict(consts or _NUMPY_CONSTS)
    fields.update({p: number(params[p]) for p in entry.free})
    fields.update(zip("ab", args))
    return form.format(**fields)
