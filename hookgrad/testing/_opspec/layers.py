"""OpSpecs: the layer primitives of ``_ops/upsample.py``, ``_ops/layers.py`` and
``_ops/pool3d.py`` through their public functions (``interpolate`` in every mode,
``pixel_shuffle``, ``baddbmm``, adaptive max pooling, max unpooling, 3-d convolution and pooling,
and the composites built on them: ``instance_norm``, ``normalize``, ``cosine_similarity``,
``pairwise_distance``).

Samples are tiny (the second-order check is the slow one) but cover every branch: scale factors
that do and do not divide, ``align_corners``, ``size=``, ranks 1 to 3, non-divisible adaptive
windows, ceil mode and padding.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _c(value: Any) -> Arg:
    return Arg(None, value)


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _interp(mode: str) -> Any:
    def fn(lib: Any, x: Any, **kw: Any) -> Any:
        return _F(lib).interpolate(x, mode=mode, **kw)

    return fn


def _fn(name: str) -> Any:
    def fn(lib: Any, *args: Any, **kw: Any) -> Any:
        return getattr(_F(lib), name)(*args, **kw)

    return fn


def _distinct(shape: tuple[int, ...]) -> Arg:
    """Distinct values (a permutation) so max-style gradients have no ties."""
    n = int(np.prod(shape))
    return Arg(shape, make=lambda rng: rng.permutation(n).reshape(shape).astype(np.float64) / n)


def _up(nd: int, *names: str) -> tuple[str, ...]:
    return tuple(p for n in names for p in (f"upsample_{n}{nd}d", f"upsample_{n}{nd}d_backward"))


def _window_argmax(shape: tuple[int, ...]) -> Arg:
    """Valid flat indices of a 2-wide max pool: one position inside each output window."""
    nd = len(shape) - 2
    in_sizes = [2 * n for n in shape[2:]]

    def make(rng: np.random.Generator) -> np.ndarray:
        grids = np.meshgrid(*(np.arange(n) for n in shape[2:]), indexing="ij")
        flat = np.zeros(shape[2:], dtype=np.int64)
        for d in range(nd):
            flat = flat * in_sizes[d] + 2 * grids[d] + rng.integers(0, 2, size=shape[2:])
        return np.broadcast_to(flat, shape).astype(np.int64)

    return Arg(shape, dtype="int64", requires_grad=False, make=make)


def _unpool(nd: int) -> Any:
    def fn(lib: Any, x: Any, idx: Any, **kw: Any) -> Any:
        return getattr(_F(lib), f"max_unpool{nd}d")(x, idx, 2, **kw)

    return fn


def _instance(lib: Any, x: Any, w: Any = None, b: Any = None, **kw: Any) -> Any:
    return _F(lib).instance_norm(x, weight=w, bias=b, **kw)


def _packed(lib: Any, x: Any, lengths: Any, **kw: Any) -> Any:
    rnn = importlib.import_module(f"{lib.__name__}.nn.utils.rnn")
    return rnn.pack_padded_sequence(x, lengths, **kw).data


def _baddbmm(lib: Any, s: Any, a: Any, b: Any, **kw: Any) -> Any:
    return lib.baddbmm(s, a, b, **kw)


_X3, _X4, _X5 = Arg((1, 2, 4)), Arg((1, 2, 3, 4)), Arg((1, 1, 2, 3, 3))
_LIN = ("align_corners", "scale")
SPECS = [
    OpSpec("interpolate_nearest", _interp("nearest"), samples=[
        Sample((_X3,), {"scale_factor": 2}, "1d"), Sample((_X4,), {"size": (5, 3)}, "2d_size"),
        Sample((_X4,), {"scale_factor": 1.5}, "2d_frac"), Sample((_X5,), {"scale_factor": 2}, "3d"),
    ], prims=_up(1, "nearest") + _up(2, "nearest") + _up(3, "nearest")),
    OpSpec("interpolate_nearest_exact", _interp("nearest-exact"), samples=[
        Sample((_X3,), {"scale_factor": 1.5}, "1d"), Sample((_X4,), {"size": (5, 3)}, "2d"),
        Sample((_X5,), {"size": 3}, "3d"),
    ], prims=tuple(p for nd in (1, 2, 3) for p in (
        f"_upsample_nearest_exact{nd}d", f"_upsample_nearest_exact{nd}d_backward"))),
    OpSpec("interpolate_linear", _interp("linear"), samples=[
        Sample((_X3,), {"scale_factor": 2}, "scale"), Sample((_X3,), {"size": 7,
                                                                      "align_corners": True}, _LIN[0]),
        Sample((_X3,), {"scale_factor": 0.6}, "down"),
    ], prims=_up(1, "linear")),
    OpSpec("interpolate_bilinear", _interp("bilinear"), samples=[
        Sample((_X4,), {"scale_factor": 2}, "scale"),
        Sample((_X4,), {"size": (4, 6), "align_corners": True}, _LIN[0]),
        Sample((_X4,), {"scale_factor": 1.7}, "frac"),
    ], prims=_up(2, "bilinear")),
    OpSpec("interpolate_bicubic", _interp("bicubic"), samples=[
        Sample((_X4,), {"scale_factor": 2}, "scale"),
        Sample((_X4,), {"size": (4, 5), "align_corners": True}, _LIN[0]),
    ], prims=_up(2, "bicubic")),
    OpSpec("interpolate_trilinear", _interp("trilinear"), samples=[
        Sample((_X5,), {"scale_factor": 2}, "scale"),
        Sample((_X5,), {"size": (3, 2, 4), "align_corners": True}, _LIN[0]),
    ], prims=_up(3, "trilinear")),
    OpSpec("pixel_shuffle", _fn("pixel_shuffle"), samples=[
        Sample((Arg((1, 8, 2, 3)), _c(2)), {}, "batched"), Sample((Arg((9, 2, 1)), _c(3)), {}, "3d"),
    ], prims=("pixel_shuffle", "pixel_unshuffle")),
    OpSpec("pixel_unshuffle", _fn("pixel_unshuffle"), samples=[
        Sample((Arg((1, 2, 4, 6)), _c(2)), {}, "batched"),
    ], prims=("pixel_unshuffle", "pixel_shuffle")),
    OpSpec("channel_shuffle", _fn("channel_shuffle"), samples=[
        Sample((Arg((2, 6, 3)), _c(3)), {}, "3d"), Sample((Arg((1, 4, 2, 2)), _c(2)), {}, "4d"),
    ], prims=("channel_shuffle",)),
    OpSpec("pack_padded_sequence", _packed, samples=[
        Sample((Arg((4, 3, 2)), _c([4, 2, 1])), {}, "time_major"),
        Sample((Arg((3, 4)), _c([1, 4, 2])), {"batch_first": True, "enforce_sorted": False},
               "batch_first_unsorted"),
    ], prims=("_pack_padded_sequence", "_pack_padded_sequence_backward"),
        forward_ad=False),  # PyTorch has no forward-AD formula for it (hookgrad's is linear)
    OpSpec("matrix_exp", lambda lib, a: lib.matrix_exp(a), samples=[
        Sample((Arg((3, 3)),), {}, "matrix"), Sample((Arg((2, 2, 2), low=-3, high=3),), {},
                                                    "batch_scaled"),
    ], prims=("linalg_matrix_exp",)),
    OpSpec("linalg_solve", lambda lib, a, b: lib.linalg.solve(a + 4 * lib.eye(3, dtype=a.dtype),
                                                               b), samples=[
        Sample((Arg((3, 3)), Arg((3, 2))), {}, "matrix"), Sample((Arg((2, 3, 3)), Arg((3,))), {},
                                                                 "batch_vector"),
        Sample((Arg((2, 3, 3)), Arg((3, 1))), {}, "broadcast"),
    ], prims=("linalg_solve_ex",)),
    # a composite in hookgrad (PyTorch: one LinalgHouseholderProductBackward0 node)
    OpSpec("householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau),
           samples=[Sample((Arg((4, 3)), Arg((2,), low=0.5, high=1.5)), {}, "tall")],
           grad_fn=False, forward_ad=False),
    OpSpec("baddbmm", _baddbmm, samples=[
        Sample((Arg((2, 3, 4)), Arg((2, 3, 2)), Arg((2, 2, 4))), {}, "plain"),
        Sample((Arg((3, 1)), Arg((2, 3, 2)), Arg((2, 2, 4))), {"beta": 0.5, "alpha": 2.0},
               "broadcast_scaled"),
    ], prims=("baddbmm",)),
    OpSpec("adaptive_max_pool2d", _fn("adaptive_max_pool2d"), samples=[
        Sample((_distinct((1, 2, 5, 4)), _c((2, 3))), {}, "overlap"),
        Sample((_distinct((2, 4, 4)), _c(2)), {}, "unbatched"),
    ], prims=("adaptive_max_pool2d", "adaptive_max_pool2d_backward")),
    OpSpec("adaptive_max_pool1d", _fn("adaptive_max_pool1d"), samples=[
        Sample((_distinct((1, 2, 7)), _c(3)), {}, "plain"),
    ], prims=("adaptive_max_pool2d", "adaptive_max_pool2d_backward")),
    OpSpec("adaptive_max_pool3d", _fn("adaptive_max_pool3d"), samples=[
        Sample((_distinct((1, 1, 3, 4, 3)), _c((2, 2, 2))), {}, "overlap"),
    ], prims=("adaptive_max_pool3d", "adaptive_max_pool3d_backward")),
    OpSpec("adaptive_avg_pool3d", _fn("adaptive_avg_pool3d"), samples=[
        Sample((Arg((1, 1, 3, 4, 3)), _c((2, 3, 2))), {}, "overlap"),
        Sample((Arg((1, 2, 2, 2)), _c(1)), {}, "mean"),
    ], prims=("_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward")),
    OpSpec("max_pool3d", _fn("max_pool3d"), samples=[
        Sample((_distinct((1, 1, 4, 4, 4)), _c(2)), {}, "plain"),
        Sample((_distinct((1, 1, 3, 5, 4)), _c((2, 3, 2))), {"stride": 1, "padding": (1, 1, 0),
                                                        "dilation": (1, 1, 2)}, "overlap_pad"),
        Sample((_distinct((1, 3, 3, 3)), _c(2)), {"ceil_mode": True}, "ceil_unbatched"),
    ], prims=("max_pool3d_with_indices", "max_pool3d_with_indices_backward")),
    OpSpec("avg_pool3d", _fn("avg_pool3d"), samples=[
        Sample((Arg((1, 1, 4, 4, 4)), _c(2)), {}, "plain"),
        Sample((Arg((1, 1, 3, 4, 3)), _c(2)), {"stride": 1, "padding": 1,
                                           "count_include_pad": False}, "pad_excluded"),
        Sample((Arg((1, 3, 3, 3)), _c(2)), {"ceil_mode": True, "divisor_override": 3}, "ceil"),
    ], prims=("avg_pool3d", "avg_pool3d_backward")),
    OpSpec("conv3d", _fn("conv3d"), samples=[
        Sample((Arg((1, 2, 3, 3, 3)), Arg((2, 2, 2, 2, 2)), Arg((2,))), {}, "bias"),
        Sample((Arg((1, 2, 3, 4, 3)), Arg((2, 1, 2, 1, 2))), {"stride": (1, 2, 1), "padding": 1,
                                                             "groups": 2}, "groups"),
    ], prims=("convolution",)),
    OpSpec("conv_transpose3d", _fn("conv_transpose3d"), samples=[
        Sample((Arg((1, 2, 2, 2, 2)), Arg((2, 1, 2, 2, 2)), Arg((1,))), {"stride": 2}, "stride"),
        Sample((Arg((1, 2, 2, 3, 2)), Arg((2, 2, 2, 1, 2))), {"padding": (0, 1, 0),
                                                             "output_padding": 1, "stride": 2},
               "outpad"),
    ], prims=("convolution",)),
    OpSpec("max_unpool2d", _unpool(2), samples=[
        Sample((Arg((1, 2, 2, 3)), _window_argmax((1, 2, 2, 3))), {}, "plain"),
    ], prims=("max_unpool2d",)),
    OpSpec("max_unpool1d", _unpool(1), samples=[
        Sample((Arg((1, 2, 3)), _window_argmax((1, 2, 3))), {}, "plain"),
        Sample((Arg((1, 2, 3)), _window_argmax((1, 2, 3))), {"output_size": (7,)}, "size"),
    ], prims=("max_unpool2d",)),
    OpSpec("max_unpool3d", _unpool(3), samples=[
        Sample((Arg((1, 1, 2, 1, 2)), _window_argmax((1, 1, 2, 1, 2))), {}, "plain"),
    ], prims=("max_unpool3d",)),
    OpSpec("instance_norm", _instance, samples=[
        Sample((Arg((2, 3, 4)),), {}, "plain"),
        Sample((Arg((2, 2, 2, 3)), Arg((2,)), Arg((2,))), {}, "affine"),
    ], prims=("native_batch_norm", "repeat")),
    OpSpec("normalize", _fn("normalize"), samples=[
        Sample((Arg((3, 4)),), {}, "p2"), Sample((Arg((2, 3)),), {"p": 1.0, "dim": 0}, "p1"),
    ], prims=("linalg_vector_norm",)),
    OpSpec("cosine_similarity", _fn("cosine_similarity"), samples=[
        Sample((Arg((3, 4)), Arg((3, 4))), {}, "plain"),
        Sample((Arg((2, 3)), Arg((3,))), {"dim": -1}, "broadcast"),
    ], prims=("linalg_vector_norm",)),
    OpSpec("pairwise_distance", _fn("pairwise_distance"), samples=[
        Sample((Arg((3, 4)), Arg((3, 4))), {}, "p2"),
        Sample((Arg((3, 4)), Arg((3, 4))), {"p": 3.0, "keepdim": True}, "p3_keepdim"),
    ], prims=("norm", "_nn_add_scalar")),
]
