"""What PyTorch's nested-tensor fast path of ``nn.TransformerEncoder`` changes, emulated.

NOTE [Encoder fast path]
In inference (eval mode, no gradient needed), a batch-first ``TransformerEncoder`` given a
left-aligned ``src_key_padding_mask`` packs the sequences into a nested tensor: each sequence
runs through the layers with its valid tokens only, and the result is padded back with
**zeros** at the padded positions (before the final norm). The valid positions get the values
the ordinary path gives (attention already ignores padded keys), so hookgrad runs the ordinary
path and zeroes the padded rows. At construction PyTorch decides whether the layer allows the
fast path at all and warns when ``enable_nested_tensor`` asked for it in vain.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._config import GLOBAL, IS_COMPILING
from hookgrad.autograd.grad_mode import is_grad_enabled

__all__ = ["construction_reason", "runs_fast_path", "warn_prototype_once"]

_WARNED = [False]


def construction_reason(layer: Any, layer_class: type) -> str:
    """Why `layer` rules the fast path out ("" when it allows it), in PyTorch's words
    (`layer_class`: ``TransformerEncoderLayer``)."""
    name = "encoder_layer"
    if not isinstance(layer, layer_class):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (not attn.batch_first, f"{name}.self_attn.batch_first was not True"
                               "(use batch_first for better inference performance)"),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps,
         f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((why for failed, why in checks if failed), "")


def _left_aligned(valid: Any) -> bool:
    # each row's valid tokens form a prefix: never a valid token after a padded one
    if valid.size(-1) < 2:
        return True
    return bool((valid[:, 1:] <= valid[:, :-1]).all())


def runs_fast_path(encoder: Any, src: Any, mask: Any, padding_mask: Any) -> bool:
    """Whether PyTorch would take the nested-tensor path for this call."""
    first = encoder.layers[0]
    if not GLOBAL.mha_fastpath or not getattr(encoder, "use_nested_tensor", False):
        return False
    if first.training or src.dim() != 3 or padding_mask is None or mask is not None:
        return False
    if getattr(encoder, "mask_check", True) and (
            IS_COMPILING[0]() or not _left_aligned(padding_mask.logical_not())):
        return False
    # (PyTorch also refuses under CUDA autocast, which a CPU build never enables)
    attn = first.self_attn
    weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
               attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
               first.norm2.bias, first.linear1.weight, first.linear1.bias,
               first.linear2.weight, first.linear2.bias)
    return not (is_grad_enabled() and any(t.requires_grad for t in weights))


def warn_prototype_once() -> None:
    """The warning PyTorch's C++ side gives (once per process) on building a nested tensor."""
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change "
                      "in the near future. We recommend specifying layout=torch.jagged when "
                      "constructing a nested tensor, as this layout receives active "
                      "development, has better operator coverage, and works with "
                      "torch.compile.", UserWarning, stacklevel=4)
