"""Utilities. Mirrors: ``torch.utils``.

hookgrad extension: `hooks_info` / `remove_all_hooks` list and remove every hook registered on a
tensor, node, module or optimizer (see `hookgrad.utils.hooks`).
"""

from hookgrad.utils._swap import swap_tensors
from hookgrad.utils.hooks import HookInfo, hooks_info, remove_all_hooks

__all__ = ["HookInfo", "hooks_info", "remove_all_hooks", "swap_tensors"]
