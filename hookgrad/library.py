"""``hookgrad.library``: Python custom operators (``custom_op``) that run eagerly.

Mirrors: ``torch.library.custom_op``, ``register_fake``, ``register_autograd``,
``register_kernel`` and ``CustomOpDef``. Libraries decorate their kernels with these at import
time. A custom op here is its Python kernel wrapped in an autograd ``Function`` named as
PyTorch's (``GeneratedBackwardFor_<ns>_<name>_default``): the ``setup_context``/``backward``
given to ``register_autograd`` make it differentiable, and backward through an op without one
raises PyTorch's RuntimeError. The op is also reachable as ``torch.ops.<ns>.<name>`` (and
``.default``). The fake (meta) kernel is recorded and used by nothing: hookgrad has no fake
tensors. Departures: no schema is inferred or checked (PyTorch requires type annotations);
``mutates_args`` is recorded, not verified. ``Library``/``define``/``impl`` (the C++ dispatcher
registration API) are stand-ins of `hookgrad._unsupported`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from hookgrad.autograd.function import Function
from hookgrad.utils._python_dispatch import ops as _ops

__all__ = ["CustomOpDef", "custom_op", "register_fake", "register_autograd", "register_kernel"]

_OPS: dict[str, CustomOpDef] = {}


class CustomOpDef:
    """A custom operator: call it like its kernel.

    Mirrors: ``torch._library.custom_ops.CustomOpDef``.
    """

    def __init__(self, namespace: str, name: str, fn: Callable, mutates_args: Any) -> None:
        self._namespace, self._name = namespace, name
        self._init_fn, self._kernel, self._fake = fn, fn, None
        self._mutates_args = mutates_args
        self._backward: Callable | None = None
        self._setup_context: Callable | None = None
        self._signature = inspect.signature(fn)
        self._function = self._make_function()

    def _make_function(self) -> type:
        op = self

        def forward(ctx: Any, *inputs: Any) -> Any:
            out = op._kernel(*inputs)
            if op._setup_context is not None:
                op._setup_context(ctx, inputs, out)
            return out

        def backward(ctx: Any, *grads: Any) -> Any:
            if op._backward is None:
                raise RuntimeError(f"Trying to backward through {op} but no autograd formula "
                                   "was registered. Please use register_autograd to add one.")
            result = op._backward(ctx, *grads)
            return result if isinstance(result, tuple) else (result,)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return type(name, (Function,), {"forward": staticmethod(forward),
                                        "backward": staticmethod(backward)})

    def __str__(self) -> str:
        return f"{self._namespace}.{self._name}.default"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return self._function.apply(*bound.args, *bound.kwargs.values())

    def register_kernel(self, device_types: Any, fn: Callable | None = None) -> Any:
        """Use `fn` for CPU inputs (the only device here); other device types are recorded only."""
        def register(func: Callable) -> Callable:
            types = [device_types] if isinstance(device_types, str) or device_types is None \
                else list(device_types)
            if None in types or "cpu" in types:
                self._kernel = func
            return func
        return register(fn) if fn is not None else register

    def register_fake(self, fn: Callable) -> Callable:
        """Record the fake (meta) kernel. Mirrors: ``CustomOpDef.register_fake``."""
        self._fake = fn
        return fn

    def register_autograd(self, backward: Callable, /, *,
                          setup_context: Callable | None = None) -> None:
        """Make the op differentiable. Mirrors: ``CustomOpDef.register_autograd``."""
        self._backward, self._setup_context = backward, setup_context


class _Packet:
    """``torch.ops.<ns>.<name>``: calls the op; ``.default`` is the op itself."""

    def __init__(self, op: CustomOpDef) -> None:
        self.default = op
        self.__name__ = op._name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.default(*args, **kwargs)

    def overloads(self) -> list:
        return ["default"]

    def __str__(self) -> str:
        return f"{self.default._namespace}.{self.default._name}"


class _Namespace:
    def __init__(self, name: str) -> None:
        self._name = name


def _split(qualname: str) -> tuple[str, str]:
    if "::" not in qualname:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator "
                         "name should look something like ns::foo")
    ns, _, name = qualname.partition("::")
    return ns, name


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: Any,
              device_types: Any = None, schema: str | None = None) -> Any:
    """Turn a Python function into the custom operator `name` (``"ns::op"``).

    Example:
        >>> import hookgrad as torch
        >>> @torch.library.custom_op("mylib::twice", mutates_args=())
        ... def twice(x: torch.Tensor) -> torch.Tensor:
        ...     return x * 2
        >>> torch.ops.mylib.twice(torch.ones(2))
        tensor([2., 2.])

    Mirrors: ``torch.library.custom_op``.
    """
    ns, opname = _split(name)

    def inner(func: Callable) -> CustomOpDef:
        op = CustomOpDef(ns, opname, func, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, func)
        _OPS[name] = op
        space = getattr(_ops, ns, None)
        if space is None:
            space = _Namespace(ns)
            setattr(_ops, ns, space)
        setattr(space, opname, _Packet(op))
        return op

    return inner(fn) if fn is not None else inner


def _op(op: Any) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _Packet):
        return op.default
    if isinstance(op, str) and op in _OPS:
        return _OPS[op]
    raise NotImplementedError(f"hookgrad.library: {op} is not a custom_op (operators defined "
                              "with Library/define need PyTorch's C++ dispatcher)")


def register_fake(op: Any, func: Callable | None = None, /, *, lib: Any = None,
                  _stacklevel: int = 1, allow_override: bool = False) -> Any:
    """Record a fake kernel for a custom op. Mirrors: ``torch.library.register_fake``."""
    target = _op(op)
    return target.register_fake(func) if func is not None else target.register_fake


def register_autograd(op: Any, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib: Any = None) -> None:
    """Mirrors: ``torch.library.register_autograd``."""
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op: Any, device_types: Any, func: Callable | None = None, /, *,
                    lib: Any = None) -> Any:
    """Mirrors: ``torch.library.register_kernel``."""
    return _op(op).register_kernel(device_types, func)
