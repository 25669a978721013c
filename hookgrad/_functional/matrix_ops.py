"""``torch.matrix_exp`` / ``torch.linalg.matrix_exp`` and ``torch.linalg.householder_product``.

Layer 4. ``matrix_exp`` binds its primitive (``LinalgMatrixExpBackward0``);
``householder_product`` is composed of differentiable ops (PyTorch shows one
``LinalgHouseholderProductBackward0`` node; values and gradients are the same).
"""

from __future__ import annotations

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._functional import creation as _creation
from hookgrad._functional.linalg_decomp import LinAlgError
from hookgrad._ops.matrix_exp import MATRIX_EXP, SOLVE
from hookgrad._tensor import Tensor

__all__ = ["matrix_exp"]


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of a square matrix (or batch of them).

    Raises:
        RuntimeError: on a non-square input.

    Example:
        >>> import hookgrad as torch
        >>> torch.matrix_exp(torch.zeros(2, 2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]

    Mirrors: ``torch.matrix_exp`` (``torch.linalg.matrix_exp``).
    """
    if A.dim() < 2 or A.size(-1) != A.size(-2):
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.size(-2) if A.dim() > 1 else 1} by {A.size(-1)} matrices")
    return bind(MATRIX_EXP, (A,), {})


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``B`` a matrix, a vector, or batches of them).

    Raises:
        RuntimeError: a non-square `A`, mismatched sizes, or a singular `A`.
        NotImplementedError: ``left=False``.

    Mirrors: ``torch.linalg.solve`` (``LinalgSolveExBackward0``).
    """
    if not isinstance(left, bool):  # PyTorch's parser
        raise TypeError(f"linalg_solve(): argument 'left' must be bool, not "
                        f"{type(left).__name__}")
    if not left:
        raise NotImplementedError("hookgrad: linalg.solve(left=False) is not supported")
    if A.dim() < 2 or A.size(-1) != A.size(-2):
        raise RuntimeError("linalg.solve: A must be batches of square matrices, but they are "
                           f"{A.size(-2) if A.dim() > 1 else 1} by {A.size(-1)} matrices")
    _check_solve_rhs(A, B)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype.scalar_type} and B of type {B.dtype.scalar_type} "
                           "instead")
    try:
        return bind(SOLVE, (A, B), {})
    except np.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                           "singular.") from None


def _check_solve_rhs(A: Tensor, B: Tensor) -> None:
    # PyTorch's checks of B, before NumPy's gufunc would raise its ValueError: B is a vector
    # when 1-D or shaped like A without its last dim, else a batch of matrices
    if B.dim() == 0:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    n = A.size(-1)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape)[:-1])
    rows, cols = (B.size(-1), 1) if vector else (B.size(-2), B.size(-1))
    if rows != n:
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {rows}x{cols})")
    b_batch = tuple(B.shape)[:-1] if vector else tuple(B.shape)[:-2]
    a_batch = tuple(A.shape)[:-2]
    for k in range(1, min(len(a_batch), len(b_batch)) + 1):
        sb, sa = b_batch[-k], a_batch[-k]
        if sb != sa and sb != 1 and sa != 1:
            dim = max(len(a_batch), len(b_batch)) - k
            raise RuntimeError(f"The size of tensor a ({sb}) must match the size of tensor b "
                               f"({sa}) at non-singleton dimension {dim}")


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """``H_1 H_2 ... H_k`` restricted to the first ``n`` columns, ``H_i = I - tau_i v_i v_i^H``
    with ``v_i`` the ``i``-th column of `A` below the diagonal and a unit ``i``-th entry.

    Raises:
        RuntimeError: on shapes LAPACK's ``orgqr`` rejects.

    Mirrors: ``torch.linalg.householder_product``.
    """
    m, n = A.size(-2), A.size(-1)
    k = tau.size(-1)
    if A.dim() < 2 or m < n or n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1] and input.shape[-1] must be greater"
                           " than or equal to tau.shape[-1]")
    q = _creation.eye(m, n, dtype=A.dtype, device=A.device).expand(*tuple(A.shape)[:-2], m, n)
    rows = _creation.arange(m, device=A.device).unsqueeze(-1)  # type: ignore[attr-defined]
    for i in range(k - 1, -1, -1):
        below = (rows > i).to(A.dtype)  # type: ignore[attr-defined]
        unit = (rows == i).to(A.dtype)  # type: ignore[attr-defined]
        v = A[..., :, i:i + 1] * below + unit
        t = tau[..., i:i + 1].unsqueeze(-1)  # type: ignore[attr-defined]
        q = q - t * (v @ (v.transpose(-2, -1) @ q))  # type: ignore[operator]
    return q


METHODS = {"matrix_exp": matrix_exp}
