"""Where hooks live on modules, parameters, tensors, nodes and optimizers, in both libraries.

PyTorch and hookgrad keep hooks in dicts with the same attribute names (``id -> fn``); PyTorch's
are plain ``OrderedDict``s and hookgrad's `HookRegistry` subclasses one, so one table list serves
both. PyTorch's graph nodes keep their hooks in C++, where no public API reaches them: node
hooks are listed only on hookgrad nodes.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from typing import Any

__all__ = ["MODULE_TABLES", "OPTIMIZER_TABLES", "lib_of", "module_tables", "optimizer_tables",
           "tensor_tables", "node_tables", "global_tables", "tensor_label"]

MODULE_TABLES = {
    "_forward_pre_hooks": "module.forward_pre",
    "_forward_hooks": "module.forward",
    "_backward_pre_hooks": "module.backward_pre",
    "_backward_hooks": "module.backward",
    "_state_dict_pre_hooks": "module.state_dict_pre",
    "_state_dict_hooks": "module.state_dict",
    "_load_state_dict_pre_hooks": "module.load_state_dict_pre",
    "_load_state_dict_post_hooks": "module.load_state_dict_post",
}
OPTIMIZER_TABLES = {
    "_optimizer_step_pre_hooks": "optimizer.step_pre",
    "_optimizer_step_post_hooks": "optimizer.step_post",
    "_optimizer_state_dict_pre_hooks": "optimizer.state_dict_pre",
    "_optimizer_state_dict_post_hooks": "optimizer.state_dict_post",
    "_optimizer_load_state_dict_pre_hooks": "optimizer.load_state_dict_pre",
    "_optimizer_load_state_dict_post_hooks": "optimizer.load_state_dict_post",
}
# Global hook tables (the side tables ``*_always_called``/``*_with_kwargs`` hold flags, not hooks).
_GLOBAL_TABLES = {
    "nn.modules.module": {
        "_global_forward_pre_hooks": "global.module.forward_pre",
        "_global_forward_hooks": "global.module.forward",
        "_global_backward_pre_hooks": "global.module.backward_pre",
        "_global_backward_hooks": "global.module.backward",
    },
    "optim.optimizer": {
        "_global_optimizer_pre_hooks": "global.optimizer.step_pre",
        "_global_optimizer_post_hooks": "global.optimizer.step_post",
    },
}


def lib_of(obj: Any) -> Any:
    """The library module (``hookgrad`` or ``torch``) an object's class comes from, or None."""
    for cls in type(obj).__mro__:
        mod = cls.__dict__.get("__module__")
        top = mod.split(".")[0] if isinstance(mod, str) else ""
        if top in ("hookgrad", "torch"):
            return sys.modules.get(top)
    return None


def _table(obj: Any, attr: str) -> Any:
    value = getattr(obj, attr, None)
    return value if isinstance(value, OrderedDict) else None


def module_tables(mod: Any, owner: str) -> list:
    """``(table, kind, owner)`` for each hook table of one module."""
    return [(_table(mod, a), k, owner) for a, k in MODULE_TABLES.items() if _table(mod, a)
            is not None]


def optimizer_tables(opt: Any, owner: str) -> list:
    return [(_table(opt, a), k, owner) for a, k in OPTIMIZER_TABLES.items() if _table(opt, a)
            is not None]


def tensor_label(t: Any) -> str:
    """``tensor[2, 4]`` plus the node that made it (``MulBackward0``) when it has one."""
    fn = getattr(t, "grad_fn", None)
    return f"tensor{list(t.shape)}" + (f" ({fn.name()})" if fn is not None else "")


def tensor_tables(t: Any, owner: str) -> list:
    """The tensor hook tables of one tensor (created lazily by both libraries: may be absent)."""
    return [(tab, kind, owner) for tab, kind in
            ((_table(t, "_backward_hooks"), "tensor"),
             (_table(t, "_post_accumulate_grad_hooks"), "post_accumulate")) if tab is not None]


def node_tables(node: Any) -> list:
    """A hookgrad node's pre/post hook tables (PyTorch's are in C++: none)."""
    return [(tab, kind, node.name()) for tab, kind in
            ((_table(node, "_pre_hooks"), "node.pre"), (_table(node, "_post_hooks"), "node.post"))
            if tab is not None]


def global_tables(lib: Any) -> list:
    """The global module/optimizer hook tables of a library that is already imported."""
    out = []
    for suffix, tables in _GLOBAL_TABLES.items():
        mod = sys.modules.get(f"{lib.__name__}.{suffix}")
        if mod is None:
            continue
        for attr, kind in tables.items():
            tab = _table(mod, attr)
            if tab is not None:
                out.append((tab, kind, "*"))
    return out
