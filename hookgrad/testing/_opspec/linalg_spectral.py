"""OpSpecs: ``linalg.eigh``, ``linalg.svd``, ``linalg.qr``.

Eigen and singular vectors are defined up to sign, so the specs return sign-invariant
functions of them (squares scaled by the values); QR's Householder convention is the same in
both libraries, so its factors are compared directly.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _eigh(lib: Any, a: Any) -> Any:
    L, V = lib.linalg.eigh(a + a.transpose(-2, -1))
    return V * V * L.unsqueeze(-2)


def _svd(lib: Any, a: Any) -> Any:
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return lib.cat([(U * U * S.unsqueeze(-2)).flatten(-2), (Vh * Vh).flatten(-2)], -1)


def _qr(lib: Any, a: Any) -> Any:
    Q, R = lib.linalg.qr(a)
    return lib.cat([Q.flatten(-2), R.flatten(-2)], -1)


_SQ = [Sample((Arg((3, 3)),), {}, "matrix"), Sample((Arg((2, 3, 3)),), {}, "batch")]
_RECT = [Sample((Arg((4, 3)),), {}, "tall"), Sample((Arg((2, 3, 4)),), {}, "wide")]

SPECS = [
    OpSpec("linalg_eigh", _eigh, samples=_SQ, prims=("linalg_eigh",)),
    OpSpec("linalg_svd", _svd, samples=_RECT, prims=("linalg_svd",)),
    OpSpec("linalg_qr", _qr, samples=_RECT, prims=("linalg_qr",)),
]
