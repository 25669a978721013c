"""OpSpecs: flip, roll, repeat/tile, tril/triu and padding (gathered by ``shape.py``)."""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _m(name: str) -> Any:
    return lambda lib, t, args=(), **kw: getattr(t, name)(*args, **kw)


def _s(shape: tuple, name: str, *args: Any, **kw: Any) -> Sample:
    return Sample((Arg(shape),), {"args": args, **kw} if args else kw, name)


def _pad(lib: Any, t: Any, pad: tuple, **kw: Any) -> Any:
    if lib.__name__ == "torch":
        return lib.nn.functional.pad(t, pad, **kw)
    from hookgrad._functional.shape import pad as hg_pad

    return hg_pad(t, pad, **kw)


def _ps(shape: tuple, name: str, pad: tuple, **kw: Any) -> Sample:
    return Sample((Arg(shape),), {"pad": pad, **kw}, name)


REARRANGE = [
    OpSpec(
        "flip",
        _m("flip"),
        [_s((3, 4), "dim0", 0), _s((2, 3, 4), "neg_dims", (-1, 0)), _s((), "0d", ())],
        prims=("flip",),
    ),
    OpSpec("fliplr", _m("fliplr"), [_s((3, 4), "2d")], prims=("flip",)),
    OpSpec("flipud", _m("flipud"), [_s((3,), "1d")], prims=("flip",)),
    OpSpec(
        "roll",
        _m("roll"),
        [_s((3, 4), "flat", 5), _s((3, 4), "dim", -1, 0), _s((2, 3, 4), "dims", (1, -2), (0, 2))],
        prims=("roll",),
    ),
    OpSpec(
        "repeat",
        _m("repeat"),
        [
            _s((2, 3), "same_rank", 2, 1),
            _s((3,), "new_dims", 2, 1, 2),
            _s((), "0d", 3),
            _s((2, 1), "zero", 0, 2),
        ],
        prims=("repeat",),
    ),
    OpSpec(
        "tile",
        lambda lib, t, dims: t.tile(dims),
        [
            Sample((Arg((2, 3)),), {"dims": (2,)}, "short"),
            Sample((Arg((2,)),), {"dims": (2, 2)}, "long"),
        ],
        prims=("repeat",),
    ),
    OpSpec(
        "tril",
        _m("tril"),
        [_s((3, 4), "main"), _s((2, 3, 4), "batch_pos", 1), _s((4, 3), "neg", -1)],
        prims=("tril",),
    ),
    OpSpec(
        "triu",
        _m("triu"),
        [_s((3, 4), "main"), _s((2, 3, 4), "batch_neg", -1), _s((4, 3), "pos", 2)],
        prims=("triu",),
    ),
    OpSpec(
        "pad_constant",
        _pad,
        [
            _ps((3, 4), "last", (1, 2)),
            _ps((2, 3, 4), "two_dims_value", (1, 0, 2, 1), value=1.5),
            _ps((3, 4), "negative", (-1, 1, 0, -2)),
            _ps((3,), "1d", (0, 0)),
        ],
        prims=("constant_pad_nd",),
    ),
    OpSpec(
        "pad_reflect",
        _pad,
        [
            _ps((2, 5), "1d_nobatch", (2, 1), mode="reflect"),
            _ps((1, 2, 4), "1d", (3, 0), mode="reflect"),
            _ps((1, 2, 3, 4), "2d", (1, 2, 2, 1), mode="reflect"),
            _ps((1, 1, 3, 3, 3), "3d", (1, 1, 1, 1, 1, 1), mode="reflect"),
        ],
        prims=("reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "index_add"),
    ),
    OpSpec(
        "pad_replicate",
        _pad,
        [
            _ps((1, 2, 4), "1d", (2, 3), mode="replicate"),
            _ps((2, 3, 4), "2d_nobatch", (1, 0, 0, 2), mode="replicate"),
            _ps((1, 1, 2, 2, 2), "3d", (1, 0, 0, 1, 1, 1), mode="replicate"),
        ],
        prims=("replication_pad1d", "replication_pad2d", "replication_pad3d", "index_add"),
    ),
    OpSpec(
        "pad_circular",
        _pad,
        [
            _ps((1, 2, 4), "1d", (2, 1), mode="circular"),
            _ps((1, 2, 3, 4), "2d_crop", (1, 2, 2, -1), mode="circular"),
        ],
        prims=("slice", "copy_"),
    ),
]
