"""Spatial-transformer primitives: ``grid_sampler_2d``/``grid_sampler_3d`` and
``affine_grid_generator``, with the samplers' backward ops.

Layer 3. PyTorch shows ``GridSampler2DBackward0``, ``GridSampler3DBackward0`` and
``AffineGridGeneratorBackward0``. The sampler kernels are in `_grid_kernels` (taps shared by the
forward and both gradients). As in ATen, the backward of a sampler is one op returning the input
and grid gradients; its own derivative is not implemented there, so its inputs are marked
nondifferentiable here. ``affine_grid_generator`` is linear in ``theta``: its gradient is a
matmul with the same base grid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._ranges import linspace_values
from hookgrad._dispatch import bind
from hookgrad._ops import _grid_kernels as K
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor

_PARAMS = ("interpolation_mode", "padding_mode", "align_corners")
_NO_DOUBLE = "PyTorch does not implement the derivative of grid_sampler backward"


def _forward(input: Any, grid: Any, interpolation_mode: int, padding_mode: int,
             align_corners: bool) -> Any:
    return K.sample(input, grid, interpolation_mode, padding_mode, align_corners)


def _backward(grad_output: Any, input: Any, grid: Any, interpolation_mode: int,
              padding_mode: int, align_corners: bool, output_mask: tuple = (True, True)) -> tuple:
    xp = namespace_of(grad_output)
    args = (interpolation_mode, padding_mode, align_corners)
    gi = (K.input_grad(grad_output, input.shape, grid, *args) if output_mask[0]
          else xp.zeros_like(input))
    gg = K.grid_grad(grad_output, input, grid, *args) if output_mask[1] else xp.zeros_like(grid)
    return gi, gg


def _no_jvp(name: str) -> Any:
    # PyTorch has no forward-mode rule for the samplers
    def rule(t: Any) -> Any:
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support "
                                  "it because it has not been implemented yet.")
    return rule


def _define(nd: int) -> tuple:
    name = f"grid_sampler_{nd}d"
    backward = defop(
        f"{name}_backward", impl=_backward, inputs=("grad_output", "input", "grid"),
        params=(*_PARAMS, "output_mask"), num_outputs=2,
        node_name=f"GridSampler{nd}DBackwardBackward0",
        nondifferentiable={"grad_output": _NO_DOUBLE, "input": _NO_DOUBLE, "grid": _NO_DOUBLE},
    )

    def params(mode: int, pad: int, align: bool, mask: tuple) -> dict:
        return {"interpolation_mode": mode, "padding_mode": pad, "align_corners": align,
                "output_mask": mask}

    forward = defop(
        name, impl=_forward, inputs=("input", "grid"), params=_PARAMS,
        saves=("input", "grid"), node_name=f"GridSampler{nd}DBackward0",
        vjp={
            "input": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
                bind(backward, (grad, input, grid), params(
                    interpolation_mode, padding_mode, align_corners, (True, False)))[0],
            "grid": lambda grad, input, grid, interpolation_mode, padding_mode, align_corners:
                bind(backward, (grad, input, grid), params(
                    interpolation_mode, padding_mode, align_corners, (False, True)))[1],
        },
        jvp={"input": _no_jvp(name), "grid": _no_jvp(name)},
    )
    return forward, backward


GRID_SAMPLER_2D, GRID_SAMPLER_2D_BACKWARD = _define(2)
GRID_SAMPLER_3D, GRID_SAMPLER_3D_BACKWARD = _define(3)


# ---------------------------------------------------------------- affine_grid_generator
def _line(xp: Any, steps: int, align: bool, dtype: Any) -> Any:
    """ATen's ``linspace_from_neg_one``: pixel centres (or corners) in [-1, 1]."""
    if steps <= 1:
        return xp.zeros(1, dtype=dtype)
    if xp is np:  # PyTorch's linspace kernel, then ``range * (steps - 1) / steps`` in `dtype`
        line = linspace_values(-1, 1, steps, dtype)
        kind = np.dtype(dtype).type
        return line if align else line * kind(steps - 1) / kind(steps)
    line = xp.linspace(-1, 1, steps, dtype=dtype)
    return line if align else line * ((steps - 1) / steps)


def base_grid(xp: Any, size: tuple, align: bool, dtype: Any) -> Any:
    """``(prod(spatial), d + 1)`` homogeneous coordinates ``(x, y[, z], 1)``, x fastest."""
    spatial = tuple(size[2:])
    lines = [_line(xp, s, align, dtype) for s in spatial]
    mesh = xp.meshgrid(*lines, indexing="ij")  # spatial order (D,) H, W
    cols = [m.reshape(-1) for m in reversed(mesh)]  # x (width) first, as grid[..., 0]
    cols.append(xp.ones_like(cols[0]))
    return xp.stack(cols, axis=1).astype(dtype, copy=False)


def _affine_impl(theta: Any, size: tuple, align_corners: bool) -> Any:
    xp = namespace_of(theta)
    base = base_grid(xp, size, align_corners, theta.dtype)
    if xp is np:
        # PyTorch's bmm with an inner size of 3 or 4 sums the products left to right, unfused
        # (x t0 + y t1) + t2; a BLAS matmul may fuse or reorder them, off by an ulp, and a grid
        # point on a pixel centre then falls on the other side of it for grid_sample's gradient
        out = base[None, :, None, 0] * theta[:, None, :, 0]
        for k in range(1, base.shape[1]):
            out = out + base[None, :, None, k] * theta[:, None, :, k]
    else:
        out = xp.matmul(base[None], xp.swapaxes(theta, 1, 2))
    return out.reshape(size[0], *size[2:], len(size) - 2)


def _affine_grad(grad: Tensor, size: tuple, align_corners: bool) -> Tensor:
    xp = namespace_of(grad._data)
    base = Tensor._make(base_grid(xp, size, align_corners, grad._data.dtype))
    g = grad.reshape(size[0], -1, len(size) - 2)  # type: ignore[attr-defined]
    return g.transpose(1, 2).matmul(base)  # type: ignore[attr-defined]


AFFINE_GRID_GENERATOR = defop(
    "affine_grid_generator", impl=_affine_impl, inputs=("theta",),
    params=("size", "align_corners"), node_name="AffineGridGeneratorBackward0",
    vjp={"theta": _affine_grad}, jvp="linear",
)
