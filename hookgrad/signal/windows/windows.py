"""The window functions of ``torch.signal.windows`` (values computed in float64, then cast).

Mirrors: ``torch.signal.windows.bartlett``, ``blackman``, ``cosine``, ``exponential``,
``gaussian``, ``general_cosine``, ``general_hamming``, ``hamming``, ``hann``, ``kaiser``,
``nuttall``: a symmetric window of length M has its period M - 1, a periodic one (``sym=False``)
has period M; length 0 gives an empty tensor, length 1 a single one where PyTorch does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

import hookgrad._functional.creation as C
from hookgrad._dtypes import float32, float64, get_default_dtype
from hookgrad._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M: int, dtype: Any, layout: Any) -> Any:
    dtype = get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != "torch.strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (float32, float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _make(values: np.ndarray, dtype: Any, requires_grad: bool) -> Tensor:
    out = C.tensor(np.asarray(values, dtype=np.float64).astype(dtype.np), dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def _period(M: int, sym: bool) -> int:
    return M - 1 if sym else M


def _center(M: int, sym: bool) -> float:
    return (M if not sym and M > 1 else M - 1) / 2.0


def general_cosine(M: int, *, a: Any, sym: bool = True, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    """Sum of cosines ``sum_i (-1)^i a_i cos(2 pi i n / N)``. Mirrors: ``torch.signal.windows.general_cosine``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _make(np.ones(M), dtype, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    n = np.arange(M)
    w = sum((-1) ** i * c * np.cos(2 * np.pi * i * n / _period(M, sym))
            for i, c in enumerate(a))
    return _make(w, dtype, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.signal.windows.general_hamming``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.signal.windows.hann``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout,
                           requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.signal.windows.hamming``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.signal.windows.blackman``."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Mirrors: ``torch.signal.windows.nuttall``."""
    _checks("nuttall", M, dtype, layout)
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """Triangle ``1 - |2n/N - 1|``. Mirrors: ``torch.signal.windows.bartlett``."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _make(np.ones(M), dtype, requires_grad)
    n = np.arange(M)
    return _make(1 - np.abs(2 * n / _period(M, sym) - 1), dtype, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """``sin(pi (n + 1/2) / N')``. Mirrors: ``torch.signal.windows.cosine``."""
    dtype = _checks("cosine", M, dtype, layout)
    denom = M + 1 if not sym and M > 1 else M
    return _make(np.sin(np.pi * (np.arange(M) + 0.5) / max(denom, 1)), dtype, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``exp(-((n - c) / std)^2 / 2)``. Mirrors: ``torch.signal.windows.gaussian``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    n = np.arange(M) - _center(M, sym)
    return _make(np.exp(-((n / std) ** 2) / 2), dtype, requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``exp(-|n - center| / tau)``. Mirrors: ``torch.signal.windows.exponential``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    c = _center(M, sym) if center is None else center
    return _make(np.exp(-np.abs(np.arange(M) - c) / tau), dtype, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - ((n - c) / c)^2)) / I0(beta)``. Mirrors: ``torch.signal.windows.kaiser``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _make(np.ones(M), dtype, requires_grad)
    c = _center(M, sym)
    r = (np.arange(M) - c) / c
    return _make(np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta), dtype,
                 requires_grad)
