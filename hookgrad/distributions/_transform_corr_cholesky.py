"""`CorrCholeskyTransform`: real vectors to Cholesky factors of correlation matrices.

Mirrors: ``torch.distributions.transforms.CorrCholeskyTransform``.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions import _lower, constraints
from hookgrad.distributions._transform_base import Transform
from hookgrad.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CorrCholeskyTransform"]


def _shift_right(x: Tensor) -> Tensor:
    """Drop the last entry of the last dim and put a one in front."""
    return _lower.functional.pad(x[..., :-1], [1, 0], value=1)


class CorrCholeskyTransform(Transform):
    """A vector of ``D*(D-1)/2`` reals to a ``D x D`` lower-triangular factor with positive
    diagonal and unit-norm rows: each row is a signed stick-breaking of ``tanh`` of its
    entries.

    Mirrors: ``torch.distributions.transforms.CorrCholeskyTransform``.
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        x = x.tanh()
        eps = _lower.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) * sqrt(z * cumprod(1 - z)) with z = r^2, i.e. r * sqrt(cumprod(1 - z))
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + _lower.eye(r.shape[-1], dtype=r.dtype, device=r.device)  # unit diagonal
        return r * _shift_right(remaining)

    def _inverse(self, y: Tensor) -> Tensor:
        # inverse stick-breaking (Stan reference manual, Cholesky factors of correlations)
        left = _shift_right(1 - (y * y).cumsum(dim=-1))
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor, intermediates: Any = None) -> Tensor:
        # the spaces differ in dimension: this is the Jacobian of x to the strictly lower
        # triangle of y; diag=-2 picks the already-shifted cumulative sums
        y1m_cumsum = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick_breaking = 0.5 * y1m_cumsum.log().sum(-1)
        softplus = _lower.functional.softplus
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking + tanh

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)
