"""OpSpecs: the nn primitives added for the census (``_ops/grid_sampler.py``...) through their
public functions: ``grid_sample`` in every mode and padding, 2-d and 3-d, ``affine_grid`` and
fractional max pooling.

Grid points are drawn a little outside ``[-1, 1]`` so every padding branch is taken; random
points avoid the measure-zero kinks (integer pixel positions, clipping limits).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _grid_sample(lib: Any, x: Any, grid: Any, **kw: Any) -> Any:
    return lib.nn.functional.grid_sample(x, grid, **kw)


def _affine_grid(lib: Any, theta: Any, **kw: Any) -> Any:
    return lib.nn.functional.affine_grid(theta, **kw)


def _fractional(nd: int) -> Any:
    def fn(lib: Any, x: Any, samples: Any, **kw: Any) -> Any:
        pool = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        return pool(x, _random_samples=samples, **kw)

    return fn


def _distinct(shape: tuple[int, ...]) -> Arg:
    """Distinct values (a permutation) so the maxima have no ties."""
    n = int(np.prod(shape))
    return Arg(shape, make=lambda rng: rng.permutation(n).reshape(shape).astype(np.float64) / n)


def _uniform(shape: tuple[int, ...]) -> Arg:
    return Arg(shape, requires_grad=False, make=lambda rng: rng.uniform(0, 1, shape))


def _ctc(lib: Any, x: Any, targets: Any, **kw: Any) -> Any:
    # PyTorch's gradient assumes log-softmax inputs: check it composed with log_softmax
    return lib.nn.functional.ctc_loss(x.log_softmax(-1), targets, **kw)


def _labels(shape: tuple[int, ...], classes: int) -> Arg:
    return Arg(shape, requires_grad=False, dtype="int64",
               make=lambda rng: rng.integers(1, classes, shape))


def _samples(nd: int) -> list[Sample]:
    spatial = (3, 4) if nd == 2 else (2, 3, 2)
    out_pts = (2, 3) if nd == 2 else (2, 2, 1)
    modes = ("bilinear", "nearest", "bicubic") if nd == 2 else ("bilinear", "nearest")
    out = []
    for mode, pad, align in itertools.product(modes, ("zeros", "border", "reflection"),
                                              (False, True)):
        out.append(Sample((Arg((2, 2, *spatial)), Arg((2, *out_pts, nd), low=-1.3, high=1.3)),
                          {"mode": mode, "padding_mode": pad, "align_corners": align},
                          f"{mode}_{pad}_{int(align)}"))
    return out


SPECS = [
    OpSpec("grid_sample_2d", _grid_sample, samples=_samples(2),
           prims=("grid_sampler_2d", "grid_sampler_2d_backward"), gradgradcheck=False,
           forward_ad=False),
    OpSpec("grid_sample_3d", _grid_sample, samples=_samples(3),
           prims=("grid_sampler_3d", "grid_sampler_3d_backward"), gradgradcheck=False,
           forward_ad=False),
    OpSpec("affine_grid", _affine_grid, samples=[
        Sample((Arg((2, 2, 3)),), {"size": [2, 1, 3, 4], "align_corners": False}, "2d"),
        Sample((Arg((2, 3, 4)),), {"size": [2, 1, 2, 3, 2], "align_corners": True}, "3d"),
    ], prims=("affine_grid_generator",)),
    OpSpec("fractional_max_pool2d", _fractional(2), samples=[
        Sample((_distinct((2, 2, 6, 7)), _uniform((2, 2, 2))), {"kernel_size": 2,
                                                                "output_size": (3, 4)}, "size"),
        Sample((_distinct((2, 5, 5)), _uniform((1, 2, 2))), {"kernel_size": (2, 3),
                                                             "output_ratio": (.5, .5)}, "unbatched"),
    ], prims=("fractional_max_pool2d", "fractional_max_pool2d_backward")),
    OpSpec("fractional_max_pool3d", _fractional(3), samples=[
        Sample((_distinct((1, 2, 4, 5, 4)), _uniform((1, 2, 3))), {"kernel_size": 2,
                                                                   "output_size": (2, 3, 2)},
               "size"),
        Sample((_distinct((2, 4, 3, 5)), _uniform((1, 2, 3))), {"kernel_size": (1, 2, 2),
                                                                "output_ratio": 0.6}, "unbatched"),
    ], prims=("fractional_max_pool3d", "fractional_max_pool3d_backward")),
    OpSpec("ctc_loss", _ctc, samples=[
        Sample((Arg((5, 3, 4)), _labels((3, 2), 4)), {
            "input_lengths": [5, 4, 3], "target_lengths": [2, 1, 0], "reduction": "none"},
            "padded"),
        Sample((Arg((4, 2, 3)), _labels((3,), 3)), {
            "input_lengths": [4, 4], "target_lengths": [2, 1], "blank": 0}, "concatenated"),
        Sample((Arg((5, 3)), _labels((2,), 3)), {
            "input_lengths": [5], "target_lengths": [2], "reduction": "sum"}, "unbatched"),
    ], prims=("_ctc_loss", "_ctc_loss_backward"), gradgradcheck=False, forward_ad=False),
]
