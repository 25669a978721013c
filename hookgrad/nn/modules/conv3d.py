"""3-d convolution layers: `Conv3d`, `ConvTranspose3d` (the 1-d/2-d layers' classes at rank 3)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hookgrad._functional.rearrange import pad as _pad
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.conv import _Conv, _ConvTranspose

__all__ = ["Conv3d", "ConvTranspose3d"]


class Conv3d(_Conv):
    """3-d convolution over ``[N, C_in, D, H, W]`` (or ``[C_in, D, H, W]``) inputs.

    Args as `Conv2d`, with ints or triples. Weight ``[out, in/groups, KD, KH, KW]``.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Conv3d(1, 2, 3, padding=1)(torch.ones(1, 1, 4, 4, 4)).shape
        torch.Size([1, 2, 4, 4, 4])

    Mirrors: ``torch.nn.Conv3d``.
    """

    _nd = 3

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = _pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv3d(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose3d(_ConvTranspose):
    """3-d transposed convolution; weight ``[in, out/groups, KD, KH, KW]``.

    Args as `ConvTranspose2d`, with ints or triples.

    Mirrors: ``torch.nn.ConvTranspose3d``.
    """

    _nd = 3

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, op,
                                  self.groups, self.dilation)


# PyTorch's module path (torch.nn.modules.conv.<name>): tools import these classes from there.
_home = sys.modules["hookgrad.nn.modules.conv"]
for _name in __all__:
    setattr(_home, _name, globals()[_name])
_home.__all__ = [*_home.__all__, *(n for n in __all__ if n not in _home.__all__)]
