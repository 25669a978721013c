"""`MultiheadAttention` (PyTorch keeps it in ``torch/nn/modules/activation.py``; the plain
activation modules live in `hookgrad.nn.modules.nonlinearity`)."""

from __future__ import annotations

from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import _functional_attention as A
from hookgrad.nn import init
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A `Linear` under the class name PyTorch gives ``MultiheadAttention.out_proj`` (it shows
    in reprs).

    Mirrors: ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``.
    """


def _param(*shape: int, dtype: Any = None) -> Parameter:
    return Parameter(_creation.empty(*shape, dtype=dtype))


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(Q K^T / sqrt(d)) V`` per head, with learned input and
    output projections.

    Args:
        embed_dim: model width ``E`` (divisible by `num_heads`).
        num_heads: parallel heads.
        dropout: dropout on the attention weights (training only).
        bias: learn ``in_proj_bias`` and ``out_proj.bias`` (initialised to zero).
        add_bias_kv: learn ``bias_k``/``bias_v`` appended to the keys/values.
        add_zero_attn: append a zero key/value position.
        kdim, vdim: key/value widths (separate ``q/k/v_proj_weight`` when they differ from E).
        batch_first: inputs and outputs are ``[N, L, E]``.
        device, dtype: factory arguments.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None)``. Boolean masks
    mark positions that may *not* be attended; float masks are added to the logits.

    Example:
        >>> import hookgrad as torch
        >>> mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = torch.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (torch.Size([3, 5, 8]), torch.Size([3, 5, 5]))

    Mirrors: ``torch.nn.MultiheadAttention`` (PyTorch's inference fast path is a fused kernel;
    hookgrad always runs the reference composite, with the same values).
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = _param(embed_dim, embed_dim, dtype=dtype)
            self.k_proj_weight = _param(embed_dim, self.kdim, dtype=dtype)
            self.v_proj_weight = _param(embed_dim, self.vdim, dtype=dtype)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = _param(3 * embed_dim, embed_dim, dtype=dtype)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = _param(3 * embed_dim, dtype=dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = _param(1, 1, embed_dim, dtype=dtype)
            self.bias_v = _param(1, 1, embed_dim, dtype=dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases, Xavier-normal ``bias_k``/``bias_v``."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        batched = query.dim() == 3
        key_padding_mask = A.canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype,
            "attn_mask",
            query.dtype,
        )
        attn_mask = A.canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, check_other=False
        )
        if self.batch_first and batched:
            query, key, value = _seq_first(query, key, value)
        separate: dict[str, Any] = {}
        if not self._qkv_same_embed_dim:
            separate = {
                "use_separate_proj_weight": True,
                "q_proj_weight": self.q_proj_weight,
                "k_proj_weight": self.k_proj_weight,
                "v_proj_weight": self.v_proj_weight,
            }
        out, weights = A.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and batched:
            out = out.transpose(1, 0)  # type: ignore[attr-defined]
        return out, weights

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)


def _seq_first(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Transpose batch-first inputs, keeping PyTorch's identity tests (``query is key``) true."""
    if key is value:
        if query is key:
            query = key = value = query.transpose(1, 0)  # type: ignore[attr-defined]
            return query, key, value
        query, key = (x.transpose(1, 0) for x in (query, key))  # type: ignore[attr-defined]
        return query, key, key
    return tuple(x.transpose(1, 0) for x in (query, key, value))  # type: ignore
