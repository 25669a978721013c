"""functional_call and stack_module_state.

Mirrors: ``torch.func.functional_call``, ``torch.func.stack_module_state``. The swap puts the
given tensors where the module's parameters and buffers live for one call (module hooks run
as in any call) and restores the originals afterwards, even when the call raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["functional_call", "stack_module_state"]


def _merge(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(dicts)}")
    merged: dict = {}
    seen: dict = {}
    for d in dicts:
        for k in d:
            seen[k] = seen.get(k, 0) + 1
    dup = [k for k, n in seen.items() if n > 1]
    if dup:
        raise ValueError(f"{dup} appeared in multiple dictionaries; behavior of functional call "
                         "is ambiguous")
    for d in dicts:
        merged.update(d)
    return merged


def _tied_names(module: Any) -> dict:
    """name -> every name under which the same tensor is registered (tied weights)."""
    by_id: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _untie(module: Any, values: dict) -> dict:
    tied = _tied_names(module)
    out = dict(values)
    for name, value in values.items():
        for other in tied.get(name, ()):
            if other == name:
                continue
            if other in values and values[other] is not value:
                group = sorted(n for n in tied[name] if n in values)
                raise ValueError(f"functional_call got multiple values for keys {group}, which "
                                 "are tied. Consider using tie_weights=False")
            out.setdefault(other, value)
    return out


def _check_strict(module: Any, values: dict) -> None:
    names = [n for n, _ in module.named_parameters(remove_duplicate=False)]
    names += [n for n, _ in module.named_buffers(remove_duplicate=False)]
    unexpected = [k for k in values if k not in names]
    missing = [k for k in names if k not in values]
    msgs = []
    if unexpected:
        msgs.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
    if missing:
        msgs.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                           + "\n\t".join(msgs))


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call `module` with some parameters/buffers replaced.

    Args:
        module: the module to call.
        parameter_and_buffer_dicts: a dict name -> tensor, or a tuple/list of such dicts.
        args: the positional arguments (a single non-tuple value is one argument).
        kwargs: keyword arguments of the call.
        tie_weights: a value given for one of several tied names replaces all of them.
        strict: every parameter and buffer must be given, and nothing else.

    Returns:
        What ``module(*args, **kwargs)`` returns.

    Mirrors: ``torch.func.functional_call``.
    """
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with reparametrized(module, parameter_and_buffer_dicts, tie_weights=tie_weights,
                        strict=strict):
        return module(*args, **(kwargs or {}))


@contextlib.contextmanager
def reparametrized(module: Any, parameter_and_buffer_dicts: Any, *, tie_weights: bool = True,
                   strict: bool = False) -> Iterator[None]:
    """Within the block, `module`'s named parameters/buffers are the given tensors (the
    originals come back on exit, also on an error). Mirrors:
    ``torch.nn.utils.stateless._reparametrize_module``."""
    values = _merge(parameter_and_buffer_dicts)
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_strict(module, values)
    restore = []
    try:
        for name, value in values.items():
            owner, attr = _resolve(module, name)
            restore.append((owner, attr) + _swap(owner, attr, value))
        yield
    finally:
        for owner, attr, table, old in reversed(restore):
            _put(owner, attr, table, old)


def _resolve(module: Any, name: str) -> tuple:
    *path, attr = name.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    return owner, attr


def _swap(owner: Any, attr: str, value: Any) -> tuple:
    """Put `value` where ``owner.attr`` lives; return ``(table, old value)`` for restoring."""
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if d is not None and attr in d:
            old = d[attr]
            d[attr] = value
            return table, old
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)
    return ("__dict__", old) if old is not missing else ("__new__", None)


def _put(owner: Any, attr: str, table: str, value: Any) -> None:
    if table == "__new__":
        owner.__dict__.pop(attr, None)
    elif table == "__dict__":
        object.__setattr__(owner, attr, value)
    else:
        owner.__dict__[table][attr] = value


def stack_module_state(models: Any) -> tuple[dict, dict]:
    """Stack the parameters and buffers of same-shaped `models` along a new dim 0.

    Returns:
        ``(params, buffers)``: the stacked parameters are new leaves that require grad when
        the originals do; buffers are stacked as they are.

    Mirrors: ``torch.func.stack_module_state``.
    """
    from hookgrad._functional.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {}
    for name, p in models[0].named_parameters():
        all_p = [dict(m.named_parameters())[name] for m in models]
        stacked = stack([t.detach() for t in all_p], 0)
        params[name] = stacked.requires_grad_(p.requires_grad) if isinstance(
            stacked, Tensor) else stacked
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models], 0)
               for name, _ in models[0].named_buffers()}
    return params, buffers
