"""Elementwise composites: angle conversions, sign tests, log-sum forms, ``xlogy``, ``sinc``.

Mirrors: ``torch`` pointwise functions of the same names (real dtypes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import hookgrad._functional.arith as A
import hookgrad._functional.creation as C
import hookgrad._functional.pointwise as P
from hookgrad._ops._checks import check_operand, check_tensor, tensor_arguments
from hookgrad._dtypes import bool_, check_kernel, get_default_dtype
from hookgrad._functional.complex import conj, conj_physical, is_conj, real, resolve_conj, sgn
from hookgrad._tensor import Tensor

__all__ = [
    "deg2rad", "rad2deg", "sgn", "signbit", "copysign", "heaviside", "hypot", "logaddexp",
    "logaddexp2", "xlogy", "sinc", "isposinf", "isneginf", "isreal", "positive", "ldexp",
    "gcd", "lcm", "nextafter", "conj", "conj_physical", "resolve_conj", "resolve_neg",
    "is_conj", "is_neg", "is_signed", "is_nonzero", "is_same_size", "real", "xlog1py", "entr",
    "ndtr", "log_ndtr",
]


def _t(x: Any, like: Tensor) -> Tensor:
    return x if isinstance(x, Tensor) else C.tensor(x, dtype=like.dtype)


def _raw(fn: Any, a: Any, b: Any) -> Tensor:
    """A non-differentiable elementwise op on the arrays (integer or bit-level results)."""
    x = a._data if isinstance(a, Tensor) else np.asarray(a)
    y = b._data if isinstance(b, Tensor) else np.asarray(b)
    return C.from_numpy(np.ascontiguousarray(fn(x, y)))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians. Mirrors: ``torch.deg2rad``."""
    return input * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees. Mirrors: ``torch.rad2deg``."""
    return input * (180.0 / math.pi)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (``-0.0`` included). Mirrors: ``torch.signbit``."""
    check_kernel("signbit", input._data.dtype)
    return C.from_numpy(np.ascontiguousarray(np.signbit(input._data)))


@tensor_arguments
def copysign(input: Tensor, other: Any) -> Tensor:
    """|input| with the sign of `other`. Mirrors: ``torch.copysign``."""
    check_operand(other, "copysign", "other", 2)
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    neg = C.from_numpy(np.ascontiguousarray(np.signbit(
        other._data if isinstance(other, Tensor) else np.asarray(other))))
    return P.where(neg, -P.abs(x), P.abs(x))


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """Step function: 0 below zero, `values` at zero, 1 above. Mirrors: ``torch.heaviside``."""
    out = P.where(input > 0, C.ones_like(input), C.zeros_like(input))
    return P.where(input == 0, values.to(input.dtype), out)


def hypot(input: Tensor, other: Any) -> Tensor:
    """sqrt(input**2 + other**2). Mirrors: ``torch.hypot``."""
    return P.sqrt(input * input + other * other)


def logaddexp(input: Tensor, other: Any) -> Tensor:
    """log(exp(input) + exp(other)) without overflow. Mirrors: ``torch.logaddexp``."""
    other = _t(other, input)
    m = P.maximum(input, other).detach()
    m = P.where(P.isinf(m), C.zeros_like(m), m)
    return m + P.log(A.exp(input - m) + A.exp(other - m))


def logaddexp2(input: Tensor, other: Any) -> Tensor:
    """log2(2**input + 2**other). Mirrors: ``torch.logaddexp2``."""
    ln2 = math.log(2.0)
    return logaddexp(input * ln2, _t(other, input) * ln2) / ln2


def xlogy(input: Any, other: Any) -> Tensor:
    """input * log(other), 0 where input is 0 (unless other is nan). Mirrors: ``torch.xlogy``."""
    like = input if isinstance(input, Tensor) else other
    x, y = _t(input, like), _t(other, like)
    if not x.is_floating_point():
        x = x.to(get_default_dtype())
    return _zero_where_x_zero(x, y, P.log(y))


def _zero_where_x_zero(x: Tensor, y: Tensor, log_y: Tensor) -> Tensor:
    # value 0 where x == 0 (PyTorch's convention) while d/dx stays log_y there, as PyTorch's
    mask = (x == 0) & ~P.isnan(y)
    lm = P.nan_to_num(P.where(mask, log_y, C.zeros_like(log_y)).detach())
    return P.where(mask, (x - x.detach()) * lm + 0.0, x * log_y)


def xlog1py(input: Any, other: Any) -> Tensor:
    """input * log1p(other), 0 where input is 0. Mirrors: ``torch.special.xlog1py``."""
    like = input if isinstance(input, Tensor) else other
    x, y = _t(input, like), _t(other, like)
    return _zero_where_x_zero(x, y, P.log1p(y))


def entr(input: Tensor) -> Tensor:
    """-x log x (0 at 0, -inf below 0; the gradient there is 0 where PyTorch gives inf/nan).

    Mirrors: ``torch.special.entr``.
    """
    safe = P.where(input > 0, input, C.ones_like(input))
    out = -input * P.log(safe)
    out = P.where(input == 0, C.zeros_like(out), out)
    return P.where(input < 0, C.full_like(out, -math.inf), out)


def ndtr(input: Tensor) -> Tensor:
    """Standard normal CDF. Mirrors: ``torch.special.ndtr``."""
    return 0.5 * P.erfc(-input * (1.0 / math.sqrt(2.0)))


def log_ndtr(input: Tensor) -> Tensor:
    """log of the standard normal CDF. Mirrors: ``torch.special.log_ndtr``."""
    if str(getattr(input, "dtype", "")) == "torch.bfloat16":  # no bfloat16 kernel in PyTorch
        raise NotImplementedError("\"log_ndtr_cpu\" not implemented for 'BFloat16'")
    return P.log(ndtr(input))


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0. Mirrors: ``torch.sinc``."""
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    zero = x == 0
    px = P.where(zero, C.ones_like(x), x) * math.pi
    return P.where(zero, C.ones_like(x), P.sin(px) / px)


def isposinf(input: Tensor) -> Tensor:
    """Mirrors: ``torch.isposinf``."""
    return P.isinf(input) & (input > 0)


def isneginf(input: Tensor) -> Tensor:
    """Mirrors: ``torch.isneginf``."""
    return P.isinf(input) & (input < 0)


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is zero (everywhere for real dtypes). Mirrors:
    ``torch.isreal``."""
    if input._data.dtype.kind == "c":
        return C.from_numpy(input._data.imag == 0)
    return C.ones_like(input, dtype=bool_)


def positive(input: Tensor) -> Tensor:
    """Returns `input` itself. Mirrors: ``torch.positive``."""
    if input.dtype is bool_:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


@tensor_arguments
def ldexp(input: Tensor, other: Any) -> Tensor:
    """input * 2**other. Mirrors: ``torch.ldexp``."""
    check_tensor(other, "ldexp", "other", 2)
    if other._data.dtype.kind == "b":
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    return x * A.pow(2.0, _t(other, x).to(x.dtype))


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise greatest common divisor (integers). Mirrors: ``torch.gcd``."""
    return _raw(np.gcd, input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise least common multiple (integers). Mirrors: ``torch.lcm``."""
    return _raw(np.lcm, input, other)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """Next float after `input` toward `other`. Mirrors: ``torch.nextafter``."""
    return _raw(np.nextafter, input, other)


def resolve_neg(input: Tensor) -> Tensor:
    """`input` itself: hookgrad has no lazy negation bit. Mirrors: ``torch.resolve_neg``."""
    return input


def is_neg(input: Tensor) -> bool:
    """False: no lazy negation bit. Mirrors: ``torch.is_neg``."""
    return False


def is_signed(input: Tensor) -> bool:
    """Mirrors: ``torch.is_signed``."""
    return input.dtype.is_signed


def is_nonzero(input: Tensor) -> bool:
    """bool() of a one-element tensor. Mirrors: ``torch.is_nonzero``."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Mirrors: ``torch.is_same_size``."""
    return tuple(input.shape) == tuple(other.shape)


