"""``grouped_mm`` of `hookgrad.nn.functional`: several matrix products in one call.

Mirrors: ``torch.nn.functional.grouped_mm`` (PyTorch's CPU kernel's arguments and checks). The
groups are plain matrix products joined with ``cat``/``stack``, so the graph shows those nodes
rather than ``GroupedMmBackward0``. ``offs`` (int32, cumulative ends) splits the 2-d operand:
the rows of ``mat_a`` (2-d x 3-d), the columns of ``mat_b`` (3-d x 2-d) or the shared dimension
(2-d x 2-d, one output matrix per group); two 3-d operands are a batched product.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import linalg as _linalg
from hookgrad._functional.shape import cat, stack
from hookgrad._tensor import Tensor

__all__ = ["grouped_mm"]

_DTYPES = ("float32", "bfloat16", "float16")


def _check_strides(m: Tensor) -> None:
    item = m.element_size()  # type: ignore[attr-defined]
    st = m.stride()  # type: ignore[attr-defined]
    if st[-1] == 1:
        lead = st[-2]
    elif st[-2] == 1:
        lead = st[-1]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(st)} for strides and "
                           f"{list(m.shape)} for sizes")
    if (lead * item) % 16:
        raise RuntimeError("strides should be multiple of 16 bytes")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype: Any = None) -> Tensor:
    """Grouped matrix products (see the module docstring).

    Mirrors: ``torch.nn.functional.grouped_mm``.
    """
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        kind = str(m.dtype).split(".")[-1]
        if kind not in _DTYPES:
            word = {"float64": "Double", "int64": "Long", "int32": "Int"}.get(kind, kind)
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {word}")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    both_3d = mat_a.dim() == 3 and mat_b.dim() == 3
    if (offs is None) != both_3d:
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and str(offs.dtype) != "torch.int32":
        raise RuntimeError("Offsets have to be int32")
    _check_strides(mat_a)
    _check_strides(mat_b)
    if both_3d:
        return _linalg.matmul(mat_a, mat_b)
    ends = [int(v) for v in offs.tolist()]  # type: ignore[union-attr]
    starts = [0, *ends[:-1]]
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        return cat([_linalg.matmul(mat_a[s:e], mat_b[g])
                    for g, (s, e) in enumerate(zip(starts, ends))], 0)
    if mat_a.dim() == 3 and mat_b.dim() == 2:
        return cat([_linalg.matmul(mat_a[g], mat_b[:, s:e])
                    for g, (s, e) in enumerate(zip(starts, ends))], 1)
    return stack([_linalg.matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in zip(starts, ends)], 0)
