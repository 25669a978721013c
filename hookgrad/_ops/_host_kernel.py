"""Run a NumPy-only kernel on any backend's arrays by way of the host.

Some kernels exist only for NumPy arrays (SciPy's special functions, LAPACK decompositions,
hookgrad's own gamma-family series). A primitive built on one still has to accept another
backend's arrays (NOTE [Backends]): those go to the host, through the kernel, and back, one
array or each array of a tuple result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._backend import backend_of
from hookgrad._ops._elementwise import quiet

__all__ = ["on_host"]


def on_host(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (a NumPy kernel; floating-point warnings off) for arrays of any backend."""
    def impl(*arrays: Any, **params: Any) -> Any:
        first = arrays[0]
        if type(first) is np.ndarray:
            return fn(*arrays, **params)
        backend = backend_of(first)
        if not backend.has_data:  # meta: the kernel run on stand-ins gives the result's layout
            return backend.call_on_stand_ins(fn, arrays, params)
        out = fn(*(backend.to_host(a) for a in arrays), **params)
        if isinstance(out, tuple):
            return tuple(backend.from_host(o) for o in out)
        return backend.from_host(out)

    impl.__name__ = getattr(fn, "__name__", "impl")
    return quiet(impl)
