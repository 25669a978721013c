"""Named tuples returned by ops with several outputs: ``max(dim)``, ``sort``, ``topk``...

Each class is a `tuple` subclass with named fields, like PyTorch's structseq types: it unpacks
as ``values, indices = x.max(1)``, indexes as ``r[0]`` and reads as ``r.values``; the repr is
PyTorch's, so printed results compare equal.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any


class _ReturnType(tuple):
    """Base of the generated return types (a fixed-length tuple with named fields)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    n_fields = 0
    n_sequence_fields = 0
    n_unnamed_fields = 0

    def __new__(cls, sequence: Any) -> _ReturnType:
        items = tuple(sequence)
        if len(items) != len(cls._fields):
            raise TypeError(
                f"torch.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(items)}-sequence given)"
            )
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple:
        return (type(self), (tuple(self),))


def _make(name: str, fields: tuple[str, ...]) -> type:
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": __name__,
        "__doc__": f"Mirrors: ``torch.return_types.{name}`` (fields: {', '.join(fields)}).",
        "_fields": fields,
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
    }
    for i, field in enumerate(fields):
        namespace[field] = property(itemgetter(i), doc=f"Field {i} ({field}).")
    return type(name, (_ReturnType,), namespace)


max = _make("max", ("values", "indices"))  # noqa: A001 - PyTorch's names
min = _make("min", ("values", "indices"))  # noqa: A001
sort = _make("sort", ("values", "indices"))
topk = _make("topk", ("values", "indices"))

__all__ = ["max", "min", "sort", "topk"]

# PyTorch's ``__all__`` also lists these
__all__ += [
    "aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "histogramdd", "kthvalue",
    "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_lu", "linalg_lu_factor",
    "linalg_lu_factor_ex", "lu_unpack", "median", "mode", "nanmedian"
]
