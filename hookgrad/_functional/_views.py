"""Helpers shared by the view ops: run a view primitive and record how the view was made.

NOTE [View creation meta]
PyTorch remembers how each view was made, because some views must not be modified in place:
outputs of ops returning several views (``unbind``, ``split``, ``chunk``) and views made in
no-grad mode (when later modified with grad mode on). hookgrad stores that as
``_creation_meta`` in the view's ``__dict__`` only when it is not the default: ``"no_grad"``
or ``"multi_output"``; a view of such a view inherits it (PyTorch's propagation rule). The
in-place checks and the regeneration of stale views (`autograd/_copy_slices.py`,
`autograd/_edges.py`) read it.
"""

from __future__ import annotations

import operator
from typing import Any

from hookgrad._config import STATE
from hookgrad._dispatch import bind
from hookgrad._ops._checks import int_args
from hookgrad._ops._shapes import infer_size, normalize_dim
from hookgrad._tensor import Tensor

__all__: list[str] = []


def _view(prim: Any, src: Tensor, params: dict) -> Tensor:
    """Run a single-output view primitive; record its creation meta (NOTE above)."""
    out = bind(prim, (src,), params)
    if not STATE.grad_enabled:
        out._creation_meta = "no_grad"  # type: ignore[attr-defined]
    elif src._base is not None:
        meta = src.__dict__.get("_creation_meta")
        if meta is not None:
            out._creation_meta = meta  # type: ignore[attr-defined]
    return out


def _multi_view(prim: Any, src: Tensor, params: dict) -> tuple:
    outs = bind(prim, (src,), params)
    meta = "multi_output" if STATE.grad_enabled else "no_grad"
    for o in outs:
        o._creation_meta = meta  # type: ignore[attr-defined]
    return outs


UNSET: Any = object()  # "keyword not given" (None can be a meaningful value)


def one_spelling(args: tuple, keyword: Any, fn: str) -> tuple:
    """Sizes or dims given as varargs or as PyTorch's one keyword (``x.reshape(shape=(2, 3))``,
    ``x.permute(dims=(1, 0))``); both at once is PyTorch's TypeError."""
    if keyword is UNSET:
        return args
    if args:
        raise TypeError(f"{fn}() received an invalid combination of arguments: sizes given both "
                        "positionally and by keyword")
    return (keyword,)


def _size_args(size: tuple, fn: str = "view") -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return int_args(size[0], fn, "size")
    return int_args(size, fn, "size")


def _infer(size: tuple, numel: int) -> tuple:
    if -1 in size and numel == 0:
        known = 1
        for s in size:
            known *= s if s != -1 else 1
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(size)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
    return infer_size(size, numel)


def _dim(dim: int, t: Tensor) -> int:
    if type(dim) is not int:  # PyTorch's parser takes ints (and int-likes), never floats/strs
        try:
            dim = operator.index(dim)
        except TypeError:
            raise TypeError(f"dim must be an int, not {type(dim).__name__}") from None
    return normalize_dim(dim, t._data.ndim)
