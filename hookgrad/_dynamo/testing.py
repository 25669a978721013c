"""Backends that count and record graphs (spec compile.md §5.2).

Mirrors ``torch._dynamo.testing``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import math
import re

from hookgrad._tensor import Tensor
from hookgrad.compile.backends.backends import lookup_backend

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs", "normalize_gm",
           "same"]


class CompileCounter:
    """Counts graphs handed to it (``frame_count``) and their ``call_*`` nodes (``op_count``).

    Mirrors: ``torch._dynamo.testing.CompileCounter``.
    """

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        self.frame_count += 1
        self.op_count += sum(1 for n in gm.graph.nodes if "call" in n.op)
        return gm.forward

    def clear(self) -> None:
        """Reset both counts."""
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend(CompileCounter):
    """`CompileCounter` that also keeps the graphs and compiles them with a named backend.

    Mirrors: ``torch._dynamo.testing.CompileCounterWithBackend``.
    """

    def __init__(self, backend: Any) -> None:
        super().__init__()
        self.backend = backend
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        super().__call__(gm, example_inputs)
        self.graphs.append(gm)
        return lookup_backend(self.backend)(gm, example_inputs)


class EagerAndRecordGraphs:
    """Records every graph and runs it as the ``"eager"`` backend does.

    Mirrors: ``torch._dynamo.testing.EagerAndRecordGraphs``.
    """

    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        self.graphs.append(gm)
        return gm.forward


def normalize_gm(gm_str: str) -> str:
    """A printed graph without comment lines, trailing spaces or runs of blank lines (comments
    hold file paths, which differ between machines).

    Mirrors: ``torch._dynamo.testing.normalize_gm``.
    """
    no_comments = re.sub(r"(?m)^ *#.*\n?", "", gm_str)
    lines = [line.rstrip() for line in no_comments.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or not out or out[-1]:
            out.append(line)
    return "\n".join(out)


def same(ref: Any, res: Any, fp64_ref: Any = None, cos_similarity: bool = False,
         tol: float = 1e-4, equal_nan: bool = False, exact_dtype: bool = True,
         **_options: Any) -> bool:
    """Whether `res` matches `ref`: containers item by item, tensors by shape, dtype (with
    `exact_dtype`) and values within `tol` (relative and absolute; with `cos_similarity`, a
    cosine similarity of at least ``1 - tol``), other values by ``==``. PyTorch's tuning
    options for benchmark models (``ignore_non_fp``, IoU for booleans, ...) are accepted and
    not used.

    Mirrors: ``torch._dynamo.testing.same``.
    """
    if isinstance(ref, (list, tuple)):
        if not isinstance(res, (list, tuple)):
            raise AssertionError(f"type mismatch {type(ref)} {type(res)}")
        return len(ref) == len(res) and all(
            same(a, b, None, cos_similarity, tol, equal_nan, exact_dtype)
            for a, b in zip(ref, res))
    if isinstance(ref, dict):
        if not isinstance(res, dict):
            raise AssertionError(f"Expected res to be a dict, got {type(res)}")
        if set(ref) != set(res):
            raise AssertionError(f"keys mismatch {set(ref)} == {set(res)}")
        return all(same(ref[k], res[k], None, cos_similarity, tol, equal_nan, exact_dtype)
                   for k in ref)
    if isinstance(ref, Tensor):
        if not isinstance(res, Tensor) or tuple(ref.shape) != tuple(res.shape):
            return False
        if exact_dtype and ref.dtype != res.dtype:
            return False
        a = ref.detach().double()
        b = res.detach().double()
        if cos_similarity:
            denom = float(a.norm() * b.norm())
            return denom == 0.0 or float((a * b).sum()) / denom >= 1 - tol
        return bool(a.allclose(b, rtol=tol, atol=tol, equal_nan=equal_nan))
    if isinstance(ref, float) and isinstance(res, (int, float)):
        if math.isnan(ref):
            return equal_nan and math.isnan(res)
        return math.isclose(ref, res, rel_tol=tol, abs_tol=tol)
    return ref == res
