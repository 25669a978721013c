"""OpSpecs: views, reshapes, joins and copies (the shape family).

Views are run on leaves directly; in-place ops run on ``x * 1`` so a leaf may require grad.
Flip/roll/repeat/tril/pad live in `_shape_rearrange` and are gathered into `SPECS` here.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec._shape_rearrange import REARRANGE


def x(shape: tuple, **kw: Any) -> Arg:
    return Arg(shape, **kw)


def _m(name: str) -> Any:
    """Call method `name` with the sample's kwargs spread as positional ``args``."""
    return lambda lib, t, args=(), **kw: getattr(t, name)(*args, **kw)


def _f(name: str) -> Any:
    return lambda lib, *ts, **kw: getattr(lib, name)(*ts, **kw)


def _s(shape: tuple, name: str, *args: Any, **kw: Any) -> Sample:
    return Sample((x(shape),), {"args": args, **kw} if args else kw, name)


def _list_fn(name: str) -> Any:
    return lambda lib, *ts, **kw: getattr(lib, name)(list(ts), **kw)


def _prop(name: str) -> Any:
    return lambda lib, t: getattr(t, name)


RESHAPES = [
    OpSpec(
        "view",
        _m("view"),
        [
            _s((3, 4), "2d", 4, 3),
            _s((3, 4), "infer", -1),
            _s((2, 3, 4), "tuple", (6, -1)),
            _s((), "0d_to_1", 1),
            _s((1,), "to_0d", ()),
            _s((0, 3), "zero_size", 3, 0),
        ],
        prims=("view",),
    ),
    OpSpec(
        "view_as",
        lambda lib, t, o: t.view_as(o),
        [Sample((x((3, 4)), x((2, 6), requires_grad=False)), name="basic")],
        prims=("view",),
    ),
    OpSpec(
        "reshape",
        _m("reshape"),
        [
            _s((3, 4), "viewable", 2, 6),
            _s((3, 4), "same", 3, 4),
            _s((), "0d", 1, 1),
            _s((2, 0), "zero_size", 0, 5),
        ],
        prims=("view",),
    ),
    OpSpec(
        "reshape_copy",
        lambda lib, t, shape: t.transpose(0, 1).reshape(shape),
        [
            Sample((x((3, 4)),), {"shape": (-1,)}, "flat"),
            Sample((x((2, 3, 4)),), {"shape": (3, 8)}, "3d"),
        ],
        prims=("transpose", "clone", "_unsafe_view"),
    ),
    OpSpec(
        "reshape_alias",  # a non-contiguous input that can be viewed: ReshapeAliasBackward0
        lambda lib, t, shape: t.select(2, 1).reshape(shape),
        [
            Sample((x((2, 3, 4)),), {"shape": (-1,)}, "flat"),
            Sample((x((2, 3, 4)),), {"shape": (3, 2)}, "split"),
        ],
        prims=("select", "_reshape_alias"),
    ),
    OpSpec(
        "flatten",
        _m("flatten"),
        [
            _s((2, 3, 4), "all"),
            _s((2, 3, 4), "start", 1),
            _s((2, 3, 4), "neg_end", 0, -2),
            _s((), "0d"),
        ],
        prims=("view",),
    ),
    OpSpec(
        "flatten_copy",
        lambda lib, t: t.mT.flatten(-2),
        [_s((2, 3, 4), "batch")],
        prims=("transpose", "clone", "_unsafe_view"),
    ),
    OpSpec(
        "unflatten",
        _m("unflatten"),
        [_s((2, 12), "neg_dim", -1, (3, -1)), _s((6,), "first", 0, (2, 3))],
        prims=("view",),
    ),
    OpSpec(
        "ravel",
        lambda lib, t, transpose=False: (t.t() if transpose else t).ravel(),
        [_s((3, 4), "contiguous"), Sample((x((3, 4)),), {"transpose": True}, "copy")],
        prims=("view", "t", "clone"),
    ),
    OpSpec(
        "expand",
        _m("expand"),
        [
            _s((3, 1), "broadcast", 3, 4),
            _s((3, 1), "new_dims_keep", 2, -1, 5),
            _s((), "0d", 4),
            _s((1,), "to_zero", 0),
        ],
        prims=("expand",),
    ),
    OpSpec(
        "expand_as",
        lambda lib, t, o: t.expand_as(o),
        [Sample((x((4, 1)), x((2, 4, 3), requires_grad=False)), name="basic")],
        prims=("expand",),
    ),
    OpSpec(
        "broadcast_to",
        lambda lib, t, size: lib.broadcast_to(t, size),
        [Sample((x((1, 3)),), {"size": (2, 3)}, "basic")],
        prims=("expand",),
    ),
    OpSpec(
        "squeeze",
        _m("squeeze"),
        [_s((1, 3, 1), "all"), _s((), "0d"), _s((3, 4), "none_to_drop")],
        prims=("squeeze",),
    ),
    OpSpec(
        "squeeze_dim",
        _m("squeeze"),
        [_s((1, 3, 1), "neg", -1), _s((1, 3), "kept", 1), _s((), "0d", 0)],
        prims=("squeeze_dim",),
    ),
    OpSpec(
        "squeeze_dims",
        _m("squeeze"),
        [_s((1, 3, 1), "tuple", (0, -1)), _s((1, 3), "list_kept", [0, 1])],
        prims=("squeeze_dims",),
    ),
    OpSpec(
        "unsqueeze",
        _m("unsqueeze"),
        [_s((3, 4), "middle", 1), _s((3, 4), "neg", -1), _s((), "0d", 0)],
        prims=("unsqueeze",),
    ),
    OpSpec(
        "atleast_2d", _f("atleast_2d"), [_s((3,), "1d"), _s((), "0d")], prims=("unsqueeze", "view")
    ),
]

DIM_ORDER = [
    OpSpec(
        "transpose",
        _m("transpose"),
        [_s((2, 3, 4), "neg", 0, -1), _s((3, 4), "same", 1, 1), _s((), "0d", 0, -1)],
        prims=("transpose",),
    ),
    OpSpec("swapaxes", _m("swapaxes"), [_s((2, 3, 4), "basic", 2, 1)], prims=("transpose",)),
    OpSpec("swapdims", _m("swapdims"), [_s((2, 3, 4), "basic", 0, 1)], prims=("transpose",)),
    OpSpec("t", _m("t"), [_s((3, 4), "2d"), _s((3,), "1d"), _s((), "0d")], prims=("t",)),
    OpSpec("T", _prop("T"), [_s((3, 4), "2d")], prims=("permute",)),
    OpSpec("mT", _prop("mT"), [_s((2, 3, 4), "batch"), _s((3, 4), "2d")], prims=("transpose",)),
    OpSpec("H", _prop("H"), [_s((3, 4), "2d")], prims=("transpose",)),
    OpSpec("mH", _prop("mH"), [_s((2, 3, 4), "batch")], prims=("transpose",)),
    OpSpec(
        "permute",
        _m("permute"),
        [
            _s((2, 3, 4), "3d", 2, 0, 1),
            _s((2, 3, 4), "neg_tuple", (-1, 0, 1)),
            _s((2, 3), "identity", 0, 1),
            _s((), "0d", ()),
        ],
        prims=("permute",),
    ),
    OpSpec(
        "movedim",
        _m("movedim"),
        [_s((2, 3, 4), "int", 0, -1), _s((2, 3, 4, 5), "lists", (0, 1), (-1, 0))],
        prims=("permute",),
    ),
    OpSpec(
        "moveaxis", lambda lib, t: lib.moveaxis(t, 1, 0), [_s((2, 3), "basic")], prims=("permute",)
    ),
]

SLICING = [
    OpSpec(
        "narrow",
        _m("narrow"),
        [
            _s((3, 4), "dim1", 1, 1, 2),
            _s((3, 4), "neg_start", 0, -2, 2),
            _s((3, 4), "empty", -1, 4, 0),
        ],
        prims=("slice",),
    ),
    OpSpec(
        "select",
        _m("select"),
        [_s((3, 4), "neg_index", 0, -1), _s((2, 3, 4), "neg_dim", -1, 2), _s((3,), "to_0d", 0, 1)],
        prims=("select",),
    ),
    OpSpec(
        "unbind",
        _m("unbind"),
        [_s((3, 4), "dim0"), _s((2, 3, 4), "neg_dim", -1), _s((3, 0), "zero_size", 0)],
        prims=("unbind",),
    ),
    OpSpec(
        "unbind_partial",
        lambda lib, t: t.unbind(1)[1],
        [_s((2, 3), "unused_outputs")],
        prims=("unbind",),
    ),
    OpSpec(
        "split",
        _m("split"),
        [_s((5, 4), "uneven", 2), _s((3, 4), "neg_dim", 3, -1), _s((0, 2), "zero_size", 1)],
        prims=("split",),
    ),
    OpSpec(
        "split_with_sizes",
        _m("split"),
        [_s((5, 4), "sizes", [1, 4]), _s((3, 4), "neg_dim_zero_piece", [2, 0, 2], -1)],
        prims=("split_with_sizes",),
    ),
    OpSpec(
        "split_partial",
        lambda lib, t: t.split(2)[0],
        [_s((5, 3), "unused_outputs")],
        prims=("split",),
    ),
    OpSpec(
        "chunk",
        _m("chunk"),
        [
            _s((5, 4), "uneven", 2),
            _s((3, 4), "more_chunks_than_size", 5, 0),
            _s((2, 3), "neg_dim", 3, -1),
        ],
        prims=("split",),
    ),
    OpSpec(
        "tensor_split",
        _m("tensor_split"),
        [_s((7, 2), "sections", 3), _s((5, 3), "indices", [1, -1], 0)],
        prims=("slice",),
    ),
    OpSpec(
        "diagonal",
        _m("diagonal"),
        [
            _s((3, 4), "main"),
            _s((3, 4), "offset", 1),
            _s((3, 4), "neg_offset", -2),
            _s((2, 3, 4), "dims", 0, -1, 1),
            _s((2, 3), "empty", 5),
        ],
        prims=("diagonal",),
    ),
    OpSpec(
        "as_strided",
        _m("as_strided"),
        [
            _s((3, 4), "window", (2, 2), (4, 1), 1),
            _s((3, 4), "overlap", (3, 3), (1, 1)),
            _s((3, 4), "to_0d", (), (), 5),
        ],
        prims=("as_strided", "index_put", "index"),
    ),
    OpSpec(
        "unfold",
        _m("unfold"),
        [
            _s((3, 5), "overlapping", 1, 2, 1),
            _s((5, 3), "strided", 0, 3, 2),
            _s((4,), "gaps", -1, 1, 3),
            _s((2, 3), "empty_window", 0, 0, 1),
            _s((), "0d", 0, 1, 1),
        ],
        prims=("unfold", "index_add"),
    ),
]

COPIES = [
    OpSpec("clone", _m("clone"), [_s((3, 4), "basic"), _s((), "0d")], prims=("clone",)),
    OpSpec(
        "contiguous",
        lambda lib, t: t.t().contiguous(),
        [_s((3, 4), "transposed")],
        prims=("t", "clone"),
    ),
    OpSpec(
        "to_float32",
        lambda lib, t: t.to(lib.float32),
        [_s((3, 4), "basic")],
        prims=("_to_copy",),
        gradcheck=False,
        gradgradcheck=False,
        atol=1e-6,
        rtol=1e-6,
    ),
    OpSpec(
        "copy_",
        lambda lib, t, src: (t * 1).copy_(src),
        [
            Sample((x((3, 4)), x((3, 4))), name="same"),
            Sample((x((3, 4)), x((4,))), name="broadcast"),
        ],
        prims=("copy_",),
    ),
    OpSpec(
        "copy_cast",
        lambda lib, t, src: (t * 1).copy_(src),
        [Sample((x((3, 4)), x((3, 4), dtype="float32")), name="f32_src")],
        prims=("copy_",),
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpSpec(
        "fill_tensor_",
        lambda lib, t, v: (t * 1).fill_(v),
        [Sample((x((3, 4)), x(())), name="0d_value")],
        prims=("fill_",),
    ),
]

JOINS = [
    OpSpec(
        "cat",
        lambda lib, *ts, dim=0: lib.cat(list(ts), dim),
        [
            Sample((x((2, 3)), x((4, 3))), name="dim0"),
            Sample((x((2, 3)), x((2, 1)), x((2, 2))), {"dim": -1}, "three_neg_dim"),
            Sample((x((2, 3)),), name="single"),
            Sample((x((2, 3)), x((0,)), x((1, 3))), name="legacy_empty"),
            Sample((x((0, 3)), x((2, 3))), name="zero_size"),
        ],
        prims=("cat",),
    ),
    OpSpec(
        "concat",
        _list_fn("concat"),
        [Sample((x((2, 3)), x((2, 3))), {"dim": 1}, "dim1")],
        prims=("cat",),
    ),
    OpSpec(
        "concatenate",
        _list_fn("concatenate"),
        [Sample((x((2,)), x((3,))), name="1d")],
        prims=("cat",),
    ),
    OpSpec(
        "cat_promote",
        lambda lib, a, b: lib.cat([a, b]),
        [Sample((x((2, 3), dtype="float32"), x((1, 3))), name="f32_f64")],
        prims=("cat",),
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpSpec(
        "stack",
        lambda lib, *ts, dim=0: lib.stack(list(ts), dim),
        [
            Sample((x((2, 3)), x((2, 3))), name="dim0"),
            Sample((x((2, 3)), x((2, 3)), x((2, 3))), {"dim": -1}, "neg_dim"),
            Sample((x(()), x(())), name="0d"),
        ],
        prims=("stack",),
    ),
    OpSpec(
        "hstack",
        _list_fn("hstack"),
        [Sample((x((2, 3)), x((2, 1))), name="2d"), Sample((x((2,)), x(())), name="1d")],
        prims=("cat", "view"),
    ),
    OpSpec(
        "vstack",
        _list_fn("vstack"),
        [Sample((x((3,)), x((2, 3))), name="mixed")],
        prims=("cat", "unsqueeze"),
    ),
]

SPECS = RESHAPES + DIM_ORDER + SLICING + COPIES + JOINS + REARRANGE
