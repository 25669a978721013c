"""`parametrizations.orthogonal`: a weight constrained to be orthogonal (or a batch of them).

As PyTorch: the weight is the image of an unconstrained matrix under ``matrix_exp`` (of its
skew-symmetric part), the Cayley map, or a product of Householder reflections; with
``use_trivialization`` (default) that image multiplies a ``base`` buffer, and registering
stores ``base`` = the orthogonalised initial weight and ``original = -I``, so the weight starts
where it was.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._functional import matrix_ops as _mo
from hookgrad._functional import random as _random
from hookgrad._functional import shape as _shape
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules.module import Module
from hookgrad.nn.utils import parametrize

__all__ = ["orthogonal"]


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eps = 10.0 * n * float(np.finfo(q.detach().numpy().dtype).eps)
    gram = (q.transpose(-2, -1) @ q).detach().numpy()  # type: ignore[operator]
    return bool(np.allclose(gram, np.eye(k), atol=eps, rtol=1e-5))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A's QR decomposition with a non-negative R diagonal (PyTorch's convention)."""
    q, r = np.linalg.qr(a.detach().numpy())
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return _creation.tensor(np.ascontiguousarray(q * signs))


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)  # type: ignore[attr-defined]
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # type: ignore[attr-defined]
            if n != k:
                pad = X.new_zeros(n, n - k).expand(*tuple(X.shape)[:-2], -1, -1)  # type: ignore
                X = _shape.cat([X, pad], -1)
            A = X - X.transpose(-2, -1)  # type: ignore[attr-defined,operator]
            if self.orthogonal_map == _OrthMaps.cayley:
                eye = _creation.eye(n, dtype=A.dtype)
                Q = _mo.solve(eye - 0.5 * A, eye + 0.5 * A)  # type: ignore[operator]
            else:
                Q = _mo.matrix_exp(A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)  # type: ignore[attr-defined]
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))  # type: ignore[operator,attr-defined]
            Q = _mo.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)  # type: ignore
        if hasattr(self, "base"):
            Q = self.base @ Q  # type: ignore[operator]
        return Q.transpose(-2, -1) if transposed else Q  # type: ignore[attr-defined]

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        if n < k:
            Q = Q.transpose(-2, -1)  # type: ignore[attr-defined]
            n, k = k, n
        if not hasattr(self, "base"):
            raise NotImplementedError("hookgrad: orthogonal with use_trivialization=False needs "
                                      "geqrf, which hookgrad does not have")
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()  # type: ignore
        else:
            extra = _random.randn(*(tuple(Q.shape)[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_shape.cat([Q, extra], -1))
        self.base = Q.to(q_init.dtype)  # type: ignore[attr-defined]
        neg_id = _creation.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)  # type: ignore[attr-defined]
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` to orthogonal matrices (see the module docstring).

    Raises:
        ValueError: no such tensor, fewer than 2 dims, or an unknown map.

    Mirrors: ``torch.nn.utils.parametrizations.orthogonal`` (all three maps with
    trivialization; ``use_trivialization=False`` raises NotImplementedError: it needs ``geqrf``).
    """
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
