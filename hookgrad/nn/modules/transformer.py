"""`TransformerEncoderLayer` and `TransformerEncoder`.

PyTorch's inference fast paths (``_transformer_encoder_layer_fwd``, nested tensors) are fused
kernels with the same values; hookgrad always runs the reference composite.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import _functional_attention as A
from hookgrad.nn import functional as F
from hookgrad.nn.modules import _encoder_fastpath as _fastpath
from hookgrad.nn.modules.activation import MultiheadAttention
from hookgrad.nn.modules.container import ModuleList
from hookgrad.nn.modules.dropout import Dropout
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.module import Module
from hookgrad.nn.modules.normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu  # type: ignore[attr-defined]
    if activation == "gelu":
        return F.gelu  # type: ignore[attr-defined]
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and layer norm.

    Args:
        d_model: model width.
        nhead: attention heads.
        dim_feedforward: hidden width of the feed-forward block.
        dropout: dropout after attention, inside and after the feed-forward block.
        activation: ``"relu"``, ``"gelu"`` or a callable.
        layer_norm_eps: layer-norm epsilon.
        batch_first: inputs are ``[N, L, E]``.
        norm_first: pre-norm (``x + f(norm(x))``) instead of post-norm (``norm(x + f(x))``).
        bias: learn biases in the linear and norm layers.
        device, dtype: factory arguments.

    Example:
        >>> import hookgrad as torch
        >>> layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> layer(torch.randn(3, 5, 8)).shape
        torch.Size([3, 5, 8])

    Mirrors: ``torch.nn.TransformerEncoderLayer``.
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,  # type: ignore
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or type(activation).__name__ == "ReLU":  # type: ignore
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or type(activation).__name__ == "GELU":  # type: ignore
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu  # type: ignore[attr-defined]

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = A.canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if src_mask is None else src_mask.dtype,
            "src_mask",
            src.dtype,
        )
        src_mask = A.canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _square_subsequent_mask(size: int, dtype: Any) -> Tensor:
    full = _creation.full((size, size), float("-inf"), dtype=dtype)
    return full.triu(1)  # type: ignore[attr-defined]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int) -> bool:
    """PyTorch's check: an explicit causal-looking float mask sets the causal hint."""
    if is_causal is None and mask is not None:
        causal = _square_subsequent_mask(size, mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            return bool((mask == causal).all())  # type: ignore[attr-defined]
        return False
    return is_causal is True


class TransformerEncoder(Module):
    """A stack of `num_layers` deep copies of `encoder_layer`, then an optional final norm.

    Args:
        encoder_layer: the layer to clone.
        num_layers: how many copies.
        norm: optional final normalization module.
        enable_nested_tensor: allow the inference fast path (NOTE [Encoder fast path]: padded
            positions come out as zeros there); PyTorch warns when the layer rules it out.
        mask_check: take the fast path only for left-aligned padding masks.

    Mirrors: ``torch.nn.TransformerEncoder``.
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _fastpath.construction_reason(encoder_layer, TransformerEncoderLayer)
        if enable_nested_tensor and why_not:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", UserWarning, stacklevel=2)
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = A.canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if mask is None else mask.dtype,
            "mask",
            src.dtype,
        )
        mask = A.canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = src.size(1 if batch_first and src.dim() == 3 else 0)
        causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        nested = _fastpath.runs_fast_path(self, src, mask, src_key_padding_mask)
        if nested:
            _fastpath.warn_prototype_once()
        output = src
        for mod in self.layers:
            output = mod(
                output, src_mask=mask, is_causal=causal, src_key_padding_mask=src_key_padding_mask
            )
        if nested:  # the nested result padded back with zeros (NOTE [Encoder fast path])
            output = output.masked_fill(src_key_padding_mask.bool().unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output
