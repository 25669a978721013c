"""The rest of ``torch.jit``'s names that eager programs reach for, with eager semantics.

Programs written for PyTorch call these outside any compiled code: ``torch.jit.isinstance``
refines containers in code meant to be scriptable, ``TracerWarning`` is filtered in export
scripts, ``Attribute`` wraps module attributes, ``_fork``/``_wait`` run work "asynchronously".
Without a TorchScript compiler each keeps the meaning it has when PyTorch runs the same code
eagerly; what only exists for compiled TorchScript (saving, loading and freezing a
``ScriptModule``) raises PyTorch's error for a module that is not one, which every hookgrad
module is.

Mirrors: ``torch.jit`` (the eager-visible part).
"""

from __future__ import annotations

import builtins
import collections.abc
import contextlib
import os
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from hookgrad.futures import Future

__all__ = [
    "Attribute", "Error", "ScriptWarning", "TracerWarning", "TracingCheckError", "Future",
    "isinstance", "script_if_tracing", "_unwrap_optional", "_fork", "_wait", "fuser",
    "optimized_execution", "set_fusion_strategy", "enable_onednn_fusion", "onednn_fusion_enabled",
    "strict_fusion", "freeze", "optimize_for_inference", "save", "load",
]


class Attribute(NamedTuple):
    """A module attribute with its TorchScript type; eager code reads ``.value``.

    Mirrors: ``torch.jit.Attribute``.
    """

    value: Any
    type: Any


class Error(Exception):
    """A TorchScript runtime error. Mirrors: ``torch.jit.Error`` (also ``torch.JITException``)."""


class ScriptWarning(Warning):
    """Mirrors: ``torch.jit.ScriptWarning``."""


class TracingCheckError(Exception):
    """Mirrors: ``torch.jit.TracingCheckError``."""


class TracerWarning(Warning):
    """A warning the tracer gives about code it cannot record faithfully.

    Mirrors: ``torch.jit.TracerWarning``.
    """

    @staticmethod
    def ignore_lib_warnings() -> None:
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")
        warnings.filterwarnings("ignore", "torch::jit::fuser::cuda")


def _contains(obj: Any, target: Any) -> bool:
    origin = typing.get_origin(target)
    args = typing.get_args(target)
    if origin in (list, dict, tuple) and not args or target in (list, dict, tuple):
        name = getattr(target, "_name", None) or getattr(target, "__name__", str(target))
        raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                           f"contained type, e.g. {name}[int]")
    if origin is None:
        return builtins.isinstance(obj, target)
    if origin is list:
        return builtins.isinstance(obj, list) and all(_contains(e, args[0]) for e in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            _contains(k, args[0]) and _contains(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args)
                and all(_contains(e, a) for e, a in zip(obj, args)))
    if origin is typing.Union:
        return any(obj is None if a is type(None) else _contains(obj, a) for a in args)
    return builtins.isinstance(obj, origin)


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - PyTorch's name
    """``isinstance`` that also checks parameterised containers (``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[Tuple[int, str]]``), element by element.

    Raises:
        RuntimeError: a bare container type without its contained type, or a second argument
            that is a container but not a tuple of types (PyTorch's messages).

    Mirrors: ``torch.jit.isinstance``.
    """
    if builtins.isinstance(target_type, collections.abc.Container) and \
            not builtins.isinstance(target_type, type):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or "
                               "a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    return _contains(obj, target_type)


def script_if_tracing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Return `fn`: it would be scripted only while tracing, and nothing traces here.

    Mirrors: ``torch.jit.script_if_tracing``.
    """
    return fn


def _unwrap_optional(x: Any) -> Any:
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x


def _fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run `func` now and return a completed future (PyTorch's eager ``fork`` runs it inline
    too). Mirrors: ``torch.jit._fork``."""
    fut: Future = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait(future: Future) -> Any:
    """Mirrors: ``torch.jit._wait``."""
    return future.wait()


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """Choose a TorchScript fuser for the block: there is none to choose here.

    Mirrors: ``torch.jit.fuser``.
    """
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 - PyTorch's
    yield


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Mirrors: ``torch.jit.optimized_execution`` (nothing to optimise: eager execution)."""
    yield


_FUSION_STRATEGY = [[("STATIC", 2), ("DYNAMIC", 10)]]


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Record the fusion strategy and return the previous one. Mirrors:
    ``torch.jit.set_fusion_strategy``."""
    previous, _FUSION_STRATEGY[0] = _FUSION_STRATEGY[0], list(strategy)
    return previous


_ONEDNN = [False]


def enable_onednn_fusion(enabled: bool) -> None:
    """Mirrors: ``torch.jit.enable_onednn_fusion`` (a flag; no TorchScript graph to fuse)."""
    _ONEDNN[0] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Mirrors: ``torch.jit.onednn_fusion_enabled``."""
    return _ONEDNN[0]


class strict_fusion:  # noqa: N801 - PyTorch's name
    """A block that TorchScript must fuse entirely; eager code runs it as is.

    Mirrors: ``torch.jit.strict_fusion``.
    """

    def __enter__(self) -> strict_fusion:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """Raise PyTorch's error for a module that is not a ``ScriptModule`` (none is here).

    Mirrors: ``torch.jit.freeze``.
    """
    raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                       "torch.jit.trace to script your 'nn.Module'.")


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """Mirrors: ``torch.jit.optimize_for_inference`` (needs a ``ScriptModule``, as `freeze`)."""
    raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use "
                       "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Save a ``ScriptModule``: PyTorch calls ``m.save``, which a plain module lacks.

    Mirrors: ``torch.jit.save`` (TorchScript archives need TorchScript code; use
    ``torch.save`` of a state dict).
    """
    if not hasattr(m, "save"):
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")
    m.save(f, _extra_files=_extra_files)


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Refuse: a TorchScript archive holds TorchScript code, which hookgrad cannot run.

    Raises:
        ValueError: a path that does not exist (PyTorch's check).
        RuntimeError: any other input.

    Mirrors: ``torch.jit.load``.
    """
    if builtins.isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {f} does not exist")
    raise RuntimeError("torch.jit.load: hookgrad cannot run TorchScript archives (no TorchScript "
                       "interpreter); save the model's state_dict with torch.save instead")
