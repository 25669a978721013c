"""OpSpecs: convolution, pooling and normalization (``torch.nn.functional.conv2d``...).

Samples are tiny (the second-order check is the full, slow one) but cover every parameter
branch: stride, padding (ints, ``"same"``, ``"valid"``), dilation, groups, missing bias,
unbatched inputs, ceil mode, padding counted or not, non-divisible adaptive sizes, running
statistics in training and evaluation mode, and max-pool ties (PyTorch takes the first maximum
of a window; the ``ties`` samples compare gradients, which only agree if the same one is taken).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _a(*shapes: tuple[int, ...], bias: tuple[int, ...] | None = None) -> tuple[Arg, ...]:
    args = tuple(Arg(s) for s in shapes)
    return args + ((Arg(bias),) if bias is not None else (Arg(None, None),))


def _ties(shape: tuple[int, ...]) -> Arg:
    """Values from {0, 1, 2}: most windows hold several equal maxima."""
    return Arg(shape, make=lambda rng: rng.integers(0, 3, size=shape).astype(np.float64))


def _conv(name: str) -> Any:
    def fn(lib: Any, x: Any, w: Any, b: Any, **kw: Any) -> Any:
        return getattr(lib.nn.functional, name)(x, w, b, **kw)

    return fn


_CONV2D = [
    Sample(_a((2, 2, 5, 5), (3, 2, 3, 3), bias=(3,)), {}, "bias"),
    Sample(_a((1, 2, 5, 4), (2, 2, 2, 3)), {"stride": 2, "padding": 1}, "stride_pad"),
    Sample(_a((1, 2, 6, 6), (2, 2, 2, 2)), {"stride": (2, 1), "dilation": (1, 2)}, "dilation"),
    Sample(_a((1, 4, 4, 4), (4, 2, 2, 2), bias=(4,)), {"groups": 2, "padding": (1, 0)}, "groups"),
    Sample(_a((2, 4, 4), (3, 2, 3, 3)), {"padding": 1}, "unbatched"),
    Sample(_a((1, 2, 4, 4), (2, 2, 3, 3)), {"padding": "same"}, "same"),
    Sample(_a((1, 2, 4, 4), (2, 2, 3, 3)), {"padding": "valid"}, "valid"),
]
_CONV1D = [
    Sample(_a((2, 2, 6), (3, 2, 3), bias=(3,)), {}, "bias"),
    Sample(
        _a((1, 4, 7), (2, 2, 2)),
        {"stride": 2, "padding": 1, "dilation": 2, "groups": 2},
        "all_params",
    ),
    Sample(_a((2, 6), (2, 2, 3)), {"padding": "same"}, "unbatched_same"),
]
_CONV_T2D = [
    Sample(_a((1, 2, 3, 3), (2, 3, 2, 2), bias=(3,)), {}, "bias"),
    Sample(
        _a((1, 2, 3, 2), (2, 2, 3, 2)),
        {"stride": 2, "padding": 1, "output_padding": 1},
        "stride_outpad",
    ),
    Sample(
        _a((1, 4, 2, 3), (4, 1, 2, 2)),
        {"groups": 2, "dilation": (2, 1), "stride": (1, 2)},
        "groups_dilation",
    ),
    Sample(_a((2, 3, 3), (2, 2, 2, 2)), {}, "unbatched"),
    Sample(
        _a((1, 2, 2, 3), (2, 2, 2, 2)),
        {"stride": 2, "dilation": 3, "output_padding": 2},
        "outpad_over_stride",
    ),
]
_CONV_T1D = [
    Sample(_a((1, 2, 4), (2, 3, 3), bias=(3,)), {"stride": 2, "output_padding": 1}, "stride"),
]


def _pool(name: str) -> Any:
    def fn(lib: Any, x: Any, **kw: Any) -> Any:
        return getattr(lib.nn.functional, name)(x, **kw)

    return fn


_MAX2D = [
    Sample((Arg((1, 2, 4, 4)),), {"kernel_size": 2}, "k2"),
    Sample((Arg((1, 1, 5, 6)),), {"kernel_size": 3, "stride": 2, "padding": 1}, "overlap_pad"),
    Sample(
        (Arg((1, 1, 5, 5)),), {"kernel_size": 2, "dilation": 2, "ceil_mode": True}, "dilation_ceil"
    ),
    Sample(
        (Arg((2, 5, 4)),),
        {"kernel_size": (2, 3), "stride": (1, 2), "return_indices": True},
        "unbatched_indices",
    ),
]
_MAX_TIES = [
    Sample((_ties((2, 2, 4, 6)),), {"kernel_size": 2}, "ties_disjoint"),
    Sample((_ties((1, 2, 5, 5)),), {"kernel_size": 3, "stride": 1, "padding": 1}, "ties_overlap"),
]
_MAX1D = [
    Sample(
        (Arg((2, 2, 7)),),
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        "pad_ceil",
    ),
    Sample((Arg((2, 6)),), {"kernel_size": 2, "return_indices": True}, "unbatched_indices"),
]
_AVG2D = [
    Sample((Arg((1, 2, 4, 4)),), {"kernel_size": 2}, "k2"),
    Sample(
        (Arg((1, 1, 5, 6)),),
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        "pad_ceil",
    ),
    Sample(
        (Arg((1, 1, 5, 5)),),
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "count_include_pad": False,
            "ceil_mode": True,
        },
        "exclude_pad",
    ),
    Sample((Arg((2, 4, 5)),), {"kernel_size": (2, 3), "divisor_override": 4}, "divisor"),
]
_AVG1D = [Sample((Arg((2, 2, 7)),), {"kernel_size": 3, "stride": 2, "padding": 1}, "pad")]
_ADAPTIVE = [
    Sample((Arg((1, 2, 7, 8)),), {"output_size": (3, 5)}, "non_divisible"),
    Sample((Arg((2, 4, 4)),), {"output_size": 2}, "unbatched_divisible"),
    Sample((Arg((1, 2, 3, 5)),), {"output_size": (None, 2)}, "none_entry"),
    Sample((Arg((1, 2, 3, 4)),), {"output_size": 1}, "global_mean"),
]
_ADAPTIVE1D = [Sample((Arg((1, 2, 7)),), {"output_size": 3}, "non_divisible")]


def _batch_norm(lib: Any, x: Any, rm: Any, rv: Any, w: Any, b: Any, **kw: Any) -> Any:
    return lib.nn.functional.batch_norm(x, rm, rv, w, b, **kw)


def _stats(c: int) -> tuple[Arg, Arg]:
    return (
        Arg((c,), requires_grad=False, low=-0.5, high=0.5),
        Arg((c,), requires_grad=False, low=0.5, high=2.0),
    )


_NONE = Arg(None, None)
_BATCH_NORM = [
    Sample((Arg((4, 3)), *_stats(3), Arg((3,)), Arg((3,))), {"training": True}, "train_2d"),
    Sample(
        (Arg((2, 2, 3, 2)), *_stats(2), Arg((2,)), Arg((2,))),
        {"training": True, "momentum": 0.3, "eps": 1e-3},
        "train_4d",
    ),
    Sample((Arg((3, 2, 4)), _NONE, _NONE, _NONE, _NONE), {"training": True}, "no_affine"),
    Sample((Arg((2, 3, 2, 2)), *_stats(3), Arg((3,)), Arg((3,))), {"training": False}, "eval"),
    Sample((Arg((3, 2)), *_stats(2), _NONE, _NONE), {"training": False}, "eval_no_affine"),
]


def _layer_norm(lib: Any, x: Any, w: Any, b: Any, **kw: Any) -> Any:
    return lib.nn.functional.layer_norm(x, weight=w, bias=b, **kw)


_LAYER_NORM = [
    Sample((Arg((3, 4)), Arg((4,)), Arg((4,))), {"normalized_shape": (4,)}, "affine"),
    Sample(
        (Arg((2, 3, 2)), Arg((3, 2)), _NONE),
        {"normalized_shape": (3, 2), "eps": 1e-3},
        "two_dims_no_bias",
    ),
    Sample((Arg((2, 5)), _NONE, _NONE), {"normalized_shape": (5,)}, "no_affine"),
]


def _group_norm(lib: Any, x: Any, w: Any, b: Any, **kw: Any) -> Any:
    return lib.nn.functional.group_norm(x, weight=w, bias=b, **kw)


_GROUP_NORM = [
    Sample((Arg((2, 4, 3)), Arg((4,)), Arg((4,))), {"num_groups": 2}, "affine"),
    Sample((Arg((2, 6, 2, 2)), _NONE, _NONE), {"num_groups": 3, "eps": 1e-3}, "no_affine"),
]

_CONV_PRIMS = ("convolution", "convolution_backward_input", "convolution_backward_weight")
_MAX_PRIMS = ("max_pool2d_with_indices", "max_pool2d_with_indices_backward")
_AVG_PRIMS = ("avg_pool2d", "avg_pool2d_backward")
_ADAPTIVE_PRIMS = ("_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward")

SPECS: list[OpSpec] = [
    OpSpec("conv2d", _conv("conv2d"), _CONV2D, prims=_CONV_PRIMS),
    OpSpec("conv1d", _conv("conv1d"), _CONV1D, prims=_CONV_PRIMS),
    OpSpec("conv_transpose2d", _conv("conv_transpose2d"), _CONV_T2D, prims=_CONV_PRIMS),
    OpSpec("conv_transpose1d", _conv("conv_transpose1d"), _CONV_T1D, prims=_CONV_PRIMS),
    OpSpec("max_pool2d", _pool("max_pool2d"), _MAX2D, prims=_MAX_PRIMS),
    OpSpec(
        "max_pool2d_ties",
        _pool("max_pool2d"),
        _MAX_TIES,
        prims=_MAX_PRIMS,
        gradcheck=False,
        forward_ad=False,
    ),
    OpSpec("max_pool1d", _pool("max_pool1d"), _MAX1D, prims=_MAX_PRIMS),
    OpSpec("avg_pool2d", _pool("avg_pool2d"), _AVG2D, prims=_AVG_PRIMS),
    OpSpec("avg_pool1d", _pool("avg_pool1d"), _AVG1D, prims=_AVG_PRIMS),
    OpSpec("adaptive_avg_pool2d", _pool("adaptive_avg_pool2d"), _ADAPTIVE, prims=_ADAPTIVE_PRIMS),
    OpSpec("adaptive_avg_pool1d", _pool("adaptive_avg_pool1d"), _ADAPTIVE1D, prims=_ADAPTIVE_PRIMS),
    OpSpec("batch_norm", _batch_norm, _BATCH_NORM, prims=("native_batch_norm",)),
    OpSpec("layer_norm", _layer_norm, _LAYER_NORM, prims=("native_layer_norm",)),
    OpSpec("group_norm", _group_norm, _GROUP_NORM, prims=("native_group_norm",)),
]
