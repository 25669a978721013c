"""The engine's hook call points (architecture.md §5); the per-node order is spec §1.3.

NOTE [Per-node hook order]
1. tensor hooks of the node's outputs, grouped per output tensor in the order each tensor got
   its first hook; each sees the previous hook's replacement;
2. retain-grad of outputs (always after every tensor hook);
3. node pre-hooks; 4. the node itself (AccumulateGrad: accumulate, then post-accumulate hooks);
5. node post-hooks.
Each step runs over a snapshot taken when the step starts (hooks removed inside the step still
run, hooks added to the step wait for the next pass).
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd._layout import ascontiguous_copy
from hookgrad.utils.hooks import hook_name


def check_replacement(fn: Any, old: Any, new: Any) -> Any:
    """Validate one value returned by a backward hook in place of `old` (spec §1.4)."""
    if new is None:
        return old
    if old is None:  # checked before the type: PyTorch says E6 even for a returned int
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new._data.dtype != old._data.dtype:
        raise RuntimeError(
            f"hook '{hook_name(fn)}' has changed the type of value (was {old.type()} got "
            f"{new.type()})"
        )
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the size of value")
    return new


def run_post_accumulate_hooks(var: Tensor, hooks: Any) -> None:
    """Call a leaf's post-accumulate-grad hooks as PyTorch does.

    Each hook gets the value the previous one returned (the leaf itself at first); a returned
    non-tensor raises ``TypeError`` at once, a returned tensor other than the argument is
    checked like a tensor hook's replacement and passed on, and only after every hook ran does
    any such replacement raise ``RuntimeError`` (the hooks must return None).
    """
    arg, modified = var, False
    for fn in list(hooks.values()):
        ret = fn(arg)
        if ret is None or ret is arg:
            continue
        arg = check_replacement(fn, arg, ret)
        modified = True
    if modified:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def check_tuple(fn: Any, old: tuple | list, new: Any) -> list:
    """Validate a node hook's tuple return (spec §1.4); `None` entries drop gradients."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{hook_name(fn)}' has returned an incorrect number of values (got {len(new)}, "
            f"but expected {len(old)})"
        )
    pairs = zip(old, new, strict=True)
    return [None if n is None else check_replacement(fn, o, n) for o, n in pairs]


def call_tensor_pre_hooks(node: Any, grads: list) -> list:
    """Steps 1 and 2: tensor hooks, then retain-grad writes."""
    groups = node._tensor_hook_groups()
    if groups:
        # Snapshot the groups now but each group's hooks when the group starts: a hook may add
        # hooks to a later output tensor of this node, and those run (PyTorch does the same).
        for slot, registry in list(groups):
            for fn in list(registry.values()):
                g = grads[slot]
                new = fn(g)
                if new is not None:  # None keeps the gradient: nothing to validate
                    grads[slot] = check_replacement(fn, g, new)
    retain = node._retain_hooks
    if retain:
        for slot, ref in list(retain.items()):
            t = ref()
            g = grads[slot]
            if t is None or g is None:
                continue
            t._grad = _retained(t, g) if t._grad is None else t._grad + g  # type: ignore[attr-defined]
    return grads


def _retained(t: Tensor, g: Tensor) -> Tensor:
    """A retained gradient's first value: a row-major copy (PyTorch's, whatever the layouts)."""
    if g._grad_fn is not None:  # create_graph: the copy stays differentiable
        copy = g.clone if g.is_contiguous() else g.contiguous  # type: ignore[attr-defined]
        return copy()
    return Tensor._make(ascontiguous_copy(g._data))


def call_node_pre_hooks(node: Any, grads: list) -> list:
    """Step 3: ``Node.register_prehook`` hooks."""
    hooks = node._pre_hooks
    if hooks:
        for fn in list(hooks.values()):
            ret = fn(tuple(grads))
            if ret is not None:
                grads = check_tuple(fn, grads, ret)
    return grads


def call_node_post_hooks(node: Any, outs: tuple, grads: list) -> tuple:
    """Step 5: ``Node.register_hook`` hooks, seeing ``(grad_inputs, grad_outputs)``."""
    hooks = node._post_hooks
    if hooks:
        go = tuple(grads)
        for fn in list(hooks.values()):
            ret = fn(tuple(outs), go)
            if ret is not None:
                outs = tuple(check_tuple(fn, outs, ret))
    return outs


__all__ = [
    "check_replacement", "check_tuple", "call_tensor_pre_hooks", "call_node_pre_hooks",
    "call_node_post_hooks",
]
