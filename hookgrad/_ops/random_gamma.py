"""``_standard_gamma``: Gamma(alpha, 1) samples with PyTorch's reparametrised gradient.

The draw itself happens in the functional layer (it needs the generator); the primitive takes
the drawn samples as a second, non-differentiable input and hands them through, so that the
gradient with respect to ``alpha`` is recorded as PyTorch's ``StandardGammaBackward0``:
``grad * d sample / d alpha`` at fixed quantile, by ATen's approximation
(``_reparam_grad.standard_gamma_grad``). ``_dirichlet_grad`` is the matching Beta/Dirichlet
gradient kernel that ``distributions.Dirichlet``'s backward calls.
"""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind
from hookgrad._ops import _reparam_grad as _R
from hookgrad._ops.pointwise_gamma import _host
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

__all__ = ["DIRICHLET_GRAD", "STANDARD_GAMMA", "STANDARD_GAMMA_GRAD"]

_WHY = "not differentiable (PyTorch has no derivative for _standard_gamma_grad)"

STANDARD_GAMMA_GRAD = defop(
    "_standard_gamma_grad",
    impl=_host(_R.standard_gamma_grad),
    inputs=("self", "output"),
    nondifferentiable={"self": _WHY, "output": _WHY},
    jvp=None,
)

_WHY_DIRICHLET = "not differentiable (PyTorch has no derivative for _dirichlet_grad)"

DIRICHLET_GRAD = defop(
    "_dirichlet_grad",
    impl=_host(_R.dirichlet_grad),
    inputs=("x", "alpha", "total"),
    nondifferentiable={"x": _WHY_DIRICHLET, "alpha": _WHY_DIRICHLET, "total": _WHY_DIRICHLET},
    jvp=None,
)


def _vjp(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    return grad * bind(STANDARD_GAMMA_GRAD, (self, result), {})


STANDARD_GAMMA = defop(
    "_standard_gamma",
    impl=lambda self, sample: sample.copy(),
    inputs=("self", "sample"),
    nondifferentiable={"sample": "the drawn samples: the gradient flows to alpha"},
    saves=("self", "result"),
    node_name="StandardGammaBackward0",
    vjp={"self": _vjp},
    # (PyTorch has no forward derivative here; hookgrad's is the same chain rule)
    jvp={"self": lambda t, self, result: t * bind(STANDARD_GAMMA_GRAD, (self, result), {})},
)


