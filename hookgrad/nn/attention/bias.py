"""Causal attention biases. Mirrors: ``torch.nn.attention.bias``.

`CausalBias` is a tensor subclass passed as ``attn_mask``. PyTorch routes the call through
``__torch_function__``; hookgrad has no such dispatch, so `scaled_dot_product_attention` hands a
mask whose type defines ``_dispatch`` over to it, which does the same: upper-left (or square)
becomes ``is_causal=True``, lower-right is materialised (what PyTorch's CPU build does, having
no fused kernel for it).
"""

from __future__ import annotations

import warnings
from enum import IntEnum, auto
from typing import Any

from hookgrad._dtypes import bool_
from hookgrad._functional import creation as _creation
from hookgrad._functional import rearrange as _rearrange
from hookgrad._tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Which corner the causal triangle is anchored to. Mirrors:
    ``torch.nn.attention.bias.CausalVariant``."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal mask of ``seq_len_q x seq_len_kv``, materialised only when needed.

    Mirrors: ``torch.nn.attention.bias.CausalBias``.
    """

    def __new__(cls, variant: Any, seq_len_q: int, seq_len_kv: int) -> CausalBias:
        # PyTorch's Tensor.__new__ reads the three integers as sizes (an unused buffer)
        return super().__new__(cls, int(variant), int(seq_len_q), int(seq_len_kv))

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _materialize(self, device: Any = None) -> Tensor:
        ones = _creation.ones(self.seq_len_q, self.seq_len_kv, dtype=bool_)
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else (
            self.seq_len_kv - self.seq_len_q)
        return _rearrange.tril(ones, offset)

    @staticmethod
    def _dispatch(query: Tensor, key: Tensor, value: Tensor, attn_mask: CausalBias,
                  dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False) -> Tensor:
        from hookgrad.nn._functional_attention import scaled_dot_product_attention as sdpa

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or (
                attn_mask.variant == CausalVariant.UPPER_LEFT):
            return sdpa(query, key, value, None, dropout_p, True, scale, enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return sdpa(query, key, value, attn_mask._materialize(), dropout_p, False, scale,
                        enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """Mirrors: ``torch.nn.attention.bias.causal_upper_left``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size: int) -> CausalBias:
    """Mirrors: ``torch.nn.attention.bias.causal_lower_right``."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
