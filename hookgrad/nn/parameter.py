"""`Parameter` and `Buffer`: the tensor kinds a `Module` registers when they are assigned.

Layer 6. A `Parameter` is a real `Tensor` subclass sharing its data with the tensor it was made
from; operations on it return plain tensors (`bind` always wraps results as `Tensor`), which is
PyTorch's ``__torch_function__ = _disabled_torch_function_impl`` behaviour. A `Buffer` is a
marker: ``Buffer(t)`` returns a detached plain tensor flagged ``_is_buffer`` and
``isinstance(x, Buffer)`` tests that flag, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _empty() -> Tensor:
    from hookgrad._functional.creation import empty

    return empty(0)


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning it to a `Module` attribute registers it.

    Args:
        data: the parameter's tensor; the parameter shares its memory. ``None`` gives an empty
            tensor.
        requires_grad: whether the parameter requires gradient (default ``True``, also under
            ``no_grad``).

    Example:
        >>> import hookgrad as torch
        >>> p = torch.nn.Parameter(torch.ones(2))
        >>> p.requires_grad, p.is_leaf
        (True, True)

    Mirrors: ``torch.nn.Parameter``.
    """

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = _empty()
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        # Tensor.__init__ refuses direct construction; everything happened in __new__.
        pass

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)  # type: ignore[attr-defined]
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto: int) -> Any:
        return (_rebuild_parameter, (self.data, self.requires_grad, type(self)))


def _rebuild_parameter(data: Tensor, requires_grad: bool, cls: type = Parameter) -> Parameter:
    """Unpickling helper. Mirrors: ``torch._utils._rebuild_parameter``."""
    return cls(data, requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for tensors flagged ``_is_buffer`` (PyTorch's rule)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(getattr(instance, "_is_buffer", False))
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a module buffer: assigning it to a `Module` attribute registers it.

    Args:
        data: the buffer's tensor (detached; ``None`` gives an empty tensor).
        persistent: whether the buffer is part of the module's ``state_dict``.

    Example:
        >>> import hookgrad as torch
        >>> m = torch.nn.Module()
        >>> m.running = torch.nn.Buffer(torch.zeros(2))
        >>> list(dict(m.named_buffers()))
        ['running']

    Mirrors: ``torch.nn.Buffer``.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = _empty()
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """Marks a lazy tensor whose shape is not known yet; `materialize` gives it one.

    hookgrad does not intercept every operation on it (PyTorch raises ``ValueError``): an
    uninitialised parameter simply holds an empty tensor until it is materialised.

    Mirrors: ``torch.nn.parameter.UninitializedTensorMixin``.
    """

    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor `shape` (zero-filled) and turn it into ``cls_to_become``."""
        from hookgrad._functional.creation import empty

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = dtype if dtype is not None else self.dtype  # type: ignore[attr-defined]
        self._data = empty(*shape, dtype=dt)._data  # type: ignore[attr-defined]
        self.__class__ = self.cls_to_become


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of lazy modules, materialised on the first forward.

    Mirrors: ``torch.nn.parameter.UninitializedParameter``.
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        from hookgrad._functional.creation import empty

        return Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)  # type: ignore[return-value]

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of lazy modules. Mirrors: ``torch.nn.parameter.UninitializedBuffer``."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,
                dtype: Any = None, persistent: bool = True) -> UninitializedBuffer:
        from hookgrad._functional.creation import empty

        t = cls._make(empty(0, dtype=dtype)._data, requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


def is_lazy(param: Any) -> bool:
    """Whether `param` is an uninitialised lazy tensor. Mirrors: ``torch.nn.parameter.is_lazy``."""
    return isinstance(param, UninitializedTensorMixin)

# PyTorch's ``__all__`` also lists these
__all__ += ["UninitializedTensorMixin"]
