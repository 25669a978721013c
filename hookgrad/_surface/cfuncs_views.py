"""In-place view and resize methods, Python-callable maps, and linalg method forms.

Mirrors: ``torch.Tensor.squeeze_``/``unsqueeze_``/``t_``/``transpose_``/``swapaxes_``/
``swapdims_``/``as_strided_`` (the tensor takes the view's geometry and node, stays a view
exactly when it was one, and its version moves on), ``resize_``/``resize_as_`` (data only,
refused for tensors that require grad), the deprecated autograd ``resize``/``resize_as``
(``ResizeBackward``), ``apply_``/``map_``/``map2_``, ``narrow_copy``, ``as_strided_scatter``,
the in-place special functions and the linalg methods. ``solve``/``lstsq``/``symeig``/``eig``
raise PyTorch's "removed" RuntimeError.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import hookgrad._functional.shape as S
from hookgrad._config import STATE
from hookgrad._dispatch import bind
from hookgrad._functional._slicing import as_strided as _as_strided
from hookgrad._functional._slicing import storage_offset_of
from hookgrad._ops import inplace_views as _iv  # noqa: F401  (registers the in-place views)
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._functional import _pw_gamma
from hookgrad._storage import _flat
from hookgrad._surface import special_ops, spectral_ops
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import check_view_inplace, move_autograd_identity
from hookgrad.autograd._recorder import check_inplace_allowed
from hookgrad.autograd.function import Function

__all__ = ["as_strided_", "as_strided_scatter", "resize_as_", "i0_"]

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def _check_leaf(self: Tensor) -> None:
    """Autograd's in-place check of a leaf, which comes before the op's argument checks."""
    if self._requires_grad and self._grad_fn is None and STATE.grad_enabled and \
            self._base is None:
        raise RuntimeError(_LEAF)


def _take_view(self: Tensor, prim: str, params: dict) -> Tensor:
    """Give `self` the geometry and node of ``prim(self)`` (PyTorch's in-place view ops)."""
    _check_leaf(self)
    if self._base is not None and STATE.grad_enabled and self.requires_grad:
        # PyTorch's check_inplace for a view: its creation meta (multi-output, no-grad views),
        # then "a view of a leaf Variable that requires grad"
        check_view_inplace(self, (self,))
        check_inplace_allowed(self)
    view = bind(P[prim], (self,), params)
    self._data = view._data
    for key, value in view.__dict__.items():
        if key.startswith("_bt_"):  # inside vmap: the physical batched value moves along too
            self.__dict__[key] = value
    if view._grad_fn is not None:
        move_autograd_identity(self, view._grad_fn, view._output_nr)
    if view._fw_grads is not None:  # forward AD: the tangent takes the same view
        self._fw_grads = view._fw_grads
    vc = self._vc()
    vc.value += 1
    if self._base is not None:  # a view stays a view of its base, one step further
        self._view_chain = view._view_chain
        self._view_version = vc.value
    return self


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """Mirrors: ``torch.Tensor.squeeze_``."""
    _check_leaf(self)
    if dim is None:
        return _take_view(self, "squeeze_", {})
    if isinstance(dim, (tuple, list)):
        return _take_view(self, "squeeze_dims_", {"dim": tuple(S._dim(d, self) for d in dim)})
    return _take_view(self, "squeeze_dim_", {"dim": S._dim(dim, self)})


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Mirrors: ``torch.Tensor.unsqueeze_``."""
    _check_leaf(self)
    S.unsqueeze(self.detach(), dim)  # PyTorch's argument checks
    d = int(dim) % (self.dim() + 1)
    return _take_view(self, "unsqueeze_", {"dim": d})


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Mirrors: ``torch.Tensor.transpose_`` (also ``swapaxes_``/``swapdims_``)."""
    _check_leaf(self)
    return _take_view(self, "transpose_", {"dim0": S._dim(dim0, self), "dim1": S._dim(dim1, self)})


def t_(self: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.t_``."""
    _check_leaf(self)
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return _take_view(self, "t_", {})


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """Mirrors: ``torch.as_strided_``."""
    _as_strided(input.detach(), size, stride, storage_offset)  # PyTorch's checks
    own = storage_offset_of(input)
    offset = own if storage_offset is None else int(storage_offset)
    item = input._data.itemsize
    params = {"size": tuple(int(s) for s in size), "stride": tuple(int(s) for s in stride),
              "storage_offset": offset - own,
              "self_geometry": tuple(s // item for s in input._data.strides)}
    return _take_view(input, "as_strided_", params)


def _sizes(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)) or (
            len(args) == 1 and type(args[0]).__name__ == "Size"):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Re-shape over the same storage (grown with zeros if too small). Mirrors: ``torch.Tensor.resize_``."""
    shape = _sizes(sizes)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == tuple(self.shape):
        return self
    need = math.prod(shape)
    offset = storage_offset_of(self)
    store = _flat(self._storage_data())
    if offset + need > store.shape[0]:
        grown = np.zeros(offset + need, dtype=self._data.dtype)
        grown[: store.shape[0]] = store
        source = Tensor._make(grown)
    else:
        source = self
    return self.set_(source, offset, shape)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """Mirrors: ``torch.resize_as_``."""
    return resize_(input, tuple(the_template.shape))


class Resize(Function):
    """The deprecated autograd resize: a reshape that keeps the element count."""

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, sizes: tuple) -> Tensor:
        numel = math.prod(sizes)
        if tensor.numel() != numel:
            shape = "x".join(str(n) for n in tensor.shape)
            want = "x".join(str(n) for n in sizes)
            raise RuntimeError(
                f"requested resize to {want} ({numel} elements in total), but the given tensor "
                f"has a size of {shape} ({tensor.numel()} elements). autograd's resize can only "
                "change the shape of a given tensor, while preserving the number of elements. ")
        ctx.sizes = tuple(tensor.shape)
        return tensor.contiguous().view(sizes)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        return grad.contiguous().view(ctx.sizes), None


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Mirrors: ``torch.Tensor.resize`` (deprecated; ``ResizeBackward``)."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return Resize.apply(self, _sizes(sizes))


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Mirrors: ``torch.Tensor.resize_as`` (deprecated; ``ResizeBackward``)."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return Resize.apply(self, tuple(tensor.shape))


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: Any = None) -> Tensor:
    """A copy of `input` with `src` written at the positions of its ``as_strided`` view.

    Mirrors: ``torch.as_strided_scatter``: the positions count in `input`'s elements in
    row-major order; gradients as PyTorch's (through ``index_put``, not one fused node)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    numel = input.numel()
    offset = 0 if storage_offset is None else int(storage_offset)
    positions = np.arange(max(numel, 1), dtype=np.int64)
    span = offset + 1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0
    if span > numel or offset < 0:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {input._data.itemsize} requiring a "
                           f"storage size of {span * input._data.itemsize} are out of bounds "
                           f"for storage of size {numel * input._data.itemsize}")
    item = positions.itemsize
    idx = np.lib.stride_tricks.as_strided(positions[offset:], size,
                                          tuple(st * item for st in stride))
    if tuple(idx.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(idx.shape)}")
    where = np.unravel_index(idx.reshape(-1), tuple(input.shape)) if input.dim() else ()
    if not where:
        return src.reshape(()).to(input.dtype).clone() if src.numel() else input.clone()
    return input.index_put(tuple(Tensor._make(w.copy()) for w in where),
                           src.reshape(-1).to(input.dtype))


def _callable_check(self: Tensor, name: str) -> None:
    if self._requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _write(self: Tensor, values: list) -> Tensor:
    arr = np.array(values, dtype=object).reshape(self._data.shape)
    kind = self._data.dtype.kind
    conv = (lambda v: v) if kind == "f" else (lambda v: bool(v)) if kind == "b" else (
        lambda v: int(v) if not isinstance(v, str) else _bad_int(v))
    self._data[...] = np.array([conv(v) for v in arr.reshape(-1)],
                               dtype=self._data.dtype).reshape(self._data.shape)
    self._vc().value += 1
    return self


def _bad_int(v: str) -> int:
    raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")


def apply_(self: Tensor, callable: Any) -> Tensor:
    """Apply a Python function to every element, in place (CPU). Mirrors: ``torch.Tensor.apply_``."""
    _callable_check(self, "apply_")
    return _write(self, [callable(v) for v in self._data.reshape(-1).tolist()])


def map_(self: Tensor, tensor: Tensor, callable: Any) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])`` with `tensor` broadcast. Mirrors: ``torch.Tensor.map_``."""
    _callable_check(self, "map_")
    other = np.broadcast_to(tensor._data, self._data.shape).reshape(-1).tolist()
    return _write(self, [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other)])


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:
    """``self[i] = callable(self[i], x[i], y[i])``. Mirrors: ``torch.Tensor.map2_``."""
    _callable_check(self, "map2_")
    a = np.broadcast_to(x._data, self._data.shape).reshape(-1).tolist()
    b = np.broadcast_to(y._data, self._data.shape).reshape(-1).tolist()
    own = self._data.reshape(-1).tolist()
    return _write(self, [callable(s, u, v) for s, u, v in zip(own, a, b)])


def _removed(name: str, advice: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. "
                           + advice)
    method.__name__ = name
    method.__doc__ = f"Removed in PyTorch 1.9: raises as PyTorch does. Mirrors: ``torch.Tensor.{name}``."
    return method


_FUNCS = {n: getattr(spectral_ops, n) for n in (
    "pinverse", "cholesky_inverse", "cholesky_solve", "qr", "svd", "triangular_solve")}
def _narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    view = input.narrow(dim, start, length)
    return view.clone() if view.is_contiguous() else view.contiguous()


_FUNCS.update(narrow_copy=_narrow_copy, i0=special_ops.i0, igamma=_pw_gamma.igamma,
              igammac=_pw_gamma.igammac, mvlgamma=_pw_gamma.mvlgamma)


def _method(name: str) -> Any:
    """``Tensor.<name>``: ``torch.<name>`` with self first."""
    fn = _FUNCS[name]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Tensor method form of ``torch.{name}``. Mirrors: ``torch.Tensor.{name}``."
    return method


def _inplace(name: str) -> Any:
    """``Tensor.<name>_``: ``hookgrad.<name>`` computed out of place, written back with copy_."""
    fn = _FUNCS[name]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        # computed from a copy: the op's node keeps the pre-write values it saved (PyTorch
        # saves the original self for in-place ops whose derivative reads it)
        res = fn(self.clone(), *args, **kwargs)
        if res.dtype != self.dtype:
            raise RuntimeError(f"result type {res.dtype.scalar_type} can't be cast to the "
                               f"desired output type {self.dtype.scalar_type}")
        return self.copy_(res)
    method.__name__ = name + "_"
    method.__doc__ = f"In-place ``{name}``. Mirrors: ``torch.Tensor.{name}_``."
    return method


def i0_(input: Tensor) -> Tensor:
    """Mirrors: ``torch.i0_``."""
    return METHODS["i0_"](input)


METHODS = {
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "transpose_": transpose_,
    "swapaxes_": lambda self, axis0, axis1: transpose_(self, axis0, axis1),
    "swapdims_": lambda self, dim0, dim1: transpose_(self, dim0, dim1),
    "t_": t_, "as_strided_": as_strided_, "resize_": resize_, "resize_as_": resize_as_,
    "resize": resize, "resize_as": resize_as, "as_strided_scatter": as_strided_scatter,
    "apply_": apply_, "map_": map_, "map2_": map2_,
    "solve": _removed("solve", "`torch.solve` is deprecated in favor of `torch.linalg.solve`."),
    "lstsq": _removed("lstsq", "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`."),
    "symeig": _removed("symeig", "Use `torch.linalg.eigvalsh` or `torch.linalg.eigh`."),
    "eig": _removed("eig", "Use `torch.linalg.eigvals` or `torch.linalg.eig`."),
    **{n: _method(n) for n in ("narrow_copy", "pinverse", "cholesky_inverse", "cholesky_solve",
                                "qr", "svd", "triangular_solve", "i0")},
    **{n + "_": _inplace(n) for n in ("i0", "igamma", "igammac", "mvlgamma")},
}
