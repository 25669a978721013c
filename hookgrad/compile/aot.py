"""``aot_module_simplified``: compile a module's call with forward/backward compiler functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad.compile.api import compile_module_call
from hookgrad.nn.modules.module import Module

__all__ = ["aot_module_simplified"]


def aot_module_simplified(mod: Module, example_args: Any, fw_compiler: Callable[..., Any],
                          bw_compiler: Callable[..., Any] | None = None,
                          **kwargs: Any) -> Callable[..., Any]:
    """A callable with `mod`'s signature running the graph `fw_compiler` compiled.

    The backward runs hookgrad's engine on the graph's recorded nodes (intermediate hooks are
    registered by the graph's ``register_hook`` operators, so they fire as in eager).

    Mirrors: ``torch._functorch.aot_autograd.aot_module_simplified``.
    """
    def backend(gm: Any, example_inputs: list) -> Any:
        return fw_compiler(gm, example_inputs)
    compiled = compile_module_call(mod, backend, True, None)

    def call(*args: Any, **kw: Any) -> Any:
        return compiled(mod, *args, **kw)
    return call
