"""Matrix products and norms. Mirrors the ``torch`` functions of the same names.

``matmul`` follows ATen's ``_matmul_impl`` step by step (dot / mv / mm / folding a batch into one
``mm`` / broadcast ``bmm``), so its ``grad_fn`` chain, saved tensors and hook calls are PyTorch's.
``norm`` follows ``torch.functional.norm``: numeric ``p`` and ``'fro'`` are vector norms
(``LinalgVectorNormBackward0``).
"""

from __future__ import annotations

import math
import operator
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad import _dispatch
from hookgrad._dispatch import bind
from hookgrad._dtypes import to_dtype
from hookgrad._functional._common import binary
from hookgrad._functional.einsum import einsum
from hookgrad._functional.sorting import amax, amin, reduce_dims
from hookgrad._ops._checks import not_tensor
from hookgrad._ops._shapes import broadcast_shapes, normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["matmul", "mm", "bmm", "dot", "inner", "mv", "outer", "ger", "addmm", "einsum",
           "norm"]

# ATen's C++ type names, used in its dtype-mismatch messages.
_CPP_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
    "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
    "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
    "bfloat16": "c10::BFloat16",
}


def _same_dtype(a: Tensor, b: Tensor, m1: str = "m1", m2: str = "m2") -> None:
    # (under CPU autocast the primitive's inputs are cast to one dtype first: AUTOCAST)
    if a._data.dtype != b._data.dtype and _dispatch.AUTOCAST[0] is None:
        raise RuntimeError(
            f"expected {m1} and {m2} to have the same dtype, but got: "
            f"{_CPP_NAMES.get(a.dtype.name, a.dtype.name)} != "
            f"{_CPP_NAMES.get(b.dtype.name, b.dtype.name)}"
        )


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors.

    Mirrors: ``torch.mm`` (``MmBackward0``; saves ``mat2`` then ``self``).
    """
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, p) = input._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _same_dtype(input, mat2)
    return bind(P["mm"], (input, mat2), _layouts(self_cm=input, mat2_cm=mat2))


def _col_major(t: Tensor) -> bool:
    """ATen's test in mm_mat1/mat2_backward: strides ``(1, rows)`` (NOTE [mm gradient
    layout] in `hookgrad._ops.linalg`)."""
    arr = t._data
    return arr.strides[0] == arr.itemsize and arr.strides[1] == arr.shape[0] * arr.itemsize


def _layouts(defaults: dict | None = None, **operands: Tensor) -> dict:
    """The ``*_cm`` params of mm/addmm that differ from their defaults (False unless given)."""
    out = {}
    for name, t in operands.items():
        cm = _col_major(t)
        if cm != (defaults or {}).get(name, False):
            out[name] = cm
    return out


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors with equal batch sizes.

    Mirrors: ``torch.bmm`` (``BmmBackward0``).
    """
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, _, k), shape2 = input._data.shape, mat2._data.shape
    if shape2[:2] != (b, k):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
            f"[{shape2[0]}, {shape2[1]}]."
        )
    _same_dtype(input, mat2)
    return bind(P["bmm"], (input, mat2))


@tensor_arguments
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors.

    Mirrors: ``torch.dot`` (``DotBackward0``).
    """
    a, b = input._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype.scalar_type} and {tensor.dtype.scalar_type}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively"
        )
    return bind(P["dot"], (input, tensor))


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product.

    Mirrors: ``torch.mv`` (``MvBackward0``).
    """
    a, v = input._data, vec._data
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}"
        )
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
            f"vec ({v.shape[0]})"
        )
    _same_dtype(input, vec, "mat", "vec")
    return bind(P["mv"], (input, vec))


@tensor_arguments
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``input.reshape(n, 1) * vec2``.

    Mirrors: ``torch.outer`` (``MulBackward0`` over ``ViewBackward0``, as ATen composes it).
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    return input.reshape(input._data.shape[0], 1) * vec2  # type: ignore[attr-defined]


ger = outer


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; `input` broadcasts to the product's shape.

    Mirrors: ``torch.addmm`` (``AddmmBackward0``; saves ``mat1`` then ``mat2``). As in PyTorch,
    ``beta=0`` ignores `input` (nan/inf in it do not propagate).
    """
    if mat1._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1._data.ndim}-D tensor")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2._data.ndim}-D tensor")
    (n, k), (k2, p) = mat1._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _same_dtype(mat1, mat2, "mat1", "mat2")
    _check_expandable(input._data.shape, (n, p))
    if input._data.dtype != mat1._data.dtype and _dispatch.AUTOCAST[0] is None:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {input.dtype.scalar_type} and "
            f"{mat2.dtype.scalar_type}"
        )
    params = {} if beta == 1 and alpha == 1 else {"beta": beta, "alpha": alpha}
    # addmm's mat2 defaults to transposed (``F.linear``'s ``weight.t()``)
    params.update(_layouts({"mat2_cm": True}, mat1_cm=mat1, mat2_cm=mat2))
    return bind(P["addmm"], (input, mat1, mat2), params)


def _check_expandable(shape: tuple, target: tuple) -> None:
    lead = len(target) - len(shape)
    for i, s in enumerate(shape):
        if lead < 0 or (s != 1 and s != target[lead + i]):
            raise RuntimeError(
                f"The expanded size of the tensor ({target[max(lead + i, 0)]}) must match the "
                f"existing size ({s}) at non-singleton dimension {max(lead + i, 0)}.  Target "
                f"sizes: {list(target)}.  Tensor sizes: {list(shape)}"
            )


# ---------------------------------------------------------------- matmul (ATen's _matmul_impl)
def _unsafe_view(t: Tensor, shape: Any) -> Tensor:
    return bind(P["_unsafe_view"], (t,), {"size": tuple(shape)})


def _prod(shape: Any) -> int:
    return math.prod(shape)


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """ATen's ``should_fold``: can the larger operand fold into a matrix for one mm/mv?"""
    larger = t1._data.ndim >= t2._data.ndim
    a = t1._data if larger else t2._data.swapaxes(-1, -2)
    dim_b = t2._data.ndim if larger else t1._data.ndim
    if not (a.ndim >= 3 and dim_b <= 2):
        return False
    if (t2 if larger else t1)._requires_grad:
        return True  # folding avoids materialising an expanded gradient for the small operand
    if t1._data.ndim == 2:
        return False
    if a.size == 0:
        return True
    strides = [s // a.itemsize for s in a.strides]
    return all(strides[i] == strides[i + 1] * a.shape[i + 1] for i in range(a.ndim - 2))


def _matmul_fold(t1_in: Tensor, t2_in: Tensor) -> Tensor:
    transpose = t2_in._data.ndim > t1_in._data.ndim
    if transpose:
        t1 = t2_in.transpose(-2, -1)  # type: ignore[attr-defined]
        t2 = t1_in.t() if t1_in._data.ndim == 2 else t1_in  # type: ignore[attr-defined]
    else:
        t1, t2 = t1_in, t2_in
    sizes1 = t1._data.shape
    out_shape = list(sizes1[:-1])
    folded = t1.reshape(_prod(out_shape), sizes1[-1])  # type: ignore[attr-defined]
    if t2._data.ndim == 2:
        out_shape.append(t2._data.shape[1])
        output = _unsafe_view(mm(folded, t2), out_shape)
        return output.transpose(-2, -1).contiguous() if transpose else output  # type: ignore
    return _unsafe_view(mv(folded, t2), out_shape)


def _matmul_batched(t1: Tensor, t2: Tensor) -> Tensor:
    s1, s2 = t1._data.shape, t2._data.shape
    d1, d2 = len(s1), len(s2)
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    batch1 = s1[: max(d1 - 2, 0)]
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    batch2 = s2[: max(d2 - 2, 0)]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and t1._requires_grad:
            return matmul(t1.squeeze(0), t2)  # type: ignore[attr-defined]
        if batch2[0] == 1 and t2._requires_grad:
            return matmul(t1, t2.squeeze(0))  # type: ignore[attr-defined]
    out_shape = list(broadcast_shapes(batch1, batch2))
    bp = _prod(out_shape)
    e1 = t1.expand(*out_shape, n, m1).reshape(bp, n, m1)  # type: ignore[attr-defined]
    vector_rhs = d2 == 1
    if vector_rhs:
        e2 = t2.expand(*out_shape, m2).reshape(bp, m2).unsqueeze(2)  # type: ignore[attr-defined]
    else:
        e2 = t2.expand(*out_shape, m2, p).reshape(bp, m2, p)  # type: ignore[attr-defined]
    if d1 > 1:
        out_shape.append(n)
    if d2 > 1:
        out_shape.append(p)
    out = bmm(e1, e2)
    if vector_rhs:
        out = out.squeeze(-1)  # type: ignore[attr-defined]
    return _unsafe_view(out, out_shape)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy-style broadcasting of batch dims.

    1-D·1-D is ``dot``, 2-D·1-D ``mv``, 1-D·2-D and 2-D·2-D ``mm``; larger operands fold into
    one ``mm``/``mv`` when possible, else broadcast into a ``bmm``.

    Mirrors: ``torch.matmul`` (the same node chain as ATen's ``_matmul_impl``).
    """
    try:
        d1, d2 = input._data.ndim, other._data.ndim
    except AttributeError:
        bad, pos = (input, 1) if not isinstance(input, Tensor) else (other, 2)
        raise not_tensor("matmul", bad, ("input", "other")[pos - 1], pos) from None
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
        )
    if input._data.dtype.kind == "b" and other._data.dtype.kind == "b":  # no Bool kernels
        kernel = "dot" if d1 == 1 and d2 == 1 else "addmm_impl_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        out = mm(input.unsqueeze(0), other)  # type: ignore[attr-defined]
        return bind(P["_matmul_squeeze_"], (out,), {"dim": 0})
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _matmul_fold(input, other)
    return _matmul_batched(input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Inner product over the last dim (``dot`` for 1-D; scalars multiply).

    Mirrors: ``torch.inner`` (composite: ``tensordot`` over the last dims; here ``matmul`` with
    the other operand's last dim moved in front, so node names differ for N-D inputs).
    """
    if input._data.ndim == 0 or other._data.ndim == 0:
        return binary(P["mul"], input, other)
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    if input._data.ndim == 1 and other._data.ndim == 1:
        return dot(input, other)
    return _inner_nd(input, other)


def _inner_nd(a: Tensor, b: Tensor) -> Tensor:
    # out[i..., j...] = sum_k a[i..., k] * b[j..., k]
    b2 = b.reshape(-1, b._data.shape[-1]).t()  # type: ignore[attr-defined]
    out = matmul(a, b2)
    return out.reshape(*a._data.shape[:-1], *b._data.shape[:-1])  # type: ignore[attr-defined]


# ---------------------------------------------------------------- norms
def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The ``ord``-norm of `x` over `dim` (all dims by default) viewed as one vector.

    Mirrors: ``torch.linalg.vector_norm`` (``LinalgVectorNormBackward0``).
    """
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            + x.dtype.scalar_type
        )
    if not isinstance(ord, (int, float)):  # PyTorch's parser (a bool is a number there)
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    dims = reduce_dims(dim, x._data.ndim) if dim is not None else None
    ord = float(ord)
    if ord < 0 or math.isinf(ord):
        shape = x._data.shape
        reduced = dims if dims else tuple(range(len(shape)))
        if any(shape[d] == 0 for d in reduced) or (not shape and x._data.size == 0):
            word = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else f"{ord:g}")
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {word} norm on an empty tensor because "
                "the operation does not have an identity"
            )
    params: dict = {"ord": _plain(ord), "dim": dims, "keepdim": keepdim}
    if dtype is not None:
        params["dtype"] = to_dtype(dtype)
    return bind(P["linalg_vector_norm"], (x,), params)


def _plain(p: float) -> Any:
    return int(p) if p.is_integer() else p


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None,
         dtype: Any = None) -> Tensor:
    """Vector norm for numeric `p` and for ``'fro'`` over at most two dims.

    Mirrors: ``torch.norm`` (deprecated in PyTorch but widely used). ``'nuc'`` and matrix norms
    over more than two dims go to ``hookgrad.linalg.matrix_norm``.
    """
    if out is not None:
        raise TypeError("hookgrad.norm does not support out=")
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input._data.ndim))
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _rmatmul(self: Tensor, other: Tensor) -> Tensor:
    return matmul(other, self)


METHODS = {
    "matmul": matmul, "__matmul__": matmul, "__rmatmul__": _rmatmul, "mm": mm, "bmm": bmm,
    "dot": dot, "inner": inner, "mv": mv, "outer": outer, "ger": ger, "addmm": addmm,
    "norm": norm,
}


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """Frobenius, 1, -1, inf or -inf norm of the matrices over the two dims `dim`.

    Mirrors: ``torch.linalg.matrix_norm`` (composed as ATen composes it: ``'fro'`` is a vector
    2-norm, ``1``/``inf`` an ``amax`` of vector 1-norms, ``-1``/``-inf`` an ``amin``).
    """
    ndim = A._data.ndim
    if ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}"
        )
    dims = [normalize_dim(operator.index(d), ndim) for d in dim]
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, dims, keepdim, dtype=dtype)
        if ord == "nuc":
            raise NotImplementedError("hookgrad.linalg.matrix_norm: 'nuc' needs an SVD")
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if abs(ord) == 2:
        raise NotImplementedError("hookgrad.linalg.matrix_norm: ord=+-2 needs an SVD")
    if abs(ord) not in (1, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = (dims[1], dims[0]) if abs(ord) == math.inf else (dims[0], dims[1])
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1.0, (d0,), keepdim, dtype=dtype)
    return (amax if ord > 0 else amin)(sums, d1, keepdim)
