"""Activation modules (PyTorch keeps these in ``torch/nn/modules/activation.py``; that file name
is reserved here for attention layers). Each forwards to `hookgrad.nn.functional`."""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = [
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Softmax",
    "LogSoftmax", "Softmin", "ELU", "SELU", "CELU", "Softplus", "Hardtanh", "Hardswish",
    "Hardsigmoid", "Softsign", "Tanhshrink", "LogSigmoid", "Threshold", "Hardshrink",
    "Softshrink", "GLU", "PReLU",
]


def _inplace(flag: bool) -> str:
    return ", inplace=True" if flag else ""


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    _fn = ""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(0, x)``. Mirrors: ``torch.nn.ReLU``."""

    _fn = "relu"


class SiLU(_Inplace):
    """``x * sigmoid(x)``. Mirrors: ``torch.nn.SiLU``."""

    _fn = "silu"


class Mish(_Inplace):
    """``x * tanh(softplus(x))``. Mirrors: ``torch.nn.Mish``."""

    _fn = "mish"


class SELU(_Inplace):
    """Scaled ELU. Mirrors: ``torch.nn.SELU``."""

    _fn = "selu"


class Hardswish(_Inplace):
    """``x * relu6(x + 3) / 6``. Mirrors: ``torch.nn.Hardswish``."""

    _fn = "hardswish"


class Hardsigmoid(_Inplace):
    """``relu6(x + 3) / 6``. Mirrors: ``torch.nn.Hardsigmoid``."""

    _fn = "hardsigmoid"


class _Plain(Module):
    """An activation without options."""

    _fn = ""

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input)


class Tanh(_Plain):
    """Hyperbolic tangent. Mirrors: ``torch.nn.Tanh``."""

    _fn = "tanh"


class Sigmoid(_Plain):
    """Logistic sigmoid. Mirrors: ``torch.nn.Sigmoid``."""

    _fn = "sigmoid"


class Softsign(_Plain):
    """``x / (1 + |x|)``. Mirrors: ``torch.nn.Softsign``."""

    _fn = "softsign"


class Tanhshrink(_Plain):
    """``x - tanh(x)``. Mirrors: ``torch.nn.Tanhshrink``."""

    _fn = "tanhshrink"


class LogSigmoid(_Plain):
    """``log(sigmoid(x))``. Mirrors: ``torch.nn.LogSigmoid``."""

    _fn = "logsigmoid"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``. Mirrors: ``torch.nn.Hardtanh``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Any = None, max_value: Any = None) -> None:
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)`` (``HardtanhBackward0``). Mirrors: ``torch.nn.ReLU6``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``max(0, x) + negative_slope * min(0, x)``. Mirrors: ``torch.nn.LeakyReLU``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace)}"


class GELU(Module):
    """Gaussian error linear unit (``approximate='none'`` or ``'tanh'``).

    Mirrors: ``torch.nn.GELU``.
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={repr(self.approximate)}"


class ELU(Module):
    """Exponential linear unit. Mirrors: ``torch.nn.ELU``."""

    _fn = "elu"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace)}"


class CELU(ELU):
    """Continuously differentiable ELU. Mirrors: ``torch.nn.CELU``."""

    _fn = "celu"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (linear above `threshold`).

    Mirrors: ``torch.nn.Softplus``.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    """``x if x > threshold else value``. Mirrors: ``torch.nn.Threshold``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace)}"


class Hardshrink(Module):
    """``x if |x| > lambd else 0``. Mirrors: ``torch.nn.Hardshrink``."""

    _fn = "hardshrink"

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd*sign(x) if |x| > lambd else 0``. Mirrors: ``torch.nn.Softshrink``."""

    _fn = "softshrink"


class _SoftmaxLike(Module):
    """Softmax-family modules over one dim."""

    _fn = ""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxLike):
    """Softmax over `dim` (``SoftmaxBackward0``). Mirrors: ``torch.nn.Softmax``."""

    _fn = "softmax"


class LogSoftmax(_SoftmaxLike):
    """Log-softmax over `dim` (``LogSoftmaxBackward0``). Mirrors: ``torch.nn.LogSoftmax``."""

    _fn = "log_softmax"


class Softmin(_SoftmaxLike):
    """``softmax(-x)`` over `dim`. Mirrors: ``torch.nn.Softmin``."""

    _fn = "softmin"


class GLU(Module):
    """Gated linear unit over `dim`. Mirrors: ``torch.nn.GLU``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """``max(0, x) + a * min(0, x)`` with a learned slope `a`. Mirrors: ``torch.nn.PReLU``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from hookgrad._functional.creation import empty

        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slope with `init`."""
        from hookgrad.nn.init import constant_

        constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
