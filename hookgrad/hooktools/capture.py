"""Capture intermediate outputs of named submodules with forward hooks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["capture_activations"]


class capture_activations:
    """Context manager recording the outputs of named submodules during forward passes.

    Example::

        with capture_activations(model, ["0", "2"]) as acts:
            model(x)
        acts["0"]          # output of model[0] in the last call
        acts.calls["0"]    # every output of model[0] while the context was open

    Args:
        module: the root module.
        names: qualified submodule names (as in ``named_modules()``); None means every leaf
            module (modules without children).
        detach: store ``output.detach()`` (default) so captured tensors do not keep graphs alive.
        keep_all: keep every call's output in ``calls`` (default keeps only the last one).

    All hooks are removed on exit, also when the block raises.

    Mirrors: no single PyTorch object; built on ``Module.register_forward_hook``.
    """

    def __init__(self, module: Any, names: Iterable[str] | None = None, *, detach: bool = True,
                 keep_all: bool = False) -> None:
        modules = dict(module.named_modules())
        if names is None:
            names = [n for n, m in modules.items() if n and not any(True for _ in m.children())]
        self.names = list(names)
        missing = [n for n in self.names if n not in modules]
        if missing:
            raise KeyError(f"no submodule named {missing[0]!r}; known: {sorted(modules)[:20]}")
        self._modules = [(n, modules[n]) for n in self.names]
        self.detach = detach
        self.keep_all = keep_all
        self.outputs: dict[str, Any] = {}
        self.calls: dict[str, list] = {n: [] for n in self.names}
        self._handles: list = []

    def _hook(self, name: str) -> Any:
        def hook(module: Any, args: tuple, output: Any) -> None:
            value = _detach(output) if self.detach else output
            self.outputs[name] = value
            if self.keep_all:
                self.calls[name].append(value)

        hook.__name__ = f"capture[{name}]"
        return hook

    def __enter__(self) -> capture_activations:
        for name, mod in self._modules:
            self._handles.append(mod.register_forward_hook(self._hook(name)))
        return self

    def __exit__(self, *exc: Any) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def __getitem__(self, name: str) -> Any:
        return self.outputs[name]

    def __contains__(self, name: str) -> bool:
        return name in self.outputs

    def keys(self) -> list[str]:
        return list(self.outputs)


def _detach(x: Any) -> Any:
    if hasattr(x, "detach"):
        return x.detach()
    if isinstance(x, (tuple, list)):
        return type(x)(_detach(e) for e in x)
    if isinstance(x, dict):
        return {k: _detach(v) for k, v in x.items()}
    return x
