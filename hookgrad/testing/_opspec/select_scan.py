"""OpSpecs: the ops recorded as one node of their own (``hookgrad/_ops/select_scan.py``):
selections, scans, ``rot90``, ``masked_scatter``, ``index_copy``/``index_fill``, ``unique``."""

from __future__ import annotations

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec.indexing import const, x


def _mask(lib, t):
    return (lib.arange(t.numel()).reshape(t.shape) % 3) == 0


SPECS = [
    OpSpec("kthvalue", lambda lib, t: lib.kthvalue(t, 2, 1).values,
           [Sample((x((3, 4)),), name="rows")], prims=("kthvalue",)),
    OpSpec("median", lambda lib, t: lib.median(t), [Sample((x((3, 4)),), name="all")],
           prims=("median",)),
    OpSpec("median_dim", lambda lib, t: lib.median(t, 0, keepdim=True).values,
           [Sample((x((3, 4)),), name="cols")], prims=("median_dim",)),
    OpSpec("cummax", lambda lib, t: lib.cummax(t, 1).values, [Sample((x((3, 4)),), name="rows")],
           prims=("cummax",)),
    OpSpec("cummin", lambda lib, t: lib.cummin(t, 0).values, [Sample((x((3, 4)),), name="cols")],
           prims=("cummin",)),
    # (gradgradcheck off: the second derivative in the input through gradients of both signs
    # differs from PyTorch's, an open difference listed in docs/fuzzing.md)
    OpSpec("logcumsumexp", lambda lib, t: lib.logcumsumexp(t, 1),
           [Sample((x((3, 4)),), name="rows")], prims=("logcumsumexp",), gradgradcheck=False),
    OpSpec("rot90", lambda lib, t, k: lib.rot90(t, k),
           [Sample((x((3, 4)), const(k)), name=f"k{k}") for k in (0, 1, 2, 3)],
           prims=("rot90",)),
    OpSpec("masked_scatter", lambda lib, t, s: t.masked_scatter(_mask(lib, t), s),
           [Sample((x((3, 4)), x((5,))), name="source")], prims=("masked_scatter",)),
    OpSpec("index_copy", lambda lib, t, s: t.index_copy(1, lib.tensor([3, 0]), s),
           [Sample((x((3, 4)), x((3, 2))), name="cols")], prims=("index_copy",)),
    OpSpec("index_fill", lambda lib, t: t.index_fill(1, lib.tensor([3, 0]), -1.5),
           [Sample((x((3, 4)),), name="scalar")], prims=("index_fill",)),
    OpSpec("index_fill_tensor", lambda lib, t, v: t.index_fill(0, lib.tensor([2, 0, 2]), v),
           [Sample((x((3, 4)), x(())), name="tensor")], prims=("index_fill_tensor",)),
    OpSpec("unique", lambda lib, t: lib.unique(t), [Sample((Arg((6,)),), name="values")],
           prims=("_unique2",), gradcheck=False, gradgradcheck=False, forward_ad=False),
    OpSpec("unique_dim", lambda lib, t: lib.unique(t, dim=1),
           [Sample((Arg((2, 3)),), name="dim")], prims=("unique_dim",), gradcheck=False,
           gradgradcheck=False, forward_ad=False),
]
