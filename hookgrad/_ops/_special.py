"""Special functions (``erf``, ``erfc``) on arrays of any backend, for op impls.

Layer 3. NumPy has no erf: SciPy's ufunc is used when it is installed (it dispatches to other
backends' arrays like any ufunc; CuPy's ``cupyx.scipy.special`` on the GPU), else an exact but
slow elementwise `math` fallback.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._backend import backend_of, namespace_of

__all__ = ["special"]


def _scipy_special() -> Any:
    try:
        import scipy.special as sp
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return sp


_SCIPY = _scipy_special()


def _fallback(name: str) -> Any:
    """Elementwise `math.<name>`: exact but slow; used only where SciPy is missing."""
    fn = getattr(math, name)

    def apply(x: Any) -> Any:
        return np.vectorize(fn, otypes=[x.dtype])(x) if x.size else x.copy()

    return apply


def special(name: str) -> Any:
    """The special function `name` (``erf``, ``erfc``) for arrays of any backend.

    NumPy has no erf: SciPy's ufunc is used when it is installed (CuPy's ``cupyx.scipy.special``
    on the GPU), else an exact but slow elementwise `math` fallback.
    """
    fallback = _fallback(name)

    def impl(x: Any) -> Any:
        xp = namespace_of(x)
        if getattr(xp, "__name__", "") == "cupy":  # pragma: no cover - GPU only
            import cupyx.scipy.special as csp  # type: ignore[import-not-found]

            return getattr(csp, name)(x)
        if _SCIPY is not None:
            return getattr(_SCIPY, name)(x)
        if xp is np:
            return fallback(x)
        backend = backend_of(x)  # the fallback runs on the host, then moves back
        return backend.from_host(fallback(backend.to_host(x)))

    impl.__name__ = name
    return impl
