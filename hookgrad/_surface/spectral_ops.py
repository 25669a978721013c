"""The spectral decompositions of ``torch.linalg`` and the composites built on them.

Mirrors: ``torch.linalg.eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr``, ``pinv``,
``matrix_rank``, ``lstsq``, ``cond``, ``cholesky_ex``, ``inv_ex``, ``solve_ex``,
``solve_triangular``, ``tensorinv``, ``tensorsolve``, and the ``torch.svd``/``torch.qr``/
``torch.pinverse``/``torch.cholesky_solve``/``torch.cholesky_inverse``/``torch.triangular_solve``
spellings. ``eigh``, ``svd`` and ``qr`` are primitives (`hookgrad._ops.linalg_spectral`); the
rest are composites, so their gradients come from the primitives'; ``cholesky_ex`` and
``solve_triangular`` are `hookgrad._functional.linalg_triangular`'s, published here too.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from hookgrad import return_types as _rt
from hookgrad._dispatch import bind
from hookgrad._functional.linalg_decomp import inv
from hookgrad._functional.linalg_triangular import cholesky_ex, solve_triangular
from hookgrad._functional.matrix_ops import solve
from hookgrad._ops.linalg_spectral import EIGH, QR, SVD
from hookgrad._tensor import Tensor

__all__ = ["svd", "qr", "pinverse", "cholesky_solve", "cholesky_inverse", "triangular_solve",
           "matrix_rank", "symeig", "eig", "lstsq"]

_EIGH = _rt._make("linalg_eigh", ("eigenvalues", "eigenvectors"))
_SVD = _rt._make("linalg_svd", ("U", "S", "Vh"))
_TSVD = _rt._make("svd", ("U", "S", "V"))
_QR = _rt._make("linalg_qr", ("Q", "R"))
_TQR = _rt._make("qr", ("Q", "R"))
_LSTSQ = _rt._make("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_INV_EX = _rt._make("linalg_inv_ex", ("inverse", "info"))
_SOLVE_EX = _rt._make("linalg_solve_ex", ("result", "info"))
_TRI = _rt._make("triangular_solve", ("solution", "cloned_coefficient"))


def _dtype_name(A: Tensor) -> str:
    return str(A.dtype).replace("torch.", "").replace("hookgrad.", "").capitalize()


def _check(A: Tensor, fn: str, square: bool = False) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype_name(A)}")


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices. Mirrors: ``torch.linalg.eigh``."""
    _check(A, "eigh", square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _EIGH(bind(EIGH, (A,), {"UPLO": UPLO}))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """Eigenvalues of symmetric matrices. Mirrors: ``torch.linalg.eigvalsh``."""
    return eigh(A, UPLO)[0]


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None,
               out: Any = None) -> Any:
    """``A = U diag(S) Vh``. Mirrors: ``torch.linalg.svd``."""
    _check(A, "svd")
    return _SVD(bind(SVD, (A,), {"full_matrices": bool(full_matrices)}))


def svdvals(A: Tensor, *, driver: Any = None, out: Any = None) -> Tensor:
    """Singular values, descending. Mirrors: ``torch.linalg.svdvals``."""
    _check(A, "svdvals")
    return bind(SVD, (A,), {"full_matrices": False})[1]


def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """``A = Q R``. Mirrors: ``torch.linalg.qr``."""
    _check(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return _QR(bind(QR, (A,), {"mode": mode}))


def _tolerance(S: Tensor, shape: tuple, atol: Any, rtol: Any, smax: Tensor) -> Tensor:
    atol_t = 0.0 if atol is None else atol
    if rtol is None:
        eps = float(np.finfo(str(S.dtype).split(".")[-1]).eps)
        rtol = eps * max(shape[-2:]) if (atol is None or _is_zero(atol)) else 0.0
    return (smax * rtol).clamp_min(atol_t) if not isinstance(atol_t, Tensor) else \
        (smax * rtol).maximum(atol_t)


def _is_zero(x: Any) -> bool:
    return not isinstance(x, Tensor) and x == 0


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
         out: Any = None) -> Tensor:
    """Moore-Penrose pseudo-inverse through the SVD.

    Mirrors: ``torch.linalg.pinv``.
    """
    _check(A, "pinv")
    # hermitian: the SVD path too (the singular values of a symmetric matrix are its
    # eigenvalues' magnitudes), so the gradient is PyTorch's generic one, not a symmetric one
    U, S, Vh = linalg_svd(A, full_matrices=False)
    smax = S[..., :1] if S.shape[-1] else S.new_zeros(S.shape[:-1] + (1,))
    keep = S > _tolerance(S, tuple(A.shape), atol, rtol, smax)
    Sinv = (1 / S.where(keep, 1.0)).where(keep, 0.0)
    return (Vh.transpose(-2, -1) * Sinv.unsqueeze(-2)) @ U.transpose(-2, -1)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """Mirrors: ``torch.pinverse`` (``linalg.pinv`` with ``rtol=rcond``)."""
    return pinv(input, rtol=rcond)


def linalg_matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                       rtol: Any = None, out: Any = None) -> Tensor:
    """Number of singular values above the tolerance. Mirrors: ``torch.linalg.matrix_rank``."""
    _check(A, "matrix_rank")
    for name, v in (("tol", tol), ("atol", atol), ("rtol", rtol)):
        if v is not None and not isinstance(v, (int, float, Tensor)):  # PyTorch's parser
            raise TypeError(f"linalg_matrix_rank() received an invalid combination of "
                            f"arguments - got (Tensor, {name}={type(v).__name__})")
    if tol is not None:
        atol, rtol = tol, 0.0
    A = A.detach()
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.new_zeros(S.shape[:-1] + (1,))
    return (S > _tolerance(S, tuple(A.shape), atol, rtol, smax)).sum(-1)


def lstsq(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch (``torch.linalg.lstsq`` replaces it). Mirrors: ``torch.lstsq``."""
    raise RuntimeError(_REMOVED["lstsq"])


def linalg_lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:
    """Least-squares solution of ``A X = B`` (through the pseudo-inverse; the default driver
    ``gelsy`` of a CPU build returns empty residuals and singular values).

    Mirrors: ``torch.linalg.lstsq``.
    """
    _check(A, "lstsq")
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if B.dim() < 1 or A.shape[-2] != B.shape[-2 if B.dim() >= 2 else -1]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    vector = B.dim() == A.dim() - 1
    rhs = B.unsqueeze(-1) if vector else B
    X = pinv(A, rtol=rcond) @ rhs
    rank = linalg_matrix_rank(A, rtol=rcond)
    driver = driver or "gelsy"
    empty = A.new_zeros(0)
    sv = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    m, n = A.shape[-2], A.shape[-1]
    res = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        res = ((A @ X - rhs) ** 2).sum(-2)
    if driver == "gels":
        rank = rank.new_zeros(0)
    return _LSTSQ((X.squeeze(-1) if vector else X, res, rank, sv))


def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    """Condition number. Mirrors: ``torch.linalg.cond``."""
    from hookgrad.linalg import matrix_norm

    if p is None or p in (2, -2):
        S = svdvals(A)
        big, small = S[..., 0], S[..., -1]
        return small / big if p == -2 else big / small
    _check(A, "cond", square=True)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """Inverse and ``info`` (0, or k when the k-th pivot of the LU factor is zero).

    Mirrors: ``torch.linalg.inv_ex``.
    """
    _check(A, "inv", square=True)
    try:
        return _INV_EX((inv(A), Tensor._make(np.zeros(A.shape[:-2], dtype=np.int32))))
    except RuntimeError:
        if check_errors:
            raise
    info = np.ones(A.shape[:-2], dtype=np.int32)
    return _INV_EX((A.detach().new_full(A.shape, math.nan), Tensor._make(info)))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> Any:
    """Solution of ``A X = B`` and ``info``. Mirrors: ``torch.linalg.solve_ex``."""
    return _SOLVE_EX((solve(A, B, left=left), Tensor._make(np.zeros(A.shape[:-2],
                                                                      dtype=np.int32))))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """Mirrors: ``torch.triangular_solve`` (deprecated; returns the solution and a copy of A)."""
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                  "release.", UserWarning, stacklevel=2)
    M = A.transpose(-2, -1) if transpose else A
    X = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return _TRI((X, A.clone()))


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """Solve ``A X = B`` given A's Cholesky factor. Mirrors: ``torch.cholesky_solve``."""
    # PyTorch's gradient w.r.t. the factor is not restricted to its triangle: the product
    # form gives the same full gradient
    Lt = L.transpose(-2, -1)
    return solve(Lt @ L if upper else L @ Lt, B)


def cholesky_inverse(L: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """``A^{-1}`` given A's Cholesky factor. Mirrors: ``torch.cholesky_inverse``."""
    Lt = L.transpose(-2, -1)
    return inv(Lt @ L if upper else L @ Lt)


def tensorinv(A: Tensor, ind: int = 2, *, out: Any = None) -> Tensor:
    """Inverse for ``tensordot`` over the first `ind` dims. Mirrors: ``torch.linalg.tensorinv``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(tail + head)


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Any = None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) == B``. Mirrors: ``torch.linalg.tensorsolve``."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        rest = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(rest + dims)
    xshape = tuple(A.shape[B.dim():])
    n = math.prod(xshape)
    return solve(A.reshape(-1, n), B.reshape(-1)).reshape(xshape)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """``(U, S, V)`` with V (not Vh); zero U, V without `compute_uv`. Mirrors: ``torch.svd``."""
    if not compute_uv:
        S = svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        z = input.detach().new_zeros
        return _TSVD((z(input.shape[:-2] + (m, m)), S, z(input.shape[:-2] + (n, n))))
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    return _TSVD((U, S, Vh.transpose(-2, -1)))


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """Mirrors: ``torch.qr`` (deprecated; ``some`` picks ``'reduced'`` or ``'complete'``)."""
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                  "future PyTorch release.\nThe boolean parameter 'some' has been replaced with "
                  "a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced "
                  "with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
                  UserWarning, stacklevel=2)
    return _TQR(tuple(linalg_qr(input, "reduced" if some else "complete")))


_REMOVED = {
    "matrix_rank": "This function was deprecated since version 1.9 and is now removed.\nPlease "
    "use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed "
    "in `torch.linalg.matrix_rank()` to 'hermitian'.",
    "symeig": "This function was deprecated since version 1.9 and is now removed. The default "
    "behavior has changed from using the upper triangular portion of the matrix by default to "
    "using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
    "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
    "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "eig": "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
    "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking "
    "complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
    "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be "
    "replaced with:\nL_complex, V_complex = torch.linalg.eig(A)",
    "lstsq": "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` "
    "is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
    "arguments and does not return the QR decomposition in the returned tuple (although it "
    "returns other information about the problem).\n\nTo get the QR decomposition consider "
    "using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of "
    "the solution in the last m - n columns of the returned value whenever m > n. In "
    "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
    "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "solve": "This function was deprecated since version 1.9 and is now removed. `torch.solve` "
    "is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
    "reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
    "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = "
    "torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)",
}


def matrix_rank(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch; raises as PyTorch does. Mirrors: ``torch.matrix_rank``."""
    raise RuntimeError(_REMOVED["matrix_rank"])


def symeig(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch; raises as PyTorch does. Mirrors: ``torch.symeig``."""
    raise RuntimeError(_REMOVED["symeig"])


def eig(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch; raises as PyTorch does. Mirrors: ``torch.eig``."""
    raise RuntimeError(_REMOVED["eig"])


def _removed_solve(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch; raises as PyTorch does. Mirrors: ``torch.solve``."""
    raise RuntimeError(_REMOVED["solve"])


TORCH = {"solve": _removed_solve}
LINALG = {"eigh": eigh, "eigvalsh": eigvalsh, "svd": linalg_svd, "svdvals": svdvals,
          "qr": linalg_qr, "pinv": pinv, "matrix_rank": linalg_matrix_rank,
          "lstsq": linalg_lstsq, "cond": cond, "cholesky_ex": cholesky_ex, "inv_ex": inv_ex,
          "solve_ex": solve_ex, "solve_triangular": solve_triangular, "tensorinv": tensorinv,
          "tensorsolve": tensorsolve}
