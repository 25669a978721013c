"""``hookgrad.functional``: the module PyTorch's ``torch/functional.py`` functions live in.

Mirrors: ``torch.functional``. Code imports ``from torch.functional import einsum`` (or
``broadcast_tensors``, ``split``, ...); each name is the top-level function of the same name,
read when first asked for (a name hookgrad does not have is an AttributeError here too).
"""

from __future__ import annotations

import sys
from typing import Any

_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft",
           "lu", "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index")


def __getattr__(name: str) -> Any:
    # the package finishes importing before any caller can ask, so it is in sys.modules;
    # ``__all__`` lists only the names hookgrad has, so ``import *`` never fails
    package = sys.modules["hookgrad"]
    if name == "__all__":
        return [n for n in _NAMES if hasattr(package, n)]
    if name in _NAMES:
        return getattr(package, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | {n for n in _NAMES if hasattr(sys.modules["hookgrad"], n)})
