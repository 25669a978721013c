"""`Identity`, `Linear`, `Bilinear`."""

from __future__ import annotations

import math
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn import init
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


def _empty(*shape: int, dtype: Any = None) -> Tensor:
    from hookgrad._functional.creation import empty

    return empty(*shape, dtype=dtype)


class Identity(Module):
    """Returns its input unchanged (extra constructor arguments are ignored).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Identity(54, unused="x")(torch.ones(2)).tolist()
        [1.0, 1.0]

    Mirrors: ``torch.nn.Identity``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: learn an additive bias.
        device: only ``"cpu"`` (or ``None``).
        dtype: parameter dtype (default: the default dtype).

    Weight and bias are initialised from U(-1/sqrt(in_features), 1/sqrt(in_features)), as
    PyTorch's ``kaiming_uniform_(a=sqrt(5))`` gives.

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.Linear(3, 2)(torch.ones(4, 3)).shape
        torch.Size([4, 2])

    Mirrors: ``torch.nn.Linear``.
    """

    in_features: int
    out_features: int

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialise weight and bias (PyTorch's default scheme)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y = x1^T A x2 + b``.

    Args:
        in1_features: size of each first input sample.
        in2_features: size of each second input sample.
        out_features: size of each output sample.
        bias: learn an additive bias.
        device: only ``"cpu"`` (or ``None``).
        dtype: parameter dtype.

    Parameters are initialised from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    Mirrors: ``torch.nn.Bilinear``.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialise weight and bias (PyTorch's default scheme)."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
