"""Registration of parameters, buffers and submodules; attribute routing; ``_apply``.

The validation order and messages follow PyTorch exactly (a bad name raises before any
global registration hook runs, spec §10).
"""

from __future__ import annotations

import inspect
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules._global_hooks import (
    _global_buffer_registration_hooks,
    _global_module_registration_hooks,
    _global_parameter_registration_hooks,
    run_registration_hooks,
)
from hookgrad.nn.parameter import Buffer, Parameter

__all__ = [
    "typename", "register_parameter", "register_buffer", "add_module", "setattr_impl",
    "delattr_impl", "get_submodule", "set_submodule", "get_parameter", "get_buffer", "apply_fn",
]


_MODULE: list = []  # [Module], filled by module.py once the class exists (import cycle)


def _module_class() -> type:
    return _MODULE[0]


def typename(obj: Any) -> str:
    """Mirrors: ``torch.typename`` (tensors give their legacy type string)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


def _check_name(module: Any, kind: str, name: Any, table: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in table:
        raise KeyError(f"attribute '{name}' already exists")


def register_parameter(module: Any, name: str, param: Parameter | None) -> None:
    """See ``Module.register_parameter``."""
    if "_parameters" not in module.__dict__:
        raise AttributeError("cannot assign parameter before Module.__init__() call")
    _check_name(module, "parameter", name, module._parameters)
    if param is None:
        module._parameters[name] = None
    elif not isinstance(param, Parameter):
        raise TypeError(
            f"cannot assign '{typename(param)}' object to parameter '{name}' "
            "(torch.nn.Parameter or None required)"
        )
    elif param.grad_fn:
        raise ValueError(
            f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
            f"created explicitly. To express '{name}' as a function of another Tensor, compute "
            "the value in the forward() method."
        )
    else:
        param = run_registration_hooks(_global_parameter_registration_hooks, module, name, param)
        module._parameters[name] = param


def register_buffer(module: Any, name: str, tensor: Tensor | None, persistent: bool) -> None:
    """See ``Module.register_buffer``."""
    if "_buffers" not in module.__dict__:
        raise AttributeError("cannot assign buffer before Module.__init__() call")
    _check_name(module, "buffer", name, module._buffers)
    if tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(
            f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
            "(torch Tensor or None required)"
        )
    tensor = run_registration_hooks(_global_buffer_registration_hooks, module, name, tensor)
    module._buffers[name] = tensor
    if persistent:
        module._non_persistent_buffers_set.discard(name)
    else:
        module._non_persistent_buffers_set.add(name)


def add_module(module: Any, name: str, child: Any) -> None:
    """See ``Module.add_module``."""
    if not isinstance(child, _module_class()) and child is not None:
        raise TypeError(f"{typename(child)} is not a Module subclass")
    if not isinstance(name, str):
        raise TypeError(f"module name should be a string. Got {typename(name)}")
    if hasattr(module, name) and name not in module._modules:
        raise KeyError(f"attribute '{name}' already exists")
    if "." in name:
        raise KeyError(f'module name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError('module name can\'t be empty string ""')
    child = run_registration_hooks(_global_module_registration_hooks, module, name, child)
    module._modules[name] = child


def _remove_from(name: str, *tables: Any) -> None:
    for table in tables:
        if name in table:
            if isinstance(table, dict):
                del table[name]
            else:
                table.discard(name)


def setattr_impl(module: Any, name: str, value: Any) -> None:
    """Route an attribute assignment to parameters, submodules, buffers or ``__dict__``."""
    d = module.__dict__
    params = d.get("_parameters")
    if isinstance(value, Parameter):
        if params is None:
            raise AttributeError("cannot assign parameters before Module.__init__() call")
        _remove_from(name, d, module._buffers, module._modules, module._non_persistent_buffers_set)
        module.register_parameter(name, value)
        return
    if params is not None and name in params:
        if value is not None:
            raise TypeError(
                f"cannot assign '{typename(value)}' as parameter '{name}' "
                "(torch.nn.Parameter or None expected)"
            )
        module.register_parameter(name, value)
        return
    modules = d.get("_modules")
    if isinstance(value, _module_class()):
        if modules is None:
            raise AttributeError("cannot assign module before Module.__init__() call")
        _remove_from(name, d, module._parameters, module._buffers,
                     module._non_persistent_buffers_set)
        modules[name] = run_registration_hooks(
            _global_module_registration_hooks, module, name, value)
        return
    if modules is not None and name in modules:
        if value is not None:
            raise TypeError(
                f"cannot assign '{typename(value)}' as child module '{name}' "
                "(torch.nn.Module or None expected)"
            )
        modules[name] = run_registration_hooks(
            _global_module_registration_hooks, module, name, value)
        return
    buffers = d.get("_buffers")
    if isinstance(value, Buffer) or buffers is not None and name in buffers:
        _assign_buffer(module, name, value)
        return
    object.__setattr__(module, name, value)


def _assign_buffer(module: Any, name: str, value: Any) -> None:
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(
            f"cannot assign '{typename(value)}' as buffer '{name}' "
            "(torch.nn.Buffer, torch.Tensor or None expected)"
        )
    if isinstance(value, Buffer):
        persistent = value.persistent  # type: ignore[attr-defined]
    else:
        persistent = name not in module._non_persistent_buffers_set
    if getattr(module.register_buffer, "__func__", None) is _module_class().register_buffer:
        module.register_buffer(name, value, persistent)
    elif "persistent" in inspect.signature(module.register_buffer).parameters:
        module.register_buffer(name, value, persistent)
    else:
        if not persistent:
            raise RuntimeError(
                "Registering a non-persistent buffer on a Module subclass that implements "
                "register_buffer() without the persistent argument is not allowed."
            )
        module.register_buffer(name, value)


def delattr_impl(module: Any, name: str) -> None:
    """See ``Module.__delattr__``."""
    if name in module._parameters:
        del module._parameters[name]
    elif name in module._buffers:
        del module._buffers[name]
        module._non_persistent_buffers_set.discard(name)
    elif name in module._modules:
        del module._modules[name]
    else:
        object.__delattr__(module, name)


# ---------------------------------------------------------------- lookup by dotted path
def get_submodule(module: Any, target: str) -> Any:
    """See ``Module.get_submodule``."""
    if target == "":
        return module
    mod = module
    for item in target.split("."):
        if not hasattr(mod, item):
            raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
        mod = getattr(mod, item)
        if not isinstance(mod, _module_class()):
            raise AttributeError("`" + item + "` is not an nn.Module")
    return mod


def set_submodule(module: Any, target: str, child: Any, strict: bool) -> None:
    """See ``Module.set_submodule``."""
    if target == "":
        raise ValueError("Cannot set the submodule without a target name!")
    atoms = target.split(".")
    if not isinstance(child, _module_class()):
        raise ValueError("`module` is not an nn.Module, found " + str(type(child)))
    parent = module if len(atoms) == 1 else get_submodule(module, ".".join(atoms[:-1]))
    if strict and not hasattr(parent, atoms[-1]):
        raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
    if hasattr(parent, atoms[-1]):
        mod = getattr(parent, atoms[-1])
        if not isinstance(mod, _module_class()):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
    setattr(parent, atoms[-1], child)


def get_parameter(module: Any, target: str) -> Parameter:
    """See ``Module.get_parameter``."""
    module_path, _, param_name = target.rpartition(".")
    mod = get_submodule(module, module_path)
    if not hasattr(mod, param_name):
        raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
    param = getattr(mod, param_name)
    if not isinstance(param, Parameter):
        raise AttributeError("`" + param_name + "` is not an nn.Parameter")
    return param


def get_buffer(module: Any, target: str) -> Tensor:
    """See ``Module.get_buffer``."""
    module_path, _, buffer_name = target.rpartition(".")
    mod = get_submodule(module, module_path)
    if not hasattr(mod, buffer_name):
        raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
    buffer = getattr(mod, buffer_name)
    if buffer_name not in mod._buffers:
        raise AttributeError("`" + buffer_name + "` is not a buffer")
    return buffer


# ---------------------------------------------------------------- conversions
def apply_fn(module: Any, fn: Any, recurse: bool = True) -> Any:
    """``Module._apply``: convert parameters (in place, keeping the objects) and buffers.

    Parameters keep their identity (PyTorch's ``param.data = fn(param)`` path), so optimizers
    holding them keep working; gradients are converted the same way.
    """
    if recurse:
        for child in module.children():
            child._apply(fn)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with no_grad():
            applied = fn(param)
        param.data = applied
        grad = param._grad
        if grad is not None:
            with no_grad():
                grad_applied = fn(grad)
            grad.data = grad_applied
    for key, buf in module._buffers.items():
        if buf is not None:
            module._buffers[key] = fn(buf)
    return module
