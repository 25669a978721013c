"""``hookgrad.compile`` and the callables it returns (spec §2, §12).

`OptimizedFunction` wraps a function (or a callable object's ``forward``); `OptimizedModule`
wraps a `Module` and compiles its whole call path (global hooks, module hooks, ``forward``) as
one code key shared by every instance of the module class.
"""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Callable
from typing import Any

from hookgrad.compile.core import config
from hookgrad.compile.backends.backends import lookup_backend
from hookgrad.compile.compiled_autograd.compiled_autograd import DEFAULT_COMPILER, install_for_config
from hookgrad.compile.cache.frame import CACHES, compiled_call
from hookgrad.compile.core.state import current_trace
from hookgrad.nn.modules._call import has_global_call_hooks
from hookgrad.nn.modules.module import MODULE_COMPILER, Module

__all__ = ["compile", "OptimizedFunction", "OptimizedModule", "disable", "graph_break"]

GLOBAL_HOOKS_WARNING = (
    "Using `torch.compile(module)` when there are global hooks on modules (e.g., from "
    "`register_module_forward_hook`); this will cause the hooks to fire an extra time for the "
    "`OptimizedModule` created by `torch.compile(module)`. If this causes undesired behavior, "
    "please try using `module.compile()`, or use the per-module hooks instead"
)


class OptimizedFunction:
    """A compiled function: calls go through the code-keyed cache of its code object.

    Mirrors: ``torch._dynamo.eval_frame.OptimizedFunction`` (what ``torch.compile(fn)`` returns).
    """

    def __init__(self, fn: Callable[..., Any], backend: Any, fullgraph: bool, dynamic: Any,
                 disable: bool = False, self_obj: Any = None, key: Any = None) -> None:
        self._orig_fn = fn
        self._self = self_obj
        self.backend_key = backend
        self.backend = lookup_backend(backend)
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.disabled = disable
        self.key = key if key is not None else fn.__code__
        self.run_original = bool(getattr(self_obj, "_hookgrad_run_original", False))
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._self is not None:
            args = (self._self, *args)
        if config.compiled_autograd:  # spec §10.1 (D): CA for every backward while it is on
            install_for_config()
        if self.disabled or current_trace() is not None:
            # inside another trace: inline (the outer trace records the ops)
            return self._orig_fn(*args, **kwargs)
        return compiled_call(self, self.key, self._orig_fn, args, kwargs)

    @property
    def _hookgrad_cache(self) -> list:
        """The cache entries of this code key (introspection)."""
        return CACHES.get(self.key, [])

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)


def _module_call(mod: Module, *args: Any, **kwargs: Any) -> Any:
    """The traced entry of a compiled module: its full uncompiled call path."""
    return mod._call_uncompiled(*args, **kwargs)


class OptimizedModule(Module):
    """A `Module` wrapper whose ``forward`` runs the compiled call path of ``_orig_mod``.

    Mirrors: ``torch._dynamo.eval_frame.OptimizedModule``.
    """

    def __init__(self, mod: Module, compiled: OptimizedFunction) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_hookgrad_compiled"] = compiled

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if has_global_call_hooks():
            warnings.warn(GLOBAL_HOOKS_WARNING, UserWarning, stacklevel=2)
        return self.__dict__["_hookgrad_compiled"](self._orig_mod, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def module_key(mod: Module) -> tuple:
    fwd = type(mod).forward
    return (_module_call.__code__, getattr(fwd, "__code__", fwd))


def compile_module_call(mod: Module, backend: Any, fullgraph: bool, dynamic: Any,
                        disable: bool = False) -> OptimizedFunction:
    """The compiled call path of `mod` (used by `OptimizedModule` and ``Module.compile``)."""
    return OptimizedFunction(_module_call, backend, fullgraph, dynamic, disable,
                             key=module_key(mod))


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: Any = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """Compile a function or module into a callable that runs captured graphs.

    Every call behaves like the eager call (values, gradients, hooks and their order, Python
    side effects); see ``docs/compile.md``. Used bare, with arguments, or as a decorator
    factory (``model=None``).

    Mirrors: ``torch.compile``.

    Example:
        >>> import hookgrad
        >>> f = hookgrad.compile(lambda x: (x * 2).sum(), backend="eager")
        >>> float(f(hookgrad.ones(3)))
        6.0
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if isinstance(model, Module) and not getattr(model, "_hookgrad_run_original", False):
        # (a compiled-autograd graph module is compiled as its generated ``forward``: the
        # backward pass is no module call, NOTE [Compiling a compiled-autograd graph])
        return OptimizedModule(model, compile_module_call(model, backend, fullgraph, dynamic,
                                                          disable))
    if isinstance(model, types.FunctionType):
        return OptimizedFunction(model, backend, fullgraph, dynamic, disable)
    if isinstance(model, types.MethodType):
        return OptimizedFunction(model.__func__, backend, fullgraph, dynamic, disable,
                                 self_obj=model.__self__)
    forward = getattr(model, "forward", None)
    if isinstance(forward, types.MethodType):
        return OptimizedFunction(forward.__func__, backend, fullgraph, dynamic, disable,
                                 self_obj=model)
    raise TypeError(f"hookgrad.compile expects a function or a Module, got {type(model)}")


def disable(fn: Any = None, recursive: bool = True) -> Any:
    """Leave `fn` uncompiled (returned as is: hookgrad never compiles what it is not given).

    Mirrors: ``torch.compiler.disable``.
    """
    return fn if fn is not None else (lambda f: f)


def graph_break() -> None:
    """Force a graph break here when called inside a compiled region (nothing outside one).

    Mirrors: ``torch._dynamo.graph_break``.
    """
    trace = current_trace()
    if trace is not None and trace.recording:
        trace.graph_break("Call to `torch._dynamo.graph_break()`")


def _compile_in_place(mod: Module, backend: Any = "inductor", *, fullgraph: bool = False,
                      dynamic: bool | None = None, mode: str | None = None,
                      options: dict | None = None, disable: bool = False) -> OptimizedFunction:
    return compile_module_call(mod, backend, fullgraph, dynamic, disable)


if not MODULE_COMPILER:
    MODULE_COMPILER.append(_compile_in_place)
if not DEFAULT_COMPILER:
    DEFAULT_COMPILER.append(compile(backend="inductor", fullgraph=True, dynamic=True))
