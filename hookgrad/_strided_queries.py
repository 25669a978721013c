"""Sparse and quantized queries whose answer for a dense, strided tensor is defined.

Mirrors: ``torch.Tensor.to_dense``, ``dense_dim``, ``sparse_dim``, ``is_sparse_csr``,
``dequantize``, ``storage_type`` and ``torch.dequantize``. Every hookgrad tensor is dense,
strided and not quantized, so each answers as PyTorch does for such a tensor: ``to_dense`` and
``dequantize`` return the tensor itself, a dense tensor has ``ndim`` dense and 0 sparse
dimensions. The entry points that need a sparse or quantized tensor are stand-ins
(`hookgrad._unsupported`).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from hookgrad import _storage

from hookgrad._tensor import Tensor

__all__ = ["dequantize", "install"]


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    """The tensor itself (already dense), or a cast copy when `dtype` differs.

    Mirrors: ``torch.Tensor.to_dense``.
    """
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _dense_dim(self: Tensor) -> int:
    """Every dimension of a strided tensor is dense. Mirrors: ``torch.Tensor.dense_dim``."""
    return self.dim()


def _sparse_dim(self: Tensor) -> int:
    """No sparse dimensions. Mirrors: ``torch.Tensor.sparse_dim``."""
    return 0


def dequantize(tensor: Any) -> Any:
    """A non-quantized tensor is returned as is. Mirrors: ``torch.dequantize``."""
    if isinstance(tensor, Tensor):
        return tensor
    raise NotImplementedError("Could not run 'aten::dequantize.tensors' with arguments from the "
                              "'CPU' backend (hookgrad has no quantized tensors).")


def _dequantize(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.dequantize`` (the tensor itself: it is not quantized)."""
    return self


def install() -> None:
    """Set the methods on `Tensor` where it has none yet."""
    for name, fn in (("to_dense", _to_dense), ("dense_dim", _dense_dim),
                     ("sparse_dim", _sparse_dim), ("dequantize", _dequantize)):
        if not hasattr(Tensor, name):
            fn.__name__ = fn.__qualname__ = name
            setattr(Tensor, name, fn)
    if not hasattr(Tensor, "is_sparse_csr"):
        Tensor.is_sparse_csr = property(lambda self: False,  # type: ignore[attr-defined]
                                        doc="Always False. Mirrors: ``Tensor.is_sparse_csr``.")


def _storage_type(self: Tensor) -> Any:
    """The legacy storage class of the dtype (``torch.FloatStorage`` for float32; a stand-in
    class in hookgrad). Mirrors: ``torch.Tensor.storage_type``."""
    if not _storage._TYPED_WARNED[0]:  # PyTorch's once-per-process TypedStorage warning
        warnings.warn(_storage._TYPED_MSG, UserWarning, stacklevel=2)
        _storage._TYPED_WARNED[0] = True
    return getattr(sys.modules["hookgrad"], self.dtype.legacy_name.replace("Tensor", "Storage"))


def install_storage_type() -> None:
    """Set ``Tensor.storage_type`` (after the stand-in storage classes exist)."""
    if not hasattr(Tensor, "storage_type"):
        Tensor.storage_type = _storage_type  # type: ignore[attr-defined]
