"""Public gamma-family ops and ``erfinv``: ``lgamma``, ``digamma``, ``polygamma``, ``erfinv``
and their in-place methods. Mirrors the torch functions of the same names.
"""

from __future__ import annotations

import operator

from hookgrad._config import GLOBAL
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional._pw_util import float_cast, float_unary, inplace_unary
from hookgrad._ops._checks import not_tensor
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

lgamma = float_unary("lgamma", "``log |Gamma(x)|``.")
digamma = float_unary("digamma", "The logarithmic derivative of Gamma.")
erfinv = float_unary("erfinv", "The inverse error function.")
lgamma_ = inplace_unary("lgamma", float_op=True)
digamma_ = inplace_unary("digamma", float_op=True)
erfinv_ = inplace_unary("erfinv", float_op=True)


def _order(n: object) -> int:
    try:
        k = operator.index(n)
    except TypeError:
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}") from None
    if k < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return k


def polygamma(n: int, input: Tensor) -> Tensor:
    """The `n`-th derivative of digamma at `input` (``polygamma(0, x)`` is ``digamma``).

    Mirrors: ``torch.polygamma``.
    """
    k = _order(n)
    if not isinstance(input, Tensor):
        raise not_tensor("polygamma", input, pos=2)
    cast = None if input._data.dtype.kind in "fcV" else GLOBAL.default_dtype
    return bind(P["polygamma"], (input,), {"n": k}, cast)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``Tensor.polygamma(n)``. Mirrors: ``torch.Tensor.polygamma``."""
    return polygamma(n, self)


def polygamma_(self: Tensor, n: int) -> Tensor:
    """Mirrors: ``torch.Tensor.polygamma_``."""
    return bind_inplace(P["polygamma_"], self, (self,), {"n": _order(n)}, float_cast(self))


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension `p`.

    Mirrors: ``torch.mvlgamma`` (``torch.special.multigammaln``).
    """
    if not isinstance(input, Tensor):
        raise not_tensor("mvlgamma", input)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    cast = None if input._data.dtype.kind in "fcV" else GLOBAL.default_dtype
    return bind(P["mvlgamma"], (input,), {"p": int(p)}, cast)


def _mvlgamma_method(self: Tensor, p: int) -> Tensor:
    """``Tensor.mvlgamma(p)``. Mirrors: ``torch.Tensor.mvlgamma``."""
    return mvlgamma(self, p)


def _igamma(name: str, input: Tensor, other: Tensor) -> Tensor:
    from hookgrad._functional._common import binary
    return binary(P[name], input, other, float_result=True)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularised lower incomplete gamma ``P(input, other)``.

    Mirrors: ``torch.igamma`` (``torch.special.gammainc``).
    """
    return _igamma("igamma", input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularised upper incomplete gamma ``Q(input, other)``.

    Mirrors: ``torch.igammac`` (``torch.special.gammaincc``).
    """
    return _igamma("igammac", input, other)


__all__ = ["digamma", "erfinv", "igamma", "igammac", "lgamma", "mvlgamma", "polygamma"]
METHODS = {"lgamma": lgamma, "lgamma_": lgamma_, "digamma": digamma, "digamma_": digamma_,
           "erfinv": erfinv, "erfinv_": erfinv_, "polygamma": _polygamma_method,
           "polygamma_": polygamma_, "mvlgamma": _mvlgamma_method, "igamma": igamma,
           "igammac": igammac}
