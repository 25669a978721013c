"""``torch.linalg.solve_triangular`` and ``torch.linalg.cholesky_ex`` over the op table.

Mirrors: ``torch.linalg.solve_triangular``, ``torch.linalg.cholesky_ex``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._dispatch import bind
from hookgrad._functional.linalg_decomp import LinAlgError, _square
from hookgrad._ops.linalg_decomp import CHOLESKY
from hookgrad._ops.linalg_triangular import SOLVE_TRIANGULAR
from hookgrad._tensor import Tensor
from hookgrad.return_types import _make

__all__ = ["cholesky_ex", "solve_triangular"]

_CHOLESKY_EX = _make("linalg_cholesky_ex", ("L", "info"))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Any = None) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` when not `left`) for triangular `A`.

    Only the triangle of `A` named by `upper` is read (its diagonal as ones when
    `unitriangular`).

    Mirrors: ``torch.linalg.solve_triangular``.
    """
    if not isinstance(left, bool):  # PyTorch's parser
        raise TypeError(f"linalg_solve_triangular(): argument 'left' must be bool, not "
                        f"{type(left).__name__}")
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg_solve_triangular(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
        if t.dim() < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have at "
                               f"least 2 dimensions.")
    _square(A, "solve_triangular")
    k = B.shape[-2] if left else B.shape[-1]
    if k != A.shape[-1]:
        shape_a, shape_b = "x".join(map(str, A.shape)), "x".join(map(str, B.shape))
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({shape_a} and {shape_b})")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {A.dtype} and B of type {B.dtype} instead")
    return bind(SOLVE_TRIANGULAR, (A, B), {"upper": bool(upper), "left": bool(left),
                                           "unitriangular": bool(unitriangular)})


def _first_failing_minor(a: np.ndarray) -> int:
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> Any:
    """``(L, info)``: the Cholesky factor and, per matrix, 0 or the order of the first leading
    minor that is not positive-definite (``L`` is then unspecified, as in PyTorch).

    Mirrors: ``torch.linalg.cholesky_ex``.
    """
    _square(A, "cholesky")
    data = np.asarray(A.detach().numpy()) if A._data.dtype.kind == "f" else None
    flat = data.reshape((-1,) + data.shape[-2:]) if data is not None else None
    infos = np.array([_first_failing_minor(m) for m in flat], dtype=np.int32) \
        if flat is not None else np.zeros(0, np.int32)
    info = Tensor._make(infos.reshape(A.shape[:-2]))
    if infos.any():
        if check_errors:
            order = int(infos[infos > 0][0])
            raise LinAlgError(f"linalg.cholesky_ex: The factorization could not be completed "
                              f"because the input is not positive-definite (the leading minor "
                              f"of order {order} is not positive-definite).")
        L = A.new_zeros(A.shape)
        return _CHOLESKY_EX((L, info))
    L = bind(CHOLESKY, (A,), {})
    return _CHOLESKY_EX((L.mT if upper else L, info))
