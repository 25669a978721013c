"""The unpickler of ``load(weights_only=False)``: any object, PyTorch's names mapped to hookgrad.

This runs whatever the pickle says, exactly as ``pickle.load`` would (so only for files from a
trusted source), with two translations: a global under ``torch`` resolves to hookgrad's object
(``torch._utils._rebuild_tensor_v2`` to hookgrad's rebuild function,
``torch.nn.modules.linear.Linear`` to ``hookgrad.nn.Linear``; `_class_paths`), and a module's
pickled state in PyTorch's shape is converted to hookgrad's (`_module_state`). It is Python's
own pure-Python unpickler with those two hooks.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from hookgrad._serialization import _allowlist, _class_paths, _module_state

__all__ = ["FullUnpickler", "resolve"]

_MODULE_RENAMES = {"torch.tensor": "torch._tensor"}  # PyTorch's own load-time rename


def resolve(module: str, name: str) -> Any:
    """hookgrad's object for a ``torch.*`` global (see the module docstring)."""
    module = _MODULE_RENAMES.get(module, module)
    hit = _allowlist.default_allowed().get(f"{module}.{name}")
    if hit is not None:
        return hit
    return _class_paths.resolve_torch(module, name)


class FullUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """Mirrors: ``pickle.Unpickler`` as ``torch.load(weights_only=False)`` subclasses it."""

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: Any, persistent_load: Callable, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._persistent = persistent_load
        readline = self._file_readline

        def whole_line() -> bytes:  # the C unpickler refuses a line cut off by the end
            line = readline()
            if not line.endswith(b"\n"):
                raise pickle.UnpicklingError("pickle data was truncated")
            return line

        self._file_readline = whole_line

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not tuple or not pid:
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind == "module" and len(pid) > 1:  # legacy files: a container class and its source
            return pid[1]
        if kind != "storage":
            raise pickle.UnpicklingError(f"Unknown saved id type: {pid[0]}")
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" or module.startswith("torch."):
            return resolve(module, name)
        return super().find_class(module, name)

    def _load_build(self) -> None:
        stack = self.stack
        state = stack[-1]
        inst = stack[-2]
        if _module_state.is_module(inst):
            stack.pop()
            _module_state.restore(inst, state)
            return
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]

    dispatch[pickle.BUILD[0]] = _load_build
