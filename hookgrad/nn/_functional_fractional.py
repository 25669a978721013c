"""Fractional max pooling of `hookgrad.nn.functional` (``fractional_max_pool2d``/``3d`` and their
``_with_indices`` forms).

The functions resolve ``output_ratio`` and draw the per-plane samples as PyTorch's Python
functions do, check the arguments as ATen does (same exception types and messages), then bind
the primitives of `hookgrad._ops.fractional_pool`.
"""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind
from hookgrad._functional import random as _random
from hookgrad._ops import fractional_pool as _P
from hookgrad._tensor import Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _ints(value: Any, nd: int, what: str) -> tuple:
    seq = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(seq) not in (1, nd):
        of = "tuple of Ints" if nd == 2 else "tuple of three Ints"
        raise RuntimeError(f"fractional_max_pool{nd}d: {what} must either be a single Int or "
                           f"{of}")
    return tuple(int(v) for v in seq) * (nd if len(seq) == 1 else 1)


def _check(input: Tensor, samples: Tensor, kernel: tuple, out: tuple, nd: int) -> None:
    where = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batch = input.shape[0] if input.dim() == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    for d, name in enumerate(_DIM_NAMES[nd]):
        size = input.shape[-nd + d]
        if out[d] + kernel[d] - 1 > size:
            raise RuntimeError(f"{where}: pool {name} {kernel[d]} too large relative to input "
                               f"{name} {size}")
    if not input.is_floating_point():
        kind = input.type().split(".")[-1].replace("Tensor", "")  # type: ignore[attr-defined]
        raise NotImplementedError(f'"fractional_max_pool{nd}d_out_frame" not implemented for '
                                  f"'{kind}'")


def _pool(nd: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
          samples: Any) -> tuple:
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{nd}d requires specifying either an output_size "
                         "or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # PyTorch: a bare float raises TypeError here
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                 else (output_ratio,) * nd)
        output_size = [int(input.size(-nd + d) * ratio[d]) for d in range(nd)]
    if samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = _random.rand(batch, input.size(-nd - 1), nd, dtype=input.dtype)
    kernel = _ints(kernel_size, nd, "kernel_size")
    out = _ints(output_size, nd, "output_size")
    _check(input, samples, kernel, out, nd)
    prim = _P.FRACTIONAL_MAX_POOL2D if nd == 2 else _P.FRACTIONAL_MAX_POOL3D
    return bind(prim, (input, samples), {"kernel_size": kernel, "output_size": out})


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple:
    """Max over pseudo-randomly placed windows, with the flat per-plane indices.

    Mirrors: ``torch.nn.functional.fractional_max_pool2d_with_indices``.
    """
    return _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple:
    """3-d form of `fractional_max_pool2d_with_indices`.

    Mirrors: ``torch.nn.functional.fractional_max_pool3d_with_indices``.
    """
    return _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Values (and indices when `return_indices`). Mirrors:
    ``torch.nn.functional.fractional_max_pool2d``."""
    out = _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Values (and indices when `return_indices`). Mirrors:
    ``torch.nn.functional.fractional_max_pool3d``."""
    out = _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]
