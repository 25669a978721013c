"""A module's pickled state in PyTorch's shape, both ways.

PyTorch pickles an ``nn.Module`` as its class plus its ``__dict__``, whose hook tables are
``OrderedDict``s (``_forward_hooks``, ``_forward_hooks_with_kwargs``, ...). hookgrad keeps each
hook kind in one `HookRegistry` with per-hook flags, so `save` writes the PyTorch shape
(`torch_state`) and both unpicklers convert it back (`restore`). Hooks saved in a file become
plain hooks of the loaded module (their ``with_kwargs`` / ``always_call`` flags are dropped);
``torch.save`` users save modules without hooks in practice.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hookgrad.nn.modules.module import Module
from hookgrad.utils.hooks import HookRegistry

__all__ = ["torch_state", "restore", "is_module"]

_FLAG_TABLES = ("_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                "_forward_pre_hooks_with_kwargs")
# attributes PyTorch's recurrent modules keep (a list of their weights) and hookgrad's do not
_TORCH_ONLY = ("_flat_weights", "_flat_weight_refs")


def is_module(obj: Any) -> bool:
    """Whether `obj` is a hookgrad module (pickled with `torch_state`)."""
    return isinstance(obj, Module)


def torch_state(module: Module) -> dict:
    """``module.__dict__`` as PyTorch's ``Module.__getstate__`` would give it."""
    state = dict(module.__getstate__())
    for name, value in list(state.items()):
        if isinstance(value, HookRegistry):
            state[name] = OrderedDict(value.items())
    for name in _FLAG_TABLES:
        state[name] = OrderedDict(getattr(module, name))
    names = state.get("_flat_weights_names")
    if isinstance(names, list) and "_flat_weights" not in state:
        # PyTorch's RNN modules read this list in forward() and do not rebuild it on load
        state["_flat_weights"] = [getattr(module, n, None) for n in names]
    return state


def restore(module: Module, state: Any) -> None:
    """Set a module's state from a pickle of either library (PyTorch's hook tables converted)."""
    if not isinstance(state, dict):
        raise TypeError(f"a module's pickled state must be a dict, got {type(state)}")
    state = dict(state)
    for name in _FLAG_TABLES + _TORCH_ONLY:
        state.pop(name, None)
    for name, value in list(state.items()):
        if isinstance(value, dict) and not isinstance(value, HookRegistry) and \
                name.endswith("_hooks"):
            registry = HookRegistry()
            for key, fn in value.items():
                registry[key] = fn
            state[name] = registry
    module.__setstate__(state)
