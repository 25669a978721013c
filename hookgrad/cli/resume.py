"""``hookgrad train --resume``: read a checkpoint and check every part before using it.

A checkpoint that loads but is not what `hookgrad train` writes (``model`` not a dict of
tensors, ``config`` a list, ``history`` of the wrong shape, a negative ``epoch``) is a
`UserError`: one line, exit code 2, and the model and optimizer are left as they were built.
"""

from __future__ import annotations

import math
from typing import Any

import hookgrad
from hookgrad.cli.data import UserError

_HISTORY_KEYS = ("epoch", "loss", "train_acc", "test_acc", "seconds")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_history(history: Any, epoch: int) -> str | None:
    """Why `history` is not a list of `epoch` per-epoch metric dicts (None: it is)."""
    if not isinstance(history, list):
        return f"'history' is a {type(history).__name__}, not a list"
    if len(history) != epoch:
        return f"'history' has {len(history)} entries for {epoch} finished epochs"
    for i, row in enumerate(history):
        if not isinstance(row, dict) or not all(_is_number(row.get(k)) for k in _HISTORY_KEYS):
            return (f"'history' entry {i} is not a dict with numeric "
                    f"{', '.join(_HISTORY_KEYS)}")
        if row["epoch"] != i + 1 or not all(math.isfinite(row[k]) for k in _HISTORY_KEYS[2:]):
            return f"'history' entry {i} is inconsistent"
    return None


def _problem(state: Any) -> str | None:
    """Why `state` is not a checkpoint written by ``hookgrad train`` (None: it looks right)."""
    if not isinstance(state, dict) or not {"model", "optimizer", "epoch"} <= set(state):
        return "is not a hookgrad train checkpoint (needs 'model', 'optimizer' and 'epoch')"
    model, opt, epoch = state["model"], state["optimizer"], state["epoch"]
    if not isinstance(model, dict) or not all(
            isinstance(k, str) and isinstance(v, hookgrad.Tensor) for k, v in model.items()):
        return "has a 'model' that is not a dict of named tensors"
    if not isinstance(opt, dict) or not isinstance(opt.get("state"), dict) or \
            not isinstance(opt.get("param_groups"), list) or \
            not all(isinstance(g, dict) for g in opt["param_groups"]):
        return "has an 'optimizer' that is not an optimizer state dict"
    if type(epoch) is not int or epoch < 0:
        return f"has an invalid 'epoch' {epoch!r} (must be an integer >= 0)"
    if not isinstance(state.get("config", {}), dict):
        return f"has a 'config' that is a {type(state['config']).__name__}, not a dict"
    history = _check_history(state.get("history", []), epoch)
    return None if history is None else f"has a malformed {history}"


def resume(path: str, cfg: Any, model: Any, opt: Any) -> tuple[int, list]:
    """Load `path` into `model` and `opt`; the epoch to continue from and the metric history."""
    try:
        state = hookgrad.load(path)
    except FileNotFoundError:
        raise UserError(f"checkpoint not found: {path}") from None
    except Exception as e:  # noqa: BLE001 - any unreadable checkpoint is a user error here
        raise UserError(f"cannot read checkpoint {path}: {e}") from None
    problem = _problem(state)
    if problem:
        raise UserError(f"checkpoint {path} {problem}")
    saved = state.get("config") or {}
    for key in ("model", "optimizer"):  # an Adam state loads into SGD, then step() fails
        if saved.get(key, getattr(cfg, key)) != getattr(cfg, key):
            raise UserError(f"checkpoint {path} was made with --{key} {saved[key]}, not "
                            f"--{key} {getattr(cfg, key)}")
    try:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise UserError(f"checkpoint {path} does not fit this model/optimizer: {first}"
                        ) from None
    return state["epoch"], list(state.get("history", []))
