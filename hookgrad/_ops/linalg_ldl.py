"""``linalg_ldl_factor_ex`` and ``linalg_ldl_solve`` as recorded nodes without a derivative.

The factorization and the solve run in the functional layer (`hookgrad._surface.cfuncs_ldl`);
each primitive takes the computed result as its last, non-differentiable input and hands it
through, so that a graph through them shows PyTorch's ``NotImplemented`` node, which raises
PyTorch's error when backward reaches it.
"""

from __future__ import annotations

from typing import Any

from hookgrad._ops.registry import defop

__all__ = ["LDL_FACTOR", "LDL_SOLVE"]

_COMPUTED = "the computed result, handed through"


def _raises(aten: str) -> Any:
    def rule(grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return rule


LDL_FACTOR = defop(
    "linalg_ldl_factor_ex",
    impl=lambda self, result: result.copy(),
    inputs=("self", "result"),
    nondifferentiable={"result": _COMPUTED},
    node_name="NotImplemented",
    vjp={"self": _raises("linalg_ldl_factor_ex")},
    jvp={"self": _raises("linalg_ldl_factor_ex")},
)

LDL_SOLVE = defop(
    "linalg_ldl_solve",
    impl=lambda LD, B, result: result.copy(),
    inputs=("LD", "B", "result"),
    nondifferentiable={"result": _COMPUTED},
    node_name="NotImplemented",
    vjp={"LD": _raises("linalg_ldl_solve"), "B": _raises("linalg_ldl_solve")},
    jvp={"LD": _raises("linalg_ldl_solve"), "B": _raises("linalg_ldl_solve")},
)
