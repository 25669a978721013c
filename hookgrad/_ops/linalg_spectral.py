"""Symmetric eigendecomposition, singular value decomposition and QR, with derivative rules.

Layer 3. Forward on the array namespace's ``linalg``; the backward rules are written with
differentiable tensor ops (and `bind` of the inverse primitive), so higher derivatives work.
The formulas are PyTorch's (real case):

- ``linalg_eigh`` (``LinalgEighBackward0``), ``A = V diag(L) V^T``:
  ``gA = V (diag(gL) + skew(V^T gV) / E) V^T``, ``skew(X) = (X - X^T) / 2``, with ``E_ij = L_j - L_i`` off the diagonal.
- ``linalg_svd`` (``LinalgSvdBackward0``), ``A = U diag(S) Vh``: the skew parts of ``U^T gU``
  and ``V^T gV`` divided by ``E_ij = S_j^2 - S_i^2``, plus the terms of the non-square side.
- ``linalg_qr`` (``LinalgQrBackward0``), ``A = Q R``: for ``m >= n``,
  ``gA = [gQ + Q syminvadj(triu(gR R^T - Q^T gQ))] R^{-T}``; for ``m < n`` the leading square
  block is differentiated as above and the trailing columns as ``Q^T Y``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops._host_kernel import on_host
from hookgrad._ops.linalg_decomp import INV
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import cat_tensors
from hookgrad._tensor import Tensor

__all__ = ["EIGH", "SVD", "QR"]


def _t(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _fill_diag(x: Tensor, value: float) -> Tensor:
    eye = x.new_ones(x.shape[-1]).diag()
    return x * (1 - eye) + value * eye


def _colmajor(x: Any) -> Any:
    """Each matrix column-major, batches outermost: the layout LAPACK results have in PyTorch."""
    xp = namespace_of(x)
    return xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(x, -1, -2)), -1, -2)


def _eigh_impl(a: Any, UPLO: str = "L") -> Any:
    xp = namespace_of(a)
    w, v = xp.linalg.eigh(a, UPLO=UPLO)
    return xp.ascontiguousarray(w), _colmajor(v)


def _eigh_vjp(grads: tuple, result0: Tensor, result1: Tensor) -> Tensor:
    gL, gV = grads
    L, V = result0, result1
    if gV is None:
        return V @ (gL.unsqueeze(-1) * _t(V))
    E = _fill_diag(L.unsqueeze(-2) - L.unsqueeze(-1), 1.0)
    VhgV = _t(V) @ gV
    # the eigenvectors' gradient is projected onto the skew-symmetric matrices first
    inner = _fill_diag(0.5 * (VhgV - _t(VhgV)) / E, 0.0)
    if gL is not None:
        inner = inner + gL.diag_embed()
    return V @ inner @ _t(V)


def _eigh_jvp(t: Tensor, result0: Tensor, result1: Tensor) -> tuple:
    L, V = result0, result1
    P = _t(V) @ t @ V
    E = _fill_diag(L.unsqueeze(-2) - L.unsqueeze(-1), 1.0)
    return P.diagonal(0, -2, -1), V @ _fill_diag(P / E, 0.0)


EIGH = defop(
    "linalg_eigh",
    impl=on_host(_eigh_impl),
    inputs=("A",),
    params=("UPLO",),
    num_outputs=2,
    saves=("result0", "result1"),
    node_name="LinalgEighBackward0",
    vjp={"A": _eigh_vjp},
    jvp={"A": _eigh_jvp},
)


def _svd_impl(a: Any, full_matrices: bool = True) -> Any:
    xp = namespace_of(a)
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return _colmajor(u), xp.ascontiguousarray(s), _colmajor(vh)


def _svd_core(gU: Any, gS: Any, gVh: Any, U: Tensor, S: Tensor, Vh: Tensor) -> Tensor:
    """PyTorch's svd_backward for real inputs (reduced U, Vh: k = min(m, n) columns/rows)."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    V, gV = _t(Vh), (None if gVh is None else _t(gVh))
    S2 = S * S
    E = _fill_diag(S2.unsqueeze(-2) - S2.unsqueeze(-1), 1.0)
    gA = 0
    if gU is not None:
        UhgU = _t(U) @ gU
        gA = (UhgU - _t(UhgU)) * S.unsqueeze(-2) / E
    if gV is not None:
        VhgV = _t(V) @ gV
        gA = gA + S.unsqueeze(-1) * (VhgV - _t(VhgV)) / E
    if gS is not None:
        gA = gA + gS.diag_embed()
    if m > n and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        gA = U @ gA + gUSinv - U @ (_t(U) @ gUSinv)
        return gA @ Vh
    if m < n and gV is not None:
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA @ Vh + _t(gVSinv) - (_t(gVSinv) @ V) @ Vh
        return U @ gA
    return U @ gA @ Vh


def _svd_vjp(grads: tuple, result0: Tensor, result1: Tensor, result2: Tensor,
             full_matrices: bool) -> Tensor:
    gU, gS, gVh = grads
    U, S, Vh = result0, result1, result2
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    if gS is None:
        gS = S.new_zeros(S.shape) if (gU is None and gVh is None) else None
    return _svd_core(gU, gS, gVh, U, S, Vh)


def _svd_jvp(t: Tensor, result0: Tensor, result1: Tensor, result2: Tensor,
             full_matrices: bool) -> tuple:
    U, S, Vh = result0, result1, result2
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError("linalg.svd: forward-mode derivatives of full_matrices=True "
                                  "need square inputs; use full_matrices=False")
    V = _t(Vh)
    dP = _t(U) @ t @ V
    S2 = S * S
    E = _fill_diag(S2.unsqueeze(-2) - S2.unsqueeze(-1), 1.0)
    dU = U @ _fill_diag((dP * S.unsqueeze(-2) + S.unsqueeze(-1) * _t(dP)) / E, 0.0)
    dV = V @ _fill_diag((S.unsqueeze(-1) * dP + _t(dP) * S.unsqueeze(-2)) / E, 0.0)
    if m > k:
        dU = dU + (t @ V - U @ dP) / S.unsqueeze(-2)
    if n > k:
        dV = dV + (_t(t) @ U - V @ _t(dP)) / S.unsqueeze(-2)
    return dU, dP.diagonal(0, -2, -1), _t(dV)


SVD = defop(
    "linalg_svd",
    impl=on_host(_svd_impl),
    inputs=("A",),
    params=("full_matrices",),
    num_outputs=3,
    saves=("result0", "result1", "result2"),
    node_name="LinalgSvdBackward0",
    vjp={"A": _svd_vjp},
    jvp={"A": _svd_jvp},
)


def _qr_impl(a: Any, mode: str = "reduced") -> Any:
    xp = namespace_of(a)
    if mode == "r":
        r = xp.linalg.qr(a, mode="r")
        return xp.zeros((0,), dtype=a.dtype), _colmajor(r)
    q, r = xp.linalg.qr(a, mode=mode)
    return _colmajor(q), _colmajor(r)


def _syminvadj(x: Tensor) -> Tensor:
    ret = x + _t(x)
    eye = x.new_ones(x.shape[-1]).diag()
    return ret - 0.5 * ret * eye


def _qr_tall(gQ: Any, gR: Any, Q: Tensor, R: Tensor) -> Tensor:
    gA = gR @ _t(R) if gR is not None else Q.new_zeros(R.shape[:-2] + (R.shape[-2],) * 2)
    if gQ is not None:
        gA = gA - _t(Q) @ gQ
    gA = Q @ _syminvadj(gA.triu())
    if gQ is not None:
        gA = gA + gQ
    return gA @ _t(bind(INV, (R,), {}))


def _qr_vjp(grads: tuple, A_shape: Any, result0: Tensor, result1: Tensor, mode: str) -> Tensor:
    gQ, gR = grads
    Q, R = result0, result1
    m, n = A_shape[-2], A_shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if m >= n:
        return _qr_tall(gQ, gR, Q, R)
    # A = [X | Y] with X square: R = [Rx | Q^T Y], so Y's gradient is Q gRy and Q gets Y gRy^T
    Y = Q @ R[..., m:]  # A's trailing columns, from the saved factors (PyTorch saves no A)
    gRx = None if gR is None else gR[..., :m]
    if gR is not None:
        gRy = gR[..., m:]
        gY = Q @ gRy
        gQ = Y @ _t(gRy) if gQ is None else gQ + Y @ _t(gRy)
    else:
        gY = Q.new_zeros(Y.shape)
    gX = _qr_tall(gQ, gRx, Q, R[..., :m])
    return cat_tensors([gX, gY], gX.dim() - 1)


def _qr_tall_jvp(dA: Tensor, Q: Tensor, R: Tensor) -> tuple:
    Rinv = bind(INV, (R,), {})
    C = _t(Q) @ dA @ Rinv
    low = C.tril(-1)
    omega = low - _t(low)
    dR = (C - omega).triu() @ R
    return dA @ Rinv - Q @ (C - omega), dR


def _qr_jvp(t: Tensor, A_shape: Any, result0: Tensor, result1: Tensor, mode: str) -> tuple:
    Q, R = result0, result1
    m, n = A_shape[-2], A_shape[-1]
    if mode == "r" or (mode == "complete" and m > n):
        raise RuntimeError("linalg.qr: forward-mode derivatives need mode='reduced' (or "
                           "'complete' with nrows <= ncols)")
    if m >= n:
        return _qr_tall_jvp(t, Q, R)
    dQ, dRx = _qr_tall_jvp(t[..., :m], Q, R[..., :m])
    dRy = _t(dQ) @ (Q @ R[..., m:]) + _t(Q) @ t[..., m:]
    return dQ, cat_tensors([dRx, dRy], dRx.dim() - 1)


QR = defop(
    "linalg_qr",
    impl=on_host(_qr_impl),
    inputs=("A",),
    params=("mode",),
    num_outputs=2,
    saves=("result0", "result1"),
    node_name="LinalgQrBackward0",
    vjp={"A": _qr_vjp},
    jvp={"A": _qr_jvp},
)
