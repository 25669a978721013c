"""`NamedMemberAccessor`: get, set, swap and delete a module's tensors by dotted name.

Mirrors: ``torch.nn.utils._named_member_accessor`` (used by ``nn.utils.stateless`` and
``torch.func.functional_call``). Setting a name replaces the attribute the way PyTorch's does:
a Parameter is registered as a parameter, a plain tensor over a parameter slot is set as an
attribute, and a buffer name stays a buffer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module

__all__ = ["NamedMemberAccessor", "set_tensor", "swap_tensor", "swap_submodule"]


def set_tensor(module: Module, name: str, tensor: Tensor) -> None:
    """Set attribute `name` of `module` (no dots). Mirrors: ``..._named_member_accessor.set_tensor``."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    if name in module._parameters:
        module._parameters[name] = tensor  # type: ignore[assignment]
    elif name in module._buffers:
        module._buffers[name] = tensor
    else:
        setattr(module, name, tensor)


def swap_tensor(module: Module, name: str, tensor: Tensor, allow_missing: bool = False) -> Any:
    """Set `name` and return the previous value. Mirrors: ``..._named_member_accessor.swap_tensor``."""
    if name in module._parameters or name in module._buffers or hasattr(module, name):
        orig = getattr(module, name)
    elif allow_missing:
        orig = None
    else:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    set_tensor(module, name, tensor)
    return orig


def swap_submodule(module: Module, name: str, submodule: Module) -> Module:
    """Replace child `name`, returning the old one. Mirrors: ``..._named_member_accessor.swap_submodule``."""
    if not isinstance(submodule, Module):
        raise TypeError(f"{submodule} is not an instance of torch.nn.Module")
    orig = module._modules[name]
    module._modules[name] = submodule
    return orig


class NamedMemberAccessor:
    """Dotted-name access to a module's submodules and tensors, with a submodule cache.

    Mirrors: ``torch.nn.utils._named_member_accessor.NamedMemberAccessor``.
    """

    def __init__(self, module: Module) -> None:
        self.module = module
        self.memo: dict[str, Module] = {}

    def get_submodule(self, name: str) -> Module:
        if not name:
            return self.module
        if name not in self.memo:
            prefix, _, attr = name.rpartition(".")
            parent = self.get_submodule(prefix)
            sub = getattr(parent, attr, None)
            if not isinstance(sub, Module):
                raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`")
            self.memo[name] = sub
        return self.memo[name]

    def swap_submodule(self, path: str, value: Module) -> Module:
        prefix, _, attr = path.rpartition(".")
        return swap_submodule(self.get_submodule(prefix), attr, value)

    def get_tensor(self, name: str) -> Tensor:
        prefix, _, attr = name.rpartition(".")
        sub = self.get_submodule(prefix)
        if not hasattr(sub, attr):
            raise AttributeError(f"{sub._get_name()} has no attribute `{name}`")
        value = getattr(sub, attr)
        if not isinstance(value, Tensor) and value is not None:
            raise TypeError(f"{value} is not an instance of torch.Tensor")
        return value

    def set_tensor(self, name: str, value: Tensor) -> None:
        prefix, _, attr = name.rpartition(".")
        set_tensor(self.get_submodule(prefix), attr, value)

    def del_tensor(self, name: str) -> None:
        prefix, _, attr = name.rpartition(".")
        sub = self.get_submodule(prefix)
        try:
            delattr(sub, attr)
        except AttributeError as ex:
            raise AttributeError(f"{sub._get_name()} has no attribute `{name}`") from ex

    def swap_tensor(self, name: str, value: Tensor, allow_missing: bool = False) -> Any:
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing)

    def get_tensors(self, names: Iterable[str]) -> list:
        return [self.get_tensor(n) for n in names]

    def set_tensors(self, names: Iterable[str], values: Iterable[Tensor]) -> None:
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise ValueError(f"Expected {len(names)} values, got {len(values)}")
        for n, v in zip(names, values):
            self.set_tensor(n, v)

    def set_tensors_dict(self, named_tensors: dict) -> None:
        for n, v in named_tensors.items():
            self.set_tensor(n, v)

    def del_tensors(self, names: Iterable[str]) -> None:
        for n in names:
            self.del_tensor(n)

    def swap_tensors(self, names: Iterable[str], values: Iterable[Tensor],
                     allow_missing: bool = False) -> list:
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise ValueError(f"Expected {len(names)} values, got {len(values)}")
        return [self.swap_tensor(n, v, allow_missing) for n, v in zip(names, values)]

    def swap_tensors_dict(self, named_tensors: dict, allow_missing: bool = False) -> tuple:
        orig, missing = {}, []
        for n, v in named_tensors.items():
            old = self.swap_tensor(n, v, allow_missing=True)
            if old is None and not allow_missing:
                missing.append(n)
            orig[n] = old
        if missing:
            for n, v in orig.items():
                self.swap_tensor(n, v, allow_missing=True)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return orig, missing

    def check_keys(self, keys: Iterable[str]) -> tuple:
        keys = set(keys)
        valid = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(keys - valid), sorted(valid - keys)

    def named_parameters(self, remove_duplicate: bool = True) -> Iterable:
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate: bool = True) -> Iterable:
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_tensors(self, remove_duplicate: bool = True) -> Iterable:
        yield from self.named_parameters(remove_duplicate)
        yield from self.named_buffers(remove_duplicate)

    def named_modules(self, remove_duplicate: bool = True) -> Iterable:
        yield from self.module.named_modules(remove_duplicate=remove_duplicate)


