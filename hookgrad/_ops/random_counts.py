"""``poisson`` and ``binomial``: counts drawn in the functional layer, recorded as PyTorch does.

As with ``_standard_gamma``, the draw needs the generator, so it happens above; each primitive
takes the drawn counts as a last, non-differentiable input and hands them through. PyTorch
records ``PoissonBackward0`` (a zero gradient for the rates) and, for ``binomial``, a node named
``NotImplemented`` that raises when backward reaches it.
"""

from __future__ import annotations

from hookgrad._ops._no_derivative import passthrough_without_derivative
from hookgrad._ops.registry import defop

__all__ = ["POISSON", "BINOMIAL"]

_DRAWN = "the drawn counts: samples carry no gradient"


POISSON = defop(
    "poisson",
    impl=lambda self, sample: sample.copy(),
    inputs=("self", "sample"),
    nondifferentiable={"sample": _DRAWN},
    vjp={"self": lambda grad: grad * 0},
    jvp={"self": lambda t: t * 0},
)

BINOMIAL = passthrough_without_derivative("binomial", ("count", "prob"), _DRAWN)

from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import broadcasting as _broadcasting  # noqa: E402

# elementwise in their inputs and the drawn sample, as _standard_gamma
_batches(["poisson", "binomial"], _broadcasting)
