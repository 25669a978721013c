"""Public inverse-normal, erfcx and Bessel functions over `hookgrad._ops.special_fns`.

Mirrors: ``torch.i0`` and ``torch.special.ndtri``, ``erfcx``, ``i0``, ``i0e``, ``i1``, ``i1e``
and the derivative-free Bessel/Airy functions (the gamma family is
`hookgrad._functional._pw_gamma`'s). Integer and bool inputs compute in the
default float dtype, as PyTorch's unary float ops do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

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


i0 = _unary("i0", "i0")
ndtri = _unary("special_ndtri", "special.ndtri")
erfcx = _unary("special_erfcx", "special.erfcx")
i0e = _unary("special_i0e", "special.i0e")
i1 = _unary("special_i1", "special.i1")
i1e = _unary("special_i1e", "special.i1e")


TORCH = {"i0": i0}
SPECIAL_NS = {"ndtri": ndtri, "erfcx": erfcx, "i0": i0, "i0e": i0e, "i1": i1, "i1e": i1e}


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
