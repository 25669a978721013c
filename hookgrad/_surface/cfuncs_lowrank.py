"""Randomised low-rank SVD and PCA (Halko, Martinsson and Tropp 2009, algorithm 5.1).

Mirrors: ``torch.svd_lowrank`` and ``torch.pca_lowrank``. The random test matrix comes from
hookgrad's own generator, so the factors agree with PyTorch's where the decomposition is
determined (a matrix of rank at most `q`), up to the signs of singular-vector pairs. Built from
``linalg.qr``, ``linalg.svd`` and ``matmul``, so differentiable as PyTorch's.
"""

from __future__ import annotations

import hookgrad._functional.random as Rnd
from hookgrad._surface.spectral_ops import linalg_qr, linalg_svd
from hookgrad._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _mh(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal basis Q of (approximately) A's range, by subspace iteration."""
    R = Rnd.randn(A.shape[-1], q, dtype=A.dtype)

    def apply(X: Tensor, adjoint: bool) -> Tensor:
        left = _mh(A) if adjoint else A
        out = left @ X
        return out if M is None else out - (_mh(M) if adjoint else M) @ X

    Q = _orth(apply(R, False))
    for _ in range(niter):
        Q = _orth(apply(Q, True))
        Q = _orth(apply(Q, False))
    return Q


def _orth(X: Tensor) -> Tensor:
    return linalg_qr(X)[0]


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple:
    """(U, S, V) of a rank-`q` approximation of ``A - M``. Mirrors: ``torch.svd_lowrank``."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    wide = m < n
    if wide:
        A = _mh(A)
        M = None if M is None else _mh(M)
    Q = _basis(A, q, niter, M)
    B = _mh(Q) @ A
    if M is not None:
        B = B - _mh(Q) @ M
    U, S, Vh = linalg_svd(B, full_matrices=False)
    U, V = Q @ U, _mh(Vh)
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> tuple:
    """Principal components of the rows of `A` (centred by default). Mirrors: ``torch.pca_lowrank``."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    c = A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter, M=c)

