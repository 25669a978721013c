"""OpSpecs: ``__getitem__``/``__setitem__``, gather/scatter, index_select/index_add & co.

Index arguments are integer or boolean arrays (`Arg` with ``requires_grad=False``), built so
that scatter-like writes never hit the same position twice (the result of a duplicated write
is unspecified in PyTorch). Item assignment runs on ``x * 1`` so the leaf may require grad.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def x(shape: tuple, **kw: Any) -> Arg:
    return Arg(shape, **kw)


def ints(shape: tuple, high: int, low: int = 0) -> Arg:
    return Arg(shape, dtype="int64", low=low, high=high, requires_grad=False)


def const(value: Any) -> Arg:
    return Arg(None, value=value)


def perm_index(shape: tuple, dim: int, size: int) -> Arg:
    """Index for scatter along `dim`: distinct values along `dim` in every line."""

    def make(rng: np.random.Generator) -> np.ndarray:
        moved = list(shape)
        n = moved.pop(dim)
        lines = [rng.permutation(size)[:n] for _ in range(int(np.prod(moved)) or 1)]
        arr = np.stack(lines).reshape(*moved, n)
        return np.moveaxis(arr, -1, dim).astype(np.int64)

    return Arg(shape, dtype="int64", requires_grad=False, make=make)


def mask(shape: tuple) -> Arg:
    return Arg(shape, dtype="bool", requires_grad=False)


def _get(index_of: Callable[..., Any]) -> Callable[..., Any]:
    """``t[index]`` where the index is built from the lib and the extra (index) tensors."""
    return lambda lib, t, *extra: t[index_of(lib, *extra)]


def _set(index_of: Callable[..., Any]) -> Callable[..., Any]:
    def fn(lib: Any, t: Any, value: Any, *extra: Any) -> Any:
        y = t * 1
        y[index_of(lib, *extra)] = value
        return y

    return fn


def _g(name: str, index: Callable[..., Any], args: tuple = (), prims: tuple = ()) -> OpSpec:
    return OpSpec(
        f"getitem_{name}", _get(index), [Sample((x((3, 4, 5)),) + args, name=name)], prims=prims
    )


GETITEM = [
    _g("int", lambda lib: 1, prims=("select",)),
    _g("neg_int", lambda lib: -1, prims=("select",)),
    _g("slice", lambda lib: slice(1, None), prims=("slice",)),
    _g("full_slice", lambda lib: slice(None), prims=("slice",)),
    _g("step_slice", lambda lib: (slice(None), slice(None, None, 2)), prims=("slice",)),
    _g("clamped_slice", lambda lib: slice(-10, 10), prims=("slice",)),
    _g("empty_slice", lambda lib: slice(2, 1), prims=("slice",)),
    _g("none", lambda lib: None, prims=("unsqueeze",)),
    _g("ellipsis", lambda lib: ..., prims=("alias",)),
    _g("all_full", lambda lib: (slice(None), slice(None)), prims=("alias",)),
    _g("ellipsis_int", lambda lib: (..., 2), prims=("select",)),
    _g(
        "mixed_basic",
        lambda lib: (0, None, slice(1, 3), ..., 1),
        prims=("select", "unsqueeze", "slice"),
    ),
    _g("int_tensor_0d", lambda lib, i: i, (ints((), 3),), prims=("select",)),
    _g("list", lambda lib: [0, 2, 2], prims=("index",)),
    _g("int_tensor", lambda lib, i: i, (ints((2, 2), 3),), prims=("index",)),
    _g("neg_list", lambda lib: (slice(None), [-1, 0]), prims=("index",)),
    _g(
        "two_adjacent",
        lambda lib, i, j: (slice(None), i, j),
        (ints((2,), 4), ints((3, 1), 5)),
        prims=("index",),
    ),
    _g(
        "separated",
        lambda lib, i, j: (i, slice(1, 3), j),
        (ints((2,), 3), ints((2,), 5)),
        prims=("index", "slice"),
    ),
    _g("bool_mask", lambda lib, m: m, (mask((3, 4)),), prims=("index",)),
    _g("bool_mask_1d", lambda lib, m: (slice(None), m), (mask((4,)),), prims=("index",)),
    _g("python_bool", lambda lib: True, prims=("unsqueeze", "index")),
    _g("select_then_list", lambda lib: (1, [0, 3]), prims=("select", "index")),
    OpSpec(
        "getitem_0d",
        lambda lib, t: t[None][0],
        [Sample((x(()),), name="0d")],
        prims=("unsqueeze", "select"),
    ),
]


def _st(
    name: str, index: Callable[..., Any], value: Arg, extra: tuple = (), prims: tuple = ()
) -> OpSpec:
    return OpSpec(
        f"setitem_{name}", _set(index), [Sample((x((3, 4)), value) + extra, name=name)], prims=prims
    )


SETITEM = [
    _st("int_row", lambda lib: 1, x((4,)), prims=("select", "copy_")),
    _st(
        "broadcast_row",
        lambda lib: slice(1, None),
        x((1, 1, 4)),
        prims=("slice", "copy_", "view", "expand"),
    ),
    _st("column_0d_value", lambda lib: (slice(None), 2), x(()), prims=("select", "fill_")),
    _st("element", lambda lib: (1, 2), x(()), prims=("select", "copy_")),
    _st("scalar", lambda lib: (slice(None), slice(1, 3)), const(2.5), prims=("slice", "fill_")),
    _st("ellipsis", lambda lib: ..., x((4,)), prims=("copy_", "view", "expand")),
    _st("full_slice_scalar", lambda lib: slice(None), const(-1.0), prims=("fill_",)),
    _st("list", lambda lib: [0, 2], x((2, 4)), prims=("index_put",)),
    _st(
        "list_broadcast", lambda lib: (slice(None), [3, 1]), x((1, 2)), prims=("index_put", "view")
    ),
    _st("mask_scalar", lambda lib, m: m, const(0.0), (mask((3, 4)),), prims=("index_put",)),
    _st("mask_row", lambda lib, m: m, x((4,)), (mask((3,)),), prims=("index_put",)),
    _st("select_then_list", lambda lib: (1, [0, 3]), x((2,)), prims=("select", "index_put")),
]


def _m(name: str) -> Any:
    return lambda lib, t, *args, **kw: getattr(t, name)(*args, **kw)


def _inplace(name: str) -> Any:
    return lambda lib, t, *args, **kw: getattr(t * 1, name)(*args, **kw)


GATHER = [
    OpSpec(
        "gather",
        lambda lib, t, i, dim: t.gather(dim, i),
        [
            Sample((x((3, 4)), ints((3, 6), 4)), {"dim": 1}, "wide_dim"),
            Sample((x((3, 4)), ints((2, 2), 3)), {"dim": -2}, "neg_dim_small"),
            Sample((x(()), ints((), 1)), {"dim": 0}, "0d"),
        ],
        prims=("gather", "scatter_add"),
    ),
    OpSpec(
        "take_along_dim",
        lambda lib, t, i, dim=None: lib.take_along_dim(t, i, dim),
        [
            Sample((x((3, 4)), ints((3, 2), 4)), {"dim": 1}, "dim"),
            Sample((x((3, 4)), ints((2, 1), 3)), {"dim": 0}, "broadcast"),
            Sample((x((3, 4)), ints((5,), 12)), name="flat"),
        ],
        prims=("gather", "expand", "view"),
    ),
    OpSpec(
        "scatter",
        lambda lib, t, i, src, dim: t.scatter(dim, i, src),
        [
            Sample((x((3, 4)), perm_index((3, 2), 1, 4), x((3, 2))), {"dim": 1}, "dim1"),
            Sample((x((3, 4)), perm_index((2, 4), 0, 3), x((2, 4))), {"dim": -2}, "neg_dim"),
        ],
        prims=("scatter", "scatter_value", "gather"),
    ),
    OpSpec(
        "scatter_value",
        lambda lib, t, i, v, dim: t.scatter(dim, i, v),
        [Sample((x((3, 4)), perm_index((3, 2), 1, 4), const(1.5)), {"dim": 1}, "value")],
        prims=("scatter_value",),
    ),
    OpSpec(
        "scatter_",
        lambda lib, t, i, src: (t * 1).scatter_(0, i, src),
        [Sample((x((3, 4)), perm_index((2, 4), 0, 3), x((2, 4))), name="inplace")],
        prims=("scatter",),
    ),
    OpSpec(
        "scatter_add",
        lambda lib, t, i, src, dim: t.scatter_add(dim, i, src),
        [
            Sample((x((3, 4)), ints((3, 6), 4), x((3, 6))), {"dim": 1}, "duplicates"),
            Sample((x((3,)), ints((5,), 3), x((5,))), {"dim": 0}, "1d"),
        ],
        prims=("scatter_add", "gather"),
    ),
    OpSpec(
        "scatter_add_",
        _inplace("scatter_add_"),
        [Sample((x((3, 4)), const(0), ints((2, 4), 3), x((2, 4))), name="inplace")],
        prims=("scatter_add",),
    ),
    OpSpec(
        "index_select",
        lambda lib, t, i, dim: t.index_select(dim, i),
        [
            Sample((x((3, 4)), ints((5,), 4)), {"dim": 1}, "repeats"),
            Sample((x((3, 4)), ints((), 3)), {"dim": -2}, "0d_index"),
            Sample((x(()), ints((1,), 1)), {"dim": 0}, "0d_self"),
        ],
        prims=("index_select", "index_add"),
    ),
    OpSpec(
        "index_add",
        lambda lib, t, i, src, **kw: t.index_add(0, i, src, **kw),
        [
            Sample((x((3, 4)), ints((5,), 3), x((5, 4))), name="duplicates"),
            Sample((x((3, 4)), ints((2,), 3), x((2, 4))), {"alpha": 2.0}, "alpha"),
        ],
        prims=("index_add", "index_select"),
    ),
    OpSpec(
        "index_add_",
        lambda lib, t, i, src: (t * 1).index_add_(-1, i, src),
        [Sample((x((3, 4)), ints((2,), 4), x((3, 2))), name="inplace")],
        prims=("index_add",),
    ),
    OpSpec(
        "masked_select",
        lambda lib, t, m: t.masked_select(m),
        [
            Sample((x((3, 4)), mask((3, 4))), name="same"),
            Sample((x((3, 1)), mask((2, 3, 4))), name="broadcast"),
        ],
        prims=("masked_select", "index_put"),
    ),
    OpSpec(
        "take",
        lambda lib, t, i: t.take(i),
        [Sample((x((3, 4)), ints((2, 3), 12, -12)), name="neg_and_dup")],
        prims=("take", "index_put"),
    ),
    OpSpec(
        "index_put",
        lambda lib, t, v, i, **kw: t.index_put((i,), v, **kw),
        [
            Sample((x((3, 4)), x((2, 4)), perm_index((2,), 0, 3)), name="rows"),
            Sample((x((3, 4)), x((4,)), ints((5,), 3)), {"accumulate": True}, "accumulate_dup"),
        ],
        prims=("index_put", "index"),
    ),
    OpSpec(
        "index_put_",
        lambda lib, t, v, i, j: (t * 1).index_put_((i, j), v),
        [Sample((x((3, 4)), x((2,)), perm_index((2,), 0, 3), ints((2,), 4)), name="points")],
        prims=("index_put",),
    ),
]

SPECS = GETITEM + SETITEM + GATHER
