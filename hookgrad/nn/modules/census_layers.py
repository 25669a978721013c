"""Layer modules added by the census, published at PyTorch's module paths.

Mirrors: ``torch.nn.Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``
(``nn.modules.dropout``), ``RMSNorm``, ``LocalResponseNorm`` (``nn.modules.normalization``),
``LPPool1d/2d/3d`` (``nn.modules.pooling``), ``RReLU``, ``Softmax2d`` and the plain activations
(``nn.modules.activation``), ``Container`` (``nn.modules.container``) and
``NonDynamicallyQuantizableLinear`` (``nn.modules.linear``).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.modules import nonlinearity
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.activation import NonDynamicallyQuantizableLinear
from hookgrad.nn.modules.dropout import _DropoutNd
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
           "RMSNorm", "LocalResponseNorm", "LPPool1d", "LPPool2d", "LPPool3d", "RReLU",
           "Softmax2d", "Container"]


class _FunctionalDropout(_DropoutNd):
    """Calls the functional named by `_fn`; each subclass sits directly under `_DropoutNd`, as in
    PyTorch (so ``isinstance(Dropout2d(), Dropout1d)`` is False there and here)."""

    _fn = "dropout"

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)


class Dropout1d(_FunctionalDropout):
    """Zero whole channels. Mirrors: ``torch.nn.Dropout1d``."""

    _fn = "dropout1d"


class Dropout2d(_FunctionalDropout):
    """Mirrors: ``torch.nn.Dropout2d``."""

    _fn = "dropout2d"


class Dropout3d(_FunctionalDropout):
    """Mirrors: ``torch.nn.Dropout3d``."""

    _fn = "dropout3d"


class AlphaDropout(_FunctionalDropout):
    """Mirrors: ``torch.nn.AlphaDropout``."""

    _fn = "alpha_dropout"


class FeatureAlphaDropout(_FunctionalDropout):
    """Mirrors: ``torch.nn.FeatureAlphaDropout``."""

    _fn = "feature_alpha_dropout"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing dims. Mirrors: ``torch.nn.RMSNorm``."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.ones(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            from hookgrad.nn import init
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}"
                .format(**self.__dict__))


class LocalResponseNorm(Module):
    """Mirrors: ``torch.nn.LocalResponseNorm``."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = "lp_pool1d"

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride,
                                    self.ceil_mode)

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    """Mirrors: ``torch.nn.LPPool1d``."""


class LPPool2d(_LPPoolNd):
    """Mirrors: ``torch.nn.LPPool2d``."""

    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """Mirrors: ``torch.nn.LPPool3d``."""

    _fn = "lp_pool3d"


class RReLU(Module):
    """Randomised leaky ReLU. Mirrors: ``torch.nn.RReLU``."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class Softmax2d(Module):
    """Softmax over the channel dim of (N, C, H, W) or (C, H, W). Mirrors: ``torch.nn.Softmax2d``."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3)


class Container(Module):
    """The deprecated pre-Module container. Mirrors: ``torch.nn.Container``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.",
                      FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


publish("hookgrad.nn.modules.dropout", globals(), __all__[:5])
publish("hookgrad.nn.modules.normalization", globals(), ["RMSNorm", "LocalResponseNorm"])
publish("hookgrad.nn.modules.pooling", globals(), ["LPPool1d", "LPPool2d", "LPPool3d"])
publish("hookgrad.nn.modules.activation", {**vars(nonlinearity), **globals()},
        [*nonlinearity.__all__, "RReLU", "Softmax2d"])
publish("hookgrad.nn.modules.container", globals(), ["Container"])
publish("hookgrad.nn.modules.linear", globals(), ["NonDynamicallyQuantizableLinear"])
_LPPoolNd.__module__ = "hookgrad.nn.modules.pooling"
setattr(sys.modules[_LPPoolNd.__module__], "_LPPoolNd", _LPPoolNd)  # private base, as PyTorch's
