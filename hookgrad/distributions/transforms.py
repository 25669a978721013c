"""Invertible maps between constrained spaces, with their log-Jacobians.

A `Transform` maps values of its ``domain`` to its ``codomain``; ``inv`` is the inverse map and
``log_abs_det_jacobian(x, y)`` the log of the absolute Jacobian determinant at ``x`` (summed
over the transform's event dims). With ``cache_size=1`` the last ``(x, y)`` pair is kept, so
inverting a freshly drawn sample returns the very tensor it came from.

Mirrors: ``torch.distributions.transforms``.
"""

from __future__ import annotations

from hookgrad.distributions._transform_corr_cholesky import CorrCholeskyTransform
from hookgrad.distributions._transform_base import (
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    Transform,
    _InverseTransform,
    identity_transform,
)
from hookgrad.distributions._transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    LowerCholeskyTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    _clipped_sigmoid,
)
from hookgrad.distributions._transforms_more import (
    CatTransform,
    CumulativeDistributionTransform,
    PositiveDefiniteTransform,
    StackTransform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform",
]
_PRIVATE = (_InverseTransform, _clipped_sigmoid)  # importable as in PyTorch's module
