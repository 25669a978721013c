"""Spatial transformers of `hookgrad.nn.functional`: ``grid_sample`` and ``affine_grid``, and the
ATen-level ``torch.grid_sampler*``/``torch.affine_grid_generator`` they call.

The functions check their arguments as PyTorch does (same exception types and messages) and bind
the primitives of `hookgrad._ops.grid_sampler`.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._dispatch import bind
from hookgrad._ops import grid_sampler as _G
from hookgrad._tensor import Tensor

__all__ = ["grid_sample", "affine_grid"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details.")


def _check(input: Tensor, grid: Tensor, nd: int, mode: int) -> None:
    """ATen's ``check_grid_sampler_common`` then the 2-d/3-d checks."""
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, "
            f"but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty")
    if input.dim() != nd + 2 or grid.dim() != input.dim():
        raise RuntimeError(
            f"grid_sampler(): expected {nd + 2}D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}")
    if nd == 3 and mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(input)}\'')
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input)} but found "
                           f"{_type_name(grid)}")


def _type_name(t: Tensor) -> str:
    return t.type().split(".")[-1].replace("Tensor", "")  # type: ignore[attr-defined]


def _sampler(nd: int) -> Any:
    prim = _G.GRID_SAMPLER_2D if nd == 2 else _G.GRID_SAMPLER_3D

    def fn(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
           align_corners: bool) -> Tensor:
        _check(input, grid, nd, interpolation_mode)
        return bind(prim, (input, grid), {"interpolation_mode": int(interpolation_mode),
                                          "padding_mode": int(padding_mode),
                                          "align_corners": bool(align_corners)})

    fn.__name__ = fn.__qualname__ = f"grid_sampler_{nd}d"
    fn.__doc__ = (f"Sample `input` at the normalised `grid` points ({nd}-d; modes 0 bilinear, "
                  "1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection).\n\n"
                  f"Mirrors: ``torch.grid_sampler_{nd}d``.")
    return fn


grid_sampler_2d = _sampler(2)
grid_sampler_3d = _sampler(3)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """The 2-d sampler for 4-d input, else the 3-d one. Mirrors: ``torch.grid_sampler``."""
    fn = grid_sampler_2d if input.dim() == 4 else grid_sampler_3d
    return fn(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Values of `input` at the ``[-1, 1]``-normalised locations `grid` (spatial transformer).

    Mirrors: ``torch.nn.functional.grid_sample``.
    """
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    pads = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in pads:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, modes[mode], pads[padding_mode], align_corners)


def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """The sampling grid of the affine maps `theta` for an output of `size`.

    Mirrors: ``torch.affine_grid_generator``.
    """
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return bind(_G.AFFINE_GRID_GENERATOR, (theta,), {"size": size,
                                                      "align_corners": bool(align_corners)})


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """A sampling grid for `grid_sample` from a batch of affine matrices `theta`.

    Mirrors: ``torch.nn.functional.affine_grid``.
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{_size_repr(size)}. Got {_size_repr(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{_size_repr(size)}. Got {_size_repr(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)


def _size_repr(size: Any) -> str:
    return f"torch.Size({list(size)})" if not isinstance(size, list) else str(size)


TORCH_FUNCTIONS = {"grid_sampler": grid_sampler, "grid_sampler_2d": grid_sampler_2d,
                   "grid_sampler_3d": grid_sampler_3d,
                   "affine_grid_generator": affine_grid_generator}
