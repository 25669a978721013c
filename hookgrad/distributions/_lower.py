"""The tensor functions the distributions use, from the layers below them.

The distributions sit above ``nn`` and ``autograd``; importing the ``hookgrad`` package from
here would reach up the layers (and into a partly initialised package), so each function comes
from the module that defines it.
"""

from __future__ import annotations

from hookgrad import linalg
from hookgrad._dtypes import bool_ as bool  # noqa: A001 - ``torch.bool``'s spelling
from hookgrad._dtypes import finfo
from hookgrad._functional._pw_compare import where
from hookgrad._functional.creation import (
    arange,
    as_tensor,
    eye,
    full,
    full_like,
    ones_like,
    zeros_like,
)
from hookgrad._functional.random import rand, randn
from hookgrad._functional.rearrange import flip
from hookgrad._functional.shape import cat, stack, transpose
from hookgrad._legacy import contiguous_format
from hookgrad._ops._shapes import broadcast_shapes
from hookgrad.nn import functional

__all__ = ["arange", "as_tensor", "bool", "broadcast_shapes", "cat", "contiguous_format", "eye",
           "finfo", "flip", "full", "full_like", "functional", "linalg", "ones_like", "rand",
           "randn", "stack", "transpose", "where", "zeros_like"]
