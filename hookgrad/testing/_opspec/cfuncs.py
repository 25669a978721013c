"""OpSpecs: ``scatter_reduce``, ``index_reduce`` and ``put`` (issue 21's census batch).

Random float sources make ties and zeros improbable, so the generic gradchecks see the smooth
part of amax/amin/prod; tests/ops/test_cfuncs_scatter.py checks ties and zeros against torch.
"""

from __future__ import annotations

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec.indexing import const, ints, x

SPECS = [
    OpSpec(
        "scatter_reduce",
        lambda lib, t, i, src, reduce, include_self: t.scatter_reduce(
            1, i, src, reduce, include_self=include_self),
        [Sample((x((3, 4), low=0.5), ints((3, 5), 4), x((3, 5), low=0.5), const(r), const(inc)),
                name=f"{r}_{inc}")
         for r in ("sum", "mean", "amax", "amin") for inc in (True, False)],
        prims=("scatter_reduce",),
    ),
    OpSpec(
        "scatter_reduce_prod",
        lambda lib, t, i, src, include_self: t.scatter_reduce(
            1, i, src, "prod", include_self=include_self),
        [Sample((x((3, 4), low=0.5), ints((3, 5), 4), x((3, 5), low=0.5), const(inc)),
                name=f"prod_{inc}") for inc in (True, False)],
        prims=("scatter_reduce",),
        forward_ad=False,  # PyTorch leaves prod's forward-mode tangent undefined
    ),
    OpSpec(
        "index_reduce",
        lambda lib, t, i, src, reduce: t.index_reduce(0, i, src, reduce),
        [Sample((x((4, 3), low=0.5), ints((5,), 4), x((5, 3), low=0.5), const(r)), name=r)
         for r in ("prod", "mean", "amax", "amin")],
        prims=("index_reduce",),
        forward_ad=False,  # PyTorch raises NotImplementedError for index_reduce's JVP
    ),
    OpSpec(
        "put",
        lambda lib, t, i, src, accumulate: t.put(i, src, accumulate),
        [Sample((x((3, 4)), Arg((2, 2), dtype="int64", low=0, high=12, requires_grad=False,
                                make=lambda rng: rng.permutation(12)[:4].reshape(2, 2)),
                 x((2, 2)), const(False)), name="put"),
         Sample((x((3, 4)), ints((5,), 12), x((5,)), const(True)), name="accumulate")],
        prims=("put",),
    ),
]

SPECS += [
    OpSpec("mode", lambda lib, t: lib.mode(t, 1).values, [Sample((x((3, 4)),), name="rows")],
           prims=("mode",)),
    OpSpec("nanmedian_dim", lambda lib, t: lib.nanmedian(t, 0, keepdim=True).values,
           [Sample((x((3, 4)),), name="cols")], prims=("nanmedian_dim",)),
    OpSpec("nanmedian", lambda lib, t: lib.nanmedian(t), [Sample((x((3, 4)),), name="all")],
           prims=("nanmedian",)),
    OpSpec("frexp", lambda lib, t: lib.frexp(t).mantissa, [Sample((x((3, 4)),), name="m")],
           prims=("frexp",)),
    OpSpec("unique_consecutive", lambda lib, t: lib.unique_consecutive(t),
           [Sample((Arg((6,), requires_grad=False),), name="const")],
           prims=("unique_consecutive",), gradcheck=False, gradgradcheck=False,
           forward_ad=False),
]

# the in-place view methods run on ``t * 1`` so that the leaf may require grad
SPECS += [
    OpSpec(f"inplace_view_{n}", fn, [Sample((x(shape),), name=n)], prims=(prim,))
    for n, fn, shape, prim in [
        ("squeeze_", lambda lib, t: (t * 1).squeeze_(), (3, 1, 2), "squeeze_"),
        ("squeeze_dim", lambda lib, t: (t * 1).squeeze_(1), (3, 1, 2), "squeeze_dim_"),
        ("squeeze_dims", lambda lib, t: (t * 1).squeeze_((1, 2)), (3, 1, 1), "squeeze_dims_"),
        ("unsqueeze_", lambda lib, t: (t * 1).unsqueeze_(1), (3, 2), "unsqueeze_"),
        ("transpose_", lambda lib, t: (t * 1).transpose_(0, 1), (3, 2), "transpose_"),
        ("t_", lambda lib, t: (t * 1).t_(), (3, 2), "t_"),
        ("as_strided_", lambda lib, t: (t * 1).as_strided_((2, 2), (1, 2), 1), (6,),
         "as_strided_"),
    ]
]


def _well_conditioned(n: int) -> Arg:
    """A square matrix with a dominant diagonal (distinct pivots, no near-singular U)."""
    return Arg((n, n), make=lambda rng: rng.uniform(-1, 1, (n, n)) + np.diag(
        np.arange(n, 0, -1) * 3.0))


SPECS += [
    OpSpec("linalg.lu_factor_ex", lambda lib, a: lib.linalg.lu_factor_ex(a).LU,
           [Sample((_well_conditioned(3),), name="square")], prims=("linalg_lu_factor_ex",)),
    OpSpec("linalg.lu", lambda lib, a: lib.linalg.lu(a)[1:],
           [Sample((_well_conditioned(3),), name="square")], prims=("linalg_lu",)),
    OpSpec("lu_unpack", lambda lib, a: lib.lu_unpack(a, lib.tensor([1, 2, 3],
                                                                    dtype=lib.int32))[1:],
           [Sample((x((3, 3)),), name="identity_pivots")], prims=("lu_unpack",)),
    OpSpec("linalg.lu_solve", lambda lib, a, b: lib.linalg.lu_solve(
        a, lib.tensor([1, 2, 3], dtype=lib.int32), b),
        [Sample((_well_conditioned(3), x((3, 2))), name="identity_pivots")],
        prims=("linalg_lu_solve",)),
]

SPECS += [
    OpSpec("special.zeta", lambda lib, s, q: lib.special.zeta(s, q),
           [Sample((Arg((3, 2), low=1.5, high=4.0, requires_grad=False), x((3, 2), low=0.5)),
                   name="q_grad")],
           prims=("special_zeta",), forward_ad=False),  # PyTorch: no forward mode
]
