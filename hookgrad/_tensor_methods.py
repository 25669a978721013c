"""Install op methods and operators on `Tensor` from the ``METHODS`` table of each op family.

Layer 4. The list of families below is the one place to compare with PyTorch's method list.
"""

from __future__ import annotations

from types import ModuleType

from hookgrad._functional import (
    arith,
    creation,
    indexing,
    layer_ops,
    linalg,
    matrix_ops,
    misc,
    nn_ops,
    pointwise,
    random,
    reduction,
    shape,
)
from hookgrad._functional import complex as complex_fns
from hookgrad._tensor import Tensor

FAMILIES: list[ModuleType] = [
    arith, creation, pointwise, reduction, shape, indexing, linalg, nn_ops, random, misc,
    layer_ops, matrix_ops, complex_fns,
]


def install(families: list[ModuleType] | None = None) -> None:
    """Attach every family's ``METHODS`` to `Tensor` (later families win on a name clash)."""
    for family in families if families is not None else FAMILIES:
        for name, fn in family.METHODS.items():
            setattr(Tensor, name, fn)


install()
