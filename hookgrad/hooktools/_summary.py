"""Short text summaries of what a hook received and returned, for hookgrad and PyTorch values.

A tensor reads ``f32[2, 4] |1.23|`` (dtype, shape, L2 norm); ``None`` slots stay ``None`` so a
user sees which gradients were missing; containers are summarised element by element (cut after
a few). Nothing here imports torch or hookgrad: values are recognised by their attributes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["describe", "describe_args", "is_tensor", "replaced"]

_MAX_ITEMS = 6
_SHORT_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                 "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                 "bool": "bool", "complex64": "c64", "complex128": "c128"}


def is_tensor(x: Any) -> bool:
    """Whether `x` looks like a hookgrad or PyTorch tensor."""
    return hasattr(x, "grad_fn") and hasattr(x, "requires_grad") and hasattr(x, "shape")


def _norm(t: Any) -> str:
    try:
        a = np.asarray(t.detach().cpu().numpy()) if hasattr(t, "cpu") else np.asarray(t.detach())
    except Exception:  # noqa: BLE001 - a tensor without host data (meta, sparse): no norm
        return ""
    if a.dtype.kind not in "fcV" or a.size == 0:
        return ""
    n = float(np.sqrt(np.sum(np.abs(a.astype(np.complex128 if a.dtype.kind == "c"
                                                else np.float64)) ** 2)))
    return f" |{n:.4g}|" if math.isfinite(n) else f" |{n}|"


def describe(x: Any, depth: int = 0) -> str:
    """One value: a tensor as dtype, shape and norm; None; a container; else the type name."""
    if x is None:
        return "None"
    if is_tensor(x):
        dtype = str(x.dtype).replace("torch.", "").replace("hookgrad.", "")
        return f"{_SHORT_DTYPES.get(dtype, dtype)}{list(x.shape)}{_norm(x)}"
    if isinstance(x, (tuple, list)) and depth < 2:
        parts = [describe(e, depth + 1) for e in x[:_MAX_ITEMS]]
        if len(x) > _MAX_ITEMS:
            parts.append(f"... {len(x) - _MAX_ITEMS} more")
        return ("(" if isinstance(x, tuple) else "[") + ", ".join(parts) + \
            (",)" if isinstance(x, tuple) and len(x) == 1 else ")" if isinstance(x, tuple) else "]")
    if isinstance(x, dict) and depth < 2:
        items = list(x.items())[:_MAX_ITEMS]
        return "{" + ", ".join(f"{k}: {describe(v, depth + 1)}" for k, v in items) + "}"
    if isinstance(x, (bool, int, float, str)):
        return repr(x) if len(repr(x)) < 40 else repr(x)[:37] + "..."
    return type(x).__name__


def describe_args(args: tuple, kwargs: dict, skip_first: bool) -> str:
    """The arguments a hook was called with (the module/optimizer it was for is left out)."""
    shown = args[1:] if skip_first else args
    text = ", ".join(describe(a) for a in shown)
    if kwargs:
        text += (", " if text else "") + ", ".join(f"{k}={describe(v)}" for k, v in kwargs.items())
    return text


def replaced(result: Any) -> bool:
    """Whether a hook's return value replaces what it was given (every hook kind: non-None)."""
    return result is not None
