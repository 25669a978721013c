"""Helpers the distributions share: parameter broadcasting, probs/logits conversion, and the
packing of lower-triangular matrices.

Mirrors: ``torch.distributions.utils``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions.categorical import clamp_probs, logits_to_probs, probs_to_logits
from hookgrad.distributions.distribution import broadcast_all, lazy_property
from hookgrad.distributions import _lower

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Tensor:
    """A fresh tensor of standard normal draws (gpytorch and pyro import it).

    Mirrors: ``torch.distributions.utils._standard_normal``.
    """
    return _lower.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the `dim` rightmost dims of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries on and below diagonal `diag` of the last two dims, row by row.

    Mirrors: ``torch.distributions.utils.tril_matrix_to_vec``.
    """
    n = mat.shape[-1]
    if not False and not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = _lower.arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of `tril_matrix_to_vec`: a lower-triangular matrix from its entries.

    Mirrors: ``torch.distributions.utils.vec_to_tril_matrix``.
    """
    count = vec.shape[-1]
    n = int((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * count + 4 * abs(diag) * (diag + 1))
             ** 0.5) / 2)
    eps = _lower.finfo(vec.dtype).eps
    if not False and round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {count} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, Tensor) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    arange = _lower.arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat


