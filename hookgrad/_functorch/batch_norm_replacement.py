"""``replace_all_batch_norm_modules_``: batch norm without running statistics, for vmap.

Mirrors: ``torch._functorch.batch_norm_replacement``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["replace_all_batch_norm_modules_"]


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Stop every batch norm module under `root` from tracking running statistics, in place.

    Per-sample (vmapped) batch norm cannot update one shared running mean; PyTorch's
    tutorials call this before ``vmap``. Returns `root`.

    Mirrors: ``torch.func.replace_all_batch_norm_modules_``.
    """
    from hookgrad.nn.modules.normalization import _BatchNorm  # nn uses the transforms

    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
