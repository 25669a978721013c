"""OpSpecs: ``linalg.inv``, ``det``, ``slogdet`` (its log-|det| output), ``cholesky``.

Inputs are made well conditioned (``A + 4 I``; ``B B^T + 3 I`` for Cholesky) so the numerical
gradient checks are stable.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _shift(lib: Any, a: Any) -> Any:
    return a + 4 * lib.eye(a.shape[-1], dtype=a.dtype)


def _spd(lib: Any, b: Any) -> Any:
    return b @ b.transpose(-2, -1) + 3 * lib.eye(b.shape[-1], dtype=b.dtype)


_SQUARE = [Sample((Arg((3, 3)),), {}, "matrix"), Sample((Arg((2, 2, 2)),), {}, "batch")]

SPECS = [
    OpSpec("linalg_inv", lambda lib, a: lib.linalg.inv(_shift(lib, a)), samples=_SQUARE,
           prims=("linalg_inv_ex",)),
    OpSpec("linalg_det", lambda lib, a: lib.linalg.det(_shift(lib, a)), samples=_SQUARE,
           prims=("linalg_det",)),
    OpSpec("linalg_slogdet", lambda lib, a: lib.linalg.slogdet(_shift(lib, a))[1],
           samples=_SQUARE, prims=("linalg_logabsdet", "_linalg_det_sign")),
    # one 2-D sample: a batched ``B B^T`` goes through matmul's batch folding, whose view node
    # names are matmul's business, not Cholesky's
    OpSpec("linalg_cholesky", lambda lib, b: lib.linalg.cholesky(_spd(lib, b)),
           samples=_SQUARE[:1], prims=("linalg_cholesky_ex",)),
]

SPECS += [
    # no derivative in PyTorch (a raising NotImplemented node): forward values only
    OpSpec("linalg_ldl_factor_ex", lambda lib, a: lib.linalg.ldl_factor_ex(a + a.mT).LD,
           [Sample((Arg((4, 4), requires_grad=False),), name="4x4"),
            Sample((Arg((2, 3, 3), requires_grad=False),), name="batched")],
           prims=("linalg_ldl_factor_ex",), gradcheck=False, gradgradcheck=False,
           forward_ad=False),
    OpSpec("linalg_ldl_solve", lambda lib, a, b: lib.linalg.ldl_solve(
        *lib.linalg.ldl_factor(a + a.mT + 6 * lib.eye(4, dtype=a.dtype, device=a.device)), b),
           [Sample((Arg((4, 4), requires_grad=False), Arg((4, 2), requires_grad=False)),
                   name="4x4")],
           prims=("linalg_ldl_solve",), gradcheck=False, gradgradcheck=False,
           forward_ad=False, atol=1e-4),
]
