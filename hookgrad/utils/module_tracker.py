"""`ModuleTracker`: which modules are running, in forward and in backward.

Built as PyTorch builds it: global module forward pre-/post-hooks push and pop a module's name
in forward; multi-grad hooks on a module's outputs push it when its backward starts and hooks on
its inputs pop it when its backward is done. Names are ``<RootClass>.<child>.<child>`` and the
set `parents` always contains ``"Global"``.

Mirrors: ``torch.utils.module_tracker.ModuleTracker``.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.engine import current_graph_task_id, queue_callback
from hookgrad.autograd.multi_grad import register_multi_grad_hook
from hookgrad.nn.modules._global_hooks import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)

__all__ = ["ModuleTracker"]


def _tensors_requiring_grad(value: Any) -> list:
    """Tensors requiring grad inside nested tuples/lists/dicts (PyTorch flattens with pytree)."""
    if isinstance(value, Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_requiring_grad(v)]
    return []


class ModuleTracker:
    """Context manager tracking the module hierarchy of the running code (see module docstring).

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.utils.module_tracker import ModuleTracker
        >>> seen = []
        >>> class Probe(torch.nn.Module):
        ...     def forward(self, x):
        ...         seen.append(sorted(tracker.parents))
        ...         return x
        >>> with ModuleTracker() as tracker:
        ...     _ = torch.nn.Sequential(Probe())(torch.ones(1))
        >>> seen
        [['Global', 'Sequential', 'Sequential.0']]

    Mirrors: ``torch.utils.module_tracker.ModuleTracker``.
    """

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen_modules: weakref.WeakSet = weakref.WeakSet()
        self._hooks: list = []
        self._callback_tasks: set[int] = set()

    def _maybe_set_engine_callback(self) -> None:
        # Backward ends with no module left "running": reset to the global scope.
        gid = current_graph_task_id()
        if gid in self._callback_tasks:
            return

        def reset() -> None:
            self.parents = {"Global"}
            self._callback_tasks.discard(gid)

        self._callback_tasks.add(gid)
        queue_callback(reset)

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running. Mirrors: ``ModuleTracker.is_bw``."""
        return current_graph_task_id() != -1

    def _get_mod_name(self, mod: Any) -> str:
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _get_append_fn(self, name: str, is_bw: bool) -> Any:
        def fn(*args: Any) -> None:
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                warnings.warn(
                    "The module hierarchy tracking seems to be broken as this Module was already "
                    "entered. " + name + " during " + ("backward" if is_bw else "forward"),
                    UserWarning, stacklevel=2)
            self.parents.add(name)

        return fn

    def _get_pop_fn(self, name: str, is_bw: bool) -> Any:
        def fn(*args: Any) -> None:
            if name in self.parents:
                self.parents.remove(name)
            elif not is_bw:
                # Popping a module absent from the set only happens in backward (a module
                # whose inputs get gradients from several places).
                raise RuntimeError(
                    "The Module hierarchy tracking is wrong. Report a bug to PyTorch")

        return fn

    def _fw_pre_hook(self, mod: Any, inputs: Any) -> None:
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = _tensors_requiring_grad(inputs)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod: Any, inputs: Any, output: Any) -> None:
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = _tensors_requiring_grad(output)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_append_fn(name, True)))

    def __enter__(self) -> ModuleTracker:
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args: object) -> None:
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
