"""``hookgrad.special``: the special functions of ``torch.special`` that hookgrad computes.

Mirrors: ``torch.special``. Each name is PyTorch's alias of an existing op (``expit`` is
``sigmoid``, ``psi`` would be ``digamma``...) or a composite of hookgrad ops with its gradient.
The Bessel, gamma-family and orthogonal-polynomial functions need primitives hookgrad does not
have yet; the census lists them as absent.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import nn_ops as _N
from hookgrad._functional import pointwise as _P
from hookgrad._functional import reduction as _R
from hookgrad._surface.special_ops import SPECIAL_NS as _SPECIAL_NS
from hookgrad._surface.math_ops import entr, log_ndtr, ndtr, sinc, xlog1py, xlogy
from hookgrad._tensor import Tensor

__all__ = [
    "Tensor", "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1",
    "gammainc", "gammaincc", "gammaln", "log1p", "log_ndtr", "multigammaln", "polygamma", "psi",
    "log_softmax", "logit", "logsumexp", "ndtr", "round", "sinc", "softmax", "xlog1py",
    "xlogy"
]

erf, erfc, expm1, log1p = _P.erf, _P.erfc, _P.expm1, _P.log1p
gammaln, digamma, psi, erfinv = _P.lgamma, _P.digamma, _P.digamma, _P.erfinv
polygamma = _P.polygamma
gammainc, gammaincc = _P.igamma, _P.igammac


def multigammaln(input: Tensor, p: int) -> Tensor:
    """Mirrors: ``torch.special.multigammaln``."""
    return _P.mvlgamma(input, p)
logit = _P.logit
logsumexp = _R.logsumexp


def exp2(input: Tensor) -> Tensor:
    """2 ** input. Mirrors: ``torch.special.exp2``."""
    return _P.exp2(input)


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid. Mirrors: ``torch.special.expit``."""
    return _P.sigmoid(input)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - torch's name
    """Round half to even. Mirrors: ``torch.special.round``."""
    return _P.round(input, decimals=decimals)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Mirrors: ``torch.special.softmax``."""
    return _N.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Mirrors: ``torch.special.log_softmax``."""
    return _N.log_softmax(input, dim, dtype=dtype)


globals().update(_SPECIAL_NS)
__all__ += list(_SPECIAL_NS)

# typing helpers are not part of PyTorch's namespace (tools crawl dir() of it)
del Any, annotations

# PyTorch's ``__all__`` also lists these
__all__ += [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "zeta"
]
