"""Public ops: the pointwise family (math, activations, comparisons and selection).

The wrappers live in three private modules split by topic (`_pw_math`, `_pw_activation`,
`_pw_compare`); this module gathers their ``__all__`` and ``METHODS`` for `hookgrad` and
`_tensor_methods`, and names the activation functions ``nn.functional`` re-exports in
`NN_FUNCTIONAL` (each is an attribute of this module with PyTorch's ``nn.functional``
signature).
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import _pw_activation, _pw_compare, _pw_gamma, _pw_math
from hookgrad._functional._common import binary
from hookgrad._functional._pw_activation import *  # noqa: F403
from hookgrad._functional._pw_compare import *  # noqa: F403
from hookgrad._functional._pw_gamma import *  # noqa: F403
from hookgrad._functional._pw_math import *  # noqa: F403
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

# The activations only ``torch.nn.functional`` has (so outside ``__all__``), as attributes here.
_A = _pw_activation
celu, elu, elu_, gelu, silu, mish = _A.celu, _A.elu, _A.elu_, _A.gelu, _A.silu, _A.mish
leaky_relu, leaky_relu_, hardtanh, hardtanh_ = (_A.leaky_relu, _A.leaky_relu_, _A.hardtanh,
                                                _A.hardtanh_)
relu6, hardsigmoid, hardswish, softplus = _A.relu6, _A.hardsigmoid, _A.hardswish, _A.softplus
softshrink, softsign, tanhshrink = _A.softshrink, _A.softsign, _A.tanhshrink
logsigmoid = _A.logsigmoid
tanh = _pw_math.tanh

NN_FUNCTIONAL = (*_A.NN_FUNCTIONAL, "tanh")

_ROUNDING_MODES = ("trunc", "floor")


def _div_rounding(input: Any, other: Any, rounding_mode: str) -> Tensor:
    """``div(input, other, rounding_mode=...)`` (``DivBackward2``: zero gradients).

    Mirrors: ``torch.div`` with ``rounding_mode`` ``'trunc'`` or ``'floor'``.
    """
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    return binary(P["div_mode"], input, other, {"rounding_mode": rounding_mode})


__all__ = [*_pw_math.__all__, *_pw_activation.__all__, *_pw_compare.__all__, *_pw_gamma.__all__]

METHODS: dict = {**_pw_math.METHODS, **_pw_activation.METHODS, **_pw_compare.METHODS,
                 **_pw_gamma.METHODS}
