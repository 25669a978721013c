"""The op catalogue of the differential fuzzer: what a random program may do to a tensor.

Each entry is ``name -> Op(kind, arity, call, params)``: ``call(lib, *tensors, **params)`` runs
unchanged on ``torch`` and on ``hookgrad`` (the one-lambda pattern), and ``params(rng, *metas)``
draws the op's parameters from the inputs' shapes/dtypes (a `Meta`), or returns None when the
op does not apply to those inputs. Parameters are plain data (ints, tuples, nested lists), so a
program is a list of steps that can be printed, stored in a regression test and replayed.
Some draws are deliberately invalid (out-of-range dims, leaves written in place, shapes that do
not broadcast): PyTorch's exception type is part of what is compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Meta:
    """What the generator knows of a tensor: shape, dtype name, requires_grad, is a leaf."""

    shape: tuple
    dtype: str
    requires_grad: bool
    is_leaf: bool


@dataclass(frozen=True)
class Op:
    kind: str  # "pointwise", "binary", "reduction", "view", "index", "inplace", "nn", "misc"
    arity: int
    call: Callable[..., Any]
    params: Callable[..., Any]
    # the shape of a fresh second operand (a weight, a target) from the first input's Meta, or
    # None when the op does not apply; without it the second operand broadcasts with the first
    other: Callable[..., Any] | None = None


def _none(rng, *metas):
    return {}


def _is_float(m: Meta) -> bool:
    """A floating dtype (the only ones that can require grad here)."""
    return m.dtype.startswith("float")


def _dim(rng, m: Meta, bad: float = 0.03):
    if not m.shape:
        return None
    if rng.random() < bad:
        return int(len(m.shape) + rng.integers(0, 2))  # out of range: IndexError in both
    return int(rng.integers(-len(m.shape), len(m.shape)))


def _floaty(rng, *metas):
    return {} if all(_is_float(m) for m in metas) else None


def _scalar(rng):
    return [2, -1.5, 0.5, 3, True][int(rng.integers(0, 5))]


def _other_or_scalar(rng, a: Meta, b: Meta):
    return {} if rng.random() < 0.8 else {"scalar": _scalar(rng)}


def _binary(fn):
    def call(lib, a, b, scalar=None):
        return fn(lib, a, b if scalar is None else scalar)

    return call


def _reduce_params(rng, m: Meta):
    if not m.shape:
        return {"dim": None, "keepdim": False}
    return {"dim": _dim(rng, m), "keepdim": bool(rng.integers(0, 2))}


def _reduce(method):
    def call(lib, x, dim, keepdim):
        f = getattr(x, method)
        return f() if dim is None else f(dim=dim, keepdim=keepdim)

    return call


def _softmax_params(rng, m: Meta):
    return {"dim": _dim(rng, m)} if _is_float(m) and m.shape else None


def _reshape_params(rng, m: Meta):
    n = int(np.prod(m.shape)) if m.shape else 1
    if n == 0:
        return {"shape": [-1] if rng.random() < 0.7 else [0, -1]}  # the latter is ambiguous
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    d = int(rng.choice(divisors))
    return {"shape": [d, -1] if rng.random() < 0.7 else [n // d, d, 1]}


def _perm_params(rng, m: Meta):
    return {"dims": [int(i) for i in rng.permutation(len(m.shape))]} if m.shape else None


def _transpose_params(rng, m: Meta):
    return {"d0": _dim(rng, m, 0), "d1": _dim(rng, m)} if m.shape else None


def _slice_params(rng, m: Meta):
    if not m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    n = m.shape[d]
    start = int(rng.integers(0, max(n, 1)))
    return {"dim": d, "start": start, "stop": int(rng.integers(start, n + 2)),
            "step": int(rng.integers(1, 3))}


def _slice(lib, x, dim, start, stop, step):
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


def _select_params(rng, m: Meta):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    return {"dim": d, "index": int(rng.integers(-m.shape[d], m.shape[d] + (rng.random() < 0.03)))}


def _expand_params(rng, m: Meta):
    shape = [(int(rng.integers(1, 4)) if s == 1 else s) for s in m.shape]
    return {"shape": [2, *shape] if rng.random() < 0.5 else shape}


def _unsq_params(rng, m: Meta):
    return {"dim": int(rng.integers(-len(m.shape) - 1, len(m.shape) + 1))}


def _multi_params(rng, m: Meta):
    if not m.shape or m.shape[0] == 0:
        return None
    return {"pick": int(rng.integers(0, m.shape[0])), "size": int(rng.integers(1, 3))}


def _list_index_params(rng, m: Meta):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    idx = [int(i) for i in rng.integers(-m.shape[d], m.shape[d], size=int(rng.integers(1, 4)))]
    return {"dim": d, "idx": idx}


def _list_index(lib, x, dim, idx):
    return x[(slice(None),) * dim + (idx,)]


def _two_lists_params(rng, m: Meta):
    if len(m.shape) < 2 or 0 in m.shape:
        return None
    k = int(rng.integers(1, 4))
    a = [int(i) for i in rng.integers(0, m.shape[0], size=k)]
    b = [int(i) for i in rng.integers(0, m.shape[-1], size=k)]
    return {"a": a, "b": b}


def _mask_params(rng, m: Meta):
    if not m.shape:
        return None
    k = int(rng.integers(1, len(m.shape) + 1))
    return {"mask": (rng.random(m.shape[:k]) > 0.4).tolist()}


def _gather_params(rng, m: Meta):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    shape = [int(rng.integers(1, s + 1)) for s in m.shape]
    return {"dim": d, "index": rng.integers(0, m.shape[d], size=shape).tolist()}


def _index_select_params(rng, m: Meta):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    return {"dim": d, "index": rng.integers(0, m.shape[d], size=int(rng.integers(1, 4))).tolist()}
