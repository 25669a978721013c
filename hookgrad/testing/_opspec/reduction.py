"""OpSpecs: reductions, scans and value-selecting ops (sum ... topk).

Inputs of value-selecting ops are built without ties (`_distinct`), so the gradient does not
depend on which tied element an implementation picks; ties are tested against PyTorch in
``tests/ops/test_reduction_ties.py``. Products get inputs bounded away from zero, plus samples
with exact zeros to reach PyTorch's zero-safe formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _distinct(shape: tuple[int, ...], scale: float = 0.37) -> Callable[..., np.ndarray]:
    """Values at least `scale` apart: no ties for max/sort/topk."""

    def make(rng: np.random.Generator) -> np.ndarray:
        n = int(np.prod(shape)) if shape else 1
        vals = (rng.permutation(n) - n / 2) * scale + rng.uniform(-0.05, 0.05)
        return vals.reshape(shape).astype(np.float64)

    return make


def _away_from_zero(shape: tuple[int, ...], zeros: tuple = ()) -> Callable[..., np.ndarray]:
    """|x| in [0.5, 1.5] with random signs; the flat positions in `zeros` set to exactly 0."""

    def make(rng: np.random.Generator) -> np.ndarray:
        x = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 1.5, size=shape)
        flat = x.reshape(-1)
        for z in zeros:
            flat[z] = 0.0
        return flat.reshape(shape)

    return make


def _with_nan(shape: tuple[int, ...]) -> Callable[..., np.ndarray]:
    """Uniform values with a NaN at flat positions 1 and 6 (nan-aware reductions)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        x = rng.uniform(-2, 2, size=shape)
        x.reshape(-1)[[1, 6]] = np.nan
        return x

    return make


def _x(shape: tuple[int, ...], **kw: Any) -> tuple[Arg, ...]:
    return (Arg(shape, **kw),)


def _dx(shape: tuple[int, ...]) -> tuple[Arg, ...]:
    return (Arg(shape, make=_distinct(shape)),)


def _nz(shape: tuple[int, ...], zeros: tuple = ()) -> tuple[Arg, ...]:
    return (Arg(shape, make=_away_from_zero(shape, zeros)),)


def _dims_samples(args_for: Callable[[tuple], tuple], full: bool = True) -> list[Sample]:
    """The dim/keepdim variants shared by most reductions."""
    out = [
        Sample(args_for((3, 4)), {"dim": 1}, "dim1"),
        Sample(args_for((3, 4)), {"dim": -1, "keepdim": True}, "neg_dim_keepdim"),
        Sample(args_for((2, 3, 4)), {"dim": (0, 2)}, "dims_tuple"),
        Sample(args_for((2, 3, 4)), {"dim": [-1, 0], "keepdim": True}, "dims_list_keepdim"),
        Sample(args_for(()), {"dim": 0}, "zero_d_dim"),
    ]
    if full:
        out += [
            Sample(args_for((3, 4)), {}, "full"),
            Sample(args_for(()), {}, "zero_d"),
            Sample(args_for((2, 3)), {"dim": None}, "dim_none"),
        ]
    return out


def _call(name: str) -> Callable[..., Any]:
    return lambda lib, x, **kw: getattr(x, name)(**kw)


def _sum_dtype(lib: Any, x: Any, **kw: Any) -> Any:
    return x.float().sum(dtype=lib.float64, **kw)


def _values(name: str) -> Callable[..., Any]:
    return lambda lib, x, **kw: getattr(lib, name)(x, **kw).values


def _indices(name: str) -> Callable[..., Any]:
    return lambda lib, x, **kw: getattr(lib, name)(x, **kw).indices


_NONDIFF = {"grad_fn": False, "gradcheck": False, "gradgradcheck": False, "forward_ad": False}

SPECS: list[OpSpec] = [
    OpSpec("sum", _call("sum"), _dims_samples(_x) + [
        Sample(_x((2, 3)), {"dim": []}, "dim_empty_list")], prims=("sum", "sum_dim")),
    OpSpec("sum_dtype", _sum_dtype, [Sample(_x((2, 3)), {}, "full"),
                                     Sample(_x((2, 3)), {"dim": 0}, "dim")],
           prims=("sum", "sum_dim"), atol=1e-4, rtol=1e-4,
           gradcheck=False, gradgradcheck=False),  # a float32 step: no float64 finite diffs
    OpSpec("sum_to_size", lambda lib, x, size: x.sum_to_size(size), [
        Sample(_x((3, 4)), {"size": (1, 4)}, "rows")], prims=("sum_to_size",)),
    # With leading dims PyTorch shows ViewBackward0 (a sum then a view); hookgrad's single
    # primitive shows SumBackward1, so only values and gradients are compared.
    OpSpec("sum_to_size_lead", lambda lib, x, size: x.sum_to_size(size), [
        Sample(_x((2, 3, 4)), {"size": (3, 1)}, "lead_and_inner")], prims=("sum_to_size",),
        grad_fn=False),
    OpSpec("mean", _call("mean"), _dims_samples(_x), prims=("mean", "mean_dim")),
    OpSpec("prod", _call("prod"), [
        Sample(_nz((3, 4)), {}, "full"),
        Sample(_nz(()), {}, "zero_d"),
        Sample(_nz((3, 4)), {"dim": 1}, "dim1"),
        Sample(_nz((3, 4)), {"dim": -2, "keepdim": True}, "dim_keepdim"),
        Sample(_nz((3, 4), zeros=(5,)), {}, "full_one_zero"),
        Sample(_nz((3, 4), zeros=(1, 6)), {}, "full_two_zeros"),
        Sample(_nz((3, 4), zeros=(1, 5, 6)), {"dim": 1}, "dim_zeros"),
    ], prims=("prod", "prod_dim_int")),
    OpSpec("var", _call("var"), [
        s for s in _dims_samples(_x) if not s.name.startswith("zero_d")  # dof <= 0 warns
    ] + [
        Sample(_x((3, 4)), {"dim": 1, "unbiased": False}, "unbiased_false"),
        Sample(_x((3, 4)), {"dim": 0, "correction": 2, "keepdim": True}, "correction2"),
        Sample(_x((5,)), {"correction": 0}, "population"),
    ], prims=("var",)),
    OpSpec("std", _call("std"), [
        Sample(_x((3, 4)), {}, "full"),
        Sample(_x((3, 4)), {"dim": 1}, "dim1"),
        Sample(_x((2, 3, 4)), {"dim": (0, 2), "keepdim": True}, "dims_keepdim"),
        Sample(_x((3, 4)), {"dim": -1, "correction": 0}, "correction0"),
    ], prims=("std",)),
    OpSpec("var_mean", lambda lib, x, **kw: lib.var_mean(x, **kw), [
        Sample(_x((3, 4)), {}, "full"),
        Sample(_x((3, 4)), {"dim": 1, "keepdim": True}, "dim_keepdim"),
        Sample(_x((2, 3, 4)), {"dim": (0, 2), "correction": 0}, "dims_correction0"),
    ], prims=("var_mean",)),
    OpSpec("std_mean", lambda lib, x, **kw: lib.std_mean(x, **kw), [
        Sample(_x((3, 4)), {}, "full"),
        Sample(_x((3, 4)), {"dim": -1, "unbiased": False}, "dim_unbiased_false"),
    ], prims=("std_mean",)),
    OpSpec("nansum", lambda lib, x, **kw: lib.nansum(x, **kw), [
        Sample(_x((3, 4)), {}, "full"),
        Sample(_x((3, 4)), {"dim": 1, "keepdim": True}, "dim_keepdim"),
        Sample((Arg((3, 4), make=_with_nan((3, 4))),), {"dim": 0}, "with_nan"),
    ], prims=("nansum",)),
    OpSpec("nanmean", lambda lib, x, **kw: lib.nanmean(x, **kw), [
        Sample(_x((3, 4)), {}, "full"),
        Sample((Arg((3, 4), make=_with_nan((3, 4))),), {"dim": 1}, "with_nan"),
    ], prims=("nansum", "div", "sum", "sum_dim")),
    OpSpec("count_nonzero", lambda lib, x, **kw: lib.count_nonzero(x, **kw), [
        Sample((Arg((3, 4), make=_away_from_zero((3, 4), zeros=(0, 5, 6))),), {}, "full"),
        Sample((Arg((3, 4), make=_away_from_zero((3, 4), zeros=(0, 5, 6))),), {"dim": 1}, "dim"),
    ], prims=("count_nonzero",), **_NONDIFF),
    OpSpec("logsumexp", _call("logsumexp"), _dims_samples(_x, full=False),
           prims=("logsumexp",)),
    OpSpec("cumsum", _call("cumsum"), [
        Sample(_x((3, 4)), {"dim": 1}, "dim1"),
        Sample(_x((3, 4)), {"dim": -2}, "neg_dim"),
        Sample(_x(()), {"dim": 0}, "zero_d"),
    ], prims=("cumsum",)),
    OpSpec("cumprod", _call("cumprod"), [
        Sample(_nz((3, 4)), {"dim": 1}, "dim1"),
        Sample(_nz((3, 4)), {"dim": -2}, "neg_dim"),
        Sample(_nz(()), {"dim": 0}, "zero_d"),
        Sample(_nz((2, 5), zeros=(1, 6, 8)), {"dim": 1}, "zeros"),
    ], prims=("cumprod",)),
    OpSpec("amax", _call("amax"), _dims_samples(_dx, full=False) + [
        Sample(_dx((3, 4)), {}, "full")], prims=("amax",)),
    OpSpec("amin", _call("amin"), _dims_samples(_dx, full=False) + [
        Sample(_dx((3, 4)), {}, "full")], prims=("amin",)),
    OpSpec("max_full", lambda lib, x: x.max(), [Sample(_dx((3, 4)), {}, "full"),
                                               Sample(_dx(()), {}, "zero_d")], prims=("max",)),
    OpSpec("min_full", lambda lib, x: x.min(), [Sample(_dx((3, 4)), {}, "full")],
           prims=("min",)),
    OpSpec("max_dim", _values("max"), [
        Sample(_dx((3, 4)), {"dim": 1}, "dim1"),
        Sample(_dx((3, 4)), {"dim": -2, "keepdim": True}, "keepdim"),
        Sample(_dx(()), {"dim": 0}, "zero_d"),
    ], prims=("max_dim", "argmax")),
    OpSpec("min_dim", _values("min"), [
        Sample(_dx((3, 4)), {"dim": 0}, "dim0"),
        Sample(_dx((2, 3, 4)), {"dim": 1, "keepdim": True}, "keepdim"),
    ], prims=("min_dim", "argmin")),
    OpSpec("max_dim_indices", _indices("max"), [Sample(_dx((3, 4)), {"dim": 1}, "dim1")],
           prims=("argmax",), **_NONDIFF),
    OpSpec("argmax", _call("argmax"), [
        Sample(_dx((3, 4)), {}, "full"),
        Sample(_dx((3, 4)), {"dim": 1, "keepdim": True}, "dim_keepdim"),
        Sample(_dx((3, 4)), {"keepdim": True}, "full_keepdim"),
    ], prims=("argmax",), **_NONDIFF),
    OpSpec("argmin", _call("argmin"), [
        Sample(_dx((3, 4)), {}, "full"),
        Sample(_dx((3, 4)), {"dim": -1}, "dim"),
    ], prims=("argmin",), **_NONDIFF),
    OpSpec("all", _call("all"), [
        Sample(_x((3, 4), dtype="bool"), {}, "full"),
        Sample(_x((3, 4), dtype="bool"), {"dim": 1, "keepdim": True}, "dim"),
        Sample(_x((2, 3, 4), dtype="bool"), {"dim": (0, 2)}, "dims"),
    ], prims=("all",), **_NONDIFF),
    OpSpec("any", _call("any"), [
        Sample(_x((3, 4), dtype="bool"), {}, "full"),
        Sample(_x((3, 4)), {"dim": 0}, "float_dim"),
    ], prims=("any",), **_NONDIFF),
    OpSpec("sort", _values("sort"), [
        Sample(_dx((3, 5)), {}, "last_dim"),
        Sample(_dx((3, 5)), {"dim": 0, "descending": True}, "dim0_desc"),
        Sample(_dx(()), {}, "zero_d"),
    ], prims=("sort", "argsort")),
    OpSpec("sort_stable", lambda lib, x, **kw: lib.sort(x, stable=True, **kw).values, [
        Sample(_dx((3, 5)), {"descending": True}, "desc"),
    ], prims=("sort_stable", "argsort")),
    OpSpec("msort", lambda lib, x: lib.msort(x), [Sample(_dx((4, 3)), {}, "cols")],
           prims=("sort", "argsort")),
    OpSpec("argsort", _call("argsort"), [
        Sample(_dx((3, 5)), {}, "last"),
        Sample(_dx((3, 5)), {"dim": 0, "descending": True}, "desc"),
    ], prims=("argsort",), **_NONDIFF),
    OpSpec("topk", lambda lib, x, **kw: lib.topk(x, **kw).values, [
        Sample(_dx((3, 6)), {"k": 2}, "k2"),
        Sample(_dx((3, 6)), {"k": 3, "dim": 0, "largest": False}, "smallest_dim0"),
        Sample(_dx((7,)), {"k": 7}, "all"),
        Sample(_dx(()), {"k": 1}, "zero_d"),
    ], prims=("topk", "topk_indices")),
]
