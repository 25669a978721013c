"""Placeholders for the quantization namespace: importable names whose use raises.

Tools import ``torch.ao.quantization.QuantStub`` (and the like) at load time, often only to test
``isinstance`` or to list module types. Each name here resolves to a class that can be imported,
named and used in ``isinstance`` checks (nothing is ever an instance), but calling or
instantiating it raises NotImplementedError naming the quantization feature.
"""

from __future__ import annotations

from typing import Any

MESSAGE = ("hookgrad does not implement quantization ({name}): quantized dtypes and kernels are "
           "outside its scope")


class _UnsupportedMeta(type):
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(MESSAGE.format(name=f"{cls.__module__}.{cls.__qualname__}"))

    def __instancecheck__(cls, obj: Any) -> bool:
        return False


def unsupported(module: str, name: str) -> type:
    """A class named `module.name` that raises NotImplementedError when called."""
    # the marker of hookgrad._unsupported: the census counts the name as not implemented
    cls = _UnsupportedMeta(name, (), {"__module__": module, "__qualname__": name,
                                      "__doc__": f"Unsupported: ``{module}.{name}``.",
                                      "__hookgrad_unsupported__": MESSAGE.format(
                                          name=f"{module}.{name}")})
    return cls


_PROBED = frozenset({"pytest_plugins", "setup_module", "teardown_module", "setup",
                     "teardown", "setUpModule", "tearDownModule", "load_tests"})


def module_getattr(module: str) -> Any:
    """A module-level ``__getattr__`` giving a placeholder for every public name."""
    cache: dict[str, type] = {}

    def __getattr__(name: str) -> Any:
        # private names and the hooks test runners probe modules for are not API names
        if name.startswith(("_", "pytest")) or name in _PROBED:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        if name not in cache:
            cache[name] = unsupported(module.replace("hookgrad", "torch", 1), name)
        return cache[name]
    return __getattr__
