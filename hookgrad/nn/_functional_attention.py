"""Attention of `hookgrad.nn.functional`: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (the engine of `MultiheadAttention`).

Both are composites of hookgrad ops and follow PyTorch's reference code step by step (mask
canonicalisation, packed in-projection, ``bias_k``/``bias_v``, ``add_zero_attn``, head
averaging). Differences: PyTorch runs 4-d ``scaled_dot_product_attention`` through a fused
CPU kernel (node ``ScaledDotProductFlashAttentionForCpuBackward0``) where hookgrad shows the
composite's nodes; values and gradients agree.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from hookgrad._backend import has_data, namespace_of
from hookgrad._functional import creation as _creation
from hookgrad._functional import linalg as _linalg
from hookgrad._functional import shape as _shape
from hookgrad._functional.nn_ops import softmax
from hookgrad._functional.rearrange import pad
from hookgrad._tensor import Tensor
from hookgrad.nn import attention as _attention
from hookgrad.nn._functional_linear import dropout, linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _safe_softmax(logits: Tensor) -> Tensor:
    """Softmax over the last dim that gives 0 (not nan) on rows masked entirely, as PyTorch's
    ``_safe_softmax``; the masked rows' logits are replaced first so no nan reaches backward."""
    data = logits._data
    if not (isinstance(data, np.ndarray) and type(data) is not np.ndarray):  # a plain array
        dead = (data == _NEG_INF).all(axis=-1, keepdims=True)
        if not has_data(dead) or not dead.any():  # (meta: the shapes are the same either way)
            return softmax(logits, -1)
        keep = Tensor._make(~dead)
    else:  # values only through primitives (a vmap sample: one answer per sample)
        keep = (logits != _NEG_INF).any(-1, keepdim=True)  # type: ignore[attr-defined]
    zero = Tensor._make(namespace_of(data).zeros_like(data[..., :1]))
    return softmax(logits.where(keep, zero), -1).where(keep, zero)  # type: ignore


def _sdpa_bias(
    attn_mask: Tensor | None, is_causal: bool, n_q: int, n_k: int, like: Tensor
) -> Tensor | None:
    """The additive bias of PyTorch's reference implementation (None when there is none)."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be "
                "set when is_causal=True"
            )
        causal = _creation.ones(n_q, n_k, dtype=_bool_dtype()).tril(0)  # type: ignore
        return _creation.zeros(n_q, n_k, dtype=like.dtype).masked_fill(
            causal.logical_not(), _NEG_INF
        )  # type: ignore[attr-defined]
    if attn_mask is None:
        return None
    if attn_mask.dtype == _bool_dtype():
        zeros = _creation.zeros(*attn_mask.shape, dtype=like.dtype)
        return zeros.masked_fill(attn_mask.logical_not(), _NEG_INF)  # type: ignore
    return attn_mask


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """``repeat_interleave`` of the head dim (-3) up to `heads` (grouped-query attention)."""
    groups = heads // t.size(-3)
    if groups == 1:
        return t
    shape = tuple(t.shape)
    wide = t.unsqueeze(-3).expand(*shape[:-2], groups, *shape[-2:])  # type: ignore
    return wide.reshape(*shape[:-3], heads, *shape[-2:])


def _bool_dtype() -> Any:
    from hookgrad._dtypes import bool_

    return bool_


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(Q K^T * scale + bias) V`` over the last two dims.

    Args:
        query: ``[..., L, E]``.
        key: ``[..., S, E]``.
        value: ``[..., S, Ev]``.
        attn_mask: boolean (``True`` = may attend) or additive float mask broadcastable to
            ``[..., L, S]``.
        dropout_p: dropout on the attention weights (always applied when positive, as
            PyTorch's functional form does).
        is_causal: mask the upper triangle (no `attn_mask` allowed then).
        scale: defaults to ``1/sqrt(E)``.
        enable_gqa: repeat key/value heads (dim -3) to match the query heads.

    Returns:
        ``[..., L, Ev]``. Rows whose every key is masked come out as zeros.

    Raises:
        RuntimeError: when both `attn_mask` and `is_causal` are given.

    Example:
        >>> import hookgrad as torch
        >>> q = torch.ones(2, 3, 4)
        >>> torch.nn.functional.scaled_dot_product_attention(q, q, q).shape
        torch.Size([2, 3, 4])

    Mirrors: ``torch.nn.functional.scaled_dot_product_attention`` (PyTorch's math path; its
    fused CPU kernel for 4-d inputs shows a different node).
    """
    dispatch = getattr(type(attn_mask), "_dispatch", None)
    if dispatch is not None:  # a CausalBias: what its __torch_function__ does in PyTorch
        return dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if not _attention.viable_on_cpu():
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    n_q, n_k = query.size(-2), key.size(-2)
    factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa:
        key, value = _repeat_heads(key, query.size(-3)), _repeat_heads(value, query.size(-3))
    root = math.sqrt(factor)  # PyTorch scales q and k by sqrt(scale) each
    logits = _linalg.matmul(query * root, key.transpose(-2, -1) * root)  # type: ignore
    bias = _sdpa_bias(attn_mask, is_causal, n_q, n_k, query)
    if bias is not None:
        logits = logits + bias
    weights = _safe_softmax(logits)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return _linalg.matmul(weights, value)


# ---------------------------------------------------------------- multi-head attention
def canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A boolean mask as an additive float mask (``True`` -> ``-inf``); PyTorch's
    ``F._canonical_mask``."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()  # type: ignore[attr-defined]
    if mask.dtype != _bool_dtype() and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
            "same type for both instead.",
            UserWarning,
            stacklevel=3,
        )
    if is_float:
        return mask
    zeros = _creation.zeros(*mask.shape, dtype=target_type)
    return zeros.masked_fill_(mask, _NEG_INF)  # type: ignore[attr-defined]


def _shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """PyTorch's ``_mha_shape_check``: is the input batched."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    kind, want, pad_dim = ("batched (3-D)", 3, 2) if batched else ("unbatched (2-D)", 2, 1)
    if key.dim() != want or value.dim() != want:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {want}-D but "
            f"found {key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != pad_dim:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
            f"{pad_dim}-D but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                f"3-D but found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
            )
    return batched


def _in_projection(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    w: Tensor | None,
    b: Tensor | None,
    separate: tuple | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Project q, k, v: one packed weight (PyTorch's fused self-attention path) or three."""
    if separate is not None:
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)  # type: ignore
        wq, wk, wv = separate
        return linear(query, wq, b_q), linear(key, wk, b_k), linear(value, wv, b_v)
    e = query.size(-1)
    assert w is not None
    if key is value and query is key:
        proj = linear(query, w, b).unflatten(-1, (3, e))  # type: ignore[attr-defined]
        proj = proj.unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return proj[0], proj[1], proj[2]
    if key is value:
        w_q, w_kv = w.split([e, 2 * e])  # type: ignore[attr-defined]
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])  # type: ignore
        kv = linear(key, w_kv, b_kv).unflatten(-1, (2, e))  # type: ignore[attr-defined]
        kv = kv.unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(query, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)  # type: ignore[attr-defined]
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)  # type: ignore
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _check_attn_mask(attn_mask: Tensor | None, tgt: int, src: int, bh: int) -> Tensor | None:
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt, src):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt, src)}."
            )
        return attn_mask.unsqueeze(0)  # type: ignore[attr-defined]
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bh, tgt, src):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                f"be {(bh, tgt, src)}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _extend_keys(
    k: Tensor, v: Tensor, masks: list, extra_k: Tensor, extra_v: Tensor, dim: int
) -> tuple[Tensor, Tensor]:
    """Append one key/value position (``bias_k``/``bias_v`` or zeros); pad masks to match."""
    for i, m in enumerate(masks):
        if m is not None:
            masks[i] = pad(m, (0, 1))
    return _shape.cat([k, extra_k], dim), _shape.cat([v, extra_v], dim)


def _attend_weights(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float
) -> tuple[Tensor, Tensor]:
    """The ``need_weights=True`` path: explicit ``softmax(q k^T / sqrt(E) + mask) v``."""
    q_scaled = q * math.sqrt(1.0 / float(q.size(-1)))
    logits = _linalg.bmm(q_scaled, k.transpose(-2, -1))  # type: ignore[attr-defined]
    if attn_mask is not None:  # PyTorch fuses this add into baddbmm
        logits = attn_mask + logits
    weights = softmax(logits, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return _linalg.bmm(weights, v), weights


def _mha_masks(
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    is_causal: bool,
    need_weights: bool,
    dtype: Any,
) -> tuple[Tensor | None, Tensor | None, bool]:
    key_padding_mask = canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype,
        "attn_mask",
        dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to "
            "create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        return key_padding_mask, None, is_causal  # the causal hint replaces the mask
    attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", dtype, check_other=False)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs ``[L, N, E]`` (or unbatched ``[L, E]``).

    Boolean masks mark positions that may *not* be attended (``True`` -> ``-inf``), float
    masks are added. See `hookgrad.nn.MultiheadAttention` for the arguments.

    Returns:
        ``(output [L, N, E], weights)``: weights ``[N, L, S]`` averaged over heads (or
        ``[N, heads, L, S]``), None unless `need_weights`.

    Raises:
        AssertionError, RuntimeError: on inconsistent shapes (PyTorch's checks and texts).

    Mirrors: ``torch.nn.functional.multi_head_attention_forward``.
    """
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _mha_masks(
        key_padding_mask, attn_mask, is_causal, need_weights, query.dtype
    )
    _check_embed_dim(embed_dim, embed_dim_to_check, num_heads)
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)
    extras = (bias_k, bias_v, add_zero_attn, static_k, static_v)
    q, k, v, attn_mask = _split_heads(q, k, v, attn_mask, key_padding_mask, extras, num_heads)
    dims = (tgt_len, bsz, num_heads)
    p = dropout_p if training else 0.0
    out, weights = _attend(q, k, v, attn_mask, p, need_weights, is_causal, dims)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, k.size(1))
        weights = weights.mean(dim=1) if average_attn_weights else weights
        weights = weights if batched else weights.squeeze(0)
    return (out if batched else out.squeeze(1)), weights


def _check_embed_dim(embed_dim: int, expected: int, num_heads: int) -> None:
    if embed_dim != expected:
        raise AssertionError(
            f"was expecting embedding dimension of {expected}, but got {embed_dim}"
        )
    if (embed_dim // num_heads) * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")


def _attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    need_weights: bool,
    is_causal: bool,
    dims: tuple[int, int, int],
) -> tuple[Tensor, Tensor | None]:
    """Attention over ``[N*heads, L, E/heads]`` heads -> ``([L*N, E], weights or None)``:
    explicit weights when asked for, else ``scaled_dot_product_attention`` (as PyTorch)."""
    tgt_len, bsz, num_heads = dims
    embed_dim = q.size(-1) * num_heads
    if need_weights:
        out, weights = _attend_weights(q, k, v, attn_mask, dropout_p)
        return out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim), weights  # type: ignore
    if attn_mask is not None:
        attn_mask = (
            attn_mask.unsqueeze(0)
            if attn_mask.size(0) == 1  # type: ignore
            else attn_mask.view(bsz, num_heads, -1, k.size(1))
        )  # type: ignore
    heads = (bsz, num_heads, -1, q.size(-1))
    out = scaled_dot_product_attention(
        q.view(*heads), k.view(*heads), v.view(*heads), attn_mask, dropout_p, is_causal
    )
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim), None  # type: ignore


def _split_heads(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    extras: tuple,
    num_heads: int,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """``[L, N, E]`` projections -> ``[N*heads, L, E/heads]``, with the extra key positions
    and the key-padding mask merged into one additive mask ``[N*heads or 1, L, S]``."""
    bias_k, bias_v, add_zero_attn, static_k, static_v = extras
    tgt_len, bsz, embed_dim = q.shape
    head_dim, bh = embed_dim // num_heads, bsz * num_heads
    attn_mask = _check_attn_mask(attn_mask, tgt_len, k.shape[0], bh)
    masks = [attn_mask, key_padding_mask]
    if bias_k is not None and bias_v is not None:
        k, v = _extend_keys(
            k,
            v,
            masks,
            bias_k.repeat(1, bsz, 1),  # type: ignore
            bias_v.repeat(1, bsz, 1),
            0,
        )  # type: ignore[attr-defined]
    q = q.view(tgt_len, bh, head_dim).transpose(0, 1)  # type: ignore[attr-defined]
    k = static_k if static_k is not None else k.view(k.shape[0], bh, head_dim).transpose(0, 1)
    v = static_v if static_v is not None else v.view(v.shape[0], bh, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = _creation.zeros(bh, 1, head_dim, dtype=k.dtype)
        k, v = _extend_keys(k, v, masks, zeros, zeros, 1)
    attn_mask, key_padding_mask = masks
    if key_padding_mask is not None:
        src_len = k.size(1)
        if tuple(key_padding_mask.shape) != (bsz, src_len):  # PyTorch's assert
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {key_padding_mask.shape}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)  # type: ignore
        kpm = kpm.reshape(bh, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    return q, k, v, attn_mask
