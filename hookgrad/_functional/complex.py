"""Public complex-number functions: real/imaginary views, conjugation, angle, polar form.

PyTorch's ``z.real`` and ``z.imag`` are ``view_as_real(z).select(-1, 0 or 1)`` (their nodes are
``SelectBackward0`` over ``ViewAsRealBackward0``), so they are written the same way here and
share memory with `z` (writes through them change `z`).

NOTE [Lazy conjugation]
PyTorch's ``z.conj()`` is a view that flips a "conjugate" bit instead of negating the imaginary
parts; ``is_conj()`` reports the bit and ``resolve_conj()`` materialises it (a ``clone``).
hookgrad conjugates at once (``ConjBackward0``, a new array) and remembers the bit for the
result, so ``is_conj``/``resolve_conj`` answer as PyTorch's do. What differs: the result does
not share memory with `z` (a write to one is not seen through the other).
"""

from __future__ import annotations

import weakref
from typing import Any

from hookgrad._dispatch import bind
from hookgrad._dtypes import complex64, complex128
from hookgrad._functional._hash import hash_tensor
from hookgrad._ops._checks import check_tensor
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["view_as_real", "view_as_complex", "view_as_real_copy", "view_as_complex_copy",
           "real", "imag", "complex", "polar", "angle", "conj", "conj_physical", "resolve_conj",
           "is_conj", "sgn"]

# results of conj() by id (NOTE [Lazy conjugation]); not a WeakSet: tensors compare elementwise
_CONJUGATED: dict[int, weakref.ref] = {}


def _mark_conj(t: Tensor) -> None:
    key = id(t)
    _CONJUGATED[key] = weakref.ref(t, lambda _r: _CONJUGATED.pop(key, None))


def _has_conj(t: Tensor) -> bool:
    ref = _CONJUGATED.get(id(t))
    return ref is not None and ref() is t


def is_complex_dtype(t: Tensor) -> bool:
    return t._data.dtype.kind == "c"


def view_as_real(input: Tensor) -> Tensor:
    """A real view of complex `input` with a last dimension of size 2 (real, imaginary).

    Example:
        >>> import hookgrad as torch
        >>> torch.view_as_real(torch.tensor([1 + 2j]))
        tensor([[1., 2.]])

    Mirrors: ``torch.view_as_real`` (``ViewAsRealBackward0``).
    """
    check_tensor(input, "view_as_real")
    if not is_complex_dtype(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if _has_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj()")
    return bind(P["view_as_real"], (input,))


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of real `input` whose last dimension (size 2, stride 1) holds pairs.

    Mirrors: ``torch.view_as_complex`` (``ViewAsComplexBackward0``; PyTorch's checks).
    """
    check_tensor(input, "view_as_complex")
    data = input._data
    if data.dtype.kind != "f" or data.dtype.itemsize == 2:
        if data.dtype.itemsize == 2 and data.dtype.kind == "f":
            raise TypeError("hookgrad: view_as_complex of float16 makes complex32 tensors, "
                            "which hookgrad does not have")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype.scalar_type}")
    if data.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = data.itemsize
    if data.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any((s // item) % 2 for s in data.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return bind(P["view_as_complex"], (input,))


def view_as_real_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """A copy of ``view_as_real(input)``. Mirrors: ``torch.view_as_real_copy``."""
    return _copied(view_as_real(input), out)


def view_as_complex_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """A copy of ``view_as_complex(input)``. Mirrors: ``torch.view_as_complex_copy``."""
    return _copied(view_as_complex(input), out)


def _copied(view: Tensor, out: Any) -> Tensor:
    res = view.clone()  # type: ignore[attr-defined]
    if out is not None:
        out.copy_(res)
        return out
    return res


def real(input: Tensor) -> Tensor:
    """The real parts of `input` as a view (`input` itself when it is real).

    Mirrors: ``torch.real`` / ``Tensor.real``.
    """
    check_tensor(input, "real")
    if not is_complex_dtype(input):
        return input
    return _part(input, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of complex `input` as a view.

    Mirrors: ``torch.imag`` / ``Tensor.imag``.
    """
    check_tensor(input, "imag")
    if not is_complex_dtype(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(input, 1)


def _part(input: Tensor, which: int) -> Tensor:
    if _has_conj(input):  # read the parts of the eager conjugate through a resolved copy
        input = resolve_conj(input)
    return view_as_real(input).select(-1, which)  # type: ignore[attr-defined]


def _set_part(which: int) -> Any:
    def setter(self: Tensor, value: Any) -> None:
        part = real(self) if which == 0 else imag(self)
        part.copy_(value)  # type: ignore[attr-defined]

    return setter


REAL_PROPERTY = property(real, _set_part(0), doc="Mirrors: ``torch.Tensor.real``.")
IMAG_PROPERTY = property(imag, _set_part(1), doc="Mirrors: ``torch.Tensor.imag``.")


def complex(real: Tensor, imag: Tensor, *, out: Any = None) -> Tensor:  # noqa: A001
    """``real + i * imag`` from two real tensors of the same floating dtype.

    Example:
        >>> import hookgrad as torch
        >>> torch.complex(torch.tensor([1.0]), torch.tensor([2.0]))
        tensor([1.+2.j])

    Mirrors: ``torch.complex`` (``ComplexBackward0``).
    """
    return _pair_op("complex", real, imag, out)


def polar(abs: Tensor, angle: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """``abs * (cos(angle) + i sin(angle))``.

    Mirrors: ``torch.polar`` (``PolarBackward0``).
    """
    return _pair_op("polar", abs, angle, out)


def _pair_op(name: str, a: Tensor, b: Tensor, out: Any) -> Tensor:
    first, second = P[name].inputs
    check_tensor(a, name, first, 1)
    check_tensor(b, name, second, 2)
    da, db = a._data.dtype, b._data.dtype
    if da.kind != "f" or db.kind != "f" or da.itemsize == 2 or db.itemsize == 2:
        if da == db and da.kind == "f":
            raise TypeError(f"hookgrad: {name} of float16 tensors makes complex32 tensors, "
                            "which hookgrad does not have")
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.scalar_type} and {b.dtype.scalar_type}")
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.scalar_type} but got "
                           f"scalar type {b.dtype.scalar_type} for second argument")
    res = bind(P[name], (a, b))
    if out is not None:
        out.copy_(res)  # type: ignore[attr-defined]
        return out
    return res


def angle(input: Tensor) -> Tensor:
    """Element-wise argument in radians (0 or pi for real inputs).

    Mirrors: ``torch.angle`` (``AngleBackward0``).
    """
    check_tensor(input, "angle")
    if input._data.dtype.kind in "iub":
        from hookgrad._config import GLOBAL  # (ints compute in the default float dtype)

        return bind(P["angle"], (input,), {}, GLOBAL.default_dtype)
    return bind(P["angle"], (input,))


def conj(input: Tensor) -> Tensor:
    """The complex conjugate; `input` itself when it is real.

    Mirrors: ``torch.conj`` (a lazily conjugated view in PyTorch: NOTE [Lazy conjugation]).
    """
    check_tensor(input, "conj")
    if not is_complex_dtype(input):
        return input
    res = bind(P["_conj"], (input,))
    if not _has_conj(input):  # conj of a conjugated tensor: the bit flips back off
        _mark_conj(res)
    return res


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (a copy for complex `input`, `input` when real).

    Mirrors: ``torch.conj_physical`` (``ConjPhysicalBackward0``).
    """
    check_tensor(input, "conj_physical")
    if not is_complex_dtype(input):
        return input
    return bind(P["conj_physical"], (input,))


def resolve_conj(input: Tensor) -> Tensor:
    """A tensor without the conjugate bit (a clone when `input` has it).

    Mirrors: ``torch.resolve_conj``.
    """
    check_tensor(input, "resolve_conj")
    return input.clone() if _has_conj(input) else input  # type: ignore[attr-defined]


def is_conj(input: Tensor) -> bool:
    """Whether `input` carries the conjugate bit. Mirrors: ``torch.is_conj``."""
    check_tensor(input, "is_conj")
    return _has_conj(input)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) for complex tensors, ``sign`` for real ones.

    Mirrors: ``torch.sgn`` (``SgnBackward0`` for complex and floating inputs).
    """
    check_tensor(input, "sgn")
    if is_complex_dtype(input) or input._data.dtype.kind == "f":  # PyTorch's node for floats too
        return bind(P["sgn"], (input,))
    return input.sign()  # type: ignore[attr-defined]


def _cast_to(target: Any, name: str) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return self.to(target)  # type: ignore[attr-defined]

    method.__name__ = name
    method.__doc__ = f"``self.to({target})``. Mirrors: ``torch.Tensor.{name}``."
    return method


METHODS = {
    "cfloat": _cast_to(complex64, "cfloat"), "cdouble": _cast_to(complex128, "cdouble"),
    "real": REAL_PROPERTY, "imag": IMAG_PROPERTY, "conj": conj, "conj_physical": conj_physical,
    "resolve_conj": resolve_conj, "is_conj": is_conj, "sgn": sgn, "angle": angle,
    "view_as_complex": view_as_complex, "view_as_real": view_as_real,
    "hash_tensor": hash_tensor,
}
