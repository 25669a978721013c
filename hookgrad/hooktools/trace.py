"""Record every hook that fires during a forward/backward/step, in order, with its origin.

NOTE [Hook trace]
On entering, `HookTrace` swaps each hook already registered on the objects it was given (modules
and their parameters, optimizers, tensors and their nodes) and in the global module/optimizer
registries for a recording wrapper, keeping ids and order; hooks registered while the trace is
open (e.g. tensor hooks added inside ``forward``) are wrapped at registration through
`hookgrad.utils.hooks.add_registration_observer`. On exit every swapped entry is restored, and
wrappers created inside the trace stop recording. A wrapper keeps the hook's ``__name__`` so
PyTorch's error texts that name the hook are unchanged.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import Any

from hookgrad.utils import hooks as _hooks

__all__ = ["HookTrace", "HookEvent"]

_MODULE_TABLES = {
    "_forward_pre_hooks": "module.forward_pre",
    "_forward_hooks": "module.forward",
    "_backward_pre_hooks": "module.backward_pre",
    "_backward_hooks": "module.backward",
    "_state_dict_pre_hooks": "module.state_dict_pre",
    "_state_dict_hooks": "module.state_dict",
    "_load_state_dict_pre_hooks": "module.load_state_dict_pre",
    "_load_state_dict_post_hooks": "module.load_state_dict_post",
}
_OPTIMIZER_TABLES = {
    "_optimizer_step_pre_hooks": "optimizer.step_pre",
    "_optimizer_step_post_hooks": "optimizer.step_post",
    "_optimizer_state_dict_pre_hooks": "optimizer.state_dict_pre",
    "_optimizer_state_dict_post_hooks": "optimizer.state_dict_post",
    "_optimizer_load_state_dict_pre_hooks": "optimizer.load_state_dict_pre",
    "_optimizer_load_state_dict_post_hooks": "optimizer.load_state_dict_post",
}
# Module full-backward hooks are driven by node hooks that `nn/modules/_backward_hook.py`
# registers on every call; the trace records the module hooks themselves, not that plumbing.
_BACKWARD_HOOK_PLUMBING = os.path.join("nn", "modules", "_backward_hook.py")
_REGISTER_KINDS = {
    "register_hook": "tensor/node.post",
    "register_prehook": "node.pre",
    "register_post_accumulate_grad_hook": "post_accumulate",
    "register_forward_pre_hook": "module.forward_pre",
    "register_forward_hook": "module.forward",
    "register_full_backward_pre_hook": "module.backward_pre",
    "register_full_backward_hook": "module.backward",
    "register_step_pre_hook": "optimizer.step_pre",
    "register_step_post_hook": "optimizer.step_post",
}


@dataclass(frozen=True)
class HookEvent:
    """One hook call: firing index, kind, owner, hook name, and where it was registered."""

    index: int
    kind: str
    owner: str
    hook: str
    registered_at: str


def _site(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{code.co_firstlineno} (definition)"


class HookTrace:
    """Context manager recording every hook call in order (see NOTE [Hook trace]).

    Example::

        with HookTrace(model, optimizer) as trace:
            loss_fn(model(x), y).backward(); optimizer.step()
        for e in trace.events: print(e.index, e.kind, e.owner, e.hook)

    Mirrors: no PyTorch counterpart (a hookgrad tool built on the hook registries).
    """

    def __init__(self, *objects: Any) -> None:
        self.objects = objects
        self.events: list[HookEvent] = []
        self.active = False
        self._swaps: list = []
        self._fired: dict[int, list[int]] = {}  # id(wrapper) -> firing indices

    # ------------------------------------------------------------------ wrapping
    def _wrap(self, fn: Any, kind: str, owner: str, site: str) -> Any:
        trace = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if trace.active:
                idx = len(trace.events)
                trace.events.append(HookEvent(idx, kind, owner, _hooks.hook_name(fn), site))
                trace._fired.setdefault(id(wrapper), []).append(idx)
            return fn(*args, **kwargs)

        wrapper.__hookgrad_traced__ = fn  # type: ignore[attr-defined]
        return wrapper

    def _observe(self, registry: Any, fn: Any) -> Any:
        frame = sys._getframe(2)
        kind, site = "hook", "<unknown>"
        for _ in range(6):
            if frame is None:
                break
            name = frame.f_code.co_name
            if name in _REGISTER_KINDS:
                kind = _REGISTER_KINDS[name]
                if kind == "tensor/node.post":  # Tensor.register_hook or Node.register_hook
                    owner = frame.f_locals.get("self")
                    kind = "node.post" if hasattr(owner, "next_functions") else "tensor"
                caller = frame.f_back
                if caller is not None:
                    if caller.f_code.co_filename.endswith(_BACKWARD_HOOK_PLUMBING):
                        return fn  # full backward hooks' own node hooks: recorded as module.*
                    site = f"{caller.f_code.co_filename}:{caller.f_lineno}"
                break
            frame = frame.f_back
        return self._wrap(fn, kind, "(registered during trace)", site)

    def _tables(self) -> list:
        out: list = []
        seen: set = set()

        def add(registry: Any, kind: str, owner: str) -> None:
            if registry and id(registry) not in seen:
                seen.add(id(registry))
                out.append((registry, kind, owner))

        for obj in self.objects:
            if hasattr(obj, "named_modules"):
                for mname, mod in obj.named_modules():
                    for attr, kind in _MODULE_TABLES.items():
                        add(getattr(mod, attr, None), kind, mname or type(mod).__name__)
                for pname, p in obj.named_parameters():
                    add(p._backward_hooks, "tensor", pname)
                    add(p._post_accumulate_grad_hooks, "post_accumulate", pname)
            elif hasattr(obj, "param_groups"):
                for attr, kind in _OPTIMIZER_TABLES.items():
                    add(getattr(obj, attr, None), kind, type(obj).__name__)
            elif hasattr(obj, "register_hook"):
                add(obj._backward_hooks, "tensor", f"tensor{list(obj.shape)}")
                add(getattr(obj, "_post_accumulate_grad_hooks", None), "post_accumulate",
                    f"tensor{list(obj.shape)}")
                fn = obj.grad_fn
                if fn is not None:
                    add(fn._pre_hooks, "node.pre", fn.name())
                    add(fn._post_hooks, "node.post", fn.name())
        for modname, prefix in (("hookgrad.nn.modules.module", "global.module"),
                                ("hookgrad.optim.optimizer", "global.optimizer")):
            mod = sys.modules.get(modname)
            if mod is None:
                continue
            for attr, value in vars(mod).items():
                if attr.startswith("_global_") and isinstance(value, _hooks.HookRegistry):
                    add(value, f"{prefix}.{attr[len('_global_'):].replace('_hooks', '')}", "*")
        return out

    # ------------------------------------------------------------------ context
    def __enter__(self) -> HookTrace:
        for registry, kind, owner in self._tables():
            for hid, fn in list(registry.items()):
                w = self._wrap(fn, kind, owner, _site(fn))
                registry[hid] = w
                self._swaps.append((registry, hid, fn, w))
        _hooks.add_registration_observer(self._observe)
        self.active = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self.active = False
        _hooks.remove_registration_observer(self._observe)
        for registry, hid, fn, w in self._swaps:
            if registry.get(hid) is w:
                registry[hid] = fn
        self._swaps = []

    def firing_indices(self, fn: Any) -> list[int]:
        """Indices at which a (wrapped) hook fired."""
        return self._fired.get(id(fn), [])

    def format(self) -> str:
        """A readable table of the recorded events."""
        lines = [f"{'#':>3}  {'kind':<24} {'owner':<26} {'hook':<28} registered at"]
        for e in self.events:
            lines.append(f"{e.index:>3}  {e.kind:<24} {e.owner:<26} {e.hook:<28} {e.registered_at}")
        return "\n".join(lines)
