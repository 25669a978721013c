"""Public gamma-family, inverse-error and Bessel functions over `hookgrad._ops.special_fns`.

Mirrors: ``torch.lgamma``, ``digamma``, ``polygamma``, ``erfinv``, ``i0``, ``mvlgamma`` and
``torch.special.gammaln``, ``digamma``/``psi``, ``polygamma``, ``multigammaln``, ``erfinv``,
``ndtri``, ``erfcx``, ``i0``, ``i0e``, ``i1``, ``i1e``. Integer and bool inputs compute in the
default float dtype, as PyTorch's unary float ops do.
"""

from __future__ import annotations

import math

import numpy as np
from typing import Any, Callable

from hookgrad._dispatch import bind
from hookgrad._dtypes import get_default_dtype
from hookgrad._ops.special_fns import SPECIAL
from hookgrad._tensor import Tensor


def _float(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.to(get_default_dtype())


def _unary(prim: str, name: str) -> Callable:
    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        return bind(SPECIAL[prim], (_float(input),), {})
    fn.__name__ = fn.__qualname__ = name.rsplit(".", 1)[-1]
    fn.__doc__ = f"Elementwise {prim.replace('special_', '')}. Mirrors: ``torch.{name}``."
    return fn


lgamma = _unary("lgamma", "lgamma")
digamma = _unary("digamma", "digamma")
erfinv = _unary("erfinv", "erfinv")
i0 = _unary("i0", "i0")
ndtri = _unary("special_ndtri", "special.ndtri")
erfcx = _unary("special_erfcx", "special.erfcx")
i0e = _unary("special_i0e", "special.i0e")
i1 = _unary("special_i1", "special.i1")
i1e = _unary("special_i1e", "special.i1e")


def polygamma(n: int, input: Tensor, *, out: Any = None) -> Tensor:
    """The n-th derivative of digamma. Mirrors: ``torch.polygamma``."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return bind(SPECIAL["polygamma"], (_float(input),), {"n": int(n)})


def mvlgamma(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    """Log of the multivariate gamma function of dimension `p`. Mirrors: ``torch.mvlgamma``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float(input)
    # no domain check: PyTorch 2.x returns inf/nan below (p - 1) / 2
    shifts = x.new_tensor([-j / 2 for j in range(p)])
    terms = lgamma(x.unsqueeze(-1) + shifts).sum(-1)
    return terms + p * (p - 1) / 4 * math.log(math.pi)


TORCH = {"lgamma": lgamma, "digamma": digamma, "polygamma": polygamma, "erfinv": erfinv,
         "i0": i0, "mvlgamma": mvlgamma}
SPECIAL_NS = {"gammaln": lgamma, "digamma": digamma, "psi": digamma, "polygamma": polygamma,
              "multigammaln": mvlgamma, "erfinv": erfinv, "ndtri": ndtri, "erfcx": erfcx,
              "i0": i0, "i0e": i0e, "i1": i1, "i1e": i1e}


def _plain(name: str, compute: Callable[[Any, Any], Any]) -> Callable:
    """A function PyTorch defines without a derivative: its result never requires grad."""
    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        from hookgrad._ops._special import _SCIPY

        if _SCIPY is None:
            raise RuntimeError(f"hookgrad computes special.{name} with SciPy (scipy.special), "
                               "which is not installed")
        x = _float(input).detach()
        data = x.numpy()
        return Tensor._make(np.asarray(compute(_SCIPY, data), dtype=data.dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (no derivative, as PyTorch). Mirrors: ``torch.special.{name}``."
    return fn


SPECIAL_NS.update({name: _plain(name, compute) for name, compute in {
    "bessel_j0": lambda sp, x: sp.j0(x), "bessel_j1": lambda sp, x: sp.j1(x),
    "bessel_y0": lambda sp, x: sp.y0(x), "bessel_y1": lambda sp, x: sp.y1(x),
    "modified_bessel_i0": lambda sp, x: sp.i0(x), "modified_bessel_i1": lambda sp, x: sp.i1(x),
    "modified_bessel_k0": lambda sp, x: sp.k0(x), "modified_bessel_k1": lambda sp, x: sp.k1(x),
    "scaled_modified_bessel_k0": lambda sp, x: sp.k0e(x),
    "scaled_modified_bessel_k1": lambda sp, x: sp.k1e(x),
    "spherical_bessel_j0": lambda sp, x: sp.spherical_jn(0, x),
    "airy_ai": lambda sp, x: sp.airy(x)[0],
}.items()})
