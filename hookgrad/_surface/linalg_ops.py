"""The ``torch.<name>`` spellings of the decompositions: ``inverse``, ``det``, ``logdet``,
``slogdet``, ``cholesky``, and the ``torch.linalg`` entries built on the census composites.

Mirrors: ``torch.inverse``, ``torch.det``, ``torch.logdet``, ``torch.slogdet``, ``torch.cholesky``.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad import linalg as _linalg
from hookgrad._functional.linalg_decomp import det, inv, logdet, slogdet
from hookgrad._surface import copy_ops as _copy_ops
from hookgrad._surface import search_ops as _search_ops
from hookgrad._surface import special_ops as _special_ops
from hookgrad._surface import spectral_ops as _spectral
from hookgrad._surface.shape_ops import linalg_cross, matrix_power, vander
from hookgrad._surface.spectral_ops import (  # noqa: F401  (torch.<name>)
    cholesky_inverse,
    cholesky_solve,
    eig,
    lstsq,
    matrix_rank,
    pinverse,
    qr,
    svd,
    symeig,
    triangular_solve,
)
from hookgrad._tensor import Tensor

__all__ = ["inverse", "det", "logdet", "slogdet", "cholesky", *_spectral.__all__, "solve",
           *_copy_ops.FUNCTIONS, *_special_ops.TORCH, *_search_ops.FUNCTIONS]
globals().update(_copy_ops.FUNCTIONS)
globals().update(_search_ops.FUNCTIONS)
globals().update(_special_ops.TORCH)
solve = _spectral.TORCH["solve"]


def inverse(input: Tensor, *, out: Any = None) -> Tensor:
    """Mirrors: ``torch.inverse``."""
    return inv(input)


def cholesky(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The deprecated spelling of ``linalg.cholesky``. Mirrors: ``torch.cholesky``."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    return _linalg.cholesky(input, upper=upper)


def install_linalg() -> None:
    """Add the composite entries to ``hookgrad.linalg``."""
    _linalg.cross = linalg_cross
    _linalg.matrix_power = matrix_power
    _linalg.vander = lambda x, *, N=None: vander(x, N, increasing=True)
    _linalg.vander.__doc__ = "Mirrors: ``torch.linalg.vander`` (increasing powers)."
    for name, fn in _spectral.LINALG.items():
        setattr(_linalg, name, fn)


