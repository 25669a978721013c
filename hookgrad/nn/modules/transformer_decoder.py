"""`TransformerDecoderLayer`, `TransformerDecoder` and the full encoder-decoder `Transformer`.

Built as PyTorch builds them (same submodule names, so state dicts and hooks line up): a decoder
layer is self-attention, cross-attention over the encoder's output (``memory``) and a
feed-forward block, each with a residual connection and a layer norm (post-norm by default).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from typing import Any

from hookgrad._dtypes import get_default_dtype
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn.init import xavier_uniform_
from hookgrad.nn.modules.activation import MultiheadAttention
from hookgrad.nn.modules.container import ModuleList
from hookgrad.nn.modules.dropout import Dropout
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.module import Module
from hookgrad.nn.modules.normalization import LayerNorm
from hookgrad.nn.modules.transformer import (
    TransformerEncoder,
    TransformerEncoderLayer,
    _detect_is_causal_mask,
    _get_activation_fn,
    _square_subsequent_mask,
)

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory``, then a feed-forward block.

    Args as `TransformerEncoderLayer`.

    Example:
        >>> import hookgrad as torch
        >>> layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
        >>> layer(torch.randn(4, 2, 8), torch.randn(3, 2, 8)).shape
        torch.Size([4, 2, 8])

    Mirrors: ``torch.nn.TransformerDecoderLayer``.
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu,  # type: ignore
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                           else activation)

    def __setstate__(self, state: dict) -> None:
        state.setdefault("activation", F.relu)  # type: ignore[attr-defined]
        super().__setstate__(state)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


class TransformerDecoder(Module):
    """A stack of `num_layers` deep copies of `decoder_layer`, then an optional final norm.

    Mirrors: ``torch.nn.TransformerDecoder``.
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        output = tgt
        seq_len = _seq_len(tgt, self.layers[0].self_attn.batch_first)
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=causal,
                         memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder transformer of "Attention Is All You Need".

    Args:
        d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
            norm_first, bias: as `TransformerEncoderLayer`.
        num_encoder_layers, num_decoder_layers: stack depths.
        custom_encoder, custom_decoder: modules used instead of the default stacks.

    Every parameter with more than one dim is re-initialised with ``xavier_uniform_``.

    Mirrors: ``torch.nn.Transformer``.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu,  # type: ignore
                 custom_encoder: Any = None, custom_decoder: Any = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*args, dtype=dtype), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*args, dtype=dtype), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        if src.dim() == 3 and src.size(0 if self.batch_first else 1) != tgt.size(
                0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """A ``[sz, sz]`` float mask: ``-inf`` above the diagonal, ``0`` elsewhere.

        Mirrors: ``torch.nn.Transformer.generate_square_subsequent_mask``.
        """
        return _square_subsequent_mask(sz, dtype if dtype is not None else get_default_dtype())


# PyTorch's module path (torch.nn.modules.transformer.<name>): tools import these classes from there.
_home = sys.modules["hookgrad.nn.modules.transformer"]
for _name in __all__:
    setattr(_home, _name, globals()[_name])
_home.__all__ = [*_home.__all__, *(n for n in __all__ if n not in _home.__all__)]
