"""Model and optimizer state dicts keyed by parameter names (FQNs), for one process.

Mirrors: ``torch.distributed.checkpoint.state_dict`` (``StateDictOptions``,
``get_model_state_dict``/``set_model_state_dict``, ``get_optimizer_state_dict``/
``set_optimizer_state_dict``, ``get_state_dict``/``set_state_dict``). PyTorch's versions exist to
gather FSDP/DTensor shards; hookgrad has neither, so a state dict is always the full one on the
CPU and ``full_state_dict``/``cpu_offload``/``broadcast_from_rank0`` change nothing. What they do
that ``Module.state_dict``/``Optimizer.state_dict`` do not, hookgrad does as PyTorch: optimizer
state and ``param_groups`` name parameters by FQN (not by position), ``ignore_frozen_params``,
``submodules``/``keep_submodule_prefixes``, ``flatten_optimizer_state_dict``, several optimizers
in one dict.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict",
           "get_optimizer_state_dict", "set_optimizer_state_dict", "get_state_dict",
           "set_state_dict"]


@dataclass
class StateDictOptions:
    """How the state-dict functions behave. Mirrors: ``...checkpoint.state_dict.StateDictOptions``."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options: StateDictOptions | None) -> StateDictOptions:
    opts = options if options is not None else StateDictOptions()
    if opts.broadcast_from_rank0 and not opts.full_state_dict:
        raise ValueError("full_state_dict must be True when broadcast_from_rank0 is True.")
    return opts


def _optimizers(optimizers: Any) -> list:
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def get_model_state_dict(model: Any, *, submodules: Any = None,
                         options: StateDictOptions | None = None) -> dict:
    """`model`'s state dict, without frozen parameters if asked, limited to `submodules`.

    Mirrors: ``torch.distributed.checkpoint.state_dict.get_model_state_dict``.
    """
    opts = _options(options)
    state = model.state_dict()
    if opts.ignore_frozen_params:
        frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
        for name in frozen:
            state.pop(name, None)
    if submodules:
        prefixes = [n + "." for n, m in model.named_modules() if m in submodules]
        kept = type(state)()
        for key, value in state.items():
            prefix = next((p for p in prefixes if key.startswith(p)), None)
            if prefix is not None:
                kept[key if opts.keep_submodule_prefixes else key[len(prefix):]] = value
        state = kept
    return state


def set_model_state_dict(model: Any, model_state_dict: dict, *,
                         options: StateDictOptions | None = None) -> Any:
    """Load `model_state_dict` (``strict`` from `options`); PyTorch's ``_IncompatibleKeys``.

    Mirrors: ``torch.distributed.checkpoint.state_dict.set_model_state_dict``.
    """
    return model.load_state_dict(model_state_dict, strict=_options(options).strict)


def _names(model: Any) -> dict[int, str]:
    return {id(p): n for n, p in model.named_parameters()}


def _flatten(state: dict) -> dict:
    """PyTorch's flat spelling: ``state.<fqn>.<key>`` and ``param_groups.<fqn>.<key>``."""
    flat: dict = {}
    for fqn, entry in state["state"].items():
        for key, value in entry.items():
            flat[f"state.{fqn}.{key}"] = value
    for group in state["param_groups"]:
        for fqn in group["params"]:
            for key, value in group.items():
                if key != "params":
                    flat[f"param_groups.{fqn}.{key}"] = copy.deepcopy(value)
    return flat


def get_optimizer_state_dict(model: Any, optimizers: Any, *, submodules: Any = None,
                             options: StateDictOptions | None = None) -> dict:
    """The optimizers' state dict with parameters named by their FQN in `model`.

    Mirrors: ``torch.distributed.checkpoint.state_dict.get_optimizer_state_dict``.
    """
    opts = _options(options)
    names = _names(model)
    merged: dict = {"state": {}, "param_groups": []}
    for optim in _optimizers(optimizers):
        raw = optim.state_dict()
        order = [names[id(p)] for g in optim.param_groups for p in g["params"]]
        for index, entry in raw["state"].items():
            merged["state"][order[index]] = entry
        for group in raw["param_groups"]:
            merged["param_groups"].append({**group, "params": [order[i] for i in group["params"]]})
    return _flatten(merged) if opts.flatten_optimizer_state_dict else merged


def _unflatten(flat: dict, optimizers: list, names: dict[int, str]) -> dict:
    state: dict = {"state": {}, "param_groups": []}
    for key, value in flat.items():
        if key.startswith("state."):
            fqn, _, field = key[len("state."):].rpartition(".")
            state["state"].setdefault(fqn, {})[field] = value
    for optim in optimizers:
        for group in optim.param_groups:
            fqns = [names[id(p)] for p in group["params"]]
            settings = {k[len(f"param_groups.{fqns[0]}."):]: v for k, v in flat.items()
                        if fqns and k.startswith(f"param_groups.{fqns[0]}.")}
            state["param_groups"].append({**settings, "params": fqns})
    return state


def set_optimizer_state_dict(model: Any, optimizers: Any, optim_state_dict: dict, *,
                             options: StateDictOptions | None = None) -> None:
    """Load a state dict made by `get_optimizer_state_dict` (FQN-keyed, flat or not).

    Mirrors: ``torch.distributed.checkpoint.state_dict.set_optimizer_state_dict``.
    """
    _options(options)
    optims, names = _optimizers(optimizers), _names(model)
    if "param_groups" not in optim_state_dict:
        optim_state_dict = _unflatten(optim_state_dict, optims, names)
    groups = iter(optim_state_dict["param_groups"])
    for optim in optims:
        order = [names[id(p)] for g in optim.param_groups for p in g["params"]]
        position = {fqn: i for i, fqn in enumerate(order)}
        mine = [next(groups) for _ in optim.param_groups]
        optim.load_state_dict({
            "state": {position[f]: v for f, v in optim_state_dict["state"].items()
                      if f in position},
            "param_groups": [{**g, "params": [position[f] for f in g["params"]]} for g in mine],
        })


def get_state_dict(model: Any, optimizers: Any, *, submodules: Any = None,
                   options: StateDictOptions | None = None) -> tuple[dict, dict]:
    """``(get_model_state_dict(...), get_optimizer_state_dict(...))``.

    Mirrors: ``torch.distributed.checkpoint.state_dict.get_state_dict``.
    """
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def set_state_dict(model: Any, optimizers: Any, *, model_state_dict: dict,
                   optim_state_dict: dict, options: StateDictOptions | None = None) -> Any:
    """Both setters; returns the model's ``_IncompatibleKeys``.

    Mirrors: ``torch.distributed.checkpoint.state_dict.set_state_dict``.
    """
    keys = set_model_state_dict(model, model_state_dict, options=options)
    if optim_state_dict:
        set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
