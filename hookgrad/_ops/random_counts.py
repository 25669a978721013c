"""``poisson`` and ``binomial``: counts drawn in the functional layer, recorded as PyTorch does.

As with ``_standard_gamma``, the draw needs the generator, so it happens above; each primitive
takes the drawn counts as a last, non-differentiable input and hands them through. PyTorch
records ``PoissonBackward0`` (a zero gradient for the rates) and, for ``binomial``, a node named
``NotImplemented`` that raises when backward reaches it.
"""

from __future__ import annotations

from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

__all__ = ["POISSON", "BINOMIAL"]

_DRAWN = "the drawn counts: samples carry no gradient"


def _binomial_has_no_derivative(grad: Tensor) -> Tensor:
    raise RuntimeError("derivative for aten::binomial is not implemented")


POISSON = defop(
    "poisson",
    impl=lambda self, sample: sample.copy(),
    inputs=("self", "sample"),
    nondifferentiable={"sample": _DRAWN},
    vjp={"self": lambda grad: grad * 0},
    jvp={"self": lambda t: t * 0},
)

BINOMIAL = defop(
    "binomial",
    impl=lambda count, prob, sample: sample.copy(),
    inputs=("count", "prob", "sample"),
    nondifferentiable={"sample": _DRAWN},
    node_name="NotImplemented",
    vjp={"count": _binomial_has_no_derivative, "prob": _binomial_has_no_derivative},
    jvp={"count": lambda t: _binomial_has_no_derivative(t),
         "prob": lambda t: _binomial_has_no_derivative(t)},
)
