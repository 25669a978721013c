"""Gamma-family and inverse-error primitives (``lgamma``, ``digamma``, ``polygamma``,
``erfinv``): PyTorch's ``derivatives.yaml`` rules written with Tensor methods, saving ``self``
as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._ops import _special_gamma as _G
from hookgrad._ops._host_kernel import on_host as _host
from hookgrad._ops.registry import defop

__all__: list[str] = []

_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


def _polygamma_impl(self: Any, n: int) -> Any:
    return _G.polygamma(n, self)


defop("lgamma", impl=_host(_G.lgamma), saves=("self",),
      vjp={"self": lambda grad, self: grad * self.digamma()}, jvp="elementwise")
defop("digamma", impl=_host(_G.digamma), saves=("self",),
      vjp={"self": lambda grad, self: grad * self.polygamma(1)}, jvp="elementwise")
defop("polygamma", impl=_host(_polygamma_impl), params=("n",), saves=("self",),
      vjp={"self": lambda grad, self, n: grad * self.polygamma(n + 1)}, jvp="elementwise")
defop("erfinv", impl=_host(_G.erfinv), saves=("self",),
      vjp={"self": lambda grad, self: _HALF_SQRT_PI * self.erfinv().pow(2).exp() * grad},
      jvp="elementwise")
# PyTorch's in-place polygamma has its own derivative entry (``PolygammaBackward1``)
defop("polygamma_", impl=_host(_polygamma_impl), params=("n",), saves=("self",),
      node_name="PolygammaBackward1",
      vjp={"self": lambda grad, self, n: grad * self.polygamma(n + 1)}, jvp="elementwise")


def _mvlgamma_impl(self: Any, p: int) -> Any:
    out = _G.lgamma(self) * 0 + (p * (p - 1) / 4) * math.log(math.pi)
    for j in range(p):
        out = out + _G.lgamma(self - j / 2)
    return out


def _mvlgamma_vjp(grad: Any, self: Any, p: int) -> Any:
    total = (self - 0.0).digamma()
    for j in range(1, p):
        total = total + (self - j / 2).digamma()
    return grad * total


defop("mvlgamma", impl=_host(_mvlgamma_impl), params=("p",), saves=("self",),
      vjp={"self": _mvlgamma_vjp}, jvp="elementwise")


def _igamma_impl(self: Any, other: Any) -> Any:
    out = _G._gammainc64(self, other)
    return out.astype(np.result_type(self, other), copy=False)


def _igammac_impl(self: Any, other: Any) -> Any:
    return (1.0 - _G._gammainc64(self, other)).astype(np.result_type(self, other), copy=False)


def _density(self: Any, other: Any) -> Any:
    # d P(a, x) / dx = x^(a-1) e^-x / Gamma(a)
    return ((self - 1) * other.log() - other - self.lgamma()).exp()


def _no_input_grad(name: str) -> Any:
    # PyTorch keeps the edge to `self` and raises when a gradient reaches it
    def rule(grad: Any, self: Any, other: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return rule


def _no_jvp(name: str) -> Any:
    # PyTorch has no forward-mode rule for either input
    def rule(t: Any) -> Any:
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support "
                                  "it because it has not been implemented yet.")
    return rule


defop("igamma", impl=_host(_igamma_impl), inputs=("self", "other"), saves=("self", "other"),
      vjp={"self": _no_input_grad("igamma"),
           "other": lambda grad, self, other: grad * _density(self, other)},
      jvp={"self": _no_jvp("igamma"), "other": _no_jvp("igamma")})
defop("igammac", impl=_host(_igammac_impl), inputs=("self", "other"), saves=("self", "other"),
      vjp={"self": _no_input_grad("igammac"),
           "other": lambda grad, self, other: -grad * _density(self, other)},
      jvp={"self": _no_jvp("igammac"), "other": _no_jvp("igammac")})
