"""Autograd functions of the layers. Mirrors: ``torch.nn.modules._functions``.

`CrossMapLRN2d` is PyTorch's legacy (Lua Torch) cross-channel normalisation. Its running window
never drops channel 0: channel ``c`` sums the squares of channels ``{0} | [c - p + 1, c + p - 1]``
with ``p = (size - 1) // 2 + 1``; hookgrad builds the same window as a 0/1 channel matrix. Its
gradient is the legacy routine's own formula, which is not the derivative of that forward (its
window is centred and drops nothing), so it is a custom `Function` here as in PyTorch: values,
gradients, the ``size=1`` backward error and the ``CrossMapLRN2dBackward`` node all match.
"""

from __future__ import annotations

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.autograd.function import Function

__all__ = ["CrossMapLRN2d"]


def _window(channels: int, size: int) -> np.ndarray:
    pre = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    for c in range(channels):
        m[c, max(c - pre + 1, 0):min(c + pre, channels)] = 1
        m[c, 0] = 1
    return m


def _matrix(m: np.ndarray, like: Tensor) -> Tensor:
    return _creation.tensor(m, dtype=like.dtype)


def _channels_matmul(x: Tensor, m: Tensor) -> Tensor:
    """``y[:, c] = sum_j m[c, j] * x[:, j]`` over dim 1."""
    return (x.movedim(1, -1) @ m.t()).movedim(-1, 1)  # type: ignore[attr-defined]


class CrossMapLRN2d(Function):
    """The legacy forward and its own gradient formula (see the module docstring).

    Mirrors: ``torch.nn.modules._functions.CrossMapLRN2d``.
    """

    @staticmethod
    def forward(ctx, input: Tensor, size: int, alpha: float, beta: float,  # type: ignore
                k: float) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        window = _matrix(_window(input.shape[1], size), input)
        scale = _channels_matmul(input * input, window) * (alpha / size) + k
        output = input * scale.pow(-beta)  # type: ignore[attr-defined]
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output: Tensor) -> tuple:  # type: ignore[override]
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.shape[1]
        pre = int(size - (size - 1) / 2)  # where channel 0's ratio sits in the padded buffer
        if pre + channels > channels + size - 1:
            raise RuntimeError(f"start ({pre}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        band = np.zeros((channels, channels))
        for c in range(channels):
            band[c, max(c - pre, 0):max(min(c + size - pre, channels), 0)] = 1
        ratio = grad_output * output / ctx.scale
        accum = _channels_matmul(ratio, _matrix(band, input))
        grad = ctx.scale.pow(-ctx.beta) * grad_output
        grad = grad - input * accum * (2 * ctx.alpha * ctx.beta / size)
        return grad, None, None, None, None
