"""In-place view changes: ``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``, ``swapdims_``,
``swapaxes_`` change a tensor's shape and strides, keeping its storage.

Mirrors: those ``torch.Tensor`` methods (torchopt builds its Adam step count with
``torch.zeros(1).squeeze_()``). As PyTorch they return the tensor itself and bump its version;
a leaf that requires grad raises PyTorch's in-place error while grad mode is on. A tensor with
autograd history (one that requires grad and has a ``grad_fn``) is not supported: PyTorch
rewrites its history in place, which hookgrad does not, so that raises NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._config import STATE
from hookgrad._dispatch import note_write
from hookgrad._functional import shape as _shape
from hookgrad._tensor import Tensor

__all__ = ["squeeze_", "unsqueeze_", "t_", "transpose_", "swapdims_", "swapaxes_"]


def _restride(self: Tensor, name: str, view: Callable[[Tensor], Tensor]) -> Tensor:
    if STATE.grad_enabled and self.requires_grad:
        if self.grad_fn is None and self._base is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation.")
        raise NotImplementedError(
            f"{name}() of a tensor with autograd history is not supported by hookgrad; use the "
            f"out-of-place {name[:-1]}()")
    out = view(self.detach())  # a view sharing the storage: its shape and strides become ours
    self.data = out
    note_write(self)
    return self


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """Mirrors: ``torch.Tensor.squeeze_``."""
    return _restride(self, "squeeze_", lambda t: _shape.squeeze(t, dim) if dim is not None
                     else _shape.squeeze(t))


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Mirrors: ``torch.Tensor.unsqueeze_``."""
    return _restride(self, "unsqueeze_", lambda t: _shape.unsqueeze(t, dim))


def t_(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.t_``."""
    return _restride(self, "t_", lambda t: t.t())


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Mirrors: ``torch.Tensor.transpose_``."""
    return _restride(self, "transpose_", lambda t: t.transpose(dim0, dim1))


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Mirrors: ``torch.Tensor.swapdims_``."""
    return _restride(self, "swapdims_", lambda t: t.transpose(dim0, dim1))


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """Mirrors: ``torch.Tensor.swapaxes_``."""
    return _restride(self, "swapaxes_", lambda t: t.transpose(axis0, axis1))


METHODS = {name: globals()[name] for name in __all__}
