"""``state_dict`` / ``load_state_dict`` and their hooks (spec §9).

NOTE [State dict traversal]
``state_dict``: metadata, pre-hooks, own entries, children (recursively through their own
``state_dict`` so overrides work), post-hooks — so a child's post-hook sees the parent's own
entries. ``load_state_dict``: pre-order over modules (each gets the entries under its prefix,
and its pre-hooks always see ``strict=True``, a long-standing PyTorch quirk), post-hooks in
post-order over an ``_IncompatibleKeys`` that wraps the *shared* missing/unexpected lists.
Overridable steps (``_save_to_state_dict``, ``_load_from_state_dict``) are always called
through the module, never directly, so subclasses can customise them as in PyTorch.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.parameter import Parameter

__all__ = ["_IncompatibleKeys", "state_dict", "save_to_state_dict", "load_state_dict",
           "load_from_state_dict", "EXTRA_STATE_KEY_SUFFIX"]

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """Result of ``load_state_dict``.

    Mirrors: ``torch.nn.modules.module._IncompatibleKeys``.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _overrides(module: Any, name: str) -> bool:
    """Whether a subclass overrides `name`, which the Module base defines (its default).

    The base is the last class in the MRO defining `name`; looking it up that way keeps this
    module below `module.py`, which imports it.
    """
    owners = [cls for cls in type(module).__mro__ if name in vars(cls)]
    return len(owners) > 1


def save_to_state_dict(module: Any, destination: dict, prefix: str, keep_vars: bool) -> None:
    """See ``Module._save_to_state_dict``."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if _overrides(module, "get_extra_state"):
        destination[prefix + EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def state_dict(module: Any, args: tuple, destination: Any, prefix: str, keep_vars: bool) -> Any:
    """See ``Module.state_dict`` (NOTE [State dict traversal])."""
    if args:
        warnings.warn(
            "Positional args are being deprecated, use kwargs instead. Refer to "
            "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
            "#torch.nn.Module.state_dict for details.",
            FutureWarning,
            stacklevel=3,
        )
        if destination is None:
            destination = args[0]
        if len(args) > 1 and prefix == "":
            prefix = args[1]
        if len(args) > 2 and keep_vars is False:
            keep_vars = args[2]
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # type: ignore[attr-defined]
    local_metadata = dict(version=module._version)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in list(module._state_dict_pre_hooks.values()):
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in list(module._state_dict_hooks.values()):
        result = hook(module, destination, prefix, local_metadata)
        if not getattr(hook, "_from_public_api", False):
            if result is not None:
                destination = result
        elif result is not None:
            raise RuntimeError("state_dict post-hook must return None")
    return destination


def _copy_entry(module: Any, name: str, param: Tensor, key: str, input_param: Any,
                assign: bool, error_msgs: list) -> None:
    if not isinstance(input_param, Tensor):
        error_msgs.append(
            f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
            f"object from checkpoint but received {type(input_param)}"
        )
        return
    if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
        input_param = input_param.reshape(())  # type: ignore[attr-defined]
    if input_param.shape != param.shape:
        error_msgs.append(
            f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
            f"checkpoint, the shape in current model is {param.shape}."
        )
        return
    if param.is_meta and not input_param.is_meta and not assign:
        warnings.warn(
            f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
            "parameter in the current model, which is a no-op. (Did you mean to pass "
            "`assign=True` to assign items in the state dictionary to their corresponding key "
            "in the module instead of copying them in place?)", stacklevel=4)
    try:
        with no_grad():
            if assign:
                if isinstance(param, Parameter):
                    if not isinstance(input_param, Parameter):
                        input_param = Parameter(input_param, requires_grad=param.requires_grad)
                    else:
                        input_param.requires_grad_(param.requires_grad)
                setattr(module, name, input_param)
            else:
                param.copy_(input_param)  # type: ignore[attr-defined]
    except Exception as ex:  # noqa: BLE001 - reported like PyTorch, in error_msgs
        error_msgs.append(
            f'While copying the parameter named "{key}", whose dimensions in the model are '
            f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
            f"an exception occurred : {ex.args}."
        )


def load_from_state_dict(module: Any, sd: dict, prefix: str, local_metadata: dict, strict: bool,
                         missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
    """See ``Module._load_from_state_dict``."""
    for hook in list(module._load_state_dict_pre_hooks.values()):
        hook(sd, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in module._buffers.items()
                  if k not in module._non_persistent_buffers_set}
    local_state = {k: v for k, v in (*module._parameters.items(), *persistent.items())
                   if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key in sd:
            _copy_entry(module, name, param, key, sd[key], assign, error_msgs)
        elif strict:
            missing_keys.append(key)
    extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if _overrides(module, "set_extra_state"):
        if extra_key in sd:
            module.set_extra_state(sd[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in sd:
        unexpected_keys.append(extra_key)
    if strict:
        for key in sd:
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(module: Any, state_dict: Mapping, strict: bool, assign: bool) -> Any:
    """See ``Module.load_state_dict`` (NOTE [State dict traversal])."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys: list = []
    unexpected_keys: list = []
    error_msgs: list = []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata  # type: ignore[attr-defined]
    _load(module, state_dict, "", metadata, assign, (missing_keys, unexpected_keys, error_msgs))
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)


def _load(mod: Any, local_sd: dict, prefix: str, metadata: Any, assign: bool,
          lists: tuple) -> None:
    missing_keys, unexpected_keys, error_msgs = lists
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    mod._load_from_state_dict(local_sd, prefix, local_metadata, True, missing_keys,
                              unexpected_keys, error_msgs)
    for name, child in mod._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_sd = {k: v for k, v in local_sd.items() if k.startswith(child_prefix)}
            _load(child, child_sd, child_prefix, metadata, assign, lists)
    _run_load_post_hooks(mod, _IncompatibleKeys(missing_keys, unexpected_keys))


def _run_load_post_hooks(mod: Any, incompatible: _IncompatibleKeys) -> None:
    for hook in list(mod._load_state_dict_post_hooks.values()):
        out = hook(mod, incompatible)
        if out is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                "to return new values, if incompatible_keys need to be modified, it should be "
                "done inplace."
            )
