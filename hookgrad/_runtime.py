"""Process-wide runtime switches scripts set: thread counts and deterministic algorithms.

Mirrors: ``torch.set_num_threads``, ``torch.get_num_threads``,
``torch.use_deterministic_algorithms``, ``torch.are_deterministic_algorithms_enabled``.
NumPy's BLAS thread pool is fixed when NumPy loads (``OMP_NUM_THREADS``...), so the thread count
is recorded and reported, not applied; every hookgrad op is already deterministic.
"""

from __future__ import annotations

import os

__all__ = ["set_num_threads", "get_num_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled"]

_threads = [int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or (os.cpu_count() or 1)]
_deterministic = [False]


def set_num_threads(num: int) -> None:
    """Record the intra-op thread count. Mirrors: ``torch.set_num_threads``."""
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = num


def get_num_threads() -> int:
    """The recorded intra-op thread count. Mirrors: ``torch.get_num_threads``."""
    return _threads[0]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag (hookgrad's ops are deterministic). Mirrors: ``torch.use_deterministic_algorithms``."""
    _deterministic[0] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """Mirrors: ``torch.are_deterministic_algorithms_enabled``."""
    return _deterministic[0]


_fill_uninitialized = [True]


def get_deterministic_fill_uninitialized_memory() -> bool:
    """Mirrors: ``torch._C._get_deterministic_fill_uninitialized_memory``."""
    return _fill_uninitialized[0]


def set_deterministic_fill_uninitialized_memory(mode: bool) -> None:
    """Mirrors: ``torch._C._set_deterministic_fill_uninitialized_memory``."""
    if not isinstance(mode, bool):
        raise TypeError(f"expected a bool, but got {type(mode).__name__}")
    _fill_uninitialized[0] = mode


def fill_uninitialized_(array: object) -> None:
    """In deterministic mode, fill a new "uninitialised" NumPy array as PyTorch does.

    PyTorch fills ``empty`` results with NaN (floating and complex: NaN real part), the
    largest value (integers) or True (bool) so that reading them is reproducible and
    visible; hookgrad's arrays start zeroed, so outside that mode nothing changes.
    """
    if not (_deterministic[0] and _fill_uninitialized[0]):
        return  # the common case, on every ``empty``: nothing to import or inspect
    import numpy as np  # noqa: PLC0415 - this module stays import-light

    if not isinstance(array, np.ndarray):
        return
    kind = array.dtype.kind
    if kind in "fcV":  # "V": NumPy's kind for the ml_dtypes floats (bfloat16)
        array.fill(np.nan)
    elif kind == "b":
        array.fill(True)
    elif kind in "iu":
        array.fill(np.iinfo(array.dtype).max)
