"""Parametrizations: express a module's parameter or buffer as a function of other tensors.

Built as PyTorch builds it. `register_parametrization(module, "weight", P)` moves the tensor
into ``module.parametrizations.weight.original`` (a `ParametrizationList`), swaps the module's
class for a generated subclass ``Parametrized<Class>`` carrying a ``weight`` property, and that
property evaluates ``P(original)`` on every read (once per `cached` block). Assigning to the
property calls ``right_inverse``. State-dict keys therefore become
``parametrizations.weight.original``, exactly as in PyTorch.

Mirrors: ``torch.nn.utils.parametrize``.
"""

from __future__ import annotations

import collections.abc
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules.container import ModuleDict, ModuleList
from hookgrad.utils._python_dispatch import is_traceable_wrapper_subclass  # noqa: F401 - torch imports it here
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor | None] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once, on first read.

    Mirrors: ``torch.nn.utils.parametrize.cached``.
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """``dest.set_(src)``: `dest` takes `src`'s values and shape, keeping its identity."""
    if dest is src:
        return
    setter = getattr(dest, "set_", None)
    if setter is not None:
        setter(src)
        return
    dest._data = src._data  # share the storage, as set_ does
    dest._vc().value += 1


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the ``original`` tensor(s).

    Args:
        modules: the parametrizations.
        original: the tensor being parametrized (stored as ``original`` after the
            parametrizations' ``right_inverse``).
        unsafe: skip the dtype and shape checks.

    Raises:
        ValueError: no modules, or a parametrization that changes dtype or shape.

    Mirrors: ``torch.nn.utils.parametrize.ParametrizationList``.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(self):  # type: ignore[call-overload]
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: "
                    f"{new.dtype}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, item in enumerate(new):
                if not isinstance(item, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                        f"tuple...). Got element {i} of the sequence with type "
                        f"{type(item).__name__}.")
                if isinstance(original, Parameter):
                    item = Parameter(item, original.requires_grad)
                item.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", item)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                    f"parametrized dtype: {z.dtype}")
            if tuple(z.shape) != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized shape: "
                    f"{original.shape}\nparametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Set the original tensor(s) so that the parametrized tensor is `value`.

        Raises:
            RuntimeError: a parametrization without ``right_inverse``.

        Mirrors: ``torch.nn.utils.parametrize.ParametrizationList.right_inverse``.
        """
        with no_grad():
            for module in reversed(self):  # type: ignore[call-overload]
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
                return
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                _maybe_set(getattr(self, f"original{i}"), tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for k in range(1, len(self)):
            x = self[k](x)
        return x


def _inject_new_class(module: Module) -> None:
    """Give `module` its own subclass, so a property can be added to it alone."""
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict) -> Module:
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self: Module) -> None:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    dct: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_stacked(module: Module, tensor_name: str, parametrization: Module) -> None:
    """The dtype/shape checks of adding a parametrization on top of existing ones."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype != y.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless the "
            f"`unsafe` flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
            f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless the "
            f"`unsafe` flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
            f"parametrization(module.{tensor_name}).shape: {x.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Replace ``module.<tensor_name>`` by ``parametrization(original)`` (see module docstring).

    Registering a second parametrization on the same tensor appends it to the list.

    Returns:
        `module` (its class is now ``Parametrized<Class>``).

    Raises:
        ValueError: no parameter or buffer of that name, or a dtype/shape change without
            `unsafe`.

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.nn.utils import parametrize
        >>> class Symmetric(torch.nn.Module):
        ...     def forward(self, x):
        ...         return x.triu() + x.triu(1).transpose(-1, -2)
        >>> m = parametrize.register_parametrization(torch.nn.Linear(3, 3), "weight", Symmetric())
        >>> bool((m.weight == m.weight.T).all()), type(m).__name__
        (True, 'ParametrizedLinear')

    Mirrors: ``torch.nn.utils.parametrize.register_parametrization``.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_stacked(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has any parametrization (or one on `tensor_name`).

    Mirrors: ``torch.nn.utils.parametrize.is_parametrized``.
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo `register_parametrization` on `tensor_name`.

    With `leave_parametrized` the tensor keeps its current (parametrized) value, else it goes
    back to the original. When the last parametrization goes, the module gets its class back.

    Raises:
        ValueError: no parametrization on `tensor_name`, or ``leave_parametrized=False`` for a
            tensor parametrized by several originals.

    Mirrors: ``torch.nn.utils.parametrize.remove_parametrizations``.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization.

    Mirrors: ``torch.nn.utils.parametrize.type_before_parametrizations``.
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register `from_module`'s parametrizations (and originals) on `to_module`.

    Mirrors: ``torch.nn.utils.parametrize.transfer_parametrizations_and_params``.
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for fn in from_module.parametrizations[name]:
            register_parametrization(to_module, name, fn)
        src = from_module.parametrizations[name]
        if hasattr(src, "original"):
            to_module.parametrizations[name].original = src.original
        else:
            i = 0
            while hasattr(src, f"original{i}"):
                setattr(to_module.parametrizations[name], f"original{i}",
                        getattr(src, f"original{i}"))
                i += 1
    return to_module
