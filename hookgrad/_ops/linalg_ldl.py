"""``linalg_ldl_factor_ex`` and ``linalg_ldl_solve`` as recorded nodes without a derivative.

The factorization and the solve run in the functional layer (`hookgrad._surface.cfuncs_ldl`);
each primitive takes the computed result as its last, non-differentiable input and hands it
through, so that a graph through them shows PyTorch's ``NotImplemented`` node, which raises
PyTorch's error when backward reaches it.
"""

from __future__ import annotations

from hookgrad._ops._no_derivative import passthrough_without_derivative

__all__ = ["LDL_FACTOR", "LDL_SOLVE"]

_COMPUTED = "the computed result, handed through"

LDL_FACTOR = passthrough_without_derivative("linalg_ldl_factor_ex", ("self",), _COMPUTED)
LDL_SOLVE = passthrough_without_derivative("linalg_ldl_solve", ("LD", "B"), _COMPUTED)
